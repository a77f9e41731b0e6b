"""The undo (GV$UNDOSTAT) and temp (GV$TEMPSEG_USAGE) collectors.

What an on-call engineer fears: a report that died with ORA-01555 an hour ago, a batch that
could not get undo space, a query that runs longer than the undo Oracle keeps, one session that
eats the temporary tablespace. What must stay quiet: an instance whose queries fit the
retention and that raised no error. Rows as the view returns them: 10-minute intervals (DATEs on
the host clock), the newest still filling; temp segments per session."""
from __future__ import annotations

from oracle_sim import collect, samples, value

from oracle_exporter import queries
from oracle_exporter.config import Settings
from oracle_exporter.snapshot import Snapshot

NOW = "2025-03-11T09:00:00Z"
CLOCK = {"DUAL": [{"SYSTIMESTAMP": "2025-03-11T10:00:00.000000+01:00"}]}


def interval(i, begin, ssold=0, nospace=0, maxq=300, tuned=900):
    h, m = divmod(begin, 60)
    end = begin + 10
    return {"INST_ID": i, "BEGIN_TIME": f"2025-03-11T{h:02d}:{m:02d}:00",
            "END_TIME": f"2025-03-11T{end // 60:02d}:{end % 60:02d}:00", "MAXQUERYLEN": maxq,
            "SSOLDERRCNT": ssold, "NOSPACEERRCNT": nospace, "TUNED_UNDORETENTION": tuned, "CON_ID": 0}


def run(views, names):
    return collect(Snapshot("ODS", NOW, {**views, **CLOCK}), Settings(), names=names)


def test_undo_statement_reads_only_the_last_hour_by_the_database_clock():
    sql = queries.build_queries(Settings())["GV$UNDOSTAT"]
    assert sql.sql.endswith("FROM GV$UNDOSTAT WHERE END_TIME > SYSDATE - :undo_window / 86400")
    assert sql.binds == {"undo_window": 3600}


def test_a_quiet_instance_shows_zero_errors_and_its_retention():
    rows = [interval(1, 9 * 60 + 10 * k, maxq=120 + k, tuned=1800 + k) for k in range(6)]
    fams = run({"GV$UNDOSTAT": rows}, ["undo"])
    assert value(fams, "oracle_undo_snapshot_too_old_errors", inst_id="1") == 0
    assert value(fams, "oracle_undo_space_errors", inst_id="1") == 0
    assert value(fams, "oracle_undo_max_query_length_seconds", inst_id="1") == 125
    assert value(fams, "oracle_undo_tuned_retention_seconds", inst_id="1") == 1805   # the newest interval


def test_ora_01555_and_out_of_space_are_summed_per_instance_over_the_hour():
    rows = [interval(1, 9 * 60 + 10, ssold=2, maxq=5400, tuned=2400), interval(1, 9 * 60 + 30, ssold=1),
            interval(2, 9 * 60 + 20, nospace=4), interval(2, 9 * 60 + 50)]
    # the rows arrive newest first, as the view returns them
    fams = run({"GV$UNDOSTAT": rows[::-1]}, ["undo"])
    assert value(fams, "oracle_undo_snapshot_too_old_errors", inst_id="1") == 3
    assert value(fams, "oracle_undo_snapshot_too_old_errors", inst_id="2") == 0
    assert value(fams, "oracle_undo_space_errors", inst_id="2") == 4
    # the 90-minute query ran beyond the 40-minute retention of its interval: a 01555 candidate
    assert value(fams, "oracle_undo_max_query_length_seconds", inst_id="1") == 5400
    assert value(fams, "oracle_undo_tuned_retention_seconds", inst_id="1") == 900


def test_no_rows_or_no_view_exports_nothing():
    assert samples(run({"GV$UNDOSTAT": []}, ["undo"])) == {}
    assert samples(run({}, ["undo"])) == {}


def seg(i, addr, num, user, sql, ts, segtype, blocks):
    return {"INST_ID": i, "USERNAME": user, "SESSION_ADDR": addr, "SESSION_NUM": num, "SQL_ID": sql,
            "TABLESPACE": ts, "SEGTYPE": segtype, "BLOCKS": blocks, "CON_ID": 0}


BLOCK = {"GV$SYSTEM_PARAMETER": [{"INST_ID": i, "NAME": "db_block_size", "VALUE": "8192", "CON_ID": 0}
                                 for i in (1, 2)]}


def test_one_session_eating_temp_is_the_top_consumer_with_its_sql_id():
    rows = [seg(1, "00000000A1B2C3D4", 4021, "REPORTS", "7h35uxf5uhmm1", "TEMP", "HASH", 1_200_000),
            seg(1, "00000000A1B2C3D4", 4021, "REPORTS", "7h35uxf5uhmm1", "TEMP", "SORT", 300_000),
            seg(1, "00000000A1B2F000", 17, "APP", "g0bggfqrddc4w", "TEMP", "SORT", 128),
            seg(1, "00000000A1B2F100", 88, "APP", "g0bggfqrddc4w", "TEMP", "LOB_DATA", 128),
            seg(2, "00000000B1B2F100", 5, "ETL", "0w2qpuc6u2zsp", "TEMP2", "DATA", 2560),
            seg(2, "00000000B1B2F200", 9, "ETL", "0w2qpuc6u2zsp", "TEMP2", "FUTURE_TYPE", 256)]
    fams = run({"GV$TEMPSEG_USAGE": rows, **BLOCK}, ["temp"])
    assert value(fams, "oracle_temp_used_bytes", inst_id="1", tablespace="TEMP", segtype="HASH") == 1_200_000 * 8192
    assert value(fams, "oracle_temp_used_bytes", inst_id="1", tablespace="TEMP", segtype="SORT") == 300_128 * 8192
    assert value(fams, "oracle_temp_used_bytes", inst_id="2", tablespace="TEMP2", segtype="other") == 256 * 8192
    assert value(fams, "oracle_temp_top_consumer_bytes", inst_id="1", username="REPORTS",
                 sql_id="7h35uxf5uhmm1") == 1_500_000 * 8192
    assert value(fams, "oracle_temp_top_consumer_bytes", inst_id="2", username="ETL", sql_id="0w2qpuc6u2zsp") == 2560 * 8192
    assert len([k for k in samples(fams) if k[0] == "oracle_temp_top_consumer_bytes"]) == 2


def test_no_temp_in_use_or_no_block_size_exports_nothing_rather_than_a_guess():
    assert samples(run({"GV$TEMPSEG_USAGE": [], **BLOCK}, ["temp"])) == {}
    rows = [seg(1, "00000000A1B2C3D4", 4021, "REPORTS", "7h35uxf5uhmm1", "TEMP", "HASH", 100)]
    assert samples(run({"GV$TEMPSEG_USAGE": rows}, ["temp"])) == {}
