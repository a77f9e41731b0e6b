"""Process collector on generated procfs trees: exact values, monotonic
counters across thread/process exit and PID reuse, caching, series cap."""
from __future__ import annotations

import os
from collections import defaultdict

import pytest

from fixtures_proc import (ProcSpec, ThreadSpec, build_proc_tree, make_proc, proc_specs,  # noqa: E402
                           remove_process, remove_thread, write_process)

from dbhost_exporter.collectors.process import SERIES_PER_GROUP, ProcessCollector  # noqa: E402

TCK = os.sysconf("SC_CLK_TCK")
LISTENER = [("listener", r"/bin/tnslsnr ")]


def scrape(coll: ProcessCollector) -> dict[tuple, float]:
    out = {}
    for fam in coll.collect():
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def v(samples, name, sid, role, **extra):
    labels = dict(sid=sid, role=role, **extra)
    return samples[(name, tuple(sorted(labels.items())))]


def expected_from_specs(specs: list[ProcSpec], extra: dict[int, tuple[str, str]] | None = None):
    """Sums per group computed from the generator's ground truth."""
    sums = defaultdict(lambda: defaultdict(int))
    for sp in specs:
        group = sp.group or (extra or {}).get(sp.pid)
        if group is None:
            continue
        acc = sums[group]
        acc["processes"] += 1
        for t in sp.threads:
            acc["threads"] += 1
            acc["voluntary"] += t.voluntary
            acc["involuntary"] += t.involuntary
            acc["migrations"] += t.migrations
            acc["utime"] += t.utime
            acc["stime"] += t.stime
            acc["run_delay"] += t.run_delay
            acc["runtime"] += t.runtime_ns
            acc["timeslices"] += t.timeslices
    return sums


def assert_group(samples, group, acc):
    sid, role = group
    assert v(samples, "dbhost_process_context_switches_total", sid, role, kind="voluntary") == acc["voluntary"]
    assert v(samples, "dbhost_process_context_switches_total", sid, role, kind="involuntary") == acc["involuntary"]
    assert v(samples, "dbhost_process_migrations_total", sid, role) == acc["migrations"]
    assert v(samples, "dbhost_process_cpu_seconds_total", sid, role, mode="user") == pytest.approx(acc["utime"] / TCK)
    assert v(samples, "dbhost_process_cpu_seconds_total", sid, role, mode="system") == pytest.approx(acc["stime"] / TCK)
    assert v(samples, "dbhost_process_processes", sid, role) == acc["processes"]
    assert v(samples, "dbhost_process_threads", sid, role) == acc["threads"]
    assert v(samples, "dbhost_process_run_delay_seconds_total", sid, role) == pytest.approx(acc["run_delay"] / 1e9)
    assert v(samples, "dbhost_process_running_seconds_total", sid, role) == pytest.approx(acc["runtime"] / 1e9)
    assert v(samples, "dbhost_process_timeslices_total", sid, role) == acc["timeslices"]


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "proc"
    build_proc_tree(root)
    return root


def groups_in(samples):
    return {(dict(l)["sid"], dict(l)["role"]) for (n, l) in samples if n == "dbhost_process_threads"}


def test_exact_values_per_sid_and_role(tree):
    specs = proc_specs()
    listener_pid = next(s.pid for s in specs if s.argv and s.argv[0].endswith(b"/tnslsnr"))
    coll = ProcessCollector(str(tree), LISTENER)
    samples = scrape(coll)
    exp = expected_from_specs(specs, {listener_pid: ("", "listener")})
    assert groups_in(samples) == set(exp)
    # the known layout of the fixture, independent of the generator's table
    assert {g for g in exp if g[0] == "ORCL"} == {
        ("ORCL", r) for r in ["pmon", "dbw0", "lgwr", "ckpt", "lg00", "lg01", "arc0", "arc1", "foreground"]}
    assert ("PROD_EAST1", "lgwr") in exp
    for group, acc in exp.items():
        assert_group(samples, group, acc)
    # ORCL foregrounds: 3 processes, one of them with 3 threads
    assert v(samples, "dbhost_process_processes", "ORCL", "foreground") == 3
    assert v(samples, "dbhost_process_threads", "ORCL", "foreground") == 5
    # LGWR override in the generator: 30% involuntary (field notes R14 "before")
    assert v(samples, "dbhost_process_context_switches_total", "ORCL", "lgwr", kind="involuntary") == 300_000
    # and it waited 4.12 s for a CPU (R13): run delay is exported per group, exactly
    assert v(samples, "dbhost_process_run_delay_seconds_total", "ORCL", "lgwr") == 4.123456789
    assert samples[("dbhost_process_dropped_series_total", ())] == 0


