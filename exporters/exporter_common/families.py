"""Declared families that keep their samples as rows until something reads ``samples``.

``declare.Family.make`` builds counters, gauges and histograms of these classes. They are
prometheus_client's own families (same name, type, help, unit and label names, same
``add_metric`` signature), but ``add_metric`` stores a plain row (the label values as a tuple,
the value) instead of building a ``Sample`` with its own label dict. The exposition writers
(exporter_common.exposition) read the rows directly; anything that reads ``samples`` (tests,
prometheus_client's encoders, a relabelling pass) gets the very samples prometheus_client's
``add_metric`` would have built, in the same order: the rows turn into samples on first read
and the family stays a plain sample list from then on.

A call the rows do not cover (a counter's ``created``, a timestamp, an exemplar, label values
that do not match the label names one to one) turns the family into samples first, then goes
through prometheus_client's ``add_metric``: its output is always prometheus_client's.
"""
from __future__ import annotations

from itertools import repeat
from operator import itemgetter, lt
from typing import Any, Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily


class _Rows:
    """Mixin: ``samples`` built from ``_rows`` on first read (``_rows`` None: plain samples)."""

    _rows: list | None = None
    _samples: list

    @property
    def samples(self) -> list:
        rows = self._rows
        if rows is not None:
            self._rows = None
            self._samples = []
            for row in rows:
                self._materialize(row)
        return self._samples

    @samples.setter
    def samples(self, value: list) -> None:
        self._rows = None
        self._samples = value

    def _materialize(self, row: tuple) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class RowsCounter(_Rows, CounterMetricFamily):
    """A CounterMetricFamily whose plain ``add_metric(labels, value)`` calls are kept as rows."""

    def __init__(self, name: str, documentation: str, labels: Iterable[str], unit: str = ""):
        CounterMetricFamily.__init__(self, name, documentation, labels=labels, unit=unit)
        self._rows = []

    def add_metric(self, labels, value, created=None, timestamp=None, exemplar=None) -> None:
        rows = self._rows
        if rows is not None and created is None and timestamp is None and exemplar is None:
            labels = tuple(labels)
            if len(labels) == len(self._labelnames):
                rows.append((labels, value))
                return
        CounterMetricFamily.add_metric(self, labels, value, created, timestamp, exemplar)

    def _materialize(self, row: tuple) -> None:
        CounterMetricFamily.add_metric(self, row[0], row[1])


class RowsGauge(_Rows, GaugeMetricFamily):
    """A GaugeMetricFamily whose plain ``add_metric(labels, value)`` calls are kept as rows."""

    def __init__(self, name: str, documentation: str, labels: Iterable[str], unit: str = ""):
        GaugeMetricFamily.__init__(self, name, documentation, labels=labels, unit=unit)
        self._rows = []

    def add_metric(self, labels, value, timestamp=None) -> None:
        rows = self._rows
        if rows is not None and timestamp is None:
            labels = tuple(labels)
            if len(labels) == len(self._labelnames):
                rows.append((labels, value))
                return
        GaugeMetricFamily.add_metric(self, labels, value, timestamp)

    def _materialize(self, row: tuple) -> None:
        GaugeMetricFamily.add_metric(self, row[0], row[1])


class RowsHistogram(_Rows, HistogramMetricFamily):
    """A HistogramMetricFamily whose ``add_metric(labels, buckets, sum_value)`` calls are kept as
    rows (labels, buckets, sum, whether _count/_sum are written: prometheus_client leaves them
    out when there is no sum or the first bucket is negative)."""

    def __init__(self, name: str, documentation: str, labels: Iterable[str], unit: str = ""):
        HistogramMetricFamily.__init__(self, name, documentation, labels=labels, unit=unit)
        self._rows = []

    def add_metric(self, labels, buckets, sum_value, timestamp=None) -> None:
        rows = self._rows
        if rows is not None and timestamp is None:
            labels = tuple(labels)
            if len(labels) == len(self._labelnames) and "le" not in self._labelnames:
                buckets = list(buckets)
                counted = float(buckets[0][0]) >= 0 and sum_value is not None
                rows.append((labels, buckets, sum_value, counted))
                return
        HistogramMetricFamily.add_metric(self, labels, buckets, sum_value, timestamp)

    def _materialize(self, row: tuple) -> None:
        HistogramMetricFamily.add_metric(self, row[0], row[1], row[2])


def like(proto: Any) -> Any:
    """A new, empty family of ``proto``'s class, name, help, unit and label names (``proto`` a
    family built by its constructor, which checked them): the constructor's work done once."""
    state = proto.__dict__.get("_like")
    if state is None:       # what every copy starts from, gathered once per proto
        state = proto._like = dict(name=proto.name, documentation=proto.documentation, unit=proto.unit,
                                   type=proto.type, _labelnames=proto._labelnames)
    family = object.__new__(type(proto))
    family.__dict__.update(state, _rows=[])
    return family


_LABELS = itemgetter(0)


def add_rows(family: Any, rows: Iterable[tuple]) -> None:
    """``family.add_metric(labels, value)`` for every ``(labels, value)`` of ``rows``, in order, for
    a collector with many: a counter or gauge that keeps rows takes them as they are when every
    ``labels`` is a tuple of as many values as the family has label names (told at C speed)."""
    kept = family._rows if isinstance(family, (RowsCounter, RowsGauge)) else None
    rows = list(rows)
    if kept is not None and set(map(type, map(_LABELS, rows))) <= {tuple} \
            and set(map(len, map(_LABELS, rows))) <= {len(family._labelnames)}:
        kept.extend(rows)
        return
    for labels, value in rows:
        family.add_metric(labels, value)


def rows_of(family: Any) -> list | None:
    """The family's rows while it has not been read as samples, else None."""
    return family._rows if isinstance(family, _Rows) else None


def sample_count(family: Any) -> int:
    """How many samples the family holds, without building them."""
    rows = rows_of(family)
    if rows is None:
        return len(family.samples)
    if isinstance(family, RowsHistogram):
        return sum(len(r[1]) + (2 if r[3] else 0) for r in rows)
    return len(rows)


_VALUE = itemgetter(1)


def drop_negative(family: Any) -> None:
    """Remove the samples whose value is below zero (a counter never is)."""
    rows = rows_of(family)
    if rows is not None and not isinstance(family, RowsHistogram):
        if any(map(lt, map(_VALUE, rows), repeat(0))):     # any(r[1] < 0 for r in rows), at C speed
            family._rows = [r for r in rows if r[1] >= 0]
        return
    family.samples = [s for s in family.samples if s.value >= 0]
