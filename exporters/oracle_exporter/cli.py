"""``oracle-exporter`` command line.

    oracle-exporter --config.file oracle-exporter.yml           # live databases
    oracle-exporter --replay demo.jsonl [--replay-loop]         # a recording, no database needed
    oracle-exporter --config.file f.yml --record rec.jsonl      # live, and record every snapshot
    oracle-exporter --replay demo.jsonl --once                  # one exposition on stdout

With both --config.file and --replay, the databases come from the recording and
the config file contributes settings (histogram events, latches, collectors,
timeouts) and the extra labels of databases with the same name.
"""
from __future__ import annotations

import argparse
import gc
import html
import logging
import os
import signal
import sys
from urllib.parse import quote

from exporter_common.cli import (EpilogFormatter, base_parser, declarations_help, negotiate_format, negotiated,
                                 run_main, serve, setup_logging)
from exporter_common.config import ConfigError
from exporter_common.exposition import choose_text_encoder, encode_text
from exporter_common.process import ProcessMetrics, with_process
from exporter_common.web import Response, landing_page, load_web_config

from . import __version__
from .collectors.custom_sql import OpenMetricsSafe
from .config import DEFAULT_TIMEOUT_SECONDS, Config, Settings, load_config
from .exporter import OracleExporter, Target, load_collectors
from .sources.recorder import Recorder, RecordingSource
from .sources.replay import replay_sources

log = logging.getLogger("oracle_exporter")

DEFAULT_PORT = 19161
SCRAPE_TIMEOUT_HEADER = "x-prometheus-scrape-timeout-seconds"


def build_parser() -> argparse.ArgumentParser:
    p = base_parser("oracle-exporter",
                    "Prometheus exporter for Oracle Database: wait events with latency histograms, "
                    "redo/LGWR, PGA, latches, load profile (python-oracledb thin mode).", DEFAULT_PORT)
    p.add_argument("--config.file", dest="config_file", default=None,
                   help="YAML file listing the databases (see docs/oracle-exporter.md)")
    p.add_argument("--replay", dest="replay", default=None, metavar="FILE",
                   help="serve snapshots recorded in FILE (JSON Lines) instead of live databases")
    p.add_argument("--replay-loop", dest="replay_loop", action="store_true",
                   help="with --replay: start over after the last snapshot, keeping counters monotonic")
    p.add_argument("--record", dest="record", default=None, metavar="FILE",
                   help="append every fetched snapshot to FILE (JSON Lines, the --replay format)")
    p.add_argument("--refusals.file", dest="refusals_file", default=None, metavar="FILE",
                   help="where refused logons are remembered across restarts (salted hashes, never a password): "
                        "a refused password is not tried again until it changes or a reload (SIGHUP); "
                        "default $XDG_STATE_HOME/oracle-exporter/refusals.json, else "
                        "~/.local/state/oracle-exporter/refusals.json; '' keeps them in memory only")
    p.add_argument("--version", action="version", version=f"oracle-exporter {__version__}")
    from .collectors import SPECS
    from .core import SPEC as CORE
    p.formatter_class = EpilogFormatter
    p.epilog = declarations_help(SPECS, CORE, sections=False)
    return p


