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
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import DATAGUARD_STATS, DATABASE
from ._common import emit
from ._health import clean, interval_seconds, local_wallclock

SPEC = Collector(
    "dataguard", "Data Guard transport and apply lag on a standby (V$DATAGUARD_STATS).",
    reads=(DATAGUARD_STATS.name, DATABASE.name),
    metrics=(
        Family("oracle_dataguard_lag_seconds", "gauge",
               "Data Guard lag on this standby, seconds (V$DATAGUARD_STATS 'transport lag' / 'apply lag').",
               ("kind",), source="VALUE of 'transport lag' / 'apply lag', an INTERVAL DAY TO SECOND as text (`+00 00:00:05`, `+01 02:03:04` = 93784 s)", since="11.2", note='Labels: kind (`transport`, `apply`).'),
        Family("oracle_dataguard_lag_computed", "gauge",
               "1 if V$DATAGUARD_STATS has a value for the lag, 0 if the lag is not computed (NULL VALUE).",
               ("kind",), source='1 if the lag has a value, 0 if the row is there but VALUE is NULL: the lag is **not computed** (standby lost the primary, apply stopped). A missing lag is not a zero lag', since="11.2", measure='1/0'),
        Family("oracle_dataguard_lag_datum_age_seconds", "gauge",
               "Age of the data the lag was computed from, seconds (TIME_COMPUTED - DATUM_TIME); grows while the "
               "standby receives nothing from the primary.", ("kind",),
               source='TIME_COMPUTED - DATUM_TIME (11.2+): age of the data the lag was computed from. Oracle: an unchanging DATUM_TIME means the standby is not receiving data, and the reported lag (however small) is stale. Both are standby-local text times, so no time zone is involved', since="11.2"),
        Family("oracle_dataguard_apply_finish_seconds", "gauge",
               "Estimated time to apply the redo received so far, seconds (V$DATAGUARD_STATS 'apply finish time').",
               (), source="'apply finish time': estimated time to apply the redo received so far", since="11.2"),
    ), doc='Emitted only on a standby (V$DATABASE.DATABASE_ROLE contains STANDBY; a primary returns no rows from 12.2, empty values before). The role is `database_role` of `oracle_database_info`. Alert on `oracle_dataguard_lag_seconds > N`, on `oracle_dataguard_lag_computed == 0` and on `oracle_dataguard_lag_datum_age_seconds > N` (a lag that stopped being computed or updated).', title='Data Guard')
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


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
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
