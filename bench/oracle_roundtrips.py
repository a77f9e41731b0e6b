"""What one oracle-exporter fetch costs the database in statements, round trips and parses
(issue 22 point 7, issue 26 point 2).

    .venv/bin/python -m bench.oracle_roundtrips [--results build/bench/RESULTS.md]

The live source (oracle_exporter.sources.live.LiveSource, unchanged) fetches through
``DriverSession``, a stand-in for a python-oracledb thin session that answers with the rows of
a demo recording and counts what the driver would send:

* a round trip per execute (python-oracledb bundles parse, execute and the fetch of
  ``Cursor.prefetchrows`` rows in one call), then one per fetch of ``Cursor.arraysize`` rows
  until a fetch comes back short (the end of the rows): N rows cost 1 round trip when
  N < prefetchrows, else 1 + (N - prefetchrows) // arraysize + 1 (python-oracledb's "Tuning
  Fetch Performance" table: 100 rows at 2/100 -> 2, 1000 rows -> 11, 20 rows at 21/20 -> 1);
* a parse per execute of a statement that is not in the session's statement cache
  (``Connection.stmtcachesize``, 20 by default: an LRU of SQL texts; thin mode re-executes
  a cached statement on its open cursor without parsing; a statement that fails leaves it);
* setting action, module or the call timeout and closing a cursor cost none (piggybacked on
  the next call, or client-side).

Each scenario opens a session and fetches twice, 15 s apart (views with a minimum interval,
tablespaces every 5 minutes, are read on the first only). Nothing is timed: the counts are what
a real database would see (V$SESSTAT 'SQL*Net roundtrips to/from client', 'parse count (total)').
The statements are the live source's own, rows are those of the recording (the Idle class of
GV$SYSTEM_EVENT kept or left out as the statement's WHERE says).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import pathlib
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable

import oracledb

from bench.common import DEFAULT_RESULTS, write_section

from oracle_exporter import demo
from oracle_exporter.collectors import COLLECTORS
from oracle_exporter.config import DatabaseConfig, Settings
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.sources.live import LiveSource
from oracle_exporter.sources.replay import replay_sources


def round_trips(rows: int, prefetchrows: int, arraysize: int) -> int:
    """Round trips python-oracledb's thin mode needs to execute a query and fetch all its rows."""
    if prefetchrows > 0 and rows < prefetchrows:
        return 1
    return 1 + (rows - max(prefetchrows, 0)) // max(arraysize, 1) + 1


@dataclass
class Counts:
    statements: int = 0
    round_trips: int = 0
    parses: int = 0
    rows: int = 0

    def __sub__(self, other: "Counts") -> "Counts":
        return Counts(self.statements - other.statements, self.round_trips - other.round_trips,
                      self.parses - other.parses, self.rows - other.rows)


_FROM = re.compile(r" FROM (\S+)")


class DriverCursor:
    def __init__(self, session: "DriverSession"):
        self.session = session
        self.arraysize = oracledb.defaults.arraysize
        self.prefetchrows = oracledb.defaults.prefetchrows
        self.description: list[tuple] | None = None
        self._rows: list[tuple] = []

    def execute(self, sql: str, binds: dict[str, object]) -> None:
        s = self.session
        s.counts.statements += 1
        s.counts.round_trips += 1                          # parse (if needed) + execute + prefetch
        if sql in s.cache:
            s.cache.move_to_end(sql)
        else:
            s.counts.parses += 1
            if s.stmtcachesize > 0:
                s.cache[sql] = None
                while len(s.cache) > s.stmtcachesize:
                    s.cache.popitem(last=False)
        columns, rows = s.answer(sql, binds)
        if rows is None:                                   # an error: thin mode drops the statement
            s.cache.pop(sql, None)
            raise oracledb.DatabaseError("ORA-00942: table or view does not exist")
        self.description = [(c, None, None, None, None, None, None) for c in columns]
        self._rows = rows
        s.counts.round_trips += round_trips(len(rows), self.prefetchrows, self.arraysize) - 1
        s.counts.rows += len(rows)
        s.sizes[sql] = (self.prefetchrows, self.arraysize, len(rows))

    def fetchall(self) -> list[tuple]:
        return self._rows

    def close(self) -> None:
        pass


