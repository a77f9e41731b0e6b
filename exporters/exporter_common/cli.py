"""Command-line plumbing shared by both exporters: common flags, logging,
``--once``, serving, and turning configuration errors into exit status 2."""
from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import textwrap
import time
from typing import Callable

from prometheus_client.registry import CollectorRegistry

from .config import ConfigError
from .exposition import choose_text_encoder, negotiate
from .web import DEFAULT_MAX_REQUESTS, Handler, Response, load_web_config, make_server

log = logging.getLogger(__name__)


class LogfmtFormatter(logging.Formatter):
    """``ts=... level=info caller=module msg="..."`` like the Go exporters."""

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        msg = record.getMessage().replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        line = f'ts={ts} level={record.levelname.lower()} caller={record.name} msg="{msg}"'
        if record.exc_info:
            exc = self.formatException(record.exc_info).replace("\n", "\\n").replace('"', '\\"')
            line += f' err="{exc}"'
        return line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps({"ts": record.created, "level": record.levelname.lower(),
                           "caller": record.name, "msg": record.getMessage()})


def setup_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else LogfmtFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (no limit) or more, got {value}")
    return value


def base_parser(prog: str, description: str, default_port: int) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--web.listen-address", dest="listen_address", default=f":{default_port}",
                   help=f"address to listen on for HTTP (default :{default_port})")
    p.add_argument("--web.config.file", dest="web_config_file", default=None,
                   help="exporter-toolkit web config file (TLS, basic auth)")
    p.add_argument("--web.max-requests", dest="max_requests", type=_non_negative_int, default=DEFAULT_MAX_REQUESTS,
                   help=f"requests served at once; more are answered 503 at once (0: no limit, "
                        f"default {DEFAULT_MAX_REQUESTS}, as node_exporter)")
    p.add_argument("--web.disable-compression", dest="disable_compression", action="store_true",
                   help="never gzip an answer, even to a scraper that asks (Prometheus does by default): "
                        "saves the exporter the compression's CPU where bandwidth is cheap")
    p.add_argument("--web.telemetry-path", dest="telemetry_path", default="/metrics",
                   help="path under which to expose metrics (default /metrics)")
    p.add_argument("--log.level", dest="log_level", default="info",
                   choices=["debug", "info", "warn", "error"], help="log level")
    p.add_argument("--log.format", dest="log_format", default="logfmt", choices=["logfmt", "json"],
                   help="log line format: logfmt (key=value, default) or json (one object per line)")
    p.add_argument("--web.enable-openmetrics", dest="enable_openmetrics", action="store_true",
                   help="answer in OpenMetrics when the scraper asks for it (default: always the "
                        "Prometheus text format, which is cheaper to produce)")
    p.add_argument("--once", action="store_true",
                   help="print one exposition to stdout and exit")
    return p


def exposition(registry: CollectorRegistry, headers: dict[str, str] | None = None,
               openmetrics: bool = False) -> Response:
    """The registry's exposition: the text format through exporter_common.exposition.encode_text
    (same bytes as prometheus_client's generate_latest, less CPU). OpenMetrics (through
    prometheus_client) only with ``openmetrics=True`` (``--web.enable-openmetrics``) and when
    the Accept header asks for it: Prometheus prefers OpenMetrics, but these exporters use
    nothing only OpenMetrics carries, so by default they answer in the cheaper text format,
    as node_exporter does."""
    encoder, content_type = choose_text_encoder(_accept(headers, openmetrics))
    return negotiated(encoder(registry), content_type)


def negotiated(body, content_type: str) -> Response:
    """A metrics answer: its format (and name escaping) was chosen from the request's Accept
    header, so it says ``Vary: Accept`` (a cache between scraper and exporter must not hand an
    OpenMetrics answer to a text scraper); the HTTP layer adds Accept-Encoding when it may compress."""
    return Response(200, body, content_type, {"Vary": "Accept"})


def choose_format(headers: dict[str, str] | None, openmetrics: bool = False) -> str:
    """The content type ``exposition`` answers these headers with: two scrapes with the same one
    get the same bytes."""
    return choose_text_encoder(_accept(headers, openmetrics))[1]


def _accept(headers: dict[str, str] | None, openmetrics: bool) -> str:
    accept = next((v for k, v in (headers or {}).items() if k.lower() == "accept"), "") or ""
    if not openmetrics:
        accept = ",".join(part for part in accept.split(",") if "openmetrics" not in part.lower())
    return accept


def negotiate_format(headers: dict[str, str] | None, openmetrics: bool = False):
    """The format a scrape asks for, as ``exposition`` would answer it: (Format, None) when
    exporter_common.exposition renders it, else (None, (prometheus_client encoder, content type))."""
    return negotiate(_accept(headers, openmetrics))


def serve(listen: str, web_config_file: str | None, routes: dict[str, Handler], name: str,
          max_requests: int = DEFAULT_MAX_REQUESTS, compression: bool = True) -> int:
    web = load_web_config(web_config_file)
    server = make_server(listen, routes, web, max_requests, compression)
    scheme = "https" if web.ssl_context else "http"
    bound = f"{listen.rsplit(':', 1)[0]}:{server.server_address[1]}"     # port 0: the one the kernel gave
    log.info("%s listening on %s://%s (TLS %s, basic auth %s)", name, scheme, bound,
             "on" if web.ssl_context else "off", "on" if web.users else "off")

    def stop(signum, frame):
        log.info("received signal %d, shutting down", signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def run_main(body: Callable[[], int]) -> int:
    """Run an exporter's main body; configuration errors exit 2 with one line."""
    try:
        return body()
    except ConfigError as exc:
        for err in exc.all():      # every problem of a file at once, one line each
            print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def declarations_help(specs, exporter_spec, sections: bool) -> str:
    """A ``--help`` epilog from collector declarations (exporter_common.declare): each collector,
    whether it is on by default, and its settings with their defaults; then the exporter's own
    settings. ``sections``: a collector's settings live under its own key (``lun.roles``), else
    at the top level of the config file."""
    lines = ["collectors (the config file's collectors: {NAME: false} switches one off, {NAME: true} on):"]
    for spec in specs:
        state = "off unless switched on" if spec.opt_in else "on"
        lines.append(f"  {spec.name} ({state}): {spec.help}")
        for s in spec.settings:
            key = f"{spec.name}.{s.key}" if sections else s.key
            lines.append(f"    {key} (default {s.shown_default}): {s.help}")
    lines.append("exporter settings (top level of the config file):")
    for s in exporter_spec.settings:
        lines.append(f"    {s.key} (default {s.shown_default}): {s.help}")
    return "\n".join(lines)


class EpilogFormatter(argparse.HelpFormatter):
    """Wraps the description as usual; keeps the epilog's lines (one per collector and setting)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" not in text:
            return super()._fill_text(text, width, indent)
        out = []
        for line in text.splitlines():
            body = line.lstrip(" ")
            lead = indent + line[:len(line) - len(body)]
            out.append(textwrap.fill(body, width, initial_indent=lead, subsequent_indent=lead + "    "))
        return "\n".join(out)
