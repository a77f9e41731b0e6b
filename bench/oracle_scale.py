"""oracle-exporter at fleet scale (issue 26): 1 to 500 databases, 1 and 4 Prometheus servers.

    .venv/bin/python -m bench.oracle_scale [--sizes 1,50,200,500] [--scrapers 1,4] [--rounds 3]
                                          [--modes scrape,refresh] [--quick] [--before COMMIT]
                                          [--gzip] [--results bench/RESULTS.md]

Per size, a recording of N databases is written to a temporary directory (deleted afterwards,
never committed): 80 % single-instance databases (the snapshots of demo-before.jsonl's DEMO) and
20 % two-instance RAC databases (demo-rac-outage.jsonl's RACDB before its outage), each renamed
DBnnnn. oracle-exporter replays it in loop mode (``--replay --replay-loop``) in its own process
with ``min_interval_seconds`` 5 (an HA pair shares one fetch), and per scraper count:

* one process per size; one warm-up round, then ``--rounds`` rounds per scraper count, the counts
  taking turns (1, 4, 1, 4 ...: the same snapshots and machine load for both); a round is every
  scraper scraping /metrics at
  the same moment (Prometheus 2's Accept header; no scrape timeout header, so that a machine
  shared with other jobs cannot cut a round short and hide its cost), the next round
  starting once the minimum interval has passed since the end of the previous one (every round
  is a new fetch of every database, whose workers may start it late in a long round: the
  steady state of a 15 s scrape interval);
* CPU per round: the exporter process's utime + stime (all threads; the replay's reading and
  JSON decoding of the snapshots included, where a live exporter would wait for Oracle);
* slowest scrape: the longest wall time of a single scrape over all rounds (on a loaded machine
  mostly the wait for a core: compare it with the CPU of a round, which bounds it on an idle one);
* peak RSS: the process's VmHWM at the end (the same for both scraper counts: the peak of the run).

``--modes refresh`` (the default runs both) measures the same with background refresh
(``refresh_interval_seconds`` 15 instead of ``min_interval_seconds``): the exporter fetches on its
own clock, so CPU is taken over whole 15 s intervals (each starting with every scraper scraping
at once), not per round (measure_refresh).

Scrapers send ``Accept-Encoding: identity`` (Prometheus with ``enable_compression: false``);
``--gzip`` sends ``gzip``, Prometheus's default, and the exporter compresses every answer (decoded
in the scraper, outside the exporter's CPU).

``--before COMMIT`` runs the same with the exporters' sources of that commit (git archive) for
comparison. ``--quick``: sizes 1 and 50, 2 rounds (a minute on 2 cores).
"""
from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import DEFAULT_RESULTS, BenchError, cpu_seconds, free_port, machine, memory_kib, progress, write_section

ROOT = Path(__file__).resolve().parent.parent
MIN_INTERVAL = 5.0
INTERVAL = 15.0          # the scrape interval the targets are stated for
# Accept-Encoding of the scrapers: "identity" (Prometheus with enable_compression: false, the
# default here) or "gzip" (--gzip: Prometheus's default; the exporter then compresses every answer)
ENCODING = {"Accept-Encoding": "identity"}
PROM2_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
# One snapshot per database, replayed in a loop: every round costs the same, so the scraper counts
# compare on equal work (with several snapshots of different content, rounds taking turns met
# different snapshots: a bias of up to 1.6x seen at 50 databases). With one snapshot the replay
# has no deltas to move the counters by: every fetch returns the same values. The exporter does
# the same work whatever the values (it keeps nothing of one fetch's rows or output for the
# next), so this measures what moving counters would cost it; an exporter that reused work when
# a view's rows are unchanged would need moving counters here to be measured honestly.
SNAPSHOTS = 1


