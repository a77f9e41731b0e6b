"""Sessions and instance-health collectors: values computed from rows shaped like the real views.

Failure cases first (what the on-call engineer fears): a view that is missing
(ORA-00942 on an older release or inside a PDB) costs only its own metrics, an
UNLIMITED limit makes no made-up limit series, a lag of more than a day is
parsed with its days, a lag that stops being computed is visible (not a zero),
a hang is visible while no wait completes, and the session series stay bounded.
"""
from __future__ import annotations

import datetime as dt
import json

import pytest

from oracle_exporter.collectors import _health, archive_dest, asm, dataguard, recovery_area, resource_limits
from oracle_exporter.collectors import sessions, tablespaces
from oracle_exporter.snapshot import Snapshot

MODULES = (sessions, resource_limits, tablespaces, recovery_area, dataguard, archive_dest, asm)


def snap(views: dict, errors: dict | None = None) -> Snapshot:
    obj = {"time": "2025-03-11T09:00:00Z", "database": "db1", "views": views}
    if errors:
        obj["errors"] = errors
    return Snapshot.from_obj(json.loads(json.dumps(obj)))


def samples(module, snapshot, settings=None) -> dict:
    out = {}
    for family in module.collect(snapshot, settings if settings is not None else object()):
        for s in family.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in out, f"duplicate series {key}"
            out[key] = s.value
    return out


def val(found: dict, name: str, **labels) -> float:
    return found[(name, tuple(sorted(labels.items())))]


def names(found: dict) -> set[str]:
    return {k[0] for k in found}


def session(inst=1, sid=100, type_="USER", status="ACTIVE", state="WAITING", event="db file sequential read",
            wait_class="User I/O", micro=5000, blocking="NO HOLDER", b_inst=None, b_sid=None) -> dict:
    return {"INST_ID": inst, "SID": sid, "TYPE": type_, "STATUS": status, "STATE": state, "EVENT": event,
            "WAIT_CLASS": wait_class, "WAIT_TIME_MICRO": micro, "BLOCKING_SESSION_STATUS": blocking,
            "BLOCKING_INSTANCE": b_inst, "BLOCKING_SESSION": b_sid}


# --------------------------------------------------------------------------- failure cases

@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.NAME)
def test_missing_view_costs_only_its_own_metrics(module):
    """ORA-00942 (view missing on an older release, or not granted inside a PDB): the
    view is in errors, not in views; the collector yields nothing and does not raise."""
    errors = {v: "ORA-00942: table or view does not exist" for v in module.VIEWS}
    assert samples(module, snap({}, errors)) == {}
    assert samples(module, snap({v: [] for v in module.VIEWS})) == {} or module is sessions


def test_sessions_with_empty_view_still_report_zero_for_known_instances():
    s = snap({"GV$SESSION": [], "GV$INSTANCE": [{"INST_ID": 1}, {"INST_ID": 2}]})
    found = samples(sessions, s)
    for i in ("1", "2"):
        assert val(found, "oracle_sessions_blocked", inst_id=i) == 0
        assert val(found, "oracle_sessions_blocked_longest_seconds", inst_id=i) == 0
        assert val(found, "oracle_sessions_active", inst_id=i, wait_class="CPU") == 0
    assert "oracle_sessions_waiting" not in names(found)


def test_commit_hang_is_visible_while_no_wait_completes():
    """LGWR stuck in 'log file parallel write' for 95 s, 40 committers stuck in 'log file sync'
    for up to 94 s: the longest wait in progress shows it (GV$SYSTEM_EVENT cannot)."""
    rows = [session(sid=3, type_="BACKGROUND", event="log file parallel write", wait_class="System I/O",
                    micro=95_000_000)]
    rows += [session(sid=200 + k, event="log file sync", wait_class="Commit", micro=94_000_000 - k * 1_000_000)
             for k in range(40)]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    assert val(found, "oracle_sessions_waiting", inst_id="1", event="log file sync", wait_class="Commit") == 40
    assert val(found, "oracle_sessions_waiting_longest_seconds", inst_id="1", event="log file sync",
               wait_class="Commit") == 94.0
    assert val(found, "oracle_sessions_waiting_longest_seconds", inst_id="1", event="log file parallel write",
               wait_class="System I/O") == 95.0
    # the background LGWR is waiting, but the active-session profile counts foreground sessions only
    assert val(found, "oracle_sessions_active", inst_id="1", wait_class="Commit") == 40
    assert ("oracle_sessions_active", (("inst_id", "1"), ("wait_class", "System I/O"))) not in found


