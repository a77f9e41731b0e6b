"""Oracle process collector: context switches, migrations and CPU time per
instance (``sid``) and background-process ``role``: switches and migrations
read per thread from ``/proc/PID/task/TID/sched``, CPU time per process from
``/proc/PID/stat``.

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

Cost model (what is read per scrape):

* every PID: ``/proc/PID/stat``, once. It gives the identity (start time and
  comm, to notice PID reuse and ``exec``), and for a monitored process its
  CPU time (utime, stime of the whole thread group, including threads that
  exited) and its thread count. A byte-identical line is not parsed again.
  The command line is read only for a PID never seen with that start time
  and comm;
* every monitored process: ``task/TID/sched`` of each thread, once
  (``nr_voluntary_switches``, ``nr_involuntary_switches``,
  ``se.nr_migrations``). ``task/`` is listed only when the thread count in
  ``stat`` differs from the number of known threads, or a known thread is
  gone; a single-threaded process is read as ``task/PID/sched`` without a
  listing. Rows that are byte-identical to the last read (at the same
  offsets) are not parsed. Where ``sched`` does not exist (kernels without
  CONFIG_SCHED_DEBUG) ``task/TID/status`` supplies the switches and
  migrations are not reported for that thread.

Counters stay monotonic: a process is tracked by (PID, start time) with its
last CPU time, each of its threads by TID with its last switch and migration
counts; when a thread or process disappears, its last values are added to
its group's "exited" totals. A value that goes down is treated as a new
thread (or process): the old values go to the exited totals.
"""
from __future__ import annotations

import errno
import logging
import os
import re
from typing import Iterable, Iterator, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

log = logging.getLogger(__name__)

# Background process: ora_<role>_<SID>. Oracle's background names are short
# alphanumeric words (pmon, lgwr, lg00, dbw0, arc0, j000, p00a ...). The SID
# charset follows what Oracle accepts in ORACLE_SID on Unix.
_BG_RE = re.compile(r"ora_([A-Za-z0-9]{1,8})_([A-Za-z0-9_$#+]{1,64})")
# Foreground: oracle<SID>, optionally followed by the connection description.
_FG_RE = re.compile(r"oracle([A-Za-z0-9_$#+]{1,64})(?:\s+\(.*)?", re.DOTALL)


# errno values meaning "the process or thread is gone" (as opposed to
# "it is there but we cannot read it").
_GONE = {errno.ENOENT, errno.ESRCH}
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 16384

# Index of each value in a per-thread / per-group counter list.
VOL, INVOL, MIG, UTIME, STIME = range(5)
_NVALS = 5
# Series emitted per group: 2 context switch kinds, 1 migrations, 2 cpu
# modes, processes, threads.
SERIES_PER_GROUP = 7

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


def parse_stat(data: bytes) -> tuple[bytes, list[bytes]]:
    """Split a /proc/PID/stat line into comm and the fields after it.

    comm may contain spaces, parentheses and newlines, so it is everything
    between the first '(' and the LAST ')'. The returned list starts at field
    3 (state): field N of proc(5) is ``rest[N - 3]``.
    """
    lp = data.find(b"(")
    rp = data.rfind(b")")
    if lp < 0 or rp < lp:
        raise Malformed("no (comm) in stat")
    rest = data[rp + 1:].split()
    if len(rest) < 20:  # need at least up to field 22 (starttime)
        raise Malformed("stat has %d fields after comm" % len(rest))
    return data[lp + 1:rp], rest


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


def parse_sched(data: bytes) -> tuple[int, int, int | None]:
    """(voluntary, involuntary, migrations) from a task sched file
    (migrations None where the kernel does not print se.nr_migrations)."""
    vol = _last_value(data, b"\nnr_voluntary_switches")
    invol = _last_value(data, b"\nnr_involuntary_switches")
    try:
        mig = _last_value(data, b"\nse.nr_migrations")
    except Malformed:
        mig = None
    if vol < 0 or invol < 0 or (mig is not None and mig < 0):
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
    """What is known about one PID: its identity (``head``: hash of the stat
    line up to the closing parenthesis of comm, so PID and comm; ``start``:
    field 22 starttime as int), its group and the hash of the whole stat line
    last read (``raw``: if a new read hashes the same, nothing in it changed
    and it is not parsed again). Hashes, not the bytes, to keep the state
    small: 3,808 stat lines are ~1.4 MiB as bytes and 0.1 MiB as ints; a
    false match needs a 64-bit hash collision between two reads of the same
    PID. For a monitored process also the last values read: process CPU
    time (``utime``, ``stime`` in clock ticks, from ``/proc/PID/stat``,
    which includes the time of threads that exited), ``nt`` (num_threads)
    and per thread ``tid -> ThreadState`` with the sums of the three
    counters over the threads."""
    __slots__ = ("head", "start", "group", "raw", "utime", "stime", "nt", "threads", "sums")

    def __init__(self, head: int, start: int, group: Group | None):
        self.head = head
        self.start = start
        self.group = group
        self.raw = -1
        self.utime = 0
        self.stime = 0
        self.nt = 0
        self.threads: dict[str, tuple] = {}
        self.sums = (0, 0, 0)


