"""Generator of procfs fixture trees for the process collector.

The files have the exact layout of Linux 6.x procfs (proc(5), and the
samples of /proc/self/{stat,status,sched} on the kernel of the build host):

* ``/proc/PID/cmdline``: arguments, each terminated by NUL (Oracle rewrites
  its argv into one string such as ``oracleORCL (LOCAL=NO)``);
* ``/proc/PID/comm``: the 15-byte task name plus newline;
* ``/proc/PID/stat`` and ``task/TID/stat``: 52 fields, field 2 is
  ``(comm)``, field 14/15 utime/stime in clock ticks, field 20 num_threads,
  field 22 starttime in clock ticks since boot;
* ``/proc/PID/status`` and ``task/TID/status``: ``Name:\\t...`` lines ending
  with voluntary_ctxt_switches / nonvoluntary_ctxt_switches (of that task
  only: the PID-level file shows the main thread's, not the process sum);
* ``/proc/PID/schedstat`` (the leader's) and ``task/TID/schedstat``:
  ``%llu %llu %lu`` = run time ns, run delay ns, timeslices (fs/proc/base.c);
* ``task/TID/sched``: header ``comm (TID, #threads: N)``, a 67-dash line,
  then ``%-45s:%21d`` (or ``%14d.%06d``) rows including se.nr_migrations,
  nr_voluntary_switches and nr_involuntary_switches.

All values are deterministic functions of the process/thread index; the
ground truth (which sid/role each process belongs to and each thread's
counters) is returned by :func:`proc_specs` so tests can compute expected
sums without parsing the files.
"""
from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass

ORACLE_UID = 54321
CLK_TCK = 100


@dataclass(frozen=True)
class ThreadSpec:
    tid: int
    starttime: int        # clock ticks since boot
    utime: int            # clock ticks
    stime: int
    voluntary: int
    involuntary: int
    migrations: int
    state: str = "S"
    processor: int = 0
    run_delay: int = 0    # ns waited on a run queue (schedstat field 2)
    comm: bytes | None = None   # the thread's own name (prctl PR_SET_NAME); None: the process's comm

    @property
    def runtime_ns(self) -> int:
        """se.sum_exec_runtime (sched, schedstat field 1): the CPU time in ns."""
        return (self.utime + self.stime) * 10_000_000 + 123_456

    @property
    def timeslices(self) -> int:
        """sched_info.pcount (schedstat field 3): every switch out follows a switch in."""
        return self.voluntary + self.involuntary


@dataclass(frozen=True)
class ProcSpec:
    pid: int
    argv: tuple[bytes, ...]
    comm: bytes
    threads: tuple[ThreadSpec, ...]
    group: tuple[str, str] | None  # ground truth (sid, role) for Oracle, None otherwise
    ppid: int = 1
    uid: int = ORACLE_UID
    # CPU time (clock ticks) of threads that already exited: the kernel adds
    # it to the process's stat (signal->utime/stime), not to any task/TID.
    exited_utime: int = 0
    exited_stime: int = 0

    @property
    def starttime(self) -> int:
        return self.threads[0].starttime


# -- file formats ----------------------------------------------------------

