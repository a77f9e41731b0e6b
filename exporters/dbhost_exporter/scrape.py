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
               _COLLECTOR, source="1 if the collector's last run completed; 0 if it raised (its partial output is dropped, the others still run). A source that exists but is unparsable fails its collector with one log line naming the file and line: `/proc/diskstats` missing, empty or with a line the kernel cannot have written while block devices are exported (`lun`); an arcstats file or `zfs.kstat_file` that is empty, cut or not kstat text (`zfs`)", note='Labels: `collector` (`lun`, `zfs`, `process`, `memory`).'),
        Family("dbhost_collector_duration_seconds", "gauge", "Time the collector's last scrape took.",
               _COLLECTOR, source="wall time of the collector's last run"),
        Family("dbhost_collector_dropped_series_total", "counter",
               "Series dropped because the collector exceeded max_series.", _COLLECTOR,
               source='samples dropped because the collector exceeded `max_series` in a scrape (summed over scrapes)', measure='series'),
        Family("dbhost_exporter_build_info", "info", "dbhost-exporter version.", ("version",),
               source='package version'),
    ),
    exporter="dbhost-exporter", title="Self metrics")


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
        success = SPEC.family("dbhost_collector_success")
        duration = SPEC.family("dbhost_collector_duration_seconds")
        for collector in self.collectors:
            outcome = self.runner.run(collector.name, collector.collect)
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
