"""Issue 22, points 2 and 3: failure isolation per view, and a standby read for what it is.

* A failing view removes only the families it feeds (exporter_common.declare.Family.views):
  a missing grant on GV$PROCESS used to wipe oracle_instance_info, oracle_database_info and
  every PGA metric while oracle_up stayed 1.
* A MOUNTED physical standby: its data dictionary views are skipped (no view error, no
  collector failure, oracle_up 1), ORA-01219 is a skip, a failing slow view keeps its interval.
* Apply: MRP0 is redo apply, not an MMON slave; apply running / delay / snapshot standby; the
  primary's gap status and configured delay per destination.
"""
from __future__ import annotations

import json

from oracle_exporter.collectors import archive_dest, dataguard, instance
from oracle_exporter.config import Settings
from oracle_exporter.demo import generate
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.sources.replay import ReplaySource
from oracle_exporter.views import row
from oracle_sim import FakeClock, OracleSim

from test_health_live import Conn, count, source

GV_PROCESS_DENIED = "ORA-00942: table or view does not exist"
NOT_OPEN = "ORA-01219: database or pluggable database not open: queries allowed on fixed tables or views only"
# V$DATABASE as the live statement returns it (columns of views.DATABASE, then CON_ID)
MOUNTED_STANDBY_ROW = (3951235186, "DEMO", "DEMOSB", "PHYSICAL STANDBY", "ARCHIVELOG", "MOUNTED", 0)


def scrape(*snaps: Snapshot, settings: Settings | None = None) -> list[dict]:
    """One scrape per snapshot through the exporter: [{(name, labels): value}] without the database label."""
    name = snaps[0].database
    exporter = OracleExporter([Target(name, ReplaySource(name, list(snaps)))], settings or Settings())
    out = []
    try:
        for _ in snaps:
            got = {}
            for fam in exporter.scrape():
                for s in fam.samples:
                    labels = tuple(sorted((k, v) for k, v in s.labels.items() if k != "database"))
                    got[(s.name, labels)] = s.value
            out.append(got)
    finally:
        exporter.close()
    return out


def without(snap: Snapshot, view: str, error: str) -> Snapshot:
    views = {k: v for k, v in snap.views.items() if k != view}
    return Snapshot(snap.database, snap.time, views, {**snap.errors, view: error}, dict(snap.ages))


SELF = ("oracle_collector_duration_seconds", "oracle_scrape_duration_seconds", "oracle_snapshot_age_seconds",
        "oracle_collector_success", "oracle_scrape_errors_total", "oracle_view_errors", "oracle_view_error_info")


# --- point 2: failure isolation per view ----------------------------------------------

def test_gv_process_failing_keeps_every_other_familys_exact_samples():
    snap = OracleSim().snapshot()
    (good,) = scrape(snap)
    (bad,) = scrape(without(snap, "GV$PROCESS", GV_PROCESS_DENIED))
    process_fed = {"oracle_background_process_info", "oracle_background_slaves",
                   "oracle_background_process_pga_allocated_bytes", "oracle_background_process_pga_used_bytes",
                   "oracle_background_process_pga_max_bytes", "oracle_dataguard_apply_running"}
    lost = {k[0] for k in good} - {k[0] for k in bad}
    assert lost == process_fed & {k[0] for k in good}
    assert {"oracle_background_process_info", "oracle_background_process_pga_allocated_bytes"} <= lost
    kept = {k: v for k, v in good.items() if k[0] not in process_fed and k[0] not in SELF}
    assert kept and {k: bad.get(k) for k in kept} == kept        # every other sample, exactly
    for name in ("oracle_instance_info", "oracle_database_info", "oracle_pga_allocated_bytes",
                 "oracle_sga_target_bytes"):
        assert any(k[0] == name for k in bad), name
    assert bad[("oracle_up", ())] == 1.0
    assert bad[("oracle_view_errors", (("view", "GV$PROCESS"),))] == 1.0
    assert [k for k in bad if k[0] == "oracle_view_errors"] == [("oracle_view_errors", (("view", "GV$PROCESS"),))]
    # the collectors that read it say so (the failure stays visible), the others do not
    assert bad[("oracle_collector_success", (("collector", "instance"),))] == 0.0
    assert bad[("oracle_collector_success", (("collector", "pga"),))] == 0.0
    assert bad[("oracle_collector_success", (("collector", "redo"),))] == 1.0


