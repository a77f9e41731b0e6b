"""oracle-wallboard: one tile per database and one per host, coloured from the alert thresholds
and from firing alerts, legible from across the room."""
from __future__ import annotations

from grafana_foundation_sdk.builders import common as cb, dashboard as db
from grafana_foundation_sdk.models.prometheus import PromQueryFormat
from grafana_foundation_sdk.models import common as cm

from mixin import records as R
from mixin.config import Config
from mixin.dashboards.common import (DB, HOST, LGWR_ROLES, SID_TO_DB, link, new_dashboard, override_ref, q,
                                    stat_panel, table_panel, v_database, v_datasource, v_host)

UID = "oracle-wallboard"

# ALERTS severity -> tile level: 0 ok, 1 warning, 2 critical (or target down)
STATUS_MAPPINGS = [{
    "type": "value",
    "options": {
        "0": {"text": "OK", "color": "green", "index": 0},
        "1": {"text": "WARNING", "color": "orange", "index": 1},
        "2": {"text": "CRITICAL", "color": "red", "index": 2},
    },
}]


def db_status_expr() -> str:
    return ('max by (database) ('
            '2 * ALERTS{alertstate="firing", severity="critical", ' + DB + '}'
            ' or ALERTS{alertstate="firing", severity="warning", ' + DB + '}'
            ' or 2 * (1 - oracle_up{' + DB + '}))')


def host_status_expr(cfg: Config) -> str:
    # A host exporter that is down is WARNING, like DbhostExporterDown / NodeExporterDown (severity
    # warning); `min` so that one of the two exporters being down is enough (max would hide it).
    return ('max by (instance) ('
            '2 * ALERTS{alertstate="firing", severity="critical", ' + HOST + '}'
            ' or ALERTS{alertstate="firing", severity="warning", ' + HOST + '}'
            ' or (1 - min by (instance) (up{' + cfg.selector("node", "dbhost") + ', ' + HOST + '})))')


def lgwr_share_by_db() -> str:
    return ('max by (database) (' +
            R.PROC_INVOLUNTARY_SHARE + '{' + LGWR_ROLES + '}'
            ' * on (sid) group_left (database) ' + SID_TO_DB + ')')


