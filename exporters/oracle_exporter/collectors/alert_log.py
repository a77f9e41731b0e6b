"""ORA- errors of the alert log (V$DIAG_ALERT_EXT, 12.1+; opt-in: ``collectors: {alert_log: true}``,
read every 5 minutes: ``collector_intervals: {alert_log: ...}``).

V$DIAG_ALERT_EXT parses the XML alert log of the instance the exporter is connected to (ADR) at
every query: slow on a large log. So the live source (oracle_exporter.sources.live) reads it

* on its own interval (the collector's, 300 s by default),
* only the messages since its last read: ``ORIGINATING_TIMESTAMP >= :alert_log_since`` (its read
  position; the first read goes back ``alert_log_first_window_seconds``, default 3600) and
  ``MESSAGE_TEXT LIKE '%ORA-%'``, oldest first (``ORDER BY ORIGINATING_TIMESTAMP, RECORD_ID``), at
  most ``alert_log_max_rows`` (default 1000, ``FETCH FIRST ... ROWS ONLY``). After a read that
  returned fewer rows the position moves to the clock of the fetch (SYSTIMESTAMP, read before);
  after a read that hit the bound (a message storm), only to the newest message it read, so the
  next read goes on from there: a storm delays the rest, it never drops it (an ORA-00600 amid
  10,000 ORA-00060 lines is read a few intervals later). Such a read is counted in
  ``oracle_alert_log_reads_truncated_total``,
* with every time in UTC: ORIGINATING_TIMESTAMP is a TIMESTAMP WITH TIME ZONE (the offset of the
  host when the message was written: +02:00 in summer, +01:00 in winter) and python-oracledb
  drops the zone when it fetches one (its issues #274, #373), so the statement selects it as
  ``TO_CHAR(SYS_EXTRACT_UTC(ORIGINATING_TIMESTAMP), ...)`` (UTC text, ``live_statement``) and the
  position is compared with its zone in SQL; the hour that repeats when the clocks go back is
  counted like any other,
* last in the fetch, with its own call timeout (``alert_log_timeout_seconds``, default 10 s, never
  beyond what is left of the fetch budget; python-oracledb's Connection.call_timeout set around that
  one statement and restored after): a timeout is that view's error only, every other view was read.

Aggregation stays in Python (the project's SQL is plain SELECTs, tests/oracle/test_sql_catalog.py);
the row bound replaces a GROUP BY.

* ``oracle_alert_log_errors_total{code, level}``: messages carrying an ORA- error, counted by their
  first ORA- code and MESSAGE_LEVEL (1 critical, 2 severe, 8 important, 16 normal; else
  ``unknown``). The alert log writes some codes without their leading zeros ("ORA-1652: unable
  to extend temp segment", ORA-1653, ORA-1654, ORA-1688): a code of 1 to 5 digits is read as its
  5-digit form (ORA-1652 is ORA-01652). ``code`` is one of a fixed list (ORA-00600, ORA-07445,
  ORA-04031, ORA-01555, ORA-01652, ORA-01653, ORA-01688, ORA-00060, ORA-01578, ORA-00020; the
  archiver stuck: ORA-19809 (recovery area full), ORA-16038 (log cannot be archived), ORA-16014
  (no available destination), and ORA-00257 (what a client gets then); ``ORA-16xxx`` Data Guard
  (the other 16xxx), ``ORA-15xxx`` ASM, ``ORA-27xxx`` operating system) or ``other``: at most
  18 x 5 series. Counted in the exporter since it started, from the rows of each read (each message once:
  rows served again between reads, or read twice at a read's edge, are not counted again), so the
  counter only grows; the first read's window is counted into the first value.
* ``oracle_alert_log_last_critical_timestamp_seconds``: when the newest level-1 (critical) message
  with an ORA- error seen since the exporter started was written (Unix seconds).
* The message text is never a label: the exporter logs each new critical message once (WARNING,
  its first 300 characters); the full text is in the alert log and V$DIAG_ALERT_EXT.

Connected to a PDB (12.2+), V$DIAG_ALERT_EXT shows only that PDB's messages; from CDB$ROOT or a
non-CDB, the instance's. V$DIAG_ALERT_EXT is the log of the *connected instance* only (ADR is per
instance): on RAC the other instances' alert logs are not read (an ORA-00600 on node 2 is not seen
through a connection to node 1; connected through a SCAN service, the instance may change at a
reconnect). Give each instance its own ``databases`` entry (a DSN naming the instance, e.g.
``host1:1521/SERVICE/ORCL1`` or a service on one instance) for complete coverage.

Counted since the exporter started: after a restart the first read counts the last
``alert_log_first_window_seconds`` again (the counter restarts; Prometheus sees a reset, and an
ORA-00600 of that window raises OracleAlertLogCriticalError again). Set the window shorter than
the alert's 15 minutes (``alert_log_first_window_seconds: 600``) where a restart must not re-raise. Before 12.1 the view does not exist (ORA-00942): the collector's error.
"""
from __future__ import annotations

