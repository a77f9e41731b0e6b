"""RMAN backups: the age of the newest backup of each kind, failed jobs of the last day, and
the backup policy the site declared for the database (on by default, read every 5 minutes).

The first question after "is it up" is "can we restore it". Both views come from the control
file (no recovery catalog needed; they hold what CONTROL_FILE_RECORD_KEEP_TIME keeps, 7 days by
default), so they answer on a mounted standby too.

* ``oracle_backup_age_seconds{kind}``: seconds from the newest backup of ``kind`` to the snapshot:
  ``full``: the newest *whole-database* base a restore can start from: the END_TIME of an RMAN job
  (V$RMAN_BACKUP_JOB_DETAILS) with INPUT_TYPE ``DB FULL`` (BACKUP DATABASE, also BACKUP AS COPY
  DATABASE: image copies) or ``DB INCR`` that wrote an incremental level 0 backup set
  (V$BACKUP_SET, BACKUP_TYPE I, INCREMENTAL_LEVEL 0, completed between the job's START_TIME and
  END_TIME), and ended COMPLETED or COMPLETED WITH WARNINGS; a level 0 set whose job is no longer
  recorded (the control file reuses RMAN's job records first) counts as of its completion. Not
  full: a level 0 set of a failed or still running job, or of a DATAFILE INCR job; a control file or spfile
  autobackup (a set with BACKUP_TYPE D and INCREMENTAL_LEVEL NULL, written after every backup
  and after every structural change while CONTROLFILE AUTOBACKUP is ON, the default from 12.1), a
  BACKUP DATAFILE / TABLESPACE (INPUT_TYPE DATAFILE FULL / DATAFILE INCR: part of the database), a
  job that failed. ``incremental``: the newest incremental backup set of level 1 or more
  (V$BACKUP_SET.COMPLETION_TIME); ``archivelog``: the newest archived-log set (BACKUP_TYPE L).
  Absent when none is found. Incrementally updated backups (image copies rolled forward by
  RECOVER COPY OF DATABASE, Oracle's suggested strategy) make their level 0 copy once, then only
  level 1 sets: declare ``incremental`` (and ``archivelog``) in their backup_policy, not ``full``.
* ``oracle_backup_jobs_failed{input_type}``: RMAN jobs (V$RMAN_BACKUP_JOB_DETAILS) that started
  in the 24 hours before the snapshot and ended FAILED or COMPLETED WITH ERRORS, per INPUT_TYPE
  (DB FULL, DB INCR, ARCHIVELOG, DATAFILE FULL, DATAFILE INCR, CONTROLFILE, SPFILE, RECVR AREA,
  BACKUPSET; anything else is "other"); 0 for the input types that ran and did not fail.
* ``oracle_backup_policy_max_age_seconds{kind}``: the maximum age the ``backup_policy`` setting
  declares for this database and kind. A database without a policy (a standby backed up
  elsewhere, a test database) has none, and OracleBackupTooOld stays silent for it.

Only the recent rows are read (the last 35 days, and the last 8 days of archived-log sets and of
the jobs that back up neither the database nor datafiles: a level 0 set is read with its job): a control file with a long CONTROL_FILE_RECORD_KEEP_TIME
holds thousands of records, most of them archived-log sets. A backup older than the lookback is
"none" (OracleBackupTooOld, cause none, fires as for a database never backed up).

Times are DATEs on the database host's clock: they are converted with the host's UTC offset
(SYSTIMESTAMP, read with every fetch).
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family, Setting

from ..views import View, register
from ._common import emit, num, parse_time
from ._health import clean, host_utc_offset, local_to_unix

BACKUP_SET = register(View(
    "V$BACKUP_SET", ("SET_STAMP", "SET_COUNT", "BACKUP_TYPE", "INCREMENTAL_LEVEL", "COMPLETION_TIME"),
    identity=("SET_STAMP", "SET_COUNT"), since="8.0",
    # level 0 / full sets of the lookback (35 days), archived-log sets of the last 8 days only
    where="COMPLETION_TIME > SYSDATE - :backup_lookback / 86400 "
          "AND (BACKUP_TYPE <> 'L' OR COMPLETION_TIME > SYSDATE - :backup_log_lookback / 86400)",
    where_binds={"backup_lookback": 35 * 86400, "backup_log_lookback": 8 * 86400},
    doc="V$BACKUP_SET, the backup sets the control file records (BACKUP_TYPE D full, I incremental, "
        "L archived log)"))

JOB_DETAILS = register(View(
    "V$RMAN_BACKUP_JOB_DETAILS", ("SESSION_KEY", "INPUT_TYPE", "STATUS", "START_TIME", "END_TIME"),
    identity=("SESSION_KEY",), since="10.2",
    # the jobs that can write a level 0 set or a full backup, over the lookback of the sets (a DATAFILE
    # INCR job read for 8 days only left its level 0 set of day 9..35 without a job: a "full"), every
    # job of the last 8 days (the failures)
    where="START_TIME > SYSDATE - :backup_lookback / 86400 "
          "AND (INPUT_TYPE IN ('DB FULL', 'DB INCR', 'DATAFILE FULL', 'DATAFILE INCR') "
          "OR START_TIME > SYSDATE - :backup_log_lookback / 86400)",
    where_binds={"backup_lookback": 35 * 86400, "backup_log_lookback": 8 * 86400},
    doc="V$RMAN_BACKUP_JOB_DETAILS, one row per RMAN backup job the control file records"))

KINDS = ("full", "incremental", "archivelog")
INPUT_TYPES = ("DB FULL", "DB INCR", "ARCHIVELOG", "DATAFILE FULL", "DATAFILE INCR", "CONTROLFILE", "SPFILE",
               "RECVR AREA", "BACKUPSET")
FAILED = ("FAILED", "COMPLETED WITH ERRORS")
SUCCEEDED = ("COMPLETED", "COMPLETED WITH WARNINGS")
DAY = 86400.0


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": DAY, "w": 7 * DAY}


def _duration(text: Any) -> float:
    """Seconds of "8d", "26h", "90m", "1d12h" or a number of seconds; ValueError otherwise."""
    if isinstance(text, (int, float)) and not isinstance(text, bool) and 0 < text < 1e9:
        return float(text)
    m = re.fullmatch(r"((?:\d+(?:\.\d+)?[smhdw])+)", text.strip()) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"{text!r} is not a duration")
    total = sum(float(n) * _UNITS[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)([smhdw])", m.group(1)))
    if not 0 < total < 1e9:
        raise ValueError(f"{text!r} is out of range")
    return total


def parse_policy(fields: Any, key: str) -> dict[str, dict[str, float]]:
    """``backup_policy: {PROD1: {full: 8d, incremental: 26h, archivelog: 2h}}``: per database (the
    name of its ``databases`` entry), the maximum age of each kind; a kind left out is not checked."""
    out: dict[str, dict[str, float]] = {}
    sub = fields.sub(key)
    for name in list(sub.data):
        entry = sub.sub(name)
        if not isinstance(name, str) or not name.strip():
            raise sub.error(str(name), "expected a database name")
        kinds: dict[str, float] = {}
        for kind in KINDS:
            raw = entry.data.get(kind)
            entry.declare(kind)
            if raw is None:
                continue
            try:
                seconds = _duration(raw)
            except ValueError as err:
                raise entry.error(kind, f"expected a duration like 8d, 26h or 90m: {err}") from None
            kinds[kind] = seconds
        entry.reject_unknown()
        if not kinds:
            raise sub.error(name, f"give at least one of {', '.join(KINDS)}")
        out[name] = kinds
    return out


SPEC = Collector(
    "backups", "Age of the newest RMAN backup of each kind, failed backup jobs of the last day, the declared policy.",
    title="Backups",
    reads=(BACKUP_SET.name, JOB_DETAILS.name),
    interval=300.0,
    settings=(Setting("backup_policy", {}, "per database: maximum age of the full (or level 0), incremental and "
                      "archivelog backups, e.g. {PROD1: {full: 8d, incremental: 26h, archivelog: 2h}}; a database "
                      "not listed is not checked", kind="custom", parse=parse_policy, doc_default="{}"),),
    doc="Read every 5 minutes from the control file (no recovery catalog needed; a mounted standby "
        "answers). OracleBackupTooOld compares the ages with the `backup_policy` of the database and is "
        "silent for a database without one; OracleBackupFailed fires on a failed RMAN job of the last day.",
    metrics=(
        Family("oracle_backup_age_seconds", "gauge",
               "Seconds since the newest backup of the kind: full (the END_TIME of a successful DB FULL job, or of a "
               "DB INCR job that wrote a level 0 set; never a control file / spfile autobackup or a datafile or "
               "tablespace backup), incremental (level 1+ set), archivelog (BACKUP_TYPE L set).",
               ("kind",), source="V$BACKUP_SET.COMPLETION_TIME, V$RMAN_BACKUP_JOB_DETAILS.END_TIME",
               note="kind: full, incremental, archivelog; absent when the control file records none within "
                    "the lookback (35 days; archived-log sets 8 days).", views=(BACKUP_SET.name, JOB_DETAILS.name)),
        Family("oracle_backup_jobs_failed", "gauge",
               "RMAN backup jobs started in the last 24 hours that ended FAILED or COMPLETED WITH ERRORS "
               "(V$RMAN_BACKUP_JOB_DETAILS), per INPUT_TYPE.",
               ("input_type",), source="V$RMAN_BACKUP_JOB_DETAILS.STATUS", since="10.2",
               note="input_type: DB FULL, DB INCR, ARCHIVELOG, DATAFILE FULL, DATAFILE INCR, CONTROLFILE, SPFILE, "
                    "RECVR AREA, BACKUPSET, other; only the types that ran in the last 24 hours.", views=(JOB_DETAILS.name,)),
        Family("oracle_backup_policy_max_age_seconds", "gauge",
               "The maximum backup age the backup_policy setting declares for this database and kind.",
               ("kind",), source="config: backup_policy"),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def set_kind(row: dict[str, Any]) -> str | None:
    """level0 / incremental / archivelog of a V$BACKUP_SET row (None: a full datafile backup set,
    a control file or spfile (auto)backup: whether it is part of a whole-database full backup is
    the job's to say, full_backups())."""
    kind, level = clean(row.get("BACKUP_TYPE")).upper(), num(row.get("INCREMENTAL_LEVEL"))
    if kind == "L":
        return "archivelog"
    if kind == "I" and level == 0:
        return "level0"
    if kind == "I" and level is not None:
        return "incremental"
    return None


def _jobs(snapshot: Any, offset: Any) -> list[tuple[float, float | None, str, str]]:
    """(START_TIME, END_TIME or None while it runs, INPUT_TYPE, STATUS) of every RMAN job with a
    START_TIME, times in Unix seconds, texts upper case: read once per snapshot (full_backups and
    failed_jobs both go through the jobs)."""
    def read() -> list[tuple[float, float | None, str, str]]:
        jobs = []
        for row in snapshot.rows(JOB_DETAILS.name):
            start = local_to_unix(row.get("START_TIME"), offset)
            if start is not None:
                jobs.append((start, local_to_unix(row.get("END_TIME"), offset), clean(row.get("INPUT_TYPE")).upper(),
                             clean(row.get("STATUS")).upper()))
        return jobs
    derived = getattr(snapshot, "derived", None)
    return read() if derived is None else derived(("backups.jobs", offset), read)


def full_backups(snapshot: Any, offset: Any, level0: list[float], now: float | None = None) -> list[float]:
    """Times (Unix) of the whole-database full backups: the END_TIME of every successful DB FULL job;
    for each level 0 set (``level0``: completion times), the END_TIME of the successful DB INCR job it
    belongs to; a level 0 set of a job that failed, still runs, or backed up only datafiles or
    tablespaces (DATAFILE INCR) is not full; a level 0 set whose job the control file no longer
    records (its RMAN records reused first) is full as of its own completion."""
    out, jobs = [], []
    for start, end, kind, status in _jobs(snapshot, offset):
        end = end if end is not None else (now if now is not None else float("inf"))    # running
        ok = status in SUCCEEDED
        if kind == "DB FULL" and ok:
            out.append(end)
        jobs.append((start, end, kind, ok))
    for done in level0:
        during = [(end, kind, ok) for start, end, kind, ok in jobs if start <= done <= end]
        if not during:
            out.append(done)
        elif any(kind in ("DB INCR", "DB FULL") and ok for _, kind, ok in during):
            out.append(max(end for end, kind, ok in during if kind in ("DB INCR", "DB FULL") and ok))
    return out


def ages(snapshot: Any) -> dict[str, float]:
    """{kind: seconds since its newest backup completed}."""
    now, offset = parse_time(snapshot.time), host_utc_offset(snapshot)
    newest: dict[str, float] = {}
    level0: list[float] = []
    for row in snapshot.rows(BACKUP_SET.name):
        kind, done = set_kind(row), local_to_unix(row.get("COMPLETION_TIME"), offset)
        if kind == "level0" and done is not None:
            level0.append(done)
        elif kind is not None and done is not None:
            newest[kind] = max(done, newest.get(kind, done))
    fulls = full_backups(snapshot, offset, level0, now)
    if fulls:
        newest["full"] = max(fulls)
    if now is None:
        return {}
    return {k: max(0.0, now - t) for k, t in newest.items()}


def failed_jobs(snapshot: Any) -> dict[str, int]:
    """{input_type: failed jobs} of the jobs that started in the last 24 hours (every type that ran)."""
    now, offset = parse_time(snapshot.time), host_utc_offset(snapshot)
    out: dict[str, int] = {}
    if now is None:
        return out
    for start, _end, kind, status in _jobs(snapshot, offset):
        if now - start > DAY:
            continue
        kind = kind if kind in INPUT_TYPES else "other"
        out[kind] = out.get(kind, 0) + (1 if status in FAILED else 0)
    return out


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    age = SPEC.family("oracle_backup_age_seconds")
    failed = SPEC.family("oracle_backup_jobs_failed")
    policy = SPEC.family("oracle_backup_policy_max_age_seconds")
    if snapshot.has(BACKUP_SET.name) and snapshot.has(JOB_DETAILS.name):   # both: else a full looks missing
        for kind, seconds in sorted(ages(snapshot).items(), key=lambda kv: KINDS.index(kv[0])):
            age.add_metric([kind], seconds)
        declared = (getattr(settings, "backup_policy", None) or {}).get(snapshot.database, {})
        for kind in KINDS:
            if kind in declared:
                policy.add_metric([kind], float(declared[kind]))
    for kind, count in sorted(failed_jobs(snapshot).items()):
        failed.add_metric([kind], float(count))
    yield from emit([age, failed, policy])
