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
HEALTHY_JOBS = [job(101, "DB INCR", "COMPLETED", "2025-03-10T23:00:01", "2025-03-10T23:12:09"),
                job(102, "ARCHIVELOG", "COMPLETED", "2025-03-11T08:00:02", "2025-03-11T08:01:33"),
                job(103, "ARCHIVELOG", "COMPLETED WITH WARNINGS", "2025-03-11T09:58:00", "2025-03-11T09:59:02")]


def run(sets, jobs, settings=ON, database="PROD1"):
    views = {"V$BACKUP_SET": sets, "V$RMAN_BACKUP_JOB_DETAILS": jobs, **CLOCK}
    return collect(Snapshot(database, NOW, views), settings, names=["backups"])


def test_on_by_default_every_5_minutes_and_off_takes_its_views_out():
    assert Settings().enabled("backups") and backups.SPEC.interval == 300
    assert "V$BACKUP_SET" not in queries.build_queries(Settings(collectors={"backups": False}))
    on = queries.build_queries(ON)
    assert on["V$BACKUP_SET"].sql == ("SELECT SET_STAMP, SET_COUNT, BACKUP_TYPE, INCREMENTAL_LEVEL, COMPLETION_TIME, "
                                      "CON_ID FROM V$BACKUP_SET")
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
    jobs = HEALTHY_JOBS[1:] + [job(104, "DB INCR", "FAILED", "2025-03-10T23:00:01", "2025-03-10T23:03:40"),
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
