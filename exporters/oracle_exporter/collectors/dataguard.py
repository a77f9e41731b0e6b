"""Data Guard lag on a standby (V$DATAGUARD_STATS), seconds.

VALUE is text: an INTERVAL DAY TO SECOND such as ``+00 00:00:05`` or, days
included, ``+01 02:03:04`` (UNIT 'day(2) to second(0) interval').

* ``oracle_dataguard_lag_seconds{kind}``: kind ``transport`` ('transport lag':
  redo generated on the primary not yet received here) and ``apply`` ('apply
  lag': received but not yet applied). No series while VALUE is empty.
* ``oracle_dataguard_lag_computed{kind}``: 1 when the row carries a value, 0
  when the row is there but the lag is not computed (VALUE NULL: the standby
  has lost contact with the primary, or apply is not running). Alert on 0: a
  missing lag is not a zero lag.
* ``oracle_dataguard_lag_datum_age_seconds{kind}``: TIME_COMPUTED - DATUM_TIME,
  how old the data the lag was computed from is (DATUM_TIME, 11.2.0.2+, is when
  the standby last received the datum from the primary). Oracle's Reference:
  an unchanging DATUM_TIME means the standby is not receiving data, and the
  reported lag is then stale, however small it looks. Both columns are the
  standby's local time in the same format, so the difference needs no time zone.
* ``oracle_dataguard_apply_finish_seconds``: 'apply finish time', the estimated
  time to apply the redo received so far.

Only emitted when V$DATABASE says the database is a standby (a primary lists
the same rows with empty values); without V$DATABASE in the snapshot the rows
are used as they are. The role itself is ``database_role`` of
oracle_database_info / oracle_instance_info.

Apply (issue 22), from the dynamic performance views a MOUNTED standby answers:

* ``oracle_dataguard_apply_running{inst_id}``: on a physical standby 1 on the instance
  running managed recovery (GV$PROCESS PNAME MRP0), 0 on the others; on a logical standby
  LSP0. A standby whose every instance shows 0 is not applying: redo piles up unapplied.
* ``oracle_dataguard_apply_delay_seconds``: the apply delay in force, DELAY_MINS x 60 of
  the MRP0 row of GV$MANAGED_STANDBY; 0 under real-time apply (GV$ARCHIVE_DEST_STATUS
  RECOVERY_MODE '... REAL TIME APPLY' on the standby's own destination: TYPE 'LOCAL', of the
  instance running MRP0), which ignores DELAY. A remote destination's mode (a cascade destination
  on a cascading standby) is that database's apply, not this one's. An apply lag up to this is what the DBA asked for, not a fault.
* ``oracle_dataguard_snapshot_standby``: 1 when DATABASE_ROLE is SNAPSHOT STANDBY (opened
  read write for a test, redo received but not applied until it is converted back), else 0.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import ARCHIVE_DEST_STATUS, DATAGUARD_STATS, DATABASE, MANAGED_STANDBY, PROCESS
from ._common import emit, inst, num, sorted_inst
from ._health import clean, interval_seconds, local_wallclock

SPEC = Collector(
    "dataguard", "Data Guard transport and apply lag on a standby (V$DATAGUARD_STATS).",
    reads=(DATAGUARD_STATS.name, DATABASE.name, PROCESS.name, MANAGED_STANDBY.name, ARCHIVE_DEST_STATUS.name),
    metrics=(
        Family("oracle_dataguard_lag_seconds", "gauge",
               "Data Guard lag on this standby, seconds (V$DATAGUARD_STATS 'transport lag' / 'apply lag').",
               ("kind",), source="VALUE of 'transport lag' / 'apply lag', an INTERVAL DAY TO SECOND as text (`+00 00:00:05`, `+01 02:03:04` = 93784 s)", since="11.2", note='Labels: kind (`transport`, `apply`).',
               views=(DATAGUARD_STATS.name, DATABASE.name)),
        Family("oracle_dataguard_lag_computed", "gauge",
               "1 if V$DATAGUARD_STATS has a value for the lag, 0 if the lag is not computed (NULL VALUE).",
               ("kind",), source='1 if the lag has a value, 0 if the row is there but VALUE is NULL: the lag is **not computed** (standby lost the primary, apply stopped). A missing lag is not a zero lag', since="11.2", measure='1/0',
               views=(DATAGUARD_STATS.name, DATABASE.name)),
        Family("oracle_dataguard_lag_datum_age_seconds", "gauge",
               "Age of the data the lag was computed from, seconds (TIME_COMPUTED - DATUM_TIME); grows while the "
               "standby receives nothing from the primary.", ("kind",),
               source='TIME_COMPUTED - DATUM_TIME (11.2+): age of the data the lag was computed from. Oracle: an unchanging DATUM_TIME means the standby is not receiving data, and the reported lag (however small) is stale. Both are standby-local text times, so no time zone is involved', since="11.2",
               views=(DATAGUARD_STATS.name, DATABASE.name)),
        Family("oracle_dataguard_apply_finish_seconds", "gauge",
               "Estimated time to apply the redo received so far, seconds (V$DATAGUARD_STATS 'apply finish time').",
               (), source="'apply finish time': estimated time to apply the redo received so far", since="11.2",
               views=(DATAGUARD_STATS.name, DATABASE.name)),
        Family("oracle_dataguard_apply_running", "gauge",
               "1 on the standby instance running redo apply (MRP0; LSP0 on a logical standby), else 0.", ("inst_id",),
               source="GV$PROCESS: PNAME MRP0 (physical standby; LSP0 on a logical standby) on that instance. Only on "
                      "a physical or logical standby (not a snapshot standby, not a primary). Managed recovery runs on "
                      "one instance of a RAC standby (several with multi-instance redo apply): alert on the maximum "
                      "over the instances", measure="1/0", views=(DATABASE.name, PROCESS.name)),
        Family("oracle_dataguard_apply_delay_seconds", "gauge",
               "Apply delay in force on this standby, seconds (V$MANAGED_STANDBY.DELAY_MINS of MRP0; 0 under "
               "real-time apply).", (),
               source="GV$MANAGED_STANDBY.DELAY_MINS x 60 of the MRP0 row (the DELAY attribute of the primary's "
                      "LOG_ARCHIVE_DEST_n, DelayMins in the broker); 0 when GV$ARCHIVE_DEST_STATUS.RECOVERY_MODE of "
                      "the standby's own destination (TYPE LOCAL, on the instance running MRP0) is MANAGED REAL TIME "
                      "APPLY (real-time apply ignores DELAY); a remote (cascade) destination's mode is not ours. No "
                      "sample while apply is not running", views=(DATABASE.name, MANAGED_STANDBY.name, ARCHIVE_DEST_STATUS.name)),
        Family("oracle_dataguard_snapshot_standby", "gauge",
               "1 if the standby is a snapshot standby (V$DATABASE.DATABASE_ROLE), 0 on another standby.", (),
               source="V$DATABASE.DATABASE_ROLE = 'SNAPSHOT STANDBY': opened read write for testing; redo is received "
                      "but not applied until it is converted back to a physical standby; 0 on a physical or logical standby, no "
                      "sample on a primary", measure="1/0",
               views=(DATABASE.name,)),
    ), doc='Emitted only on a standby (V$DATABASE.DATABASE_ROLE contains STANDBY; a primary returns no rows from 12.2, empty values before). The role is `database_role` of `oracle_database_info`. Alert on `oracle_dataguard_lag_seconds > N`, on `oracle_dataguard_lag_computed == 0` and on `oracle_dataguard_lag_datum_age_seconds > N` (a lag that stopped being computed or updated). Everything here comes from dynamic performance views (V$, GV$), which a MOUNTED standby answers. Apply: `oracle_dataguard_apply_running` (MRP0 in GV$PROCESS), the delay in force `oracle_dataguard_apply_delay_seconds` (an apply lag up to it is intended: judge `lag - delay`), `oracle_dataguard_snapshot_standby`.', title='Data Guard')
NAME, VIEWS = SPEC.name, SPEC.reads

KINDS = (("transport", "transport lag"), ("apply", "apply lag"))


def is_standby(snapshot: Any) -> bool | None:
    for view in ("V$DATABASE", "GV$DATABASE"):
        rows = snapshot.rows(view)
        if rows:
            return "STANDBY" in clean(rows[0].get("DATABASE_ROLE")).upper()
    return None


def stats(snapshot: Any) -> dict[str, dict[str, Any]]:
    """{lower-case NAME: row}, first row per name."""
    out: dict[str, dict[str, Any]] = {}
    for row in snapshot.rows("V$DATAGUARD_STATS"):
        out.setdefault(clean(row.get("NAME")).lower(), row)
    return out


def datum_age(row: dict[str, Any]) -> float | None:
    computed, datum = local_wallclock(row.get("TIME_COMPUTED")), local_wallclock(row.get("DATUM_TIME"))
    if computed is None or datum is None:
        return None
    return max(0.0, (computed - datum).total_seconds())


def role(snapshot: Any) -> str:
    """V$DATABASE.DATABASE_ROLE (PRIMARY, PHYSICAL STANDBY, LOGICAL STANDBY, SNAPSHOT STANDBY, FAR SYNC); ''."""
    for view in ("V$DATABASE", "GV$DATABASE"):
        rows = snapshot.rows(view)
        if rows:
            return clean(rows[0].get("DATABASE_ROLE")).upper()
    return ""


# the apply process of each standby role (GV$PROCESS.PNAME)
APPLY_PROCESS = {"PHYSICAL STANDBY": ("MRP0",), "LOGICAL STANDBY": ("LSP0",)}


def apply_running(snapshot: Any, database_role: str) -> dict[str, float]:
    """{inst_id: 1/0} on a physical or logical standby: is its apply process running there."""
    names = APPLY_PROCESS.get(database_role)
    if names is None or not snapshot.has("GV$PROCESS"):
        return {}
    out: dict[str, float] = {}
    instances = {inst(r) for r in snapshot.rows("GV$INSTANCE")} - {None}
    for row in snapshot.rows("GV$PROCESS"):
        i = inst(row)
        if i is None:
            continue
        instances.add(i)
        if clean(row.get("PNAME")).upper() in names:
            out[i] = 1.0
    return {i: out.get(i, 0.0) for i in sorted_inst(instances)}


def apply_delay(snapshot: Any) -> float | None:
    """Seconds of apply delay in force: DELAY_MINS of the MRP0 row(s) (the largest), 0 under real-time
    apply; None without an MRP0 row (apply not running, or not a physical standby).

    Real-time apply is read from this standby's own destination only: GV$ARCHIVE_DEST_STATUS rows of
    TYPE 'LOCAL', of the instance(s) running MRP0 where they have one. The other rows describe remote
    destinations (a standby cascading redo to another standby lists the cascade destination, whose
    RECOVERY_MODE is that database's apply, not ours). No local row: MRP0's DELAY_MINS as it is."""
    apply_rows = [r for r in snapshot.rows("GV$MANAGED_STANDBY") if clean(r.get("PROCESS")).upper() in ("MRP0", "MR(FG)")]
    minutes = [m for m in (num(r.get("DELAY_MINS")) for r in apply_rows) if m is not None]
    if not minutes:
        return None
    local = [r for r in snapshot.rows("GV$ARCHIVE_DEST_STATUS") if clean(r.get("TYPE")).upper() == "LOCAL"]
    applying = {inst(r) for r in apply_rows} - {None}
    own = [r for r in local if inst(r) in applying] or local
    if any("REAL TIME APPLY" in clean(r.get("RECOVERY_MODE")).upper() for r in own):
        return 0.0
    return max(minutes) * 60.0


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    database_role = role(snapshot)
    if "STANDBY" in database_role:
        snap_sb = SPEC.family("oracle_dataguard_snapshot_standby")
        snap_sb.add_metric([], 1.0 if database_role == "SNAPSHOT STANDBY" else 0.0)
        yield snap_sb
    running = SPEC.family("oracle_dataguard_apply_running")
    for i, value in apply_running(snapshot, database_role).items():
        running.add_metric([i], value)
    delay = SPEC.family("oracle_dataguard_apply_delay_seconds")
    seconds = apply_delay(snapshot) if database_role in ("PHYSICAL STANDBY", "") else None
    if seconds is not None:
        delay.add_metric([], seconds)
    yield from emit([running, delay])
    if is_standby(snapshot) is False:
        return
    rows = stats(snapshot)
    lag = SPEC.family("oracle_dataguard_lag_seconds")
    computed = SPEC.family("oracle_dataguard_lag_computed")
    age = SPEC.family("oracle_dataguard_lag_datum_age_seconds")
    for kind, name in KINDS:
        row = rows.get(name)
        if row is None:
            continue
        value = interval_seconds(row.get("VALUE"))
        computed.add_metric([kind], 0.0 if value is None else 1.0)
        if value is not None:
            lag.add_metric([kind], value)
        old = datum_age(row)
        if old is not None:
            age.add_metric([kind], old)
    finish = SPEC.family("oracle_dataguard_apply_finish_seconds")
    row = rows.get("apply finish time")
    value = interval_seconds(row.get("VALUE")) if row else None
    if value is not None:
        finish.add_metric([], value)
    yield from emit([lag, computed, age, finish])
