"""Issue 22 (points 4-6): ASM space by redundancy type, tablespace status and release paths,
blocked sessions by what blocks them. Pure logic on rows shaped like the real views."""
from __future__ import annotations

import json

from oracle_exporter.collectors import asm, sessions, tablespaces
from oracle_exporter.snapshot import Snapshot

MiB = 2**20


def snap(views: dict) -> Snapshot:
    return Snapshot.from_obj(json.loads(json.dumps({"time": "2025-03-11T09:00:00Z", "database": "db1",
                                                    "views": views})))


def samples(module, snapshot, settings=None) -> dict:
    out = {}
    for family in module.collect(snapshot, settings if settings is not None else object()):
        for s in family.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in out, f"duplicate series {key}"
            out[key] = s.value
    return out


def series(found: dict, name: str) -> dict:
    """{labels dict as tuple: value} of one metric."""
    return {k[1]: v for k, v in found.items() if k[0] == name}


def one(found: dict, name: str, **labels) -> float:
    return found[(name, tuple(sorted(labels.items())))]


# ------------------------------------------------------------------------------------ ASM
def dg(number, name, type_, total, free, required, usable, offline=0, state="CONNECTED"):
    return {"GROUP_NUMBER": number, "NAME": name, "STATE": state, "TYPE": type_, "TOTAL_MB": total,
            "FREE_MB": free, "REQUIRED_MIRROR_FREE_MB": required, "USABLE_FILE_MB": usable,
            "OFFLINE_DISKS": offline}


def disks(number, failgroups, per_fg=4, type_="REGULAR"):
    rows, n = [], 0
    for fg in failgroups:
        for _ in range(per_fg):
            rows.append({"GROUP_NUMBER": number, "DISK_NUMBER": n, "FAILGROUP": fg, "FAILGROUP_TYPE": type_})
            n += 1
    return rows


def test_flex_group_usable_zero_is_no_value_and_judged_on_raw_free():
    # 18c FLEX group, 60 % free: Oracle reports USABLE_FILE_MB 0 (not computed for FLEX)
    rows = [dg(1, "DATA", "FLEX", 10_000_000, 6_000_000, 0, 0)]
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": rows, "V$ASM_DISK_STAT": disks(1, ["FG1", "FG2", "FG3"]),
                               "V$ASM_CLIENT": [{"GROUP_NUMBER": 1, "CLUSTER_NAME": "prodclu", "STATUS": "CONNECTED"}]}))
    assert not series(found, "oracle_asm_diskgroup_usable_file_bytes"), "a FLEX group's 0 is not a usable space"
    assert not series(found, "oracle_asm_diskgroup_mirror_copies")
    assert one(found, "oracle_asm_diskgroup_file_space_bytes", diskgroup="DATA") == 6_000_000 * MiB
    assert one(found, "oracle_asm_diskgroup_info", diskgroup="DATA", state="CONNECTED", type="FLEX",
               asm_cluster="prodclu", space_basis="raw_free") == 1


def test_extended_group_judged_on_raw_free():
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": [dg(3, "XDATA", "EXTEND", 4_000_000, 300_000, 0, 0)]}))
    assert one(found, "oracle_asm_diskgroup_file_space_bytes", diskgroup="XDATA") == 300_000 * MiB
    assert not series(found, "oracle_asm_diskgroup_usable_file_bytes")


def test_high_redundancy_with_three_failure_groups_at_5_percent_use_has_room():
    # HIGH, 3 failure groups of 1 TB, 5 % used. Oracle's reserve is two failure groups (2/3 of the
    # group): USABLE_FILE_MB = (2_850_000 - 2_000_000) / 3 = 283_333, 9.4 % of the size: the old rule
    # (usable < 10 %) fired. With 3 failure groups no loss can be re-mirrored in HIGH anyway.
    rows = [dg(1, "DATA", "HIGH", 3_000_000, 2_850_000, 2_000_000, 283_333)]
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": rows, "V$ASM_DISK_STAT": disks(1, ["A", "B", "C"])}))
    assert one(found, "oracle_asm_diskgroup_failure_groups", diskgroup="DATA") == 3
    assert one(found, "oracle_asm_diskgroup_mirror_copies", diskgroup="DATA") == 3
    left = one(found, "oracle_asm_diskgroup_file_space_bytes", diskgroup="DATA")
    assert left == 950_000 * MiB
    assert left / (3_000_000 * MiB) > 0.3            # far above the 10 % ticket
    assert one(found, "oracle_asm_diskgroup_usable_file_bytes", diskgroup="DATA") == 283_333 * MiB  # Oracle's, kept


