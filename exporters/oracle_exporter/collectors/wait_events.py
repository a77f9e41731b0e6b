"""Wait events (GV$SYSTEM_EVENT) and latency histograms for key events.

Histograms come from GV$EVENT_HISTOGRAM_MICRO (12.1.0.2+, buckets in
microseconds) when the snapshot has it, else from GV$EVENT_HISTOGRAM
(buckets in milliseconds). Oracle's rows are per-bucket counts: a row with
WAIT_TIME_MICRO = n counts waits of duration < n that fall in no smaller
bucket (Oracle Database Reference, V$EVENT_HISTOGRAM_MICRO). Prometheus
buckets are cumulative with ``le`` in seconds, so the bucket ``le=n/1e6``
is the sum of all rows whose bound is <= n. (Oracle's bound is exclusive,
Prometheus' ``le`` inclusive; a wait of exactly n us cannot be told apart.)

Every histogram series uses one fixed ladder of bounds (the powers of two
Oracle documents: 1 us .. 2^32 us, or 1 ms .. 2^22 ms), so the set of
``le`` values never changes as new buckets fill; a row beyond the ladder
only counts in ``+Inf``. ``+Inf`` = ``_count`` = sum of all bucket rows;
``_sum`` is TIME_WAITED_MICRO of the event from GV$SYSTEM_EVENT (so
``_sum/_count`` may differ slightly from the GV$SYSTEM_EVENT average, as
the two views are read a few milliseconds apart).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from prometheus_client.core import Metric
from prometheus_client.utils import floatToGoString

from exporter_common.declare import Collector, Family, Setting
from exporter_common.families import add_rows

from . import defaults
from ._common import _EXACT, columns, emit, inst, num, text

_EVENT = ("inst_id", "event", "wait_class")
_SYSTEM_EVENT = ("INST_ID", "EVENT", "WAIT_CLASS", "TOTAL_WAITS", "TIME_WAITED_MICRO", "TOTAL_TIMEOUTS")
SPEC = Collector(
    "wait_events", "Waits per event (GV$SYSTEM_EVENT) and latency histograms of key events.",
    reads=("GV$SYSTEM_EVENT", "GV$EVENT_HISTOGRAM_MICRO", "GV$EVENT_HISTOGRAM"),
    settings=(
        Setting("histogram_events", defaults.DEFAULT_HISTOGRAM_EVENTS, "events exposed as latency histograms",
                kind="names"),
        Setting("idle_wait_events", False, "also export GV$SYSTEM_EVENT's Idle wait class (SQL*Net message from "
                "client ...: hundreds of series that say nothing about the database)", kind="bool"),
        Setting("wait_events_max", 400, "events per instance with their own series, most time waited first; "
                "oracle_wait_events_omitted counts the rest (0: no limit; a 19c instance has about 150-250 "
                "non-idle events that ever waited)", kind="int", minimum=0),
    ),
    metrics=(
        Family("oracle_wait_event_waits_total", "counter",
               "Waits per event since instance start (GV$SYSTEM_EVENT.TOTAL_WAITS).", _EVENT,
               source='GV$SYSTEM_EVENT.TOTAL_WAITS (WAIT_CLASS 10.1+)', measure='waits', views=("GV$SYSTEM_EVENT",)),
        Family("oracle_wait_event_time_seconds_total", "counter",
               "Time waited per event since instance start, seconds (GV$SYSTEM_EVENT.TIME_WAITED_MICRO/1e6).",
               _EVENT, source='GV$SYSTEM_EVENT.TIME_WAITED_MICRO / 1e6', views=("GV$SYSTEM_EVENT",)),
        Family("oracle_wait_event_timeouts_total", "counter",
               "Wait timeouts per event since instance start (GV$SYSTEM_EVENT.TOTAL_TIMEOUTS).", _EVENT,
               source='GV$SYSTEM_EVENT.TOTAL_TIMEOUTS', measure='timeouts', views=("GV$SYSTEM_EVENT",)),
        Family("oracle_wait_event_latency_seconds", "histogram",
               "Wait latency histogram of key events, seconds (GV$EVENT_HISTOGRAM_MICRO, else GV$EVENT_HISTOGRAM, "
               "made cumulative); _sum from GV$SYSTEM_EVENT.TIME_WAITED_MICRO.", ("inst_id", "event"),
               source='GV$EVENT_HISTOGRAM_MICRO (12.1.0.2+) else GV$EVENT_HISTOGRAM, for the configured events only; `_sum` = TIME_WAITED_MICRO / 1e6',
               note='Labels: inst_id, event (+ `le` on `_bucket`).'),
        Family("oracle_wait_events_omitted", "gauge",
               "Events of GV$SYSTEM_EVENT left out of the per-event series of an instance because it has more "
               "than wait_events_max (those with the least time waited go first); absent when none was.",
               ("inst_id",), source='events of an instance left out of the three per-event counters because it has more than `wait_events_max` (default 400; those with the least time waited go first); absent when none was', measure='events', views=("GV$SYSTEM_EVENT",)),
    ), doc='Bounded by default: the Idle wait class (`SQL*Net message from client`, `rdbms ipc message`, timers: sessions and background processes waiting for work) is left out unless the config says `idle_wait_events: true`, and at most `wait_events_max` events per instance are exported.\n\nAverage wait of an event = `rate(..._time_seconds_total) / rate(..._waits_total)` (R1, R2, I2). Events are the instance\'s own list (a few hundred that have waited; bounded by V$EVENT_NAME, about 1,800 per release). With `idle_wait_events: true` Idle events are included (filter `wait_class!="Idle"`); without, the statement leaves them out (`WHERE WAIT_CLASS <> \'Idle\'`, Idle events named in `histogram_events` excepted), and a recording made before that still has them: the collector drops them too.\n\nHistogram construction. Oracle\'s rows are per-bucket counts: the row with bound n (WAIT_TIME_MICRO, or WAIT_TIME_MILLI) counts waits shorter than n that fall in no smaller bucket; bounds are powers of two. The exporter makes them cumulative with `le` in seconds on a fixed ladder, so the set of `le` values never changes as new buckets fill: GV$EVENT_HISTOGRAM_MICRO: `le` = 1e-06 ... 4294.967296 (2^0..2^32 us, 33 buckets); GV$EVENT_HISTOGRAM: `le` = 0.001 ... 4194.304 (2^0..2^22 ms, 23 buckets). `+Inf` = `_count` = sum of all bucket rows (a row above the ladder, Oracle\'s ">= 2^32 us" bucket, counts only in `+Inf`). Oracle\'s bound is exclusive and `le` is inclusive; a wait of exactly 2^k units cannot be placed differently from Oracle\'s data. `_count` may differ from TOTAL_WAITS by the waits that completed between the two view reads. An event whose GV$SYSTEM_EVENT row is missing or has NULL TIME_WAITED_MICRO gets no histogram (no `_sum`). The millisecond view cannot resolve sub-millisecond waits (0.55 ms log writes all land in `le="0.001"`); the microsecond view can.\n\nDefault histogram events: log file sync, log file parallel write, db file sequential read, db file scattered read, direct path read, direct path write, log buffer space, log file switch completion, log file switch (checkpoint incomplete), log file sequential read, control file parallel write (configurable, `histogram_events`).', title='Wait events')
NAME, VIEWS = SPEC.name, SPEC.reads

# Histograms only for the configured events (settings.histogram_events).
NAMES = {"GV$EVENT_HISTOGRAM_MICRO": defaults.histogram_events, "GV$EVENT_HISTOGRAM": defaults.histogram_events}



def system_event_filter(settings: Any) -> tuple[str, dict[str, object]] | None:
    """GV$SYSTEM_EVENT's rows the collector uses, in SQL: without the Idle class (a third of a busy
    instance's events, all dropped below) unless ``idle_wait_events``; an Idle event that is one of
    the histogram events stays (its TIME_WAITED_MICRO is its histogram's ``_sum``). Recordings hold
    the rows as fetched, so an older one still carries Idle rows: ``collect`` drops them too."""
    if getattr(settings, "idle_wait_events", False):
        return None
    binds = {f"h{i}": name for i, name in enumerate(dict.fromkeys(defaults.histogram_events(settings)))}
    if not binds:
        return "WAIT_CLASS <> 'Idle'", {}
    return f"WAIT_CLASS <> 'Idle' OR EVENT IN ({', '.join(':' + b for b in binds)})", binds


WHERE = {"GV$SYSTEM_EVENT": system_event_filter}

# (view, bound column, seconds per unit, ladder of bounds in that unit)
MICRO = ("GV$EVENT_HISTOGRAM_MICRO", "WAIT_TIME_MICRO", 1e-6, tuple(2 ** i for i in range(0, 33)))
MILLI = ("GV$EVENT_HISTOGRAM", "WAIT_TIME_MILLI", 1e-3, tuple(2 ** i for i in range(0, 23)))


def histogram_source(snapshot: Any) -> tuple[str, str, float, tuple[int, ...]] | None:
    if snapshot.has(MICRO[0]):
        return MICRO
    if snapshot.has(MILLI[0]):
        return MILLI
    return None


def cumulative_buckets(rows: Iterable[tuple[float, float]], ladder: tuple[int, ...],
                       scale: float) -> list[tuple[str, float]]:
    """Per-bucket (bound, count) pairs -> cumulative [(le, count)...] ending in +Inf."""
    pairs = sorted(rows)
    total = sum(count for _, count in pairs)
    out: list[tuple[str, float]] = []
    acc = 0.0
    k = 0
    n = len(pairs)
    for bound, le in zip(ladder, _les(ladder, scale)):
        while k < n and pairs[k][0] <= bound:
            acc += pairs[k][1]
            k += 1
        out.append((le, acc))
    out.append(("+Inf", total))
    return out


_LES: dict[tuple, tuple[str, ...]] = {}


def _les(ladder: tuple[int, ...], scale: float) -> tuple[str, ...]:
    """The ``le`` label values of a ladder (written once per ladder, not per series)."""
    key = (ladder, scale)
    got = _LES.get(key)
    if got is None:
        if len(_LES) > 64:
            _LES.clear()
        got = _LES[key] = tuple(floatToGoString(bound * scale) for bound in ladder)
    return got


DEFAULT_MAX_EVENTS = SPEC.default("wait_events_max")


def bound_events(agg: dict[tuple[str, str, str], list[float | None]],
                 limit: int) -> tuple[list[tuple[str, str, str]], dict[str, int]]:
    """The (inst, event, class) keys to export, at most ``limit`` per instance (0: no limit),
    the events with the most time waited first; and per instance how many were left out."""
    by_inst: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for key in agg:
        by_inst[key[0]].append(key)
    kept: list[tuple[str, str, str]] = []
    omitted: dict[str, int] = {}
    for i, keys in by_inst.items():
        if limit and len(keys) > limit:
            keys = sorted(keys, key=lambda k: (-(agg[k][1] or 0.0), k))
            omitted[i] = len(keys) - limit
            keys = keys[:limit]
        else:
            omitted[i] = 0
        kept += keys
    return kept, omitted


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    waits = SPEC.family("oracle_wait_event_waits_total")
    times = SPEC.family("oracle_wait_event_time_seconds_total")
    timeouts = SPEC.family("oracle_wait_event_timeouts_total")

    # Sum duplicate (inst, event, class) rows so no series is emitted twice.
    include_idle = bool(getattr(settings, "idle_wait_events", False))
    agg: dict[tuple[str, str, str], list[float | None]] = {}
    time_by_event: dict[tuple[str, str], float] = defaultdict(float)
    system_event = columns(snapshot.rows("GV$SYSTEM_EVENT"), _SYSTEM_EVENT)
    for i, event, wait_class, total_waits, micro, total_timeouts in system_event:
        # inst(), num(), text() inlined for the usual types
        i = str(i) if type(i) is int and -_EXACT < i < _EXACT else inst({"INST_ID": i})
        if i is None or event is None:
            continue
        if type(wait_class) is not str:
            wait_class = text(wait_class)
        if not include_idle and wait_class == "Idle":
            continue    # sessions waiting for work: hundreds of series that say nothing about the database
        event = str(event)
        key = (i, event, wait_class)
        slot = agg.get(key)
        if slot is None:
            slot = agg[key] = [None, None, None]
        value = float(total_waits) if type(total_waits) is int else num(total_waits)
        if value is not None and value >= 0:
            slot[0] = (slot[0] or 0.0) + value
        micro = float(micro) if type(micro) is int else num(micro)
        if micro is not None and micro >= 0:
            slot[1] = (slot[1] or 0.0) + micro
            time_by_event[(i, event)] += micro
        value = float(total_timeouts) if type(total_timeouts) is int else num(total_timeouts)
        if value is not None and value >= 0:
            slot[2] = (slot[2] or 0.0) + value
    kept, omitted_count = bound_events(agg, getattr(settings, "wait_events_max", DEFAULT_MAX_EVENTS))
    omitted = SPEC.family("oracle_wait_events_omitted")
    for i, n in sorted(omitted_count.items()):
        if n:
            omitted.add_metric([i], n)
    slots = [(key, agg[key]) for key in sorted(kept)]
    add_rows(waits, [(key, slot[0]) for key, slot in slots if slot[0] is not None])
    add_rows(times, [(key, slot[1] / 1e6) for key, slot in slots if slot[1] is not None])
    add_rows(timeouts, [(key, slot[2]) for key, slot in slots if slot[2] is not None])

    hist = SPEC.family("oracle_wait_event_latency_seconds")
    wanted = set(defaults.histogram_events(settings))
    per_event: dict[tuple[str, str], list[tuple[float, float]]] = {}
    ladders: dict[tuple[str, str], tuple[float, tuple[int, ...]]] = {}
    # GV$EVENT_HISTOGRAM_MICRO first; an (instance, event) it lacks is taken from
    # GV$EVENT_HISTOGRAM when the snapshot holds that too (one view per series).
    for view, column, scale, ladder in (MICRO, MILLI):
        found: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
        for event, i, bound, count in columns(snapshot.rows(view), ("EVENT", "INST_ID", column, "WAIT_COUNT")):
            if event is None or str(event) not in wanted:
                continue
            i = str(i) if type(i) is int and -_EXACT < i < _EXACT else inst({"INST_ID": i})
            bound = float(bound) if type(bound) is int else num(bound)
            count = float(count) if type(count) is int else num(count)
            if i is None or bound is None or count is None or count < 0 or bound <= 0:
                continue
            found[(i, str(event))].append((bound, count))
        for key, pairs in found.items():
            if key not in per_event:
                per_event[key] = pairs
                ladders[key] = (scale, ladder)
    for (i, event) in sorted(per_event):
        if (i, event) not in time_by_event:
            continue  # no TIME_WAITED_MICRO: a histogram without _sum would have no _count either
        scale, ladder = ladders[(i, event)]
        buckets = cumulative_buckets(per_event[(i, event)], ladder, scale)
        hist.add_metric([i, event], buckets, time_by_event[(i, event)] / 1e6)

    yield from emit([waits, times, timeouts, hist, omitted])
