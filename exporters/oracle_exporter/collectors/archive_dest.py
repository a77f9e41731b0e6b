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
* ``oracle_archive_dest_delay_seconds{inst_id, dest_name}`` (issue 22): the apply delay
  configured for a standby destination (DELAY_MINS x 60, the DELAY attribute); 0 when the
  destination applies in real time (GV$ARCHIVE_DEST_STATUS RECOVERY_MODE '... REAL TIME
  APPLY', which ignores DELAY).
* ``oracle_archive_dest_gap_status{inst_id, dest_name}`` (issue 22): GAP_STATUS of
  GV$ARCHIVE_DEST_STATUS as a number (GAP_CODES): 0 NO GAP, 1 LOG SWITCH GAP (the log being
  sent at a switch: transient), 2 RESOLVABLE GAP (redo missing at the destination that this
  database can still send), 3 UNRESOLVABLE GAP (missing redo no longer available here: the
  standby cannot catch up without a restore), 4 LOCALLY UNRESOLVABLE GAP; no sample where
  GAP_STATUS is NULL (local destinations) or unknown text.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import ARCHIVE_DEST, ARCHIVE_DEST_STATUS
from ._common import emit, inst, num
from ._health import clean

SPEC = Collector(
    "archive_dest", "Archive destinations in use, their state and error (GV$ARCHIVE_DEST).",
    reads=(ARCHIVE_DEST.name, ARCHIVE_DEST_STATUS.name),
    interval=60.0,      # destination state changes rarely (collector_intervals overrides)
    metrics=(
        Family("oracle_archive_dest_info", "gauge",
               "Configured archive destination, value 1 (GV$ARCHIVE_DEST; error is the ORA- code).",
               ("inst_id", "dest_name", "target", "destination", "status", "valid_now", "error"),
               source='DEST_NAME (LOG_ARCHIVE_DEST_n), TARGET, DESTINATION, STATUS (VALID, DEFERRED, ERROR, DISABLED, BAD PARAM, ALTERNATE, FULL), VALID_NOW (YES, WRONG VALID_ROLE, ...), `error` = the ORA- code of ERROR only (bounded), empty when none', measure='1',
               views=(ARCHIVE_DEST.name,)),
        Family("oracle_archive_dest_error", "gauge",
               "1 if an archive destination in use is in error (STATUS ERROR/DISABLED/BAD PARAM/FULL or an ERROR "
               "text), else 0.", ("inst_id", "dest_name"), source="1 if a destination in use (VALID_NOW 'YES') has STATUS ERROR, DISABLED, BAD PARAM or FULL or an ERROR text; DEFERRED (switched off on purpose) and destinations not valid in the current role are 0", measure='1/0',
               views=(ARCHIVE_DEST.name,)),
        Family("oracle_archive_dest_log_sequence", "gauge",
               "Last log sequence archived to the destination (GV$ARCHIVE_DEST.LOG_SEQUENCE).",
               ("inst_id", "dest_name"), source='LOG_SEQUENCE: last log sequence archived there; a remote destination behind the local one shows here', measure='sequence',
               views=(ARCHIVE_DEST.name,)),
        Family("oracle_archive_dest_delay_seconds", "gauge",
               "Apply delay configured for the destination, seconds (GV$ARCHIVE_DEST.DELAY_MINS; 0 under real-time "
               "apply).", ("inst_id", "dest_name"),
               source="DELAY_MINS x 60 (the DELAY attribute of LOG_ARCHIVE_DEST_n, DelayMins in the broker); 0 when "
                      "GV$ARCHIVE_DEST_STATUS.RECOVERY_MODE of the destination says REAL TIME APPLY, which ignores "
                      "DELAY. The standby itself exports the delay in force as oracle_dataguard_apply_delay_seconds"),
        Family("oracle_archive_dest_gap_status", "gauge",
               "Redo gap of the destination as a code: 0 NO GAP, 1 LOG SWITCH GAP, 2 RESOLVABLE GAP, 3 UNRESOLVABLE "
               "GAP, 4 LOCALLY UNRESOLVABLE GAP (GV$ARCHIVE_DEST_STATUS.GAP_STATUS).", ("inst_id", "dest_name"),
               source="GV$ARCHIVE_DEST_STATUS.GAP_STATUS (11.2+) as a code: 0 NO GAP, 1 LOG SWITCH GAP (the log in "
                      "flight at a switch: transient), 2 RESOLVABLE GAP (redo the destination lacks, still here to "
                      "send), 3 UNRESOLVABLE GAP (redo the destination lacks and this database no longer has: restore "
                      "or re-instantiate), 4 LOCALLY UNRESOLVABLE GAP; no sample where GAP_STATUS is NULL (local "
                      "destinations)", since="11.2", measure="code 0-4", views=(ARCHIVE_DEST_STATUS.name,)),
    ), doc="Only configured destinations (`STATUS <> 'INACTIVE'`) are selected.", title='Archive destinations')
NAME, VIEWS = SPEC.name, SPEC.reads

ERROR_STATUSES = frozenset({"ERROR", "DISABLED", "BAD PARAM", "FULL"})
# GV$ARCHIVE_DEST_STATUS.GAP_STATUS -> oracle_archive_dest_gap_status (Oracle Database Reference)
GAP_CODES = {"NO GAP": 0.0, "LOG SWITCH GAP": 1.0, "RESOLVABLE GAP": 2.0, "UNRESOLVABLE GAP": 3.0,
             "LOCALLY UNRESOLVABLE GAP": 4.0}
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
    delay = SPEC.family("oracle_archive_dest_delay_seconds")
    seen: set[tuple[str, str]] = set()
    dest_status = {(inst(r), num(r.get("DEST_ID"))): r for r in snapshot.rows("GV$ARCHIVE_DEST_STATUS")}
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
        minutes = num(row.get("DELAY_MINS"))
        if minutes is not None:
            mode = clean((dest_status.get((i, num(row.get("DEST_ID")))) or {}).get("RECOVERY_MODE")).upper()
            delay.add_metric([i, name], 0.0 if "REAL TIME APPLY" in mode else minutes * 60.0)
    gap = SPEC.family("oracle_archive_dest_gap_status")
    done: set[tuple[str, str]] = set()
    for row in sorted(dest_status.values(), key=lambda r: (num(r.get("INST_ID")) or 0, num(r.get("DEST_ID")) or 0)):
        i, name = inst(row), clean(row.get("DEST_NAME"))
        code = GAP_CODES.get(clean(row.get("GAP_STATUS")).upper())
        if i is None or not name or code is None or (i, name) in done:
            continue
        done.add((i, name))
        gap.add_metric([i, name], code)
    yield from emit([info, error, seq, delay, gap])
