"""Where snapshots come from.

A source serves one database: ``name`` and ``fetch() -> Snapshot``; ``close()``
releases what it holds. ``fetch`` never raises for database problems: a database
that cannot be reached gives a *failed* snapshot, empty ``views`` and
``errors == {"*": "<why>"}`` (the replay format represents an unreachable
database the same way), which the exporter turns into ``oracle_up 0``.
"""
from __future__ import annotations

from typing import Protocol

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


# (reason label, patterns in the failure text): first match wins. The label set is
# fixed, so oracle_last_error_info stays bounded whatever the driver says.
_REASONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("recording changed", ("the recording changed under the replay",)),
    ("recording unreadable", ("replay: ",)),
    ("connection refused", ("Connection refused", "[Errno 111]", "ORA-12541")),
    ("name not resolved", ("Name or service not known", "nodename nor servname", "[Errno -2]", "[Errno -3]",
                           "[Errno -5]", "Temporary failure in name resolution", "ORA-12545", "DPY-6006")),
    ("host unreachable", ("No route to host", "Network is unreachable", "[Errno 113]", "[Errno 101]", "ORA-12543")),
    ("logon timeout", ("the logon did not complete",)),
    ("connect timeout", ("ORA-12170", "DPY-6005: cannot connect to database.; timed out", "timed out",
                         "ORA-12535")),
    ("logon denied", ("ORA-01017", "ORA-01045", "ORA-01031", "ORA-28009")),
    ("account locked", ("ORA-28000", "ORA-28001")),
    ("unknown service", ("ORA-12514", "ORA-12505", "DPY-6001", "DPY-6003")),
    ("listener refused", ("DPY-6000", "ORA-12516", "ORA-12518", "ORA-12519", "ORA-12520", "ORA-12528")),
    ("database not open", ("ORA-01033", "ORA-01034", "ORA-01089", "ORA-01090", "ORA-12526")),
    ("encryption required", ("Native Network Encryption", "DPY-3001")),
    ("alias not resolved", ("DPY-4000", "DPY-4026", "DPY-4027", "ORA-12154")),   # tnsnames.ora / config_dir
    ("tls failed", ("DPY-2018", "[SSL", "ORA-28759", "ORA-28860", "ORA-29024", "ORA-29106", "ORA-28865")),
    ("connection closed", ("cannot connect to database.; DPY-4011", "cannot connect to database.; [Errno 104]",
                           "Connection reset by peer")),   # the listener closed it during the logon
    ("timeout", ("timeout:", "no snapshot within", "DPY-4024", "DPI-1067", "ORA-03156")),
    ("session lost", ("session lost", "DPY-4011", "ORA-03113", "ORA-03114", "ORA-03135", "DPY-1001")),
)


def failure_reason(text: str) -> str:
    """A short, fixed label for why a fetch failed ("connection refused", "logon denied",
    "timeout", ...; "other" when nothing matches), from its one-line error text."""
    for reason, patterns in _REASONS:
        if any(p in text for p in patterns):
            return reason
    return "other"
