"""pga, latches, load_profile, host_load and instance collectors, with exact values."""
from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from oracle_sim import BACKGROUND, OracleSim, collect, samples, value

from oracle_exporter.collectors import DEFAULT_LATCHES
from oracle_exporter.snapshot import Snapshot


def snap(views):
    return Snapshot.from_obj({"time": "2024-03-01T12:00:00Z", "database": "d", "views": views})


# --- pga -----------------------------------------------------------------------------

def test_pgastat_values_and_ratio():
    sim = OracleSim()
    fams = collect(sim.snapshot(), names=["pga"])
    assert value(fams, "oracle_pga_target_bytes", inst_id="1") == 4 * 2**30
    assert value(fams, "oracle_pga_allocated_bytes", inst_id="1") == 2 * 2**30
    assert value(fams, "oracle_pga_inuse_bytes", inst_id="1") == 1.5 * 2**30
    assert value(fams, "oracle_pga_max_allocated_bytes", inst_id="1") == 3.5 * 2**30
    assert value(fams, "oracle_pga_cache_hit_ratio", inst_id="1") == pytest.approx(0.9804)
    assert value(fams, "oracle_pga_over_allocation_count_total", inst_id="1") == 0
    assert value(fams, "oracle_pga_aggregate_limit_bytes", inst_id="1") == 8 * 2**30
    # M4: allocated / target
    assert value(fams, "oracle_pga_allocated_bytes", inst_id="1") / value(fams, "oracle_pga_target_bytes",
                                                                          inst_id="1") == 0.5


def test_workarea_executions_and_over_allocation_rates():
    sim = OracleSim()
    a = collect(sim.snapshot(), names=["pga"])
    sim.advance(100, stats={"workarea executions - optimal": 50, "workarea executions - onepass": 2,
                            "workarea executions - multipass": 0.1})
    sim.instances[0].pgastat["over allocation count"] = (7, None)
    b = collect(sim.snapshot(), names=["pga"])
    for kind, per_sec in (("optimal", 50), ("onepass", 2), ("multipass", 0.1)):
        d = value(b, "oracle_pga_workarea_executions_total", inst_id="1", kind=kind) - \
            value(a, "oracle_pga_workarea_executions_total", inst_id="1", kind=kind)
        assert d / 100 == pytest.approx(per_sec)
    assert value(b, "oracle_pga_over_allocation_count_total", inst_id="1") == 7


def test_background_process_pga():
    sim = OracleSim([(1, "A1", "h1", 1), (2, "A2", "h2", 2)])
    fams = collect(sim.snapshot(), names=["pga"])
    k = BACKGROUND.index("LGWR") + 2
    assert value(fams, "oracle_background_process_pga_allocated_bytes", inst_id="2", pname="LGWR") == 2_000_000 * k
    assert value(fams, "oracle_background_process_pga_used_bytes", inst_id="2", pname="LGWR") == 1_000_000 * k
    series = [kk for (n, kk) in samples(fams) if n == "oracle_background_process_pga_allocated_bytes"]
    assert len(series) == 2 * len(BACKGROUND)


# --- latches ---------------------------------------------------------------------------

def test_latch_all_is_the_sum_and_hit_ratio():
    sim = OracleSim()
    a = collect(sim.snapshot(), names=["latches"])
    # I1: 99.5 % hit ratio over all latches: 1,000,000 gets/s, 5,000 misses/s spread over three latches
    sim.advance(60, latches={"cache buffers chains": {"GETS": 600_000, "MISSES": 3_000, "SLEEPS": 30},
                             "shared pool": {"GETS": 300_000, "MISSES": 1_500},
                             "some unlisted latch": {"GETS": 100_000, "MISSES": 500, "WAIT_TIME": 1000}})
    b = collect(sim.snapshot(), names=["latches"])
    rows = sim.record()["views"]["GV$LATCH"]
    assert value(b, "oracle_latch_gets_total", inst_id="1", latch="all") == sum(r["GETS"] for r in rows)
    assert value(b, "oracle_latch_misses_total", inst_id="1", latch="all") == sum(r["MISSES"] for r in rows)

    def d(name, latch):
        return value(b, name, inst_id="1", latch=latch) - value(a, name, inst_id="1", latch=latch)
    assert 1 - d("oracle_latch_misses_total", "all") / d("oracle_latch_gets_total", "all") == pytest.approx(0.995)
    assert d("oracle_latch_gets_total", "cache buffers chains") == 600_000 * 60
    assert d("oracle_latch_sleeps_total", "cache buffers chains") == 30 * 60
    assert d("oracle_latch_wait_time_seconds_total", "all") == pytest.approx(60 * 1000 / 1e6)
    latches = {dict(k)["latch"] for (n, k) in samples(b) if n == "oracle_latch_gets_total"}
    assert "some unlisted latch" not in latches
    assert latches == ({"all"} | set(DEFAULT_LATCHES)) & ({"all"} | {r["NAME"] for r in rows})


