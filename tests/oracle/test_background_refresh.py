"""Background refresh (refresh_interval_seconds): every database fetched on the exporter's own
clock, spread over the interval; scrapes serve the last fetch at once. What an on-call engineer
of a 500-database exporter fears from it: a frozen fetch that keeps a database looking up, a slow
database fetched twice at once, every database queried in the same second, scrapers that multiply
the load again, a bad setting taken silently."""
from __future__ import annotations

import threading
import time
import urllib.request
from types import SimpleNamespace

import pytest

from exporter_common.config import ConfigError
from exporter_common.exposition import negotiate
from oracle_sim import REDO_COLLECTOR, redo_collect
from oracle_exporter.config import Settings, load_config
from oracle_exporter.exporter import FETCH_GRACE, OracleExporter, Target

TEXT = negotiate("text/plain;version=0.0.4")[0]




REDO = REDO_COLLECTOR
REDO_PER_SECOND = 9_450_000      # oracle_sim.make_snapshot: redo size = this * (86400 + t)


class GatedSource:
    """Snapshot n (t = 15 n) at fetch n; a fetch waits while ``open`` is clear. Records when each
    fetch started and how many ran at once."""

    def __init__(self, core, name: str, delay: float = 0.0):
        self.core, self.name, self.delay = core, name, delay
        self.open = threading.Event()
        self.open.set()
        self.starts: list[float] = []
        self.running = self.most_at_once = 0
        self.lock = threading.Lock()

    def fetch(self):
        with self.lock:
            n = len(self.starts)
            self.starts.append(time.monotonic())
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            assert self.open.wait(30)
            if self.delay:
                time.sleep(self.delay)
            return self.core.make_snapshot(self.name, 15 * n)
        finally:
            with self.lock:
                self.running -= 1

    def close(self):
        pass


def _text(exp: OracleExporter, names=None, timeout=None) -> str:
    return exp.exposition(TEXT, names, timeout).decode()


def _redo(core, text: str, db: str) -> float:
    return core.sample(text, "oracle_test_redo_size_bytes_total", database=db, inst_id="1")


