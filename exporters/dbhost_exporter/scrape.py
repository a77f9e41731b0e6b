"""One scrape: run every collector through the shared runner, add self metrics.

``DbhostExporter`` is a prometheus_client custom collector. Each scrape runs every
configured collector's ``collect()`` to completion through
exporter_common.runner.CollectorRunner (the runner oracle-exporter uses too): one
failing collector is reported by ``dbhost_collector_success{collector} 0`` (logged once
when it starts failing, once when it recovers) and does not stop the others. Samples
beyond ``max_series`` per collector are dropped (the first ones in collector order are
kept) and counted in ``dbhost_collector_dropped_series_total``.

Overlapping scrapes (an HA pair of Prometheus servers, a curl during a scrape) share one run:
a scrape that finds a collector running waits for that run and serves its result, so a collector
never runs twice at once (the process collector would count an exited process twice) and two
scrapes cost one. Prometheus announces its time limit (X-Prometheus-Scrape-Timeout-Seconds);
``scrape_deadline`` turns it into a deadline half a second before, set for the request by
``deadline_scope``. Past it, a collector that is still running (or has not started) fails for
that scrape (``dbhost_collector_success 0``, "past the scrape's time limit") and the answer goes
out; the run itself completes in the background (its state stays whole) and the next scrape
joins it if it is still going.

Over HTTP (cli.make_routes) whole answers are shared too (exporter_common.coalesce): a scrape that
arrives while another one's answer is being collected and rendered waits for it and gets its
bytes. ``deadline_scope`` also carries the scrape's arrival: a collector run that ended after
the scrape arrived (a run that an answer shared with it, or one cut short for another scrape and
finished since) serves it too, never one that ended before.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
from concurrent.futures import Future, TimeoutError as FutureTimeout
from typing import Iterable, Iterator, Mapping, Protocol

from prometheus_client.metrics_core import Metric

from exporter_common.declare import Collector as Declaration, Family, Setting
from exporter_common.runner import CollectorRunner

from . import __version__

log = logging.getLogger(__name__)

_COLLECTOR = ("collector",)
# The exporter itself: its self metrics and its exporter-level settings.
SPEC = Declaration(
    "exporter", "dbhost-exporter itself: each collector's outcome, duration and dropped series; the build.",
    settings=(
        Setting("max_series", 50000, "per collector and scrape; excess samples are dropped and counted in "
                "dbhost_collector_dropped_series_total", kind="int", minimum=1),
    ),
    metrics=(
        Family("dbhost_collector_success", "gauge", "1 if the collector's last scrape succeeded, else 0.",
               _COLLECTOR, source="1 if the collector's last run completed; 0 if it raised (its partial output is dropped, the others still run). A source that exists but is unparsable fails its collector with one log line naming the file and line: `/proc/diskstats` missing, empty or with a line the kernel cannot have written while block devices are exported (`lun`); an arcstats file or `zfs.kstat_file` that is empty, cut or not kstat text (`zfs`); a dm-multipath `slaves/` that exists but cannot be listed (`lun`). Also 0 when the collector was still running (or not started) at the time limit Prometheus announced in `X-Prometheus-Scrape-Timeout-Seconds` (minus 0.5 s)", note='Labels: `collector` (`lun`, `zfs`, `process`, `memory`).'),
        Family("dbhost_collector_duration_seconds", "gauge", "Time the collector's last scrape took.",
               _COLLECTOR, source="wall time of the collector's last run"),
        Family("dbhost_collector_dropped_series_total", "counter",
               "Series dropped because the collector exceeded max_series.", _COLLECTOR,
               source='samples dropped because the collector exceeded `max_series` in a scrape (summed over scrapes)', measure='series'),
        Family("dbhost_exporter_build_info", "info", "dbhost-exporter version.", ("version",),
               source='package version'),
    ),
    exporter="dbhost-exporter", title="Self metrics")


SCRAPE_TIMEOUT_HEADER = "x-prometheus-scrape-timeout-seconds"
# time.monotonic() by which the scrape being served must be answered (None: no limit announced)
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("dbhost_scrape_deadline", default=None)
# time.monotonic() at which the scrape being served arrived (None: reuse no finished run)
_ARRIVAL: contextvars.ContextVar[float | None] = contextvars.ContextVar("dbhost_scrape_arrival", default=None)
# the collectors cut short by the time limit in this scope (deadline_scope(..., report=[]))
_CUT: contextvars.ContextVar[list | None] = contextvars.ContextVar("dbhost_scrape_cut", default=None)


def scrape_deadline(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The monotonic deadline of a scrape from Prometheus' X-Prometheus-Scrape-Timeout-Seconds:
    half a second before it (the answer must still travel), at least 0.1 s from now. None when
    the header is absent, not a number or not positive."""
    value = next((v for k, v in headers.items() if k.lower() == SCRAPE_TIMEOUT_HEADER), None)
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None
    if seconds is None or not seconds > 0 or seconds == float("inf"):
        return None
    return (time.monotonic() if now is None else now) + max(0.1, seconds - 0.5)


