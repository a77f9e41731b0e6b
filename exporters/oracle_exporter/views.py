"""The registry of the dynamic performance views oracle-exporter reads: one ``View`` each.

A view is described here once (name, columns, identity, counters, filters, release
fallbacks with the error codes that trigger them) and everything else derives from it:

* the SQL (``View.statement``; oracle_exporter.queries plans one statement per view),
* row cleaning (oracle_exporter.rows: one row per ``identity``),
* replay counters (oracle_exporter.sources.replay: the ``counters`` columns are shifted
  per pass in loop mode),
* the live source's fallbacks (oracle_exporter.sources.live: one generic rule),
* the SQL catalog test (tests/oracle/test_sql_catalog.py) and the shape of the demo and
  test rows (``row()`` orders a row's columns like the statement).

The views the built-in collectors read are registered below, each once, with where it is
refused (``refused_in``: inside a PDB, on a mounted database) and the grant it needs
(``View.grant``); the codes of the errors that mean "not on this release" come from the one
table of errors, oracle_exporter.ora_errors. This module imports no collector: the modules
that need the complete registry (queries, rows, intervals, replay) import the collectors
package, whose modules may register a view of their own when imported. A new collector does
exactly that, in its own module (docs/adding-a-collector.md)::

    from ..views import View, register

    MY_VIEW = register(View(
        "GV$SESSION",
        columns=("INST_ID", "SID", "SERIAL#", "TYPE", "STATUS", "WAIT_CLASS"),
        identity=("INST_ID", "SID", "SERIAL#"),    # what makes one row unique (CDB rows folded)
        where="TYPE = 'USER'",                      # fixed filter, plain SQL on the view's own columns
        since="10.1", doc="V$SESSION, one row per session",
    ))

and names it in its ``SPEC.reads``. Its columns go into tests/oracle/data/gv_catalog.yaml (the
catalog test checks every statement against the Oracle Reference transcription); the grant
appears in docs/oracle-monitoring-user.sql by itself (``make generate``). A view that does not
exist on some release gets a ``Fallback`` (codes = the errors that mean "not on this release",
``use`` = the statement to read instead, kept for the rest of the session); a view without a
fallback that fails lands in ``snapshot.errors[view]`` and costs only the collectors that read it.

``counters`` lists cumulative columns (they only grow while the instance is up). For
NAME/VALUE views, ``name_column`` with ``counter_names`` (only these names are counters) or
``gauge_names`` (all names except these) says which rows are counters.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

# The codes that mean "not on this release" (oracle_exporter.ora_errors, the one table of codes):
# ORA-00942 / ORA-04043 (no such view), ORA-00904 (no such column).
from .ora_errors import MISSING_COLUMN, MISSING_VIEW  # noqa: E402


@dataclass(frozen=True)
class Query:
    """One statement: ``view`` is the snapshot key its rows are stored under."""
    view: str
    sql: str
    binds: dict[str, object]


@dataclass(frozen=True, eq=False)
class Fallback:
    """Read ``use`` instead of the view, for the rest of the session, once the view's
    statement fails with an error starting with one of ``codes``."""
    codes: tuple[str, ...]
    use: "View"
    why: str = ""


@dataclass(frozen=True, eq=False)
class View:
    name: str                                   # "GV$SYSSTAT": the view, and the snapshot key
    columns: tuple[str, ...]                    # selected, in this order
    identity: tuple[str, ...] = ()              # columns that make one row unique (rows.clean_rows)
    counters: tuple[str, ...] = ()              # cumulative columns (replay shifts them per loop; may
                                                # name columns other recorders add, e.g. TIME_WAITED)
    counter_identity: tuple[str, ...] | None = None  # series a counter belongs to (default: identity)
    name_column: str | None = None              # NAME/VALUE views: the column naming the statistic
    counter_names: frozenset[str] | None = None  # only these names are counters ...
    gauge_names: frozenset[str] = frozenset()   # ... or every name except these
    where: str = ""                             # fixed filter (SQL on the view's own columns)
    where_binds: Mapping[str, object] = field(default_factory=dict)
    filter_column: str | None = None            # "NAME IN (...)": names the collectors declare
    fallbacks: tuple[Fallback, ...] = ()
    since: str | None = None                    # first release that has it (documentation)
    doc: str = ""
    refused_in: frozenset[str] = frozenset()    # not read there: "pdb" (connected to a PDB, the view
                                                # holds that PDB's share or nothing), "mounted" (a
                                                # data dictionary view: needs an open database)

    @property
    def grant(self) -> str:
        """The grant the monitoring user needs to read this view (see grant_for)."""
        return grant_for(self.name)

    @property
    def selects_con_id(self) -> bool:
        """Dynamic performance views carry CON_ID from 12.1 (0 = the whole instance or a
        non-CDB): every statement selects it, and rows.clean_rows keeps the lowest CON_ID of
        an identity (contract "Real-database truths"). Before 12.1 the live source reads the
        view without it (ORA-00904 naming CON_ID, once per session)."""
        return self.name.startswith(("GV$", "V$")) and "CON_ID" not in self.columns

    def statement(self, names: Iterable[str] = (), con_id: bool = True) -> Query:
        """The SELECT of this view; ``names`` fill the filter_column IN list (bind variables);
        ``con_id`` False leaves CON_ID out (a release before 12.1)."""
        binds: dict[str, object] = dict(self.where_binds)
        conditions = [self.where] if self.where else []
        if self.filter_column is not None:
            wanted = list(dict.fromkeys(names))
            marks = []
            for i, value in enumerate(wanted):
                binds[f"n{i}"] = value
                marks.append(f":n{i}")
            conditions.append(f"{self.filter_column} IN ({', '.join(marks) or 'NULL'})")
        columns = (*self.columns, "CON_ID") if con_id and self.selects_con_id else self.columns
        sql = f"SELECT {', '.join(columns)} FROM {self.name}"
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        return Query(self.name, sql, binds)

    def is_counter_row(self, row: Mapping[str, Any]) -> bool:
        if self.name_column is None:
            return True
        name = row.get(self.name_column)
        if self.counter_names is not None:
            return name in self.counter_names
        return name not in self.gauge_names

    @property
    def series_identity(self) -> tuple[str, ...]:
        return self.counter_identity if self.counter_identity is not None else self.identity

    def variants(self) -> list["View"]:
        """This view and every fallback reachable from it (each once)."""
        out: list[View] = []
        todo = [self]
        while todo:
            v = todo.pop(0)
            if any(v is o for o in out):
                continue
            out.append(v)
            todo.extend(fb.use for fb in v.fallbacks)
        return out


_REGISTRY: dict[str, View] = {}


def register(view: View) -> View:
    """Add a view to the registry (at import of the module that defines it); returns it.
    Registering another definition under a name already taken is an error."""
    have = _REGISTRY.get(view.name)
    if have is not None and have is not view:
        raise ValueError(f"view {view.name} registered twice")
    if view.name != view.name.upper():
        raise ValueError(f"view name {view.name!r} must be upper case")
    if view.identity and not set(view.identity) <= set(view.columns):
        raise ValueError(f"{view.name}: identity {view.identity} not among its columns")
    if view.counter_identity is not None and not set(view.counter_identity) <= set(view.columns):
        raise ValueError(f"{view.name}: counter identity {view.counter_identity} not among its columns")
    _REGISTRY[view.name] = view
    return view


def _loaded() -> dict[str, View]:
    return _REGISTRY


def get(name: str) -> View | None:
    """The registered view of that (upper case) name, a fallback target included."""
    return _loaded().get(name)


def all_views() -> dict[str, View]:
    return dict(_loaded())


def counter_views() -> dict[str, View]:
    """Views with cumulative columns (replay loop mode)."""
    return {n: v for n, v in _loaded().items() if v.counters}


def grant_for(view: str) -> str:
    """The grant that lets the monitoring user read a view: ``SELECT ON SYS.GV_$SESSION`` (the
    public synonyms GV$X / V$X point to SYS.GV_$X / SYS.V_$X, which the grant must name)."""
    import re
    return "SELECT ON SYS." + re.sub(r"^(G?V)\$", r"\1_$", view)


def with_con_id(rows_by_view: dict[str, list[dict[str, Any]]], con_id: int = 0) -> dict[str, list[dict[str, Any]]]:
    """Add CON_ID (last, as the statement selects it) to every row of the views whose statement
    selects it, where a row lacks it (demo and test generators: 0 = the whole instance or a
    non-CDB); in place, returned for convenience."""
    for name, rows in rows_by_view.items():
        v = _loaded().get(name)
        if v is not None and v.selects_con_id:
            for r in rows:
                r.setdefault("CON_ID", con_id)
    return rows_by_view


def row(view: str | View, **values: Any) -> dict[str, Any]:
    """A row of ``view`` with exactly its selected columns, in statement order (demo and test
    generators): ``row("GV$SYSSTAT", INST_ID=1, NAME="redo size", VALUE=1)``; names with #
    are passed as ``**{"THREAD#": 1}``."""
    v = view if isinstance(view, View) else get(view)
    if v is None:
        raise KeyError(f"view {view} is not registered")
    if set(values) != set(v.columns):
        raise ValueError(f"{v.name}: columns {sorted(set(values) ^ set(v.columns))} missing or unknown")
    return {c: values[c] for c in v.columns}


# Where a view is not read (View.refused_in): connected to a PDB, the instance-wide statistics
# views answer for that PDB only (GV$SYSSTAT, GV$SYSTEM_EVENT, the event histograms, the time
# model) or not at all (GV$SYSMETRIC), while latches, PGA, logs and processes stay instance-wide:
# mixed, they would mislead. The data dictionary (DBA_/CDB_ views) needs an open database: a
# MOUNTED standby answers ORA-01219.
IN_PDB = frozenset({"pdb"})
MOUNTED = frozenset({"mounted"})


def refused(where: str) -> tuple[str, ...]:
    """Names of the registered views not read ``where`` ("pdb", "mounted"), registry order."""
    return tuple(name for name, v in _REGISTRY.items() if where in v.refused_in)


# --- the views of the core collectors --------------------------------------------------
# (shared by several collectors, so defined here; a view only one new collector reads is
# registered in that collector's module.)

SYSTEM_EVENT = register(View(
    "GV$SYSTEM_EVENT",
    ("INST_ID", "EVENT", "WAIT_CLASS", "TOTAL_WAITS", "TOTAL_TIMEOUTS", "TIME_WAITED_MICRO"),
    identity=("INST_ID", "EVENT"),
    counters=("TOTAL_WAITS", "TOTAL_TIMEOUTS", "TIME_WAITED", "TIME_WAITED_MICRO",
              "TOTAL_WAITS_FG", "TOTAL_TIMEOUTS_FG", "TIME_WAITED_FG", "TIME_WAITED_MICRO_FG"),
    refused_in=IN_PDB, doc="V$SYSTEM_EVENT, total waits per event since instance startup"))

EVENT_HISTOGRAM = register(View(
    "GV$EVENT_HISTOGRAM",
    ("INST_ID", "EVENT", "WAIT_TIME_MILLI", "WAIT_COUNT"),
    identity=("INST_ID", "EVENT", "WAIT_TIME_MILLI"),
    counters=("WAIT_COUNT",),
    filter_column="EVENT", since="10.1",
    refused_in=IN_PDB, doc="V$EVENT_HISTOGRAM, per-bucket wait counts, buckets in milliseconds"))

EVENT_HISTOGRAM_MICRO = register(View(
    "GV$EVENT_HISTOGRAM_MICRO",
    ("INST_ID", "EVENT", "WAIT_TIME_MICRO", "WAIT_COUNT"),
    identity=("INST_ID", "EVENT", "WAIT_TIME_MICRO"),
    counters=("WAIT_COUNT",),
    filter_column="EVENT", since="12.1.0.2",
    fallbacks=(Fallback(MISSING_VIEW, EVENT_HISTOGRAM, "microsecond histograms need 12.1.0.2"),),
    refused_in=IN_PDB, doc="V$EVENT_HISTOGRAM_MICRO, per-bucket wait counts, buckets in microseconds"))

# GV$SYSSTAT statistics that are current values, not cumulative (Oracle Database
# Reference, "Statistics Descriptions": class "current" statistics).
SYSSTAT_GAUGES = frozenset({
    "logons current", "opened cursors current", "session cursor cache count",
    "session pga memory", "session pga memory max", "session uga memory", "session uga memory max",
    "session stored procedure space", "workarea memory allocated",
})

SYSSTAT = register(View(
    "GV$SYSSTAT", ("INST_ID", "NAME", "VALUE"),
    identity=("INST_ID", "NAME"), counters=("VALUE",),
    name_column="NAME", gauge_names=SYSSTAT_GAUGES, filter_column="NAME",
    refused_in=IN_PDB, doc="V$SYSSTAT, cumulative instance statistics"))

# V$LOG lists the redo log groups from the control file: one row per group (GROUP# is
# unique in the database, each group belongs to one THREAD#), and GV$LOG returns every
# group once per instance. So a row is (INST_ID, GROUP#); THREAD# is kept in the identity
# for readability. SEQUENCE# is the log sequence number of the group, and sequence numbers
# advance per redo *thread* (one per log switch of that thread): as a counter it belongs to
# the thread, so replay shifts every group of a thread by the thread's increase.
# BLOCKSIZE (11.2+) is the redo block size of the group: 512 or 4096 bytes (4 KB sector / flash
# storage). Without it (ORA-00904) the statement without BLOCKSIZE is read.
LOG_WITHOUT_BLOCKSIZE = View(
    "GV$LOG", ("INST_ID", "GROUP#", "THREAD#", "SEQUENCE#", "BYTES", "MEMBERS", "ARCHIVED", "STATUS"),
    identity=("INST_ID", "THREAD#", "GROUP#"),
    counters=("SEQUENCE#",), counter_identity=("INST_ID", "THREAD#"),
    doc="V$LOG before 11.2 (no BLOCKSIZE)")

LOG = register(View(
    "GV$LOG", ("INST_ID", "GROUP#", "THREAD#", "SEQUENCE#", "BYTES", "BLOCKSIZE", "MEMBERS", "ARCHIVED", "STATUS"),
    identity=("INST_ID", "THREAD#", "GROUP#"),
    counters=("SEQUENCE#",), counter_identity=("INST_ID", "THREAD#"),
    fallbacks=(Fallback(MISSING_COLUMN, LOG_WITHOUT_BLOCKSIZE, "V$LOG.BLOCKSIZE needs 11.2"),),
    doc="V$LOG, redo log groups from the control file"))

PARAMETER = register(View(
    "GV$SYSTEM_PARAMETER", ("INST_ID", "NAME", "VALUE"),
    identity=("INST_ID", "NAME"), filter_column="NAME",
    doc="V$SYSTEM_PARAMETER, instance-wide initialization parameters (VALUE is text); V$PARAMETER would show the exporter session's own values"))

# GV$PGASTAT rows that are cumulative since instance startup; the others
# (aggregate PGA target parameter, total PGA allocated, cache hit percentage, ...) are gauges.
PGASTAT_COUNTERS = frozenset({
    "over allocation count", "bytes processed", "extra bytes read/written",
    "recompute count (total)",
    "recompute count (cumulative)",   # the name recordings made before issue 11 used (no such statistic)
})

PGASTAT = register(View(
    "GV$PGASTAT", ("INST_ID", "NAME", "VALUE", "UNIT"),
    identity=("INST_ID", "NAME"), counters=("VALUE",),
    name_column="NAME", counter_names=PGASTAT_COUNTERS,
    doc="V$PGASTAT, PGA usage statistics"))

LATCH = register(View(
    "GV$LATCH",
    ("INST_ID", "NAME", "GETS", "MISSES", "SLEEPS", "IMMEDIATE_GETS", "IMMEDIATE_MISSES", "SPIN_GETS", "WAIT_TIME"),
    identity=("INST_ID", "NAME"),
    counters=("GETS", "MISSES", "SLEEPS", "IMMEDIATE_GETS", "IMMEDIATE_MISSES", "SPIN_GETS", "WAIT_TIME"),
    doc="V$LATCH, latch statistics per latch name"))

SYSMETRIC_GROUP_ID = 2  # "System Metrics Long Duration", 60-second interval

SYSMETRIC = register(View(
    "GV$SYSMETRIC", ("INST_ID", "METRIC_NAME", "VALUE", "METRIC_UNIT", "GROUP_ID", "INTSIZE_CSEC"),
    identity=("INST_ID", "METRIC_NAME", "GROUP_ID"),
    where="GROUP_ID = :grp", where_binds={"grp": SYSMETRIC_GROUP_ID}, filter_column="METRIC_NAME",
    refused_in=IN_PDB, doc="V$SYSMETRIC, metric values of the last 60 s interval (GROUP_ID 2)"))

# VERSION is "19.0.0.0.0" on every 19c; VERSION_FULL (18c+) has the release update ("19.21.0.0.0").
INSTANCE_WITHOUT_VERSION_FULL = View(
    "GV$INSTANCE",
    ("INST_ID", "INSTANCE_NUMBER", "INSTANCE_NAME", "HOST_NAME", "VERSION", "STARTUP_TIME", "STATUS", "THREAD#"),
    identity=("INST_ID",), doc="V$INSTANCE before 18c (no VERSION_FULL)")

INSTANCE = register(View(
    "GV$INSTANCE",
    ("INST_ID", "INSTANCE_NUMBER", "INSTANCE_NAME", "HOST_NAME", "VERSION", "VERSION_FULL", "STARTUP_TIME",
     "STATUS", "THREAD#"),
    identity=("INST_ID",),
    fallbacks=(Fallback(MISSING_COLUMN, INSTANCE_WITHOUT_VERSION_FULL, "V$INSTANCE.VERSION_FULL needs 18c"),),
    doc="V$INSTANCE, one row per open instance"))

DATABASE = register(View(
    "V$DATABASE", ("DBID", "NAME", "DB_UNIQUE_NAME", "DATABASE_ROLE", "LOG_MODE", "OPEN_MODE"),
    doc="V$DATABASE, one row from the control file"))

# V$PROCESS has PNAME from 11.1; before that (ORA-00904) background processes are selected
# by BACKGROUND = '1' and rows.clean_rows names them from PROGRAM ("oracle@host (LGWR)").
PROCESS_BY_PROGRAM = View(
    "GV$PROCESS", ("INST_ID", "PID", "SPID", "PROGRAM", "BACKGROUND", "PGA_USED_MEM", "PGA_ALLOC_MEM", "PGA_MAX_MEM"),
    identity=("INST_ID", "PID"), where="BACKGROUND = '1'",
    doc="V$PROCESS of a release without PNAME (before 11.1)")

PROCESS = register(View(
    "GV$PROCESS", ("INST_ID", "PID", "SPID", "PNAME", "PGA_USED_MEM", "PGA_ALLOC_MEM", "PGA_MAX_MEM"),
    identity=("INST_ID", "PID"), where="PNAME IS NOT NULL",
    fallbacks=(Fallback(MISSING_COLUMN, PROCESS_BY_PROGRAM, "V$PROCESS.PNAME needs 11.1"),),
    doc="V$PROCESS, background processes (PNAME set)"))


# --- the views of the health, multitenant and storage collectors -----------------------

# archive_dest collector
ARCHIVE_DEST = register(View(
    "GV$ARCHIVE_DEST",
    ("INST_ID", "DEST_ID", "DEST_NAME", "STATUS", "TARGET", "DESTINATION", "VALID_NOW", "ERROR", "LOG_SEQUENCE",
     "DELAY_MINS"),
    identity=("INST_ID", "DEST_ID"), where="STATUS <> 'INACTIVE'",
    doc="V$ARCHIVE_DEST, the configured LOG_ARCHIVE_DEST_n destinations (DELAY_MINS: the apply delay configured "
        "for a standby destination)"))
# archive_dest and dataguard collectors (issue 22): the gap status of each destination (primary)
# and the apply mode (RECOVERY_MODE: real-time apply ignores a configured DELAY)
ARCHIVE_DEST_STATUS = register(View(
    "GV$ARCHIVE_DEST_STATUS",
    ("INST_ID", "DEST_ID", "DEST_NAME", "STATUS", "TYPE", "DATABASE_MODE", "RECOVERY_MODE", "GAP_STATUS"),
    identity=("INST_ID", "DEST_ID"), where="STATUS <> 'INACTIVE'", since="11.2",
    doc="V$ARCHIVE_DEST_STATUS, run-time state of the destinations: apply mode at the destination, gap status"))

# asm collector
ASM_DISKGROUP_STAT = register(View(
    "V$ASM_DISKGROUP_STAT",
    ("GROUP_NUMBER", "NAME", "STATE", "TYPE", "TOTAL_MB", "FREE_MB", "REQUIRED_MIRROR_FREE_MB", "USABLE_FILE_MB",
     "OFFLINE_DISKS"),
    identity=("GROUP_NUMBER",),
    doc="V$ASM_DISKGROUP without the disk discovery of V$ASM_DISKGROUP"))
# V$ASM_DISK_STAT: the failure groups of each disk group (one row per disk, from memory like the
# _STAT disk group view). FAILGROUP_TYPE (12.1+: REGULAR or QUORUM; quorum failure groups hold no
# data) is left out before 12.1.
ASM_DISK_STAT_WITHOUT_TYPE = View(
    "V$ASM_DISK_STAT", ("GROUP_NUMBER", "DISK_NUMBER", "FAILGROUP"),
    identity=("GROUP_NUMBER", "DISK_NUMBER"), where="GROUP_NUMBER <> 0",
    doc="V$ASM_DISK_STAT before 12.1 (no FAILGROUP_TYPE)")
ASM_DISK_STAT = register(View(
    "V$ASM_DISK_STAT", ("GROUP_NUMBER", "DISK_NUMBER", "FAILGROUP", "FAILGROUP_TYPE"),
    identity=("GROUP_NUMBER", "DISK_NUMBER"), where="GROUP_NUMBER <> 0",
    fallbacks=(Fallback(MISSING_COLUMN, ASM_DISK_STAT_WITHOUT_TYPE, "V$ASM_DISK_STAT.FAILGROUP_TYPE needs 12.1"),),
    doc="V$ASM_DISK without the disk discovery: the failure group of each disk of a mounted group"))
# V$ASM_CLIENT in a database instance: the ASM instance it uses, per disk group; CLUSTER_NAME (12.1+)
# names the cluster, which with the disk group name identifies one disk group across databases.
ASM_CLIENT_WITHOUT_CLUSTER = View(
    "V$ASM_CLIENT", ("GROUP_NUMBER", "STATUS"), identity=("GROUP_NUMBER",),
    doc="V$ASM_CLIENT before 12.1 (no CLUSTER_NAME)")
ASM_CLIENT = register(View(
    "V$ASM_CLIENT", ("GROUP_NUMBER", "CLUSTER_NAME", "STATUS"), identity=("GROUP_NUMBER",),
    fallbacks=(Fallback(MISSING_COLUMN, ASM_CLIENT_WITHOUT_CLUSTER, "V$ASM_CLIENT.CLUSTER_NAME needs 12.1"),),
    doc="V$ASM_CLIENT, in a database instance the ASM instance it uses per disk group (CLUSTER_NAME 12.1+)"))

# dataguard collector
DATAGUARD_STATS = register(View(
    "V$DATAGUARD_STATS", ("NAME", "VALUE", "UNIT", "TIME_COMPUTED", "DATUM_TIME"),
    since="11.2", doc="V$DATAGUARD_STATS, Data Guard metrics on a standby (VALUE, times: text)"))

# dataguard collector (issue 22): the apply delay of managed recovery on a standby (MRP0 row;
# deprecated in 12.2 in favour of V$DATAGUARD_PROCESS, which has no delay, but still there in 23ai)
MANAGED_STANDBY = register(View(
    "GV$MANAGED_STANDBY", ("INST_ID", "PROCESS", "STATUS", "DELAY_MINS"),
    identity=("INST_ID", "PROCESS"), where="PROCESS IN ('MRP0', 'MR(fg)')",
    doc="V$MANAGED_STANDBY, managed recovery on a physical standby (DELAY_MINS: the apply delay in minutes)"))

# recovery_area collector
RECOVERY_FILE_DEST = register(View(
    "V$RECOVERY_FILE_DEST", ("NAME", "SPACE_LIMIT", "SPACE_USED", "SPACE_RECLAIMABLE", "NUMBER_OF_FILES"),
    since="10.1", doc="V$RECOVERY_FILE_DEST, the fast recovery area"))

# resource_limits collector
RESOURCE_LIMIT = register(View(
    "GV$RESOURCE_LIMIT", ("INST_ID", "RESOURCE_NAME", "CURRENT_UTILIZATION", "MAX_UTILIZATION", "LIMIT_VALUE"),
    identity=("INST_ID", "RESOURCE_NAME"),
    doc="V$RESOURCE_LIMIT, use of system resources against their limit (LIMIT_VALUE is text)"))

# sessions collector
# One statement per scrape: the sessions on CPU (ACTIVE, not waiting) or in a non-idle wait
# (the contract's "ACTIVE or in a non-idle wait" minus ACTIVE sessions idling in an idle wait, which
# the collector would drop anyway: every background process is ACTIVE), without the exporter's own
# session (always on CPU while it runs this very statement).
# Issue 22: who blocks. The blockers' own rows are read too, with columns added after the contracted
# ones: every background session (TYPE 'BACKGROUND': LGWR idling in 'rdbms ipc message' while a commit
# waits on it) and every session holding a transaction (TADDR set: a row lock's holder is often
# INACTIVE, idle in 'SQL*Net message from client'); both are bounded by the session count and leave
# the aggregates alone (idle waits and background sessions are not counted as active). A blocker
# absent from the rows is then a user session without a transaction (DBMS_LOCK, a library cache pin).
# FINAL_BLOCKING_* (11.2+) name the root of a chain of blockers.
_SESSION_WHERE = ("((STATUS = 'ACTIVE' AND STATE <> 'WAITING') OR (STATE = 'WAITING' AND WAIT_CLASS <> 'Idle') "
                  "OR TYPE = 'BACKGROUND' OR TADDR IS NOT NULL) "
                  "AND NOT (INST_ID = SYS_CONTEXT('USERENV', 'INSTANCE') AND SID = SYS_CONTEXT('USERENV', 'SID'))")
SESSION_WITHOUT_FINAL = View(
    "GV$SESSION",
    ("INST_ID", "SID", "TYPE", "STATUS", "STATE", "EVENT", "WAIT_CLASS", "WAIT_TIME_MICRO",
     "BLOCKING_SESSION_STATUS", "BLOCKING_INSTANCE", "BLOCKING_SESSION", "SERIAL#", "USERNAME", "PROGRAM",
     "LAST_CALL_ET", "SQL_ID"),
    identity=("INST_ID", "SID"), where=_SESSION_WHERE,
    doc="V$SESSION before 11.2 (no FINAL_BLOCKING_*: the immediate blocker counts as the root)")
SESSION = register(View(
    "GV$SESSION",
    ("INST_ID", "SID", "TYPE", "STATUS", "STATE", "EVENT", "WAIT_CLASS", "WAIT_TIME_MICRO",
     "BLOCKING_SESSION_STATUS", "BLOCKING_INSTANCE", "BLOCKING_SESSION",
     "SERIAL#", "USERNAME", "PROGRAM",
     "FINAL_BLOCKING_SESSION_STATUS", "FINAL_BLOCKING_INSTANCE", "FINAL_BLOCKING_SESSION",
     "LAST_CALL_ET", "SQL_ID"),   # long_calls (issue 24): how long the current call runs, which statement
    identity=("INST_ID", "SID"), where=_SESSION_WHERE,
    fallbacks=(Fallback(MISSING_COLUMN, SESSION_WITHOUT_FINAL, "V$SESSION.FINAL_BLOCKING_* need 11.2"),),
    since="11.1", doc="V$SESSION, sessions on CPU or in a non-idle wait, background sessions and transaction "
                      "holders (the blockers); WAIT_TIME_MICRO 11.1+, FINAL_BLOCKING_* 11.2+"))

# time_model collector
TIME_MODEL = register(View(
    "GV$SYS_TIME_MODEL", ("INST_ID", "STAT_NAME", "VALUE"),
    identity=("INST_ID", "STAT_NAME"), counters=("VALUE",), name_column="STAT_NAME",
    filter_column="STAT_NAME", since="10.1",
    refused_in=IN_PDB, doc="V$SYS_TIME_MODEL, accumulated elapsed and CPU times in microseconds"))

# tablespaces collector
# The CDB_ views exist from 12.1: in a CDB root they list every open container, in a PDB that
# PDB, in a non-CDB the database (CON_ID 0). Before 12.1 (ORA-00942) the DBA_ views are read.
DBA_TS_USAGE = register(View("DBA_TABLESPACE_USAGE_METRICS", ("TABLESPACE_NAME", "USED_SPACE", "TABLESPACE_SIZE"),
                          identity=("TABLESPACE_NAME",), refused_in=MOUNTED, doc="tablespace usage in blocks, before 12.1"))
DBA_TS_SPACES = register(View("DBA_TABLESPACES", ("TABLESPACE_NAME", "BLOCK_SIZE", "CONTENTS", "STATUS"),
                           identity=("TABLESPACE_NAME",), refused_in=MOUNTED, doc="tablespace block size and contents, before 12.1"))
TS_USAGE = register(View(
    "CDB_TABLESPACE_USAGE_METRICS", ("CON_ID", "TABLESPACE_NAME", "USED_SPACE", "TABLESPACE_SIZE"),
    identity=("CON_ID", "TABLESPACE_NAME"), since="12.1",
    fallbacks=(Fallback(MISSING_VIEW, DBA_TS_USAGE, "CDB_ views need 12.1"),),
    refused_in=MOUNTED, doc="tablespace usage in blocks, every container (TABLESPACE_SIZE counts autoextend up to MAXSIZE)"))
TS_SPACES = register(View(
    "CDB_TABLESPACES", ("CON_ID", "TABLESPACE_NAME", "BLOCK_SIZE", "CONTENTS", "STATUS"),
    identity=("CON_ID", "TABLESPACE_NAME"), since="12.1",
    fallbacks=(Fallback(MISSING_VIEW, DBA_TS_SPACES, "CDB_ views need 12.1"),),
    refused_in=MOUNTED, doc="tablespace block size and contents, every container"))
# Before 12.1 there are no containers and no V$CONTAINERS (ORA-00942): the fallback reads one cheap
# row that every release has (V$INSTANCE.INSTANCE_NAME, read by nothing else) so that the statement
# succeeds and the tablespaces collector is not failed for a view it only needs in a CDB (issue 22:
# 11.2 had no tablespace metrics); its container label is empty there, as for any non-CDB.
CONTAINERS_BEFORE_12 = register(View(
    "V$INSTANCE", ("INSTANCE_NAME",),
    doc="read in place of V$CONTAINERS before 12.1 (no containers; the rows are not used)"))
CONTAINERS = register(View(
    "V$CONTAINERS", ("CON_ID", "NAME"), identity=("CON_ID",), since="12.1",
    fallbacks=(Fallback(MISSING_VIEW, CONTAINERS_BEFORE_12, "no containers before 12.1"),),
    doc="V$CONTAINERS, container names (CDB$ROOT, PDB$SEED, PDBs)"))

# pdb collector
CON_TIME_MODEL = register(View(
    "GV$CON_SYS_TIME_MODEL", ("INST_ID", "CON_ID", "STAT_NAME", "VALUE"),
    identity=("INST_ID", "CON_ID", "STAT_NAME"), counters=("VALUE",), filter_column="STAT_NAME", since="12.2",
    doc="V$CON_SYS_TIME_MODEL, time model per container (microseconds)"))
CON_SYSSTAT = register(View(
    "GV$CON_SYSSTAT", ("INST_ID", "CON_ID", "NAME", "VALUE"),
    identity=("INST_ID", "CON_ID", "NAME"), counters=("VALUE",), filter_column="NAME", since="12.2",
    doc="V$CON_SYSSTAT, cumulative statistics per container"))
CON_SYSTEM_EVENT = register(View(
    "GV$CON_SYSTEM_EVENT", ("INST_ID", "CON_ID", "EVENT", "WAIT_CLASS", "TOTAL_WAITS", "TIME_WAITED_MICRO"),
    identity=("INST_ID", "CON_ID", "EVENT"), counters=("TOTAL_WAITS", "TIME_WAITED_MICRO"),
    where="WAIT_CLASS <> 'Idle'", since="12.2",
    doc="V$CON_SYSTEM_EVENT, waits per event per container (Idle class left out in SQL)"))
CON_HISTOGRAM = register(View(
    "GV$CON_EVENT_HISTOGRAM_MICRO", ("INST_ID", "CON_ID", "EVENT", "WAIT_TIME_MICRO", "WAIT_COUNT"),
    identity=("INST_ID", "CON_ID", "EVENT", "WAIT_TIME_MICRO"), counters=("WAIT_COUNT",), filter_column="EVENT",
    since="12.2", doc="V$CON_EVENT_HISTOGRAM_MICRO, per-bucket wait counts per container, buckets in microseconds"))
CON_SYSMETRIC = register(View(
    "GV$CON_SYSMETRIC", ("INST_ID", "CON_ID", "METRIC_NAME", "VALUE", "METRIC_UNIT", "INTSIZE_CSEC"),
    identity=("INST_ID", "CON_ID", "METRIC_NAME"), filter_column="METRIC_NAME", since="12.2",
    doc="V$CON_SYSMETRIC, PDB metrics of the last 60 s interval"))
