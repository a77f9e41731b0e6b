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

Every family has the label ``container``: ``""`` for a non-CDB (CON_ID 0) or the CDB-wide rows of
shared undo, else the container's name (V$CONTAINERS.NAME: CDB$ROOT, SALES, ...; its CON_ID when
unnamed). With local undo (12.2+, the DBCA default) each container has its own undo tablespace and
its own rows per instance: read from CDB$ROOT, an ORA-01555 in PDB SALES is
``oracle_undo_snapshot_too_old_errors{container="SALES"}``, never folded into the root's (at most
one series per container and instance; PDB$SEED, read only, is left out). Inside a PDB the view
holds that PDB's undo.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..ora_errors import MISSING_COLUMN
from ..views import Fallback, View, register
from ._common import emit, inst, num, sorted_inst
from ._health import con_id, host_utc_offset, local_to_unix
from .tablespaces import CONTAINERS, container_names

_COLUMNS = ("INST_ID", "BEGIN_TIME", "END_TIME", "MAXQUERYLEN", "SSOLDERRCNT", "NOSPACEERRCNT", "TUNED_UNDORETENTION")
UNDOSTAT_BEFORE_12 = View(
    "GV$UNDOSTAT", _COLUMNS, identity=("INST_ID", "BEGIN_TIME"), where="END_TIME > SYSDATE - :undo_window / 86400",
    where_binds={"undo_window": 3600}, since="9.0", doc="V$UNDOSTAT before 12.1 (no CON_ID)")
# CON_ID selected as a column of the identity: rows.clean_rows keeps every container's rows (local undo)
UNDOSTAT = register(View(
    "GV$UNDOSTAT", _COLUMNS + ("CON_ID",),
    identity=("INST_ID", "CON_ID", "BEGIN_TIME"), where="END_TIME > SYSDATE - :undo_window / 86400",
    where_binds={"undo_window": 3600}, since="9.0",
    fallbacks=(Fallback(MISSING_COLUMN, UNDOSTAT_BEFORE_12, "V$UNDOSTAT.CON_ID needs 12.1"),),
    doc="V$UNDOSTAT, undo statistics per 10-minute interval (the newest interval still filling)"))

_LABELS = ("inst_id", "container")
_VIEWS = (UNDOSTAT.name,)        # names from V$CONTAINERS when it answers, else the CON_ID
SEED_CON_ID = 2

SPEC = Collector(
    "undo", "ORA-01555 and undo space errors of the last hour, the longest query against the tuned undo retention.",
    title="Undo",
    reads=(UNDOSTAT.name, CONTAINERS.name),
    interval=60.0,
    doc="GV$UNDOSTAT keeps a row per 10-minute interval; the statement reads the intervals that ended in the "
        "last hour (a few rows per instance). The error counts are sums over that hour, gauges that drop back "
        "to 0 an hour after the last error (OracleSnapshotTooOld, OracleUndoSpaceErrors). Per instance and "
        "container: with local undo (12.2+) each PDB's undo has its own series (`container`, V$CONTAINERS.NAME; "
        "empty for a non-CDB).",
    metrics=(
        Family("oracle_undo_snapshot_too_old_errors", "gauge",
               "Queries that failed with ORA-01555 (snapshot too old) in the 10-minute intervals of the last hour "
               "(GV$UNDOSTAT.SSOLDERRCNT summed).", _LABELS, source="GV$UNDOSTAT.SSOLDERRCNT", views=_VIEWS),
        Family("oracle_undo_space_errors", "gauge",
               "Requests for undo space that failed (out of space) in the intervals of the last hour "
               "(GV$UNDOSTAT.NOSPACEERRCNT summed).", _LABELS, source="GV$UNDOSTAT.NOSPACEERRCNT", views=_VIEWS),
        Family("oracle_undo_max_query_length_seconds", "gauge",
               "The longest query of the intervals of the last hour (GV$UNDOSTAT.MAXQUERYLEN).",
               _LABELS, source="GV$UNDOSTAT.MAXQUERYLEN", views=_VIEWS),
        Family("oracle_undo_tuned_retention_seconds", "gauge",
               "The undo retention Oracle achieves in the newest interval (GV$UNDOSTAT.TUNED_UNDORETENTION).",
               _LABELS, source="GV$UNDOSTAT.TUNED_UNDORETENTION", since="10.1", views=_VIEWS),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def summary(snapshot: Any) -> dict[tuple[str, str], dict[str, float]]:
    """{(inst_id, container): {ssold, nospace, maxquery, tuned}} over the rows fetched (the last hour)."""
    offset = host_utc_offset(snapshot)
    names = container_names(snapshot)
    out: dict[tuple[str, str], dict[str, float]] = {}
    newest: dict[tuple[str, str], float] = {}
    for row in snapshot.rows(UNDOSTAT.name):
        i, cid = inst(row), con_id(row)
        if i is None or cid == SEED_CON_ID:
            continue
        key = (i, "" if cid == 0 else names.get(cid, str(cid)))
        acc = out.setdefault(key, {})
        for field, column in (("ssold", "SSOLDERRCNT"), ("nospace", "NOSPACEERRCNT")):
            count = num(row.get(column))            # NULL: no value, not a zero
            if count is not None:
                acc[field] = acc.get(field, 0.0) + count
        longest = num(row.get("MAXQUERYLEN"))
        if longest is not None:
            acc["maxquery"] = max(longest, acc.get("maxquery", longest))
        begin, tuned = local_to_unix(row.get("BEGIN_TIME"), offset), num(row.get("TUNED_UNDORETENTION"))
        if tuned is not None and begin is not None and begin >= newest.get(key, begin):
            newest[key], acc["tuned"] = begin, tuned
    return out


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    fams = {key: SPEC.family(name) for key, name in (
        ("ssold", "oracle_undo_snapshot_too_old_errors"), ("nospace", "oracle_undo_space_errors"),
        ("maxquery", "oracle_undo_max_query_length_seconds"), ("tuned", "oracle_undo_tuned_retention_seconds"))}
    found = summary(snapshot)
    for i in sorted_inst({i for i, _ in found}):
        for (inst_id, container) in sorted(k for k in found if k[0] == i):
            for key, fam in fams.items():
                if key in found[(inst_id, container)]:
                    fam.add_metric([inst_id, container], found[(inst_id, container)][key])
    yield from emit(fams.values())
