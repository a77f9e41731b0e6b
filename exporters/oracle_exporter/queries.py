"""Every SQL statement the live source can issue, planned from the view registry.

One statement per view, each selecting plain columns from one GV$ (or V$) view
(oracle_exporter.views); all metric logic runs in Python on the rows. A view is read
when an enabled collector lists it in ``VIEWS``; a name-filtered view (GV$SYSSTAT,
GV$SYSTEM_PARAMETER, GV$SYSMETRIC, the event histograms) asks for the union of the names the
enabled collectors declare in ``NAMES`` (bind variables), and is not read at all when
no collector wants a name from it. A collector may also narrow a view's rows in SQL with a
filter that depends on its settings (``WHERE``: wait_events leaves GV$SYSTEM_EVENT's Idle
class out unless ``idle_wait_events``). tests/oracle/test_sql_catalog.py parses every
statement with sqlglot's Oracle dialect and checks each view and column against the
catalog in tests/oracle/data/gv_catalog.yaml, and docs/oracle-monitoring-user.sql
grants SELECT on exactly these views.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from . import views
from . import collectors as _view_registering_collectors  # noqa: F401  (collector modules may register their own views)
from .views import Query, View

SYSMETRIC_GROUP_ID = views.SYSMETRIC_GROUP_ID

__all__ = ["Plan", "Query", "SYSMETRIC_GROUP_ID", "build_plan", "build_queries", "declared_filters",
           "declared_names"]


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


def declared_filters(collectors: Mapping[str, Any] | None = None,
                     settings: Any = None) -> dict[str, tuple[str, dict[str, object]]]:
    """{view: (condition, binds)}: the rows the enabled collectors want of a view, in SQL, from
    their ``WHERE`` ({view: function of the settings returning (condition, binds), or None for
    every row}). A view is narrowed only when every enabled collector that reads it asks for a
    condition (several are OR-ed); one that reads it without a condition wants every row."""
    out: dict[str, tuple[str, dict[str, object]]] = {}
    mods = _collectors(collectors, settings)
    for view in {v for m in mods.values() for v in getattr(m, "VIEWS", ())}:
        wanted = []
        for module in mods.values():
            if view not in getattr(module, "VIEWS", ()):
                continue
            declared = getattr(module, "WHERE", {}).get(view)
            wanted.append(declared(settings) if declared is not None else None)
        if not wanted or any(w is None for w in wanted):
            continue
        binds: dict[str, object] = {}
        for _, b in wanted:
            if any(k in binds and binds[k] != v for k, v in b.items()):
                raise ValueError(f"collectors filtering {view} use the same bind names: {sorted(set(b) & set(binds))}")
            binds.update(b)
        conditions = sorted({c for c, _ in wanted})
        out[view] = (conditions[0] if len(conditions) == 1 else " OR ".join(f"({c})" for c in conditions), binds)
    return out


# Rows a statement is expected to return, per instance for a GV$ view, for its first fetch in a
# session (later fetches size themselves on the rows the statement returned last): what a busy
# 19c instance shows. A name-filtered view: rows per declared name.
ROWS_PER_NAME = {"GV$EVENT_HISTOGRAM_MICRO": 24, "GV$EVENT_HISTOGRAM": 24, "GV$CON_EVENT_HISTOGRAM_MICRO": 96,
                 "GV$CON_SYSSTAT": 4, "GV$CON_SYS_TIME_MODEL": 4, "GV$CON_SYSMETRIC": 4}
ROWS = {"GV$SYSTEM_EVENT": 400, "GV$LATCH": 1000, "GV$PROCESS": 150, "GV$SESSION": 100, "GV$PGASTAT": 40,
        "GV$RESOURCE_LIMIT": 40, "GV$LOG": 16, "GV$CON_SYSTEM_EVENT": 400, "CDB_TABLESPACE_USAGE_METRICS": 100,
        "CDB_TABLESPACES": 100, "DBA_TABLESPACE_USAGE_METRICS": 50, "DBA_TABLESPACES": 50, "GV$PDBS": 8,
        "V$CONTAINERS": 8, "V$DATAGUARD_STATS": 16, "V$ASM_DISKGROUP_STAT": 8, "GV$ARCHIVE_DEST": 4,
        "GV$INSTANCE": 1, "V$DATABASE": 1, "V$RECOVERY_FILE_DEST": 1}
FIRST_FETCH_INSTANCES = 4   # a GV$ view's first fetch is sized for up to four RAC instances
DEFAULT_ROWS = 100


@dataclass(frozen=True)
class Plan:
    """What one fetch reads: the views in statement order, the names of every
    name-filtered view (fallback views included) and the collectors' SQL filters."""
    views: tuple[View, ...]
    names: Mapping[str, tuple[str, ...]]
    filters: Mapping[str, tuple[str, Mapping[str, object]]] = field(default_factory=lambda: MappingProxyType({}))

    def statement(self, view: View, con_id: bool = True) -> Query:
        extra = self.filters.get(view.name)
        if extra is not None:
            condition, binds = extra
            # parenthesised whenever another condition joins it (the view's own, its IN list)
            alone = not view.where and view.filter_column is None
            where = condition if alone else " AND ".join(f"({c})" for c in (view.where, condition) if c)
            view = replace(view, where=where, where_binds={**view.where_binds, **binds})
        return view.statement(self.names.get(view.name, ()), con_id)

    def statements(self) -> int:
        """Distinct statements a session can send for the views: each planned view and each of its
        fallbacks (a view read through its fallback is tried again now and then, so both stay in
        use). The statement cache of the session holds them all, plus the session's own."""
        return sum(len(v.variants()) for v in self.views)

    def fetch_rows(self, view: View) -> int:
        """The rows the first fetch of ``view``'s statement in a session expects (see ROWS)."""
        names = self.names.get(view.name, ())
        if view.filter_column is not None:
            rows = max(1, len(names)) * ROWS_PER_NAME.get(view.name, 1)
        else:
            rows = ROWS.get(view.name, DEFAULT_ROWS)
        return rows * (FIRST_FETCH_INSTANCES if view.name.startswith("GV$") else 1)


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
    return Plan(planned, MappingProxyType(names), MappingProxyType(declared_filters(mods, settings)))


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
