"""Candidate HTTP servers for bench/http.py: dbhost-exporter's registry and text
exposition (the same bytes as today's server sends) served as a WSGI app by a
well-kept Python HTTP server, with the limits each offers that issue 15 asks for.

    python -m bench.http_candidates cheroot|waitress PROCFS SYSFS CONFIG PORT

Only for measuring: neither serves basic auth or the exporter-toolkit web config.
"""
from __future__ import annotations

import sys

from dbhost_exporter.cli import make_registry
from dbhost_exporter.config import load_config
from exporter_common.exposition import encode_text


def app_for(procfs: str, sysfs: str, config: str):
    registry = make_registry(load_config(config), procfs, sysfs)

    def app(environ, start_response):
        if environ.get("PATH_INFO") != "/metrics":
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"Not Found\n"]
        body = encode_text(registry.collect())
        start_response("200 OK", [("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                                  ("Content-Length", str(len(body)))])
        return [body]

    return app


def main(argv: list[str]) -> int:
    name, port = argv[0], int(argv[4])
    app = app_for(*argv[1:4])
    if name == "cheroot":
        from cheroot import wsgi
        server = wsgi.Server(("127.0.0.1", port), app, numthreads=40, request_queue_size=4096,
                             timeout=10)
        server.max_request_header_size = 1 << 20
        server.nodelay = True
        try:
            server.start()
        finally:
            server.stop()
    elif name == "waitress":
        import waitress
        waitress.serve(app, host="127.0.0.1", port=port, threads=40, backlog=4096, channel_timeout=120,
                       max_request_header_size=1 << 20, connection_limit=1000, _quiet=True)
    else:
        print(f"unknown candidate {name}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
