"""Every family an oracle-exporter collector emits is declared by that collector's SPEC with exactly
its type and label names (the dbhost side: tests/dbhost/test_declarations.py), on every demo
recording with every collector on, and on the simulator's full snapshot."""
from __future__ import annotations

import glob
from pathlib import Path

from oracle_sim import OracleSim

from exporter_common.config import Fields
from oracle_exporter.collectors import COLLECTORS
from oracle_exporter.config import parse_settings
from oracle_exporter.sources.replay import replay_sources

ROOT = Path(__file__).resolve().parents[2]
ALL_ON = parse_settings(Fields("test", "", {"collectors": {n: True for n in COLLECTORS}, "idle_wait_events": True}))


def snapshots():
    yield OracleSim().snapshot()
    for rec in sorted(glob.glob(str(ROOT / "exporters/oracle_exporter/demo/*.jsonl"))):
        for src in replay_sources(rec):
            yield from src.snapshots[::7]


def test_every_emitted_family_is_declared_with_its_type_and_labels():
    seen: set[str] = set()
    problems = []
    for snap in snapshots():
        for name, module in COLLECTORS.items():
            for fam in module.collect(snap, ALL_ON):
                declared = {f.family_name: f for f in module.SPEC.metrics}.get(fam.name)
                if declared is None:
                    problems.append(f"{name}: {fam.name} is not declared")
                    continue
                seen.add(declared.name)
                if declared.type != fam.type or fam.documentation != declared.help:
                    problems.append(f"{name}: {fam.name} emitted as {fam.type} / help differs")
                for s in fam.samples:
                    labels = set(s.labels) - ({"le"} if fam.type == "histogram" else set())
                    if labels != set(declared.labels):
                        problems.append(f"{name}: {s.name} has labels {sorted(labels)}, declared {declared.labels}")
                        break
    assert sorted(set(problems)) == []
    declared_all = {f.name for m in COLLECTORS.values() for f in m.SPEC.metrics}
    # custom metrics need a site's statements
    unseen = declared_all - seen - {"oracle_custom_query_success", "oracle_pdbs_omitted", "oracle_wait_events_omitted"}
    unseen -= {"oracle_backup_policy_max_age_seconds"}   # needs a site's backup_policy (test_backups_collector)
    unseen -= {"oracle_scheduler_job_failures", "oracle_scheduler_job_last_error_code",   # opt-in, in no recording
               "oracle_scheduler_job_failures_omitted"}                                 # (test_scheduler_jobs_collector)
    unseen -= {"oracle_alert_log_last_critical_timestamp_seconds"}  # the demo's alert log has no critical
                                                                    # message (test_alert_log_collector)
    assert unseen == set()
