"""Run-queue delay (task/TID/schedstat) in the process collector, on fixture trees:
kernels without schedstat or with sched_info off, malformed files, exits; and that
an unchanged schedstat is what lets a scrape skip a process (and nothing else)."""
from __future__ import annotations


import pytest

from fixtures_proc import ProcSpec, ThreadSpec, make_proc, remove_thread, write_process  # noqa: E402

from dbhost_exporter.collectors.process import (ProcessCollector, parse_sched,  # noqa: E402
                                                parse_schedstat)

RUN_FAMILIES = ("dbhost_process_run_delay_seconds_total", "dbhost_process_running_seconds_total",
                "dbhost_process_timeslices_total")


def scrape(coll):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in coll.collect() for s in f.samples}


def val(samples, name, sid, role, **extra):
    return samples[(name, tuple(sorted(dict(sid=sid, role=role, **extra).items())))]


def lgwr(n_threads=2, **overrides):
    return make_proc(0, 300, (b"ora_lgwr_R",), b"ora_lgwr_R", ("R", "lgwr"), nthreads=n_threads, tid_base=350,
                     overrides=overrides or None)


def grown(sp: ProcSpec, k: int, **delta) -> ProcSpec:
    t = sp.threads[k]
    new = ThreadSpec(**{**t.__dict__, **{f: getattr(t, f) + d for f, d in delta.items()}})
    return ProcSpec(**{**sp.__dict__, "threads": sp.threads[:k] + (new,) + sp.threads[k + 1:]})


# -- the parsers scan() uses -------------------------------------------------------------

@pytest.mark.parametrize("data,expected", [
    (b"15360123456 4123456789 1000000\n", (15360123456, 4123456789, 1000000)),
    (b"0 0 0\n", (0, 0, 0)),
    (b"18446744073709551615 1 2\n", (18446744073709551615, 1, 2)),
])
def test_parse_schedstat(data, expected):
    assert parse_schedstat(data) == expected


@pytest.mark.parametrize("data", [b"", b"1 2\n", b"1 2 3 4\n", b"-1 2 3\n", b"1_0 2 3\n", b"0x10 2 3\n",
                                  b"a b c\n", b"\x00\x00\x00"])
def test_parse_schedstat_rejects_anything_else(data):
    with pytest.raises(ValueError):
        parse_schedstat(data)


def test_parse_sched_takes_the_rows_after_the_last_header():
    from fixtures_proc import sched_bytes
    data = sched_bytes(b"x)\nnr_voluntary_switches : 9", 7, 1, 11, 22, 33, 5_000_000, 10)
    assert parse_sched(data) == (11, 22, 33)
    # rows in another layout (no se.nr_migrations): the row-by-row parse, migrations 0
    assert parse_sched(b"h\n---\nnr_voluntary_switches : 4\nnr_involuntary_switches : 5\n") == (4, 5, 0)


# -- failures first -----------------------------------------------------------------------

def test_kernel_without_schedstat_exports_no_run_families_and_skips_nothing(tmp_path):
    """No CONFIG_SCHED_INFO: no schedstat files. Run-queue families are absent (not 0),
    switches stay exact, and every scrape reads stat and sched (nothing proves a thread idle)."""
    sp = lgwr()
    write_process(tmp_path, sp, with_schedstat=False)
    coll = ProcessCollector(str(tmp_path))
    s1 = scrape(coll)
    assert not any(k[0] in RUN_FAMILIES for k in s1)
    assert val(s1, "dbhost_process_context_switches_total", "R", "lgwr", kind="voluntary") == \
        sum(t.voluntary for t in sp.threads)
    scrape(coll)
    assert coll.last_sched_parsed == 2
    # a change in sched alone is seen
    write_process(tmp_path, grown(sp, 1, voluntary=7), with_schedstat=False)
    s3 = scrape(coll)
    assert val(s3, "dbhost_process_context_switches_total", "R", "lgwr", kind="voluntary") == \
        sum(t.voluntary for t in sp.threads) + 7


