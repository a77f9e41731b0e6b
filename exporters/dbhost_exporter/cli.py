"""``dbhost-exporter``: host metrics for Oracle database servers (default port 19162).

    dbhost-exporter [--path.procfs /proc] [--path.sysfs /sys] [--config.file FILE]
                    [--web.listen-address :19162] [--web.config.file FILE] [--once]
"""
from __future__ import annotations

import logging
import sys
from typing import Callable

from prometheus_client.registry import CollectorRegistry

from exporter_common.cli import (EpilogFormatter, base_parser, choose_format, declarations_help, exposition,
                                 run_main, serve, setup_logging)
from exporter_common.coalesce import CoalescedRoute, Rendered
from exporter_common.exposition import encode_text
from exporter_common.process import ProcessMetrics, with_process
from exporter_common.web import landing_page, load_web_config

from . import __version__, collectors
from .config import COLLECTORS, DbhostConfig, load_config
from .scrape import SPEC as EXPORTER_SPEC, Collector, DbhostExporter, deadline_scope, scrape_deadline
from .sysfs import check_mount_point

log = logging.getLogger("dbhost_exporter")
DEFAULT_PORT = 19162


# name -> factory(config, procfs, sysfs), in scrape order (the collector modules' ``create``);
# a collector is on unless the config's ``collectors: {name: false}`` switches it off. Imported
# at start: a broken collector module stops the exporter with its error instead of silently
# serving less.
FACTORIES: dict[str, Callable[[DbhostConfig, str, str], Collector]] = {
    module.SPEC.name: module.create for module in collectors.modules()}


if tuple(FACTORIES) != COLLECTORS:  # the config's switches and the factories name the same collectors
    raise RuntimeError(f"dbhost collectors {tuple(FACTORIES)} != config names {COLLECTORS}")


def settings_help() -> str:
    """The ``--help`` epilog: every collector with what it reads and its settings (config file
    keys, under the collector's own section) with their defaults, from the declarations."""
    return declarations_help([m.SPEC for m in collectors.modules()], EXPORTER_SPEC, sections=True)


# The mount points each built-in collector reads (a collector module added later: both).
_READS = {"lun": ("procfs", "sysfs"), "zfs": ("procfs",), "process": ("procfs",), "memory": ("procfs",)}


def required_paths(cfg: DbhostConfig) -> tuple[str, ...]:
    """The --path.* mount points the switched-on collectors read ("procfs", "sysfs"): only those
    must exist at start. zfs with a ``kstat_file`` (illumos/Solaris, which have no /sys) or off
    Linux (the ``kstat`` command) reads no procfs."""
    need: set[str] = set()
    for name in FACTORIES:
        if not cfg.collectors.get(name, True):
            continue
        if name == "zfs" and (cfg.zfs_kstat_file or not sys.platform.startswith("linux")):
            continue
        need.update(_READS.get(name, ("procfs", "sysfs")))
    return tuple(p for p in ("procfs", "sysfs") if p in need)


def build_collectors(cfg: DbhostConfig, procfs: str, sysfs: str) -> list[Collector]:
    return [make(cfg, procfs, sysfs) for name, make in FACTORIES.items() if cfg.collectors.get(name, True)]


def make_registry(cfg: DbhostConfig, procfs: str, sysfs: str) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DbhostExporter(build_collectors(cfg, procfs, sysfs), cfg.max_series))
    return registry


def make_routes(registry: CollectorRegistry, telemetry_path: str = "/metrics", openmetrics: bool = False,
                process: ProcessMetrics | None = None) -> dict:
    """The HTTP routes; ``process`` adds the exporter's own process metrics after the host's.
    The collectors of a scrape are bounded by the time limit Prometheus announces in
    X-Prometheus-Scrape-Timeout-Seconds (scrape.scrape_deadline). Concurrent scrapes asking for
    the same format share one collection and rendering (exporter_common.coalesce)."""
    served = with_process(registry, process)

    def key(query, headers):
        return choose_format(headers, openmetrics), tuple(sorted((k, tuple(v)) for k, v in query.items()))

    def render(query, headers, deadline, since):
        cut: list[str] = []
        with deadline_scope(deadline, since, cut):
            resp = exposition(served, headers, openmetrics)
        return Rendered(resp, bool(cut))

    metrics = CoalescedRoute(key, render, scrape_deadline)

    return {
        "/": lambda q, h: landing_page(f"dbhost-exporter {__version__}", [(telemetry_path, "Metrics")]),
        telemetry_path: metrics,
    }


def main(argv: list[str] | None = None) -> int:
    parser = base_parser("dbhost-exporter", "Prometheus exporter for Oracle database hosts: LUN queues, "
                         "Oracle process scheduling, ZFS ARC/L2ARC, shared memory limits and huge pages.", DEFAULT_PORT)
    parser.add_argument("--path.procfs", dest="procfs", default="/proc", help="procfs mount point (default /proc)")
    parser.add_argument("--path.sysfs", dest="sysfs", default="/sys", help="sysfs mount point (default /sys)")
    parser.add_argument("--config.file", dest="config_file", default=None,
                        help="YAML config: LUN roles, extra process groups, zfs kstat file, max_series, collectors")
    parser.add_argument("--version", action="version", version=f"dbhost-exporter {__version__}")
    parser.formatter_class = EpilogFormatter
    parser.epilog = settings_help()
    args = parser.parse_args(argv)
    setup_logging(args.log_level, args.log_format)

    def body() -> int:
        load_web_config(args.web_config_file)   # checked with --once too: never silently ignored
        cfg = load_config(args.config_file)
        # only the mount points a switched-on collector reads (a zfs-only illumos/Solaris config
        # with a kstat_file starts without /sys)
        for what in required_paths(cfg):
            check_mount_point(getattr(args, what), f"--path.{what}")
        registry = make_registry(cfg, args.procfs, args.sysfs)
        # this process's own metrics (/proc/self, not --path.procfs), after the host's
        process = ProcessMetrics()
        if args.once:
            sys.stdout.buffer.write(encode_text(with_process(registry, process).collect()))
            sys.stdout.flush()
            return 0
        routes = make_routes(registry, args.telemetry_path, args.enable_openmetrics, process)
        return serve(args.listen_address, args.web_config_file, routes, "dbhost-exporter", args.max_requests,
                     not args.disable_compression)

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
