"""Host load as Oracle sees it (field-notes C6): GV$SYSMETRIC, 60-second group
(GROUP_ID 2, "System Metrics Long Duration"), and cpu_count (GV$SYSTEM_PARAMETER).
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import PARAMETER, SYSMETRIC
from ._common import declared_parameter, declared_per_instance, emit, inst, num

GROUP_ID = 2  # the registry's GV$SYSMETRIC statement reads this group (views.SYSMETRIC_GROUP_ID)

# metric, METRIC_NAME, scale
METRICS: tuple[tuple[str, str, float], ...] = (
    ("oracle_host_os_load", "Current OS Load", 1.0),
    ("oracle_host_cpu_utilization_ratio", "Host CPU Utilization (%)", 0.01),
    ("oracle_average_active_sessions", "Average Active Sessions", 1.0),
    ("oracle_database_cpu_time_ratio", "Database CPU Time Ratio", 0.01),
    ("oracle_database_wait_time_ratio", "Database Wait Time Ratio", 0.01),
)

_INST = ("inst_id",)
SPEC = Collector(
    "host_load", "Host load as Oracle sees it: GV$SYSMETRIC 60-second group and cpu_count (field-notes C6).",
    reads=(SYSMETRIC.name, PARAMETER.name),
    metrics=(
        Family("oracle_host_os_load", "gauge",
               "Host run queue as Oracle sees it ('Current OS Load', GV$SYSMETRIC 60 s group).", _INST,
               source="'Current OS Load' (C6)", measure='processes', views=(SYSMETRIC.name,)),
        Family("oracle_host_cpu_utilization_ratio", "gauge",
               "Host CPU utilisation 0..1 ('Host CPU Utilization (%)'/100).", _INST,
               source="'Host CPU Utilization (%)' / 100", measure='ratio 0..1', views=(SYSMETRIC.name,)),
        Family("oracle_average_active_sessions", "gauge",
               "Average active sessions over the last 60 s ('Average Active Sessions').", _INST,
               source="'Average Active Sessions' (11.1+)", since="11.1", measure='sessions', views=(SYSMETRIC.name,)),
        Family("oracle_database_cpu_time_ratio", "gauge",
               "Share of DB time spent on CPU 0..1 ('Database CPU Time Ratio'/100).", _INST,
               source="'Database CPU Time Ratio' / 100", measure='ratio 0..1', views=(SYSMETRIC.name,)),
        Family("oracle_database_wait_time_ratio", "gauge",
               "Share of DB time spent waiting 0..1 ('Database Wait Time Ratio'/100).", _INST,
               source="'Database Wait Time Ratio' / 100", measure='ratio 0..1', views=(SYSMETRIC.name,)),
        Family("oracle_cpus", "gauge", "CPUs the instance may use (GV$SYSTEM_PARAMETER cpu_count).", _INST,
               source='GV$SYSTEM_PARAMETER cpu_count (named without `_count`, which Prometheus reserves for histograms and summaries)', measure='CPUs', views=(PARAMETER.name,)),
    ), doc="GV$SYSMETRIC values are Oracle's own averages over the last 60-second interval (INTSIZE_CSEC about 6000); the 15-second group (GROUP_ID 3) is ignored.", title='Host load as Oracle sees it')
NAME, VIEWS = SPEC.name, SPEC.reads

NAMES = {"GV$SYSMETRIC": tuple(m for _, m, _ in METRICS), "GV$SYSTEM_PARAMETER": ("cpu_count",)}


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
    families = declared_per_instance(SPEC, values, METRICS)
    families.append(declared_parameter(snapshot, "cpu_count", SPEC.metric("oracle_cpus")))
    yield from emit(families)
