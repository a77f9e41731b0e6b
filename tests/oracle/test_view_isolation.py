"""Issue 22.2 over every collector: fail each view of each collector that reads more than one, on
every demo database, and check that exactly the families that view feeds go (per their
declaration, exporter_common.declare.Family.views) while every other family keeps its exact
samples, and that oracle_view_errors names the view and oracle_up stays 1."""
from __future__ import annotations

import json

import pytest

from oracle_exporter.collectors import COLLECTORS
from oracle_exporter.demo import SHIPPED, path
from oracle_exporter.snapshot import Snapshot

from test_standby import SELF, scrape, without

DENIED = "ORA-00942: table or view does not exist"


def _first_full_snapshots() -> dict[str, Snapshot]:
    """Per demo recording and database, its first snapshot in which every view answered."""
    out: dict[str, Snapshot] = {}
    for name in sorted(SHIPPED):
        with open(path(name), encoding="utf-8") as fh:
            for line in fh:
                snap = Snapshot.from_obj(json.loads(line))
                key = f"{name.removesuffix('.jsonl')}/{snap.database}"
                if key not in out and snap.views and not snap.errors:
                    out[key] = snap
    return out


SNAPSHOTS = _first_full_snapshots()


def _fed_by(view: str, names: set[str]) -> set[str]:
    """The family names (of those exposed) that a failure of ``view`` must remove: for every
    collector reading it, the families declared as fed by it (every family when none is declared)."""
    out = set()
    for module in COLLECTORS.values():
        spec = module.SPEC
        if view not in spec.reads:
            continue
        declared = {f.name for f in spec.metrics} | {f.family_name for f in spec.metrics}
        for name in names:
            family = next((c for c in _candidates(name) if c in declared), None)
            if family is not None and view in spec.fed_by(family):
                out.add(name)
    return out


def _candidates(sample: str) -> list[str]:
    """The declared family names a sample name may belong to (histogram and counter suffixes)."""
    out = [sample]
    for suffix in ("_total", "_bucket", "_count", "_sum", "_created"):
        if sample.endswith(suffix):
            out.append(sample[:-len(suffix)])
    return out


CASES = [(key, view) for key, snap in SNAPSHOTS.items()
         for module in COLLECTORS.values() if len(module.SPEC.reads) > 1
         for view in module.SPEC.reads if view in snap.views]


def test_the_cases_cover_every_multi_view_collector_of_the_demo():
    readers = {m.SPEC.name for m in COLLECTORS.values() if len(m.SPEC.reads) > 1}
    covered = {m.SPEC.name for m in COLLECTORS.values()
               for _, view in CASES if view in m.SPEC.reads and len(m.SPEC.reads) > 1}
    assert len(SNAPSHOTS) >= 4 and len(CASES) >= 30
    assert {"instance", "pga", "asm", "dataguard"} <= covered <= readers


@pytest.mark.slow
@pytest.mark.parametrize("key, view", sorted(set(CASES)))
def test_a_failing_view_removes_only_the_families_it_feeds(key, view):
    snap = SNAPSHOTS[key]
    (good,) = scrape(snap)
    (bad,) = scrape(without(snap, view, DENIED))
    names = {k[0] for k in good}
    gone = _fed_by(view, names)
    for key, value in good.items():
        if key[0] in SELF or key[0] in gone:
            continue
        assert bad.get(key) == value, (view, key)                 # every other sample, exactly
    assert not [k for k in bad if k[0] in gone], view
    assert bad[("oracle_view_errors", (("view", view),))] == 1.0
    assert bad[("oracle_up", ())] == 1.0


@pytest.mark.parametrize("view", ["GV$INSTANCE", "GV$SYSTEM_PARAMETER", "GV$LOG"])
def test_a_view_redo_reads_beside_gv_sysstat_keeps_the_statistics_alerts_read(view):
    """Review finding: a missing grant on GV$INSTANCE removed 23 redo and commit families, which
    silenced R10, R11 and R15. The statistics come from GV$SYSSTAT alone and stay."""
    snap = SNAPSHOTS["demo-before/DEMO"]
    (bad,) = scrape(without(snap, view, DENIED))
    for name in ("oracle_redo_buffer_allocation_retries_total", "oracle_redo_log_space_requests_total",
                 "oracle_user_commits_total", "oracle_redo_synch_time_seconds_total",
                 "oracle_db_cpu_seconds_total", "oracle_host_os_load"):
        assert any(k[0] == name for k in bad), (view, name)
    switches = any(k[0] == "oracle_redo_log_switches_total" for k in bad)
    assert switches == (view == "GV$SYSTEM_PARAMETER")      # the thread -> instance map needs both GV$LOG, GV$INSTANCE
