"""Rows of the sessions and instance-health views for OracleSim (tests/oracle/oracle_sim.py).

Columns exactly as the registered statements select them (views.row), values as Oracle
returns them: LIMIT_VALUE blank-padded text with UNLIMITED, V$DATAGUARD_STATS values and
times as text, a 16 KB block size tablespace, one blocked session per instance.
"""
from __future__ import annotations

from typing import Any

from oracle_exporter.views import row

GiB = 1 << 30


def health_views(sim: Any) -> dict[str, list[dict[str, Any]]]:
    v: dict[str, list[dict[str, Any]]] = {k: [] for k in (
        "GV$SESSION", "GV$RESOURCE_LIMIT", "CDB_TABLESPACE_USAGE_METRICS", "CDB_TABLESPACES", "V$CONTAINERS",
        "V$RECOVERY_FILE_DEST", "V$DATAGUARD_STATS", "GV$ARCHIVE_DEST", "V$ASM_DISKGROUP_STAT",
        "GV$ARCHIVE_DEST_STATUS", "GV$MANAGED_STANDBY", "V$ASM_DISK_STAT", "V$ASM_CLIENT")}
    for ins in sim.instances:
        i = ins.inst_id
        sessions = [
            (101, "USER", "WAITED SHORT TIME", "db file sequential read", "User I/O", 120, "NOT IN WAIT", None, None),
            (102, "USER", "WAITING", "log file sync", "Commit", 3_500, "VALID", i, 3),
            (103, "USER", "WAITING", "db file sequential read", "User I/O", 8_000, "NO HOLDER", None, None),
            (3, "BACKGROUND", "WAITING", "log file parallel write", "System I/O", 2_900, "NO HOLDER", None, None),
            (104, "USER", "WAITING", "enq: TX - row lock contention", "Application", 12_000_000, "VALID", i, 150),
        ]
        for sid, type_, state, event, wc, micro, bstatus, binst, bsid in sessions:
            v["GV$SESSION"].append(row("GV$SESSION", INST_ID=i, SID=sid, TYPE=type_, STATUS="ACTIVE", STATE=state,
                                       EVENT=event, WAIT_CLASS=wc, WAIT_TIME_MICRO=micro,
                                       BLOCKING_SESSION_STATUS=bstatus, BLOCKING_INSTANCE=binst,
                                       BLOCKING_SESSION=bsid, **{"SERIAL#": 7 + sid},
                                       USERNAME=None if type_ == "BACKGROUND" else "APP",
                                       PROGRAM=f"oracle@db{i} (LGWR)" if type_ == "BACKGROUND" else "JDBC Thin Client",
                                       FINAL_BLOCKING_SESSION_STATUS=bstatus, FINAL_BLOCKING_INSTANCE=binst,
                                       FINAL_BLOCKING_SESSION=bsid,
                                       # a background process's call is the instance's life; user calls short
                                       LAST_CALL_ET=86_400 if type_ == "BACKGROUND" else 2 + sid % 7,
                                       SQL_ID=None if type_ == "BACKGROUND" else f"8fvmj{sid:03d}cd2ab"))
        for name, cur, high, limit in (("processes", 412, 450, "       600"), ("sessions", 601, 640, "       928"),
                                       ("enqueue_resources", 1900, 2100, " UNLIMITED")):
            v["GV$RESOURCE_LIMIT"].append(row("GV$RESOURCE_LIMIT", INST_ID=i, RESOURCE_NAME=name,
                                              CURRENT_UTILIZATION=cur, MAX_UTILIZATION=high, LIMIT_VALUE=limit))
        v["GV$ARCHIVE_DEST"].append(row("GV$ARCHIVE_DEST", INST_ID=i, DEST_ID=1, DEST_NAME="LOG_ARCHIVE_DEST_1",
                                        STATUS="VALID", TARGET="PRIMARY", DESTINATION="USE_DB_RECOVERY_FILE_DEST",
                                        VALID_NOW="YES", ERROR=None, LOG_SEQUENCE=1001, DELAY_MINS=0))
        v["GV$ARCHIVE_DEST_STATUS"].append(row("GV$ARCHIVE_DEST_STATUS", INST_ID=i, DEST_ID=1,
                                               DEST_NAME="LOG_ARCHIVE_DEST_1", STATUS="VALID", TYPE="LOCAL",
                                               DATABASE_MODE="OPEN", RECOVERY_MODE="IDLE", GAP_STATUS=None))
    for cid, name, space, block, contents, used, size in (
            (1, "CDB$ROOT", "SYSTEM", 8192, "PERMANENT", 120_000, 4_194_302),
            (1, "CDB$ROOT", "UNDOTBS1", 8192, "UNDO", 9_000, 4_194_302),
            (3, "SALES", "USERS", 8192, "PERMANENT", 3_900_000, 4_000_000),
            (3, "SALES", "TEMP", 8192, "TEMPORARY", 100, 4_194_302),
            (3, "SALES", "IDX16K", 16384, "PERMANENT", 1000, 2000)):
        v["CDB_TABLESPACE_USAGE_METRICS"].append(row("CDB_TABLESPACE_USAGE_METRICS", CON_ID=cid,
                                                     TABLESPACE_NAME=space, USED_SPACE=used, TABLESPACE_SIZE=size))
        v["CDB_TABLESPACES"].append(row("CDB_TABLESPACES", CON_ID=cid, TABLESPACE_NAME=space, BLOCK_SIZE=block,
                                        CONTENTS=contents, STATUS="ONLINE"))
    for cid, name in ((1, "CDB$ROOT"), (2, "PDB$SEED"), (3, "SALES")):
        v["V$CONTAINERS"].append(row("V$CONTAINERS", CON_ID=cid, NAME=name))
    v["V$RECOVERY_FILE_DEST"].append(row("V$RECOVERY_FILE_DEST", NAME="+FRA", SPACE_LIMIT=500 * GiB,
                                         SPACE_USED=420 * GiB, SPACE_RECLAIMABLE=60 * GiB, NUMBER_OF_FILES=812))
    for name, value, unit in (("transport lag", "+00 00:00:01", "day(2) to second(0) interval"),
                              ("apply lag", "+00 00:00:03", "day(2) to second(0) interval"),
                              ("apply finish time", "+00 00:00:00.210", "day(2) to second(3) interval")):
        v["V$DATAGUARD_STATS"].append(row("V$DATAGUARD_STATS", NAME=name, VALUE=value, UNIT=unit,
                                          TIME_COMPUTED="03/01/2024 12:00:00", DATUM_TIME="03/01/2024 11:59:59"))
    v["V$ASM_DISKGROUP_STAT"].append(row("V$ASM_DISKGROUP_STAT", GROUP_NUMBER=1, NAME="DATA", STATE="CONNECTED",
                                         TYPE="NORMAL", TOTAL_MB=4_096_000, FREE_MB=1_200_000,
                                         REQUIRED_MIRROR_FREE_MB=256_000, USABLE_FILE_MB=472_000, OFFLINE_DISKS=0))
    for disk in range(16):                       # NORMAL, 16 disks each its own failure group
        v["V$ASM_DISK_STAT"].append(row("V$ASM_DISK_STAT", GROUP_NUMBER=1, DISK_NUMBER=disk,
                                        FAILGROUP=f"DATA_{disk:04d}", FAILGROUP_TYPE="REGULAR"))
    v["V$ASM_CLIENT"].append(row("V$ASM_CLIENT", GROUP_NUMBER=1, CLUSTER_NAME="simclu", STATUS="CONNECTED"))
    return v
