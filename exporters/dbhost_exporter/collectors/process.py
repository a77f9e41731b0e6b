"""Oracle process collector: context switches, migrations, run-queue delay and
CPU time per instance (``sid``) and background-process ``role``: switches and
migrations read per thread from ``/proc/PID/task/TID/sched``, run-queue delay,
CPU run time and timeslices per thread from ``task/TID/schedstat``, CPU time
per process from ``/proc/PID/stat``.

How processes are recognised (see docs/dbhost-process-collector.md):

* the command line, never ``comm`` (``comm`` is cut at 15 characters, so
  ``ora_lgwr_PROD_EAST1`` shows as ``ora_lgwr_PROD_E``);
* ``ora_<role>_<SID>``: a background process; ``role`` is the lower-cased
  alphanumeric name between the first two underscores (no underscore in a
  role), ``SID`` is everything after it (a SID may contain underscores);
* ``oracle<SID>`` alone or followed by ``(LOCAL=NO)``, ``(DESCRIPTION=...)``:
  a dedicated-server foreground, ``role="foreground"``;
* configured extra groups: ``(name, regex)`` searched in the full command
  line (arguments joined by spaces); they get ``sid=""`` and ``role=name``.
  Oracle patterns win; among extra groups the first match wins.
* a SID beginning with ``+`` or ``-`` (``oracle+ASM1``, ``oracle+ASM_asmb_cdb1``,
  ``ora_rbal_+ASM1``) is not a database instance: extra groups only;
* threaded execution (12c+ ``threaded_execution=TRUE``): an ``ora_uNNN_<SID>``
  process holds most background processes and the foregrounds as threads named
  by Oracle after their role. Its threads are grouped one by one by their own
  comm (``task/TID/stat``): ``ora_<role>_<SID prefix>`` -> (SID, role),
  ``oracle_<ospid>_<sid prefix>`` -> (SID, foreground), anything else stays in
  (SID, uNNN). The group of a thread is decided when it is first seen. Only these
  processes pay for it: ``task/`` is listed whenever the process ran, and a thread
  that ran also has its ``task/TID/stat`` read (its comm and its own CPU time).

Cost model (what is read per scrape, one pass over procfs):

* every PID: ``/proc/PID/schedstat`` (three numbers of the thread-group
  leader: CPU run time, run-queue delay, timeslices). If it is byte-identical
  to the last read, the leader has not been on a CPU since: nothing of the
  process can have changed that the collector reads (no exec, no new thread,
  no CPU time, no context switch; see "Why schedstat decides" in the docs).
  A single-threaded process with an unchanged ``schedstat`` costs one small
  read; a multi-threaded monitored one also reads its other threads'
  ``task/TID/schedstat``;
* a PID whose ``schedstat`` changed (or is new): ``/proc/PID/stat`` once, for
  the identity (start time and comm, to notice PID reuse and ``exec``), the
  CPU time of the whole thread group (including threads that exited) and the
  thread count. The command line is read only for a PID never seen with that
  start time and comm;
* a thread of a monitored process whose ``schedstat`` changed (or is new):
  ``task/TID/sched`` once (``nr_voluntary_switches``,
  ``nr_involuntary_switches``, ``se.nr_migrations``). ``task/`` is listed only
  when the thread count in ``stat`` differs from the number of known threads,
  or a known thread is gone; a single-threaded process is read as
  ``task/PID/...`` without a listing. Where ``sched`` does not exist (kernels
  without CONFIG_SCHED_DEBUG) ``task/TID/status`` supplies the switches and
  migrations are not reported for that thread. Where ``schedstat`` reads
  ``0 0 0`` (sched_info off on kernels before 5.14) nothing is skipped and the
  run-queue families are not exported;
* where ``schedstat`` is missing (no CONFIG_SCHED_INFO, found once): a
  monitored process's threads' ``task/TID/sched`` are read BEFORE its ``stat``;
  if every one is the same as the copy kept from last scrape but the
  ``clock-delta`` row (sched_key, same_sched), no thread was woken, ran, was
  added or exited, and ``stat`` is not read. Else ``stat`` is read (parsed
  only if its bytes changed) and the threads are taken from the ``sched``
  bytes already read. A copy is kept only from a read made before that
  scrape's ``stat`` read, for a thread whose switches and migrations did not
  move (see "Kernels without schedstat" in the docs). The run-queue families
  are not exported.

Counters stay monotonic: a process is tracked by (PID, start time, comm) with
its last CPU time, each of its threads by TID with its last values; when a
thread or process disappears, its last values are added to its group's
"exited" totals. A value that goes down is treated as a new thread (or
process): the old values go to the exited totals.
"""
from __future__ import annotations

import errno
import logging
import os
import re
import threading
import time
from typing import Iterable, Iterator, Sequence

from prometheus_client.core import Metric
from prometheus_client.samples import Sample

from exporter_common.config import Fields
from exporter_common.declare import Collector, Family, Setting

log = logging.getLogger(__name__)

