"""ORA- errors of the alert log (V$DIAG_ALERT_EXT, 12.1+; opt-in: ``collectors: {alert_log: true}``,
read every 5 minutes: ``collector_intervals: {alert_log: ...}``).

V$DIAG_ALERT_EXT parses the XML alert log of the instance the exporter is connected to (ADR) at
every query: slow on a large log. So the live source (oracle_exporter.sources.live) reads it

* on its own interval (the collector's, 300 s by default),
* only the messages since its last read: ``ORIGINATING_TIMESTAMP > :alert_log_since`` (the database
  clock of the fetch that read it last; the first read goes back ``alert_log_first_window_seconds``,
  default 3600) and ``MESSAGE_TEXT LIKE '%ORA-%'``, at most ``alert_log_max_rows`` (default 1000,
  ``FETCH FIRST ... ROWS ONLY``): a message storm costs one bounded fetch, and a read that hit the
  bound is counted in ``oracle_alert_log_reads_truncated_total``,
* last in the fetch, with its own call timeout (``alert_log_timeout_seconds``, default 10 s, never
  beyond what is left of the fetch budget; python-oracledb's Connection.call_timeout set around that
  one statement and restored after): a timeout is that view's error only, every other view was read.

Aggregation stays in Python (the project's SQL is plain SELECTs, tests/oracle/test_sql_catalog.py);
the row bound replaces a GROUP BY.

* ``oracle_alert_log_errors_total{code, level}``: messages carrying an ORA- error, counted by their
  first ORA- code and MESSAGE_LEVEL (1 critical, 2 severe, 8 important, 16 normal; else
  ``unknown``). ``code`` is one of a fixed list (ORA-00600, ORA-07445, ORA-04031, ORA-01555,
  ORA-01652, ORA-01653, ORA-01688, ORA-00257, ORA-00060, ORA-01578, ORA-00020; ``ORA-16xxx``
  Data Guard, ``ORA-15xxx`` ASM, ``ORA-27xxx`` operating system) or ``other``: at most 15 x 5
  series. Counted in the exporter since it started, from the rows of each read (each message once:
  rows served again between reads, or read twice at a read's edge, are not counted again), so the
  counter only grows; the first read's window is counted into the first value.
* ``oracle_alert_log_last_critical_timestamp_seconds``: when the newest level-1 (critical) message
  with an ORA- error seen since the exporter started was written (Unix seconds).
* The message text is never a label: the exporter logs each new critical message once (WARNING,
  its first 300 characters); the full text is in the alert log and V$DIAG_ALERT_EXT.

Connected to a PDB (12.2+), V$DIAG_ALERT_EXT shows only that PDB's messages; from CDB$ROOT or a
non-CDB, the instance's. Before 12.1 the view does not exist (ORA-00942): the collector's error.
"""
from __future__ import annotations

import logging
import re
import threading
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family, Setting

from ..views import View, register
from ._common import emit, num
from ._health import clean, host_utc_offset, local_to_unix

log = logging.getLogger(__name__)

TIME_MASK = "YYYY-MM-DD\"T\"HH24:MI:SS.FF6TZH:TZM"     # the DUAL clock's text (sources.live.CLOCK_SQL)
ALERT_EXT = register(View(
    "V$DIAG_ALERT_EXT", ("ORIGINATING_TIMESTAMP", "RECORD_ID", "MESSAGE_LEVEL", "MESSAGE_TEXT"),
    identity=("RECORD_ID", "ORIGINATING_TIMESTAMP"),
    # the FETCH FIRST clause ends the WHERE (the statement has no other condition): the row bound
    where=f"ORIGINATING_TIMESTAMP > TO_TIMESTAMP_TZ(:alert_log_since, '{TIME_MASK}') "
          "AND MESSAGE_TEXT LIKE '%ORA-%' FETCH FIRST :alert_log_rows ROWS ONLY",
    where_binds={"alert_log_since": "1970-01-01T00:00:00.000000+00:00", "alert_log_rows": 1000},
    since="12.1", doc="V$DIAG_ALERT_EXT, the XML alert log (ADR): messages with an ORA- error since the last read"))

CODES = ("ORA-00600", "ORA-07445", "ORA-04031", "ORA-01555", "ORA-01652", "ORA-01653", "ORA-01688",
         "ORA-00257", "ORA-00060", "ORA-01578", "ORA-00020")
GROUPS = (("ORA-16", "ORA-16xxx"), ("ORA-15", "ORA-15xxx"), ("ORA-27", "ORA-27xxx"))
LEVELS = {1: "critical", 2: "severe", 8: "important", 16: "normal"}
_ORA = re.compile(r"ORA-(\d{5})")