def test_idle_waits_are_never_exported():
    rows = [session(sid=1, type_="BACKGROUND", event="rdbms ipc message", wait_class="Idle", micro=3_000_000),
            session(sid=2, status="INACTIVE", event="SQL*Net message from client", wait_class="Idle",
                    micro=900_000_000),
            session(sid=3, event="PX Deq: Execution Msg", wait_class="Idle")]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    assert "oracle_sessions_waiting" not in names(found)
    assert {k for k in found if k[0] == "oracle_sessions_active"} == {
        ("oracle_sessions_active", (("inst_id", "1"), ("wait_class", "CPU")))}
    assert val(found, "oracle_sessions_active", inst_id="1", wait_class="CPU") == 0


def test_session_events_are_bounded_and_key_events_kept():
    """60 distinct events waited by a few sessions each: at most session_events_max events per
    instance plus the key commit events; every session is still counted (under "other")."""
    rows, sid = [], 1
    for k in range(60):
        for _ in range(1 + k % 3):
            rows.append(session(sid=sid, event=f"enq: XX - event {k:02d}", wait_class="Application",
                                micro=1000 * sid))
            sid += 1
    rows.append(session(sid=sid, event="log file sync", wait_class="Commit", micro=1))   # one waiter, short
    settings = type("S", (), {"session_events_max": 5})()
    found = samples(sessions, snap({"GV$SESSION": rows}), settings)
    waiting = {dict(k[1])["event"]: v for k, v in found.items() if k[0] == "oracle_sessions_waiting"}
    assert len(waiting) == 5 + 1            # 4 top events + the key event log file sync + "other"
    assert "log file sync" in waiting and "other" in waiting
    assert sum(waiting.values()) == len(rows)
    other_longest = val(found, "oracle_sessions_waiting_longest_seconds", inst_id="1", event="other",
                        wait_class="other")
    assert other_longest == max(r["WAIT_TIME_MICRO"] for r in rows
                                if r["EVENT"] not in waiting) / 1e6
    kept = [e for e in waiting if e not in ("other", "log file sync")]
    assert all(int(e[-2:]) % 3 == 2 for e in kept)     # the events with 3 waiters each


def test_default_bound_on_a_busy_instance():
    rows = [session(sid=k, event=f"event {k}", wait_class="Other") for k in range(500)]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    waiting = [k for k in found if k[0] == "oracle_sessions_waiting"]
    assert len(waiting) == sessions.DEFAULT_EVENTS_MAX + 1


def test_blocked_sessions_and_longest_block():
    rows = [session(sid=10, event="enq: TX - row lock contention", wait_class="Application", micro=42_500_000,
                    blocking="VALID", b_inst=2, b_sid=77),
            session(sid=11, event="enq: TX - row lock contention", wait_class="Application", micro=3_000_000,
                    blocking="VALID", b_inst=1, b_sid=10),
            session(inst=2, sid=77, status="INACTIVE", state="WAITING", event="SQL*Net message from client",
                    wait_class="Idle", micro=50_000_000, blocking="NO HOLDER"),
            session(inst=2, sid=78, state="WAITED SHORT TIME", event="db file sequential read", micro=12,
                    blocking="UNKNOWN")]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    assert val(found, "oracle_sessions_blocked", inst_id="1") == 2
    assert val(found, "oracle_sessions_blocked_longest_seconds", inst_id="1") == 42.5
    assert val(found, "oracle_sessions_blocked", inst_id="2") == 0           # the idle blocker is not blocked
    assert val(found, "oracle_sessions_active", inst_id="2", wait_class="CPU") == 1   # WAITED ...: on CPU
    assert ("oracle_sessions_waiting", (("event", "db file sequential read"), ("inst_id", "2"),
                                        ("wait_class", "User I/O"))) not in found


