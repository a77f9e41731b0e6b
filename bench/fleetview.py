"""Prometheus queries per wallboard refresh at 10 and 200 databases (issue 25).

    .venv/bin/python -m bench.fleetview

A stand-in Prometheus (real HTTP on a free loopback port) answers every instant query with one
series per database (queries aggregated `by (database)`) or per host, and counts the requests;
the wallboard (fleetview.wallboard.collect + render, through the real HTTP client) refreshes
5 times per fleet size. Prints requests per refresh, the time of a refresh and the page size.
"""
from __future__ import annotations

import json
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from fleetview import wallboard
from fleetview.core import Upstream, load_spec


def fake_prometheus(dbs: int, hosts: int):
    count = {"n": 0}

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            count["n"] += 1
            expr = parse_qs(urlsplit(self.path).query).get("query", [""])[0]
            key, n = ("database", dbs) if "by (database)" in expr else ("instance", hosts)
            status = "ALERTS" in expr
            result = [{"metric": {key: f"{key[:2]}{i:03d}"}, "value": [time.time(), str(i % 4 if status else i / 1000)]}
                      for i in range(n)]
            body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, count


def main() -> int:
    spec = load_spec()
    print(f"{'databases':>9} {'hosts':>5} {'queries/refresh':>15} {'refresh ms (median)':>19} {'page KiB':>8}")
    for dbs, hosts in ((10, 8), (200, 150)):
        srv, count = fake_prometheus(dbs, hosts)
        prom = Upstream(f"http://127.0.0.1:{srv.server_address[1]}")
        times, per = [], []
        for _ in range(5):
            before, t0 = count["n"], time.perf_counter()
            page = wallboard.render(wallboard.collect(spec, prom, None), spec, prom.url)
            times.append((time.perf_counter() - t0) * 1000)
            per.append(count["n"] - before)
        srv.shutdown()
        assert len(set(per)) == 1
        print(f"{dbs:>9} {hosts:>5} {per[0]:>15} {statistics.median(times):>19.1f} {len(page) / 1024:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
