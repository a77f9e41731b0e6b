"""PGA (field-notes M4): GV$PGASTAT, work-area executions (GV$SYSSTAT),
PGA per background process (GV$PROCESS), pga_aggregate_limit (GV$SYSTEM_PARAMETER).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from prometheus_client.core import Metric

from ._common import by_inst_name, counter, emit, gauge, inst, num, parameter_gauge, sorted_inst

NAME = "pga"
VIEWS = ("GV$PGASTAT", "GV$SYSSTAT", "GV$PROCESS", "GV$SYSTEM_PARAMETER")

# metric, kind, help, GV$PGASTAT name, scale
PGASTAT: tuple[tuple[str, str, str, str, float], ...] = (
    ("oracle_pga_target_bytes", "gauge", "PGA_AGGREGATE_TARGET, bytes ('aggregate PGA target parameter').",
     "aggregate PGA target parameter", 1.0),
    ("oracle_pga_auto_target_bytes", "gauge",
     "PGA available to work areas in automatic mode, bytes ('aggregate PGA auto target').",
     "aggregate PGA auto target", 1.0),
    ("oracle_pga_allocated_bytes", "gauge", "PGA allocated by the instance, bytes ('total PGA allocated').",
     "total PGA allocated", 1.0),
    ("oracle_pga_inuse_bytes", "gauge", "PGA in use, bytes ('total PGA inuse').", "total PGA inuse", 1.0),
    ("oracle_pga_max_allocated_bytes", "gauge",
     "Highest PGA allocated since instance start, bytes ('maximum PGA allocated').", "maximum PGA allocated", 1.0),
    ("oracle_pga_freeable_bytes", "gauge", "Allocated PGA that can be freed, bytes ('total freeable PGA memory').",
     "total freeable PGA memory", 1.0),
    ("oracle_pga_global_memory_bound_bytes", "gauge",
     "Largest work area allowed in automatic mode, bytes ('global memory bound').", "global memory bound", 1.0),
    ("oracle_pga_cache_hit_ratio", "gauge",
     "PGA cache hit percentage since instance start, as a ratio 0..1 ('cache hit percentage'/100).",
     "cache hit percentage", 0.01),
    ("oracle_pga_over_allocation_count_total", "counter",
     "Times PGA allocated exceeded PGA_AGGREGATE_TARGET since instance start ('over allocation count'; M4).",
     "over allocation count", 1.0),
    ("oracle_pga_bytes_processed_total", "counter", "Bytes processed by work areas ('bytes processed').",
     "bytes processed", 1.0),
    ("oracle_pga_extra_bytes_read_written_total", "counter",
     "Extra bytes read/written by one-pass and multi-pass work areas ('extra bytes read/written').",
     "extra bytes read/written", 1.0),
)

WORKAREA = (("optimal", "workarea executions - optimal"), ("onepass", "workarea executions - onepass"),
            ("multipass", "workarea executions - multipass"))

NAMES = {"GV$SYSSTAT": tuple(s for _, s in WORKAREA), "GV$SYSTEM_PARAMETER": ("pga_aggregate_limit",)}


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    families = []
    pga = by_inst_name(snapshot.rows("GV$PGASTAT"))
    for name, kind, doc, stat, scale in PGASTAT:
        family = (counter if kind == "counter" else gauge)(name, doc, ["inst_id"])
        for i in sorted_inst(pga):
            if stat in pga[i]:
                family.add_metric([i], pga[i][stat] * scale)
        families.append(family)

    families.append(parameter_gauge(snapshot, "pga_aggregate_limit", "oracle_pga_aggregate_limit_bytes",
                                    "PGA_AGGREGATE_LIMIT, bytes (GV$SYSTEM_PARAMETER; 12.1+; 0 = no limit)."))

    stats = by_inst_name(snapshot.rows("GV$SYSSTAT"))
    workarea = counter("oracle_pga_workarea_executions_total",
                       "Work-area executions by mode (GV$SYSSTAT 'workarea executions - optimal|onepass|multipass').",
                       ["inst_id", "kind"])
    for i in sorted_inst(stats):
        for kind, stat in WORKAREA:
            if stat in stats[i]:
                workarea.add_metric([i, kind], stats[i][stat])
    families.append(workarea)

    columns = (("oracle_background_process_pga_allocated_bytes",
                "PGA allocated by a background process, bytes (GV$PROCESS.PGA_ALLOC_MEM).", "PGA_ALLOC_MEM"),
               ("oracle_background_process_pga_used_bytes",
                "PGA in use by a background process, bytes (GV$PROCESS.PGA_USED_MEM).", "PGA_USED_MEM"),
               ("oracle_background_process_pga_max_bytes",
                "Highest PGA ever allocated by a background process, bytes (GV$PROCESS.PGA_MAX_MEM).", "PGA_MAX_MEM"))
    sums: dict[str, dict[tuple[str, str], float]] = {col: defaultdict(float) for _, _, col in columns}
    for row in snapshot.rows("GV$PROCESS"):
        i, pname = inst(row), row.get("PNAME")
        if i is None or not pname:
            continue
        for _, _, col in columns:
            value = num(row.get(col))
            if value is not None:
                sums[col][(i, str(pname))] += value
    for name, doc, col in columns:
        family = gauge(name, doc, ["inst_id", "pname"])
        for key in sorted(sums[col], key=lambda k: (len(k[0]), k)):
            family.add_metric(list(key), sums[col][key])
        families.append(family)
    yield from emit(families)
