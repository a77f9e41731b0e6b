"""The process collector against the real kernel: processes whose command
lines are ``ora_lgwr_<SID>``, ``ora_dbw0_<SID>`` and ``oracle<SID> (LOCAL=NO)``,
several busy threads each, pinned to one CPU so they preempt each other.

Shows that the exporter's counts equal /proc/PID/task/*/status (read just
before and just after a scrape, so the race is bracketed rather than
tolerated), rise under contention, survive a thread exiting, and agree with
``pidstat -w``. Every child is killed in a finally block."""
from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
import time

import pytest

from dbhost_exporter.collectors.process import ProcessCollector

pytestmark = pytest.mark.kernel

BUSY_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_one = 0;
static double life = 0, t0 = 0;

static void on_usr1(int s) { (void)s; stop_one = 1; }
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
/* spin 20 ms, sleep 1 ms (a voluntary switch), forever; thread 1 returns
   after SIGUSR1; with LIFETIME_S the process exits after that many seconds */
static void *worker(void *arg) {
    long idx = (long)arg;
    for (;;) {
        double end = now() + 0.020;
        while (now() < end) { }
        if (idx == 1 && stop_one) return NULL;
        if (idx == 0 && life > 0 && now() - t0 > life) _exit(0);
        usleep(1000);
    }
}
int main(void) {
    const char *n_s = getenv("BUSY_THREADS"), *l_s = getenv("LIFETIME_S");
    long n = n_s ? atol(n_s) : 3;
    life = l_s ? atof(l_s) : 0;
    t0 = now();
    signal(SIGUSR1, on_usr1);
    for (long i = 1; i < n; i++) {
        pthread_t t;
        pthread_create(&t, NULL, worker, (void *)i);
    }
    worker((void *)0);
    return 0;
}
"""

THREADS = 3


@pytest.fixture(scope="module")
def busy_binary(tmp_path_factory):
    gcc = shutil.which("gcc") or shutil.which("cc")
    if not gcc:
        pytest.skip("no C compiler (gcc) to build the test workload")
    d = tmp_path_factory.mktemp("busy")
    (d / "busy.c").write_text(BUSY_C)
    subprocess.run([gcc, "-O1", "-pthread", "-o", str(d / "busy"), str(d / "busy.c")], check=True,
                   capture_output=True, timeout=60)
    return str(d / "busy")


def start(binary: str, argv0: str, cpu: int | None, threads: int = THREADS, lifetime: float = 0,
          ) -> subprocess.Popen:
    env = {"BUSY_THREADS": str(threads), "PATH": "/usr/bin:/bin"}
    if lifetime:
        env["LIFETIME_S"] = str(lifetime)
    pre = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    # executable= runs the binary with argv[0] set freely (like bash's exec -a)
    return subprocess.Popen([argv0], executable=binary, env=env, preexec_fn=pre)


def wait_threads(pid: int, n: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if len(os.listdir(f"/proc/{pid}/task")) == n:
                return
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    raise AssertionError(f"pid {pid} did not reach {n} threads")


def status_switches(pid: int) -> dict[int, tuple[int, int]]:
    """Per thread (voluntary, involuntary) from /proc/PID/task/TID/status."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            text = open(f"/proc/{pid}/task/{tid}/status").read()
        except FileNotFoundError:
            continue
        vol = int(re.search(r"^voluntary_ctxt_switches:\s*(\d+)", text, re.M).group(1))
        inv = int(re.search(r"^nonvoluntary_ctxt_switches:\s*(\d+)", text, re.M).group(1))
        out[int(tid)] = (vol, inv)
    return out