def build(cfg: Config):
    r2, r14 = cfg.th("R2"), cfg.th("R14")
    q2, c1, c4 = cfg.th("Q2"), cfg.th("C1"), cfg.th("C4")

    db_links = [link("oracle-redo", "Redo and LGWR deep dive", with_database=True),
                link("oracle-waits", "Wait events deep dive", with_database=True),
                link("oracle-memory", "PGA and memory deep dive", with_database=True),
                link("oracle-capacity", "Capacity profile vs baseline", with_database=True)]
    host_links = [link("host-storage", "Storage and LUN queues deep dive", with_host=True),
                  link("host-cpu", "CPU scheduling deep dive", with_host=True),
                  link("host-zfs", "ZFS ARC/L2ARC deep dive", with_host=True)]

    tile = stat_panel(
        "$database",
        "One tile per database (repeated over $database). STATUS: CRITICAL when a critical alert is "
        "firing for the database or oracle_up is 0, WARNING when a warning alert is firing. "
        f"[R2] log file sync average (red/amber at the OracleLogFileSyncSlow threshold, {r2.colour_at} s); "
        "[section 1 workload profile] commits/s and redo bytes/s; "
        f"[R14] LGWR involuntary context-switch share (threshold {r14.colour_at}). "
        "Click the tile for the redo, waits, memory and capacity dashboards.",
        "s",
        [q(db_status_expr(), "status", "A", instant=True),
         q('max by (database) (' + R.WAIT_AVG + '{'
           + DB + ', event="log file sync"})', "log file sync avg", "B", instant=True),
         q('sum by (database) (' + R.USER_COMMITS + '{' + DB + '})',
           "commits/s", "C", instant=True),
         q('sum by (database) (' + R.REDO_SIZE + '{' + DB + '})',
           "redo", "D", instant=True),
         q(lgwr_share_by_db(), "LGWR involuntary", "E", instant=True)],
        w=12, h=7, th=r2, links=db_links)
    tile = override_ref(tile, "A", name="status", unit="none", neutral="green", mappings=STATUS_MAPPINGS)
    tile = override_ref(tile, "B", name="log file sync avg", unit="s", th=r2)
    tile = override_ref(tile, "C", name="commits/s", unit="ops", neutral="blue")
    tile = override_ref(tile, "D", name="redo", unit="Bps", neutral="blue")
    tile = override_ref(tile, "E", name="LGWR involuntary", unit="percentunit", th=r14)
    tile = (tile.repeat("database").repeat_direction("h").max_per_row(2)
            .text(cb.VizTextDisplayOptions().title_size(22).value_size(44))
            .orientation(cm.VizOrientation.HORIZONTAL))

    host_tile = stat_panel(
        "$host",
        "One tile per host (repeated over $host). STATUS: CRITICAL when a critical alert fires for the "
        "host, WARNING when a warning alert fires or node_exporter / dbhost-exporter cannot be scraped "
        "(as DbhostExporterDown / NodeExporterDown, severity warning); "
        f"[Q2] worst LUN host-queue backlog, 5 m average (threshold {q2.colour_at} requests); "
        "[Z5] ZFS ARC hit ratio (no threshold: compare with the baseline); "
        f"[C1] run queue per CPU (threshold {c1.colour_at}); "
        f"[C2, C4] system share of busy CPU (threshold {c4.colour_at}). "
        "Click the tile for the storage, CPU and ZFS dashboards.",
        "short",
        [q(host_status_expr(cfg), "status", "A", instant=True),
         q('max by (instance) (' + R.LUN_HOST_QUEUE + '{' + HOST + '})',
           "worst LUN host queue", "B", instant=True),
         q('max by (instance) (' + R.ARC_HIT_RATIO + '{' + HOST + '})',
           "ARC hit ratio", "C", instant=True),
         q('max by (instance) (' + R.RUN_QUEUE_PER_CPU + '{' + HOST + '})',
           "run queue per CPU", "D", instant=True),
         q('max by (instance) (' + R.CPU_SYSTEM_SHARE_OF_BUSY + '{' + HOST + '})',
           "system CPU share", "E", instant=True)],
        w=12, h=7, th=q2, links=host_links)
    host_tile = override_ref(host_tile, "A", name="status", unit="none", neutral="green",
                             mappings=STATUS_MAPPINGS)
    host_tile = override_ref(host_tile, "B", name="worst LUN host queue", unit="short", th=q2)
    host_tile = override_ref(host_tile, "C", name="ARC hit ratio", unit="percentunit", neutral="blue")
    host_tile = override_ref(host_tile, "D", name="run queue per CPU", unit="short", th=c1)
    host_tile = override_ref(host_tile, "E", name="system CPU share", unit="percentunit", th=c4)
    host_tile = (host_tile.repeat("host").repeat_direction("h").max_per_row(2)
                 .text(cb.VizTextDisplayOptions().title_size(22).value_size(44))
                 .orientation(cm.VizOrientation.HORIZONTAL))

    firing = table_panel(
        "Firing alerts",
        "Every alert of the pack that is firing now (ALERTS{alertstate=\"firing\"}); each alert's "
        "runbook cites its field-notes id (R1..R17, I1, I2, M2..M4, C1, C2, Q2, Q3, Z4). "
        "Empty when all is well.",
        "none",
        [q('sort_desc(max by (alertname, severity, database, instance) (ALERTS{alertstate="firing"}))',
           "", "A", instant=True, fmt=PromQueryFormat.TABLE)],
        w=24, h=6, hide=("Time", "Value"))

    d = new_dashboard(UID, "Instance-health wallboard: one tile per database and per host, coloured "
                      "from the alert pack's thresholds (alerts/thresholds.yaml) and firing alerts.",
                      [v_datasource(), v_database(), v_host(cfg)], refresh="30s", time_from="now-1h")
    d = (d.with_row(db.Row("Databases")).with_panel(tile)
         .with_row(db.Row("Hosts")).with_panel(host_tile)
         .with_row(db.Row("Alerts")).with_panel(firing))
    return d
