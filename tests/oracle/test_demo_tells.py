"""The demo recordings have no tell a DBA spots at a glance (issue 22 point 11): commit counters
that are one number four times, more processes than logons can explain, a RAC without global
cache resources, a dozen latches, a background process list from 10g, a physical standby
committing, PX dequeue waits for work counted as Other. Checked on the generated recordings."""
from __future__ import annotations

import json

import pytest

from oracle_exporter import demo
from oracle_exporter.snapshot import Snapshot

COMMIT_STATS = ("user commits", "commit wait requested", "commit wait performed", "redo synch writes")
# Oracle Database Reference, "Background Processes" (V$PROCESS.PNAME), present in every 19c instance
CORE_19C = {"PMON", "CLMN", "PSP0", "VKTM", "GEN0", "MMAN", "DIAG", "DBRM", "PMAN", "DIA0", "DBW0", "LGWR", "CKPT",
            "SMON", "SMCO", "RECO", "LREG", "MMON", "MMNL", "TMON", "LG00", "LG01"}
RAC_ONLY = {"LMON", "LMD0", "LMS0", "LMHB", "LCK0", "RMS0", "ACMS"}
ASM_ONLY = {"ASMB", "RBAL"}
# My Oracle Support Doc ID 1097154.1 (Master Note Parallel Execution Wait Events): Idle vs Other
PX_IDLE = {"PX Idle Wait", "PX Deque wait", "PX Deq: Execution Msg", "PX Deq: Table Q Normal", "PX Deq: Execute Reply",
           "PX Deq Credit: send blkd", "PX Deq Credit: need buffer", "PX Deq: Msg Fragment", "PX Deq: Join ACK",
           "PX Deq: Parse Reply", "PX Deq: Table Q Sample"}
PX_OTHER = {"PX Deq: Slave Session Stats", "PX qref latch", "PX Deq: Signal ACK RSG", "PX Deq: Signal ACK EXT",
            "PX Deq: Slave Join Frag", "PX Nsq: PQ load info query", "PX Deq: reap credit"}


def load(name: str, database: str) -> list[Snapshot]:
    with open(demo.path(name), encoding="utf-8") as fh:
        snaps = [Snapshot.from_obj(json.loads(line)) for line in fh]
    return [s for s in snaps if s.database == database and s.views]


@pytest.fixture(scope="module")
def primaries() -> dict[str, list[Snapshot]]:
    return {"DEMO": load("demo-before.jsonl", "DEMO"), "DEMO after": load("demo-after.jsonl", "DEMO"),
            "RACDB": load("demo-rac-outage.jsonl", "RACDB")}


def named(snap: Snapshot, view: str, column: str, inst: int) -> dict[str, dict]:
    return {r[column]: r for r in snap.rows(view) if r["INST_ID"] == inst}


def instances(snap: Snapshot) -> list[int]:
    return sorted({r["INST_ID"] for r in snap.rows("GV$INSTANCE")})


def test_commit_counters_are_four_numbers_that_agree(primaries):
    for name, snaps in primaries.items():
        for snap in (snaps[0], snaps[-1]):
            for inst in instances(snap):
                v = {k: named(snap, "GV$SYSSTAT", "NAME", inst)[k]["VALUE"] for k in COMMIT_STATS}
                assert len(set(v.values())) == 4, (name, v)                 # no number repeated
                assert v["commit wait requested"] >= v["commit wait performed"], (name, v)
                assert v["user commits"] >= v["commit wait requested"], (name, v)
                assert abs(v["redo synch writes"] / v["user commits"] - 1) < 0.01, (name, v)
        first, last = snaps[0], snaps[-1]
        inst = instances(first)[0]
        grown = {k: named(last, "GV$SYSSTAT", "NAME", inst)[k]["VALUE"] - named(first, "GV$SYSSTAT", "NAME", inst)[k]["VALUE"]
                 for k in COMMIT_STATS}
        assert grown["commit wait requested"] >= grown["commit wait performed"] > 0, (name, grown)


