"""Helpers shared by the collectors: tolerant number parsing and row grouping.

Rows come from a live fetch or a JSON Lines recording, so a number may be an
int, a float, a Decimal, a numeric string (GV$PARAMETER.VALUE is VARCHAR2) or
NULL (None). Nothing here raises on a NULL: the value is simply skipped.
"""
from __future__ import annotations

import datetime as _dt
import math
from collections import defaultdict
from decimal import Decimal
from operator import itemgetter
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family
from exporter_common.families import drop_negative, rows_of, sample_count


def num(value: Any) -> float | None:
    """A finite float, or None for NULL / non-numeric / NaN values."""
    kind = type(value)        # the common cases first, by exact type (bool is not int here)
    if kind is float:
        return value if value - value == 0.0 else None      # inf - inf and nan - nan are nan
    if kind is int:
        return float(value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float, Decimal)):
        out = float(value)
    elif isinstance(value, str):
        try:
            out = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return out if math.isfinite(out) else None


_EXACT = 2 ** 53     # ints a float holds exactly: str(int(float(v))) == str(v)


def inst(row: dict[str, Any]) -> str | None:
    """INST_ID as a label value ("1", "2", ...); None when missing."""
    value = row.get("INST_ID")
    if type(value) is int and -_EXACT < value < _EXACT:
        return str(value)
    value = num(value)
    if value is None:
        return None
    return str(int(value))


def text(value: Any) -> str:
    """A label value from a VARCHAR2 column; NULL becomes the empty string."""
    if value.__class__ is str:      # the usual case first
        return value
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def by_inst_name(rows: Iterable[dict[str, Any]], name_col: str = "NAME",
                 value_col: str = "VALUE") -> dict[str, dict[str, float]]:
    """{inst_id: {name: value}} for NAME/VALUE views (GV$SYSSTAT, GV$PGASTAT, ...).

    Snapshot.rows already keeps one row per (inst, name) (oracle_exporter.rows:
    the lowest CON_ID wins); NULL values are skipped.
    """
    out: dict[str, dict[str, float]] = {}
    for row in rows:        # inst() and num() inlined for the usual int INST_ID and int/float VALUE
        i = row.get("INST_ID")
        if type(i) is int and -_EXACT < i < _EXACT:
            i = str(i)
        else:
            i = inst(row)
            if i is None:
                continue
        name = row.get(name_col)
        if name is None:
            continue
        value = row.get(value_col)
        kind = type(value)
        if kind is int:
            value = float(value)
        elif kind is not float or value - value != 0.0:
            value = num(value)
            if value is None:
                continue
        name = str(name)
        names = out.get(i)
        if names is None:
            names = out[i] = {}
        names[name] = names.get(name, 0.0) + value
    return out


def inst_stats(snapshot: Any, view: str = "GV$SYSSTAT", name_col: str = "NAME",
               value_col: str = "VALUE") -> dict[str, dict[str, float]]:
    """``by_inst_name`` of a view of the snapshot, computed once per snapshot (GV$SYSSTAT is read
    by several collectors): read only."""
    derived = getattr(snapshot, "derived", None)
    if derived is None:
        return by_inst_name(snapshot.rows(view), name_col, value_col)
    return derived(("by_inst_name", view, name_col, value_col),
                   lambda: by_inst_name(snapshot.rows(view), name_col, value_col))


def parse_time(value: Any) -> float | None:
    """Unix seconds from an ISO 8601 DATE/TIMESTAMP as recorded.

    Oracle DATE carries no time zone: naive values are taken as UTC.
    """
    if isinstance(value, _dt.datetime):
        moment = value
    elif isinstance(value, str) and value.strip():
        try:
            moment = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return moment.timestamp()


def sorted_inst(keys: Iterable[str]) -> list[str]:
    return sorted(keys, key=lambda k: (len(k), k))


def emit(families: Iterable[Metric]) -> Iterable[Metric]:
    """Yield only families that carry at least one sample.

    A counter can never be negative (Prometheus/OpenMetrics): a negative value
    in a cumulative Oracle column (a 32-bit statistic that wrapped on an old
    release, or a corrupt recording) is dropped rather than exposed."""
    for family in families:
        rows = rows_of(family)
        if rows is not None:        # kept as rows: a row is at least one sample (a histogram's, its buckets)
            if rows and family.type == "counter":
                drop_negative(family)
                rows = family._rows
            if rows:
                yield family
            continue
        if family.type == "counter":
            drop_negative(family)
        if sample_count(family):
            yield family








