"""Long-running calls: the active user calls that have run longest, by SQL_ID and user (GV$SESSION,
the rows the sessions collector reads anyway: no statement of its own; on by default).

GV$SESSION.LAST_CALL_ET is, for an ACTIVE session, the seconds since its current call started (a
query, a DML, a PL/SQL block called from the client); for an INACTIVE one the seconds since its
last call ended. A background process's call lasts since the process started (days): background
sessions are never counted here, only TYPE 'USER' sessions with STATUS 'ACTIVE'.

* ``oracle_long_call_seconds{inst_id, sql_id, username}``: LAST_CALL_ET of the ``long_calls_max``
  (default 5) longest active user calls per instance that have run at least
  ``long_calls_min_seconds`` (default 60); sessions running the same SQL_ID as the same user are one
  series (the longest). SQL_ID is the statement running now (``none`` between statements of a
  PL/SQL call); the text is never a label: ``SELECT sql_fulltext FROM gv$sql WHERE sql_id = ...``.
* ``oracle_long_calls{inst_id}``: active user calls running at least ``long_calls_min_seconds``,
  the ones beyond ``long_calls_max`` included.

Which rows the GV$SESSION statement reads (oracle_exporter.views.SESSION): sessions on CPU or in a
non-idle wait, so an ACTIVE call sleeping in an idle wait (DBMS_LOCK.SLEEP's 'PL/SQL lock timer')
without a transaction is not seen.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family, Setting

from ..views import SESSION
from ._common import emit, inst, num, sorted_inst
from ._health import clean

SPEC = Collector(
    "long_calls", "The longest-running active user calls by SQL_ID and user (GV$SESSION.LAST_CALL_ET).",
    title="Long-running calls",
    reads=(SESSION.name,),
    settings=(
        Setting("long_calls_max", 5, "active user calls with a series per instance (longest first)",
                kind="int", minimum=0),
        Setting("long_calls_min_seconds", 60.0, "a call gets a series once it has run this long (seconds)",
                kind="number", minimum=0),
    ),
    doc="No statement of its own: the GV$SESSION rows the sessions collector reads (LAST_CALL_ET and SQL_ID "
        "were added to that statement). Background sessions are left out (their call lasts since the process "
        "started). The SQL text is never a label: GV$SQL.SQL_FULLTEXT by SQL_ID.",
    metrics=(
        Family("oracle_long_call_seconds", "gauge",
               "Seconds the active user call has been running (GV$SESSION.LAST_CALL_ET), the long_calls_max "
               "longest per instance that ran at least long_calls_min_seconds; sql_id 'none' between statements.",
               ("inst_id", "sql_id", "username"), source="GV$SESSION.LAST_CALL_ET"),
        Family("oracle_long_calls", "gauge",
               "Active user calls running at least long_calls_min_seconds now, those beyond long_calls_max "
               "included.", ("inst_id",), source="GV$SESSION.LAST_CALL_ET"),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def long_calls(rows: Iterable[dict], min_seconds: float) -> dict[str, dict[tuple[str, str], float]]:
    """{inst_id: {(sql_id, username): longest LAST_CALL_ET}} of the active user calls >= min_seconds,
    and the count of such calls under the key ("", "") of each instance."""
    out: dict[str, dict[tuple[str, str], float]] = {}
    for row in rows:
        i = inst(row)
        if i is None or clean(row.get("TYPE")).upper() != "USER" or clean(row.get("STATUS")).upper() != "ACTIVE":
            continue
        secs = num(row.get("LAST_CALL_ET"))
        if secs is None or secs < min_seconds:
            continue
        calls = out.setdefault(i, {("", ""): 0.0})
        calls[("", "")] += 1
        key = (clean(row.get("SQL_ID")) or "none", clean(row.get("USERNAME")) or "none")
        calls[key] = max(secs, calls.get(key, secs))
    return out


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    longest = SPEC.family("oracle_long_call_seconds")
    count = SPEC.family("oracle_long_calls")
    if not snapshot.has(SESSION.name):
        yield from emit([longest, count])
        return
    limit = getattr(settings, "long_calls_max", SPEC.default("long_calls_max"))
    floor = getattr(settings, "long_calls_min_seconds", SPEC.default("long_calls_min_seconds"))
    found = long_calls(snapshot.rows(SESSION.name), floor)
    instances = set(found) | {i for i in (inst(r) for r in snapshot.rows(SESSION.name)) if i is not None}
    for i in sorted_inst(instances):
        calls = dict(found.get(i, {("", ""): 0.0}))
        count.add_metric([i], calls.pop(("", "")))
        for (sql_id, user), secs in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]:
            longest.add_metric([i, sql_id, user], secs)
    yield from emit([longest, count])