def test_a_physical_standby_does_not_commit():
    snaps = load("demo-standby.jsonl", "DEMOSB")
    assert snaps[0].rows("V$DATABASE")[0]["DATABASE_ROLE"] == "PHYSICAL STANDBY"
    first, last = (named(s, "GV$SYSSTAT", "NAME", 1) for s in (snaps[0], snaps[-1]))
    for stat in (*COMMIT_STATS, "redo synch time (usec)"):
        assert first[stat]["VALUE"] == last[stat]["VALUE"], stat
    assert first["user commits"]["VALUE"] < 100_000                      # not 84.6 million
    assert first["commit wait requested"]["VALUE"] >= first["commit wait performed"]["VALUE"]


def test_processes_logons_and_pga_process_count_are_one_count(primaries):
    for name, snaps in primaries.items():
        for snap in snaps[::10]:
            for inst in instances(snap):
                limits = named(snap, "GV$RESOURCE_LIMIT", "RESOURCE_NAME", inst)
                processes = limits["processes"]["CURRENT_UTILIZATION"]
                logons = named(snap, "GV$SYSSTAT", "NAME", inst)["logons current"]["VALUE"]
                pga = named(snap, "GV$PGASTAT", "NAME", inst)
                background = [r for r in snap.rows("GV$PROCESS") if r["INST_ID"] == inst]
                assert 0 < processes - logons <= 10, (name, processes, logons)   # a session per process
                assert pga["process count"]["VALUE"] == processes, name
                assert pga["max processes count"]["VALUE"] == limits["processes"]["MAX_UTILIZATION"], name
                assert len(background) < processes - 100, name              # and foreground servers besides


def test_a_rac_instance_tracks_global_cache_resources(primaries):
    for snap in primaries["RACDB"][::10]:
        for inst in instances(snap):
            gcs = named(snap, "GV$RESOURCE_LIMIT", "RESOURCE_NAME", inst)["gcs_resources"]
            assert 500_000 < gcs["CURRENT_UTILIZATION"] <= gcs["MAX_UTILIZATION"] <= int(gcs["LIMIT_VALUE"])
    assert "gcs_resources" not in named(primaries["DEMO"][0], "GV$RESOURCE_LIMIT", "RESOURCE_NAME", 1)


def test_latches_are_a_19c_instances_many(primaries):
    for name, snaps in primaries.items():
        for inst in instances(snaps[-1]):
            latches = named(snaps[-1], "GV$LATCH", "NAME", inst)
            assert len(latches) >= 40, (name, len(latches))
            assert {"redo allocation", "redo copy", "redo writing", "cache buffers chains", "shared pool",
                    "undo global data", "simulator hash latch", "lgwr LWN SCN"} <= set(latches)
            assert ({"gc element", "gcs resource hash"} <= set(latches)) == (name == "RACDB")


def test_background_processes_are_a_19c_list(primaries):
    for name, snaps in primaries.items():
        for inst in instances(snaps[0]):
            pnames = [r["PNAME"] for r in snaps[0].rows("GV$PROCESS") if r["INST_ID"] == inst]
            assert len(pnames) == len(set(pnames)), name
            assert CORE_19C <= set(pnames), (name, CORE_19C - set(pnames))
            rac_asm = name == "RACDB"                                        # the RAC database is on ASM
            assert (RAC_ONLY <= set(pnames)) == rac_asm and bool(RAC_ONLY & set(pnames)) == rac_asm, name
            assert (ASM_ONLY <= set(pnames)) == rac_asm and bool(ASM_ONLY & set(pnames)) == rac_asm, name


def test_px_waits_for_work_are_idle_and_px_overhead_is_other(primaries):
    snap = primaries["RACDB"][-1]
    classes = {r["EVENT"]: r["WAIT_CLASS"] for r in snap.rows("GV$SYSTEM_EVENT")}
    px = {e: c for e, c in classes.items() if e.startswith("PX ")}
    assert PX_IDLE <= set(px) and PX_OTHER <= set(px)
    assert {e for e, c in px.items() if c == "Idle"} == PX_IDLE
    assert {e for e, c in px.items() if c == "Other"} == PX_OTHER
    waiting = {r["EVENT"] for s in primaries["RACDB"] for r in s.rows("GV$SESSION")}
    assert not waiting & PX_IDLE                                          # sessions waiting for work are not shown


