"""Replay and recorder: file order, holding the last snapshot, monotonic loops,
the counter table, malformed recordings, and record -> replay round trips."""
from __future__ import annotations

import json
import subprocess
import threading

import pytest

from exporter_common.config import ConfigError
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.sources import failure_reason, is_failed
from oracle_exporter.sources.recorder import Recorder, RecordingSource
from oracle_exporter.sources.replay import (COUNTERS, ReplaySource, counter_values, loop_deltas,
                                            read_recording, replay_sources)


def sysstat(snap: Snapshot, name: str, inst: int = 1):
    (v,) = [r["VALUE"] for r in snap.rows("GV$SYSSTAT") if r["NAME"] == name and r["INST_ID"] == inst]
    return v


def event(snap: Snapshot, name: str, col: str, inst: int = 1):
    (v,) = [r[col] for r in snap.rows("GV$SYSTEM_EVENT") if r["EVENT"] == name and r["INST_ID"] == inst]
    return v


def current_seq(snap: Snapshot, thread: int = 1):
    (v,) = [r["SEQUENCE#"] for r in snap.rows("GV$LOG") if r["STATUS"] == "CURRENT" and r["THREAD#"] == thread]
    return v


def test_read_recording_groups_by_database_in_file_order(recording, core):
    by_db = read_recording(str(recording))
    assert list(by_db) == ["db1", "db2"]
    assert [s.time for s in by_db["db1"]] == ["2023-11-14T22:13:20.000Z", "2023-11-14T22:13:35.000Z",
                                              "2023-11-14T22:13:50.000Z"]
    assert all(is_failed(s) and s.views == {} for s in by_db["db2"])
    # the generator's rates: 9.45 MB/s of redo, so 15 s apart = 141,750,000 bytes
    a, b = by_db["db1"][0], by_db["db1"][1]
    assert sysstat(b, "redo size") - sysstat(a, "redo size") == 141_750_000


def test_one_snapshot_per_fetch_then_hold_last(recording):
    (src,) = replay_sources(str(recording), only=["db1"])
    snaps = read_recording(str(recording))["db1"]
    got = [src.fetch() for _ in range(5)]
    assert [sysstat(s, "redo size") for s in got] == [sysstat(snaps[i], "redo size") for i in (0, 1, 2, 2, 2)]
    assert [s.time for s in got] == [snaps[i].time for i in (0, 1, 2, 2, 2)]


def test_loop_shifts_counters_by_last_minus_first(recording):
    snaps = read_recording(str(recording))["db1"]
    src = ReplaySource("db1", snaps, loop=True)
    got = [src.fetch() for _ in range(7)]  # passes: 0,0,0,1,1,1,2
    first, last = snaps[0], snaps[-1]
    d_redo = sysstat(last, "redo size") - sysstat(first, "redo size")
    assert d_redo == 283_500_000
    assert [sysstat(s, "redo size") for s in got] == [
        sysstat(snaps[0], "redo size"), sysstat(snaps[1], "redo size"), sysstat(snaps[2], "redo size"),
        sysstat(snaps[0], "redo size") + d_redo, sysstat(snaps[1], "redo size") + d_redo,
        sysstat(snaps[2], "redo size") + d_redo, sysstat(snaps[0], "redo size") + 2 * d_redo]
    # every counter of every view is non-decreasing over the whole sequence
    series = [counter_values(s) for s in got]
    for prev, cur in zip(series, series[1:]):
        for key, value in cur.items():
            assert value >= prev[key], key
    # gauges are not shifted: 'logons current', PGA allocated, SYSMETRIC, parameters
    assert [sysstat(s, "logons current") for s in got] == [37] * 7
    assert got[3].rows("GV$SYSMETRIC") == snaps[0].rows("GV$SYSMETRIC")
    assert got[3].rows("GV$SYSTEM_PARAMETER") == snaps[0].rows("GV$SYSTEM_PARAMETER")
    # the recorded snapshots themselves are left untouched
    assert snaps[0].to_json() == read_recording(str(recording))["db1"][0].to_json()