def _until(check, limit: float = 5.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def test_scrape_serves_the_last_fetch_at_once_while_a_slow_one_runs(core):
    src = GatedSource(core, "db1")
    exp = OracleExporter([Target("db1", src, timeout=5.0)], Settings(), {"test_redo": REDO}, refresh_interval=1.0)
    try:
        exp.start_refresh()
        first = _text(exp)                      # waits for the very first fetch: no false "down" at start
        assert core.sample(first, "oracle_up", database="db1") == 1.0
        assert _redo(core, first, "db1") == REDO_PER_SECOND * 86_400
        src.open.clear()                        # the next fetch hangs (a slow database)
        _until(lambda: len(src.starts) == 2)
        for _ in range(3):
            t0 = time.monotonic()
            text = _text(exp)
            assert time.monotonic() - t0 < 0.5   # no wait for the running fetch
            assert core.sample(text, "oracle_up", database="db1") == 1.0
            assert _redo(core, text, "db1") == REDO_PER_SECOND * 86_400
        assert core.sample(text, "oracle_snapshot_age_seconds", database="db1") >= 1.0
        src.open.set()
        _until(lambda: REDO_PER_SECOND * (86_400 + 15) == _redo(core, _text(exp), "db1"))
    finally:
        src.open.set()
        exp.close()


def test_a_fetch_that_never_ends_turns_the_database_down_once(core):
    """A frozen snapshot must not keep a database up: after two intervals plus two fetch budgets
    without a fetch that ended, oracle_up 0 (reason timeout), counted as one failed fetch; when
    the hung fetch ends at last, its result is served, not counted as failed again."""
    src = GatedSource(core, "db1")
    ok = GatedSource(core, "ok")
    interval, budget = 0.4, 0.3
    exp = OracleExporter([Target("db1", src, timeout=budget), Target("ok", ok, timeout=budget)], Settings(),
                         {"test_redo": REDO}, refresh_interval=interval)
    try:
        exp.start_refresh()
        assert core.sample(_text(exp), "oracle_up", database="db1") == 1.0
        src.open.clear()
        _until(lambda: len(src.starts) >= 2)
        ended = exp.targets["db1"].last.ended
        limit = 2 * (interval + budget) + FETCH_GRACE        # a slow database fetched back to back stays within
        assert exp._stale_limit(exp.targets["db1"]) == limit
        time.sleep(max(0.0, ended + limit - 0.3 - time.monotonic()))
        assert core.sample(_text(exp), "oracle_up", database="db1") == 1.0      # not before the limit
        time.sleep(max(0.0, ended + limit + 0.2 - time.monotonic()))
        for _ in range(3):
            text = _text(exp)
            assert core.sample(text, "oracle_up", database="db1") == 0.0
            assert core.sample(text, "oracle_last_error_info", database="db1", reason="timeout") == 1.0
            assert core.sample(text, "oracle_scrape_errors_total", database="db1", collector="fetch") == 1.0
            assert core.sample(text, "oracle_up", database="ok") == 1.0       # the others keep refreshing
        assert len(src.starts) == 2             # the hung fetch is never doubled
        src.open.set()
        _until(lambda: core.sample(_text(exp), "oracle_up", database="db1") == 1.0)
        text = _text(exp)
        assert core.sample(text, "oracle_scrape_errors_total", database="db1", collector="fetch") == 1.0
    finally:
        src.open.set()
        exp.close()


def test_a_database_slower_than_the_interval_is_never_fetched_twice_at_once(core):
    src = GatedSource(core, "slow", delay=0.7)
    exp = OracleExporter([Target("slow", src, timeout=5.0)], Settings(), {"test_redo": REDO}, refresh_interval=0.2)
    try:
        exp.start_refresh()
        time.sleep(2.0)
    finally:
        exp.close()
    assert src.most_at_once == 1
    assert 2 <= len(src.starts) <= 4            # back to back: 2.0 s / 0.7 s, not 2.0 s / 0.2 s


def test_fetches_are_spread_over_the_interval_not_all_at_once(core):
    sources = [GatedSource(core, f"db{i:02d}") for i in range(10)]
    exp = OracleExporter([Target(s.name, s, timeout=5.0) for s in sources], Settings(), {"test_redo": REDO},
                         refresh_interval=1.0)
    try:
        exp.start_refresh()
        _until(lambda: all(len(s.starts) >= 2 for s in sources), 6.0)
    finally:
        exp.close()
    firsts = [s.starts[0] for s in sources]
    assert firsts == sorted(firsts)                             # in configured order, one every 0.1 s:
    assert firsts[-1] - firsts[0] >= 0.7                        # not all at once (a late scheduler thread
    assert max(sum(1 for t in firsts if a <= t < a + 0.15) for a in firsts) <= 4   # on a busy machine bunches a few)
    for s in sources:                                           # each database once per interval
        assert s.starts[1] - s.starts[0] == pytest.approx(1.0, abs=0.35)


def test_more_scrapers_add_no_fetch_and_no_render(core):
    """An HA pair, or four Prometheus servers, scraping every 50 ms: the database is still fetched
    once per interval and rendered once per fetch."""
    src = GatedSource(core, "db1")
    exp = OracleExporter([Target("db1", src, timeout=5.0)], Settings(), {"test_redo": REDO}, refresh_interval=0.5)
    stop = threading.Event()
    scrapes: list[int] = []

    def scraper():
        while not stop.is_set():
            _text(exp)
            scrapes.append(1)
            time.sleep(0.05)

    try:
        exp.start_refresh()
        threads = [threading.Thread(target=scraper) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(1.6)
        stop.set()
        for t in threads:
            t.join(5)
        fetches, renders = len(src.starts), exp.targets["db1"].renders
    finally:
        exp.close()
    assert len(scrapes) >= 40
    assert 3 <= fetches <= 5                    # 1.6 s / 0.5 s, whatever the number of scrapes
    assert renders <= fetches


def test_scrapes_rarer_than_fetches_still_get_the_newest_fetch(core):
    """A scraper slower than the refresh (a 60 s federation scrape of a 15 s refresh): each fetch
    is still rendered after it is taken, so a scrape serves the newest, not the one rendered at
    the previous scrape."""
    src = GatedSource(core, "db1")
    exp = OracleExporter([Target("db1", src, timeout=5.0)], Settings(), {"test_redo": REDO}, refresh_interval=0.2)
    try:
        exp.start_refresh()
        _text(exp)
        time.sleep(1.0)                         # about 5 fetches, no scrape
        text = _text(exp)
        n = len(src.starts)
        assert core.sample(text, "oracle_snapshot_age_seconds", database="db1") < 0.45
        assert _redo(core, text, "db1") >= REDO_PER_SECOND * (86_400 + 15 * (n - 2))
        assert exp.targets["db1"].renders >= n - 1
    finally:
        exp.close()


def test_close_stops_the_refresh(core):
    src = GatedSource(core, "db1")
    exp = OracleExporter([Target("db1", src)], Settings(), {"test_redo": REDO}, refresh_interval=0.2)
    exp.start_refresh()
    _until(lambda: len(src.starts) >= 2)
    exp.close()
    time.sleep(0.3)
    seen = len(src.starts)
    time.sleep(0.6)
    assert len(src.starts) == seen


def test_without_refresh_interval_a_scrape_still_fetches(core):
    """The default (0) keeps fetching on scrape: start_refresh starts nothing."""
    src = GatedSource(core, "db1")
    exp = OracleExporter([Target("db1", src)], Settings(), {"test_redo": REDO})
    try:
        exp.start_refresh()
        time.sleep(0.3)
        assert src.starts == []
        assert _redo(core, _text(exp), "db1") == REDO_PER_SECOND * 86_400
        assert _redo(core, _text(exp), "db1") == REDO_PER_SECOND * (86_400 + 15)
    finally:
        exp.close()


def _config(tmp_path, line: str):
    path = tmp_path / "oracle-exporter.yml"
    path.write_text(f"{line}\ndatabases:\n  - name: db1\n    dsn: localhost:1521/ORCL\n    user: u\n"
                    "    password_env: BG_TEST_PASSWORD\n")
    return str(path)


def test_refresh_interval_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("BG_TEST_PASSWORD", "x")
    assert load_config(_config(tmp_path, "timeout_seconds: 10")).refresh_interval_seconds == 0.0
    assert load_config(_config(tmp_path, "refresh_interval_seconds: 15")).refresh_interval_seconds == 15.0
    assert load_config(_config(tmp_path, "refresh_interval_seconds: 600")).refresh_interval_seconds == 600.0
    for bad, said in (("0.5", "0 (fetch on scrape) or 1 to 600 seconds"), ("-1", "refresh_interval_seconds"),
                      ("soon", "refresh_interval_seconds"),
                      ("15000", "is 15000: 0 (fetch on scrape) or 1 to 600 seconds")):   # milliseconds meant
        with pytest.raises(ConfigError) as err:
            load_config(_config(tmp_path, f"refresh_interval_seconds: {bad}"))
        assert said in str(err.value) and "\n" not in str(err.value).strip()


def test_settings_slower_than_the_alert_pack_can_judge_are_named_at_start(tmp_path, monkeypatch):
    """Review alerts #4: refresh_interval_seconds 600 was accepted silently and R2/R3 never fired;
    the exporter now names each such setting (a warning: the value stays allowed), and says nothing
    for the ordinary ones nor for a slow view's own longer interval."""
    from exporters.oracle_exporter.intervals import freshness_warnings
    monkeypatch.setenv("BG_TEST_PASSWORD", "x")

    def said(lines):
        cfg = load_config(_config(tmp_path, lines))
        return freshness_warnings(cfg.refresh_interval_seconds, None, cfg.settings)

    assert said("refresh_interval_seconds: 60") == []
    assert said("refresh_interval_seconds: 120\ncollector_intervals: {tablespaces: 600, wait_events: 60}") == []
    lines = said("refresh_interval_seconds: 600\ncollector_intervals: {wait_events: 300, tablespaces: 900}")
    assert [line.split(" is above")[0] for line in lines] == [
        "refresh_interval_seconds 600", "collector_intervals.wait_events 300"]
    assert all("alerts/README.md" in line for line in lines)


def test_the_exporter_logs_the_freshness_warning_at_start(tmp_path, monkeypatch):
    """The real command line: --once with a replay and a config whose refresh is 600 s."""
    import subprocess
    import sys
    from pathlib import Path
    monkeypatch.setenv("BG_TEST_PASSWORD", "x")
    rec = tmp_path / "r.jsonl"
    rec.write_text('{"time": "2026-11-29T09:00:00Z", "database": "db1", "views": {"GV$SYSSTAT": '
                   '[{"INST_ID": 1, "NAME": "redo size", "VALUE": 1}]}}\n')
    res = subprocess.run([sys.executable, "-m", "exporters.oracle_exporter", "--config.file",
                          _config(tmp_path, "refresh_interval_seconds: 600"), "--replay", str(rec), "--once"],
                         capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert res.returncode == 0, res.stderr
    assert "refresh_interval_seconds 600 is above 120" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.slow
def test_exporter_process_refreshes_between_scrapes(core, tmp_path, exporter_process, monkeypatch):
    """The real exporter process with refresh_interval_seconds 1 replaying a recording in a loop:
    two scrapes 2.5 s apart see counters two or more fetches on, and no scrape waits."""
    rec = core.write_recording(tmp_path / "rec.jsonl", [core.make_snapshot("db1", 15 * i) for i in range(40)])
    cfg = tmp_path / "oracle-exporter.yml"
    cfg.write_text("refresh_interval_seconds: 1\ndatabases:\n  - name: db1\n    dsn: localhost:1521/X\n"
                   "    user: u\n    password_env: BG_UNUSED\n")
    monkeypatch.setenv("BG_UNUSED", "x")
    proc = exporter_process("--replay", str(rec), "--replay-loop", "--config.file", str(cfg))

    def redo() -> float:
        t0 = time.monotonic()
        with urllib.request.urlopen(proc.url + "/metrics", timeout=10) as resp:
            text = resp.read().decode()
        assert time.monotonic() - t0 < 1.0
        return core.sample(text, "oracle_redo_size_bytes_total", database="db1", inst_id="1")

    first = redo()
    time.sleep(2.5)
    second = redo()
    assert second - first >= 2 * 15 * REDO_PER_SECOND, (first, second)
    assert "background refresh: every database fetched every 1 s" in proc.stderr()


def _slow_collect(snapshot, settings):
    time.sleep(0.03)            # a render that costs 30 ms (the turn is held meanwhile)
    yield from redo_collect(snapshot, settings)


SLOW = SimpleNamespace(NAME="test_slow", VIEWS=("GV$SYSSTAT",), collect=_slow_collect)


def test_when_renders_fall_behind_a_scrape_keeps_its_time_limit_and_fetches_wait_for_their_render(core):
    """30 databases at 30 ms of render each need 0.9 s a lap; the interval is 0.3 s. The
    refresher must not pile up fetches whose renders queue forever, and a scrape with a 1 s limit
    answers within about it (old data, its age said), never minutes later."""
    sources = [GatedSource(core, f"db{i:02d}") for i in range(30)]
    exp = OracleExporter([Target(s.name, s, timeout=5.0) for s in sources], Settings(), {"test_slow": SLOW},
                         refresh_interval=0.3)
    try:
        exp.start_refresh()
        _text(exp)
        for _ in range(4):
            t0 = time.monotonic()
            text = _text(exp, timeout=1.0)
            assert time.monotonic() - t0 < 1.6
            assert {core.sample(text, "oracle_up", database=s.name) for s in sources} == {1.0}
            time.sleep(0.3)
        for s in sources:      # a database is fetched again only once its last fetch is rendered
            t = exp.targets[s.name]
            assert len(s.starts) <= t.renders + 2, (s.name, len(s.starts), t.renders)
    finally:
        exp.close()


def test_a_render_cut_short_by_the_time_limit_is_made_by_the_background(core):
    """The first scrape after a start with a tiny time limit leaves most databases' collectors
    out of time; the background renders them at their next fetch, so later scrapes are whole
    and their collectors do not keep failing."""
    sources = [GatedSource(core, f"db{i:02d}") for i in range(20)]
    exp = OracleExporter([Target(s.name, s, timeout=5.0) for s in sources], Settings(), {"test_slow": SLOW},
                         refresh_interval=0.5)
    try:
        exp.start_refresh()
        _until(lambda: all(exp.targets[s.name].last is not None for s in sources))
        cut = _text(exp, timeout=0.05)
        assert 0.0 in {core.sample(cut, "oracle_collector_success", database=s.name, collector="test_slow")
                       for s in sources}
        _until(lambda: all(exp.targets[s.name].rendered is not None for s in sources), 5.0)
        errors = core.sample(_text(exp), "oracle_scrape_errors_total", database="db19", collector="test_slow")
        for _ in range(3):
            time.sleep(0.5)
            t0 = time.monotonic()
            text = _text(exp, timeout=2.0)
            assert time.monotonic() - t0 < 0.5
            assert {core.sample(text, "oracle_collector_success", database=s.name, collector="test_slow")
                    for s in sources} == {1.0}
        assert core.sample(text, "oracle_scrape_errors_total", database="db19", collector="test_slow") == errors
    finally:
        exp.close()


def test_a_database_slower_than_the_interval_but_within_its_budget_is_never_down(core):
    """Interval 0.3 s, fetch 0.5 s, budget 1 s: fetched back to back (not every third slot),
    always up, no failed fetch."""
    src = GatedSource(core, "slow", delay=0.5)
    exp = OracleExporter([Target("slow", src, timeout=1.0)], Settings(), {"test_redo": REDO}, refresh_interval=0.3)
    try:
        exp.start_refresh()
        _text(exp)
        for _ in range(12):
            text = _text(exp)
            assert core.sample(text, "oracle_up", database="slow") == 1.0
            assert core.sample(text, "oracle_scrape_errors_total", database="slow", collector="fetch") == 0.0
            time.sleep(0.25)
        gaps = [b - a for a, b in zip(src.starts, src.starts[1:])]
        assert max(gaps) < 0.75, gaps          # back to back: ~0.5 s apart, not 0.6-0.9 s (the next free slot)
        # its scrape duration is its own fetch and render, not the scrape's few ms
        assert core.sample(text, "oracle_scrape_duration_seconds", database="slow") >= 0.5
    finally:
        exp.close()


def test_a_first_fetch_that_never_ends_holds_up_one_scrape_not_every_scrape(core):
    src = GatedSource(core, "db1")
    src.open.clear()
    ok = GatedSource(core, "ok")
    exp = OracleExporter([Target("db1", src, timeout=0.3), Target("ok", ok, timeout=0.3)], Settings(),
                         {"test_redo": REDO}, refresh_interval=0.5)
    try:
        exp.start_refresh()
        _until(lambda: src.starts and exp.targets["ok"].last is not None)
        time.sleep(0.6)                          # the first fetch of db1 is past its budget
        for _ in range(4):
            t0 = time.monotonic()
            text = _text(exp)
            assert time.monotonic() - t0 < 0.2
            assert core.sample(text, "oracle_up", database="db1") == 0.0
            assert core.sample(text, "oracle_last_error_info", database="db1", reason="timeout") == 1.0
            assert core.sample(text, "oracle_scrape_errors_total", database="db1", collector="fetch") == 1.0
            assert core.sample(text, "oracle_up", database="ok") == 1.0
        assert exp.close(grace=0.2) == 1         # the hung fetch is reported to the shutdown
    finally:
        src.open.set()
        exp.close()
