"""The backups collector (V$BACKUP_SET, V$RMAN_BACKUP_JOB_DETAILS).

What an on-call engineer fears: the nightly level 0 stopped a week ago and nobody noticed, the
archivelog backups stopped (the recovery area fills next), a job that failed last night; what
must stay quiet: a database backed up on schedule, a standby without a backup policy, a job that
failed two days ago and has been re-run since. Rows as the control file returns them: DATEs on the
database host's clock (here UTC+1), backup sets of a level 0 / level 1 strategy."""
from __future__ import annotations

import pytest
from oracle_sim import collect, samples, value

from oracle_exporter import queries
from oracle_exporter.collectors import backups
from oracle_exporter.config import Settings
from oracle_exporter.snapshot import Snapshot

ON = Settings(collectors={"backups": True})
NOW = "2025-03-11T09:00:00Z"                          # 10:00 on the host's clock
CLOCK = {"DUAL": [{"SYSTIMESTAMP": "2025-03-11T10:00:00.000000+01:00"}]}


def bset(n, kind, level, done):
    return {"SET_STAMP": 1100000000 + n, "SET_COUNT": n, "BACKUP_TYPE": kind, "INCREMENTAL_LEVEL": level,
            "COMPLETION_TIME": done, "CON_ID": 0}


def job(key, input_type, status, start, end):
    return {"SESSION_KEY": key, "INPUT_TYPE": input_type, "STATUS": status, "START_TIME": start, "END_TIME": end,
            "CON_ID": 0}


# a level 0 every Sunday night, level 1 the other nights, archivelogs every 2 hours (host clock)
HEALTHY_SETS = [bset(1, "I", 0, "2025-03-09T23:40:12"), bset(2, "I", 0, "2025-03-09T23:55:40"),
                bset(3, "I", 1, "2025-03-10T23:12:05"), bset(4, "L", None, "2025-03-11T08:01:30"),
                bset(5, "L", None, "2025-03-11T09:59:00")]
HEALTHY_JOBS = [job(100, "DB INCR", "COMPLETED", "2025-03-09T23:00:02", "2025-03-09T23:55:40"),
                job(101, "DB INCR", "COMPLETED", "2025-03-10T23:00:01", "2025-03-10T23:12:09"),
                job(102, "ARCHIVELOG", "COMPLETED", "2025-03-11T08:00:02", "2025-03-11T08:01:33"),
                job(103, "ARCHIVELOG", "COMPLETED WITH WARNINGS", "2025-03-11T09:58:00", "2025-03-11T09:59:02")]


def run(sets, jobs, settings=ON, database="PROD1"):
    views = {"V$BACKUP_SET": sets, "V$RMAN_BACKUP_JOB_DETAILS": jobs, **CLOCK}
    return collect(Snapshot(database, NOW, views), settings, names=["backups"])


def test_on_by_default_every_5_minutes_and_off_takes_its_views_out():
    assert Settings().enabled("backups") and backups.SPEC.interval == 300
    assert "V$BACKUP_SET" not in queries.build_queries(Settings(collectors={"backups": False}))
    on = queries.build_queries(ON)
    assert on["V$BACKUP_SET"].sql.startswith("SELECT SET_STAMP, SET_COUNT, BACKUP_TYPE, INCREMENTAL_LEVEL, "
                                             "COMPLETION_TIME, CON_ID FROM V$BACKUP_SET WHERE ")
    assert on["V$RMAN_BACKUP_JOB_DETAILS"].sql.startswith("SELECT SESSION_KEY, INPUT_TYPE, STATUS, START_TIME")


def test_a_database_backed_up_on_schedule_shows_host_clock_ages_and_no_failure():
    fams = run(HEALTHY_SETS, HEALTHY_JOBS)
    # level 0 finished 23:55:40 on Sunday: 34 h 4 min 20 s before 10:00 on Tuesday
    assert value(fams, "oracle_backup_age_seconds", kind="full") == 34 * 3600 + 4 * 60 + 20
    assert value(fams, "oracle_backup_age_seconds", kind="incremental") == 10 * 3600 + 47 * 60 + 55
    assert value(fams, "oracle_backup_age_seconds", kind="archivelog") == 60
    assert value(fams, "oracle_backup_jobs_failed", input_type="DB INCR") == 0
    assert value(fams, "oracle_backup_jobs_failed", input_type="ARCHIVELOG") == 0   # with warnings is not failed