def test_non_oracle_processes_are_ignored_without_extra_groups(tree):
    samples = scrape(ProcessCollector(str(tree)))
    groups = groups_in(samples)
    assert all(sid in {"ORCL", "DWH1", "PROD_EAST1"} for sid, _ in groups)
    # comm "ora_lgwr_FAKE" with a python command line, asm_pmon_+ASM: not Oracle DB processes
    assert not any(sid in {"FAKE", "+ASM"} for sid, _ in groups)


def test_second_scrape_rereads_no_command_line_and_only_matching_threads(tree):
    coll = ProcessCollector(str(tree), LISTENER)
    first = scrape(coll)
    specs = proc_specs()
    assert coll.last_cmdlines_read == len(specs)
    second = scrape(coll)
    assert second == first
    assert coll.last_cmdlines_read == 0
    matching = [s for s in specs if s.group or s.argv[:1] and s.argv[0].endswith(b"/tnslsnr")]
    others = [s for s in specs if s not in matching]
    # Nothing ran, so every PID costs its /proc/PID/schedstat (the leader's) and a
    # multi-threaded matching process the schedstat of each other thread; no stat, no sched
    assert coll.last_files_read == len(specs) + sum(len(s.threads) - 1 for s in matching)
    assert len(others) > 0 and coll.last_files_read < sum(1 + len(s.threads) for s in matching) + len(others)
    # the only directory listed is the procfs root
    assert coll.last_dirs_listed == 1
    assert coll.last_sched_parsed == 0


def test_only_threads_that_ran_are_read_and_values_stay_exact(tree):
    """A thread's schedstat (run time, run delay, timeslices) moves whenever it was on a CPU;
    unchanged, nothing else of it is read. Values stay exact either way."""
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    assert coll.last_sched_parsed == sum(len(s.threads) for s in proc_specs() if s.group)
    sp = next(s for s in proc_specs() if s.pid == 2107)   # ORCL lgwr
    t = sp.threads[0]
    # 1. the thread ran without switching (CPU time grew): its stat and sched are read
    ran = ThreadSpec(**{**t.__dict__, "utime": t.utime + 50, "run_delay": t.run_delay + 7_000_000})
    write_process(tree, ProcSpec(**{**sp.__dict__, "threads": (ran,)}))
    s1 = scrape(coll)
    assert coll.last_sched_parsed == 1
    assert v(s1, "dbhost_process_cpu_seconds_total", "ORCL", "lgwr", mode="user") == \
        pytest.approx((t.utime + 50) / TCK)
    assert v(s1, "dbhost_process_context_switches_total", "ORCL", "lgwr", kind="voluntary") == t.voluntary
    assert v(s1, "dbhost_process_run_delay_seconds_total", "ORCL", "lgwr") == pytest.approx(ran.run_delay / 1e9)
    assert v(s1, "dbhost_process_running_seconds_total", "ORCL", "lgwr") == pytest.approx(ran.runtime_ns / 1e9)
    # 2. it switched: exactly that file is parsed again
    switched = ThreadSpec(**{**ran.__dict__, "voluntary": t.voluntary + 1, "involuntary": t.involuntary + 2})
    write_process(tree, ProcSpec(**{**sp.__dict__, "threads": (switched,)}))
    s2 = scrape(coll)
    assert coll.last_sched_parsed == 1
    assert v(s2, "dbhost_process_context_switches_total", "ORCL", "lgwr", kind="voluntary") == t.voluntary + 1
    assert v(s2, "dbhost_process_context_switches_total", "ORCL", "lgwr", kind="involuntary") == \
        t.involuntary + 2
    assert v(s2, "dbhost_process_timeslices_total", "ORCL", "lgwr") == t.timeslices + 3
    # 3. it did not run but was moved to another CPU (a wakeup or load balancing can migrate a
    #    queued thread before it runs): not seen yet, the counter lags until the thread runs
    moved = ThreadSpec(**{**switched.__dict__, "migrations": t.migrations + 3})
    write_process(tree, ProcSpec(**{**sp.__dict__, "threads": (moved,)}))
    s3 = scrape(coll)
    assert coll.last_sched_parsed == 0
    assert v(s3, "dbhost_process_migrations_total", "ORCL", "lgwr") == t.migrations
    # 4. it runs on the new CPU: the migrations are counted
    runs = ThreadSpec(**{**moved.__dict__, "stime": t.stime + 1})
    write_process(tree, ProcSpec(**{**sp.__dict__, "threads": (runs,)}))
    s4 = scrape(coll)
    assert coll.last_sched_parsed == 1
    assert v(s4, "dbhost_process_migrations_total", "ORCL", "lgwr") == t.migrations + 3
    assert v(before, "dbhost_process_migrations_total", "ORCL", "lgwr") == t.migrations


