"""The Oracle simulators of the test suite (one module; tests import it by name,
tests/oracle is on pytest's ``pythonpath``).

* ``OracleSim``: a database (one or more RAC instances) whose counters advance by
  rates; ``record()``/``snapshot()`` give a snapshot in the recording format.
  Shaped like the real views (columns exactly as the SELECT lists of
  oracle_exporter.views / queries.build_queries, which test_collectors_gen checks, and the
  catalog in data/gv_catalog.yaml): counters only grow; GV$SYSTEM_EVENT keeps
  TOTAL_WAITS / TIME_WAITED_MICRO; GV$EVENT_HISTOGRAM_MICRO / GV$EVENT_HISTOGRAM
  hold per-bucket counts where the bucket with bound n counts waits of
  duration < n not counted in a smaller bucket (powers of two, Oracle Database
  Reference); GV$LOG is returned once per instance (GV$ replicates it).
  Individual wait durations are drawn from a seeded log-normal distribution and
  rescaled so their mean is exactly the requested average; the simulator keeps
  them so tests can count them independently of the collector.
* ``make_snapshot`` / ``unreachable``: a closed-form snapshot of a database ``t``
  seconds into a recording (counters = rate x uptime), for the core tests that
  need many snapshots cheaply; rows carry exactly the columns of the live query.
* ``FakeConnection`` / ``FakeCursor`` / ``FakeClock``: a python-oracledb session
  stand-in for the live source's logic (the driver itself is exercised against
  fake listeners, never mocked).
* ``collect`` / ``samples`` / ``value``: run collectors and read their samples.
"""
from __future__ import annotations

import datetime as dt
import json
import random
import re
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import oracledb

from oracle_exporter import views
from oracle_exporter.queries import declared_names
from oracle_exporter.snapshot import Snapshot

from health_sim import health_views
from signals_sim import signal_views

EPOCH = 1_700_000_000  # recording start of make_snapshot, seconds since 1970


# --- OracleSim -------------------------------------------------------------------

WAIT_CLASSES = {
    "log file parallel write": "System I/O", "log file sync": "Commit", "db file sequential read": "User I/O",
    "db file scattered read": "User I/O", "direct path read": "User I/O", "direct path write": "User I/O",
    "log buffer space": "Configuration", "log file switch completion": "Configuration",
    "log file switch (checkpoint incomplete)": "Configuration", "log file sequential read": "System I/O",
    "control file parallel write": "System I/O", "latch: redo allocation": "Other", "latch: redo writing": "Other",
    "SQL*Net message from client": "Idle",
}

BACKGROUND = ["PMON", "VKTM", "DBW0", "LGWR", "CKPT", "SMON", "ARC0", "ARC1", "MMON", "LG00", "LG01"]


@dataclass
class Instance:
    inst_id: int
    name: str
    host: str
    thread: int
    started: str = "2024-03-01T06:00:00"
    stats: dict[str, float] = field(default_factory=dict)
    events: dict[str, list[float]] = field(default_factory=dict)        # event -> [waits, timeouts, micro]
    buckets: dict[str, dict[int, int]] = field(default_factory=dict)    # event -> {bound_us: count}
    durations: dict[str, list[float]] = field(default_factory=dict)     # event -> every wait, seconds
    latches: dict[str, dict[str, float]] = field(default_factory=dict)
    pgastat: dict[str, tuple[float, str | None]] = field(default_factory=dict)
    sysmetric: dict[str, float] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)


