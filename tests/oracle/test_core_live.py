"""Live source logic without a database: a fake *connection/cursor* object stands in
for the session (the driver itself is not mocked: the connect-refused test uses the
real python-oracledb thin driver against a closed local port)."""
from __future__ import annotations

import datetime as dt
import re
import time
from decimal import Decimal

import oracledb
import pytest

from oracle_exporter.config import DatabaseConfig, Settings
from oracle_exporter.queries import build_queries
from oracle_exporter.sources import is_failed
from oracle_exporter.sources.live import CLOCK_SQL, MODULE, Backoff, LiveSource, error_text
from oracle_sim import FakeClock, FakeConnection


def make(conns, clock=None, **kw):
    """LiveSource whose connect() hands out the given fake connections (or raises)."""
    attempts = []

    def connect(db, timeout):
        attempts.append(timeout)
        item = conns.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    db = DatabaseConfig("prod1", dsn="h:1521/S", user="mon", password="pw", timeout_seconds=4)
    src = LiveSource(db, Settings(), connect=connect, clock=clock or FakeClock(), connect_timeout=2.5, **kw)
    return src, attempts


def test_one_session_reused_and_tagged_for_gv_session():
    conn = FakeConnection()
    src, attempts = make([conn])
    for _ in range(3):
        snap = src.fetch()
        assert not is_failed(snap) and snap.errors == {}
    assert attempts == [2.5]  # one logon for three fetches, with the connect timeout
    assert (conn.module, conn.action, conn.client_identifier) == (MODULE, "scrape", "oracle-exporter:prod1")
    # one budget per fetch (timeout_seconds 4): every statement gets the time left, in ms
    # (the first call timeout is the container query's, at connect)
    assert len(conn.timeouts) == len(conn.executed)
    per_fetch = 1 + len(build_queries(Settings()))       # the host clock (DUAL), then every view
    first = conn.timeouts[1:1 + per_fetch]
    assert 3_900 <= first[0] <= 4_000 and first == sorted(first, reverse=True)
    queries = build_queries(Settings())
    # V$DATABASE first: its OPEN_MODE says whether the data dictionary views can be read (issue 22)
    queries = {"V$DATABASE": queries["V$DATABASE"], **{k: q for k, q in queries.items() if k != "V$DATABASE"}}
    # the container once per session, then every statement; views with a minimum interval
    # (oracle_exporter.intervals: tablespaces, asm ...) only once within it (the clock stands still)
    again = [q.sql for view, q in queries.items() if src.intervals.get(view, 0.0) == 0]
    assert conn.executed[0].startswith("SELECT SYS_CONTEXT('USERENV', 'CON_ID')")
    assert conn.executed[1:] == [CLOCK_SQL, *(q.sql for q in queries.values())] + [CLOCK_SQL, *again] * 2
    assert len(again) < len(queries)
    assert set(snap.views) == set(queries) | {"DUAL"}


def test_a_missing_view_fallback_is_retried_so_a_grant_added_later_is_picked_up(caplog):
    """ORA-00942 on GV$EVENT_HISTOGRAM_MICRO is what 11.2 says, and also what a 19c says to a user
    without the grant: the milliseconds view is read, the log names the grant, and the micro view
    is tried again every FALLBACK_RETRY_SECONDS of the same session."""
    import logging
    from oracle_exporter.sources.live import FALLBACK_RETRY_SECONDS
    clock = FakeClock()
    conn = FakeConnection(fail={"GV$EVENT_HISTOGRAM_MICRO": "ORA-00942: table or view does not exist"},
                          rows={"GV$EVENT_HISTOGRAM": [(1, "log file sync", 8, 120)],
                                "GV$EVENT_HISTOGRAM_MICRO": [(1, "log file sync", 4096, 120)]})
    src, _ = make([conn], clock=clock)
    with caplog.at_level(logging.WARNING):
        snap = src.fetch()
    assert "GV$EVENT_HISTOGRAM" in snap.views and "GV$EVENT_HISTOGRAM_MICRO" not in snap.views
    assert "GRANT SELECT ON SYS.GV_$EVENT_HISTOGRAM_MICRO TO <monitoring user>" in caplog.text
    clock.now += FALLBACK_RETRY_SECONDS - 1
    conn.executed.clear()
    assert "GV$EVENT_HISTOGRAM_MICRO" not in src.fetch().views          # not yet
    assert not any("FROM GV$EVENT_HISTOGRAM_MICRO" in sql for sql in conn.executed)
    del conn.fail["GV$EVENT_HISTOGRAM_MICRO"]                            # the DBA adds the grant
    clock.now += 2
    snap = src.fetch()
    assert snap.views["GV$EVENT_HISTOGRAM_MICRO"][0]["WAIT_TIME_MICRO"] == 4096
    assert "GV$EVENT_HISTOGRAM" not in snap.views and snap.errors == {}
    assert src.variant("GV$EVENT_HISTOGRAM_MICRO").name == "GV$EVENT_HISTOGRAM_MICRO"