def test_rows_moved_by_a_longer_header_are_found_again(tree):
    """The sched header carries comm and the thread count; when it grows the
    rows move: the values are searched again, never read from the old place."""
    coll = ProcessCollector(str(tree))
    scrape(coll)
    fg = next(s for s in proc_specs() if s.pid == 3002)   # 3 threads: header "#threads: 3"
    extra = [ThreadSpec(tid=3600 + k, starttime=fg.starttime + 90 + k, utime=1, stime=1, voluntary=5,
                        involuntary=1, migrations=1) for k in range(8)]
    # the three known threads ran (one of them created the new ones)
    bumped = tuple(ThreadSpec(**{**t.__dict__, "voluntary": t.voluntary + 9}) for t in fg.threads)
    # 11 threads: every header line is one byte longer ("#threads: 11")
    write_process(tree, ProcSpec(**{**fg.__dict__, "threads": bumped + tuple(extra)}))
    after = scrape(coll)
    assert coll.last_sched_parsed == 3 + 8   # the 3 known threads' rows moved, 8 new threads
    specs = [s for s in proc_specs() if s.group == ("ORCL", "foreground")]
    base = sum(t.voluntary for s in specs for t in s.threads)
    assert v(after, "dbhost_process_context_switches_total", "ORCL", "foreground", kind="voluntary") == \
        base + 3 * 9 + 8 * 5
    assert v(after, "dbhost_process_threads", "ORCL", "foreground") == 5 + 8


def test_first_scrape_lists_task_dirs_of_multithreaded_processes_only(tree):
    coll = ProcessCollector(str(tree), LISTENER)
    scrape(coll)
    specs = proc_specs()
    matching = [s for s in specs if s.group or s.argv[:1] and s.argv[0].endswith(b"/tnslsnr")]
    multi = [s for s in matching if len(s.threads) > 1]
    assert {s.pid for s in multi} == {3002, 5002, 1201}   # two foregrounds and the listener
    assert coll.last_dirs_listed == 1 + len(multi)
    others = [s for s in specs if s not in matching]
    # every PID: schedstat (the leader's), stat, cmdline; every thread of a matching process:
    # sched, and schedstat unless it is the leader (read already)
    assert coll.last_files_read == sum(3 + 2 * len(s.threads) - 1 for s in matching) + 3 * len(others)


def test_cached_identity_is_not_reread(tree):
    coll = ProcessCollector(str(tree))
    scrape(coll)
    # same PID, same start time and comm: the command line is trusted from the cache
    (tree / "2107" / "cmdline").write_bytes(b"/bin/sleep\x00100\x00")
    samples = scrape(coll)
    assert coll.last_cmdlines_read == 0
    assert v(samples, "dbhost_process_processes", "ORCL", "lgwr") == 1


