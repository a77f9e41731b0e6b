"""What a live fetch costs the database (issue 22 point 7, issue 26 point 2): no statement parsed
again after the first fetch of a session, about one round trip per statement, and the Idle wait
class left out in SQL (not fetched to be dropped in Python). Counted through
bench.oracle_roundtrips.DriverSession, which counts round trips and parses as python-oracledb's
thin driver makes them (its model is checked against the driver's documented table first)."""
from __future__ import annotations

import pytest

from bench.oracle_roundtrips import DriverSession, all_collectors, fetch_twice, recording, round_trips
from oracle_exporter.config import Settings
from oracle_exporter.queries import build_plan, build_queries
from oracle_exporter.snapshot import Snapshot
from oracle_sim import collect, samples
from test_sql_catalog import problems


@pytest.mark.parametrize("rows,prefetch,arraysize,trips", [
    (1, 2, 100, 1), (100, 2, 100, 2), (1000, 2, 100, 11), (10000, 2, 100, 101), (10000, 2, 1000, 11),
    (10000, 1000, 1000, 11), (20, 20, 20, 2), (20, 21, 20, 1)])
def test_the_round_trip_model_is_python_oracledbs_table(rows, prefetch, arraysize, trips):
    """python-oracledb's user guide, "Tuning Fetch Performance": round trips per rows fetched."""
    assert round_trips(rows, prefetch, arraysize) == trips


def test_more_statements_than_the_default_cache_holds_parse_every_time():
    """The failure: an LRU cache of 20 cycled through by 21 statements misses on every execute."""
    session = DriverSession({})
    assert session.stmtcachesize == 20
    sqls = [f"SELECT INST_ID FROM GV$V{i}" for i in range(21)]
    for _ in range(3):
        for sql in sqls:
            session.cursor().execute(sql, {})
    assert session.counts.parses == 63


@pytest.fixture(scope="module")
def rac():
    return recording("demo-rac-outage.jsonl", "RACDB")


@pytest.mark.parametrize("settings", [Settings, all_collectors], ids=["default", "every-collector"])
def test_second_fetch_parses_nothing_and_costs_one_round_trip_per_statement(rac, settings):
    first, second, session, src = fetch_twice(rac.views, settings(), ("1", "CDB$ROOT"))
    assert second.parses == 0
    assert second.round_trips <= second.statements
    assert first.round_trips <= first.statements           # sized for the first fetch too
    assert first.parses == first.statements                 # each statement parsed once, at its first run
    assert session.stmtcachesize >= first.statements
    assert session.stmtcachesize == src.plan.statements() + 2 + 4
    # each statement asks for a little more than it returned last (prefetchrows = arraysize + 1)
    for sql, (prefetch, arraysize, n) in session.sizes.items():
        assert prefetch == arraysize + 1 and n < prefetch, sql


def test_a_statement_that_returns_more_rows_than_last_time_adapts_at_the_next_fetch(rac):
    """GV$SESSION during an incident: 30 active sessions, then 3,000. The fetch that sees them
    costs a few round trips more; the next one fetches them in one again."""
    views = {k: list(v) for k, v in rac.views.items()}
    session = DriverSession(views, ("1", "CDB$ROOT"))
    from bench.oracle_roundtrips import open_source
    src, clock = open_source(session, Settings())
    src.fetch()
    template = views["GV$SESSION"][0]
    views["GV$SESSION"] = [dict(template, SID=n) for n in range(3000)]
    before = session.counts.round_trips
    clock.now += 15
    src.fetch()
    spike = session.counts.round_trips - before
    before = session.counts.round_trips
    statements = session.counts.statements
    clock.now += 15
    src.fetch()
    assert session.counts.round_trips - before == session.counts.statements - statements
    assert spike > session.counts.statements - statements
    src.close()


def test_idle_wait_class_is_left_out_in_sql_unless_asked_for():
    default = build_queries(Settings())["GV$SYSTEM_EVENT"]
    assert "WHERE WAIT_CLASS <> 'Idle' OR EVENT IN (" in default.sql
    assert sorted(default.binds.values()) == sorted(Settings().histogram_events)  # an Idle histogram keeps its _sum
    assert "Idle" not in build_queries(Settings(idle_wait_events=True))["GV$SYSTEM_EVENT"].sql
    assert build_queries(Settings(histogram_events=[]))["GV$SYSTEM_EVENT"].sql.endswith(
        "FROM GV$SYSTEM_EVENT WHERE WAIT_CLASS <> 'Idle'")
    for settings in (Settings(), Settings(idle_wait_events=True), all_collectors()):
        for view, query in build_queries(settings).items():
            assert problems(query.sql, view) == [], query.sql


def test_the_filter_applies_only_when_every_collector_reading_the_view_asks_for_it():
    from oracle_exporter.collectors import COLLECTORS
    wanting_all = type("Reader", (), {"VIEWS": ("GV$SYSTEM_EVENT",)})
    plan = build_plan({"wait_events": COLLECTORS["wait_events"], "reader": wanting_all}, Settings())
    assert "GV$SYSTEM_EVENT" not in plan.filters


def test_fewer_rows_fetched_and_the_same_metrics(rac):
    """The Idle third of GV$SYSTEM_EVENT is not fetched; the metrics are those of the recording
    (made before, with its Idle rows, which the collector still drops when replayed)."""
    _, _, session, _ = fetch_twice(rac.views, Settings(), ("1", "CDB$ROOT"))
    idle = sum(1 for r in rac.views["GV$SYSTEM_EVENT"] if r["WAIT_CLASS"] == "Idle")
    assert idle > 100
    (fetched,) = [n for sql, (_, _, n) in session.sizes.items() if "FROM GV$SYSTEM_EVENT" in sql]
    assert fetched == len(rac.views["GV$SYSTEM_EVENT"]) - idle
    live = Snapshot(rac.database, rac.time, {**rac.views, "GV$SYSTEM_EVENT": [
        r for r in rac.views["GV$SYSTEM_EVENT"] if r["WAIT_CLASS"] != "Idle"]})
    assert samples(collect(live, Settings(), ["wait_events"])) == samples(collect(rac, Settings(), ["wait_events"]))
    with_idle = samples(collect(rac, Settings(idle_wait_events=True), ["wait_events"]))
    assert any(dict(labels).get("wait_class") == "Idle" for _, labels in with_idle)


def test_a_collector_filter_joins_the_views_own_conditions_in_parentheses():
    from oracle_exporter import views
    plan = build_plan({}, Settings())
    plan = type(plan)(plan.views, {"GV$SYSSTAT": ("redo size",)}, {"GV$SYSSTAT": ("VALUE > 0 OR NAME = :x", {"x": "y"})})
    query = plan.statement(views.SYSSTAT)
    assert query.sql.endswith("WHERE (VALUE > 0 OR NAME = :x) AND NAME IN (:n0)")
    assert query.binds == {"x": "y", "n0": "redo size"}
    assert problems(query.sql, "GV$SYSSTAT") == []