class OracleSim:
    """Counters of one database (one or more RAC instances) advanced by rates."""

    def __init__(self, instances: list[tuple[int, str, str, int]] | None = None, *, version: str = "19.0.0.0.0",
                 micro_histogram: bool = True, usec_stats: bool = True, seed: int = 7,
                 log_bytes: int = 524288000, groups_per_thread: int = 3, start: str = "2024-03-01T12:00:00+00:00",
                 role: str = "PRIMARY"):
        self.rng = random.Random(seed)
        self.version = version
        self.role = role
        self.micro = micro_histogram
        self.usec_stats = usec_stats
        self.time = dt.datetime.fromisoformat(start)
        self.instances = [Instance(*spec) for spec in (instances or [(1, "ODS1", "dbhost1", 1)])]
        self.log_bytes = log_bytes
        self.groups: dict[int, list[dict[str, Any]]] = {}
        group_no = 1
        for ins in self.instances:
            groups = []
            for k in range(groups_per_thread):
                groups.append({"GROUP#": group_no, "THREAD#": ins.thread, "SEQUENCE#": 1000 + k,
                               "BYTES": log_bytes, "BLOCKSIZE": 512, "MEMBERS": 2, "ARCHIVED": "YES",
                               "STATUS": "INACTIVE"})
                group_no += 1
            groups[-1]["STATUS"] = "CURRENT"
            groups[-1]["ARCHIVED"] = "NO"
            self.groups[ins.thread] = groups
            for stat in ("redo size", "redo entries", "redo writes", "redo write time", "redo synch writes",
                         "redo synch time", "redo buffer allocation retries", "redo log space requests",
                         "redo log space wait time", "redo wastage", "redo blocks written", "user commits",
                         "user rollbacks", "commit wait requested", "commit wait performed", "session logical reads",
                         "db block changes", "physical reads", "physical writes", "physical read total IO requests",
                         "physical write total IO requests", "user calls", "parse count (total)",
                         "parse count (hard)", "execute count", "sorts (memory)", "sorts (disk)", "sorts (rows)",
                         "logons cumulative", "logons current", "DB time", "CPU used by this session",
                         "workarea executions - optimal", "workarea executions - onepass",
                         "workarea executions - multipass"):
                ins.stats[stat] = 1_000_000.0 * ins.inst_id
            ins.stats["logons current"] = 120.0
            if usec_stats:
                ins.stats["redo write time (usec)"] = 1_000_000.0
                ins.stats["redo synch time (usec)"] = 1_000_000.0
            for name in ("redo allocation", "redo writing", "redo copy", "cache buffers chains", "shared pool",
                         "row cache objects", "messages", "enqueue hash chains"):
                ins.latches[name] = {c: 10_000.0 for c in ("GETS", "MISSES", "SLEEPS", "IMMEDIATE_GETS",
                                                           "IMMEDIATE_MISSES", "SPIN_GETS", "WAIT_TIME")}
            ins.pgastat = {
                "aggregate PGA target parameter": (4 * 2**30, "bytes"),
                "aggregate PGA auto target": (3 * 2**30, "bytes"),
                "global memory bound": (400 * 2**20, "bytes"),
                "total PGA inuse": (1.5 * 2**30, "bytes"),
                "total PGA allocated": (2 * 2**30, "bytes"),
                "maximum PGA allocated": (3.5 * 2**30, "bytes"),
                "total freeable PGA memory": (100 * 2**20, "bytes"),
                "over allocation count": (0, None),
                "bytes processed": (5e12, "bytes"),
                "extra bytes read/written": (1e11, "bytes"),
                "cache hit percentage": (98.04, "percent"),
            }
            ins.sysmetric = {"Current OS Load": 1.2, "Host CPU Utilization (%)": 41.5,
                             "Average Active Sessions": 6.25, "Database CPU Time Ratio": 35.0,
                             "Database Wait Time Ratio": 65.0}
            ins.params = {"log_buffer": "4194304", "pga_aggregate_target": str(4 * 2**30),
                          "pga_aggregate_limit": str(8 * 2**30), "sga_target": str(64 * 2**30),
                          "cpu_count": "12", "db_block_size": "8192"}

    # -- advancing time -----------------------------------------------------
    def advance(self, seconds: float, *, events: dict[str, tuple[float, float]] | None = None,
                stats: dict[str, float] | None = None, latches: dict[str, dict[str, float]] | None = None,
                switches: dict[int, int] | None = None, inst_ids: list[int] | None = None) -> None:
        """Advance every (or the given) instance: events {name: (waits/s, avg seconds)}, stats {name: per second}."""
        self.time += dt.timedelta(seconds=seconds)
        for ins in self.instances:
            if inst_ids is not None and ins.inst_id not in inst_ids:
                continue
            for event, (per_sec, avg) in (events or {}).items():
                self._wait(ins, event, round(per_sec * seconds), avg)
            for stat, per_sec in (stats or {}).items():
                ins.stats[stat] = ins.stats.get(stat, 0.0) + per_sec * seconds
            for name, cols in (latches or {}).items():
                slot = ins.latches.setdefault(name, {})
                for col, per_sec in cols.items():
                    slot[col] = slot.get(col, 0.0) + per_sec * seconds
        for thread, n in (switches or {}).items():
            for _ in range(n):
                self.switch(thread)

    def _wait(self, ins: Instance, event: str, n: int, avg: float) -> None:
        slot = ins.events.setdefault(event, [0.0, 0.0, 0.0])
        if n <= 0:
            return
        raw = [self.rng.lognormvariate(0.0, 0.6) for _ in range(n)]
        scale = avg / (sum(raw) / n)
        waits = [r * scale for r in raw]
        slot[0] += n
        slot[2] += round(n * avg * 1e6)          # TIME_WAITED_MICRO: whole microseconds
        ins.durations.setdefault(event, []).extend(waits)
        hist = ins.buckets.setdefault(event, {})
        for w in waits:
            hist[self.bucket_bound(w)] = hist.get(self.bucket_bound(w), 0) + 1

    def bucket_bound(self, seconds: float) -> int:
        """Oracle's bucket bound for one wait: smallest power of two n (us or ms) with duration < n."""
        unit = seconds * (1e6 if self.micro else 1e3)
        k = 0
        while 2 ** k <= unit:
            k += 1
        return 2 ** k

    def switch(self, thread: int) -> None:
        groups = self.groups[thread]
        cur = next(k for k, g in enumerate(groups) if g["STATUS"] == "CURRENT")
        nxt = (cur + 1) % len(groups)
        seq = groups[cur]["SEQUENCE#"]
        groups[cur].update(STATUS="ACTIVE", ARCHIVED="NO")
        for g in groups:
            if g["STATUS"] == "ACTIVE" and g is not groups[cur]:
                g.update(STATUS="INACTIVE", ARCHIVED="YES")
        groups[nxt].update({"STATUS": "CURRENT", "SEQUENCE#": seq + 1, "ARCHIVED": "NO"})

    # -- snapshots ------------------------------------------------------------
    def record(self, database: str = "ODS") -> dict[str, Any]:
        """One snapshot as a recording line object (JSON-compatible)."""
        v: dict[str, list[dict[str, Any]]] = {k: [] for k in (
            "GV$SYSTEM_EVENT", "GV$SYSSTAT", "GV$LOG", "GV$SYSTEM_PARAMETER", "GV$PGASTAT", "GV$LATCH", "GV$SYSMETRIC",
            "GV$INSTANCE", "V$DATABASE", "GV$PROCESS", "GV$SYS_TIME_MODEL")}
        hist_view = "GV$EVENT_HISTOGRAM_MICRO" if self.micro else "GV$EVENT_HISTOGRAM"
        hist_col = "WAIT_TIME_MICRO" if self.micro else "WAIT_TIME_MILLI"
        v[hist_view] = []
        for ins in self.instances:
            i = ins.inst_id
            for event, (waits, timeouts, micro) in ins.events.items():
                v["GV$SYSTEM_EVENT"].append({"INST_ID": i, "EVENT": event, "WAIT_CLASS": WAIT_CLASSES.get(event, "Other"),
                                             "TOTAL_WAITS": int(waits), "TOTAL_TIMEOUTS": int(timeouts),
                                             "TIME_WAITED_MICRO": int(micro)})
            for event, hist in ins.buckets.items():
                for bound in sorted(hist):
                    v[hist_view].append({"INST_ID": i, "EVENT": event, hist_col: bound, "WAIT_COUNT": hist[bound]})
            for name, value in ins.stats.items():
                v["GV$SYSSTAT"].append({"INST_ID": i, "NAME": name, "VALUE": int(round(value))})
            # time model (microseconds): DB time and DB CPU follow the centisecond statistics
            micro = {"DB time": ins.stats.get("DB time", 0.0) * 1e4,
                     "DB CPU": ins.stats.get("CPU used by this session", 0.0) * 1e4}
            for name in ("DB time", "DB CPU", "background cpu time", "parse time elapsed", "hard parse elapsed time"):
                v["GV$SYS_TIME_MODEL"].append({"INST_ID": i, "STAT_NAME": name, "VALUE": int(round(micro.get(name, 0)))})
            for thread in sorted(self.groups):                 # every instance returns every thread's groups
                for g in self.groups[thread]:
                    v["GV$LOG"].append({"INST_ID": i, **g})
            for name, value in ins.params.items():
                v["GV$SYSTEM_PARAMETER"].append({"INST_ID": i, "NAME": name, "VALUE": value})
            for name, (value, unit) in ins.pgastat.items():
                v["GV$PGASTAT"].append({"INST_ID": i, "NAME": name, "VALUE": value, "UNIT": unit})
            for name, cols in ins.latches.items():
                v["GV$LATCH"].append({"INST_ID": i, "NAME": name, **{c: int(round(x)) for c, x in cols.items()}})
            for name, value in ins.sysmetric.items():
                v["GV$SYSMETRIC"].append({"INST_ID": i, "METRIC_NAME": name, "VALUE": value,
                                          "METRIC_UNIT": "% Busy/(Idle+Busy)" if "%" in name else "Number Of Processes",
                                          "GROUP_ID": 2, "INTSIZE_CSEC": 6001})
            v["GV$INSTANCE"].append({"INST_ID": i, "INSTANCE_NUMBER": i, "INSTANCE_NAME": ins.name,
                                     "HOST_NAME": ins.host, "VERSION": self.version,
                                     "VERSION_FULL": self.version.replace("19.0.0", "19.21.0"), "STARTUP_TIME": ins.started,
                                     "STATUS": "OPEN", "THREAD#": ins.thread})
            for k, pname in enumerate(BACKGROUND, start=2):
                v["GV$PROCESS"].append({"INST_ID": i, "PID": k, "SPID": str(4000 + 100 * i + k), "PNAME": pname,
                                        "PGA_USED_MEM": 1_000_000 * k, "PGA_ALLOC_MEM": 2_000_000 * k,
                                        "PGA_MAX_MEM": 3_000_000 * k})
        v["V$DATABASE"].append({"DBID": 1234567890, "NAME": "ODS", "DB_UNIQUE_NAME": "ODS_SITE1",
                                "DATABASE_ROLE": self.role, "LOG_MODE": "ARCHIVELOG", "OPEN_MODE": "READ WRITE"})
        v.update(health_views(self))           # sessions and instance-health views (tests/oracle/health_sim.py)
        v.update(signal_views(self))           # issue 24: backups, undo, temp (tests/oracle/signals_sim.py)
        views.with_con_id(v)                   # CON_ID 0, as a 12.1+ non-CDB returns it
        return {"time": self.time.isoformat(), "database": database, "views": v}

    def snapshot(self, database: str = "ODS") -> Snapshot:
        """Through JSON and Snapshot.from_obj, exactly as replay reads a recording line."""
        return Snapshot.from_obj(json.loads(json.dumps(self.record(database))))


