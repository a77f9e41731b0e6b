"""Demo rows of the sessions and instance-health views (part of oracle_exporter.demo.generate).

Deterministic (seeded per database and instance), shaped like the real views, and tied to
the database's own load where one exists:

* GV$SESSION: per snapshot, the sessions waiting on each non-idle event are drawn from a
  Poisson distribution with mean rate x average wait (Little's law: the sessions an event
  holds on average), sessions on CPU likewise with mean DB CPU; background events (LGWR's
  'log file parallel write' ...) are waited by background sessions. A wait in progress has
  lasted an exponentially distributed time with the event's average as mean. RACDB has a
  row-lock episode: two sessions of instance 1 blocked by a session of instance 2 for about
  three minutes (their waits grow by the snapshot interval); the holder's own row (INACTIVE,
  idle in its transaction: user BATCH, sqlplus) is there too, as the statement reads it.
* GV$SESSION.LAST_CALL_ET / SQL_ID (long calls, issue 24): user calls of a few seconds, background
  calls as old as the instance; DEMO's instance 1 runs a report (REPORTS, 9zg9qd9bm4spu) that passes
  one hour 5 minutes into the recording (OracleLongRunningCall).
* GV$RESOURCE_LIMIT: the usual resources; RACDB's processes climb from 92 % to 98.5 % of
  the limit (an ORA-00020 coming).
* Tablespaces (19c: the CDB_ views exist everywhere): DEMO is a non-CDB (CON_ID 0, container
  ""); RACDB is a CDB read from its root (CDB$ROOT and the PDBs SALES and HR named by
  V$CONTAINERS); a 16 KB block size
  tablespace shows that bytes use each tablespace's own block size. DEMO's ODS_DATA is
  97.5 % full with 4.8 GiB left (the page needs both; 4.4 days to full at 6000 blocks an hour), RACDB's SALES_DATA grows fast (days-to-full); ODS_ARCH2019 and SALES_2019 are
  READ ONLY and 100 % full (the rules leave them alone).
* V$RECOVERY_FILE_DEST: the FRA fills with the archived redo (the database's own 'redo
  size' counter); reclaimable space stays.
* GV$ARCHIVE_DEST: DEMO archives locally and to its standby DEMOSB; RACDB's remote
  destination goes to ERROR (ORA-12541) a third of the way through.
* V$DATAGUARD_STATS: no rows on a primary (12.2+). DEMOSB (profile "standby") is a
  physical standby: lags of a second or two, then the network to the primary breaks
  (transport lag not computed, DATUM_TIME frozen), then the gap is resolved and the lags
  shrink back.
* Issue 22: DEMOSB is MOUNTED (not open: its data dictionary views, the tablespace views, are
  skipped, as the live source records them) with managed recovery running (MRP0 with its
  recovery slaves PR00/PR01 in GV$PROCESS, GV$MANAGED_STANDBY) and an apply delay of
  STANDBY_DELAY_MINUTES (DELAY_MINS; RECOVERY_MODE MANAGED: not real time), so its apply lag
  is the delay plus a few seconds. MOUNTED, it has only background sessions, no temp segments, undo
  intervals without a query, no transaction, flat logons and redo counters (it generates no redo) and
  no job queue or AQ process (demo.generate NOT_ON_MOUNTED, STANDBY_*). DEMO's destination to DEMOSB
  carries the same DELAY_MINS;
  GV$ARCHIVE_DEST_STATUS gives each remote destination's apply mode and gap (RACDB's goes from
  NO GAP to RESOLVABLE GAP when its destination fails).
* V$ASM_DISKGROUP_STAT: RACDB on ASM (DATA normal redundancy with one disk offline after
  the middle, FRA external, FLEXDATA a FLEX group whose USABLE_FILE_MB is 0 as Oracle shows
  it for FLEX); V$ASM_DISK_STAT their failure groups, V$ASM_CLIENT the cluster name; DEMO and
  DEMOSB without ASM: no rows.
"""
from __future__ import annotations

import datetime as _dt
import math
import random
from dataclasses import dataclass
from typing import Any, Sequence

