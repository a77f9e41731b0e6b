"""Issue 11.5: "connected but blind" is not up. A database that answers but whose every view
fails (ORA-00942 on all of them: the grants are missing) reports oracle_up 0, like an
unreachable one; each failed view has oracle_view_errors{view} 1 and oracle_view_error_info
naming the ORA- code and the grant; the log says which grant is missing."""
from __future__ import annotations

import logging

from oracle_exporter.config import Settings
from oracle_exporter.exporter import OracleExporter, Target, missing_grant
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.sources.replay import ReplaySource
from oracle_exporter.queries import build_queries
from oracle_sim import OracleSim

ORA942 = "ORA-00942: table or view does not exist"


def scrape(snapshots, caplog=None) -> dict:
    exp = OracleExporter([Target("db1", ReplaySource("db1", snapshots))], Settings())
    try:
        out = {}
        for fam in exp.scrape():
            for s in fam.samples:
                out[(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "database")))] = s.value
        return out
    finally:
        exp.close()


def test_every_view_failing_is_oracle_up_0_with_the_grants_named(caplog):
    errors = {view: ORA942 for view in build_queries(Settings())}
    caplog.set_level(logging.WARNING)
    got = scrape([Snapshot("db1", "2025-03-11T09:00:00Z", {}, dict(errors))])
    assert got[("oracle_up", ())] == 0.0
    assert got[("oracle_scrape_errors_total", (("collector", "fetch"),))] == 1.0
    assert got[("oracle_view_errors", (("view", "GV$SESSION"),))] == 1.0
    assert got[("oracle_view_error_info", (("code", "ORA-00942"), ("grant", "SELECT ON SYS.GV_$SESSION"),
                                           ("view", "GV$SESSION")))] == 1.0
    assert got[("oracle_view_error_info", (("code", "ORA-00942"), ("grant", "SELECT ON SYS.CDB_TABLESPACES"),
                                           ("view", "CDB_TABLESPACES")))] == 1.0
    assert {k[1][0][1] for k in got if k[0] == "oracle_view_errors"} == set(errors)
    assert not [k for k in got if k[0] == "oracle_collector_success"]     # no collector ran on nothing
    assert "connected but blind" in caplog.text and "GRANT SELECT ON SYS.GV_$SYSSTAT TO" in caplog.text


def test_one_failing_view_is_up_with_that_view_named():
    sim = OracleSim()
    snap = sim.snapshot("db1")
    snap.views.pop("GV$LATCH")
    snap.errors["GV$LATCH"] = "ORA-01031: insufficient privileges"
    got = scrape([snap])
    assert got[("oracle_up", ())] == 1.0
    assert got[("oracle_view_errors", (("view", "GV$LATCH"),))] == 1.0
    assert [k for k in got if k[0] == "oracle_view_errors"] == [("oracle_view_errors", (("view", "GV$LATCH"),))]
    assert got[("oracle_collector_success", (("collector", "latches"),))] == 0.0
    assert got[("oracle_collector_success", (("collector", "sessions"),))] == 1.0


def test_no_view_errors_series_when_all_is_well():
    got = scrape([OracleSim().snapshot("db1")])
    assert got[("oracle_up", ())] == 1.0 and not [k for k in got if k[0].startswith("oracle_view_error")]


def test_grant_names():
    assert missing_grant("GV$EVENT_HISTOGRAM_MICRO", "ORA-00942") == "SELECT ON SYS.GV_$EVENT_HISTOGRAM_MICRO"
    assert missing_grant("V$DATABASE", "ORA-01031") == "SELECT ON SYS.V_$DATABASE"
    assert missing_grant("DBA_TABLESPACES", "ORA-00942") == "SELECT ON SYS.DBA_TABLESPACES"
    assert missing_grant("GV$SESSION", "ORA-00904") == ""          # a missing column is not a grant