def test_session_values_as_oracle_returns_them():
    """Numbers as strings/floats, padded text, a NULL WAIT_TIME_MICRO, a repeated row."""
    rows = [session(sid="5", inst="1", status="ACTIVE ", state="WAITING", micro="2500000.0"),
            session(sid=5.0, inst=1.0, micro=1),   # same session repeated (per container): counted once
            session(sid=6, state="WAITING", micro=None)]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    assert val(found, "oracle_sessions_waiting", inst_id="1", event="db file sequential read",
               wait_class="User I/O") == 2
    assert val(found, "oracle_sessions_waiting_longest_seconds", inst_id="1", event="db file sequential read",
               wait_class="User I/O") == 2.5


def test_unlimited_resource_has_no_limit_series():
    rows = [{"INST_ID": 1, "RESOURCE_NAME": "processes", "CURRENT_UTILIZATION": 1470, "MAX_UTILIZATION": 1496,
             "LIMIT_VALUE": "      1500"},
            {"INST_ID": 1, "RESOURCE_NAME": "gcs_resources", "CURRENT_UTILIZATION": 0, "MAX_UTILIZATION": 0,
             "LIMIT_VALUE": " UNLIMITED"},
            {"INST_ID": 1, "RESOURCE_NAME": "enqueue_locks ", "CURRENT_UTILIZATION": 30, "MAX_UTILIZATION": 61,
             "LIMIT_VALUE": None},
            {"INST_ID": 2, "RESOURCE_NAME": "sessions", "CURRENT_UTILIZATION": "2210", "MAX_UTILIZATION": 2250,
             "LIMIT_VALUE": "2272"}]
    found = samples(resource_limits, snap({"GV$RESOURCE_LIMIT": rows}))
    assert val(found, "oracle_resource_limit", inst_id="1", resource="processes") == 1500
    assert val(found, "oracle_resource_current_utilization", inst_id="1", resource="processes") == 1470
    assert val(found, "oracle_resource_max_utilization", inst_id="1", resource="processes") == 1496
    assert val(found, "oracle_resource_current_utilization", inst_id="1", resource="gcs_resources") == 0
    assert ("oracle_resource_limit", (("inst_id", "1"), ("resource", "gcs_resources"))) not in found
    assert ("oracle_resource_limit", (("inst_id", "1"), ("resource", "enqueue_locks"))) not in found
    assert val(found, "oracle_resource_limit", inst_id="2", resource="sessions") == 2272
    assert val(found, "oracle_resource_current_utilization", inst_id="2", resource="sessions") == 2210


def test_resource_rows_per_container_lowest_wins_never_summed():
    rows = [{"INST_ID": 1, "RESOURCE_NAME": "processes", "CURRENT_UTILIZATION": 40, "MAX_UTILIZATION": 50,
             "LIMIT_VALUE": "300", "CON_ID": 3},
            {"INST_ID": 1, "RESOURCE_NAME": "processes", "CURRENT_UTILIZATION": 290, "MAX_UTILIZATION": 295,
             "LIMIT_VALUE": "300", "CON_ID": 0}]
    found = samples(resource_limits, snap({"GV$RESOURCE_LIMIT": rows}))
    assert val(found, "oracle_resource_current_utilization", inst_id="1", resource="processes") == 290


@pytest.mark.parametrize("text,seconds", [
    ("+00 00:00:05", 5), ("+00 00:40:00", 2400), ("+01 02:03:04", 86400 + 7384), ("+12 00:00:00", 12 * 86400),
    ("+000 00:00:05.250", 5.25), ("-00 00:00:01", -1), (" +00 01:00:00 ", 3600), (7.5, 7.5),
    ("", None), (None, None), ("n/a", None), ("+00 25:00:00", None), ("+00 00:61:00", None),
])
def test_interval_strings(text, seconds):
    assert _health.interval_seconds(text) == seconds


def dg_row(name, value, computed="03/11/2025 09:00:00", datum="03/11/2025 08:59:59", unit="day(2) to second(0) "
                                                                                           "interval"):
    return {"NAME": name, "VALUE": value, "UNIT": unit, "TIME_COMPUTED": computed, "DATUM_TIME": datum}


STANDBY = [{"DBID": 1, "NAME": "ODS", "DB_UNIQUE_NAME": "ODS_SITE2", "DATABASE_ROLE": "PHYSICAL STANDBY",
            "LOG_MODE": "ARCHIVELOG", "OPEN_MODE": "READ ONLY WITH APPLY"}]


