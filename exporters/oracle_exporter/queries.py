"""Every SQL statement the live source can issue, planned from the view registry.

One statement per view, each selecting plain columns from one GV$ (or V$) view
(oracle_exporter.views); all metric logic runs in Python on the rows. A view is read
when an enabled collector lists it in ``VIEWS``; a name-filtered view (GV$SYSSTAT,
GV$SYSTEM_PARAMETER, GV$SYSMETRIC, the event histograms) asks for the union of the names the
enabled collectors declare in ``NAMES`` (bind variables), and is not read at all when
no collector wants a name from it. tests/oracle/test_sql_catalog.py parses every
statement with sqlglot's Oracle dialect and checks each view and column against the
catalog in tests/oracle/data/gv_catalog.yaml, and docs/oracle-monitoring-user.sql
grants SELECT on exactly these views.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from . import views
from . import collectors as _view_registering_collectors  # noqa: F401  (collector modules may register their own views)
from .views import Query, View

SYSMETRIC_GROUP_ID = views.SYSMETRIC_GROUP_ID

__all__ = ["Plan", "Query", "SYSMETRIC_GROUP_ID", "build_plan", "build_queries", "declared_names"]


def _collectors(collectors: Mapping[str, Any] | None, settings: Any) -> Mapping[str, Any]:
    if collectors is None:
        from .collectors import COLLECTORS
        enabled = getattr(settings, "enabled", None)
        collectors = {n: m for n, m in COLLECTORS.items() if enabled is None or enabled(n)}
    return collectors


def declared_names(collectors: Mapping[str, Any] | None = None, settings: Any = None) -> dict[str, tuple[str, ...]]:
    """{view: names} over the collectors' ``NAMES`` (a tuple, or a function of the settings),
    in first-declared order, each name once."""
    out: dict[str, dict[str, None]] = {}
    for module in _collectors(collectors, settings).values():
        for view, names in getattr(module, "NAMES", {}).items():
            values = names(settings) if callable(names) else names
            slot = out.setdefault(view, {})
            for name in values:
                slot[str(name)] = None
    return {view: tuple(names) for view, names in out.items()}


@dataclass(frozen=True)
class Plan:
    """What one fetch reads: the views in statement order and the names of every
    name-filtered view (fallback views included)."""
    views: tuple[View, ...]
    names: Mapping[str, tuple[str, ...]]

    def statement(self, view: View, con_id: bool = True) -> Query:
        return view.statement(self.names.get(view.name, ()), con_id)


def build_plan(collectors: Mapping[str, Any] | None = None, settings: Any = None) -> Plan:
    """The views the (enabled) collectors read, in registry order. A view that is another
    read view's fallback is read only through that fallback; a name-filtered view that no
    collector asks a name of is not read."""
    mods = _collectors(collectors, settings)
    wanted = {v for m in mods.values() for v in getattr(m, "VIEWS", ())}
    names = declared_names(mods, settings)
    registry = views.all_views()
    unknown = sorted(wanted - set(registry))
    if unknown:
        raise ValueError(f"collectors read views missing from the registry (oracle_exporter.views): {unknown}")
    read = [registry[n] for n in registry if n in wanted]
    fallback_only = {fb.use.name for v in read for fb in v.fallbacks if fb.use.name != v.name}
    planned = tuple(v for v in read if v.name not in fallback_only
                    and (v.filter_column is None or names.get(v.name)))
    return Plan(planned, MappingProxyType(names))


def build_queries(settings: Any = None, collectors: Mapping[str, Any] | None = None, *,
                  fallen_back: Iterable[str] = ()) -> dict[str, Query]:
    """All statements of one fetch, keyed by the snapshot key of their rows. ``fallen_back``
    names views read through their (first) fallback, as after its error code on an older
    release: ``fallen_back=["GV$EVENT_HISTOGRAM_MICRO"]`` reads GV$EVENT_HISTOGRAM instead."""
    plan = build_plan(collectors, settings)
    down = set(fallen_back)
    out: dict[str, Query] = {}
    for view in plan.views:
        while view.name in down and view.fallbacks:
            down.discard(view.name)
            view = view.fallbacks[0].use
        out[view.name] = plan.statement(view)
    return out
