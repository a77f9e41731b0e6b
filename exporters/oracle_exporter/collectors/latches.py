"""Latches (GV$LATCH; field-notes I1, R5): a configured list, plus latch="all"
summed over every latch of the instance (the latch hit ratio's denominator).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from prometheus_client.core import Metric

from . import defaults
from ._common import counter, emit, inst, num

NAME = "latches"
VIEWS = ("GV$LATCH",)

# metric, help, column, scale
COLUMNS: tuple[tuple[str, str, str, float], ...] = (
    ("oracle_latch_gets_total", "Willing-to-wait latch requests (GV$LATCH.GETS).", "GETS", 1.0),
    ("oracle_latch_misses_total", "Willing-to-wait requests that missed on the first try (GV$LATCH.MISSES).",
     "MISSES", 1.0),
    ("oracle_latch_sleeps_total", "Willing-to-wait requests that slept (GV$LATCH.SLEEPS).", "SLEEPS", 1.0),
    ("oracle_latch_immediate_gets_total", "No-wait latch requests (GV$LATCH.IMMEDIATE_GETS).", "IMMEDIATE_GETS", 1.0),
    ("oracle_latch_immediate_misses_total", "No-wait latch requests that failed (GV$LATCH.IMMEDIATE_MISSES).",
     "IMMEDIATE_MISSES", 1.0),
    ("oracle_latch_spin_gets_total", "Misses that got the latch while spinning (GV$LATCH.SPIN_GETS).",
     "SPIN_GETS", 1.0),
    ("oracle_latch_wait_time_seconds_total", "Time waited for the latch, seconds (GV$LATCH.WAIT_TIME microseconds).",
     "WAIT_TIME", 1e-6),
)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    wanted = [name for name in defaults.latches(settings) if name != "all"]
    wanted_set = set(wanted)
    # {(inst, latch): {column: value}}; latch "all" sums every row of the instance.
    values: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in snapshot.rows("GV$LATCH"):
        i = inst(row)
        name = row.get("NAME")
        if i is None or name is None:
            continue
        targets = [(i, "all")] + ([(i, str(name))] if str(name) in wanted_set else [])
        for _, _, col, _ in COLUMNS:
            value = num(row.get(col))
            if value is None or value < 0:  # NULL, or a wrapped/corrupt counter: not summed into "all"
                continue
            for key in targets:
                values[key][col] += value
    families = []
    for metric, doc, col, scale in COLUMNS:
        family = counter(metric, doc, ["inst_id", "latch"])
        for key in sorted(values, key=lambda k: (len(k[0]), k[0], k[1] != "all", k[1])):
            if col in values[key]:
                family.add_metric(list(key), values[key][col] * scale)
        families.append(family)
    yield from emit(families)