def test_high_redundancy_with_five_failure_groups_uses_oracles_usable():
    rows = [dg(1, "DATA", "HIGH", 5_000_000, 1_500_000, 2_000_000, -166_667)]
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": rows,
                               "V$ASM_DISK_STAT": disks(1, list("ABCDE")) + disks(1, ["Q"], 1, "QUORUM")}))
    assert one(found, "oracle_asm_diskgroup_failure_groups", diskgroup="DATA") == 5   # quorum not counted
    assert one(found, "oracle_asm_diskgroup_file_space_bytes", diskgroup="DATA") == -166_667 * MiB
    info = series(found, "oracle_asm_diskgroup_info")
    assert [dict(k)["space_basis"] for k in info] == ["usable_file"]


def test_failure_groups_unknown_keeps_oracles_usable_and_cluster_from_host():
    rows = [dg(2, "FRA", "EXTERN", 1_000_000, 400_000, 0, 400_000)]
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": rows,
                               "GV$INSTANCE": [{"INST_ID": 2, "HOST_NAME": "db2"}, {"INST_ID": 1, "HOST_NAME": "db1"}]}))
    assert one(found, "oracle_asm_diskgroup_file_space_bytes", diskgroup="FRA") == 400_000 * MiB
    assert one(found, "oracle_asm_diskgroup_mirror_copies", diskgroup="FRA") == 1
    assert one(found, "oracle_asm_diskgroup_info", diskgroup="FRA", state="CONNECTED", type="EXTERN",
               asm_cluster="db1", space_basis="usable_file") == 1
    assert not series(found, "oracle_asm_diskgroup_failure_groups")


def test_asm_11g_rows_without_failgroup_type_or_cluster_name():
    rows = [dg(1, "DATA", "NORMAL", 2_000_000, 900_000, 1_000_000, -50_000)]
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": rows,
                               "V$ASM_DISK_STAT": [{"GROUP_NUMBER": 1, "DISK_NUMBER": i, "FAILGROUP": f"FG{i % 2}"}
                                                   for i in range(4)],
                               "V$ASM_CLIENT": [{"GROUP_NUMBER": 1, "STATUS": "CONNECTED"}]}))
    # NORMAL with 2 failure groups: judged per copy (900_000 / 2), not on Oracle's negative figure
    assert one(found, "oracle_asm_diskgroup_file_space_bytes", diskgroup="DATA") == 450_000 * MiB
    assert one(found, "oracle_asm_diskgroup_usable_file_bytes", diskgroup="DATA") == -50_000 * MiB


# ------------------------------------------------------------------------------ tablespaces
def test_tablespace_status_is_exported_read_only_included():
    usage = [{"CON_ID": 3, "TABLESPACE_NAME": n, "USED_SPACE": u, "TABLESPACE_SIZE": m}
             for n, u, m in (("SALES_DATA", 900, 1000), ("SALES_2019", 655_360, 655_360), ("OLD", 10, 10))]
    spaces = [{"CON_ID": 3, "TABLESPACE_NAME": n, "BLOCK_SIZE": 8192, "CONTENTS": "PERMANENT", "STATUS": st}
              for n, st in (("SALES_DATA", "ONLINE"), ("SALES_2019", "READ ONLY"), ("OLD", "OFFLINE"))]
    found = samples(tablespaces, snap({"CDB_TABLESPACE_USAGE_METRICS": usage, "CDB_TABLESPACES": spaces,
                                       "V$CONTAINERS": [{"CON_ID": 3, "NAME": "SALES"}]}))
    info = {dict(k)["tablespace"]: dict(k)["status"] for k in series(found, "oracle_tablespace_info")}
    assert info == {"SALES_DATA": "ONLINE", "SALES_2019": "READ ONLY", "OLD": "OFFLINE"}
    # the contracted series stay, a full READ ONLY tablespace included (the rules leave it alone)
    assert one(found, "oracle_tablespace_used_bytes", container="SALES", tablespace="SALES_2019",
               contents="PERMANENT") == one(found, "oracle_tablespace_max_bytes", container="SALES",
                                            tablespace="SALES_2019", contents="PERMANENT") == 655_360 * 8192


