"""Archive destinations (GV$ARCHIVE_DEST): is every destination in use archiving?

The statement selects the destinations that are configured (STATUS other than
'INACTIVE'), so 31 unused LOG_ARCHIVE_DEST_n slots make no series.

* ``oracle_archive_dest_info{inst_id, dest_name, target, destination, status, valid_now, error}``
  value 1: STATUS (VALID, DEFERRED, ERROR, DISABLED, BAD PARAM, ALTERNATE,
  FULL), TARGET (PRIMARY, STANDBY, LOCAL, REMOTE), DESTINATION, VALID_NOW
  (YES, or why the destination does not apply now: WRONG VALID_TYPE, WRONG
  VALID_ROLE, INACTIVE, UNKNOWN) and the ORA- code of ERROR (the code only, so
  the label stays bounded; empty when there is none).
* ``oracle_archive_dest_error{inst_id, dest_name}``: 1 when a destination in
  use (VALID_NOW 'YES' or unknown) has STATUS ERROR, DISABLED, BAD PARAM or FULL
  or an ERROR text, else 0. DEFERRED (switched off on purpose) is not an error.
* ``oracle_archive_dest_log_sequence{inst_id, dest_name}``: LOG_SEQUENCE, the
  last log sequence archived to the destination; a standby destination falling
  behind the local one shows here.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import ARCHIVE_DEST
from ._common import emit, inst, num
from ._health import clean

SPEC = Collector(
    "archive_dest", "Archive destinations in use, their state and error (GV$ARCHIVE_DEST).",
    reads=(ARCHIVE_DEST.name,),
    interval=60.0,      # destination state changes rarely (collector_intervals overrides)
    metrics=(
        Family("oracle_archive_dest_info", "gauge",
               "Configured archive destination, value 1 (GV$ARCHIVE_DEST; error is the ORA- code).",
               ("inst_id", "dest_name", "target", "destination", "status", "valid_now", "error"),
               source='DEST_NAME (LOG_ARCHIVE_DEST_n), TARGET, DESTINATION, STATUS (VALID, DEFERRED, ERROR, DISABLED, BAD PARAM, ALTERNATE, FULL), VALID_NOW (YES, WRONG VALID_ROLE, ...), `error` = the ORA- code of ERROR only (bounded), empty when none', measure='1'),
        Family("oracle_archive_dest_error", "gauge",
               "1 if an archive destination in use is in error (STATUS ERROR/DISABLED/BAD PARAM/FULL or an ERROR "
               "text), else 0.", ("inst_id", "dest_name"), source="1 if a destination in use (VALID_NOW 'YES') has STATUS ERROR, DISABLED, BAD PARAM or FULL or an ERROR text; DEFERRED (switched off on purpose) and destinations not valid in the current role are 0", measure='1/0'),
        Family("oracle_archive_dest_log_sequence", "gauge",
               "Last log sequence archived to the destination (GV$ARCHIVE_DEST.LOG_SEQUENCE).",
               ("inst_id", "dest_name"), source='LOG_SEQUENCE: last log sequence archived there; a remote destination behind the local one shows here', measure='sequence'),
    ), doc="Only configured destinations (`STATUS <> 'INACTIVE'`) are selected.", title='Archive destinations')
NAME, VIEWS = SPEC.name, SPEC.reads

ERROR_STATUSES = frozenset({"ERROR", "DISABLED", "BAD PARAM", "FULL"})
_ORA = re.compile(r"\b([A-Z]{2,4}-\d{4,5})\b")


def error_code(text: Any) -> str:
    """The first ORA-nnnnn (or TNS-, ...) code of an ERROR text; the text itself if it has none (cut to 64)."""
    value = clean(text)
    m = _ORA.search(value.upper())
    return m.group(1) if m else value[:64]


def in_error(row: dict[str, Any]) -> bool:
    valid_now = clean(row.get("VALID_NOW")).upper()
    if valid_now not in ("", "YES"):
        return False
    return clean(row.get("STATUS")).upper() in ERROR_STATUSES or bool(clean(row.get("ERROR")))


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    info = SPEC.family("oracle_archive_dest_info")
    error = SPEC.family("oracle_archive_dest_error")
    seq = SPEC.family("oracle_archive_dest_log_sequence")
    seen: set[tuple[str, str]] = set()
    rows = sorted(snapshot.rows("GV$ARCHIVE_DEST"),
                  key=lambda r: (num(r.get("INST_ID")) or 0, num(r.get("DEST_ID")) or 0, clean(r.get("DEST_NAME"))))
    for row in rows:
        i, name = inst(row), clean(row.get("DEST_NAME"))
        status = clean(row.get("STATUS")).upper()
        if i is None or not name or status == "INACTIVE" or (i, name) in seen:
            continue
        seen.add((i, name))
        info.add_metric([i, name, clean(row.get("TARGET")), clean(row.get("DESTINATION")), status,
                         clean(row.get("VALID_NOW")), error_code(row.get("ERROR"))], 1.0)
        error.add_metric([i, name], 1.0 if in_error(row) else 0.0)
        sequence = num(row.get("LOG_SEQUENCE"))
        if sequence is not None:
            seq.add_metric([i, name], sequence)
    yield from emit([info, error, seq])
