"""The statements of the sessions and instance-health collectors (the catalog check of every
statement, fallbacks included, is tests/oracle/test_sql_catalog.py)."""
from __future__ import annotations

from test_sql_catalog import CATALOG, problems

from oracle_exporter import queries, views
from oracle_exporter.collectors import asm


def statements() -> dict[str, str]:
    return {v.name: v.statement().sql for view in queries.build_plan().views for v in view.variants()}


def test_asm_never_reads_the_rescanning_view():
    sql = statements()
    assert "V$ASM_DISKGROUP_STAT" in sql and "V$ASM_DISKGROUP" not in sql
    assert "V$ASM_DISK_STAT" in sql and "V$ASM_DISK" not in sql          # failure groups, from memory too
    assert asm.VIEWS == ("V$ASM_DISKGROUP_STAT", "V$ASM_DISK_STAT", "V$ASM_CLIENT")


def test_session_statement_selects_the_contract_columns_and_skips_idle_and_itself():
    sql = views.SESSION.statement().sql
    before_11_2 = views.SESSION.fallbacks[0].use.statement().sql      # no FINAL_BLOCKING_* columns
    assert "FINAL_BLOCKING" not in before_11_2 and before_11_2.endswith(sql[sql.index(" FROM "):])
    assert sql.startswith("SELECT INST_ID, SID, TYPE, STATUS, STATE, EVENT, WAIT_CLASS, WAIT_TIME_MICRO, "
                          "BLOCKING_SESSION_STATUS, BLOCKING_INSTANCE, BLOCKING_SESSION, "     # the contract's
                          "SERIAL#, USERNAME, PROGRAM, FINAL_BLOCKING_SESSION_STATUS, FINAL_BLOCKING_INSTANCE, "
                          "FINAL_BLOCKING_SESSION, LAST_CALL_ET, SQL_ID, CON_ID FROM GV$SESSION WHERE ")  # + blockers (22),
                                                                     # long calls (24)
    assert "WAIT_CLASS <> 'Idle'" in sql and "SYS_CONTEXT('USERENV', 'SID')" in sql
    assert "TYPE = 'BACKGROUND' OR TADDR IS NOT NULL" in sql          # the blockers' own rows


def test_tablespaces_fall_back_to_the_dba_views_before_12_1():
    usage = [v.name for v in views.TS_USAGE.variants()]
    spaces = [v.name for v in views.TS_SPACES.variants()]
    assert usage == ["CDB_TABLESPACE_USAGE_METRICS", "DBA_TABLESPACE_USAGE_METRICS"]
    assert spaces == ["CDB_TABLESPACES", "DBA_TABLESPACES"]
    assert all(fb.codes == ("ORA-00942", "ORA-04043") for fb in views.TS_USAGE.fallbacks)


def test_the_catalog_check_can_fail():
    bad = statements()["GV$SESSION"].replace("WAIT_TIME_MICRO", "WAIT_TIME_MICROS")
    assert any("WAIT_TIME_MICROS" in p for p in problems(bad, "GV$SESSION", CATALOG))
    assert views.SESSION.name in CATALOG["views"]
