"""Custom metrics from SQL (collector ``custom``): the statements of ``custom_metrics`` and of
Oracle's exporter's metric files (oracle_exporter.custom), one snapshot key each
(``CUSTOM:<NAME>``, rows as returned), so they are recorded and replayed like the views.

* the metrics the statements define (names, labels and types from the definition);
* ``oracle_custom_query_success{query}``: 1 if the statement ran and every value was a
  number, 0 if it failed (ORA- error, timeout), returned no rows (unless
  ignorezeroresult) or returned a value that is not a number (that sample is skipped).
  A statement not run in this fetch (another database, scope, not due) has no series.

A failing statement costs only its own samples: the collector stays successful.
"""
from __future__ import annotations

import logging
from typing import Any, Iterable, Iterator

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..custom import CustomQuery, evaluate

# The metrics a site's statements define are the site's own: only the success gauge is declared.
SPEC = Collector(
    "custom", "Custom metrics from SQL: custom_metrics and Oracle's exporter metric files (names from the config).",
    reads=(),           # keys come from the config (CUSTOM:<NAME>), not from the view registry
    metrics=(
        Family("oracle_custom_query_success", "gauge",
               "1 if the custom SQL statement ran and returned numbers, else 0.", ("query",),
               source='1 if the custom statement ran and every value was a number; 0 if it failed (ORA- error, its own timeout), returned no rows (unless `ignorezeroresult`) or a value that is not a number (that sample is skipped). No series for a statement not run in that fetch (another database, scope)', measure='1/0'),
    ), title='Custom SQL metrics')
NAME, VIEWS = SPEC.name, SPEC.reads

log = logging.getLogger(__name__)
_last_error: dict[tuple[str, str], str | None] = {}


def queries(settings: Any) -> tuple[CustomQuery, ...]:
    return tuple(getattr(settings, "custom_queries", None) or ())


class ExactName(str):
    """The name of a counter family that keeps Oracle's name. The text format prints a
    counter family as ``# TYPE <family name>_total counter`` (prometheus_client's
    generate_latest and exporter_common.exposition both write ``name + "_total"``), which
    suits a family whose samples end in ``_total``. Oracle's exporter prints its counters
    under their own names (``# TYPE oracledb_wait_time_commit counter`` with sample
    ``oracledb_wait_time_commit``): for such a family, adding ``"_total"`` to this name gives
    the name itself. The name survives the exporter's merge of families (a str, kept as is).
    OpenMetrics requires ``_total`` on a counter's samples: ``openmetrics_families`` turns
    these families into ``unknown`` ones there, so the series names stay Oracle's."""
    __slots__ = ()

    def __add__(self, other: str) -> str:
        if other == "_total":
            return str(self)
        return str(self) + other


def is_exact_counter(family: Metric) -> bool:
    return family.type == "counter" and isinstance(family.name, ExactName)


def openmetrics_families(families: Iterable[Metric]) -> Iterator[Metric]:
    """``families`` for an OpenMetrics exposition: counters that keep Oracle's bare names
    (no ``_total``, which OpenMetrics requires of a counter's samples) become ``unknown``."""
    for fam in families:
        if is_exact_counter(fam):
            copy = Metric(str(fam.name), fam.documentation, "unknown", fam.unit)
            copy.samples = list(fam.samples)
            yield copy
        else:
            yield fam


class OpenMetricsSafe:
    """A registry stand-in (``collect()``) whose families pass through ``openmetrics_families``."""

    def __init__(self, source: Any):
        self.source = source

    def collect(self) -> Iterator[Metric]:
        return openmetrics_families(self.source.collect())


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    families: dict[str, Metric] = {}
    owner: dict[str, str] = {}       # family name -> the statement whose samples it holds
    success = SPEC.family("oracle_custom_query_success")
    for q in queries(settings):
        if not q.runs_on(snapshot.database):
            continue
        if q.key not in snapshot.views and q.key not in snapshot.errors:
            continue
        result = evaluate(q, snapshot.views.get(q.key), snapshot.errors.get(q.key))
        clashes: list[str] = []
        for name, kind, doc, labels, value in result.samples:
            if kind == "histogram":
                family_name: str = name.rsplit("_", 1)[0]
            elif kind == "counter":
                family_name = name[:-len("_total")] if name.endswith("_total") else ExactName(name)
            else:
                family_name = name
            fam = families.get(family_name)
            if fam is None:
                fam = families[family_name] = Metric(family_name, doc, kind)
                owner[family_name] = q.name
            elif owner[family_name] != q.name or fam.type != kind:
                # a fieldtoappend value made a name another statement prints (checked at start
                # for fixed names): skipped, never a duplicate series in the exposition
                clashes.append(f"{name} is also printed by custom statement {owner[family_name]}")
                continue
            fam.add_sample(name, labels, value)
        error = result.error
        if clashes:
            error = "; ".join(([error] if error else []) + clashes[:3])
        _note(snapshot.database, q, error)
        success.add_metric([q.name], 0.0 if error else 1.0)
    yield from families.values()
    if success.samples:
        yield success


def _note(database: str, q: CustomQuery, error: str | None) -> None:
    """Log a statement's failure when it starts or changes, and its recovery; never per scrape."""
    key = (database, q.name)
    before = _last_error.get(key)
    if error and error != before:
        log.warning("database %s: custom statement %s: %s", database, q.name, error)
    elif not error and before:
        log.info("database %s: custom statement %s recovered", database, q.name)
    _last_error[key] = error
