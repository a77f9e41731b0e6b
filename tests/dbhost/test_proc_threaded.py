"""threaded_execution=TRUE (review host finding 2). Oracle 12c+ then keeps only PMON, PSP0, VKTM and
DBWn as processes; LGWR, LGnn, CKPT, SMON, MMON ... and the foregrounds are threads of
ora_u004_<SID> / ora_u005_<SID>, each named by Oracle after its role (ps -eLo comm:
ora_lgwr_cdb1, cut to the 15 bytes of comm). Inside an ora_uNNN_<SID> process every thread is
counted in the group its own name gives it, with the SID from the process's command line, so
role="lgwr" exists and R14 (LgwrInvoluntaryContextSwitches) has its input.

A fixture tree shaped like the listings (Expert Consolidation in Oracle Database 12c, itpub
"ps -fLp", the surachart V$PROCESS STID listing), and a real process whose threads are named
with prctl(PR_SET_NAME) through ctypes."""
from __future__ import annotations

import ctypes
import dataclasses
import os
import subprocess
import sys
import textwrap
import time

import pytest

from fixtures_proc import make_proc, remove_process, remove_thread, write_process

from dbhost_exporter.collectors.process import ProcessCollector, thread_group

TCK = os.sysconf("SC_CLK_TCK")


def scrape(coll):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in coll.collect() for s in f.samples}


def val(got, name, sid, role, **extra):
    return got.get((name, tuple(sorted(dict(sid=sid, role=role, **extra).items()))))


def threaded(i, pid, sid, names, tid_base=None):
    """ora_uNNN_<sid> process (argv rewritten by Oracle, comm its first 15 bytes) whose threads are
    named ``names`` (the first is the leader's own, ora_uNNN_<sid>)."""
    argv = (names[0].encode(),)
    sp = make_proc(i, pid, argv, names[0].encode()[:15], None, nthreads=len(names), tid_base=tid_base)
    threads = tuple(dataclasses.replace(t, comm=n.encode()[:15]) for t, n in zip(sp.threads, names))
    return dataclasses.replace(sp, threads=threads)


# as in the Expert Consolidation listing: processes ora_pmon_CDB1, threads ora_lgwr_cdb1 (lower case)
U004 = ["ora_u004_CDB1", "ora_gen0_cdb1", "ora_mman_cdb1", "ora_lgwr_cdb1", "ora_ckpt_cdb1", "ora_lg00_cdb1",
        "ora_lg01_cdb1", "ora_smon_cdb1"]
U005 = ["ora_u005_CDB1", "ora_diag_cdb1", "ora_mmon_cdb1", "oracle_7160_cdb1", "oracle_7161_cdb1"]


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "proc"
    specs = [make_proc(0, 7001, (b"ora_pmon_CDB1",), b"ora_pmon_CDB1", ("CDB1", "pmon")),
             make_proc(1, 7005, (b"ora_dbw0_CDB1",), b"ora_dbw0_CDB1", ("CDB1", "dbw0")),
             threaded(2, 7010, "CDB1", U004, tid_base=7020),
             threaded(3, 7100, "CDB1", U005, tid_base=7150),
             # a SID longer than comm allows: ora_lgwr_PROD_E
             threaded(4, 7200, "PROD_EAST1", ["ora_u004_PROD_EAST1", "ora_lgwr_PROD_EAST1", "ora_lg00_PROD_EAST1"],
                      tid_base=7210),
             # an ordinary multi-threaded background process is NOT split, whatever its threads are called
             threaded(5, 7300, "CDB1", ["ora_j000_CDB1", "ora_lgwr_CDB1"], tid_base=7310)]
    for sp in specs:
        write_process(root, sp)
    return root, specs


def by_comm(specs, pid):
    return {t.comm.decode(): t for sp in specs if sp.pid == pid for t in sp.threads}