def _base_snapshots() -> tuple[list[str], list[str]]:
    """(single-instance snapshot lines, RAC snapshot lines) from the demo recordings."""
    from oracle_exporter import demo
    single, rac = [], []
    with open(demo.path("demo-before.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            if len(single) < SNAPSHOTS and json.loads(line)["database"] == "DEMO":
                single.append(line.rstrip("\n"))
    with open(demo.path("demo-rac-outage.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            snap = json.loads(line)
            if snap["database"] == "RACDB" and len(rac) < SNAPSHOTS and not snap.get("errors"):
                rac.append(line.rstrip("\n"))
    if len(single) < SNAPSHOTS or len(rac) < SNAPSHOTS:
        raise BenchError("demo recordings too short")
    return single, rac


def write_recording(path: Path, n: int) -> int:
    """N databases, every fifth a RAC database; returns the number of RAC databases."""
    single, rac = _base_snapshots()
    racs = 0
    names = []
    for i in range(n):
        is_rac = i % 5 == 4
        racs += is_rac
        names.append((f"DB{i + 1:04d}", rac if is_rac else single))
    with open(path, "w", encoding="utf-8") as out:
        for k in range(SNAPSHOTS):
            for name, lines in names:
                src = "RACDB" if lines is rac else "DEMO"
                out.write(lines[k].replace(f'"database":"{src}"', f'"database":"{name}"', 1) + "\n")
    return racs


def _config(path: Path, refresh: bool = False) -> None:
    mode = f"refresh_interval_seconds: {INTERVAL:g}\n" if refresh else f"min_interval_seconds: {MIN_INTERVAL}\n"
    path.write_text(mode + "databases:\n  - name: UNUSED\n    dsn: localhost:1521/unused\n    user: u\n"
                    "    password_env: BENCH_UNUSED\n")


def start(recording: Path, config: Path, src: Path | None) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {**os.environ, "BENCH_UNUSED": "unused"}
    if src:
        env["PYTHONPATH"] = str(src)
    argv = [sys.executable, "-c", "import sys; from oracle_exporter.cli import main; sys.exit(main())",
            "--replay", str(recording), "--replay-loop", "--config.file", str(config),
            f"--web.listen-address=127.0.0.1:{port}", "--log.level=error"]
    proc = subprocess.Popen(argv, cwd=src or ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/-/healthy")
            if c.getresponse().status == 200:
                c.close()
                return proc, port
        except OSError:
            if proc.poll() is not None:
                raise BenchError(f"exporter exited {proc.returncode}: {proc.stderr.read().decode()[-500:]}")
            time.sleep(0.2)
    proc.kill()
    raise BenchError("exporter did not start")


def _scrape(port: int, out: list, errors: list) -> None:
    t0 = time.perf_counter()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("GET", "/metrics", headers={"Accept": PROM2_ACCEPT, **ENCODING})
        r = c.getresponse()
        body = r.read()
        c.close()
        if r.status != 200:
            errors.append(r.status)
        if r.getheader("Content-Encoding") == "gzip":
            body = gzip.decompress(body)    # in the scraper's process: not the exporter's CPU
        out.append((time.perf_counter() - t0, len(body), body.count(b"\n") - body.count(b"\n#")))
    except (OSError, http.client.HTTPException) as exc:
        errors.append(type(exc).__name__)


def _round(port: int, scrapers: int, errors: list) -> list:
    out: list = []
    threads = [threading.Thread(target=_scrape, args=(port, out, errors)) for _ in range(scrapers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _summary(pid: int, scrapers: list[int], cpu: dict, walls: dict, sizes: list, errors: list) -> dict:
    """Per scraper count: mean CPU, slowest scrape, peak RSS, failures, largest answer."""
    return {s: {"cpu": sum(cpu[s]) / len(cpu[s]), "slowest": max(walls[s]) if walls[s] else float("nan"),
                "hwm": memory_kib(pid)[1] / 1024, "errors": len(errors),
                "bytes": max(x[0] for x in sizes) if sizes else 0,
                "series": max(x[1] for x in sizes) if sizes else 0} for s in scrapers}


def measure(port: int, pid: int, scrapers: list[int], rounds: int) -> dict:
    """Rounds with each scraper count taking turns (1, 4, 1, 4, ...) in one process, so that both
    see the same mix of snapshots and the same machine load; round 0 is a warm-up."""
    cpu: dict[int, list[float]] = {s: [] for s in scrapers}
    walls: dict[int, list[float]] = {s: [] for s in scrapers}
    sizes: list = []
    errors: list = []
    last = 0.0
    plan = [scrapers[0]] + [s for _ in range(rounds) for s in scrapers]
    for r, count in enumerate(plan):
        wait = MIN_INTERVAL + 0.3 - (time.monotonic() - last)
        if wait > 0:
            time.sleep(wait)
        c0 = cpu_seconds(pid)
        out = _round(port, count, errors)
        last = time.monotonic()     # the next round waits the minimum interval from this one's end: a
        # fetch starts when its worker gets to it, up to a round's length after the round began,
        # and one started less than the interval before the next round would be reused by it
        if r:
            cpu[count].append(cpu_seconds(pid) - c0)
            walls[count] += [o[0] for o in out]
            sizes += [(o[1], o[2]) for o in out]
    return _summary(pid, scrapers, cpu, walls, sizes, errors)


def measure_refresh(port: int, pid: int, scrapers: list[int], rounds: int) -> dict:
    """Background refresh (``refresh_interval_seconds`` = the scrape interval): the exporter
    fetches and renders on its own clock, so its CPU is measured over whole scrape intervals,
    not per round: a warm-up scrape (the first fetch of every database and the formats asked
    for), one interval for the refresh to run, then per scraper count (taking turns) ``rounds``
    intervals, each starting with every scraper scraping at once; CPU of the window / intervals."""
    errors: list = []
    _round(port, 1, errors)
    time.sleep(INTERVAL)
    cpu: dict[int, list[float]] = {s: [] for s in scrapers}
    walls: dict[int, list[float]] = {s: [] for s in scrapers}
    sizes: list = []
    for _ in range(rounds):
        for count in scrapers:
            c0, t0 = cpu_seconds(pid), time.monotonic()
            out = _round(port, count, errors)
            time.sleep(max(0.0, t0 + INTERVAL - time.monotonic()))
            cpu[count].append((cpu_seconds(pid) - c0) * INTERVAL / (time.monotonic() - t0))
            walls[count] += [o[0] for o in out]
            sizes += [(o[1], o[2]) for o in out]
    return _summary(pid, scrapers, cpu, walls, sizes, errors)


def run(sizes: list[int], scrapers: list[int], rounds: int, src: Path | None, refresh: bool = False) -> dict:
    rows = {}
    tmp = Path(tempfile.mkdtemp(prefix="bench-oracle-scale-"))
    try:
        config = tmp / "oracle-exporter.yml"
        _config(config, refresh)
        for n in sizes:
            rec = tmp / f"fleet-{n}.jsonl"
            racs = write_recording(rec, n)
            progress(f"{n} databases ({racs} RAC), scrapers {scrapers} taking turns, {rounds} round(s) each")
            proc, port = start(rec, config, src)
            try:
                for s, r in (measure_refresh if refresh else measure)(port, proc.pid, scrapers, rounds).items():
                    rows[(n, s)] = {**r, "rac": racs}
                    progress(f"  {s} scraper(s): {rows[(n, s)]}")
            finally:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
            rec.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def table(rows: dict, label: str = "", per: str = "round") -> list[str]:
    out = [f"| databases (RAC) | scrapers | series | CPU s per {per} (x one scraper) | CPU share of a core at "
           f"{INTERVAL:.0f} s | slowest scrape s | peak RSS MiB |", "|---|---|---|---|---|---|---|"]
    for (n, s), r in sorted(rows.items()):
        one = rows.get((n, 1))
        ratio = f" ({r['cpu'] / one['cpu']:.2f}x)" if one and s != 1 and one["cpu"] else ""
        err = f" ({r['errors']} failed)" if r["errors"] else ""
        out.append(f"| {label}{n} ({r['rac']}) | {s} | {r['series']} | {r['cpu']:.2f}{ratio} | "
                   f"{100 * r['cpu'] / INTERVAL:.0f} % | {r['slowest']:.2f}{err} | {r['hwm']:.0f} |")
    return out


def targets(rows: dict, mode: str = "") -> list[str]:
    """The issue's targets, met or not, from this run."""
    out = [f"{mode}:"] if mode else []
    big = max((n for n, _ in rows), default=0)
    four = rows.get((big, 4))
    if four:
        out.append(f"- {big} databases, 4 scrapers at {INTERVAL:.0f} s: slowest scrape {four['slowest']:.2f} s "
                   f"(target < 5 s: {'met' if four['slowest'] < 5 else 'NOT met'}), CPU "
                   f"{100 * four['cpu'] / INTERVAL:.0f} % of a core (target < 50 %: "
                   f"{'met' if four['cpu'] / INTERVAL < 0.5 else 'NOT met'}), peak RSS {four['hwm']:.0f} MiB "
                   f"(target < 1024: {'met' if four['hwm'] < 1024 else 'NOT met'})")
    for (n, s), r in sorted(rows.items()):
        base = rows.get((n, 1))
        if s == 4 and base and base["cpu"] < 0.2:
            out.append(f"- {n} databases: {base['cpu']:.2f} s against {r['cpu']:.2f} s of CPU a round, too little "
                       "to compare in the kernel's 10 ms ticks")
        elif s == 4 and base and base["cpu"]:
            x = r["cpu"] / base["cpu"]
            out.append(f"- {n} databases: 4 scrapers cost {x:.2f}x one (target <= 1.2x: "
                       f"{'met' if x <= 1.2 else 'NOT met'})")
    return out


def checkout(commit: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "exporters"], check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest / "exporters"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.oracle_scale", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1,50,200,500", help="database counts (default 1,50,200,500)")
    p.add_argument("--scrapers", default="1,4", help="concurrent scrapers (default 1,4)")
    p.add_argument("--rounds", type=int, default=3, help="measured rounds per run (default 3)")
    p.add_argument("--modes", default="scrape,refresh",
                   help="scrape (fetch on scrape, min_interval_seconds 5), refresh (refresh_interval_seconds 15); "
                        "default both")
    p.add_argument("--quick", action="store_true", help="sizes 1,50 and 2 rounds")
    p.add_argument("--before", default=None, metavar="COMMIT",
                   help="also measure the exporters of COMMIT (fetch on scrape only)")
    p.add_argument("--gzip", action="store_true",
                   help="scrapers send Accept-Encoding: gzip (Prometheus's default) instead of identity "
                        "(Prometheus's enable_compression: false)")
    p.add_argument("--results", default=str(DEFAULT_RESULTS), help="RESULTS.md to write into (- : stdout only)")
    args = p.parse_args(argv)
    if args.gzip:
        ENCODING["Accept-Encoding"] = "gzip"
    sizes = [1, 50] if args.quick else [int(x) for x in args.sizes.split(",")]
    rounds = 2 if args.quick else args.rounds
    scrapers = [int(x) for x in args.scrapers.split(",")]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - {"scrape", "refresh"}:
        p.error(f"--modes: scrape and/or refresh, not {args.modes!r}")
    lines: list[str] = []
    summary: list[str] = []
    if "scrape" in modes:
        rows = run(sizes, scrapers, rounds, None)
        lines += ["Fetch on scrape (`min_interval_seconds` 5: a round is every scraper scraping at once, each round "
                  "a new fetch; CPU of a round):", ""] + table(rows)
        summary += targets(rows, "Fetch on scrape")
    if "refresh" in modes:
        rows = run(sizes, scrapers, rounds, None, refresh=True)
        lines += ["", f"Background refresh (`refresh_interval_seconds` {INTERVAL:.0f}: the exporter fetches and renders "
                      f"every database once per interval, spread over it; each interval starts with every scraper "
                      f"scraping at once; CPU over whole intervals):", ""] + table(rows, per="interval")
        summary += ([""] if summary else []) + targets(rows, "Background refresh")
    before_lines: list[str] = []
    if args.before:
        tmp = Path(tempfile.mkdtemp(prefix="bench-oracle-before-"))
        try:
            before_rows = run(sizes, scrapers, rounds, checkout(args.before, tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        before_lines = ["", f"Before (exporters of commit {args.before}, fetch on scrape, same run):", ""] + table(
            before_rows)
    print(machine())
    print("\n".join(lines + before_lines + [""] + summary))
    if args.results != "-":
        command = ".venv/bin/python -m bench.oracle_scale" + (" --quick" if args.quick else
                                                              f" --sizes {','.join(map(str, sizes))} --rounds {rounds}")
        command += f" --modes {','.join(modes)}" + (" --gzip" if args.gzip else "")
        if args.before:
            command += f" --before {args.before}"
        head = ["## oracle-exporter at fleet scale (issue 26)", "",
                f"Command: `{command}`. {machine()}. Replayed recordings (80 % single instance, 20 % two-instance "
                "RAC, generated in a temporary directory). CPU: the exporter process, all threads, the replay's "
                "reading and decoding of the snapshots included. Scrapers send "
                f"`Accept-Encoding: {ENCODING['Accept-Encoding']}`.", ""]
        write_section(Path(args.results), "oracle_scale", "\n".join(head + lines + before_lines + [""] + summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