def build_exporter(args: argparse.Namespace) -> tuple[OracleExporter, str]:
    """Exporter for the parsed arguments and a word for the mode; ConfigError on bad input."""
    if args.replay_loop and not args.replay:
        raise ConfigError("--replay-loop", None, "needs --replay FILE")
    if args.replay and args.record and _same_file(args.replay, args.record):
        raise ConfigError("--record", None, f"{args.record!r} is the file --replay serves: the replay would append "
                                            "to its own recording (record to another file)")
    if not args.config_file and not args.replay:
        raise ConfigError("oracle-exporter", None,
                          "nothing to monitor: give --config.file FILE (databases, see "
                          "docs/oracle-exporter.md and examples/oracle-exporter.yml) or --replay FILE "
                          "(serve a recording, no database needed)")
    collectors = load_collectors()
    config: Config | None = load_config(args.config_file, collectors) if args.config_file else None
    settings = config.settings if config else Settings()
    if config is not None:
        from .intervals import freshness_warnings
        for line in freshness_warnings(config.refresh_interval_seconds, None, settings):
            log.warning("%s", line)
    recorder = Recorder(args.record) if args.record else None
    targets: list[Target] = []
    if args.replay:
        by_name = {d.name: d for d in config.databases} if config else {}
        default_timeout = config.timeout_seconds if config else DEFAULT_TIMEOUT_SECONDS
        for src in replay_sources(args.replay, loop=args.replay_loop):
            db = by_name.get(src.name)
            targets.append(Target(src.name, src, dict(db.labels) if db else {},
                                  db.timeout_seconds if db else default_timeout,
                                  min_interval=config.min_interval_seconds if config else 0.0))
        mode = "replay" + (" (loop)" if args.replay_loop else "") + f" of {args.replay}"
    else:
        assert config is not None
        from .refusals import RefusalStore, default_path, shared_logons
        from .sources.live import LiveSource, init_driver
        driver = init_driver(config.thick_mode, config.lib_dir, config.config_dir)
        refusals_file = getattr(args, "refusals_file", None)
        refusals = RefusalStore(default_path() if refusals_file is None else refusals_file)
        for line in shared_logons(config.databases):
            log.warning("%s", line)
        for db in config.databases:
            src = LiveSource(db, settings, call_timeout=db.timeout_seconds,
                             connect_timeout=config.connect_timeout_seconds,
                             backoff_initial=min(1.0, config.reconnect_backoff_max_seconds),
                             backoff_cap=config.reconnect_backoff_max_seconds, refusals=refusals,
                             locked_retry=config.locked_retry_seconds)
            targets.append(Target(db.name, src, dict(db.labels), db.timeout_seconds,
                                  min_interval=config.min_interval_seconds))
        mode = f"live ({args.config_file}, {driver} mode)"
    if recorder:
        for t in targets:
            t.source = RecordingSource(t.source, recorder)
        mode += f", recording to {args.record}"
    return OracleExporter(targets, settings, collectors,
                          refresh_interval=config.refresh_interval_seconds if config else 0.0), mode


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (the same inode, or the same path once resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _header(headers: dict[str, str], name: str) -> str | None:
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def _scrape_timeout(headers: dict[str, str]) -> float | None:
    """Prometheus announces its scrape timeout; answer a little before it."""
    value = _header(headers, SCRAPE_TIMEOUT_HEADER)
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None
    if seconds is None or seconds <= 0:
        return None
    return max(0.1, seconds - 0.5)


def _for_format(registry, headers: dict[str, str], openmetrics: bool):
    """The registry as the negotiated format needs it: in OpenMetrics, the counters of Oracle's
    metric files (bare names, no _total) are served as unknown (custom_sql.ExactName)."""
    if not openmetrics:
        return registry
    accept = _header(headers, "accept") or ""
    if choose_text_encoder(accept)[1].startswith("application/openmetrics-text"):
        return OpenMetricsSafe(registry)
    return registry


def make_routes(exporter: OracleExporter, telemetry_path: str = "/metrics", mode: str = "",
                openmetrics: bool = False, process: ProcessMetrics | None = None) -> dict:
    """The HTTP routes; ``process`` adds the exporter's own process metrics to ``/metrics``
    (after every database's families), never to ``/probe``."""
    def render(names, headers):
        """Each database rendered once per fetch (OracleExporter.exposition); a format rendered
        elsewhere (OpenMetrics 2.0) through prometheus_client on freshly built families."""
        fmt, other = negotiate_format(headers, openmetrics)
        timeout = _scrape_timeout(headers)
        tail = process.collect() if process is not None and names is None else ()
        if fmt is None:
            registry = _for_format(exporter.registry(names, timeout), headers, openmetrics)
            encoder, content_type = other
            return negotiated(encoder(with_process(registry, process) if names is None else registry), content_type)
        return negotiated(exporter.exposition_pieces(fmt, names, timeout, tail), fmt.content_type)

    def metrics(query, headers):
        return render(None, headers)

    def probe(query, headers):
        target = (query.get("target") or [""])[0]
        if not target:
            return Response(400, b"missing parameter: /probe?target=<database name>\n")
        if target not in exporter.targets:
            known = ", ".join(sorted(exporter.targets))
            return Response(404, f"unknown target {target!r}; configured databases: {known}\n".encode())
        return render([target], headers)

    def index(query, headers):
        links = [(telemetry_path, f"Metrics of all databases ({telemetry_path})")]
        links += [(f"/probe?target={quote(name)}", f"Probe {name}") for name in exporter.targets]
        extra = (f"<p>oracle-exporter {html.escape(__version__)}: {html.escape(mode)}; "
                 f"{len(exporter.targets)} database(s).</p>")
        return landing_page("Oracle exporter", links, extra)

    def healthy(query, headers):
        return Response(200, b"OK\n")

    return {"/": index, telemetry_path: metrics, "/probe": probe, "/-/healthy": healthy}


def live_sources(exporter: OracleExporter) -> list:
    """The live sources behind the targets (a recording wrapper unwrapped); none in replay."""
    from .sources.live import LiveSource
    found = []
    for target in exporter.targets.values():
        src = target.source
        src = getattr(src, "inner", src)    # RecordingSource (--record)
        if isinstance(src, LiveSource):
            found.append(src)
    return found


def reload(exporter: OracleExporter) -> int:
    """SIGHUP: the password sources are read again at the next fetch of every database (they
    are at every logon attempt anyway), and a database whose logon was refused gets one more
    attempt even with an unchanged password (an unlocked account, a new grant), at most
    refusals.SIGHUP_RETRIES times an hour. Only sets flags: safe in a signal handler. Returns
    how many live databases were told."""
    sources = live_sources(exporter)
    for src in sources:
        src.request_retry()
    log.warning("reload (SIGHUP): password_file/password_env of %d database(s) read again at their next fetch; "
                "a refused logon is tried once more (at most %d times an hour with an unchanged password); "
                "the config file itself is not re-read (restart for that)", len(sources), _sighup_retries())
    return len(sources)


def _sighup_retries() -> int:
    from .refusals import SIGHUP_RETRIES
    return SIGHUP_RETRIES


def tune_gc() -> None:
    """A served exporter allocates and drops hundreds of thousands of short-lived rows, dicts and
    lines per round of its databases and makes no reference cycles to speak of: the cyclic
    collector's default (a young-generation pass every 700 allocations, each older pass walking
    every database's rows) spent a tenth of a 500-database round. The start's objects (modules,
    declarations, the replay's index) are frozen out of every pass, and the young generation is
    collected every 20,000 allocations (at 500 databases: 1.0 -> 0.2 s of a 9 s round)."""
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def install_reload(exporter: OracleExporter) -> None:
    """SIGHUP reloads the password sources (``reload``) instead of killing the process."""
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, lambda signum, frame: reload(exporter))


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.log_level, args.log_format)
    load_web_config(args.web_config_file)   # checked with --once too: never silently ignored
    exporter, mode = build_exporter(args)
    process = ProcessMetrics()
    try:
        if args.once:
            families = exporter.scrape()
            sys.stdout.buffer.write(encode_text([*families, *process.collect()]))
            sys.stdout.flush()
            down = [s.labels["database"] for f in families if f.name == "oracle_up" for s in f.samples if not s.value]
            if down:
                print(f"oracle-exporter: database(s) down: {', '.join(down)}", file=sys.stderr)
                return 1
            return 0
        log.info("oracle-exporter %s: %s; databases: %s", __version__, mode, ", ".join(exporter.targets))
        install_reload(exporter)
        tune_gc()
        if exporter.refresh_interval > 0:
            log.info("background refresh: every database fetched every %g s, scrapes serve the last fetch",
                     exporter.refresh_interval)
            exporter.expect(negotiate_format({}, args.enable_openmetrics)[0])
        exporter.start_refresh()
        rc = serve(args.listen_address, args.web_config_file,
                   make_routes(exporter, args.telemetry_path, mode, args.enable_openmetrics, process),
                   "oracle-exporter",
                   args.max_requests, not args.disable_compression)
        stuck = exporter.close(grace=2.0)
        if stuck:   # a fetch that never returns must not hold up the shutdown (the pool joins its threads)
            log.warning("exiting with %d fetch(es) still running", stuck)
            logging.shutdown()
            os._exit(rc)
        return rc
    finally:
        exporter.close()


def hold_reloads() -> None:
    """SIGHUP before ``install_reload`` (a ``systemctl reload`` while the exporter starts: its
    ExecReload is ``kill -HUP``) would end the process (exit 129): ignored until then."""
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> int:
    hold_reloads()
    return run_main(lambda: _main(argv))