def test_thread_exit_keeps_totals(tree):
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    fg = next(s for s in proc_specs() if s.pid == 3002)
    gone = fg.threads[2]
    remove_thread(tree, 3002, gone.tid)
    after = scrape(coll)
    assert after[("dbhost_process_threads", (("role", "foreground"), ("sid", "ORCL")))] == 4
    assert coll.last_dirs_listed == 2   # num_threads changed: task/ of 3002 is listed again
    for kind in ("voluntary", "involuntary"):
        assert v(after, "dbhost_process_context_switches_total", "ORCL", "foreground", kind=kind) == \
            v(before, "dbhost_process_context_switches_total", "ORCL", "foreground", kind=kind)
    assert v(after, "dbhost_process_migrations_total", "ORCL", "foreground") == \
        v(before, "dbhost_process_migrations_total", "ORCL", "foreground")
    # CPU time comes from /proc/PID/stat, which keeps the exited thread's time
    for mode in ("user", "system"):
        assert v(after, "dbhost_process_cpu_seconds_total", "ORCL", "foreground", mode=mode) == \
            v(before, "dbhost_process_cpu_seconds_total", "ORCL", "foreground", mode=mode)
    # a surviving thread counts on: totals = exited + live
    t0 = fg.threads[0]
    bumped = ThreadSpec(**{**t0.__dict__, "involuntary": t0.involuntary + 250, "migrations": t0.migrations + 4,
                           "utime": t0.utime + 30})
    write_process(tree, ProcSpec(**{**fg.__dict__, "threads": (bumped, fg.threads[1]),
                                    "exited_utime": gone.utime, "exited_stime": gone.stime}))
    later = scrape(coll)
    assert v(later, "dbhost_process_context_switches_total", "ORCL", "foreground", kind="involuntary") == \
        v(before, "dbhost_process_context_switches_total", "ORCL", "foreground", kind="involuntary") + 250
    assert v(later, "dbhost_process_migrations_total", "ORCL", "foreground") == \
        v(before, "dbhost_process_migrations_total", "ORCL", "foreground") + 4
    assert v(later, "dbhost_process_cpu_seconds_total", "ORCL", "foreground", mode="user") == \
        pytest.approx(v(before, "dbhost_process_cpu_seconds_total", "ORCL", "foreground", mode="user") + 30 / TCK)
    assert v(later, "dbhost_process_cpu_seconds_total", "ORCL", "foreground", mode="system") == \
        v(before, "dbhost_process_cpu_seconds_total", "ORCL", "foreground", mode="system")


def test_thread_replaced_with_same_thread_count_is_noticed(tree):
    """One thread exits and another starts between two scrapes: num_threads is
    unchanged, the known TID is gone, so task/ is listed and the new thread is
    counted on top of what the old one had counted."""
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    fg = next(s for s in proc_specs() if s.pid == 3002)
    old_t = fg.threads[1]
    new_t = ThreadSpec(tid=3900, starttime=old_t.starttime + 700, utime=5, stime=2, voluntary=77,
                       involuntary=9, migrations=3)
    remove_thread(tree, 3002, old_t.tid)
    write_process(tree, ProcSpec(**{**fg.__dict__, "threads": (fg.threads[0], new_t, fg.threads[2]),
                                    "exited_utime": old_t.utime, "exited_stime": old_t.stime}))
    after = scrape(coll)
    assert coll.last_dirs_listed == 2
    assert v(after, "dbhost_process_threads", "ORCL", "foreground") == 5
    for kind, attr in (("voluntary", "voluntary"), ("involuntary", "involuntary")):
        assert v(after, "dbhost_process_context_switches_total", "ORCL", "foreground", kind=kind) == \
            v(before, "dbhost_process_context_switches_total", "ORCL", "foreground", kind=kind) + getattr(new_t, attr)
    assert v(after, "dbhost_process_migrations_total", "ORCL", "foreground") == \
        v(before, "dbhost_process_migrations_total", "ORCL", "foreground") + 3
    assert v(after, "dbhost_process_cpu_seconds_total", "ORCL", "foreground", mode="user") == \
        pytest.approx(v(before, "dbhost_process_cpu_seconds_total", "ORCL", "foreground", mode="user") + 5 / TCK)
    # and the scrape after that reads the known TIDs again without listing task/
    assert scrape(coll) == after
    assert coll.last_dirs_listed == 1