def test_loop_pga_only_over_allocation_count_is_a_counter(core):
    snaps = [core.make_snapshot("db1", t) for t in (0, 600, 1200)]
    src = ReplaySource("db1", snaps, loop=True)
    got = [src.fetch() for _ in range(4)]
    pga = {r["NAME"]: r["VALUE"] for r in got[3].rows("GV$PGASTAT")}
    pga0 = {r["NAME"]: r["VALUE"] for r in snaps[0].rows("GV$PGASTAT")}
    # over allocation count: 144 -> 146 over the recording, so +2 after one pass
    assert pga0["over allocation count"] == 144
    assert pga["over allocation count"] == 146
    assert pga["total PGA allocated"] == pga0["total PGA allocated"]
    assert pga["cache hit percentage"] == 97.5


def test_loop_log_sequence_per_thread_keeps_counting_switches(core):
    snaps = [core.make_snapshot("db1", t, inst_ids=(1, 2)) for t in (0, 60, 120, 180)]
    src = ReplaySource("db1", snaps, loop=True)
    got = [src.fetch() for _ in range(8)]
    for thread in (1, 2):
        seqs = [current_seq(s, thread) for s in got]
        # one switch a minute; the wrap repeats the last value once (shift = last - first)
        assert seqs == [2440, 2441, 2442, 2443, 2443, 2444, 2445, 2446]
        # every group of the thread moved by the same amount, so groups stay 3 apart
        groups = sorted(r["SEQUENCE#"] for r in got[5].rows("GV$LOG") if r["THREAD#"] == thread)
        assert groups == [2442, 2443, 2444]


def test_counter_table():
    """Replay's counters are the registry's (oracle_exporter.views): view, series identity, column."""
    assert COUNTERS["GV$SYSTEM_EVENT"].series_identity == ("INST_ID", "EVENT")
    assert {"TOTAL_WAITS", "TOTAL_TIMEOUTS", "TIME_WAITED_MICRO"} <= set(COUNTERS["GV$SYSTEM_EVENT"].counters)
    assert COUNTERS["GV$EVENT_HISTOGRAM_MICRO"].counters == ("WAIT_COUNT",)
    assert COUNTERS["GV$EVENT_HISTOGRAM_MICRO"].series_identity == ("INST_ID", "EVENT", "WAIT_TIME_MICRO")
    assert COUNTERS["GV$EVENT_HISTOGRAM"].series_identity == ("INST_ID", "EVENT", "WAIT_TIME_MILLI")
    assert COUNTERS["GV$LOG"].counters == ("SEQUENCE#",)
    assert COUNTERS["GV$LOG"].series_identity == ("INST_ID", "THREAD#")   # sequence numbers are per thread
    ss = COUNTERS["GV$SYSSTAT"]
    assert ss.is_counter_row({"NAME": "redo size"}) and not ss.is_counter_row({"NAME": "logons current"})
    pga = COUNTERS["GV$PGASTAT"]
    assert pga.is_counter_row({"NAME": "over allocation count"})
    assert not pga.is_counter_row({"NAME": "total PGA allocated"})
    assert set(COUNTERS["GV$LATCH"].counters) >= {"GETS", "MISSES", "SLEEPS", "IMMEDIATE_GETS", "IMMEDIATE_MISSES"}
    for view in ("GV$SYSTEM_PARAMETER", "GV$SYSMETRIC", "GV$INSTANCE", "V$DATABASE", "GV$PROCESS"):
        assert view not in COUNTERS
    # every counter column is one the live source actually selects
    from oracle_exporter.queries import build_queries
    queries = {**build_queries(), **build_queries(fallen_back=["GV$EVENT_HISTOGRAM_MICRO"])}
    for view, spec in COUNTERS.items():
        sql = queries[view].sql
        for col in spec.series_identity + tuple(c for c in spec.counters if not c.endswith("_FG") and c != "TIME_WAITED"):
            assert col in sql, (view, col)


