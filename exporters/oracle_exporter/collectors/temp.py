"""Temp space by consumer: what uses the temporary tablespaces right now and who uses the most
(GV$TEMPSEG_USAGE; on by default).

How full each temporary tablespace is comes from the tablespaces collector
(``oracle_tablespace_used_bytes{contents="TEMPORARY"}``, sort space in use, against
``oracle_tablespace_max_bytes``); this collector answers the next question, "who":

* ``oracle_temp_used_bytes{inst_id, tablespace, segtype}``: temp space held by the sessions of
  the instance, per temporary tablespace and segment type (SORT, HASH, DATA (global temporary
  tables), INDEX, LOB_DATA, LOB_INDEX; any other type is "other"). BLOCKS x db_block_size (a
  temporary tablespace has the database's block size unless created otherwise).
* ``oracle_temp_top_consumer_bytes{inst_id, username, sql_id}``: the one session per instance
  holding the most temp space, with its user and the SQL_ID of the statement that allocated it
  (no SQL text); one series per instance, its labels follow the top consumer.

GV$TEMPSEG_USAGE has a row per temp segment of a session: few rows unless the instance is busy
sorting. Read from a CDB root it has the segments of every container.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import PARAMETER, View, register
from ._common import emit, inst, num, parameters, sorted_inst
from ._health import clean

TEMPSEG = register(View(
    "GV$TEMPSEG_USAGE", ("INST_ID", "USERNAME", "SESSION_ADDR", "SESSION_NUM", "SQL_ID", "TABLESPACE", "SEGTYPE",
                         "BLOCKS"),
    identity=("INST_ID", "SESSION_ADDR", "SESSION_NUM", "TABLESPACE", "SEGTYPE", "SQL_ID"), since="9.2",
    doc="V$TEMPSEG_USAGE (V$SORT_USAGE before 9.2), one row per temp segment a session holds"))

SEGTYPES = ("SORT", "HASH", "DATA", "INDEX", "LOB_DATA", "LOB_INDEX")
NAMES = {PARAMETER.name: ("db_block_size",)}

SPEC = Collector(
    "temp", "Temp space per temporary tablespace and consumer type, and the top consumer (GV$TEMPSEG_USAGE).",
    title="Temp space by consumer",
    reads=(TEMPSEG.name, PARAMETER.name),
    interval=60.0,
    doc="How full a temporary tablespace is comes from the tablespaces collector (contents TEMPORARY); this "
        "collector says who holds the space: per segment type (sorts, hash joins, global temporary tables, LOBs) "
        "and the top session with its user and SQL_ID. Bytes are BLOCKS x db_block_size.",
    metrics=(
        Family("oracle_temp_used_bytes", "gauge",
               "Temp space held by the sessions of the instance, per temporary tablespace and segment type "
               "(GV$TEMPSEG_USAGE.BLOCKS x db_block_size).", ("inst_id", "tablespace", "segtype"),
               source="GV$TEMPSEG_USAGE.BLOCKS",
               note="segtype: SORT, HASH, DATA, INDEX, LOB_DATA, LOB_INDEX, other."),
        Family("oracle_temp_top_consumer_bytes", "gauge",
               "Temp space held by the session holding the most on the instance, with its user and SQL_ID.",
               ("inst_id", "username", "sql_id"), source="GV$TEMPSEG_USAGE.BLOCKS",
               note="one series per instance; its labels follow the top consumer."),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def usage(snapshot: Any) -> tuple[dict[tuple[str, str, str], float], dict[str, tuple[float, str, str]]]:
    """({(inst, tablespace, segtype): bytes}, {inst: (bytes, username, sql_id) of the top session})."""
    block = parameters(snapshot)          # GV$SYSTEM_PARAMETER (GV$PARAMETER in old recordings)
    per: dict[tuple[str, str, str], float] = {}
    sessions: dict[tuple[str, str, str], list] = {}
    for row in snapshot.rows(TEMPSEG.name):
        i, blocks = inst(row), num(row.get("BLOCKS"))
        size = block.get(i or "", {}).get("db_block_size") or next(
            (v["db_block_size"] for v in block.values() if "db_block_size" in v), None)
        if i is None or blocks is None or not size:
            continue
        seg = clean(row.get("SEGTYPE")).upper()
        key = (i, clean(row.get("TABLESPACE")), seg if seg in SEGTYPES else "other")
        per[key] = per.get(key, 0.0) + blocks * size
        who = (i, clean(row.get("SESSION_ADDR")), clean(row.get("SESSION_NUM")))
        acc = sessions.setdefault(who, [0.0, clean(row.get("USERNAME")), clean(row.get("SQL_ID"))])
        acc[0] += blocks * size
    top: dict[str, tuple[float, str, str]] = {}
    for (i, _, _), (size, user, sql) in sorted(sessions.items()):
        if size > top.get(i, (-1.0,))[0]:
            top[i] = (size, user, sql)
    return per, top


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    used = SPEC.family("oracle_temp_used_bytes")
    top = SPEC.family("oracle_temp_top_consumer_bytes")
    per, tops = usage(snapshot)
    for key in sorted(per, key=lambda k: (len(k[0]), k)):
        used.add_metric(list(key), per[key])
    for i in sorted_inst(tops):
        size, user, sql = tops[i]
        top.add_metric([i, user, sql], size)
    yield from emit([used, top])
