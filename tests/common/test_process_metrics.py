"""Both exporters expose the standard process metrics of their own process (issue 21), named as
prometheus_client's process collector names them, on /metrics and with --once, after every other
family (the rest of the exposition is unchanged); oracle-exporter's /probe does not carry them.
The values are checked against the process's own /proc entries, read here independently."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

import make_fixtures  # tests/dbhost
from dbhost_exporter.cli import make_registry
from dbhost_exporter.cli import make_routes as dbhost_routes
from dbhost_exporter.config import load_config
from exporter_common.exposition import encode_text
from exporter_common.process import NAMES, ProcessMetrics
from oracle_exporter.cli import build_parser, build_exporter
from oracle_exporter.cli import make_routes as oracle_routes
from oracle_exporter.demo import DEMO_DIR
from stack.procs import free_ports

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

ROOT = Path(__file__).resolve().parents[2]
DEMO = DEMO_DIR / "demo-before.jsonl"
# (sample name, family type) exactly as prometheus_client's ProcessCollector exposes them
EXPECTED = {
    "process_virtual_memory_bytes": "gauge",
    "process_resident_memory_bytes": "gauge",
    "process_start_time_seconds": "gauge",
    "process_cpu_seconds_total": "counter",
    "process_open_fds": "gauge",
    "process_max_fds": "gauge",
}


# ----------------------------------------------------------------------------- /proc, read here

def _stat_fields(pid: int | str) -> list[str]:
    """/proc/PID/stat fields after the command name (field 3 onwards of proc(5))."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    return raw[raw.rindex(")") + 2:].split()


def proc_start_time(pid: int | str) -> float:
    """Start time in seconds since the epoch: boot time (btime of /proc/stat) plus the
    process's starttime (field 22 of proc(5), clock ticks after boot), as prometheus_client does."""
    btime = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                 if line.startswith("btime "))
    return btime + float(_stat_fields(pid)[19]) / os.sysconf("SC_CLK_TCK")


def proc_cpu_seconds(pid: int | str) -> float:
    f = _stat_fields(pid)
    return (float(f[11]) + float(f[12])) / os.sysconf("SC_CLK_TCK")


def proc_open_fds(pid: int | str) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def proc_max_fds(pid: int | str) -> float:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return float(line.split()[3])
    raise AssertionError("no Max open files line")