# Per-thread state: (voluntary, involuntary, migrations, where, key): the
# values and where they were found in task/TID/sched: ``where`` = offset << 16
# | length of the region from the se.nr_migrations row to the end of the
# nr_involuntary_switches row, ``key`` the hash of that region's bytes. If the
# next read's region at the same offset hashes the same, the three values are
# unchanged and nothing is parsed. (An idle thread's rows stay byte-identical;
# the rest of the file, e.g. clock-delta, changes on every read, so the whole
# file cannot be compared. Where the kernel prints schedstats rows inside the
# region a change there only costs a parse.) One small tuple of ints a thread
# instead of the row bytes: about 40% less state per thread. Values parsed by
# the slow path carry a ``where`` of -1, which never matches.
ThreadState = tuple
_NO_ROWS = (-1, 0)

# The three task/TID/sched rows, in the order proc_sched_show_task() prints
# them (kernel/sched/debug.c: se.nr_migrations, [schedstats rows],
# nr_switches, nr_voluntary_switches, nr_involuntary_switches). Matched from
# the LAST "\nse.nr_migrations", so nothing in the header line (comm) can
# stand in for a row. Anything else goes to the slower parse_sched().
_SCHED_FAST = re.compile(
    rb"\nse\.nr_migrations +: +(\d+)\n(?:[^\n]*\n)*?"
    rb"(nr_voluntary_switches +: +(\d+)\nnr_involuntary_switches +: +(\d+)\n)")
_MIG_KEY = b"\nse.nr_migrations"


