"""Issue 26: on a kernel without schedstat (no CONFIG_SCHED_INFO) the process collector reads an
Oracle process's threads' task/TID/sched first, and skips its /proc/PID/stat when every one of
them is the same as last scrape but the clock-delta row (which the kernel prints from two
cpu_clock() reads made while printing: it differs on every read, see the real-kernel tests at
the end). No thread woken, run, added or exited: the stat cannot have changed.

The failure the on-call engineer fears: that shortcut serving last scrape's numbers: CPU time of
a thread that ran without a context switch, a new thread seen only in the other threads'
``#threads`` header, a recycled PID taken for the process that exited. Each test below fails if
the shortcut skips a read it needed (checked against a fresh collector, which reads everything)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from fixtures_proc import make_proc, remove_thread, sched_bytes, write_process

from dbhost_exporter.collectors.process import ProcessCollector, same_sched, sched_key

from test_proc_no_schedstat import _tree  # 6 Oracle processes of 3 threads, no schedstat, and 3 sshd
from test_proc_run_delay import grown, scrape, val

_CLOCK_ROW = re.compile(rb"\nclock-delta +: +\d+\n")


def _tick_clock(root, value: int) -> int:
    """Rewrite the clock-delta row of every task/TID/sched under root as the kernel prints it
    on another read (``%-45s:%21Ld``): only that row changes. Returns the files rewritten."""
    n = 0
    for dirpath, _dirs, files in os.walk(root):
        if "sched" in files and os.path.basename(os.path.dirname(dirpath)) == "task":
            path = os.path.join(dirpath, "sched")
            with open(path, "rb") as f:
                data = f.read()
            new = _CLOCK_ROW.sub(b"\n%-45s:%21d\n" % (b"clock-delta", value), data, count=1)
            assert new != data and len(new) == len(data)
            with open(path, "wb") as f:
                f.write(new)
            n += 1
    return n


def _settled(root):
    """A collector past its first two scrapes (the second records the sched keys)."""
    coll = ProcessCollector(str(root))
    scrape(coll)
    _tick_clock(root, 91)
    scrape(coll)
    return coll


# -- the key: everything but the clock-delta row ---------------------------------------------

def test_the_key_ignores_only_the_clock_delta_row():
    data = sched_bytes(b"ora_lgwr_X", 300, 3, 10, 2, 5, 7_000_123_456, 4000)
    key = sched_key(data)
    again = _CLOCK_ROW.sub(b"\n%-45s:%21d\n" % (b"clock-delta", 7), data)
    assert again != data and same_sched(again, key)
    assert sched_key(again, len(key[0])) == key                      # the hint finds the same row
    for old, new in ((b"#threads: 3", b"#threads: 4"),                 # header: a thread added
                     (b"current_node=0", b"current_node=1"),           # a row after clock-delta
                     (b"(300, ", b"(301, ")):
        assert not same_sched(data.replace(old, new), key), old
    # one more ns of se.sum_exec_runtime (a run without a switch): not the same
    ran = sched_bytes(b"ora_lgwr_X", 300, 3, 10, 2, 5, 7_000_123_457, 4000)
    assert not same_sched(ran, key)


def test_a_comm_holding_the_row_name_does_not_hide_a_header_change():
    comm = b"\nclock-delta :1"           # 15 bytes: a comm can hold a newline
    data = sched_bytes(comm, 300, 3, 10, 2, 5, 7_000_123_456, 4000)
    key = sched_key(data)
    assert key[0].startswith(comm)      # the row taken is the kernel's, not the comm
    assert not same_sched(data.replace(b"#threads: 3", b"#threads: 2"), key)


# -- the scan ---------------------------------------------------------------------------------

def test_an_idle_scrape_reads_sched_only_and_answers_as_a_fresh_collector(tmp_path):
    specs = _tree(tmp_path)
    coll = _settled(tmp_path)
    assert _tick_clock(tmp_path, 143) == 6 * 3 + 3                    # every read prints another delta
    s = scrape(coll)
    assert coll.last_stat_parsed == 0
    # 18 Oracle threads' sched; no Oracle stat; the 3 sshd's stat (byte-identical: not parsed)
    assert coll.last_files_read == 6 * 3 + 3
    assert s == scrape(ProcessCollector(str(tmp_path)))
    assert val(s, "dbhost_process_threads", "R0", "lgwr") == 3 and len(specs) == 9


def test_cpu_time_of_a_thread_that_ran_without_a_switch_is_seen(tmp_path):
    """It ran (se.sum_exec_runtime and the process's CPU time grew) but did not switch or
    migrate: its counters in sched are the same, its bytes are not."""
    specs = _tree(tmp_path)
    coll = _settled(tmp_path)
    s1 = scrape(coll)
    write_process(tmp_path, grown(specs[2], 1, utime=150), with_schedstat=False)   # +1.5 s user
    s2 = scrape(coll)
    assert coll.last_stat_parsed == 1
    assert val(s2, "dbhost_process_cpu_seconds_total", "R2", "lgwr", mode="user") == \
        val(s1, "dbhost_process_cpu_seconds_total", "R2", "lgwr", mode="user") + 1.5
    assert val(s2, "dbhost_process_context_switches_total", "R2", "lgwr", kind="voluntary") == \
        val(s1, "dbhost_process_context_switches_total", "R2", "lgwr", kind="voluntary")
    assert s2 == scrape(ProcessCollector(str(tmp_path)))
    _tick_clock(tmp_path, 7)
    assert scrape(coll) == s2                                          # idle again: the same answer


def test_switches_of_a_non_leader_thread_are_seen(tmp_path):
    specs = _tree(tmp_path)
    coll = _settled(tmp_path)
    s1 = scrape(coll)
    write_process(tmp_path, grown(specs[4], 2, voluntary=9, migrations=1), with_schedstat=False)
    s2 = scrape(coll)
    assert val(s2, "dbhost_process_context_switches_total", "R4", "lgwr", kind="voluntary") == \
        val(s1, "dbhost_process_context_switches_total", "R4", "lgwr", kind="voluntary") + 9
    assert val(s2, "dbhost_process_migrations_total", "R4", "lgwr") == \
        val(s1, "dbhost_process_migrations_total", "R4", "lgwr") + 1
    assert s2 == scrape(ProcessCollector(str(tmp_path)))


def test_a_thread_added_is_seen_from_the_other_threads_header(tmp_path):
    """The kernel prints the thread group's thread count in every thread's sched header: the
    known threads' sched change only there (their counters are the same)."""
    _tree(tmp_path)
    coll = _settled(tmp_path)
    bigger = make_proc(1, 310, (b"ora_lgwr_R1",), b"ora_lgwr_R1", ("R1", "lgwr"), nthreads=4)
    old = (tmp_path / "310/task/310/sched").read_bytes()
    write_process(tmp_path, bigger, with_schedstat=False)
    new = (tmp_path / "310/task/310/sched").read_bytes()
    def norm(b):
        return _CLOCK_ROW.sub(b"\n", b)
    assert norm(new) == norm(old).replace(b"#threads: 3", b"#threads: 4")   # the header alone moved
    s = scrape(coll)
    assert val(s, "dbhost_process_threads", "R1", "lgwr") == 4
    assert s == scrape(ProcessCollector(str(tmp_path)))


def test_a_thread_that_exited_is_seen(tmp_path):
    specs = _tree(tmp_path)
    coll = _settled(tmp_path)
    s1 = scrape(coll)
    gone = specs[3].threads[2]
    remove_thread(tmp_path, 330, gone.tid)
    s2 = scrape(coll)
    assert val(s2, "dbhost_process_threads", "R3", "lgwr") == 2
    # its switches stay in the group's total (exited threads count)
    assert val(s2, "dbhost_process_context_switches_total", "R3", "lgwr", kind="voluntary") == \
        val(s1, "dbhost_process_context_switches_total", "R3", "lgwr", kind="voluntary")


def test_a_recycled_pid_is_a_new_process(tmp_path):
    """The process of PID 300 exited and a new one got PID 300: same comm, same TIDs and
    counters, another start time (and so another se.exec_start in its sched). The old one's
    counters go to the exited totals, the new one is identified by its command line."""
    specs = _tree(tmp_path)
    coll = _settled(tmp_path)
    s1 = scrape(coll)
    old = specs[0]
    new = make_proc(0, 300, old.argv, old.comm, old.group, nthreads=3, starttime=old.starttime + 5000)
    write_process(tmp_path, new, with_schedstat=False)
    s2 = scrape(coll)
    assert coll.last_cmdlines_read == 1
    assert val(s2, "dbhost_process_processes", "R0", "lgwr") == 1
    for kind in ("voluntary", "involuntary"):
        assert val(s2, "dbhost_process_context_switches_total", "R0", "lgwr", kind=kind) == \
            2 * val(s1, "dbhost_process_context_switches_total", "R0", "lgwr", kind=kind)
    assert val(s2, "dbhost_process_cpu_seconds_total", "R0", "lgwr", mode="user") == \
        2 * val(s1, "dbhost_process_cpu_seconds_total", "R0", "lgwr", mode="user")


def test_a_recycled_pid_of_another_program_leaves_the_group(tmp_path):
    specs = _tree(tmp_path)
    coll = _settled(tmp_path)
    old = specs[5]
    sshd = make_proc(60, 350, (b"/usr/sbin/sshd",), b"sshd", None, nthreads=3, starttime=old.starttime + 9000)
    write_process(tmp_path, sshd, with_schedstat=False)
    s = scrape(coll)
    assert val(s, "dbhost_process_processes", "R5", "lgwr") == 0
    assert val(s, "dbhost_process_threads", "R5", "lgwr") == 0


def test_a_sched_change_that_is_not_a_run_costs_one_stat_then_the_shortcut_again(tmp_path):
    """A row that moves without the thread running (PELT averages when the task is moved to
    another cgroup, prio after a renice by another process): stat is read (byte-identical:
    not parsed), the values are the same, the next idle scrape is back to sched only."""
    _tree(tmp_path)
    coll = _settled(tmp_path)
    s1 = scrape(coll)
    path = tmp_path / "320/task/320/sched"
    data = path.read_bytes()
    path.write_bytes(data.replace(b"                 1024\n", b"                  512\n", 1))
    assert path.read_bytes() != data
    assert scrape(coll) == s1
    assert coll.last_files_read == 6 * 3 + 3 + 1 and coll.last_stat_parsed == 0
    _tick_clock(tmp_path, 5)
    assert scrape(coll) == s1 and coll.last_files_read == 6 * 3 + 3


# -- a real kernel ----------------------------------------------------------------------------

_CHILD = r"""
import sys, threading, time
go, never = threading.Event(), threading.Event()
def worker():
    while True:
        go.wait()
        go.clear()
        end = time.thread_time() + 0.2
        while time.thread_time() < end:
            pass
        print("done", flush=True)
threading.Thread(target=worker, daemon=True).start()
for _ in range(2):
    threading.Thread(target=never.wait, daemon=True).start()
print("ready", flush=True)
for line in sys.stdin:
    go.set()
"""

MARK = "perf_proc_sched_first_marker"


def _snapshot(pid: int, root) -> None:
    """This machine's /proc/PID as a kernel without schedstat shows it: every thread's sched,
    then the process's stat and cmdline (the order the collector reads them in)."""
    pdir = root / str(pid)
    for tid in os.listdir(f"/proc/{pid}/task"):
        tdir = pdir / "task" / tid
        tdir.mkdir(parents=True, exist_ok=True)
        with open(f"/proc/{pid}/task/{tid}/sched", "rb") as f:
            (tdir / "sched").write_bytes(f.read())
    for name in ("stat", "cmdline"):
        with open(f"/proc/{pid}/{name}", "rb") as f:
            (pdir / name).write_bytes(f.read())


def _real_sched():
    return os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/sched")


@pytest.mark.skipif(not _real_sched(), reason="kernel without /proc/PID/task/TID/sched")
def test_a_sleeping_threads_real_sched_differs_between_reads_only_in_clock_delta():
    child = subprocess.Popen(["sleep", "60"])
    try:
        time.sleep(0.2)
        path = f"/proc/{child.pid}/task/{child.pid}/sched"
        reads = []
        for _ in range(50):
            with open(path, "rb") as f:
                reads.append(f.read())
        key = sched_key(reads[0])
        assert len(set(reads)) > 1                      # byte-identical reads would prove nothing
        assert all(same_sched(r, key) for r in reads)   # the key does not see the difference
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(not _real_sched(), reason="kernel without /proc/PID/task/TID/sched")
def test_real_kernel_counters_idle_then_a_thread_runs(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", _CHILD, MARK], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n"
        time.sleep(0.2)
        groups = [("realtest", MARK)]
        coll = ProcessCollector(str(tmp_path), groups)
        for _ in range(2):                              # first scrape, then the one recording the keys
            _snapshot(child.pid, tmp_path)
            scrape(coll)
        assert coll.schedstat_missing
        _snapshot(child.pid, tmp_path)
        idle = scrape(coll)
        assert coll.last_stat_parsed == 0 and coll.last_files_read == 4   # the 4 threads' sched only
        assert idle == scrape(ProcessCollector(str(tmp_path), groups))
        assert val(idle, "dbhost_process_threads", "", "realtest") == 4

        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "done\n"    # a worker ran 0.2 s of CPU
        _snapshot(child.pid, tmp_path)
        ran = scrape(coll)
        assert coll.last_stat_parsed == 1
        cpu = sum(val(ran, "dbhost_process_cpu_seconds_total", "", "realtest", mode=m) for m in ("user", "system"))
        cpu0 = sum(val(idle, "dbhost_process_cpu_seconds_total", "", "realtest", mode=m) for m in ("user", "system"))
        assert cpu - cpu0 >= 0.15
        assert ran == scrape(ProcessCollector(str(tmp_path), groups))
    finally:
        child.kill()
        child.wait()


def test_a_thread_that_runs_between_the_stat_read_and_its_sched_read_is_not_taken_as_idle(tmp_path,
                                                                                          monkeypatch):
    """A key may only come from a sched read made before the process's stat read: here a
    thread of R1 exited (so the scan reads stat, then lists task/ and reads the other threads
    after it), and one of them runs in between (its sched and the process's CPU time grow
    after the stat read). The scrape after must read stat again and show that CPU time."""
    specs = _tree(tmp_path)
    coll = _settled(tmp_path)
    before = scrape(coll)
    sp = specs[1]
    order = list(coll._procs["310"].threads)
    # a non-leader thread that exits, and one the scan reads after it (so after stat)
    i = next(i for i, tid in enumerate(order[:-1]) if tid != "310")
    first, runner = (next(t for t in sp.threads if str(t.tid) == order[j]) for j in (i, i + 1))
    remove_thread(tmp_path, 310, first.tid)
    left = type(sp)(**{**sp.__dict__, "threads": tuple(t for t in sp.threads if t.tid != first.tid),
                       "exited_utime": first.utime, "exited_stime": first.stime})
    write_process(tmp_path, left, with_schedstat=False)               # the others' headers: #threads: 2
    k = left.threads.index(runner)
    ran = grown(left, k, utime=200)                                    # +2 s user CPU
    real_open = os.open
    state = {"stat": False, "done": False}

    def racing_open(path, *a, **kw):
        p = str(path)
        if p.endswith("/310/stat"):
            state["stat"] = True
        elif state["stat"] and not state["done"] and p.endswith(f"/310/task/{runner.tid}/sched"):
            state["done"] = True
            write_process(tmp_path, ran, with_schedstat=False)        # it runs now, after the stat read
        return real_open(path, *a, **kw)

    monkeypatch.setattr(os, "open", racing_open)
    scrape(coll)
    monkeypatch.setattr(os, "open", real_open)
    assert state["done"]
    _tick_clock(tmp_path, 3)
    after = scrape(coll)
    assert coll.last_stat_parsed >= 1
    user = ("dbhost_process_cpu_seconds_total", "R1", "lgwr")
    assert val(after, *user, mode="user") == val(before, *user, mode="user") + 2.0
    assert val(after, *user, mode="user") == val(scrape(ProcessCollector(str(tmp_path))), *user, mode="user")


def test_a_pid_recycled_between_the_sched_reads_and_the_stat_read_is_read_again(tmp_path, monkeypatch):
    """The threads' sched were read (and one had run, so stat is read), then the process exited
    and a new one got its PID and the same TIDs before the stat read: what was read before the
    stat belongs to the old process. The new one's counters are read again after its stat."""
    specs = _tree(tmp_path)
    coll = _settled(tmp_path)
    before = scrape(coll)
    old = specs[0]
    # it ran (4 switches this collector never sees: the process is gone before its next read)
    write_process(tmp_path, grown(old, 1, voluntary=4), with_schedstat=False)
    new = make_proc(40, 300, old.argv, old.comm, old.group, nthreads=3, starttime=old.starttime + 5000)
    real_open = os.open
    state = {"done": False}

    def racing_open(path, *a, **kw):
        if not state["done"] and str(path).endswith("/300/stat"):
            state["done"] = True
            write_process(tmp_path, new, with_schedstat=False)       # PID 300 is another process now
        return real_open(path, *a, **kw)

    monkeypatch.setattr(os, "open", racing_open)
    s = scrape(coll)
    monkeypatch.setattr(os, "open", real_open)
    assert state["done"] and coll.last_cmdlines_read == 1
    fresh = scrape(ProcessCollector(str(tmp_path)))
    for kind in ("voluntary", "involuntary"):   # the old one exited (as last seen), the new one counts its own
        assert val(s, "dbhost_process_context_switches_total", "R0", "lgwr", kind=kind) == \
            val(before, "dbhost_process_context_switches_total", "R0", "lgwr", kind=kind) + \
            val(fresh, "dbhost_process_context_switches_total", "R0", "lgwr", kind=kind)