def proc_rss_bytes(pid: int | str) -> float:
    return float(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def parse(text: str) -> tuple[list[str], dict[str, float], dict[str, str]]:
    """(family names in order, sample values of unlabelled samples, family types)."""
    order, values, types = [], {}, {}
    for fam in text_string_to_metric_families(text):
        order.append(fam.name)
        types[fam.name] = fam.type
        for s in fam.samples:
            if not s.labels:
                values[s.name] = s.value
    return order, values, types


def assert_process_tail(text: str) -> dict[str, float]:
    """The exposition ends with exactly the six process families (right names and types);
    no other family starts with process_. Returns their values."""
    order, values, types = parse(text)
    tail = order[-len(EXPECTED):]
    assert sorted(n + ("_total" if types[n] == "counter" else "") for n in tail) == sorted(EXPECTED), order[-8:]
    assert not [n for n in order[:-len(EXPECTED)] if n.startswith("process_")]
    for name, typ in EXPECTED.items():
        assert types[name.removesuffix("_total")] == typ
        assert name in values, name
    return values


def check_against_proc(values: dict[str, float], pid: int) -> None:
    """Values read while the process runs, compared with its /proc entries read now."""
    assert abs(values["process_start_time_seconds"] - proc_start_time(pid)) < 1.0
    assert 0 < values["process_cpu_seconds_total"] <= proc_cpu_seconds(pid) + 0.05
    assert abs(values["process_open_fds"] - proc_open_fds(pid)) <= 2, (values, os.listdir(f"/proc/{pid}/fd"))
    assert values["process_max_fds"] == proc_max_fds(pid)
    rss = proc_rss_bytes(pid)
    assert 0.5 * rss < values["process_resident_memory_bytes"] < 2 * rss
    assert values["process_virtual_memory_bytes"] >= values["process_resident_memory_bytes"]


# ----------------------------------------------------------------------------- in this process

def test_names_are_prometheus_clients():
    """The shared list and what the collector yields are the six standard names."""
    fams = ProcessMetrics().collect()
    names = [f.name + ("_total" if f.type == "counter" else "") for f in fams]
    assert sorted(names) == sorted(NAMES) == sorted(EXPECTED)


def test_values_are_this_process_and_fds_follow_open_files(tmp_path):
    process = ProcessMetrics()
    values = assert_process_tail(encode_text(process.collect()).decode())
    check_against_proc(values, os.getpid())
    before = values["process_open_fds"]
    files = [open(tmp_path / f"f{i}", "w") for i in range(25)]
    try:
        during = parse(encode_text(process.collect()).decode())[1]["process_open_fds"]
        assert during == proc_open_fds("self") - 1 or during == proc_open_fds("self")
        assert during - before >= 25
    finally:
        for f in files:
            f.close()
    after = parse(encode_text(process.collect()).decode())[1]["process_open_fds"]
    assert after <= during - 25


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


def _timing_masked(text: str) -> str:
    """The values that differ between two runs of the collectors on one snapshot, masked."""
    return re.sub(r"^((?:oracle_collector_duration_seconds|oracle_scrape_duration_seconds|"
                  r"oracle_snapshot_age_seconds)\{[^}]*\}) \S+$", r"\1 T", text, flags=re.M)


def test_oracle_routes_add_process_metrics_after_the_rest(serve_routes_here, tmp_path):
    """/metrics = the unchanged exposition of the databases, then the process families (values
    of this process: open fds rise with files opened here); /probe has none of them."""
    exporter, _ = build_exporter(build_parser().parse_args(["--replay", str(DEMO)]))
    try:
        for t in exporter.targets.values():   # the routes serve the fetch scrape() makes here
            t.min_interval = 3600.0
        families = exporter.scrape()
        plain = _timing_masked(encode_text(families).decode())
        url = serve_routes_here(oracle_routes(exporter, process=ProcessMetrics()))
        text = _get(url + "/metrics")
        cut = text.index("# HELP process_")
        assert _timing_masked(text[:cut]) == plain
        values = assert_process_tail(text[cut:])
        check_against_proc(values, os.getpid())
        files = [open(tmp_path / f"f{i}", "w") for i in range(20)]
        try:
            again = _get(url + "/metrics")
            more = assert_process_tail(again[again.index("# HELP process_"):])
        finally:
            for f in files:
                f.close()
        assert more["process_open_fds"] - values["process_open_fds"] >= 20
        probe = _get(url + "/probe?target=" + next(iter(exporter.targets)))
        assert not [n for n in parse(probe)[0] if n.startswith("process_")]
        # without a ProcessMetrics the routes serve exactly what they served before
        url = serve_routes_here(oracle_routes(exporter))
        assert _timing_masked(_get(url + "/metrics")) == plain
    finally:
        exporter.close()


def test_dbhost_routes_add_process_metrics_after_the_rest(serve_routes_here, tmp_path):
    fx = make_fixtures.build_tree(tmp_path / "tree")
    registry = make_registry(load_config(str(fx.config)), str(fx.procfs), str(fx.sysfs))
    url = serve_routes_here(dbhost_routes(registry, process=ProcessMetrics()))
    text = _get(url + "/metrics")
    values = assert_process_tail(text)
    check_against_proc(values, os.getpid())
    files = [open(tmp_path / f"f{i}", "w") for i in range(50)]
    try:
        more = assert_process_tail(_get(url + "/metrics"))
    finally:
        for f in files:
            f.close()
    # the 50 files, give or take the sockets of the scrapes themselves (this process is both the
    # client and the server: the last connection's may still be open at the first count, or not)
    assert 46 <= more["process_open_fds"] - values["process_open_fds"] <= 54
    # everything before the process families is what a fresh registry's first scrape exposes
    cut = text.index("# HELP process_")
    fresh = make_registry(load_config(str(fx.config)), str(fx.procfs), str(fx.sysfs))
    plain = encode_text(fresh.collect()).decode()
    strip = [line for line in plain.splitlines() if "duration_seconds{" not in line]
    assert [line for line in text[:cut].splitlines() if "duration_seconds{" not in line] == strip


@pytest.fixture
def serve_routes_here():
    """exporter_common's server on 127.0.0.1:0 in a thread of this process."""
    import threading

    from exporter_common.web import WebConfig, make_server
    servers = []

    def start(routes) -> str:
        server = make_server("127.0.0.1:0", routes, WebConfig())
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


# ----------------------------------------------------------------------------- the real commands

def _oracle_argv() -> list[str]:
    return [sys.executable, "-m", "oracle_exporter", "--replay", str(DEMO), "--replay-loop"]


def _dbhost_argv(tmp_path: Path) -> list[str]:
    fx = make_fixtures.build_tree(tmp_path / "tree")
    return [sys.executable, "-m", "dbhost_exporter.cli", f"--path.procfs={fx.procfs}",
            f"--path.sysfs={fx.sysfs}", f"--config.file={fx.config}"]


@pytest.mark.slow
@pytest.mark.parametrize("exporter", ["oracle", "dbhost"])
def test_exporter_serves_its_own_process_metrics_over_http(exporter, tmp_path):
    """The exporter started as users start it: its /metrics carries process metrics whose
    values are that process's (start time from its /proc/PID/stat within 1 s, open fds
    = its /proc/PID/fd, ...), not the test's and not --path.procfs's."""
    argv = _oracle_argv() if exporter == "oracle" else _dbhost_argv(tmp_path)
    err = tmp_path / "stderr.log"
    last = ""
    for _ in range(5):   # a free port can be taken between choosing and binding it: retry
        port = free_ports(1)[0]
        with open(err, "w") as errf:
            proc = subprocess.Popen([*argv, f"--web.listen-address=127.0.0.1:{port}"], cwd=ROOT,
                                    stdout=subprocess.DEVNULL, stderr=errf)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    text = _get(f"http://127.0.0.1:{port}/metrics")
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                last = err.read_text()
                continue
            values = assert_process_tail(text)
            assert abs(values["process_start_time_seconds"] - proc_start_time(proc.pid)) < 1.0
            assert abs(values["process_start_time_seconds"] - time.time()) < 60
            check_against_proc(values, proc.pid)
            later = assert_process_tail(_get(f"http://127.0.0.1:{port}/metrics"))
            assert later["process_start_time_seconds"] == values["process_start_time_seconds"]
            assert later["process_cpu_seconds_total"] >= values["process_cpu_seconds_total"]
            return
        finally:
            proc.terminate()
            proc.wait(10)
    raise AssertionError(f"{exporter}-exporter did not serve /metrics: {last}")


@pytest.mark.slow
@pytest.mark.parametrize("exporter", ["oracle", "dbhost"])
def test_once_ends_with_process_metrics(exporter, tmp_path):
    argv = _oracle_argv()[:-1] if exporter == "oracle" else _dbhost_argv(tmp_path)
    t0 = time.time()
    res = subprocess.run([*argv, "--once"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    t1 = time.time()
    assert res.returncode == 0, res.stderr
    values = assert_process_tail(res.stdout)
    assert t0 - 1 <= values["process_start_time_seconds"] <= t1 + 1
    assert values["process_open_fds"] >= 3 and values["process_max_fds"] > 0
    assert 0 < values["process_cpu_seconds_total"] <= t1 - t0


def test_a_failure_to_read_them_costs_only_them(monkeypatch, caplog):
    """A /proc that cannot be read as expected leaves the rest of the exposition whole."""
    process = ProcessMetrics()

    def broken():
        raise ValueError("unexpected /proc/self/limits")

    monkeypatch.setattr(process._collector, "collect", broken)
    with caplog.at_level("WARNING"):
        assert process.collect() == [] and process.collect() == []
    assert [r.getMessage() for r in caplog.records] == [
        "process metrics unavailable: ValueError: unexpected /proc/self/limits"]
    monkeypatch.undo()
    assert len(process.collect()) == len(EXPECTED)
