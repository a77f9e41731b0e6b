"""oracle-exporter collectors: pure functions from a Snapshot to metric families.

Each module has ``NAME``, ``VIEWS`` (the snapshot keys it reads; every one is
described once in the view registry, oracle_exporter.views, whose docstring
shows how a new collector registers its own view) and
``collect(snapshot, settings)`` yielding prometheus_client metric families
without the ``database`` label (the core adds it and any extra labels).
``settings`` needs only ``histogram_events`` and ``latches``; missing
attributes fall back to DEFAULT_HISTOGRAM_EVENTS / DEFAULT_LATCHES.
A view absent from the snapshot yields nothing; NULL values are skipped.
"""
from __future__ import annotations

from types import ModuleType

from . import archive_dest, asm, dataguard, host_load, instance, latches, load_profile, pga, recovery_area, redo
from . import custom_sql, pdb, resource_limits, sessions, tablespaces, time_model, wait_events
from .defaults import DEFAULT_HISTOGRAM_EVENTS, DEFAULT_LATCHES

COLLECTORS: dict[str, ModuleType] = {
    module.NAME: module
    for module in (wait_events, redo, pga, latches, load_profile, time_model, host_load, instance,
                   sessions, resource_limits, tablespaces, recovery_area, dataguard, archive_dest, asm,
                   pdb, custom_sql)
}

__all__ = ["COLLECTORS", "DEFAULT_HISTOGRAM_EVENTS", "DEFAULT_LATCHES"]