# --- point 3: the open mode drives what is read --------------------------------------------

def test_mounted_standby_skips_the_dictionary_views_without_error_or_alert():
    conn, clock = Conn(container=("0", "DEMOSB"), rows={"V$DATABASE": [MOUNTED_STANDBY_ROW]}), FakeClock()
    src = source(conn, clock=clock)
    snap = src.fetch()
    assert snap.errors == {}
    assert set(snap.skipped) == {"CDB_TABLESPACE_USAGE_METRICS", "CDB_TABLESPACES"}
    assert "MOUNTED" in snap.skipped["CDB_TABLESPACES"] and "ORA-01219" in snap.skipped["CDB_TABLESPACES"]
    assert count(conn, "CDB_TABLESPACE") == 0 and count(conn, "DBA_TABLESPACE") == 0     # never even tried
    assert count(conn, "V$DATABASE") == 1                                                 # read once, first
    # the exporter: oracle_up 1, no view error, every collector succeeds (OracleScrapeErrors stays quiet)
    exporter = OracleExporter([Target("prod1", src)], Settings())
    try:
        got = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in exporter.scrape() for s in f.samples}
    finally:
        exporter.close()
    assert got[("oracle_up", (("database", "prod1"),))] == 1.0
    assert not [k for k in got if k[0] in ("oracle_view_errors", "oracle_view_error_info")]
    assert {k: v for k, v in got.items() if k[0] == "oracle_collector_success" and v != 1.0} == {}


def test_v_database_failing_is_read_once_and_every_view_is_tried():
    conn = Conn(fail={"V$DATABASE": "ORA-00942: table or view does not exist"})
    snap = source(conn).fetch()
    assert count(conn, "V$DATABASE") == 1 and set(snap.errors) == {"V$DATABASE"}
    assert "CDB_TABLESPACES" in snap.views and not snap.skipped


def test_ora_01219_on_a_view_is_a_skip_not_an_error():
    """Open mode unknown (V$DATABASE not yet answering, a closed PDB): the view's ORA-01219 is a skip."""
    conn = Conn(fail={"CDB_TABLESPACES": NOT_OPEN, "CDB_TABLESPACE_USAGE_METRICS": NOT_OPEN})
    snap = source(conn).fetch()
    assert snap.errors == {}
    assert set(snap.skipped) == {"CDB_TABLESPACES", "CDB_TABLESPACE_USAGE_METRICS"}
    assert "ORA-01219" in snap.skipped["CDB_TABLESPACES"]
    (got,) = scrape(snap)
    assert got[("oracle_collector_success", (("collector", "tablespaces"),))] == 1.0
    assert not [k for k in got if k[0] == "oracle_view_errors"]


def test_a_closed_pdb_skips_its_dictionary_views():
    class PdbConn(Conn):
        def cursor(self):
            cur = super().cursor()
            execute = cur.execute

            def answer(sql, binds):
                if sql.startswith("SELECT OPEN_MODE FROM V$CONTAINERS"):
                    self.executed.append(sql)
                    cur.description, cur._rows = [("OPEN_MODE",)], [("MOUNTED",)]
                    return
                execute(sql, binds)
            cur.execute = answer
            return cur
    open_cdb = (1, "CDB1", "CDB1", "PRIMARY", "ARCHIVELOG", "READ WRITE", 0)
    conn = PdbConn(container=("3", "SALES"), rows={"V$DATABASE": [open_cdb]})
    snap = source(conn).fetch()
    assert snap.errors == {k: v for k, v in snap.errors.items() if "pluggable database SALES (CON_ID 3)" in v}
    assert "SALES is MOUNTED" in snap.skipped["CDB_TABLESPACES"]
    assert count(conn, "CDB_TABLESPACES") == 0