# --- issue 22 review B7: a MOUNTED physical standby opens no user session, runs no job queue or AQ,
# has no temp or undo activity and generates no redo of its own -------------------------------------

@pytest.fixture(scope="module")
def standby() -> list[Snapshot]:
    snaps = load("demo-standby.jsonl", "DEMOSB")
    assert snaps[0].rows("V$DATABASE")[0]["OPEN_MODE"] == "MOUNTED"
    return snaps


def stat(snap: Snapshot, name: str) -> int:
    return named(snap, "GV$SYSSTAT", "NAME", 1)[name]["VALUE"]


def test_a_mounted_standby_has_only_background_sessions(standby):
    """No user can connect to a MOUNTED database: no JDBC sessions, no one waiting on log file sync."""
    rows = [r for s in standby for r in s.rows("GV$SESSION")]
    assert rows                                                       # its background processes do wait
    assert {r["TYPE"] for r in rows} == {"BACKGROUND"}
    assert {r["USERNAME"] for r in rows} == {None}
    assert all(r["PROGRAM"].startswith("oracle@") for r in rows)
    assert not {r["WAIT_CLASS"] for r in rows} & {"Commit", "User I/O", "Application"}
    assert "log file parallel write" not in {r["EVENT"] for r in rows}  # LGWR writes no redo on a standby
    for snap in standby:                                              # the recovery slave reads redo
        assert [r["PROGRAM"] for r in snap.rows("GV$SESSION") if r["EVENT"] == "log file sequential read"
                and r["PROGRAM"].endswith("(PR00)")] == ["oracle@dbhost02 (PR00)"]


def test_a_mounted_standby_has_no_temp_or_undo_activity(standby):
    for snap in standby:
        assert snap.rows("GV$TEMPSEG_USAGE") == []                      # nobody sorts or hashes there
        undo = snap.rows("GV$UNDOSTAT")                              # no query, no ORA-01555, no auto-tuning
        assert undo and {(r["MAXQUERYLEN"], r["SSOLDERRCNT"], r["TUNED_UNDORETENTION"]) for r in undo} == {(0, 0, 900)}
        tx = named(snap, "GV$RESOURCE_LIMIT", "RESOURCE_NAME", 1)["transactions"]
        assert (tx["CURRENT_UTILIZATION"], tx["MAX_UTILIZATION"]) == (0, 0)


def test_a_mounted_standby_logs_nobody_on_and_generates_no_redo(standby, primaries):
    first, last = standby[0], standby[-1]
    for name in ("logons cumulative", "logons current", "redo size", "redo entries", "redo writes",
                 "redo blocks written", "redo wastage", "redo write time (usec)", "redo log space requests"):
        assert stat(first, name) == stat(last, name), name
    assert stat(first, "logons cumulative") >= stat(first, "logons current")
    assert stat(first, "redo size") != stat(primaries["DEMO after"][0], "redo size")   # not DEMO's counter
    assert stat(first, "redo size") < 100 * 1024 * 1024           # a few user commits' worth, long ago
    # the redo counters and LGWR's waits are one story: LGWR writes nothing, no one waits for it
    waits = {(s.time, r["EVENT"]): r["TOTAL_WAITS"] for s in (first, last) for r in s.rows("GV$SYSTEM_EVENT")
             if r["EVENT"] in ("log file sync", "log file parallel write")}
    for event in ("log file sync", "log file parallel write"):
        assert waits[(first.time, event)] == waits[(last.time, event)], event
    assert waits[(first.time, "log file parallel write")] == stat(first, "redo writes")
    assert waits[(first.time, "log file sync")] <= stat(first, "user commits")


def test_a_mounted_standby_runs_no_job_queue_or_aq_processes(standby):
    pnames = {r["PNAME"] for r in standby[0].rows("GV$PROCESS")}
    assert not pnames & {"CJQ0", "AQPC", "QM02", "QM00", "QM01"}
    assert not [p for p in pnames if len(p) == 4 and p[0] in "QJ" and p[1:].isalnum() and p[1].isdigit()]
    assert {"MRP0", "PR00", "PR01"} <= pnames                         # the apply is kept
    assert CORE_19C <= pnames
