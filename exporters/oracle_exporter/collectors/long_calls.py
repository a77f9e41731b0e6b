"""Long-running calls: the active user calls that have run longest, by SQL_ID and user (GV$SESSION,
the rows the sessions collector reads anyway: no statement of its own; on by default).

GV$SESSION.LAST_CALL_ET is, for an ACTIVE session, the seconds since its current call started (a
query, a DML, a PL/SQL block called from the client); for an INACTIVE one the seconds since its
last call ended. A background process's call lasts since the process started (days): background
sessions are never counted here, only TYPE 'USER' sessions with STATUS 'ACTIVE', and of these not
the ones waiting now (STATE 'WAITING') in an event of the Idle class (WAIT_CLASS 'Idle'): an AQ
dequeue with WAIT FOREVER ('Streams AQ: waiting for messages in the queue'), DBMS_LOCK.SLEEP
('PL/SQL lock timer'), DBMS_PIPE.RECEIVE_MESSAGE ('pipe get') wait for work inside one call for
days; counted, they would push a runaway query out of the top ``long_calls_max``.

* ``oracle_long_call_seconds{inst_id, sql_id, username, program_kind}``: LAST_CALL_ET of the
  ``long_calls_max`` (default 5) longest active user calls per instance and program_kind that have
  run at least ``long_calls_min_seconds`` (default 60); sessions of one kind running the same SQL_ID
  as the same user are one series (the longest). SQL_ID is the statement running now (``none``
  between statements of a PL/SQL call); the text is never a label: ``SELECT sql_fulltext FROM gv$sql WHERE sql_id = ...``.
* ``oracle_long_calls{inst_id, program_kind}``: active user calls running at least
  ``long_calls_min_seconds``, the ones beyond ``long_calls_max`` included (each kind, 0 included).

``program_kind`` (review of issue 24 #15): RMAN channels, Data Pump processes and parallel-query
slaves are TYPE 'USER' sessions whose call lasts as long as the backup, the export or the query;
GV$SESSION.PROGRAM (already read) tells them apart, so the long-call alert judges the users' own
calls only while the others stay visible:

* ``rman``: PROGRAM 'rman@host (TNS V1-V3)' (Windows 'RMAN.EXE'): the server session of every
  channel (and the RMAN client's own) carries the name of the rman client program;
* ``datapump``: PROGRAM 'oracle@host (DM00)' (the master process) or '(DWnn)' (the workers);
  'ORACLE.EXE (DW00)' on Windows;
* ``px``: PROGRAM 'oracle@host (Pnnn)' (parallel execution servers; PZnn for the GV$ queries of
  RAC); the query coordinator is the user's own session (``user``);
* ``job``: PROGRAM 'oracle@host (Jnnn)' (DBMS_SCHEDULER / DBMS_JOB job slaves: the nightly
  statistics gathering of the maintenance window, the applications' scheduled jobs);
* ``user``: every other session (applications, SQL*Plus).

Which rows the GV$SESSION statement reads (oracle_exporter.views.SESSION): sessions on CPU or in a
non-idle wait, and transaction holders (TADDR) whatever they wait for: an ACTIVE call in an idle wait
is read only with a transaction open, and left out here either way.
"""
from __future__ import annotations

import re
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
        Setting("long_calls_max", 5, "active user calls with a series per instance and program_kind (longest first)",
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
               "longest per instance and program_kind that ran at least long_calls_min_seconds; sql_id 'none' "
               "between statements; program_kind rman, datapump, px, job or user (GV$SESSION.PROGRAM).",
               ("inst_id", "sql_id", "username", "program_kind"), source="GV$SESSION.LAST_CALL_ET"),
        Family("oracle_long_calls", "gauge",
               "Active user calls running at least long_calls_min_seconds now, those beyond long_calls_max "
               "included, by program_kind (rman, datapump, px, job, user; GV$SESSION.PROGRAM).",
               ("inst_id", "program_kind"), source="GV$SESSION.LAST_CALL_ET"),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads

# the values of program_kind (bounded), in the order the count is emitted
KINDS = ("rman", "datapump", "px", "job", "user")
# GV$SESSION.PROGRAM of the server processes: 'oracle@host (DW00)', 'ORACLE.EXE (P001)'; only TYPE
# 'USER' rows are classified, so background processes with a P or D name (PMON, DBW0) never get here
_SERVER = re.compile(r"^oracle\S*\s*\(([0-9A-Z]{4})\)\s*$", re.IGNORECASE)
_RMAN = re.compile(r"^rman(@|\.exe\b|\s|$)", re.IGNORECASE)


def program_kind(program: Any) -> str:
    """rman | datapump | px | job | user, from GV$SESSION.PROGRAM (the module docstring has the forms)."""
    text = clean(program)
    if _RMAN.match(text):
        return "rman"
    server = _SERVER.match(text)
    if server:
        name = server.group(1).upper()
        if name.startswith(("DW", "DM")):
            return "datapump"
        if name.startswith("P"):
            return "px"
        if name.startswith("J"):
            return "job"
    return "user"


def long_calls(rows: Iterable[dict], min_seconds: float) -> dict[str, dict[tuple[str, ...], float]]:
    """{inst_id: {(sql_id, username, program_kind): longest LAST_CALL_ET}} of the active user calls
    >= min_seconds, and the count of such calls of each kind under the key ("", "", kind)."""
    out: dict[str, dict[tuple[str, ...], float]] = {}
    for row in rows:
        i = inst(row)
        if i is None or clean(row.get("TYPE")).upper() != "USER" or clean(row.get("STATUS")).upper() != "ACTIVE":
            continue
        if clean(row.get("STATE")).upper() == "WAITING" and clean(row.get("WAIT_CLASS")).lower() == "idle":
            continue    # waiting for work (AQ dequeue, DBMS_LOCK.SLEEP, pipe get), not running
        secs = num(row.get("LAST_CALL_ET"))
        if secs is None or secs < min_seconds:
            continue
        kind = program_kind(row.get("PROGRAM"))
        calls = out.setdefault(i, {("", "", k): 0.0 for k in KINDS})
        calls[("", "", kind)] += 1
        key = (clean(row.get("SQL_ID")) or "none", clean(row.get("USERNAME")) or "none", kind)
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
        calls = dict(found.get(i, {}))
        for k in KINDS:
            count.add_metric([i, k], calls.pop(("", "", k), 0.0))
        for k in KINDS:     # the limit applies per kind: eight RMAN channels never hide a user's call
            mine = [(key, secs) for key, secs in calls.items() if key[2] == k]
            for (sql_id, user, kind), secs in sorted(mine, key=lambda kv: (-kv[1], kv[0]))[:limit]:
                longest.add_metric([i, sql_id, user, kind], secs)
    yield from emit([longest, count])
