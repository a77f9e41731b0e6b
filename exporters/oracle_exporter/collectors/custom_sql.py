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
from typing import Any, Iterable

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


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    families: dict[str, Metric] = {}
    success = SPEC.family("oracle_custom_query_success")
    for q in queries(settings):
        if not q.runs_on(snapshot.database):
            continue
        if q.key not in snapshot.views and q.key not in snapshot.errors:
            continue
        result = evaluate(q, snapshot.views.get(q.key), snapshot.errors.get(q.key))
        _note(snapshot.database, q, result.error)
        success.add_metric([q.name], 0.0 if result.error else 1.0)
        for name, kind, doc, labels, value in result.samples:
            family_name = name
            if kind == "histogram":
                family_name = name.rsplit("_", 1)[0]
            elif kind == "counter" and name.endswith("_total"):
                family_name = name[:-len("_total")]
            fam = families.get(family_name)
            if fam is None:
                fam = families[family_name] = Metric(family_name, doc, kind)
            sample = name if kind != "counter" else family_name + "_total"
            fam.add_sample(sample, labels, value)
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
