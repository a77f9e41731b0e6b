"""Undo failures: ORA-01555 (snapshot too old) and undo out-of-space errors, the longest query
against the tuned undo retention (GV$UNDOSTAT; on by default, read every minute).

GV$UNDOSTAT has one row per instance and 10-minute interval (the newest one still filling, up
to 4 days of them); the statement reads only the intervals that ended in the last
hour (``END_TIME > SYSDATE - 3600/86400``: the database's own clock), a handful of rows.

* ``oracle_undo_snapshot_too_old_errors{inst_id}``: SSOLDERRCNT summed over those intervals:
  queries that failed with ORA-01555 in the last hour. A gauge over a window, not a counter: the
  view keeps no running total.
* ``oracle_undo_space_errors{inst_id}``: NOSPACEERRCNT, the same way: transactions that could not
  get undo space (ORA-30036 and friends).
* ``oracle_undo_max_query_length_seconds{inst_id}``: the longest query of those intervals
  (MAXQUERYLEN).
* ``oracle_undo_tuned_retention_seconds{inst_id}``: TUNED_UNDORETENTION of the newest interval,
  the retention Oracle achieves. A longest query above it is a query that may get ORA-01555
  (a ratio in PromQL, on the dashboard).

Inside a PDB with local undo (12.2+) the view holds that PDB's undo; from the root of a CDB with
local undo, rows per container are folded to the lowest CON_ID (the root's).
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import View, register
from ._common import emit, inst, num, sorted_inst
from ._health import host_utc_offset, local_to_unix

UNDOSTAT = register(View(
    "GV$UNDOSTAT", ("INST_ID", "BEGIN_TIME", "END_TIME", "MAXQUERYLEN", "SSOLDERRCNT", "NOSPACEERRCNT",
                    "TUNED_UNDORETENTION"),
    identity=("INST_ID", "BEGIN_TIME"), where="END_TIME > SYSDATE - :undo_window / 86400",
    where_binds={"undo_window": 3600}, since="9.0",
    doc="V$UNDOSTAT, undo statistics per 10-minute interval (the newest interval still filling)"))

SPEC = Collector(
    "undo", "ORA-01555 and undo space errors of the last hour, the longest query against the tuned undo retention.",
    title="Undo",
    reads=(UNDOSTAT.name,),
    interval=60.0,
    doc="GV$UNDOSTAT keeps a row per 10-minute interval; the statement reads the intervals that ended in the "
        "last hour (a few rows per instance). The error counts are sums over that hour, gauges that drop back "
        "to 0 an hour after the last error (OracleSnapshotTooOld, OracleUndoSpaceErrors).",
    metrics=(
        Family("oracle_undo_snapshot_too_old_errors", "gauge",
               "Queries that failed with ORA-01555 (snapshot too old) in the 10-minute intervals of the last hour "
               "(GV$UNDOSTAT.SSOLDERRCNT summed).", ("inst_id",), source="GV$UNDOSTAT.SSOLDERRCNT"),
        Family("oracle_undo_space_errors", "gauge",
               "Requests for undo space that failed (out of space) in the intervals of the last hour "
               "(GV$UNDOSTAT.NOSPACEERRCNT summed).", ("inst_id",), source="GV$UNDOSTAT.NOSPACEERRCNT"),
        Family("oracle_undo_max_query_length_seconds", "gauge",
               "The longest query of the intervals of the last hour (GV$UNDOSTAT.MAXQUERYLEN).",
               ("inst_id",), source="GV$UNDOSTAT.MAXQUERYLEN"),
        Family("oracle_undo_tuned_retention_seconds", "gauge",
               "The undo retention Oracle achieves in the newest interval (GV$UNDOSTAT.TUNED_UNDORETENTION).",
               ("inst_id",), source="GV$UNDOSTAT.TUNED_UNDORETENTION", since="10.1"),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def summary(snapshot: Any) -> dict[str, dict[str, float]]:
    """{inst_id: {ssold, nospace, maxquery, tuned}} over the rows fetched (the last hour)."""
    offset = host_utc_offset(snapshot)
    out: dict[str, dict[str, float]] = {}
    newest: dict[str, float] = {}
    for row in snapshot.rows(UNDOSTAT.name):
        i = inst(row)
        if i is None:
            continue
        acc = out.setdefault(i, {})
        for key, column in (("ssold", "SSOLDERRCNT"), ("nospace", "NOSPACEERRCNT")):
            count = num(row.get(column))            # NULL: no value, not a zero
            if count is not None:
                acc[key] = acc.get(key, 0.0) + count
        longest = num(row.get("MAXQUERYLEN"))
        if longest is not None:
            acc["maxquery"] = max(longest, acc.get("maxquery", longest))
        begin, tuned = local_to_unix(row.get("BEGIN_TIME"), offset), num(row.get("TUNED_UNDORETENTION"))
        if tuned is not None and begin is not None and begin >= newest.get(i, begin):
            newest[i], acc["tuned"] = begin, tuned
    return out


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    fams = {key: SPEC.family(name) for key, name in (
        ("ssold", "oracle_undo_snapshot_too_old_errors"), ("nospace", "oracle_undo_space_errors"),
        ("maxquery", "oracle_undo_max_query_length_seconds"), ("tuned", "oracle_undo_tuned_retention_seconds"))}
    found = summary(snapshot)
    for i in sorted_inst(found):
        for key, fam in fams.items():
            if key in found[i]:
                fam.add_metric([i], found[i][key])
    yield from emit(fams.values())
