"""dbhost-exporter: host metrics for Oracle database servers that node_exporter lacks
(per-LUN queues, Oracle process scheduling, ZFS ARC/L2ARC)."""
from __future__ import annotations

try:  # the installed distribution's version; a source checkout falls back to the pyproject value
    from importlib.metadata import PackageNotFoundError, version as _version
    __version__ = _version("oracle-dbhost-monitoring")
except PackageNotFoundError:  # pragma: no cover - only outside an installed tree
    __version__ = "0.1.0"
