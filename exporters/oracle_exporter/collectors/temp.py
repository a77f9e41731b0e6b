"""Temp space by consumer: what uses the temporary tablespaces right now and who uses the most
(GV$TEMPSEG_USAGE; on by default).

How full each temporary tablespace is comes from the tablespaces collector
(``oracle_tablespace_used_bytes{contents="TEMPORARY"}``, sort space in use, against
``oracle_tablespace_max_bytes``); this collector answers the next question, "who":

* ``oracle_temp_used_bytes{inst_id, container, tablespace, segtype}``: temp space held by the
  sessions of the instance, per container, temporary tablespace and segment type (SORT, HASH, DATA (global temporary
  tables), INDEX, LOB_DATA, LOB_INDEX; any other type is "other"). BLOCKS x db_block_size (a
  temporary tablespace has the database's block size unless created otherwise).
* ``oracle_temp_top_consumer_bytes{inst_id, container, username, sql_id}``: the one session per
  instance holding the most temp space, with its container, its user and the SQL_ID of the
  statement that created its temp segments (SQL_ID_TEMPSEG, 12.1+; V$TEMPSEG_USAGE.SQL_ID is the
  session's current or previous statement, which moves on while the space stays held: read only
  before 12.1, where SQL_ID_TEMPSEG does not exist); no SQL text; one series per instance, its
  labels follow the top consumer.

GV$TEMPSEG_USAGE has a row per temp segment of a session (a session may hold several of one type,
e.g. two global temporary tables: each segment is its own row, identified by its first extent,
SEGRFNO# and SEGBLK#): few rows unless the instance is busy sorting. Read from a CDB root it has
the segments of every container, each PDB with its own temporary tablespace (often named TEMP in
every PDB): ``container`` (V$CONTAINERS.NAME, ``""`` in a non-CDB) keeps them apart, so a PDB's
temp matches ``oracle_tablespace_used_bytes{container, tablespace}`` (at most one series per
container, tablespace and segment type). PDB$SEED holds none.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..ora_errors import MISSING_COLUMN
from ..views import PARAMETER, Fallback, View, register
from ._common import emit, inst, num, parameters, sorted_inst
from ._health import clean, con_id
from .tablespaces import CONTAINERS, container_names

# a segment: the session, its container, the tablespace and the first extent (file and block)
_IDENTITY = ("INST_ID", "CON_ID", "SESSION_ADDR", "SESSION_NUM", "TABLESPACE", "SEGTYPE", "SEGRFNO#", "SEGBLK#")
# CON_ID selected as a column of the identity (rows.clean_rows keeps every container's segments)
TEMPSEG_BEFORE_12 = View(
    "GV$TEMPSEG_USAGE", ("INST_ID", "USERNAME", "SESSION_ADDR", "SESSION_NUM", "SQL_ID", "TABLESPACE", "SEGTYPE",
                         "SEGRFNO#", "SEGBLK#", "BLOCKS"),
    identity=tuple(c for c in _IDENTITY if c != "CON_ID"), since="9.2",
    doc="V$TEMPSEG_USAGE before 12.1 (no SQL_ID_TEMPSEG, no CON_ID)")
TEMPSEG = register(View(
    "GV$TEMPSEG_USAGE", ("INST_ID", "USERNAME", "SESSION_ADDR", "SESSION_NUM", "SQL_ID", "SQL_ID_TEMPSEG",
                         "TABLESPACE", "SEGTYPE", "SEGRFNO#", "SEGBLK#", "BLOCKS", "CON_ID"),
    identity=_IDENTITY, since="9.2",
    fallbacks=(Fallback(MISSING_COLUMN, TEMPSEG_BEFORE_12, "V$TEMPSEG_USAGE.SQL_ID_TEMPSEG and CON_ID need 12.1"),),
    doc="V$TEMPSEG_USAGE (V$SORT_USAGE before 9.2), one row per temp segment a session holds"))

SEGTYPES = ("SORT", "HASH", "DATA", "INDEX", "LOB_DATA", "LOB_INDEX")
NAMES = {PARAMETER.name: ("db_block_size",)}

SPEC = Collector(
    "temp", "Temp space per temporary tablespace and consumer type, and the top consumer (GV$TEMPSEG_USAGE).",
    title="Temp space by consumer",
    reads=(TEMPSEG.name, PARAMETER.name, CONTAINERS.name),
    interval=60.0,
    doc="How full a temporary tablespace is comes from the tablespaces collector (contents TEMPORARY); this "
        "collector says who holds the space: per segment type (sorts, hash joins, global temporary tables, LOBs) "
        "and the top session with its container, user and the SQL_ID that created its segments (SQL_ID_TEMPSEG, "
        "12.1+). Bytes are BLOCKS x db_block_size. From a CDB root per container (`container`, V$CONTAINERS.NAME; "
        "empty in a non-CDB): each PDB's TEMP is its own series.",
    metrics=(
        Family("oracle_temp_used_bytes", "gauge",
               "Temp space held by the sessions of the instance, per temporary tablespace and segment type "
               "(GV$TEMPSEG_USAGE.BLOCKS x db_block_size), per container.",
               ("inst_id", "container", "tablespace", "segtype"), source="GV$TEMPSEG_USAGE.BLOCKS",
               views=(TEMPSEG.name, PARAMETER.name, CONTAINERS.name),
               note="segtype: SORT, HASH, DATA, INDEX, LOB_DATA, LOB_INDEX, other."),
        Family("oracle_temp_top_consumer_bytes", "gauge",
               "Temp space held by the session holding the most on the instance, with its container, user and the "
               "SQL_ID that created its temp segments (SQL_ID_TEMPSEG; SQL_ID before 12.1).",
               ("inst_id", "container", "username", "sql_id"), source="GV$TEMPSEG_USAGE.BLOCKS",
               views=(TEMPSEG.name, PARAMETER.name, CONTAINERS.name),
               note="one series per instance; its labels follow the top consumer."),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def usage(snapshot: Any) -> tuple[dict[tuple[str, str, str, str], float], dict[str, tuple[float, str, str, str]]]:
    """({(inst, container, tablespace, segtype): bytes},
    {inst: (bytes, container, username, sql_id) of the top session})."""
    block = parameters(snapshot)          # GV$SYSTEM_PARAMETER (GV$PARAMETER in old recordings)
    names = container_names(snapshot)
    per: dict[tuple[str, str, str, str], float] = {}
    sessions: dict[tuple[str, str, str, str], list] = {}
    for row in snapshot.rows(TEMPSEG.name):
        i, blocks = inst(row), num(row.get("BLOCKS"))
        size = block.get(i or "", {}).get("db_block_size") or next(
            (v["db_block_size"] for v in block.values() if "db_block_size" in v), None)
        if i is None or blocks is None or not size:
            continue
        cid = con_id(row)
        container = "" if cid == 0 else names.get(cid, str(cid))
        seg = clean(row.get("SEGTYPE")).upper()
        key = (i, container, clean(row.get("TABLESPACE")), seg if seg in SEGTYPES else "other")
        per[key] = per.get(key, 0.0) + blocks * size
        who = (i, container, clean(row.get("SESSION_ADDR")), clean(row.get("SESSION_NUM")))
        sql = clean(row.get("SQL_ID_TEMPSEG")) or clean(row.get("SQL_ID"))
        acc = sessions.setdefault(who, [0.0, clean(row.get("USERNAME")), sql, 0.0])
        acc[0] += blocks * size
        if blocks * size > acc[3] and sql:      # the SQL_ID of the session's largest segment
            acc[2], acc[3] = sql, blocks * size
    top: dict[str, tuple[float, str, str, str]] = {}
    for (i, container, _, _), (size, user, sql, _) in sorted(sessions.items()):
        if size > top.get(i, (-1.0,))[0]:
            top[i] = (size, container, user, sql)
    return per, top


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    used = SPEC.family("oracle_temp_used_bytes")
    top = SPEC.family("oracle_temp_top_consumer_bytes")
    per, tops = usage(snapshot)
    for key in sorted(per, key=lambda k: (len(k[0]), k)):
        used.add_metric(list(key), per[key])
    for i in sorted_inst(tops):
        size, container, user, sql = tops[i]
        top.add_metric([i, container, user, sql], size)
    yield from emit([used, top])
