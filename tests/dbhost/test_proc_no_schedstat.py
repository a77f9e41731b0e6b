"""Issue 26: the process collector on a kernel without schedstat (no CONFIG_SCHED_INFO) parses a
process's /proc/PID/stat only when its bytes changed since the last scrape, and keeps the
answer exact.

The failure the on-call engineer fears: a shortcut that serves last scrape's numbers: CPU time
that grew, a thread that was added, or context switches of a thread that ran without a clock
tick of CPU time (its process's stat unchanged) not showing."""
from __future__ import annotations

from fixtures_proc import make_proc, write_process

from dbhost_exporter.collectors.process import ProcessCollector

from test_proc_run_delay import grown, scrape, val


def _tree(root):
    specs = [make_proc(i, 300 + 10 * i, (b"ora_lgwr_R%d" % i,), b"ora_lgwr_R%d" % i, ("R%d" % i, "lgwr"),
                       nthreads=3) for i in range(6)]
    specs += [make_proc(50 + i, 900 + i, (b"/usr/sbin/sshd",), b"sshd", None) for i in range(3)]
    for sp in specs:
        write_process(root, sp, with_schedstat=False)
    return specs


def test_an_idle_scrape_parses_no_stat_and_answers_as_a_fresh_collector(tmp_path):
    specs = _tree(tmp_path)
    coll = ProcessCollector(str(tmp_path))
    first = scrape(coll)
    assert coll.schedstat_missing and coll.last_stat_parsed == len(specs)
    again = scrape(coll)
    assert coll.last_stat_parsed == 0                       # nothing changed: no stat parsed
    assert again == first == scrape(ProcessCollector(str(tmp_path)))
    # every Oracle thread's sched is still read: nothing else proves a thread idle; this second
    # scrape keeps their copies, so stat is read too (from the third on it is not:
    # test_proc_sched_first.py)
    assert coll.last_files_read == len(specs) + 6 * 3       # (the failed schedstat probe is not a read)


def test_switches_of_a_thread_that_ran_without_cpu_time_are_seen_with_stat_unchanged(tmp_path):
    specs = _tree(tmp_path)
    coll = ProcessCollector(str(tmp_path))
    s1 = scrape(coll)
    stat = (tmp_path / "320/stat").read_bytes()
    write_process(tmp_path, grown(specs[2], 1, voluntary=7, involuntary=2), with_schedstat=False)
    assert (tmp_path / "320/stat").read_bytes() == stat      # the process's stat did not change
    s2 = scrape(coll)
    assert coll.last_stat_parsed == 0
    for kind, d in (("voluntary", 7), ("involuntary", 2)):
        assert val(s2, "dbhost_process_context_switches_total", "R2", "lgwr", kind=kind) == \
            val(s1, "dbhost_process_context_switches_total", "R2", "lgwr", kind=kind) + d
    assert s2 == scrape(ProcessCollector(str(tmp_path)))


def test_cpu_time_and_a_new_thread_are_seen_when_stat_changes(tmp_path):
    specs = _tree(tmp_path)
    coll = ProcessCollector(str(tmp_path))
    s1 = scrape(coll)
    write_process(tmp_path, grown(specs[4], 2, utime=150), with_schedstat=False)   # +1.5 s user CPU
    s2 = scrape(coll)
    assert coll.last_stat_parsed == 1
    assert val(s2, "dbhost_process_cpu_seconds_total", "R4", "lgwr", mode="user") == \
        val(s1, "dbhost_process_cpu_seconds_total", "R4", "lgwr", mode="user") + 1.5
    bigger = make_proc(1, 310, (b"ora_lgwr_R1",), b"ora_lgwr_R1", ("R1", "lgwr"), nthreads=4)
    write_process(tmp_path, bigger, with_schedstat=False)
    s3 = scrape(coll)
    assert val(s3, "dbhost_process_threads", "R1", "lgwr") == 4
    assert s3 == scrape(ProcessCollector(str(tmp_path)))


def test_a_thread_sched_gone_bad_with_stat_unchanged_keeps_its_values_and_the_process_counted(tmp_path):
    specs = _tree(tmp_path)
    coll = ProcessCollector(str(tmp_path))
    s1 = scrape(coll)
    tid = specs[3].threads[2].tid
    sched = tmp_path / f"330/task/{tid}/sched"
    good = sched.read_bytes()
    sched.write_bytes(b"garbage\n")
    s2 = scrape(coll)
    assert val(s2, "dbhost_process_processes", "R3", "lgwr") == 1
    assert val(s2, "dbhost_process_context_switches_total", "R3", "lgwr", kind="voluntary") == \
        val(s1, "dbhost_process_context_switches_total", "R3", "lgwr", kind="voluntary")
    sched.write_bytes(good)
    assert scrape(coll) == s1
