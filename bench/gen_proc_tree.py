"""Generate a large recorded-style procfs tree for the process collector
benchmark: 3,808 processes (3,467 of them Oracle, over 4 instances) and
10,000 threads, in the exact file formats of tests/dbhost/fixtures_proc.py.

    python -m bench.gen_proc_tree DIR
"""
from __future__ import annotations

import os
import pathlib
import sys

from dbhost_exporter.demo.procs import (make_proc, sched_bytes, schedstat_bytes, stat_bytes, status_bytes,
                                        write_process)

PROCESSES = 3808
ORACLE_PROCESSES = 3467
THREADS = 10000
ORACLE_THREADS = 8000
SIDS = ["ORCL", "DWH1", "ERP_PRD", "CRM2"]
# 19c background set of one instance (with 8 DB writers, 2 LGWR slaves, 4 archivers, jobs)
BACKGROUND = (["pmon", "clmn", "psp0", "vktm", "gen0", "mman", "gen1", "diag", "ofsd", "dbrm", "vkrm",
               "svcb", "pman", "dia0", "lgwr", "ckpt", "lg00", "lg01", "smon", "smco", "reco", "lreg",
               "pxmn", "mmon", "mmnl", "d000", "s000", "tmon", "tt00", "tt01", "aqpc", "cjq0", "qm02",
               "q002", "q004", "w000", "w001", "m000", "m001", "rcbg", "fbda"]
              + [f"dbw{i}" for i in range(8)] + [f"arc{i}" for i in range(4)]
              + [f"j00{i}" for i in range(6)])

TOTALS = {"processes": PROCESSES, "oracle_processes": ORACLE_PROCESSES, "threads": THREADS,
          "oracle_threads": ORACLE_THREADS}
# Bumped whenever the tree's files change shape; a tree with another version is regenerated.
# 2: /proc/PID/schedstat and task/TID/schedstat.
FORMAT = 2


def _spread(total: int, n: int, i: int) -> int:
    """Threads of the i-th of n processes so that they sum to total."""
    base, extra = divmod(total, n)
    return base + (1 if i < extra else 0)


LIMITS = (
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    + "".join("%-26s%-21s%-21s%-10s\n" % row for row in [
        ("Max cpu time", "unlimited", "unlimited", "seconds"),
        ("Max file size", "unlimited", "unlimited", "bytes"),
        ("Max data size", "unlimited", "unlimited", "bytes"),
        ("Max stack size", "33554432", "unlimited", "bytes"),
        ("Max core file size", "0", "unlimited", "bytes"),
        ("Max resident set", "unlimited", "unlimited", "bytes"),
        ("Max processes", "16384", "16384", "processes"),
        ("Max open files", "65536", "65536", "files"),
        ("Max locked memory", "unlimited", "unlimited", "bytes"),
        ("Max address space", "unlimited", "unlimited", "bytes"),
        ("Max file locks", "unlimited", "unlimited", "locks"),
        ("Max pending signals", "96364", "96364", "signals"),
        ("Max msgqueue size", "819200", "819200", "bytes"),
        ("Max nice priority", "0", "0", ""),
        ("Max realtime priority", "0", "0", ""),
        ("Max realtime timeout", "unlimited", "unlimited", "us"),
    ]))


def add_peer_files(root: pathlib.Path, sp) -> None:
    """Files the process collector does not read but a general process
    exporter (process-exporter) does: io, limits, wchan, fd/. Real /proc has
    them for every process and thread; they make the peer comparison fair."""
    pdir = pathlib.Path(root) / str(sp.pid)
    dirs = [pdir] + [pdir / "task" / str(t.tid) for t in sp.threads]
    for i, d in enumerate(dirs):
        (d / "io").write_text(
            f"rchar: {1000 * (i + 1)}\nwchar: {500 * (i + 1)}\nsyscr: {10 + i}\nsyscw: {5 + i}\n"
            f"read_bytes: {4096 * i}\nwrite_bytes: {8192 * i}\ncancelled_write_bytes: 0\n")
        (d / "limits").write_text(LIMITS)
        (d / "wchan").write_text("0")
    fd = pdir / "fd"
    fd.mkdir(exist_ok=True)
    for n in range(3):
        (fd / str(n)).symlink_to("/dev/null")


def build_specs() -> list:
    """The ProcSpecs of the tree (deterministic)."""
    pid = 1000
    tid_next = 200_000
    idx = 0
    n_bg = len(BACKGROUND) * len(SIDS)
    n_fg = ORACLE_PROCESSES - n_bg
    oracle = []
    for sid in SIDS:
        for role in BACKGROUND:
            name = f"ora_{role}_{sid}".encode()
            oracle.append(((name,), name[:15], (sid, role)))
    for k in range(n_fg):
        sid = SIDS[k % len(SIDS)]
        desc = "(LOCAL=NO)" if k % 5 else "(DESCRIPTION=(LOCAL=YES)(ADDRESS=(PROTOCOL=beq)))"
        oracle.append(((f"oracle{sid} {desc}".encode(),), None, (sid, "foreground")))
    others = []
    for k in range(PROCESSES - ORACLE_PROCESSES):
        kind = k % 4
        if kind == 0:
            others.append(((b"/usr/sbin/sshd", b"-D"), b"sshd"))
        elif kind == 1:
            others.append(((b"/usr/lib/jvm/java-17/bin/java", b"-Xmx4g", b"-jar", b"agent.jar"), b"java"))
        elif kind == 2:
            others.append(((b"/usr/bin/python3", b"/opt/tools/collect.py"), b"python3"))
        else:
            others.append(((), b"kworker/%d:%d" % (k % 2, k % 7)))
    specs = []
    for i, (argv, comm, group) in enumerate(oracle):
        n = _spread(ORACLE_THREADS, len(oracle), i)
        if comm is None:
            comm = f"oracle_{pid}_{group[0].lower()}".encode()[:15]
        specs.append(make_proc(idx, pid, argv, comm, group, nthreads=n, tid_base=tid_next))
        pid += 1
        idx += 1
        tid_next += n
    for i, (argv, comm) in enumerate(others):
        n = _spread(THREADS - ORACLE_THREADS, len(others), i)
        specs.append(make_proc(idx, pid, argv, comm, None, nthreads=n, tid_base=tid_next, uid=0))
        pid += 1
        idx += 1
        tid_next += n
    return specs