def test_new_thread_in_single_threaded_process_is_found(tree):
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    sp = next(s for s in proc_specs() if s.pid == 2107)   # ORCL lgwr, one thread
    extra = ThreadSpec(tid=2190, starttime=sp.starttime + 50, utime=1, stime=1, voluntary=11,
                       involuntary=4, migrations=2)
    # creating the thread took the leader a little CPU time (clone() ran on it)
    leader = ThreadSpec(**{**sp.threads[0].__dict__, "stime": sp.threads[0].stime + 1})
    write_process(tree, ProcSpec(**{**sp.__dict__, "threads": (leader, extra)}))
    after = scrape(coll)
    assert coll.last_dirs_listed == 2
    assert v(after, "dbhost_process_threads", "ORCL", "lgwr") == 2
    assert v(after, "dbhost_process_context_switches_total", "ORCL", "lgwr", kind="involuntary") == \
        v(before, "dbhost_process_context_switches_total", "ORCL", "lgwr", kind="involuntary") + 4
    assert v(after, "dbhost_process_migrations_total", "ORCL", "lgwr") == \
        v(before, "dbhost_process_migrations_total", "ORCL", "lgwr") + 2


def test_exec_within_the_same_group_keeps_counting(tree):
    """Same PID and start time, new comm, command line still ora_lgwr_ORCL:
    the same process (exec keeps the task and its counters)."""
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    sp = next(s for s in proc_specs() if s.pid == 2107)
    t = sp.threads[0]
    write_process(tree, ProcSpec(**{**sp.__dict__, "comm": b"lgwr_renamed",
                                    "threads": (ThreadSpec(**{**t.__dict__, "voluntary": t.voluntary + 6}),)}))
    after = scrape(coll)
    assert coll.last_cmdlines_read == 1
    assert v(after, "dbhost_process_context_switches_total", "ORCL", "lgwr", kind="voluntary") == \
        v(before, "dbhost_process_context_switches_total", "ORCL", "lgwr", kind="voluntary") + 6
    assert v(after, "dbhost_process_cpu_seconds_total", "ORCL", "lgwr", mode="user") == \
        v(before, "dbhost_process_cpu_seconds_total", "ORCL", "lgwr", mode="user")


def test_process_cpu_going_backwards_never_lowers_the_counter(tree):
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    sp = next(s for s in proc_specs() if s.pid == 4107)   # DWH1 lgwr
    t = sp.threads[0]
    write_process(tree, ProcSpec(**{**sp.__dict__, "threads": (ThreadSpec(**{**t.__dict__, "utime": 7}),)}))
    after = scrape(coll)
    assert v(after, "dbhost_process_cpu_seconds_total", "DWH1", "lgwr", mode="user") == \
        pytest.approx((t.utime + 7) / TCK)
    assert v(after, "dbhost_process_cpu_seconds_total", "DWH1", "lgwr", mode="user") >= \
        v(before, "dbhost_process_cpu_seconds_total", "DWH1", "lgwr", mode="user")


def test_process_exit_keeps_group_with_zero_processes(tree):
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    remove_process(tree, 2107)
    after = scrape(coll)
    assert v(after, "dbhost_process_processes", "ORCL", "lgwr") == 0
    assert v(after, "dbhost_process_threads", "ORCL", "lgwr") == 0
    for name, extra in [("dbhost_process_context_switches_total", {"kind": "involuntary"}),
                        ("dbhost_process_migrations_total", {}),
                        ("dbhost_process_cpu_seconds_total", {"mode": "user"})]:
        assert v(after, name, "ORCL", "lgwr", **extra) == v(before, name, "ORCL", "lgwr", **extra)


