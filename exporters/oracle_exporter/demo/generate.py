"""Deterministic generator of the demo recordings (issue 2, item 7).

    python -m oracle_exporter.demo.generate --profile before --minutes 35 --interval 15 --out FILE

Writes JSON Lines snapshots in the replay format (oracle_exporter.snapshot):
one object per database per interval, with rows for every view and column the
live source selects (oracle_exporter.queries.build_queries with the default
settings: GV$EVENT_HISTOGRAM_MICRO, the default histogram events), upper-case keys, values as
Oracle returns them (numbers as numbers, GV$SYSTEM_PARAMETER.VALUE as a string, DATE
columns as ISO 8601, NULL as null).

How the numbers are made (so that tests can recompute them from the rows):

* Every cumulative counter starts at "uptime x rate x 0.6" (the instance has
  been up ~3 days at a lower average load than this peak hour) and grows by
  ``rate x duration`` over the file, exactly (rounded to a whole number once).
  Per interval the increments follow a shared load factor (+-2.5 %) and a
  small private jitter (+-1.2 %), so interval rates stay within +-5 % while
  first-to-last rates hit the field-notes targets exactly.
* Wait events: TOTAL_WAITS as above; TIME_WAITED_MICRO grows by exactly
  waits x average (microseconds) over the file, with +-2 % jitter per interval.
* Derived statistics share the event series they measure: 'redo writes' and
  'redo write time (usec)' are 'log file parallel write'; 'redo synch time
  (usec)' is 'log file sync' time; the centisecond variants ('redo write
  time', 'redo synch time', 'redo log space wait time') are the microsecond
  values // 10000. (Field-notes R8/R9/R12 are a unit slip in the source: a
  commit waiting 26.45 ms on log file sync spends ~26 ms in redo synch time.)
* GV$EVENT_HISTOGRAM_MICRO: per-bucket counts (not cumulative across buckets)
  of a lognormal distribution whose mean is the event's average wait; bucket
  WAIT_TIME_MICRO = 2^k counts waits in [2^(k-1), 2^k) us (k = 0: [0, 1) us).
  Counts are cumulative over time, never decrease, and always sum to the
  event's TOTAL_WAITS. Only buckets that have had waits are returned.
* GV$LOG: log switches happen when the current log is full (redo bytes), or
  after archive_lag_target seconds in the "after" profile (8 GB logs switched
  every 7 minutes at 10.1 MB/s means a forced switch, field-notes R15).
  GV$LOG is returned once per instance and lists every thread's groups (it
  reads the control file), so a two-instance RAC has every row twice.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import math
import random
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence, TextIO

from ..config import DEFAULT_HISTOGRAM_EVENTS
from ..queries import SYSMETRIC_GROUP_ID, declared_names
from .. import views as registry
from .. import collectors as _view_registering_collectors  # noqa: F401  (collector modules may register their own views)
from ..snapshot import Snapshot
from . import tail19c
from . import signals  # issue 24: demo rows of the on-call signals collectors
from .health import CONTAINERS, MOUNTED_SKIPPED, HealthModel, mounted_reason

# The names the live statements ask for: the union of what the collectors read.
_NAMES = declared_names()
SYSSTAT_NAMES, PARAMETER_NAMES, SYSMETRIC_NAMES = (_NAMES["GV$SYSSTAT"], _NAMES["GV$SYSTEM_PARAMETER"],
                                                   _NAMES["GV$SYSMETRIC"])
TIME_MODEL_NAMES = _NAMES["GV$SYS_TIME_MODEL"]

SEED = 20250311
START = _dt.datetime(2025, 3, 11, 9, 0, 0, tzinfo=_dt.timezone.utc)  # peak hour
UPTIME_S = 3 * 86400 + 2 * 3600 + 47 * 60 + 13                      # instance up ~3 days
WARM = 0.6                                                           # average load since startup / peak
OUTAGE_ERROR = "ORA-12170: TNS:Connect timeout occurred"
MB = 1_000_000
MiB = 1 << 20
GiB = 1 << 30
PROFILES = ("before", "after", "rac-outage", "standby")


def half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


# --------------------------------------------------------------------------- profiles

@dataclass(frozen=True)
class Ev:
    """A wait event: rate in waits/s and average wait in microseconds during the recording."""
    name: str
    wait_class: str
    rate: float
    avg_us: float
    sigma: float = 0.8         # lognormal shape of its histogram
    timeouts: float = 0.0      # share of waits that ended in a timeout
    residue: int = 0           # waits from before the recording (events that stopped, e.g. after the fix)
    background: bool = False   # waited by background processes (not part of DB time)


@dataclass(frozen=True)
class Latch:
    name: str
    gets: float                # willing-to-wait gets/s
    miss: float                # misses / gets
    imm_gets: float = 0.0      # immediate gets/s
    imm_miss: float = 0.0      # immediate misses / immediate gets
    event: str | None = None   # wait event whose waits are this latch's sleeps
    sleeps: float = 0.0        # sleeps/s when no event is given
    sleep_us: float = 400.0


@dataclass(frozen=True)
class Profile:
    name: str
    events: tuple[Ev, ...]
    latches: tuple[Latch, ...]
    commits: float
    redo_entries: float
    redo_size: float           # bytes/s
    lgwr_bytes: float          # bytes/s written by LGWR (redo size + wastage), field-notes "LGWR throughput"
    redo_synch_writes: float
    small_write_share: float   # share of LGWR writes of <= 4 KB
    alloc_retries: float
    space_requests: float
    log_size: int
    log_groups: int
    log_buffer: int
    lag_target: int | None     # archive_lag_target seconds (forced switches), None = switch when full
    active_s: float            # a log stays ACTIVE this long after it stops being current
    archive_s: float           # and is archived this long after
    fill0: float               # share of the current log full at the first snapshot
    pga_target: int
    pga_alloc: float           # total PGA allocated / target
    over_alloc_rate: float     # 'over allocation count' per second
    db_cpu: float              # DB CPU seconds per second
    bg_cpu: float              # background CPU seconds per second
    other_cpu: float           # non-Oracle CPU seconds per second on the host
    os_load: float             # 'Current OS Load'
    load: dict[str, float] = field(default_factory=dict)   # other GV$SYSSTAT counters per second
    logons_current: int = 212
    redo_block: int = 512      # V$LOG.BLOCKSIZE: 512, or 4096 on 4K-sector / flash redo


IDLE = "Idle"

COMMON_EVENTS: tuple[Ev, ...] = (
    Ev("db file scattered read", "User I/O", 110, 6500, 0.9),
    Ev("direct path read", "User I/O", 45, 4200, 0.9),
    Ev("direct path write", "User I/O", 14, 3100, 0.9),
    Ev("db file parallel write", "System I/O", 55, 6200, background=True),
    Ev("control file parallel write", "System I/O", 0.7, 9000, 0.7, background=True),
    Ev("control file sequential read", "System I/O", 22, 1400),
    Ev("enq: TX - row lock contention", "Application", 0.3, 42000, 1.2),
    Ev("buffer busy waits", "Concurrency", 3.2, 1600, 1.1),
    Ev("library cache: mutex X", "Concurrency", 0.6, 150, 1.0),
    Ev("SQL*Net message to client", "Network", 3100, 2, 0.5),
    Ev("LGWR wait for redo copy", "Other", 1.5, 40, background=True),
    Ev("SQL*Net message from client", IDLE, 3000, 58000, 1.5),
    Ev("rdbms ipc message", IDLE, 260, 75000, 1.2, timeouts=0.35, background=True),
    Ev("LGWR worker group idle", IDLE, 140, 12000, 1.0, background=True),
    Ev("pmon timer", IDLE, 1 / 3, 3_000_000, 0.1, timeouts=1.0, background=True),
    Ev("smon timer", IDLE, 1 / 300, 300_000_000, 0.1, timeouts=1.0, background=True),
    Ev("DIAG idle wait", IDLE, 2, 1_000_000, 0.1, timeouts=1.0, background=True),
)

LOAD_BEFORE: dict[str, float] = {
    "session logical reads": 182_000, "db block changes": 27_400, "physical reads": 2_450,
    "physical writes": 930, "physical read total IO requests": 1_090, "physical write total IO requests": 640,
    "user calls": 3_050, "parse count (total)": 1_210, "parse count (hard)": 3.5, "execute count": 4_520,
    "sorts (memory)": 350, "sorts (disk)": 0.01, "sorts (rows)": 91_000, "logons cumulative": 0.8,
    "user rollbacks": 0.4, "workarea executions - optimal": 300, "workarea executions - onepass": 0.2,
    "workarea executions - multipass": 0,
}

BEFORE = Profile(
    name="before",
    events=(
        Ev("log file parallel write", "System I/O", 74, 11800, 0.7, background=True),        # R1
        Ev("log file sync", "Commit", 72, 26450, 0.9),                                        # R2
        Ev("log buffer space", "Configuration", 3.5, 28600, 0.9),                             # R3
        Ev("log file switch (checkpoint incomplete)", "Configuration", 0.5, 380, 0.8),        # R4
        Ev("latch: redo allocation", "Other", 0.01, 500, 0.8),                                # R5 "negligible"
        Ev("latch: redo writing", "Other", 0.02, 300, 0.8),                                   # R5 "negligible"
        Ev("log file switch completion", "Configuration", 0.5, 20820, 0.8),                   # R6
        Ev("log file sequential read", "System I/O", 10, 7020, 0.6, background=True),         # R7
        Ev("log file single write", "System I/O", 0.07, 9000, 0.6, background=True),
        Ev("db file sequential read", "User I/O", 850, 10000, 0.8),                           # I2
        Ev("latch: cache buffers chains", "Concurrency", 2, 280, 1.0),
        Ev("latch: shared pool", "Concurrency", 0.2, 900, 1.0),
    ) + COMMON_EVENTS,
    latches=(
        Latch("cache buffers chains", 360_000, 0.0026, 4_200, 0.0002, event="latch: cache buffers chains"),
        Latch("cache buffers lru chain", 9_200, 0.006, 3_100, 0.001, sleeps=0.05),
        Latch("redo allocation", 31_000, 0.012, 60, 0.002, event="latch: redo allocation"),
        Latch("redo copy", 6, 0.0, 13_326, 0.0006),
        Latch("redo writing", 820, 0.003, 0, 0.0, event="latch: redo writing"),
        Latch("shared pool", 6_100, 0.008, 0, 0.0, event="latch: shared pool"),
        Latch("library cache load lock", 1.4, 0.0, 0.2, 0.0),
        Latch("row cache objects", 0.6, 0.0, 0, 0.0),
        Latch("enqueue hash chains", 14_500, 0.0009, 30, 0.0, sleeps=0.02),
        Latch("checkpoint queue latch", 7_400, 0.0004, 2_600, 0.0004),
        Latch("messages", 1_900, 0.0012, 0, 0.0, sleeps=0.01),
        Latch("session allocation", 820, 0.0007, 0, 0.0),
        Latch("In memory undo latch", 5_300, 0.0021, 900, 0.0005, sleeps=0.03),
        Latch("object queue header operation", 12_800, 0.0011, 700, 0.0003, sleeps=0.02),
    ),
    commits=72, redo_entries=13_326, redo_size=9.45 * MB, lgwr_bytes=9.8 * MB, redo_synch_writes=72,
    small_write_share=0.05, alloc_retries=3.8, space_requests=1.0,
    log_size=500 * MiB, log_groups=4, log_buffer=4 * MiB, lag_target=None, active_s=75, archive_s=50, fill0=0.35,
    pga_target=2 * GiB, pga_alloc=1.03, over_alloc_rate=1 / 90,
    db_cpu=7.2, bg_cpu=0.6, other_cpu=1.1, os_load=14.0,
    load=LOAD_BEFORE,
)

AFTER = Profile(
    name="after",
    events=(
        Ev("log file parallel write", "System I/O", 845, 550, 0.5, background=True),          # R1
        Ev("log file sync", "Commit", 519, 2130, 0.7),                                        # R2
        Ev("log buffer space", "Configuration", 0, 1900, 0.9, residue=37),                   # R3 eliminated
        Ev("log file switch (checkpoint incomplete)", "Configuration", 0, 400, 0.8, residue=3),  # R4 eliminated
        Ev("latch: redo allocation", "Other", 0.002, 900, 0.8),                               # R5
        Ev("latch: redo writing", "Other", 0, 300, 0.8, residue=5),                           # R5: 0/s
        Ev("log file switch completion", "Configuration", 0.02, 31500, 0.7),                  # R6
        Ev("log file sequential read", "System I/O", 10.5, 16620, 0.6, background=True),      # R7
        Ev("log file single write", "System I/O", 0.01, 1200, 0.6, background=True),
        Ev("db file sequential read", "User I/O", 900, 9200, 0.8),
        Ev("latch: cache buffers chains", "Concurrency", 1.2, 250, 1.0),
        Ev("latch: shared pool", "Concurrency", 0.1, 800, 1.0),
    ) + COMMON_EVENTS,
    latches=(
        Latch("cache buffers chains", 395_000, 0.0035, 4_600, 0.0002, event="latch: cache buffers chains"),
        Latch("cache buffers lru chain", 9_800, 0.005, 3_300, 0.001, sleeps=0.04),
        Latch("redo allocation", 36_000, 0.004, 70, 0.001, event="latch: redo allocation"),
        Latch("redo copy", 6, 0.0, 14_677, 0.0002),
        Latch("redo writing", 6_900, 0.0008, 0, 0.0, event="latch: redo writing"),
        Latch("shared pool", 6_300, 0.006, 0, 0.0, event="latch: shared pool"),
        Latch("library cache load lock", 1.4, 0.0, 0.2, 0.0),
        Latch("row cache objects", 0.6, 0.0, 0, 0.0),
        Latch("enqueue hash chains", 15_800, 0.0008, 30, 0.0, sleeps=0.02),
        Latch("checkpoint queue latch", 7_900, 0.0003, 2_800, 0.0003),
        Latch("messages", 9_500, 0.0009, 0, 0.0, sleeps=0.01),
        Latch("session allocation", 850, 0.0006, 0, 0.0),
        Latch("In memory undo latch", 5_600, 0.0018, 950, 0.0004, sleeps=0.02),
        Latch("object queue header operation", 13_400, 0.0009, 750, 0.0003, sleeps=0.02),
    ),
    commits=520, redo_entries=14_677, redo_size=10.1 * MB, lgwr_bytes=10.75 * MB, redo_synch_writes=520,
    small_write_share=0.30, alloc_retries=0.01, space_requests=0.02,
    log_size=8 * GiB, log_groups=4, log_buffer=72 * MiB, lag_target=420, active_s=60, archive_s=120, fill0=0.2,
    pga_target=2 * GiB, pga_alloc=0.82, over_alloc_rate=0.0,
    db_cpu=7.6, bg_cpu=0.9, other_cpu=1.0, os_load=12.5,
    load={**LOAD_BEFORE, "user calls": 3_400, "execute count": 5_100, "db block changes": 30_100},
)

CLUSTER_EVENTS: tuple[Ev, ...] = (
    Ev("gc cr block 2-way", "Cluster", 180, 420, 0.6),
    Ev("gc current block 2-way", "Cluster", 95, 480, 0.6),
    Ev("gc cr grant 2-way", "Cluster", 60, 260, 0.6),
    Ev("gc buffer busy acquire", "Cluster", 1.5, 2400, 1.0),
    Ev("gcs log flush sync", "Other", 4, 1100, 0.8),
    Ev("ges remote message", IDLE, 90, 60000, 1.0, timeouts=0.2, background=True),
    Ev("gcs remote message", IDLE, 400, 25000, 1.0, timeouts=0.3, background=True),
)

def tail_events(seed: int = SEED) -> tuple[Ev, ...]:
    """The long tail of a busy 19c instance (tail19c): every event waited a little, Idle ones
    by background processes and slaves waiting for work. Deterministic."""
    rng = random.Random(f"{seed}/tail19c")
    out = [Ev(name, wclass, round(10 ** rng.uniform(-3, 0.5), 4), round(10 ** rng.uniform(1.7, 4.8)), 0.9)
           for name, wclass in tail19c.NON_IDLE]
    out += [Ev(name, IDLE, round(10 ** rng.uniform(-2, 0.7), 4), round(10 ** rng.uniform(5, 6.5)), 0.8,
               timeouts=round(rng.uniform(0, 1), 2), background=True) for name in tail19c.IDLE]
    return tuple(out)


# RACDB: a healthy OLTP database (the "after" configuration) spread over two instances, with the
# long tail of events a real 19c instance shows (about 230 per instance, 55 of them Idle).
RACDB = replace(AFTER, name="racdb", events=AFTER.events + CLUSTER_EVENTS + tail_events(), log_size=2 * GiB,
                log_buffer=64 * MiB, lag_target=None, fill0=0.5, pga_target=4 * GiB, pga_alloc=0.7,
                logons_current=160, redo_block=4096)   # redo on flash with 4 KB sectors


@dataclass(frozen=True)
class Instance:
    inst_id: int
    name: str
    host: str
    thread: int
    scale: float = 1.0         # share of the profile's rates this instance carries
    startup_offset_s: int = 0


@dataclass(frozen=True)
class Database:
    name: str
    dbid: int
    profile: Profile
    instances: tuple[Instance, ...]
    seq0: int                  # CURRENT SEQUENCE# of thread 1 at the first snapshot
    utc_offset_minutes: int = 0    # the database host's time zone: DATEs are its wall clock (DUAL row)

    @property
    def rac(self) -> bool:
        return len(self.instances) > 1


DEMO_DB = Database("DEMO", 3951235186, BEFORE, (Instance(1, "DEMO1", "dbhost01", 1),), 48213)
DEMO_AFTER_DB = replace(DEMO_DB, profile=AFTER, seq0=49877)
# DEMOSB: physical standby of DEMO, MOUNTED (not open: issue 22) with managed recovery (MRP0) and an
# apply delay. Its performance views reuse the "after" shape; what it is for is V$DATAGUARD_STATS
# (demo/health.py: a transport break) and the apply (MRP0, its delay, the skipped dictionary views).
DEMO_STANDBY_DB = Database("DEMOSB", 3951235186, replace(AFTER, name="standby"),
                           (Instance(1, "DEMOSB1", "dbhost02", 1),), 49877)
# RACDB's hosts run on India Standard Time (UTC+05:30): east of UTC, with a half-hour offset.
RAC_DB = Database("RACDB", 1387294455, RACDB, (Instance(1, "RACDB1", "racnode01", 1, 0.55),
                                               Instance(2, "RACDB2", "racnode02", 2, 0.45, 412)), 7731,
                  utc_offset_minutes=330)

# Background processes of a 19c instance (V$PROCESS rows with PNAME; Oracle Database Reference,
# "Background Processes"): the core, the LGWR workers, the redo transport slaves (a standby
# destination), archivers, AQ, jobs, space management and MMON slaves.
BACKGROUND = ("PMON", "CLMN", "PSP0", "VKTM", "GEN0", "MMAN", "GEN1", "DIAG", "OFSD", "DBRM", "VKRM", "SVCB",
              "PMAN", "DIA0", "DBW0", "DBW1", "LGWR", "CKPT", "LG00", "LG01", "SMON", "SMCO", "RECO", "LREG",
              "PXMN", "MMON", "MMNL", "D000", "S000", "TMON", "TT00", "TT01", "TT02", "ARC0", "ARC1", "ARC2",
              "ARC3", "AQPC", "CJQ0", "QM02", "Q001", "Q002", "W000", "W001", "W002", "M000", "M001")
# RAC: global cache and enqueue services, cluster messaging; more LGWR workers, PX and job slaves.
RAC_BACKGROUND = ("LMON", "LMD0", "LMS0", "LMS1", "LMHB", "LCK0", "RMS0", "RCBG", "ACMS", "GTX0", "RSMN",
                  "IPC0", "PING", "LG02", "LG03", "P000", "P001", "P002", "P003", "J000", "J001")
STANDBY_BACKGROUND = ("MRP0", "PR00", "PR01")     # managed recovery and its recovery slaves (issue 22)
PGA_MB = {"DBW0": 9.5, "DBW1": 9.4, "LGWR": 11.2, "LG00": 3.1, "LG01": 3.1, "CKPT": 5.6, "SMON": 4.8,
          "MMON": 14.3, "ARC0": 6.2, "ARC1": 6.1, "PMON": 2.6, "DIA0": 3.4, "LMS0": 21.0, "LMS1": 20.8}

UNITS = {"Current OS Load": "Number Of Processes", "Host CPU Utilization (%)": "% Busy/(Idle+Busy)",
         "Average Active Sessions": "Active Sessions", "Database CPU Time Ratio": "% Cpu/DB_Time",
         "Database Wait Time Ratio": "% Wait/DB_Time"}


# --------------------------------------------------------------------------- commits, latches, processes

# Of the user commits, the share that asked to wait for their redo (the rest: COMMIT WRITE NOWAIT, batch
# commits), and the share that did wait (the others found their redo already written by LGWR).
COMMIT_WAIT_REQUESTED = 0.9993
COMMIT_WAIT_PERFORMED = 0.9958
# A physical standby applies redo, it runs no user transactions: its commit counters stand still
# at what the instance did before it was opened read only (a few sessions' local work).
STANDBY_COMMITS = {"user commits": 1_204, "commit wait requested": 1_203, "commit wait performed": 1_187,
                   "redo synch writes": 1_311}


def commit_statistics(commits: list[int], stats: dict[str, list[int]], standby: bool = False) -> dict[str, list[int]]:
    """user commits, commit wait requested >= commit wait performed (each its share of the commits), and
    on a physical standby every commit counter flat (redo synch writes and redo synch time with them)."""
    if standby:
        flat = {name: [value] * len(commits) for name, value in STANDBY_COMMITS.items()}
        synch_us = stats["redo synch time (usec)"][0] // 10_000 * 10_000
        flat["redo synch time (usec)"] = [synch_us] * len(commits)
        flat["redo synch time"] = [synch_us // 10_000] * len(commits)
        return flat
    return {"user commits": commits,
            "commit wait requested": [half_up(c * COMMIT_WAIT_REQUESTED) for c in commits],
            "commit wait performed": [half_up(c * COMMIT_WAIT_PERFORMED) for c in commits]}


# More of the latches a 19c instance has (V$LATCHNAME lists some 900; these are among the busier
# ones), each with its willing-to-wait and no-wait rates: the case study's latches stay the busiest.
LATCHES_19C: tuple[Latch, ...] = tuple(Latch(name, gets, miss, imm, imm_miss) for name, gets, miss, imm, imm_miss in (
    ("active checkpoint queue latch", 420, 0.0004, 0, 0.0),
    ("active service list", 260, 0.0002, 12, 0.0),
    ("cache buffer handles", 1_900, 0.0001, 0, 0.0),
    ("cache table scan latch", 0, 0.0, 95, 0.0),
    ("call allocation", 310, 0.0003, 0, 0.0),
    ("channel operations parent latch", 610, 0.0001, 0, 0.0),
    ("Consistent RBA", 850, 0.0002, 0, 0.0),
    ("DML lock allocation", 3_100, 0.0003, 0, 0.0),
    ("JS queue state obj latch", 180, 0.0, 0, 0.0),
    ("kks stats", 95, 0.0002, 0, 0.0),
    ("lgwr LWN SCN", 860, 0.0003, 0, 0.0),
    ("list of block allocation", 480, 0.0002, 0, 0.0),
    ("mostly latch-free SCN", 870, 0.0004, 0, 0.0),
    ("multiblock read objects", 2_300, 0.0005, 0, 0.0),
    ("object queue header heap", 1_100, 0.0001, 240, 0.0),
    ("OS process", 95, 0.0, 0, 0.0),
    ("OS process allocation", 60, 0.0, 0, 0.0),
    ("post/wait queue", 1_500, 0.0002, 720, 0.0001),
    ("redo on-disk SCN", 2_400, 0.0003, 0, 0.0),
    ("sequence cache", 220, 0.0001, 0, 0.0),
    ("session idle bit", 6_200, 0.0001, 0, 0.0),
    ("session switching", 42, 0.0, 0, 0.0),
    ("shared pool simulator", 640, 0.0001, 0, 0.0),
    ("simulator hash latch", 5_100, 0.0001, 0, 0.0),
    ("simulator lru latch", 310, 0.0002, 4_600, 0.0),
    ("SQL memory manager workarea list latch", 1_020, 0.0001, 0, 0.0),
    ("transaction allocation", 160, 0.0001, 0, 0.0),
    ("undo global data", 4_900, 0.0002, 0, 0.0),
))
# RAC only: the global cache and enqueue services' latches.
LATCHES_RAC: tuple[Latch, ...] = tuple(Latch(name, gets, miss, imm, imm_miss) for name, gets, miss, imm, imm_miss in (
    ("gcs resource hash", 21_000, 0.0004, 0, 0.0),
    ("gc element", 19_000, 0.0006, 1_200, 0.0001),
    ("ges resource hash list", 2_600, 0.0003, 0, 0.0),
    ("ges process parent latch", 1_700, 0.0, 0, 0.0),
    ("ges enqueue table freelist", 1_300, 0.0001, 0, 0.0),
    ("KJC message pool free list", 1_100, 0.0002, 300, 0.0),
))

ASM_BACKGROUND = ("ASMB", "RBAL")   # an instance whose files are on ASM
# Not on a MOUNTED standby: the job queue coordinator (CJQ0, it starts its Jnnn slaves) and Advanced
# Queuing (AQPC, the queue monitor's QM02 and Qnnn slaves) need an open database.
NOT_ON_MOUNTED = ("CJQ0", "AQPC", "QM02", "Q001", "Q002")

# A MOUNTED physical standby generates no redo and runs no transaction: its redo counters, the logons
# and LGWR's and the committers' waits stand still at what the instance did before (the little local
# work of STANDBY_COMMITS: each counter that share of a primary's); the redo it receives fills its FRA.
STANDBY_QUIET_EVENTS = ("log file sync", "log file parallel write")
STANDBY_FLAT_STATS = ("redo size", "redo entries", "redo wastage", "redo buffer allocation retries",
                      "redo log space requests", "redo log space wait time")
STANDBY_LOGONS = 412             # 'logons cumulative' since startup: background, RMAN and monitoring sessions


def standby_share(p: "Profile") -> float:
    """What the standby's counters hold of a primary's started at the same rates: its commits' share."""
    return STANDBY_COMMITS["user commits"] / (p.commits * UPTIME_S * WARM)