def test_a_failing_slow_view_keeps_its_interval_and_serves_its_last_rows_up_to_twice_it():
    conn, clock = Conn(), FakeClock()
    src = source(conn, clock=clock)
    assert "CDB_TABLESPACES" in src.fetch().views                       # read at t=0 (interval 300 s)
    conn.fail["CDB_TABLESPACES"] = "ORA-01013: user requested cancel of current operation"
    clock.now += 300
    snap = src.fetch()                                                   # t=300: read again, fails
    assert count(conn, "CDB_TABLESPACES") == 2
    assert "CDB_TABLESPACES" not in snap.errors and snap.ages["CDB_TABLESPACES"] == 300   # the last rows
    clock.now += 15
    snap = src.fetch()                                                   # t=315: not retried
    assert count(conn, "CDB_TABLESPACES") == 2 and snap.ages["CDB_TABLESPACES"] == 315
    clock.now += 300
    snap = src.fetch()                                                   # t=615: retried, rows too old
    assert count(conn, "CDB_TABLESPACES") == 3
    assert snap.errors["CDB_TABLESPACES"].startswith("ORA-01013") and "CDB_TABLESPACES" not in snap.views
    clock.now += 15
    snap = src.fetch()                                                   # t=630: the error stands, no retry
    assert count(conn, "CDB_TABLESPACES") == 3 and snap.errors["CDB_TABLESPACES"].startswith("ORA-01013")


def test_skipped_views_are_recorded_and_replayed_to_the_same_metrics():
    snaps = [s for s in generate.snapshots("standby", 1, 15)]
    assert snaps[0].skipped and json.loads(snaps[0].to_json())["skipped"] == snaps[0].skipped
    replayed = [Snapshot.from_obj(json.loads(s.to_json())) for s in snaps]
    assert [s.skipped for s in replayed] == [s.skipped for s in snaps]
    strip = lambda got: {k: v for k, v in got.items() if k[0] not in SELF[:3]}   # noqa: E731  (timings)
    assert [strip(g) for g in scrape(*replayed)] == [strip(g) for g in scrape(*snaps)]
    looped = ReplaySource("DEMOSB", replayed, loop=True)
    served = [looped.fetch() for _ in range(len(replayed) + 2)]          # into the second pass (shifted)
    assert all(s.skipped == snaps[0].skipped for s in served)


def test_the_demo_standby_is_a_mounted_standby_with_a_delayed_apply():
    (got, *_) = scrape(*generate.snapshots("standby", 1, 15))
    assert got[("oracle_up", ())] == 1.0
    assert not [k for k in got if k[0] == "oracle_view_errors"]
    assert {k: v for k, v in got.items() if k[0] == "oracle_collector_success" and v != 1.0} == {}
    assert got[("oracle_database_info", (("database_role", "PHYSICAL STANDBY"), ("db_name", "DEMO"),
                                         ("db_unique_name", "DEMOSB"), ("dbid", "3951235186"),
                                         ("log_mode", "ARCHIVELOG"), ("open_mode", "MOUNTED")))] == 1.0
    assert got[("oracle_dataguard_apply_running", (("inst_id", "1"),))] == 1.0
    assert got[("oracle_dataguard_apply_delay_seconds", ())] == 600.0
    assert got[("oracle_dataguard_snapshot_standby", ())] == 0.0
    assert got[("oracle_background_slaves", (("inst_id", "1"), ("kind", "PR")))] == 2.0
    # MRP0 is an apply process, not an MMON slave: the M kind counts only the Mnnn slaves
    mmon_slaves = [p for p in generate.background_processes(generate.DEMO_STANDBY_DB)
                   if len(p) == 4 and p[0] == "M" and p[1:].isdigit()]
    assert got.get(("oracle_background_slaves", (("inst_id", "1"), ("kind", "M"))), 0.0) == len(mmon_slaves)
    assert not any(k[0].startswith("oracle_tablespace") for k in got)
    apply_lag = got[("oracle_dataguard_lag_seconds", (("kind", "apply"),))]
    assert 600 <= apply_lag <= 603                                         # the delay plus a few seconds


# --- point 3: apply processes and their metrics ------------------------------------------------

def test_mrp0_is_redo_apply_not_an_mmon_slave():
    assert instance.slave_kind("MRP0") is None and instance.slave_kind("LSP0") is None
    assert instance.slave_kind("PR00") == "PR" and instance.slave_kind("PR1A") == "PR"
    assert instance.slave_kind("M001") == "M" and instance.slave_kind("P000") == "P"


