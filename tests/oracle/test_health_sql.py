"""The statements of the sessions and instance-health collectors against the Oracle Reference
(data/health_catalog.yaml), with the same checks as test_sql_catalog.py: one view per statement,
plain columns only, every column real."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from test_sql_catalog import problems

from oracle_exporter.collectors import archive_dest, asm, dataguard, recovery_area, resource_limits
from oracle_exporter.collectors import sessions, tablespaces

CATALOG = yaml.safe_load((Path(__file__).parent / "data" / "health_catalog.yaml").read_text())
MODULES = (sessions, resource_limits, tablespaces, recovery_area, dataguard, archive_dest, asm)
STATEMENTS = [(m.NAME, view, sql) for m in MODULES for view, sql in m.QUERIES.items()]


@pytest.mark.parametrize("name,view,sql", STATEMENTS, ids=[f"{n}:{v}" for n, v, _ in STATEMENTS])
def test_statement_matches_the_reference(name, view, sql):
    assert problems(sql, view, CATALOG) == []


def test_every_view_read_is_queried_or_shared():
    for module in MODULES:
        own = set(module.QUERIES)
        assert own <= set(module.VIEWS)
        assert set(module.VIEWS) - own <= {"V$DATABASE"}, module.NAME   # the instance collector's statement


def test_asm_never_reads_the_rescanning_view():
    for _, view, sql in STATEMENTS:
        assert "V$ASM_DISKGROUP " not in sql + " " and not sql.rstrip().endswith("V$ASM_DISKGROUP")


def test_tablespace_statements_per_container_kind():
    assert set(tablespaces.queries(True)) == {"CDB_TABLESPACE_USAGE_METRICS", "CDB_TABLESPACES", "V$CONTAINERS"}
    assert set(tablespaces.queries(False)) == {"DBA_TABLESPACE_USAGE_METRICS", "DBA_TABLESPACES"}


def test_the_catalog_check_can_fail():
    bad = sessions.QUERIES["GV$SESSION"].replace("WAIT_TIME_MICRO", "WAIT_TIME_MICROS")
    assert any("WAIT_TIME_MICROS" in p for p in problems(bad, "GV$SESSION", CATALOG))
