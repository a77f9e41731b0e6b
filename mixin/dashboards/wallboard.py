"""oracle-wallboard: the fleet at a glance (one cell per database and per host, sorted by
severity, readable at 200 databases), one tile per database and per host with its key figures,
sessions and hangs, and the firing alerts; coloured from the alert thresholds and firing alerts,
legible from across the room."""
from __future__ import annotations

from grafana_foundation_sdk.builders import common as cb, dashboard as db
from grafana_foundation_sdk.models.prometheus import PromQueryFormat
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models.dashboard import DynamicConfigValue

from mixin import fleetview
from mixin import records as R
from mixin.config import Config
from mixin.dashboards.common import (DB, link, new_dashboard, override_ref, q, stat_panel, steps_json,
                                    table_panel, timeseries_panel, v_database, v_datasource, v_host)

UID = "oracle-wallboard"

# the tile states (0 OK .. 3 UNKNOWN) and the tiles' figures are defined once in mixin/fleetview.py,
# shared with the Grafana-free fleet wallboard page (exporters/fleetview)
STATUS_MAPPINGS = [{
    "type": "value",
    "options": {str(level): {"text": text, "color": colour, "index": level}
                for level, (text, colour) in fleetview.STATES.items()},
}]
db_status_expr, host_status_expr = fleetview.db_status_expr, fleetview.host_status_expr
lgwr_share_by_db, sync_avg_by_db = fleetview.lgwr_share_by_db, fleetview.sync_avg_by_db


def tile_targets(p, figures, cfg: Config):
    """Override each figure's field (name, unit, threshold colours) on a tile built from them."""
    for ref, f in zip("ABCDEFGHIJ", figures):
        if f.status:
            p = override_ref(p, ref, name=f.label, unit=f.unit, neutral=f.neutral, mappings=STATUS_MAPPINGS)
        elif f.threshold:
            p = override_ref(p, ref, name=f.label, unit=f.unit, th=cfg.th(f.threshold))
        else:
            p = override_ref(p, ref, name=f.label, unit=f.unit, neutral=f.neutral)
    return p


REFS = "ABCDEFGHIJKLMN"


def figures_table(title: str, desc: str, figures, key: str, cfg: Config, links: list, h: int):
    """The fleet's tiles as one table: one row per database (or host), one column per figure,
    each figure ONE instant query over the whole fleet (merged on `key`), coloured by its
    threshold tiers; sorted worst first by STATUS. Repeating a panel per database would run
    every figure once per database: 200 databases and 150 hosts, 2,100 queries per refresh."""
    targets = [q(f.expr, "", ref, instant=True, fmt=PromQueryFormat.TABLE) for ref, f in zip(REFS, figures)]
    p = table_panel(title, desc, "none", targets, w=24, h=h, hide=("Time",))
    for ref, f in zip(REFS, figures):
        props = [DynamicConfigValue(id_val="displayName", value=f.label),
                 DynamicConfigValue(id_val="unit", value=f.unit),
                 DynamicConfigValue(id_val="custom.cellOptions", value={"type": "color-background"})]
        if f.status:
            props += [DynamicConfigValue(id_val="thresholds", value=steps_json(None, f.neutral)),
                      DynamicConfigValue(id_val="mappings", value=STATUS_MAPPINGS)]
        else:
            th = fleetview.figure_tiers(cfg, f)
            props.append(DynamicConfigValue(id_val="thresholds",
                                            value=steps_json(th if len(th) > 1 else (th[0] if th else None),
                                                             "green" if th else f.neutral)))
        p = p.override_by_name(f"Value #{ref}", props)
    p = p.override_by_name(key, [DynamicConfigValue(id_val="links", value=[
        {"title": lk.build().title, "url": lk.build().url.replace("var-database=${database}", "var-database=${__data.fields.database}")
         .replace("var-host=${host}", "var-host=${__data.fields.instance}")}
        for lk in links])])
    return p.sort_by([cb.TableSortByFieldState().display_name(figures[0].label).desc(True)]).links(links)