def test_tablespaces_on_11_2_rows_dba_views_without_con_id_or_containers():
    # 11.2 (thick mode): the live source read DBA_ views in place of the CDB_ ones (ORA-00942) and
    # V$INSTANCE in place of V$CONTAINERS; the rows carry no CON_ID
    views = {"DBA_TABLESPACE_USAGE_METRICS": [
                 {"TABLESPACE_NAME": "SYSTEM", "USED_SPACE": 98_304, "TABLESPACE_SIZE": 4_194_302},
                 {"TABLESPACE_NAME": "USERS", "USED_SPACE": 1_000_000, "TABLESPACE_SIZE": 1_048_576}],
             "DBA_TABLESPACES": [
                 {"TABLESPACE_NAME": "SYSTEM", "BLOCK_SIZE": 8192, "CONTENTS": "PERMANENT", "STATUS": "ONLINE"},
                 {"TABLESPACE_NAME": "USERS", "BLOCK_SIZE": 8192, "CONTENTS": "PERMANENT", "STATUS": "READ ONLY"}],
             "V$INSTANCE": [{"INSTANCE_NAME": "ods1"}]}
    found = samples(tablespaces, snap(views))
    assert one(found, "oracle_tablespace_used_bytes", container="", tablespace="USERS",
               contents="PERMANENT") == 1_000_000 * 8192
    assert one(found, "oracle_tablespace_max_bytes", container="", tablespace="SYSTEM",
               contents="PERMANENT") == 4_194_302 * 8192
    assert one(found, "oracle_tablespace_info", container="", tablespace="USERS", contents="PERMANENT",
               status="READ ONLY") == 1


def test_v_containers_has_a_fallback_before_12_1():
    from oracle_exporter.ora_errors import MISSING_VIEW
    from oracle_exporter.views import get
    containers = get("V$CONTAINERS")
    fallback = containers.fallbacks[0]
    assert fallback.codes == MISSING_VIEW and fallback.use.name == "V$INSTANCE"
    assert fallback.use.statement(con_id=False).sql == "SELECT INSTANCE_NAME FROM V$INSTANCE"


# --------------------------------------------------------------------------- blocked sessions
def sess(inst, sid, *, type_="USER", status="ACTIVE", state="WAITING", event="db file sequential read",
         wait_class="User I/O", secs=0.5, blocking=None, final=None, serial=1, username="APP",
         program="JDBC Thin Client", call_secs=3, sql_id="7h35uxf5uhmm1"):
    b_inst, b_sid = blocking or (None, None)
    f_inst, f_sid = final or blocking or (None, None)
    return {"INST_ID": inst, "SID": sid, "TYPE": type_, "STATUS": status, "STATE": state, "EVENT": event,
            "WAIT_CLASS": wait_class, "WAIT_TIME_MICRO": int(secs * 1e6),
            "BLOCKING_SESSION_STATUS": "VALID" if blocking else "NO HOLDER",
            "BLOCKING_INSTANCE": b_inst, "BLOCKING_SESSION": b_sid, "SERIAL#": serial, "USERNAME": username,
            "PROGRAM": program, "FINAL_BLOCKING_SESSION_STATUS": "VALID" if (final or blocking) else "NO HOLDER",
            "FINAL_BLOCKING_INSTANCE": f_inst, "FINAL_BLOCKING_SESSION": f_sid, "LAST_CALL_ET": call_secs,
            "SQL_ID": None if type_ == "BACKGROUND" else sql_id}


LGWR = sess(1, 3, type_="BACKGROUND", state="WAITING", event="rdbms ipc message", wait_class="Idle",
            username=None, program="oracle@db1 (LGWR)", serial=4711)


def test_lgwr_blocking_commits_is_not_blamed_on_row_locks():
    rows = [LGWR] + [sess(1, 100 + n, event="log file sync", wait_class="Commit", secs=40, blocking=(1, 3))
                     for n in range(6)]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    assert one(found, "oracle_sessions_blocked", inst_id="1") == 6          # the contracted total
    assert one(found, "oracle_sessions_blocked_by", inst_id="1", blocker_kind="lgwr") == 6
    assert one(found, "oracle_sessions_blocked_by", inst_id="1", blocker_kind="user") == 0
    assert one(found, "oracle_sessions_blocked_by_longest_seconds", inst_id="1", blocker_kind="user") == 0
    top = series(found, "oracle_session_blocker_blocked_sessions")
    assert [(dict(k)["sid"], dict(k)["blocker_kind"], dict(k)["program"], v) for k, v in top.items()] == \
        [("3", "lgwr", "oracle@db1 (LGWR)", 6)]


