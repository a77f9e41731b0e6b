"""Per-collector minimum intervals: how often the views of a collector are read.

Some views are cheap but not free (tablespace usage scans the data dictionary): a
collector declares ``interval`` in its SPEC (tablespaces: 300), and the config may set
any collector's interval (``collector_intervals: {tablespaces: 600, asm: 0}``). The live
source reads a view at most once per interval and serves the rows it read last in between
(``Snapshot.ages`` says how old they are; the exporter exports that as
``oracle_collector_cache_age_seconds{collector}``). A view read by several collectors is
read as often as the most frequent of them needs it. Custom SQL statements have their own
``interval_seconds`` / ``scrapeinterval``.
"""
from __future__ import annotations

from typing import Any, Mapping

from . import views
from . import collectors as _view_registering_collectors  # noqa: F401  (collector modules may register their own views)


def collector_interval(name: str, module: Any, settings: Any) -> float:
    configured = getattr(settings, "collector_intervals", None) or {}
    if name in configured:
        return float(configured[name])
    spec = getattr(module, "SPEC", None)
    return float(spec.interval if spec is not None else getattr(module, "MIN_INTERVAL_SECONDS", 0.0))


def enabled_collectors(collectors: Mapping[str, Any] | None, settings: Any) -> Mapping[str, Any]:
    if collectors is not None:
        return collectors
    from .collectors import COLLECTORS
    enabled = getattr(settings, "enabled", None)
    return {n: m for n, m in COLLECTORS.items() if enabled is None or enabled(n)}


def view_intervals(collectors: Mapping[str, Any] | None, settings: Any) -> dict[str, float]:
    """{view name: seconds} for every view (and fallback) an enabled collector reads; 0 = every fetch."""
    out: dict[str, float] = {}
    for name, module in enabled_collectors(collectors, settings).items():
        interval = collector_interval(name, module, settings)
        for view in getattr(module, "VIEWS", ()):
            registered = views.get(view)
            for variant in (registered.variants() if registered is not None else ()):
                out[variant.name] = min(out.get(variant.name, interval), interval)
            out[view] = min(out.get(view, interval), interval)
    return out


def collector_age(module: Any, ages: Mapping[str, float]) -> float:
    """Age of the oldest rows a collector used (0 when every view it read was fresh)."""
    return max((ages.get(v, 0.0) for v in getattr(module, "VIEWS", ())), default=0.0)


# The alert pack reads gauges through 3-minute windows and counters through 5-minute rates: data
# refreshed less often than this is judged as gaps and staircases (alerts/README.md "Freshness").
PACK_FRESHNESS_SECONDS = 120.0


def freshness_warnings(refresh_interval: float, collectors: Mapping[str, Any] | None, settings: Any) -> list[str]:
    """One line for each setting that refreshes data read on every scrape by default less often than
    the alert pack can judge (a collector whose SPEC declares its own interval, a slow view judged on
    long windows, is not named for a configured interval)."""
    out = []
    if refresh_interval > PACK_FRESHNESS_SECONDS:
        out.append(f"refresh_interval_seconds {refresh_interval:g} is above {PACK_FRESHNESS_SECONDS:g}: the alert "
                   "pack's 3-minute reads and 5-minute rates go blind on data this old (alerts/README.md "
                   "\"Freshness\"; MonitoringDataTooOld tickets it)")
    configured = getattr(settings, "collector_intervals", None) or {}
    for name, module in sorted(enabled_collectors(collectors, settings).items()):
        spec = getattr(module, "SPEC", None)
        own = float(spec.interval if spec is not None else getattr(module, "MIN_INTERVAL_SECONDS", 0.0))
        value = configured.get(name)
        if value is not None and own == 0 and float(value) > PACK_FRESHNESS_SECONDS:
            out.append(f"collector_intervals.{name} {float(value):g} is above {PACK_FRESHNESS_SECONDS:g}: its "
                       "collector is read on every scrape by default and the alert pack judges it on 3-minute "
                       "reads and 5-minute rates (alerts/README.md \"Freshness\")")
    return out
