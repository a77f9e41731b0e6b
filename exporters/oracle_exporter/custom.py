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
fieldtoappend column>`` with ``fieldtoappend``), so dashboards keep working; a counter keeps
its name (no ``_total`` appended: collectors.custom_sql.ExactName). Keys match in any case,
unknown keys and a metricstype of a column metricsdesc does not describe are ignored with a
warning, a missing context is empty, an empty file defines no metric (a warning), as in
Oracle's parser. A later file's definition with the same context and metricsdesc columns
replaces an earlier one (Oracle's override rule). Differences, on purpose: a NULL value is
skipped, not exported as 0; an unknown metric type is an error at start, not a silent gauge;
two definitions of one id in one file are an error (Oracle silently keeps the last).

Everything is checked at start (``check``, one linear pass): every printed metric and label
name against Prometheus' grammar (fullmatch), no name printed twice nor one of the exporter's
own; one line naming file and field, exit status 2 (ConfigError).
At run time a custom statement that fails, times out or returns a value that is not a number
costs only its own samples: ``oracle_custom_query_success{query}`` is 0 for it (and the
collector ``custom`` itself stays successful).
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from exporter_common.config import MAX_NESTING, MAX_NUMBER, ConfigError, Fields, _short, load_yaml, resolve_path

log = logging.getLogger(__name__)

KEY_PREFIX = "CUSTOM:"
NAMESPACE = "oracledb"
TYPES = ("gauge", "counter", "histogram")
SCOPES = ("any", "cdb_root", "pdb")
# Prometheus' name grammar, always applied with fullmatch: with match() and "$", a name ending
# in a newline passes, and one such name makes the whole /metrics unparsable.
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
STATEMENT_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# Go's time.ParseDuration: ASCII digits, units ns us µs (micro sign U+00B5) μs (Greek mu U+03BC) ms s m h
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def valid_metric_name(name: Any) -> bool:
    """Prometheus' metric name grammar ``[a-zA-Z_:][a-zA-Z0-9_:]*``, the whole string."""
    return isinstance(name, str) and METRIC_NAME.fullmatch(name) is not None


def valid_label_name(name: Any) -> bool:
    """Prometheus' label name grammar ``[a-zA-Z_][a-zA-Z0-9_]*``, the whole string, no ``__`` prefix
    (reserved for Prometheus' own labels)."""
    return isinstance(name, str) and LABEL_NAME.fullmatch(name) is not None and not name.startswith("__")


@dataclass(frozen=True)
class Field:
    column: str                              # lower-case column of the row
    name: str | None                         # metric name; None: built per row (fieldtoappend)
    help: str
    type: str = "gauge"
    buckets: tuple[tuple[str, float], ...] = ()   # histogram: (bucket column, le)
    exact: bool = False                      # Oracle's files: a counter keeps its name (no _total added)

    def sample_name(self, name: str) -> str:
        """The sample name printed for metric ``name`` of this field: a counter of our own
        config gets ``_total`` when its name lacks it; Oracle's files keep Oracle's name."""
        if self.type == "counter" and not self.exact and not name.endswith("_total"):
            return name + "_total"
        return name

    def printed(self, name: str) -> tuple[str, ...]:
        """Every name of metric ``name`` that the exposition prints or that the exporter keys a
        family on (# TYPE name, sample names): two fields sharing one of them collide."""
        if self.type == "histogram":
            return (name, name + "_bucket", name + "_count", name + "_sum")
        sample = self.sample_name(name)
        if self.type == "counter" and sample.endswith("_total"):
            return (sample, sample[:-len("_total")])
        return (sample,)


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
    oracle_id: str | None = None             # Oracle's metric id (context_col1_col2): the override key

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
    if s.startswith("+"):                      # Go accepts a leading plus sign
        s = s[1:]
    if not s:
        raise ValueError(f"{_short(text)} is not a duration like 300ms, 10s, 5m or 1h30m")
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
    """One line, even where a key of the file holds a line break."""
    return ConfigError(path, where.replace("\r", "\\r").replace("\n", "\\n"), message)


def _as_str_map(path: str, where: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _error(path, where, "must be a table of column = value")
    out: dict[str, Any] = {}
    for k, v in value.items():
        key = str(k).lower()                   # Oracle lower-cases the columns (normalizeIdentifiers)
        if key in out:
            raise _error(path, f"{where}.{k}", f"names column {key!r} twice (columns are case-insensitive)")
        out[key] = v
    return out


# Keys of one metric in Oracle's format (oracle-db-appdev-monitoring's Metric struct; iamseth's
# oracledb_exporter has the same keys but querytimeout, scrapeinterval and databases). TOML keys
# match case-insensitively there (BurntSushi/toml), so metricsDesc is metricsdesc.
ORACLE_KEYS = ("context", "labels", "metricsdesc", "metricstype", "metricsbuckets", "fieldtoappend", "request",
               "ignorezeroresult", "querytimeout", "scrapeinterval", "databases")


def _oracle_keys(path: str, where: str, m: dict, ignored: dict[str, str]) -> dict[str, Any]:
    """The metric's keys lower-cased; a key Oracle's exporter does not know is ignored as there
    (noted in ``ignored``: key -> first place, for one warning per file)."""
    out: dict[str, Any] = {}
    for k, v in m.items():
        key = str(k).lower()
        if key not in ORACLE_KEYS:
            ignored.setdefault(str(k), where)
            continue
        if key in out:
            raise _error(path, f"{where}.{k}", f"key {key!r} given twice (keys are case-insensitive)")
        out[key] = v
    return out


def _metric_from_oracle(path: str, index: int, m: Any, ignored: dict[str, str] | None = None) -> CustomQuery:
    where = f"metric[{index}]"
    if not isinstance(m, dict):
        raise _error(path, where, "must be a table")
    notes = ignored if ignored is not None else {}
    m = _oracle_keys(path, where, m, notes)
    context = m.get("context")
    if context is None:
        context = ""                                    # Oracle: an empty context, oracledb_<column>
    if not isinstance(context, str):
        raise _error(path, f"{where}.context", "must be a string (may be empty)")
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
        if column not in desc:      # Oracle reads metricstype only for metricsdesc's columns
            what = "a label column" if column in labels else "a column that metricsdesc does not describe"
            notes.setdefault(f"metricstype.{column} ({what})", where)
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
        if name is not None and not valid_metric_name(name):
            raise _error(path, f"{where}.metricsdesc.{column}",
                         f"makes the metric name {_short(name)}, not a valid one ([a-zA-Z_:][a-zA-Z0-9_:]*)")
        if name is None and not valid_metric_name(prefix + "_x"):
            raise _error(path, f"{where}.context", f"makes the metric names {_short(prefix)}_..., not valid ones")
        help_text = desc[column]
        if not isinstance(help_text, str):
            raise _error(path, f"{where}.metricsdesc.{column}", "the help text must be a string")
        fields.append(Field(column, name, help_text, kind, bucket_spec, exact=True))
    for label in labels:
        if not valid_label_name(label):
            raise _error(path, f"{where}.labels", f"{_short(label)} is not a valid Prometheus label name "
                                                  "([a-zA-Z_][a-zA-Z0-9_]*, no leading __)")
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
    return CustomQuery(name=statement_name(context, desc), sql=request.strip(),
                       labels=tuple(labels), fields=tuple(fields), field_to_append=append, prefix=prefix,
                       ignore_zero_result=ignore, timeout=timeout or None, interval=interval,
                       databases=tuple(dbs) if dbs is not None else None, source=f"{path}: {where}",
                       oracle_id="_".join([context, *sorted(desc)]))


def statement_name(context: str, columns: Iterable[str]) -> str:
    """Our statement name of an Oracle metric: Oracle's metric id (context and the sorted
    metricsdesc columns joined by '_'), with anything but [A-Za-z0-9_.-] made '_'."""
    ident = "_".join([context, *sorted(columns)])
    return re.sub(r"[^A-Za-z0-9_.-]", "_", ident) or "metric"


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


def _top_level(path: str, data: Any, key: str) -> list:
    """The list of metrics under ``key`` (case-insensitive, as Oracle's TOML decoder matches it);
    other top-level keys are ignored with a warning, as Oracle's exporter ignores them."""
    if data is None:
        return []
    if not isinstance(data, dict):
        raise ConfigError(path, None, f"a metric file holds {'[[metric]] tables' if key == 'metric' else 'metrics:'}")
    items: Any = None
    other = []
    for k, v in data.items():
        if str(k).lower() == key and items is None:
            items = v
        else:
            other.append(str(k))
    if other:
        log.warning("%s: top-level key(s) %s ignored (a metric file holds %s; Oracle's exporter ignores them too)",
                    path, ", ".join(sorted(other)[:5]), "[[metric]] tables" if key == "metric" else "a metrics: list")
    if items is None:
        return []
    if not isinstance(items, list):
        raise ConfigError(path, key, "must be [[metric]] tables" if key == "metric" else "must be a list of metrics")
    return items


def load_oracle_file(path: str) -> list[CustomQuery]:
    """The metrics of one Oracle exporter metric file (.toml, or .yaml/.yml with ``metrics:``),
    accepting what Oracle's parser accepts: keys in any case, unknown keys and a metricstype
    of a column metricsdesc does not describe (ignored, one warning per file), a missing
    context (empty), an empty file (no metrics, a warning). Two metrics of one id (context
    and metricsdesc columns) in one file are an error: Oracle's exporter silently keeps the
    last one."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(path, None, f"cannot read: {exc.strerror or exc}") from None
    if path.endswith((".yaml", ".yml")):
        items = _top_level(path, load_yaml(path), "metrics")
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
        items = _top_level(path, data, "metric")
    ignored: dict[str, str] = {}
    out = [_metric_from_oracle(path, i, m, ignored) for i, m in enumerate(items)]
    if ignored:
        shown = ", ".join(f"{k} ({w})" for k, w in list(ignored.items())[:5])
        more = f" and {len(ignored) - 5} more" if len(ignored) > 5 else ""
        log.warning("%s: ignored, as Oracle's exporter ignores them: %s%s", path, shown, more)
    if not out:
        log.warning("%s: defines no metric (an empty metric file): nothing to run from it", path)
    seen: dict[str, CustomQuery] = {}
    for q in out:
        have = seen.get(q.oracle_id or q.name)
        if have is not None:
            raise ConfigError(path, q.source.rsplit(": ", 1)[-1],
                              f"has the metric id {_short(q.oracle_id)} of {have.source.rsplit(': ', 1)[-1]} "
                              "(context and metricsdesc columns joined by '_'): Oracle's exporter would "
                              "silently drop the first")
        seen[q.oracle_id or q.name] = q
    return out


# --------------------------------------------------------------------------- our YAML

def _query_from_config(entry: Fields) -> CustomQuery:
    name = entry.str("name", required=True)
    if not STATEMENT_NAME.fullmatch(name):
        raise entry.error("name", "use letters, digits, '_', '.', '-' only")
    sql = entry.str("sql", required=True)
    if not sql.strip():
        raise entry.error("sql", "must not be empty")
    labels = [x.lower() for x in entry.str_list("labels", [])]
    for label in labels:
        if not valid_label_name(label):
            raise entry.error("labels", f"{_short(label)} is not a valid Prometheus label name "
                                        "([a-zA-Z_][a-zA-Z0-9_]*, no leading __)")
    fields = []
    for m in entry.list_of("metrics", required=True):
        column = m.str("column", required=True).lower()
        metric = m.str("name", required=True)
        if not valid_metric_name(metric):
            raise m.error("name", f"{_short(metric)} is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)")
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

    Raises ConfigError for a bad definition, an unreadable or malformed file, a name the
    exposition cannot print, a metric name used twice (by two statements, or by the exporter
    itself), a label the exporter sets itself (database or a configured extra label), or two
    statements of one name. A later file's metric with the same context and metricsdesc
    columns as an earlier file's replaces it (Oracle's override rule)."""
    queries: list[CustomQuery] = [_query_from_config(e) for e in root.list_of("custom_metrics")]
    by_id: dict[str, CustomQuery] = {}
    for i, path in enumerate(root.str_list("custom_metric_files", [])):
        resolved = resolve_path(root.source, path)         # relative to the config file
        for q in load_oracle_file(resolved):
            key = q.oracle_id if q.oracle_id is not None else q.name
            have = by_id.get(key)
            if have is not None and (have.prefix, [f.column for f in have.fields]) != \
                    (q.prefix, [f.column for f in q.fields]):
                raise ConfigError(q.source, None, f"metric id {_short(key)} is also that of {have.source}, a "
                                                  "metric of another context (context and columns joined by '_'): "
                                                  "Oracle's exporter would silently drop the first; rename one")
            if have is not None:
                log.info("%s replaces %s (same context and metricsdesc columns: Oracle's override rule)",
                         q.source, by_id[key].source)
            by_id[key] = q                                  # a later definition overrides (Oracle's rule)
    queries += list(by_id.values())
    check(queries, extra_labels)
    return queries


def exporter_names() -> dict[str, str]:
    """Every name oracle-exporter prints itself, from the declarations (the collectors' SPECs,
    the exporter's own and the process metrics): name -> which collector declares it."""
    from exporter_common.process import SPEC as PROCESS
    from .collectors import SPECS
    from .core import SPEC as CORE
    out: dict[str, str] = {}
    for spec in (*SPECS, CORE, PROCESS):
        for fam in spec.metrics:
            for name in (fam.name, fam.family_name, *fam.series):
                out.setdefault(name, spec.name)
    return out


def _disjoint(a: CustomQuery, b: CustomQuery) -> bool:
    """Two statements that never run on one database (explicit, disjoint database lists)."""
    return a.databases is not None and b.databases is not None and not set(a.databases) & set(b.databases)


def check(queries: list[CustomQuery], extra_labels: Iterable[str] = (),
          reserved_names: dict[str, str] | None = None) -> None:
    """Every name the statements will print, checked before start, in one pass (linear in the
    number of definitions): metric and label names against Prometheus' grammar, statement names
    unique (case-insensitive: the recording key is upper case), each printed metric name
    owned by one statement (two statements of one name would print duplicate series; allowed
    only for statements whose database lists are disjoint, with the same type and labels) and
    none of the exporter's own names."""
    own_names = exporter_names() if reserved_names is None else reserved_names
    reserved = {"database", *extra_labels}
    statements: dict[str, CustomQuery] = {}
    printed: dict[str, tuple[CustomQuery, Field, str]] = {}      # printed name -> owner
    for q in queries:
        upper = q.name.upper()
        have_q = statements.get(upper)
        if have_q is not None:
            raise ConfigError(q.source, "name", f"a second custom statement named {q.name!r} "
                                                f"(also {have_q.source}; names are case-insensitive)")
        statements[upper] = q
        own = tuple(x for x in q.labels if x != q.field_to_append)
        for label in own:
            if not valid_label_name(label):
                raise ConfigError(q.source, "labels", f"{_short(label)} is not a valid Prometheus label name")
        clash = sorted(set(own) & reserved)
        if clash:
            raise ConfigError(q.source, "labels", f"label {clash[0]!r} is set by the exporter itself")
        if len(set(own)) != len(own):
            raise ConfigError(q.source, "labels", "a label is listed twice")
        for f in q.fields:
            if f.name is None:
                continue
            if not valid_metric_name(f.name):
                raise ConfigError(q.source, "metrics", f"{_short(f.name)} is not a valid Prometheus metric name")
            if f.type == "histogram" and "le" in own:
                raise ConfigError(q.source, "labels", f"label 'le' on histogram {f.name!r}: Prometheus sets it")
            for name in f.printed(f.name):
                if name in own_names:
                    raise ConfigError(q.source, "metrics", f"metric {name!r} is the exporter's own "
                                                           f"(collector {own_names[name]}): choose another name")
                have = printed.get(name)
                if have is None:
                    printed[name] = (q, f, f.name)
                    continue
                other_q, other_f, other_name = have
                if other_q is q and other_f is f:
                    continue
                same = (other_name == f.name and other_f.type == f.type and other_f.exact == f.exact
                        and tuple(x for x in other_q.labels if x != other_q.field_to_append) == own)
                if other_q is not q and _disjoint(q, other_q) and same:
                    continue
                if other_name == f.name and not same:
                    why = "with another type or other labels"
                elif other_name == f.name:
                    why = "on the same databases: every series would be printed twice"
                else:
                    why = f"(its metric {other_name!r} prints {name!r} too)"
                raise ConfigError(q.source, "metrics", f"metric {f.name!r} is also defined by {other_q.source} {why}")


# --------------------------------------------------------------------------- collecting

def number(value: Any) -> float | None:
    """A value as a float; None for NULL; raises ValueError for anything that is not a number."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, (int, float)):
        out = _float(value)
    else:
        out = float(str(value).strip())            # ValueError for 'abc'
    if math.isnan(out):
        raise ValueError("NaN")
    return out


def _float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:                          # an integer beyond a float (400 digits)
        raise ValueError("too large for a float") from None


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
                if not suffix or not valid_metric_name(name):
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
            res.samples.append((f.sample_name(name), f.type, f.help, labels, value))
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
