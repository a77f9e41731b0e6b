"""HTTP layer benchmark (issue 15): the exporters' HTTP server against node_exporter and
well-kept Python HTTP servers, serving the same exposition.

    .venv/bin/python -m bench.http [--servers today,cheroot,waitress,node] [--requests N]
                                   [--results build/bench/RESULTS.md]

Servers (each its own process, on 127.0.0.1, measured one after the other):

* ``before``: the same at commit 89a2876 (before issue 15: backlog 5, no header limit,
  no NODELAY), run from a ``git archive`` of that commit;
* ``today``: dbhost-exporter (exporter_common/web.py) on the fixture tree of
  dbhost_exporter.demo.tree (the same ~40 KB exposition every scrape);
* ``cheroot`` / ``waitress``: the same registry and exposition served as a WSGI app
  by cheroot or waitress (bench/http_candidates.py; installed from the ``bench``
  extra), with their own header limits, timeouts and thread pools;
* ``node``: /usr/bin/prometheus-node-exporter (Go, exporter-toolkit) on the same
  fixture tree, diskstats only: the reference for the HTTP layer.

Measures, per server: latency p50/p99 of GET /metrics with 1 and 50 concurrent clients,
over one kept-alive connection per client and with a new connection per request;
accept-queue overflows (TcpExtListenOverflows delta) during the 50-client runs; resident
memory (VmRSS, VmHWM) while 100 clients each send 5 MiB of headers at full speed and
never finish, and the time a normal scrape takes meanwhile.
"""
from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import DEFAULT_RESULTS, BenchError, machine, progress, write_section
from stack.procs import free_port

ROOT = Path(__file__).resolve().parent.parent
NODE = "/usr/bin/prometheus-node-exporter"


def rss_kib(pid: int) -> tuple[int, int]:
    vals = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                k, v = line.split(":", 1)
                vals[k] = int(v.split()[0])
    return vals.get("VmRSS", 0), vals.get("VmHWM", 0)


def listen_overflows() -> int:
    """TcpExtListenOverflows (accept queue full) from /proc/net/netstat."""
    lines = Path("/proc/net/netstat").read_text().splitlines()
    for head, vals in zip(lines[::2], lines[1::2]):
        if head.startswith("TcpExt:"):
            return int(dict(zip(head.split()[1:], vals.split()[1:]))["ListenOverflows"])
    return 0


@dataclass
class Server:
    name: str
    proc: subprocess.Popen
    port: int

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


BEFORE = "89a2876"   # main before issue 15: the hand-written server as the issue measured it


def checkout(commit: str, dest: Path) -> Path:
    """The exporters' sources at commit (git archive), to run the server as it was."""
    dest.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "exporters"], check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest / "exporters"