def test_pid_reuse_is_a_new_process(tree):
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    old = next(s for s in proc_specs() if s.pid == 3001)
    remove_process(tree, 3001)
    # PID 3001 comes back as a new LGWR of DWH1 (later start time, small counters)
    new = make_proc(50, 3001, (b"ora_lgwr_DWH1",), b"ora_lgwr_DWH1", ("DWH1", "lgwr"),
                    starttime=old.starttime + 100_000)
    write_process(tree, new)
    after = scrape(coll)
    assert coll.last_cmdlines_read == 1
    t = new.threads[0]
    assert v(after, "dbhost_process_processes", "ORCL", "foreground") == 2
    assert v(after, "dbhost_process_context_switches_total", "ORCL", "foreground", kind="voluntary") == \
        v(before, "dbhost_process_context_switches_total", "ORCL", "foreground", kind="voluntary")
    assert v(after, "dbhost_process_processes", "DWH1", "lgwr") == 2
    assert v(after, "dbhost_process_context_switches_total", "DWH1", "lgwr", kind="voluntary") == \
        v(before, "dbhost_process_context_switches_total", "DWH1", "lgwr", kind="voluntary") + t.voluntary


def test_pid_reuse_with_same_group_and_lower_counters_does_not_go_backwards(tree):
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    old = next(s for s in proc_specs() if s.pid == 2105)   # ORCL dbw0, one thread
    remove_process(tree, 2105)
    t = ThreadSpec(tid=2105, starttime=old.starttime + 500, utime=3, stime=1, voluntary=10,
                   involuntary=2, migrations=1)
    write_process(tree, ProcSpec(pid=2105, argv=old.argv, comm=old.comm, threads=(t,), group=old.group))
    after = scrape(coll)
    assert v(after, "dbhost_process_context_switches_total", "ORCL", "dbw0", kind="voluntary") == \
        old.threads[0].voluntary + 10
    assert v(after, "dbhost_process_migrations_total", "ORCL", "dbw0") == old.threads[0].migrations + 1
    assert v(after, "dbhost_process_cpu_seconds_total", "ORCL", "dbw0", mode="user") == \
        pytest.approx((old.threads[0].utime + 3) / TCK)
    assert v(after, "dbhost_process_processes", "ORCL", "dbw0") == 1
    assert v(before, "dbhost_process_processes", "ORCL", "dbw0") == 1


def test_non_matching_pid_reused_by_oracle_process_is_found(tree):
    coll = ProcessCollector(str(tree))
    scrape(coll)
    remove_process(tree, 813)  # sshd listener
    new = make_proc(60, 813, (b"ora_smon_ORCL",), b"ora_smon_ORCL", ("ORCL", "smon"), starttime=99_999)
    write_process(tree, new)
    after = scrape(coll)
    assert v(after, "dbhost_process_processes", "ORCL", "smon") == 1
    assert v(after, "dbhost_process_context_switches_total", "ORCL", "smon", kind="involuntary") == \
        new.threads[0].involuntary


def test_exec_in_place_is_reidentified(tree):
    """Same PID and start time, new comm (exec): the command line is read again."""
    coll = ProcessCollector(str(tree))
    scrape(coll)
    old = next(s for s in proc_specs() if s.pid == 813)
    new = make_proc(61, 813, (b"oracleORCL (LOCAL=NO)",), b"oracle_813_orcl", ("ORCL", "foreground"),
                    starttime=old.starttime)
    remove_process(tree, 813)
    write_process(tree, new)
    after = scrape(coll)
    assert coll.last_cmdlines_read == 1
    assert v(after, "dbhost_process_processes", "ORCL", "foreground") == 4


def test_decreasing_counter_for_same_thread_key_never_goes_backwards(tree):
    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    sp = next(s for s in proc_specs() if s.pid == 4107)  # DWH1 lgwr
    t = sp.threads[0]
    write_process(tree, ProcSpec(**{**sp.__dict__, "threads": (ThreadSpec(**{**t.__dict__, "voluntary": 5}),)}))
    after = scrape(coll)
    assert v(after, "dbhost_process_context_switches_total", "DWH1", "lgwr", kind="voluntary") == t.voluntary + 5
    assert v(after, "dbhost_process_context_switches_total", "DWH1", "lgwr", kind="voluntary") >= \
        v(before, "dbhost_process_context_switches_total", "DWH1", "lgwr", kind="voluntary")


