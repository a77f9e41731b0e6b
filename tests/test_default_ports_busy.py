"""The tests do not depend on the stack's default ports being free (a `make run` may be up on
the machine): ``HOLD_DEFAULT_PORTS=1`` makes tests/conftest.py hold them for a whole session,
and the tests that start the stack or exporters still pass. The whole suite was run that way
(in a private network namespace) when this was added; here, the port-sensitive ones."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from stack.run import DEFAULT_PORTS

ROOT = Path(__file__).resolve().parent.parent

# tests that start stack.run or an exporter, or hold a port themselves
PORT_SENSITIVE = [
    "tests/e2e/test_stack_units.py::test_make_run_fails_clearly_when_a_port_is_taken",
    "tests/common/test_process_metrics.py::test_exporter_serves_its_own_process_metrics_over_http",
    "tests/dbhost/test_dbhost_cli.py",
    "tests/oracle/test_core_http.py",
    f"{Path(__file__).relative_to(ROOT)}::test_held_ports_answer_like_a_running_stack",
]


def test_held_ports_answer_like_a_running_stack(hold_default_ports):
    """With HOLD_DEFAULT_PORTS=1, every default port this session could take answers HTTP;
    without it, nothing is held."""
    if os.environ.get("HOLD_DEFAULT_PORTS") != "1":
        assert hold_default_ports == []
        return
    assert {port for _, port in hold_default_ports} <= set(DEFAULT_PORTS.values())
    for host, port in hold_default_ports:
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            assert s.recv(4096).startswith(b"HTTP/1.1 200 OK")
        with pytest.raises(OSError), socket.socket() as other:
            other.bind((host, port))


@pytest.mark.slow
def test_port_sensitive_tests_pass_while_the_default_ports_are_busy():
    env = {**os.environ, "HOLD_DEFAULT_PORTS": "1"}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PORT_SENSITIVE],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert " passed" in res.stdout and "skipped" not in res.stdout.splitlines()[-1], res.stdout[-500:]
