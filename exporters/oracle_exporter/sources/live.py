"""Live source: python-oracledb, thin mode by default (no Oracle Client libraries),
thick mode on request (``thick_mode`` in the config; see ``init_driver``).

* The driver mode is settled once at start (``init_driver``: enable_thin_mode() or
  init_oracle_client()). Otherwise python-oracledb settles it at the first
  *successful* connect, and until then every connect() in the process waits for the
  one in progress: one hung listener would stall every other database.
* One session per database, opened once and reused by every scrape (guarded by
  a lock; the exporter's single-flight already serialises fetches of one
  database). Never a logon per scrape.
* One time budget per fetch (``timeout_seconds``): the connect and every statement
  share it; each statement's call timeout is the time left; ``tcp_connect_timeout``
  (``connect_timeout_seconds``) bounds the TCP connect. A connect that hangs after
  the TCP connect is waited for by the next fetches, never started twice
  (ConnectAttempt): at most one connect thread and socket per database.
* After a failure the session is dropped and reconnects are spaced with
  exponential backoff (1 s, 2 s, 4 s ... capped at reconnect_backoff_max_seconds, 60 s by default); during backoff a
  fetch returns a failed snapshot at once instead of hammering the listener.
  A fetch that runs out of time on a healthy session keeps the session.
* A logon refused for its credentials (the errors whose ``retry`` is "new credentials" in
  oracle_exporter.ora_errors: ORA-01017, a listener's "Similar to ORA-1017", ORA-28000,
  ORA-28001, ORA-01045 ...) is never tried again with the same credentials: a wrong password
  retried on the backoff locked the account (FAILED_LOGIN_ATTEMPTS) within minutes. The
  password is read again from password_file / password_env before every attempt and at every
  fetch while refused; a changed password is tried at once. ORA-28000 (account locked) alone is
  tried again every locked_retry_seconds (1 h): Oracle unlocks a LOCKED(TIMED) account itself,
  and a logon on a locked account counts no failed logon. "The same credentials" are (user,
  dsn, a salted hash of the password) in a RefusalStore shared by the databases and kept
  across restarts (--refusals.file): rewriting the file with the same content, or restarting,
  costs no logon. A reload (SIGHUP: request_retry) allows one more attempt with an unchanged
  password (account unlocked), at most 3 an hour. Until then every fetch fails with the refusal.
* The ORA-28002 grace-period warning python-oracledb hands over on a successful logon
  (Connection.warning) is logged once and kept in ``password_expiring``
  (oracle_password_expiring).
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
  says how old they are. A failed read keeps the interval too (issue 22): the view is not
  tried again before its interval has passed; meanwhile the rows read last are served while
  they are younger than twice the interval (their age says so), else the error stands.
* The open mode is read first (V$DATABASE.OPEN_MODE; connected to a PDB, V$CONTAINERS.OPEN_MODE
  of that PDB): on a MOUNTED database (a physical standby) the data dictionary views (DBA_,
  CDB_) are not read at all, and ORA-01219 on any view is a skip, not an error; skipped views
  are in ``snapshot.skipped`` (recorded and replayed).
* Custom SQL statements (oracle_exporter.custom) run after the views, each with
  its own call timeout (never beyond the fetch budget) and interval, only on the
  databases and containers (scope) they are for; a failure or a timeout of one
  costs only its rows (``snapshot.errors["CUSTOM:NAME"]``), unless the session
  itself is lost.
* At connect the container is read once (SYS_CONTEXT('USERENV', 'CON_ID') and
  'CON_NAME'; before 12.1 that fails and the database is a non-CDB, CON_ID 0).
* About one round trip per statement, and no parse after the first fetch of a session
  (bench/oracle_roundtrips.py counts them): the session's statement cache
  (Connection.stmtcachesize) holds every statement the plan can send (each view, each
  fallback, the clock, the container query, the custom statements; python-oracledb's default
  of 20 is fewer than the 23-29 statements with every collector on, and an LRU cache cycled
  through by more statements than it holds misses every time: every statement parsed again
  every fetch); each statement fetches its rows with the execute (Cursor.prefetchrows = rows
  expected + 1, arraysize = rows expected): the first fetch of a session expects what
  queries.Plan.fetch_rows says, later ones the rows the statement returned last plus a quarter.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import logging
import os
import re
import threading
import time
from decimal import Decimal
from typing import Any, Callable, Mapping

from exporter_common.config import ConfigError, read_secret_file

from ..collectors import alert_log as _alert_log
from ..config import (DEFAULT_BACKOFF_MAX_SECONDS, DEFAULT_CONNECT_TIMEOUT_SECONDS, DEFAULT_LOCKED_RETRY_SECONDS,
                      DatabaseConfig, Settings)
from ..intervals import view_intervals
from ..queries import build_plan
from ..refusals import SIGHUP_RETRIES, RefusalStore, is_locked
from ..ora_errors import (FALLBACK_RETRY_SECONDS, MISSING_COLUMN, MISSING_VIEW, NEW_CREDENTIALS, NOT_OPEN,
                          TIMEOUT_CODES, entry, retry_for)
from ..views import DATABASE, View, grant_for, refused
from ..snapshot import Snapshot, now_rfc3339
from . import failed_snapshot

log = logging.getLogger(__name__)

MODULE = "oracle-exporter"
ACTION = "scrape"
PROGRAM = "oracle-exporter"
# Statement cache slots beyond the plan's statements (a statement another part of the source adds).
STMT_CACHE_SPARE = 4
DEFAULT_CUSTOM_ROWS = 100   # rows the first run of a custom statement fetches with its execute
# Rows one statement fetches in one round trip at most (its arraysize; prefetchrows is one more).
FETCH_ROWS_MAX = 10_000

# Call timeout exceeded (thin: DPY-4024; thick: DPI-1067 / ORA-03156): the database
# is too slow to answer; stop this fetch instead of timing out view after view.
_TIMEOUT_CODES = TIMEOUT_CODES


# The alert log (collectors.alert_log): read last, with its own call timeout (_read_alert_log).
ALERT_LOG = "V$DIAG_ALERT_EXT"


def _clock_text(moment: _dt.datetime) -> str:
    """A datetime with its offset as the DUAL clock's text (2025-03-11T10:00:00.000000+01:00)."""
    text = moment.isoformat(timespec="microseconds")
    return text if text[-6] in "+-" else text + "+00:00"


