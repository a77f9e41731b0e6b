"""Fixtures shared by the test folders.

``HOLD_DEFAULT_PORTS=1 make test`` (or ``make quick``) holds the stack's default ports
(stack.run.DEFAULT_PORTS, on 127.0.0.1 and 127.0.0.2) for the whole session with a listener
that answers every request, as a running ``make run`` would: no test may depend on them being
free. Ports already taken (e.g. by a real ``make run``) are left as they are."""
from __future__ import annotations

import errno
import os
import socket
import subprocess
import threading

import pytest

# The Go programs the tests start (promtool above all: its rule tests are the suite's longest
# part; Prometheus, Alertmanager, amtool, node_exporter) collect garbage less often: promtool on
# alerts/tests/health.test.yml measured 76 s of CPU with Go's default GOGC=100 and 57 s with 400,
# at 130 MB instead of 70 MB. What they compute is the same; a GOGC already set is kept.
os.environ.setdefault("GOGC", "400")


def _answer_forever(sock: socket.socket) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return          # closed at the end of the session
        try:
            conn.settimeout(1)
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 21\r\n"
                         b"Connection: close\r\n\r\nport held by the tests")
        except OSError:
            pass
        finally:
            conn.close()


@pytest.fixture(scope="session", autouse=True)
def hold_default_ports():
    if os.environ.get("HOLD_DEFAULT_PORTS") != "1":
        yield []
        return
    from stack.run import DEFAULT_PORTS
    held = []
    for host in ("127.0.0.1", "127.0.0.2"):
        for port in sorted(set(DEFAULT_PORTS.values())):
            sock = socket.socket()
            try:
                sock.bind((host, port))
            except OSError as exc:
                sock.close()
                if exc.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL):
                    continue    # already taken: as busy as we want it
                raise
            sock.listen(64)
            threading.Thread(target=_answer_forever, args=(sock,), daemon=True).start()
            held.append(sock)
    yield [s.getsockname() for s in held]
    for sock in held:
        try:
            sock.shutdown(socket.SHUT_RDWR)   # wakes the accept() of its thread
        except OSError:
            pass
        sock.close()


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and its key (openssl), for the TLS tests of the
    exporters' HTTP server."""
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem"), "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return d / "cert.pem", d / "key.pem"


def pytest_sessionstart(session) -> None:
    """The demo recordings are generated, not committed: write the missing ones (about 2 s)
    before any test module reads them."""
    from oracle_exporter import demo
    demo.ensure_all()


# `make test` runs the suite in two pytest-xdist workers with `--dist loadscope
# --no-loadscope-reorder`: a worker always takes a whole module (a module-scoped fixture, such as
# a started stack or the promtool runs, is set up once, as in a serial run), in collection order,
# and takes the next module when it is done. These modules take the longest (minutes on two
# cores): they go first, so that none of them starts last and runs alone at the end. Only the
# order under xdist changes; a path that no longer exists is ignored.
LONGEST_MODULES_FIRST = [
    "tests/alerts/test_rule_scenarios.py",            # promtool on every alerts/tests file
    "tests/mixin/test_mixin_generate.py",             # two site renderings with their promtool runs
    "tests/e2e/test_make_run.py",                     # stack.run started seven times
    "tests/alerts/test_alert_routing.py",             # a real Alertmanager, notification by notification
    "tests/fleetview/test_wallboard_browser_e2e.py",  # make run DEMO=1 until R1 pages, then Chromium
    "tests/e2e/test_scale_out.py",
]


def pytest_collection_modifyitems(config, items) -> None:
    if not hasattr(config, "workerinput"):      # not an xdist worker: the order stays as collected
        return
    rank = {path: i for i, path in enumerate(LONGEST_MODULES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))   # stable
