"""Every SQL statement the live source can issue.

One statement per view, each selecting plain columns from one GV$ (or V$)
view; all metric logic runs in Python on the rows. tests/oracle/test_sql_catalog.py
parses every statement built here with sqlglot's Oracle dialect and checks
each view and column against the catalog in tests/oracle/data/gv_catalog.yaml,
and docs/oracle-monitoring-user.sql grants SELECT on exactly these views.

Views whose rows would be large are filtered in SQL by name lists
(bind variables), never aggregated: aggregation happens in Python.
"""
from __future__ import annotations

from dataclasses import dataclass

# GV$SYSSTAT statistics the collectors read (redo profile, load profile, work areas).
SYSSTAT_NAMES: tuple[str, ...] = (
    # redo / LGWR (field-notes section 1)
    "redo size", "redo entries", "redo writes", "redo write time", "redo write time (usec)",
    "redo synch writes", "redo synch time", "redo synch time (usec)",
    "redo buffer allocation retries", "redo log space requests", "redo log space wait time",
    "redo wastage", "redo blocks written", "redo write size count (   4KB)",
    "user commits", "user rollbacks", "commit wait requested", "commit wait performed",
    # load profile (field-notes I3)
    "session logical reads", "db block changes", "physical reads", "physical writes",
    "physical read total IO requests", "physical write total IO requests",
    "user calls", "parse count (total)", "parse count (hard)", "execute count",
    "sorts (memory)", "sorts (disk)", "sorts (rows)", "logons cumulative", "logons current",
    "DB time", "CPU used by this session",
    # PGA work areas (M4)
    "workarea executions - optimal", "workarea executions - onepass", "workarea executions - multipass",
)

# GV$PARAMETER rows the collectors read.
PARAMETER_NAMES: tuple[str, ...] = (
    "log_buffer", "pga_aggregate_target", "pga_aggregate_limit", "sga_target", "cpu_count",
    "db_block_size",
)

# GV$SYSMETRIC rows (60-second group, GROUP_ID 2).
SYSMETRIC_NAMES: tuple[str, ...] = (
    "Current OS Load", "Host CPU Utilization (%)", "Average Active Sessions",
    "Database CPU Time Ratio", "Database Wait Time Ratio",
)
SYSMETRIC_GROUP_ID = 2  # "System Metrics Long Duration", 60-second interval


@dataclass(frozen=True)
class Query:
    view: str
    sql: str
    binds: dict[str, object]


def _in_list(prefix: str, values: tuple[str, ...] | list[str]) -> tuple[str, dict[str, object]]:
    names = [f":{prefix}{i}" for i in range(len(values))]
    return ", ".join(names), {f"{prefix}{i}": v for i, v in enumerate(values)}


def build_queries(histogram_events: list[str] | tuple[str, ...], use_micro_histogram: bool = True,
                  process_pname: bool = True) -> dict[str, Query]:
    """All statements, keyed by the view name used as the snapshot key.

    ``process_pname=False`` is the GV$PROCESS statement for a database whose
    V$PROCESS has no PNAME column (ORA-00904; PNAME is documented from 11.1,
    10.2 lacks it): background processes are selected by BACKGROUND = '1' and
    their name is read from PROGRAM ("oracle@host (LGWR)") by oracle_exporter.rows."""
    q: dict[str, Query] = {}

    def add(view: str, sql: str, binds: dict[str, object] | None = None) -> None:
        q[view] = Query(view, " ".join(sql.split()), binds or {})

    add("GV$SYSTEM_EVENT",
        "SELECT INST_ID, EVENT, WAIT_CLASS, TOTAL_WAITS, TOTAL_TIMEOUTS, TIME_WAITED_MICRO FROM GV$SYSTEM_EVENT")
    events, ebinds = _in_list("e", list(histogram_events) or [""])
    if use_micro_histogram:
        add("GV$EVENT_HISTOGRAM_MICRO",
            f"SELECT INST_ID, EVENT, WAIT_TIME_MICRO, WAIT_COUNT FROM GV$EVENT_HISTOGRAM_MICRO WHERE EVENT IN ({events})",
            ebinds)
    else:
        add("GV$EVENT_HISTOGRAM",
            f"SELECT INST_ID, EVENT, WAIT_TIME_MILLI, WAIT_COUNT FROM GV$EVENT_HISTOGRAM WHERE EVENT IN ({events})",
            ebinds)
    stats, sbinds = _in_list("s", SYSSTAT_NAMES)
    add("GV$SYSSTAT", f"SELECT INST_ID, NAME, VALUE FROM GV$SYSSTAT WHERE NAME IN ({stats})", sbinds)
    add("GV$LOG", "SELECT INST_ID, GROUP#, THREAD#, SEQUENCE#, BYTES, MEMBERS, ARCHIVED, STATUS FROM GV$LOG")
    params, pbinds = _in_list("p", PARAMETER_NAMES)
    add("GV$PARAMETER", f"SELECT INST_ID, NAME, VALUE FROM GV$PARAMETER WHERE NAME IN ({params})", pbinds)
    add("GV$PGASTAT", "SELECT INST_ID, NAME, VALUE, UNIT FROM GV$PGASTAT")
    add("GV$LATCH",
        "SELECT INST_ID, NAME, GETS, MISSES, SLEEPS, IMMEDIATE_GETS, IMMEDIATE_MISSES, SPIN_GETS, WAIT_TIME FROM GV$LATCH")
    metrics, mbinds = _in_list("m", SYSMETRIC_NAMES)
    mbinds["grp"] = SYSMETRIC_GROUP_ID
    add("GV$SYSMETRIC",
        f"SELECT INST_ID, METRIC_NAME, VALUE, METRIC_UNIT, GROUP_ID, INTSIZE_CSEC FROM GV$SYSMETRIC "
        f"WHERE GROUP_ID = :grp AND METRIC_NAME IN ({metrics})", mbinds)
    add("GV$INSTANCE",
        "SELECT INST_ID, INSTANCE_NUMBER, INSTANCE_NAME, HOST_NAME, VERSION, STARTUP_TIME, STATUS, THREAD# FROM GV$INSTANCE")
    add("V$DATABASE", "SELECT DBID, NAME, DB_UNIQUE_NAME, DATABASE_ROLE, LOG_MODE, OPEN_MODE FROM V$DATABASE")
    if process_pname:
        add("GV$PROCESS",
            "SELECT INST_ID, PID, SPID, PNAME, PGA_USED_MEM, PGA_ALLOC_MEM, PGA_MAX_MEM FROM GV$PROCESS "
            "WHERE PNAME IS NOT NULL")
    else:
        add("GV$PROCESS",
            "SELECT INST_ID, PID, SPID, PROGRAM, BACKGROUND, PGA_USED_MEM, PGA_ALLOC_MEM, PGA_MAX_MEM FROM GV$PROCESS "
            "WHERE BACKGROUND = '1'")
    return q