def proc_cpu_user(pid: int) -> float:
    """/proc/PID/stat field 14 (utime of the whole thread group) in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        rest = f.read().rsplit(b")", 1)[1].split()
    return int(rest[11]) / os.sysconf("SC_CLK_TCK")


def scrape(coll):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in coll.collect() for s in f.samples}


def cs(samples, sid, role, kind):
    return samples.get(("dbhost_process_context_switches_total",
                        (("kind", kind), ("role", role), ("sid", sid))))


def gauge(samples, name, sid, role):
    return samples.get((name, (("role", role), ("sid", sid))))


def stop_all(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


@pytest.fixture
def sid():
    return "T" + secrets.token_hex(3).upper()


ROLES = [("lgwr", "ora_lgwr_{sid}"), ("dbw0", "ora_dbw0_{sid}"), ("foreground", "oracle{sid} (LOCAL=NO)")]


def test_counts_match_proc_rise_under_contention_and_survive_thread_exit(busy_binary, sid):
    procs = []
    try:
        by_role = {}
        for role, pattern in ROLES:
            p = start(busy_binary, pattern.format(sid=sid), cpu=0)
            procs.append(p)
            by_role[role] = p.pid
        for pid in by_role.values():
            wait_threads(pid, THREADS)
        coll = ProcessCollector("/proc")
        time.sleep(0.3)

        # 1. counts equal /proc, bracketed by reads just before and after the scrape
        before = {r: status_switches(pid) for r, pid in by_role.items()}
        s1 = scrape(coll)
        after = {r: status_switches(pid) for r, pid in by_role.items()}
        for role in by_role:
            for kind, idx in (("voluntary", 0), ("involuntary", 1)):
                lo = sum(v[idx] for v in before[role].values())
                hi = sum(v[idx] for v in after[role].values())
                got = cs(s1, sid, role, kind)
                assert lo <= got <= hi, (role, kind, lo, got, hi)
            assert gauge(s1, "dbhost_process_processes", sid, role) == 1
            assert gauge(s1, "dbhost_process_threads", sid, role) == THREADS
            assert s1[("dbhost_process_cpu_seconds_total",
                       (("mode", "user"), ("role", role), ("sid", sid)))] > 0

        # 2. they rise under contention: 9 busy threads on one CPU
        time.sleep(0.6)
        s2 = scrape(coll)
        rises = {role: cs(s2, sid, role, "involuntary") - cs(s1, sid, role, "involuntary") for role in by_role}
        assert all(r > 0 for r in rises.values()), rises
        assert sum(rises.values()) >= 30, rises   # ~0.6 s of a saturated CPU: many preemptions

        # 3. a thread exiting: the aggregate keeps what it counted
        lgwr = by_role["lgwr"]
        exiting_tid = sorted(status_switches(lgwr))[1]   # thread index 1 returns on SIGUSR1
        exiting_before = status_switches(lgwr)[exiting_tid][1]
        s3 = scrape(coll)
        os.kill(lgwr, signal.SIGUSR1)
        wait_threads(lgwr, THREADS - 1)
        live_before = sum(v[1] for v in status_switches(lgwr).values())
        s4 = scrape(coll)
        assert gauge(s4, "dbhost_process_threads", sid, "lgwr") == THREADS - 1
        assert cs(s4, sid, "lgwr", "involuntary") >= cs(s3, sid, "lgwr", "involuntary")
        # exited thread's last value (>= what /proc showed before s3) + live threads now
        assert cs(s4, sid, "lgwr", "involuntary") >= exiting_before + live_before
        for kind in ("voluntary", "involuntary"):
            assert cs(s4, sid, "lgwr", kind) >= cs(s3, sid, "lgwr", kind)
        mig = ("dbhost_process_migrations_total", (("role", "lgwr"), ("sid", sid)))
        assert s4[mig] >= s3[mig]
        # CPU time comes from /proc/PID/stat, which keeps the exited thread's time: it does
        # not drop, and it is bracketed by the process's own stat read before and after
        cpu = ("dbhost_process_cpu_seconds_total", (("mode", "user"), ("role", "lgwr"), ("sid", sid)))
        assert s4[cpu] >= s3[cpu]
        lo = proc_cpu_user(lgwr)
        s4b = scrape(coll)
        hi = proc_cpu_user(lgwr)
        assert lo <= s4b[cpu] <= hi, (lo, s4b[cpu], hi)

        # 4. the whole process exits: counters stay, gauges drop to 0
        procs[0].kill()
        procs[0].wait(timeout=5)
        s5 = scrape(coll)
        assert gauge(s5, "dbhost_process_processes", sid, "lgwr") == 0
        assert cs(s5, sid, "lgwr", "involuntary") >= cs(s4, sid, "lgwr", "involuntary")
    finally:
        stop_all(procs)


def parse_pidstat_average(text: str, pid: int) -> float:
    """Process nvcswch/s from pidstat -w -t: the sum of its thread (TID) rows
    in the Average block. (The TGID row shows the main thread only, like
    /proc/PID/status, which counts the thread-group leader's switches.)"""
    header = None
    total = None
    for line in text.splitlines():
        cols = line.split()
        if "nvcswch/s" in cols:
            header = cols
            continue
        if not header or not cols or cols[0] != "Average:" or len(cols) != len(header):
            continue
        if cols[header.index("TGID")] == "-" and cols[header.index("Command")].startswith("|__"):
            total = (total or 0.0) + float(cols[header.index("nvcswch/s")])
    if total is None:
        raise AssertionError("no Average thread rows for %d in pidstat output:\n%s" % (pid, text))
    return total


def test_involuntary_rate_agrees_with_pidstat(busy_binary, sid):
    pidstat = shutil.which("pidstat")
    if not pidstat:
        pytest.skip("pidstat (sysstat) is not installed")
    procs = []
    try:
        p = start(busy_binary, f"ora_lgwr_{sid}", cpu=1, threads=4)
        procs.append(p)
        wait_threads(p.pid, 4)
        coll = ProcessCollector("/proc")
        time.sleep(0.2)
        ps = subprocess.Popen([pidstat, "-w", "-t", "-p", str(p.pid), "1", "3"], stdout=subprocess.PIPE,
                              text=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
        procs.append(ps)
        time.sleep(0.05)  # pidstat takes its first sample at start
        t0 = time.monotonic()
        a = scrape(coll)
        out, _ = ps.communicate(timeout=15)
        t1 = time.monotonic()
        b = scrape(coll)
        exporter_rate = (cs(b, sid, "lgwr", "involuntary") - cs(a, sid, "lgwr", "involuntary")) / (t1 - t0)
        pidstat_rate = parse_pidstat_average(out, p.pid)
        assert pidstat_rate > 10, out
        assert exporter_rate == pytest.approx(pidstat_rate, rel=0.25), (exporter_rate, pidstat_rate, out)
    finally:
        stop_all(procs)


def test_processes_exiting_mid_scan_never_raise_or_go_backwards(busy_binary, sid):
    """Short-lived Oracle-named processes start and exit while scraping."""
    stop = threading.Event()
    spawned = []

    def churn():
        while not stop.is_set():
            try:
                spawned.append(start(busy_binary, f"ora_j000_{sid}", cpu=1, threads=2, lifetime=0.02))
            except OSError:
                pass
            for q in list(spawned):
                if q.poll() is not None:
                    spawned.remove(q)
            time.sleep(0.003)

    th = threading.Thread(target=churn, daemon=True)
    th.start()
    try:
        coll = ProcessCollector("/proc")
        last = {}
        seen_processes = 0
        for _ in range(40):
            s = scrape(coll)
            for key, value in s.items():
                if key[0].endswith("_total") and dict(key[1]).get("sid") == sid:
                    assert value >= last.get(key, 0), key
                    last[key] = value
            seen_processes += gauge(s, "dbhost_process_processes", sid, "j000") or 0
            time.sleep(0.02)
        assert seen_processes > 0
        assert cs(s, sid, "j000", "voluntary") > 0
    finally:
        stop.set()
        th.join(timeout=5)
        stop_all(spawned)


def schedstat_sums(pid: int) -> tuple[int, int, int]:
    """(run ns, run delay ns, timeslices) summed over /proc/PID/task/*/schedstat."""
    run = delay = slices = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                a, b, c = (int(x) for x in f.read().split())
        except FileNotFoundError:
            continue
        run, delay, slices = run + a, delay + b, slices + c
    return run, delay, slices


def test_run_delay_grows_when_busy_threads_share_one_cpu(busy_binary, sid):
    """Two busy threads pinned to one CPU: while one runs, the other waits on the run
    queue, so the group's run delay grows about as fast as its run time. The exported
    values are bracketed by the kernel's own schedstat read just before and after."""
    if not os.path.exists("/proc/self/schedstat"):
        pytest.skip("kernel without CONFIG_SCHED_INFO")
    procs = []
    try:
        p = start(busy_binary, f"ora_lgwr_{sid}", cpu=0, threads=2)
        procs.append(p)
        wait_threads(p.pid, 2)
        coll = ProcessCollector("/proc")
        time.sleep(0.3)
        key = lambda name: (name, (("role", "lgwr"), ("sid", sid)))  # noqa: E731
        lo = schedstat_sums(p.pid)
        s1 = scrape(coll)
        hi = schedstat_sums(p.pid)
        assert lo[1] / 1e9 - 1e-9 <= s1[key("dbhost_process_run_delay_seconds_total")] <= hi[1] / 1e9 + 1e-9
        assert lo[0] / 1e9 - 1e-9 <= s1[key("dbhost_process_running_seconds_total")] <= hi[0] / 1e9 + 1e-9
        assert lo[2] <= s1[key("dbhost_process_timeslices_total")] <= hi[2]
        t0 = time.monotonic()
        time.sleep(1.0)
        s2 = scrape(coll)
        elapsed = time.monotonic() - t0
        delay = s2[key("dbhost_process_run_delay_seconds_total")] - s1[key("dbhost_process_run_delay_seconds_total")]
        running = s2[key("dbhost_process_running_seconds_total")] - s1[key("dbhost_process_running_seconds_total")]
        slices = s2[key("dbhost_process_timeslices_total")] - s1[key("dbhost_process_timeslices_total")]
        assert delay >= 0.3 * elapsed, (delay, running, elapsed)
        assert running <= elapsed * 1.05 + 0.05          # one CPU between them
        assert delay / running > 0.5, (delay, running)    # each waits while the other runs
        assert slices > 0
        # the same thread alone on its CPU for comparison is not asserted: this machine's
        # other jobs share every CPU, so a lone thread waits too (by how much is not ours)
    finally:
        stop_all(procs)


IDLE_PY = ("import signal, time\n"
           "signal.signal(signal.SIGUSR1, lambda *a: None)\n"
           "print('ready', flush=True)\n"
           "while True:\n    time.sleep(3600)\n")


def test_a_sleeping_process_is_skipped_and_a_woken_one_is_read(sid, monkeypatch):
    """What makes an idle scrape cheap, on the real kernel: a sleeping thread's schedstat
    stays byte-identical, so only that file is read; once it runs (a signal wakes it), its
    schedstat moves and the new switches are counted."""
    import sys
    if not os.path.exists("/proc/self/schedstat"):
        pytest.skip("kernel without CONFIG_SCHED_INFO")
    p = subprocess.Popen([f"ora_smon_{sid}", "-c", IDLE_PY], executable=sys.executable,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.2)
        coll = ProcessCollector("/proc")
        s1 = scrape(coll)
        opened = []
        real_open = os.open

        def counting_open(path, *a, **kw):
            opened.append(path)
            return real_open(path, *a, **kw)

        monkeypatch.setattr(os, "open", counting_open)
        s2 = scrape(coll)
        monkeypatch.undo()
        mine = [x for x in opened if x.startswith(f"/proc/{p.pid}/")]
        assert mine == [f"/proc/{p.pid}/schedstat"], mine
        assert cs(s2, sid, "smon", "voluntary") == cs(s1, sid, "smon", "voluntary")
        before = status_switches(p.pid)[p.pid]
        os.kill(p.pid, signal.SIGUSR1)
        time.sleep(0.2)
        after = status_switches(p.pid)[p.pid]
        assert after[0] > before[0]
        s3 = scrape(coll)
        assert cs(s3, sid, "smon", "voluntary") == after[0]
        assert cs(s3, sid, "smon", "involuntary") == after[1]
        key = ("dbhost_process_timeslices_total", (("role", "smon"), ("sid", sid)))
        assert s3[key] > s2[key]
    finally:
        stop_all([p])
