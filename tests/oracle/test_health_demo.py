"""The shipped demo recordings, replayed through the exporter, carry the sessions and
instance-health stories demo/health.py describes (expected values from the rows, never from
the collectors under test)."""
from __future__ import annotations

import json

import pytest

from oracle_exporter.collectors._health import interval_seconds
from oracle_exporter.config import Settings
from oracle_exporter.demo import DEMO_DIR
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.sources.replay import ReplaySource


def load(name: str) -> list[Snapshot]:
    with open(DEMO_DIR / name, encoding="utf-8") as fh:
        return [Snapshot.from_obj(json.loads(line)) for line in fh]


def replay(name: str, database: str) -> list[dict]:
    """Every scrape of one database of a recording through the exporter: [{(name, labels): value}]."""
    snaps = [s for s in load(name) if s.database == database]
    exporter = OracleExporter([Target(database, ReplaySource(database, snaps))], Settings())
    out = []
    try:
        for _ in snaps:
            scrape = {}
            for fam in exporter.scrape():
                for s in fam.samples:
                    labels = {k: v for k, v in s.labels.items() if k != "database"}
                    scrape[(s.name, tuple(sorted(labels.items())))] = s.value
            out.append(scrape)
    finally:
        exporter.close()
    return out


@pytest.fixture(scope="module")
def racdb():
    return replay("demo-rac-outage.jsonl", "RACDB")


@pytest.fixture(scope="module")
def standby():
    return replay("demo-standby.jsonl", "DEMOSB"), [s for s in load("demo-standby.jsonl")]


def get(scrape: dict, name: str, **labels) -> float | None:
    return scrape.get((name, tuple(sorted(labels.items()))))


@pytest.mark.slow
def test_every_health_collector_succeeds_on_every_demo(racdb):
    for name in ("demo-before.jsonl", "demo-after.jsonl", "demo-standby.jsonl", "demo-rac-outage.jsonl"):
        database = {"demo-standby.jsonl": "DEMOSB"}.get(name, "DEMO")
        first = replay(name, database)[0] if name != "demo-rac-outage.jsonl" else racdb[0]
        for collector in ("sessions", "resource_limits", "tablespaces", "recovery_area", "dataguard",
                          "archive_dest", "asm"):
            assert get(first, "oracle_collector_success", collector=collector) == 1.0, (name, collector)


def test_racdb_processes_approach_the_limit(racdb):
    up = [s for s in racdb if get(s, "oracle_up") == 1.0]
    ratio = [get(s, "oracle_resource_current_utilization", inst_id="1", resource="processes")
             / get(s, "oracle_resource_limit", inst_id="1", resource="processes") for s in up]
    assert ratio[0] < 0.93 and ratio[-1] > 0.975
    assert get(up[0], "oracle_resource_limit", inst_id="1", resource="enqueue_resources") is None   # UNLIMITED


def test_racdb_row_lock_episode_and_outage(racdb):
    blocked = [get(s, "oracle_sessions_blocked", inst_id="1") for s in racdb]
    longest = [get(s, "oracle_sessions_blocked_longest_seconds", inst_id="1") for s in racdb]
    episode = [i for i, b in enumerate(blocked) if b]
    assert episode and all(blocked[i] == 2 for i in episode)
    assert episode == list(range(episode[0], episode[-1] + 1))
    assert [longest[i] for i in episode] == sorted(longest[i] for i in episode)   # the block lasts
    assert longest[episode[-1]] - longest[episode[0]] == pytest.approx(15 * (len(episode) - 1))
    # while RACDB is unreachable there are no health series at all (oracle_up 0)
    down = [s for s in racdb if get(s, "oracle_up") == 0.0]
    assert down and not any(k[0].startswith(("oracle_sessions", "oracle_tablespace")) for s in down for k in s)


