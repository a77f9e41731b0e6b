"""Latches (GV$LATCH; field-notes I1, R5): a configured list, plus latch="all"
summed over every latch of the instance (the latch hit ratio's denominator).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family, Setting
from exporter_common.families import add_rows

from . import defaults
from ._common import _EXACT, columns, emit, inst, num

_LABELS = ("inst_id", "latch")
SPEC = Collector(
    "latches", "Latch statistics (GV$LATCH) of a configured list of latches, and of all latches summed (latch=\"all\").",
    reads=("GV$LATCH",),
    settings=(
        Setting("latches", defaults.DEFAULT_LATCHES, "latches exposed one by one (all latches are also summed "
                "into latch=\"all\", the latch hit ratio's denominator)", kind="names"),
    ),
    metrics=(
        Family("oracle_latch_gets_total", "counter", "Willing-to-wait latch requests (GV$LATCH.GETS).", _LABELS, source='GV$LATCH.GETS (willing-to-wait)', measure='requests'),
        Family("oracle_latch_misses_total", "counter", "Willing-to-wait requests that missed on the first try (GV$LATCH.MISSES).", _LABELS, source='GV$LATCH.MISSES', measure='requests'),
        Family("oracle_latch_sleeps_total", "counter", "Willing-to-wait requests that slept (GV$LATCH.SLEEPS).", _LABELS, source='GV$LATCH.SLEEPS', measure='sleeps'),
        Family("oracle_latch_immediate_gets_total", "counter", "No-wait latch requests (GV$LATCH.IMMEDIATE_GETS).", _LABELS, source='GV$LATCH.IMMEDIATE_GETS (no-wait)', measure='requests'),
        Family("oracle_latch_immediate_misses_total", "counter", "No-wait latch requests that failed (GV$LATCH.IMMEDIATE_MISSES).", _LABELS, source='GV$LATCH.IMMEDIATE_MISSES', measure='requests'),
        Family("oracle_latch_spin_gets_total", "counter", "Misses that got the latch while spinning (GV$LATCH.SPIN_GETS).", _LABELS, source='GV$LATCH.SPIN_GETS', measure='requests'),
        Family("oracle_latch_wait_time_seconds_total", "counter", "Time waited for the latch, seconds (GV$LATCH.WAIT_TIME microseconds).", _LABELS, source='GV$LATCH.WAIT_TIME (microseconds) / 1e6 (10.1+)'),
    ), doc='`latch` is one of the configured names (default: redo allocation, redo writing, redo copy, cache buffers chains, cache buffers lru chain, shared pool, row cache objects, enqueue hash chains, session allocation, messages, checkpoint queue latch, In memory undo latch) or `all`, the sum over every latch of the instance. Latch hit ratio (I1) = `1 - rate(misses{latch="all"}) / rate(gets{latch="all"})`.', title='Latches')
NAME, VIEWS = SPEC.name, SPEC.reads

# metric, column, scale
COLUMNS: tuple[tuple[str, str, float], ...] = (
    ("oracle_latch_gets_total", "GETS", 1.0),
    ("oracle_latch_misses_total", "MISSES", 1.0),
    ("oracle_latch_sleeps_total", "SLEEPS", 1.0),
    ("oracle_latch_immediate_gets_total", "IMMEDIATE_GETS", 1.0),
    ("oracle_latch_immediate_misses_total", "IMMEDIATE_MISSES", 1.0),
    ("oracle_latch_spin_gets_total", "SPIN_GETS", 1.0),
    ("oracle_latch_wait_time_seconds_total", "WAIT_TIME", 1e-6),
)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    wanted = [name for name in defaults.latches(settings) if name != "all"]
    wanted_set = set(wanted)
    # {(inst, latch): {column: value}}; latch "all" sums every row of the instance.
    values: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    names = tuple(col for _, col, _ in COLUMNS)
    for i, name, *row in columns(snapshot.rows("GV$LATCH"), ("INST_ID", "NAME") + names):
        i = str(i) if type(i) is int and -_EXACT < i < _EXACT else inst({"INST_ID": i})  # inst(), num() inlined
        if i is None or name is None:
            continue
        name = str(name)
        targets = [values[(i, "all")], values[(i, name)]] if name in wanted_set else [values[(i, "all")]]
        for col, value in zip(names, row):
            value = float(value) if type(value) is int else num(value)
            if value is None or value < 0:  # NULL, or a wrapped/corrupt counter: not summed into "all"
                continue
            for sums in targets:
                sums[col] += value
    families = []
    order = sorted(values, key=lambda k: (len(k[0]), k[0], k[1] != "all", k[1]))
    sums = [(key, values[key]) for key in order]
    for metric, col, scale in COLUMNS:
        family = SPEC.family(metric)
        add_rows(family, [(key, named[col] * scale) for key, named in sums if col in named])
        families.append(family)
    yield from emit(families)