GiB = 1 << 30
MiB = 1 << 20
FLEX_MB = 3 * 1024 * 1024           # the FLEX disk group of RACDB (MB)
# the background process that waits on a background event (GV$SESSION.PROGRAM "oracle@host (LGWR)")
BACKGROUND_PROCESS = {"log file parallel write": "LGWR", "db file parallel write": "DBW0",
                      "control file parallel write": "CKPT", "log file sequential read": "ARC0"}

RESOURCES = ("processes", "sessions", "enqueue_locks", "enqueue_resources", "transactions",
             "parallel_max_servers", "max_rollback_segments", "gcs_resources")

# (container, tablespace, contents, block size, used blocks, max blocks, used blocks per hour)
TABLESPACES_DEMO = (
    ("", "SYSTEM", "PERMANENT", 8192, 131_072, 4_194_302, 0),
    ("", "SYSAUX", "PERMANENT", 8192, 262_144, 4_194_302, 40),
    ("", "UNDOTBS1", "UNDO", 8192, 1_310_720, 4_194_302, 0),
    ("", "TEMP", "TEMPORARY", 8192, 12_800, 4_194_302, 0),
    ("", "USERS", "PERMANENT", 8192, 2_560, 4_194_302, 0),
    ("", "ODS_DATA", "PERMANENT", 8192, 24_536_000, 25_165_824, 6_000),   # 97.5 %, 4.8 GiB left: pages
    ("", "ODS_INDEX", "PERMANENT", 16384, 4_100_000, 8_388_608, 1_500),
    ("", "ODS_ARCH2019", "PERMANENT", 8192, 1_310_720, 1_310_720, 0),      # READ ONLY, 100 %: quiet
)
TABLESPACES_RAC = (
    ("CDB$ROOT", "SYSTEM", "PERMANENT", 8192, 138_000, 4_194_302, 0),
    ("CDB$ROOT", "SYSAUX", "PERMANENT", 8192, 301_000, 4_194_302, 30),
    ("CDB$ROOT", "UNDOTBS1", "UNDO", 8192, 640_000, 4_194_302, 0),
    ("CDB$ROOT", "UNDOTBS2", "UNDO", 8192, 590_000, 4_194_302, 0),
    ("CDB$ROOT", "TEMP", "TEMPORARY", 8192, 2_048, 4_194_302, 0),
    ("SALES", "SYSTEM", "PERMANENT", 8192, 52_000, 4_194_302, 0),
    ("SALES", "SYSAUX", "PERMANENT", 8192, 98_000, 4_194_302, 10),
    ("SALES", "TEMP", "TEMPORARY", 8192, 40_000, 4_194_302, 0),
    ("SALES", "SALES_DATA", "PERMANENT", 8192, 11_800_000, 16_777_216, 90_000),
    ("HR", "SYSTEM", "PERMANENT", 8192, 50_000, 4_194_302, 0),
    ("HR", "SYSAUX", "PERMANENT", 8192, 91_000, 4_194_302, 0),
    ("HR", "HR_DATA", "PERMANENT", 8192, 310_000, 4_194_302, 20),
    ("SALES", "SALES_2019", "PERMANENT", 8192, 655_360, 655_360, 0),      # READ ONLY, 100 %: quiet
)
READ_ONLY = frozenset({"ODS_ARCH2019", "SALES_2019"})   # STATUS 'READ ONLY' (closed years, full by design)
CONTAINERS = {"CDB$ROOT": 1, "PDB$SEED": 2, "SALES": 3, "HR": 4}


@dataclass(frozen=True)
class HealthSetup:
    cdb: bool
    processes: tuple[int, int, int]      # limit, current at start, current at end
    sessions_limit: int
    fra: tuple[str, int, int, int] | None   # name, limit, used at start, reclaimable
    dests: tuple[tuple[int, str, str, str], ...]  # (DEST_ID, TARGET, DESTINATION, VALID_NOW)
    dest_error: tuple[int, float, str] | None  # (DEST_ID, from share of recording, ERROR)
    tablespaces: tuple = ()
    asm: bool = False
    standby: bool = False
    blocking: bool = False