def test_without_sched_file_switches_come_from_status(tmp_path):
    """Kernels built without CONFIG_SCHED_DEBUG have no task/TID/sched."""
    sp = make_proc(0, 700, (b"ora_lgwr_NOSD",), b"ora_lgwr_NOSD", ("NOSD", "lgwr"), nthreads=2, tid_base=750)
    write_process(tmp_path, sp, with_sched=False)
    samples = scrape(ProcessCollector(str(tmp_path)))
    assert v(samples, "dbhost_process_context_switches_total", "NOSD", "lgwr", kind="voluntary") == \
        sum(t.voluntary for t in sp.threads)
    assert v(samples, "dbhost_process_context_switches_total", "NOSD", "lgwr", kind="involuntary") == \
        sum(t.involuntary for t in sp.threads)
    assert v(samples, "dbhost_process_migrations_total", "NOSD", "lgwr") == 0
    assert v(samples, "dbhost_process_threads", "NOSD", "lgwr") == 2


def test_series_cap_counts_dropped_and_keeps_exported_groups_stable(tree):
    n = SERIES_PER_GROUP
    assert n == 10   # 2 switch kinds, migrations, 2 cpu modes, run delay, running, timeslices, 2 gauges
    coll = ProcessCollector(str(tree), max_series=n * 3)
    s1 = scrape(coll)
    all_groups = len(expected_from_specs(proc_specs()))
    kept = groups_in(s1)
    assert len(kept) == 3
    assert s1[("dbhost_process_dropped_series_total", ())] == (all_groups - 3) * n
    # a new group sorting before all others does not evict the exported ones
    write_process(tree, make_proc(70, 7001, (b"ora_pmon_AAA",), b"ora_pmon_AAA", ("AAA", "pmon")))
    s2 = scrape(coll)
    assert groups_in(s2) == kept
    assert s2[("dbhost_process_dropped_series_total", ())] == (all_groups - 3) * n + (all_groups + 1 - 3) * n
    assert sum(1 for (name, _) in s2 if name != "dbhost_process_dropped_series_total") == 3 * n


@pytest.mark.parametrize("cmdline,expected", [
    (b"ora_lgwr_ORCL\x00", ("ORCL", "lgwr")),
    (b"ora_lg00_ORCL\x00", ("ORCL", "lg00")),
    (b"ora_dbw0_DB_TEST_2\x00", ("DB_TEST_2", "dbw0")),     # SID with underscores
    (b"ora_j000_ORCL\x00", ("ORCL", "j000")),
    (b"ora_LGWR_ORCL\x00", ("ORCL", "lgwr")),               # role lower-cased
    (b"ora_pmon_orcl" + b" " * 40 + b"\x00", ("orcl", "pmon")),  # padded argv area
    (b"oracleORCL (LOCAL=NO)\x00", ("ORCL", "foreground")),
    (b"oracleORCL (DESCRIPTION=(LOCAL=YES)(ADDRESS=(PROTOCOL=beq)))\x00", ("ORCL", "foreground")),
    (b"oracleORCL\x00(LOCAL=NO)\x00", ("ORCL", "foreground")),  # argv not rewritten into one string
    (b"oracleDWH1\x00", ("DWH1", "foreground")),
    (b"oracle\x00", None),
    (b"oracle-exporter\x00--once\x00", None),
    (b"/u01/app/oracle/product/19c/bin/oracle\x00", None),
    (b"asm_pmon_+ASM\x00", None),
    (b"ora_backup_PROD.sh\x00", None),
    (b"/bin/bash\x00ora_lgwr_ORCL\x00", None),              # an argument, not the program name
    (b"", None),                                             # kernel thread
    (b"ora_lgwr_\xff\xfe\x00", None),                        # non-UTF-8 SID
])
def test_classification(cmdline, expected):
    from dbhost_exporter.collectors.process import command_line
    assert ProcessCollector("/nonexistent").classify(command_line(cmdline)) == expected


