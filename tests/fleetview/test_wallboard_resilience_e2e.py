"""The fleet wallboard against a real Prometheus (empty TSDB: the figures are constant
expressions) when a figure's query fails or Prometheus is slow (rev-views #1, #12): the failed
figure is blanked and named, the page and the other tiles stay; the figures are queried
concurrently and the page keeps an overall deadline shorter than its refresh."""
from __future__ import annotations

import copy
import http.server
import threading
import time
import urllib.error
import urllib.request

import pytest

from fleetview import wallboard
from fleetview.cli import make_routes
from fleetview.core import FleetviewError, Upstream, load_spec
from conftest import real_prometheus
from stack.procs import free_port

pytestmark = pytest.mark.e2e

SPEC = load_spec()
# Prometheus answers HTTP 422 "many-to-many matching not allowed" for it, as it did for the
# short-host LGWR join of a Data Guard pair
MANY_TO_MANY = ('label_replace(vector(1), "database", "PRODNYC", "", "") * on () group_left '
                '() (label_replace(vector(1), "b", "1", "", "") or label_replace(vector(1), "b", "2", "", ""))')


@pytest.fixture(scope="module")
def prom(tmp_path_factory):
    with real_prometheus(tmp_path_factory.mktemp("prom")) as url:
        yield url


def _spec(exprs: dict[str, str]) -> dict:
    """The shipped spec with some database figures' expressions replaced."""
    spec = copy.deepcopy(SPEC)
    for f in spec["db_tiles"]:
        if f["key"] in exprs:
            f["expr"] = exprs[f["key"]]
    return spec


def _db(name: str, value: float) -> str:
    return f'label_replace(vector({value}), "database", "{name}", "", "")'


def test_one_failing_figure_blanks_only_that_figure(prom):
    spec = _spec({"status": f"{_db('PRODNYC', 0)} or {_db('PRODLDN', 1)}",
                  "sync_avg": f"{_db('PRODNYC', 0.002)} or {_db('PRODLDN', 0.003)}",
                  "lgwr_involuntary": MANY_TO_MANY})
    resp = make_routes(spec, Upstream(prom), None)["/wallboard"]({}, {})
    page = resp.body.decode()
    assert resp.status == 200, page
    assert 'data-state="OK" data-name="PRODNYC"' in page and 'data-state="WARNING" data-name="PRODLDN"' in page
    board = wallboard.collect(spec, Upstream(prom), None)
    tiles = {t.name: {lbl: txt for lbl, txt, _, _ in t.figures} for t in board.databases}
    assert tiles["PRODNYC"]["LGWR involuntary"] == "query failed"
    assert tiles["PRODNYC"]["log file sync avg"] == "2 ms" and tiles["PRODLDN"]["log file sync avg"] == "3 ms"
    assert len(board.errors) == 1 and "LGWR involuntary" in board.errors[0] and "HTTP 422" in board.errors[0]
    assert "LGWR involuntary" in page and "HTTP 422" in page


def test_every_figure_failing_is_the_one_line_error_page(prom):
    spec = copy.deepcopy(SPEC)
    for f in spec["db_tiles"] + spec["host_tiles"]:
        f["expr"] = "sum(("          # a parse error: HTTP 400 for all
    resp = make_routes(spec, Upstream(prom), None)["/wallboard"]({}, {})
    assert resp.status == 503 and b"HTTP 400" in resp.body


class _SlowProxy(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass            # a request abandoned at the deadline, or Prometheus gone at the end


def _slow_proxy(target: str, delay: float) -> tuple[_SlowProxy, str]:
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            time.sleep(delay)
            try:
                with urllib.request.urlopen(target + self.path, timeout=30) as r:
                    body, code = r.read(), r.status
            except urllib.error.HTTPError as exc:
                body, code = exc.read(), exc.code
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass
    srv = _SlowProxy(("127.0.0.1", free_port()), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


@pytest.mark.slow
def test_a_slow_prometheus_keeps_the_page_within_its_refresh(prom):
    """rev-views #12: 15 queries at 1 s each took 15 s one after another; concurrently about 2 s.
    A Prometheus slower than the deadline gives the one-line page at the deadline, not after
    15 x the request timeout."""
    srv, url = _slow_proxy(prom, 1.0)
    try:
        t0 = time.monotonic()
        board = wallboard.collect(SPEC, Upstream(url), None)
        took = time.monotonic() - t0
        assert board.errors == [] and board.queries == 15
        assert took < 4.0, took
        t0 = time.monotonic()
        with pytest.raises(FleetviewError, match="deadline"):
            wallboard.collect(SPEC, Upstream(url), None, deadline_s=0.5)
        assert time.monotonic() - t0 < 1.5
    finally:
        srv.shutdown()
