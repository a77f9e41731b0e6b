"""Instance and database identity, start time, background processes.

oracle_instance_info joins Oracle metrics with host metrics: its
``instance_name`` equals dbhost-exporter's ``sid``. V$DATABASE (one row)
gives the database names and role; a recording may carry GV$DATABASE
instead, which is accepted too. oracle_background_process_info maps each
background process (PNAME) to its OS pid (SPID) for the join with
per-process host metrics.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family
from exporter_common.families import add_rows

from ..views import DATABASE, INSTANCE, PARAMETER, PROCESS
from ._common import declared_parameter, emit, inst, num, parse_time, text
from ._health import host_utc_offset, local_to_unix

INFO_LABELS = ("inst_id", "instance_name", "host_name", "version", "db_name", "db_unique_name", "database_role")

# GV$SYSTEM_PARAMETER name -> metric
PARAMETERS: tuple[tuple[str, str], ...] = (
    ("sga_target", "oracle_sga_target_bytes"),
    ("db_block_size", "oracle_db_block_size_bytes"),
)

_INST = ("inst_id",)
SPEC = Collector(
    "instance", "Instance and database identity, start time, background processes, SGA target and block size.",
    reads=(INSTANCE.name, DATABASE.name, PROCESS.name, PARAMETER.name),
    metrics=(
        Family("oracle_instance_info", "gauge", "Instance identity, value 1 (GV$INSTANCE, V$DATABASE).", INFO_LABELS,
               source="GV$INSTANCE (INSTANCE_NAME, HOST_NAME, `version` = VERSION_FULL (18c+, e.g. 19.21.0.0.0) else VERSION, which reads 19.0.0.0.0 on every 19c), V$DATABASE (NAME, DB_UNIQUE_NAME 10.1+, DATABASE_ROLE); GV$DATABASE accepted in recordings. `instance_name` = dbhost-exporter's `sid`",
               note="instance_name is dbhost-exporter's sid.", measure='1', views=(INSTANCE.name, DATABASE.name)),
        Family("oracle_instance_start_time_seconds", "gauge",
               "Instance start time, Unix seconds (GV$INSTANCE.STARTUP_TIME, a host-local DATE, converted "
               "with the database host's UTC offset from SYSTIMESTAMP).", _INST,
               source="GV$INSTANCE.STARTUP_TIME: a DATE, the database host's wall clock, converted with the host's UTC offset from `SYSTIMESTAMP` (read once per fetch, recording key `DUAL`); true Unix time east and west of UTC. A recording without the `DUAL` row: taken as UTC", measure='Unix seconds', views=(INSTANCE.name,)),
        Family("oracle_database_info", "gauge", "Database identity and modes, value 1 (V$DATABASE).",
               ("dbid", "db_name", "db_unique_name", "database_role", "log_mode", "open_mode"),
               source='V$DATABASE', measure='1', views=(DATABASE.name,)),
        Family("oracle_background_process_info", "gauge",
               "Background process name to OS process id, value 1 (GV$PROCESS where PNAME is set; "
               "short-lived slaves are counted in oracle_background_slaves instead).", ("inst_id", "pname", "spid"),
               source='GV$PROCESS where PNAME is set (11.1+); `spid` is the OS pid, for the join with per-process host metrics. Processes that live as long as the instance only: short-lived slaves are counted in `oracle_background_slaves`', measure='1', views=(PROCESS.name,)),
        Family("oracle_background_slaves", "gauge",
               "Short-lived slave processes now, by family (Jnnn job queue, Pnnn/PZnn parallel execution -- "
               "PZnn also serve this exporter's GV$ queries --, PRnn recovery, Wnnn space management, Mnnn MMON, "
               "Qnnn AQ).",
               ("inst_id", "kind"), source='GV$PROCESS rows whose PNAME is a slave of that family now; one series per family instead of one per SPID (a new SPID with every slave)', measure='processes', note="Labels: inst_id, kind (`J` job queue, `P` parallel execution, `PR` recovery slaves of redo apply (PR00.. on a standby), `PZ` parallel slaves of GV$ queries, this exporter's included, `W` space management, `M` MMON, `Q` AQ). MRP0 and LSP0 (redo apply) are background processes in `oracle_background_process_info`, not slaves.", views=(PROCESS.name,)),
        Family("oracle_sga_target_bytes", "gauge",
               "SGA_TARGET, bytes (GV$SYSTEM_PARAMETER; 0 when SGA is sized manually).", _INST,
               source='GV$SYSTEM_PARAMETER sga_target', views=(PARAMETER.name,)),
        Family("oracle_db_block_size_bytes", "gauge",
               "Database block size, bytes (GV$SYSTEM_PARAMETER db_block_size).", _INST,
               source='GV$SYSTEM_PARAMETER db_block_size', views=(PARAMETER.name,)),
    ), doc='Joining Oracle and host metrics: `label_replace(oracle_instance_info, "sid", "$1", "instance_name", "(.*)")` gives a `sid` label to match the dbhost-exporter\'s `dbhost_process_*{sid=...}` series; `oracle_background_process_info{spid}` maps LGWR, DBWn, ARCn... to OS pids.', title='Instance and database')
NAME, VIEWS = SPEC.name, SPEC.reads

NAMES = {"GV$SYSTEM_PARAMETER": tuple(p for p, _ in PARAMETERS)}


def _database(snapshot: Any) -> dict[str, Any]:
    for view in ("V$DATABASE", "GV$DATABASE"):
        rows = snapshot.rows(view)
        if rows:
            return rows[0]
    return {}


# Slave families that Oracle starts and ends on demand (their PNAME carries a number).
_SLAVE = re.compile(r"^(J|PR|PZ|P|W|M|Q)[0-9A-Z]{2,3}$")
_PERSISTENT = {"PMON", "PSP0", "MMON", "MMNL", "MMAN", "QMNC", "PXMN"}
# Redo apply (issue 22): MRP0 (managed recovery, physical standby) and LSP0 (SQL apply, logical
# standby) are background processes of their own, never an MMON slave (M + "RP0" looked like
# one, so a stopped apply could not be seen); PRnn, the recovery slaves of MRP0, are their own
# slave family "PR" (not parallel execution).
APPLY_PROCESSES = frozenset({"MRP0", "LSP0", "LSP1", "LSP2"})


@lru_cache(maxsize=4096)    # a few hundred process names in a fleet, met on every fetch
def slave_kind(pname: str) -> str | None:
    """The slave family of a process name (J000 -> "J", PZ99 -> "PZ", P00A -> "P"), None for a
    background process that lives as long as the instance (PMON, MMON, QMNC, PXMN ...)."""
    name = pname.strip().upper()
    if name in _PERSISTENT or name in APPLY_PROCESSES:
        return None
    m = _SLAVE.match(name)
    if not m:
        return None
    kind = m.group(1)
    rest = name[len(kind):]
    return kind if any(c.isdigit() for c in rest) else None


def _start_seconds(value: Any, offset) -> float | None:
    """Unix seconds of STARTUP_TIME: a value that carries its own UTC offset (a recording that
    wrote one) is taken as it says; a plain DATE is the host's wall clock, converted with the
    host's offset from the DUAL row (taken as UTC when the snapshot has none)."""
    if isinstance(value, str) and (value.strip().endswith("Z") or re.search(r"[+-]\d\d:?\d\d$", value.strip())):
        return parse_time(value)
    return local_to_unix(value, offset)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    db = _database(snapshot)
    info = SPEC.family("oracle_instance_info")
    started = SPEC.family("oracle_instance_start_time_seconds")
    offset = host_utc_offset(snapshot)
    for row in sorted(snapshot.rows("GV$INSTANCE"), key=lambda r: num(r.get("INST_ID")) or 0):
        i = inst(row)
        if i is None:
            continue
        # VERSION_FULL (18c+) names the release update; VERSION is "19.0.0.0.0" on every 19c
        version = text(row.get("VERSION_FULL")) or text(row.get("VERSION"))
        info.add_metric([i, text(row.get("INSTANCE_NAME")), text(row.get("HOST_NAME")), version,
                         text(db.get("NAME")), text(db.get("DB_UNIQUE_NAME")), text(db.get("DATABASE_ROLE"))], 1.0)
        ts = _start_seconds(row.get("STARTUP_TIME"), offset)
        if ts is not None:
            started.add_metric([i], ts)

    database = SPEC.family("oracle_database_info")
    if db:
        database.add_metric([text(db.get("DBID")), text(db.get("NAME")), text(db.get("DB_UNIQUE_NAME")),
                             text(db.get("DATABASE_ROLE")), text(db.get("LOG_MODE")), text(db.get("OPEN_MODE"))], 1.0)

    procs = SPEC.family("oracle_background_process_info")
    slaves = SPEC.family("oracle_background_slaves")
    seen: set[tuple[str, str, str]] = set()
    slave_count: dict[tuple[str, str], int] = {}
    for row in snapshot.rows("GV$PROCESS"):
        i, pname = inst(row), row.get("PNAME")
        if i is None or not pname:
            continue
        kind = slave_kind(str(pname))
        if kind is not None:     # a new spid with every slave: one series each would churn without end
            slave_count[(i, kind)] = slave_count.get((i, kind), 0) + 1
            continue
        key = (i, str(pname), text(row.get("SPID")))
        if key not in seen:
            seen.add(key)
    add_rows(procs, [(key, 1.0) for key in sorted(seen, key=lambda k: (len(k[0]), k))])
    for (i, kind), n in sorted(slave_count.items()):
        slaves.add_metric([i, kind], n)

    families = [info, started, database, procs, slaves]
    families += [declared_parameter(snapshot, parameter, SPEC.metric(name)) for parameter, name in PARAMETERS]
    yield from emit(families)