def test_level_0_stopped_a_week_ago_and_last_nights_job_failed():
    sets = [bset(1, "I", 0, "2025-03-02T23:55:40"), bset(3, "I", 1, "2025-03-09T23:12:05"),
            bset(4, "L", None, "2025-03-11T09:59:00")]
    jobs = HEALTHY_JOBS[2:] + [job(99, "DB INCR", "COMPLETED", "2025-03-02T23:00:00", "2025-03-02T23:55:40"),
                               job(104, "DB INCR", "FAILED", "2025-03-10T23:00:01", "2025-03-10T23:03:40"),
                               job(105, "DB FULL", "COMPLETED WITH ERRORS", "2025-03-11T01:00:00", "2025-03-11T02:00:00")]
    fams = run(sets, jobs)
    assert value(fams, "oracle_backup_age_seconds", kind="full") == 8 * 86400 + 10 * 3600 + 4 * 60 + 20
    assert value(fams, "oracle_backup_jobs_failed", input_type="DB INCR") == 1
    assert value(fams, "oracle_backup_jobs_failed", input_type="DB FULL") == 1


def test_a_failure_older_than_a_day_no_longer_counts_and_unknown_types_are_other():
    jobs = [job(90, "DB INCR", "FAILED", "2025-03-10T09:59:59", "2025-03-10T10:10:00"),
            job(91, "PROXY", "FAILED", "2025-03-11T03:00:00", "2025-03-11T03:01:00")]
    got = samples(run(HEALTHY_SETS, jobs))
    assert ("oracle_backup_jobs_failed", (("input_type", "DB INCR"),)) not in got
    assert got[("oracle_backup_jobs_failed", (("input_type", "other"),))] == 1


def test_the_policy_is_per_database_and_a_database_without_one_has_none():
    settings = Settings(collectors={"backups": True},
                        backup_policy={"PROD1": {"full": 8 * 86400.0, "archivelog": 7200.0}})
    fams = run(HEALTHY_SETS, HEALTHY_JOBS, settings)
    assert value(fams, "oracle_backup_policy_max_age_seconds", kind="full") == 8 * 86400
    assert value(fams, "oracle_backup_policy_max_age_seconds", kind="archivelog") == 7200
    assert not [k for k in samples(fams) if k[0] == "oracle_backup_policy_max_age_seconds" and
                dict(k[1])["kind"] == "incremental"]
    standby = samples(run(HEALTHY_SETS, HEALTHY_JOBS, settings, database="PROD1_STBY"))
    assert not [k for k in standby if k[0] == "oracle_backup_policy_max_age_seconds"]


def test_no_backup_at_all_exports_no_age_but_keeps_the_policy_so_the_alert_sees_it():
    settings = Settings(collectors={"backups": True}, backup_policy={"PROD1": {"full": 86400.0}})
    got = samples(run([], [], settings))
    assert got == {("oracle_backup_policy_max_age_seconds", (("kind", "full"),)): 86400.0}


def test_a_view_that_failed_exports_no_policy_either():
    """A fetch that lost V$BACKUP_SET must not look like 'never backed up' to the alert."""
    settings = Settings(collectors={"backups": True}, backup_policy={"PROD1": {"full": 86400.0}})
    snap = Snapshot("PROD1", NOW, {"V$RMAN_BACKUP_JOB_DETAILS": HEALTHY_JOBS, **CLOCK},
                    errors={"V$BACKUP_SET": "ORA-01031: insufficient privileges"})
    assert samples(collect(snap, settings, names=["backups"])) == {
        ("oracle_backup_jobs_failed", (("input_type", "ARCHIVELOG"),)): 0.0,
        ("oracle_backup_jobs_failed", (("input_type", "DB INCR"),)): 0.0}


