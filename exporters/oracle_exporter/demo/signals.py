"""Demo rows of the views the on-call signals collectors read (issue 24): backups, undo, temp, ...

``views(db, i, dt, start, zone)`` returns the rows of snapshot ``i`` of database ``db`` (DATEs
on the host's wall clock ``zone``); demo.generate adds them to every snapshot. What the demo
shows: DEMO had an ORA-01555 just before the recording starts (GV$UNDOSTAT, and its line in the
alert log, V$DIAG_ALERT_EXT); DEMO's level 1 backup of last night FAILED (and was re-run), so OracleBackupFailed fires;
RACDB and the standby DEMOSB (backups offloaded to the standby) are backed up on schedule."""
from __future__ import annotations

import datetime as _dt
from typing import Any

from .. import views as registry
from .health import CONTAINERS, SETUPS

FAILED_LEVEL1 = ("DEMO",)


def _date(moment: _dt.datetime, zone: _dt.tzinfo) -> str:
    return moment.astimezone(zone).replace(tzinfo=None).isoformat(timespec="seconds")


def backups(db: Any, start: _dt.datetime, zone: _dt.tzinfo) -> dict[str, list[dict]]:
    """A level 0 on Sunday night, a level 1 every other night, archivelogs every 2 hours, each job followed by
    its control file autobackup (a D set, level NULL: not a full backup). The standby DEMOSB, to which
    the backups are offloaded, runs its own schedule two hours later (its control file records its
    own backups, not the primary's)."""
    day = start.astimezone(zone).replace(hour=0, minute=0, second=0, microsecond=0)
    sets, jobs = [], []
    n, key = 0, 9000

    def add_set(kind: str, level: int | None, done: _dt.datetime) -> None:
        nonlocal n
        n += 1
        sets.append(registry.row("V$BACKUP_SET", SET_STAMP=1162000000 + 3600 * n, SET_COUNT=4100 + n,
                                 BACKUP_TYPE=kind, INCREMENTAL_LEVEL=level, COMPLETION_TIME=_date(done, zone)))

    def add_job(input_type: str, status: str, begin: _dt.datetime, end: _dt.datetime) -> None:
        nonlocal key
        key += 3
        jobs.append(registry.row("V$RMAN_BACKUP_JOB_DETAILS", SESSION_KEY=key, INPUT_TYPE=input_type, STATUS=status,
                                 START_TIME=_date(begin, zone), END_TIME=_date(end, zone)))
        if status != "FAILED":
            add_set("D", None, end - _dt.timedelta(seconds=2))      # CONTROLFILE AUTOBACKUP ON (default)

    shift = _dt.timedelta(hours=2 if getattr(getattr(db, "profile", None), "name", "") == "standby" else 0)

    for back in (3, 2, 1):                                   # Saturday, Sunday, Monday nights
        night = day - _dt.timedelta(days=back) + _dt.timedelta(hours=23) + shift
        level = 0 if back == 2 else 1
        if db.name in FAILED_LEVEL1 and back == 1:           # RMAN-03009 / ORA-19502: the job fails ...
            add_job("DB INCR", "FAILED", night, night + _dt.timedelta(minutes=4, seconds=12))
            night += _dt.timedelta(hours=1, minutes=30)       # ... and the re-run succeeds
        add_set("I", level, night + _dt.timedelta(minutes=11 if level else 47))
        add_job("DB INCR", "COMPLETED", night, night + _dt.timedelta(minutes=12 if level else 49))
    archived = day - _dt.timedelta(days=1) + shift
    while archived < start.astimezone(zone) - _dt.timedelta(minutes=20):
        add_set("L", None, archived + _dt.timedelta(minutes=1, seconds=27))
        add_job("ARCHIVELOG", "COMPLETED", archived, archived + _dt.timedelta(minutes=1, seconds=31))
        archived += _dt.timedelta(hours=2)
    return {"V$BACKUP_SET": sets, "V$RMAN_BACKUP_JOB_DETAILS": jobs}


def gc_stats(db: Any, series: Any, k: float) -> dict[str, list[int]]:
    """GV$SYSSTAT global cache statistics of one instance (``series.counter(rate)``: a counter
    sampled per snapshot). A RAC database receives CR and current blocks at 0.4 / 0.7 ms (receive
    times in centiseconds) and lost a handful of blocks since startup; a single instance has zeros."""
    rac = len(db.instances) > 1
    cr, current = (1800.0 * k, 650.0 * k) if rac else (0.0, 0.0)
    out = {"gc cr blocks received": series.counter(cr), "gc current blocks received": series.counter(current)}
    out["gc cr block receive time"] = [int(v * 0.04) for v in out["gc cr blocks received"]]
    out["gc current block receive time"] = [int(v * 0.07) for v in out["gc current blocks received"]]
    out["gc blocks lost"] = [17 if rac else 0] * len(out["gc cr blocks received"])
    out["gc blocks corrupt"] = [0] * len(out["gc cr blocks received"])
    return out


SNAPSHOT_TOO_OLD = ("DEMO",)


