"""Live source: python-oracledb in thin mode (no Oracle Client libraries).

* One session per database, opened once and reused by every scrape (guarded by
  a lock; the exporter's single-flight already serialises fetches of one
  database). Never a logon per scrape.
* ``call_timeout`` bounds every round trip; ``tcp_connect_timeout`` bounds a
  connect.
* After a failure the session is dropped and reconnects are spaced with
  exponential backoff (1 s, 2 s, 4 s ... capped at 60 s); during backoff a
  fetch returns a failed snapshot at once instead of hammering the listener.
* module "oracle-exporter", action "scrape", client identifier
  "oracle-exporter:<database>" and program "oracle-exporter" are set, so a DBA
  finds the session in GV$SESSION (MODULE, ACTION, CLIENT_IDENTIFIER, PROGRAM).
* Every statement comes from the view registry (oracle_exporter.views) through
  queries.build_plan: the views the enabled collectors read. A failing view
  (ORA-00942, ORA-00904, ...) lands in ``snapshot.errors[view]`` and the other
  views are still fetched. One rule for releases: when a view's statement fails
  with an error code of one of its registered fallbacks, the fallback is read
  instead, at once and for the rest of the session (GV$EVENT_HISTOGRAM_MICRO
  missing before 12.1.0.2 -> GV$EVENT_HISTOGRAM; GV$PROCESS without PNAME before
  11.1 -> BACKGROUND = '1', name from PROGRAM). A new session starts with the
  primary views again (the database may have been upgraded meanwhile).
* A view whose collectors have a minimum interval (oracle_exporter.intervals:
  tablespaces every 5 minutes by default) is read at most once per interval;
  in between the rows read last are served again and ``snapshot.ages[view]``
  says how old they are. A failed read is not cached (tried again next fetch).
* Custom SQL statements (oracle_exporter.custom) run after the views, each with
  its own call timeout and interval, only on the databases and containers
  (scope) they are for; a failure or a timeout of one costs only its rows
  (``snapshot.errors["CUSTOM:NAME"]``), unless the session itself is lost.
* At connect the container is read once (SYS_CONTEXT('USERENV', 'CON_ID') and
  'CON_NAME'; before 12.1 that fails and the database is a non-CDB, CON_ID 0).
"""
from __future__ import annotations

import datetime as _dt
import logging
import re
import threading
import time
from decimal import Decimal
from typing import Any, Callable, Mapping

from ..config import DatabaseConfig, Settings
from ..intervals import view_intervals
from ..queries import build_plan
from ..views import View
from ..snapshot import Snapshot, now_rfc3339
from . import failed_snapshot

log = logging.getLogger(__name__)

MODULE = "oracle-exporter"
ACTION = "scrape"
PROGRAM = "oracle-exporter"
# Call timeout exceeded (thin: DPY-4024; thick: DPI-1067 / ORA-03156): the database
# is too slow to answer; stop this fetch instead of timing out view after view.
_TIMEOUT_CODES = ("DPY-4024", "DPI-1067", "ORA-03156")


def _oracledb():
    import oracledb  # imported lazily: replay-only runs never load the driver
    return oracledb


def default_connect(db: DatabaseConfig, connect_timeout: float) -> Any:
    """Open one thin-mode session. Parameters per python-oracledb's connect():
    tcp_connect_timeout (seconds, float), retry_count=0 (the exporter has its own
    backoff), expire_time (minutes between keepalive probes on an idle session)."""
    oracledb = _oracledb()
    return oracledb.connect(user=db.user, password=db.password, dsn=db.dsn,
                            tcp_connect_timeout=connect_timeout, retry_count=0,
                            expire_time=1, program=PROGRAM)


_CONNECTION_ID = re.compile(r"\s*\(CONNECTION_ID=[^)]*\)")


