"""Scrape orchestration: single-flight, per-database deadlines, collector isolation,
labels, self metrics, and exact values end to end through the real collectors."""
from __future__ import annotations

import shutil
import subprocess
import threading
import time
from types import SimpleNamespace

import pytest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import generate_latest

from oracle_sim import REDO_COLLECTOR
from oracle_exporter.config import DatabaseConfig, Settings
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.sources.live import LiveSource
from oracle_exporter.sources.replay import ReplaySource


def text_of(exporter: OracleExporter, names=None, timeout=None) -> str:
    return generate_latest(exporter.registry(names, timeout)).decode()




def _boom_collect(snapshot, settings):
    yield GaugeMetricFamily("oracle_test_partial", "yielded before failing", value=1)
    raise KeyError("PNAME")


# Tiny collectors with the collectors package's interface (NAME, VIEWS, collect).
REDO = REDO_COLLECTOR
BOOM = SimpleNamespace(NAME="test_boom", VIEWS=("GV$PROCESS",), collect=_boom_collect)
LATCH = SimpleNamespace(NAME="test_latch", VIEWS=("GV$LATCH",), collect=lambda s, st: iter(()))


class CountingSource:
    """Counts fetches; each fetch blocks until released (or sleeps ``delay``)."""

    def __init__(self, name, snapshot, gate: threading.Event | None = None, delay: float = 0.0):
        self.name, self.snapshot, self.gate, self.delay = name, snapshot, gate, delay
        self.fetches = 0
        self.lock = threading.Lock()

    def fetch(self):
        with self.lock:
            self.fetches += 1
        if self.gate is not None:
            assert self.gate.wait(10)
        if self.delay:
            time.sleep(self.delay)
        return self.snapshot

    def close(self):
        pass


def test_ten_concurrent_scrapes_cause_one_fetch(core):
    gate = threading.Event()
    src = CountingSource("db1", core.make_snapshot("db1", 0), gate=gate)
    exp = OracleExporter([Target("db1", src)], Settings(), {"test_redo": REDO})
    results: list[str] = []
    start = threading.Barrier(11)

    def scrape():
        start.wait()
        results.append(text_of(exp))

    threads = [threading.Thread(target=scrape) for _ in range(10)]
    for t in threads:
        t.start()
    start.wait()
    time.sleep(0.5)  # every scrape is now waiting on the one fetch in flight
    gate.set()
    for t in threads:
        t.join(10)
    assert src.fetches == 1
    assert len(results) == 10
    redo = core.make_snapshot("db1", 0).rows("GV$SYSSTAT")
    (expected,) = [r["VALUE"] for r in redo if r["NAME"] == "redo size"]
    assert {core.sample(r, "oracle_test_redo_size_bytes_total", database="db1", inst_id="1") for r in results} \
        == {float(expected)}
    # the next scrape after the fetch finished fetches again
    text_of(exp)
    assert src.fetches == 2
    exp.close()


@pytest.mark.slow
def test_unreachable_database_reports_down_within_timeout_others_up(core):
    closed = core.free_port()
    live = LiveSource(DatabaseConfig("down", dsn=f"127.0.0.1:{closed}/ORCL", user="u", password="p"),
                      Settings(), connect_timeout=1)
    slow = CountingSource("slow", core.make_snapshot("slow", 0), delay=1.5)
    ok = ReplaySource("ok", [core.make_snapshot("ok", 0)])
    exp = OracleExporter([Target("down", live, timeout=2.0), Target("slow", slow, timeout=0.5),
                          Target("ok", ok, timeout=2.0)], Settings(), {"test_redo": REDO})
    t0 = time.monotonic()
    text = text_of(exp)
    elapsed = time.monotonic() - t0
    assert elapsed < 1.2, elapsed  # bounded by the slow database's 0.5 s deadline, not its 1.5 s fetch
    assert core.sample(text, "oracle_up", database="down") == 0.0
    assert core.sample(text, "oracle_up", database="slow") == 0.0
    assert core.sample(text, "oracle_up", database="ok") == 1.0
    assert core.sample(text, "oracle_scrape_errors_total", database="slow", collector="fetch") == 1.0
    assert core.sample(text, "oracle_scrape_duration_seconds", database="slow") == pytest.approx(0.5, abs=0.3)
    # only the healthy database has collector output
    assert "oracle_test_redo_size_bytes_total{database=\"ok\"" in text
    assert "database=\"slow\",inst_id" not in text
    # a scrape during the slow fetch joins it (no second query set), and its deadline holds
    t0 = time.monotonic()
    text = text_of(exp, ["slow"], timeout=0.3)
    assert time.monotonic() - t0 < 1.0
    assert core.sample(text, "oracle_up", database="slow") == 0.0
    assert slow.fetches == 1
    time.sleep(1.2)  # the slow fetch completes: the next scrape gets a fresh one and succeeds in time
    exp.targets["slow"].timeout = 5.0
    text = text_of(exp, ["slow"])
    assert core.sample(text, "oracle_up", database="slow") == 1.0
    exp.close()


