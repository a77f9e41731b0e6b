"""Collectors of dbhost-exporter.

Every collector is a class with a ``name`` attribute and a ``collect()`` method
yielding prometheus_client metric families (custom-collector style, no global
registry state). The exporter runs each one per scrape, isolated from the others.

Each collector module declares itself once, ``SPEC`` (an exporter_common.declare.Collector:
what it reads, its settings, its metric families), and has ``create(cfg, procfs, sysfs)``
building the collector from a dbhost_exporter.config.DbhostConfig. ``MODULES`` below is the
one list of them (found in this package), in scrape order: the config's switches and sections (config.COLLECTORS),
the factories (cli.FACTORIES), ``--help`` and the metrics catalog (``SPECS``) all come from it.
"""
from __future__ import annotations

import pkgutil
from importlib import import_module
from types import ModuleType

from exporter_common.declare import Collector

# The built-in collector modules, in scrape order; a module added to this package is found by
# itself and scraped after them, in name order (docs/adding-a-collector.md).
ORDER = ("lun", "zfs", "process", "memory")
_FOUND = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
MODULES = tuple(n for n in ORDER if n in _FOUND) + tuple(n for n in _FOUND if n not in ORDER)


def modules() -> tuple[ModuleType, ...]:
    """The collector modules, imported now: a broken one raises its ImportError (the exporter
    must not start with fewer collectors than it has)."""
    return tuple(import_module(f"{__name__}.{name}") for name in MODULES)


def collector_specs() -> tuple[Collector, ...]:
    """Every collector's declaration, in scrape order (the exporter's own SPEC not included)."""
    specs = tuple(m.SPEC for m in modules())
    for name, spec in zip(MODULES, specs):
        if spec.name != name:   # the module is the collector: one name for both
            raise RuntimeError(f"collector module {name} declares collector {spec.name!r}")
    return specs


def _all_specs() -> tuple[Collector, ...]:
    from ..scrape import SPEC as exporter_spec
    return collector_specs() + (exporter_spec,)


# Every declaration of dbhost-exporter (the collectors', then the exporter's self metrics and
# exporter-level settings), for the metrics catalog and the docs.
SPECS: tuple[Collector, ...] = _all_specs()