def test_lgwr_without_its_row_inferred_from_the_commit_wait():
    rows = [sess(1, 100, event="log file sync", wait_class="Commit", secs=40, blocking=(1, 3))]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    assert one(found, "oracle_sessions_blocked_by", inst_id="1", blocker_kind="lgwr") == 1
    assert one(found, "oracle_sessions_blocked_by", inst_id="1", blocker_kind="user") == 0


def test_row_lock_held_by_an_idle_user_session_is_named():
    holder = sess(2, 1234, status="INACTIVE", event="SQL*Net message from client", wait_class="Idle",
                  username="BATCH", program="sqlplus@app1 (TNS V1-V3)", serial=51017)
    rows = [holder] + [sess(1, 200 + n, event="enq: TX - row lock contention", wait_class="Application",
                            secs=300 + n, blocking=(2, 1234)) for n in range(3)]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    assert one(found, "oracle_sessions_blocked_by", inst_id="1", blocker_kind="user") == 3
    assert one(found, "oracle_sessions_blocked_by_longest_seconds", inst_id="1", blocker_kind="user") == 302
    assert one(found, "oracle_session_blocker_blocked_sessions", inst_id="2", sid="1234", serial="51017",
               username="BATCH", program="sqlplus@app1 (TNS V1-V3)", blocker_kind="user") == 3
    assert one(found, "oracle_session_blocker_blocked_longest_seconds", inst_id="2", sid="1234", serial="51017",
               username="BATCH", program="sqlplus@app1 (TNS V1-V3)", blocker_kind="user") == 302
    # the idle holder is not counted as active or waiting
    assert one(found, "oracle_sessions_active", inst_id="2", wait_class="CPU") == 0


def test_chain_counts_the_root_blocker():
    # 300 waits on 200 (itself waiting on 100's row lock): 100 is the root for both
    rows = [sess(1, 100, status="INACTIVE", event="SQL*Net message from client", wait_class="Idle"),
            sess(1, 200, event="enq: TX - row lock contention", wait_class="Application", secs=60, blocking=(1, 100)),
            sess(1, 300, event="enq: TX - row lock contention", wait_class="Application", secs=30, blocking=(1, 200),
                 final=(1, 100))]
    found = samples(sessions, snap({"GV$SESSION": rows}))
    top = {dict(k)["sid"]: v for k, v in series(found, "oracle_session_blocker_blocked_sessions").items()}
    assert top == {"100": 2}


def test_top_blockers_bounded_at_5_and_short_blocks_left_out():
    rows = []
    for b in range(12):                                 # 12 holders, holder b blocks b+1 sessions
        rows.append(sess(1, 1000 + b, status="INACTIVE", event="SQL*Net message from client", wait_class="Idle",
                         serial=b))
        for v in range(b + 1):
            rows.append(sess(1, 2000 + 100 * b + v, event="enq: TX - row lock contention",
                             wait_class="Application", secs=60, blocking=(1, 1000 + b)))
    rows.append(sess(1, 999, status="INACTIVE", event="SQL*Net message from client", wait_class="Idle"))
    rows += [sess(1, 5000 + v, event="enq: TX - row lock contention", wait_class="Application", secs=2,
                  blocking=(1, 999)) for v in range(40)]                    # many victims, but 2 s: not exported
    found = samples(sessions, snap({"GV$SESSION": rows}))
    top = {dict(k)["sid"]: v for k, v in series(found, "oracle_session_blocker_blocked_sessions").items()}
    assert top == {"1011": 12, "1010": 11, "1009": 10, "1008": 9, "1007": 8}
    assert len(series(found, "oracle_session_blocker_blocked_longest_seconds")) == 5
    settings = type("S", (), {"session_blockers_max": 2, "session_blocker_min_wait_seconds": 1})()
    found = samples(sessions, snap({"GV$SESSION": rows}), settings)
    top = {dict(k)["sid"]: v for k, v in series(found, "oracle_session_blocker_blocked_sessions").items()}
    assert top == {"999": 40, "1011": 12}


