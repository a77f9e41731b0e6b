"""The scheduler_jobs collector (CDB_/DBA_SCHEDULER_JOB_RUN_DETAILS, opt-in).

What an on-call engineer fears: the nightly purge or statistics job failing every night, unseen;
an application job failing every minute flooding the series. What must stay quiet: no failure
(no rows: the statement asks for failed runs only), the collector off."""
from __future__ import annotations

from oracle_sim import collect, samples, value

from oracle_exporter import queries
from oracle_exporter.config import Settings
from oracle_exporter.snapshot import Snapshot

ON = Settings(collectors={"scheduler_jobs": True})


def run_row(log_id, owner, job, when, error, con_id=3):
    return {"CON_ID": con_id, "LOG_ID": log_id, "LOG_DATE": when, "OWNER": owner, "JOB_NAME": job,
            "STATUS": "FAILED", "ERROR#": error}


# V$CONTAINERS as CDB$ROOT returns it (names of the containers)
CONTAINERS = [{"CON_ID": 1, "NAME": "CDB$ROOT"}, {"CON_ID": 2, "NAME": "PDB$SEED"}, {"CON_ID": 3, "NAME": "SALES"},
              {"CON_ID": 4, "NAME": "HR"}]


def run(rows, settings=ON, view="CDB_SCHEDULER_JOB_RUN_DETAILS"):
    views = {view: rows, **({"V$CONTAINERS": CONTAINERS} if view.startswith("CDB_") else {})}
    return collect(Snapshot("CDB1", "2025-03-11T09:00:00Z", views), settings, names=["scheduler_jobs"])


def test_off_by_default_and_the_statement_reads_only_failed_runs_of_the_last_day():
    assert not Settings().enabled("scheduler_jobs")
    assert "CDB_SCHEDULER_JOB_RUN_DETAILS" not in queries.build_queries(Settings())
    sql = queries.build_queries(ON)["CDB_SCHEDULER_JOB_RUN_DETAILS"].sql
    assert sql.endswith("WHERE LOG_DATE > SYSTIMESTAMP - INTERVAL '1' DAY AND STATUS = 'FAILED'")
    before_12 = queries.build_queries(ON, fallen_back=["CDB_SCHEDULER_JOB_RUN_DETAILS"])
    assert "FROM DBA_SCHEDULER_JOB_RUN_DETAILS WHERE" in before_12["DBA_SCHEDULER_JOB_RUN_DETAILS"].sql


def test_no_failure_exports_zero_omitted_and_no_job_series():
    assert samples(run([])) == {("oracle_scheduler_job_failures_omitted", ()): 0.0}


def test_a_nightly_job_failing_and_its_newest_error_code():
    rows = [run_row(9001, "APP", "PURGE_AUDIT", "2025-03-10T02:00:04.118000+01:00", 1652),
            run_row(9107, "APP", "PURGE_AUDIT", "2025-03-11T02:00:03.902000+01:00", 1013),
            run_row(9050, "SYS", "ORA$AT_OS_OPT_SY_4711", "2025-03-10T22:00:12.000000+01:00", 20000, con_id=1)]
    fams = run(rows)
    assert value(fams, "oracle_scheduler_job_failures", container="SALES", owner="APP", job_name="PURGE_AUDIT") == 2
    assert value(fams, "oracle_scheduler_job_last_error_code", container="SALES", owner="APP", job_name="PURGE_AUDIT") == 1013
    assert value(fams, "oracle_scheduler_job_failures", container="CDB$ROOT", owner="SYS", job_name="ORA$AT_OS_OPT_SY_4711") == 1


def test_a_flood_of_failing_jobs_is_bounded_most_failures_first():
    rows = [run_row(k, "APP", f"JOB_{k % 30:02d}", f"2025-03-11T08:{k % 60:02d}:00", 942) for k in range(300)]
    rows += [run_row(1000 + k, "APP", "EVERY_MINUTE", f"2025-03-11T07:{k:02d}:00", 1017) for k in range(60)]
    fams = run(rows, Settings(collectors={"scheduler_jobs": True}, scheduler_jobs_max=5))
    jobs = {dict(k[1])["job_name"] for k in samples(fams) if k[0] == "oracle_scheduler_job_failures"}
    assert len(jobs) == 5 and "EVERY_MINUTE" in jobs
    assert value(fams, "oracle_scheduler_job_failures", container="SALES", owner="APP", job_name="EVERY_MINUTE") == 60
    assert value(fams, "oracle_scheduler_job_failures_omitted") == 300 - 4 * 10


def test_before_12_1_the_dba_view_is_read_the_same_way():
    rows = [{k: v for k, v in run_row(1, "APP", "NIGHTLY", "2025-03-11T02:00:00", 1652).items() if k != "CON_ID"}]
    fams = run(rows, view="DBA_SCHEDULER_JOB_RUN_DETAILS")
    assert value(fams, "oracle_scheduler_job_failures", container="", owner="APP", job_name="NIGHTLY") == 1


def test_the_same_job_failing_in_two_pdbs_is_two_series_from_the_root():
    """Review of issue 24, finding 13: an application installed in SALES and HR, its purge failing in
    both; read from CDB$ROOT each PDB's job keeps its own count and its own error code."""
    rows = [run_row(501, "APP", "NIGHTLY_PURGE", "2025-03-11T02:00:03.000000+01:00", 1013, con_id=3),
            run_row(501, "APP", "NIGHTLY_PURGE", "2025-03-11T02:00:05.000000+01:00", 1652, con_id=4),
            run_row(502, "APP", "NIGHTLY_PURGE", "2025-03-10T02:00:05.000000+01:00", 1652, con_id=4)]
    fams = run(rows)
    assert value(fams, "oracle_scheduler_job_failures", container="SALES", owner="APP", job_name="NIGHTLY_PURGE") == 1
    assert value(fams, "oracle_scheduler_job_failures", container="HR", owner="APP", job_name="NIGHTLY_PURGE") == 2
    assert value(fams, "oracle_scheduler_job_last_error_code", container="SALES", owner="APP",
                 job_name="NIGHTLY_PURGE") == 1013
    assert value(fams, "oracle_scheduler_job_last_error_code", container="HR", owner="APP",
                 job_name="NIGHTLY_PURGE") == 1652


def test_without_container_names_the_con_id_keeps_them_apart():
    rows = [run_row(1, "APP", "J", "2025-03-11T02:00:00", 1013, con_id=3),
            run_row(1, "APP", "J", "2025-03-11T02:00:00", 1013, con_id=5)]
    fams = collect(Snapshot("CDB1", "2025-03-11T09:00:00Z", {"CDB_SCHEDULER_JOB_RUN_DETAILS": rows}), ON,
                   names=["scheduler_jobs"])
    assert {dict(k[1])["container"] for k in samples(fams) if k[0] == "oracle_scheduler_job_failures"} == {"3", "5"}