def _oracledb():
    import oracledb  # imported lazily: replay-only runs never load the driver
    return oracledb


def init_driver(thick: bool = False, lib_dir: str | None = None, config_dir: str | None = None) -> str:
    """Settle python-oracledb's mode once, at start, before any connect (see the module doc).
    Thick mode loads the Oracle Client libraries (lib_dir, else the system search path) and
    reads sqlnet.ora / tnsnames.ora from config_dir. Returns "thin" or "thick"; a failure is
    a ConfigError (one line, exit 2)."""
    oracledb = _oracledb()
    if not thick:
        oracledb.enable_thin_mode()
        return "thin"
    try:
        oracledb.init_oracle_client(lib_dir=lib_dir, config_dir=config_dir)
    except oracledb.Error as exc:
        raise ConfigError("thick_mode", None, f"cannot load the Oracle Client libraries: {error_text(exc)}") from None
    return "thick"


# Views whose rows inside a PDB are the PDB's share (or none) rather than the instance's
# (declared in the view registry: View.refused_in).
PDB_REFUSED = refused("pdb")
# Data dictionary views (DBA_, CDB_): a MOUNTED database (a physical standby) or a closed PDB
# refuses them (ORA-01219); they are skipped there, not counted as errors (issue 22).
MOUNTED_REFUSED = refused("mounted")
# The open mode of the session's own PDB (connected to a PDB, V$DATABASE shows the CDB's).
PDB_OPEN_MODE_SQL = "SELECT OPEN_MODE FROM V$CONTAINERS WHERE CON_ID = SYS_CONTEXT('USERENV', 'CON_ID')"

# SYSTIMESTAMP as ISO 8601 text with the host's UTC offset (contract: recording key DUAL).
CLOCK_SQL = ("SELECT TO_CHAR(SYSTIMESTAMP, 'YYYY-MM-DD\"T\"HH24:MI:SS.FF6TZH:TZM') AS SYSTIMESTAMP FROM DUAL")


_MODES = {"default": "AUTH_MODE_DEFAULT", "sysdg": "AUTH_MODE_SYSDGD", "sysbackup": "AUTH_MODE_SYSBKP"}


def connect_args(db: DatabaseConfig, connect_timeout: float, thin: bool = True) -> dict[str, Any]:
    """Keyword arguments of python-oracledb's connect() for one database: tcp_connect_timeout
    (seconds, float), retry_count=0 (the exporter has its own backoff), expire_time (minutes
    between keepalive probes on an idle session), the logon mode, and the thin-mode
    config_dir (tnsnames.ora) and TCPS wallet; external authentication (a Secure External
    Password Store wallet) in thick mode."""
    oracledb = _oracledb()
    args: dict[str, Any] = dict(dsn=db.dsn, tcp_connect_timeout=connect_timeout, retry_count=0, expire_time=1,
                                program=PROGRAM, mode=getattr(oracledb, _MODES[db.mode]))
    if db.external_auth:
        args["externalauth"] = True
    else:
        args.update(user=db.user, password=db.password)
    if thin:
        if db.config_dir:
            args["config_dir"] = db.config_dir
        if db.wallet_location:
            args["wallet_location"] = db.wallet_location
        if db.wallet_password is not None:
            args["wallet_password"] = db.wallet_password
    return args


def default_connect(db: DatabaseConfig, connect_timeout: float) -> Any:
    """Open one session (thin or thick, whichever init_driver chose)."""
    oracledb = _oracledb()
    return oracledb.connect(**connect_args(db, connect_timeout, oracledb.is_thin_mode()))


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


def _set_aside(name: str, refused: dict, not_open: dict, snap) -> bool:
    """A view this fetch does not read: refused in this PDB (an error) or not readable in the
    database's open mode (a skip). Records which, and says whether it was set aside."""
    if name in refused:
        snap.errors[name] = refused[name]
        return True
    if name in not_open:
        snap.skipped[name] = not_open[name]
        return True
    return False

class _Abort(Exception):
    """The fetch cannot go on. ``drop``: the session is unusable (closed, then reconnect
    after backoff); otherwise it is kept (a call timeout on a healthy session)."""

    def __init__(self, message: str, drop: bool = True):
        super().__init__(message)
        self.drop = drop


