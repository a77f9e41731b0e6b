"""oracle-exporter collectors: pure functions from a Snapshot to metric families.

Each module has ``SPEC`` (its declaration: exporter_common.declare.Collector: the views
it reads, its settings, its metric families), ``NAME, VIEWS = SPEC.name, SPEC.reads``
(every view is described once in the view registry, oracle_exporter.views, whose docstring
shows how a new collector registers its own view) and
``collect(snapshot, settings)`` yielding prometheus_client metric families
without the ``database`` label (the core adds it and any extra labels).
``settings`` needs only ``histogram_events`` and ``latches``; missing
attributes fall back to DEFAULT_HISTOGRAM_EVENTS / DEFAULT_LATCHES.
A view absent from the snapshot yields nothing; NULL values are skipped.

Failure isolation is per view (issue 22): a family declares the views it is fed by
(``Family(..., views=(...))``, default every view of ``SPEC.reads``), and when a view fails the
exporter removes only the families it feeds (oracle_exporter.exporter.isolated); a collector
that reads several independent views declares them per family. A view skipped on purpose
(``snapshot.skipped``: a data dictionary view on a MOUNTED standby) is simply absent.
"""
from __future__ import annotations

import pkgutil
from importlib import import_module
from types import ModuleType

from exporter_common.declare import Collector

from .defaults import DEFAULT_HISTOGRAM_EVENTS, DEFAULT_LATCHES

# The built-in collectors in exposition order. A collector module added to this package is found
# by itself (every module not starting with "_", defaults aside) and runs after these, in name
# order: adding a collector touches its own module, its test and the generated files only
# (docs/adding-a-collector.md).
ORDER = ("wait_events", "redo", "pga", "latches", "load_profile", "time_model", "host_load", "instance",
         "sessions", "resource_limits", "tablespaces", "recovery_area", "dataguard", "archive_dest", "asm",
         "pdb", "custom_sql")
_NOT_COLLECTORS = frozenset({"defaults"})


def _discover() -> dict[str, ModuleType]:
    found = sorted(m.name for m in pkgutil.iter_modules(__path__)
                   if not m.name.startswith("_") and m.name not in _NOT_COLLECTORS)
    names = [n for n in ORDER if n in found] + [n for n in found if n not in ORDER]
    out: dict[str, ModuleType] = {}
    for module in (import_module(f"{__name__}.{n}") for n in names):   # a broken module raises here
        spec = getattr(module, "SPEC", None)
        if not isinstance(spec, Collector):
            raise RuntimeError(f"{module.__name__} is in the collectors package but declares no SPEC "
                               "(exporter_common.declare.Collector)")
        if spec.name in out:
            raise RuntimeError(f"collector {spec.name} declared by {out[spec.name].__name__} and {module.__name__}")
        out[spec.name] = module
    return out


COLLECTORS: dict[str, ModuleType] = _discover()
# Every collector's declaration, in exposition order.
SPECS: tuple[Collector, ...] = tuple(m.SPEC for m in COLLECTORS.values())

__all__ = ["COLLECTORS", "SPECS", "DEFAULT_HISTOGRAM_EVENTS", "DEFAULT_LATCHES"]