SETUPS: dict[str, HealthSetup] = {
    "DEMO": HealthSetup(cdb=False, processes=(600, 238, 244), sessions_limit=928,
                        fra=("/u03/fra", 400 * GiB, 352 * GiB, 96 * GiB),
                        dests=((1, "PRIMARY", "USE_DB_RECOVERY_FILE_DEST", "YES"),
                               (2, "STANDBY", "demosb", "YES")),
                        dest_error=None, tablespaces=TABLESPACES_DEMO),
    "RACDB": HealthSetup(cdb=True, processes=(1500, 1380, 1478), sessions_limit=2272,
                         fra=("+FRA", 1024 * GiB, 610 * GiB, 210 * GiB),
                         dests=((1, "PRIMARY", "USE_DB_RECOVERY_FILE_DEST", "YES"),
                                (2, "STANDBY", "racdb_dr", "YES")),
                         dest_error=(2, 1 / 3, "ORA-12541: TNS:no listener"),
                         tablespaces=TABLESPACES_RAC, asm=True, blocking=True),
    "DEMOSB": HealthSetup(cdb=False, processes=(600, 96, 96), sessions_limit=928,
                          fra=("/u03/fra", 400 * GiB, 301 * GiB, 240 * GiB),
                          dests=((1, "PRIMARY", "USE_DB_RECOVERY_FILE_DEST", "YES"),
                                 (2, "STANDBY", "demo", "WRONG VALID_ROLE")),
                          dest_error=None, tablespaces=TABLESPACES_DEMO, standby=True),
}

# V$PROCESS rows without a session: PSEUDO and a couple of idle slaves
PROCESSES_WITHOUT_SESSION = 3
GCS_RESOURCES_LIMIT = 1_663_488     # INITIAL_ALLOCATION = LIMIT_VALUE: sized from the buffer cache

# transport break of the standby demo: (start, end) as shares of the recording
BREAK = (0.4, 0.7)
# DEMOSB's apply delay (the DELAY attribute of DEMO's LOG_ARCHIVE_DEST_2), minutes
STANDBY_DELAY_MINUTES = 10
# the data dictionary views a MOUNTED database refuses (ORA-01219), as the live source skips them
MOUNTED_SKIPPED = ("CDB_TABLESPACE_USAGE_METRICS", "CDB_TABLESPACES")


# GV$SESSION.SQL_ID of the demo's user calls (13 characters, Oracle's base-32 alphabet)
DEMO_SQL_IDS = ("7h35uxf5uhmm1", "0k8522rmdzg4k", "gjaap3w3qbf8c", "5ms6rbzdnq16t", "b6usrg82hwsa3")
# the long call (long_calls, issue 24): DEMO's instance 1 runs a report for 3300 s when the recording
# starts, so it crosses the one-hour ticket threshold (O27) after 5 minutes of it
LONG_CALL_DB, LONG_CALL_SQL_ID, LONG_CALL_START = "DEMO", "9zg9qd9bm4spu", 3300