class Backoff:
    """Exponential reconnect delay: initial, 2x, 4x ... capped; reset on success."""

    def __init__(self, initial: float = 1.0, cap: float = DEFAULT_BACKOFF_MAX_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.initial, self.cap, self.clock = initial, cap, clock
        self.failures = 0
        self.retry_at = 0.0

    def ready(self) -> bool:
        return self.clock() >= self.retry_at

    def remaining(self) -> float:
        return max(0.0, self.retry_at - self.clock())

    def failed(self) -> float:
        # the exponent is bounded: 2 ** 1100 overflows a float (17 h of failures at a 60 s cap)
        delay = min(self.cap, self.initial * (2 ** min(self.failures, 60)))
        self.failures += 1
        self.retry_at = self.clock() + delay
        return delay

    def succeeded(self) -> None:
        self.failures = 0
        self.retry_at = 0.0


class ConnectAttempt:
    """One connect() running in its own thread, waited for by as many fetches as it takes.

    python-oracledb's synchronous connect() has no timeout once the TCP connection is up
    (tcp_connect_timeout covers only that, python-oracledb issue #451): a listener that
    accepts and never answers keeps it waiting for ever, and nothing can interrupt it.
    So the attempt is not abandoned at the fetch deadline: it stays the database's one
    attempt in flight, the next fetch waits for the same attempt instead of starting
    another, and when it finally returns the session is used (or, if the source was
    closed meanwhile, closed). At most one connect thread and one socket per database,
    however long the listener hangs."""

    def __init__(self, name: str, connect: Callable[[], Any], credentials: Any = None):
        self.credentials = credentials     # what the logon was tried with (LiveSource._credentials)
        self.started = time.monotonic()
        self.started_wall = time.time()
        self._done = threading.Event()
        self._guard = threading.Lock()
        self._orphaned = False
        self.conn: Any = None
        self.exc: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(connect,), name=f"connect-{name}", daemon=True)
        self.thread.start()

    def _run(self, connect: Callable[[], Any]) -> None:
        try:
            conn = connect()
        except BaseException as exc:  # handed to the fetch that waits
            self.exc = exc
            self._done.set()
            return
        with self._guard:
            self.conn = conn
            orphaned = self._orphaned
            self._done.set()
        if orphaned:
            _close_quietly(conn)

    def wait(self, seconds: float) -> bool:
        return self._done.wait(max(0.0, seconds))

    def orphan(self) -> None:
        """Nobody will take the session: close it when (if) it arrives."""
        with self._guard:
            self._orphaned = True
            conn = self.conn if self._done.is_set() else None
        if conn is not None:
            _close_quietly(conn)


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:  # a broken session may refuse a clean close
        pass


