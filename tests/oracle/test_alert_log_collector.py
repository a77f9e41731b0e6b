"""The alert log collector (V$DIAG_ALERT_EXT, issue 24 point 1) and its read by the live source.

What an on-call engineer fears: an ORA-00600 or ORA-04031 in the alert log that nobody saw; a
message storm (10,000 ORA-01555 lines) that makes the exporter fetch everything; a huge XML alert
log whose view hangs and takes the whole scrape down with it. What must stay quiet: a log with no
ORA- error (no series), rows read again (not counted twice). Rows shaped like the view's
(ORIGINATING_TIMESTAMP as python-oracledb returns it: a datetime without its zone, isoformat)."""
from __future__ import annotations

import time

import pytest
from oracle_sim import FakeClock, FakeConnection, collect, samples

from oracle_exporter.collectors import alert_log
from oracle_exporter.config import DatabaseConfig, Settings
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.sources.live import LiveSource

NOW = "2025-03-11T09:00:00Z"
CLOCK = {"DUAL": [{"SYSTIMESTAMP": "2025-03-11T10:00:00.000000+01:00"}]}

# 19c: a foreground's error is logged as "Errors in file ...trc:" with the ORA- lines after it
ORA600 = ("Errors in file /u01/app/oracle/diag/rdbms/ods/ODS1/trace/ODS1_ora_48211.trc  (incident=120417):\n"
          "ORA-00600: internal error code, arguments: [kdsgrp1], [], [], [], [], [], [], [], [], [], [], []")
ORA1555 = ("ORA-01555 caused by SQL statement below (SQL ID: 7h35uxf5uhmm1, Query Duration=5712 sec, "
           "SCN: 0x00000b2c4f1a2d90):")
ORA16 = "ORA-16198: Timeout incurred on internal channel during remote archival"


def msg(minute, record, text, level=16, con_id=0):
    return {"ORIGINATING_TIMESTAMP": f"2025-03-11T09:{minute:02d}:07.123456", "RECORD_ID": record,
            "MESSAGE_LEVEL": level, "MESSAGE_TEXT": text, "CON_ID": con_id}


def run(rows, db="ODS", settings=None):
    snap = Snapshot(db, NOW, {"V$DIAG_ALERT_EXT": rows, **CLOCK})
    return samples(collect(snap, settings or Settings(), names=["alert_log"]))


@pytest.fixture(autouse=True)
def fresh():
    alert_log.reset()
    yield
    alert_log.reset()


def errors(found):
    return {dict(k[1])["code"] + "/" + dict(k[1])["level"]: v for k, v in found.items()
            if k[0] == "oracle_alert_log_errors_total"}


def test_a_log_without_ora_errors_has_no_error_series():
    found = run([])
    assert errors(found) == {}
    assert found[("oracle_alert_log_reads_truncated_total", ())] == 0


def test_errors_are_counted_by_code_group_and_level_and_the_last_critical_time_is_kept():
    found = run([msg(1, 101, ORA600, level=1), msg(2, 102, ORA1555, level=16), msg(3, 103, ORA16, level=2),
                 msg(4, 104, "ORA-15064: communication failure with ASM instance", level=2),
                 msg(5, 105, "ORA-27037: unable to obtain file status", level=16),
                 msg(6, 106, "ORA-12012: error on auto execute of job 4242", level=16)])
    assert errors(found) == {"ORA-00600/critical": 1, "ORA-01555/normal": 1, "ORA-16xxx/severe": 1,
                             "ORA-15xxx/severe": 1, "ORA-27xxx/normal": 1, "other/normal": 1}
    # 09:01:07.123456 host time, UTC+1: 08:01:07.123456 UTC
    assert found[("oracle_alert_log_last_critical_timestamp_seconds", ())] == pytest.approx(1741680067.123456)


def test_counters_only_grow_and_rows_served_again_are_not_counted_twice():
    first = [msg(1, 101, ORA1555), msg(2, 102, ORA1555)]
    assert errors(run(first)) == {"ORA-01555/normal": 2}
    assert errors(run(first)) == {"ORA-01555/normal": 2}               # cached between reads
    # the next read starts at the previous fetch's clock: it may return the edge row again
    assert errors(run([msg(2, 102, ORA1555), msg(8, 103, ORA1555)])) == {"ORA-01555/normal": 3}
    assert errors(run([])) == {"ORA-01555/normal": 3}                  # nothing new: unchanged, not reset
    assert errors(run([], db="OTHER")) == {}                           # each database its own counts


