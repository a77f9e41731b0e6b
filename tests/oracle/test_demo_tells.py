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
