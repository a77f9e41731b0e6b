"""oracle-exporter configuration (YAML).

::

    timeout_seconds: 10            # time budget of one fetch (connect + every statement) and scrape deadline
    connect_timeout_seconds: 5     # TCP connect timeout of a (re)connect
    min_interval_seconds: 0        # at most one query set per database per interval, however many scrapers
    refresh_interval_seconds: 0    # above 0: fetch every database in the background this often; scrapes never wait
    reconnect_backoff_max_seconds: 60   # reconnects back off 1 s, 2 s, 4 s ... up to this
    locked_retry_seconds: 3600     # ORA-28000 (account locked) tried again this often (0: never)
    config_dir: /etc/oracle        # tnsnames.ora (dsn may be an alias); thick mode: sqlnet.ora too
    thick_mode: {lib_dir: /opt/oracle/instantclient_23_7}   # or true: Oracle Client libraries (see docs)
    histogram_events: [...]        # events exposed as latency histograms
    latches: [...]                 # latches exposed one by one (all latches are also summed)
    collectors: {latch: false}     # switch collectors off by NAME (all are on by default but pdb)
    pdbs: [SALES, HR]              # pdb collector (opt-in: collectors: {pdb: true}): only these PDBs
    pdb_series_max: 5000           # pdb collector: series per database; whole PDBs left out beyond
    pdb_wait_events_max: 25        # pdb collector: non-Idle events per PDB, most time waited first
    pdb_histogram_events: [log file sync, db file sequential read]   # per-PDB latency histograms
    collector_intervals: {tablespaces: 600}   # seconds between reads of a collector's views
    session_events_max: 15         # GV$SESSION events with their own series (per instance)
    idle_wait_events: false        # GV$SYSTEM_EVENT's Idle class (SQL*Net message from client ...) too
    wait_events_max: 400           # per instance, most time waited first; oracle_wait_events_omitted counts the rest
    custom_metrics: [...]          # custom SQL metrics (oracle_exporter.custom)
    custom_metric_files: [...]     # Oracle exporter TOML/YAML metric files, read unchanged
    databases:
      - name: prod1                # becomes label database="prod1"
        dsn: db1.example.com:1521/PROD1
        user: c##monitor
        password_file: /etc/oracle-exporter/prod1.pw   # or password_env: PROD1_PASSWORD
        labels: {env: prod}        # extra labels on every sample of this database
        timeout_seconds: 5         # overrides the global timeout for this database
        mode: sysdg                # logon as SYSDG (or sysbackup): V$ views of a mounted standby
        wallet_location: /etc/oracle-exporter/wallet     # thin mode TCPS: directory of ewallet.pem
        wallet_password_file: /etc/oracle-exporter/wallet.pw   # or wallet_password_env
        external_auth: true        # thick mode: credentials from a Secure External Password Store
                                   # wallet (sqlnet.ora in config_dir); no user / password then

A bad file raises ConfigError("file", "field.path", "what is wrong"), which the
CLI turns into exit status 2. The password is never part of any repr/str.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, make_dataclass
from typing import Any, Iterable

from exporter_common.config import ConfigError, ErrorList, Fields, load_yaml, secret_from

from exporter_common.declare import settings_of

from . import core
from .collectors import COLLECTORS
from .collectors.defaults import DEFAULT_HISTOGRAM_EVENTS as _DEFAULT_EVENTS, DEFAULT_LATCHES as _DEFAULT_LATCHES

# One list each, owned by the collectors' declarations (they also fall back to them).
DEFAULT_HISTOGRAM_EVENTS: tuple[str, ...] = tuple(_DEFAULT_EVENTS)
DEFAULT_LATCHES: tuple[str, ...] = tuple(_DEFAULT_LATCHES)

# The exporter-wide settings, declared once in oracle_exporter.core.
DEFAULT_TIMEOUT_SECONDS = core.default("timeout_seconds")
DEFAULT_CONNECT_TIMEOUT_SECONDS = core.default("connect_timeout_seconds")
DEFAULT_BACKOFF_MAX_SECONDS = core.default("reconnect_backoff_max_seconds")
DEFAULT_LOCKED_RETRY_SECONDS = core.default("locked_retry_seconds")

# Every collector's declaration, and the settings they declare: {key: (collector, Setting)}.
SPECS = {name: mod.SPEC for name, mod in COLLECTORS.items() if getattr(mod, "SPEC", None) is not None}
COLLECTOR_SETTINGS = settings_of(SPECS.values())
# Keys of the config file that are not a collector's: a collector may not declare one of them.
CONFIG_KEYS = frozenset({"databases", "collectors", "collector_intervals", "custom_metrics", "custom_metric_files",
                         "thick_mode", "config_dir", *(s.key for s in core.SPEC.settings)})
_CLASH = sorted(set(COLLECTOR_SETTINGS) & CONFIG_KEYS)
if _CLASH:
    raise RuntimeError("; ".join(f"collector {COLLECTOR_SETTINGS[k][0].name} declares setting {k!r}, a key the "
                                 "exporter itself reads from the config file" for k in _CLASH))
OPT_IN_COLLECTORS = frozenset(name for name, spec in SPECS.items() if spec.opt_in)
LOGON_MODES = ("default", "sysdg", "sysbackup")

# Labels the exporter or the collectors set themselves; an extra label with one
# of these names would clash with (or silently replace) a real dimension.
RESERVED_LABELS = frozenset({
    "database", "inst_id", "event", "wait_class", "latch", "collector", "version", "le",
    "quantile", "instance", "job", "pname", "spid", "instance_name", "host_name", "db_name",
    "db_unique_name", "database_role", "statistic", "metric", "name", "group", "thread",
    "status", "kind", "stat", "parameter", "process",
}) | {name for family in core.SPEC.metrics for name in family.labels}   # the self metrics' (view, reason, ...)
_LABEL_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")   # with fullmatch: "$" lets a trailing newline through


def _enabled(self, name: str) -> bool:
    """Collectors are on unless switched off by name; an opt-in collector (the pdb
    collector) is off unless switched on."""
    return self.collectors.get(name, name not in OPT_IN_COLLECTORS)


# What the collectors need to know; pure data, no database handles. One field per setting a
# collector declares (default from its declaration), plus the switches, the intervals and the
# custom queries: Settings(histogram_events=[...]) overrides one, an unknown name is a TypeError.
Settings = make_dataclass("Settings", [
    *((key, Any, field(default_factory=setting.value)) for key, (_, setting) in COLLECTOR_SETTINGS.items()),
    ("collectors", dict, field(default_factory=dict)),            # name -> on/off
    ("collector_intervals", dict, field(default_factory=dict)),   # seconds; see oracle_exporter.intervals
    ("custom_queries", tuple, ()),                                # oracle_exporter.custom.CustomQuery
], namespace={"enabled": _enabled, "__module__": __name__})


@dataclass
class DatabaseConfig:
    name: str
    dsn: str = ""
    user: str = ""
    password: str = field(default="", repr=False, compare=False)
    labels: dict[str, str] = field(default_factory=dict)
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    mode: str = "default"                 # LOGON_MODES
    config_dir: str | None = None         # tnsnames.ora for thin mode (thick: init_oracle_client's)
    wallet_location: str | None = None    # thin TCPS wallet directory (ewallet.pem)
    wallet_password: str | None = field(default=None, repr=False, compare=False)
    external_auth: bool = False           # thick: Secure External Password Store, no user/password
    # where the password comes from: the live source reads it again at every logon attempt (a
    # password rotated while the exporter runs is picked up; a refused one is not tried again)
    password_file: str | None = None
    password_env: str | None = None

    def __repr__(self) -> str:  # explicit, so a later field change cannot leak the password
        return (f"DatabaseConfig(name={self.name!r}, dsn={self.dsn!r}, user={self.user!r}, "
                f"password='***', labels={self.labels!r}, timeout_seconds={self.timeout_seconds!r}, "
                f"mode={self.mode!r}, external_auth={self.external_auth!r})")

    __str__ = __repr__


REFRESH_MAX_SECONDS = 600.0     # refresh_interval_seconds above this would serve data hours old as up


@dataclass
class Config:
    source: str
    databases: list[DatabaseConfig]
    settings: Settings = field(default_factory=Settings)
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    connect_timeout_seconds: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    min_interval_seconds: float = core.default("min_interval_seconds")
    refresh_interval_seconds: float = core.default("refresh_interval_seconds")
    reconnect_backoff_max_seconds: float = DEFAULT_BACKOFF_MAX_SECONDS
    locked_retry_seconds: float = DEFAULT_LOCKED_RETRY_SECONDS
    config_dir: str | None = None
    thick_mode: bool = False
    lib_dir: str | None = None            # thick mode: Oracle Client libraries (None: system search path)


def _labels(db: Fields) -> dict[str, str]:
    labels = db.str_map("labels")
    for key in labels:
        if not isinstance(key, str) or not _LABEL_RE.fullmatch(key) or key.startswith("__"):
            shown = key if isinstance(key, str) and key.isprintable() else repr(key)   # one line, always
            raise ConfigError(db.source, f"{db.path}.labels.{shown}",
                              "is not a valid Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)")
        if key in RESERVED_LABELS:
            raise ConfigError(db.source, f"{db.path}.labels.{key}",
                              "is a label the exporter sets itself; choose another name")
    return labels


def parse_settings(root: Fields, known_collectors: Iterable[str] | None = None) -> Settings:
    """The collector switches, intervals and every declared collector setting of the file."""
    coll = root.sub("collectors")
    known = sorted(known_collectors) if known_collectors is not None else None
    enabled: dict[str, bool] = {}
    for name in list(coll.data):
        if not isinstance(name, str):
            raise coll.error(str(name), "collector names are strings")
        if known is not None and name not in known:
            raise coll.error(name, f"unknown collector (known: {', '.join(known) or 'none'})")
        enabled[name] = coll.bool(name)
    coll.reject_unknown()
    ivs = root.sub("collector_intervals")
    intervals: dict[str, float] = {}
    for name in list(ivs.data):
        if not isinstance(name, str) or (known is not None and name not in known):
            raise ivs.error(str(name), f"unknown collector (known: {', '.join(known or []) or 'none'})")
        intervals[name] = float(ivs.number(name, minimum=0.0))
    ivs.reject_unknown()
    values = {key: setting.read(root) for key, (_, setting) in COLLECTOR_SETTINGS.items()}
    return Settings(collectors=enabled, collector_intervals=intervals, **values)


# user/password@connect-string: python-oracledb accepts it as a DSN, and the password then
# shows up wherever the DSN does (logs, recordings). "/@alias" (an external-auth wallet) holds none.
_DSN_CREDENTIALS = re.compile(r"^\s*[^/@()\s]*/[^@/\s]+@")


def _dsn(db: Fields) -> str:
    dsn = db.str("dsn", required=True)
    if _DSN_CREDENTIALS.match(dsn):   # never repeat the value: it holds a password
        raise db.error("dsn", "contains a user name and password (user/password@...): give the user in "
                              "user and the password in password_file or password_env")
    return dsn


def _looks_like_recording(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            first = fh.readline().lstrip()
    except OSError:
        return False
    return first.startswith("{") and '"database"' in first and '"views"' in first


def _directory(fields: Fields, key: str, what: str) -> str | None:
    """A directory path field (relative: to the config file): it must exist at start, so a
    typo is one line at start rather than a connect error on every scrape."""
    path = fields.file_path(key)
    if path is not None and not os.path.isdir(path):
        raise fields.error(key, f"{path}: no such directory ({what})")
    return path


def _thick_mode(root: Fields) -> tuple[bool, str | None]:
    value = root.data.get("thick_mode") if isinstance(root.data, dict) else None
    if value is None or isinstance(value, bool):
        return root.bool("thick_mode", False), None
    sub = root.sub("thick_mode")
    lib_dir = _directory(sub, "lib_dir", "the Oracle Client libraries")
    sub.reject_unknown()
    return True, lib_dir


def _external_auth(db: Fields, thick: bool) -> bool:
    external = db.bool("external_auth", False)
    if external and not thick:
        raise db.error("external_auth", "needs thick_mode: a Secure External Password Store wallet is read by the "
                                        "Oracle Client libraries only")
    if external:
        for key in ("user", "password_file", "password_env"):
            if key in db.data:
                raise db.error(key, "not with external_auth: the wallet holds the credentials")
    return external


def _logon_mode(db: Fields) -> str:
    mode = db.str("mode", "default").strip().lower()      # SYSDG as Oracle spells it is fine too
    if mode not in LOGON_MODES:
        raise db.error("mode", f"must be one of {', '.join(LOGON_MODES)}, got {mode!r}")
    return mode


def _wallet(db: Fields, thick: bool) -> tuple[str | None, str | None]:
    wallet = db.file_path("wallet_location")
    password = None
    if "wallet_password_file" in db.data or "wallet_password_env" in db.data:
        password = secret_from(db, "wallet_password_file", "wallet_password_env", "wallet password")
    if thick and (wallet or password):
        raise db.error("wallet_location" if wallet else "wallet_password_file",
                       "thin mode only: in thick mode the wallet is named in sqlnet.ora (WALLET_LOCATION) in config_dir")
    if password is not None and wallet is None:
        raise db.error("wallet_password_file" if "wallet_password_file" in db.data else "wallet_password_env",
                       "needs wallet_location")
    if wallet is not None:
        _check_pem_wallet(db, wallet, password)
    return wallet, password


def _check_pem_wallet(db: Fields, wallet: str, password: str | None) -> None:
    """Thin mode reads <wallet_location>/ewallet.pem at every connect. Checked at start: a
    missing file, and an encrypted private key without a password, which OpenSSL would
    otherwise answer by prompting "Enter PEM pass phrase:" on the exporter's terminal."""
    pem = os.path.join(wallet, "ewallet.pem")
    try:
        with open(pem, "rb") as f:
            head = f.read(1 << 20)
    except OSError as exc:
        raise db.error("wallet_location", f"{pem}: {exc.strerror or exc} (thin mode reads the PEM wallet "
                                          "ewallet.pem; convert a PKCS#12 wallet with orapki or openssl)") from None
    if b"-----BEGIN" not in head:
        raise db.error("wallet_location", f"{pem}: not a PEM file")
    if password is None and (b"ENCRYPTED PRIVATE KEY" in head or b"Proc-Type: 4,ENCRYPTED" in head):
        raise db.error("wallet_location", f"{pem} holds an encrypted private key: set wallet_password_file "
                                          "or wallet_password_env")