def test_a_fallback_on_a_missing_column_is_kept_for_the_session():
    """ORA-00904 (a column this release lacks) cannot be a grant: no retry."""
    clock = FakeClock()
    conn = FakeConnection(fail={"GV$LOG": 'ORA-00904: "BLOCKSIZE": invalid identifier'})
    src, _ = make([conn], clock=clock)
    src.fetch()
    clock.now += 10_000
    conn.executed.clear()
    src.fetch()
    assert not any("BLOCKSIZE" in sql for sql in conn.executed)
    assert any("FROM GV$LOG" in sql for sql in conn.executed)


def test_failing_view_is_isolated_and_micro_histogram_falls_back_once():
    conn = FakeConnection(fail={"GV$LATCH": "ORA-00942: table or view does not exist",
                                "GV$PROCESS": "ORA-00904: \"PGA_MAX_MEM\": invalid identifier",
                                "GV$EVENT_HISTOGRAM_MICRO": "ORA-00942: table or view does not exist"},
                          rows={"GV$EVENT_HISTOGRAM": [(1, "log file sync", 8, 120)]})
    src, _ = make([conn])
    snap = src.fetch()
    assert not is_failed(snap)
    assert snap.errors == {"GV$LATCH": "ORA-00942: table or view does not exist",
                           "GV$PROCESS": "ORA-00904: \"PGA_MAX_MEM\": invalid identifier"}
    assert "GV$EVENT_HISTOGRAM_MICRO" not in snap.views
    assert snap.views["GV$EVENT_HISTOGRAM"] == [
        {"INST_ID": 1, "EVENT": "log file sync", "WAIT_TIME_MILLI": 8, "WAIT_COUNT": 120}]
    assert "GV$SYSSTAT" in snap.views and "GV$LOG" in snap.views
    assert src.variant("GV$EVENT_HISTOGRAM_MICRO").name == "GV$EVENT_HISTOGRAM"
    conn.executed.clear()
    src.fetch()  # remembered: the micro view is not tried again
    assert not any("GV$EVENT_HISTOGRAM_MICRO" in sql for sql in conn.executed)
    assert sum("FROM GV$EVENT_HISTOGRAM WHERE" in sql for sql in conn.executed) == 1
    assert list(conn.binds["GV$EVENT_HISTOGRAM"].values()) == Settings().histogram_events


def test_values_normalised_like_a_recording():
    conn = FakeConnection(rows={"GV$INSTANCE": [(1, 1, "PROD1", "dbhost1", "19.0.0.0.0", "19.21.0.0.0",
                                                 dt.datetime(2024, 3, 1, 6, 30, 5), "OPEN", 1)],
                                "GV$SYSSTAT": [(1, "redo size", Decimal("123456789012")),
                                               (1, "redo write time", Decimal("12.5")),
                                               (1, "user commits", None)]})
    src, _ = make([conn])
    snap = src.fetch()
    assert snap.views["GV$INSTANCE"] == [{"INST_ID": 1, "INSTANCE_NUMBER": 1, "INSTANCE_NAME": "PROD1",
                                          "HOST_NAME": "dbhost1", "VERSION": "19.0.0.0.0",
                                          "VERSION_FULL": "19.21.0.0.0", "STARTUP_TIME": "2024-03-01T06:30:05",
                                          "STATUS": "OPEN", "THREAD#": 1}]
    values = [r["VALUE"] for r in snap.views["GV$SYSSTAT"]]
    assert values == [123456789012, 12.5, None] and type(values[0]) is int