def test_configured_latch_list():
    sim = OracleSim()
    fams = collect(sim.snapshot(), SimpleNamespace(histogram_events=[], latches=["redo allocation", "all"]),
                   names=["latches"])
    assert {dict(k)["latch"] for (n, k) in samples(fams) if n == "oracle_latch_misses_total"} == \
        {"all", "redo allocation"}
    for col, metric in (("IMMEDIATE_GETS", "oracle_latch_immediate_gets_total"),
                        ("IMMEDIATE_MISSES", "oracle_latch_immediate_misses_total"),
                        ("SPIN_GETS", "oracle_latch_spin_gets_total")):
        assert value(fams, metric, inst_id="1", latch="redo allocation") == 10_000
        assert value(fams, metric, inst_id="1", latch="all") == 10_000 * 8


def test_latch_nulls():
    fams = collect(snap({"GV$LATCH": [
        {"INST_ID": 1, "NAME": "redo allocation", "GETS": 10, "MISSES": None, "SLEEPS": None,
         "IMMEDIATE_GETS": None, "IMMEDIATE_MISSES": None, "SPIN_GETS": None, "WAIT_TIME": None},
        {"INST_ID": 1, "NAME": "x", "GETS": 5, "MISSES": 1, "SLEEPS": 0, "IMMEDIATE_GETS": 0,
         "IMMEDIATE_MISSES": 0, "SPIN_GETS": 0, "WAIT_TIME": 0}]}), names=["latches"])
    s = samples(fams)
    assert s[("oracle_latch_gets_total", (("inst_id", "1"), ("latch", "all")))] == 15
    assert s[("oracle_latch_misses_total", (("inst_id", "1"), ("latch", "all")))] == 1
    assert ("oracle_latch_misses_total", (("inst_id", "1"), ("latch", "redo allocation"))) not in s


# --- load profile ------------------------------------------------------------------------

def test_load_profile_rates_and_units():
    sim = OracleSim()
    a = collect(sim.snapshot(), names=["load_profile"])
    per_sec = {"session logical reads": 250_000, "db block changes": 40_000, "physical reads": 3_000,
               "physical writes": 800, "user calls": 5_000, "parse count (total)": 1_200, "parse count (hard)": 12,
               "execute count": 9_000, "user rollbacks": 2, "sorts (memory)": 300, "sorts (disk)": 0.5,
               "logons cumulative": 1.5, "DB time": 625, "CPU used by this session": 220}
    sim.advance(60, stats=per_sec)
    b = collect(sim.snapshot(), names=["load_profile"])
    expect = {"oracle_logical_reads_total": 250_000, "oracle_db_block_changes_total": 40_000,
              "oracle_physical_reads_total": 3_000, "oracle_physical_writes_total": 800,
              "oracle_user_calls_total": 5_000, "oracle_parses_total": 1_200, "oracle_hard_parses_total": 12,
              "oracle_executions_total": 9_000, "oracle_user_rollbacks_total": 2, "oracle_logons_total": 1.5,
              "oracle_cpu_used_seconds_total": 2.2}     # centiseconds -> seconds
    for metric, rate in expect.items():
        got = (value(b, metric, inst_id="1") - value(a, metric, inst_id="1")) / 60
        assert got == pytest.approx(rate), metric
    for kind, rate in (("memory", 300), ("disk", 0.5)):
        got = (value(b, "oracle_sorts_total", inst_id="1", kind=kind) -
               value(a, "oracle_sorts_total", inst_id="1", kind=kind)) / 60
        assert got == pytest.approx(rate)
    assert value(b, "oracle_sessions", inst_id="1") == 120


def test_db_time_centiseconds_from_sysstat_only_without_the_time_model():
    """A recording made before the time model collector: DB time from GV$SYSSTAT (centiseconds)."""
    fams = collect(snap({"GV$SYSSTAT": [{"INST_ID": 3, "NAME": "DB time", "VALUE": 123456},
                                        {"INST_ID": 3, "NAME": "CPU used by this session", "VALUE": "789"}]}),
                   names=["load_profile", "time_model"])
    assert value(fams, "oracle_db_time_seconds_total", inst_id="3") == pytest.approx(1234.56)
    assert value(fams, "oracle_cpu_used_seconds_total", inst_id="3") == pytest.approx(7.89)