def test_loop_delta_for_series_appearing_later(core):
    a, b, c = (core.make_snapshot("db1", t) for t in (0, 15, 30))
    b.views["GV$SYSTEM_EVENT"].append({"INST_ID": 1, "EVENT": "enq: TX - row lock contention",
                                       "WAIT_CLASS": "Application", "TOTAL_WAITS": 10, "TOTAL_TIMEOUTS": 0,
                                       "TIME_WAITED_MICRO": 5000})
    c.views["GV$SYSTEM_EVENT"].append({"INST_ID": 1, "EVENT": "enq: TX - row lock contention",
                                       "WAIT_CLASS": "Application", "TOTAL_WAITS": 13, "TOTAL_TIMEOUTS": 0,
                                       "TIME_WAITED_MICRO": 8000})
    deltas = loop_deltas([a, b, c])
    key = ("GV$SYSTEM_EVENT", (1, "enq: TX - row lock contention"), "TOTAL_WAITS")
    assert deltas[key] == 3
    # "log buffer space" disappears from the last snapshot (think of an instance restart)
    c.views["GV$SYSTEM_EVENT"] = [r for r in c.views["GV$SYSTEM_EVENT"] if r["EVENT"] != "log buffer space"]
    lbs_b = event(b, "log buffer space", "TOTAL_WAITS")
    src = ReplaySource("db1", [a, b, c], loop=True)
    got = [src.fetch() for _ in range(7)]
    tx = "enq: TX - row lock contention"
    # pass 0 as recorded, except that a series that vanished is held at its last value
    assert not [r for r in got[0].rows("GV$SYSTEM_EVENT") if r["EVENT"] == tx]
    assert [event(g, tx, "TOTAL_WAITS") for g in got[1:]] == [10, 13, 13, 13, 16, 16]
    assert [event(g, tx, "TIME_WAITED_MICRO") for g in got[1:]] == [5000, 8000, 8000, 8000, 11000, 11000]
    d = lbs_b - event(a, "log buffer space", "TOTAL_WAITS")
    assert [event(g, "log buffer space", "TOTAL_WAITS") for g in got] == [
        lbs_b - d, lbs_b, lbs_b, lbs_b, lbs_b + d, lbs_b + d, lbs_b + d]
    # a view a snapshot does not have is not invented
    b.views.pop("GV$LATCH")
    src = ReplaySource("db1", [a, b, c], loop=True)
    assert "GV$LATCH" not in [src.fetch() for _ in range(5)][4].views


BAD_LINES = [
    ('{"time": "2025-03-11T09:00:00Z", "database": "a", "views": {}}\n{not json\n', 2, "invalid JSON"),
    ('{"time": "2025-03-11T09:00:00Z", "views": {}}\n', 1, 'field "database" missing'),
    ('\n\n{"time": "2025-03-11T09:00:00Z", "database": "a", "views": {"GV$LOG": {"x": 1}}}\n', 3,
     'views["GV$LOG"] must be a list of row objects'),
    ('[1, 2]\n', 1, "expected a JSON object"),
    ('{"time": "2025-03-11T09:00:00Z", "database": "", "views": {}}\n', 1, 'field "database" is empty'),
]


@pytest.mark.parametrize("text,line,message", BAD_LINES, ids=[b[2][:25] for b in BAD_LINES])
def test_malformed_recording_names_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_recording(str(path))
    assert (err.value.source, err.value.field) == (str(path), f"line {line}")
    assert message in err.value.message


@pytest.mark.slow
def test_cli_malformed_recording_exits_2(tmp_path, core):
    path = tmp_path / "bad.jsonl"
    path.write_text(core.make_snapshot().to_json() + "\n" + '{"time": 1}\n')
    res = core.run_cli("--replay", str(path), "--once")
    assert res.returncode == 2
    assert res.stderr.strip() == f'error: {path}: line 2: not a snapshot: field "time" missing or not a str'
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    res = core.run_cli("--replay", str(empty), "--once")
    assert (res.returncode, res.stderr.strip()) == (2, f"error: {empty}: recording holds no snapshots")
    res = core.run_cli("--replay", str(tmp_path / "missing.jsonl"), "--once")
    assert (res.returncode, res.stderr.strip()) == (2, f"error: {tmp_path / 'missing.jsonl'}: recording not found")


def test_record_then_replay_round_trip(tmp_path, recording):
    out = tmp_path / "again.jsonl"
    rec = Recorder(str(out))
    sources = [RecordingSource(s, rec) for s in replay_sources(str(recording))]
    fetched = [src.fetch() for _ in range(3) for src in sources]
    rec.close()
    again = read_recording(str(out))
    assert [s.to_json() for s in again["db1"]] == [s.to_json() for s in fetched if s.database == "db1"]
    assert [s.errors for s in again["db2"]] == [{"*": "ORA-12170: TNS:Connect timeout occurred"}] * 3


