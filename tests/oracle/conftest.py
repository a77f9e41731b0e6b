"""Shared fixtures for the oracle-exporter core tests.

Snapshots are produced by a generator whose rows carry exactly the columns
the live source selects (parsed from queries.build_queries, so a change of a
query changes the generated rows), with values shaped like Oracle's: counters
growing at given per-second rates, power-of-two microsecond histogram buckets,
GV$LOG groups rotating through CURRENT/ACTIVE/INACTIVE, dates as ISO 8601.
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from exporter_common.web import WebConfig, make_server
from oracle_exporter.queries import SYSSTAT_NAMES, build_queries
from oracle_exporter.snapshot import Snapshot

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
EPOCH = 1_700_000_000  # recording start, seconds since 1970

# Per-second rates of the field-notes "before" column (section 1).
WAIT_RATES = {  # event: (wait_class, waits/s, average wait in seconds)
    "log file parallel write": ("System I/O", 74.0, 0.0118),
    "log file sync": ("Commit", 72.0, 0.02645),
    "log buffer space": ("Configuration", 3.5, 0.0286),
    "log file switch completion": ("Configuration", 0.5, 0.02082),
    "db file sequential read": ("User I/O", 170.0, 0.010),
}
SYSSTAT_RATES = {
    "redo size": 9_450_000.0, "redo entries": 13_326.0, "redo writes": 74.0,
    "redo synch writes": 72.0, "user commits": 72.0, "redo buffer allocation retries": 3.8,
    "redo log space requests": 1.0, "session logical reads": 50_000.0, "execute count": 900.0,
}
LATCH_RATES = {"redo allocation": (14_000.0, 3.0), "cache buffers chains": (40_000.0, 20.0),
               "shared pool": (500.0, 0.5)}


def columns_of(view: str) -> list[str]:
    """Column list of the live query for a view (what a real row holds)."""
    queries = {**build_queries(["x"], True), **build_queries(["x"], False)}
    sql = queries[view].sql
    m = re.match(r"SELECT (.*?) FROM ", sql)
    assert m, sql
    return [c.strip() for c in m.group(1).split(",")]


def _row(view: str, **values) -> dict:
    cols = columns_of(view)
    assert set(values) == set(cols), (view, sorted(set(values) ^ set(cols)))
    return {c: values[c] for c in cols}


def _histogram(inst: int, event: str, waits: int, avg_s: float) -> list[dict]:
    """GV$EVENT_HISTOGRAM_MICRO rows: bucket WAIT_TIME_MICRO = 2^k holds waits in
    [2^(k-1), 2^k) us. All waits go to the bucket containing the average, so the
    histogram agrees with GV$SYSTEM_EVENT."""
    us = avg_s * 1e6
    upper = 1
    while upper <= us:
        upper *= 2
    return [_row("GV$EVENT_HISTOGRAM_MICRO", INST_ID=inst, EVENT=event, WAIT_TIME_MICRO=b,
                 WAIT_COUNT=waits if b == upper else 0)
            for b in (upper // 4, upper // 2, upper, upper * 2) if b >= 1]


def make_snapshot(database: str = "db1", t: float = 0.0, inst_ids=(1,), scale: float = 1.0) -> Snapshot:
    """The snapshot of ``database`` ``t`` seconds into the recording."""
    views: dict[str, list[dict]] = {v: [] for v in (
        "GV$SYSTEM_EVENT", "GV$EVENT_HISTOGRAM_MICRO", "GV$SYSSTAT", "GV$LOG", "GV$PARAMETER",
        "GV$PGASTAT", "GV$LATCH", "GV$SYSMETRIC", "GV$INSTANCE", "V$DATABASE", "GV$PROCESS")}
    elapsed = 86_400 + t  # instance up one day when the recording starts
    for inst in inst_ids:
        for event, (wclass, rate, avg) in WAIT_RATES.items():
            waits = int(rate * scale * elapsed)
            views["GV$SYSTEM_EVENT"].append(_row(
                "GV$SYSTEM_EVENT", INST_ID=inst, EVENT=event, WAIT_CLASS=wclass, TOTAL_WAITS=waits,
                TOTAL_TIMEOUTS=0, TIME_WAITED_MICRO=int(round(waits * avg * 1e6))))
            views["GV$EVENT_HISTOGRAM_MICRO"] += _histogram(inst, event, waits, avg)
        for name in SYSSTAT_NAMES:
            value = 37 if name == "logons current" else int(SYSSTAT_RATES.get(name, 2.0) * scale * elapsed)
            views["GV$SYSSTAT"].append(_row("GV$SYSSTAT", INST_ID=inst, NAME=name, VALUE=value))
        seq = 1000 + int(elapsed // 60)  # one log switch a minute (R15 "before")
        for group in (1, 2, 3):
            gseq = seq - ((seq - group) % 3)  # the group holding seq is CURRENT, older ones follow
            status = "CURRENT" if gseq == seq else ("ACTIVE" if gseq == seq - 1 else "INACTIVE")
            views["GV$LOG"].append(_row(
                "GV$LOG", INST_ID=inst, **{"GROUP#": group, "THREAD#": inst, "SEQUENCE#": gseq},
                BYTES=524_288_000, MEMBERS=2, ARCHIVED="NO" if status == "CURRENT" else "YES", STATUS=status))
        for name, value in (("log_buffer", "4194304"), ("pga_aggregate_target", "2147483648"),
                            ("cpu_count", "12"), ("db_block_size", "8192")):
            views["GV$PARAMETER"].append(_row("GV$PARAMETER", INST_ID=inst, NAME=name, VALUE=value))
        for name, value, unit in (("aggregate PGA target parameter", 2147483648, "bytes"),
                                  ("total PGA allocated", 1_900_000_000 + int(t * 1000), "bytes"),
                                  ("total PGA inuse", 1_500_000_000, "bytes"),
                                  ("over allocation count", int(elapsed // 600), None),
                                  ("cache hit percentage", 97.5, "percent")):
            views["GV$PGASTAT"].append(_row("GV$PGASTAT", INST_ID=inst, NAME=name, VALUE=value, UNIT=unit))
        for name, (gets, misses) in LATCH_RATES.items():
            views["GV$LATCH"].append(_row(
                "GV$LATCH", INST_ID=inst, NAME=name, GETS=int(gets * elapsed), MISSES=int(misses * elapsed),
                SLEEPS=int(misses * elapsed / 10), IMMEDIATE_GETS=int(gets * elapsed / 100),
                IMMEDIATE_MISSES=0, SPIN_GETS=int(misses * elapsed * 0.9), WAIT_TIME=int(misses * elapsed * 5)))
        for name, value, unit in (("Current OS Load", 1.2, "Number Of Processes"),
                                  ("Host CPU Utilization (%)", 41.5, "% Busy/(Idle+Busy)")):
            views["GV$SYSMETRIC"].append(_row("GV$SYSMETRIC", INST_ID=inst, METRIC_NAME=name, VALUE=value,
                                              METRIC_UNIT=unit, GROUP_ID=2, INTSIZE_CSEC=6001))
        views["GV$INSTANCE"].append(_row(
            "GV$INSTANCE", INST_ID=inst, INSTANCE_NUMBER=inst, INSTANCE_NAME=f"{database.upper()}{inst}",
            HOST_NAME=f"dbhost{inst}", VERSION="19.0.0.0.0", STARTUP_TIME="2023-11-13T22:13:20",
            STATUS="OPEN", **{"THREAD#": inst}))
        for pid, spid, pname in ((2, 4101, "PMON"), (12, 4133, "LGWR"), (10, 4129, "DBW0")):
            views["GV$PROCESS"].append(_row("GV$PROCESS", INST_ID=inst, PID=pid, SPID=str(spid + inst),
                                            PNAME=pname, PGA_USED_MEM=2_000_000, PGA_ALLOC_MEM=3_000_000,
                                            PGA_MAX_MEM=4_000_000))
    views["V$DATABASE"].append(_row("V$DATABASE", DBID=1234567890, NAME=database.upper(),
                                    DB_UNIQUE_NAME=database.upper(), DATABASE_ROLE="PRIMARY",
                                    LOG_MODE="ARCHIVELOG", OPEN_MODE="READ WRITE"))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(EPOCH + t)) + ".000Z"
    return Snapshot(database=database, time=stamp, views=views)


def unreachable(database: str, t: float = 0.0) -> Snapshot:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(EPOCH + t)) + ".000Z"
    return Snapshot(database, stamp, {}, {"*": "ORA-12170: TNS:Connect timeout occurred"})


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
def blackhole_listener():
    """A TCP listener that accepts connections and never answers (a hung database
    listener). Returns its port; every socket is closed after the test."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join(2)
    for c in held:
        c.close()
    srv.close()