def test_collector_raising_is_isolated(core):
    src = ReplaySource("db1", [core.make_snapshot("db1", t) for t in (0, 15)])
    exp = OracleExporter([Target("db1", src, labels={"env": "prod"})], Settings(),
                         {"test_redo": REDO, "test_boom": BOOM})
    first = text_of(exp)
    second = text_of(exp)
    for text in (first, second):
        assert core.sample(text, "oracle_collector_success", database="db1", collector="test_boom") == 0.0
        assert core.sample(text, "oracle_collector_success", database="db1", collector="test_redo") == 1.0
        assert core.sample(text, "oracle_up", database="db1", env="prod") == 1.0
        assert "oracle_test_partial" not in text  # a failing collector's partial output is dropped
    assert core.sample(first, "oracle_scrape_errors_total", database="db1", collector="test_boom") == 1.0
    assert core.sample(second, "oracle_scrape_errors_total", database="db1", collector="test_boom") == 2.0
    assert core.sample(second, "oracle_scrape_errors_total", database="db1", collector="test_redo") == 0.0
    assert core.sample(second, "oracle_scrape_errors_total", database="db1", collector="fetch") == 0.0
    assert core.sample(first, "oracle_test_redo_size_bytes_total", database="db1", env="prod", inst_id="1") \
        == 9_450_000 * 86_400
    assert core.sample(second, "oracle_test_redo_size_bytes_total", database="db1", env="prod", inst_id="1") \
        == 9_450_000 * 86_415


def test_view_error_fails_only_collectors_reading_that_view(core):
    snap = core.make_snapshot("db1", 0)
    del snap.views["GV$LATCH"]
    snap.errors["GV$LATCH"] = "ORA-00942: table or view does not exist"
    exp = OracleExporter([Target("db1", ReplaySource("db1", [snap]))], Settings(),
                         {"test_redo": REDO, "test_latch": LATCH})
    text = text_of(exp)
    assert core.sample(text, "oracle_up", database="db1") == 1.0
    assert core.sample(text, "oracle_collector_success", database="db1", collector="test_latch") == 0.0
    assert core.sample(text, "oracle_collector_success", database="db1", collector="test_redo") == 1.0
    assert core.sample(text, "oracle_scrape_errors_total", database="db1", collector="test_latch") == 1.0


def test_disabled_collector_does_not_run(core):
    src = ReplaySource("db1", [core.make_snapshot("db1", 0)])
    exp = OracleExporter([Target("db1", src)], Settings(collectors={"test_boom": False}),
                         {"test_redo": REDO, "test_boom": BOOM})
    text = text_of(exp)
    assert 'collector="test_boom"' not in text
    assert core.sample(text, "oracle_collector_success", database="db1", collector="test_redo") == 1.0


