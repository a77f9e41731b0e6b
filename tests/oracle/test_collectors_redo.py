"""redo collector: redo profile rates, centisecond/usec units, log switches per thread, groups."""
from __future__ import annotations


import pytest

from oracle_sim import OracleSim, collect, samples, value

from oracle_exporter.snapshot import Snapshot

# field-notes section 1, workload profile, "before" and "after" columns (per second)
BEFORE = {"user commits": 72, "commit wait requested": 72, "commit wait performed": 72, "redo entries": 13326,
          "redo size": 9.45e6, "redo synch writes": 72, "redo writes": 74, "redo buffer allocation retries": 3.8,
          "redo log space requests": 1}
AFTER = {"user commits": 520, "commit wait requested": 520, "commit wait performed": 520, "redo entries": 14677,
         "redo size": 10.1e6, "redo synch writes": 520, "redo writes": 845, "redo buffer allocation retries": 0,
         "redo log space requests": 0}
METRIC = {"user commits": "oracle_user_commits_total", "commit wait requested": "oracle_commit_wait_requested_total",
          "commit wait performed": "oracle_commit_wait_performed_total", "redo entries": "oracle_redo_entries_total",
          "redo size": "oracle_redo_size_bytes_total", "redo synch writes": "oracle_redo_synch_writes_total",
          "redo writes": "oracle_redo_writes_total",
          "redo buffer allocation retries": "oracle_redo_buffer_allocation_retries_total",
          "redo log space requests": "oracle_redo_log_space_requests_total"}


@pytest.mark.parametrize("profile", [BEFORE, AFTER], ids=["before", "after"])
def test_redo_profile_rates(profile):
    sim = OracleSim()
    a = collect(sim.snapshot(), names=["redo"])
    sim.advance(300, stats=profile)
    b = collect(sim.snapshot(), names=["redo"])
    for stat, per_sec in profile.items():
        got = (value(b, METRIC[stat], inst_id="1") - value(a, METRIC[stat], inst_id="1")) / 300
        assert got == pytest.approx(per_sec, abs=1 / 300), stat


def stat_snapshot(stats: dict[str, float]) -> Snapshot:
    return Snapshot.from_obj({"time": "2024-03-01T12:00:00Z", "database": "d", "views": {
        "GV$SYSSTAT": [{"INST_ID": 1, "NAME": k, "VALUE": v} for k, v in stats.items()]}})


def test_centisecond_statistics_come_out_in_seconds():
    fams = collect(stat_snapshot({"redo write time": 12345, "redo synch time": 2700,
                                  "redo log space wait time": 12}), names=["redo"])
    assert value(fams, "oracle_redo_write_time_seconds_total", inst_id="1") == pytest.approx(123.45)
    assert value(fams, "oracle_redo_synch_time_seconds_total", inst_id="1") == pytest.approx(27.0)
    assert value(fams, "oracle_redo_log_space_wait_time_seconds_total", inst_id="1") == pytest.approx(0.12)


def test_usec_variants_are_preferred():
    fams = collect(stat_snapshot({"redo write time": 12345, "redo write time (usec)": 123456789,
                                  "redo synch time": 2700, "redo synch time (usec)": 27001234}), names=["redo"])
    assert value(fams, "oracle_redo_write_time_seconds_total", inst_id="1") == pytest.approx(123.456789)
    assert value(fams, "oracle_redo_synch_time_seconds_total", inst_id="1") == pytest.approx(27.001234)


def test_r8_r9_derived_times_from_usec_counters():
    """redo synch time / redo synch writes with R2-like numbers: 72 syncs/s of 26.45 ms."""
    sim = OracleSim()
    a = collect(sim.snapshot(), names=["redo"])
    sim.advance(60, stats={"redo synch writes": 72, "redo synch time (usec)": 72 * 26450,
                           "redo writes": 74, "redo write time (usec)": 74 * 11800})
    b = collect(sim.snapshot(), names=["redo"])

    def d(name):
        return value(b, name, inst_id="1") - value(a, name, inst_id="1")
    assert d("oracle_redo_synch_time_seconds_total") / d("oracle_redo_synch_writes_total") == pytest.approx(0.02645)
    assert d("oracle_redo_write_time_seconds_total") / d("oracle_redo_writes_total") == pytest.approx(0.0118)