def test_background_kinds_from_program():
    assert sessions.background_kind("oracle@db1 (LGWR)") == "lgwr"
    assert sessions.background_kind("oracle@db1 (LG01)") == "lgwr"
    assert sessions.background_kind("oracle@db1 (CKPT)") == "ckpt"
    assert sessions.background_kind("oracle@db1 (DBW0)") == "dbwr"
    assert sessions.background_kind("oracle@db1 (BW12)") == "dbwr"
    assert sessions.background_kind("oracle@db1 (ARC3)") == "arch"
    assert sessions.background_kind("oracle@db1 (SMON)") == "background"


def test_live_11_2_reads_the_dba_views_and_the_tablespaces_collector_is_not_failed():
    """11.2 answers ORA-00942 for the CDB_ views and V$CONTAINERS: the live source reads the DBA_
    views and V$INSTANCE in their place, so no view of the tablespaces collector is in error
    (a collector fails when a view it reads failed) and its metrics come from the DBA_ rows."""
    from oracle_exporter.config import DatabaseConfig, Settings
    from oracle_exporter.sources.live import LiveSource
    from oracle_sim import FakeClock, FakeConnection

    missing = "ORA-00942: table or view does not exist"
    conn = FakeConnection(
        fail={"CDB_TABLESPACE_USAGE_METRICS": missing, "CDB_TABLESPACES": missing, "V$CONTAINERS": missing},
        rows={"DBA_TABLESPACE_USAGE_METRICS": [("USERS", 1_000_000, 1_048_576), ("ARCH", 5000, 5000)],
              "DBA_TABLESPACES": [("USERS", 8192, "PERMANENT", "ONLINE"), ("ARCH", 8192, "PERMANENT", "READ ONLY")],
              "V$INSTANCE": [("ods1", 0)]})
    db = DatabaseConfig("ods", dsn="h:1521/S", user="mon", password="pw", timeout_seconds=4)
    src = LiveSource(db, Settings(), connect=lambda d, t: conn, clock=FakeClock())
    snap = src.fetch()                  # the fallback statements are read in the same fetch
    assert not set(tablespaces.VIEWS) & set(snap.errors), snap.errors
    found = samples(tablespaces, snap)
    assert one(found, "oracle_tablespace_used_bytes", container="", tablespace="USERS",
               contents="PERMANENT") == 1_000_000 * 8192
    assert one(found, "oracle_tablespace_info", container="", tablespace="ARCH", contents="PERMANENT",
               status="READ ONLY") == 1


def test_file_space_is_judged_against_the_capacity_in_its_own_basis():
    """Review finding: free per copy over the raw size called a HIGH group of 3 failure groups,
    72 % used (28 % left), 9.3 % left: a ticket at 70 % use. The capacity is in the same basis."""
    high3 = dg(1, "DATA", "HIGH", 30_000_000, 8_400_000, 20_000_000, -3_866_667)
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": [high3], "V$ASM_DISK_STAT": disks(1, ["A", "B", "C"])}))
    share = (one(found, "oracle_asm_diskgroup_file_space_bytes", diskgroup="DATA")
             / one(found, "oracle_asm_diskgroup_file_capacity_bytes", diskgroup="DATA"))
    assert abs(share - 0.28) < 1e-9
    # usable_file: (TOTAL - REQUIRED_MIRROR_FREE) / copies; NORMAL with 4 failure groups, 50 % used
    normal4 = dg(2, "RECO", "NORMAL", 4_000_000, 2_000_000, 1_000_000, 500_000)
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": [normal4], "V$ASM_DISK_STAT": disks(2, list("ABCD"))}))
    assert one(found, "oracle_asm_diskgroup_file_capacity_bytes", diskgroup="RECO") == 1_500_000 * MiB
    assert one(found, "oracle_asm_diskgroup_file_space_bytes", diskgroup="RECO") == 500_000 * MiB
    # raw_free: the raw size
    flex = dg(3, "FDATA", "FLEX", 10_000_000, 6_000_000, 0, 0)
    found = samples(asm, snap({"V$ASM_DISKGROUP_STAT": [flex]}))
    assert one(found, "oracle_asm_diskgroup_file_capacity_bytes", diskgroup="FDATA") == 10_000_000 * MiB
