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
    assert value(fams, "oracle_undo_snapshot_too_old_errors", inst_id="1", container="") == 0
    assert value(fams, "oracle_undo_space_errors", inst_id="1", container="") == 0
    assert value(fams, "oracle_undo_max_query_length_seconds", inst_id="1", container="") == 125
    assert value(fams, "oracle_undo_tuned_retention_seconds", inst_id="1", container="") == 1805   # the newest interval


def test_ora_01555_and_out_of_space_are_summed_per_instance_over_the_hour():
    rows = [interval(1, 9 * 60 + 10, ssold=2, maxq=5400, tuned=2400), interval(1, 9 * 60 + 30, ssold=1),
            interval(2, 9 * 60 + 20, nospace=4), interval(2, 9 * 60 + 50)]
    # the rows arrive newest first, as the view returns them
    fams = run({"GV$UNDOSTAT": rows[::-1]}, ["undo"])
    assert value(fams, "oracle_undo_snapshot_too_old_errors", inst_id="1", container="") == 3
    assert value(fams, "oracle_undo_snapshot_too_old_errors", inst_id="2", container="") == 0
    assert value(fams, "oracle_undo_space_errors", inst_id="2", container="") == 4
    # the 90-minute query ran beyond the 40-minute retention of its interval: a 01555 candidate
    assert value(fams, "oracle_undo_max_query_length_seconds", inst_id="1", container="") == 5400
    assert value(fams, "oracle_undo_tuned_retention_seconds", inst_id="1", container="") == 900


def test_no_rows_or_no_view_exports_nothing():
    assert samples(run({"GV$UNDOSTAT": []}, ["undo"])) == {}
    assert samples(run({}, ["undo"])) == {}


_SEGBLK = iter(range(128, 10**9, 1024))


def seg(i, addr, num, user, sql, ts, segtype, blocks):
    """A segment of a non-CDB session, each with its own first extent (SEGRFNO#, SEGBLK#)."""
    return {"INST_ID": i, "USERNAME": user, "SESSION_ADDR": addr, "SESSION_NUM": num, "SQL_ID": sql,
            "SQL_ID_TEMPSEG": sql, "TABLESPACE": ts, "SEGTYPE": segtype, "SEGRFNO#": 1, "SEGBLK#": next(_SEGBLK),
            "BLOCKS": blocks, "CON_ID": 0}


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
    assert value(fams, "oracle_temp_used_bytes", inst_id="1", container="", tablespace="TEMP", segtype="HASH") == 1_200_000 * 8192
    assert value(fams, "oracle_temp_used_bytes", inst_id="1", container="", tablespace="TEMP", segtype="SORT") == 300_128 * 8192
    assert value(fams, "oracle_temp_used_bytes", inst_id="2", container="", tablespace="TEMP2", segtype="other") == 256 * 8192
    assert value(fams, "oracle_temp_top_consumer_bytes", inst_id="1", container="", username="REPORTS",
                 sql_id="7h35uxf5uhmm1") == 1_500_000 * 8192
    assert value(fams, "oracle_temp_top_consumer_bytes", inst_id="2", container="", username="ETL", sql_id="0w2qpuc6u2zsp") == 2560 * 8192
    assert len([k for k in samples(fams) if k[0] == "oracle_temp_top_consumer_bytes"]) == 2


def test_no_temp_in_use_or_no_block_size_exports_nothing_rather_than_a_guess():
    assert samples(run({"GV$TEMPSEG_USAGE": [], **BLOCK}, ["temp"])) == {}
    rows = [seg(1, "00000000A1B2C3D4", 4021, "REPORTS", "7h35uxf5uhmm1", "TEMP", "HASH", 100)]
    assert samples(run({"GV$TEMPSEG_USAGE": rows}, ["temp"])) == {}


# --- review of issue 24: per container from the root, the SQL that made the segment, every segment ----

CONTAINERS = {"V$CONTAINERS": [{"CON_ID": 1, "NAME": "CDB$ROOT"}, {"CON_ID": 2, "NAME": "PDB$SEED"},
                               {"CON_ID": 3, "NAME": "SALES"}, {"CON_ID": 4, "NAME": "HR"}]}


