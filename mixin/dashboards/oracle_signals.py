"""oracle-signals: what on call asks in the first five minutes (issue 24): can we restore it
(backups), ...; one row per collector, each naming the alert it backs."""
from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

from mixin import records as R
from mixin.config import Config
from mixin.dashboards.common import DB, add_panels, new_dashboard, q, timeseries_panel, v_database, v_datasource, v_host

UID = "oracle-signals"
DAY = 86400


def backups(cfg: Config) -> list:
    return [
        db.Row("Backups"),
        timeseries_panel("Backup age against the policy", "[O21] oracle_backup_age_seconds / "
                         "oracle_backup_policy_max_age_seconds per kind (full or level 0, incremental, archivelog): "
                         "above 1 OracleBackupTooOld fires. Databases without a backup_policy have no line here.",
                         "percentunit", [q(f"oracle_backup_age_seconds{{{DB}}} / on (job, instance, database, kind) "
                                           f"oracle_backup_policy_max_age_seconds{{{DB}}}", "{{database}} {{kind}}")],
                         w=8, th=cfg.th("O21_backup_age")),
        timeseries_panel("Backup age", "[O21] Seconds since the newest backup set of each kind completed "
                         "(V$BACKUP_SET), every database, policy or not.", "s",
                         [q(f"oracle_backup_age_seconds{{{DB}}}", "{{database}} {{kind}}")], w=8),
        timeseries_panel("Failed backup jobs (last 24 h)", "[O21] RMAN jobs started in the last 24 hours that "
                         "ended FAILED or COMPLETED WITH ERRORS, per input type (OracleBackupFailed).", "short",
                         [q(f"oracle_backup_jobs_failed{{{DB}}}", "{{database}} {{input_type}}")], w=8,
                         th=cfg.th("O21_backup_failed")),
    ]


def undo_temp(cfg: Config) -> list:
    return [
        db.Row("Undo and temp"),
        timeseries_panel("ORA-01555 and undo space errors (last hour)", "[O22] GV$UNDOSTAT: queries that failed "
                         "with ORA-01555 (OracleSnapshotTooOld) and requests for undo space that failed "
                         "(OracleUndoSpaceErrors), summed over the 10-minute intervals of the last hour.", "short",
                         [q(f"oracle_undo_snapshot_too_old_errors{{{DB}}}", "{{database}} {{inst_id}} {{container}} ORA-01555", "A"),
                          q(f"oracle_undo_space_errors{{{DB}}}", "{{database}} {{inst_id}} {{container}} out of undo space", "B")],
                         w=8, th=cfg.th("O22_snapshot_too_old")),
        timeseries_panel("Longest query against the tuned undo retention", "[O22] GV$UNDOSTAT: the longest query "
                         "of the last hour (MAXQUERYLEN) and the retention Oracle achieves (TUNED_UNDORETENTION): a "
                         "query longer than the retention may fail with ORA-01555.", "s",
                         [q(f"oracle_undo_max_query_length_seconds{{{DB}}}", "{{database}} {{inst_id}} {{container}} longest query", "A"),
                          q(f"oracle_undo_tuned_retention_seconds{{{DB}}}", "{{database}} {{inst_id}} {{container}} tuned retention",
                            "B")], w=8),
        timeseries_panel("Temporary tablespaces in use", "[O22] Sort space in use / the size the temporary "
                         "tablespace can reach (tablespaces collector): above the threshold OracleTempSpaceFull, at "
                         "100% ORA-01652.", "percentunit",
                         [q(f"{R.TABLESPACE_USED}{{{DB}, contents=\"TEMPORARY\"}}",
                            "{{database}} {{container}} {{tablespace}}")], w=8, th=cfg.th("O22_temp")),
        timeseries_panel("Temp in use per consumer type", "[O22] GV$TEMPSEG_USAGE: temp space held per segment "
                         "type (HASH joins, SORTs, DATA/INDEX of temporary tables, LOBs).", "bytes",
                         [q(f"sum by (database, segtype) (oracle_temp_used_bytes{{{DB}}})", "{{database}} {{segtype}}")],
                         w=12, stack=True),
        timeseries_panel("Top temp consumer per instance", "[O22] The session holding the most temp space on each "
                         "instance, with its user and SQL_ID (no SQL text).", "bytes",
                         [q(f"oracle_temp_top_consumer_bytes{{{DB}}}",
                            "{{database}} {{inst_id}} {{username}} {{sql_id}}")], w=12),
    ]


def rac_gc(cfg: Config) -> list:
    by = "database, inst_id, kind"
    return [
        db.Row("RAC global cache"),
        timeseries_panel("Global cache block receive time", "[O23] Average time to receive a CR or current block "
                         "from another instance (GV$SYSSTAT receive time / blocks received): above the threshold "
                         "(Oracle Enterprise Manager's default warning) OracleGlobalCacheSlow.", "s",
                         [q(f"sum by ({by}) (rate(oracle_gc_block_receive_time_seconds_total{{{DB}}}[$__rate_interval]))"
                            f" / sum by ({by}) (rate(oracle_gc_blocks_received_total{{{DB}}}[$__rate_interval]))",
                            "{{database}} {{inst_id}} {{kind}}")], w=8, th=cfg.th("O23_gc")),
        timeseries_panel("Global cache blocks received per second", "[O23] CR and current blocks received from "
                         "other instances (Cache Fusion traffic).", "ops",
                         [q(f"sum by ({by}) (rate(oracle_gc_blocks_received_total{{{DB}}}[$__rate_interval]))",
                            "{{database}} {{inst_id}} {{kind}}")], w=8),
        timeseries_panel("Global cache blocks lost or corrupt (15 min)", "[O23] 'gc blocks lost' + 'gc blocks "
                         "corrupt' per 15 minutes: interconnect faults (OracleGlobalCacheBlocksLost).", "short",
                         [q(f"increase(oracle_gc_blocks_lost_total{{{DB}}}[15m])", "{{database}} {{inst_id}} lost", "A"),
                          q(f"increase(oracle_gc_blocks_corrupt_total{{{DB}}}[15m])", "{{database}} {{inst_id}} corrupt",
                            "B")], w=8, th=cfg.th("O23_gc_lost")),
    ]