def test_each_thread_is_counted_in_its_own_role(tree):
    root, specs = tree
    got = scrape(ProcessCollector(str(root)))
    u004 = by_comm(specs, 7010)
    lgwr = u004["ora_lgwr_cdb1"]
    # LGWR exists as a group of its own, with exactly its thread's counters
    assert val(got, "dbhost_process_threads", "CDB1", "lgwr") == 1
    assert val(got, "dbhost_process_processes", "CDB1", "lgwr") == 0      # a thread, not a process
    assert val(got, "dbhost_process_context_switches_total", "CDB1", "lgwr", kind="involuntary") == lgwr.involuntary
    assert val(got, "dbhost_process_context_switches_total", "CDB1", "lgwr", kind="voluntary") == lgwr.voluntary
    assert val(got, "dbhost_process_migrations_total", "CDB1", "lgwr") == lgwr.migrations
    assert val(got, "dbhost_process_run_delay_seconds_total", "CDB1", "lgwr") == pytest.approx(lgwr.run_delay / 1e9)
    assert val(got, "dbhost_process_cpu_seconds_total", "CDB1", "lgwr", mode="user") == pytest.approx(lgwr.utime / TCK)
    assert val(got, "dbhost_process_cpu_seconds_total", "CDB1", "lgwr", mode="system") == pytest.approx(lgwr.stime / TCK)
    for role in ("gen0", "mman", "ckpt", "lg00", "lg01", "smon", "diag", "mmon"):
        assert val(got, "dbhost_process_threads", "CDB1", role) == 1, role
    # the uNNN processes keep their own threads (the SCMN leader) and count as processes
    lead = u004["ora_u004_CDB1"]
    assert val(got, "dbhost_process_processes", "CDB1", "u004") == 1
    assert val(got, "dbhost_process_threads", "CDB1", "u004") == 1
    assert val(got, "dbhost_process_context_switches_total", "CDB1", "u004", kind="voluntary") == lead.voluntary
    # the foreground threads of ora_u005 (comm oracle_<ospid>_<sid>) are the instance's foregrounds
    fg = by_comm(specs, 7100)
    assert val(got, "dbhost_process_threads", "CDB1", "foreground") == 2
    assert val(got, "dbhost_process_context_switches_total", "CDB1", "foreground", kind="voluntary") == \
        fg["oracle_7160_cdb"].voluntary + fg["oracle_7161_cdb"].voluntary
    # the SID comes from the command line: ora_lgwr_PROD_E is PROD_EAST1's LGWR
    assert val(got, "dbhost_process_threads", "PROD_EAST1", "lgwr") == 1
    assert not any(dict(k[1]).get("sid", "").startswith("PROD_E") and dict(k[1])["sid"] != "PROD_EAST1"
                   for k in got)
    # a process that is not uNNN is never split
    assert val(got, "dbhost_process_threads", "CDB1", "j000") == 2
    # and every thread is counted exactly once
    all_threads = sum(v for k, v in got.items() if k[0] == "dbhost_process_threads")
    assert all_threads == sum(len(sp.threads) for sp in specs)


def test_thread_and_process_exit_keep_counters_monotonic(tree):
    root, specs = tree
    coll = ProcessCollector(str(root))
    before = scrape(coll)
    remove_thread(root, 7010, next(t.tid for t in specs[2].threads if t.comm == b"ora_lg00_cdb1"))
    after = scrape(coll)
    assert val(after, "dbhost_process_threads", "CDB1", "lg00") == 0
    for k, v in before.items():
        if k[0].endswith("_total"):
            assert after[k] == v, k          # the exited LG00 thread's counts stay in its group
    remove_process(root, 7010)
    gone = scrape(coll)
    assert val(gone, "dbhost_process_threads", "CDB1", "lgwr") == 0
    assert val(gone, "dbhost_process_processes", "CDB1", "u004") == 0
    for k, v in before.items():
        if k[0].endswith("_total"):
            assert gone[k] == v, k