def standby_quiet_events(p: "Profile", events: dict, n: int) -> dict:
    """STANDBY_QUIET_EVENTS flat over the recording, at the standby's share of their waits."""
    out = {}
    for name in STANDBY_QUIET_EVENTS:
        ev, waits, _, _ = events[name]
        w = int(waits[0] * standby_share(p))
        out[name] = (ev, [w] * (n + 1), [int(w * ev.timeouts)] * (n + 1), [half_up(w * ev.avg_us)] * (n + 1))
    return out


def standby_flat_stats(p: "Profile", stats: dict[str, list[int]]) -> dict[str, int]:
    """GV$SYSSTAT values of the standby that do not move (its received redo drives GV$LOG and the FRA)."""
    flat = {name: int(stats[name][0] * standby_share(p)) for name in STANDBY_FLAT_STATS}
    flat["redo blocks written"] = (flat["redo size"] + flat["redo wastage"]) // p.redo_block
    flat["logons cumulative"] = STANDBY_LOGONS
    return flat


def background_processes(db: "Database") -> tuple[str, ...]:
    """PNAMEs of one instance of ``db``: the 19c list, RAC's where it is one, ASM's where it uses ASM."""
    from .health import SETUPS
    setup = SETUPS.get(db.name)
    names = (BACKGROUND + (RAC_BACKGROUND if db.rac else ())
             + (ASM_BACKGROUND if setup is not None and setup.asm else ()))
    if setup is not None and setup.standby:      # MOUNTED: no job queue, no Advanced Queuing
        names = tuple(p for p in names if p not in NOT_ON_MOUNTED)
    return names