def load_config(path: str, known_collectors: Iterable[str] | None = None) -> Config:
    """Read and validate the YAML file; every problem is a ConfigError naming file and field,
    all problems of the file at once (ConfigErrors)."""
    try:
        root = Fields(path, "", load_yaml(path))
    except ConfigError:
        if _looks_like_recording(path):
            raise ConfigError(path, None, "this is a recording (JSON Lines), not a config file: "
                                          "serve it with --replay FILE") from None
        raise
    errs = ErrorList()
    # keys of parts that may fail before reaching them: known, not "unknown field"
    root.declare(*COLLECTOR_SETTINGS, *CONFIG_KEYS)
    exporter = {s.key: errs.value(lambda s=s: s.read(root), s.value()) for s in core.SPEC.settings}
    timeout, connect_timeout = exporter["timeout_seconds"], exporter["connect_timeout_seconds"]
    min_interval, backoff_max = exporter["min_interval_seconds"], exporter["reconnect_backoff_max_seconds"]
    refresh = exporter["refresh_interval_seconds"]
    if 0 < refresh < 1 or refresh > REFRESH_MAX_SECONDS:
        errs.errors.append(root.error("refresh_interval_seconds", f"is {refresh:g}: 0 (fetch on scrape) or 1 to "
                                                                  f"{REFRESH_MAX_SECONDS:g} seconds (slow views have "
                                                                  "collector_intervals)"))
    config_dir = errs.value(lambda: _directory(root, "config_dir", "tnsnames.ora / sqlnet.ora"))
    thick, lib_dir = errs.value(lambda: _thick_mode(root), (False, None))
    settings = errs.value(lambda: parse_settings(root, known_collectors), Settings())
    databases: list[DatabaseConfig] = []
    seen: dict[str, str] = {}
    entries = errs.value(lambda: root.list_of("databases", required=True), [])
    if not entries and "databases" in root.data and isinstance(root.data["databases"], list):
        errs.errors.append(root.error("databases", "needs at least one database"))
    for db in entries:
        if "password" in db.data:
            errs.errors.append(db.error("password", "passwords do not go in the config file: "
                                                    "use password_file or password_env"))
            db.declare("password")
        name = errs.value(lambda: db.str("name", required=True))
        if name is not None and any(c < " " or "\x7f" <= c <= "\x9f" for c in name):
            errs.errors.append(db.error("name", f"{name!r} contains a control character (a newline, a tab ...): "
                                                "it becomes the database label and is printed in log lines"))
        if name is not None and name in seen:
            errs.errors.append(db.error("name", f"duplicate database name {name!r} (also {seen[name]})"))
        elif name is not None:
            seen[name] = db.path
        dsn = errs.value(lambda: _dsn(db))
        external = errs.value(lambda: _external_auth(db, thick), False)
        password_file = password_env = None
        if external:
            user, password = "", ""
        else:
            user = errs.value(lambda: db.str("user", required=True))
            password = errs.value(lambda: secret_from(db, "password_file", "password_env", "password"))
            password_file = errs.value(lambda: db.file_path("password_file"))
            password_env = errs.value(lambda: db.str("password_env")) or None
        mode = errs.value(lambda: _logon_mode(db), "default")
        wallet, wallet_password = errs.value(lambda: _wallet(db, thick), (None, None))
        labels = errs.value(lambda: _labels(db), {})
        db_timeout = errs.value(lambda: float(db.number("timeout_seconds", timeout,
                                                         minimum=core.SPEC.setting("timeout_seconds").minimum)), timeout)
        db.declare("external_auth", "mode", "wallet_location", "wallet_password_file", "wallet_password_env")
        with errs.part():
            db.reject_unknown()
        databases.append(DatabaseConfig(name=name or "", dsn=dsn or "", user=user or "", password=password or "",
                                        labels=labels, timeout_seconds=db_timeout, mode=mode,
                                        config_dir=config_dir, wallet_location=wallet,
                                        wallet_password=wallet_password, external_auth=external,
                                        password_file=password_file, password_env=password_env))
    with errs.part():
        from .custom import parse_custom   # custom SQL metrics (and Oracle's exporter's metric files)
        settings.custom_queries = tuple(parse_custom(root, {k for d in databases for k in d.labels}))
    with errs.part():
        root.reject_unknown()
    errs.check()
    return Config(source=path, databases=databases, settings=settings, timeout_seconds=timeout,
                  connect_timeout_seconds=connect_timeout, min_interval_seconds=min_interval,
                  refresh_interval_seconds=refresh,
                  reconnect_backoff_max_seconds=backoff_max,
                  locked_retry_seconds=exporter["locked_retry_seconds"],
                  config_dir=config_dir, thick_mode=thick, lib_dir=lib_dir)