def test_dataguard_lag_with_days_and_apply_finish():
    rows = [dg_row("transport lag", "+00 00:00:05"), dg_row("apply lag", "+01 02:00:00"),
            dg_row("apply finish time", "+00 00:12:30.000"), dg_row("estimated startup time", "9", unit="second")]
    found = samples(dataguard, snap({"V$DATAGUARD_STATS": rows, "V$DATABASE": STANDBY}))
    assert val(found, "oracle_dataguard_lag_seconds", kind="transport") == 5
    assert val(found, "oracle_dataguard_lag_seconds", kind="apply") == 93600
    assert val(found, "oracle_dataguard_lag_computed", kind="apply") == 1
    assert val(found, "oracle_dataguard_apply_finish_seconds") == 750
    assert val(found, "oracle_dataguard_lag_datum_age_seconds", kind="transport") == 1


def test_dataguard_lag_that_stops_being_computed_is_not_a_zero():
    """Transport broke: VALUE NULL for the transport lag and DATUM_TIME frozen 40 minutes back
    while the apply lag still shows a small, stale value."""
    rows = [dg_row("transport lag", None, datum="03/11/2025 08:20:00"),
            dg_row("apply lag", "+00 00:00:02", datum="03/11/2025 08:20:00")]
    found = samples(dataguard, snap({"V$DATAGUARD_STATS": rows, "V$DATABASE": STANDBY}))
    assert val(found, "oracle_dataguard_lag_computed", kind="transport") == 0
    assert ("oracle_dataguard_lag_seconds", (("kind", "transport"),)) not in found
    assert val(found, "oracle_dataguard_lag_datum_age_seconds", kind="apply") == 2400
    assert val(found, "oracle_dataguard_lag_datum_age_seconds", kind="transport") == 2400


def test_dataguard_nothing_on_a_primary():
    primary = [dict(STANDBY[0], DATABASE_ROLE="PRIMARY")]
    rows = [dg_row("transport lag", None), dg_row("apply lag", None)]
    assert samples(dataguard, snap({"V$DATAGUARD_STATS": rows, "V$DATABASE": primary})) == {}


def test_dataguard_without_datum_time_column():
    rows = [{"NAME": "apply lag", "VALUE": "+00 00:00:09", "UNIT": "day(2) to second(0) interval",
             "TIME_COMPUTED": "03/11/2025 09:00:00"}]
    found = samples(dataguard, snap({"V$DATAGUARD_STATS": rows, "V$DATABASE": STANDBY}))
    assert found == {("oracle_dataguard_lag_seconds", (("kind", "apply"),)): 9,
                     ("oracle_dataguard_lag_computed", (("kind", "apply"),)): 1,
                     ("oracle_dataguard_snapshot_standby", ()): 0}      # a physical standby (issue 22)


CDB_USAGE = [
    {"CON_ID": 1, "TABLESPACE_NAME": "SYSTEM", "USED_SPACE": 120_000, "TABLESPACE_SIZE": 4_194_302},
    {"CON_ID": 1, "TABLESPACE_NAME": "UNDOTBS1", "USED_SPACE": 1_000, "TABLESPACE_SIZE": 4_194_302},
    {"CON_ID": 3, "TABLESPACE_NAME": "USERS", "USED_SPACE": 3_900_000, "TABLESPACE_SIZE": 4_000_000},
    {"CON_ID": 3, "TABLESPACE_NAME": "TEMP", "USED_SPACE": 0, "TABLESPACE_SIZE": 4_194_302},
    {"CON_ID": 3, "TABLESPACE_NAME": "BIG16K", "USED_SPACE": 1000, "TABLESPACE_SIZE": 2000},
    {"CON_ID": 4, "TABLESPACE_NAME": "USERS", "USED_SPACE": 10, "TABLESPACE_SIZE": 100},
]
CDB_SPACES = [
    {"CON_ID": 1, "TABLESPACE_NAME": "SYSTEM", "BLOCK_SIZE": 8192, "CONTENTS": "PERMANENT"},
    {"CON_ID": 1, "TABLESPACE_NAME": "UNDOTBS1", "BLOCK_SIZE": 8192, "CONTENTS": "UNDO"},
    {"CON_ID": 3, "TABLESPACE_NAME": "USERS", "BLOCK_SIZE": 8192, "CONTENTS": "PERMANENT"},
    {"CON_ID": 3, "TABLESPACE_NAME": "TEMP", "BLOCK_SIZE": 8192, "CONTENTS": "TEMPORARY"},
    {"CON_ID": 3, "TABLESPACE_NAME": "BIG16K", "BLOCK_SIZE": 16384, "CONTENTS": "PERMANENT"},
    {"CON_ID": 4, "TABLESPACE_NAME": "USERS", "BLOCK_SIZE": 8192, "CONTENTS": "PERMANENT"},
]
CONTAINERS = [{"CON_ID": 1, "NAME": "CDB$ROOT"}, {"CON_ID": 2, "NAME": "PDB$SEED"}, {"CON_ID": 3, "NAME": "SALES"}]