def test_recorder_is_thread_safe_and_appends(tmp_path, core):
    out = tmp_path / "rec.jsonl"
    out.write_text(core.make_snapshot("old", 0).to_json() + "\n")  # existing content is kept
    rec = Recorder(str(out))
    snaps = [core.make_snapshot(f"db{i}", 15 * i) for i in range(8)]

    def worker(snap):
        for _ in range(5):
            rec.write(snap)

    threads = [threading.Thread(target=worker, args=(s,)) for s in snaps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert rec.written == 40
    by_db = read_recording(str(out))  # every line parses: no interleaving
    assert len(by_db["old"]) == 1
    assert {n: len(v) for n, v in by_db.items() if n != "old"} == {f"db{i}": 5 for i in range(8)}
    assert by_db["db3"][0].to_json() == snaps[3].to_json()
    rec.close()


def test_recorder_bad_path_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError) as err:
        Recorder(str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert err.value.source == "--record" and "cannot open" in err.value.message


@pytest.mark.slow
def test_cli_record_appends_every_fetched_snapshot(tmp_path, recording, core):
    out = tmp_path / "out.jsonl"
    for _ in range(2):
        res = core.run_cli("--replay", str(recording), "--record", str(out), "--once")
        assert res.returncode == 1, res.stderr                  # db2 is down
    lines = core.load_lines(out)
    # two runs x two databases, the unreachable one included; the databases of one run are
    # fetched concurrently, so their order within a run is whichever fetch finished first
    assert len(lines) == 4
    for run in (lines[:2], lines[2:]):
        assert sorted((d["database"], "errors" in d) for d in run) == [("db1", False), ("db2", True)]
    first_db1 = next(d for d in lines if d["database"] == "db1")
    assert first_db1 == core.load_lines(recording)[0]


def test_console_script_and_module_entry_point(core):
    import sys
    from pathlib import Path
    script = Path(sys.executable).with_name("oracle-exporter")
    res = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0 and res.stdout.startswith("oracle-exporter ")
    res = core.run_cli("--help")
    assert res.returncode == 0 and "--replay-loop" in res.stdout and ":19161" in res.stdout


@pytest.mark.slow
def test_loop_keeps_every_exposed_counter_monotonic(core):
    """Through the real collectors: across loop wraps no exposed counter, histogram
    bucket, _count or _sum goes down (the COUNTERS table covers what collectors count)."""
    from prometheus_client.exposition import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from oracle_exporter.config import Settings
    from oracle_exporter.exporter import OracleExporter, Target

    demo = core.ROOT / "exporters" / "oracle_exporter" / "demo" / "demo-before.jsonl"
    by_db = read_recording(str(demo)) if demo.exists() else {"db1": [core.make_snapshot("db1", 15 * i)
                                                                     for i in range(6)]}
    targets = [Target(n, ReplaySource(n, snaps[:6], loop=True)) for n, snaps in by_db.items()]
    exp = OracleExporter(targets, Settings())
    previous: dict = {}
    checked = 0
    for _ in range(6 * 3):
        text = generate_latest(exp.registry()).decode()
        for fam in text_string_to_metric_families(text):
            if fam.type not in ("counter", "histogram") or fam.name == "oracle_scrape_errors":
                continue
            for s in fam.samples:
                if s.name.endswith("_created"):
                    continue
                key = (s.name, tuple(sorted(s.labels.items())))
                if key in previous:
                    assert s.value >= previous[key], key
                    checked += 1
                previous[key] = s.value
    assert checked > 1000
    assert core.sample(text, "oracle_up", database=targets[0].name) == 1.0


def test_deeply_nested_json_is_one_line_exit_2(tmp_path, core):
    """Issue 10.4: a line of 100,000 nested brackets used to end in a RecursionError traceback."""
    path = tmp_path / "deep.jsonl"
    path.write_text(core.make_snapshot().to_json() + "\n" + '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    res = core.run_cli("--replay", str(path), "--once")
    assert (res.returncode, res.stderr.strip()) == (2, f"error: {path}: line 2: invalid JSON: nested too deeply")


def test_a_recording_changed_under_the_replay_fails_the_fetch_with_one_reason(tmp_path, core):
    """Issue 10.5: rewriting or removing the recording under a running --replay used to log a
    traceback on every scrape; now the database is down with the reason, and the replay says
    what to do."""
    path = tmp_path / "r.jsonl"
    snaps = [core.make_snapshot() for _ in range(3)]
    path.write_text("".join(s.to_json() + "\n" for s in snaps))
    (src,) = replay_sources(str(path))
    assert not is_failed(src.fetch())
    path.write_text('{"x": 1}\n' * 40)                          # rewritten by something else
    snap = src.fetch()
    assert is_failed(snap)
    assert "the recording changed under the replay" in snap.errors["*"]
    assert "restart the exporter" in snap.errors["*"]
    assert failure_reason(snap.errors["*"]) == "recording changed"
    path.unlink()                                              # removed
    snap = src.fetch()
    assert is_failed(snap) and snap.errors["*"] == f"replay: {path}: recording not found"
    assert failure_reason(snap.errors["*"]) == "recording unreadable"


def test_reads_of_an_unchanged_recording_skip_the_value_checks_a_rewrite_does_not(tmp_path, core, monkeypatch):
    """Issue 26: the value checks of a line (two thirds of reading it) are made once, when the
    recording is indexed; a read from the same file unchanged skips them. A rewrite of the same
    size (a counter replaced by text of the same length) changes the file's mtime: checked
    again, and the fetch fails saying so, not a snapshot with the value silently dropped."""
    import os
    from oracle_exporter.sources import replay
    good = core.make_snapshot()
    obj = json.loads(good.to_json())
    obj["views"]["GV$SYSTEM_EVENT"][0]["TOTAL_WAITS"] = 123
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    checked = []
    real = replay._not_a_number
    monkeypatch.setattr(replay, "_not_a_number", lambda snap: checked.append(snap.database) or real(snap))
    (src,) = replay_sources(str(path), loop=True)
    assert len(checked) == 1                                       # the index
    for _ in range(3):
        assert not is_failed(src.fetch())
    assert len(checked) == 1                                       # no second check of an unchanged file
    before = os.stat(path)
    obj["views"]["GV$SYSTEM_EVENT"][0]["TOTAL_WAITS"] = "x"           # "x" is as long as 123
    path.write_text(json.dumps(obj) + "\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert os.stat(path).st_size == before.st_size
    snap = src.fetch()
    assert is_failed(snap)
    assert "TOTAL_WAITS is not a number" in snap.errors["*"] and "the recording changed" in snap.errors["*"]
    assert len(checked) == 2


def test_a_counter_that_is_not_a_number_is_named_not_dropped(tmp_path, core):
    """Issue 10.5: a non-numeric counter in a recording used to vanish from the exposition
    with every collector reporting success; now the recording is refused, naming it.
    Numeric strings (as some recorders write Oracle NUMBERs) and NULL stay accepted."""
    good = core.make_snapshot()
    obj = json.loads(good.to_json())
    obj["views"]["GV$SYSSTAT"][1]["VALUE"] = "12345"           # a numeric string: fine
    obj["views"]["GV$SYSSTAT"][2]["VALUE"] = None               # NULL: fine
    ok = tmp_path / "ok.jsonl"
    ok.write_text(json.dumps(obj) + "\n")
    assert len(read_recording(str(ok))[good.database]) == 1
    obj["views"]["GV$SYSTEM_EVENT"][0]["TOTAL_WAITS"] = "n/a"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.to_json() + "\n" + json.dumps(obj) + "\n")
    res = core.run_cli("--replay", str(bad), "--once")
    assert (res.returncode, res.stderr.strip()) == (
        2, f"error: {bad}: line 2: GV$SYSTEM_EVENT row 1: TOTAL_WAITS is not a number: 'n/a'")


def test_a_list_in_an_identity_column_is_named_not_a_crash(tmp_path, core):
    """Issue 15.7: --replay-loop crashed (TypeError: unhashable type) on an array in INST_ID."""
    obj = json.loads(core.make_snapshot().to_json())
    obj["views"]["GV$SYSSTAT"][0]["INST_ID"] = [1, 2]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(obj) + "\n")
    for extra in ((), ("--replay-loop",)):
        res = core.run_cli("--replay", str(bad), *extra, "--once")
        assert (res.returncode, res.stderr.strip()) == (
            2, f"error: {bad}: line 1: GV$SYSSTAT row 1: INST_ID is not a single value: [1, 2]")