def test_backoff_doubles_to_cap_and_resets_after_success():
    clock = FakeClock()
    refused = oracledb.OperationalError("DPY-6005: cannot connect to database (CONNECTION_ID=abc).\n"
                                        "[Errno 111] Connection refused")
    good = FakeConnection()
    src, attempts = make([refused] * 8 + [good], clock=clock, backoff_initial=1.0, backoff_cap=60.0)
    snap = src.fetch()
    assert snap.errors == {"*": "connect failed: DPY-6005: cannot connect to database.; [Errno 111] Connection refused"}
    delays = [src.backoff.retry_at - clock.now]
    for _ in range(7):
        before = len(attempts)
        clock.now = src.backoff.retry_at - 0.01
        fast = src.fetch()  # still in backoff: failed snapshot at once, no connect attempt
        assert is_failed(fast) and "reconnect backoff, next attempt in 0.0 s" in fast.errors["*"]
        assert len(attempts) == before
        clock.now = src.backoff.retry_at
        assert is_failed(src.fetch()) and len(attempts) == before + 1
        delays.append(src.backoff.retry_at - clock.now)
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60]
    clock.now = src.backoff.retry_at
    assert not is_failed(src.fetch())
    assert src.backoff.failures == 0 and src.backoff.ready()


def test_lost_session_is_dropped_and_reopened_after_backoff():
    clock = FakeClock()
    first, second = FakeConnection(), FakeConnection()
    src, attempts = make([first, second], clock=clock)
    assert not is_failed(src.fetch())
    first.dead = True
    snap = src.fetch()
    assert snap.errors == {"*": "session lost while reading DUAL: "          # the host clock comes first
                                "DPY-4011: the database or network closed the connection"}
    assert first.closed
    assert is_failed(src.fetch()) and len(attempts) == 1  # backoff: no reconnect yet
    clock.now += 1.0
    snap = src.fetch()
    assert not is_failed(snap) and len(attempts) == 2
    assert second.client_identifier == "oracle-exporter:prod1"