@contextlib.contextmanager
def deadline_scope(deadline: float | None, arrival: float | None = None,
                   report: list | None = None) -> Iterator[None]:
    """Collections inside (in this thread) are bounded by ``deadline``; with ``arrival`` (the
    scrape's time.monotonic() of arrival) a collector run that ended after it is reused instead of
    starting another; the names of the collectors cut short by the deadline go to ``report``."""
    tokens = (_DEADLINE.set(deadline), _ARRIVAL.set(arrival), _CUT.set(report))
    try:
        yield
    finally:
        _CUT.reset(tokens[2])
        _ARRIVAL.reset(tokens[1])
        _DEADLINE.reset(tokens[0])


class _Flight:
    """The run of one collector in progress, shared by every scrape that arrives during it; and
    the last finished run with the time it ended (for scrapes that arrived before that)."""
    __slots__ = ("lock", "future", "last", "ended")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.future: Future | None = None
        self.last: Future | None = None
        self.ended = 0.0


class Collector(Protocol):
    name: str

    def collect(self) -> Iterable[Metric]: ...


class DbhostExporter:
    def __init__(self, collectors: list[Collector], max_series: int, clock=time.perf_counter):
        self.collectors = collectors
        self.max_series = max_series
        self.runner = CollectorRunner(max_series, clock, log, logging.ERROR)
        self._flights = {c.name: _Flight() for c in collectors}
        self.runs = {c.name: 0 for c in collectors}   # runs started per collector (tests, benchmarks)
        for c in collectors:
            self.runner.register(c.name)

    def _start(self, collector: Collector, deadline: float | None, arrival: float | None = None) -> Future | None:
        """The run of ``collector`` this scrape gets: the one in progress if there is one (single
        flight), or the last one if it ended after the scrape arrived (``arrival``), else a new
        one, started in its own thread when there is a deadline (so a slow collector holds up no
        other), else run here and now. None if the deadline has passed."""
        flight = self._flights[collector.name]
        with flight.lock:
            fut = flight.future
            if fut is None and arrival is not None and flight.last is not None and flight.ended >= arrival:
                return flight.last
            owner = fut is None
            if owner:
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                fut = flight.future = Future()
                self.runs[collector.name] += 1

        if owner:
            def work() -> None:
                try:
                    outcome = self.runner.run(collector.name, collector.collect)
                except BaseException as exc:   # the runner catches Exception; never leave waiters hanging
                    with flight.lock:
                        flight.future = None
                    fut.set_exception(exc)
                    return
                with flight.lock:    # a scrape arriving from now on starts a new run
                    flight.future = None
                    flight.last, flight.ended = fut, time.monotonic()
                fut.set_result(outcome)
            if deadline is None:
                work()          # no limit: run in the scraping thread, no thread to start
            else:
                threading.Thread(target=work, name=f"dbhost-{collector.name}", daemon=True).start()
        return fut

    def _outcome(self, name: str, fut: Future | None, deadline: float | None, started: float):
        if fut is None:
            return self._late(name, 0.0, "not run")
        try:
            return fut.result(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            return self._late(name, time.monotonic() - started, "still running")

    def _late(self, name: str, waited: float, what: str):
        from exporter_common.runner import Outcome   # noqa: PLC0415
        error = f"TimeoutError: {what} at the scrape's time limit (X-Prometheus-Scrape-Timeout-Seconds)"
        self.runner.note(name, error, cause="deadline")
        cut = _CUT.get()
        if cut is not None:
            cut.append(name)
        return Outcome(name, [], error, waited)

    def collect(self) -> Iterable[Metric]:
        success = SPEC.family("dbhost_collector_success")
        duration = SPEC.family("dbhost_collector_duration_seconds")
        deadline = _DEADLINE.get()
        arrival = _ARRIVAL.get()
        started = time.monotonic()
        if deadline is None:     # one after the other, in this thread
            runs = ((c, lambda c=c: self._start(c, None, arrival)) for c in self.collectors)
        else:                    # all at once, each bounded by the deadline
            futures = [(c, self._start(c, deadline, arrival)) for c in self.collectors]
            runs = ((c, lambda f=f: f) for c, f in futures)
        for collector, run in runs:
            outcome = self._outcome(collector.name, run(), deadline, started)
            yield from outcome.families
            success.add_metric([collector.name], 1.0 if outcome.ok else 0.0)
            duration.add_metric([collector.name], outcome.duration)
        dropped = SPEC.family("dbhost_collector_dropped_series_total")
        for collector in self.collectors:
            dropped.add_metric([collector.name], self.runner.dropped_count(collector.name))
        build = SPEC.family("dbhost_exporter_build_info")
        build.add_metric([__version__], {})
        yield success
        yield duration
        yield dropped
        yield build
