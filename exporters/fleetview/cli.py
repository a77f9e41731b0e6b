"""Console scripts.

    oracle-fleetview --prometheus.url http://127.0.0.1:19090 --alertmanager.url http://127.0.0.1:19093
        serves /wallboard (the fleet wallboard) and /capacity?database=NAME (the capacity report),
        with the exporters' web config (--web.config.file: TLS, basic auth).
    oracle-capacity-report --prometheus URL --database NAME [--baseline 7d] [--window 1h] --out FILE
        writes the capacity report as one self-contained HTML file and FILE's .md next to it.

Bad input, an unreachable Prometheus, an unknown database or a window without data: one line
on stderr, exit 1 (2 for bad arguments); on the server, a page that says so.
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from exporter_common.cli import base_parser, serve, setup_logging
from exporter_common.config import ConfigError
from exporter_common.web import Response, load_web_config

from . import capacity, wallboard
from .core import FleetviewError, Upstream, load_spec

DEFAULT_PORT = 19180
log = logging.getLogger("fleetview")


def _html(status: int, text: str) -> Response:
    return Response(status, text.encode(), "text/html; charset=utf-8", {"Cache-Control": "no-store"})


def make_routes(spec: dict, prom: Upstream, am: Upstream | None, public_prom: str | None = None) -> dict:
    prom_link = (public_prom or prom.url).rstrip("/")

    def board(query, headers):
        try:
            b = wallboard.collect(spec, prom, am)
        except FleetviewError as exc:
            return _html(503, wallboard.error_page("Fleet wallboard", str(exc)))
        return _html(200, wallboard.render(b, spec, prom_link))

    def cap(query, headers):
        database = (query.get("database") or [""])[0]
        if not database:
            return _html(400, capacity.error_html("missing parameter: /capacity?database=NAME"
                                                  "[&window=1h][&baseline=7d][&host=...]"))
        try:       # bad window or baseline: the request's fault, one line, 400 (rev-views #14)
            start, end, offset = capacity.windows((query.get("window") or [None])[0],
                                                  (query.get("baseline") or [None])[0])
        except FleetviewError as exc:
            return _html(400, capacity.error_html(str(exc)))
        try:
            rep = capacity.collect(spec, prom, database, start, end, offset, (query.get("host") or [None])[0])
        except FleetviewError as exc:
            text = str(exc)
            status = 404 if "unknown database" in text or text.startswith("no data for") else 503
            return _html(status, capacity.error_html(text))
        return _html(200, capacity.render_html(rep))

    def index(query, headers):
        return Response(302, b"", headers={"Location": "wallboard"})

    def healthy(query, headers):
        return Response(200, b"OK\n")

    return {"/": index, "/wallboard": board, "/capacity": cap, "/-/healthy": healthy, "/-/ready": healthy}


def _upstream_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--upstream.ca-file", dest="ca_file", default=None,
                   help="CA bundle to verify Prometheus/Alertmanager over https")
    p.add_argument("--upstream.insecure-skip-verify", dest="insecure", action="store_true",
                   help="do not verify their TLS certificates")
    p.add_argument("--upstream.timeout", dest="timeout", type=float, default=10.0, help="seconds per request (default 10)")
    p.add_argument("--spec", default=None, help="spec.json of a site's pack (make generate MIXIN_CONFIG=... --out DIR); "
                                                "default: the one shipped")


def fleetview_main(argv: list[str] | None = None) -> int:
    p = base_parser("oracle-fleetview", "Fleet wallboard and capacity report pages from Prometheus and "
                    "Alertmanager, without Grafana.", DEFAULT_PORT)
    p.add_argument("--prometheus.url", dest="prometheus", required=True,
                   help="Prometheus base URL (http(s)://[user:password@]host:port)")
    p.add_argument("--prometheus.public-url", dest="public_prometheus", default=None,
                   help="Prometheus URL for links in the pages (default --prometheus.url)")
    p.add_argument("--alertmanager.url", dest="alertmanager", default=None, help="Alertmanager base URL (firing alerts)")
    _upstream_args(p)
    args = p.parse_args(argv)
    setup_logging(args.log_level, args.log_format)
    try:
        spec = load_spec(args.spec)
        prom = Upstream(args.prometheus, args.ca_file, args.insecure, args.timeout)
        am = (Upstream(args.alertmanager, args.ca_file, args.insecure, args.timeout, name="Alertmanager")
              if args.alertmanager else None)
        routes = make_routes(spec, prom, am, args.public_prometheus)
        if args.once:
            resp = routes["/wallboard"]({}, {})
            sys.stdout.write(resp.body.decode())
            return 0 if resp.status == 200 else 1
        load_web_config(args.web_config_file)
        return serve(args.listen_address, args.web_config_file, routes, "oracle-fleetview", args.max_requests)
    except FleetviewError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        for err in exc.all():
            print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def report_main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="oracle-capacity-report",
                                description="A database's capacity report, baseline window against current window, "
                                            "in the order of AWR Compare Periods, as one self-contained HTML file "
                                            "(and Markdown), from Prometheus.")
    p.add_argument("--prometheus", required=True, help="Prometheus base URL (http(s)://[user:password@]host:port)")
    p.add_argument("--database", required=True, help="the database label (oracle_up{database=...})")
    p.add_argument("--window", default="1h", help="current window: a duration ending now (1h, default), "
                   "START/END or START/DURATION (ISO 8601 like 2025-03-11T09:00:00Z, or unix seconds)")
    p.add_argument("--baseline", default="7d", help="baseline: an offset before the window (7d, default: the same "
                   "hour a week earlier; 1d) or the baseline window's START (same length as the window)")
    p.add_argument("--host", default=None, help="the database's host (instance label of node_exporter/dbhost-exporter); "
                   "default: the hosts running its LGWR")
    p.add_argument("--out", required=True, help="HTML file to write; the Markdown goes next to it (.md)")
    p.add_argument("--no-charts", action="store_true", help="leave out the charts")
    _upstream_args(p)
    args = p.parse_args(argv)
    try:
        spec = load_spec(args.spec)
        prom = Upstream(args.prometheus, args.ca_file, args.insecure, args.timeout)
        start, end, offset = capacity.windows(args.window, args.baseline)
        rep = capacity.collect(spec, prom, args.database, start, end, offset, args.host, charts=not args.no_charts)
    except FleetviewError as exc:
        print(f"oracle-capacity-report: error: {exc}", file=sys.stderr)
        return 1
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(capacity.render_html(rep), encoding="utf-8")
        md = out.with_suffix(".md") if out.suffix != ".md" else out.with_suffix(".report.md")
        md.write_text(capacity.render_markdown(rep), encoding="utf-8")
    except OSError as exc:
        print(f"oracle-capacity-report: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    fn = rep.findings("now")
    print(f"wrote {out} and {md}: {rep.database}, {len(fn)} finding(s) in the current window"
          + (f" ({', '.join(sorted({t for t, _, _ in fn}))})" if fn else "")
          + f", {len(rep.findings('base'))} in the baseline; {rep.queries} Prometheus queries")
    return 0


if __name__ == "__main__":
    sys.exit(fleetview_main())
