"""Shared fixtures for the oracle-exporter tests.

The simulators (snapshot generators, fake sessions) live in oracle_sim.py; the
``core`` fixture hands tests this module, which re-exports make_snapshot and
unreachable from there next to the process/HTTP helpers below.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from exporter_common.web import WebConfig, make_server
from oracle_exporter.snapshot import Snapshot
from oracle_sim import EPOCH, FakeListener, make_snapshot, unreachable  # noqa: F401  (re-exported via `core`)
from stack.procs import free_port

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

def write_recording(path: Path, snapshots: list[Snapshot]) -> Path:
    path.write_text("".join(s.to_json() + "\n" for s in snapshots), encoding="utf-8")
    return path


@pytest.fixture
def recording(tmp_path) -> Path:
    """Three 15 s snapshots of db1 (interleaved with three of an unreachable db2)."""
    snaps = []
    for i in range(3):
        snaps.append(make_snapshot("db1", 15 * i))
        snaps.append(unreachable("db2", 15 * i))
    return write_recording(tmp_path / "rec.jsonl", snaps)


def sample(text: str, name: str, **labels) -> float:
    """Value of the one sample ``name{labels...}`` in a text exposition."""
    from prometheus_client.parser import text_string_to_metric_families
    found = [s.value for fam in text_string_to_metric_families(text) for s in fam.samples
             if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, f"{name}{labels}: {len(found)} samples"
    return found[0]


@dataclass
class Served:
    url: str
    server: object
    thread: threading.Thread


@pytest.fixture
def serve_routes():
    """Start make_server on 127.0.0.1:0 in this process; stopped after the test."""
    started: list[Served] = []

    def start(routes, web: WebConfig | None = None) -> str:
        server = make_server("127.0.0.1:0", routes, web or WebConfig())
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        scheme = "https" if (web and web.ssl_context) else "http"
        url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
        started.append(Served(url, server, thread))
        return url

    yield start
    for s in started:
        s.server.shutdown()
        s.server.server_close()


@dataclass
class Proc:
    proc: subprocess.Popen
    url: str
    stderr_path: Path = field(default=None)

    def stderr(self) -> str:
        return self.stderr_path.read_text() if self.stderr_path else ""


@pytest.fixture
def exporter_process(tmp_path):
    """Run `python -m oracle_exporter ARGS` listening on a free port; killed after the test."""
    procs: list[subprocess.Popen] = []

    def start(*args: str, scheme: str = "http") -> Proc:
        port = free_port()
        err = tmp_path / f"stderr-{port}.log"
        proc = subprocess.Popen([PYTHON, "-m", "oracle_exporter", "--web.listen-address", f"127.0.0.1:{port}",
                                 *args], stdout=subprocess.DEVNULL, stderr=open(err, "w"), cwd=ROOT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        procs.append(proc)
        url = f"{scheme}://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"exporter exited {proc.returncode}: {err.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return Proc(proc, url, err)
            except OSError:
                time.sleep(0.05)
        raise AssertionError("exporter did not start listening")

    yield start
    for p in procs:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run_cli(*args: str, env: dict | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "oracle_exporter", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, env={**os.environ, **(env or {})})


def load_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# Captured while this module executes: later, sys.modules["conftest"] may be another
# directory's conftest (several test directories have one).
_THIS_MODULE = sys.modules[__name__]


@pytest.fixture
def core():
    """This module's helpers (make_snapshot, sample, run_cli, ...) without importing
    `conftest` by name."""
    return _THIS_MODULE


@pytest.fixture
def fake_listener():
    """FakeListener(mode, delay, error) factory (oracle_sim): every listener is closed after the test."""
    made: list[FakeListener] = []

    def make(mode: str, delay: float = 1.0, error: int = 12514) -> FakeListener:
        made.append(FakeListener(mode, delay, error))
        return made[-1]

    yield make
    for listener in made:
        listener.close()


@pytest.fixture
def blackhole_listener(fake_listener):
    """A listener that accepts connections and never answers (a hung database listener)."""
    return fake_listener("hang")