def test_db_time_and_db_cpu_come_from_the_time_model_while_a_long_call_runs():
    """A call running for minutes: the time model counts its CPU as it goes ('DB CPU'), while
    'CPU used by this session' is posted only when the call ends; GV$SYSSTAT's DB time is
    ignored when the time model is there."""
    def at(db_time_us, db_cpu_us, cpu_used_cs, sysstat_db_time_cs):
        return collect(snap({
            "GV$SYS_TIME_MODEL": [{"INST_ID": 1, "STAT_NAME": "DB time", "VALUE": db_time_us},
                                  {"INST_ID": 1, "STAT_NAME": "DB CPU", "VALUE": db_cpu_us},
                                  {"INST_ID": 1, "STAT_NAME": "background cpu time", "VALUE": 5_000_000},
                                  {"INST_ID": 1, "STAT_NAME": "hard parse elapsed time", "VALUE": 250_000}],
            "GV$SYSSTAT": [{"INST_ID": 1, "NAME": "DB time", "VALUE": sysstat_db_time_cs},
                           {"INST_ID": 1, "NAME": "CPU used by this session", "VALUE": cpu_used_cs}]}),
            names=["load_profile", "time_model"])
    a = at(100_000_000, 60_000_000, 6_000, 10_000)
    b = at(220_000_000, 180_000_000, 6_000, 1)          # 120 s on CPU in one call, still running
    assert value(b, "oracle_db_cpu_seconds_total", inst_id="1") - value(a, "oracle_db_cpu_seconds_total",
                                                                        inst_id="1") == pytest.approx(120)
    assert value(b, "oracle_cpu_used_seconds_total", inst_id="1") == value(a, "oracle_cpu_used_seconds_total",
                                                                           inst_id="1")
    assert value(b, "oracle_db_time_seconds_total", inst_id="1") == pytest.approx(220)
    assert value(b, "oracle_background_cpu_seconds_total", inst_id="1") == pytest.approx(5)
    assert value(b, "oracle_hard_parse_time_seconds_total", inst_id="1") == pytest.approx(0.25)


# --- host load ----------------------------------------------------------------------------

def test_sysmetric_long_duration_group_only():
    rows = [{"INST_ID": 1, "METRIC_NAME": "Current OS Load", "VALUE": 1.2, "METRIC_UNIT": "Number Of Processes",
             "GROUP_ID": 2, "INTSIZE_CSEC": 6001},
            {"INST_ID": 1, "METRIC_NAME": "Current OS Load", "VALUE": 9.9, "METRIC_UNIT": "Number Of Processes",
             "GROUP_ID": 3, "INTSIZE_CSEC": 1500},
            {"INST_ID": 1, "METRIC_NAME": "Host CPU Utilization (%)", "VALUE": 41.5,
             "METRIC_UNIT": "% Busy/(Idle+Busy)", "GROUP_ID": 2, "INTSIZE_CSEC": 6001},
            {"INST_ID": 1, "METRIC_NAME": "Average Active Sessions", "VALUE": None,
             "METRIC_UNIT": "Active Sessions", "GROUP_ID": 2, "INTSIZE_CSEC": 6001}]
    fams = collect(snap({"GV$SYSMETRIC": rows,
                         "GV$SYSTEM_PARAMETER": [{"INST_ID": 1, "NAME": "cpu_count", "VALUE": "12"}]}), names=["host_load"])
    s = samples(fams)
    assert s[("oracle_host_os_load", (("inst_id", "1"),))] == 1.2
    assert s[("oracle_host_cpu_utilization_ratio", (("inst_id", "1"),))] == pytest.approx(0.415)
    assert s[("oracle_cpus", (("inst_id", "1"),))] == 12
    assert not any(n == "oracle_average_active_sessions" for n, _ in s)
    # C1 from Oracle's side: load per CPU
    assert s[("oracle_host_os_load", (("inst_id", "1"),))] / s[("oracle_cpus", (("inst_id", "1"),))] == pytest.approx(0.1)


# --- instance ---------------------------------------------------------------------------