# --------------------------------------------------------------------------- series

class Series:
    """Counter series for one instance over n intervals of dt seconds."""

    def __init__(self, rng: random.Random, n: int, dt: int):
        self.rng, self.n, self.dt = rng, n, dt
        self.duration = n * dt
        self.load = [1.0 + rng.uniform(-0.025, 0.025) for _ in range(n)]

    def weights(self, jitter: float = 0.012) -> list[float]:
        return [x * (1.0 + self.rng.uniform(-jitter, jitter)) for x in self.load]

    def spread(self, start: int, total: int, weights: Sequence[float]) -> list[int]:
        """start, then start + total distributed over the intervals by weights (monotonic, exact)."""
        cum, acc = [], 0.0
        for w in weights:
            acc += w
            cum.append(acc)
        if total == 0 or acc <= 0:
            return [start] * (self.n + 1)
        return [start] + [start + half_up(total * c / acc) for c in cum]

    def counter(self, rate: float, start: int | None = None, weights: Sequence[float] | None = None) -> list[int]:
        start = half_up(rate * UPTIME_S * WARM) if start is None else start
        return self.spread(start, half_up(rate * self.duration), weights or self.weights())


def deltas(values: Sequence[int]) -> list[int]:
    return [b - a for a, b in zip(values, values[1:])]