def mounted_reason() -> str:
    """The reason the live source records for a skipped data dictionary view on a MOUNTED standby."""
    return ("not read: the database is MOUNTED (PHYSICAL STANDBY), and a data dictionary view needs an open "
            "database (ORA-01219); the dynamic performance views (V$, GV$) are read as usual")


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def interval_text(seconds: float, digits: int = 0) -> str:
    """Oracle's INTERVAL DAY TO SECOND text: '+DD HH:MI:SS' (digits: fractional second digits)."""
    seconds = max(0.0, seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    sec = f"{secs:0{3 + digits}.{digits}f}" if digits else f"{int(secs):02d}"
    return f"+{int(days):02d} {int(hours):02d}:{int(minutes):02d}:{sec}"


def mdy(moment: _dt.datetime) -> str:
    return moment.strftime("%m/%d/%Y %H:%M:%S")


class HealthModel:
    """Rows of the health views for one database, snapshot by snapshot."""

    def __init__(self, db: Any, models: Sequence[Any], threads: Sequence[Any], n: int, dt: int, seed: int,
                 start: _dt.datetime):
        self.db, self.models, self.threads, self.n, self.dt = db, models, threads, n, dt
        self.setup = SETUPS[db.name]
        self.start = start
        self.rng = random.Random(f"{seed}/health/{db.name}")
        self.session_rng = {m.inst.inst_id: random.Random(f"{seed}/sessions/{db.name}/{m.inst.inst_id}")
                            for m in models}
        self.ts_rng = random.Random(f"{seed}/tablespaces/{db.name}")
        self._frozen: dict[tuple[int, int], int] = {}   # LOG_SEQUENCE of a destination in error

    # -- GV$SESSION ----------------------------------------------------------
    def session(self, i: int) -> list[dict]:
        rows: list[dict] = []
        p = self.db.profile
        for m in self.models:
            rng, k, iid = self.session_rng[m.inst.inst_id], m.inst.scale, m.inst.inst_id
            sid = 20
            def add(type_: str, state: str, event: str, wait_class: str, micro: int,
                    blocking: tuple[str, int | None, int | None] = ("NO HOLDER", None, None)) -> None:
                nonlocal sid
                sid += 1 + rng.randrange(37)
                background = type_ == "BACKGROUND"
                rows.append({"INST_ID": iid, "SID": sid, "TYPE": type_, "STATUS": "ACTIVE", "STATE": state,
                             "EVENT": event, "WAIT_CLASS": wait_class, "WAIT_TIME_MICRO": micro,
                             "BLOCKING_SESSION_STATUS": blocking[0], "BLOCKING_INSTANCE": blocking[1],
                             "BLOCKING_SESSION": blocking[2], "SERIAL#": 1 if background else 40_000 + sid,
                             "USERNAME": None if background else "APP",
                             "PROGRAM": f"oracle@{m.inst.host} ({BACKGROUND_PROCESS.get(event, 'MMON')})" if background
                             else "JDBC Thin Client",
                             "FINAL_BLOCKING_SESSION_STATUS": blocking[0], "FINAL_BLOCKING_INSTANCE": blocking[1],
                             "FINAL_BLOCKING_SESSION": blocking[2],
                             # long calls (issue 24): a background process's call lasts since instance
                             # start; a user call a few seconds (the demo's long call is added below)
                             "LAST_CALL_ET": 250_000 + i * self.dt if background else rng.randrange(0, 20),
                             "SQL_ID": None if background else DEMO_SQL_IDS[rng.randrange(len(DEMO_SQL_IDS))]})
            for ev in p.events:
                if ev.wait_class == "Idle" or ev.rate <= 0:
                    continue
                lam = ev.rate * k * ev.avg_us / 1e6
                count = poisson(rng, lam)
                if ev.background:
                    count = min(count, 3)
                for _ in range(count):
                    add("BACKGROUND" if ev.background else "USER", "WAITING", ev.name, ev.wait_class,
                        max(1, int(rng.expovariate(1e6 / ev.avg_us) * 1e6)))
            for _ in range(poisson(rng, p.db_cpu * k)):
                # on CPU: STATE names how the last wait ended, EVENT is that last wait
                add("USER", rng.choice(("WAITED SHORT TIME", "WAITED KNOWN TIME")), "db file sequential read",
                    "User I/O", rng.randrange(50, 400_000))
            if self.setup.standby:      # the recovery slave reading the redo it applies (a background session)
                add("BACKGROUND", "WAITING", "log file sequential read", "System I/O", rng.randrange(200, 20_000))
                rows[-1]["PROGRAM"] = f"oracle@{m.inst.host} (PR00)"
            if self.setup.blocking and iid == 1:
                lo, hi = int(self.n * 0.7), int(self.n * 0.85)
                if lo <= i <= hi:
                    held = (i - lo) * self.dt + 7
                    for extra in (0, 41):
                        add("USER", "WAITING", "enq: TX - row lock contention", "Application",
                            (held - extra // 10) * 1_000_000 + 250_000, ("VALID", 2, 1234))
            if self.setup.blocking and iid == 2 and int(self.n * 0.7) <= i <= int(self.n * 0.85):
                # the row lock's holder: idle in its transaction (TADDR set, so the statement reads it)
                rows.append({"INST_ID": 2, "SID": 1234, "TYPE": "USER", "STATUS": "INACTIVE", "STATE": "WAITING",
                             "EVENT": "SQL*Net message from client", "WAIT_CLASS": "Idle",
                             "WAIT_TIME_MICRO": (i - int(self.n * 0.7)) * self.dt * 1_000_000 + 9_000_000,
                             "BLOCKING_SESSION_STATUS": "NO HOLDER", "BLOCKING_INSTANCE": None,
                             "BLOCKING_SESSION": None, "SERIAL#": 51_017, "USERNAME": "BATCH",
                             "PROGRAM": "sqlplus@app1 (TNS V1-V3)", "FINAL_BLOCKING_SESSION_STATUS": "NO HOLDER",
                             "FINAL_BLOCKING_INSTANCE": None, "FINAL_BLOCKING_SESSION": None,
                             # INACTIVE: seconds since its last call ended; no statement running
                             "LAST_CALL_ET": (i - int(self.n * 0.7)) * self.dt + 9, "SQL_ID": None})
            if self.db.name == LONG_CALL_DB and iid == 1:
                # a month-end report on instance 1, running since before the recording (long calls, issue 24)
                rows.append({"INST_ID": 1, "SID": 777, "TYPE": "USER", "STATUS": "ACTIVE",
                             "STATE": "WAITED SHORT TIME", "EVENT": "direct path read", "WAIT_CLASS": "User I/O",
                             "WAIT_TIME_MICRO": 900, "BLOCKING_SESSION_STATUS": "NO HOLDER",
                             "BLOCKING_INSTANCE": None, "BLOCKING_SESSION": None, "SERIAL#": 30_211,
                             "USERNAME": "REPORTS", "PROGRAM": "JDBC Thin Client",
                             "FINAL_BLOCKING_SESSION_STATUS": "NO HOLDER", "FINAL_BLOCKING_INSTANCE": None,
                             "FINAL_BLOCKING_SESSION": None, "LAST_CALL_ET": LONG_CALL_START + i * self.dt,
                             "SQL_ID": LONG_CALL_SQL_ID})
        if self.setup.standby:      # MOUNTED: no user can connect; LGWR writes no redo on a standby
            rows = [r for r in rows if r["TYPE"] == "BACKGROUND" and r["EVENT"] != "log file parallel write"]
        return rows

    # -- GV$RESOURCE_LIMIT ---------------------------------------------------
    def resource_limit(self, i: int) -> list[dict]:
        s = self.setup
        limit, first, last = s.processes
        rows = []
        for m in self.models:
            iid, rng = m.inst.inst_id, self.rng
            rng.randrange(-2, 3)        # (drawn as before, so the rows drawn after it stay the same)
            procs = self.processes_current(iid, i)
            sess = int(procs * 1.45) + rng.randrange(-3, 4)
            values = {
                "processes": (procs, max(procs, last + 4), limit),
                "sessions": (sess, int(last * 1.5), s.sessions_limit),
                "enqueue_locks": (int(procs * 0.14), int(procs * 0.3), s.sessions_limit * 12 + 7000),
                "enqueue_resources": (int(procs * 0.9), int(procs * 1.4), "UNLIMITED"),
                "transactions": (int(procs * 0.06), int(procs * 0.2), int(s.sessions_limit * 1.1)),
                "parallel_max_servers": (0, 16, 120),
                "max_rollback_segments": (22, 22, 65535),
                "gcs_resources": self.gcs_resources(iid, i),
            }
            if s.standby:           # MOUNTED: no transaction has run on the instance
                values["transactions"] = (0, 0, values["transactions"][2])
            for name in RESOURCES:
                if name == "gcs_resources" and not self.db.rac:
                    continue
                cur, high, lim = values[name]
                text = "UNLIMITED" if lim == "UNLIMITED" else str(lim)
                rows.append({"INST_ID": iid, "RESOURCE_NAME": name, "CURRENT_UTILIZATION": cur,
                             "MAX_UTILIZATION": max(cur, high), "LIMIT_VALUE": f"{text:>10}"})
        return rows

    # -- processes, logons and global cache resources (one count for every view) --------
    def processes_current(self, inst_id: int, i: int) -> int:
        """Processes of the instance (GV$RESOURCE_LIMIT 'processes', GV$PGASTAT 'process count'):
        from the setup's start to its end count over the recording, a process or two either way."""
        limit, first, last = self.setup.processes
        share = i / self.n if self.n else 1.0
        wobble = (i * 7919 + inst_id * 104_729) % 5 - 2
        if self.setup.standby:      # no one logs on to a MOUNTED standby: its processes stay as they are
            wobble = 0
        return min(int(round(first + (last - first) * share)) + wobble, limit)

    def processes_max(self) -> int:
        """GV$RESOURCE_LIMIT MAX_UTILIZATION of 'processes' (GV$PGASTAT 'max processes count')."""
        return min(self.setup.processes[2] + 4, self.setup.processes[0])

    def logons_current(self, inst_id: int, i: int) -> int:
        """GV$SYSSTAT 'logons current': a session per process (dedicated servers and background
        processes) but the PSEUDO process and the few processes without a session."""
        return self.processes_current(inst_id, i) - PROCESSES_WITHOUT_SESSION

    def gcs_resources(self, inst_id: int, i: int) -> tuple[int, int, str]:
        """GV$RESOURCE_LIMIT 'gcs_resources' of a RAC instance (current, max, limit): about one
        per buffer of its cache that the global cache service tracks, so over a million."""
        share = i / self.n if self.n else 1.0
        current = 1_184_000 + 97_000 * inst_id + int(6_000 * share) + (i * 131 + inst_id * 17) % 900
        return current, 1_312_000 + 97_000 * inst_id, str(GCS_RESOURCES_LIMIT)

    # -- tablespaces ---------------------------------------------------------
    def tablespace_rows(self, i: int) -> dict[str, list[dict]]:
        """19c: the CDB_ views and V$CONTAINERS exist in a non-CDB too, with CON_ID 0."""
        hours = i * self.dt / 3600
        usage, spaces = [], []
        for container, name, contents, block, used, size, per_hour in self.setup.tablespaces:
            now = min(size, int(used + per_hour * hours + (self.ts_rng.randrange(0, 64) if per_hour else 0)))
            if contents == "TEMPORARY":
                now = int(used * (1 + 0.5 * math.sin(i / 9.0) ** 2))
            cid = CONTAINERS[container] if self.setup.cdb else 0
            usage.append({"CON_ID": cid, "TABLESPACE_NAME": name, "USED_SPACE": now, "TABLESPACE_SIZE": size})
            spaces.append({"CON_ID": cid, "TABLESPACE_NAME": name, "BLOCK_SIZE": block, "CONTENTS": contents,
                           "STATUS": "READ ONLY" if name in READ_ONLY else "ONLINE"})
        names = CONTAINERS.items() if self.setup.cdb else ((self.db.name, 0),)
        return {"CDB_TABLESPACE_USAGE_METRICS": usage, "CDB_TABLESPACES": spaces,
                "V$CONTAINERS": [{"CON_ID": cid, "NAME": name} for name, cid in names]}

    # -- V$RECOVERY_FILE_DEST ------------------------------------------------
    def recovery_file_dest(self, i: int) -> list[dict]:
        name, limit, used0, reclaimable = self.setup.fra
        redo = sum(m.stats["redo size"][i] - m.stats["redo size"][0] for m in self.models)
        used = min(limit, used0 + redo)
        files = 1200 + redo // (512 * MiB)
        return [{"NAME": name, "SPACE_LIMIT": limit, "SPACE_USED": used, "SPACE_RECLAIMABLE": reclaimable,
                 "NUMBER_OF_FILES": files}]

    # -- GV$ARCHIVE_DEST -----------------------------------------------------
    def archive_dest(self, i: int, sequences: dict[int, int]) -> list[dict]:
        rows = []
        for m in self.models:
            iid = m.inst.inst_id
            archived = sequences.get(m.inst.thread, 0)
            for dest_id, target, destination, valid_now in self.setup.dests:
                status, error, seq = "VALID", None, archived if valid_now == "YES" else 0
                err = self.setup.dest_error
                if err and err[0] == dest_id:
                    first_bad = int(self.n * err[1])
                    if i >= first_bad:
                        status, error = "ERROR", err[2]
                        seq = self._frozen.setdefault((iid, dest_id), archived)
                rows.append({"INST_ID": iid, "DEST_ID": dest_id, "DEST_NAME": f"LOG_ARCHIVE_DEST_{dest_id}",
                             "STATUS": status, "TARGET": target, "DESTINATION": destination,
                             "VALID_NOW": valid_now, "ERROR": error, "LOG_SEQUENCE": seq,
                             "DELAY_MINS": self.delay_minutes(destination)})
        return rows

    def delay_minutes(self, destination: str) -> int:
        """DELAY_MINS of a destination: DEMO delays the apply on its standby DEMOSB."""
        return STANDBY_DELAY_MINUTES if destination == "demosb" else 0

    # -- GV$ARCHIVE_DEST_STATUS (issue 22) ----------------------------------------
    def archive_dest_status(self, i: int) -> list[dict]:
        rows = []
        for m in self.models:
            iid = m.inst.inst_id
            for dest_id, target, destination, valid_now in self.setup.dests:
                local = target == "PRIMARY"
                if local:
                    kind, mode, recovery, gap = "LOCAL", "MOUNTED-STANDBY" if self.setup.standby else "OPEN", \
                        ("MANAGED" if self.setup.standby else "IDLE"), None
                elif valid_now != "YES":                    # the standby's destination to its primary
                    kind, mode, recovery, gap = "PHYSICAL", "UNKNOWN", "IDLE", None
                else:
                    delayed = self.delay_minutes(destination) > 0
                    kind, mode = "PHYSICAL", "MOUNTED-STANDBY"
                    recovery = "MANAGED" if delayed else "MANAGED REAL TIME APPLY"
                    gap = "NO GAP"
                    err = self.setup.dest_error
                    if err and err[0] == dest_id and i >= int(self.n * err[1]):
                        gap, mode = "RESOLVABLE GAP", "UNKNOWN"
                rows.append({"INST_ID": iid, "DEST_ID": dest_id, "DEST_NAME": f"LOG_ARCHIVE_DEST_{dest_id}",
                             "STATUS": "VALID", "TYPE": kind, "DATABASE_MODE": mode, "RECOVERY_MODE": recovery,
                             "GAP_STATUS": gap})
        return rows

    # -- GV$MANAGED_STANDBY (issue 22): MRP0 on the standby, nothing on a primary ----
    def managed_standby(self, i: int) -> list[dict]:
        if not self.setup.standby:
            return []
        lo, hi = int(self.n * BREAK[0]), int(self.n * BREAK[1])
        status = "WAIT_FOR_LOG" if lo <= i <= hi else "APPLYING_LOG"
        return [{"INST_ID": m.inst.inst_id, "PROCESS": "MRP0", "STATUS": status,
                 "DELAY_MINS": STANDBY_DELAY_MINUTES} for m in self.models[:1]]

    # -- V$DATAGUARD_STATS ---------------------------------------------------
    def dataguard_stats(self, i: int) -> list[dict]:
        if not self.setup.standby:
            return []
        now = self.start + _dt.timedelta(seconds=i * self.dt)
        lo, hi = int(self.n * BREAK[0]), int(self.n * BREAK[1])
        rng = self.rng
        unit0, unit3 = "day(2) to second(0) interval", "day(2) to second(3) interval"
        if i < lo:
            datum = now - _dt.timedelta(seconds=1)
            transport, apply = interval_text(rng.choice((0, 0, 1))), interval_text(rng.choice((1, 1, 2, 3)))
        elif i <= hi:                                   # no contact with the primary: datum frozen
            datum = self.start + _dt.timedelta(seconds=lo * self.dt - 1)
            transport, apply = None, interval_text(2)
        else:                                           # gap resolved, catching up
            behind = max(0, (hi - lo) * self.dt - (i - hi) * self.dt * 4)
            datum = now - _dt.timedelta(seconds=1)
            transport, apply = interval_text(behind), interval_text(behind + 2)
        # the configured delay (DELAY_MINS): redo is applied that long after it arrives (issue 22)
        apply = interval_text(interval_seconds(apply) + STANDBY_DELAY_MINUTES * 60)
        finish = interval_text(0.4 + (0 if transport is None else 0.02 * (interval_seconds(transport))), 3)
        computed = mdy(now)
        return [
            {"NAME": "transport lag", "VALUE": transport, "UNIT": unit0, "TIME_COMPUTED": computed,
             "DATUM_TIME": mdy(datum)},
            {"NAME": "apply lag", "VALUE": apply, "UNIT": unit0, "TIME_COMPUTED": computed,
             "DATUM_TIME": mdy(datum)},
            {"NAME": "apply finish time", "VALUE": finish, "UNIT": unit3, "TIME_COMPUTED": computed,
             "DATUM_TIME": None},
            {"NAME": "estimated startup time", "VALUE": "14", "UNIT": "second", "TIME_COMPUTED": computed,
             "DATUM_TIME": None},
        ]

    # -- V$ASM_DISKGROUP_STAT ------------------------------------------------
    def asm_diskgroup(self, i: int) -> list[dict]:
        if not self.setup.asm:
            return []
        offline = 1 if i >= self.n // 2 else 0
        data_total, fra_total = 8 * 1024 * 1024, 2 * 1024 * 1024        # MB
        data_free = 1_900_000 - i * 40
        disk_mb = data_total // 16
        required = disk_mb                                              # one failure group of NORMAL
        # NORMAL redundancy: usable = (free - required) / 2; an offline disk leaves its space missing
        usable = (data_free - offline * disk_mb - required) // 2
        fra_used = self.recovery_file_dest(i)[0]["SPACE_USED"] // MiB
        return [
            {"GROUP_NUMBER": 1, "NAME": "DATA", "STATE": "CONNECTED", "TYPE": "NORMAL", "TOTAL_MB": data_total,
             "FREE_MB": data_free - offline * disk_mb, "REQUIRED_MIRROR_FREE_MB": required,
             "USABLE_FILE_MB": usable, "OFFLINE_DISKS": offline},
            {"GROUP_NUMBER": 2, "NAME": "FRA", "STATE": "CONNECTED", "TYPE": "EXTERN", "TOTAL_MB": fra_total,
             "FREE_MB": fra_total - fra_used, "REQUIRED_MIRROR_FREE_MB": 0, "USABLE_FILE_MB": fra_total - fra_used,
             "OFFLINE_DISKS": 0},
            # 19c FLEX group: redundancy per file group, so Oracle computes no USABLE_FILE_MB (0)
            {"GROUP_NUMBER": 3, "NAME": "FLEXDATA", "STATE": "CONNECTED", "TYPE": "FLEX", "TOTAL_MB": FLEX_MB,
             "FREE_MB": 1_800_000 - i * 10, "REQUIRED_MIRROR_FREE_MB": FLEX_MB // 3, "USABLE_FILE_MB": 0,
             "OFFLINE_DISKS": 0},
        ]

    def asm_disks(self) -> list[dict]:
        """V$ASM_DISK_STAT: DATA 16 disks each its own failure group, FRA 4 disks (EXTERN: each its own),
        FLEXDATA 3 failure groups of 2 disks."""
        if not self.setup.asm:
            return []
        layout = [(1, f"DATA_{d:04d}") for d in range(16)] + [(2, f"FRA_{d:04d}") for d in range(4)]
        layout += [(3, f"FLEX_FG{d // 2 + 1}") for d in range(6)]
        rows, numbers = [], {}
        for group, failgroup in layout:
            numbers[group] = numbers.get(group, -1) + 1
            rows.append({"GROUP_NUMBER": group, "DISK_NUMBER": numbers[group], "FAILGROUP": failgroup,
                         "FAILGROUP_TYPE": "REGULAR"})
        return rows

    def asm_client(self) -> list[dict]:
        if not self.setup.asm:
            return []
        return [{"GROUP_NUMBER": g, "CLUSTER_NAME": "racdb-clu", "STATUS": "CONNECTED"} for g in (1, 2, 3)]

    # -- all -----------------------------------------------------------------
    def views(self, i: int, sequences: dict[int, int]) -> dict[str, list[dict]]:
        out = {"GV$SESSION": self.session(i), "GV$RESOURCE_LIMIT": self.resource_limit(i),
               **self.tablespace_rows(i), "V$RECOVERY_FILE_DEST": self.recovery_file_dest(i),
               "V$DATAGUARD_STATS": self.dataguard_stats(i), "GV$ARCHIVE_DEST": self.archive_dest(i, sequences),
               "V$ASM_DISKGROUP_STAT": self.asm_diskgroup(i), "V$ASM_DISK_STAT": self.asm_disks(),
               "V$ASM_CLIENT": self.asm_client(),
               "GV$ARCHIVE_DEST_STATUS": self.archive_dest_status(i), "GV$MANAGED_STANDBY": self.managed_standby(i)}
        if self.setup.standby:       # MOUNTED: the data dictionary views are skipped, not read
            for name in MOUNTED_SKIPPED:
                del out[name]
        return out


def interval_seconds(text: str) -> float:
    days, clock = text.lstrip("+").split(" ")
    h, m, s = clock.split(":")
    return int(days) * 86400 + int(h) * 3600 + int(m) * 60 + float(s)