def fleet_links(var: str, field: str, targets) -> list:
    return [db.DashboardLink(title).url(f"/d/{uid}/{uid}?${{__url_time_range}}&var-datasource=${{datasource}}"
                                        f"&var-{var}=${{__field.labels.{field}}}").target_blank(False)
            for uid, title in targets]


def fleet_panel(title: str, desc: str, expr: str, legend: str, links: list, h: int) -> object:
    """One cell per series, sorted by state (worst first): Grafana's stat grid lays them out
    to fill the panel, so 200 databases fit one screen; each cell links to its detail."""
    p = stat_panel(title, desc, "none", [q(f"sort_desc({expr})", legend, "A", instant=True)],
                   w=24, h=h, neutral="green")
    p = override_ref(p, "A", unit="none", neutral="green", mappings=STATUS_MAPPINGS)
    return (p.text_mode(cm.BigValueTextMode.VALUE_AND_NAME).orientation(cm.VizOrientation.AUTO)
            .text(cb.VizTextDisplayOptions().title_size(12).value_size(14))
            .data_links(links))


def build(cfg: Config):
    r2, r14 = cfg.th("R2"), cfg.th("R14")
    db_figures, host_figures = fleetview.db_tiles(cfg), fleetview.host_tiles(cfg)
    q2, c1, c4 = cfg.th("Q2"), cfg.th("C1"), cfg.th("C4")

    db_links = [link("oracle-redo", "Redo and LGWR deep dive", with_database=True),
                link("oracle-waits", "Wait events deep dive", with_database=True),
                link("oracle-memory", "PGA and memory deep dive", with_database=True),
                link("oracle-capacity", "Capacity profile vs baseline", with_database=True)]
    host_links = [link("host-storage", "Storage and LUN queues deep dive", with_host=True),
                  link("host-cpu", "CPU scheduling deep dive", with_host=True),
                  link("host-zfs", "ZFS ARC/L2ARC deep dive", with_host=True)]

    tile = figures_table(
        "Databases",
        "[O1, O3, R2, R13, R14, O4] One row per database, worst first, one query per figure over the whole fleet (the query count "
        "does not grow with the number of databases). STATUS: CRITICAL when a critical alert is "
        "firing for the database or oracle_up is 0, WARNING when a warning alert is firing or the database "
        "refuses the monitoring account (oracle_last_error_info: logon denied, locked, expired; OracleDown's "
        "warning, C5), UNKNOWN "
        "(as loud as critical) when the database has no data now and was seen within the hour or its exporter target is still configured (up exists) [O3]. "
        f"[R2] log file sync average (red/amber at the OracleLogFileSyncSlow threshold, {r2.colour_at} s), "
        f"shown with at least {r2.floor('waits').value:g} commit waits/s behind it, as the alert; "
        "[section 1 workload profile] commits/s and redo bytes/s; "
        f"[R14] LGWR involuntary context-switch share (threshold {r14.colour_at}), with at least "
        f"{r14.floor('switches').value:g} LGWR switches/s; "
        f"[R13, R14] LGWR CPU wait: its run-queue wait per dispatch (threshold "
        f"{cfg.th('R13_run_delay').colour_at * 1000:g} ms, the cause OracleCommitCpuStarvation names), the "
        "host exporter's LGWR joined on host and SID; [O4] processes/sessions used, fullest tablespace and "
        "recovery area: orange at the ticket, red at the paging threshold. Click a row for the redo, waits, "
        "memory and capacity dashboards.",
        db_figures, "database", cfg, db_links, h=12)
    host_tile = figures_table(
        "Hosts",
        "[O1, Q2, C1, C4, O6] One row per host, worst first, one query per figure over the whole fleet. STATUS: CRITICAL when a "
        "critical alert fires for the host, WARNING when a warning alert fires or node_exporter / "
        "dbhost-exporter cannot be scraped (as DbhostExporterDown / NodeExporterDown, severity warning), "
        "UNKNOWN when both were scraped within the hour and are gone now [O1]; "
        f"[Q2] worst LUN host-queue backlog, 5 m average (threshold {q2.colour_at} requests); "
        "[Z5] ZFS ARC hit ratio (no threshold: compare with the baseline); "
        f"[C1] run queue per CPU (threshold {c1.colour_at}); "
        f"[C2, C4] system share of busy CPU (threshold {c4.colour_at}), shown while system CPU is above "
        f"{c4.floor('system_share').value:g} of all CPU, as the alert; "
        "[O6] LUN paths lost: the most paths any multipath LUN of the host lost against the last day "
        "(LunPathRedundancyLost, LunAllPathsDown); no value on a host without multipath. "
        "Click a row for the storage, CPU and ZFS dashboards.",
        host_figures, "instance", cfg, host_links, h=10)

    firing = table_panel(
        "Firing alerts",
        "[O1] Every alert of the pack that is firing now (ALERTS{alertstate=\"firing\"}, the Watchdog "
        "heartbeat left out); each alert's runbook cites its field-notes id (R1..R17, I1, I2, M1..M5, "
        "C1, C2, Q2..Q4, Z3, Z4, O1..O6). Empty when all is well.",
        "none",
        [q(fleetview.FIRING_ALERTS,
           "", "A", instant=True, fmt=PromQueryFormat.TABLE)],
        w=24, h=6, hide=("Time", "Value"))

    db_detail = [("oracle-redo", "Redo and LGWR"), ("oracle-waits", "Wait events"),
                 ("oracle-memory", "PGA and memory"), ("oracle-wallboard", "This database's tile")]
    host_detail = [("host-storage", "Storage and LUN queues"), ("host-cpu", "CPU scheduling"),
                   ("host-zfs", "ZFS ARC/L2ARC"), ("oracle-wallboard", "This host's tile")]
    fleet_db = fleet_panel(
        "Fleet: databases by state",
        "[O1, O3] One cell per database, worst first: OK, WARNING (a warning alert fires), CRITICAL (a critical "
        "alert fires or oracle_up is 0; WARNING when the database only refuses the monitoring account, as "
        "OracleDown's warning, C5), UNKNOWN (no data now; seen within the hour or its exporter target still configured) [O1, O3]. Built "
        "for a fleet: 200 databases fit one screen. Click a cell for its redo, waits or memory "
        "dashboard or its tile below.",
        db_status_expr(), "{{database}}", fleet_links("database", "database", db_detail), h=8)
    fleet_host = fleet_panel(
        "Fleet: hosts by state",
        "[O1] One cell per host, worst first: OK, WARNING (a warning alert fires or an exporter cannot be "
        "scraped), CRITICAL, UNKNOWN (both exporters gone) [O1, C5]. Click a cell for its storage, "
        "CPU or ZFS dashboard or its tile below.",
        host_status_expr(cfg), "{{instance}}", fleet_links("host", "instance", host_detail), h=5)

    # ---------------- sessions and hangs (GV$SESSION sampled each scrape, O2)
    o2c, o2w, o2b = cfg.th("O2_commit"), cfg.th("O2_wait"), cfg.th("O2_blocked")
    commit_wait = stat_panel(
        "Longest commit wait",
        f"[O2, R2] Per database, the longest wait in progress on log file sync, log file switch or log "
        f"buffer space (oracle_sessions_waiting_longest_seconds): above {o2c.colour_at:g} s commits are "
        "stuck and OracleCommitsStuck pages. Averages of completed waits cannot show a hang; this can.",
        "s", [q(f"sort_desc(max by (database) (oracle_sessions_waiting_longest_seconds{{{DB}, {R.COMMIT_WAITS}}}))",
                "{{database}}", "A", instant=True)], w=8, h=6, th=o2c)
    blocked = stat_panel(
        "Longest blocked session",
        f"[O2] Per database, how long the longest-blocked session has waited for another session's "
        f"lock (oracle_sessions_blocked_longest_seconds): above {o2b.colour_at:g} s it is a ticket "
        "(OracleSessionsBlocked).",
        "s", [q(f"sort_desc(max by (database) (oracle_sessions_blocked_longest_seconds{{{DB}}}))",
                "{{database}}", "A", instant=True)], w=8, h=6, th=o2b)
    stuck = stat_panel(
        "Longest non-idle wait",
        f"[O2] Per database, the longest wait in progress outside the Idle, Application and Network "
        f"classes: above {o2w.colour_at:g} s a session is stuck (OracleSessionsStuck).",
        "s", [q(f'sort_desc(max by (database) (oracle_sessions_waiting_longest_seconds{{{DB}, '
                f'wait_class!~"Idle|Application|Network"}}))', "{{database}}", "A", instant=True)],
        w=8, h=6, th=o2w)
    for p in (commit_wait, blocked, stuck):
        p.orientation(cm.VizOrientation.AUTO).text(cb.VizTextDisplayOptions().title_size(12).value_size(16))
    active = timeseries_panel(
        "Active sessions by wait class",
        "[O2, I3] Sessions ACTIVE at each scrape, on CPU (wait_class CPU) or in a non-idle wait by "
        "class: a sampled average-active-sessions profile. A wall of one class (Commit, User I/O, "
        "Concurrency) is where the database spends its time.",
        "short", [q(f"sum by (wait_class) (oracle_sessions_active{{{DB}}})", "{{wait_class}}")],
        w=12, stack=True)
    waiting = timeseries_panel(
        "Sessions waiting: top events",
        "[O2] Sessions in a non-idle wait per event (top 10 by sessions), across the selected databases: "
        "a hang shows as a growing count on one event.",
        "short", [q(f"topk(10, sum by (database, event) (oracle_sessions_waiting{{{DB}}}))",
                    "{{database}} {{event}}")], w=12)

    # ---------------- space, limits, standby (O4, O5): the worst per database, worst first
    o4r, o4t, o4f, o5l = cfg.th("O4_resource"), cfg.th("O4_tablespace"), cfg.th("O4_fra"), cfg.th("O5_lag")
    limits = [
        ("Processes / sessions used", f"[O4] Per database, the highest of processes, sessions and transactions "
         f"in use against their limit (GV$RESOURCE_LIMIT): a ticket above {o4r.colour_at:.0%}, a page above "
         f"{cfg.th('O4_resource_crit').colour_at:.0%} (ORA-00020 / ORA-00018 at 100%).", "percentunit",
         fleetview.RESOURCE_USED, fleetview.tiers(cfg, "O4_resource")),
        ("Fullest tablespace", f"[O4] Per database, the fullest permanent tablespace against the size it can "
         f"reach (READ ONLY and OFFLINE ones left out: they cannot grow): a ticket above {o4t.colour_at:.0%}, a "
         f"page above {cfg.th('O4_tablespace_crit').colour_at:.0%} with little room left or when full within hours.",
         "percentunit", fleetview.TABLESPACE_FULLEST, fleetview.tiers(cfg, "O4_tablespace")),
        ("Recovery area used", f"[O4, R15] Per database, the fast recovery area in use net of what Oracle "
         f"reclaims by itself: a ticket above {o4f.colour_at:.0%}, a page (red) above "
         f"{cfg.th('O4_fra_crit').colour_at:.0%}; when full, archiving and then commits stop.",
         "percentunit", fleetview.RECOVERY_AREA, fleetview.tiers(cfg, "O4_fra")),
        ("Standby lag", f"[O5] Per standby database, the larger of transport and apply lag: a ticket above "
         f"{o5l.colour_at:g} s.", "s", f"max by (database) (oracle_dataguard_lag_seconds{{{DB}}})", o5l),
    ]
    o4a, o4o = cfg.th("O4_asm"), cfg.th("O4_asm_offline")
    o5s, o5d = cfg.th("O5_lag_stale"), cfg.th("O5_archive_dest")
    asm_ratio = (f"oracle_asm_diskgroup_file_space_bytes{{{DB}}} / "
                 f"(oracle_asm_diskgroup_file_capacity_bytes{{{DB}}} > 0)")
    limits += [
        ("ASM usable file space", f"[O4] Per database on ASM, the disk group with the least space left for files "
         f"(USABLE_FILE_MB, or free space per copy / raw free for FLEX and EXTEND groups) against its size: a "
         f"ticket below {o4a.colour_at:.0%}; negative: a failure group lost now could not be re-mirrored. Lowest first.",
         "percentunit", f"min by (database) ({asm_ratio})", o4a),
        ("ASM disks offline", "[O4] Per database on ASM, offline disks in its disk groups: any is a ticket "
         "(OracleAsmDiskOffline), the group runs without its redundancy.", "none",
         f"sum by (database) (max by (database, diskgroup) (oracle_asm_diskgroup_offline_disks{{{DB}}}))", o4o),
        ("Archive destinations in error", "[O5, R15] Per database, archive destinations in use that are in "
         "ERROR, DISABLED, BAD PARAM or FULL: any is a ticket (OracleArchiveDestinationError); deferred "
         "destinations and those not valid in the database's role count 0.", "none",
         f"sum by (database) (max by (database, inst_id, dest_name) (oracle_archive_dest_error{{{DB}}}))", o5d),
        ("Standby lag data age", f"[O5] Per standby database, the age of the data its lag was computed from "
         f"(TIME_COMPUTED - DATUM_TIME): above {o5s.colour_at:g} s the standby receives no redo and a small "
         "lag figure is stale (OracleDataGuardLagNotComputed). A lag that is not computed at all shows "
         "'NOT COMPUTED'.", "s",
         f"max by (database) (oracle_dataguard_lag_datum_age_seconds{{{DB}}})", o5s),
    ]
    space = []
    for title, desc, unit, expr, t in limits:
        t = t if isinstance(t, list) else [t]     # a measure's tiers: warning orange, paging red
        order = "sort" if t[0].lower_is_bad else "sort_desc"
        targets = [q(f"{order}({expr})", "{{database}}", "A", instant=True)]
        if title == "Standby lag data age":
            # 0 when a kind's lag row has no value: the cell says so, in the alert's colour
            targets.append(q(f"min by (database) (oracle_dataguard_lag_computed{{{DB}}}) == 0",
                             "{{database}} lag", "B", instant=True))
        p = stat_panel(title, desc, unit, targets, w=6, h=6, th=t if len(t) > 1 else t[0])
        if len(targets) > 1:
            p = override_ref(p, "B", unit="none", neutral=o5s.colour, mappings=[{
                "type": "value", "options": {"0": {"text": "NOT COMPUTED", "color": o5s.colour, "index": 0}}}])
        p.orientation(cm.VizOrientation.AUTO).text(cb.VizTextDisplayOptions().title_size(12).value_size(16))
        space.append(p)

    d = new_dashboard(UID, "Instance-health wallboard: the fleet by state, one tile per database and per "
                      "host, sessions and hangs, coloured from the alert pack's thresholds "
                      "(alerts/thresholds.yaml) and firing alerts.",
                      [v_datasource(), v_database(), v_host(cfg)], refresh="30s", time_from="now-1h")
    d = (d.with_row(db.Row("Fleet")).with_panel(fleet_db).with_panel(fleet_host)
         .with_row(db.Row("Databases")).with_panel(tile)
         .with_row(db.Row("Hosts")).with_panel(host_tile)
         .with_row(db.Row("Sessions and hangs")).with_panel(commit_wait).with_panel(blocked).with_panel(stuck)
         .with_panel(active).with_panel(waiting)
         .with_row(db.Row("Space, limits and standby")))
    for p in space:
        d = d.with_panel(p)
    d = d.with_row(db.Row("Alerts")).with_panel(firing)
    return d