def start(name: str, tree, before_src: Path | None = None) -> Server:
    port = free_port()
    env = None
    if name == "before":
        env = {**os.environ, "PYTHONPATH": str(before_src)}
        argv = [sys.executable, "-c", "import sys; from dbhost_exporter.cli import main; sys.exit(main())",
                f"--path.procfs={tree.procfs}", f"--path.sysfs={tree.sysfs}", f"--config.file={tree.config}",
                f"--web.listen-address=127.0.0.1:{port}", "--log.level=error"]
    elif name == "today":
        argv = [str(Path(sys.executable).parent / "dbhost-exporter"), f"--path.procfs={tree.procfs}",
                f"--path.sysfs={tree.sysfs}", f"--config.file={tree.config}",
                f"--web.listen-address=127.0.0.1:{port}", "--log.level=error"]
    elif name == "node":
        argv = [NODE, f"--web.listen-address=127.0.0.1:{port}", f"--path.procfs={tree.procfs}",
                f"--path.sysfs={tree.sysfs}", "--collector.disable-defaults", "--collector.diskstats"]
    else:
        argv = [sys.executable, "-m", "bench.http_candidates", name, str(tree.procfs), str(tree.sysfs),
                str(tree.config), str(port)]
    proc = subprocess.Popen(argv, cwd=ROOT if env is None else before_src, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if proc.poll() is not None:
                raise BenchError(f"{name} exited with {proc.returncode}: {' '.join(argv)}")
            time.sleep(0.1)
    else:
        proc.kill()
        raise BenchError(f"{name} did not listen on {port}")
    return Server(name, proc, port)


def _client(port: int, n: int, keepalive: bool, out: list[float], errors: list[str]) -> None:
    conn = None
    for _ in range(n):
        t0 = time.perf_counter()
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", "/metrics", headers={} if keepalive else {"Connection": "close"})
            resp = conn.getresponse()
            body = resp.read()
            if resp.status != 200 or not body:
                errors.append(f"status {resp.status}")
                if not keepalive or resp.will_close:
                    conn.close()
                    conn = None
                continue
            if not keepalive or resp.will_close:
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            if conn is not None:
                conn.close()
            conn = None
            continue
        out.append(time.perf_counter() - t0)
    if conn is not None:
        conn.close()


def latency(port: int, clients: int, keepalive: bool, requests: int) -> dict:
    per = max(1, requests // clients)
    outs: list[list[float]] = [[] for _ in range(clients)]
    errors: list[str] = []
    _client(port, 3, keepalive, [], [])   # warm-up
    over0 = listen_overflows()
    threads = [threading.Thread(target=_client, args=(port, per, keepalive, outs[i], errors)) for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = sorted(x for o in outs for x in o)
    if not lat:
        raise BenchError(f"no successful request: {errors[:3]}")
    q = statistics.quantiles(lat, n=100) if len(lat) > 1 else [lat[0]] * 99
    return {"p50": q[49] * 1000, "p99": q[98] * 1000, "max": lat[-1] * 1000, "n": len(lat),
            "errors": len(errors), "overflows": listen_overflows() - over0, "rps": len(lat) / wall}


def header_flood(server: Server, clients: int = 100) -> dict:
    """clients connections each send 95 header lines of 60,000 bytes (5.7 MB: under the
    per-line limit of 64 KiB and the count limit of 100 of Python's http.client) as fast as
    the server takes them and never finish the request; RSS during, and a normal scrape's
    time meanwhile."""
    line = b"X-Flood: " + b"a" * 59989 + b"\r\n"
    total = 95 * len(line)
    socks: list[socket.socket] = []
    sent = [0]
    stop = threading.Event()

    def flood() -> None:
        try:
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        except OSError:
            return
        socks.append(s)
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            n = 0
            while n < total and not stop.is_set():
                s.sendall(line)
                n += len(line)
                sent[0] += len(line)
        except OSError:
            pass       # the server answered 431 / closed: what we want
        while not stop.is_set():
            time.sleep(0.1)

    rss0 = rss_kib(server.proc.pid)[0]
    threads = [threading.Thread(target=flood, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(8)
    rss_during, hwm = rss_kib(server.proc.pid)
    t0 = time.perf_counter()
    ok = False
    try:
        c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        c.request("GET", "/metrics")
        ok = c.getresponse().status == 200
        c.close()
    except (OSError, http.client.HTTPException):
        pass
    scrape = time.perf_counter() - t0
    stop.set()
    for s in socks:
        s.close()
    time.sleep(3)
    rss_after = rss_kib(server.proc.pid)[0]
    return {"rss0": rss0 / 1024, "rss_during": rss_during / 1024, "hwm": hwm / 1024, "rss_after": rss_after / 1024,
            "scrape_s": scrape, "scrape_ok": ok, "sent_mib": sent[0] / 1048576}


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process (all its threads), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def idle_connections(server: Server, n: int = 1000) -> dict:
    """n connections that send nothing (half of them) or half a request (the other half), held
    open: the server's thread count with them, and a normal scrape's time meanwhile (issue 26.5:
    one thread per connection, 1,003 threads for 1,000 idle connections)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 200), hard))
    before = threads_of(server.proc.pid)
    socks = []
    try:
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            if i % 2:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        time.sleep(2)
        during = threads_of(server.proc.pid)
        t0 = time.perf_counter()
        c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        c.request("GET", "/metrics")
        ok = c.getresponse().status == 200
        c.close()
        scrape = time.perf_counter() - t0
    finally:
        for s in socks:
            s.close()
    return {"before": before, "during": during, "scrape_s": scrape, "scrape_ok": ok, "n": n}


def run(servers: list[str], requests: int, before: str = BEFORE, flood: bool = True) -> tuple[list[str], dict]:
    from dbhost_exporter.demo import tree
    tmp = Path(tempfile.mkdtemp(prefix="bench-http-"))
    fx = tree.build_tree(tmp / "tree")
    before_src = checkout(before, tmp / "before") if "before" in servers else None
    rows = {}
    for name in servers:
        progress(f"{name}: starting")
        srv = start(name, fx, before_src)
        try:
            r = {}
            for clients in (1, 50):
                for keepalive in (True, False):
                    progress(f"{name}: {clients} client(s), keep-alive {keepalive}")
                    cpu0 = cpu_seconds(srv.proc.pid)
                    r[(clients, keepalive)] = latency(srv.port, clients, keepalive, requests if clients == 1 else 10 * requests)
                    r[(clients, keepalive)]["cpu_ms"] = ((cpu_seconds(srv.proc.pid) - cpu0) * 1000
                                                         / max(1, r[(clients, keepalive)]["n"]))
            progress(f"{name}: 1,000 idle connections")
            r["idle"] = idle_connections(srv)
            if flood:
                progress(f"{name}: header flood")
                r["flood"] = header_flood(srv)
            rows[name] = r
        finally:
            srv.stop()
    return table(rows), rows


def table(rows: dict) -> list[str]:
    out = ["| server | 1 client keep-alive p50 / p99 | 1 client new conn p50 / p99 | 50 clients keep-alive p50 / p99 "
           "| 50 clients new conn p50 / p99 (max) | accept-queue overflows | RSS idle -> under header flood (peak) "
           "| scrape during flood | threads: idle -> 1,000 idle connections (scrape meanwhile) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        def cell(k):
            x = r[k]
            return f"{x['p50']:.1f} / {x['p99']:.1f} ms" + (f" ({x['errors']} refused)" if x["errors"] else "")
        f = r.get("flood")
        new50 = r[(50, False)]
        idle = r["idle"]
        flood_cells = (f"{f['rss0']:.0f} -> {f['rss_during']:.0f} MiB ({f['hwm']:.0f}) "
                       f"| {f['scrape_s'] * 1000:.1f} ms{'' if f['scrape_ok'] else ' FAILED'}") if f else "not run | not run"
        out.append(f"| {name} | {cell((1, True))} | {cell((1, False))} | {cell((50, True))} | {cell((50, False))} "
                   f"({new50['max']:.0f} ms) | {r[(50, False)]['overflows'] + r[(50, True)]['overflows']} "
                   f"| {flood_cells} | {idle['before']} -> {idle['during']} "
                   f"({idle['scrape_s'] * 1000:.1f} ms{'' if idle['scrape_ok'] else ' FAILED'}) |")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.http", description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", default="before,today,cheroot,waitress,node")
    p.add_argument("--before", default=BEFORE, help=f"commit of the 'before' server (default {BEFORE})")
    p.add_argument("--requests", type=int, default=200, help="requests per 1-client run (x10 for 50 clients)")
    p.add_argument("--results", default=str(DEFAULT_RESULTS),
                   help="RESULTS.md to write the section 'http' into (- for stdout only)")
    p.add_argument("--quick", action="store_true",
                   help="today and node only, 50 requests per 1-client run, no header flood (about a minute)")
    args = p.parse_args(argv)
    if args.quick:
        args.servers, args.requests = "today,node", 50
    lines, rows = run(args.servers.split(","), args.requests, args.before, flood=not args.quick)
    lines += compare(rows)
    print(machine())
    print("\n".join(lines))
    if args.results != "-":
        head = ["## HTTP layer: today's server vs before, cheroot, waitress and node_exporter (issues 15, 10.3, 26)", "",
                f"Command: `.venv/bin/python -m bench.http "
                f"{'--quick' if args.quick else f'--servers {args.servers} --requests {args.requests}'}"
                f"{f' --before {args.before}' if 'before' in args.servers.split(',') else ''}` (candidates from the `bench` "
                f"extra: `pip install -e '.[bench]'`). {machine()}. Every server serves dbhost-exporter's exposition "
                "of the fixture tree (node_exporter: its diskstats of the same tree); p50/p99 of GET /metrics, "
                "'refused' = requests answered 503 by a concurrency limit (`--web.max-requests` 40 for ours and "
                "node_exporter) or failed; latency counts the answered ones. Header flood: 100 clients each "
                "sending 5.7 MB of headers and never finishing.", ""]
        write_section(Path(args.results), "http", "\n".join(head + lines + ["", DECISION]))
    return 0


def compare(rows: dict) -> list[str]:
    """Issue 26.5's targets from this run: p99 at 50 kept-alive clients within 1.5x of node_exporter's,
    1,000 idle connections holding at most a few dozen threads."""
    out = [""]
    today, node = rows.get("today"), rows.get("node")
    if today and node:
        for keep in (True, False):
            a, b = today[(50, keep)]["p99"], node[(50, keep)]["p99"]
            out.append(f"- 50 clients, {'kept-alive' if keep else 'new connection each'}: p99 {a:.0f} ms against "
                       f"node_exporter's {b:.0f} ms ({a / b:.2f}x; target <= 1.5x: {'met' if a <= 1.5 * b else 'NOT met'})")
    for name, r in rows.items():
        out.append(f"- {name}: server CPU per answered request (the warm-up's 3 included) "
                   + ", ".join(f"{c} client{'s' if c > 1 else ''} {'kept-alive' if k else 'new conn'} "
                               f"{r[(c, k)]['cpu_ms']:.1f} ms" for c in (1, 50) for k in (True, False)))
    if today:
        idle = today["idle"]
        added = idle["during"] - idle["before"]
        out.append(f"- 1,000 idle connections (half silent, half with half a request): {added:+d} threads, "
                   f"{idle['during']} in all (the worker pool, grown to `--web.max-requests` 40 by the 50-client "
                   f"runs before, and the event loop; target: a few dozen at most: "
                   f"{'met' if added <= 2 and idle['during'] <= 48 else 'NOT met'})")
    return out


DECISION = (
    "Decision (issue 26): exporter_common/web.py no longer copies CPython's request loop (ThreadingHTTPServer, "
    "one OS thread per connection). One event-loop thread (selectors) accepts, runs TLS handshakes and reads "
    "request headers of every connection without blocking; complete requests go to a worker pool bounded by "
    "`--web.max-requests` (beyond it: 503 at once, as node_exporter). An idle or trickling connection costs a "
    "socket and its buffer, never a thread (last column; before: one thread each, held up to 120 s), and each "
    "phase has its deadline (handshake and headers 10 s, idle 120 s, writing 60 s); bcrypt checks run one at a "
    "time with a cache of good ones, as exporter-toolkit does. Not adopted: waitress (no TLS) and cheroot (not "
    "installed for this run; the exporter-toolkit web config, flags and limits would have to be rebuilt on it). "
    "Latency at 50 clients was bounded by the exporter's CPU per scrape (Python collectors and exposition on a "
    "2-core machine, every request collecting and rendering on its own, 40 at once), not by the HTTP layer. "
    "Since issue 26's follow-up, concurrent scrapes of the same exposition (same format and query) share one "
    "collection and rendering (exporter_common/coalesce.py): a scrape that arrives while an answer is being "
    "made waits for it and gets its bytes, one that arrives after it was finished gets a new one (no answer "
    "carries data collected before its request arrived, save from a run that was still going when it "
    "arrived); a waiting scrape takes no `--web.max-requests` slot (the event loop attaches it to the answer "
    "in progress when its headers are read) and keeps its own scrape time limit.")


if __name__ == "__main__":
    sys.exit(main())