def undostat(db: Any, now: _dt.datetime, start: _dt.datetime, zone: _dt.tzinfo) -> list[dict]:
    """The 10-minute intervals that ended in the last hour (what the statement's WHERE keeps), newest
    first and still filling; on DEMO a report hit ORA-01555 in the interval before the recording
    starts (its 95-minute query outlived the 30-minute retention), so OracleSnapshotTooOld shows."""
    quiet = getattr(getattr(db, "profile", None), "name", "") == "standby"     # MOUNTED: no query, no transaction, retention as set (900 s)
    rows = []
    local = now.astimezone(zone).replace(tzinfo=None)
    first = start.astimezone(zone).replace(tzinfo=None)
    newest = local.replace(minute=local.minute - local.minute % 10, second=0, microsecond=0)
    for inst in db.instances:
        for k in range(7):
            begin = newest - _dt.timedelta(minutes=10 * k)
            end = min(begin + _dt.timedelta(minutes=10), local)
            if end <= local - _dt.timedelta(hours=1):
                continue
            bad = db.name in SNAPSHOT_TOO_OLD and inst.inst_id == 1 and \
                begin <= first - _dt.timedelta(minutes=5) < begin + _dt.timedelta(minutes=10)
            rows.append(registry.row(
                "GV$UNDOSTAT", INST_ID=inst.inst_id, BEGIN_TIME=begin.isoformat(timespec="seconds"),
                END_TIME=end.isoformat(timespec="seconds"), MAXQUERYLEN=5712 if bad else 1260 + 37 * k,
                SSOLDERRCNT=1 if bad else 0, NOSPACEERRCNT=0, TUNED_UNDORETENTION=1800 if bad else 2400 + 30 * k,
                CON_ID=0))                     # a non-CDB, or shared undo: the instance's rows
            if quiet:
                rows[-1].update(MAXQUERYLEN=0, TUNED_UNDORETENTION=900)
    return rows


def tempseg(db: Any, i: int) -> list[dict]:
    """A report hashing a large join on instance 1, a few small sorts everywhere (none on a MOUNTED standby);
    in the CDB RACDB the sessions are in PDB SALES. The report's segments were created by its join
    (SQL_ID_TEMPSEG) while the session runs its next statement now (SQL_ID)."""
    if db.profile.name == "standby":
        return []
    setup = SETUPS.get(db.name)
    con = CONTAINERS["SALES"] if setup is not None and setup.cdb else 0
    rows = []
    for inst in db.instances:
        base = 0x7F3A0000 + 0x10000 * inst.inst_id
        for n, (user, sql, segtype, blocks) in enumerate((
                ("REPORTS", "7h35uxf5uhmm1", "HASH", 96_000 + 640 * i if inst.inst_id == 1 else 2_048),
                ("REPORTS", "7h35uxf5uhmm1", "SORT", 12_800 if inst.inst_id == 1 else 256),
                ("APP", "g0bggfqrddc4w", "SORT", 128), ("APP", "5qgz1p0cut7mx", "LOB_DATA", 128))):
            rows.append(registry.row("GV$TEMPSEG_USAGE", INST_ID=inst.inst_id, USERNAME=user,
                                     SESSION_ADDR=f"{base + 0x2A8 * (0 if n < 2 else n + 3):016X}",
                                     SESSION_NUM=4021 + 7 * (n if n > 1 else 0),
                                     SQL_ID="2b5xrj1zk4hvt" if n < 2 else sql, SQL_ID_TEMPSEG=sql,
                                     TABLESPACE="TEMP", SEGTYPE=segtype, BLOCKS=blocks, CON_ID=con,
                                     **{"SEGRFNO#": 1, "SEGBLK#": 128 + 2048 * n}))
    return rows


def alert_log(db: Any, i: int, start: _dt.datetime, zone: _dt.tzinfo) -> list[dict]:
    """V$DIAG_ALERT_EXT as the live source reads it (opt-in alert_log collector): the messages with an
    ORA- error since the last read. The first read goes back an hour: on DEMO it finds the ORA-01555 of
    the report that GV$UNDOSTAT counts (5 minutes before the recording starts, SQL_ID and query length
    as there); the later reads find nothing new."""
    if i != 0 or db.name not in SNAPSHOT_TOO_OLD:
        return []
    # as the live statement selects it: SYS_EXTRACT_UTC, UTC text (python-oracledb drops a TIMESTAMP's zone)
    logged = (start - _dt.timedelta(minutes=5)).astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return [registry.row(
        "V$DIAG_ALERT_EXT", ORIGINATING_TIMESTAMP=logged.isoformat(timespec="microseconds") + "Z", RECORD_ID=48213,
        MESSAGE_LEVEL=16, MESSAGE_TEXT="ORA-01555 caused by SQL statement below (SQL ID: 7h35uxf5uhmm1, Query "
                                       "Duration=5712 sec, SCN: 0x00000b2c4f1a2d90):")]


def pdbs(db: Any) -> list[dict]:
    """GV$PDBS (pdb_state, on by default): in the CDB RACDB, PDB$SEED READ ONLY and every PDB open READ WRITE
    on every instance; a 19c non-CDB has the view and no rows."""
    setup = SETUPS.get(db.name)
    if setup is None or not setup.cdb:
        return []
    return [registry.row("GV$PDBS", INST_ID=inst.inst_id, CON_ID=cid, NAME=name,
                         OPEN_MODE="READ ONLY" if name == "PDB$SEED" else "READ WRITE", RESTRICTED="NO")
            for inst in db.instances for name, cid in CONTAINERS.items() if cid > 1]


def views(db: Any, i: int, dt: int, start: _dt.datetime, zone: _dt.tzinfo) -> dict[str, list[dict]]:
    """Every signals view of snapshot i (dt seconds apart from start)."""
    now = start + _dt.timedelta(seconds=i * dt)
    out: dict[str, list[dict]] = {}
    out.update(backups(db, start, zone))
    out["GV$UNDOSTAT"] = undostat(db, now, start, zone)
    out["GV$TEMPSEG_USAGE"] = tempseg(db, i)
    out["V$DIAG_ALERT_EXT"] = alert_log(db, i, start, zone)   # issue 24 point 1 (opt-in alert_log)
    out["GV$PDBS"] = pdbs(db)                                 # pdb_state, on by default (review of issue 24)
    return out