def stat_bytes(task_id: int, comm: bytes, state: str, ppid: int, utime: int, stime: int,
               num_threads: int, starttime: int, processor: int = 0, pgrp: int | None = None,
               vsize: int = 8_589_934_592, rss: int = 25_600) -> bytes:
    """One stat line, all 52 fields as Linux >= 3.5 prints them."""
    pgrp = task_id if pgrp is None else pgrp
    fields = [
        state, ppid, pgrp, pgrp, 0, -1,           # 3 state .. 8 tpgid
        4194304,                                   # 9 flags (PF_RANDOMIZE)
        1523 + task_id % 1000, 0, 3, 0,            # 10 minflt, cminflt, majflt, cmajflt
        utime, stime, 0, 0,                        # 14 utime, stime, cutime, cstime
        20, 0, num_threads, 0, starttime,          # 18 priority, nice, num_threads, itrealvalue, starttime
        vsize, rss, 18446744073709551615,          # 23 vsize, rss, rsslim
        94_000_000_000_000, 94_000_000_400_000, 140_731_922_472_304, 0, 0,  # 26-30
        0, 0, 16781312, 134235907,                 # 31 signal, blocked, sigignore, sigcatch
        0, 0, 0, 17, processor, 0, 0,              # 35 wchan, nswap, cnswap, exit_signal, processor, rt_priority, policy
        0, 0, 0,                                   # 42 delayacct_blkio_ticks, guest_time, cguest_time
        94_000_000_500_000, 94_000_000_600_000, 94_000_001_000_000,  # 45-47
        140_731_922_479_812, 140_731_922_479_832, 140_731_922_479_832, 140_731_922_481_131,  # 48-51
        0,                                         # 52 exit_code
    ]
    assert len(fields) == 50
    return b"%d (%s) " % (task_id, comm) + " ".join(str(f) for f in fields).encode() + b"\n"


_STATE_NAMES = {"R": "R (running)", "S": "S (sleeping)", "D": "D (disk sleep)",
                "Z": "Z (zombie)", "T": "T (stopped)", "I": "I (idle)"}


def status_bytes(comm: bytes, tgid: int, task_id: int, ppid: int, uid: int, num_threads: int,
                 voluntary: int, involuntary: int, state: str = "S", kthread: bool = False) -> bytes:
    """/proc/PID/status as Linux 6.x prints it (field set of 6.1+)."""
    # The kernel escapes '\n' and '\\' in Name: (proc_task_name, ESCAPE_SPACE).
    name = comm.replace(b"\\", b"\\\\").replace(b"\n", b"\\n")
    mem = "" if kthread else (
        "VmPeak:\t 8392704 kB\nVmSize:\t 8388608 kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\n"
        "VmHWM:\t  102400 kB\nVmRSS:\t  102400 kB\nRssAnon:\t    2048 kB\nRssFile:\t   20480 kB\n"
        "RssShmem:\t   79872 kB\nVmData:\t    4096 kB\nVmStk:\t     132 kB\nVmExe:\t  430080 kB\n"
        "VmLib:\t   14336 kB\nVmPTE:\t     420 kB\nVmSwap:\t       0 kB\nHugetlbPages:\t       0 kB\n")
    text = (
        f"Umask:\t0022\nState:\t{_STATE_NAMES[state]}\nTgid:\t{tgid}\nNgid:\t0\nPid:\t{task_id}\n"
        f"PPid:\t{ppid}\nTracerPid:\t0\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
        f"Gid:\t{uid}\t{uid}\t{uid}\t{uid}\nFDSize:\t256\nGroups:\t{uid} \n"
        f"NStgid:\t{tgid}\nNSpid:\t{task_id}\nNSpgid:\t{tgid}\nNSsid:\t{tgid}\n"
        f"Kthread:\t{1 if kthread else 0}\n{mem}"
        f"CoreDumping:\t0\nTHP_enabled:\t1\nuntag_mask:\t0xffffffffffffffff\n"
        f"Threads:\t{num_threads}\nSigQ:\t0/96364\nSigPnd:\t0000000000000000\n"
        f"ShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\nSigIgn:\t0000000001001000\n"
        f"SigCgt:\t0000000008004203\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
        f"CapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n"
        f"NoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n"
        f"Speculation_Store_Bypass:\tthread vulnerable\nSpeculationIndirectBranch:\tconditional enabled\n"
        f"Cpus_allowed:\t3\nCpus_allowed_list:\t0-1\n"
        f"Mems_allowed:\t{','.join(['00000000'] * 31 + ['00000001'])}\nMems_allowed_list:\t0\n"
        f"voluntary_ctxt_switches:\t{voluntary}\nnonvoluntary_ctxt_switches:\t{involuntary}\n")
    return b"Name:\t" + name + b"\n" + text.encode()


def _sched_row(name: str, value: int) -> str:
    return "%-45s:%21d\n" % (name, value)


