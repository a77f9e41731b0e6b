"""Where snapshots come from.

A source serves one database: ``name`` and ``fetch() -> Snapshot``; ``close()``
releases what it holds. ``fetch`` never raises for database problems: a database
that cannot be reached gives a *failed* snapshot, empty ``views`` and
``errors == {"*": "<why>"}`` (the replay format represents an unreachable
database the same way), which the exporter turns into ``oracle_up 0``.
"""
from __future__ import annotations

from typing import Protocol

from ..ora_errors import reason_patterns
from ..snapshot import Snapshot, now_rfc3339

FAILED = "*"  # key in Snapshot.errors: the whole fetch failed


class Source(Protocol):
    name: str

    def fetch(self) -> Snapshot: ...

    def close(self) -> None: ...


def failed_snapshot(database: str, reason: str) -> Snapshot:
    return Snapshot(database=database, time=now_rfc3339(), views={}, errors={FAILED: reason})


def is_failed(snapshot: Snapshot) -> bool:
    return FAILED in snapshot.errors


# (reason label, patterns in the failure text): first match wins. The label set is fixed
# (oracle_exporter.ora_errors: the one table of codes), so oracle_last_error_info stays bounded.
_REASONS: tuple[tuple[str, tuple[str, ...]], ...] = reason_patterns()


def failure_reason(text: str) -> str:
    """A short, fixed label for why a fetch failed ("connection refused", "logon denied",
    "timeout", ...; "other" when nothing matches), from its one-line error text."""
    for reason, patterns in _REASONS:
        if any(p in text for p in patterns):
            return reason
    return "other"