# --- exposition helpers used by every collector test --------------------------

def collect(snapshot: Snapshot, settings: Any = None, names: list[str] | None = None) -> list:
    from oracle_exporter.collectors import COLLECTORS
    out = []
    for name, module in COLLECTORS.items():
        if names is None or name in names:
            out.extend(module.collect(snapshot, settings if settings is not None else object()))
    return out


def samples(families: list) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} over all families."""
    out = {}
    for family in families:
        for s in family.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in out, f"duplicate series {key}"
            out[key] = s.value
    return out


def value(families: list, name: str, **labels: str) -> float:
    return samples(families)[(name, tuple(sorted(labels.items())))]


def select_columns(sql: str) -> list[str]:
    import sqlglot
    tree = sqlglot.parse_one(sql, read="oracle")
    return [e.name.upper() for e in tree.expressions]


# --- make_snapshot: closed-form snapshots ------------------------------------------

# Per-second rates of the field-notes "before" column (section 1).
WAIT_RATES = {  # event: (wait_class, waits/s, average wait in seconds)
    "log file parallel write": ("System I/O", 74.0, 0.0118),
    "log file sync": ("Commit", 72.0, 0.02645),
    "log buffer space": ("Configuration", 3.5, 0.0286),
    "log file switch completion": ("Configuration", 0.5, 0.02082),
    "db file sequential read": ("User I/O", 170.0, 0.010),
}
SYSSTAT_RATES = {
    "redo size": 9_450_000.0, "redo entries": 13_326.0, "redo writes": 74.0,
    "redo synch writes": 72.0, "user commits": 72.0, "redo buffer allocation retries": 3.8,
    "redo log space requests": 1.0, "session logical reads": 50_000.0, "execute count": 900.0,
}
LATCH_RATES = {"redo allocation": (14_000.0, 3.0), "cache buffers chains": (40_000.0, 20.0),
               "shared pool": (500.0, 0.5)}


def columns_of(view: str) -> list[str]:
    """Column list of the live statement of a view (what a real row holds)."""
    return list(views.get(view).columns)


_row = views.row   # a row with exactly the view's columns, in statement order


def _histogram(inst: int, event: str, waits: int, avg_s: float) -> list[dict]:
    """GV$EVENT_HISTOGRAM_MICRO rows: bucket WAIT_TIME_MICRO = 2^k holds waits in
    [2^(k-1), 2^k) us. All waits go to the bucket containing the average, so the
    histogram agrees with GV$SYSTEM_EVENT."""
    us = avg_s * 1e6
    upper = 1
    while upper <= us:
        upper *= 2
    return [_row("GV$EVENT_HISTOGRAM_MICRO", INST_ID=inst, EVENT=event, WAIT_TIME_MICRO=b,
                 WAIT_COUNT=waits if b == upper else 0)
            for b in (upper // 4, upper // 2, upper, upper * 2) if b >= 1]


# GV$SYS_TIME_MODEL: microseconds per second of wall time (6.25 average active sessions, 2.2 on CPU)
TIME_MODEL_RATES = {"DB time": 6_250_000, "DB CPU": 2_200_000, "background cpu time": 400_000,
                    "parse time elapsed": 90_000, "hard parse elapsed time": 20_000}


def make_snapshot(database: str = "db1", t: float = 0.0, inst_ids=(1,), scale: float = 1.0) -> Snapshot:
    """The snapshot of ``database`` ``t`` seconds into the recording."""
    views: dict[str, list[dict]] = {v: [] for v in (
        "GV$SYSTEM_EVENT", "GV$EVENT_HISTOGRAM_MICRO", "GV$SYSSTAT", "GV$LOG", "GV$SYSTEM_PARAMETER",
        "GV$PGASTAT", "GV$LATCH", "GV$SYSMETRIC", "GV$INSTANCE", "V$DATABASE", "GV$PROCESS",
        "GV$SYS_TIME_MODEL")}
    elapsed = 86_400 + t  # instance up one day when the recording starts
    for inst in inst_ids:
        for event, (wclass, rate, avg) in WAIT_RATES.items():
            waits = int(rate * scale * elapsed)
            views["GV$SYSTEM_EVENT"].append(_row(
                "GV$SYSTEM_EVENT", INST_ID=inst, EVENT=event, WAIT_CLASS=wclass, TOTAL_WAITS=waits,
                TOTAL_TIMEOUTS=0, TIME_WAITED_MICRO=int(round(waits * avg * 1e6))))
            views["GV$EVENT_HISTOGRAM_MICRO"] += _histogram(inst, event, waits, avg)
        for name in declared_names()["GV$SYSSTAT"]:
            value = 37 if name == "logons current" else int(SYSSTAT_RATES.get(name, 2.0) * scale * elapsed)
            views["GV$SYSSTAT"].append(_row("GV$SYSSTAT", INST_ID=inst, NAME=name, VALUE=value))
        for name, per_second in TIME_MODEL_RATES.items():   # microseconds per second
            views["GV$SYS_TIME_MODEL"].append(_row("GV$SYS_TIME_MODEL", INST_ID=inst, STAT_NAME=name,
                                                   VALUE=int(per_second * scale * elapsed)))
        seq = 1000 + int(elapsed // 60)  # one log switch a minute (R15 "before")
        for group in (1, 2, 3):
            gseq = seq - ((seq - group) % 3)  # the group holding seq is CURRENT, older ones follow
            status = "CURRENT" if gseq == seq else ("ACTIVE" if gseq == seq - 1 else "INACTIVE")
            views["GV$LOG"].append(_row(
                "GV$LOG", INST_ID=inst, **{"GROUP#": group, "THREAD#": inst, "SEQUENCE#": gseq},
                BYTES=524_288_000, BLOCKSIZE=512, MEMBERS=2, ARCHIVED="NO" if status == "CURRENT" else "YES",
                STATUS=status))
        for name, value in (("log_buffer", "4194304"), ("pga_aggregate_target", "2147483648"),
                            ("cpu_count", "12"), ("db_block_size", "8192")):
            views["GV$SYSTEM_PARAMETER"].append(_row("GV$SYSTEM_PARAMETER", INST_ID=inst, NAME=name, VALUE=value))
        for name, value, unit in (("aggregate PGA target parameter", 2147483648, "bytes"),
                                  ("total PGA allocated", 1_900_000_000 + int(t * 1000), "bytes"),
                                  ("total PGA inuse", 1_500_000_000, "bytes"),
                                  ("over allocation count", int(elapsed // 600), None),
                                  ("cache hit percentage", 97.5, "percent")):
            views["GV$PGASTAT"].append(_row("GV$PGASTAT", INST_ID=inst, NAME=name, VALUE=value, UNIT=unit))
        for name, (gets, misses) in LATCH_RATES.items():
            views["GV$LATCH"].append(_row(
                "GV$LATCH", INST_ID=inst, NAME=name, GETS=int(gets * elapsed), MISSES=int(misses * elapsed),
                SLEEPS=int(misses * elapsed / 10), IMMEDIATE_GETS=int(gets * elapsed / 100),
                IMMEDIATE_MISSES=0, SPIN_GETS=int(misses * elapsed * 0.9), WAIT_TIME=int(misses * elapsed * 5)))
        for name, value, unit in (("Current OS Load", 1.2, "Number Of Processes"),
                                  ("Host CPU Utilization (%)", 41.5, "% Busy/(Idle+Busy)")):
            views["GV$SYSMETRIC"].append(_row("GV$SYSMETRIC", INST_ID=inst, METRIC_NAME=name, VALUE=value,
                                              METRIC_UNIT=unit, GROUP_ID=2, INTSIZE_CSEC=6001))
        views["GV$INSTANCE"].append(_row(
            "GV$INSTANCE", INST_ID=inst, INSTANCE_NUMBER=inst, INSTANCE_NAME=f"{database.upper()}{inst}",
            HOST_NAME=f"dbhost{inst}", VERSION="19.0.0.0.0", VERSION_FULL="19.21.0.0.0",
            STARTUP_TIME="2023-11-13T22:13:20",
            STATUS="OPEN", **{"THREAD#": inst}))
        for pid, spid, pname in ((2, 4101, "PMON"), (12, 4133, "LGWR"), (10, 4129, "DBW0")):
            views["GV$PROCESS"].append(_row("GV$PROCESS", INST_ID=inst, PID=pid, SPID=str(spid + inst),
                                            PNAME=pname, PGA_USED_MEM=2_000_000, PGA_ALLOC_MEM=3_000_000,
                                            PGA_MAX_MEM=4_000_000))
    views["V$DATABASE"].append(_row("V$DATABASE", DBID=1234567890, NAME=database.upper(),
                                    DB_UNIQUE_NAME=database.upper(), DATABASE_ROLE="PRIMARY",
                                    LOG_MODE="ARCHIVELOG", OPEN_MODE="READ WRITE"))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(EPOCH + t)) + ".000Z"
    return Snapshot(database=database, time=stamp, views=views)


def unreachable(database: str, t: float = 0.0) -> Snapshot:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(EPOCH + t)) + ".000Z"
    return Snapshot(database, stamp, {}, {"*": "ORA-12170: TNS:Connect timeout occurred"})


# --- a python-oracledb session stand-in ---------------------------------------------

class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class FakeCursor:
    def __init__(self, conn):
        self.conn = conn
        self.description = None
        self._rows = []
        self.arraysize = 100

    def execute(self, sql, binds):
        self.conn.executed.append(sql)
        view = sql.split(" FROM ")[1].split()[0]
        if self.conn.dead:
            raise oracledb.DatabaseError("DPY-4011: the database or network closed the connection")
        if view in self.conn.fail:
            raise oracledb.DatabaseError(self.conn.fail[view])
        delay = self.conn.delay.get(view, 0.0)
        if delay:   # a slow statement, cut by the call timeout as the driver does (the session survives)
            timeout = self.conn.call_timeout / 1000 if self.conn.call_timeout else None
            time.sleep(delay if timeout is None else min(delay, timeout))
            if timeout is not None and delay > timeout:
                raise oracledb.DatabaseError(f"DPY-4024: call timeout of {self.conn.call_timeout} ms exceeded")
        select = sql[len("SELECT "):sql.index(" FROM ")]
        select = re.sub(r"'[^']*'", "", select)            # string literals, then (nested) calls
        while re.search(r"\([^()]*\)", select):
            select = re.sub(r"\([^()]*\)", "", select)
        cols = [c.split(" AS ")[-1].strip() for c in select.split(",")]   # the column alias, as Oracle names it
        self.description = [(c, None, None, None, None, None, None) for c in cols]
        self._rows = self.conn.rows.get(view, [])
        self.conn.binds[view] = binds

    def fetchall(self):
        return self._rows

    def close(self):
        pass


class FakeConnection:
    """``fail``: view -> error text raised by its statement; ``rows``: view -> row tuples;
    ``delay``: view -> seconds its statement takes; ``timeouts`` records every call timeout
    (milliseconds) the source set, in order."""

    def __init__(self, fail=None, rows=None, delay=None):
        self.fail = dict(fail or {})
        self.rows = rows or {}
        self.delay = dict(delay or {})
        self.timeouts: list[int] = []
        self.executed: list[str] = []
        self.binds: dict[str, dict] = {}
        self.dead = False
        self.closed = False
        self.module = self.action = self.client_identifier = None
        self._call_timeout = 0

    @property
    def call_timeout(self):
        return self._call_timeout

    @call_timeout.setter
    def call_timeout(self, value):
        self._call_timeout = value
        self.timeouts.append(value)

    def cursor(self):
        return FakeCursor(self)

    def is_healthy(self):
        return not self.dead

    def close(self):
        self.closed = True


# --- fake database listeners (the real driver connects to them) --------------------------

def refuse_packet(error: int = 12514) -> bytes:
    """A TNS REFUSE packet as a listener sends it (python-oracledb reads the ERR= code)."""
    text = (f"(DESCRIPTION=(TMP=)(VSNNUM=318767104)(ERR={error})"
            f"(ERROR_STACK=(ERROR=(CODE={error})(EMFI=4))))").encode()
    body = bytes([1, 0]) + len(text).to_bytes(2, "big") + text     # user/system reason, length, data
    return (8 + len(body)).to_bytes(2, "big") + b"\0\0" + bytes([4, 0]) + b"\0\0" + body


class FakeListener:
    """A TCP listener on 127.0.0.1 that misbehaves like a database listener can:

    * ``hang``: accepts and never answers (a hung listener, a half-dead RAC VIP);
    * ``close``: accepts and closes at once;
    * ``slow``: accepts, reads the connect packet, answers after ``delay`` seconds with a
      REFUSE ("service not registered", ORA-12514; ``error`` another ERR= code, e.g. 1017,
      which python-oracledb reads as "DPY-6000 ... (Similar to ORA-1017)"): a real, slow answer.

    ``accepted`` counts connections; ``open`` is how many are still open on this side;
    ``received`` holds, in ``slow`` mode, the first bytes each connection sent (a TNS connect
    packet and its connect descriptor, or a TLS ClientHello for TCPS)."""

    def __init__(self, mode: str, delay: float = 1.0, error: int = 12514):
        import socket
        import threading
        assert mode in ("hang", "close", "slow")
        self.mode, self.delay, self.error = mode, delay, error
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(64)
        self.srv.settimeout(0.05)
        self.port = self.srv.getsockname()[1]
        self.accepted = 0
        self.received: list[bytes] = []
        self._held: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"fake-listener-{mode}", daemon=True)
        self._thread.start()

    @property
    def open(self) -> int:
        return sum(1 for s in self._held if s.fileno() != -1)

    def _serve(self) -> None:
        import threading
        while not self._stop.is_set():
            try:
                conn, _ = self.srv.accept()
            except OSError:
                continue
            self.accepted += 1
            if self.mode == "close":
                conn.close()
                continue
            self._held.append(conn)
            if self.mode == "slow":
                threading.Thread(target=self._answer_late, args=(conn,), daemon=True).start()

    def _answer_late(self, conn) -> None:
        try:
            conn.settimeout(5)
            data = conn.recv(65536)                   # the connect packet (its data may follow apart)
            conn.settimeout(0.03)                     # the rest is sent at once, if at all
            try:
                while len(data) < 65536 and (more := conn.recv(65536)):
                    data += more
            except OSError:
                pass
            self.received.append(data)
            if self._stop.wait(self.delay):
                return
            conn.sendall(refuse_packet(self.error))
            time.sleep(0.05)                          # let the client read it, then hang up as a listener does
        except OSError:
            pass
        conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for conn in self._held:
            try:
                conn.close()
            except OSError:
                pass
        self.srv.close()


def redo_collect(snapshot, settings):
    """A tiny collector with the collectors package's interface: 'redo size' per instance."""
    from prometheus_client.core import CounterMetricFamily
    fam = CounterMetricFamily("oracle_test_redo_size_bytes", "redo size", labels=["inst_id"])
    for row in snapshot.rows("GV$SYSSTAT"):
        if row["NAME"] == "redo size":
            fam.add_metric([str(row["INST_ID"])], row["VALUE"])
    yield fam


REDO_COLLECTOR = SimpleNamespace(NAME="test_redo", VIEWS=("GV$SYSSTAT",), collect=redo_collect)
