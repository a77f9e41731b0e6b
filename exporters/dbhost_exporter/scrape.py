"""One scrape: run every collector isolated, cap its series, add self metrics.

``DbhostExporter`` is a prometheus_client custom collector. Each scrape calls
every configured collector's ``collect()`` to completion inside its own
try/except: one failing collector is reported by
``dbhost_collector_success{collector} 0`` and does not stop the others.
Samples beyond ``max_series`` per collector are dropped (the first ones in
collector order are kept) and counted in ``dbhost_collector_dropped_series_total``.
"""
from __future__ import annotations

import logging
import time
from typing import Iterable, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.metrics_core import Metric

from . import __version__

log = logging.getLogger(__name__)


class Collector(Protocol):
    name: str

    def collect(self) -> Iterable[Metric]: ...


def _copy_family(fam: Metric, samples: list) -> Metric:
    out = Metric(fam.name, fam.documentation, fam.type, fam.unit)
    out.samples = samples
    return out


class DbhostExporter:
    def __init__(self, collectors: list[Collector], max_series: int, clock=time.perf_counter):
        self.collectors = collectors
        self.max_series = max_series
        self.clock = clock
        self.dropped: dict[str, int] = {c.name: 0 for c in collectors}

    def _run(self, collector: Collector) -> tuple[list[Metric], bool]:
        try:
            families = list(collector.collect())
        except Exception as exc:  # isolate: report and carry on with the next collector
            log.error("collector %s failed: %s: %s", collector.name, type(exc).__name__, exc)
            return [], False
        kept: list[Metric] = []
        budget = self.max_series
        for fam in families:
            if len(fam.samples) <= budget:
                kept.append(fam)
                budget -= len(fam.samples)
                continue
            dropped = len(fam.samples) - budget
            if budget > 0:
                kept.append(_copy_family(fam, fam.samples[:budget]))
            budget = 0
            self.dropped[collector.name] = self.dropped.get(collector.name, 0) + dropped
        return kept, True

    def collect(self) -> Iterable[Metric]:
        success = GaugeMetricFamily("dbhost_collector_success",
                                    "1 if the collector's last scrape succeeded, else 0.", labels=["collector"])
        duration = GaugeMetricFamily("dbhost_collector_duration_seconds",
                                     "Time the collector's last scrape took.", labels=["collector"])
        for collector in self.collectors:
            start = self.clock()
            families, ok = self._run(collector)
            elapsed = self.clock() - start
            yield from families
            success.add_metric([collector.name], 1.0 if ok else 0.0)
            duration.add_metric([collector.name], elapsed)
        dropped = CounterMetricFamily("dbhost_collector_dropped_series",
                                      "Series dropped because the collector exceeded max_series.",
                                      labels=["collector"])
        for collector in self.collectors:
            dropped.add_metric([collector.name], self.dropped.get(collector.name, 0))
        build = InfoMetricFamily("dbhost_exporter_build", "dbhost-exporter version.", labels=["version"])
        build.add_metric([__version__], {})
        yield success
        yield duration
        yield dropped
        yield build
