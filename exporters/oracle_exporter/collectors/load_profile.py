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

from exporter_common.declare import Collector, Family

from ..views import SYSSTAT
from ._common import declared_per_instance, emit, inst_stats, sorted_inst

# metric, statistic, scale
COUNTERS: tuple[tuple[str, str, float], ...] = (
    ("oracle_logical_reads_total", "session logical reads", 1.0),
    ("oracle_db_block_changes_total", "db block changes", 1.0),
    ("oracle_physical_reads_total", "physical reads", 1.0),
    ("oracle_physical_writes_total", "physical writes", 1.0),
    ("oracle_physical_read_io_requests_total", "physical read total IO requests", 1.0),
    ("oracle_physical_write_io_requests_total", "physical write total IO requests", 1.0),
    ("oracle_user_calls_total", "user calls", 1.0),
    ("oracle_parses_total", "parse count (total)", 1.0),
    ("oracle_hard_parses_total", "parse count (hard)", 1.0),
    ("oracle_executions_total", "execute count", 1.0),
    ("oracle_user_rollbacks_total", "user rollbacks", 1.0),
    ("oracle_sorted_rows_total", "sorts (rows)", 1.0),
    ("oracle_logons_total", "logons cumulative", 1.0),
    ("oracle_cpu_used_seconds_total", "CPU used by this session", 0.01),
)

SORTS = ("sorts (memory)", "sorts (disk)")
SESSIONS = "logons current"

_INST = ("inst_id",)
SPEC = Collector(
    "load_profile", "Load profile from GV$SYSSTAT: logical and physical I/O, calls, parses, executions, sorts, "
                    "logons (field-notes I3).",
    reads=(SYSSTAT.name,),
    metrics=(
        Family("oracle_logical_reads_total", "counter", "Logical reads, blocks ('session logical reads').", _INST,
               source="'session logical reads'", measure='blocks'),
        Family("oracle_db_block_changes_total", "counter", "Block changes ('db block changes').", _INST,
               source="'db block changes'", measure='changes'),
        Family("oracle_physical_reads_total", "counter", "Physical reads, blocks ('physical reads').", _INST,
               source="'physical reads' (x `oracle_db_block_size_bytes` for bytes)", measure='blocks'),
        Family("oracle_physical_writes_total", "counter", "Physical writes, blocks ('physical writes').", _INST,
               source="'physical writes'", measure='blocks'),
        Family("oracle_physical_read_io_requests_total", "counter",
               "Physical read I/O requests ('physical read total IO requests').", _INST,
               source="'physical read total IO requests' (10.2+)", since="10.2", measure='requests'),
        Family("oracle_physical_write_io_requests_total", "counter",
               "Physical write I/O requests ('physical write total IO requests').", _INST,
               source="'physical write total IO requests' (10.2+)", since="10.2", measure='requests'),
        Family("oracle_user_calls_total", "counter", "User calls ('user calls').", _INST,
               source="'user calls'", measure='calls'),
        Family("oracle_parses_total", "counter", "Parse calls ('parse count (total)').", _INST,
               source="'parse count (total)'", measure='parses'),
        Family("oracle_hard_parses_total", "counter", "Hard parses ('parse count (hard)').", _INST,
               source="'parse count (hard)'", measure='parses'),
        Family("oracle_executions_total", "counter", "SQL executions ('execute count').", _INST,
               source="'execute count'", measure='executions'),
        Family("oracle_user_rollbacks_total", "counter", "User rollbacks ('user rollbacks').", _INST,
               source="'user rollbacks'", measure='rollbacks'),
        Family("oracle_sorted_rows_total", "counter", "Rows sorted ('sorts (rows)').", _INST,
               source="'sorts (rows)'", measure='rows'),
        Family("oracle_logons_total", "counter", "Logons since instance start ('logons cumulative').", _INST,
               source="'logons cumulative'", measure='logons'),
        Family("oracle_cpu_used_seconds_total", "counter",
               "CPU used by sessions, seconds ('CPU used by this session' is centiseconds, posted when a call ends; "
               "oracle_db_cpu_seconds_total is current).", _INST,
               source="'CPU used by this session' (centiseconds) / 100; posted when a call ends (a call on CPU for minutes shows up at its end): prefer `oracle_db_cpu_seconds_total`"),
        Family("oracle_sorts_total", "counter", "Sorts by where they ran ('sorts (memory)', 'sorts (disk)').",
               ("inst_id", "kind"), source="'sorts (memory)', 'sorts (disk)'", measure='sorts', note='Labels: inst_id, kind (`memory`, `disk`).'),
        Family("oracle_sessions", "gauge", "Sessions logged on now ('logons current').", _INST,
               source="'logons current'", measure='sessions'),
    ), doc='Transactions per second = `rate(oracle_user_commits_total) + rate(oracle_user_rollbacks_total)`.', title='Load profile')
NAME, VIEWS = SPEC.name, SPEC.reads

NAMES = {"GV$SYSSTAT": tuple(s for _, s, _ in COUNTERS) + SORTS + (SESSIONS,)}


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    stats = inst_stats(snapshot)
    families = declared_per_instance(SPEC, stats, COUNTERS)
    sorts = SPEC.family("oracle_sorts_total")
    sessions = SPEC.family("oracle_sessions")
    for i in sorted_inst(stats):
        for stat in SORTS:
            if stat in stats[i]:
                sorts.add_metric([i, stat[len("sorts ("):-1]], stats[i][stat])
        if SESSIONS in stats[i]:
            sessions.add_metric([i], stats[i][SESSIONS])
    families += [sorts, sessions]
    yield from emit(families)
