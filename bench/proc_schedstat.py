"""The process collector against process-exporter on a kernel WITHOUT schedstat (no
CONFIG_SCHED_INFO): the benchmark tree of bench/gen_proc_tree.py with every /proc/PID/schedstat
and task/TID/schedstat removed. The collector then reads every Oracle thread's sched each scrape
(before the process's stat, which it skips when every thread's sched is unchanged but its
clock-delta row: idle) and every other process's stat; this measures what that costs next to
process-exporter on the same tree, idle and busy (gen_proc_tree.advance, outside the timed
part), in the same run.

    .venv/bin/python -m bench.proc_schedstat [--scrapes 5] [--process-exporter BIN]

Prints a Markdown section (bench/RESULTS.md, "process collector without schedstat")."""
from __future__ import annotations

import argparse
import pathlib
import shutil
import statistics
import sys
import tempfile

from . import gen_proc_tree
from .common import ensure_process_exporter
from .run import bench_collector, bench_process_exporter


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scrapes", type=int, default=5)
    ap.add_argument("--process-exporter", default=None)
    args = ap.parse_args(argv)
    pe_bin, pe_note = ensure_process_exporter(args.process_exporter)
    root = pathlib.Path(tempfile.mkdtemp(prefix="dbhost-bench-noss-"))
    try:
        counts = gen_proc_tree.generate(root)
        removed = gen_proc_tree.drop_schedstat(root)
        specs = gen_proc_tree.build_specs()
        rows, ratios = [], []
        for scenario in ("idle", "busy"):
            adv = (lambda k: gen_proc_tree.advance(root, k, specs)) if scenario == "busy" else None
            ours = bench_collector(root, args.scrapes, adv)
            coll = ours["collector"]
            if not coll.schedstat_missing or coll.last_schedstat_missing_opens > 1:
                raise SystemExit(f"collector did not find schedstat missing once ({coll.last_schedstat_missing_opens})")
            gen_proc_tree.advance(root, 0, specs)
            pe = bench_process_exporter(pe_bin, root, args.scrapes, adv) if pe_bin else None
            gen_proc_tree.advance(root, 0, specs)
            ow = statistics.median(r[0] for r in ours["steady"])
            oc = statistics.median(r[1] for r in ours["steady"])
            rows.append(f"| dbhost-exporter process collector, steady (median), {scenario} | {ow:.3f} | {oc:.3f} | "
                        f"{ours['files_steady']} | {coll.last_schedstat_missing_opens} |")
            if pe:
                pw = statistics.median(r[0] for r in pe["steady"])
                pc = statistics.median(r[1] for r in pe["steady"])
                rows.append(f"| process-exporter, steady (median), {scenario} | {pw:.3f} | {pc:.3f} | n/a | n/a |")
                ratios.append(f"- {scenario}: process-exporter / collector {pw / ow:.1f}x wall / {pc / max(oc, 1e-9):.1f}x CPU")
        out = [
            "| scraper | wall s/scrape | CPU s/scrape | files read | failed schedstat opens |",
            "|---|---|---|---|---|", *rows, "",
            f"Tree: {counts['processes']} processes ({counts['oracle_processes']} Oracle), {counts['threads']} threads "
            f"({counts['oracle_threads']} in Oracle processes); {removed} schedstat files removed.",
            "", *(ratios or [f"- process-exporter: not measured ({pe_note})"])]
        print("\n".join(out))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