def test_every_sample_has_database_and_extra_labels(core):
    from prometheus_client.parser import text_string_to_metric_families
    exp = OracleExporter([Target("db1", ReplaySource("db1", [core.make_snapshot("db1", 0, inst_ids=(1, 2))]),
                                 labels={"env": "prod", "site": "fra"}),
                          Target("db2", ReplaySource("db2", [core.make_snapshot("db2", 0)]))], Settings())
    text = text_of(exp)
    names = set()
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            names.add(s.name)
            if s.name == "oracle_exporter_build_info":
                assert set(s.labels) == {"version"}
                continue
            assert s.labels["database"] in ("db1", "db2"), s
            if s.labels["database"] == "db1":
                assert (s.labels["env"], s.labels["site"]) == ("prod", "fra"), s
            else:
                assert "env" not in s.labels
    # both databases' samples share one family per metric name (no duplicate TYPE lines)
    type_lines = [line for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(type_lines) == len(set(type_lines))
    assert {"oracle_wait_event_waits_total", "oracle_redo_size_bytes_total", "oracle_up",
            "oracle_instance_info"} <= names


def test_log_file_parallel_write_average_from_exposed_counters(core):
    """Acceptance: two snapshots 60 s apart at 74 waits/s @ 11.8 ms -> 11.8 ms from the exposition."""
    exp = OracleExporter([Target("db1", ReplaySource("db1", [core.make_snapshot("db1", t) for t in (0, 60)]))],
                         Settings())
    a, b = text_of(exp), text_of(exp)
    lbl = dict(database="db1", inst_id="1", event="log file parallel write", wait_class="System I/O")
    dw = core.sample(b, "oracle_wait_event_waits_total", **lbl) - core.sample(a, "oracle_wait_event_waits_total", **lbl)
    dt = (core.sample(b, "oracle_wait_event_time_seconds_total", **lbl)
          - core.sample(a, "oracle_wait_event_time_seconds_total", **lbl))
    assert dw / 60 == pytest.approx(74.0, abs=0.02)
    assert dt / dw == pytest.approx(0.0118, rel=1e-4)
    assert all(core.sample(b, "oracle_collector_success", database="db1", collector=c) == 1.0
               for c in exp.collectors)


@pytest.mark.slow
def test_once_exposition_passes_promtool(recording, core):
    promtool = shutil.which("promtool")
    assert promtool, "promtool is installed on this machine"
    res = core.run_cli("--replay", str(recording), "--once")
    assert res.returncode == 1, res.stderr                      # db2 is down: --once says so
    assert res.stderr.strip().endswith("oracle-exporter: database(s) down: db2")
    assert core.sample(res.stdout, "oracle_up", database="db1") == 1.0
    assert core.sample(res.stdout, "oracle_up", database="db2") == 0.0
    chk = subprocess.run([promtool, "check", "metrics"], input=res.stdout, capture_output=True, text=True)
    assert (chk.returncode, chk.stdout, chk.stderr) == (0, "", "")
    # and promtool does find problems when there are some (the check is not a no-op)
    bad = subprocess.run([promtool, "check", "metrics"], input="# TYPE foo counter\nfoo 1\n",
                         capture_output=True, text=True)
    assert "counter metrics should have" in bad.stdout + bad.stderr


def test_hung_database_listener_does_not_hold_up_the_others(blackhole_listener, core):
    hung = LiveSource(DatabaseConfig("hung", dsn=f"127.0.0.1:{blackhole_listener.port}/ORCL", user="u", password="p",
                                     timeout_seconds=0.6), Settings(), connect_timeout=0.3)
    ok = ReplaySource("ok", [core.make_snapshot("ok", t) for t in (0, 15)])
    exp = OracleExporter([Target("hung", hung, timeout=0.6), Target("ok", ok, timeout=0.6)], Settings(),
                         {"test_redo": REDO})
    for i in range(2):
        t0 = time.monotonic()
        text = text_of(exp)
        assert time.monotonic() - t0 < 1.0
        assert core.sample(text, "oracle_up", database="hung") == 0.0
        assert core.sample(text, "oracle_up", database="ok") == 1.0
        assert core.sample(text, "oracle_test_redo_size_bytes_total", database="ok", inst_id="1") \
            == 9_450_000 * (86_400 + 15 * i)
    exp.close()


def test_a_database_label_named_like_a_collector_label_is_warned_about_once(caplog):
    """``labels: {contents: oltp}``: the tablespace series keep their own ``contents`` (the collector's value
    replaces the database's there), every other series carries contents="oltp"; the start says so, one
    line per label, naming the metrics; a label no collector uses is not mentioned."""
    import logging
    from oracle_exporter import demo
    from oracle_exporter.sources.replay import replay_sources
    src = replay_sources(demo.path("demo-before.jsonl"), only=["DEMO"])[0]
    with caplog.at_level(logging.WARNING, logger="oracle_exporter.exporter"):
        exp = OracleExporter([Target("DEMO", src, labels={"contents": "oltp", "env": "prod"})], Settings())
    warned = [r.getMessage() for r in caplog.records if "is also a label of" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("label 'contents' of database(s) DEMO is also a label of ")
    assert "oracle_tablespace_info" in warned[0] and "db_contents" in warned[0]
    text = text_of(exp)
    exp.close()
    kinds = {line.split('contents="')[1].split('"')[0] for line in text.splitlines()
             if line.startswith("oracle_tablespace_used_bytes{")}
    assert kinds and "oltp" not in kinds                          # the tablespace's own type
    assert kinds <= {"PERMANENT", "UNDO", "TEMPORARY"}
    assert 'oracle_up{contents="oltp",database="DEMO",env="prod"} 1.0' in text


def test_label_clashes_names_each_label_once_for_every_database():
    from oracle_exporter.exporter import label_clashes, load_collectors
    targets = [Target(f"db{i}", None, labels={"state": "x", "owner": "y", "site": "z"}) for i in range(5)]
    lines = label_clashes(targets, load_collectors())
    assert [line.split("'")[1] for line in lines] == ["owner", "state"]
    assert "db0, db1, db2 and 2 more" in lines[0]
    assert label_clashes(targets, {}) == []                       # no collector enabled: nothing clashes
    queried = [Target("db0", None, labels={"query": "q"})]
    assert label_clashes(queried, load_collectors(), Settings()) == []      # no custom metrics: no `query` label
    assert "oracle_custom_query_success" in label_clashes(queried, load_collectors())[0]


def test_docs_list_exactly_the_refused_extra_label_names():
    import re
    from pathlib import Path
    from oracle_exporter.config import RESERVED_LABELS
    text = (Path(__file__).resolve().parents[2] / "docs" / "oracle-exporter.md").read_text()
    block = text.split("Refused as extra label names", 1)[1].split("(Prometheus' own", 1)[0]
    assert set(re.findall(r"`([a-z_]+)`", block)) == set(RESERVED_LABELS)
