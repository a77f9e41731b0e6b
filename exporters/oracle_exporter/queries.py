"""Every SQL statement the live source can issue.

One statement per view, each selecting plain columns from one GV$ (or V$)
view; all metric logic runs in Python on the rows. tests/oracle/test_sql_catalog.py
parses every statement built here with sqlglot's Oracle dialect and checks
each view and column against the catalog in tests/oracle/data/gv_catalog.yaml,
and docs/oracle-monitoring-user.sql grants SELECT on exactly these views.

Views whose rows would be large are filtered in SQL by name lists
(bind variables), never aggregated: aggregation happens in Python.
Columns, filters and fallbacks of every view come from oracle_exporter.views.
"""
from __future__ import annotations

from . import views

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
SYSMETRIC_GROUP_ID = views.SYSMETRIC_GROUP_ID
Query = views.Query

# The views read, in statement order (GV$EVENT_HISTOGRAM and the PNAME-less GV$PROCESS are
# fallbacks of GV$EVENT_HISTOGRAM_MICRO and GV$PROCESS, see views.py).
PLAN: tuple[views.View, ...] = (
    views.SYSTEM_EVENT, views.EVENT_HISTOGRAM_MICRO, views.SYSSTAT, views.LOG, views.PARAMETER,
    views.PGASTAT, views.LATCH, views.SYSMETRIC, views.INSTANCE, views.DATABASE, views.PROCESS,
)


def names_for(view: views.View, histogram_events: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The names a name-filtered view's statement asks for."""
    if view.filter_column is None:
        return ()
    if view.name in (views.EVENT_HISTOGRAM.name, views.EVENT_HISTOGRAM_MICRO.name):
        return tuple(histogram_events) or ("",)
    return {"GV$SYSSTAT": SYSSTAT_NAMES, "GV$PARAMETER": PARAMETER_NAMES,
            "GV$SYSMETRIC": SYSMETRIC_NAMES}[view.name]


def build_queries(histogram_events: list[str] | tuple[str, ...], use_micro_histogram: bool = True,
                  process_pname: bool = True) -> dict[str, Query]:
    """All statements, keyed by the view name used as the snapshot key.

    ``use_micro_histogram=False`` / ``process_pname=False`` select the fallback statements
    (GV$EVENT_HISTOGRAM; GV$PROCESS by BACKGROUND = '1' with PROGRAM, for a V$PROCESS
    without PNAME, before 11.1)."""
    q: dict[str, Query] = {}
    for view in PLAN:
        if view is views.EVENT_HISTOGRAM_MICRO and not use_micro_histogram:
            view = views.EVENT_HISTOGRAM
        if view is views.PROCESS and not process_pname:
            view = views.PROCESS_BY_PROGRAM
        q[view.name] = view.statement(names_for(view, histogram_events))
    return q