class DriverSession:
    """A python-oracledb thin session stand-in counting statements, round trips and parses (see the
    module doc). ``views``: rows per view as fetched (a recording's snapshot); ``container``: what
    SYS_CONTEXT('USERENV', 'CON_ID' / 'CON_NAME') answers."""

    def __init__(self, views: dict[str, list[dict[str, Any]]], container: tuple[str, str] = ("0", "")):
        self.views = views
        self.container = container
        self.stmtcachesize = oracledb.defaults.stmtcachesize
        self.cache: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.counts = Counts()
        self.sizes: dict[str, tuple[int, int, int]] = {}   # sql -> (prefetchrows, arraysize, rows) last used
        self.call_timeout = 0
        self.module = self.action = self.client_identifier = None
        self.warning = None

    def cursor(self) -> DriverCursor:
        return DriverCursor(self)

    def is_healthy(self) -> bool:
        return True

    def close(self) -> None:
        pass

    def answer(self, sql: str, binds: dict[str, object]) -> tuple[list[str], list[tuple] | None]:
        select = sql[len("SELECT "):sql.index(" FROM ")]
        if "SYS_CONTEXT('USERENV', 'CON_ID')" in select:
            return ["CON_ID", "CON_NAME"], [self.container]
        columns = [c.split(" AS ")[-1].strip() for c in re.sub(r"\(.*\)", "", select).split(",")]
        view = _FROM.search(sql).group(1)
        if view not in self.views:
            return columns, ([] if view != "DUAL" else [("2024-03-01T12:00:00.000000+00:00",)])
        rows = self.views[view]
        if "WAIT_CLASS <> 'Idle'" in sql:                  # what the database leaves out
            keep = set(binds.values()) if "OR EVENT IN" in sql else set()
            rows = [r for r in rows if r.get("WAIT_CLASS") != "Idle" or r.get("EVENT") in keep]
        return columns, [tuple(r.get(c) for c in columns) for r in rows]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def open_source(session: DriverSession, settings: Settings, name: str = "DB") -> tuple[LiveSource, Clock]:
    clock = Clock()
    db = DatabaseConfig(name, dsn="dbhost:1521/SVC", user="mon", password="pw", timeout_seconds=10)
    return LiveSource(db, settings, connect=lambda _db, _timeout: session, clock=clock), clock


def fetch_twice(views: dict[str, list[dict[str, Any]]], settings: Settings,
                container: tuple[str, str] = ("0", "")) -> tuple[Counts, Counts, DriverSession, LiveSource]:
    """Counts of the first and the second fetch of one session (15 s apart)."""
    session = DriverSession(views, container)
    src, clock = open_source(session, settings)
    try:
        first = src.fetch()
        if "*" in first.errors:
            raise RuntimeError(f"the fetch failed: {first.errors['*']}")
        after_first = dataclasses.replace(session.counts)
        clock.now += 15
        src.fetch()
        return after_first, session.counts - after_first, session, src
    finally:
        src.close()


def recording(name: str, database: str) -> Snapshot:
    (src,) = [s for s in replay_sources(str(demo.path(name))) if s.name == database]
    return src.snapshots[0]


def all_collectors() -> Settings:
    return Settings(collectors={n: True for n in COLLECTORS})


def scenarios() -> list[tuple[str, dict[str, list[dict[str, Any]]], Callable[[], Settings], tuple[str, str]]]:
    from bench.oracle_cost import busy_19c
    demo1 = recording("demo-before.jsonl", "DEMO")
    rac = recording("demo-rac-outage.jsonl", "RACDB")
    busy = busy_19c(rac)
    cdb = ("1", "CDB$ROOT")
    return [("DEMO (1 instance), default collectors", demo1.views, Settings, ("0", "")),
            ("RACDB (2 instances), default collectors", rac.views, Settings, cdb),
            ("RACDB (2 instances), every collector on", rac.views, all_collectors, cdb),
            ("RACDB, GV$SYSTEM_EVENT of a busy 19c (380 events per instance, 120 Idle), every collector on",
             busy.views, all_collectors, cdb),
            ("same, `idle_wait_events: true`", busy.views,
             lambda: Settings(collectors={n: True for n in COLLECTORS}, idle_wait_events=True), cdb)]


