"""The pdb_state collector (GV$PDBS), the first collector added by docs/adding-a-collector.md.

What an on-call engineer fears: a PDB left MOUNTED after a restart (the CDB answers, oracle_up is
1, the application cannot connect) or opened RESTRICTED, unseen; and what must stay quiet: every
PDB open READ WRITE, PDB$SEED (always READ ONLY), a non-CDB (no rows), a collector that is off."""
from __future__ import annotations

import json
from pathlib import Path

from oracle_sim import collect, samples, value

from oracle_exporter import queries
from oracle_exporter.collectors import pdb_state
from oracle_exporter.config import Settings
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.sources.replay import ReplaySource

ROOT = Path(__file__).resolve().parents[2]
ON = Settings(collectors={"pdb_state": True})


def pdbs(*rows, inst_ids=(1,)):
    """GV$PDBS rows as CDB$ROOT returns them: (CON_ID, NAME, OPEN_MODE, RESTRICTED) per instance."""
    return {"GV$PDBS": [{"INST_ID": i, "CON_ID": c, "NAME": n, "OPEN_MODE": m, "RESTRICTED": r}
                        for i in inst_ids for c, n, m, r in rows]}


def snap(views) -> Snapshot:
    return Snapshot("cdb", "2025-03-11T09:00:00Z", views)


def run(views, settings=ON):
    return collect(snap(views), settings, names=["pdb_state"])


def test_on_by_default_every_minute_so_the_page_works_on_a_default_install():
    """Review of issue 24, finding 2: OraclePdbNotOpen (critical) reads this collector; opt-in, it
    never fired where nobody had switched it on."""
    assert Settings().enabled("pdb_state") and not pdb_state.SPEC.opt_in and pdb_state.SPEC.interval == 60
    assert queries.build_queries(Settings())["GV$PDBS"].sql == \
        "SELECT INST_ID, CON_ID, NAME, OPEN_MODE, RESTRICTED FROM GV$PDBS"
    assert "GV$PDBS" not in queries.build_queries(Settings(collectors={"pdb_state": False}))


def test_before_12_1_the_view_is_replaced_by_one_cheap_row_and_nothing_is_exported():
    (fallback,) = pdb_state.PDBS.fallbacks
    assert "ORA-00942" in fallback.codes
    assert fallback.use.name == "V$INSTANCE"
    assert samples(run({"V$INSTANCE": [{"INSTANCE_NAME": "orcl11"}]})) == {}


def test_every_pdb_open_read_write_is_quiet_and_the_seed_is_left_out():
    fams = run(pdbs((2, "PDB$SEED", "READ ONLY", "NO"), (3, "SALES", "READ WRITE", "NO"), (4, "HR", "READ WRITE", "NO")))
    got = samples(fams)
    assert {dict(labels)["pdb"] for _, labels in got} == {"SALES", "HR"}
    for pdb in ("SALES", "HR"):
        assert value(fams, "oracle_pdb_open_mode", inst_id="1", pdb=pdb, open_mode="READ WRITE") == 1.0
        for other in ("MOUNTED", "READ ONLY", "MIGRATE"):
            assert value(fams, "oracle_pdb_open_mode", inst_id="1", pdb=pdb, open_mode=other) == 0.0
        assert value(fams, "oracle_pdb_restricted", inst_id="1", pdb=pdb) == 0.0


def test_a_pdb_left_mounted_and_one_opened_restricted_show_per_instance():
    """RAC: SALES open on instance 1, still MOUNTED on instance 2 (no saved state); HR open
    RESTRICTED on both (RESTRICTED is NULL while mounted: no restricted series then)."""
    rows = pdbs((3, "SALES", "READ WRITE", "NO"), (4, "HR", "READ WRITE", "YES"), inst_ids=(1,))
    rows["GV$PDBS"] += pdbs((3, "SALES", "MOUNTED", None), (4, "HR", "READ WRITE", "YES"), inst_ids=(2,))["GV$PDBS"]
    fams = run(rows)
    assert value(fams, "oracle_pdb_open_mode", inst_id="2", pdb="SALES", open_mode="MOUNTED") == 1.0
    assert value(fams, "oracle_pdb_open_mode", inst_id="2", pdb="SALES", open_mode="READ WRITE") == 0.0
    assert value(fams, "oracle_pdb_open_mode", inst_id="1", pdb="SALES", open_mode="READ WRITE") == 1.0
    assert ("oracle_pdb_restricted", (("inst_id", "2"), ("pdb", "SALES"))) not in samples(fams)
    assert value(fams, "oracle_pdb_restricted", inst_id="1", pdb="HR") == 1.0
    assert value(fams, "oracle_pdb_restricted", inst_id="2", pdb="HR") == 1.0