def test_tablespaces_in_a_cdb_root_bytes_per_block_size():
    found = samples(tablespaces, snap({"CDB_TABLESPACE_USAGE_METRICS": CDB_USAGE, "CDB_TABLESPACES": CDB_SPACES,
                                       "V$CONTAINERS": CONTAINERS}))
    lab = dict(container="SALES", tablespace="USERS", contents="PERMANENT")
    assert val(found, "oracle_tablespace_used_bytes", **lab) == 3_900_000 * 8192
    assert val(found, "oracle_tablespace_max_bytes", **lab) == 4_000_000 * 8192
    assert val(found, "oracle_tablespace_used_bytes", container="SALES", tablespace="BIG16K",
               contents="PERMANENT") == 1000 * 16384          # its own block size, not db_block_size
    assert val(found, "oracle_tablespace_used_bytes", container="CDB$ROOT", tablespace="UNDOTBS1",
               contents="UNDO") == 1000 * 8192
    assert val(found, "oracle_tablespace_max_bytes", container="SALES", tablespace="TEMP",
               contents="TEMPORARY") == 4_194_302 * 8192
    # a container missing from V$CONTAINERS (opened after it was read) is named by its number
    assert val(found, "oracle_tablespace_used_bytes", container="4", tablespace="USERS",
               contents="PERMANENT") == 10 * 8192
    assert len([k for k in found if k[0] == "oracle_tablespace_used_bytes"]) == 6


def test_tablespaces_outside_a_cdb_and_block_size_fallback():
    usage = [{"TABLESPACE_NAME": "USERS", "USED_SPACE": 50, "TABLESPACE_SIZE": 100},
             {"TABLESPACE_NAME": "NOMETA", "USED_SPACE": 5, "TABLESPACE_SIZE": 10},
             {"TABLESPACE_NAME": "NULLS", "USED_SPACE": None, "TABLESPACE_SIZE": 10}]
    spaces = [{"TABLESPACE_NAME": "USERS", "BLOCK_SIZE": 8192, "CONTENTS": "PERMANENT"}]
    params = [{"INST_ID": 1, "NAME": "db_block_size", "VALUE": "4096"}]
    found = samples(tablespaces, snap({"DBA_TABLESPACE_USAGE_METRICS": usage, "DBA_TABLESPACES": spaces,
                                       "GV$SYSTEM_PARAMETER": params}))
    assert val(found, "oracle_tablespace_used_bytes", container="", tablespace="USERS", contents="PERMANENT") \
        == 50 * 8192
    assert val(found, "oracle_tablespace_used_bytes", container="", tablespace="NOMETA", contents="") == 5 * 4096
    assert not [k for k in found if dict(k[1])["tablespace"] == "NULLS"]
    # no block size anywhere: no made-up bytes
    assert samples(tablespaces, snap({"DBA_TABLESPACE_USAGE_METRICS": usage[1:2]})) == {}


def test_recovery_area():
    row = {"NAME": "+FRA", "SPACE_LIMIT": 500 * 2**30, "SPACE_USED": 480 * 2**30,
           "SPACE_RECLAIMABLE": 100 * 2**30, "NUMBER_OF_FILES": 1712}
    found = samples(recovery_area, snap({"V$RECOVERY_FILE_DEST": [row]}))
    assert found == {("oracle_recovery_area_limit_bytes", ()): 500 * 2**30,
                     ("oracle_recovery_area_used_bytes", ()): 480 * 2**30,
                     ("oracle_recovery_area_reclaimable_bytes", ()): 100 * 2**30,
                     ("oracle_recovery_area_files", ()): 1712,
                     ("oracle_recovery_area_info", (("destination", "+FRA"), ("diskgroup", "FRA"))): 1}
    # issue 23: the ASM disk group the FRA lives in (its reclaimable space is Oracle's to delete)
    for name, group in (("+fra/ODS", "FRA"), ("/u03/fra", "")):
        found = samples(recovery_area, snap({"V$RECOVERY_FILE_DEST": [{**row, "NAME": name}]}))
        assert found[("oracle_recovery_area_info", (("destination", name), ("diskgroup", group)))] == 1
    unset = {"NAME": None, "SPACE_LIMIT": 0, "SPACE_USED": 0, "SPACE_RECLAIMABLE": 0, "NUMBER_OF_FILES": 0}
    assert samples(recovery_area, snap({"V$RECOVERY_FILE_DEST": [unset]})) == {}


