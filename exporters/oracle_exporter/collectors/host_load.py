"""Host load as Oracle sees it (field-notes C6): GV$SYSMETRIC, 60-second group
(GROUP_ID 2, "System Metrics Long Duration"), and cpu_count (GV$SYSTEM_PARAMETER).
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from ._common import emit, gauge, inst, num, parameter_gauge, per_instance

NAME = "host_load"
VIEWS = ("GV$SYSMETRIC", "GV$SYSTEM_PARAMETER")
GROUP_ID = 2  # the registry's GV$SYSMETRIC statement reads this group (views.SYSMETRIC_GROUP_ID)

# metric, help, METRIC_NAME, scale
METRICS: tuple[tuple[str, str, str, float], ...] = (
    ("oracle_host_os_load", "Host run queue as Oracle sees it ('Current OS Load', GV$SYSMETRIC 60 s group).",
     "Current OS Load", 1.0),
    ("oracle_host_cpu_utilization_ratio", "Host CPU utilisation 0..1 ('Host CPU Utilization (%)'/100).",
     "Host CPU Utilization (%)", 0.01),
    ("oracle_average_active_sessions", "Average active sessions over the last 60 s ('Average Active Sessions').",
     "Average Active Sessions", 1.0),
    ("oracle_database_cpu_time_ratio", "Share of DB time spent on CPU 0..1 ('Database CPU Time Ratio'/100).",
     "Database CPU Time Ratio", 0.01),
    ("oracle_database_wait_time_ratio", "Share of DB time spent waiting 0..1 ('Database Wait Time Ratio'/100).",
     "Database Wait Time Ratio", 0.01),
)

NAMES = {"GV$SYSMETRIC": tuple(m for _, _, m, _ in METRICS), "GV$SYSTEM_PARAMETER": ("cpu_count",)}


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    values: dict[str, dict[str, float]] = {}
    for row in snapshot.rows("GV$SYSMETRIC"):
        i = inst(row)
        group = num(row.get("GROUP_ID"))
        value = num(row.get("VALUE"))
        name = row.get("METRIC_NAME")
        if i is None or name is None or value is None or (group is not None and int(group) != GROUP_ID):
            continue
        values.setdefault(i, {}).setdefault(str(name), value)
    families = per_instance(values, METRICS, gauge)
    families.append(parameter_gauge(snapshot, "cpu_count", "oracle_cpus",
                                    "CPUs the instance may use (GV$SYSTEM_PARAMETER cpu_count)."))
    yield from emit(families)