def measure() -> list[tuple[str, Counts, Counts, int]]:
    out = []
    for label, views, settings, container in scenarios():
        first, second, session, _ = fetch_twice(views, settings(), container)
        out.append((label, first, second, session.stmtcachesize))
    return out


# Measured once with this benchmark against the code before the change (kept in the section).
BEFORE = """Before this change (commit 3505b22 with the recordings of this one, the same benchmark run against it: python-oracledb's default statement cache of 20, `arraysize` 500, `prefetchrows` 2, Idle events fetched and dropped in Python):

| scenario | statement cache | fetch | statements | round trips | parses | rows |
|---|---|---|---|---|---|---|
| DEMO (1 instance), default collectors | 20 | first | 23 | 38 | 23 | 381 |
| DEMO (1 instance), default collectors | 20 | second | 16 | 28 | 12 | 362 |
| RACDB (2 instances), default collectors | 20 | first | 23 | 41 | 23 | 1155 |
| RACDB (2 instances), default collectors | 20 | second | 16 | 29 | 12 | 1119 |
| RACDB (2 instances), every collector on | 20 | first | 29 | 52 | 29 | 1521 |
| RACDB (2 instances), every collector on | 20 | second | 23 | 42 | 23 | 1489 |
| RACDB, GV$SYSTEM_EVENT of a busy 19c (380 events per instance, 120 Idle), every collector on | 20 | first | 29 | 53 | 29 | 1825 |
| RACDB, GV$SYSTEM_EVENT of a busy 19c (380 events per instance, 120 Idle), every collector on | 20 | second | 23 | 43 | 23 | 1793 |
| same, `idle_wait_events: true` | 20 | first | 29 | 53 | 29 | 1825 |
| same, `idle_wait_events: true` | 20 | second | 23 | 43 | 23 | 1793 |

Why: a session's first fetch sends 23 statements (the container query, the clock and 21 views), 29 with every collector on, and later fetches 16 and 23 (the views with a minimum interval, tablespaces every 5 minutes, are not read in between). With every collector on that is more than the 20 statements the default cache holds, and an LRU cache cycled through in the same order by more statements than it holds misses every time: every statement parsed again every fetch; with the default collectors the fetch after one that read the 5-minute views parses 12 again. Every statement of more than one row cost a second round trip (2 rows prefetched), and the Idle class, a quarter to a third of GV$SYSTEM_EVENT's rows, was fetched to be dropped in Python.
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=str(DEFAULT_RESULTS),
                    help="file to write the section into (default build/bench/RESULTS.md; "
                         "bench/RESULTS.md to update the tracked one)")
    args = ap.parse_args(argv)
    lines = ["## oracle-exporter: statements, round trips and parses per fetch (issue 22.7, issue 26.2)", "",
             "Command: `.venv/bin/python -m bench.oracle_roundtrips`. The live source fetches twice (15 s apart) "
             "through a session stand-in that counts what python-oracledb's thin driver sends (round trip per "
             "execute with its prefetched rows, then one per `arraysize` rows until a short fetch; a parse per "
             "statement missing from the LRU statement cache; bench/oracle_roundtrips.py), rows from the demo "
             "recordings. Counts, not times: what V$SESSTAT's 'SQL*Net roundtrips to/from client' and "
             "'parse count (total)' would show.", "",
             "| scenario | statement cache | fetch | statements | round trips | parses | rows |",
             "|---|---|---|---|---|---|---|"]
    for label, first, second, cache in measure():
        for which, c in (("first", first), ("second", second)):
            lines.append(f"| {label} | {cache} | {which} | {c.statements} | {c.round_trips} | {c.parses} | {c.rows} |")
    lines += ["", BEFORE]
    write_section(pathlib.Path(args.results), "oracle-roundtrips", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