def lognormal_buckets(avg_us: float, sigma: float) -> list[tuple[int, float]]:
    """(WAIT_TIME_MICRO, probability) of a lognormal wait time with mean avg_us."""
    mu = math.log(avg_us) - sigma * sigma / 2

    def cdf(x: float) -> float:
        return 0.5 * (1.0 + math.erf((math.log(x) - mu) / (sigma * math.sqrt(2.0))))

    out, prev, k = [], 0.0, 0
    while True:
        bound = 1 << k
        c = cdf(bound)
        if c >= 1.0 - 1e-6 or k == 32:
            out.append((bound, 1.0 - prev))
            return out
        out.append((bound, c - prev))
        prev, k = c, k + 1


class Histogram:
    """Per-bucket cumulative counts that follow TOTAL_WAITS and never decrease."""

    def __init__(self, avg_us: float, sigma: float, total: int):
        self.buckets = lognormal_buckets(avg_us, sigma)
        self.counts = [0] * len(self.buckets)
        self.advance(total)

    def advance(self, total: int) -> None:
        delta = total - sum(self.counts)
        if delta <= 0:
            return
        deficit = [max(total * p - c, 0.0) for (_, p), c in zip(self.buckets, self.counts)]
        s = sum(deficit)
        raw = [d * delta / s for d in deficit]
        alloc = [int(math.floor(r)) for r in raw]
        rest = delta - sum(alloc)
        order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - alloc[i]), i))
        for i in order[:rest]:
            alloc[i] += 1
        self.counts = [c + a for c, a in zip(self.counts, alloc)]

    def rows(self, inst_id: int, event: str) -> list[dict]:
        return [{"INST_ID": inst_id, "EVENT": event, "WAIT_TIME_MICRO": bound, "WAIT_COUNT": c}
                for (bound, _), c in zip(self.buckets, self.counts) if c > 0]