def test_a_mode_a_later_release_adds_gets_its_own_series_and_the_allow_list_applies():
    fams = run(pdbs((3, "SALES", "UPGRADE", "NO"), (4, "HR", "READ WRITE", "NO")),
               Settings(collectors={"pdb_state": True}, pdbs=["sales"]))
    assert value(fams, "oracle_pdb_open_mode", inst_id="1", pdb="SALES", open_mode="UPGRADE") == 1.0
    assert value(fams, "oracle_pdb_open_mode", inst_id="1", pdb="SALES", open_mode="READ WRITE") == 0.0
    assert {dict(labels)["pdb"] for _, labels in samples(fams)} == {"SALES"}


def test_an_unknown_open_mode_is_no_series_rather_than_not_open():
    assert samples(run(pdbs((3, "SALES", None, None)))) == {}


def test_a_non_cdb_or_a_snapshot_without_the_view_exports_nothing():
    assert samples(run({"GV$PDBS": []})) == {}
    assert samples(run({})) == {}


def test_through_the_exporter_with_the_switch_the_series_carry_the_database():
    views = pdbs((3, "SALES", "MOUNTED", None))
    for on in (True, False):
        settings = Settings(collectors={"pdb_state": on})
        exp = OracleExporter([Target("cdb1", ReplaySource("cdb1", [snap(views)]))], settings)
        try:
            got = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in exp.scrape() for s in f.samples}
        finally:
            exp.close()
        key = ("oracle_pdb_open_mode", (("database", "cdb1"), ("inst_id", "1"), ("open_mode", "MOUNTED"),
                                        ("pdb", "SALES")))
        assert (got.get(key) == 1.0) is on
        assert (("oracle_collector_success", (("collector", "pdb_state"), ("database", "cdb1"))) in got) is on


def test_declared_once_and_generated_everywhere():
    """The collector's module is the one place: the catalog, the grants and the docs have it."""
    catalog = json.loads((ROOT / "exporters/exporter_common/metrics_catalog.json").read_text())
    assert catalog["metrics"]["oracle_pdb_open_mode"]["collector"] == "pdb_state"
    assert catalog["metrics"]["oracle_pdb_open_mode"]["labels"] == ["database", "inst_id", "pdb", "open_mode"]
    assert "GRANT SELECT ON SYS.GV_$PDBS TO oramon;" in (ROOT / "docs/oracle-monitoring-user.sql").read_text()
    assert "`oracle_pdb_restricted`" in (ROOT / "docs/metrics.md").read_text()
    assert not pdb_state.SPEC.opt_in and pdb_state.VIEWS == ("GV$PDBS",)


def test_an_11_2_database_costs_no_error_the_live_source_reads_one_v_instance_row_instead():
    """On by default now: before 12.1 (no GV$PDBS, ORA-00942) the exporter must not report the collector
    failed on every fetch of every old database."""
    from oracle_sim import FakeClock, FakeConnection

    from oracle_exporter.config import DatabaseConfig
    from oracle_exporter.sources.live import LiveSource
    conn = FakeConnection(fail={"GV$PDBS": "ORA-00942: table or view does not exist",
                                "V$CONTAINERS": "ORA-00942: table or view does not exist"},
                          rows={"V$INSTANCE": [("orcl11",)]})
    db = DatabaseConfig("old11", dsn="h:1521/S", user="mon", password="pw", timeout_seconds=4)
    src = LiveSource(db, Settings(), connect=lambda d, t: conn, clock=FakeClock(), connect_timeout=2.5)
    snap = src.fetch()
    assert "GV$PDBS" not in snap.errors and "V$CONTAINERS" not in snap.errors
    assert sum(s.startswith("SELECT INSTANCE_NAME, CON_ID FROM V$INSTANCE") for s in conn.executed) == 2
    assert samples(collect(snap, Settings(), names=["pdb_state"])) == {}
