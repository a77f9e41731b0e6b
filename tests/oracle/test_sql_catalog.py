"""Safety net for SQL written without a database at hand (issue 2, item 6).

Every statement the view registry can produce (every view, every fallback, with the names
the collectors declare) is parsed with sqlglot's Oracle dialect; every view and column must
be in data/gv_catalog.yaml, which transcribes the Oracle Database Reference. Statistic,
parameter, PGASTAT and SYSMETRIC names are checked the same way, and the grants of
docs/oracle-monitoring-user.sql must name exactly the views queried.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlglot
import yaml
from sqlglot import exp

from oracle_exporter import queries, views
from oracle_exporter.collectors import rac_gc  # issue 24
from oracle_exporter.collectors import (COLLECTORS, DEFAULT_HISTOGRAM_EVENTS, host_load, load_profile, pga, redo,
                                         time_model)

ROOT = Path(__file__).resolve().parents[2]
CATALOG = yaml.safe_load((Path(__file__).parent / "data" / "gv_catalog.yaml").read_text())
GRANTS_FILE = ROOT / "docs" / "oracle-monitoring-user.sql"


def all_queries() -> list[queries.Query]:
    """Every statement of every registered view and fallback, with the declared names
    (default settings), and with no names / one name for the name-filtered views."""
    names = queries.declared_names()
    out = []
    for view in views.all_views().values():
        for variant in view.variants():
            out.append(variant.statement(names.get(variant.name, ())))
            if variant.filter_column:
                out.append(variant.statement([]))
                out.append(variant.statement(["x"]))
    return out


def queried_views() -> set[str]:
    """Views a fetch can read: planned ones and their fallbacks."""
    return {v.name for view in queries.build_plan().views for v in view.variants()}


def problems(sql: str, view: str, catalog: dict = CATALOG) -> list[str]:
    """Everything wrong with one statement against the catalog (empty list = fine)."""
    try:
        tree = sqlglot.parse_one(sql, read="oracle")
    except sqlglot.errors.ParseError as err:
        return [f"does not parse: {err}"]
    found: list[str] = []
    if not isinstance(tree, exp.Select):
        found.append("not a SELECT")
    tables = [t.name.upper() if not t.db else f"{t.db}.{t.name}".upper() for t in tree.find_all(exp.Table)]
    if tables != [view]:
        found.append(f"reads {tables}, expected exactly [{view}]")
    known = catalog["views"].get(view)
    if known is None:
        return found + [f"view {view} not in catalog"]
    for col in tree.find_all(exp.Column):
        if col.name.upper() not in known["columns"]:
            found.append(f"column {col.name} not in {view}")
    for sel in tree.expressions:
        if not isinstance(sel, exp.Column):
            found.append(f"select item {sel.sql()} is not a plain column (logic belongs in Python)")
    if tree.args.get("group") or tree.args.get("joins") or tree.find(exp.AggFunc):
        found.append("aggregation or join in SQL")
    return found


@pytest.mark.parametrize("query", all_queries(), ids=lambda q: f"{q.view}-{len(q.binds)}")
def test_every_statement_matches_the_catalog(query):
    assert problems(query.sql, query.view) == []
    placeholders = {p.name for p in sqlglot.parse_one(query.sql, read="oracle").find_all(exp.Placeholder)}
    assert placeholders == set(query.binds), "every bind variable is bound and every bind is used"


def test_both_histogram_variants_are_built():
    micro = queries.build_queries()
    milli = queries.build_queries(fallen_back=["GV$EVENT_HISTOGRAM_MICRO"])
    assert "GV$EVENT_HISTOGRAM_MICRO" in micro and "GV$EVENT_HISTOGRAM" not in micro
    assert "GV$EVENT_HISTOGRAM" in milli and "GV$EVENT_HISTOGRAM_MICRO" not in milli
    assert list(micro["GV$EVENT_HISTOGRAM_MICRO"].binds.values()) == DEFAULT_HISTOGRAM_EVENTS
    assert list(milli["GV$EVENT_HISTOGRAM"].binds.values()) == DEFAULT_HISTOGRAM_EVENTS


@pytest.mark.parametrize("broken,fragment", [
    ("SELECT INST_ID, EVENT, WAIT_CLASS, TOTAL_WAITS, TOTAL_TIMEOUTS, TIME_WAITED_MICR0 FROM GV$SYSTEM_EVENT",
     "column TIME_WAITED_MICR0"),
    ("SELECT INST_ID, EVENT, WAIT_TIME_MILLI, WAIT_COUNT FROM GV$EVENT_HISTOGRAM_MICRO WHERE EVENT IN (:e0)",
     "column WAIT_TIME_MILLI not in GV$EVENT_HISTOGRAM_MICRO"),
    ("SELECT INST_ID, NAME, VALUE FROM GV$SYSTAT WHERE NAME IN (:s0)", "view GV$SYSTAT not in catalog"),
    ("SELECT INST_ID, GROUP#, THREAD, SEQUENCE# FROM GV$LOG", "column THREAD not in GV$LOG"),
    ("SELECT INST_ID, NAME, VALUE FROM GV$SYSSTAT WHERE STAT_NAME = :s0", "column STAT_NAME"),
    ("SELECT INST_ID, SUM(VALUE) FROM GV$SYSSTAT GROUP BY INST_ID", "aggregation"),
    ("SELECT i.INST_ID FROM GV$INSTANCE i JOIN GV$PROCESS p ON p.INST_ID = i.INST_ID", "expected exactly"),
    ("SELEC INST_ID FROM GV$LOG", "does not parse"),
], ids=["typo-column", "column-of-other-view", "typo-view", "missing-hash", "where-column", "aggregate", "join",
        "syntax"])
def test_typos_are_caught(broken, fragment):
    found = problems(broken, re.search(r"FROM (\S+)", broken).group(1))
    assert any(fragment in p for p in found), found


def test_statistic_parameter_and_metric_names_are_real():
    names = queries.declared_names()
    assert set(names["GV$SYSSTAT"]) <= set(CATALOG["statistics"]), set(names["GV$SYSSTAT"]) - set(CATALOG["statistics"])
    assert set(names["GV$SYSTEM_PARAMETER"]) <= set(CATALOG["parameters"])
    assert set(names["GV$SYSMETRIC"]) <= set(CATALOG["sysmetric"])
    assert set(names["GV$SYS_TIME_MODEL"]) == set(CATALOG["time_model"])
    assert set(names["GV$CON_SYS_TIME_MODEL"]) <= set(CATALOG["time_model"])
    assert set(names["GV$CON_SYSSTAT"]) <= set(CATALOG["statistics"])
    assert set(names["GV$CON_SYSMETRIC"]) == set(CATALOG["con_sysmetric"])
    assert {s for _, s, _ in pga.PGASTAT} <= set(CATALOG["pgastat"])
    assert "redo synch time (usecs)" not in CATALOG["statistics"]     # the check can fail


def test_the_statement_asks_for_the_union_of_the_names_collectors_declare():
    names = queries.declared_names()
    assert set(names["GV$SYSSTAT"]) == set(redo.NAMES["GV$SYSSTAT"]) | set(load_profile.NAMES["GV$SYSSTAT"]) | set(
        pga.NAMES["GV$SYSSTAT"]) | set(time_model.NAMES["GV$SYSSTAT"]) | set(rac_gc.NAMES["GV$SYSSTAT"])
    assert {"redo size", "redo write time (usec)", "redo write time", "logons current",
            "workarea executions - onepass"} <= set(names["GV$SYSSTAT"])
    assert set(names["GV$SYSTEM_PARAMETER"]) == {"log_buffer", "pga_aggregate_limit", "cpu_count", "sga_target",
                                          "db_block_size"}
    assert set(names["GV$SYSMETRIC"]) == {m for _, m, _ in host_load.METRICS}
    assert host_load.GROUP_ID == queries.SYSMETRIC_GROUP_ID
    sysstat = queries.build_queries()["GV$SYSSTAT"]
    assert sorted(sysstat.binds.values()) == sorted(names["GV$SYSSTAT"])
    # a collector switched off takes its names (and views only it reads) out of the statement
    no_pga = {n: m for n, m in COLLECTORS.items() if n != "pga"}
    plan = queries.build_plan(no_pga)
    assert "workarea executions - optimal" not in plan.names["GV$SYSSTAT"]
    assert "GV$PGASTAT" not in {v.name for v in plan.views}
    assert "GV$PROCESS" in {v.name for v in plan.views}              # instance still reads it


def test_collector_views_are_exactly_the_queried_views():
    read = set().union(*(set(m.VIEWS) for m in COLLECTORS.values()))
    assert read == queried_views()
    assert set(CATALOG["views"]) == queried_views()


def granted_views(text: str) -> list[str]:
    views = []
    for m in re.finditer(r"^\s*GRANT\s+SELECT\s+ON\s+SYS\.(?:(G?V)_\$(\w+)|((?:DBA|CDB)_\w+))\s+TO\s+\w+\s*;",
                         text, re.I | re.M):
        views.append(m.group(3).upper() if m.group(3) else f"{m.group(1).upper()}${m.group(2).upper()}")
    return views


def test_grants_equal_the_views_queried():
    text = GRANTS_FILE.read_text()
    queried = queried_views()
    grants = granted_views(text)
    assert len(grants) == len(set(grants)), "duplicate grant"
    assert set(grants) == queried
    statements = [s.strip() for s in re.sub(r"--[^\n]*", "", text).split(";") if s.strip()]
    others = [s for s in statements if not re.match(r"GRANT\s+SELECT\s+ON\s+SYS\.(G?V_\$|DBA_|CDB_)", s, re.I)]
    assert [re.sub(r"\s+", " ", s.split(" IDENTIFIED")[0]).upper() for s in others] == [
        "CREATE PROFILE ORAMON_PROFILE LIMIT PASSWORD_LIFE_TIME UNLIMITED FAILED_LOGIN_ATTEMPTS 10 "
        "PASSWORD_LOCK_TIME 1",                     # issue 22: a password that never expires
        "CREATE USER ORAMON", "GRANT CREATE SESSION TO ORAMON"]
    assert not re.search(r"ANY\s+DICTIONARY|SELECT_CATALOG_ROLE|\bDBA\b", re.sub(r"--[^\n]*", "", text), re.I)


def test_grant_parser_notices_a_missing_or_extra_grant():
    text = GRANTS_FILE.read_text()
    assert "GV$LATCH" not in granted_views(text.replace("GRANT SELECT ON SYS.GV_$LATCH TO oramon;\n", ""))
    assert "GV$SESSION" in granted_views(text + "GRANT SELECT ON SYS.GV_$SESSION TO oramon;\n")