def standby_snap(role="PHYSICAL STANDBY", processes=("PMON", "MRP0", "PR00"), delay=30, recovery="MANAGED"):
    views = {
        "V$DATABASE": [row("V$DATABASE", DBID=1, NAME="ODS", DB_UNIQUE_NAME="ODSSTBY", DATABASE_ROLE=role,
                           LOG_MODE="ARCHIVELOG", OPEN_MODE="MOUNTED")],
        "GV$PROCESS": [row("GV$PROCESS", INST_ID=i, PID=n, SPID=str(4000 + n), PNAME=p, PGA_USED_MEM=1,
                           PGA_ALLOC_MEM=2, PGA_MAX_MEM=3)
                       for i in (1, 2) for n, p in enumerate(processes if i == 1 else ("PMON",), 2)],
        "GV$MANAGED_STANDBY": [row("GV$MANAGED_STANDBY", INST_ID=1, PROCESS="MRP0", STATUS="APPLYING_LOG",
                                   DELAY_MINS=delay)] if "MRP0" in processes else [],
        "GV$ARCHIVE_DEST_STATUS": [row("GV$ARCHIVE_DEST_STATUS", INST_ID=1, DEST_ID=1, DEST_NAME="LOG_ARCHIVE_DEST_1",
                                       STATUS="VALID", TYPE="LOCAL", DATABASE_MODE="MOUNTED-STANDBY",
                                       RECOVERY_MODE=recovery, GAP_STATUS=None)],
    }
    return Snapshot("ODSSTBY", "2025-03-11T09:00:00Z", views)


def metrics(module, snap):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in module.collect(snap, Settings())
            for s in f.samples}


def test_apply_running_per_instance_and_stopped():
    got = metrics(dataguard, standby_snap())
    assert got[("oracle_dataguard_apply_running", (("inst_id", "1"),))] == 1.0
    assert got[("oracle_dataguard_apply_running", (("inst_id", "2"),))] == 0.0     # MRP0 runs on one instance
    assert got[("oracle_dataguard_apply_delay_seconds", ())] == 1800.0
    stopped = metrics(dataguard, standby_snap(processes=("PMON",)))
    assert stopped[("oracle_dataguard_apply_running", (("inst_id", "1"),))] == 0.0
    assert ("oracle_dataguard_apply_delay_seconds", ()) not in stopped                # unknown while stopped


def test_real_time_apply_ignores_the_delay():
    got = metrics(dataguard, standby_snap(recovery="MANAGED REAL TIME APPLY"))
    assert got[("oracle_dataguard_apply_delay_seconds", ())] == 0.0


def cascade_snap(local="MANAGED", remote="MANAGED REAL TIME APPLY", delay=10, local_type="LOCAL"):
    """A standby (DELAY_MINS 10, applying archived logs: local RECOVERY_MODE MANAGED) that cascades
    redo to another standby whose apply is real time: GV$ARCHIVE_DEST_STATUS on the standby lists
    its own local destination and the cascade destination, whose RECOVERY_MODE is the remote one's."""
    snap = standby_snap(delay=delay, recovery=local)
    rows = snap.views["GV$ARCHIVE_DEST_STATUS"]
    rows[0]["TYPE"] = local_type
    rows.append(row("GV$ARCHIVE_DEST_STATUS", INST_ID=1, DEST_ID=3, DEST_NAME="LOG_ARCHIVE_DEST_3", STATUS="VALID",
                    TYPE="PHYSICAL", DATABASE_MODE="OPEN_READ-ONLY", RECOVERY_MODE=remote, GAP_STATUS="NO GAP"))
    return snap


def test_a_cascade_destinations_real_time_apply_is_not_the_local_apply_mode():
    """B4: the cascade destination's MANAGED REAL TIME APPLY made the delay 0, and a 602 s apply lag on a
    standby delayed by 10 minutes fired OracleDataGuardLag."""
    got = metrics(dataguard, cascade_snap())
    assert got[("oracle_dataguard_apply_delay_seconds", ())] == 600.0
    # either order of the rows
    snap = cascade_snap()
    snap.views["GV$ARCHIVE_DEST_STATUS"].reverse()
    assert metrics(dataguard, snap)[("oracle_dataguard_apply_delay_seconds", ())] == 600.0


def test_the_local_real_time_apply_still_ignores_the_delay_when_the_cascade_is_delayed():
    got = metrics(dataguard, cascade_snap(local="MANAGED REAL TIME APPLY", remote="MANAGED"))
    assert got[("oracle_dataguard_apply_delay_seconds", ())] == 0.0