SPEC = Collector(
    "alert_log", "ORA- errors of the alert log by code and level (V$DIAG_ALERT_EXT), counted since exporter start.",
    title="Alert log errors",
    reads=(ALERT_EXT.name,),
    opt_in=True,
    interval=300.0,
    settings=(
        Setting("alert_log_max_rows", 1000, "alert log messages one read fetches at most (FETCH FIRST)",
                kind="int", minimum=1),
        Setting("alert_log_timeout_seconds", 10.0, "call timeout of the V$DIAG_ALERT_EXT statement (seconds, "
                "never beyond what is left of the fetch budget)", kind="number", minimum=0.1),
        Setting("alert_log_first_window_seconds", 3600.0, "how far back the first read after a start goes (s)",
                kind="number", minimum=0),
    ),
    doc="Read last in the fetch, on its own interval and call timeout, only the messages since the last read "
        "(see the module doc); a timeout costs this collector only. Counters count since exporter start; "
        "the message text is logged once per critical message, never a label.",
    metrics=(
        Family("oracle_alert_log_errors_total", "counter",
               "Alert log messages with an ORA- error since the exporter started, by first ORA- code (a fixed "
               "list, ORA-16xxx/15xxx/27xxx groups, else 'other') and MESSAGE_LEVEL (critical, severe, "
               "important, normal).", ("code", "level"), source="V$DIAG_ALERT_EXT.MESSAGE_TEXT", since="12.1"),
        Family("oracle_alert_log_last_critical_timestamp_seconds", "gauge",
               "ORIGINATING_TIMESTAMP of the newest critical (MESSAGE_LEVEL 1) ORA- message seen since the "
               "exporter started (the text is in the exporter's log and the alert log).", (),
               source="V$DIAG_ALERT_EXT.ORIGINATING_TIMESTAMP", since="12.1"),
        Family("oracle_alert_log_reads_truncated_total", "counter",
               "Reads of V$DIAG_ALERT_EXT that returned alert_log_max_rows rows (more messages were left "
               "unread: a message storm).", (), source="V$DIAG_ALERT_EXT", since="12.1"),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def code_of(text: str) -> str:
    """The label of a message's first ORA- code."""
    m = _ORA.search(text or "")
    if m is None:
        return "other"
    code = "ORA-" + m.group(1)
    if code in CODES:
        return code
    return next((label for prefix, label in GROUPS if code.startswith(prefix)), "other")


def level_of(value: Any) -> str:
    n = num(value)
    return LEVELS.get(int(n), "unknown") if n is not None else "unknown"


class Tally:
    """One database's counts since the exporter started. Each message counted once: the newest
    (ORIGINATING_TIMESTAMP, RECORD_ID) counted is the mark below which rows are not counted again."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], float] = {}
        self.mark: tuple[str, float] | None = None
        self.last_critical: float | None = None
        self.truncated = 0.0
        self.read: tuple | None = None       # the read counted last (rows, first and last key)

    def add(self, rows: list[dict], offset: Any, limit: int, database: str) -> None:
        keyed = sorted((((clean(r.get("ORIGINATING_TIMESTAMP")), num(r.get("RECORD_ID")) or 0.0), r) for r in rows),
                       key=lambda kr: kr[0])
        fresh = [(k, r) for k, r in keyed if self.mark is None or k > self.mark]
        read = (len(rows), keyed[0][0], keyed[-1][0]) if keyed else None
        if read is not None and read != self.read:      # rows served again between reads: the same read
            self.read = read
            if len(rows) >= limit:
                self.truncated += 1
        for key, r in fresh:
            level = level_of(r.get("MESSAGE_LEVEL"))
            label = (code_of(clean(r.get("MESSAGE_TEXT"))), level)
            self.counts[label] = self.counts.get(label, 0.0) + 1
            if level == "critical":
                when = local_to_unix(key[0], offset)
                if when is not None and (self.last_critical is None or when >= self.last_critical):
                    self.last_critical = when
                log.warning("database %s: alert log, critical: %s", database,
                            " ".join(clean(r.get("MESSAGE_TEXT")).split())[:300])
            self.mark = key


_TALLIES: dict[str, Tally] = {}
_LOCK = threading.Lock()


def reset() -> None:
    """Forget every database's counts (tests)."""
    with _LOCK:
        _TALLIES.clear()


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    errors = SPEC.family("oracle_alert_log_errors_total")
    last = SPEC.family("oracle_alert_log_last_critical_timestamp_seconds")
    truncated = SPEC.family("oracle_alert_log_reads_truncated_total")
    limit = getattr(settings, "alert_log_max_rows", SPEC.default("alert_log_max_rows"))
    with _LOCK:
        tally = _TALLIES.get(snapshot.database)
        if snapshot.has(ALERT_EXT.name):
            tally = _TALLIES.setdefault(snapshot.database, tally or Tally())
            tally.add(snapshot.rows(ALERT_EXT.name), host_utc_offset(snapshot), limit, snapshot.database)
        if tally is None:
            return
        for (code, level), n in sorted(tally.counts.items()):
            errors.add_metric([code, level], n)
        if tally.last_critical is not None:
            last.add_metric([], tally.last_critical)
        truncated.add_metric([], tally.truncated)
    yield from emit([errors, last, truncated])

