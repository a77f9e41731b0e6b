"""One collector runner for both exporters (node_exporter's wrapper around every collector).

``CollectorRunner.run(name, collect)`` runs one collector to completion:

* **isolation**: an exception loses only that collector's output for this scrape (a
  collector that yielded half its families before failing exports none of them);
* **timing**: the wall time of the run;
* **success**: ``Outcome.error`` is None on success, else one line naming the cause
  (``check``, when given, may fail a collector that did not raise, e.g. oracle-exporter's
  "a view this collector reads failed");
* **error counts**: failed runs per (scope, collector) since start (``errors``);
* **series cap**: with ``max_series``, samples beyond it are dropped (the first ones in
  the collector's order are kept) and counted per (scope, collector) (``dropped``);
* **logging**: one line when a collector starts failing or its cause changes, one when
  it recovers, never one per scrape.

``scope`` separates the state of the same collector on several targets (the database for
oracle-exporter, empty for dbhost-exporter). Each exporter turns outcomes into its own
self metrics (oracle_collector_*, dbhost_collector_*), whose names stay its own.

Collectors are imported at start by plain ``import`` statements: a broken collector
module is an error at start, never a silently smaller exporter.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from prometheus_client.metrics_core import Metric

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    name: str
    families: list[Metric] = field(default_factory=list)
    error: str | None = None
    duration: float = 0.0
    dropped: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


def _copy(fam: Metric, samples: list) -> Metric:
    out = Metric(fam.name, fam.documentation, fam.type, fam.unit)
    out.samples = samples
    return out


def cap_series(families: list[Metric], max_series: int | None) -> tuple[list[Metric], int]:
    """(families with at most max_series samples in all, number of samples dropped)."""
    if max_series is None:
        return families, 0
    kept: list[Metric] = []
    budget = max_series
    dropped = 0
    for fam in families:
        if len(fam.samples) <= budget:
            kept.append(fam)
            budget -= len(fam.samples)
            continue
        dropped += len(fam.samples) - budget
        if budget > 0:
            kept.append(_copy(fam, fam.samples[:budget]))
        budget = 0
    return kept, dropped


class CollectorRunner:
    def __init__(self, max_series: int | None = None, clock: Callable[[], float] = time.perf_counter,
                 logger: logging.Logger | None = None, failure_level: int = logging.WARNING,
                 describe: Callable[[str, str], str] | None = None):
        """``describe(scope, name)`` names a collector in log lines (default "collector NAME",
        prefixed by "SCOPE: " when there is a scope)."""
        self.max_series = max_series
        self.clock = clock
        self.log = logger or log
        self.failure_level = failure_level
        self.describe = describe or (lambda scope, name: f"{scope}: collector {name}" if scope
                                     else f"collector {name}")
        self._lock = threading.Lock()
        self.errors: dict[tuple[str, str], int] = {}
        self.dropped: dict[tuple[str, str], int] = {}
        self._failing: dict[tuple[str, str], str | None] = {}

    def register(self, name: str, scope: str = "") -> None:
        """Start the counters of a collector at 0 (so they are exported before any failure)."""
        with self._lock:
            self.errors.setdefault((scope, name), 0)
            self.dropped.setdefault((scope, name), 0)

    def note(self, name: str, error: str | None, scope: str = "", count: bool = True,
             cause: str | None = None) -> None:
        """Record the result of a run (or of a fetch, for oracle-exporter's "fetch"): count a
        failure and log state changes only: a failure is logged when it starts and when its
        ``cause`` changes (default: the error text itself; a caller whose texts carry changing
        details, a backoff delay or a time, passes a stable cause)."""
        key = (scope, name)
        with self._lock:
            if error is not None and count:
                self.errors[key] = self.errors.get(key, 0) + 1
            before = self._failing.get(key)
            self._failing[key] = None if error is None else (cause if cause is not None else error)
        what = self.describe(scope, name)
        if error is not None and self._failing[key] != before:
            self.log.log(self.failure_level, "%s failed: %s", what, error)
        elif error is None and before is not None:
            self.log.info("%s recovered", what)

    def run(self, name: str, collect: Callable[[], Iterable[Metric]], scope: str = "",
            check: Callable[[], str | None] | None = None, keep: bool = False) -> Outcome:
        """``keep``: a failure reported by ``check`` keeps the families ``collect`` yielded (the
        caller already removed what the failure costs: oracle-exporter's per-view isolation)."""
        start = self.clock()
        error = None
        families: list[Metric] = []
        try:
            families = list(collect())
        except Exception as exc:  # isolate: report and carry on with the next collector
            error = f"{type(exc).__name__}: {exc}"
            families = []
        raised = error is not None
        if error is None and check is not None:
            error = check()
        dropped = 0
        if error is None or (keep and not raised):
            families, dropped = cap_series(families, self.max_series)
        elapsed = self.clock() - start
        if dropped:
            with self._lock:
                self.dropped[(scope, name)] = self.dropped.get((scope, name), 0) + dropped
        self.note(name, error, scope)
        return Outcome(name, families if error is None or (keep and not raised) else [], error, elapsed, dropped)

    def error_count(self, name: str, scope: str = "") -> int:
        with self._lock:
            return self.errors.get((scope, name), 0)

    def dropped_count(self, name: str, scope: str = "") -> int:
        with self._lock:
            return self.dropped.get((scope, name), 0)
