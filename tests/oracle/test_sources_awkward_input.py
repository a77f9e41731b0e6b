"""The replay and live sources: awkward recordings and an old V$PROCESS.

Recordings are written by the project's own snapshot generator (conftest.make_snapshot,
one line per snapshot exactly as the recorder writes them); each test changes only
what the case is about (interleaving, blank lines, a cut-off last line ...).
"""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from exporter_common.config import ConfigError
from oracle_exporter.config import DatabaseConfig, Settings
from oracle_exporter.sources.live import LiveSource
from oracle_exporter.sources.replay import RecordedSnapshots, read_recording, replay_sources
from oracle_sim import FakeConnection, FakeCursor


def lines(core, plan):
    """plan: [(database, t)] -> recording text, one snapshot line each."""
    return "".join(core.make_snapshot(db, t).to_json() + "\n" for db, t in plan)


def redo_size(snapshot) -> float:
    (row,) = [r for r in snapshot.rows("GV$SYSSTAT") if r["NAME"] == "redo size"]
    return row["VALUE"]


def test_interleaved_and_late_databases_are_served_in_their_own_file_order(tmp_path, core):
    plan = [("a", 0), ("a", 15), ("b", 0), ("a", 30), ("c", 0), ("b", 15), ("c", 15)]
    path = tmp_path / "rec.jsonl"
    path.write_text("\n" + lines(core, plan).replace("\n", "\n\n\n"))      # blank lines anywhere
    sources = {s.name: s for s in replay_sources(str(path))}
    assert list(sources) == ["a", "b", "c"]
    for name in "abc":
        want = [redo_size(core.make_snapshot(name, t)) for db, t in plan if db == name]
        got = [redo_size(sources[name].fetch()) for _ in range(len(want) + 1)]
        assert got == want + [want[-1]]                   # file order, then the last one is held


def test_replay_keeps_byte_offsets_not_snapshots(tmp_path, core):
    path = tmp_path / "rec.jsonl"
    path.write_text(lines(core, [("a", 15 * i) for i in range(5)]))
    (src,) = replay_sources(str(path))
    assert isinstance(src.snapshots, RecordedSnapshots)
    assert all(isinstance(o, int) for o in src.snapshots.offsets) and len(src.snapshots) == 5
    assert [s.to_json() for s in src.snapshots] == [s.to_json() for s in read_recording(str(path))["a"]]