_GROUP = ("sid", "role")
SPEC = Collector(
    "process", "Oracle processes by instance (sid) and background role: context switches, migrations, "
    "run-queue delay, CPU time, processes and threads (docs/dbhost-process-collector.md).",
    reads=("/proc/PID/schedstat", "/proc/PID/stat", "/proc/PID/cmdline", "/proc/PID/task/",
           "/proc/PID/task/*/schedstat", "/proc/PID/task/*/sched", "/proc/PID/task/*/status",
           "/proc/PID/task/*/stat (threaded execution: ora_uNNN_<SID> only)"),
    settings=(
        Setting("extra_groups", (), "extra process groups, {name: ..., regex: ...} searched in the command "
                "line (sid=\"\", role=name)", kind="custom",
                parse=lambda fields, key: parse_extra_groups(fields, key)),
        Setting("exited_group_seconds", 600.0, "how long a group whose processes all exited stays exported "
                "(its counters frozen at what its members counted); then it leaves, and under the series cap "
                "exited groups never take the place of live ones", kind="number", minimum=0),
    ),
    metrics=(
        Family("dbhost_process_context_switches_total", "counter",
               "Context switches of the group's threads (task/TID/sched nr_voluntary_switches, "
               "nr_involuntary_switches), including threads that exited.", _GROUP + ("kind",),
               source="`task/TID/sched` `nr_voluntary_switches`, `nr_involuntary_switches` (same numbers as `task/TID/status` `voluntary_ctxt_switches`, `nonvoluntary_ctxt_switches`) summed over the group's threads", measure='switches', note='Labels: `sid, role, kind` (`voluntary`, `involuntary`).'),
        Family("dbhost_process_migrations_total", "counter",
               "CPU migrations of the group's threads (task/TID/sched se.nr_migrations), "
               "including threads that exited.", _GROUP, source='`task/TID/sched` `se.nr_migrations`', measure='migrations'),
        Family("dbhost_process_cpu_seconds_total", "counter",
               "CPU time of the group's processes (/proc/PID/stat utime, stime / SC_CLK_TCK: all "
               "their threads), including threads and processes that exited.", _GROUP + ("mode",),
               source='`/proc/PID/stat` fields 14 (utime) and 15 (stime) / `SC_CLK_TCK`: the whole thread group, including threads that exited', note='Labels: `sid, role, mode` (`user`, `system`).'),
        Family("dbhost_process_run_delay_seconds_total", "counter",
               "Time the group's threads were runnable but waited on a run queue for a CPU "
               "(task/TID/schedstat run_delay), including threads that exited.", _GROUP,
               source="`task/TID/schedstat` field 2 (`sched_info.run_delay`, ns) / 1e9 summed over the group's threads: time they were runnable but waited on a run queue for a CPU (CPU starvation, R13/R14). Needs CONFIG_SCHED_INFO (every distribution kernel); absent where `schedstat` is missing or reads `0 0 0` (sched_info off, kernels before 5.14)",
               note="Absent where schedstat is missing or reads 0 0 0 (sched_info off, kernels before 5.14)."),
        Family("dbhost_process_running_seconds_total", "counter",
               "Time the group's threads ran on a CPU (task/TID/schedstat sum_exec_runtime, ns "
               "precision), including threads that exited: what run_delay competes with.", _GROUP,
               source="`task/TID/schedstat` field 1 (`se.sum_exec_runtime`, ns) / 1e9 summed over the group's threads: the CPU time the run delay competes with (ns precision, same threads as the run delay; like node_exporter's `node_schedstat_running_seconds_total`, per Oracle group). `rate(run_delay) / rate(running)`: seconds waited per second run"),
        Family("dbhost_process_timeslices_total", "counter",
               "Times the group's threads were put on a CPU (task/TID/schedstat pcount); run delay / "
               "timeslices = average wait for a CPU per dispatch.", _GROUP,
               source='`task/TID/schedstat` field 3 (`sched_info.pcount`): times the threads were put on a CPU. `rate(run_delay) / rate(timeslices)`: average wait for a CPU per wakeup (LGWR: per write request)', measure='dispatches'),
        Family("dbhost_process_processes", "gauge", "Processes in the group now.", _GROUP,
               source='matching processes now', measure='processes'),
        Family("dbhost_process_threads", "gauge", "Threads of the group's processes now.", _GROUP,
               source='their threads now', measure='threads'),
        Family("dbhost_process_dropped_series_total", "counter",
               "Series the process collector did not export because of its series limit "
               "(summed over scrapes).", source='series not exported because of the series cap, summed over scrapes', measure='series'),
    ),
    exporter="dbhost-exporter", doc='Oracle processes found by command line (`ora_<role>_<SID>` background processes, `oracle<SID>` foregrounds as role `foreground`; configured extra groups get `sid=""` and `role=<group name>`), aggregated per `sid` and `role` over every thread. With `threaded_execution=TRUE` each thread of an `ora_uNNN_<SID>` process is counted in the role its own name gives it (`task/TID/stat` comm `ora_lgwr_<SID>` -> `role="lgwr"`, `oracle_<spid>_<sid>` -> `foreground`; the SID from the process\'s command line), so `lgwr`, `ckpt`, `smon` ... exist there as thread groups (`processes` 0). SIDs beginning with `+` or `-` (ASM, APX, -MGMTDB, the ASM client `oracle+ASM_asmb_<db>`) are not database instances (extra groups only). Counters keep what exited threads and processes had counted (their last values stay in the group\'s total), so they never go backwards when members leave; overlapping scrapes (an HA pair of Prometheus servers) share one scan (the exporter runs a collector once at a time and serves the run in progress to every scrape that arrives during it), so an exited process is counted once. Details: docs/dbhost-process-collector.md.', title='Process')


def parse_extra_groups(fields: Fields, key: str) -> list[tuple[str, str]]:
    """``process.extra_groups``: a list of ``{name, regex}``, the regex valid."""
    groups = []
    for item in fields.list_of(key):
        name = item.str("name", required=True)
        regex = item.str("regex", required=True)
        try:
            re.compile(regex)
        except re.error as exc:
            raise item.error("regex", f"invalid regular expression: {exc}") from None
        except RecursionError:
            raise item.error("regex", "invalid regular expression: nested too deeply") from None
        item.reject_unknown()
        groups.append((name, regex))
    return groups


def create(cfg, procfs: str, sysfs: str) -> "ProcessCollector":
    """The collector for a dbhost_exporter.config.DbhostConfig (its ``process`` settings, and the
    exporter's max_series)."""
    settings = cfg.settings[SPEC.name]
    return ProcessCollector(procfs, settings["extra_groups"], cfg.max_series,
                            exited_group_seconds=settings["exited_group_seconds"])

# Background process: ora_<role>_<SID>. Oracle's background names are short
# alphanumeric words (pmon, lgwr, lg00, dbw0, arc0, j000, p00a ...). The SID
# charset follows what Oracle accepts in ORACLE_SID on Unix.
_BG_RE = re.compile(r"ora_([A-Za-z0-9]{1,8})_([A-Za-z0-9_$#+]{1,64})")
# Foreground: oracle<SID>, optionally followed by the connection description.
_FG_RE = re.compile(r"oracle([A-Za-z0-9_$#+]{1,64})(?:\s+\(.*)?", re.DOTALL)
# A SID beginning with + or - is not a database instance: ASM (+ASM1), the ASM proxy (+APX1), the
# Grid Infrastructure management repository (-MGMTDB); also a database's ASM client process run by
# grid, "oracle+ASM_asmb_<db> (DESCRIPTION=...)". They are left to the extra groups.
_NOT_DB_SID = ("+", "-")
# threaded_execution=TRUE (12c+): only PMON, PSP0, VKTM and DBWn stay processes; the other
# background processes and the foregrounds are threads of ora_uNNN_<SID> processes (ora_u004_,
# ora_u005_), each thread named by Oracle after its role (comm ora_lgwr_<SID>, cut to 15 bytes).
_THREADED_ROLE = re.compile(r"u[0-9]{3}")
_THREAD_BG = re.compile(rb"ora_([A-Za-z0-9]{1,8})_(.+)", re.DOTALL)
_THREAD_FG = re.compile(rb"oracle_[0-9]+_(.+)", re.DOTALL)


def thread_group(comm: bytes, own: "Group") -> "Group":
    """The group of one thread of a threaded-execution process ``own`` (sid, "uNNN") from the
    thread's comm: ``ora_<role>_<SID>`` -> (sid, role), ``oracle_<ospid>_<sid>`` -> (sid,
    "foreground"); the comm's SID part (cut to the 15 bytes of comm) must begin the process's SID
    (taken from its command line), in any case: Oracle names the threads with the SID lower-cased
    (ora_pmon_CDB1 is a process, its LGWR thread ora_lgwr_cdb1). Anything else (the uNNN thread
    itself, an unnamed thread, a name that does not fit) stays in the process's own group."""
    sid = own[0]
    m = _THREAD_BG.fullmatch(comm)
    if m is not None:
        part = m.group(2).decode("utf-8", "replace")
        role = m.group(1).decode("ascii").lower()
        if sid.lower().startswith(part.lower()) and not _THREADED_ROLE.fullmatch(role):
            return sid, role
        return own
    m = _THREAD_FG.fullmatch(comm)
    if m is not None and sid.lower().startswith(m.group(1).decode("utf-8", "replace").lower()):
        return sid, "foreground"
    return own


