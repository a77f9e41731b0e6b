"""Rows of the on-call signals views (issue 24: backups, undo, temp) for the test simulator
(oracle_sim.OracleSim.record), shaped like the views: DATEs as naive host-clock ISO text."""
from __future__ import annotations

import datetime as _dt
from typing import Any

from oracle_exporter import views


def signal_views(sim: Any) -> dict[str, list[dict[str, Any]]]:
    now = sim.time if isinstance(sim.time, _dt.datetime) else _dt.datetime.fromisoformat(str(sim.time))
    wall = now.replace(tzinfo=None, microsecond=0)

    def date(minutes_ago: float) -> str:
        return (wall - _dt.timedelta(minutes=minutes_ago)).isoformat()

    v: dict[str, list[dict[str, Any]]] = {
        "V$BACKUP_SET": [views.row("V$BACKUP_SET", SET_STAMP=1162000001, SET_COUNT=1, BACKUP_TYPE="I",
                                   INCREMENTAL_LEVEL=0, COMPLETION_TIME=date(30 * 60)),
                         views.row("V$BACKUP_SET", SET_STAMP=1162000002, SET_COUNT=2, BACKUP_TYPE="L",
                                   INCREMENTAL_LEVEL=None, COMPLETION_TIME=date(45))],
        "V$RMAN_BACKUP_JOB_DETAILS": [views.row("V$RMAN_BACKUP_JOB_DETAILS", SESSION_KEY=7, INPUT_TYPE="ARCHIVELOG",
                                                STATUS="COMPLETED", START_TIME=date(47), END_TIME=date(45))],
        "GV$UNDOSTAT": [], "GV$TEMPSEG_USAGE": [], "GV$PDBS": []}
    for ins in sim.instances:
        i = ins.inst_id
        for k in range(6):
            v["GV$UNDOSTAT"].append(views.row(
                "GV$UNDOSTAT", INST_ID=i, BEGIN_TIME=date(10 * k + 10), END_TIME=date(10 * k), MAXQUERYLEN=600,
                SSOLDERRCNT=0, NOSPACEERRCNT=0, TUNED_UNDORETENTION=1800, CON_ID=0))
        v["GV$TEMPSEG_USAGE"].append(views.row(
            "GV$TEMPSEG_USAGE", INST_ID=i, USERNAME="APP", SESSION_ADDR=f"{0x7F3A0000 + i:016X}", SESSION_NUM=4021,
            SQL_ID="g0bggfqrddc4w", SQL_ID_TEMPSEG="g0bggfqrddc4w", TABLESPACE="TEMP", SEGTYPE="SORT", BLOCKS=128,
            CON_ID=3, **{"SEGRFNO#": 1, "SEGBLK#": 128}))         # a session of PDB SALES
        for cid, name, mode in ((2, "PDB$SEED", "READ ONLY"), (3, "SALES", "READ WRITE")):   # pdb_state (default on)
            v["GV$PDBS"].append(views.row("GV$PDBS", INST_ID=i, CON_ID=cid, NAME=name, OPEN_MODE=mode, RESTRICTED="NO"))
    return v
