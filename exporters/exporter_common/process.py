"""The standard process metrics of the exporter's own process, for both exporters.

``process_start_time_seconds``, ``process_cpu_seconds_total``,
``process_resident_memory_bytes``, ``process_virtual_memory_bytes``,
``process_open_fds`` and ``process_max_fds``: the names, help texts and values of
prometheus_client's process collector (the ones every Go exporter exposes too), so the
alert pack sees an exporter restart as a change of ``process_start_time_seconds``.

prometheus_client registers its collector in its global default registry; the
exporters use their own registries, so each builds one ``ProcessMetrics`` (a
``ProcessCollector`` registered nowhere) and adds its families *after* everything
else on ``/metrics`` and ``--once`` (``with_process``): the rest of the exposition
stays byte for byte what it was. They always describe this process
(``/proc/self``), whatever ``--path.procfs`` says: that flag points at the
monitored host's procfs, which may be a mount of another one.
oracle-exporter's ``/probe`` (one database) does not carry them.

Off Linux (no /proc) prometheus_client's collector yields nothing; so does this.
"""
from __future__ import annotations

import logging
from typing import Iterable, Protocol

from prometheus_client.metrics_core import Metric
from prometheus_client.process_collector import ProcessCollector

from .declare import Collector, Family

__all__ = ["NAMES", "SPEC", "ProcessMetrics", "with_process"]

log = logging.getLogger(__name__)

# Declared like a collector, for the metrics catalog and docs/metrics.md; the families themselves
# (names, help texts, values) are prometheus_client's own, which this module does not rewrite.
SPEC = Collector(
    "process", "The exporter's own process, as prometheus_client's process collector reports it (both exporters).",
    title="Process metrics of the exporter itself (both exporters)",
    reads=("/proc/self/stat", "/proc/self/fd", "/proc/self/limits"),
    doc="Restarts and crash loops show in `process_start_time_seconds` (changes() over a window), "
        "a leak in `process_open_fds` against `process_max_fds`. Always the exporter's own process, "
        "whatever --path.procfs says; oracle-exporter's /probe does not carry them.",
    metrics=(
        Family("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", (),
               source="/proc/self/stat vsize"),
        Family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", (),
               source="/proc/self/stat rss x page size"),
        Family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", (),
               source="/proc/self/stat starttime / SC_CLK_TCK + boot time (/proc/stat btime)"),
        Family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", (),
               source="/proc/self/stat utime + stime / SC_CLK_TCK"),
        Family("process_open_fds", "gauge", "Number of open file descriptors.", (), source="/proc/self/fd"),
        Family("process_max_fds", "gauge", "Maximum number of open file descriptors.", (),
               source="/proc/self/limits Max open files (soft)"),
    ))
NAMES = tuple(f.name for f in SPEC.metrics)


class _Collects(Protocol):
    def collect(self) -> Iterable[Metric]: ...


class ProcessMetrics:
    """The process families of this process, read afresh at every ``collect()``."""

    def __init__(self, proc: str = "/proc"):
        # registry=None: not added to prometheus_client's global REGISTRY
        self._collector = ProcessCollector(proc=proc, registry=None)
        self._failed = False

    def collect(self) -> list[Metric]:
        """The families; none (logged once) if reading them fails: the exporter's own
        metrics never cost a scrape the rest of its answer."""
        try:
            families = list(self._collector.collect())
        except Exception as exc:
            if not self._failed:
                log.warning("process metrics unavailable: %s: %s", type(exc).__name__, exc)
            self._failed = True
            return []
        self._failed = False
        return families


class _WithProcess:
    """Registry stand-in: ``source``'s families, then the process families."""

    def __init__(self, source: _Collects, process: ProcessMetrics):
        self._source = source
        self._process = process

    def collect(self) -> Iterable[Metric]:
        yield from self._source.collect()
        yield from self._process.collect()


def with_process(source: _Collects, process: ProcessMetrics | None) -> _Collects:
    """``source`` (a registry, or anything with ``collect()``) followed by the process
    families; ``source`` itself when ``process`` is None."""
    return source if process is None else _WithProcess(source, process)