def pdb_state(cfg: Config) -> list:
    return [
        db.Row("PDB open mode"),
        timeseries_panel("PDBs not open READ WRITE", "[O24] oracle_pdb_open_mode{open_mode=\"READ WRITE\"} == 0 per "
                         "PDB and instance (pdb_state collector, on by default): a PDB left MOUNTED after a restart "
                         "(OraclePdbNotOpen). 1 = not open for writing.", "short",
                         [q(f"1 - oracle_pdb_open_mode{{{DB}, open_mode=\"READ WRITE\"}}",
                            "{{database}} {{inst_id}} {{pdb}}", "A")], w=12),
        timeseries_panel("PDBs open RESTRICTED", "[O24] oracle_pdb_restricted: 1 = only users with RESTRICTED "
                         "SESSION may connect (OraclePdbNotOpen, cause restricted).", "short",
                         [q(f"oracle_pdb_restricted{{{DB}}}", "{{database}} {{inst_id}} {{pdb}}")], w=12,
                         th=cfg.th("O24_pdb_restricted")),
    ]


def scheduler(cfg: Config) -> list:
    return [
        db.Row("Scheduler jobs"),
        timeseries_panel("Failed scheduler job runs (last 24 h)", "[O25] Runs that FAILED per job (opt-in "
                         "scheduler_jobs collector; OracleSchedulerJobFailed), and the failures of the jobs beyond "
                         "scheduler_jobs_max.", "short",
                         [q(f"oracle_scheduler_job_failures{{{DB}}}", "{{database}} {{owner}}.{{job_name}}", "A"),
                          q(f"oracle_scheduler_job_failures_omitted{{{DB}}}", "{{database}} other jobs", "B")],
                         w=12, th=cfg.th("O25_scheduler")),
        timeseries_panel("Newest error code per failing job", "[O25] ERROR# of the newest failed run (the ORA- "
                         "code as a number; the text is in DBA_SCHEDULER_JOB_RUN_DETAILS).", "none",
                         [q(f"oracle_scheduler_job_last_error_code{{{DB}}}", "{{database}} {{owner}}.{{job_name}}")],
                         w=12, minimum=None),
    ]


def alert_log(cfg: Config) -> list:
    return [
        db.Row("Alert log"),
        timeseries_panel("ORA- errors in the alert log (per 5 min)", "[O26] Alert log messages with an ORA- error "
                         "by code and level (opt-in alert_log collector, V$DIAG_ALERT_EXT read every 5 minutes, "
                         "counted since the exporter started; OracleAlertLogCriticalError on ORA-00600/07445/04031 "
                         "or level critical). The text: the exporter's log (critical) and the alert log.", "short",
                         [q(f"sum by (database, code, level) (increase(oracle_alert_log_errors_total{{{DB}}}[5m]))",
                            "{{database}} {{code}} {{level}}", "A")], w=16),
        timeseries_panel("Alert log reads truncated", "[O26] Reads of V$DIAG_ALERT_EXT that hit alert_log_max_rows "
                         "(a message storm: the rest was not counted).", "short",
                         [q(f"increase(oracle_alert_log_reads_truncated_total{{{DB}}}[1h])", "{{database}}")], w=8),
    ]


def long_calls(cfg: Config) -> list:
    return [
        db.Row("Long-running calls"),
        timeseries_panel("Longest active user calls", "[O27] Seconds the long_calls_max longest ACTIVE user calls "
                         "per instance and program_kind have run (GV$SESSION.LAST_CALL_ET) by SQL_ID and user; "
                         "background processes and idle waits left out; RMAN channels, Data Pump processes, PX "
                         "slaves and scheduler jobs shown (program_kind rman, datapump, px, job) but only program_kind user is judged by "
                         "OracleLongRunningCall. The text: GV$SQL by SQL_ID.", "s",
                         [q(f"oracle_long_call_seconds{{{DB}}}",
                            "{{database}} {{inst_id}} {{program_kind}} {{sql_id}} {{username}}")],
                         w=16, th=cfg.th("O27_long_call")),
        timeseries_panel("User calls running over a minute", "[O27] Active user calls running at least "
                         "long_calls_min_seconds by program_kind (rman, datapump, px, job, user), those without a "
                         "series of their own included.", "short",
                         [q(f"oracle_long_calls{{{DB}}}", "{{database}} {{inst_id}} {{program_kind}}")], w=8),
    ]


def build(cfg: Config):
    panels = backups(cfg) + undo_temp(cfg) + rac_gc(cfg) + pdb_state(cfg) + scheduler(cfg) + alert_log(cfg) + long_calls(cfg)
    d = new_dashboard(UID, "On-call signals (issue 24): backups, ...", [v_datasource(), v_database(), v_host(cfg)])
    return add_panels(d, panels)