def test_sched_info_off_prints_zeros_which_prove_nothing(tmp_path):
    """Kernels before 5.14 without CONFIG_SCHEDSTATS and with delay accounting off print
    ``0 0 0`` for every task. The run families are not exported (they would be a flat 0) and
    identical zeros never let a scrape skip a thread."""
    sp = lgwr()
    write_process(tmp_path, sp)
    for f in [tmp_path / "300" / "schedstat"] + list((tmp_path / "300" / "task").glob("*/schedstat")):
        f.write_bytes(b"0 0 0\n")
    coll = ProcessCollector(str(tmp_path))
    s1 = scrape(coll)
    assert not any(k[0] in RUN_FAMILIES for k in s1)
    write_process(tmp_path, grown(sp, 0, involuntary=4), with_schedstat=False)
    s2 = scrape(coll)
    assert coll.last_sched_parsed == 2
    assert val(s2, "dbhost_process_context_switches_total", "R", "lgwr", kind="involuntary") == \
        val(s1, "dbhost_process_context_switches_total", "R", "lgwr", kind="involuntary") + 4


@pytest.mark.parametrize("garbage", [b"", b"garbage\n", b"1 2\n", b"-5 3 2\n", b"1 2 3 4\n"])
def test_malformed_schedstat_is_never_a_reason_to_skip(tmp_path, garbage):
    sp = lgwr(n_threads=1)
    write_process(tmp_path, sp)
    for f in (tmp_path / "300" / "schedstat", tmp_path / "300" / "task" / "300" / "schedstat"):
        f.write_bytes(garbage)
    coll = ProcessCollector(str(tmp_path))
    s1 = scrape(coll)
    assert val(s1, "dbhost_process_threads", "R", "lgwr") == 1
    write_process(tmp_path, grown(sp, 0, voluntary=3), with_schedstat=False)
    s2 = scrape(coll)
    assert coll.last_sched_parsed == 1
    assert val(s2, "dbhost_process_context_switches_total", "R", "lgwr", kind="voluntary") == \
        sp.threads[0].voluntary + 3


def test_run_delay_of_exited_threads_and_processes_stays_in_the_total(tmp_path):
    sp = lgwr(n_threads=3)
    write_process(tmp_path, sp)
    other = make_proc(1, 400, (b"ora_lgwr_R",), b"ora_lgwr_R", ("R", "lgwr"))
    write_process(tmp_path, other)
    coll = ProcessCollector(str(tmp_path))
    s1 = scrape(coll)
    total = sum(t.run_delay for t in sp.threads + other.threads)
    assert val(s1, "dbhost_process_run_delay_seconds_total", "R", "lgwr") == pytest.approx(total / 1e9)
    # a thread exits (the leader's schedstat is unchanged: the missing TID is found all the same)
    remove_thread(tmp_path, 300, sp.threads[2].tid)
    s2 = scrape(coll)
    assert val(s2, "dbhost_process_threads", "R", "lgwr") == 3
    # a whole process exits
    import shutil
    shutil.rmtree(tmp_path / "400")
    s3 = scrape(coll)
    for s in (s2, s3):
        assert val(s, "dbhost_process_run_delay_seconds_total", "R", "lgwr") == pytest.approx(total / 1e9)
        assert val(s, "dbhost_process_timeslices_total", "R", "lgwr") == \
            sum(t.timeslices for t in sp.threads + other.threads)
    assert val(s3, "dbhost_process_processes", "R", "lgwr") == 1
    # the surviving threads keep counting on top
    write_process(tmp_path, ProcSpec(**{**grown(sp, 1, run_delay=5_000_000).__dict__,
                                        "threads": grown(sp, 1, run_delay=5_000_000).threads[:2]}))
    s4 = scrape(coll)
    assert val(s4, "dbhost_process_run_delay_seconds_total", "R", "lgwr") == pytest.approx(total / 1e9 + 0.005)


def test_run_delay_going_down_is_a_new_thread_never_a_lower_counter(tmp_path):
    sp = lgwr(n_threads=1)
    write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    s1 = scrape(coll)
    t = sp.threads[0]
    reset = ThreadSpec(**{**t.__dict__, "run_delay": 10, "utime": t.utime + 1})
    write_process(tmp_path, ProcSpec(**{**sp.__dict__, "threads": (reset,)}))
    s2 = scrape(coll)
    assert val(s2, "dbhost_process_run_delay_seconds_total", "R", "lgwr") == pytest.approx((t.run_delay + 10) / 1e9)
    assert val(s2, "dbhost_process_run_delay_seconds_total", "R", "lgwr") >= \
        val(s1, "dbhost_process_run_delay_seconds_total", "R", "lgwr")


