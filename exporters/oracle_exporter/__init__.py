"""oracle-exporter: Prometheus exporter for Oracle Database (python-oracledb thin mode)."""
from __future__ import annotations

try:
    from importlib.metadata import PackageNotFoundError, version as _version

    __version__ = _version("oracle-dbhost-monitoring")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