def error_text(exc: BaseException) -> str:
    """A driver error on one line: "ORA-00942: table or view does not exist", or
    "DPY-6005: cannot connect to database.; [Errno 111] Connection refused"
    (cause lines kept, "Help:" links and the per-attempt CONNECTION_ID dropped)."""
    lines = [_CONNECTION_ID.sub("", line).strip() for line in str(exc).strip().splitlines()]
    lines = [line for line in lines if line and not line.startswith("Help:")]
    return "; ".join(lines) if lines else type(exc).__name__


def normalize(value: Any) -> Any:
    """Values as the recording stores them, so live and replayed rows are identical."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    return value


class _Abort(Exception):
    """The fetch cannot go on (session lost, call timeout): the message is the reason."""


class Backoff:
    """Exponential reconnect delay: initial, 2x, 4x ... capped; reset on success."""

    def __init__(self, initial: float = 1.0, cap: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.initial, self.cap, self.clock = initial, cap, clock
        self.failures = 0
        self.retry_at = 0.0

    def ready(self) -> bool:
        return self.clock() >= self.retry_at

    def remaining(self) -> float:
        return max(0.0, self.retry_at - self.clock())

    def failed(self) -> float:
        delay = min(self.cap, self.initial * (2 ** self.failures))
        self.failures += 1
        self.retry_at = self.clock() + delay
        return delay

    def succeeded(self) -> None:
        self.failures = 0
        self.retry_at = 0.0


class LiveSource:
    def __init__(self, db: DatabaseConfig, settings: Settings, *, call_timeout: float | None = None,
                 connect_timeout: float = 5.0,
                 connect: Callable[[DatabaseConfig, float], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 backoff_initial: float = 1.0, backoff_cap: float = 60.0,
                 collectors: Mapping[str, Any] | None = None):
        self.name = db.name
        self.db = db
        self.settings = settings
        self.call_timeout = call_timeout if call_timeout is not None else db.timeout_seconds
        self.connect_timeout = connect_timeout
        self._connect = connect or default_connect
        self.backoff = Backoff(backoff_initial, backoff_cap, clock)
        self.plan = build_plan(collectors, settings)
        self._variants: dict[str, View] = {}   # planned view -> fallback in use (this session)
        self.clock = clock
        self.intervals = view_intervals(collectors, settings)
        self._cache: dict[str, tuple[float, str, list[dict[str, Any]]]] = {}  # key -> (read at, key used, rows)
        self.custom = [q for q in getattr(settings, "custom_queries", ()) or () if q.runs_on(db.name)]
        self.container: tuple[int, str] = (0, "")   # (CON_ID, CON_NAME) of this session's container
        self._conn: Any = None
        self._lock = threading.Lock()
        self._last_error: str | None = None

    # -- session handling -------------------------------------------------
    def _open(self) -> Any:
        conn = self._connect(self.db, self.connect_timeout)
        conn.module = MODULE
        conn.action = ACTION
        conn.client_identifier = f"{MODULE}:{self.name}"
        log.info("database %s: connected (thin mode) as %s to %s", self.name, self.db.user, self.db.dsn)
        self.container = self._read_container(conn)
        return conn

    def _read_container(self, conn: Any) -> tuple[int, str]:
        """(CON_ID, CON_NAME) of the session: 0 for a non-CDB (and before 12.1, where the
        USERENV parameters do not exist: ORA-02003), 1 for CDB$ROOT, 3+ for a PDB."""
        try:
            rows = self._run(conn, "SELECT SYS_CONTEXT('USERENV', 'CON_ID') AS CON_ID, "
                                   "SYS_CONTEXT('USERENV', 'CON_NAME') AS CON_NAME FROM DUAL", {})
        except Exception as exc:
            log.info("database %s: no container information (%s): a non-CDB", self.name, error_text(exc))
            return (0, "")
        row = rows[0] if rows else {}
        try:
            con_id = int(str(row.get("CON_ID")).strip())
        except ValueError:
            con_id = 0
        name = str(row.get("CON_NAME") or "").strip()
        log.info("database %s: container %s (CON_ID %d)", self.name, name or "-", con_id)
        return (con_id, name)

    def _in_scope(self, scope: str) -> bool:
        con_id = self.container[0]
        return scope == "any" or (scope == "cdb_root" and con_id == 1) or (scope == "pdb" and con_id > 2)

    def _cached(self, key: str, interval: float, now: float, views: dict[str, list[dict[str, Any]]],
                ages: dict[str, float]) -> bool:
        """Serve the rows of ``key`` from the cache if they are younger than ``interval``."""
        hit = self._cache.get(key)
        if interval <= 0 or hit is None or now - hit[0] >= interval:
            return False
        views[hit[1]] = hit[2]
        ages[hit[1]] = round(now - hit[0], 3)
        return True

    def _read_custom(self, conn: Any, now: float, views: dict[str, list[dict[str, Any]]],
                     errors: dict[str, str], ages: dict[str, float]) -> None:
        for q in self.custom:
            if not self._in_scope(q.scope) or self._cached(q.key, q.interval, now, views, ages):
                continue
            timeout = q.timeout if q.timeout is not None else self.call_timeout
            try:
                conn.call_timeout = int(timeout * 1000)
                rows = self._run(conn, q.sql, {})
            except Exception as exc:
                text = error_text(exc)
                if not self._healthy(conn):
                    raise _Abort(f"session lost while running custom statement {q.name}: {text}")
                if text.startswith(_TIMEOUT_CODES):
                    text = f"call timeout ({timeout:g} s): {text}"
                errors[q.key] = text
                self._cache.pop(q.key, None)
                continue
            finally:
                try:
                    conn.call_timeout = int(self.call_timeout * 1000)
                except Exception:
                    pass
            views[q.key] = rows
            if q.interval > 0:
                self._cache[q.key] = (now, q.key, rows)

    def _open_bounded(self) -> Any:
        """Connect, giving up after connect_timeout + call_timeout.

        python-oracledb's tcp_connect_timeout covers only the TCP connect: a
        listener that accepts and then never answers keeps connect() waiting
        for ever (python-oracledb issue #451; reproduced by
        tests/oracle/test_core_live.py). The connect therefore runs in its
        own daemon thread; when it overruns, it is abandoned (a session it
        opens later is closed at once) and the attempt counts as failed."""
        budget = self.connect_timeout + self.call_timeout
        done = threading.Event()
        abandoned = threading.Event()
        result: dict[str, Any] = {}
        guard = threading.Lock()

        def run() -> None:
            try:
                conn = self._open()
            except BaseException as exc:  # handed to the waiting fetch
                with guard:
                    result["exc"] = exc
                    done.set()
                return
            with guard:
                result["conn"] = conn
                done.set()
                late = abandoned.is_set()
            if late:
                log.info("database %s: closing a session that connected after the attempt was abandoned",
                         self.name)
                try:
                    conn.close()
                except Exception:
                    pass

        threading.Thread(target=run, name=f"connect-{self.name}", daemon=True).start()
        done.wait(budget)
        with guard:
            if not done.is_set():
                abandoned.set()
                raise TimeoutError(f"no answer from the database within {budget:g} s "
                                   f"(listener accepted the connection but the logon did not complete)")
        if "exc" in result:
            raise result["exc"]
        return result["conn"]

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # a broken session may refuse a clean close
                pass

    def _fail(self, reason: str) -> Snapshot:
        self._drop()
        delay = self.backoff.failed()
        if reason != self._last_error:
            log.warning("database %s: %s (next attempt in %.0f s)", self.name, reason, delay)
        self._last_error = reason
        return failed_snapshot(self.name, reason)

    def close(self) -> None:
        with self._lock:
            self._drop()

    # -- fetching ----------------------------------------------------------
    def _healthy(self, conn: Any) -> bool:
        try:
            return bool(conn.is_healthy())
        except Exception:
            return False

    def _run(self, conn: Any, sql: str, binds: dict[str, object]) -> list[dict[str, Any]]:
        cursor = conn.cursor()
        try:
            cursor.arraysize = 500
            cursor.execute(sql, binds)
            cols = [d[0].upper() for d in cursor.description]
            return [{c: normalize(v) for c, v in zip(cols, row)} for row in cursor.fetchall()]
        finally:
            try:
                cursor.close()
            except Exception:
                pass

    def variant(self, view: str) -> View | None:
        """The statement this session reads for a planned view (the view, or a fallback)."""
        for v in self.plan.views:
            if v.name == view:
                return self._variants.get(view, v)
        return None

    def _read_view(self, conn: Any, view: View, views: dict[str, list[dict[str, Any]]],
                   errors: dict[str, str]) -> None:
        """Read one planned view into ``views`` (or its error into ``errors``), through the
        view's fallbacks: an error starting with a fallback's code (ORA-00942 on a release
        without the view, ORA-00904 without a column) switches to the fallback for the rest
        of the session and reads it at once. Raises _Abort when the fetch cannot go on."""
        current = self._variants.get(view.name, view)
        while True:
            query = self.plan.statement(current)
            try:
                views[current.name] = self._run(conn, query.sql, query.binds)
                return
            except Exception as exc:
                text = error_text(exc)
            if not self._healthy(conn):
                raise _Abort(f"session lost while reading {current.name}: {text}")
            if text.startswith(_TIMEOUT_CODES):
                raise _Abort(f"call timeout ({self.call_timeout:g} s) reading {current.name}: {text}")
            fallback = next((fb for fb in current.fallbacks if text.startswith(fb.codes)), None)
            if fallback is None:
                log.debug("database %s: view %s failed: %s", self.name, current.name, text)
                errors[current.name] = text
                return
            log.info("database %s: %s failed (%s): reading %s%s for the rest of this session", self.name,
                     current.name, text, fallback.use.name,
                     f" ({fallback.why})" if fallback.why else "")
            self._variants[view.name] = current = fallback.use

    def fetch(self) -> Snapshot:
        with self._lock:
            if not self.backoff.ready():
                return failed_snapshot(
                    self.name, f"{self._last_error} (reconnect backoff, next attempt in "
                               f"{self.backoff.remaining():.1f} s)")
            if self._conn is None:
                try:
                    self._conn = self._open_bounded()
                except Exception as exc:
                    return self._fail(f"connect failed: {error_text(exc)}")
                self._variants = {}   # a new session (maybe an upgraded database): primary views first
            conn = self._conn
            try:
                conn.call_timeout = int(self.call_timeout * 1000)  # milliseconds, per round trip
                conn.action = ACTION
            except Exception as exc:
                return self._fail(f"session unusable: {error_text(exc)}")
            started = now_rfc3339()
            views: dict[str, list[dict[str, Any]]] = {}
            errors: dict[str, str] = {}
            ages: dict[str, float] = {}
            now = self.clock()
            try:
                for view in self.plan.views:
                    interval = self.intervals.get(view.name, 0.0)
                    if self._cached(view.name, interval, now, views, ages):
                        continue
                    before = set(views)
                    self._read_view(conn, view, views, errors)
                    read = [k for k in views if k not in before]
                    if interval > 0 and read:
                        self._cache[view.name] = (now, read[0], views[read[0]])
                    elif interval > 0:
                        self._cache.pop(view.name, None)
                self._read_custom(conn, now, views, errors, ages)
            except _Abort as exc:
                return self._fail(str(exc))
            if self._last_error is not None:
                log.info("database %s: fetching again", self.name)
            self._last_error = None
            self.backoff.succeeded()
            return Snapshot(database=self.name, time=started, views=views, errors=errors, ages=ages)