def test_instance_info_start_time_and_background_processes():
    sim = OracleSim([(1, "ODS1", "dbhost1", 1), (2, "ODS2", "dbhost2", 2)], version="19.0.0.0.0")
    fams = collect(sim.snapshot(), names=["instance"])
    s = samples(fams)
    info = [dict(k) for (n, k) in s if n == "oracle_instance_info"]
    # version: VERSION_FULL (18c+: the release update) rather than VERSION (19.0.0.0.0 on every 19c)
    assert info == [
        {"inst_id": "1", "instance_name": "ODS1", "host_name": "dbhost1", "version": "19.21.0.0.0",
         "db_name": "ODS", "db_unique_name": "ODS_SITE1", "database_role": "PRIMARY"},
        {"inst_id": "2", "instance_name": "ODS2", "host_name": "dbhost2", "version": "19.21.0.0.0",
         "db_name": "ODS", "db_unique_name": "ODS_SITE1", "database_role": "PRIMARY"}]
    expected_start = dt.datetime(2024, 3, 1, 6, 0, tzinfo=dt.timezone.utc).timestamp()
    assert value(fams, "oracle_instance_start_time_seconds", inst_id="1") == expected_start
    k = BACKGROUND.index("LGWR") + 2
    assert value(fams, "oracle_background_process_info", inst_id="1", pname="LGWR", spid=str(4100 + k)) == 1
    assert len([1 for (n, _) in s if n == "oracle_background_process_info"]) == 2 * len(BACKGROUND)
    assert value(fams, "oracle_db_block_size_bytes", inst_id="2") == 8192
    assert value(fams, "oracle_database_info", dbid="1234567890", db_name="ODS", db_unique_name="ODS_SITE1",
                 database_role="PRIMARY", log_mode="ARCHIVELOG", open_mode="READ WRITE") == 1


def test_instance_accepts_gv_database_and_tolerates_nulls():
    fams = collect(snap({
        "GV$INSTANCE": [{"INST_ID": 1, "INSTANCE_NUMBER": 1, "INSTANCE_NAME": "X1", "HOST_NAME": None,
                         "VERSION": "12.2.0.1.0", "STARTUP_TIME": None, "STATUS": "OPEN", "THREAD#": 1}],
        "GV$DATABASE": [{"INST_ID": 1, "DBID": 1, "NAME": "X", "DB_UNIQUE_NAME": "X_B",
                         "DATABASE_ROLE": "PHYSICAL STANDBY", "LOG_MODE": "ARCHIVELOG", "OPEN_MODE": "MOUNTED"}],
        "GV$PROCESS": [{"INST_ID": 1, "PID": 1, "SPID": None, "PNAME": None, "PGA_USED_MEM": 1,
                        "PGA_ALLOC_MEM": 1, "PGA_MAX_MEM": 1}]}), names=["instance"])
    s = samples(fams)
    assert [dict(k) for (n, k) in s if n == "oracle_instance_info"] == [
        {"inst_id": "1", "instance_name": "X1", "host_name": "", "version": "12.2.0.1.0", "db_name": "X",
         "db_unique_name": "X_B", "database_role": "PHYSICAL STANDBY"}]
    assert not any(n in ("oracle_instance_start_time_seconds", "oracle_background_process_info") for n, _ in s)


def test_start_time_with_offset():
    fams = collect(snap({"GV$INSTANCE": [{"INST_ID": 1, "INSTANCE_NAME": "X1", "STARTUP_TIME":
                                          "2024-03-01T08:00:00+02:00"}]}), names=["instance"])
    assert value(fams, "oracle_instance_start_time_seconds", inst_id="1") == \
        dt.datetime(2024, 3, 1, 6, 0, tzinfo=dt.timezone.utc).timestamp()


@pytest.mark.parametrize("collector, view, column", [
    ("wait_events", "GV$SYSTEM_EVENT", "TOTAL_TIMEOUTS"),
    ("wait_events", "GV$SYSTEM_EVENT", "WAIT_CLASS"),
    ("wait_events", "GV$EVENT_HISTOGRAM_MICRO", "WAIT_COUNT"),
    ("latches", "GV$LATCH", "WAIT_TIME"),
    ("pga", "GV$PROCESS", "PGA_MAX_MEM"),
])
def test_a_column_missing_from_some_rows_reads_as_null(collector, view, column):
    """Collectors read a row's columns in one call when every row has them all; a recording (or
    release) whose rows lack a column for some rows must give exactly what NULL in that column
    gives: the other series stay, nothing raises."""
    sim = OracleSim()
    sim.advance(60, events={"log file sync": (100.0, 0.002), "db file sequential read": (50.0, 0.004),
                            "latch free": (3.0, 0.001)})
    raw = sim.snapshot()
    views = {name: [dict(r) for r in rows] for name, rows in raw.views.items()}
    assert len(views[view]) > 1 and all(column in r for r in views[view])
    nulled = {**views, view: [{**r, column: None} if n % 2 else r for n, r in enumerate(views[view])]}
    missing = {**views, view: [{k: v for k, v in r.items() if k != column} if n % 2 else r
                               for n, r in enumerate(views[view])]}
    want = samples(collect(Snapshot.from_obj({"time": raw.time, "database": "d", "views": nulled}), names=[collector]))
    got = samples(collect(Snapshot.from_obj({"time": raw.time, "database": "d", "views": missing}), names=[collector]))
    assert got == want and len(got) > 3