def test_a_message_storm_is_bounded_and_its_truncation_counted():
    storm = [msg(10 + k // 100, 1000 + k, ORA1555) for k in range(50)]
    found = run(storm, settings=Settings(alert_log_max_rows=50))
    assert errors(found) == {"ORA-01555/normal": 50}
    assert found[("oracle_alert_log_reads_truncated_total", ())] == 1
    found = run(storm, settings=Settings(alert_log_max_rows=50))       # the same read served again
    assert found[("oracle_alert_log_reads_truncated_total", ())] == 1


def test_a_pdb_sees_only_its_own_messages():
    """Connected to PDB SALES (CON_ID 3) the view returns SALES' rows only (12.2+): the counts are
    that PDB's; the statement is the same, Oracle filters."""
    found = run([msg(1, 7, "ORA-01653: unable to extend table APP.ORDERS by 1024 in tablespace SALES_DATA",
                     level=16, con_id=3)], db="SALES")
    assert errors(found) == {"ORA-01653/normal": 1}


def test_the_statement_reads_only_messages_since_a_bind_bounded_by_fetch_first():
    sql = alert_log.ALERT_EXT.statement().sql
    assert sql.startswith("SELECT ORIGINATING_TIMESTAMP, RECORD_ID, MESSAGE_LEVEL, MESSAGE_TEXT, CON_ID "
                          "FROM V$DIAG_ALERT_EXT WHERE ORIGINATING_TIMESTAMP > TO_TIMESTAMP_TZ(:alert_log_since")
    assert sql.endswith("AND MESSAGE_TEXT LIKE '%ORA-%' FETCH FIRST :alert_log_rows ROWS ONLY")


# --- the live source: its own call timeout, read last, since the last read --------------------

def live(conn, **settings):
    db = DatabaseConfig("prod1", dsn="h:1521/S", user="mon", password="pw", timeout_seconds=4)
    s = Settings(collectors={"alert_log": True}, **settings)
    return LiveSource(db, s, connect=lambda d, t: conn, clock=FakeClock(), connect_timeout=2.5)


def test_a_hanging_alert_log_costs_only_its_own_view_and_its_own_timeout():
    conn = FakeConnection(delay={"V$DIAG_ALERT_EXT": 30.0})
    src = live(conn, alert_log_timeout_seconds=0.5)
    t0 = time.monotonic()
    snap = src.fetch()
    took = time.monotonic() - t0
    assert took < 1.5                                                  # 0.5 s, not the 4 s budget
    assert "*" not in snap.errors
    assert snap.errors["V$DIAG_ALERT_EXT"].startswith("call timeout (0.5 s, alert_log_timeout_seconds): DPY-4024")
    assert "GV$SYSSTAT" in snap.views and "GV$SESSION" in snap.views   # every other view was read
    assert conn.executed[-1].startswith("SELECT ORIGINATING_TIMESTAMP")   # read last
    assert conn.timeouts[-2] == 500                                    # its own call timeout ...
    assert conn.timeouts[-1] == conn.timeouts[-3]                      # ... and the session's restored
    assert not conn.closed and src.backoff.failures == 0


def test_the_first_read_goes_back_a_window_then_each_read_starts_at_the_last_clock():
    conn = FakeConnection(rows={"DUAL": [("2025-03-11T10:00:00.000000+01:00",)]})
    src = live(conn, alert_log_first_window_seconds=1800)
    snap = src.fetch()
    assert "V$DIAG_ALERT_EXT" in snap.views
    assert conn.binds["V$DIAG_ALERT_EXT"] == {"alert_log_since": "2025-03-11T09:30:00.000000+01:00",
                                              "alert_log_rows": 1000}
    src.clock.now += 301                                               # past its 300 s interval
    conn.rows["DUAL"] = [("2025-03-11T10:05:01.000000+01:00",)]
    src.fetch()
    assert conn.binds["V$DIAG_ALERT_EXT"]["alert_log_since"] == "2025-03-11T10:00:00.000000+01:00"
    read = sum(s.startswith("SELECT ORIGINATING_TIMESTAMP") for s in conn.executed)
    src.clock.now += 60                                                # within the interval: served again
    src.fetch()
    assert sum(s.startswith("SELECT ORIGINATING_TIMESTAMP") for s in conn.executed) == read == 2


def test_before_12_1_the_missing_view_is_its_own_error_and_the_session_keeps_its_timeout():
    """11.2 has no V$DIAG_ALERT_EXT (X$DBGALERTEXT only): ORA-00942 is that view's error; the
    other views are read and the session's call timeout is restored."""
    conn = FakeConnection(fail={"V$DIAG_ALERT_EXT": "ORA-00942: table or view does not exist"})
    src = live(conn)
    snap = src.fetch()
    assert snap.errors == {"V$DIAG_ALERT_EXT": "ORA-00942: table or view does not exist"}
    assert "GV$SYSSTAT" in snap.views and conn.timeouts[-1] == conn.timeouts[-3]
    assert 3_500 < conn.timeouts[-2] < 4_000     # alert_log_timeout_seconds (10 s) capped by the 4 s budget left


def test_demo_shows_the_ora_01555_that_undo_counts_once():
    """DEMO's alert log has the ORA-01555 GV$UNDOSTAT counts (same interval, SQL_ID of the report);
    the collector counts it once however many snapshots serve it."""
    import datetime as dt
    from types import SimpleNamespace

    from oracle_exporter.demo import signals
    db = SimpleNamespace(name="DEMO", instances=[SimpleNamespace(inst_id=1)])
    zone = dt.timezone(dt.timedelta(hours=1))
    start = dt.datetime(2025, 3, 11, 9, 0, tzinfo=dt.timezone.utc)
    rows = signals.alert_log(db, 0, start, zone)
    assert len(rows) == 1 and "ORA-01555" in rows[0]["MESSAGE_TEXT"] and "7h35uxf5uhmm1" in rows[0]["MESSAGE_TEXT"]
    bad = [r for r in signals.undostat(db, start, start, zone) if r["SSOLDERRCNT"]]
    assert len(bad) == 1 and bad[0]["BEGIN_TIME"] <= rows[0]["ORIGINATING_TIMESTAMP"] < bad[0]["END_TIME"]
    assert signals.alert_log(db, 1, start, zone) == []
    assert errors(run([{**rows[0], "CON_ID": 0}], db="DEMO")) == {"ORA-01555/normal": 1}
    assert errors(run([{**rows[0], "CON_ID": 0}], db="DEMO")) == {"ORA-01555/normal": 1}
