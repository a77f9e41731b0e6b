"""The busy path of the process collector (every thread ran since the last scrape): a thread's
``sched`` rows are matched first where the process's last ``sched`` read had them and searched
again when the header's length moved them (thread count or TID width changed). The values must
stay exactly the generator's ground truth whichever way they were found."""
from __future__ import annotations

from dataclasses import replace

from fixtures_proc import make_proc, remove_thread, write_process

from dbhost_exporter.collectors.process import ProcessCollector


def scrape(coll):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in coll.collect() for s in f.samples}


def val(got, name, role, **extra):
    return got[(name, tuple(sorted({"sid": "BUSY", "role": role, **extra}.items())))]


def ran(spec, step):
    """Every thread of spec ran: all its counters grew by step."""
    return replace(spec, threads=tuple(
        replace(t, voluntary=t.voluntary + step, involuntary=t.involuntary + 2 * step,
                migrations=t.migrations + step, run_delay=t.run_delay + 1000 * step,
                utime=t.utime + step) for t in spec.threads))


def assert_exact(got, role, threads, exited=()):
    everything = tuple(threads) + tuple(exited)
    assert val(got, "dbhost_process_context_switches_total", role, kind="voluntary") == \
        sum(t.voluntary for t in everything)
    assert val(got, "dbhost_process_context_switches_total", role, kind="involuntary") == \
        sum(t.involuntary for t in everything)
    assert val(got, "dbhost_process_migrations_total", role) == sum(t.migrations for t in everything)
    assert val(got, "dbhost_process_run_delay_seconds_total", role) == \
        sum(t.run_delay for t in everything) / 1e9
    assert val(got, "dbhost_process_threads", role) == len(threads)


def test_rows_moved_up_by_a_shorter_header_are_found_again(tmp_path):
    """10 threads -> 9: every other thread's header is one byte shorter ("#threads: 9"), so its
    rows sit one byte before where the last scrape found them; an exited thread keeps its count."""
    sp = make_proc(1, 5000, (b"ora_dbw0_BUSY",), b"ora_dbw0_BUSY", ("BUSY", "dbw0"), nthreads=10)
    write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    assert_exact(scrape(coll), "dbw0", sp.threads)
    sp = ran(sp, 3)
    write_process(tmp_path, sp)
    assert_exact(scrape(coll), "dbw0", sp.threads)     # rows where they were
    gone = sp.threads[-1]
    remove_thread(tmp_path, sp.pid, gone.tid)
    sp = ran(replace(sp, threads=sp.threads[:-1]), 5)
    write_process(tmp_path, sp)
    got = scrape(coll)
    assert coll.last_sched_parsed == 9
    assert_exact(got, "dbw0", sp.threads, exited=(gone,))
    sp = ran(sp, 7)                                     # and found there again next time
    write_process(tmp_path, sp)
    assert_exact(scrape(coll), "dbw0", sp.threads, exited=(gone,))


def test_threads_of_different_tid_widths_in_one_process_stay_exact(tmp_path):
    """TIDs 99995..100004: headers of two lengths alternate within one process, so the place
    remembered from the last thread is wrong for every other one."""
    sp = make_proc(2, 99995, (b"ora_lgwr_BUSY",), b"ora_lgwr_BUSY", ("BUSY", "lgwr"), nthreads=10)
    assert {len(str(t.tid)) for t in sp.threads} == {5, 6}
    write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    scrape(coll)
    for step in (1, 2, 3):
        sp = ran(sp, step)
        write_process(tmp_path, sp)
        got = scrape(coll)
        assert coll.last_sched_parsed == 10
        assert_exact(got, "lgwr", sp.threads)


def test_a_comm_changed_to_another_length_moves_the_rows(tmp_path):
    """A thread renamed (prctl PR_SET_NAME) to a shorter and then a longer comm of up to 15
    bytes, with injection-looking characters: its values are read from the kernel's rows."""
    sp = make_proc(3, 6000, (b"ora_j000_BUSY",), b"ora_j000_BUSY", ("BUSY", "j000"), nthreads=2)
    write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    scrape(coll)
    for step, comm in ((1, b"x"), (2, b":\nse.nr_migrat"), (3, b"ora_j000_BUSY")):
        sp = replace(ran(sp, step), comm=comm)
        write_process(tmp_path, sp)
        assert_exact(scrape(coll), "j000", sp.threads)


def test_busy_scrapes_equal_a_fresh_collector_on_the_same_tree(tmp_path):
    """After several busy scrapes the incremental state gives what a first scrape gives."""
    specs = [make_proc(10 + i, 7000 + 20 * i, (f"ora_p00{i}_BUSY".encode(),), f"ora_p00{i}_BUSY".encode(),
                       ("BUSY", f"p00{i}"), nthreads=1 + i % 4) for i in range(8)]
    for sp in specs:
        write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    scrape(coll)
    for step in (4, 1, 9):
        specs = [ran(sp, step) if i % 3 else sp for i, sp in enumerate(specs)]   # some stay idle
        for sp in specs:
            write_process(tmp_path, sp)
        got = scrape(coll)
        fresh = scrape(ProcessCollector(str(tmp_path)))
        assert {k: v for k, v in got.items() if "dropped" not in k[0]} == \
            {k: v for k, v in fresh.items() if "dropped" not in k[0]}
        for sp in specs:
            assert_exact(got, sp.group[1], sp.threads)


def test_the_last_se_nr_migrations_block_counts_also_where_the_rows_were(tmp_path):
    """A sched file holding the three rows twice (no kernel prints that; a mangled or concatenated
    file): the rows found where the last scrape had them must not win over the later block, the
    one the search from the end and the row-by-row parse read, so the busy path and the slow path
    agree on any input."""
    sp = make_proc(1, 5000, (b"ora_dbw0_BUSY",), b"ora_dbw0_BUSY", ("BUSY", "dbw0"), nthreads=3)
    write_process(tmp_path, sp)
    coll = ProcessCollector(str(tmp_path))
    scrape(coll)
    sp = ran(sp, 3)
    write_process(tmp_path, sp)
    t = sp.threads[1]
    sched = tmp_path / str(sp.pid) / "task" / str(t.tid) / "sched"
    later = (b"%-45s:%21d\n%-45s:%21d\n%-45s:%21d\n"
             % (b"se.nr_migrations", t.migrations + 40, b"nr_voluntary_switches", t.voluntary + 50,
                b"nr_involuntary_switches", t.involuntary + 60))
    sched.write_bytes(sched.read_bytes() + later)
    got = scrape(coll)
    fresh = scrape(ProcessCollector(str(tmp_path)))       # no remembered offset: from the end
    for key in ("dbhost_process_migrations_total", "dbhost_process_context_switches_total"):
        assert {k: v for k, v in got.items() if k[0] == key} == {k: v for k, v in fresh.items() if k[0] == key}
    assert val(got, "dbhost_process_context_switches_total", "dbw0", kind="voluntary") == \
        sum(x.voluntary for x in sp.threads) + 50