class ProcessCollector:
    """Custom prometheus_client collector; keeps its state between scrapes."""

    name = "process"

    def __init__(self, procfs: str, extra_groups: Sequence[tuple[str, str]] = (),
                 max_series: int = 10000):
        self.procfs = str(procfs).rstrip("/") or "/"
        self.extra_groups: list[tuple[str, re.Pattern[str]]] = []
        for group_name, pattern in extra_groups:
            try:
                self.extra_groups.append((str(group_name), re.compile(pattern)))
            except re.error as e:
                raise ValueError(f"extra group {group_name!r}: invalid regex {pattern!r}: {e}") from None
        self.max_series = int(max_series)
        self.clk_tck = float(os.sysconf("SC_CLK_TCK"))
        self._procs: dict[str, _Proc] = {}
        self._dead: dict[Group, list[int]] = {}
        self._exported: set[Group] = set()
        self.dropped_series_total = 0
        # Statistics of the last scrape (for tests and the benchmark).
        self.last_files_read = 0
        self.last_cmdlines_read = 0
        self.last_dirs_listed = 0
        self.last_sched_parsed = 0   # sched files whose rows changed (or were new) and were parsed

    # -- classification -------------------------------------------------
    def classify(self, cmdline: str) -> Group | None:
        """(sid, role) for a command line, or None if it is not monitored."""
        if cmdline:
            first = cmdline.split(None, 1)[0]
            m = _BG_RE.fullmatch(first)
            if m:
                return m.group(2), m.group(1).lower()
            m = _FG_RE.fullmatch(cmdline)
            if m:
                return m.group(1), "foreground"
        for group_name, rx in self.extra_groups:
            if rx.search(cmdline):
                return "", group_name
        return None

    # -- scraping -------------------------------------------------------
    def scan(self) -> tuple[dict[Group, list[int]], dict[Group, list[int]]]:
        """One pass over procfs. Returns (totals per group: [voluntary,
        involuntary, migrations, utime, stime], [processes, threads] per
        group) and updates the state. This is the hot loop: kept flat."""
        root = self.procfs
        old_procs = self._procs
        new_procs: dict[str, _Proc] = {}
        counts: dict[Group, list[int]] = {}
        files = cmdlines = dirs = parsed = 0
        open_, read_, close_ = os.open, os.read, os.close
        flags = _OPEN_FLAGS
        listdir = os.listdir
        gone = _GONE
        fast = _SCHED_FAST.match
        mig_key = _MIG_KEY

        names = listdir(root)
        dirs += 1
        for name in names:
            if not (name.isdigit() and name.isascii()):
                continue
            pdir = root + "/" + name
            old = old_procs.get(name)
            try:
                fd = open_(pdir + "/stat", flags)
                try:
                    data = read_(fd, _CHUNK)
                finally:
                    close_(fd)
                files += 1
                rawh = hash(data)
                if old is not None and rawh == old.raw:
                    # Byte-identical stat: same process, same CPU time and
                    # thread count (an idle process).
                    entry = old
                    group = entry.group
                    if group is None:
                        new_procs[name] = entry
                        continue
                    utime = entry.utime
                    stime = entry.stime
                    nt = entry.nt
                else:
                    rp = data.rfind(b")")
                    lp = data.find(b"(")
                    if lp < 0 or rp < lp:
                        raise Malformed("no (comm) in stat")
                    rest = data[rp + 1:].split(None, 20)
                    if len(rest) < 20:  # up to field 22 (starttime)
                        raise Malformed("stat has %d fields after comm" % len(rest))
                    head = hash(data[:rp])
                    start = int(rest[19])
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
                    group = entry.group
                    if group is None:
                        entry.raw = rawh
                        new_procs[name] = entry
                        continue
                    utime = int(rest[11])
                    stime = int(rest[12])
                    nt = int(rest[17])
                    if utime < 0 or stime < 0:
                        raise Malformed("negative CPU time in stat")

                # -- threads: task/TID/sched of each, once ----------------
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
                while True:
                    new_thr: dict[str, ThreadState] = {}
                    live = sv = si = sm = 0
                    folds = None
                    missing = False
                    for tid in tids:
                        o = known.get(tid)
                        t = None   # stays None when the thread's files are unreadable or malformed
                        try:
                            fd = open_(tdir + tid + "/sched", flags)
                            try:
                                sched = read_(fd, _CHUNK)
                            finally:
                                close_(fd)
                            files += 1
                            if o is not None and o[3] >= 0 and hash(
                                    sched[o[3] >> 16:(o[3] >> 16) + (o[3] & 0xFFFF)]) == o[4]:
                                # the rows are unchanged: same values
                                new_thr[tid] = o
                                live += 1
                                sv += o[0]
                                si += o[1]
                                sm += o[2]
                                continue
                            parsed += 1
                            # The rows are usually where they were last time
                            # (fixed-width rows, same header): try there first.
                            # Offsets come from an earlier last-occurrence
                            # search and lie past any header a kernel prints
                            # (comm is at most 15 bytes), so a header cannot
                            # stand in for them.
                            m = None
                            if o is not None and o[3] > 0:
                                i = o[3] >> 16
                                m = fast(sched, i)
                            if m is None:
                                i = sched.rfind(mig_key)
                                m = fast(sched, i) if i >= 0 else None
                            if m is not None:
                                mg = int(m[1])
                                v = int(m[3])
                                iv = int(m[4])
                                e = m.end()
                                if e - i < 0x10000:
                                    t = (v, iv, mg, i << 16 | (e - i), hash(sched[i:e]))
                                else:
                                    t = (v, iv, mg) + _NO_ROWS
                            else:
                                v, iv, mg = parse_sched(sched)
                                if mg is None:
                                    mg = 0
                                t = (v, iv, mg) + _NO_ROWS
                        except OSError as e:
                            if e.errno == errno.ENOENT:
                                # No sched file: the thread is gone (then so is
                                # status) or the kernel lacks CONFIG_SCHED_DEBUG.
                                try:
                                    status = read_file(tdir + tid + "/status")
                                    files += 1
                                    v, iv = parse_status_switches(status)
                                    mg = 0
                                    t = (v, iv, mg) + _NO_ROWS
                                except OSError as e2:
                                    if e2.errno in gone:
                                        missing = True
                                        continue
                                except (Malformed, ValueError):
                                    pass
                            elif e.errno in gone:
                                missing = True
                                continue
                        except (Malformed, ValueError):
                            pass
                        if t is None:
                            # present but unreadable or malformed: keep its last values
                            if o is not None:
                                new_thr[tid] = o
                                sv += o[0]
                                si += o[1]
                                sm += o[2]
                            continue
                        if o is not None and (v < o[0] or iv < o[1] or mg < o[2]):
                            # Not the same thread after all (TID reused) or its
                            # counters were reset: account the old one as exited.
                            if folds is None:
                                folds = []
                            folds.append(o)
                        new_thr[tid] = t
                        live += 1
                        sv += v
                        si += iv
                        sm += mg
                    if verify and missing:
                        tids = listdir(tdir)
                        dirs += 1
                        verify = False
                        continue
                    break

                if not new_thr:
                    # No thread could be read (the process exited during the
                    # scan): it is not counted; if it was known, its last
                    # values go to the exited totals below.
                    continue
                dead = None
                if folds:
                    dead = self._dead_of(group)
                    for o in folds:
                        dead[0] += o[0]
                        dead[1] += o[1]
                        dead[2] += o[2]
                if not verify or len(new_thr) != len(known):
                    for tid, o in known.items():
                        if tid not in new_thr:   # the thread exited
                            if dead is None:
                                dead = self._dead_of(group)
                            dead[0] += o[0]
                            dead[1] += o[1]
                            dead[2] += o[2]
                if utime < entry.utime or stime < entry.stime:
                    # CPU time went backwards: a new process after all
                    if dead is None:
                        dead = self._dead_of(group)
                    dead[3] += entry.utime
                    dead[4] += entry.stime
                entry.raw = rawh
                entry.utime = utime
                entry.stime = stime
                entry.nt = nt
                entry.threads = new_thr
                entry.sums = (sv, si, sm)
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
                d = self._dead_of(o.group)
                sv, si, sm = o.sums
                d[0] += sv
                d[1] += si
                d[2] += sm
                d[3] += o.utime
                d[4] += o.stime

        totals: dict[Group, list[int]] = {g: list(v) for g, v in self._dead.items()}
        for p in new_procs.values():
            g = p.group
            if g is None:
                continue
            sv, si, sm = p.sums
            t = totals.get(g)
            if t is None:
                totals[g] = [sv, si, sm, p.utime, p.stime]
            else:
                t[0] += sv
                t[1] += si
                t[2] += sm
                t[3] += p.utime
                t[4] += p.stime
        self._procs = new_procs
        self.last_files_read = files
        self.last_cmdlines_read = cmdlines
        self.last_dirs_listed = dirs
        self.last_sched_parsed = parsed
        return totals, counts

    def _dead_of(self, group: Group) -> list[int]:
        d = self._dead.get(group)
        if d is None:
            d = self._dead[group] = [0] * _NVALS
        return d

    def collect(self) -> Iterator[Metric]:
        totals, counts = self.scan()
        groups = set(totals) | set(counts)
        # Keep the groups already exported first (stable series), then new
        # ones in label order, as long as they fit in max_series.
        ordered = sorted(groups & self._exported) + sorted(groups - self._exported)
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
        self._exported |= set(kept)
        kept.sort()

        labels = ["sid", "role"]
        cs = CounterMetricFamily(
            "dbhost_process_context_switches",
            "Context switches of the group's threads (task/TID/sched nr_voluntary_switches, "
            "nr_involuntary_switches), including threads that exited.",
            labels=labels + ["kind"])
        mig = CounterMetricFamily(
            "dbhost_process_migrations",
            "CPU migrations of the group's threads (task/TID/sched se.nr_migrations), "
            "including threads that exited.", labels=labels)
        cpu = CounterMetricFamily(
            "dbhost_process_cpu_seconds",
            "CPU time of the group's processes (/proc/PID/stat utime, stime / SC_CLK_TCK: all "
            "their threads), including threads and processes that exited.", labels=labels + ["mode"])
        procs = GaugeMetricFamily("dbhost_process_processes",
                                  "Processes in the group now.", labels=labels)
        threads = GaugeMetricFamily("dbhost_process_threads",
                                    "Threads of the group's processes now.", labels=labels)
        zero = [0] * _NVALS
        tck = self.clk_tck
        for g in kept:
            sid, role = g
            t = totals.get(g, zero)
            c = counts.get(g, (0, 0))
            cs.add_metric([sid, role, "voluntary"], t[VOL])
            cs.add_metric([sid, role, "involuntary"], t[INVOL])
            mig.add_metric([sid, role], t[MIG])
            cpu.add_metric([sid, role, "user"], t[UTIME] / tck)
            cpu.add_metric([sid, role, "system"], t[STIME] / tck)
            procs.add_metric([sid, role], c[0])
            threads.add_metric([sid, role], c[1])
        dropped_f = CounterMetricFamily(
            "dbhost_process_dropped_series",
            "Series the process collector did not export because of its series limit "
            "(summed over scrapes).")
        dropped_f.add_metric([], self.dropped_series_total)
        yield from (cs, mig, cpu, procs, threads, dropped_f)

    def describe(self) -> Iterable[Metric]:
        # Returning nothing keeps registration from running a scrape.
        return []
