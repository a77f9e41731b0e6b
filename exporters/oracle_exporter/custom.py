"""Custom metrics from SQL: the config's own ``custom_metrics`` and, read unchanged, the
metric files (TOML or YAML) of Oracle's exporter (oracle-db-appdev-monitoring).

Config (YAML)::

    custom_metrics:
      - name: app_orders                 # the statement's name: recording key CUSTOM:APP_ORDERS
        sql: SELECT status, COUNT(*) AS n, SUM(amount) AS amount FROM app.orders GROUP BY status
        labels: [status]                 # columns that become labels (lower case)
        metrics:                         # columns that become metrics
          - {column: n, name: app_orders, type: gauge, help: Orders by status.}
          - {column: amount, name: app_order_amount, help: Order amount by status.}
        interval_seconds: 60             # run at most this often, cached in between (default: every scrape)
        timeout_seconds: 5               # call timeout of this statement (default: the database's)
        scope: any                       # any | cdb_root | pdb: where the statement runs
        databases: [prod1]               # only these databases (default: all)
    custom_metric_files:                 # Oracle exporter metric files, read as they are
      - /etc/oracle-exporter/default-metrics.toml

Oracle's file format (``[[metric]]`` tables, or a YAML ``metrics:`` list with the same keys):
``context``, ``labels``, ``metricsdesc`` ({column: help}), ``metricstype`` ({column:
gauge|counter|histogram}), ``metricsbuckets`` ({column: {bucket column: le}}),
``fieldtoappend``, ``request``, ``ignorezeroresult``, ``querytimeout`` and ``scrapeinterval``
(Go durations: 300ms, 10s, 5m, 1h30m), ``databases``. Metric names are built as Oracle's
exporter builds them: ``oracledb_<context>_<column>`` (``oracledb_<context>_<value of the
fieldtoappend column>`` with ``fieldtoappend``), so dashboards keep working. A later
definition with the same context and metricsdesc columns replaces an earlier one (Oracle's
override rule). Differences, on purpose: a NULL value is skipped, not exported as 0; a
counter's sample gets the ``_total`` suffix when its name lacks it (Prometheus text format);
an unknown metric type is an error at start, not a silent gauge.

Everything is checked at start: one line naming file and field, exit status 2 (ConfigError).
At run time a custom statement that fails, times out or returns a value that is not a number
costs only its own samples: ``oracle_custom_query_success{query}`` is 0 for it (and the
collector ``custom`` itself stays successful).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from exporter_common.config import MAX_NESTING, MAX_NUMBER, ConfigError, Fields, _short, load_yaml, resolve_path

KEY_PREFIX = "CUSTOM:"
NAMESPACE = "oracledb"
TYPES = ("gauge", "counter", "histogram")
SCOPES = ("any", "cdb_root", "pdb")
METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
STATEMENT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class Field:
    column: str                              # lower-case column of the row
    name: str | None                         # metric name; None: built per row (fieldtoappend)
    help: str
    type: str = "gauge"
    buckets: tuple[tuple[str, float], ...] = ()   # histogram: (bucket column, le)


@dataclass(frozen=True)
class CustomQuery:
    name: str                                # statement name (YAML name, or Oracle metric id)
    sql: str
    labels: tuple[str, ...] = ()
    fields: tuple[Field, ...] = ()
    field_to_append: str | None = None
    prefix: str = ""                         # oracledb_<context> (fieldtoappend names)
    ignore_zero_result: bool = False
    timeout: float | None = None
    interval: float = 0.0
    scope: str = "any"
    databases: tuple[str, ...] | None = None
    source: str = ""                         # "file: field" for messages

    @property
    def key(self) -> str:
        """The snapshot / recording key of the rows of this statement."""
        return KEY_PREFIX + self.name.upper()

    def runs_on(self, database: str) -> bool:
        return self.databases is None or database in self.databases


def parse_duration(text: Any) -> float:
    """Seconds of a Go duration string ("300ms", "10s", "1h30m", "0.5h"); ValueError if malformed."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text < 0:
            raise ValueError("must not be negative")
        if not text <= MAX_NUMBER:            # also NaN and a 400-digit integer
            raise ValueError(f"must be at most {MAX_NUMBER:.0e} seconds")
        return float(text)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("is not a duration")
    s = text.strip()
    if s == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s):
        raise ValueError(f"{_short(text)} is not a duration like 300ms, 10s, 5m or 1h30m")
    if not total <= MAX_NUMBER:
        raise ValueError(f"{_short(text)} is longer than {MAX_NUMBER:.0e} seconds")
    return total


