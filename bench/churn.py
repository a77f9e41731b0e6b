"""Churn: logon storms end and start foreground processes all the time (issue 14.7).

    .venv/bin/python -m bench.churn [--scrapes 1000] [--churn 0.10] [--results build/bench/RESULTS.md]

dbhost-exporter (process collector only, its own process, scraped over HTTP) on the
benchmark's procfs tree (bench/gen_proc_tree.py: 3,808 processes, 3,467 Oracle). Before
every scrape (not timed) a tenth of the Oracle foreground processes exit (their
/proc/PID directories go) and as many new ones start with new PIDs, as a connection pool
recycling or a logon storm does. Measured per scrape: the exporter's CPU and wall time;
every 10% of the run: its RSS and the number of process series.

Checked, failing the run (exit 1) when broken:
* no series of an ended process lingers: the process series are per (sid, role) group,
  so their count must not grow with the processes that came and went;
* every `_total` counter of every group is monotonic from scrape to scrape although its
  members leave: an exited process's counts stay in its group's total;
* after the last scrape each group's voluntary context switches equal the generator's
  ground truth: the sum over every process the group ever had.
The numbers go into bench/RESULTS.md (section "churn").
"""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import re
import sys
import tempfile
import time
from collections import defaultdict

from bench import gen_proc_tree
from bench.common import (DEFAULT_RESULTS, Exporter, cpu_seconds, free_port, machine, memory_kib, progress, python_cmd,
                          write_section)

from dbhost_exporter.demo.procs import make_proc, remove_process, write_process

SAMPLE = re.compile(rb"^(dbhost_process_[a-z_]+)(\{[^}]*\})? (\S+)$", re.M)


def parse(text: bytes) -> dict[tuple[bytes, bytes], float]:
    return {(m.group(1), m.group(2) or b""): float(m.group(3)) for m in SAMPLE.finditer(text)}