@pytest.mark.parametrize("text,seconds", [("8d", 8 * 86400), ("26h", 26 * 3600), ("1d12h", 36 * 3600), (5400, 5400)])
def test_policy_durations(text, seconds):
    assert backups._duration(text) == seconds


@pytest.mark.parametrize("bad", ["8x", "", "-1d", True, 0])
def test_policy_durations_refused(bad):
    with pytest.raises(ValueError):
        backups._duration(bad)


# ---- review of issue 24, finding 3: what counts as a full backup

def autobackup(n, done):
    """The control file / spfile autobackup RMAN writes after every backup job (CONTROLFILE AUTOBACKUP ON,
    the default from 12.1): a set of its own, BACKUP_TYPE D, INCREMENTAL_LEVEL NULL."""
    return bset(n, "D", None, done)


def test_control_file_autobackups_after_the_archivelog_backups_are_not_a_full_backup():
    # the level 0 ran three weeks ago; since then only archivelog jobs, each followed by its autobackup
    sets = [bset(1, "I", 0, "2025-02-18T23:55:40"), autobackup(2, "2025-02-18T23:56:10"),
            bset(3, "L", None, "2025-03-11T09:58:00"), autobackup(4, "2025-03-11T09:58:30")]
    jobs = [job(50, "DB INCR", "COMPLETED", "2025-02-18T23:00:00", "2025-02-18T23:56:12"),
            job(51, "ARCHIVELOG", "COMPLETED", "2025-03-11T09:57:00", "2025-03-11T09:58:31")]
    fams = run(sets, jobs)
    assert value(fams, "oracle_backup_age_seconds", kind="full") == 20 * 86400 + 10 * 3600 + 3 * 60 + 48
    assert value(fams, "oracle_backup_age_seconds", kind="archivelog") == 2 * 60


def test_a_datafile_or_tablespace_backup_is_not_a_full_backup_of_the_database():
    # BACKUP TABLESPACE USERS (full, D) and BACKUP INCREMENTAL LEVEL 0 DATAFILE 7 this morning: parts only
    sets = [bset(1, "I", 0, "2025-03-02T23:55:40"), bset(2, "D", None, "2025-03-11T07:10:00"),
            bset(3, "I", 0, "2025-03-11T08:10:00")]
    jobs = [job(60, "DB INCR", "COMPLETED", "2025-03-02T23:00:00", "2025-03-02T23:55:41"),
            job(61, "DATAFILE FULL", "COMPLETED", "2025-03-11T07:00:00", "2025-03-11T07:10:01"),
            job(62, "DATAFILE INCR", "COMPLETED", "2025-03-11T08:00:00", "2025-03-11T08:10:01")]
    assert value(run(sets, jobs), "oracle_backup_age_seconds", kind="full") == 8 * 86400 + 10 * 3600 + 4 * 60 + 19


def test_a_level_0_job_that_failed_half_way_is_not_a_full_backup():
    # the level 0 job wrote two sets, then died (RMAN-03009): the sets exist, the backup does not
    sets = [bset(1, "I", 0, "2025-03-02T23:55:40"), bset(2, "I", 0, "2025-03-09T23:20:00")]
    jobs = [job(70, "DB INCR", "COMPLETED", "2025-03-02T23:00:00", "2025-03-02T23:55:41"),
            job(71, "DB INCR", "FAILED", "2025-03-09T23:00:00", "2025-03-09T23:31:00")]
    assert value(run(sets, jobs), "oracle_backup_age_seconds", kind="full") == 8 * 86400 + 10 * 3600 + 4 * 60 + 19


def test_a_whole_database_full_backup_counts_also_as_image_copies():
    # BACKUP AS COPY DATABASE writes image copies (no backup set at all): the job says DB FULL
    jobs = [job(80, "DB FULL", "COMPLETED WITH WARNINGS", "2025-03-10T22:00:00", "2025-03-10T23:30:00")]
    assert value(run([], jobs), "oracle_backup_age_seconds", kind="full") == 10 * 3600 + 30 * 60


