"""oracle-signals: what on call asks in the first five minutes (issue 24): can we restore it
(backups), ...; one row per collector, each naming the alert it backs."""
from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db

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


def build(cfg: Config):
    panels = backups(cfg)
    d = new_dashboard(UID, "On-call signals (issue 24): backups, ...", [v_datasource(), v_database(), v_host(cfg)])
    return add_panels(d, panels)