def test_racdb_tablespaces_by_container_with_their_block_size(racdb):
    snap = [s for s in load("demo-rac-outage.jsonl") if s.database == "RACDB" and s.views][0]
    row = next(r for r in snap.views["CDB_TABLESPACE_USAGE_METRICS"] if r["TABLESPACE_NAME"] == "SALES_DATA")
    assert row["CON_ID"] == 3
    assert get(racdb[0], "oracle_tablespace_used_bytes", container="SALES", tablespace="SALES_DATA",
               contents="PERMANENT") == row["USED_SPACE"] * 8192
    containers = {dict(k[1])["container"] for k in racdb[0] if k[0] == "oracle_tablespace_max_bytes"}
    assert containers == {"CDB$ROOT", "SALES", "HR"}
    grow = [get(s, "oracle_tablespace_used_bytes", container="SALES", tablespace="SALES_DATA",
                contents="PERMANENT") for s in racdb if get(s, "oracle_up") == 1.0]
    assert grow == sorted(grow) and grow[-1] > grow[0]


def test_racdb_archive_destination_fails_and_asm_loses_a_disk(racdb):
    errors = [get(s, "oracle_archive_dest_error", inst_id="1", dest_name="LOG_ARCHIVE_DEST_2") for s in racdb]
    known = [e for e in errors if e is not None]
    assert known[0] == 0 and known[-1] == 1 and known == sorted(known)
    last = racdb[-1]
    assert get(last, "oracle_archive_dest_info", inst_id="1", dest_name="LOG_ARCHIVE_DEST_2", target="STANDBY",
               destination="racdb_dr", status="ERROR", valid_now="YES", error="ORA-12541") == 1
    assert get(racdb[0], "oracle_asm_diskgroup_offline_disks", diskgroup="DATA") == 0
    assert get(last, "oracle_asm_diskgroup_offline_disks", diskgroup="DATA") == 1
    assert get(last, "oracle_asm_diskgroup_usable_file_bytes", diskgroup="DATA") < get(
        racdb[0], "oracle_asm_diskgroup_usable_file_bytes", diskgroup="DATA")


@pytest.mark.slow
def test_demo_fra_fills_with_the_archived_redo():
    scrapes = replay("demo-before.jsonl", "DEMO")
    snaps = load("demo-before.jsonl")
    redo = [next(r["VALUE"] for r in s.views["GV$SYSSTAT"] if r["NAME"] == "redo size") for s in snaps]
    used = [get(s, "oracle_recovery_area_used_bytes") for s in scrapes]
    assert used[-1] - used[0] == redo[-1] - redo[0]
    assert get(scrapes[0], "oracle_recovery_area_limit_bytes") == 400 * 2**30
    # no standby: nothing from the dataguard collector; no ASM: nothing from the asm collector
    assert not any(k[0].startswith(("oracle_dataguard", "oracle_asm")) for s in scrapes for k in s)
    ods = get(scrapes[-1], "oracle_tablespace_used_bytes", container="", tablespace="ODS_DATA",
              contents="PERMANENT") / get(scrapes[-1], "oracle_tablespace_max_bytes", container="",
                                          tablespace="ODS_DATA", contents="PERMANENT")
    assert 0.97 < ods < 1.0


def test_standby_lag_stops_being_computed_then_recovers(standby):
    scrapes, snaps = standby
    computed = [get(s, "oracle_dataguard_lag_computed", kind="transport") for s in scrapes]
    broken = [i for i, c in enumerate(computed) if c == 0]
    assert broken and broken == list(range(broken[0], broken[-1] + 1))
    assert 0 < broken[0] and broken[-1] < len(scrapes) - 1
    for i in broken:           # no transport lag series while not computed; the datum gets older
        assert get(scrapes[i], "oracle_dataguard_lag_seconds", kind="transport") is None
    ages = [get(scrapes[i], "oracle_dataguard_lag_datum_age_seconds", kind="apply") for i in broken]
    assert ages == sorted(ages) and ages[-1] - ages[0] == 15 * (len(broken) - 1)
    # right after: the lag of the gap, from the VALUE text, then back to seconds
    after = broken[-1] + 1
    text = next(r["VALUE"] for r in snaps[after].views["V$DATAGUARD_STATS"] if r["NAME"] == "transport lag")
    assert get(scrapes[after], "oracle_dataguard_lag_seconds", kind="transport") == interval_seconds(text) > 60
    assert get(scrapes[-1], "oracle_dataguard_lag_seconds", kind="transport") <= 1
    assert get(scrapes[0], "oracle_dataguard_lag_computed", kind="apply") == 1