def generate(root: pathlib.Path) -> dict[str, int]:
    root = pathlib.Path(root)
    root.mkdir(parents=True, exist_ok=True)
    specs = build_specs()
    for sp in specs:
        write_process(root, sp)
        add_peer_files(root, sp)
    # /proc/stat: process-exporter reads btime from it
    (root / "stat").write_text(
        "cpu  1000 0 500 90000 100 0 10 0 0 0\ncpu0 500 0 250 45000 50 0 5 0 0 0\n"
        "cpu1 500 0 250 45000 50 0 5 0 0 0\nintr 0\nctxt 123456\nbtime 1763800000\n"
        "processes %d\nprocs_running 2\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n" % len(specs))
    counts = {"format": FORMAT, "processes": len(specs), "oracle_processes": sum(1 for s in specs if s.group),
              "threads": sum(len(s.threads) for s in specs),
              "oracle_threads": sum(len(s.threads) for s in specs if s.group)}
    (root / ".complete").write_text(repr(counts) + "\n")
    return counts


# Present in a tree made by drop_schedstat(): advance() then writes no schedstat files.
NO_SCHEDSTAT_MARKER = ".no-schedstat"


def drop_schedstat(root: pathlib.Path) -> int:
    """Make a generated tree look like a kernel without CONFIG_SCHED_INFO: no /proc/PID/schedstat
    and no task/TID/schedstat. Returns the files removed."""
    root = pathlib.Path(root)
    removed = 0
    for pdir in root.iterdir():
        if not pdir.name.isdigit():
            continue
        for f in [pdir / "schedstat", *(pdir / "task").glob("*/schedstat")]:
            if f.exists():
                f.unlink()
                removed += 1
    (root / NO_SCHEDSTAT_MARKER).write_text("")
    return removed


def _overwrite(path: pathlib.Path, data: bytes) -> None:
    """Replace a file's content in place, truncating only if it shrank: on
    ext4 an O_TRUNC rewrite forces a data flush on close (auto_da_alloc) and
    makes rewriting a whole tree take tens of seconds."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
        if os.fstat(fd).st_size > len(data):
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def advance(root: pathlib.Path, step: int, specs: list | None = None) -> int:
    """Let every Oracle thread run between two scrapes, as on a busy host:
    rewrite (in place, like procfs content changing) each Oracle process's
    /proc/PID/stat (and the leader's /proc/PID/schedstat) with its CPU time
    grown by ``step`` ticks per thread, and each of its threads'
    task/TID/{sched,schedstat,stat,status} with every counter grown by
    ``step`` (runtime, run delay, switches, migrations, utime, stime), so that
    every file the collector or process-exporter reads for Oracle processes
    has changed. Returns the files written."""
    import dataclasses  # noqa: PLC0415
    root = pathlib.Path(root)
    written = 0
    schedstat = not (root / NO_SCHEDSTAT_MARKER).exists()   # a tree of a kernel without schedstat
    for sp in specs if specs is not None else build_specs():
        if not sp.group:
            continue
        n = len(sp.threads)
        pdir = root / str(sp.pid)
        main = sp.threads[0]
        _overwrite(pdir / "stat", stat_bytes(
            sp.pid, sp.comm, main.state, sp.ppid, sum(t.utime for t in sp.threads) + n * step,
            sum(t.stime for t in sp.threads) + n * step, n, sp.starttime, main.processor))
        written += 1
        for k, t in enumerate(sp.threads):
            g = dataclasses.replace(t, voluntary=t.voluntary + step, involuntary=t.involuntary + step,
                                    migrations=t.migrations + step, utime=t.utime + step,
                                    stime=t.stime + step, run_delay=t.run_delay + 1_000_000 * step)
            tdir = pdir / "task" / str(t.tid)
            _overwrite(tdir / "sched", sched_bytes(
                sp.comm, g.tid, n, g.voluntary, g.involuntary, g.migrations, g.runtime_ns, g.starttime))
            if schedstat:
                _overwrite(tdir / "schedstat", schedstat_bytes(g))
            if k == 0 and schedstat:
                _overwrite(pdir / "schedstat", schedstat_bytes(g))
                written += 1
            _overwrite(tdir / "stat", stat_bytes(
                g.tid, sp.comm, g.state, sp.ppid, g.utime, g.stime, n, g.starttime, g.processor, pgrp=sp.pid))
            _overwrite(tdir / "status", status_bytes(
                sp.comm, sp.pid, g.tid, sp.ppid, sp.uid, n, g.voluntary, g.involuntary, g.state))
            written += 4
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bench.gen_proc_tree DIR")
    print(generate(pathlib.Path(sys.argv[1])))