# errno values meaning "the process or thread is gone" (as opposed to
# "it is there but we cannot read it").
_GONE = {errno.ENOENT, errno.ESRCH}
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 16384

# Index of each value in a per-thread state tuple and in a group's totals.
# Per thread (from sched / schedstat): VOL .. SLICES; per process (stat): UTIME, STIME.
VOL, INVOL, MIG, RUN, DELAY, SLICES, UTIME, STIME = range(8)
_NTHREAD = 6     # values per thread
_NVALS = 8       # values per group
# Index in a thread's state tuple of the schedstat bytes last read (b"" when
# they cannot stand for the thread's values, see _usable_schedstat).
SS = 6
# Index of the thread's sched key (sched_key(): its task/TID/sched bytes before and after the
# clock-delta row) on a kernel without schedstat, from a read made BEFORE the process's stat
# read of the same scrape; b"" otherwise (then it proves nothing).
SK = 7
# Series emitted per group: 2 context switch kinds, 1 migrations, 2 cpu
# modes, run delay, running time, timeslices, processes, threads.
SERIES_PER_GROUP = 10

Group = tuple[str, str]  # (sid, role)


class Malformed(ValueError):
    """A proc file did not have the expected shape."""


def read_file(path: str) -> bytes:
    """Read a whole (small) file with as few syscalls as possible."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        data = os.read(fd, _CHUNK)
        if len(data) < _CHUNK:
            return data
        chunks = [data]
        while True:
            data = os.read(fd, _CHUNK)
            if not data:
                return b"".join(chunks)
            chunks.append(data)
    finally:
        os.close(fd)


def parse_stat(data: bytes) -> tuple[bytes, int, int, int, int]:
    """(comm, starttime, utime, stime, num_threads) from a /proc/PID/stat line.

    comm may contain spaces, parentheses and newlines, so it is everything
    between the first '(' and the LAST ')'. Fields (proc(5)): 14 utime and 15
    stime (clock ticks, the whole thread group including threads that
    exited), 20 num_threads, 22 starttime (clock ticks since boot)."""
    lp = data.find(b"(")
    rp = data.rfind(b")")
    if lp < 0 or rp < lp:
        raise Malformed("no (comm) in stat")
    rest = data[rp + 1:].split(None, 20)
    if len(rest) < 20:  # need at least up to field 22 (starttime)
        raise Malformed("stat has %d fields after comm" % len(rest))
    # field N of proc(5) is rest[N - 3]; int() rejects junk (ValueError)
    utime, stime, nt, start = int(rest[11]), int(rest[12]), int(rest[17]), int(rest[19])
    if utime < 0 or stime < 0 or nt < 0 or start < 0:
        raise Malformed("negative value in stat")
    return data[lp + 1:rp], start, utime, stime, nt


def parse_schedstat(data: bytes) -> tuple[int, int, int]:
    """(run time ns, run-queue delay ns, timeslices) from /proc/PID/task/TID/schedstat:
    ``%llu %llu %lu`` = se.sum_exec_runtime, sched_info.run_delay, sched_info.pcount
    (fs/proc/base.c proc_pid_schedstat; Documentation/scheduler/sched-stats.rst)."""
    parts = data.split()
    if len(parts) != 3 or not (parts[0].isdigit() and parts[1].isdigit() and parts[2].isdigit()):
        raise Malformed("schedstat is not three numbers")
    return int(parts[0]), int(parts[1]), int(parts[2])


def _usable_schedstat(data: bytes | None) -> bool:
    """True if identical schedstat bytes on two reads prove the thread did not run in
    between: three numbers, run time and timeslices above 0. ``0 0 0`` is what kernels
    before 5.14 print when sched_info is off (no CONFIG_SCHEDSTATS, delay accounting
    off): it never changes, so it proves nothing; a thread that never ran has nothing
    to skip either."""
    if not data:
        return False
    try:
        run, _, slices = parse_schedstat(data)
    except Malformed:
        return False
    return run > 0 and slices > 0


def _last_value(data: bytes, key: bytes) -> int:
    """Integer after ':' on the LAST line starting with key (key includes the
    leading newline). The last occurrence wins, so a comm in a header line
    cannot shadow a real value."""
    i = data.rfind(key)
    if i < 0:
        raise Malformed("no %r" % key.strip())
    j = i + len(key)
    c = data.find(b":", j)
    k = data.find(b"\n", j)
    if k < 0:
        k = len(data)
    if c < 0 or c > k or data[j:c].strip():
        raise Malformed("bad line for %r" % key.strip())
    return int(data[c + 1:k])  # int() allows surrounding blanks, rejects junk (ValueError)


# The three task/TID/sched rows, in the order proc_sched_show_task() prints
# them (kernel/sched/debug.c: se.nr_migrations, [schedstats rows],
# nr_switches, nr_voluntary_switches, nr_involuntary_switches). Matched from
# the LAST "\nse.nr_migrations", so nothing in the header line (comm) can
# stand in for a row. Anything else goes to the row-by-row parse. scan() first
# tries the offset where the process's last sched read had the row (the rows
# move only when the header's length changes: thread count, TID width, comm):
# only an offset of 16 or more is kept, and the comm, the only text in the file
# that is not the kernel's, is at most 15 bytes (TASK_COMM_LEN), so a match
# there is the kernel's row too (and it must be the last se.nr_migrations, as
# for the search from the end).
_SCHED_FAST = re.compile(
    rb"\nse\.nr_migrations +: +(\d+)\n(?:[^\n]*\n)*?"
    rb"nr_voluntary_switches +: +(\d+)\nnr_involuntary_switches +: +(\d+)\n")
_MIG_KEY = b"\nse.nr_migrations"
_CLOCK_KEY = b"\nclock-delta"


def sched_key(data: bytes, hint: int = -1) -> tuple[bytes, bytes, int]:
    """(before, after, size): a task/TID/sched file's bytes before and after its ``clock-delta``
    row, and its size: what stays the same while the thread does not run.
    proc_sched_show_task() (kernel/sched/debug.c) prints that row from two cpu_clock() reads it
    makes while printing, so it differs on every read (always in the same width,
    ``%-45s:%21Ld``); everything else it prints (exec_start, vruntime, sum_exec_runtime,
    switches, migrations, PELT averages, the header's ``#threads``) is stored state, changed
    when the thread is woken, runs, exits or is moved, never by time passing. ``hint``: where
    the row was last time (the layout rarely moves). The search starts past the header's comm
    (at most 15 bytes), so a comm holding ``\nclock-delta`` is never taken for the row.
    Without the row: (the whole file, b"", size)."""
    if hint < 16 or not data.startswith(_CLOCK_KEY, hint):
        hint = data.rfind(_CLOCK_KEY, 16)
        if hint < 0:
            return data, b"", len(data)
    j = data.find(b"\n", hint + 1)
    return (data[:hint], data[j:] if j >= 0 else b"", len(data))


def same_sched(data: bytes, key: tuple[bytes, bytes, int]) -> bool:
    """True if ``data`` (a task/TID/sched read) is what ``key`` (sched_key() of an earlier
    read) was made from but the clock-delta row: the same size, the same bytes before the row
    and after it (the kernel prints one row, of a fixed width, between them)."""
    before, after, size = key
    return len(data) == size and data.startswith(before) and data.endswith(after)


def parse_sched(data: bytes) -> tuple[int, int, int]:
    """(voluntary, involuntary, migrations) from a task/TID/sched file (migrations
    0 where the kernel does not print se.nr_migrations)."""
    i = data.rfind(_MIG_KEY)
    if i >= 0:
        m = _SCHED_FAST.match(data, i)
        if m is not None:
            return int(m[2]), int(m[3]), int(m[1])
    vol = _last_value(data, b"\nnr_voluntary_switches")
    invol = _last_value(data, b"\nnr_involuntary_switches")
    try:
        mig = _last_value(data, b"\nse.nr_migrations")
    except Malformed:
        mig = 0
    if vol < 0 or invol < 0 or mig < 0:
        raise Malformed("negative counter in sched")
    return vol, invol, mig


def parse_status_switches(data: bytes) -> tuple[int, int]:
    vol = _last_value(data, b"\nvoluntary_ctxt_switches")
    invol = _last_value(data, b"\nnonvoluntary_ctxt_switches")
    if vol < 0 or invol < 0:
        raise Malformed("negative counter in status")
    return vol, invol


def command_line(raw: bytes) -> str:
    """The command line as one string: NUL-separated arguments joined by
    spaces, trailing padding removed, undecodable bytes replaced."""
    parts = raw.split(b"\0")
    while parts and not parts[-1]:
        parts.pop()
    return b" ".join(parts).decode("utf-8", "replace").strip()


class _Proc:
    """What is known about one PID: its identity (``head``: hash of comm;
    ``start``: stat field 22 starttime), its group, and ``lss``: the leader's
    ``/proc/PID/schedstat`` bytes last read when usable (else None): if the
    next read is identical, the process has not run and is not read further.
    For a monitored process also the last values read: process CPU time
    (``utime``, ``stime`` in clock ticks, from ``/proc/PID/stat``, which
    includes the time of threads that exited), ``nt`` (num_threads),
    ``live`` (threads read successfully), per thread ``tid -> state`` and the
    sums of the thread values."""
    __slots__ = ("head", "start", "group", "lss", "utime", "stime", "nt", "live", "threads", "sums", "mo",
                 "split", "tinfo")

    def __init__(self, head: int, start: int, group: Group | None):
        self.head = head
        self.start = start
        self.group = group
        self.lss: bytes | None = None
        self.utime = 0
        self.stime = 0
        self.nt = 0
        self.live = 0
        self.threads: dict[str, tuple] = {}
        self.sums: tuple = (0,) * _NTHREAD
        # where the last task/TID/sched read of its threads had its se.nr_migrations row, less the
        # width of that thread's TID (0: none): the rows are matched there first (see scan())
        self.mo = 0
        # threaded execution (ora_uNNN_<SID>): its threads are grouped by their own comm. ``split``:
        # group -> the sums of its live threads (VOL .. STIME, then the thread count); ``tinfo``:
        # tid -> (group, utime, stime, starttime) from task/TID/stat. None / {} for every other process.
        self.split: dict | None = {} if group is not None and _THREADED_ROLE.fullmatch(group[1]) else None
        self.tinfo: dict[str, tuple] = {}


# Per-thread state: (voluntary, involuntary, migrations, run ns, delay ns,
# timeslices, schedstat bytes or b"", sched key or b""): one small tuple a thread.
ThreadState = tuple
_UNREADABLE = None      # thread present, files unreadable or malformed: keep its last values
_GONE_T = ()            # thread gone


def _count_split(counts: dict, p: _Proc) -> None:
    """Processes and threads of a threaded-execution process: the process in its own group, each
    thread in the group its name gave it."""
    c = counts.get(p.group)
    if c is None:
        c = counts[p.group] = [0, 0]
    c[0] += 1
    for g, vals in p.split.items():
        c = counts.get(g)
        if c is None:
            c = counts[g] = [0, 0]
        c[1] += vals[_NVALS]


class ProcessCollector:
    """Custom prometheus_client collector; keeps its state between scrapes."""

    name = "process"

    def __init__(self, procfs: str, extra_groups: Sequence[tuple[str, str]] = (),
                 max_series: int = 10000, exited_group_seconds: float = 600.0,
                 clock=time.monotonic):
        self.procfs = str(procfs).rstrip("/") or "/"
        self.extra_groups: list[tuple[str, re.Pattern[str]]] = []
        for group_name, pattern in extra_groups:
            try:
                self.extra_groups.append((str(group_name), re.compile(pattern)))
            except (re.error, RecursionError) as e:
                raise ValueError(f"extra group {group_name!r}: invalid regex {pattern[:80]!r}: "
                                 f"{e if isinstance(e, re.error) else 'nested too deeply'}") from None
        self.max_series = int(max_series)
        self.exited_group_seconds = float(exited_group_seconds)
        self.clock = clock
        # group -> clock() of the last scrape that found a process of it; a group without one for
        # exited_group_seconds leaves (its exited totals, series and label cache with it)
        self._last_live: dict[Group, float] = {}
        self.clk_tck = float(os.sysconf("SC_CLK_TCK"))
        self._procs: dict[str, _Proc] = {}
        self._dead: dict[Group, list[int]] = {}
        self._exported: set[Group] = set()
        self._label_dicts: dict[Group, tuple[dict[str, str], ...]] = {}   # exported groups only
        self.dropped_series_total = 0
        # True once any thread's schedstat was parsed: the run-queue families are exported
        self.schedstat_seen = False
        # True once a process whose stat reads has no schedstat (kernel without CONFIG_SCHED_INFO):
        # schedstat is then probed once per scrape instead of opened for every process and thread
        self.schedstat_missing = False
        self.last_schedstat_missing_opens = 0
        # Statistics of the last scrape (for tests and the benchmark).
        self.last_files_read = 0
        self.last_cmdlines_read = 0
        self.last_dirs_listed = 0
        self.last_sched_parsed = 0   # sched (or status) files read because the thread ran (or is new)
        self.last_stat_parsed = 0    # /proc/PID/stat files parsed (not byte-identical to the last scrape's)
        self._files = 0
        self._parsed = 0
        self._warned_empty = False
        # One scrape at a time: a scan starts from the state the last one left (which processes
        # were alive, what the exited ones had counted) and replaces it. Two overlapping scrapes
        # (an HA pair of Prometheus servers) would both move an exited process's last counters
        # into the exited totals: counted twice, for good.
        self._lock = threading.Lock()

    # -- classification -------------------------------------------------
    def classify(self, cmdline: str) -> Group | None:
        """(sid, role) for a command line, or None if it is not monitored."""
        if cmdline:
            first = cmdline.split(None, 1)[0]
            m = _BG_RE.fullmatch(first)
            if m and not m.group(2).startswith(_NOT_DB_SID):
                return m.group(2), m.group(1).lower()
            m = _FG_RE.fullmatch(cmdline)
            if m and not m.group(1).startswith(_NOT_DB_SID):
                return m.group(1), "foreground"
        for group_name, rx in self.extra_groups:
            if rx.search(cmdline):
                return "", group_name
        return None

    # -- one thread whose schedstat changed (or that is new) ----------------
    def _read_thread(self, tdir: str, ss: bytes | None, o: ThreadState | None, data: bytes | None = None):
        """The new state of a thread from its schedstat bytes ``ss`` (None if
        unreadable or missing) and its ``sched`` (``status`` without it);
        _UNREADABLE if present but unreadable/malformed, _GONE_T if gone.
        ``data``: the ``sched`` bytes if scan() already read them (counted here)."""
        run = None
        if ss is not None:
            try:
                run, delay, slices = parse_schedstat(ss)
                if run or delay or slices:   # not the constant 0 0 0 of sched_info off
                    self.schedstat_seen = True
            except Malformed:
                ss = None
        try:
            if data is None:
                data = read_file(tdir + "/sched")
            self._files += 1
            self._parsed += 1
            v, iv, mg = parse_sched(data)
        except OSError as e:
            if e.errno != errno.ENOENT:
                return _GONE_T if e.errno in _GONE else _UNREADABLE
            # No sched file: the thread is gone (then so is status) or the
            # kernel lacks CONFIG_SCHED_DEBUG.
            try:
                data = read_file(tdir + "/status")
                self._files += 1
                self._parsed += 1
                v, iv = parse_status_switches(data)
                mg = 0
            except OSError as e2:
                return _GONE_T if e2.errno in _GONE else _UNREADABLE
            except ValueError:   # Malformed too
                return _UNREADABLE
        except ValueError:
            return _UNREADABLE
        if run is None:
            # no schedstat on this kernel (0), or not readable now (keep the last values)
            if o is not None:
                run, delay, slices = o[RUN], o[DELAY], o[SLICES]
            else:
                run = delay = slices = 0
            ss = b""
        elif not (run > 0 and slices > 0):
            ss = b""
        return (v, iv, mg, run, delay, slices, ss, b"")

    # -- scraping -------------------------------------------------------
    def scan(self) -> tuple[dict[Group, list[int]], dict[Group, list[int]]]:
        """One pass over procfs. Returns (totals per group, indexed VOL ..
        STIME; [processes, threads] per group) and updates the state."""
        root = self.procfs
        old_procs = self._procs
        new_procs: dict[str, _Proc] = {}
        counts: dict[Group, list[int]] = {}
        cmdlines = dirs = 0
        self._files = self._parsed = 0
        open_, read_, close_ = os.open, os.read, os.close
        flags = _OPEN_FLAGS
        listdir = os.listdir
        gone = _GONE
        read_thread = self._read_thread
        fast_sched = _SCHED_FAST.match
        mig_key = _MIG_KEY
        parsed = 0
        pre_sched = None   # sched bytes already read for the process being scanned (no schedstat)
        stats = 0    # stat files parsed
        seen = False
        failed = 0   # schedstat opens that found no file (the probe)

        names = listdir(root)
        dirs += 1
        files = 0
        if not any(n.isdigit() for n in names):
            if not self._warned_empty:
                log.warning("no process directories under %s: is --path.procfs the procfs mount point? "
                            "(the process collector exports nothing until some appear)", root)
                self._warned_empty = True
        else:
            self._warned_empty = False
        # A kernel without schedstat (no CONFIG_SCHED_INFO) is found once: then no schedstat is
        # opened (one probe per scrape, on the first process), not one failed open per process
        # and thread. no_ss: schedstat known to be missing; ss_absent: this PID's open said ENOENT.
        no_ss = self.schedstat_missing
        probe = no_ss
        for name in names:
            if not (name.isdigit() and name.isascii()):
                continue
            pdir = root + "/" + name
            old = old_procs.get(name)
            pre_sched = None
            try:
                # -- the leader's schedstat: has the process run? ------------
                ss_absent = False
                if no_ss and not probe:
                    lss = None
                else:
                    try:
                        fd = open_(pdir + "/schedstat", flags)
                        try:
                            lss = read_(fd, 256)
                        finally:
                            close_(fd)
                        files += 1
                        if probe:               # it is there after all (a tree put in place)
                            no_ss = self.schedstat_missing = False
                    except OSError as e:
                        lss = None   # gone (stat below says so), no CONFIG_SCHED_INFO, or unreadable
                        ss_absent = e.errno == errno.ENOENT
                    if probe:
                        failed += lss is None
                        probe = False
                pre = None
                if old is not None and lss is not None and lss == old.lss:
                    group = old.group
                    if group is None:
                        new_procs[name] = old   # not monitored, and it has not run: same process
                        continue
                    known = old.threads
                    if old.live == old.nt == len(known) and name in known:
                        tdir = pdir + "/task/"
                        same = True
                        if old.nt > 1:
                            # the other threads: did any of them run?
                            pre = {}
                            for tid, o in known.items():
                                if tid == name:
                                    continue
                                try:
                                    fd = open_(f"{tdir}{tid}/schedstat", flags)
                                    try:
                                        ss = read_(fd, 256)
                                    finally:
                                        close_(fd)
                                    files += 1
                                except OSError:
                                    same = False   # gone or unreadable: the full path decides
                                    break
                                pre[tid] = ss
                                if not ss or ss != o[SS]:
                                    same = False
                        if same:
                            # Nothing ran: the same threads, CPU time, switches and migrations.
                            new_procs[name] = old
                            if old.split is not None:
                                _count_split(counts, old)
                                continue
                            c = counts.get(group)
                            if c is None:
                                counts[group] = [1, old.live]
                            else:
                                c[0] += 1
                                c[1] += old.live
                            continue

                if no_ss and old is not None and old.group is not None:
                    # -- no schedstat: the threads' sched first -------------
                    # If every known thread's sched is the same as last scrape but the
                    # clock-delta row (sched_key), no thread has been woken, run or exited
                    # since that read, so the process's stat (CPU time, thread count, comm,
                    # start time) is what it was then: it is not read (see "Without
                    # schedstat" in the docs). All are read before stat in any case: a key
                    # is kept only from a sched read before the stat read of the same scrape.
                    known = old.threads
                    if old.live == old.nt == len(known) and name in known:
                        tdir = pdir + "/task/"
                        pre_sched = {}
                        same = True
                        for tid, o in known.items():
                            try:
                                fd = open_(tdir + tid + "/sched", flags)
                                try:
                                    data = read_(fd, _CHUNK)
                                finally:
                                    close_(fd)
                            except OSError:
                                same = False       # gone or unreadable: the full path decides
                                break
                            pre_sched[tid] = data
                            if same:
                                k = o[SK]
                                if not k or len(data) >= _CHUNK or not same_sched(data, k):
                                    same = False   # it ran (or no key yet): stat below
                        if same:
                            files += len(pre_sched)
                            new_procs[name] = old
                            if old.split is not None:
                                _count_split(counts, old)
                                continue
                            c = counts.get(old.group)
                            if c is None:
                                counts[old.group] = [1, old.live]
                            else:
                                c[0] += 1
                                c[1] += old.live
                            continue

                # -- it ran, or it is new: stat -----------------------------
                fd = open_(pdir + "/stat", flags)
                try:
                    data = read_(fd, _CHUNK)
                finally:
                    close_(fd)
                files += 1
                if ss_absent and not no_ss:
                    # the process is there (its stat read) but has no schedstat: this kernel has none
                    no_ss = self.schedstat_missing = True
                    failed += 1
                stat = data
                if no_ss and old is not None and old.lss == stat:
                    if old.group is None:
                        new_procs[name] = old   # not monitored, byte-identical stat: the same process
                        continue
                    # byte-identical stat: the same process (comm, start), CPU time and thread
                    # count as last time: not parsed; the threads below, from the sched bytes read
                    # above (a thread may have run without a clock tick of CPU time)
                    entry = old
                    utime, stime, nt = old.utime, old.stime, old.nt
                else:
                    stats += 1
                    comm, start, utime, stime, nt = parse_stat(data)
                    head = hash(comm)
                    if old is not None and old.start == start and old.head == head:
                        entry = old
                    else:
                        # A PID not seen before, reused, or a process that
                        # exec'd (comm changed): identify it by its command line.
                        files += 1
                        cmdlines += 1
                        group = self.classify(command_line(read_file(pdir + "/cmdline")))
                        if old is not None and old.start == start and group is not None and old.group == group:
                            old.head = head   # exec within the same group: same process, same threads
                            entry = old
                        else:
                            entry = _Proc(head, start, group)
                    if pre_sched and entry is not old:
                        # another process now (PID reused): what was read before its stat
                        # may be the old one's threads; they are read again
                        files += len(pre_sched)
                        pre_sched = None
                group = entry.group
                if group is None:
                    # without schedstat, its stat bytes say next time whether anything changed
                    entry.lss = data if no_ss else lss if _usable_schedstat(lss) else None
                    new_procs[name] = entry
                    continue
                if entry.split is not None:
                    # threaded execution: every thread to the group its own name gives it
                    f, d = self._scan_threaded(entry, pdir, name, lss, pre, pre_sched, no_ss, stat, nt)
                    files += f
                    dirs += d
                    pre_sched = None
                    new_procs[name] = entry
                    _count_split(counts, entry)
                    continue

                # -- threads: schedstat, and sched where it changed ---------
                known = entry.threads
                tdir = pdir + "/task/"
                if known and nt == len(known):
                    # Same thread count as last time: read the known TIDs
                    # without listing task/. If one of them is gone, the set
                    # changed: list task/ and read again.
                    tids = known
                    verify = True
                elif nt == 1:
                    tids = (name,)   # single-threaded: the only thread is the leader
                    verify = False
                else:
                    tids = listdir(tdir)
                    dirs += 1
                    verify = False
                mo = entry.mo
                while True:
                    new_thr: dict[str, ThreadState] = {}
                    live = 0
                    s0 = s1 = s2 = s3 = s4 = s5 = 0   # sums of the thread values (VOL .. SLICES)
                    folds = None
                    missing = False
                    for tid in tids:
                        o = known.get(tid)
                        if tid == name:
                            ss = lss
                        elif pre is not None and tid in pre:
                            ss = pre[tid]
                        elif no_ss:
                            ss = None
                        else:
                            try:
                                fd = open_(f"{tdir}{tid}/schedstat", flags)
                                try:
                                    ss = read_(fd, 256)
                                finally:
                                    close_(fd)
                                files += 1
                            except OSError:
                                ss = None
                        if ss and o is not None and ss == o[SS]:
                            t = o   # it has not run: same values
                        else:
                            # It ran (or is new). The common case inline: a usable
                            # schedstat (three numbers, run time and timeslices
                            # above 0) and a sched whose three rows follow the last
                            # se.nr_migrations as the kernel prints them (one read).
                            # Anything else: _read_thread, which decides as before.
                            t = data = None
                            if ss:
                                try:
                                    a, b, c = ss.split()
                                except ValueError:
                                    a = b = c = b""
                                if a.isdigit() and b.isdigit() and c.isdigit():
                                    run = int(a)
                                    slices = int(c)
                                    if run and slices:
                                        try:
                                            fd = open_(f"{tdir}{tid}/sched", flags)
                                            try:
                                                data = read_(fd, _CHUNK)
                                            finally:
                                                close_(fd)
                                        except OSError:
                                            data = None   # _read_thread reads it again and decides
                                        else:
                                            if len(data) < _CHUNK:
                                                # the rows where they were in this process's last
                                                # sched (the header "comm (TID, #threads: N)" is as
                                                # long but for the TID's width), else from the last
                                                # se.nr_migrations (see _SCHED_FAST)
                                                h = mo + len(tid)
                                                m = fast_sched(data, h) if h >= 16 else None
                                                if m is not None and data.find(mig_key, h + 1) >= 0:
                                                    m = None      # not the last se.nr_migrations
                                                if m is None:
                                                    i = data.rfind(mig_key)
                                                    if i >= 16:
                                                        m = fast_sched(data, i)
                                                        mo = i - len(tid)
                                                if m is not None:
                                                    mg, v, iv = m.groups()
                                                    v, iv, mg = int(v), int(iv), int(mg)
                                                    delay = int(b)
                                                    files += 1
                                                    parsed += 1
                                                    seen = True
                                                    if o is not None and (v < o[0] or iv < o[1] or mg < o[2]
                                                                          or run < o[3] or delay < o[4]
                                                                          or slices < o[5]):
                                                        # not the same thread after all (TID reused) or
                                                        # its counters were reset: the old one exited
                                                        if folds is None:
                                                            folds = []
                                                        folds.append(o)
                                                    new_thr[tid] = (v, iv, mg, run, delay, slices, ss, b"")
                                                    live += 1
                                                    s0 += v
                                                    s1 += iv
                                                    s2 += mg
                                                    s3 += run
                                                    s4 += delay
                                                    s5 += slices
                                                    continue
                                            else:
                                                data = None   # longer than a read: _read_thread
                            elif no_ss:
                                # no schedstat on this kernel: sched alone, same inline read; the
                                # run-queue values stay what they were (0: not exported)
                                data = None
                                if pre_sched:
                                    data = pre_sched.pop(tid, None)
                                # read before this scrape's stat: its key may stand for the thread
                                key = data is not None
                                if data is None:
                                    try:
                                        fd = open_(f"{tdir}{tid}/sched", flags)
                                        try:
                                            data = read_(fd, _CHUNK)
                                        finally:
                                            close_(fd)
                                    except OSError:
                                        data = None   # _read_thread reads it again and decides
                                if data is not None:
                                    if len(data) < _CHUNK:
                                        i = data.rfind(mig_key)
                                        m = fast_sched(data, i) if i >= 0 else None
                                        if m is not None:
                                            mg, v, iv = m.groups()
                                            v, iv, mg = int(v), int(iv), int(mg)
                                            if o is None:
                                                t = (v, iv, mg, 0, 0, 0, b"", b"")
                                            else:
                                                # its key: only from bytes read before stat, and only
                                                # for a thread that did not switch or migrate since the
                                                # last scrape (one that keeps running would pay for a
                                                # key every scrape and never use it)
                                                if key and v == o[VOL] and iv == o[INVOL] and mg == o[MIG]:
                                                    k = o[SK]
                                                    key = sched_key(data, len(k[0]) if k else -1)
                                                else:
                                                    key = b""
                                                t = (v, iv, mg, o[RUN], o[DELAY], o[SLICES], b"", key)
                                            files += 1
                                            parsed += 1
                                    else:
                                        data = None
                            if t is None:
                                t = read_thread(tdir + tid, ss, o, data)
                            if t is _GONE_T:
                                missing = True
                                continue
                            if t is _UNREADABLE:
                                # present but unreadable or malformed: keep its last values
                                if o is not None:
                                    new_thr[tid] = o
                                    s0 += o[0]
                                    s1 += o[1]
                                    s2 += o[2]
                                    s3 += o[3]
                                    s4 += o[4]
                                    s5 += o[5]
                                continue
                            if o is not None and (t[0] < o[0] or t[1] < o[1] or t[2] < o[2] or t[3] < o[3]
                                                  or t[4] < o[4] or t[5] < o[5]):
                                # Not the same thread after all (TID reused) or its
                                # counters were reset: account the old one as exited.
                                if folds is None:
                                    folds = []
                                folds.append(o)
                        new_thr[tid] = t
                        live += 1
                        s0 += t[0]
                        s1 += t[1]
                        s2 += t[2]
                        s3 += t[3]
                        s4 += t[4]
                        s5 += t[5]
                    if verify and missing:
                        tids = listdir(tdir)
                        dirs += 1
                        verify = False
                        continue
                    break

                if pre_sched:
                    files += len(pre_sched)   # read before stat, not used (that thread is gone)
                if not new_thr:
                    # No thread could be read (the process exited during the
                    # scan): it is not counted; if it was known, its last
                    # values go to the exited totals below.
                    continue
                dead = None
                if folds:
                    dead = self._dead_of(group)
                    for o in folds:
                        for k in range(_NTHREAD):
                            dead[k] += o[k]
                if not verify or len(new_thr) != len(known):
                    for tid, o in known.items():
                        if tid not in new_thr:   # the thread exited
                            if dead is None:
                                dead = self._dead_of(group)
                            for k in range(_NTHREAD):
                                dead[k] += o[k]
                if utime < entry.utime or stime < entry.stime:
                    # CPU time went backwards: a new process after all
                    if dead is None:
                        dead = self._dead_of(group)
                    dead[UTIME] += entry.utime
                    dead[STIME] += entry.stime
                entry.utime = utime
                entry.stime = stime
                entry.nt = nt
                entry.live = live
                entry.threads = new_thr
                entry.sums = (s0, s1, s2, s3, s4, s5)
                entry.mo = mo
                t = new_thr.get(name)
                # without schedstat, its stat bytes say next time whether stat must be parsed again
                entry.lss = stat if no_ss else lss if t is not None and t[SS] and t[SS] == lss else None
                new_procs[name] = entry
                if live:
                    c = counts.get(group)
                    if c is None:
                        counts[group] = [1, live]
                    else:
                        c[0] += 1
                        c[1] += live
            except OSError as e:
                if e.errno not in gone and old is not None:
                    new_procs[name] = old   # present but unreadable: keep its last values
                log.debug("pid %s: %s", name, e)
            except (Malformed, ValueError, IndexError) as e:
                if old is not None:
                    new_procs[name] = old
                log.debug("pid %s malformed: %s", name, e)

        # Processes that exited (or whose PID now belongs to another
        # process): their last values go to the exited totals.
        for name, o in old_procs.items():
            if o.group is not None and new_procs.get(name) is not o:
                if o.split is not None:
                    for g, vals in o.split.items():
                        d = self._dead_of(g)
                        for k in range(_NVALS):
                            d[k] += vals[k]
                    continue
                d = self._dead_of(o.group)
                for k in range(_NTHREAD):
                    d[k] += o.sums[k]
                d[UTIME] += o.utime
                d[STIME] += o.stime

        totals: dict[Group, list[int]] = {g: list(v) for g, v in self._dead.items()}
        for p in new_procs.values():
            g = p.group
            if g is None:
                continue
            if p.split is not None:
                for sg, vals in p.split.items():
                    t = totals.get(sg)
                    if t is None:
                        totals[sg] = vals[:_NVALS]
                    else:
                        for k in range(_NVALS):
                            t[k] += vals[k]
                continue
            s = p.sums
            t = totals.get(g)
            if t is None:
                totals[g] = [s[0], s[1], s[2], s[3], s[4], s[5], p.utime, p.stime]
            else:
                t[0] += s[0]
                t[1] += s[1]
                t[2] += s[2]
                t[3] += s[3]
                t[4] += s[4]
                t[5] += s[5]
                t[6] += p.utime
                t[7] += p.stime
        self._procs = new_procs
        self.last_files_read = files + self._files
        self.last_cmdlines_read = cmdlines
        self.last_dirs_listed = dirs
        self.last_sched_parsed = self._parsed + parsed
        self.last_stat_parsed = stats
        self.last_schedstat_missing_opens = failed
        if seen:
            self.schedstat_seen = True
        return totals, counts

    def _scan_threaded(self, entry: _Proc, pdir: str, name: str, lss: bytes | None, pre: dict | None,
                       pre_sched: dict | None, no_ss: bool, stat: bytes, nt: int) -> tuple[int, int]:
        """The threads of a threaded-execution process (ora_uNNN_<SID>), each counted in the group
        its own name gives it (thread_group; decided when the thread is first seen and kept for
        its life, so a counter never moves between groups). Per thread: schedstat (or ``pre``,
        already read; the leader's is ``lss``); where it changed or the thread is new,
        task/TID/stat (its comm and its own utime/stime) and its sched (_read_thread). task/ is
        listed on every scan that gets here (the process ran). Exited threads' last values go to
        their group's exited totals. Returns (files read, directories listed)."""
        files = 0
        tdir = pdir + "/task/"
        tids = os.listdir(tdir)     # gone or unreadable: the caller's handler decides
        own = entry.group
        known, info = entry.threads, entry.tinfo
        new_thr: dict[str, ThreadState] = {}
        new_info: dict[str, tuple] = {}
        split: dict[Group, list[int]] = {}
        for tid in tids:
            if not tid.isdigit():
                continue
            o = known.get(tid)
            oi = info.get(tid)
            if tid == name:
                ss = lss
            elif pre is not None and tid in pre:
                ss = pre[tid]
            elif no_ss:
                ss = None
            else:
                try:
                    ss = read_file(tdir + tid + "/schedstat")
                    files += 1
                except OSError:
                    ss = None
            if ss and o is not None and oi is not None and ss == o[SS]:
                t, ti = o, oi       # it has not run: same values
            else:
                try:
                    data = read_file(tdir + tid + "/stat")
                    files += 1
                    comm, start, ut, st, _ = parse_stat(data)
                except OSError as e:
                    if e.errno in _GONE:
                        continue
                    data = None
                except ValueError:   # Malformed too
                    data = None
                t = None
                if data is not None:
                    if oi is not None and oi[3] == start:
                        g = oi[0]
                    else:
                        g = thread_group(comm, own)
                        if o is not None and oi is not None:   # TID reused: the old thread exited
                            self._fold_thread(o, oi)
                        o = oi = None
                    t = self._read_thread(tdir + tid, ss, o, pre_sched.pop(tid, None) if pre_sched else None)
                    if t is _GONE_T:
                        continue
                if t is None or t is _UNREADABLE:
                    if o is None or oi is None:
                        continue
                    t, ti = o, oi    # present but unreadable: keep its last values
                else:
                    if o is not None and (any(t[k] < o[k] for k in range(_NTHREAD)) or ut < oi[1] or st < oi[2]):
                        self._fold_thread(o, oi)     # its counters were reset: the old values exited
                    ti = (g, ut, st, start)
            new_thr[tid] = t
            new_info[tid] = ti
            acc = split.get(ti[0])
            if acc is None:
                acc = split[ti[0]] = [0] * (_NVALS + 1)
            for k in range(_NTHREAD):
                acc[k] += t[k]
            acc[UTIME] += ti[1]
            acc[STIME] += ti[2]
            acc[_NVALS] += 1
        if pre_sched:
            files += len(pre_sched)   # read before stat, not used (that thread is gone)
        for tid, o in known.items():
            if tid not in new_thr and tid in info:   # the thread exited
                self._fold_thread(o, info[tid])
        if own not in split:
            split[own] = [0] * (_NVALS + 1)   # the process is counted in its own group
        entry.threads, entry.tinfo, entry.split = new_thr, new_info, split
        entry.live = len(new_thr)
        entry.nt = nt
        t = new_thr.get(name)
        entry.lss = stat if no_ss else lss if t is not None and t[SS] and t[SS] == lss else None
        return files, 1

    def _fold_thread(self, o: ThreadState, oi: tuple) -> None:
        """A thread of a threaded-execution process left: its last values to its group's exited totals."""
        d = self._dead_of(oi[0])
        for k in range(_NTHREAD):
            d[k] += o[k]
        d[UTIME] += oi[1]
        d[STIME] += oi[2]

    def _dead_of(self, group: Group) -> list[int]:
        d = self._dead.get(group)
        if d is None:
            d = self._dead[group] = [0] * _NVALS
        return d

    def collect(self) -> Iterator[Metric]:
        with self._lock:                   # the scan and the series bookkeeping, whole
            families = list(self._collect())
        yield from families

    def _expire(self, live: set[Group], totals: dict[Group, list[int]]) -> None:
        """Groups none of whose processes is left leave after exited_group_seconds: their exited
        totals, exported mark and label dicts are dropped, so the table of exited groups is bounded
        by what exited within that time (logon storms of short-lived extra groups, instances
        shut down for good)."""
        now = self.clock()
        for g in live:
            self._last_live[g] = now
        limit = self.exited_group_seconds
        for g in [g for g, t in self._last_live.items() if g not in live and now - t >= limit]:
            del self._last_live[g]
            self._dead.pop(g, None)
            self._exported.discard(g)
            self._label_dicts.pop(g, None)
            totals.pop(g, None)

    def _collect(self) -> Iterator[Metric]:
        totals, counts = self.scan()
        live = {p.group for p in self._procs.values() if p.group is not None}
        for p in self._procs.values():
            if p.split:       # threaded execution: the groups its threads are in are live too
                live.update(p.split)
        self._expire(live, totals)
        groups = set(totals) | set(counts)
        # Live groups first: those already exported (stable series), then new ones in label
        # order; then groups with no process left, while they fit in max_series. An exited group
        # never takes the place of a live one.
        exited = groups - live
        live_groups = groups - exited
        ordered = (sorted(live_groups & self._exported) + sorted(live_groups - self._exported)
                   + sorted(exited & self._exported) + sorted(exited - self._exported))
        budget = self.max_series
        kept: list[Group] = []
        dropped = 0
        for g in ordered:
            if budget >= SERIES_PER_GROUP:
                kept.append(g)
                budget -= SERIES_PER_GROUP
            else:
                dropped += SERIES_PER_GROUP
        self.dropped_series_total += dropped
        self._exported = set(kept)
        kept.sort()

        cs = SPEC.family("dbhost_process_context_switches_total")
        mig = SPEC.family("dbhost_process_migrations_total")
        cpu = SPEC.family("dbhost_process_cpu_seconds_total")
        delay = SPEC.family("dbhost_process_run_delay_seconds_total")
        running = SPEC.family("dbhost_process_running_seconds_total")
        slices = SPEC.family("dbhost_process_timeslices_total")
        procs = SPEC.family("dbhost_process_processes")
        threads = SPEC.family("dbhost_process_threads")
        zero = [0] * _NVALS
        tck = self.clk_tck
        sched_info = self.schedstat_seen
        # The samples are what add_metric() would append, built directly with label
        # dicts made once per group (read-only for every exposition path); about
        # 1 us less per series.
        label_cache = self._label_dicts
        cs_s, mig_s, cpu_s = cs.samples, mig.samples, cpu.samples
        delay_s, running_s, slices_s = delay.samples, running.samples, slices.samples
        procs_s, threads_s = procs.samples, threads.samples
        cs_n, mig_n, cpu_n = cs.name + "_total", mig.name + "_total", cpu.name + "_total"
        delay_n, running_n, slices_n = delay.name + "_total", running.name + "_total", slices.name + "_total"
        procs_n, threads_n = procs.name, threads.name
        for g in kept:
            lb = label_cache.get(g)
            if lb is None:
                sid, role = g
                lb = label_cache[g] = (
                    {"sid": sid, "role": role},
                    {"sid": sid, "role": role, "kind": "voluntary"},
                    {"sid": sid, "role": role, "kind": "involuntary"},
                    {"sid": sid, "role": role, "mode": "user"},
                    {"sid": sid, "role": role, "mode": "system"})
            sr = lb[0]
            t = totals.get(g, zero)
            c = counts.get(g, (0, 0))
            cs_s.append(Sample(cs_n, lb[1], t[VOL]))
            cs_s.append(Sample(cs_n, lb[2], t[INVOL]))
            mig_s.append(Sample(mig_n, sr, t[MIG]))
            cpu_s.append(Sample(cpu_n, lb[3], t[UTIME] / tck))
            cpu_s.append(Sample(cpu_n, lb[4], t[STIME] / tck))
            if sched_info:
                delay_s.append(Sample(delay_n, sr, t[DELAY] / 1e9))
                running_s.append(Sample(running_n, sr, t[RUN] / 1e9))
                slices_s.append(Sample(slices_n, sr, t[SLICES]))
            procs_s.append(Sample(procs_n, sr, c[0]))
            threads_s.append(Sample(threads_n, sr, c[1]))
        dropped_f = SPEC.family("dbhost_process_dropped_series_total")
        dropped_f.add_metric([], self.dropped_series_total)
        yield from (cs, mig, cpu)
        if sched_info:
            yield from (delay, running, slices)
        yield from (procs, threads, dropped_f)

    def describe(self) -> Iterable[Metric]:
        # Returning nothing keeps registration from running a scrape.
        return []
