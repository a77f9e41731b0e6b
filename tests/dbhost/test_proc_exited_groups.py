"""Issue 26: groups whose processes all exited. They stay exported for a bounded time
(process.exited_group_seconds, default 10 min: a restart of the instance keeps its counters
monotonic), then leave; under the series cap they never take the place of live groups (before:
every exited group was kept for ever and, once the cap was reached, 0 of 40 new live groups got
a series), and the exporter's table of exited groups does not grow without bound."""
from __future__ import annotations

import shutil

from fixtures_proc import build_proc_tree, make_proc, remove_process, write_process

from dbhost_exporter.collectors.process import SERIES_PER_GROUP, ProcessCollector
from dbhost_exporter.config import load_config


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def scrape(coll):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in coll.collect() for s in f.samples}


def groups_in(got):
    return {(dict(lb)["sid"], dict(lb)["role"]) for (n, lb) in got if n == "dbhost_process_threads"}


def foreground(i, sid):
    return make_proc(100 + i, 20000 + i, (f"oracle{sid}".encode(), b"(LOCAL=NO)"), f"oracle{sid}"[:15].encode(),
                     (sid, "foreground"))


def test_an_exited_group_stays_for_the_configured_time_then_leaves(tmp_path):
    root = tmp_path / "proc"
    build_proc_tree(root)
    clock = Clock()
    coll = ProcessCollector(str(root), exited_group_seconds=600, clock=clock)
    before = scrape(coll)
    key = ("dbhost_process_cpu_seconds_total", (("mode", "user"), ("role", "lgwr"), ("sid", "ORCL")))
    remove_process(root, 2107)                      # ORCL's LGWR exits (instance shut down)
    clock.t += 599
    got = scrape(coll)
    assert got[key] == before[key]                  # frozen at what it counted, still there
    assert got[("dbhost_process_processes", (("role", "lgwr"), ("sid", "ORCL")))] == 0
    clock.t += 2
    got = scrape(coll)
    assert ("ORCL", "lgwr") not in groups_in(got) and key not in got
    assert ("ORCL", "lgwr") not in coll._dead and ("ORCL", "lgwr") not in coll._last_live
    assert ("ORCL", "pmon") in groups_in(got)       # the live groups are untouched


def test_a_group_that_comes_back_in_time_keeps_counting(tmp_path):
    root = tmp_path / "proc"
    sp = foreground(1, "CDB1")
    write_process(root, sp)
    clock = Clock()
    coll = ProcessCollector(str(root), exited_group_seconds=600, clock=clock)
    first = scrape(coll)
    key = ("dbhost_process_context_switches_total", (("kind", "voluntary"), ("role", "foreground"), ("sid", "CDB1")))
    remove_process(root, sp.pid)
    clock.t += 300
    scrape(coll)
    write_process(root, foreground(2, "CDB1"))
    clock.t += 400                                  # 700 s after the first exit, back after 300 s
    got = scrape(coll)
    assert got[key] == first[key] + foreground(2, "CDB1").threads[0].voluntary


def test_exited_groups_never_crowd_out_live_ones_under_the_cap(tmp_path):
    root = tmp_path / "proc"
    root.mkdir()
    old = [foreground(i, f"OLD{i:02d}") for i in range(40)]
    for sp in old:
        write_process(root, sp)
    clock = Clock()
    coll = ProcessCollector(str(root), max_series=40 * SERIES_PER_GROUP, clock=clock)
    assert len(groups_in(scrape(coll))) == 40      # the cap is full
    for sp in old:                                  # 40 databases moved away...
        shutil.rmtree(root / str(sp.pid))
    new = [foreground(100 + i, f"NEW{i:02d}") for i in range(40)]
    for sp in new:                                  # ... and 40 others arrived
        write_process(root, sp)
    clock.t += 60
    got = scrape(coll)
    assert groups_in(got) == {(f"NEW{i:02d}", "foreground") for i in range(40)}
    assert got[("dbhost_process_dropped_series_total", ())] == 40 * SERIES_PER_GROUP
    # with room to spare, exited groups are shown next to the live ones
    coll.max_series = 80 * SERIES_PER_GROUP
    assert len(groups_in(scrape(coll))) == 80
    clock.t += 600
    got = scrape(coll)
    assert len(groups_in(got)) == 40 and len(coll._dead) == 0    # the table of exited groups is bounded


def test_the_setting_is_declared_and_read_from_the_config(tmp_path):
    cfg = tmp_path / "c.yml"
    cfg.write_text("process:\n  exited_group_seconds: 120\n")
    from dbhost_exporter.collectors import process

    coll = process.create(load_config(str(cfg)), str(tmp_path), str(tmp_path))
    assert coll.exited_group_seconds == 120
    assert process.create(load_config(None), str(tmp_path), str(tmp_path)).exited_group_seconds == 600
