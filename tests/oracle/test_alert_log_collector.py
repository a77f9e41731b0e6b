"""The alert log collector (V$DIAG_ALERT_EXT, issue 24 point 1) and its read by the live source.

What an on-call engineer fears: an ORA-00600 or ORA-04031 in the alert log that nobody saw; a
message storm (10,000 ORA-01555 lines) that makes the exporter fetch everything; a huge XML alert
log whose view hangs and takes the whole scrape down with it. What must stay quiet: a log with no
ORA- error (no series), rows read again (not counted twice). Rows shaped like the view's
(ORIGINATING_TIMESTAMP as the live statement selects it: SYS_EXTRACT_UTC as text, "...Z"; a value
without a zone, as older recordings hold it, is the host's wall clock)."""
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
    """A message of 10:mm:07.123456 on the host's clock (UTC+1): 09:mm UTC, as the statement returns it."""
    return {"ORIGINATING_TIMESTAMP": f"2025-03-11T09:{minute:02d}:07.123456Z", "RECORD_ID": record,
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
    # 09:01:07.123456 UTC
    assert found[("oracle_alert_log_last_critical_timestamp_seconds", ())] == pytest.approx(1741683667.123456)


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


def test_the_statement_reads_only_messages_since_a_bind_oldest_first_bounded_by_fetch_first():
    sql = alert_log.ALERT_EXT.statement().sql
    assert sql.startswith("SELECT ORIGINATING_TIMESTAMP, RECORD_ID, MESSAGE_LEVEL, MESSAGE_TEXT, CON_ID "
                          "FROM V$DIAG_ALERT_EXT WHERE ORIGINATING_TIMESTAMP >= TO_TIMESTAMP_TZ(:alert_log_since")
    assert sql.endswith("AND MESSAGE_TEXT LIKE '%ORA-%' ORDER BY ORIGINATING_TIMESTAMP, RECORD_ID "
                        "FETCH FIRST :alert_log_rows ROWS ONLY")


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
    assert conn.executed[-1].startswith("SELECT TO_CHAR(SYS_EXTRACT_UTC(ORIGINATING_TIMESTAMP)")   # read last
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
    read = sum("FROM V$DIAG_ALERT_EXT" in s for s in conn.executed)
    src.clock.now += 60                                                # within the interval: served again
    src.fetch()
    assert sum("FROM V$DIAG_ALERT_EXT" in s for s in conn.executed) == read == 2


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
    logged = dt.datetime.fromisoformat(rows[0]["ORIGINATING_TIMESTAMP"].replace("Z", "+00:00")).astimezone(zone)
    local = logged.replace(tzinfo=None).isoformat()                     # UTC text; GV$UNDOSTAT: host DATEs
    assert len(bad) == 1 and bad[0]["BEGIN_TIME"] <= local < bad[0]["END_TIME"]
    assert signals.alert_log(db, 1, start, zone) == []
    assert errors(run([{**rows[0], "CON_ID": 0}], db="DEMO")) == {"ORA-01555/normal": 1}
    assert errors(run([{**rows[0], "CON_ID": 0}], db="DEMO")) == {"ORA-01555/normal": 1}


# --- review of issue 24: codes without leading zeros, a storm drops nothing, clocks going back -----

def test_space_errors_written_with_four_digits_are_their_five_digit_codes():
    """The alert log writes "ORA-1652: unable to extend temp segment by 128 in tablespace TEMP" (and
    ORA-1653, ORA-1688 likewise): the same errors as ORA-01652 ...; a longer number is no code of ours."""
    found = run([msg(1, 11, "ORA-1652: unable to extend temp segment by 128 in tablespace                 TEMP"),
                 msg(2, 12, "ORA-1653: unable to extend table APP.ORDERS by 8192 in                 tablespace USERS"),
                 msg(3, 13, "ORA-1688: unable to extend table SYS.WRH$_ACTIVE_SESSION_HISTORY partition "
                            "WRH$_ACTIVE_1234_5678 by 128 in tablespace SYSAUX"),
                 msg(4, 14, "ORA-01652: unable to extend temp segment by 64 in tablespace TEMP"),
                 msg(5, 15, "ORA-600 [kcbz_check_objd_typ]"),
                 msg(6, 16, "ORA-1234567: not a code")])
    assert errors(found) == {"ORA-01652/normal": 2, "ORA-01653/normal": 1, "ORA-01688/normal": 1,
                             "ORA-00600/normal": 1, "other/normal": 1}


def test_an_archiver_stuck_is_not_filed_under_data_guard():
    """The recovery area full: the alert log says ORA-19809 / ORA-16038 / ORA-16014 (ORA-00257 is what a
    client gets); a real Data Guard message stays in the 16xxx group."""
    found = run([msg(1, 21, "ORA-19809: limit exceeded for recovery files", level=2),
                 msg(1, 22, "ORA-16038: log 2 sequence# 4711 cannot be archived", level=2),
                 msg(2, 23, "ORA-16014: log 2 sequence# 4711 not archived, no available destinations", level=2),
                 msg(3, 24, ORA16, level=2)])
    assert errors(found) == {"ORA-19809/severe": 1, "ORA-16038/severe": 1, "ORA-16014/severe": 1,
                             "ORA-16xxx/severe": 1}


def test_the_hour_repeated_when_the_clocks_go_back_is_counted():
    """26 Oct 2025, Central Europe: an ORA-00600 at 02:50 CEST (00:50 UTC), the next at 02:10 CET
    (01:10 UTC), later although its wall clock is earlier. UTC instants: both counted."""
    def read(when, clock, record):
        snap = Snapshot("ODS", when, {"V$DIAG_ALERT_EXT": [
            {"ORIGINATING_TIMESTAMP": record[0], "RECORD_ID": record[1], "MESSAGE_LEVEL": 1,
             "MESSAGE_TEXT": "ORA-00600: internal error code, arguments: [kcbgtcr_13]", "CON_ID": 0}],
            "DUAL": [{"SYSTIMESTAMP": clock}]})
        return samples(collect(snap, Settings(), names=["alert_log"]))
    read("2025-10-26T00:55:00Z", "2025-10-26T02:55:00.000000+02:00", ("2025-10-26T00:50:00.000000Z", 7001))
    found = read("2025-10-26T01:15:00Z", "2025-10-26T02:15:00.000000+01:00", ("2025-10-26T01:10:00.000000Z", 7002))
    assert errors(found) == {"ORA-00600/critical": 2}
    assert found[("oracle_alert_log_last_critical_timestamp_seconds", ())] == 1761441000.0   # 01:10 UTC


def test_a_recording_without_zones_is_read_on_the_host_clock():
    """Older recordings hold the host's wall clock (no zone): 10:01:07 at UTC+1 is 09:01:07 UTC."""
    row = {**msg(1, 31, ORA600, level=1), "ORIGINATING_TIMESTAMP": "2025-03-11T10:01:07.123456"}
    found = run([row])
    assert found[("oracle_alert_log_last_critical_timestamp_seconds", ())] == pytest.approx(1741683667.123456)


def test_the_live_statement_selects_the_time_in_utc_and_stays_one_plain_read_of_the_view():
    import sqlglot
    from sqlglot import exp
    sql = alert_log.live_statement(alert_log.ALERT_EXT.statement().sql)
    assert sql.startswith("SELECT TO_CHAR(SYS_EXTRACT_UTC(ORIGINATING_TIMESTAMP), "
                          "'YYYY-MM-DD\"T\"HH24:MI:SS.FF6\"Z\"') AS ORIGINATING_TIMESTAMP, RECORD_ID, ")
    tree = sqlglot.parse_one(sql, read="oracle")
    assert [t.name.upper() for t in tree.find_all(exp.Table)] == ["V$DIAG_ALERT_EXT"]


def storm_rows(first, count, second0=0):
    """``count`` ORA-00060 lines one second apart from 09:10:00 UTC (RECORD_ID first...)."""
    return [(f"2025-03-11T09:10:{(second0 + k) % 60:02d}.000000Z" if second0 + k < 60 else
             f"2025-03-11T09:11:{(second0 + k) % 60:02d}.000000Z", first + k, 16, "ORA-00060: deadlock detected", 0)
            for k in range(count)]


def test_a_storm_moves_the_read_position_only_to_the_last_message_read_so_nothing_is_skipped():
    """Finding 9: 5 rows of bound, 7 messages (an ORA-00600 the 7th): the first read stops at the 5th
    message, the next read starts there (>=, the edge row is not counted twice) and finds the ORA-00600."""
    conn = FakeConnection(rows={"DUAL": [("2025-03-11T10:15:00.000000+01:00",)]})
    src = live(conn, alert_log_max_rows=5)
    conn.rows["V$DIAG_ALERT_EXT"] = storm_rows(100, 5)
    snap = src.fetch()
    found = samples(collect(snap, Settings(alert_log_max_rows=5), names=["alert_log"]))
    assert errors(found) == {"ORA-00060/normal": 5}
    assert found[("oracle_alert_log_reads_truncated_total", ())] == 1
    src.clock.now += 301
    conn.rows["DUAL"] = [("2025-03-11T10:20:01.000000+01:00",)]
    second = storm_rows(104, 2, second0=4) + [("2025-03-11T09:10:06.500000Z", 106, 1,
                                               "ORA-00600: internal error code, arguments: [4193]", 0)]
    conn.rows["V$DIAG_ALERT_EXT"] = second
    snap = src.fetch()
    # the position: the 5th message (09:10:04 UTC), not the fetch's clock (09:15 UTC)
    assert conn.binds["V$DIAG_ALERT_EXT"]["alert_log_since"] == "2025-03-11T09:10:04.000000+00:00"
    found = samples(collect(snap, Settings(alert_log_max_rows=5), names=["alert_log"]))
    assert errors(found) == {"ORA-00060/normal": 6, "ORA-00600/critical": 1}
    assert found[("oracle_alert_log_reads_truncated_total", ())] == 1
    src.clock.now += 301
    conn.rows["DUAL"] = [("2025-03-11T10:25:02.000000+01:00",)]
    src.fetch()                                                        # not truncated: the fetch's clock
    assert conn.binds["V$DIAG_ALERT_EXT"]["alert_log_since"] == "2025-03-11T10:20:01.000000+01:00"


def test_a_read_full_of_one_instant_still_moves_on():
    assert alert_log.position_after([{"ORIGINATING_TIMESTAMP": "2025-03-11T09:10:04.000000Z"}] * 3, 3, "clock",
                                    "2025-03-11T09:10:04.000000+00:00") == "2025-03-11T09:10:04.000001+00:00"
    assert alert_log.position_after([], 3, "2025-03-11T10:00:00.000000+01:00") == "2025-03-11T10:00:00.000000+01:00"