def test_log_switches_per_thread_on_two_instance_rac():
    # instance 1 opened thread 2 and instance 2 thread 1: the label must follow GV$INSTANCE.THREAD#
    sim = OracleSim([(1, "ODS1", "h1", 2), (2, "ODS2", "h2", 1)])
    a = collect(sim.snapshot(), names=["redo"])
    rec = sim.record()
    assert len(rec["views"]["GV$LOG"]) == 2 * 6        # 6 groups, returned by both instances
    sim.advance(3600, switches={2: 60, 1: 8})           # R15: once a minute vs every ~7 minutes
    b = collect(sim.snapshot(), names=["redo"])
    inc = {i: value(b, "oracle_redo_log_switches_total", inst_id=i) - value(a, "oracle_redo_log_switches_total",
                                                                             inst_id=i) for i in ("1", "2")}
    assert inc == {"1": 60, "2": 8}
    assert 3600 / inc["2"] == 450                       # switch interval seconds
    series = [k for (n, k) in samples(b) if n == "oracle_redo_log_switches_total"]
    assert len(series) == 2                             # deduplicated despite the replicated rows


def test_log_switch_counter_is_the_current_sequence():
    sim = OracleSim()
    sim.advance(60, switches={1: 5})
    snap = sim.snapshot()
    current = [r["SEQUENCE#"] for r in snap.rows("GV$LOG") if r["STATUS"] == "CURRENT"]
    assert current == [1002 + 5]
    assert value(collect(snap, names=["redo"]), "oracle_redo_log_switches_total", inst_id="1") == 1007


def test_redo_groups_size_members_status():
    sim = OracleSim([(1, "ODS1", "h1", 1), (2, "ODS2", "h2", 2)], log_bytes=8 * 2**30)
    sim.advance(60, switches={1: 1})
    s = samples(collect(sim.snapshot(), names=["redo"]))
    sizes = {(dict(k)["inst_id"], dict(k)["group"], dict(k)["thread"]): v for (n, k), v in s.items()
             if n == "oracle_redo_log_group_size_bytes"}
    assert sizes == {("1", "1", "1"): 8 * 2**30, ("1", "2", "1"): 8 * 2**30, ("1", "3", "1"): 8 * 2**30,
                     ("2", "4", "2"): 8 * 2**30, ("2", "5", "2"): 8 * 2**30, ("2", "6", "2"): 8 * 2**30}
    assert all(v == 2 for (n, _), v in s.items() if n == "oracle_redo_log_group_members")
    status = {}
    for (n, k), v in s.items():
        if n == "oracle_redo_log_group_status":
            d = dict(k)
            status.setdefault(d["group"], {})[d["status"]] = v
    for group, states in status.items():
        assert set(states) == {"UNUSED", "CURRENT", "ACTIVE", "INACTIVE", "CLEARING", "CLEARING_CURRENT",
                               "INVALIDATED"}
        assert sum(states.values()) == 1, group
    assert {g for g, st in status.items() if st["CURRENT"] == 1} == {"1", "6"}   # thread 1 switched 3 -> 1
    assert status["3"]["ACTIVE"] == 1
    assert s[("oracle_redo_log_group_archived", (("group", "3"), ("inst_id", "1"), ("thread", "1")))] == 0


def test_unknown_log_status_is_folded_into_other():
    snap = Snapshot.from_obj({"time": "t", "database": "d", "views": {
        "GV$INSTANCE": [{"INST_ID": 1, "THREAD#": 1}],
        "GV$LOG": [{"INST_ID": 1, "GROUP#": 1, "THREAD#": 1, "SEQUENCE#": 9, "BYTES": 1, "MEMBERS": 1,
                    "ARCHIVED": "NO", "STATUS": "SOMETHING NEW"}]}})
    st = {dict(k)["status"]: v for (n, k), v in samples(collect(snap, names=["redo"])).items()
          if n == "oracle_redo_log_group_status"}
    assert st["OTHER"] == 1 and sum(st.values()) == 1


def test_log_buffer_parameter_string_value():
    sim = OracleSim()
    sim.instances[0].params["log_buffer"] = "75497472"      # R16: 72 MB
    assert value(collect(sim.snapshot(), names=["redo"]), "oracle_log_buffer_bytes", inst_id="1") == 72 * 2**20


def test_missing_views_and_nulls():
    snap = Snapshot.from_obj({"time": "t", "database": "d", "views": {
        "GV$SYSSTAT": [{"INST_ID": 1, "NAME": "redo size", "VALUE": None},
                       {"INST_ID": 1, "NAME": "redo writes", "VALUE": 5}],
        "GV$LOG": [{"INST_ID": 1, "GROUP#": 1, "THREAD#": 1, "SEQUENCE#": None, "BYTES": None, "MEMBERS": None,
                    "ARCHIVED": None, "STATUS": None}]}})
    s = samples(collect(snap, names=["redo"]))
    assert s == {("oracle_redo_writes_total", (("inst_id", "1"),)): 5}
