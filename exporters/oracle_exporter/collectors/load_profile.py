"""Load profile (field-notes I3) from GV$SYSSTAT counters.

'physical reads'/'physical writes' count blocks (multiply by db_block_size,
exposed by the instance collector, for bytes); 'CPU used by this session' is
centiseconds, exposed in seconds, and is posted when a call ends (DB time and
DB CPU come from the time model: collectors/time_model.py). User commits are
exposed by the redo collector.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from ._common import by_inst_name, counter, emit, gauge, per_instance, sorted_inst

NAME = "load_profile"
VIEWS = ("GV$SYSSTAT",)

# metric, help, statistic, scale
COUNTERS: tuple[tuple[str, str, str, float], ...] = (
    ("oracle_logical_reads_total", "Logical reads, blocks ('session logical reads').", "session logical reads", 1.0),
    ("oracle_db_block_changes_total", "Block changes ('db block changes').", "db block changes", 1.0),
    ("oracle_physical_reads_total", "Physical reads, blocks ('physical reads').", "physical reads", 1.0),
    ("oracle_physical_writes_total", "Physical writes, blocks ('physical writes').", "physical writes", 1.0),
    ("oracle_physical_read_io_requests_total", "Physical read I/O requests ('physical read total IO requests').",
     "physical read total IO requests", 1.0),
    ("oracle_physical_write_io_requests_total", "Physical write I/O requests ('physical write total IO requests').",
     "physical write total IO requests", 1.0),
    ("oracle_user_calls_total", "User calls ('user calls').", "user calls", 1.0),
    ("oracle_parses_total", "Parse calls ('parse count (total)').", "parse count (total)", 1.0),
    ("oracle_hard_parses_total", "Hard parses ('parse count (hard)').", "parse count (hard)", 1.0),
    ("oracle_executions_total", "SQL executions ('execute count').", "execute count", 1.0),
    ("oracle_user_rollbacks_total", "User rollbacks ('user rollbacks').", "user rollbacks", 1.0),
    ("oracle_sorted_rows_total", "Rows sorted ('sorts (rows)').", "sorts (rows)", 1.0),
    ("oracle_logons_total", "Logons since instance start ('logons cumulative').", "logons cumulative", 1.0),
    ("oracle_cpu_used_seconds_total", "CPU used by sessions, seconds ('CPU used by this session' is centiseconds, "
                                      "posted when a call ends; oracle_db_cpu_seconds_total is current).",
     "CPU used by this session", 0.01),
)

SORTS = ("sorts (memory)", "sorts (disk)")
SESSIONS = "logons current"

NAMES = {"GV$SYSSTAT": tuple(s for _, _, s, _ in COUNTERS) + SORTS + (SESSIONS,)}


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    stats = by_inst_name(snapshot.rows("GV$SYSSTAT"))
    families = per_instance(stats, COUNTERS)
    sorts = counter("oracle_sorts_total", "Sorts by where they ran ('sorts (memory)', 'sorts (disk)').",
                    ["inst_id", "kind"])
    sessions = gauge("oracle_sessions", "Sessions logged on now ('logons current').", ["inst_id"])
    for i in sorted_inst(stats):
        for stat in SORTS:
            if stat in stats[i]:
                sorts.add_metric([i, stat[len("sorts ("):-1]], stats[i][stat])
        if SESSIONS in stats[i]:
            sessions.add_metric([i], stats[i][SESSIONS])
    families += [sorts, sessions]
    yield from emit(families)