def test_an_idle_multithreaded_process_is_skipped_only_if_every_thread_is_idle(tmp_path):
    """The leader's schedstat says nothing about the other threads: each is checked."""
    sp = lgwr(n_threads=3)
    write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    scrape(coll)
    scrape(coll)
    assert coll.last_files_read == 3 and coll.last_sched_parsed == 0   # 3 schedstat files
    write_process(tmp_path, grown(sp, 2, involuntary=9, run_delay=2_500_000))
    s = scrape(coll)
    assert coll.last_sched_parsed == 1
    assert val(s, "dbhost_process_context_switches_total", "R", "lgwr", kind="involuntary") == \
        sum(t.involuntary for t in sp.threads) + 9
    assert val(s, "dbhost_process_run_delay_seconds_total", "R", "lgwr") == \
        pytest.approx((sum(t.run_delay for t in sp.threads) + 2_500_000) / 1e9)


def test_animated_fixture_tree_moves_run_delay_as_documented(tmp_path):
    """make_fixtures.advance_tree (the dashboards' animated host): ORCL's LGWR waits 6 ms for
    a CPU per 20 ms it runs each step (R13 "before"), other threads 0.2-0.35 ms."""
    import make_fixtures as mf
    fx = mf.build_tree(tmp_path / "tree", with_proc=True)
    coll = ProcessCollector(str(fx.procfs))
    a = scrape(coll)
    mf.advance_tree(fx, 5)
    b = scrape(coll)

    def delta(name):
        return val(b, name, "ORCL", "lgwr") - val(a, name, "ORCL", "lgwr")
    assert delta("dbhost_process_run_delay_seconds_total") == pytest.approx(5 * 0.006)
    assert delta("dbhost_process_running_seconds_total") == pytest.approx(5 * 0.020)
    assert delta("dbhost_process_timeslices_total") == 5 * 100


def test_a_kernel_without_schedstat_is_found_once_not_per_process_and_thread(tmp_path, monkeypatch):
    """Issue 26: without CONFIG_SCHED_INFO the collector tried /proc/PID/schedstat and every
    task/TID/schedstat on every scrape (5,281 failed opens a scrape on the benchmark tree). It
    is found once: one probe a scrape, on the first process, and the values stay exact."""
    import os

    from fixtures_proc import make_proc

    specs = [make_proc(i, 300 + 10 * i, (b"ora_lgwr_R%d" % i,), b"ora_lgwr_R%d" % i, ("R%d" % i, "lgwr"),
                       nthreads=3) for i in range(20)]
    specs += [make_proc(50 + i, 900 + i, (b"/usr/sbin/sshd",), b"sshd", None) for i in range(10)]
    for sp in specs:
        write_process(tmp_path, sp, with_schedstat=False)
    coll = ProcessCollector(str(tmp_path))
    opened: list[str] = []
    real = os.open

    def counting(path, *a, **kw):
        if str(path).endswith("/schedstat"):
            opened.append(str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(os, "open", counting)
    s1 = scrape(coll)
    assert len(opened) == 1 and coll.schedstat_missing and coll.last_schedstat_missing_opens == 1
    for _ in range(2):
        opened.clear()
        s2 = scrape(coll)
        assert len(opened) == 1                          # the probe
    assert not any(k[0] in RUN_FAMILIES for k in s2)
    assert val(s2, "dbhost_process_context_switches_total", "R3", "lgwr", kind="voluntary") == \
        val(s1, "dbhost_process_context_switches_total", "R3", "lgwr", kind="voluntary") == \
        sum(t.voluntary for t in specs[3].threads)
    assert val(s2, "dbhost_process_threads", "R3", "lgwr") == 3
    # a change is still seen (every monitored thread's sched is read: nothing proves it idle)
    write_process(tmp_path, grown(specs[3], 1, voluntary=7), with_schedstat=False)
    s3 = scrape(coll)
    assert val(s3, "dbhost_process_context_switches_total", "R3", "lgwr", kind="voluntary") == \
        sum(t.voluntary for t in specs[3].threads) + 7