def test_backoff_class_sequence():
    clock = FakeClock()
    b = Backoff(0.5, 5.0, clock)
    assert [b.failed() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert not b.ready() and b.remaining() == 5.0
    clock.now += 5.0
    assert b.ready()


def test_error_text_drops_connection_id_and_help():
    exc = oracledb.DatabaseError("DPY-6005: cannot connect to database (CONNECTION_ID=x+y==).\n"
                                 "DPY-4011: the database or network closed the connection\n"
                                 "Help: https://python-oracledb.readthedocs.io/x")
    assert error_text(exc) == ("DPY-6005: cannot connect to database.; "
                               "DPY-4011: the database or network closed the connection")


def test_real_driver_connection_refused_gives_failed_snapshot_fast(core):
    port = core.free_port()  # nothing listens there
    db = DatabaseConfig("down", dsn=f"127.0.0.1:{port}/ORCL", user="mon", password="pw")
    src = LiveSource(db, Settings(), connect_timeout=2.0)
    t0 = time.monotonic()
    snap = src.fetch()
    assert time.monotonic() - t0 < 2.0
    assert snap.views == {}
    assert snap.errors["*"].startswith("connect failed: DPY-6005: cannot connect to database")
    assert "Connection refused" in snap.errors["*"]
    again = src.fetch()  # in backoff: answered without touching the network
    assert "reconnect backoff" in again.errors["*"]
    src.close()


@pytest.mark.slow
def test_fetch_budget_is_shared_by_the_statements_and_a_healthy_session_survives_it():
    """timeout_seconds is the budget of the whole fetch, not of each statement: statements of
    0.4 s with a 1 s budget stop at the third; the session is kept (no new logon, no backoff)."""
    conn = FakeConnection(delay={"GV$SYSTEM_EVENT": 0.4, "GV$EVENT_HISTOGRAM_MICRO": 0.4, "GV$SYSSTAT": 0.4})
    src, attempts = make([conn])
    src.budget = 1.0
    t0 = time.monotonic()
    snap = src.fetch()
    assert time.monotonic() - t0 < 1.2
    assert snap.views == {}
    assert snap.errors["*"].startswith("timeout: reading GV$SYSSTAT exceeded the fetch budget of 1 s (DPY-4024")
    assert 150 <= conn.timeouts[5] <= 200                     # GV$SYSSTAT got what was left (after the
                                                              # container query, the clock, V$DATABASE
                                                              # (its open mode, issue 22) and two views)
    assert not conn.closed and src.backoff.failures == 0
    conn.delay.clear()
    assert not is_failed(src.fetch()) and len(attempts) == 1  # same session, at once


def test_call_timeout_on_a_broken_session_drops_it_and_backs_off():
    clock = FakeClock()
    conn = FakeConnection(fail={"GV$SYSSTAT": "DPY-4024: call timeout of 4000 ms exceeded"})
    conn.is_healthy = lambda: False
    src, attempts = make([conn, FakeConnection()], clock=clock)
    snap = src.fetch()
    assert snap.views == {} and snap.errors["*"].startswith("timeout: reading GV$SYSSTAT")
    # the views after GV$SYSSTAT were not tried: one timeout, not one per view
    assert conn.executed[-1].startswith("SELECT INST_ID, NAME, VALUE, CON_ID FROM GV$SYSSTAT")
    assert conn.closed and len(attempts) == 1
    clock.now += 1.0
    assert not is_failed(src.fetch()) and len(attempts) == 2


@pytest.mark.slow
def test_real_driver_hung_listener_costs_one_connect_attempt_however_many_fetches(blackhole_listener):
    """python-oracledb's connect() waits for ever on a listener that accepts and never
    answers; the fetch gives up at its budget, and later fetches wait for the same attempt
    instead of starting another (one thread, one socket per database)."""
    db = DatabaseConfig("hung", dsn=f"127.0.0.1:{blackhole_listener.port}/ORCL", user="mon", password="pw",
                        timeout_seconds=0.5)
    src = LiveSource(db, Settings(), connect_timeout=0.3, backoff_initial=0.01, backoff_cap=0.01)
    t0 = time.monotonic()
    snap = src.fetch()
    elapsed = time.monotonic() - t0
    assert 0.45 <= elapsed < 1.0, elapsed
    assert snap.errors["*"].startswith("connect failed: no answer from the database (the listener accepted "
                                       "the connection but the logon did not complete; attempt in flight since ")
    attempt = src._attempt
    for _ in range(3):
        time.sleep(0.02)
        assert is_failed(src.fetch())
    assert src._attempt is attempt and blackhole_listener.accepted == 1
    src.close()


def test_every_fetch_reads_the_host_clock_with_its_offset():
    """Issue 11.2: the DUAL row (SYSTIMESTAMP as text with its UTC offset: python-oracledb drops
    the zone of a TIMESTAMP WITH TIME ZONE) is in every snapshot, as the contract names it."""
    conn = FakeConnection(rows={"DUAL": [("2025-03-11T15:30:00.123456+05:30",)]})
    src, _ = make([conn])
    snap = src.fetch()
    assert snap.views["DUAL"] == [{"SYSTIMESTAMP": "2025-03-11T15:30:00.123456+05:30"}]
    assert "TO_CHAR(SYSTIMESTAMP, 'YYYY-MM-DD\"T\"HH24:MI:SS.FF6TZH:TZM') AS SYSTIMESTAMP FROM DUAL" in CLOCK_SQL
    conn.fail["DUAL"] = "ORA-00600: internal error"              # a failing clock costs only the conversion
    snap = src.fetch()
    assert not is_failed(snap) and snap.errors == {"DUAL": "ORA-00600: internal error"}


def test_in_a_pdb_the_instance_wide_statistics_are_refused_by_name():
    """Issue 11.1: a monitoring user local to a PDB got the PDB's share of GV$SYSSTAT and
    GV$SYSTEM_EVENT mixed with instance-wide latches, PGA and logs, and an empty GV$SYSMETRIC,
    with every collector reporting success. Now those views are not read and the collectors
    that need them fail naming the reason; the others still export."""
    from oracle_exporter.exporter import OracleExporter, Target
    from oracle_exporter.sources.live import PDB_REFUSED

    conn = FakeConnection(rows={"DUAL": [(3, "SALES")]})     # SYS_CONTEXT('USERENV', 'CON_ID'/'CON_NAME')
    src, _ = make([conn])
    snap = src.fetch()
    assert src.container == (3, "SALES")
    assert not is_failed(snap)
    planned = {v.name for v in src.plan.views} & set(PDB_REFUSED)
    assert {"GV$SYSSTAT", "GV$SYSTEM_EVENT", "GV$SYSMETRIC"} <= planned
    for view in planned:
        assert "connected to the pluggable database SALES (CON_ID 3)" in snap.errors[view]
    assert not any(f" FROM {v}" in sql for sql in conn.executed for v in ("GV$SYSSTAT", "GV$SYSTEM_EVENT"))
    assert "GV$LATCH" in snap.views                        # instance-wide even from a PDB: still read
    exp = OracleExporter([Target("prod1", src)], Settings())
    fams = {f.name: f for f in exp.scrape()}
    ok = {s.labels["collector"]: s.value for s in fams["oracle_collector_success"].samples}
    assert ok["wait_events"] == 0 and ok["host_load"] == 0 and ok["load_profile"] == 0
    assert ok["latches"] == 1
    assert fams["oracle_up"].samples[0].value == 1.0
    exp.close()


def test_every_statement_selects_con_id_and_a_release_before_12_1_is_read_without_it():
    """Contract "Real-database truths": every statement selects CON_ID where the view has it
    (lowest CON_ID wins in rows.clean_rows). A 11.2 database answers ORA-00904 naming CON_ID:
    that view is read without it for the rest of the session, at once, nothing else changes."""
    conn = FakeConnection()
    src, _ = make([conn])
    first = src.fetch()
    assert not is_failed(first)
    dynamic = [sql for sql in conn.executed if " FROM GV$" in sql or " FROM V$" in sql]
    # (GV$PDBS names CON_ID among its own columns: its identity)
    assert dynamic and all(re.search(r"\bCON_ID\b", sql.split(" FROM ")[0]) for sql in dynamic), dynamic
    old = FakeConnection(fail={"GV$SYSSTAT": 'ORA-00904: "CON_ID": invalid identifier'})
    src, _ = make([old])
    real_cursor = old.cursor      # the 11.2 view: fails only while the statement names CON_ID

    def cursor():
        c = real_cursor()
        execute = c.execute

        def run(sql, binds):
            if "FROM GV$SYSSTAT" in sql and "CON_ID" not in sql:
                old.fail.pop("GV$SYSSTAT", None)
            return execute(sql, binds)
        c.execute = run
        return c
    old.cursor = cursor
    snap = src.fetch()
    assert not is_failed(snap) and "GV$SYSSTAT" in snap.views and "GV$SYSSTAT" not in snap.errors
    sysstat = [sql for sql in old.executed if "FROM GV$SYSSTAT" in sql]
    assert len(sysstat) == 2 and ", CON_ID FROM" in sysstat[0] and "CON_ID" not in sysstat[1]
    src.fetch()
    assert "CON_ID" not in [sql for sql in old.executed if "FROM GV$SYSSTAT" in sql][-1]   # for the session