def test_the_local_destination_of_the_instance_running_mrp0_decides_on_a_rac_standby():
    """GV$: every instance lists its own local destination; the one running MRP0 is the apply's."""
    def rac(mrp0_mode, other_mode):
        snap = cascade_snap(local=mrp0_mode)
        snap.views["GV$ARCHIVE_DEST_STATUS"].insert(0, row(
            "GV$ARCHIVE_DEST_STATUS", INST_ID=2, DEST_ID=1, DEST_NAME="LOG_ARCHIVE_DEST_1", STATUS="VALID",
            TYPE="LOCAL", DATABASE_MODE="MOUNTED-STANDBY", RECOVERY_MODE=other_mode, GAP_STATUS=None))
        return metrics(dataguard, snap)[("oracle_dataguard_apply_delay_seconds", ())]
    assert rac("MANAGED", "MANAGED REAL TIME APPLY") == 600.0
    assert rac("MANAGED REAL TIME APPLY", "IDLE") == 0.0


def test_without_a_local_destination_the_delay_is_the_apply_processs():
    """No LOCAL row (the view failed to list it): the cascade's mode says nothing of ours; MRP0's DELAY_MINS."""
    snap = cascade_snap()
    snap.views["GV$ARCHIVE_DEST_STATUS"] = [r for r in snap.views["GV$ARCHIVE_DEST_STATUS"] if r["TYPE"] != "LOCAL"]
    assert metrics(dataguard, snap)[("oracle_dataguard_apply_delay_seconds", ())] == 600.0


def test_snapshot_standby_and_primary_have_no_apply_series():
    snap_sb = metrics(dataguard, standby_snap(role="SNAPSHOT STANDBY", processes=("PMON",)))
    assert snap_sb[("oracle_dataguard_snapshot_standby", ())] == 1.0
    assert not [k for k in snap_sb if k[0] in ("oracle_dataguard_apply_running", "oracle_dataguard_apply_delay_seconds")]
    primary = metrics(dataguard, standby_snap(role="PRIMARY", processes=("PMON",)))
    assert primary == {}


def test_primary_exports_gap_status_and_delay_per_destination():
    dest = [row("GV$ARCHIVE_DEST", INST_ID=1, DEST_ID=d, DEST_NAME=f"LOG_ARCHIVE_DEST_{d}", STATUS="VALID",
                TARGET=t, DESTINATION=dst, VALID_NOW="YES", ERROR=None, LOG_SEQUENCE=100, DELAY_MINS=m)
            for d, t, dst, m in ((1, "PRIMARY", "USE_DB_RECOVERY_FILE_DEST", 0), (2, "STANDBY", "odsstby", 30),
                                 (3, "STANDBY", "odsdr", 30))]
    status = [row("GV$ARCHIVE_DEST_STATUS", INST_ID=1, DEST_ID=d, DEST_NAME=f"LOG_ARCHIVE_DEST_{d}", STATUS="VALID",
                  TYPE=t, DATABASE_MODE=mode, RECOVERY_MODE=rec, GAP_STATUS=gap)
              for d, t, mode, rec, gap in ((1, "LOCAL", "OPEN", "IDLE", None),
                                           (2, "PHYSICAL", "MOUNTED-STANDBY", "MANAGED", "UNRESOLVABLE GAP"),
                                           (3, "PHYSICAL", "OPEN_READ-ONLY", "MANAGED REAL TIME APPLY", "NO GAP"))]
    got = metrics(archive_dest, Snapshot("ODS", "2025-03-11T09:00:00Z",
                                         {"GV$ARCHIVE_DEST": dest, "GV$ARCHIVE_DEST_STATUS": status}))
    gap = {dict(k[1])["dest_name"]: v for k, v in got.items() if k[0] == "oracle_archive_dest_gap_status"}
    assert gap == {"LOG_ARCHIVE_DEST_2": 3.0, "LOG_ARCHIVE_DEST_3": 0.0}     # local: GAP_STATUS NULL, no sample
    delay = {dict(k[1])["dest_name"]: v for k, v in got.items() if k[0] == "oracle_archive_dest_delay_seconds"}
    assert delay == {"LOG_ARCHIVE_DEST_1": 0.0, "LOG_ARCHIVE_DEST_2": 1800.0, "LOG_ARCHIVE_DEST_3": 0.0}