class Churn:
    """The tree's foreground processes, replaced a fraction at a time with new PIDs."""

    def __init__(self, root: pathlib.Path, specs: list):
        self.root = root
        self.live = [sp for sp in specs if sp.group and sp.group[1] == "foreground"]
        self.next_pid = max(sp.pid for sp in specs) + 1
        self.next_tid = max(t.tid for sp in specs for t in sp.threads) + 1
        self.next_index = len(specs)
        self.voluntary = defaultdict(int)     # ground truth per (sid, role): every process ever
        for sp in specs:
            if sp.group:
                self.voluntary[sp.group] += sum(t.voluntary for t in sp.threads)
        self.turn = 0

    def step(self, fraction: float) -> int:
        n = max(1, int(len(self.live) * fraction))
        start = (self.turn * n) % len(self.live)
        self.turn += 1
        out = [self.live[(start + k) % len(self.live)] for k in range(n)]
        gone = {sp.pid for sp in out}
        self.live = [sp for sp in self.live if sp.pid not in gone]
        for sp in out:
            remove_process(self.root, sp.pid)
            new = make_proc(self.next_index, self.next_pid, sp.argv, sp.comm, sp.group,
                            nthreads=len(sp.threads), tid_base=self.next_tid,
                            starttime=sp.starttime + 100_000 + self.turn)
            new = dataclasses.replace(new, comm=f"oracle_{self.next_pid}_{sp.group[0].lower()}".encode()[:15])
            write_process(self.root, new)
            self.voluntary[new.group] += sum(t.voluntary for t in new.threads)
            self.live.append(new)
            self.next_pid += 1
            self.next_tid += len(new.threads)
            self.next_index += 1
        return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scrapes", type=int, default=1000)
    ap.add_argument("--churn", type=float, default=0.10, help="fraction of foreground processes replaced per scrape")
    ap.add_argument("--results", default=str(DEFAULT_RESULTS),
                    help="file to write the section into (default build/bench/RESULTS.md; "
                         "bench/RESULTS.md to update the tracked one)")
    args = ap.parse_args(argv)
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="churn-") as tmp:
        root = pathlib.Path(tmp) / "proc"
        progress("generating the procfs tree ...")
        gen_proc_tree.generate(root)
        specs = gen_proc_tree.build_specs()
        churn = Churn(root, specs)
        sysfs = pathlib.Path(tmp) / "sys"
        sysfs.mkdir()
        cfg = pathlib.Path(tmp) / "dbhost.yml"
        cfg.write_text("collectors: {lun: false, zfs: false, memory: false, process: true}\n")
        port = free_port()
        argv_ = python_cmd("dbhost_exporter.cli") + [
            "--web.listen-address", f"127.0.0.1:{port}", "--path.procfs", str(root), "--path.sysfs", str(sysfs),
            "--config.file", str(cfg)]
        rows, cpu, wall, replaced = [], [], [], 0
        with Exporter("dbhost-exporter", argv_, port) as exp:
            prev = None
            first_series = None
            for i in range(args.scrapes):
                if i:
                    replaced += churn.step(args.churn)
                c0, t0 = cpu_seconds(exp.pid), time.perf_counter()
                body = exp.get()
                wall.append(time.perf_counter() - t0)
                cpu.append(cpu_seconds(exp.pid) - c0)
                now = parse(body)
                series = len(now)
                if first_series is None:
                    first_series = series
                if series > first_series:
                    errors.append(f"scrape {i + 1}: {series} process series, {first_series} at the first")
                if prev is not None:
                    for key, val in now.items():
                        if key[0].endswith(b"_total") and key in prev and val < prev[key]:
                            errors.append(f"scrape {i + 1}: {key[0].decode()}{key[1].decode()} went from "
                                          f"{prev[key]} to {val}")
                prev = now
                if i == 0 or (i + 1) % max(1, args.scrapes // 10) == 0:
                    rss, _ = memory_kib(exp.pid)
                    rows.append((i + 1, replaced, series, rss,
                                 sum(cpu[-100:]) / len(cpu[-100:]), sorted(wall[-100:])[len(wall[-100:]) // 2]))
                    progress(f"scrape {i + 1}: {replaced} processes replaced, {series} series, RSS {rss / 1024:.1f} MiB")
            final = prev or {}
        for (sid, role), want in sorted(churn.voluntary.items()):
            key = (b"dbhost_process_context_switches_total",
                   b'{kind="voluntary",role="%s",sid="%s"}' % (role.encode(), sid.encode()))
            got = final.get(key)
            if got is None:
                errors.append(f"no voluntary switches series for {sid}/{role}")
            elif got != want:
                errors.append(f"{sid}/{role}: voluntary switches {got:.0f}, ground truth {want}")
    lines = [
        "## Churn: foreground processes replaced between scrapes",
        "",
        f"Command: `.venv/bin/python -m bench.churn --scrapes {args.scrapes} --churn {args.churn}`. "
        f"dbhost-exporter (process collector only) in its own process, scraped over HTTP, on the "
        f"`bench/gen_proc_tree.py` tree; before every scrape (not timed) {args.churn:.0%} of the Oracle "
        f"foreground processes exit and as many start with new PIDs. {machine()}.",
        "",
        "| scrapes | processes replaced | process series | RSS MiB | CPU s/scrape (last 100) | wall s/scrape (median of last 100) |",
        "|---|---|---|---|---|---|",
    ]
    for n, rep, series, rss, c, w in rows:
        lines.append(f"| {n} | {rep} | {series} | {rss / 1024:.1f} | {c:.3f} | {w:.3f} |")
    lines += [
        "",
        "Checked in the same run (exit 1 otherwise): the process series never outnumber the first "
        "scrape's (an ended process leaves no series: they are per sid and role); no `_total` counter of "
        "any group went down between two scrapes while its members left; after the last scrape every "
        "group's voluntary context switches equal the sum over every process the group ever had "
        "(the exited ones' counts stay in their group's total, as process-exporter's users expect from "
        f"`_total`). Result: {'passed' if not errors else 'FAILED: ' + '; '.join(errors[:5])}.",
    ]
    write_section(pathlib.Path(args.results), "churn", "\n".join(lines))
    for e in errors[:20]:
        print("error:", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
