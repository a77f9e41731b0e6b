"""Oracle process collector: context switches, migrations and CPU time per
instance (``sid``) and background-process ``role``, read per thread from
``/proc/PID/task/TID/{stat,sched}``.

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

* every PID not known to match: ``/proc/PID/stat`` (start time and comm,
  to notice PID reuse and ``exec``); the command line only for a PID never
  seen with that start time and comm;
* every matching PID: the ``task/`` directory, then per thread
  ``task/TID/stat`` (utime, stime, thread start time) and ``task/TID/sched``
  (``nr_voluntary_switches``, ``nr_involuntary_switches``,
  ``se.nr_migrations``), each once. Where ``sched`` does not exist (kernels
  without CONFIG_SCHED_DEBUG) ``task/TID/status`` supplies the switches and
  migrations are not reported for that thread.

Counters stay monotonic: every thread is tracked by (TID, thread start time)
with its last values; when it disappears, its last values are added to its
group's "exited" totals.
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
    __slots__ = ("start", "comm", "group")

    def __init__(self, start: bytes, comm: bytes, group: Group | None):
        self.start = start
        self.comm = comm
        self.group = group


# Per-thread state: (pid, group, voluntary, involuntary, migrations, utime, stime)
ThreadState = tuple


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
        self._procs: dict[int, _Proc] = {}
        self._threads: dict[tuple[int, bytes], ThreadState] = {}
        self._dead: dict[Group, list[int]] = {}
        self._exported: set[Group] = set()
        self.dropped_series_total = 0
        # Statistics of the last scrape (for tests and the benchmark).
        self.last_files_read = 0
        self.last_cmdlines_read = 0

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
        """One pass over procfs. Returns (totals per group, [processes,
        threads] per group) and updates the state."""
        root = self.procfs
        old_threads = self._threads
        new_threads: dict[tuple[int, bytes], ThreadState] = {}
        new_procs: dict[int, _Proc] = {}
        counts: dict[Group, list[int]] = {}
        keep_pids: set[int] = set()      # present but unreadable: keep their threads
        keep_tids: set[str] = set()
        files = 0
        cmdlines = 0
        procs_cache = self._procs

        for name in os.listdir(root):
            if not (name.isdigit() and name.isascii()):
                continue
            pid = int(name)
            pdir = f"{root}/{name}"
            cached = procs_cache.get(pid)
            try:
                if cached is not None and cached.group is not None:
                    # Known match: the main thread's stat both validates the
                    # cache entry and is that thread's sample.
                    files += 1
                    main = read_file(f"{pdir}/task/{name}/stat")
                    comm, rest = parse_stat(main)
                    if rest[19] == cached.start and comm == cached.comm:
                        entry = cached
                    else:
                        entry = self._identify(pdir, rest[19], comm)
                        cmdlines += 1
                        files += 1
                        main = None if entry.group is None else main
                else:
                    files += 1
                    comm, rest = parse_stat(read_file(f"{pdir}/stat"))
                    if cached is not None and rest[19] == cached.start and comm == cached.comm:
                        entry = cached
                    else:
                        entry = self._identify(pdir, rest[19], comm)
                        cmdlines += 1
                        files += 1
                    main = None
                new_procs[pid] = entry
                if entry.group is None:
                    continue
                nthreads, nfiles = self._scan_threads(pid, name, pdir, entry.group, main,
                                                      old_threads, new_threads, keep_tids)
                files += nfiles
                if nthreads:
                    c = counts.get(entry.group)
                    if c is None:
                        counts[entry.group] = [1, nthreads]
                    else:
                        c[0] += 1
                        c[1] += nthreads
            except OSError as e:
                if e.errno not in _GONE:
                    keep_pids.add(pid)
                    if cached is not None:
                        new_procs[pid] = cached
                    log.debug("pid %d unreadable: %s", pid, e)
            except (Malformed, ValueError, IndexError) as e:
                keep_pids.add(pid)
                if cached is not None:
                    new_procs[pid] = cached
                log.debug("pid %d malformed: %s", pid, e)

        # Threads that were not seen: carried over if they were merely
        # unreadable, otherwise their last values go to the exited totals.
        for key, th in old_threads.items():
            if key in new_threads:
                continue
            if th[0] in keep_pids or str(key[0]) in keep_tids:
                new_threads[key] = th
                continue
            self._fold(th)

        totals: dict[Group, list[int]] = {g: list(v) for g, v in self._dead.items()}
        for _, g, vol, invol, mig, utime, stime in new_threads.values():
            t = totals.get(g)
            if t is None:
                totals[g] = [vol, invol, mig, utime, stime]
            else:
                t[0] += vol
                t[1] += invol
                t[2] += mig
                t[3] += utime
                t[4] += stime
        self._threads = new_threads
        self._procs = new_procs
        self.last_files_read = files
        self.last_cmdlines_read = cmdlines
        return totals, counts

    def _identify(self, pdir: str, start: bytes, comm: bytes) -> _Proc:
        raw = read_file(f"{pdir}/cmdline")
        return _Proc(start, comm, self.classify(command_line(raw)))

    def _scan_threads(self, pid, name, pdir, group, main_stat, old_threads, new_threads, keep_tids):
        """Read task/TID/{stat,sched} of every thread of one matching process.
        This is the hot loop: kept flat on purpose."""
        tdir = f"{pdir}/task/"
        tids = os.listdir(tdir)
        nthreads = 0
        files = 0
        open_, read_, close_ = os.open, os.read, os.close
        flags = _OPEN_FLAGS
        for tname in tids:
            try:
                tid = int(tname)
                if main_stat is not None and tname == name:
                    stat = main_stat
                else:
                    files += 1
                    fd = open_(tdir + tname + "/stat", flags)
                    try:
                        stat = read_(fd, _CHUNK)
                    finally:
                        close_(fd)
                rp = stat.rfind(b")")
                if rp < 0 or stat.find(b"(") < 0:
                    raise Malformed("no (comm) in stat")
                rest = stat[rp + 1:].split(None, 20)
                tstart = rest[19]
                utime = int(rest[11])
                stime = int(rest[12])
                files += 1
                try:
                    fd = open_(tdir + tname + "/sched", flags)
                    try:
                        sched = read_(fd, _CHUNK)
                    finally:
                        close_(fd)
                    vol, invol, mig = parse_sched(sched)
                    if mig is None:
                        mig = 0
                except OSError as e:
                    if e.errno != errno.ENOENT:
                        raise
                    # No sched file: either the thread is gone (then status
                    # is gone too) or the kernel lacks CONFIG_SCHED_DEBUG.
                    files += 1
                    vol, invol = parse_status_switches(read_file(tdir + tname + "/status"))
                    mig = 0
            except OSError as e:
                if e.errno not in _GONE:
                    keep_tids.add(tname)
                continue
            except (Malformed, ValueError, IndexError):
                keep_tids.add(tname)
                continue
            key = (tid, tstart)
            old = old_threads.get(key)
            if old is not None:
                if (old[1] == group and vol >= old[2] and invol >= old[3] and mig >= old[4]
                        and utime >= old[5] and stime >= old[6]):
                    new_threads[key] = (pid, group, vol, invol, mig, utime, stime)
                    nthreads += 1
                    continue
                # Not the same thread after all (or its counters were reset):
                # account the old one as exited.
                self._fold(old)
            new_threads[key] = (pid, group, vol, invol, mig, utime, stime)
            nthreads += 1
        return nthreads, files

    def _fold(self, th) -> None:
        d = self._dead.get(th[1])
        if d is None:
            self._dead[th[1]] = list(th[2:])
        else:
            for i in range(_NVALS):
                d[i] += th[2 + i]

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
            "CPU time of the group's threads (task/TID/stat utime, stime / SC_CLK_TCK), "
            "including threads that exited.", labels=labels + ["mode"])
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