def test_undo_an_ora_01555_in_a_pdb_with_local_undo_is_that_pdbs_from_the_root():
    """Local undo (12.2+, DBCA's default): CDB$ROOT's intervals clean, SALES' report hit ORA-01555 four
    times. Read from the root, SALES has its own series (it was folded into the root's 0 before)."""
    rows = [{**interval(1, 530, ssold=0, maxq=900), "CON_ID": 1}, {**interval(1, 530, ssold=4, maxq=5400), "CON_ID": 3},
            {**interval(1, 530, ssold=0), "CON_ID": 2}]           # PDB$SEED: left out
    fams = run({"GV$UNDOSTAT": rows, **CONTAINERS}, ["undo"])
    assert value(fams, "oracle_undo_snapshot_too_old_errors", inst_id="1", container="SALES") == 4
    assert value(fams, "oracle_undo_max_query_length_seconds", inst_id="1", container="SALES") == 5400
    assert value(fams, "oracle_undo_snapshot_too_old_errors", inst_id="1", container="CDB$ROOT") == 0
    assert {dict(k[1])["container"] for k in samples(fams)} == {"CDB$ROOT", "SALES"}


def tseg(con, addr, blocks, ts="TEMP", segtype="SORT", sql="0w2qpuc6u2zsp", tempseg=None, segblk=128):
    return {"INST_ID": 1, "USERNAME": "APP", "SESSION_ADDR": addr, "SESSION_NUM": 1, "SQL_ID": sql,
            "SQL_ID_TEMPSEG": tempseg, "TABLESPACE": ts, "SEGTYPE": segtype, "SEGRFNO#": 1, "SEGBLK#": segblk,
            "BLOCKS": blocks, "CON_ID": con}


def test_temp_each_pdbs_temp_is_its_own_series_from_the_root():
    """Two PDBs, each with a tablespace named TEMP: two series, matching oracle_tablespace_used_bytes
    {container, tablespace} (they were summed into one)."""
    fams = run({"GV$TEMPSEG_USAGE": [tseg(3, "A1", 1000), tseg(4, "A2", 2000)], **BLOCK, **CONTAINERS}, ["temp"])
    assert value(fams, "oracle_temp_used_bytes", inst_id="1", container="SALES", tablespace="TEMP",
                 segtype="SORT") == 1000 * 8192
    assert value(fams, "oracle_temp_used_bytes", inst_id="1", container="HR", tablespace="TEMP",
                 segtype="SORT") == 2000 * 8192
    assert value(fams, "oracle_temp_top_consumer_bytes", inst_id="1", container="HR", username="APP",
                 sql_id="0w2qpuc6u2zsp") == 2000 * 8192


def test_temp_two_segments_of_one_session_of_one_type_both_count():
    """Two global temporary tables of one session (SEGTYPE DATA, the same statement): two segments,
    each its own first extent (SEGBLK#): 1000 + 2000 blocks, not the first one only."""
    rows = [tseg(0, "A1", 1000, segtype="DATA", segblk=128), tseg(0, "A1", 2000, segtype="DATA", segblk=256)]
    fams = run({"GV$TEMPSEG_USAGE": rows, **BLOCK}, ["temp"])
    assert value(fams, "oracle_temp_used_bytes", inst_id="1", container="", tablespace="TEMP",
                 segtype="DATA") == 3000 * 8192


def test_temp_top_consumer_names_the_sql_that_created_the_segment_not_the_session_current_one():
    """12.1+: the session's hash join (SQL_ID_TEMPSEG 7h35uxf5uhmm1) holds the space while the session
    has moved on to a small query (SQL_ID g0bggfqrddc4w)."""
    rows = [tseg(0, "A1", 90_000, segtype="HASH", sql="g0bggfqrddc4w", tempseg="7h35uxf5uhmm1")]
    fams = run({"GV$TEMPSEG_USAGE": rows, **BLOCK}, ["temp"])
    assert value(fams, "oracle_temp_top_consumer_bytes", inst_id="1", container="", username="APP",
                 sql_id="7h35uxf5uhmm1") == 90_000 * 8192


def test_temp_before_12_1_reads_the_view_without_sql_id_tempseg():
    from oracle_exporter.collectors import temp
    (fallback,) = temp.TEMPSEG.fallbacks
    assert "ORA-00904" in fallback.codes and "SQL_ID_TEMPSEG" not in fallback.use.statement().sql
    assert "SQL_ID_TEMPSEG" in queries.build_queries(Settings())["GV$TEMPSEG_USAGE"].sql
    row = {k: v for k, v in tseg(0, "A1", 100, sql="g0bggfqrddc4w").items() if k not in ("SQL_ID_TEMPSEG", "CON_ID")}
    fams = run({"GV$TEMPSEG_USAGE": [row], **BLOCK}, ["temp"])
    assert value(fams, "oracle_temp_top_consumer_bytes", inst_id="1", container="", username="APP",
                 sql_id="g0bggfqrddc4w") == 100 * 8192