def clean_name(value: str) -> str:
    """Oracle's exporter's name cleaning of a fieldtoappend value."""
    for ch in ("(", ")", "/", "*"):
        value = value.replace(ch, "")
    return value.replace(" ", "_").lower()


def fq_name(*parts: str) -> str:
    """prometheus.BuildFQName: the non-empty parts joined by '_'."""
    return "_".join(p for p in parts if p)


# --------------------------------------------------------------------------- Oracle's files

def _error(path: str, where: str, message: str) -> ConfigError:
    return ConfigError(path, where, message)


def _as_str_map(path: str, where: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _error(path, where, "must be a table of column = value")
    return {str(k).lower(): v for k, v in value.items()}


def _metric_from_oracle(path: str, index: int, m: Any) -> CustomQuery:
    where = f"metric[{index}]"
    if not isinstance(m, dict):
        raise _error(path, where, "must be a table")
    known = {"context", "labels", "metricsdesc", "metricstype", "metricsbuckets", "fieldtoappend", "request",
             "ignorezeroresult", "querytimeout", "scrapeinterval", "databases"}
    unknown = sorted(set(m) - known)
    if unknown:
        raise _error(path, f"{where}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(known))})")
    context = m.get("context")
    if not isinstance(context, str):
        raise _error(path, f"{where}.context", "is required (a string, may be empty)")
    request = m.get("request")
    if not isinstance(request, str) or not request.strip():
        raise _error(path, f"{where}.request", "is required: the SQL statement")
    desc = _as_str_map(path, f"{where}.metricsdesc", m.get("metricsdesc"))
    if not desc:
        raise _error(path, f"{where}.metricsdesc", "is required: {column = \"help\"} for at least one column")
    types = _as_str_map(path, f"{where}.metricstype", m.get("metricstype"))
    buckets = _as_str_map(path, f"{where}.metricsbuckets", m.get("metricsbuckets"))
    labels = m.get("labels") or []
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise _error(path, f"{where}.labels", "must be a list of column names")
    labels = [x.lower() for x in labels]
    append = m.get("fieldtoappend") or None
    if append is not None and not isinstance(append, str):
        raise _error(path, f"{where}.fieldtoappend", "must be a column name")
    append = append.lower() if append else None
    for column in types:
        if column not in desc:
            raise _error(path, f"{where}.metricstype.{column}", "names a column that metricsdesc does not describe")
    fields = []
    prefix = fq_name(NAMESPACE, context)
    for column in sorted(desc):
        kind = str(types.get(column, "gauge")).lower()
        if kind not in TYPES:
            raise _error(path, f"{where}.metricstype.{column}", f"unknown type {kind!r} (gauge, counter, histogram)")
        bucket_spec: tuple[tuple[str, float], ...] = ()
        if kind == "histogram":
            spec = _as_str_map(path, f"{where}.metricsbuckets.{column}", buckets.get(column))
            if not spec:
                raise _error(path, f"{where}.metricsbuckets.{column}", "a histogram needs its bucket columns")
            try:
                bucket_spec = tuple(sorted(((c, float(str(le).strip())) for c, le in spec.items()),
                                           key=lambda b: b[1]))
            except ValueError:
                raise _error(path, f"{where}.metricsbuckets.{column}", "bucket bounds must be numbers") from None
            if not all(abs(le) <= MAX_NUMBER for _, le in bucket_spec):   # also inf, NaN, 400 digits
                raise _error(path, f"{where}.metricsbuckets.{column}",
                             f"bucket bounds must be finite numbers of at most {MAX_NUMBER:.0e}")
        name = None if append else fq_name(prefix, column)
        if name is not None and not METRIC_NAME.match(name):
            raise _error(path, f"{where}.metricsdesc.{column}", f"makes the metric name {name!r}, not a valid one")
        help_text = desc[column]
        if not isinstance(help_text, str):
            raise _error(path, f"{where}.metricsdesc.{column}", "the help text must be a string")
        fields.append(Field(column, name, help_text, kind, bucket_spec))
    for label in labels:
        if not LABEL_NAME.match(label) or label.startswith("__"):
            raise _error(path, f"{where}.labels", f"{label!r} is not a valid Prometheus label name")
    ignore = m.get("ignorezeroresult", False)
    if not isinstance(ignore, bool):
        raise _error(path, f"{where}.ignorezeroresult", "must be true or false")
    try:
        timeout = parse_duration(m["querytimeout"]) if m.get("querytimeout") else None
    except ValueError as exc:
        raise _error(path, f"{where}.querytimeout", str(exc)) from None
    try:
        interval = parse_duration(m["scrapeinterval"]) if m.get("scrapeinterval") else 0.0
    except ValueError as exc:
        raise _error(path, f"{where}.scrapeinterval", str(exc)) from None
    dbs = m.get("databases")
    if dbs is not None and (not isinstance(dbs, list) or not all(isinstance(x, str) for x in dbs)):
        raise _error(path, f"{where}.databases", "must be a list of database names")
    ident = "_".join([context, *sorted(desc)])          # Oracle's metric id: context and columns
    return CustomQuery(name=re.sub(r"[^A-Za-z0-9_.-]", "_", ident) or "metric", sql=request.strip(),
                       labels=tuple(labels), fields=tuple(fields), field_to_append=append, prefix=prefix,
                       ignore_zero_result=ignore, timeout=timeout or None, interval=interval,
                       databases=tuple(dbs) if dbs is not None else None, source=f"{path}: {where}")


_TOML_AT = re.compile(r"^(.*) \(at line (\d+), column (\d+)\)$")


def toml_error_message(text: str, exc: Exception) -> str:
    """One line for a tomllib error. A key or table given twice ("Cannot overwrite a value",
    "Cannot declare ... twice") names the key and its line, like the YAML loader."""
    msg = str(exc)
    m = _TOML_AT.match(msg)
    if not m:
        return f"not a valid TOML file: {msg}"
    problem, line_no = m.group(1), int(m.group(2))
    inline = re.match(r"^Duplicate inline table key (.+)$", problem)
    if inline:
        return f"line {line_no}: duplicate key {inline.group(1)} (TOML allows each key and table once)"
    if problem.startswith("Cannot overwrite a value") or (problem.startswith("Cannot declare") and "twice" in problem):
        lines = text.splitlines()
        src = lines[line_no - 1].strip() if 0 < line_no <= len(lines) else ""
        header = re.match(r"^\[\[?\s*([^\]]+?)\s*\]\]?", src)
        key = header.group(1) if header else src.split("=", 1)[0].strip()
        return f"line {line_no}: duplicate key {_short(key)} (TOML allows each key and table once)"
    return f"not a valid TOML file: {problem} (line {line_no}, column {m.group(3)})"


def _depth(value: Any) -> int:
    """Nesting depth of parsed TOML (iterative: a deep value must not recurse here)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return deepest


def load_oracle_file(path: str) -> list[CustomQuery]:
    """The metrics of one Oracle exporter metric file (.toml, or .yaml/.yml with ``metrics:``)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(path, None, f"cannot read: {exc.strerror or exc}") from None
    if path.endswith((".yaml", ".yml")):
        data = load_yaml(path)
        items = data.get("metrics") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ConfigError(path, "metrics", "a YAML metric file needs a list under 'metrics'")
    else:
        import tomllib
        try:
            text = raw.decode("utf-8")
            data = tomllib.loads(text)
        except UnicodeDecodeError as exc:
            raise ConfigError(path, None, f"not UTF-8 text ({exc.reason})") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(path, None, toml_error_message(text, exc)) from None
        except RecursionError:
            raise ConfigError(path, None, "not a valid TOML file: nested too deeply") from None
        depth = _depth(data)
        if depth > MAX_NESTING:
            raise ConfigError(path, None, f"not a valid TOML file: nested deeper than {MAX_NESTING} levels")
        items = data.get("metric", [])
        unknown = sorted(set(data) - {"metric"})
        if unknown:
            raise ConfigError(path, unknown[0], "unknown top-level key (metric files hold [[metric]] tables)")
        if not isinstance(items, list):
            raise ConfigError(path, "metric", "must be [[metric]] tables")
    out = [_metric_from_oracle(path, i, m) for i, m in enumerate(items)]
    if not out:
        raise ConfigError(path, None, "defines no metric")
    return out


# --------------------------------------------------------------------------- our YAML

def _query_from_config(entry: Fields) -> CustomQuery:
    name = entry.str("name", required=True)
    if not STATEMENT_NAME.match(name):
        raise entry.error("name", "use letters, digits, '_', '.', '-' only")
    sql = entry.str("sql", required=True)
    if not sql.strip():
        raise entry.error("sql", "must not be empty")
    labels = [x.lower() for x in entry.str_list("labels", [])]
    for label in labels:
        if not LABEL_NAME.match(label) or label.startswith("__"):
            raise entry.error("labels", f"{label!r} is not a valid Prometheus label name")
    fields = []
    for m in entry.list_of("metrics", required=True):
        column = m.str("column", required=True).lower()
        metric = m.str("name", required=True)
        if not METRIC_NAME.match(metric):
            raise m.error("name", f"{metric!r} is not a valid Prometheus metric name")
        kind = m.str("type", "gauge")
        if kind not in ("gauge", "counter"):
            raise m.error("type", "must be gauge or counter")
        help_text = m.str("help", f"Custom metric {metric} (column {column} of {name}).")
        if column in labels:
            raise m.error("column", "is also a label column")
        m.reject_unknown()
        fields.append(Field(column, metric, help_text, kind))
    if not fields:
        raise entry.error("metrics", "needs at least one metric")
    interval = float(entry.number("interval_seconds", 0.0, minimum=0.0))
    timeout = entry.number("timeout_seconds", None, minimum=0.1)
    scope = entry.str("scope", "any")
    if scope not in SCOPES:
        raise entry.error("scope", f"must be one of {', '.join(SCOPES)}")
    dbs = entry.str_list("databases", None) if "databases" in entry.data else None
    entry.reject_unknown()
    return CustomQuery(name=name, sql=sql.strip().rstrip(";"), labels=tuple(labels), fields=tuple(fields),
                       interval=interval, timeout=float(timeout) if timeout is not None else None, scope=scope,
                       databases=tuple(dbs) if dbs is not None else None, source=f"{entry.source}: {entry.path}")


def parse_custom(root: Fields, extra_labels: Iterable[str] = ()) -> list[CustomQuery]:
    """``custom_metrics`` and ``custom_metric_files`` of the config: every statement, validated.

    Raises ConfigError for a bad definition, an unreadable or malformed file, two metrics of
    one name with different types or labels, a label the exporter sets itself (database or
    a configured extra label), or two statements of one name."""
    queries: list[CustomQuery] = [_query_from_config(e) for e in root.list_of("custom_metrics")]
    by_id: dict[str, CustomQuery] = {}
    for i, path in enumerate(root.str_list("custom_metric_files", [])):
        resolved = resolve_path(root.source, path)         # relative to the config file
        for q in load_oracle_file(resolved):
            by_id[q.name] = q                               # a later definition overrides (Oracle's rule)
    queries += list(by_id.values())
    check(queries, extra_labels)
    return queries


def check(queries: list[CustomQuery], extra_labels: Iterable[str] = ()) -> None:
    reserved = {"database", *extra_labels}
    names: dict[str, CustomQuery] = {}
    metrics: dict[str, tuple[str, tuple[str, ...], str]] = {}
    for q in queries:
        if q.name.upper() in (n.upper() for n in names):
            raise ConfigError(q.source, "name", f"a second custom statement named {q.name!r}")
        names[q.name] = q
        own = tuple(x for x in q.labels if x != q.field_to_append)
        clash = sorted(set(own) & reserved)
        if clash:
            raise ConfigError(q.source, "labels", f"label {clash[0]!r} is set by the exporter itself")
        if len(set(own)) != len(own):
            raise ConfigError(q.source, "labels", "a label is listed twice")
        for f in q.fields:
            if f.name is None:
                continue
            have = metrics.get(f.name)
            if have is not None and have[:2] != (f.type, own):
                raise ConfigError(q.source, "metrics", f"metric {f.name!r} is also defined by {have[2]} with "
                                                       "another type or other labels")
            metrics[f.name] = (f.type, own, q.source)


# --------------------------------------------------------------------------- collecting

def number(value: Any) -> float | None:
    """A value as a float; None for NULL; raises ValueError for anything that is not a number."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, (int, float)):
        out = float(value)
    else:
        out = float(str(value).strip())            # ValueError for 'abc'
    if math.isnan(out):
        raise ValueError("NaN")
    return out


@dataclass
class Result:
    """Samples of one statement on one snapshot, and what went wrong (None: nothing)."""
    samples: list[tuple[str, str, str, dict[str, str], float]] = field(default_factory=list)  # name, type, help
    error: str | None = None


def evaluate(q: CustomQuery, rows: list[dict[str, Any]] | None, failure: str | None) -> Result:
    """The samples of a statement from its rows (keys in any case); ``failure`` is the error
    text of a statement that failed (then rows are ignored)."""
    res = Result()
    if failure is not None:
        res.error = failure
        return res
    rows = rows or []
    if not rows:
        if not q.ignore_zero_result:
            res.error = "no rows"
        return res
    bad: list[str] = []
    seen: set[tuple[str, tuple]] = set()
    for raw in rows:
        row = {str(k).lower(): v for k, v in raw.items()}
        labels = {x: _label(row.get(x)) for x in q.labels if x != q.field_to_append}
        for f in q.fields:
            if f.name is not None:
                name = f.name
            else:
                suffix = clean_name(_label(row.get(q.field_to_append)))
                name = fq_name(q.prefix, suffix)
                if not suffix or not METRIC_NAME.match(name):
                    bad.append(f"{q.field_to_append}={row.get(q.field_to_append)!r} makes no metric name")
                    continue
            try:
                value = number(row.get(f.column))
            except (TypeError, ValueError):
                bad.append(f"{f.column}={row.get(f.column)!r} is not a number")
                continue
            if value is None:
                continue
            key = (name, tuple(sorted(labels.items())))
            if key in seen:
                bad.append(f"{name}{dict(labels)} returned twice")
                continue
            seen.add(key)
            if f.type == "histogram":
                try:
                    count = number(row.get("count"))
                    buckets = [(le, number(row.get(col))) for col, le in f.buckets]
                except (TypeError, ValueError):
                    bad.append(f"{name}: count or a bucket column is not a number")
                    continue
                if count is None or any(v is None for _, v in buckets):
                    bad.append(f"{name}: count or a bucket column is NULL")
                    continue
                for le, v in buckets:
                    res.samples.append((name + "_bucket", "histogram", f.help,
                                        {**labels, "le": _le(le)}, v))
                res.samples.append((name + "_bucket", "histogram", f.help, {**labels, "le": "+Inf"}, count))
                res.samples.append((name + "_count", "histogram", f.help, dict(labels), count))
                res.samples.append((name + "_sum", "histogram", f.help, dict(labels), value))
                continue
            res.samples.append((name, f.type, f.help, labels, value))
    if bad:
        res.error = "; ".join(bad[:3]) + (f" (and {len(bad) - 3} more)" if len(bad) > 3 else "")
    return res


def _label(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _le(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else repr(float(bound))