def test_archive_destinations():
    rows = [{"INST_ID": 1, "DEST_ID": 1, "DEST_NAME": "LOG_ARCHIVE_DEST_1", "STATUS": "VALID", "TARGET": "PRIMARY",
             "DESTINATION": "USE_DB_RECOVERY_FILE_DEST", "VALID_NOW": "YES", "ERROR": None, "LOG_SEQUENCE": 48213},
            {"INST_ID": 1, "DEST_ID": 2, "DEST_NAME": "LOG_ARCHIVE_DEST_2", "STATUS": "ERROR", "TARGET": "STANDBY",
             "DESTINATION": "ods_site2", "VALID_NOW": "YES",
             "ERROR": "ORA-12541: TNS:no listener", "LOG_SEQUENCE": 48190},
            {"INST_ID": 1, "DEST_ID": 3, "DEST_NAME": "LOG_ARCHIVE_DEST_3", "STATUS": "DEFERRED",
             "TARGET": "STANDBY", "DESTINATION": "ods_site3", "VALID_NOW": "YES", "ERROR": "", "LOG_SEQUENCE": 0},
            {"INST_ID": 1, "DEST_ID": 4, "DEST_NAME": "LOG_ARCHIVE_DEST_4", "STATUS": "ERROR", "TARGET": "STANDBY",
             "DESTINATION": "far_sync", "VALID_NOW": "WRONG VALID_ROLE", "ERROR": "ORA-16009", "LOG_SEQUENCE": 0},
            {"INST_ID": 1, "DEST_ID": 5, "DEST_NAME": "LOG_ARCHIVE_DEST_5", "STATUS": "INACTIVE", "TARGET": "PRIMARY",
             "DESTINATION": None, "VALID_NOW": "INACTIVE", "ERROR": None, "LOG_SEQUENCE": 0}]
    found = samples(archive_dest, snap({"GV$ARCHIVE_DEST": rows}))
    assert val(found, "oracle_archive_dest_error", inst_id="1", dest_name="LOG_ARCHIVE_DEST_1") == 0
    assert val(found, "oracle_archive_dest_error", inst_id="1", dest_name="LOG_ARCHIVE_DEST_2") == 1
    assert val(found, "oracle_archive_dest_error", inst_id="1", dest_name="LOG_ARCHIVE_DEST_3") == 0
    assert val(found, "oracle_archive_dest_error", inst_id="1", dest_name="LOG_ARCHIVE_DEST_4") == 0
    assert val(found, "oracle_archive_dest_info", inst_id="1", dest_name="LOG_ARCHIVE_DEST_2", target="STANDBY",
               destination="ods_site2", status="ERROR", valid_now="YES", error="ORA-12541") == 1
    assert val(found, "oracle_archive_dest_log_sequence", inst_id="1", dest_name="LOG_ARCHIVE_DEST_2") == 48190
    assert not [k for k in found if dict(k[1]).get("dest_name") == "LOG_ARCHIVE_DEST_5"]