def declared_per_instance(spec: Collector, values: dict[str, dict[str, float]],
                          table: Iterable[tuple[str, str, float]]) -> list[Metric]:
    """``per_instance`` for declared families: one family per (metric, source name, scale) row,
    built from ``spec``'s declaration of that metric (type, help and the ``inst_id`` label),
    with an ``inst_id`` sample per instance that has the source name."""
    families = []
    order = [(i, values[i]) for i in sorted_inst(values)]
    for name, source, scale in table:
        family = spec.family(name)
        for i, named in order:
            if source in named:
                family.add_metric((i,), named[source] * scale)
        families.append(family)
    return families


def columns(rows: Iterable[dict[str, Any]], names: tuple[str, ...]) -> list[tuple]:
    """Each row's values of ``names`` (two or more) as a tuple, None where a row lacks the column:
    one C call per row when every row has them all (the usual: the statement selects them)."""
    get = itemgetter(*names)
    try:
        return list(map(get, rows))
    except KeyError:
        return [tuple(map(row.get, names)) for row in rows]


def thread_owners(snapshot: Any) -> dict[int, str]:
    """{THREAD#: inst_id} from GV$INSTANCE (the instance that opened each redo thread).

    Without GV$INSTANCE, a snapshot whose GV$LOG rows come from exactly one
    instance maps every thread to that instance (single-instance database).
    """
    owners: dict[int, str] = {}
    for row in snapshot.rows("GV$INSTANCE"):
        i = inst(row)
        thread = num(row.get("THREAD#"))
        if i is not None and thread is not None:
            owners[int(thread)] = i
    if owners:
        return owners
    instances = {inst(r) for r in snapshot.rows("GV$LOG")} - {None}
    threads = {int(t) for t in (num(r.get("THREAD#")) for r in snapshot.rows("GV$LOG")) if t is not None}
    if len(instances) == 1 and len(threads) == 1:
        return {threads.pop(): instances.pop()}
    # RAC without GV$INSTANCE in the snapshot: by default instance n opens thread n
    # (THREAD parameter unset); map a thread to the instance of the same number
    # when that instance answered, and leave the other threads out.
    return {t: str(t) for t in threads if str(t) in instances}


def parameters(snapshot: Any) -> dict[str, dict[str, float]]:
    """{inst_id: {parameter name (lower case): numeric value}} from GV$SYSTEM_PARAMETER.

    GV$SYSTEM_PARAMETER holds the instance's values (GV$PARAMETER, read before issue 11,
    shows the values of the querying session, which ALTER SESSION may change); recordings
    made with GV$PARAMETER (or V$PARAMETER) are still read when GV$SYSTEM_PARAMETER is absent.
    VALUE is VARCHAR2; non-numeric values are skipped. When a name appears
    twice for one instance (a CDB may list it per container) the first row wins. Computed once
    per snapshot: read only.
    """
    derived = getattr(snapshot, "derived", None)
    if derived is not None:     # read by several collectors: once per snapshot
        return derived(("parameters",), lambda: _parameters(snapshot))
    return _parameters(snapshot)


def _parameters(snapshot: Any) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(dict)
    view = "GV$SYSTEM_PARAMETER" if snapshot.has("GV$SYSTEM_PARAMETER") else "GV$PARAMETER"
    for row in snapshot.rows(view):
        i = inst(row)
        name = row.get("NAME")
        value = num(row.get("VALUE"))
        if i is None or name is None or value is None:
            continue
        out[i].setdefault(str(name).lower(), value)
    return dict(out)




def declared_parameter(snapshot: Any, parameter: str, declared: Family) -> Metric:
    """A gauge of a declared family (``SPEC.metric(name)``, label ``inst_id``):
    the numeric value of ``parameter`` per instance (GV$SYSTEM_PARAMETER)."""
    family = declared.make()
    params = parameters(snapshot)
    for i in sorted_inst(params):
        if parameter in params[i]:
            family.add_metric([i], params[i][parameter])
    return family