import datetime as _dt
import logging
import re
import threading
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family, Setting

from ..views import View, register
from ._common import emit, num, parse_time
from ._health import clean, host_utc_offset, local_to_unix

log = logging.getLogger(__name__)

TIME_MASK = "YYYY-MM-DD\"T\"HH24:MI:SS.FF6TZH:TZM"     # the DUAL clock's text (sources.live.CLOCK_SQL)
ALERT_EXT = register(View(
    "V$DIAG_ALERT_EXT", ("ORIGINATING_TIMESTAMP", "RECORD_ID", "MESSAGE_LEVEL", "MESSAGE_TEXT"),
    identity=("RECORD_ID", "ORIGINATING_TIMESTAMP"),
    # the FETCH FIRST clause ends the WHERE (the statement has no other condition): the row bound
    where=f"ORIGINATING_TIMESTAMP >= TO_TIMESTAMP_TZ(:alert_log_since, '{TIME_MASK}') "
          "AND MESSAGE_TEXT LIKE '%ORA-%' ORDER BY ORIGINATING_TIMESTAMP, RECORD_ID "
          "FETCH FIRST :alert_log_rows ROWS ONLY",
    where_binds={"alert_log_since": "1970-01-01T00:00:00.000000+00:00", "alert_log_rows": 1000},
    since="12.1", doc="V$DIAG_ALERT_EXT, the XML alert log (ADR): messages with an ORA- error since the last read"))

CODES = ("ORA-00600", "ORA-07445", "ORA-04031", "ORA-01555", "ORA-01652", "ORA-01653", "ORA-01688",
         "ORA-00257", "ORA-00060", "ORA-01578", "ORA-00020",
         "ORA-19809", "ORA-16038", "ORA-16014")      # the archiver stuck (before the 16xxx group)
GROUPS = (("ORA-16", "ORA-16xxx"), ("ORA-15", "ORA-15xxx"), ("ORA-27", "ORA-27xxx"))
LEVELS = {1: "critical", 2: "severe", 8: "important", 16: "normal"}
_ORA = re.compile(r"ORA-(\d{1,5})(?!\d)")
# ORIGINATING_TIMESTAMP as UTC text: python-oracledb drops the zone of a TIMESTAMP WITH TIME ZONE
UTC_MASK = 'YYYY-MM-DD"T"HH24:MI:SS.FF6"Z"'


def live_statement(sql: str) -> str:
    """The statement the live source sends: the view's, with ORIGINATING_TIMESTAMP selected as UTC
    text (the WHERE and ORDER BY compare the column itself, with its zone)."""
    head = "SELECT ORIGINATING_TIMESTAMP,"
    if not sql.startswith(head):
        raise ValueError(f"unexpected V$DIAG_ALERT_EXT statement: {sql[:60]}")
    return (f"SELECT TO_CHAR(SYS_EXTRACT_UTC(ORIGINATING_TIMESTAMP), '{UTC_MASK}') AS ORIGINATING_TIMESTAMP,"
            + sql[len(head):])


