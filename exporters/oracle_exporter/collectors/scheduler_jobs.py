"""Scheduler job failures of the last day (CDB_/DBA_SCHEDULER_JOB_RUN_DETAILS; opt-in:
``collectors: {scheduler_jobs: true}``, read every 5 minutes).

A statistics gathering, a purge or an application batch run by DBMS_SCHEDULER fails quietly: the
job log has the row, nobody reads it. The statement reads only the runs logged in the last 24
hours that FAILED (``LOG_DATE > SYSTIMESTAMP - INTERVAL '1' DAY AND STATUS = 'FAILED'``): usually
no rows at all. The job's name is the label ``job_name`` (DBA_SCHEDULER_JOBS.JOB_NAME), never
``job``: that is the scrape target's label in Prometheus.

* ``oracle_scheduler_job_failures{container, owner, job_name}``: failed runs of the job in the last 24 hours. At
  most ``scheduler_jobs_max`` jobs (default 20, most failures first) get a series; the failures of
  the rest are counted in ``oracle_scheduler_job_failures_omitted``.
* ``oracle_scheduler_job_last_error_code{container, owner, job_name}``: ERROR# of the job's newest failed run (the
  ORA- code as a number, e.g. 1013 for a timeout): the code, never the text, so the series stay bounded.

From 12.1 the exporter reads CDB_SCHEDULER_JOB_RUN_DETAILS (from a CDB root every open container:
the same job in two PDBs (an application installed in each) is two series, ``container`` the PDB's
name from V$CONTAINERS (its CON_ID when unnamed); in a PDB that PDB's jobs, in a non-CDB its own,
``container=""`` there); before 12.1 DBA_SCHEDULER_JOB_RUN_DETAILS (the fallback on ORA-00942,
``container=""``). A data dictionary view: not read on a mounted database.

A job that failed ``max_failures`` times in a row is BROKEN (DBA_SCHEDULER_JOBS.STATE) and runs no
more: its failures leave the 24-hour window and the series drops to nothing while the job stays
broken. OracleSchedulerJobFailed fires for the failures; whether the job runs again is
DBA_SCHEDULER_JOBS' (not read here).
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family, Setting

from ..ora_errors import MISSING_VIEW
from ..views import MOUNTED, Fallback, View, register
from ._common import emit, num
from ._health import clean, con_id, host_utc_offset, local_to_unix
from .tablespaces import CONTAINERS, container_names

COLUMNS = ("LOG_ID", "LOG_DATE", "OWNER", "JOB_NAME", "STATUS", "ERROR#")
RUNS_WHERE = "LOG_DATE > SYSTIMESTAMP - INTERVAL '1' DAY AND STATUS = 'FAILED'"
DBA_RUNS = View("DBA_SCHEDULER_JOB_RUN_DETAILS", COLUMNS, identity=("LOG_ID",), where=RUNS_WHERE, since="10.1",
                refused_in=MOUNTED, doc="scheduler job runs of the database (non-CDB, a PDB, before 12.1)")
RUNS = register(View(
    "CDB_SCHEDULER_JOB_RUN_DETAILS", ("CON_ID",) + COLUMNS, identity=("CON_ID", "LOG_ID"), where=RUNS_WHERE,
    since="12.1", fallbacks=(Fallback(MISSING_VIEW, DBA_RUNS, "CDB_ views need 12.1"),),
    refused_in=MOUNTED, doc="failed scheduler job runs of the last day, every open container"))
register(DBA_RUNS)

_LABELS = ("container", "owner", "job_name")
_VIEWS = (RUNS.name, DBA_RUNS.name)     # names from V$CONTAINERS when it answers, else the CON_ID

SPEC = Collector(
    "scheduler_jobs", "DBMS_SCHEDULER job runs that failed in the last 24 hours, per job.",
    title="Scheduler job failures",
    reads=(RUNS.name, DBA_RUNS.name, CONTAINERS.name),
    opt_in=True,
    interval=300.0,
    settings=(Setting("scheduler_jobs_max", 20, "scheduler jobs with a failure series (most failures first)",
                      kind="int", minimum=0),),
    doc="Reads only the runs of the last 24 hours with STATUS FAILED (usually none). The error code of the "
        "newest failure is a value, never a label; the error text stays in the job log "
        "(DBA_SCHEDULER_JOB_RUN_DETAILS.ERRORS / ADDITIONAL_INFO).",
    metrics=(
        Family("oracle_scheduler_job_failures", "gauge",
               "Runs of the scheduler job that FAILED in the last 24 hours (*_SCHEDULER_JOB_RUN_DETAILS).",
               _LABELS, source="CDB_SCHEDULER_JOB_RUN_DETAILS.STATUS", since="10.1", views=_VIEWS),
        Family("oracle_scheduler_job_last_error_code", "gauge",
               "ERROR# of the job's newest failed run in the last 24 hours (the ORA- code as a number).",
               _LABELS, source="CDB_SCHEDULER_JOB_RUN_DETAILS.ERROR#", since="10.1", views=_VIEWS),
        Family("oracle_scheduler_job_failures_omitted", "gauge",
               "Failed runs of the last 24 hours of the jobs beyond scheduler_jobs_max (no series of their own).",
               (), source="CDB_SCHEDULER_JOB_RUN_DETAILS.STATUS", views=_VIEWS),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def failures(snapshot: Any) -> dict[tuple[str, str, str], tuple[int, float | None, float]]:
    """{(container, owner, job): (failed runs, newest ERROR#, newest LOG_DATE)} of the rows fetched."""
    rows = snapshot.rows(RUNS.name) or snapshot.rows(DBA_RUNS.name)
    offset = host_utc_offset(snapshot)
    names = container_names(snapshot)
    out: dict[tuple[str, str, str], tuple[int, float | None, float]] = {}
    for row in rows:
        if clean(row.get("STATUS")).upper() != "FAILED":
            continue
        cid = con_id(row)
        key = ("" if cid == 0 else names.get(cid, str(cid)), clean(row.get("OWNER")), clean(row.get("JOB_NAME")))
        when = local_to_unix(row.get("LOG_DATE"), offset) or 0.0
        count, code, newest = out.get(key, (0, None, float("-inf")))
        if when >= newest:
            code, newest = num(row.get("ERROR#")), when
        out[key] = (count + 1, code, newest)
    return out


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    failed = SPEC.family("oracle_scheduler_job_failures")
    code = SPEC.family("oracle_scheduler_job_last_error_code")
    omitted = SPEC.family("oracle_scheduler_job_failures_omitted")
    limit = getattr(settings, "scheduler_jobs_max", SPEC.default("scheduler_jobs_max"))
    found = failures(snapshot)
    ranked = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[0]))
    for (container, owner, job), (count, err, _) in ranked[:limit]:
        failed.add_metric([container, owner, job], float(count))
        if err is not None:
            code.add_metric([container, owner, job], err)
    if snapshot.has(RUNS.name) or snapshot.has(DBA_RUNS.name):
        omitted.add_metric([], float(sum(c for _, (c, _, _) in ranked[limit:])))
    yield from emit([failed, code, omitted])