def _sched_row_ns(name: str, ns: int) -> str:
    # PN(): nanoseconds printed as milliseconds with 6 decimals (%14Ld.%06ld)
    return "%-45s:%14d.%06d\n" % (name, ns // 1_000_000, ns % 1_000_000)


def sched_bytes(comm: bytes, task_id: int, num_threads: int, voluntary: int, involuntary: int,
                migrations: int, runtime_ns: int, starttime: int) -> bytes:
    """task/TID/sched as printed by proc_sched_show_task() on Linux 6.x."""
    exec_start = starttime * 10_000_000 + runtime_ns
    text = (
        "-" * 67 + "\n"
        + _sched_row_ns("se.exec_start", exec_start)
        + _sched_row_ns("se.vruntime", runtime_ns // 2)
        + _sched_row_ns("se.sum_exec_runtime", runtime_ns)
        + _sched_row("se.nr_migrations", migrations)
        + _sched_row("nr_switches", voluntary + involuntary)
        + _sched_row("nr_voluntary_switches", voluntary)
        + _sched_row("nr_involuntary_switches", involuntary)
        + _sched_row("se.load.weight", 1048576)
        + _sched_row("se.avg.load_sum", 46898)
        + _sched_row("se.avg.runnable_sum", 14913564)
        + _sched_row("se.avg.util_sum", 14913564)
        + _sched_row("se.avg.load_avg", 1024)
        + _sched_row("se.avg.runnable_avg", 318)
        + _sched_row("se.avg.util_avg", 318)
        + _sched_row("se.avg.last_update_time", exec_start - 1000)
        + _sched_row("se.avg.util_est", 0)
        + _sched_row("policy", 0)
        + _sched_row("prio", 120)
        + _sched_row_ns("se.slice", 1_400_000)
        + _sched_row("clock-delta", 80)
        + _sched_row("mm->numa_scan_seq", 0)
        + _sched_row("numa_pages_migrated", 0)
        + _sched_row("numa_preferred_nid", -1)
        + _sched_row("total_numa_faults", 0)
        + "current_node=0, numa_group_id=0\n"
        + "numa_faults node=0 task_private=0 task_shared=0 group_private=0 group_shared=0\n")
    return b"%s (%d, #threads: %d)\n" % (comm, task_id, num_threads) + text.encode()


def schedstat_bytes(t: ThreadSpec) -> bytes:
    """task/TID/schedstat as proc_pid_schedstat() prints it: ``%llu %llu %lu`` =
    se.sum_exec_runtime (ns), sched_info.run_delay (ns), sched_info.pcount."""
    return b"%d %d %d\n" % (t.runtime_ns, t.run_delay, t.timeslices)


def write_process(root: pathlib.Path, spec: ProcSpec, with_sched: bool = True,
                  with_schedstat: bool = True) -> None:
    """Write /proc/PID and its task/ directory for one process. /proc/PID/schedstat,
    like /proc/PID/status, is the thread-group leader's."""
    pdir = pathlib.Path(root) / str(spec.pid)
    (pdir / "task").mkdir(parents=True, exist_ok=True)
    n = len(spec.threads)
    (pdir / "cmdline").write_bytes(b"".join(a + b"\0" for a in spec.argv))
    (pdir / "comm").write_bytes(spec.comm + b"\n")
    main = spec.threads[0]
    kthread = not spec.argv
    (pdir / "stat").write_bytes(stat_bytes(
        spec.pid, spec.comm, main.state, spec.ppid,
        sum(t.utime for t in spec.threads) + spec.exited_utime,
        sum(t.stime for t in spec.threads) + spec.exited_stime, n, spec.starttime, main.processor))
    # /proc/PID/status counts the switches of the thread-group leader only
    # (fs/proc/array.c task_context_switch_counts prints p->nvcsw, p->nivcsw);
    # /proc/PID/stat utime/stime are the whole group's, live threads plus the
    # ones that exited (do_task_stat -> thread_group_cputime_adjusted).
    (pdir / "status").write_bytes(status_bytes(
        spec.comm, spec.pid, spec.pid, spec.ppid, spec.uid, n, main.voluntary, main.involuntary,
        main.state, kthread))
    if with_schedstat:
        (pdir / "schedstat").write_bytes(schedstat_bytes(main))
    for t in spec.threads:
        tdir = pdir / "task" / str(t.tid)
        tdir.mkdir(exist_ok=True)
        # a thread's stat, status, comm and sched header show its own comm (threads named by
        # prctl, as Oracle's threaded execution names them); the PID-level files the leader's
        comm = t.comm or spec.comm
        (tdir / "stat").write_bytes(stat_bytes(
            t.tid, comm, t.state, spec.ppid, t.utime, t.stime, n, t.starttime, t.processor,
            pgrp=spec.pid))
        (tdir / "status").write_bytes(status_bytes(
            comm, spec.pid, t.tid, spec.ppid, spec.uid, n, t.voluntary, t.involuntary,
            t.state, kthread))
        (tdir / "comm").write_bytes(comm + b"\n")
        if with_sched:
            (tdir / "sched").write_bytes(sched_bytes(
                comm, t.tid, n, t.voluntary, t.involuntary, t.migrations,
                t.runtime_ns, t.starttime))
        if with_schedstat:
            (tdir / "schedstat").write_bytes(schedstat_bytes(t))


# -- the standard fixture -----------------------------------------------------

def thread_values(i: int, k: int) -> dict[str, int]:
    """Counters of thread k of the i-th process (deterministic)."""
    return dict(utime=1000 + 137 * i + 11 * k, stime=200 + 31 * i + 7 * k,
                voluntary=50_000 + 1009 * i + 101 * k, involuntary=300 + 53 * i + 13 * k,
                migrations=40 + 17 * i + 3 * k, run_delay=2_000_000 + 350_017 * i + 41_011 * k)


def make_proc(i: int, pid: int, argv: tuple[bytes, ...], comm: bytes, group, nthreads: int = 1,
              starttime: int | None = None, uid: int = ORACLE_UID, ppid: int = 1,
              overrides: dict | None = None, tid_base: int | None = None) -> ProcSpec:
    start = 4000 + 10 * i if starttime is None else starttime
    threads = []
    for k in range(nthreads):
        tid = pid if k == 0 else (tid_base or pid) + k
        vals = thread_values(i, k)
        if overrides and k in overrides:
            vals.update(overrides[k])
        threads.append(ThreadSpec(tid=tid, starttime=start + (0 if k == 0 else 5 + k), processor=k % 2,
                                  **vals))
    return ProcSpec(pid=pid, argv=argv, comm=comm, threads=tuple(threads), group=group,
                    uid=uid, ppid=ppid)


def _bg(role: str, sid: str) -> tuple[tuple[bytes, ...], bytes]:
    name = f"ora_{role}_{sid}".encode()
    return (name,), name[:15]


def _fg(sid: str, pid: int, desc: str) -> tuple[tuple[bytes, ...], bytes]:
    # Oracle 12c+ names foreground tasks oracle_<ospid>_<sid> (truncated).
    return (f"oracle{sid} {desc}".encode(),), f"oracle_{pid}_{sid.lower()}".encode()[:15]


def proc_specs() -> list[ProcSpec]:
    """The standard fixture: instances ORCL, DWH1 and PROD_EAST1 plus
    processes that must not be picked up."""
    specs: list[ProcSpec] = []
    i = 0

    def add(pid, argv_comm, group, **kw):
        nonlocal i
        argv, comm = argv_comm
        specs.append(make_proc(i, pid, argv, comm, group, **kw))
        i += 1

    # instance ORCL
    for pid, role in [(2101, "pmon"), (2105, "dbw0"), (2107, "lgwr"), (2109, "ckpt"),
                      (2121, "lg00"), (2123, "lg01"), (2140, "arc0"), (2141, "arc1")]:
        kw = {}
        if role == "lgwr":
            # LGWR as in field notes R14 "before": 30% of its switches involuntary.
            # And it waited for a CPU about a third as long as it ran (R13: commits starved of CPU).
            kw["overrides"] = {0: dict(voluntary=700_000, involuntary=300_000, run_delay=4_123_456_789)}
        add(pid, _bg(role, "ORCL"), ("ORCL", role), **kw)
    add(3001, _fg("ORCL", 3001, "(LOCAL=NO)"), ("ORCL", "foreground"))
    add(3002, _fg("ORCL", 3002, "(LOCAL=NO)"), ("ORCL", "foreground"), nthreads=3, tid_base=3500)
    add(3003, _fg("ORCL", 3003, "(DESCRIPTION=(LOCAL=YES)(ADDRESS=(PROTOCOL=beq)))"),
        ("ORCL", "foreground"))
    # instance DWH1: two DB writers, a multi-threaded foreground
    for pid, role in [(4101, "pmon"), (4104, "dbw0"), (4105, "dbw1"), (4107, "lgwr"),
                      (4109, "ckpt")]:
        add(pid, _bg(role, "DWH1"), ("DWH1", role))
    add(5001, _fg("DWH1", 5001, "(LOCAL=NO)"), ("DWH1", "foreground"))
    add(5002, _fg("DWH1", 5002, "(LOCAL=NO)"), ("DWH1", "foreground"), nthreads=2, tid_base=5600)
    # instance PROD_EAST1: SID with an underscore, longer than comm allows
    for pid, role in [(6101, "pmon"), (6107, "lgwr")]:
        add(pid, _bg(role, "PROD_EAST1"), ("PROD_EAST1", role))
    add(6201, _fg("PROD_EAST1", 6201, "(LOCAL=NO)"), ("PROD_EAST1", "foreground"))
    # not Oracle database processes (group None)
    add(2, ((), b"kthreadd"), None, uid=0, ppid=0)
    add(812, ((b"sshd: oracle@pts/0",), b"sshd"), None, uid=0)
    add(813, ((b"/usr/sbin/sshd", b"-D"), b"sshd"), None, uid=0)
    add(901, ((b"(sd-pam)",), b"(sd-pam)"), None, uid=0)
    add(902, ((b"/usr/bin/python3", b"-m", b"fake"), b"x) (y) ora_z"), None, uid=0)
    add(903, ((b"/usr/bin/python3", b"fake_lgwr.py"), b"ora_lgwr_FAKE"), None)
    add(1201, ((b"/u01/app/oracle/product/19.0.0/dbhome_1/bin/tnslsnr", b"LISTENER", b"-inherit"),
               b"tnslsnr"), None, nthreads=2, tid_base=1250)
    add(1301, ((b"asm_pmon_+ASM",), b"asm_pmon_+ASM"), None)
    return specs


def build_proc_tree(procfs_root: pathlib.Path) -> None:
    """Write the standard fixture's PID directories under procfs_root."""
    root = pathlib.Path(procfs_root)
    root.mkdir(parents=True, exist_ok=True)
    for spec in proc_specs():
        write_process(root, spec)


def remove_thread(root: pathlib.Path, pid: int, tid: int) -> None:
    """Simulate a thread exit as the kernel shows it: task/TID disappears,
    /proc/PID/stat field 20 (num_threads) drops by one, and its utime/stime
    (fields 14, 15) keep the exited thread's CPU time."""
    pdir = pathlib.Path(root) / str(pid)
    tdir = pdir / "task" / str(tid)
    for f in tdir.iterdir():
        f.unlink()
    tdir.rmdir()
    stat = (pdir / "stat").read_bytes()
    rp = stat.rfind(b")")
    fields = stat[rp + 2:].rstrip(b"\n").split(b" ")
    fields[20 - 3] = b"%d" % (int(fields[20 - 3]) - 1)
    (pdir / "stat").write_bytes(stat[:rp + 2] + b" ".join(fields) + b"\n")


def remove_process(root: pathlib.Path, pid: int) -> None:
    pdir = pathlib.Path(root) / str(pid)
    for dirpath, dirnames, filenames in os.walk(pdir, topdown=False):
        for f in filenames:
            os.unlink(os.path.join(dirpath, f))
        os.rmdir(dirpath)