def test_a_level_1_job_is_incremental_and_never_full():
    sets = [bset(1, "I", 1, "2025-03-10T23:12:05"), autobackup(2, "2025-03-10T23:12:30")]
    jobs = [job(90, "DB INCR", "COMPLETED", "2025-03-10T23:00:00", "2025-03-10T23:12:31")]
    got = samples(run(sets, jobs))
    assert ("oracle_backup_age_seconds", (("kind", "full"),)) not in got
    assert got[("oracle_backup_age_seconds", (("kind", "incremental"),))] == 10 * 3600 + 47 * 60 + 55


def test_only_recent_records_are_read():
    """Finding 16: a control file keeping months of records is not read whole every 5 minutes."""
    on = queries.build_queries(ON)
    assert "COMPLETION_TIME > SYSDATE - :backup_lookback / 86400" in on["V$BACKUP_SET"].sql
    assert on["V$BACKUP_SET"].binds == {"backup_lookback": 35 * 86400, "backup_log_lookback": 8 * 86400}
    assert "START_TIME > SYSDATE - :backup_lookback / 86400" in on["V$RMAN_BACKUP_JOB_DETAILS"].sql


def test_a_level_0_set_whose_job_record_was_reused_still_counts_as_of_its_completion():
    """The control file reuses the RMAN job records before the backup set records: the set alone says
    level 0, and nothing says it was partial or failed."""
    sets = [bset(1, "I", 0, "2025-02-18T23:55:40"), autobackup(2, "2025-02-18T23:56:10")]
    assert value(run(sets, []), "oracle_backup_age_seconds", kind="full") == 20 * 86400 + 10 * 3600 + 4 * 60 + 20


def test_a_level_0_job_still_running_is_not_yet_a_full_backup():
    sets = [bset(1, "I", 0, "2025-03-02T23:55:40"), bset(2, "I", 0, "2025-03-11T09:30:00")]
    jobs = [job(70, "DB INCR", "COMPLETED", "2025-03-02T23:00:00", "2025-03-02T23:55:41"),
            job(71, "DB INCR", "RUNNING", "2025-03-11T09:00:00", None)]
    assert value(run(sets, jobs), "oracle_backup_age_seconds", kind="full") == 8 * 86400 + 10 * 3600 + 4 * 60 + 19


def test_demo_every_job_has_its_autobackup_and_the_standby_records_its_own_backups():
    """Finding 16 (demo): a standby's control file records the backups taken on the standby, not the
    primary's; every successful job is followed by its control file autobackup, which is never full."""
    import datetime as dt

    from oracle_exporter.demo import generate, signals
    utc = dt.timezone.utc
    ages = {}
    for db in (generate.DEMO_DB, generate.DEMO_STANDBY_DB):
        views = signals.backups(db, generate.START, utc)
        autobackups = [r for r in views["V$BACKUP_SET"] if r["BACKUP_TYPE"] == "D"]
        assert len(autobackups) == sum(j["STATUS"] != "FAILED" for j in views["V$RMAN_BACKUP_JOB_DETAILS"])
        snap = Snapshot(db.name, "2025-03-11T09:00:00Z",
                        {**views, "DUAL": [{"SYSTIMESTAMP": "2025-03-11T09:00:00.000000+00:00"}]})
        ages[db.name] = backups.ages(snap)
    assert ages["DEMO"]["full"] != ages["DEMOSB"]["full"]
    # DEMO's level 0 job: Sunday 23:00-23:49, 33 h 11 min before Tuesday 09:00
    assert ages["DEMO"]["full"] == 33 * 3600 + 11 * 60


def fetched(view, rows, sysdate):
    """The rows the view's shipped WHERE returns from ``rows``, evaluated by SQLite (DATEs as Julian
    days, SYSDATE the host clock's now): what the exporter gets from the control file."""
    import sqlite3
    cols = sorted({c for r in rows for c in r})
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE t (i, SYSDATE, {', '.join(cols)})")
    for i, r in enumerate(rows):
        vals = [i, sysdate] + [r.get(c) for c in cols]
        db.execute(f"INSERT INTO t VALUES ({', '.join('?' * len(vals))})", vals)
    jd = "julianday(replace({0}, 'T', ' '))"
    sql = view.where
    for c in ("START_TIME", "COMPLETION_TIME"):
        sql = sql.replace(c, jd.format(c))
    sql = sql.replace("SYSDATE", jd.format("SYSDATE"))
    keep = {i for (i,) in db.execute(f"SELECT i FROM t WHERE {sql}", view.where_binds)}
    return [r for i, r in enumerate(rows) if i in keep]


