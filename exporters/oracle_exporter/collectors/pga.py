"""PGA (field-notes M4): GV$PGASTAT, work-area executions (GV$SYSSTAT),
PGA per background process (GV$PROCESS), pga_aggregate_limit (GV$SYSTEM_PARAMETER).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family
from exporter_common.families import add_rows

from ..views import PARAMETER, PGASTAT as PGASTAT_VIEW, PROCESS, SYSSTAT
from ._common import _EXACT, columns, declared_parameter, declared_per_instance, emit, inst, inst_stats, num, sorted_inst

# metric, GV$PGASTAT name, scale
PGASTAT: tuple[tuple[str, str, float], ...] = (
    ("oracle_pga_target_bytes", "aggregate PGA target parameter", 1.0),
    ("oracle_pga_auto_target_bytes", "aggregate PGA auto target", 1.0),
    ("oracle_pga_allocated_bytes", "total PGA allocated", 1.0),
    ("oracle_pga_inuse_bytes", "total PGA inuse", 1.0),
    ("oracle_pga_max_allocated_bytes", "maximum PGA allocated", 1.0),
    ("oracle_pga_freeable_bytes", "total freeable PGA memory", 1.0),
    ("oracle_pga_global_memory_bound_bytes", "global memory bound", 1.0),
    ("oracle_pga_cache_hit_ratio", "cache hit percentage", 0.01),
    ("oracle_pga_over_allocation_count_total", "over allocation count", 1.0),
    ("oracle_pga_bytes_processed_total", "bytes processed", 1.0),
    ("oracle_pga_extra_bytes_read_written_total", "extra bytes read/written", 1.0),
)

WORKAREA = (("optimal", "workarea executions - optimal"), ("onepass", "workarea executions - onepass"),
            ("multipass", "workarea executions - multipass"))

# metric, GV$PROCESS column (summed per inst_id and PNAME)
PROCESS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("oracle_background_process_pga_allocated_bytes", "PGA_ALLOC_MEM"),
    ("oracle_background_process_pga_used_bytes", "PGA_USED_MEM"),
    ("oracle_background_process_pga_max_bytes", "PGA_MAX_MEM"),
)

_INST = ("inst_id",)
_PROC = ("inst_id", "pname")
_PGASTAT = (PGASTAT_VIEW.name,)
_PNAME = "PNAME set (11.1+; before, BACKGROUND = '1' named from PROGRAM)"
SPEC = Collector(
    "pga", "PGA usage, work-area executions and PGA per background process (field-notes M4).",
    reads=(PGASTAT_VIEW.name, SYSSTAT.name, PROCESS.name, PARAMETER.name),
    metrics=(
        Family("oracle_pga_target_bytes", "gauge", "PGA_AGGREGATE_TARGET, bytes ('aggregate PGA target parameter').",
               _INST, source="GV$PGASTAT 'aggregate PGA target parameter' (0 = automatic PGA management off)", views=_PGASTAT),
        Family("oracle_pga_auto_target_bytes", "gauge",
               "PGA available to work areas in automatic mode, bytes ('aggregate PGA auto target').", _INST,
               source="'aggregate PGA auto target'", views=_PGASTAT),
        Family("oracle_pga_allocated_bytes", "gauge", "PGA allocated by the instance, bytes ('total PGA allocated').",
               _INST, source="'total PGA allocated'", views=_PGASTAT),
        Family("oracle_pga_inuse_bytes", "gauge", "PGA in use, bytes ('total PGA inuse').", _INST,
               source="'total PGA inuse'", views=_PGASTAT),
        Family("oracle_pga_max_allocated_bytes", "gauge",
               "Highest PGA allocated since instance start, bytes ('maximum PGA allocated').", _INST,
               source="'maximum PGA allocated' (since startup)", views=_PGASTAT),
        Family("oracle_pga_freeable_bytes", "gauge",
               "Allocated PGA that can be freed, bytes ('total freeable PGA memory').", _INST,
               source="'total freeable PGA memory'", views=_PGASTAT),
        Family("oracle_pga_global_memory_bound_bytes", "gauge",
               "Largest work area allowed in automatic mode, bytes ('global memory bound').", _INST,
               source="'global memory bound' (below 1 MB: raise the target)", views=_PGASTAT),
        Family("oracle_pga_cache_hit_ratio", "gauge",
               "PGA cache hit percentage since instance start, as a ratio 0..1 ('cache hit percentage'/100).", _INST,
               source="'cache hit percentage' / 100 (cumulative since startup)", measure='ratio 0..1', views=_PGASTAT),
        Family("oracle_pga_over_allocation_count_total", "counter",
               "Times PGA allocated exceeded PGA_AGGREGATE_TARGET since instance start ('over allocation count'; M4).",
               _INST, source="'over allocation count' (M4)", measure='events', views=_PGASTAT),
        Family("oracle_pga_bytes_processed_total", "counter", "Bytes processed by work areas ('bytes processed').",
               _INST, source="'bytes processed'", measure='bytes', views=_PGASTAT),
        Family("oracle_pga_extra_bytes_read_written_total", "counter",
               "Extra bytes read/written by one-pass and multi-pass work areas ('extra bytes read/written').", _INST,
               source="'extra bytes read/written'", measure='bytes', views=_PGASTAT),
        Family("oracle_pga_aggregate_limit_bytes", "gauge",
               "PGA_AGGREGATE_LIMIT, bytes (GV$SYSTEM_PARAMETER; 12.1+; 0 = no limit).", _INST,
               source='GV$SYSTEM_PARAMETER pga_aggregate_limit (12.1+; 0 = no limit)', since="12.1", views=(PARAMETER.name,)),
        Family("oracle_pga_workarea_executions_total", "counter",
               "Work-area executions by mode (GV$SYSSTAT 'workarea executions - optimal|onepass|multipass').",
               ("inst_id", "kind"),
               source="GV$SYSSTAT 'workarea executions - optimal/onepass/multipass'", measure='executions', note='Labels: inst_id, kind (`optimal`, `onepass`, `multipass`).', views=(SYSSTAT.name,)),
        Family("oracle_background_process_pga_allocated_bytes", "gauge",
               "PGA allocated by a background process, bytes (GV$PROCESS.PGA_ALLOC_MEM).", _PROC,
               source='GV$PROCESS.PGA_ALLOC_MEM where PNAME is set (11.1+)', views=(PROCESS.name,)),
        Family("oracle_background_process_pga_used_bytes", "gauge",
               "PGA in use by a background process, bytes (GV$PROCESS.PGA_USED_MEM).", _PROC,
               source='GV$PROCESS.PGA_USED_MEM', views=(PROCESS.name,)),
        Family("oracle_background_process_pga_max_bytes", "gauge",
               "Highest PGA ever allocated by a background process, bytes (GV$PROCESS.PGA_MAX_MEM).", _PROC,
               source='GV$PROCESS.PGA_MAX_MEM', views=(PROCESS.name,)),
    ), title='PGA')
NAME, VIEWS = SPEC.name, SPEC.reads

NAMES = {"GV$SYSSTAT": tuple(s for _, s in WORKAREA), "GV$SYSTEM_PARAMETER": ("pga_aggregate_limit",)}


def _by_inst(key: tuple[str, str]) -> tuple:
    return (len(key[0]), key)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    pga = inst_stats(snapshot, "GV$PGASTAT")
    families = declared_per_instance(SPEC, pga, PGASTAT)

    families.append(declared_parameter(snapshot, "pga_aggregate_limit",
                                       SPEC.metric("oracle_pga_aggregate_limit_bytes")))

    stats = inst_stats(snapshot)
    workarea = SPEC.family("oracle_pga_workarea_executions_total")
    for i in sorted_inst(stats):
        for kind, stat in WORKAREA:
            if stat in stats[i]:
                workarea.add_metric([i, kind], stats[i][stat])
    families.append(workarea)

    sums: dict[str, dict[tuple[str, str], float]] = {col: defaultdict(float) for _, col in PROCESS_COLUMNS}
    totals = [sums[col] for _, col in PROCESS_COLUMNS]
    for i, pname, *row in columns(snapshot.rows("GV$PROCESS"), ("INST_ID", "PNAME") + tuple(sums)):
        i = str(i) if type(i) is int and -_EXACT < i < _EXACT else inst({"INST_ID": i})  # inst(), num() inlined
        if i is None or not pname:
            continue
        key = (i, str(pname))
        for total, value in zip(totals, row):
            value = float(value) if type(value) is int else num(value)
            if value is not None:
                total[key] += value
    for name, col in PROCESS_COLUMNS:
        family = SPEC.family(name)
        total = sums[col]
        add_rows(family, [(key, total[key]) for key in sorted(total, key=_by_inst)])
        families.append(family)
    yield from emit(families)