def position_after(rows: list[dict], limit: int, clock: Any, previous: Any = None) -> str | None:
    """The read position after a read: the newest message read when the read hit the bound (the rest
    comes next time; a microsecond on if a whole read shared the previous position's instant, so the
    reads never stall), else the fetch's clock. Text for TO_TIMESTAMP_TZ (offset always given)."""
    if rows and len(rows) >= limit:
        newest = max((t for t in (when_utc(r.get("ORIGINATING_TIMESTAMP"), None) for r in rows) if t is not None),
                     default=None)
        if newest is not None:
            before = parse_time(previous)
            if before is not None and newest <= before:
                newest = before + 1e-6
            moment = _dt.datetime.fromtimestamp(newest, _dt.timezone.utc)
            return moment.isoformat(timespec="microseconds")
    return clock if isinstance(clock, str) and clock else None


def when_utc(value: Any, offset: Any) -> float | None:
    """Unix seconds of ORIGINATING_TIMESTAMP: UTC text (the live statement) as it is; a value without
    a zone (older recordings: the host's wall clock) with the host's offset."""
    if isinstance(value, _dt.datetime) and value.tzinfo is not None:
        return value.timestamp()
    text = value.strip() if isinstance(value, str) else ""
    if text.endswith(("Z", "z")) or (len(text) > 6 and text[-6] in "+-" and text[-3] == ":"):
        return parse_time(text)
    return local_to_unix(value, offset)


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
    doc="Read last in the fetch, on its own interval and call timeout, only the messages since the last read, "
        "oldest first (see the module doc); a timeout costs this collector only. A read that hits "
        "`alert_log_max_rows` moves the read position only to the newest message it read: a message storm "
        "delays the rest to the next reads, it drops nothing. Times are compared in UTC (the statement selects "
        "SYS_EXTRACT_UTC(ORIGINATING_TIMESTAMP)), so the hour repeated when the clocks go back is counted. "
        "Codes written without leading zeros (ORA-1652) are their 5-digit codes (ORA-01652). Counters count "
        "since exporter start (a restart counts the first window again); the message text is logged once per "
        "critical message, never a label.\n\n"
        "**One instance's log.** V$DIAG_ALERT_EXT is the alert log of the instance the exporter is connected "
        "to: on RAC the other instances' logs are not read (through a SCAN service the instance may change at "
        "a reconnect). For every instance's log, give each instance a `databases` entry of its own (a DSN that "
        "names the instance).",
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
               "Reads of V$DIAG_ALERT_EXT that returned alert_log_max_rows rows (a message storm: the rest is "
               "read by the next reads, from the newest message read).", (), source="V$DIAG_ALERT_EXT",
               since="12.1"),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def code_of(text: str) -> str:
    """The label of a message's first ORA- code."""
    m = _ORA.search(text or "")
    if m is None:
        return "other"
    code = "ORA-" + m.group(1).zfill(5)        # ORA-1652 is ORA-01652
    if code in CODES:
        return code
    return next((label for prefix, label in GROUPS if code.startswith(prefix)), "other")


def level_of(value: Any) -> str:
    n = num(value)
    return LEVELS.get(int(n), "unknown") if n is not None else "unknown"


class Tally:
    """One database's counts since the exporter started. Each message counted once: the newest
    (ORIGINATING_TIMESTAMP in Unix seconds, RECORD_ID) counted is the mark below which rows are not
    counted again (compared as instants, never as wall-clock text)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], float] = {}
        self.mark: tuple[float, float] | None = None
        self.last_critical: float | None = None
        self.truncated = 0.0
        self.read: tuple | None = None       # the read counted last (rows, first and last key)

    def add(self, rows: list[dict], offset: Any, limit: int, database: str) -> None:
        keyed = sorted((((when, num(r.get("RECORD_ID")) or 0.0), r) for r in rows
                        if (when := when_utc(r.get("ORIGINATING_TIMESTAMP"), offset)) is not None),
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
                when = key[0]
                if self.last_critical is None or when >= self.last_critical:
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