def test_a_thread_that_ran_is_read_again_and_a_quiet_scan_is_cheap(tree):
    root, specs = tree
    coll = ProcessCollector(str(root))
    scrape(coll)
    got = scrape(coll)                        # nothing ran: every thread's schedstat is the same
    # one schedstat per thread of the monitored processes, nothing else (no task/ listing)
    assert coll.last_files_read == sum(len(sp.threads) for sp in specs)
    assert coll.last_dirs_listed == 1
    sp = specs[2]
    lgwr = next(t for t in sp.threads if t.comm == b"ora_lgwr_cdb1")
    busier = dataclasses.replace(lgwr, involuntary=lgwr.involuntary + 500, utime=lgwr.utime + 7)
    write_process(root, dataclasses.replace(sp, threads=tuple(busier if t is lgwr else t for t in sp.threads)))
    now = scrape(coll)
    assert val(now, "dbhost_process_context_switches_total", "CDB1", "lgwr", kind="involuntary") == \
        val(got, "dbhost_process_context_switches_total", "CDB1", "lgwr", kind="involuntary") + 500
    assert val(now, "dbhost_process_cpu_seconds_total", "CDB1", "lgwr", mode="user") == \
        pytest.approx((lgwr.utime + 7) / TCK)
    assert val(now, "dbhost_process_context_switches_total", "CDB1", "ckpt", kind="involuntary") == \
        val(got, "dbhost_process_context_switches_total", "CDB1", "ckpt", kind="involuntary")


def test_thread_group_names():
    own = ("CDB1", "u004")
    assert thread_group(b"ora_lgwr_CDB1", own) == ("CDB1", "lgwr")
    assert thread_group(b"ora_LG00_CDB1", own) == ("CDB1", "lg00")
    assert thread_group(b"ora_lgwr_cdb1", own) == ("CDB1", "lgwr")      # Oracle lower-cases the SID
    assert thread_group(b"ora_lgwr_PROD_E", ("PROD_EAST1", "u004")) == ("PROD_EAST1", "lgwr")
    assert thread_group(b"ora_lgwr_OTHER", own) == own           # not this instance's name
    assert thread_group(b"ora_u004_CDB1", own) == own
    assert thread_group(b"ora_u005_CDB1", own) == own            # never another uNNN group
    assert thread_group(b"oracle_7160_cdb1", own) == ("CDB1", "foreground")
    assert thread_group(b"python3", own) == own


SCRIPT = textwrap.dedent("""
    import ctypes, sys, threading, time
    libc = ctypes.CDLL(None)
    def name(n):
        libc.prctl(15, n.encode(), 0, 0, 0)          # PR_SET_NAME: this thread's comm
    def work(n, busy):
        name(n)
        end = time.time() + 60
        while time.time() < end:
            if busy:
                sum(range(20000))
                time.sleep(0.0005)                   # a switch per write, like LGWR
            else:
                time.sleep(0.2)
    name("ora_u004_PYTHR")
    for n, b in (("ora_lgwr_PYTHR", True), ("ora_lg00_PYTHR", False), ("ora_ckpt_PYTHR", False)):
        threading.Thread(target=work, args=(n, b), daemon=True).start()
    print("ready", flush=True)
    time.sleep(60)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux procfs")
def test_real_process_with_threads_named_by_prctl():
    assert hasattr(ctypes.CDLL(None), "prctl")    # glibc's prctl (no compiler needed)
    # argv[0] "ora_u004_PYTHR" is what Oracle's rewritten argv looks like in /proc/PID/cmdline
    proc = subprocess.Popen(["ora_u004_PYTHR", "-c", SCRIPT], executable=sys.executable,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        coll = ProcessCollector("/proc")
        got = scrape(coll)
        time.sleep(0.5)
        got2 = scrape(coll)
    finally:
        proc.kill()
        proc.wait()
    for role in ("lgwr", "lg00", "ckpt"):
        assert val(got, "dbhost_process_threads", "PYTHR", role) == 1, role
    assert val(got, "dbhost_process_processes", "PYTHR", "u004") == 1
    assert val(got, "dbhost_process_threads", "PYTHR", "u004") == 1
    sw = "dbhost_process_context_switches_total"
    assert val(got2, sw, "PYTHR", "lgwr", kind="voluntary") > val(got, sw, "PYTHR", "lgwr", kind="voluntary")
    assert val(got2, "dbhost_process_running_seconds_total", "PYTHR", "lgwr") > \
        val(got2, "dbhost_process_running_seconds_total", "PYTHR", "ckpt")