def test_cut_off_last_line_is_skipped_with_a_warning(tmp_path, core, caplog):
    full = lines(core, [("a", 0), ("a", 15), ("a", 30)])
    cut = full[: len(full) - 1 - len(full.splitlines()[-1]) // 2]             # killed mid-write: no newline
    path = tmp_path / "rec.jsonl"
    path.write_text(cut)
    with caplog.at_level("WARNING"):
        by_db = read_recording(str(path))
    assert len(by_db["a"]) == 2
    assert "line 3 is not valid JSON" in caplog.text and "skipping" in caplog.text
    res = core.run_cli("--replay", str(path), "--once")
    assert res.returncode == 0, res.stderr
    assert core.sample(res.stdout, "oracle_up", database="a") == 1.0
    assert core.sample(res.stdout, "oracle_redo_size_bytes_total", database="a", inst_id="1") == redo_size(
        core.make_snapshot("a", 0))
    assert "line 3 is not valid JSON" in res.stderr


def test_a_complete_corrupt_line_is_still_an_error_even_when_last(tmp_path, core):
    path = tmp_path / "rec.jsonl"
    path.write_text(lines(core, [("a", 0)]) + '{"time": "2024-01-01T00:00:00Z", "datab\n')
    with pytest.raises(ConfigError) as err:
        read_recording(str(path))
    assert err.value.field == "line 2" and "invalid JSON" in err.value.message
    path.write_text(lines(core, [("a", 0)]) + '{"time": "x", "datab' + "\n" + lines(core, [("a", 15)]))
    with pytest.raises(ConfigError) as err:
        read_recording(str(path))
    assert err.value.field == "line 2"


def test_a_cut_off_only_line_leaves_an_empty_recording(tmp_path, core):
    path = tmp_path / "rec.jsonl"
    path.write_text(lines(core, [("a", 0)])[:100])
    res = core.run_cli("--replay", str(path), "--once")
    assert res.returncode == 2
    assert res.stderr.strip().endswith(f"error: {path}: recording holds no snapshots")


def test_empty_file_exits_2(tmp_path, core):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    res = core.run_cli("--replay", str(path), "--once")
    assert (res.returncode, res.stderr.strip()) == (2, f"error: {path}: recording holds no snapshots")


def test_recording_of_only_unreachable_snapshots_reports_down(tmp_path, core):
    path = tmp_path / "down.jsonl"
    path.write_text("".join(core.unreachable(db, t).to_json() + "\n" for db, t in [("a", 0), ("b", 0), ("a", 15)]))
    res = core.run_cli("--replay", str(path), "--once")
    assert res.returncode == 1, res.stderr                      # every database down: exit 1, exposition still printed
    assert core.sample(res.stdout, "oracle_up", database="a") == 0.0
    assert core.sample(res.stdout, "oracle_up", database="b") == 0.0
    assert core.sample(res.stdout, "oracle_last_error_info", database="a", reason="connect timeout") == 1.0
    assert "oracle_wait_event" not in res.stdout
    if shutil.which("promtool"):
        out = subprocess.run(["promtool", "check", "metrics"], input=res.stdout.encode(), capture_output=True)
        assert out.returncode == 0 and not out.stdout.strip() and not out.stderr.strip(), out.stdout + out.stderr


@pytest.mark.slow
def test_view_recorded_as_null_counts_as_not_fetched(tmp_path, core):
    obj = json.loads(core.make_snapshot("a", 0).to_json())
    obj["views"]["GV$LATCH"] = None
    path = tmp_path / "rec.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    res = core.run_cli("--replay", str(path), "--once")
    assert res.returncode == 0, res.stderr
    assert "oracle_latch_gets_total" not in res.stdout
    assert core.sample(res.stdout, "oracle_up", database="a") == 1.0


def test_loop_shifts_counters_recorded_as_strings(tmp_path, core):
    snaps = []
    for t in (0, 15, 30):
        obj = json.loads(core.make_snapshot("a", t).to_json())
        for r in obj["views"]["GV$SYSSTAT"]:
            r["VALUE"] = str(r["VALUE"])
        snaps.append(json.dumps(obj))
    path = tmp_path / "rec.jsonl"
    path.write_text("\n".join(snaps) + "\n")
    (src,) = replay_sources(str(path), loop=True)
    sizes = [float(redo_size(src.fetch())) for _ in range(5)]
    first, second, third = (float(redo_size(core.make_snapshot("a", t))) for t in (0, 15, 30))
    assert sizes == [first, second, third, first + (third - first), second + (third - first)]


def test_loop_state_is_built_in_the_indexing_pass(tmp_path, core, monkeypatch):
    """--replay-loop start-up reads each line once (no second pass over the file), and the
    state it builds equals the one rebuilt from the parsed snapshots; a series held in
    every snapshot is not kept for filling in, one that appears late is."""
    from oracle_exporter.sources import replay
    plan = [("a", 0), ("b", 0), ("a", 15), ("b", 15), ("a", 30), ("b", 30)]
    objs = [json.loads(core.make_snapshot(db, t).to_json()) for db, t in plan]
    late = {"INST_ID": 1, "EVENT": "enq: TX - row lock contention", "WAIT_CLASS": "Application",
            "TOTAL_WAITS": 10, "TOTAL_TIMEOUTS": 0, "TIME_WAITED_MICRO": 5000}
    objs[4]["views"]["GV$SYSTEM_EVENT"].append(late)                      # db a, last snapshot only
    path = tmp_path / "rec.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    parsed = []
    real = replay._parse_line
    monkeypatch.setattr(replay, "_parse_line", lambda *a, **k: parsed.append(a[1]) or real(*a, **k))
    sources = {s.name: s for s in replay_sources(str(path), loop=True)}
    assert parsed == [1, 2, 3, 4, 5, 6]                                     # one parse per line
    by_db = read_recording(str(path))
    for name, src in sources.items():
        deltas, series = replay.loop_state(by_db[name])
        assert src.deltas == deltas and src.deltas
        assert {v: set(s) for v, s in src.series.items()} == {v: set(s) for v, s in series.items()}
    key = ("GV$SYSSTAT", (1, "redo size"), "VALUE")
    assert sources["a"].deltas[key] == redo_size(by_db["a"][2]) - redo_size(by_db["a"][0])
    assert sources["a"].series == {"GV$SYSTEM_EVENT": {(1, "enq: TX - row lock contention"): replay._Series(
        2, 2, [{**late}])}}
    assert sources["b"].series == {}
    # the late event is held at its value on the next pass's first snapshot
    got = [sources["a"].fetch() for _ in range(4)]
    held = [r for r in got[3].rows("GV$SYSTEM_EVENT") if r["EVENT"] == late["EVENT"]]
    assert [r["TOTAL_WAITS"] for r in held] == [10]


# --- live: a V$PROCESS without PNAME -----------------------------------------------

class NoPnameCursor(FakeCursor):
    def execute(self, sql, binds):
        if " PNAME" in sql.split(" FROM ")[0]:
            self.conn.executed.append(sql)
            import oracledb
            raise oracledb.DatabaseError('ORA-00904: "PNAME": invalid identifier')
        return super().execute(sql, binds)


class NoPnameConnection(FakeConnection):
    def cursor(self):
        return NoPnameCursor(self)


def test_live_falls_back_to_program_when_pname_is_missing():
    rows = {"GV$PROCESS": [(1, 2, "4102", "oracle@dbhost1 (PMON)", "1", 10, 20, 30),
                           (1, 9, "4109", "oracle@dbhost1 (LGWR)", "1", 11, 21, 31)]}
    conn = NoPnameConnection(rows=rows)
    db = DatabaseConfig(name="old", dsn="h:1/s", user="u", password="p")
    src = LiveSource(db, Settings(), connect=lambda d, t: conn)
    first = src.fetch()
    assert "GV$PROCESS" not in first.errors
    assert [(r["PNAME"], r["SPID"]) for r in first.rows("GV$PROCESS")] == [("PMON", "4102"), ("LGWR", "4109")]
    assert "BACKGROUND" in src.variant("GV$PROCESS").columns
    conn.executed.clear()
    src.fetch()
    (proc_sql,) = [s for s in conn.executed if " FROM GV$PROCESS" in s]
    assert "PNAME" not in proc_sql and "BACKGROUND = '1'" in proc_sql      # chosen for good, one query