def test_a_tablespace_level_0_older_than_a_week_is_never_the_full_backup():
    """Reviewer: BACKUP INCREMENTAL LEVEL 0 TABLESPACE NEWAPP 11 days ago wrote a level 0 set; its
    DATAFILE INCR job must be read as long as the set is, else the set looks like a level 0 whose job
    record was reused and counts as the full backup (10.9 days instead of 29)."""
    now = "2025-03-11T10:00:00"
    sets = [bset(1, "I", 0, "2025-02-09T23:55:40"), bset(2, "I", 0, "2025-02-28T12:00:00"),
            bset(3, "L", None, "2025-02-28T12:30:00"), bset(4, "L", None, "2025-03-11T08:01:30")]
    jobs = [job(50, "DB INCR", "COMPLETED", "2025-02-09T23:00:00", "2025-02-09T23:55:41"),
            job(51, "DATAFILE INCR", "COMPLETED", "2025-02-28T11:30:00", "2025-02-28T12:00:05"),
            job(52, "ARCHIVELOG", "COMPLETED", "2025-02-28T12:29:00", "2025-02-28T12:30:05"),
            job(53, "ARCHIVELOG", "COMPLETED", "2025-03-11T08:00:02", "2025-03-11T08:01:33")]
    got_sets, got_jobs = fetched(backups.BACKUP_SET, sets, now), fetched(backups.JOB_DETAILS, jobs, now)
    assert [j["SESSION_KEY"] for j in got_jobs] == [50, 51, 53]     # archivelog jobs: the last 8 days only
    assert [s["SET_COUNT"] for s in got_sets] == [1, 2, 4]
    assert value(run(got_sets, got_jobs), "oracle_backup_age_seconds", kind="full") == \
        29 * 86400 + 10 * 3600 + 4 * 60 + 19


@pytest.mark.parametrize("with_sets", [False, True])
def test_a_job_date_the_host_offset_takes_out_of_the_calendar_reads_as_unknown(with_sets):
    """An RMAN END_TIME of 0001-01-01 on a host east of UTC (or 9999-12-31 west of it) cannot be
    made a Unix time: it is unknown (as NULL), the job still counts, and the collector does not fail
    (it raised OverflowError, with or without V$BACKUP_SET in the snapshot)."""
    views = {"DUAL": [{"SYSTIMESTAMP": "2024-03-01T14:00:00+02:00"}],
             "V$RMAN_BACKUP_JOB_DETAILS": [
                 {"SESSION_KEY": 1, "INPUT_TYPE": "DB FULL", "STATUS": "FAILED",
                  "START_TIME": "2024-03-01T11:00:00", "END_TIME": "0001-01-01T00:00:00"},
                 {"SESSION_KEY": 2, "INPUT_TYPE": "ARCHIVELOG", "STATUS": "COMPLETED",
                  "START_TIME": None, "END_TIME": "9999-12-31T23:59:59"}]}
    if with_sets:
        views["V$BACKUP_SET"] = [{"BACKUP_TYPE": "L", "INCREMENTAL_LEVEL": None,
                                  "COMPLETION_TIME": "2024-03-01T10:00:00"}]
    snap = Snapshot.from_obj({"time": "2024-03-01T12:00:00+00:00", "database": "ODS", "views": views})
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for f in backups.collect(snap, Settings()) for s in f.samples}
    assert got[("oracle_backup_jobs_failed", (("input_type", "DB FULL"),))] == 1.0
    if with_sets:       # the archived-log set's age is still there (local 10:00 at +02:00 = 08:00 UTC)
        assert got[("oracle_backup_age_seconds", (("kind", "archivelog"),))] == 4 * 3600
