"""One scrape: run every collector through the shared runner, add self metrics.

``DbhostExporter`` is a prometheus_client custom collector. Each scrape runs every
configured collector's ``collect()`` to completion through
exporter_common.runner.CollectorRunner (the runner oracle-exporter uses too): one
failing collector is reported by ``dbhost_collector_success{collector} 0`` (logged once
when it starts failing, once when it recovers) and does not stop the others. Samples
beyond ``max_series`` per collector are dropped (the first ones in collector order are
kept) and counted in ``dbhost_collector_dropped_series_total``.
"""
from __future__ import annotations

import logging
import time
from typing import Iterable, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.metrics_core import Metric

from exporter_common.runner import CollectorRunner

from . import __version__

log = logging.getLogger(__name__)


class Collector(Protocol):
    name: str

    def collect(self) -> Iterable[Metric]: ...


class DbhostExporter:
    def __init__(self, collectors: list[Collector], max_series: int, clock=time.perf_counter):
        self.collectors = collectors
        self.max_series = max_series
        self.runner = CollectorRunner(max_series, clock, log, logging.ERROR)
        for c in collectors:
            self.runner.register(c.name)

    def collect(self) -> Iterable[Metric]:
        success = GaugeMetricFamily("dbhost_collector_success",
                                    "1 if the collector's last scrape succeeded, else 0.", labels=["collector"])
        duration = GaugeMetricFamily("dbhost_collector_duration_seconds",
                                     "Time the collector's last scrape took.", labels=["collector"])
        for collector in self.collectors:
            outcome = self.runner.run(collector.name, collector.collect)
            yield from outcome.families
            success.add_metric([collector.name], 1.0 if outcome.ok else 0.0)
            duration.add_metric([collector.name], outcome.duration)
        dropped = CounterMetricFamily("dbhost_collector_dropped_series",
                                      "Series dropped because the collector exceeded max_series.",
                                      labels=["collector"])
        for collector in self.collectors:
            dropped.add_metric([collector.name], self.runner.dropped_count(collector.name))
        build = InfoMetricFamily("dbhost_exporter_build", "dbhost-exporter version.", labels=["version"])
        build.add_metric([__version__], {})
        yield success
        yield duration
        yield dropped
        yield build