def test_asm_diskgroups():
    rows = [{"GROUP_NUMBER": 1, "NAME": "DATA", "STATE": "CONNECTED", "TYPE": "NORMAL", "TOTAL_MB": 4_096_000,
             "FREE_MB": 200_000, "REQUIRED_MIRROR_FREE_MB": 409_600, "USABLE_FILE_MB": -104_800,
             "OFFLINE_DISKS": 1},
            {"GROUP_NUMBER": 2, "NAME": "FRA", "STATE": "CONNECTED", "TYPE": "EXTERN", "TOTAL_MB": 1_024_000,
             "FREE_MB": 512_000, "REQUIRED_MIRROR_FREE_MB": 0, "USABLE_FILE_MB": 512_000, "OFFLINE_DISKS": 0}]
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": rows}))
    assert val(found, "oracle_asm_diskgroup_total_bytes", diskgroup="DATA") == 4_096_000 * 2**20
    assert val(found, "oracle_asm_diskgroup_usable_file_bytes", diskgroup="DATA") == -104_800 * 2**20
    assert val(found, "oracle_asm_diskgroup_offline_disks", diskgroup="DATA") == 1
    assert val(found, "oracle_asm_diskgroup_info", diskgroup="FRA", state="CONNECTED", type="EXTERN", asm_cluster="",
               space_basis="usable_file") == 1


def test_host_local_dates_use_the_dual_offset():
    s = snap({"DUAL": [{"SYSTIMESTAMP": "2025-03-11T10:00:00.123456+01:00"}]})
    offset = _health.host_utc_offset(s)
    assert offset == dt.timedelta(hours=1)
    assert _health.local_to_unix("2025-03-11T10:00:00", offset) == dt.datetime(
        2025, 3, 11, 9, 0, tzinfo=dt.timezone.utc).timestamp()
    assert _health.local_to_unix("03/11/2025 10:00:00", offset) == _health.local_to_unix("2025-03-11T10:00:00",
                                                                                          offset)
    assert _health.host_utc_offset(snap({})) is None


@pytest.mark.parametrize("text,expected", [
    ("11/14/2010 20:00:19", dt.datetime(2010, 11, 14, 20, 0, 19)),        # 11.2 onwards
    ("24-JUL-2007 15:31:13", dt.datetime(2007, 7, 24, 15, 31, 13)),       # 10.2
    ("2025-03-11T10:00:00+05:30", dt.datetime(2025, 3, 11, 10, 0, 0)),    # wall clock kept
    ("13/40/2010 20:00:19", None), ("24-XYZ-2007 15:31:13", None), ("", None), (None, None),
])
def test_standby_local_time_formats(text, expected):
    assert _health.local_wallclock(text) == expected


def test_host_local_dates_read_exactly_as_the_wall_clock_rule_reads_them():
    """local_to_unix reads ISO dates without building aware datetimes: the very same float
    (bit for bit, so the exposition's bytes stay the same) as local_wallclock minus the offset
    taken as UTC, for every form a recording or a live fetch holds; garbage stays None, and so does a
    date the offset takes out of the calendar (0001-01-01 east of UTC: the rule raises OverflowError)."""
    def rule(value, offset):
        wall = _health.local_wallclock(value)
        if wall is None:
            return None
        return (wall - (offset or dt.timedelta(0))).replace(tzinfo=dt.timezone.utc).timestamp()

    values = ["2025-03-11T10:00:00", "2025-03-11T10:00:00.123456", "2025-03-11 10:00:00", "2025-03-11",
              "2025-03-11T10:00:00Z", "2025-03-11T10:00:00.5+05:30", " 2025-03-11T10:00:00 ", "2025-03-11T10:00:00 ",
              "1969-12-31T23:59:59.999999", "0001-01-01T00:00:00", "9999-12-31T23:59:59", "20250311T100000",
              "2025-13-01T00:00:00", "2025x", "2025", "11/14/2010 20:00:19", "24-JUL-2007 15:31:13",
              "24-jul-2007 15:31:13", "13/40/2010 20:00:19", "", "  ", None, 5, dt.datetime(2025, 3, 11, 10, 0, 0, 7),
              dt.datetime(2025, 3, 11, 10, tzinfo=dt.timezone(dt.timedelta(hours=-3)))]
    offsets = [None, dt.timedelta(0), dt.timedelta(hours=1), dt.timedelta(hours=-5, minutes=-30),
               dt.timedelta(hours=13, minutes=45)]
    for value in values:
        for offset in offsets:
            try:
                want = rule(value, offset)
            except OverflowError:       # out of the calendar once the offset is taken off: unknown, as NULL
                assert _health.local_to_unix(value, offset) is None, (value, offset)
                continue
            got = _health.local_to_unix(value, offset)
            assert repr(got) == repr(want), (value, offset)
    assert _health.local_to_unix("2025-03-11T10:00:00", dt.timedelta(hours=1)) == 1741683600.0