# --------------------------------------------------------------------------- one instance

class InstanceModel:
    """All views of one instance, snapshot by snapshot."""

    def __init__(self, db: Database, inst: Instance, n: int, dt: int, seed: int):
        self.db, self.inst, self.n, self.dt = db, inst, n, dt
        p = db.profile
        rng = random.Random(f"{seed}/{p.name}/{db.name}/{inst.inst_id}")
        self.rng = rng
        s = Series(rng, n, dt)
        k = inst.scale
        self.hist_events = list(DEFAULT_HISTOGRAM_EVENTS)

        # wait events
        self.events: dict[str, tuple[Ev, list[int], list[int], list[int]]] = {}
        for ev in p.events:
            rate = ev.rate * k
            waits = s.counter(rate, start=half_up(rate * UPTIME_S * WARM) + ev.residue)
            inc = deltas(waits)
            tw = [d * (1.0 + rng.uniform(-0.02, 0.02)) for d in inc]
            total_w = waits[-1] - waits[0]
            time = s.spread(half_up(waits[0] * ev.avg_us), half_up(total_w * ev.avg_us), tw)
            timeouts = [int(math.floor(w * ev.timeouts)) for w in waits]
            self.events[ev.name] = (ev, waits, timeouts, time)
        if p.name == "standby":
            self.events.update(standby_quiet_events(p, self.events, n))
        self.histograms = {name: Histogram(self.events[name][0].avg_us, self.events[name][0].sigma,
                                           self.events[name][1][0])
                           for name in self.hist_events if name in self.events}

        # redo profile
        lfpw, lfs = self.events["log file parallel write"], self.events["log file sync"]
        stats: dict[str, list[int]] = {}
        stats["redo size"] = s.counter(p.redo_size * k)
        stats["redo entries"] = s.counter(p.redo_entries * k)
        wastage = s.counter((p.lgwr_bytes - p.redo_size) * k)
        stats["redo wastage"] = wastage
        stats["redo writes"] = lfpw[1]
        stats["redo write time (usec)"] = lfpw[3]
        stats["redo write time"] = [v // 10_000 for v in lfpw[3]]
        stats["redo blocks written"] = [(a + b) // p.redo_block for a, b in zip(stats["redo size"], wastage)]
        stats["redo write size count (   4KB)"] = [int(w * p.small_write_share) for w in lfpw[1]]
        sync_w = [d + 0.5 for d in deltas(lfs[1])]
        # a rollback waits for its redo too: redo synch writes = commits + rollbacks, near but not equal
        stats["redo synch writes"] = s.counter((p.redo_synch_writes + p.load.get("user rollbacks", 0.0)) * k,
                                               weights=sync_w)
        stats["redo synch time (usec)"] = lfs[3]
        stats["redo synch time"] = [v // 10_000 for v in lfs[3]]
        stats["redo buffer allocation retries"] = s.counter(p.alloc_retries * k)
        stats["redo log space requests"] = s.counter(p.space_requests * k)
        switch_time = [a + b for a, b in zip(self.events["log file switch completion"][3],
                                             self.events["log file switch (checkpoint incomplete)"][3])]
        stats["redo log space wait time"] = [v // 10_000 for v in switch_time]
        commits = s.counter(p.commits * k)
        stats.update(commit_statistics(commits, stats, standby=p.name == "standby"))
        for name, rate in p.load.items():
            stats[name] = s.counter(rate * k)
        fg_wait = sum(e.rate * e.avg_us for e in p.events if e.wait_class != IDLE and not e.background) / 1e6
        self.aas = (p.db_cpu + fg_wait) * k
        stats["DB time"] = s.counter(self.aas * 100)
        stats["CPU used by this session"] = s.counter(p.db_cpu * k * 100)
        stats.update(signals.gc_stats(db, s, k))      # issue 24: RAC global cache (demo/signals.py)
        self.stats = stats
        self.flat_stats = standby_flat_stats(p, stats) if p.name == "standby" else {}
        # time model (microseconds): the same DB time as GV$SYSSTAT's (centiseconds x 10,000 plus the
        # sub-centisecond rest); DB CPU is current, 'CPU used by this session' lags behind it
        self.time_model = {
            "DB time": [v * 10_000 + rng.randrange(10_000) for v in stats["DB time"]],
            "DB CPU": s.counter(p.db_cpu * k * 1e6),
            "background cpu time": s.counter(p.bg_cpu * k * 1e6),
            "parse time elapsed": s.counter(p.load.get("parse count (total)", 0) * 45 * k),
            "hard parse elapsed time": s.counter(p.load.get("parse count (hard)", 0) * 2_600 * k),
        }

        # latches: (name, {column: series})
        self.latches: list[tuple[str, dict[str, list[int]]]] = []
        for lt in p.latches + LATCHES_19C + (LATCHES_RAC if db.rac else ()):
            cols: dict[str, list[int]] = {}
            w = s.weights()
            cols["GETS"] = s.counter(lt.gets * k, weights=w)
            cols["MISSES"] = s.counter(lt.gets * lt.miss * k, weights=w)
            if lt.event:
                cols["SLEEPS"] = self.events[lt.event][1]
                wait_time = self.events[lt.event][3]
            else:
                cols["SLEEPS"] = s.counter(lt.sleeps * k)
                wait_time = [half_up(v * lt.sleep_us) for v in cols["SLEEPS"]]
            cols["IMMEDIATE_GETS"] = s.counter(lt.imm_gets * k)
            cols["IMMEDIATE_MISSES"] = s.counter(lt.imm_gets * lt.imm_miss * k)
            cols["SPIN_GETS"] = [max(m - sl, 0) for m, sl in zip(cols["MISSES"], cols["SLEEPS"])]
            cols["WAIT_TIME"] = wait_time
            self.latches.append((lt.name, cols))

        # PGA
        target = p.pga_target
        self.pga_alloc = [half_up(target * p.pga_alloc * (1 + 0.02 * math.sin(i / 7.0) + rng.uniform(-0.01, 0.01)))
                          for i in range(n + 1)]
        self.pga_max = max(self.pga_alloc) + half_up(target * 0.27)
        self.over_alloc = s.counter(p.over_alloc_rate * k)
        self.bytes_processed = s.counter(120 * MB * k)
        self.extra_bytes = s.counter(6 * MB * k)
        self.freed = s.counter(2.5 * MB * k)
        self.recompute = s.counter(0.9 * k)

        # processes: (pid, spid, pname, base PGA bytes)
        names = background_processes(db)
        base_spid = 4100 + 17 * inst.inst_id + rng.randrange(200)
        self.processes = []
        for pid, pname in enumerate(names, start=2):
            mb = PGA_MB.get(pname, 1.9)
            self.processes.append((pid, str(base_spid + 3 * pid + rng.randrange(3)), pname, half_up(mb * MiB)))
        if db.profile.name == "standby":      # its own random stream: the other series stay as they were
            extra = random.Random(f"{seed}/standby-processes/{db.name}/{inst.inst_id}")
            for pid, pname in enumerate(STANDBY_BACKGROUND, start=2 + len(names)):
                self.processes.append((pid, str(base_spid + 3 * pid + extra.randrange(3)), pname,
                                       half_up(PGA_MB.get(pname, 1.9) * MiB)))
        self.proc_max = {pname: half_up(base * 1.35) for _, _, pname, base in self.processes}

        # sysmetric: one value per 60-second interval
        self.minute_noise = [(rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03),
                              rng.choice((-2, -1, 0, 0, 1, 2, 3))) for _ in range(n * dt // 60 + 2)]
        self.health: Any = None     # the database's HealthModel (process and logon counts), set once it exists

    # -- rows ---------------------------------------------------------------

    def system_event(self, i: int) -> list[dict]:
        return [{"INST_ID": self.inst.inst_id, "EVENT": ev.name, "WAIT_CLASS": ev.wait_class,
                 "TOTAL_WAITS": waits[i], "TOTAL_TIMEOUTS": timeouts[i], "TIME_WAITED_MICRO": time[i]}
                for ev, waits, timeouts, time in self.events.values()]

    def event_histogram(self, i: int) -> list[dict]:
        rows: list[dict] = []
        for name in self.hist_events:
            h = self.histograms.get(name)
            if h is not None:
                h.advance(self.events[name][1][i])
                rows += h.rows(self.inst.inst_id, name)
        return rows

    def sysstat(self, i: int) -> list[dict]:
        rows = []
        for name in SYSSTAT_NAMES:
            if name == "logons current":
                value = self.db.profile.logons_current + self.rng.randrange(-4, 5)
                if self.health is not None:     # a session per process: the same count as GV$RESOURCE_LIMIT
                    value = self.health.logons_current(self.inst.inst_id, i)
            else:
                value = self.flat_stats.get(name, self.stats[name][i])
            rows.append({"INST_ID": self.inst.inst_id, "NAME": name, "VALUE": value})
        return rows

    def sys_time_model(self, i: int) -> list[dict]:
        return [{"INST_ID": self.inst.inst_id, "STAT_NAME": name, "VALUE": self.time_model[name][i]}
                for name in TIME_MODEL_NAMES]

    def parameter(self) -> list[dict]:
        p = self.db.profile
        values = {"log_buffer": p.log_buffer, "pga_aggregate_target": p.pga_target,
                  "pga_aggregate_limit": 2 * p.pga_target, "sga_target": 24 * GiB, "cpu_count": 12,
                  "db_block_size": 8192}
        return [{"INST_ID": self.inst.inst_id, "NAME": name, "VALUE": str(values[name])} for name in PARAMETER_NAMES]

    def pgastat(self, i: int) -> list[dict]:
        p, rng = self.db.profile, self.rng
        alloc = self.pga_alloc[i]
        inuse = half_up(alloc * (0.76 + rng.uniform(-0.01, 0.01)))
        freeable = (half_up(alloc * 0.06) // 65536) * 65536
        auto_ws = half_up(inuse * 0.21)
        processed, extra = self.bytes_processed[i], self.extra_bytes[i]
        rows = [
            ("aggregate PGA target parameter", p.pga_target, "bytes"),
            ("aggregate PGA auto target", half_up(p.pga_target * 0.42 + (p.pga_target - alloc) * 0.5), "bytes"),
            ("global memory bound", 214_743_040 if p.pga_target <= 2 * GiB else 429_486_080, "bytes"),
            ("total PGA inuse", inuse, "bytes"),
            ("total PGA allocated", alloc, "bytes"),
            ("maximum PGA allocated", self.pga_max, "bytes"),
            ("total freeable PGA memory", freeable, "bytes"),
            ("MGA allocated (under PGA)", 0, "bytes"),
            ("maximum MGA allocated", 0, "bytes"),
            ("process count", self._process_count(i, 238 + rng.randrange(-3, 4)), None),
            ("max processes count", self.health.processes_max() if self.health is not None else 287, None),
            ("PGA memory freed back to OS", self.freed[i], "bytes"),
            ("total PGA used for auto workareas", auto_ws, "bytes"),
            ("maximum PGA used for auto workareas", half_up(p.pga_target * 0.61), "bytes"),
            ("total PGA used for manual workareas", 0, "bytes"),
            ("maximum PGA used for manual workareas", 2_131_968, "bytes"),
            ("over allocation count", self.over_alloc[i], None),
            ("bytes processed", processed, "bytes"),
            ("extra bytes read/written", extra, "bytes"),
            ("cache hit percentage", round(100.0 * processed / (processed + extra), 2), "percent"),
            ("recompute count (total)", self.recompute[i], None),
        ]
        return [{"INST_ID": self.inst.inst_id, "NAME": n, "VALUE": v, "UNIT": u} for n, v, u in rows]

    def _process_count(self, i: int, default: int) -> int:
        return self.health.processes_current(self.inst.inst_id, i) if self.health is not None else default

    def latch(self, i: int) -> list[dict]:
        return [{"INST_ID": self.inst.inst_id, "NAME": name, **{c: v[i] for c, v in cols.items()}}
                for name, cols in self.latches]

    def sysmetric(self, i: int) -> list[dict]:
        p, k = self.db.profile, self.inst.scale
        minute = i * self.dt // 60
        a, b, c, d = self.minute_noise[minute]
        busy = (p.db_cpu + p.bg_cpu) * k + p.other_cpu
        cpu_ratio = 100.0 * p.db_cpu * k / self.aas
        values = {
            "Current OS Load": round(p.os_load * (0.35 + 0.65 * k) * (1 + a), 3),
            "Host CPU Utilization (%)": round(100.0 * busy / 12 * (1 + b), 3),
            "Average Active Sessions": round(self.aas * (1 + c), 3),
            "Database CPU Time Ratio": round(cpu_ratio * (1 - c), 3),
        }
        values["Database Wait Time Ratio"] = round(100.0 - values["Database CPU Time Ratio"], 3)
        return [{"INST_ID": self.inst.inst_id, "METRIC_NAME": name, "VALUE": values[name],
                 "METRIC_UNIT": UNITS[name], "GROUP_ID": SYSMETRIC_GROUP_ID, "INTSIZE_CSEC": 6000 + d}
                for name in SYSMETRIC_NAMES]

    def instance(self, startup: _dt.datetime) -> dict:
        return {"INST_ID": self.inst.inst_id, "INSTANCE_NUMBER": self.inst.inst_id,
                "INSTANCE_NAME": self.inst.name, "HOST_NAME": self.inst.host, "VERSION": "19.0.0.0.0",
                "VERSION_FULL": "19.21.0.0.0",
                "STARTUP_TIME": startup.replace(tzinfo=None).isoformat(), "STATUS": "OPEN",
                "THREAD#": self.inst.thread}

    def process(self, i: int) -> list[dict]:
        rows = []
        for pid, spid, pname, base in self.processes:
            used = half_up(base * (0.55 + self.rng.uniform(-0.03, 0.03)))
            alloc = half_up(base * (0.86 + self.rng.uniform(-0.02, 0.02)))
            self.proc_max[pname] = max(self.proc_max[pname], alloc)
            rows.append({"INST_ID": self.inst.inst_id, "PID": pid, "SPID": spid, "PNAME": pname,
                         "PGA_USED_MEM": used, "PGA_ALLOC_MEM": alloc, "PGA_MAX_MEM": self.proc_max[pname]})
        return rows


# --------------------------------------------------------------------------- containers

# RACDB is a CDB read from CDB$ROOT: each instance's activity is split over its containers
# (GV$CON_* views; PDB$SEED does nothing). Shares of DB time, statistics and waits.
CONTAINER_SHARES = {"CDB$ROOT": 0.04, "SALES": 0.70, "HR": 0.26}
CON_TIME_NAMES, CON_SYSSTAT_NAMES, CON_SYSMETRIC_NAMES = (_NAMES["GV$CON_SYS_TIME_MODEL"], _NAMES["GV$CON_SYSSTAT"],
                                                          _NAMES["GV$CON_SYSMETRIC"])
CON_HISTOGRAM_EVENTS = _NAMES["GV$CON_EVENT_HISTOGRAM_MICRO"]
TAIL_NAMES = frozenset(name for name, _ in tail19c.NON_IDLE) | frozenset(tail19c.IDLE)


class ContainerModel:
    """The GV$CON_* rows of one instance: its counters times each container's share (floored,
    so every container's counters grow monotonically and sum to at most the instance's)."""

    def __init__(self, m: "InstanceModel"):
        self.m = m
        self.workload = [ev for ev in m.db.profile.events if ev.wait_class != IDLE and ev.name not in TAIL_NAMES]
        self.histograms = {(c, name): Histogram(m.events[name][0].avg_us, m.events[name][0].sigma,
                                                int(m.events[name][1][0] * share))
                           for c, share in CONTAINER_SHARES.items() for name in CON_HISTOGRAM_EVENTS
                           if name in m.events}

    def views(self, i: int) -> dict[str, list[dict]]:
        m, iid = self.m, self.m.inst.inst_id
        out: dict[str, list[dict]] = {"GV$CON_SYS_TIME_MODEL": [], "GV$CON_SYSSTAT": [], "GV$CON_SYSTEM_EVENT": [],
                                      "GV$CON_EVENT_HISTOGRAM_MICRO": [], "GV$CON_SYSMETRIC": []}
        row = registry.row
        for c, share in CONTAINER_SHARES.items():
            cid = CONTAINERS[c]
            out["GV$CON_SYS_TIME_MODEL"] += [row("GV$CON_SYS_TIME_MODEL", INST_ID=iid, CON_ID=cid, STAT_NAME=name,
                                                 VALUE=int(m.time_model[name][i] * share)) for name in CON_TIME_NAMES]
            out["GV$CON_SYSSTAT"] += [row("GV$CON_SYSSTAT", INST_ID=iid, CON_ID=cid, NAME=name,
                                          VALUE=int(m.stats[name][i] * share)) for name in CON_SYSSTAT_NAMES]
            for ev in self.workload:
                _, waits, _, time = m.events[ev.name]
                out["GV$CON_SYSTEM_EVENT"].append(row(
                    "GV$CON_SYSTEM_EVENT", INST_ID=iid, CON_ID=cid, EVENT=ev.name, WAIT_CLASS=ev.wait_class,
                    TOTAL_WAITS=int(waits[i] * share), TIME_WAITED_MICRO=int(time[i] * share)))
            for name in CON_HISTOGRAM_EVENTS:
                h = self.histograms.get((c, name))
                if h is not None:
                    h.advance(int(m.events[name][1][i] * share))
                    out["GV$CON_EVENT_HISTOGRAM_MICRO"] += [row("GV$CON_EVENT_HISTOGRAM_MICRO", CON_ID=cid, **r)
                                                            for r in h.rows(iid, name)]
            noise = m.minute_noise[i * m.dt // 60]
            out["GV$CON_SYSMETRIC"] += [row("GV$CON_SYSMETRIC", INST_ID=iid, CON_ID=cid, METRIC_NAME=name,
                                            VALUE=round(m.aas * share * (1 + noise[2]), 3),
                                            METRIC_UNIT="Active Sessions", INTSIZE_CSEC=6000 + noise[3])
                                        for name in CON_SYSMETRIC_NAMES]
        return out


# --------------------------------------------------------------------------- redo logs

class RedoThread:
    """Log switches of one redo thread: when the current log is full, or after lag_target seconds."""

    def __init__(self, profile: Profile, thread: int, first_group: int, seq0: int,
                 redo: Sequence[int], dt: int):
        p = profile
        self.p, self.thread, self.first_group, self.dt = p, thread, first_group, dt
        rate0 = (redo[1] - redo[0]) / dt
        period0 = p.log_size / rate0 if p.lag_target is None else min(p.lag_target, p.log_size / rate0)
        # switch times (seconds from the first snapshot) of sequences seq0-G .. seq0, then onwards
        started = -p.fill0 * period0
        self.starts = {seq0 - j: started - j * period0 for j in range(p.log_groups + 1)}
        seq, fill, since = seq0, p.fill0 * p.log_size, -started
        for i in range(len(redo) - 1):
            t0, gen = i * dt, redo[i + 1] - redo[i]
            r = gen / dt
            t = 0.0
            while True:
                to_full = (p.log_size - fill) / r
                to_lag = (p.lag_target - since) if p.lag_target is not None else math.inf
                step = min(to_full, to_lag)
                if t + step > dt:
                    fill += r * (dt - t)
                    since += dt - t
                    break
                t += step
                seq += 1
                self.starts[seq] = t0 + t
                fill, since = 0.0, 0.0
        self.seq0 = seq0

    def rows(self, i: int, inst_id: int) -> list[dict]:
        p, now = self.p, i * self.dt
        current = max(s for s, t in self.starts.items() if t <= now)
        out = []
        for g in range(p.log_groups):
            # sequence held by group g: the latest s <= current with s % G == g
            seq = current - ((current - g) % p.log_groups)
            ended = self.starts.get(seq + 1)
            if seq == current:
                status, archived = "CURRENT", "NO"
            else:
                age = now - ended
                status = "ACTIVE" if age < p.active_s else "INACTIVE"
                archived = "NO" if age < p.archive_s else "YES"
            out.append({"INST_ID": inst_id, "GROUP#": self.first_group + g, "THREAD#": self.thread,
                        "SEQUENCE#": seq, "BYTES": p.log_size, "BLOCKSIZE": p.redo_block, "MEMBERS": 2,
                        "ARCHIVED": archived,
                        "STATUS": status})
        return out


# --------------------------------------------------------------------------- databases

def rfc3339(moment: _dt.datetime) -> str:
    return moment.astimezone(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def database_snapshots(db: Database, n: int, dt: int, seed: int) -> list[Snapshot]:
    """n + 1 snapshots of one database, dt seconds apart, starting at START."""
    models = [InstanceModel(db, inst, n, dt, seed) for inst in db.instances]
    threads = [RedoThread(db.profile, m.inst.thread, 1 + db.profile.log_groups * (m.inst.thread - 1),
                          db.seq0 + 1103 * (m.inst.thread - 1), m.stats["redo size"], dt) for m in models]
    startups = [START - _dt.timedelta(seconds=UPTIME_S - m.inst.startup_offset_s) for m in models]
    health = HealthModel(db, models, threads, n, dt, seed, START)
    for m in models:
        m.health = health
    # a CDB (RACDB) is recorded with the opt-in pdb collector on: its GV$CON_* views too
    containers = [ContainerModel(m) for m in models] if health.setup.cdb else []
    zone = _dt.timezone(_dt.timedelta(minutes=db.utc_offset_minutes))
    out = []
    for i in range(n + 1):
        views: dict[str, list[dict]] = {
            "GV$SYSTEM_EVENT": [], "GV$EVENT_HISTOGRAM_MICRO": [], "GV$SYSSTAT": [], "GV$LOG": [],
            "GV$SYSTEM_PARAMETER": [], "GV$PGASTAT": [], "GV$LATCH": [], "GV$SYSMETRIC": [], "GV$INSTANCE": [],
            "V$DATABASE": [], "GV$PROCESS": [], "GV$SYS_TIME_MODEL": []}
        for m, startup in zip(models, startups):
            iid = m.inst.inst_id
            views["GV$SYSTEM_EVENT"] += m.system_event(i)
            views["GV$EVENT_HISTOGRAM_MICRO"] += m.event_histogram(i)
            views["GV$SYSSTAT"] += m.sysstat(i)
            views["GV$SYS_TIME_MODEL"] += m.sys_time_model(i)
            for t in threads:  # every instance sees every thread's groups (control file)
                views["GV$LOG"] += t.rows(i, iid)
            views["GV$SYSTEM_PARAMETER"] += m.parameter()
            views["GV$PGASTAT"] += m.pgastat(i)
            views["GV$LATCH"] += m.latch(i)
            views["GV$SYSMETRIC"] += m.sysmetric(i)
            views["GV$INSTANCE"].append(m.instance(startup.astimezone(zone)))   # a DATE: host wall clock
            views["GV$PROCESS"] += m.process(i)
        standby = health.setup.standby
        views["V$DATABASE"] = [{"DBID": db.dbid, "NAME": "DEMO" if standby else db.name, "DB_UNIQUE_NAME": db.name,
                                "DATABASE_ROLE": "PHYSICAL STANDBY" if standby else "PRIMARY",
                                "LOG_MODE": "ARCHIVELOG",
                                "OPEN_MODE": "MOUNTED" if standby else "READ WRITE"}]
        # last archived sequence per thread: the CURRENT group's sequence - 1
        archived = {t.thread: max(r["SEQUENCE#"] for r in t.rows(i, 1)) - 1 for t in threads}
        views.update(health.views(i, archived))
        views.update(signals.views(db, i, dt, START, zone))       # issue 24: backups, undo, ... (demo/signals.py)
        for cm in containers:
            for name, rows in cm.views(i).items():
                views.setdefault(name, []).extend(rows)
        # the host's clock with its offset, read once per fetch (SYSTIMESTAMP)
        now = (START + _dt.timedelta(seconds=i * dt)).astimezone(zone)
        views["DUAL"] = [{"SYSTIMESTAMP": now.isoformat(timespec="microseconds")}]
        registry.with_con_id(views)      # every dynamic view's rows carry CON_ID (0: the whole instance)
        skipped = {name: mounted_reason() for name in MOUNTED_SKIPPED} if standby else {}
        out.append(Snapshot(db.name, rfc3339(START + _dt.timedelta(seconds=i * dt)), views, skipped=skipped))
    return out


def snapshots(profile: str, minutes: float, interval: int, seed: int = SEED,
              progress: TextIO | None = None) -> Iterator[Snapshot]:
    """The recording of a profile, in time order."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r} (choose from {', '.join(PROFILES)})")
    if interval <= 0 or minutes <= 0:
        raise ValueError("--minutes and --interval must be positive")
    n = int(round(minutes * 60 / interval))
    if n < 1 or abs(n * interval - minutes * 60) > 1e-9:
        raise ValueError(f"--minutes {minutes} is not a whole number of {interval} s intervals")
    if profile == "rac-outage":
        dbs = [DEMO_DB, RAC_DB]
    elif profile == "standby":
        dbs = [DEMO_STANDBY_DB]
    else:
        dbs = [DEMO_DB if profile == "before" else DEMO_AFTER_DB]
    per_db = []
    for db in dbs:
        if progress:
            print(f"generating {db.name}: {n + 1} snapshots", file=progress, flush=True)
        per_db.append(database_snapshots(db, n, interval, seed))
    if profile == "rac-outage":
        # RACDB unreachable from 40 % to 65 % of the recording (the database keeps running).
        lo, hi = int(n * 0.4), int(n * 0.65)
        for i in range(lo, hi + 1):
            snap = per_db[1][i]
            per_db[1][i] = Snapshot(snap.database, snap.time, {}, {"*": OUTAGE_ERROR})
    for i in range(n + 1):
        for snaps in per_db:
            yield snaps[i]
        if progress and (i + 1) % 40 == 0:
            print(f"  {i + 1}/{n + 1} intervals", file=progress, flush=True)


def write(profile: str, minutes: float, interval: int, out: TextIO, seed: int = SEED,
          progress: TextIO | None = None) -> int:
    count = 0
    for snap in snapshots(profile, minutes, interval, seed, progress):
        out.write(snap.to_json() + "\n")
        count += 1
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m oracle_exporter.demo.generate",
                                     description="Write a deterministic demo recording (JSON Lines replay format).")
    parser.add_argument("--profile", choices=PROFILES, default="before",
                        help="before / after: field-notes section 1 columns (database DEMO); "
                             "rac-outage: DEMO plus two-instance RACDB with an outage; "
                             "standby: DEMOSB, MOUNTED physical standby of DEMO with a delayed apply, losing contact with its primary")
    parser.add_argument("--minutes", type=float, default=35.0, help="length of the recording (default 35)")
    parser.add_argument("--interval", type=int, default=15, help="seconds between snapshots (default 15)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"random seed (default {SEED})")
    parser.add_argument("--out", default="-", help="output file (default: stdout)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    progress = None if args.quiet else sys.stderr
    try:
        if args.out == "-":
            count = write(args.profile, args.minutes, args.interval, sys.stdout, args.seed, progress)
        else:
            path = Path(args.out)
            tmp = path.with_name(path.name + ".tmp")
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                count = write(args.profile, args.minutes, args.interval, fh, args.seed, progress)
            tmp.replace(path)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if progress:
        print(f"wrote {count} snapshots to {args.out}", file=progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())