def test_extra_groups_first_match_wins_and_oracle_patterns_win():
    coll = ProcessCollector("/nonexistent", [("listener", r"tnslsnr"), ("any_oracle_home", r"^/u01/"),
                                             ("lgwr_lookalike", r"lgwr")])
    assert coll.classify("/u01/app/oracle/bin/tnslsnr LISTENER -inherit") == ("", "listener")
    assert coll.classify("/u01/app/oracle/bin/emagent") == ("", "any_oracle_home")
    assert coll.classify("ora_lgwr_ORCL") == ("ORCL", "lgwr")


def test_invalid_extra_group_regex_is_a_clear_error():
    with pytest.raises(ValueError, match=r"extra group 'bad': invalid regex '\('"):
        ProcessCollector("/proc", [("bad", "(")])


def test_logon_churn_keeps_series_bounded_and_totals_monotonic(tree):
    """Issue 14.7: foreground processes end and new ones start between scrapes (a logon storm,
    a connection pool recycling). The series stay the same set (per sid and role: an ended
    process leaves none behind), no _total goes down while members leave, and each group's
    totals are the sum over every process it ever had."""
    coll = ProcessCollector(str(tree))
    specs = {sp.pid: sp for sp in proc_specs()}
    fg = [sp for sp in specs.values() if sp.group and sp.group[1] == "foreground"]
    assert len(fg) >= 2
    truth = defaultdict(int)                      # voluntary switches of every process ever, per group
    for sp in specs.values():
        if sp.group:
            truth[sp.group] += sum(t.voluntary for t in sp.threads)
    prev = scrape(coll)
    keys = set(prev)
    next_pid, next_tid = 40_000, 400_000
    for round_ in range(6):
        old = fg.pop(0)                           # the oldest session logs off ...
        remove_process(tree, old.pid)
        new = make_proc(500 + round_, next_pid, old.argv, old.comm, old.group, nthreads=len(old.threads),
                        tid_base=next_tid, starttime=old.starttime + 50_000)
        write_process(tree, new)                  # ... and a new one logs on, with a new PID
        truth[new.group] += sum(t.voluntary for t in new.threads)
        fg.append(new)
        next_pid, next_tid = next_pid + 1, next_tid + len(new.threads)
        now = scrape(coll)
        assert set(now) == keys                   # nothing lingers, nothing new per process
        for key, val in now.items():
            if key[0].endswith("_total"):
                assert val >= prev[key], (key, prev[key], val)
        prev = now
    for (sid, role), want in truth.items():
        assert v(prev, "dbhost_process_context_switches_total", sid, role, kind="voluntary") == want


def test_two_overlapping_scrapes_count_an_exited_process_once(tree, monkeypatch):
    """Issue 26: an HA pair of Prometheus servers scrapes at the same moment. Both scans started
    from the same state and each added the exited LGWR's last counters to the group's exited
    totals: dbhost_process_cpu_seconds_total jumped by the dead process's CPU, for good. The scans
    are serialised: after any number of overlapping scrapes the totals equal one scrape's."""
    import threading

    coll = ProcessCollector(str(tree))
    before = scrape(coll)
    remove_process(tree, 2107)                     # LGWR of ORCL exits between scrapes
    real_listdir = os.listdir
    both_scanning = threading.Barrier(2, timeout=2)

    def listdir(path):
        # the scan has taken the state it starts from; wait until the other scrape's scan has
        # too (serialised scans never meet here: the barrier times out and the scan goes on)
        if str(path) == str(tree):
            try:
                both_scanning.wait()
            except threading.BrokenBarrierError:
                pass
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    results: list[dict] = []
    threads = [threading.Thread(target=lambda: results.append(scrape(coll))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(results) == 2
    for got in results + [scrape(coll)]:
        for name, extra in [("dbhost_process_cpu_seconds_total", {"mode": "user"}),
                            ("dbhost_process_cpu_seconds_total", {"mode": "system"}),
                            ("dbhost_process_context_switches_total", {"kind": "involuntary"}),
                            ("dbhost_process_migrations_total", {})]:
            assert v(got, name, "ORCL", "lgwr", **extra) == v(before, name, "ORCL", "lgwr", **extra), name