class LiveSource:
    """One database. ``fetch()`` reads every planned view within one time budget
    (``timeout_seconds``): the connect (when there is no session) and every statement
    share it, each statement's call timeout is the time left, and a fetch that runs out
    of time stops there. The session survives a call timeout when the driver reports it
    healthy (python-oracledb breaks and resets the call), so a slow scrape does not cost
    a fresh logon on a database under stress."""

    def __init__(self, db: DatabaseConfig, settings: Settings, *, call_timeout: float | None = None,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS,
                 connect: Callable[[DatabaseConfig, float], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 backoff_initial: float = 1.0, backoff_cap: float = DEFAULT_BACKOFF_MAX_SECONDS,
                 collectors: Mapping[str, Any] | None = None, refusals: RefusalStore | None = None,
                 locked_retry: float = DEFAULT_LOCKED_RETRY_SECONDS):
        self.name = db.name
        self.db = db
        self.settings = settings
        self.budget = call_timeout if call_timeout is not None else db.timeout_seconds
        self.connect_timeout = connect_timeout
        self._connect = connect or default_connect
        self.backoff = Backoff(backoff_initial, backoff_cap, clock)
        self.plan = build_plan(collectors, settings)
        self._variants: dict[str, View] = {}   # planned view -> fallback in use (this session)
        self._retry_at: dict[str, float] = {}  # planned view -> when to try it again (fallback taken on
                                               # ORA-00942/ORA-04043, which may be a missing grant)
        self._without_con_id: set[str] = set()  # views read without CON_ID (before 12.1; this session)
        self.clock = clock
        self.intervals = view_intervals(collectors, settings)
        self._cache: dict[str, tuple[float, str, list[dict[str, Any]]]] = {}  # key -> (read at, key used, rows)
        self._held: dict[str, tuple[float, str, str, str]] = {}  # slow view -> (failed at, "error"|"skip",
                                                                 # snapshot key, text): not retried before
                                                                 # its interval has passed
        self.custom = [q for q in getattr(settings, "custom_queries", ()) or () if q.runs_on(db.name)]
        self.container: tuple[int, str] = (0, "")   # (CON_ID, CON_NAME) of this session's container
        self._conn: Any = None
        self._attempt: ConnectAttempt | None = None
        self._closed = False
        self._slow_answer: tuple[str, float] | None = None   # (error, seconds): the last attempt failed
                                                             # after more than the budget
        self._lock = threading.Lock()
        self._last_error: str | None = None
        self._password = db.password            # the password read last (password_file / password_env)
        self._unreadable: str | None = None     # why the password source could not be read (logged once)
        self._rows_seen: dict[str, int] = {}    # statement -> rows it returned last (sizes its next fetch)
        self.refusals = refusals if refusals is not None else RefusalStore()   # refused passwords (hashed)
        self._refused = False                   # the current password is refused (not tried again)
        self._retry_requested = False           # SIGHUP: one more attempt (RefusalStore.grant_retry)
        self.locked_retry = locked_retry        # ORA-28000: tried again this often (0: never)
        self.password_expiring = False          # the last logon warned: ORA-28002 grace period
        self._alert_since: str | None = None    # V$DIAG_ALERT_EXT: its read position (collectors.alert_log)

    # -- credentials -------------------------------------------------------
    def _credentials(self) -> tuple[str, Any]:
        """The password to log on with, read again from password_file (its first line) /
        password_env (a rotated password needs no restart), twice: to log on with, and to tell
        one attempt's credentials from the next (RefusalStore hashes it; the file's modification
        time plays no part: rewriting the same content asks for no new logon). A source that
        cannot be read (a file missing mid-rotation) keeps the password read last, and says so once."""
        db, password, problem = self.db, self._password, None
        if db.password_file:
            try:
                text = read_secret_file(db.password_file)
                if text:
                    password = text
                else:
                    problem = f"password file {db.password_file} is empty"
            except OSError as exc:
                problem = f"cannot read password file {db.password_file}: {exc.strerror or exc}"
        elif db.password_env:
            value = os.environ.get(db.password_env)
            if value is None:
                problem = f"environment variable {db.password_env} is not set"
            else:
                password = value
        if problem != self._unreadable:
            if problem:
                log.warning("database %s: %s: logging on with the password read before", self.name, problem)
            self._unreadable = problem
        self._password = password
        return password, password

    def _where(self) -> str:
        if self.db.password_file:
            return f"password_file {self.db.password_file}"
        if self.db.password_env:
            return f"password_env {self.db.password_env} (a new value needs a restart)"
        return "the configuration (restart the exporter)"

    def request_retry(self) -> None:
        """SIGHUP: one more logon attempt even with an unchanged refused password (the account
        was unlocked, a grant added), granted at the next fetch within RefusalStore's bound.
        Only sets a flag: safe in a signal handler."""
        self._retry_requested = True

    def _still_refused(self) -> bool:
        """True while the credentials a logon was refused for are still the ones to use
        (in this process or, through the refusals file, an earlier one)."""
        password = self._credentials()[0]
        db = self.db
        refusal, settled = self.refusals.check(db.user, db.dsn, password, self.name)
        if not settled:     # a refusal of an earlier run, being compared with this password: it stands
            if self._last_error is None:
                self._last_error = self._refusal_text(refusal or "")
            return True
        retry, self._retry_requested = self._retry_requested, False
        if refusal is None:
            if self._refused:
                log.warning("database %s: the credentials changed (%s): logging on again", self.name, self._where())
                self._refused = False
                self.backoff.succeeded()   # tried at once, whatever the backoff had reached
            return False
        if not retry:
            since = self.refusals.locked_retry_due(db.user, db.dsn, self.locked_retry, self.name)
            if since is not None:
                log.warning("database %s: account locked since %s UTC: one more logon attempt (Oracle unlocks a "
                            "LOCKED(TIMED) account itself after the profile's PASSWORD_LOCK_TIME, and a logon on a "
                            "locked account counts no failed logon); again in %g s while it stays locked "
                            "(locked_retry_seconds)", self.name,
                            time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(since)), self.locked_retry)
                self._refused = False
                self.backoff.succeeded()
                return False
        if retry:
            if self.refusals.grant_retry(db.user, db.dsn, self.name):
                log.warning("database %s: reload: one more logon attempt with the unchanged password", self.name)
                self._refused = False
                self.backoff.succeeded()
                return False
            log.warning("database %s: reload: the unchanged password was refused and retried %d times in the "
                        "last hour: not tried again (change it in %s)", self.name, SIGHUP_RETRIES, self._where())
        if not self._refused:
            self._refused = True
            if self._last_error is None:   # refused by an earlier run (the refusals file)
                log.warning("database %s: this password was refused before (%s): not tried again until it "
                            "changes in %s or a reload (SIGHUP)", self.name, refusal, self._where())
                self._last_error = self._refusal_text(refusal)
        return True

    def _refusal_text(self, text: str) -> str:
        if self.locked_retry > 0 and is_locked(text):
            return (f"connect failed: {text} (tried again every {self.locked_retry:g} s with the same password: "
                    f"Oracle unlocks a LOCKED(TIMED) account after the profile's PASSWORD_LOCK_TIME and a logon "
                    f"on a locked account counts no failed logon; at once when the password changes in "
                    f"{self._where()}, or on a reload: SIGHUP)")
        return (f"connect failed: {text} (not tried again with the same password: each logon with a "
                f"wrong password counts towards the account's FAILED_LOGIN_ATTEMPTS; the next attempt "
                f"when it changes in {self._where()}, or on a reload: SIGHUP)")

    # -- session handling -------------------------------------------------
    def _open(self, db: DatabaseConfig | None = None) -> Any:
        db = db or self.db
        conn = self._connect(db, self.connect_timeout)
        conn.module = MODULE
        conn.action = ACTION
        conn.client_identifier = f"{MODULE}:{self.name}"
        log.info("database %s: connected as %s to %s", self.name, db.user or "(external)", db.dsn)
        self._logon_warning(conn)
        conn.stmtcachesize = self.statement_cache_size()
        conn.call_timeout = max(1, int(self.budget * 1000))
        self.container = self._read_container(conn)
        return conn

    def _logon_warning(self, conn: Any) -> None:
        """python-oracledb's Connection.warning: ORA-28002 (or ORA-28011) when the password is in
        its grace period. Logged when it starts (not at every reconnect), kept for the gauge."""
        warning = getattr(conn, "warning", None)
        text = error_text(warning) if warning is not None else ""
        found = entry(text) if text else None
        expiring = found is not None and found.expiring
        if expiring and not self.password_expiring:
            log.warning("database %s: %s: change the password of %s (and %s) before it expires, or give the "
                        "user a profile whose password does not expire (docs/oracle-monitoring-user.sql)",
                        self.name, text, self.db.user or "the monitoring user", self._where())
        elif self.password_expiring and not expiring:
            log.info("database %s: the logon no longer warns that the password expires", self.name)
        self.password_expiring = expiring

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
        if con_id > 2:
            log.warning("database %s: connected to the pluggable database %s: %s are not read (they would "
                        "show this PDB's share as the instance's); connect to CDB$ROOT or a non-CDB for them",
                        self.name, name or "?", ", ".join(PDB_REFUSED))
        return (con_id, name)

    def _read_clock(self, conn: Any, deadline: float, snap: Snapshot) -> None:
        """The database host's clock with its UTC offset, once per fetch (recording key ``DUAL``):
        DATE columns such as GV$INSTANCE.STARTUP_TIME are host-local wall-clock times, and
        python-oracledb drops the zone of a TIMESTAMP WITH TIME ZONE, so the offset is read as
        text. A failure costs only the conversion (DATEs are then taken as UTC)."""
        self._statement_timeout(conn, deadline, "DUAL")
        try:
            snap.views["DUAL"] = self._run(conn, CLOCK_SQL, {})
        except Exception as exc:
            text = error_text(exc)
            if text.startswith(_TIMEOUT_CODES):
                raise _Abort(f"timeout: reading DUAL exceeded the fetch budget of {self.budget:g} s ({text})",
                             drop=not self._healthy(conn)) from None
            if not self._healthy(conn):
                raise _Abort(f"session lost while reading DUAL: {text}") from None
            snap.errors["DUAL"] = text

    def _refused_in_pdb(self) -> dict[str, str]:
        """Connected to a PDB (CON_ID > 2), the instance-wide statistics views answer for that PDB
        only (GV$SYSSTAT, GV$SYSTEM_EVENT, the event histograms) or not at all (GV$SYSMETRIC),
        while latches, PGA, logs and processes stay instance-wide: mixed, they would mislead.
        Those views are not read; the collectors that need them fail naming the reason."""
        con_id, name = self.container
        if con_id <= 2:
            return {}
        why = (f"not read: connected to the pluggable database {name or '?'} (CON_ID {con_id}), where this "
               f"view holds that PDB's share or nothing; instance-wide statistics need a connection to "
               f"CDB$ROOT (a common user with CONTAINER_DATA=ALL) or to a non-CDB")
        return {v: why for v in PDB_REFUSED}

    def _not_open(self, conn: Any, deadline: float, snap: Snapshot) -> dict[str, str]:
        """{view: why} of the planned data dictionary views not to read because the database is
        MOUNTED (a physical standby: ORA-01219 on every DBA_/CDB_ view) or, connected to a PDB,
        that PDB is not open. V$DATABASE (planned for the instance and dataguard collectors) is
        read here, first, and kept in the snapshot; without it (not planned, or it failed) the
        open mode is unknown and every view is tried (ORA-01219 is then a skip all the same)."""
        if not MOUNTED_REFUSED or not any(v.name == DATABASE.name for v in self.plan.views):
            return {}
        self._read_view(conn, DATABASE, deadline, snap)
        rows = snap.views.get(DATABASE.name) or []
        mode = str(rows[0].get("OPEN_MODE") or "").strip().upper() if rows else ""
        role = str(rows[0].get("DATABASE_ROLE") or "").strip().upper() if rows else ""
        where = f"the database is {mode} ({role or 'role unknown'})"
        con_id, name = self.container
        if mode != "MOUNTED" and con_id > 2:
            self._statement_timeout(conn, deadline, "V$CONTAINERS")
            try:
                found = self._run(conn, PDB_OPEN_MODE_SQL, {})
            except Exception as exc:
                if not self._healthy(conn):
                    raise _Abort(f"session lost while reading V$CONTAINERS: {error_text(exc)}") from None
                found = []
            mode = str(found[0].get("OPEN_MODE") or "").strip().upper() if found else ""
            where = f"the pluggable database {name or '?'} is {mode}"
        if mode != "MOUNTED":
            return {}
        why = (f"not read: {where}, and a data dictionary view needs an open database (ORA-01219); "
               f"the dynamic performance views (V$, GV$) are read as usual")
        return {v: why for v in MOUNTED_REFUSED}

    def _hold(self, view: View, interval: float, now: float, snap: Snapshot) -> None:
        """A view with an interval that failed (or was skipped) in this fetch keeps its interval:
        it is not tried again before ``interval`` has passed. While the rows read last are
        younger than twice the interval they are served instead of the error (their age says
        how old they are: oracle_collector_cache_age_seconds beyond the interval)."""
        key, kind = next(((k, "error") for k in snap.errors if k == view.name or k in
                          {v.name for v in view.variants()}), (None, ""))
        if key is None:
            key = next((k for k in snap.skipped if k in {v.name for v in view.variants()}), None)
            kind = "skip"
        if key is None:
            return
        text = snap.errors[key] if kind == "error" else snap.skipped[key]
        self._held[view.name] = (now, kind, key, text)
        if kind == "error" and self._stale(view.name, interval, now, snap):
            log.warning("database %s: %s failed (%s): serving the rows read %.0f s ago; tried again in %g s",
                        self.name, key, text, snap.ages.get(self._cache[view.name][1], 0.0), interval)
            del snap.errors[key]

    def _still_held(self, view: str, interval: float, now: float, snap: Snapshot) -> bool:
        """True (the snapshot filled in) while a failed or skipped view waits for its interval."""
        held = self._held.get(view)
        if held is None:
            return False
        at, kind, key, text = held
        if interval <= 0 or now - at >= interval:
            del self._held[view]
            return False
        if kind == "skip":
            snap.skipped[key] = text
        elif not self._stale(view, interval, now, snap):
            snap.errors[key] = text
        return True

    def _stale(self, view: str, interval: float, now: float, snap: Snapshot) -> bool:
        """Serve the rows read last if they are younger than twice the interval."""
        hit = self._cache.get(view)
        if hit is None or now - hit[0] >= 2 * interval:
            return False
        snap.views[hit[1]] = hit[2]
        snap.ages[hit[1]] = round(now - hit[0], 3)
        return True

    def _in_scope(self, scope: str) -> bool:
        con_id = self.container[0]
        return scope == "any" or (scope == "cdb_root" and con_id == 1) or (scope == "pdb" and con_id > 2)

    def _cached(self, key: str, interval: float, now: float, snap: Snapshot) -> bool:
        """Serve the rows of ``key`` from the cache if they are younger than ``interval``."""
        hit = self._cache.get(key)
        if interval <= 0 or hit is None or now - hit[0] >= interval:
            return False
        snap.views[hit[1]] = hit[2]
        snap.ages[hit[1]] = round(now - hit[0], 3)
        return True

    def _read_custom(self, conn: Any, now: float, deadline: float, snap: Snapshot) -> None:
        for q in self.custom:
            if not self._in_scope(q.scope) or self._cached(q.key, q.interval, now, snap):
                continue
            left = deadline - time.monotonic()
            if left < 0.001:
                raise _Abort(f"timeout: fetch budget of {self.budget:g} s used up before custom statement {q.name}",
                             drop=False)
            timeout = min(q.timeout, left) if q.timeout is not None else left
            t0 = time.monotonic()
            try:
                conn.call_timeout = max(1, int(timeout * 1000))
                rows = self._run(conn, q.sql, {}, DEFAULT_CUSTOM_ROWS)
            except Exception as exc:
                text = error_text(exc)
                if not self._healthy(conn):
                    raise _Abort(f"session lost while running custom statement {q.name}: {text}")
                if text.startswith(_TIMEOUT_CODES):
                    text = f"call timeout ({timeout:g} s): {text}"
                snap.errors[q.key] = text
                self._cache.pop(q.key, None)
                continue
            finally:
                snap.durations[q.key] = time.monotonic() - t0
            snap.views[q.key] = rows
            if q.interval > 0:
                self._cache[q.key] = (now, q.key, rows)

    def _alert_log_binds(self, snap: Snapshot) -> dict[str, object]:
        """The binds of the V$DIAG_ALERT_EXT statement: the database clock of the last read (the
        first read: that of this fetch less alert_log_first_window_seconds) and the row bound."""
        since = self._alert_since
        if since is None:
            clock = next((r.get("SYSTIMESTAMP") for r in snap.views.get("DUAL", ())), None)
            try:
                moment = _dt.datetime.fromisoformat(str(clock))
            except ValueError:
                moment = _dt.datetime.now(_dt.timezone.utc)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=_dt.timezone.utc)
            window = float(getattr(self.settings, "alert_log_first_window_seconds", 3600.0))
            since = _clock_text(moment - _dt.timedelta(seconds=window))
        return {"alert_log_since": since,
                "alert_log_rows": int(getattr(self.settings, "alert_log_max_rows", 1000))}

    def _read_alert_log(self, conn: Any, now: float, deadline: float, snap: Snapshot,
                        refused: Mapping[str, str], not_open: Mapping[str, str]) -> None:
        """V$DIAG_ALERT_EXT (the alert_log collector): parsed from the XML alert log at every query,
        so read last, on its interval, only the messages since the last read, with its own call
        timeout (alert_log_timeout_seconds, never beyond the fetch budget; the session's call
        timeout restored after). A timeout or an error is this view's only: every other view was read."""
        view = next((v for v in self.plan.views if v.name == ALERT_LOG), None)
        if view is None:
            return
        if _set_aside(view.name, refused, not_open, snap):
            return
        interval = self.intervals.get(view.name, 0.0)
        if self._cached(view.name, interval, now, snap) or self._still_held(view.name, interval, now, snap):
            return
        left = deadline - time.monotonic()
        if left < 0.001:
            snap.errors[view.name] = f"not read: the fetch budget of {self.budget:g} s was used up before it"
            return
        timeout = min(float(getattr(self.settings, "alert_log_timeout_seconds", 10.0)), left)
        query = self.plan.statement(view)
        binds = {**query.binds, **self._alert_log_binds(snap)}
        sql = _alert_log.live_statement(query.sql)        # ORIGINATING_TIMESTAMP as UTC text
        clock = next((r.get("SYSTIMESTAMP") for r in snap.views.get("DUAL", ())), None)
        previous = conn.call_timeout
        t0 = time.monotonic()
        try:
            conn.call_timeout = max(1, int(timeout * 1000))
            rows = self._run(conn, sql, binds, int(binds["alert_log_rows"]))
        except Exception as exc:
            text = error_text(exc)
            snap.durations[view.name] = time.monotonic() - t0
            if not self._healthy(conn):
                raise _Abort(f"session lost while reading {view.name}: {text}") from None
            if text.startswith(_TIMEOUT_CODES):
                text = f"call timeout ({timeout:g} s, alert_log_timeout_seconds): {text}"
            log.debug("database %s: %s failed: %s", self.name, view.name, text)
            snap.errors[view.name] = text
            self._hold(view, interval, now, snap)
            return
        finally:
            try:
                conn.call_timeout = previous
            except Exception:
                pass
        snap.durations[view.name] = time.monotonic() - t0
        snap.views[view.name] = rows
        # the next read: from this fetch's clock, or from the newest message read when the read hit
        # its row bound (ordered oldest first: the rest is read next time, nothing skipped)
        position = _alert_log.position_after(rows, int(binds["alert_log_rows"]), clock, binds["alert_log_since"])
        if position is not None:
            self._alert_since = position
        if interval > 0:
            self._cache[view.name] = (now, view.name, rows)
            self._held.pop(view.name, None)

    def _session(self, deadline: float) -> Any:
        """The session, connecting within the fetch budget if there is none (see ConnectAttempt)."""
        if self._conn is not None:
            return self._conn
        if self._attempt is None:
            password, credentials = self._credentials()
            db = dataclasses.replace(self.db, password=password)
            self._attempt = ConnectAttempt(self.name, lambda: self._open(db), credentials)
        attempt = self._attempt
        if not attempt.wait(deadline - time.monotonic()):
            since = time.strftime("%H:%M:%S", time.gmtime(attempt.started_wall))
            slow = self._slow_answer
            if slow is not None and time.monotonic() - attempt.started < 2 * slow[1] + self.budget:
                # the listener answers, only later than the budget: its answer is the cause, not a
                # hang (else the reason would flip between the two from fetch to fetch)
                raise _Abort(f"connect failed: {slow[0]} (answered after {slow[1]:.1f} s, more than the fetch "
                             f"budget of {self.budget:g} s; the next attempt, in flight since {since} UTC, has "
                             f"not answered yet)")
            raise _Abort(f"connect failed: no answer from the database (the listener accepted the connection "
                         f"but the logon did not complete; attempt in flight since {since} UTC)")
        self._attempt = None
        took = time.monotonic() - attempt.started
        self._slow_answer = None
        if attempt.exc is not None:
            text = error_text(attempt.exc)
            if took > self.budget:
                self._slow_answer = (text, took)
            if retry_for(text) == NEW_CREDENTIALS:
                self._refused = True
                self.refusals.refuse(self.db.user, self.db.dsn, attempt.credentials, text, self.name)
                raise _Abort(self._refusal_text(text))
            raise _Abort(f"connect failed: {text}")
        self._conn = attempt.conn
        self.refusals.accepted(self.db.user, self.db.dsn, self.name)
        self._variants = {}   # a new session (maybe an upgraded database): primary views first
        self._retry_at = {}
        self._without_con_id = set()
        return self._conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            _close_quietly(conn)

    def close(self) -> None:
        """Close the session and give up the connect in flight, without waiting for a running
        fetch (it may wait on a hung listener until its deadline: SIGTERM must not): that fetch
        closes what it still holds when it ends."""
        self._closed = True
        attempt = self._attempt
        if attempt is not None:
            attempt.orphan()            # the session it may still bring is closed on arrival
        if not self._lock.acquire(blocking=False):
            return
        try:
            self._release()
        finally:
            self._lock.release()

    def _release(self) -> None:
        """``self._lock`` held: the session closed, the attempt in flight given up."""
        self._drop()
        if self._attempt is not None:
            self._attempt.orphan()
            self._attempt = None

    # -- fetching ----------------------------------------------------------
    def _healthy(self, conn: Any) -> bool:
        try:
            return bool(conn.is_healthy())
        except Exception:
            return False

    def statement_cache_size(self) -> int:
        """Statement cache slots for this source's session: every statement the plan can send
        (each view and fallback), the clock and the container query, the custom statements, and
        a few spare. (An LRU cache smaller than the statements cycled through misses every time.)"""
        return self.plan.statements() + 2 + len(self.custom) + STMT_CACHE_SPARE

    def _fetch_rows(self, sql: str, expected: int) -> int:
        """Rows the next execution of ``sql`` should fetch in its one round trip: the rows it
        returned last plus a quarter (and 8), never fewer than ``expected``."""
        seen = self._rows_seen.get(sql)
        rows = expected if seen is None else max(expected, seen + seen // 4 + 8)
        return max(1, min(rows, FETCH_ROWS_MAX))

    def _run(self, conn: Any, sql: str, binds: dict[str, object], expected: int = 1) -> list[dict[str, Any]]:
        cursor = conn.cursor()
        try:
            # all rows with the execute: prefetchrows one more than the rows (no extra round trip
            # to learn that there are no more), arraysize for the fetches after if there are
            rows = self._fetch_rows(sql, expected)
            cursor.arraysize = rows
            cursor.prefetchrows = rows + 1
            cursor.execute(sql, binds)
            cols = [d[0].upper() for d in cursor.description]
            out = [{c: normalize(v) for c, v in zip(cols, row)} for row in cursor.fetchall()]
            self._rows_seen[sql] = len(out)
            return out
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

    def _statement_timeout(self, conn: Any, deadline: float, view: str) -> None:
        """Give the next statement the time left in the fetch budget (whole milliseconds)."""
        left = deadline - time.monotonic()
        if left < 0.001:
            raise _Abort(f"timeout: fetch budget of {self.budget:g} s used up before reading {view}", drop=False)
        try:
            conn.call_timeout = max(1, int(left * 1000))
        except Exception as exc:
            raise _Abort(f"session unusable: {error_text(exc)}") from None

    def _read_view(self, conn: Any, view: View, deadline: float, snap: Snapshot) -> None:
        """Read one planned view into the snapshot (rows, or its error), through the view's
        fallbacks: an error starting with a fallback's code (ORA-00942 on a release without
        the view, ORA-00904 without a column) switches to the fallback for the rest of the
        session and reads it at once. Raises _Abort when the fetch cannot go on."""
        current = self._variants.get(view.name, view)
        retrying = False
        if current is not view and self.clock() >= self._retry_at.get(view.name, float("inf")):
            # the fallback was taken on "no such view", which is also what a missing grant looks
            # like: try the view itself again now and then, so a grant added later is picked up
            del self._retry_at[view.name]
            current, retrying = view, True
        while True:
            query = self.plan.statement(current, con_id=current.name not in self._without_con_id)
            self._statement_timeout(conn, deadline, current.name)
            t0 = time.monotonic()
            try:
                snap.views[current.name] = self._run(conn, query.sql, query.binds, self.plan.fetch_rows(current))
                snap.durations[current.name] = time.monotonic() - t0
                if retrying and current is view:
                    log.warning("database %s: %s readable again: reading it instead of its fallback",
                                self.name, view.name)
                    self._variants.pop(view.name, None)
                return
            except Exception as exc:
                text = error_text(exc)
            snap.durations[current.name] = time.monotonic() - t0
            if text.startswith(_TIMEOUT_CODES):
                healthy = self._healthy(conn)
                raise _Abort(f"timeout: reading {current.name} exceeded the fetch budget of {self.budget:g} s "
                             f"({text})", drop=not healthy)
            if not self._healthy(conn):
                raise _Abort(f"session lost while reading {current.name}: {text}")
            if (text.startswith(MISSING_COLUMN) and '"CON_ID"' in text and current.selects_con_id
                    and current.name not in self._without_con_id):
                log.info("database %s: %s has no CON_ID (before 12.1): reading it without for the rest of "
                         "this session", self.name, current.name)
                self._without_con_id.add(current.name)
                continue
            if text.startswith(NOT_OPEN):   # MOUNTED standby, closed PDB: a skip, not an error
                log.debug("database %s: view %s skipped: %s", self.name, current.name, text)
                snap.skipped[current.name] = f"not read: {text} (the database or this PDB is not open)"
                return
            fallback = next((fb for fb in current.fallbacks if text.startswith(fb.codes)), None)
            if fallback is None:
                log.debug("database %s: view %s failed: %s", self.name, current.name, text)
                snap.errors[current.name] = text
                return
            if text.startswith(MISSING_VIEW):
                grant = grant_for(current.name)
                (log.debug if retrying else log.warning)("database %s: %s failed (%s): reading %s%s; if the release has it, the grant is "
                            "missing (GRANT %s TO <monitoring user>); tried again every %g s", self.name,
                            current.name, text, fallback.use.name, f" ({fallback.why})" if fallback.why else "",
                            grant, FALLBACK_RETRY_SECONDS)
                self._retry_at[view.name] = self.clock() + FALLBACK_RETRY_SECONDS
            else:
                log.info("database %s: %s failed (%s): reading %s%s for the rest of this session", self.name,
                         current.name, text, fallback.use.name,
                         f" ({fallback.why})" if fallback.why else "")
            self._variants[view.name] = current = fallback.use

    def fetch(self) -> Snapshot:
        with self._lock:
            try:
                return self._fetch()
            finally:
                if self._closed:        # closed while it ran (close does not wait for it)
                    self._release()

    def _fetch(self) -> Snapshot:
        if self._still_refused():
            return failed_snapshot(self.name, self._last_error or "connect failed: logon refused")
        # the budget starts after the refusal check (it may hash a password): it is this
        # database's own time, never spent on another's
        deadline = time.monotonic() + self.budget
        if not self.backoff.ready():
            return failed_snapshot(
                self.name, f"{self._last_error} (reconnect backoff, next attempt in "
                           f"{self.backoff.remaining():.1f} s)")
        snap = Snapshot(database=self.name, time=now_rfc3339(), views={})
        try:
            conn = self._session(deadline)
            try:
                conn.action = ACTION
            except Exception as exc:
                raise _Abort(f"session unusable: {error_text(exc)}") from None
            now = self.clock()
            self._read_clock(conn, deadline, snap)
            refused = self._refused_in_pdb()
            not_open = self._not_open(conn, deadline, snap)
            for view in self.plan.views:
                if _set_aside(view.name, refused, not_open, snap):
                    continue
                if view.name in snap.views or view.name in snap.errors:   # V$DATABASE, read first
                    continue
                if view.name == ALERT_LOG:   # read last, with its own call timeout (_read_alert_log)
                    continue
                interval = self.intervals.get(view.name, 0.0)
                if self._cached(view.name, interval, now, snap) or self._still_held(view.name, interval, now, snap):
                    continue
                before = set(snap.views)
                self._read_view(conn, view, deadline, snap)
                read = [k for k in snap.views if k not in before]
                if interval > 0 and read:
                    self._cache[view.name] = (now, read[0], snap.views[read[0]])
                    self._held.pop(view.name, None)
                elif interval > 0:
                    self._hold(view, interval, now, snap)
            self._read_custom(conn, now, deadline, snap)
            self._read_alert_log(conn, now, deadline, snap, refused, not_open)
        except _Abort as exc:
            return self._fail(str(exc), exc.drop)
        if self._last_error is not None:
            log.info("database %s: fetching again", self.name)
        self._last_error = None
        self.backoff.succeeded()
        return snap

    def _fail(self, reason: str, drop: bool) -> Snapshot:
        """A failed fetch. A lost or never-opened session is dropped and reconnects back off;
        a fetch that ran out of time on a healthy session keeps it and does not back off."""
        if drop:   # (the exporter logs the failure itself, once per change of cause)
            self._drop()
            delay = self.backoff.failed()
            log.debug("database %s: %s (next attempt in %.1f s)", self.name, reason, delay)
        else:
            log.debug("database %s: %s (session kept)", self.name, reason)
        self._last_error = reason
        return failed_snapshot(self.name, reason)
