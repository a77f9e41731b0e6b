"""DB time and DB CPU from the time model (GV$SYS_TIME_MODEL, microseconds).

GV$SYSSTAT's 'CPU used by this session' is posted when a call ends, so a call that runs
for minutes shows its CPU in one lump at the end (and a hung call never); the time model
is updated while a call runs (at most 5 s of an operation's time is buffered, Database
Reference, V$SYS_TIME_MODEL). So DB time and DB CPU come from here:

* ``oracle_db_time_seconds_total{inst_id}``: 'DB time' (foreground time in calls; its rate
  is the average active sessions);
* ``oracle_db_cpu_seconds_total{inst_id}``: 'DB CPU' (foreground CPU);
* ``oracle_background_cpu_seconds_total{inst_id}``: 'background cpu time';
* ``oracle_parse_time_seconds_total{inst_id}`` / ``oracle_hard_parse_time_seconds_total``:
  'parse time elapsed' / 'hard parse elapsed time'.

A recording without GV$SYS_TIME_MODEL (made before this collector existed) gives DB time
from GV$SYSSTAT 'DB time' (centiseconds) instead. In CDB$ROOT the view holds the whole
instance (CON_ID 0); inside a PDB it would hold that PDB's share, so the live source does
not read it there (sources.live.PDB_REFUSED; per-PDB time: the ``pdb`` collector).
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import SYSSTAT, TIME_MODEL
from ._common import by_inst_name, declared_per_instance, emit, inst_stats

# metric, STAT_NAME, scale (microseconds -> seconds)
STATS: tuple[tuple[str, str, float], ...] = (
    ("oracle_db_time_seconds_total", "DB time", 1e-6),
    ("oracle_db_cpu_seconds_total", "DB CPU", 1e-6),
    ("oracle_background_cpu_seconds_total", "background cpu time", 1e-6),
    ("oracle_parse_time_seconds_total", "parse time elapsed", 1e-6),
    ("oracle_hard_parse_time_seconds_total", "hard parse elapsed time", 1e-6),
)
SYSSTAT_DB_TIME = "DB time"    # centiseconds: the fallback of a recording without the time model

_INST = ("inst_id",)
SPEC = Collector(
    "time_model", "DB time, DB CPU, background CPU and parse times from the time model (GV$SYS_TIME_MODEL).",
    reads=(TIME_MODEL.name, SYSSTAT.name),
    metrics=(
        Family("oracle_db_time_seconds_total", "counter",
               "DB time, seconds (GV$SYS_TIME_MODEL 'DB time'); its rate is the average active sessions.", _INST,
               source="'DB time' (microseconds) / 1e6; its rate is the average active sessions"),
        Family("oracle_db_cpu_seconds_total", "counter",
               "Foreground CPU in calls, seconds (GV$SYS_TIME_MODEL 'DB CPU', updated while a call runs).", _INST,
               source="'DB CPU': foreground CPU in calls", views=(TIME_MODEL.name,)),
        Family("oracle_background_cpu_seconds_total", "counter",
               "CPU of background processes, seconds (GV$SYS_TIME_MODEL 'background cpu time').", _INST,
               source="'background cpu time'", views=(TIME_MODEL.name,)),
        Family("oracle_parse_time_seconds_total", "counter",
               "Time spent parsing, seconds (GV$SYS_TIME_MODEL 'parse time elapsed').", _INST,
               source="'parse time elapsed'", views=(TIME_MODEL.name,)),
        Family("oracle_hard_parse_time_seconds_total", "counter",
               "Time spent hard parsing, seconds (GV$SYS_TIME_MODEL 'hard parse elapsed time').", _INST,
               source="'hard parse elapsed time'", views=(TIME_MODEL.name,)),
    ), doc="Updated while a call runs (at most 5 s of an operation's time is buffered), unlike GV$SYSSTAT's 'CPU used by this session'. In CDB$ROOT the view holds the whole instance (CON_ID 0); connected to a PDB it is not read (it would hold that PDB's share; see the `pdb` collector). A recording without GV$SYS_TIME_MODEL gives `oracle_db_time_seconds_total` from GV$SYSSTAT 'DB time' (centiseconds).", title='Time model')
NAME, VIEWS = SPEC.name, SPEC.reads
NAMES = {TIME_MODEL.name: tuple(s for _, s, _ in STATS), "GV$SYSSTAT": (SYSSTAT_DB_TIME,)}


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    values = by_inst_name(snapshot.rows(TIME_MODEL.name), "STAT_NAME")
    if not values:
        sysstat = inst_stats(snapshot)
        values = {i: {"DB time": v[SYSSTAT_DB_TIME] * 1e4} for i, v in sysstat.items() if SYSSTAT_DB_TIME in v}
    yield from emit(declared_per_instance(SPEC, values, STATS))
