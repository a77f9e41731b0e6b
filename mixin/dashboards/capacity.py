"""oracle-capacity: the experts' capacity profile, now beside a baseline (field notes K1).

"now" is the rate over the dashboard's time range ($__range); the baseline is the same window
shifted by the `baseline` variable: `offset 1d`, `offset 7d`, or a fixed window ending at the
unix time typed in `baseline_end` (`@ <time>`, same length as the current range).
"""
from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.models.dashboard import VariableOption
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from mixin import fleetview
from mixin import records as R
from mixin.config import Config
from mixin.dashboards.common import (DB, new_dashboard, override_name, override_ref,
                                    q, stat_panel, table_panel, timeseries_panel, v_database,
                                    v_datasource, v_host)

UID = "oracle-capacity"
T = PromQueryFormat.TABLE
BASELINE_END_DEFAULT = "1767225600"  # 2026-01-01T00:00:00Z; type any unix time
BASELINE_OPTIONS = [
    ("same window 1 day earlier", "offset 1d"),
    ("same window 1 week earlier", "offset 7d"),
    ("fixed window ending at baseline_end", "@ ${baseline_end}"),
]

# the measures and expressions are defined once in mixin/fleetview.py, shared with the capacity
# report (exporters/fleetview): the report runs exactly these queries
WORKLOAD, WAITS, LOAD_PROFILE = fleetview.WORKLOAD, fleetview.WAITS, fleetview.LOAD_PROFILE
events_regex, per_db_rate = fleetview.events_regex, fleetview.per_db_rate

RANGE_NOW, RANGE_BASE = fleetview.RANGE_NOW, fleetview.RANGE_BASE


def _in_days(t):
    """A time-to-full threshold in the days of the days-to-full panel (O4_tablespace_hours is in seconds)."""
    import dataclasses
    scale = {"seconds": 1 / 86400, "hours": 1 / 24, "days": 1.0}[t.unit]
    return dataclasses.replace(t, value=t.value * scale, unit="days")


def v_baseline_end() -> db.TextBoxVariable:
    return (db.TextBoxVariable("baseline_end").label("Fixed baseline ends at (unix time)")
            .description("Used when baseline = fixed window: the end of the baseline window, "
                         "as unix seconds; the window has the length of the dashboard range.")
            .default_value(BASELINE_END_DEFAULT)
            .current(VariableOption(selected=True, text=BASELINE_END_DEFAULT, value=BASELINE_END_DEFAULT)))


def v_baseline() -> db.CustomVariable:
    query = ", ".join(f"{text} : {value}" for text, value in BASELINE_OPTIONS)
    return (db.CustomVariable("baseline").label("Baseline").values(query)
            .description("[K1] what 'baseline' means in every panel: the same window a day or a "
                         "week earlier, or a fixed window (see baseline_end).")
            .current(VariableOption(selected=True, text=BASELINE_OPTIONS[1][0],
                                    value=BASELINE_OPTIONS[1][1]))
            .options([VariableOption(selected=i == 1, text=t, value=v)
                      for i, (t, v) in enumerate(BASELINE_OPTIONS)]))


def build(cfg: Config):
    # ---------------- workload table (now | baseline per measure)
    targets, rename, units = [], {}, {}
    refs = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    for label, counter, unit in WORKLOAD:
        for period, rng in (("now", RANGE_NOW), ("baseline", RANGE_BASE)):
            ref = next(refs)
            targets.append(q(per_db_rate(counter, rng), "", ref, instant=True, fmt=T))
            rename[f"Value #{ref}"] = f"{label} {period}"
            units[f"{label} {period}"] = unit
    workload = table_panel(
        "Workload profile: now vs baseline (per second)",
        "[Section 1 workload profile, K1] redo size (bytes/s), commits (user commits/s), redo synch "
        "writes/s, LGWR redo writes/s and redo entries/s, averaged over the dashboard range ('now') "
        "beside the same measures over the baseline window. Case study: 72 commits/s and 9.45 MB/s "
        "redo before, 520/s and 10.1 MB/s after.",
        "ops", targets, h=6, rename=rename)
    for name, unit in units.items():
        workload = override_name(workload, name, unit=unit)

    # ---------------- waits table
    waits_rate, inst_rate = fleetview.cap_waits_rate, fleetview.cap_inst_waits_rate
    avg = lambda rng: fleetview.cap_wait_avg(rng, cfg)  # noqa: E731
    cited = list(dict.fromkeys(i for i, _, _ in WAITS))
    avg_th, rate_th = fleetview.cap_wait_thresholds(cfg)
    waits = table_panel(
        "Waits: now vs baseline, with thresholds",
        f"[{', '.join(dict.fromkeys(cited))}] redo and I/O wait events: the database's waits/s, the busiest "
        "instance's waits/s and the worst instance's average wait (time waited / waits; among the instances "
        "with the alert's traffic floor), over the range and over the baseline window: judged per instance as "
        "the alerts judge RAC (each inst_id), a slow instance is not averaged away. 'max avg wait' is the "
        "alert threshold on the average ("
        + ", ".join(f"{i} {cfg.th(i).value * 1000:g} ms" for i, _, k in WAITS if k == "avg")
        + "); 'max waits/s' is where the alert pack counts a finding for rate-based events ("
        + ", ".join(dict.fromkeys(f"{i} {cfg.th(i).colour_at:g}/s" for i, _, k in WAITS if k == "rate"))
        + "; 'eliminate' events use their noise floor). R7 has no threshold: watch the rate.",
        "s",
        [q(waits_rate(RANGE_NOW), "", "A", instant=True, fmt=T),
         q(waits_rate(RANGE_BASE), "", "B", instant=True, fmt=T),
         q(avg(RANGE_NOW), "", "C", instant=True, fmt=T),
         q(avg(RANGE_BASE), "", "D", instant=True, fmt=T),
         q(avg_th, "", "E", instant=True, fmt=T),
         q(rate_th, "", "F", instant=True, fmt=T),
         q(inst_rate(RANGE_NOW), "", "G", instant=True, fmt=T),
         q(inst_rate(RANGE_BASE), "", "H", instant=True, fmt=T)],
        h=9, rename={"Value #A": "waits/s now", "Value #B": "waits/s baseline",
                     "Value #C": "avg wait now (worst instance)", "Value #D": "avg wait baseline (worst instance)",
                     "Value #E": "max avg wait", "Value #F": "max waits/s",
                     "Value #G": "waits/s now (busiest instance)", "Value #H": "waits/s baseline (busiest instance)"})
    for name in ("waits/s now", "waits/s baseline", "max waits/s", "waits/s now (busiest instance)",
                 "waits/s baseline (busiest instance)"):
        waits = override_name(waits, name, unit="ops")
    for name in ("avg wait now (worst instance)", "avg wait baseline (worst instance)", "max avg wait"):
        waits = override_name(waits, name, unit="s")

    # ---------------- top 5 timed events
    tq = fleetview.cap_top_queries()
    top = table_panel(
        "Top 5 timed events (now) with share of wait time and average latency",
        "[I3] the statspack 'Top 5 timed events': the five non-idle events with the most time waited "
        "over the range, their share of total non-idle wait time, average wait (time/waits), waits/s, "
        "and the same event's share in the baseline window [K1].",
        "percentunit",
        [q(tq["share"], "", "A", instant=True, fmt=T),
         q(tq["avg"], "", "B", instant=True, fmt=T),
         q(tq["waits"], "", "C", instant=True, fmt=T),
         q(tq["share_base"], "", "D", instant=True, fmt=T)],
        h=8, rename={"Value #A": "share of wait time", "Value #B": "avg wait",
                     "Value #C": "waits/s", "Value #D": "share in baseline"})
    top = override_name(top, "share of wait time", unit="percentunit")
    top = override_name(top, "share in baseline", unit="percentunit")
    top = override_name(top, "avg wait", unit="s")
    top = override_name(top, "waits/s", unit="ops")

    # ---------------- system figures, now vs baseline
    c1, r14 = cfg.th("C1"), cfg.th("R14")
    r17w, r17r = cfg.th("R17_write"), cfg.th("R17_read")

    def now_base(title, desc, unit, expr_fn, th, ids):
        p = stat_panel(title, f"[{', '.join(ids)}] {desc} Left: now (average over the range); "
                       "right: the baseline window.", unit,
                       [q(expr_fn(RANGE_NOW), "now {{instance}}{{database}}", "A", instant=True),
                        q(expr_fn(RANGE_BASE), "baseline {{instance}}{{database}}", "B", instant=True)],
                       w=6, h=6, th=th)
        return override_ref(override_ref(p, "A", th=th), "B", th=th)

    runq = now_base("Run queue per CPU", "Runnable tasks per CPU (node_procs_running / CPUs); "
                    f"sustained >= {c1.colour_at} per CPU is a CPU bottleneck; 1.2 in the case study (R18).",
                    "short", fleetview.cap_run_queue,
                    c1, ["C1", "R18"])
    lgwr = now_base("LGWR involuntary switch share", "Share of LGWR's context switches that were "
                    "involuntary: 30% before, < 0.1% after the fix.", "percentunit",
                    fleetview.cap_lgwr_share,
                    r14, ["R14"])
    lunw = now_base("Redo LUN write latency", "Average write service time of LUNs with role=redo "
                    f"(node_exporter diskstats): writes < {r17w.colour_at} s.", "s",
                    fleetview.cap_lun_write,
                    r17w, ["R17"])
    lunr = now_base("Redo LUN read latency", "Average read service time of LUNs with role=redo "
                    f"(ARCH reads redo): reads < {r17r.colour_at} s.", "s",
                    fleetview.cap_lun_read,
                    r17r, ["R17"])

    # ---------------- load profile (I3): per second and per transaction
    lp = fleetview.cap_load_profile
    load = table_panel(
        "Load profile: per second and per transaction",
        "[I3, I4] the statspack load profile over the range and the baseline window: per second, and "
        "per transaction (user commits + user rollbacks). High physical reads alone are not a finding "
        "(I4: they may be host or array cache hits).",
        "short",
        [q(lp(RANGE_NOW), "", "A", instant=True, fmt=T),
         q(lp(RANGE_NOW, True), "", "B", instant=True, fmt=T),
         q(lp(RANGE_BASE), "", "C", instant=True, fmt=T)],
        h=10, rename={"Value #A": "per second now", "Value #B": "per transaction now",
                      "Value #C": "per second baseline"})
    load = override_name(load, "per second now", unit="ops")
    load = override_name(load, "per second baseline", unit="ops")

    trend = timeseries_panel(
        "Commits/s and redo writes/s over time",
        "[R1, R2; section 1 workload profile] the rates behind the table, 5 m windows (recording rules): "
        "each commit waits on log file sync (R2), each LGWR write is a log file parallel write (R1).",
        "ops",
        [q(f"sum by (database) ({R.USER_COMMITS}{{{DB}}})", "{{database}} commits/s", "A"),
         q(f"sum by (database) ({R.REDO_WRITES}{{{DB}}})", "{{database}} LGWR writes/s", "B"),
         q(f"sum by (database) ({R.REDO_SYNCH_WRITES}{{{DB}}})", "{{database}} redo synch writes/s", "C")],
        w=24, h=7)

    # ---------------- space and limits (O4, O5)
    o4r, o4t, o4f = cfg.th("O4_resource"), cfg.th("O4_tablespace"), cfg.th("O4_fra")
    o4a, o5l = cfg.th("O4_asm"), cfg.th("O5_lag")
    ts_leg = "{{database}} {{container}} {{tablespace}}"
    space = [
        timeseries_panel("Resources used against their limit", f"[O4] processes, sessions and transactions in use "
                         f"against their limit (GV$RESOURCE_LIMIT); a ticket above {o4r.colour_at:.0%}, a page (red) above "
                         f"{cfg.th('O4_resource_crit').colour_at:.0%}. UNLIMITED "
                         "resources have no limit and no line.", "percentunit",
                         [q(f'{R.RESOURCE_UTILIZATION}{{{DB}, resource=~"processes|sessions|transactions"}}',
                            "{{database}}/{{inst_id}} {{resource}}")], w=12, th=fleetview.tiers(cfg, "O4_resource")),
        timeseries_panel("Tablespaces: the 10 fullest", f"[O4] Permanent tablespaces against the size they can "
                         f"reach (autoextensible files at MAXSIZE; READ ONLY and OFFLINE ones left out); a ticket "
                         f"above {o4t.colour_at:.0%}, red from the paging level {cfg.th('O4_tablespace_crit').colour_at:.0%}.", "percentunit",
                         [q(f'topk(10, {R.TABLESPACE_USED}{{{DB}, contents="PERMANENT"}} unless on (database, '
                            f'container, tablespace) oracle_tablespace_info{{{DB}, status=~"READ ONLY|OFFLINE"}})',
                            ts_leg)], w=12, th=fleetview.tiers(cfg, "O4_tablespace")),
        timeseries_panel("Tablespace growth: days to full", "[O4] (maximum - used) / growth per second over 6 h, "
                         f"in days, for growing permanent tablespaces; OracleTablespaceFillingUp below "
                         f"{cfg.th('O4_tablespace_days').value:g} days (orange, a ticket) and below "
                         f"{cfg.th('O4_tablespace_hours').value / 3600:g} hours (red, a page).", "d",
                         [q(f'bottomk(10, (oracle_tablespace_max_bytes{{{DB}, contents="PERMANENT"}} - '
                            f'oracle_tablespace_used_bytes{{{DB}, contents="PERMANENT"}}) / '
                            f'(deriv(oracle_tablespace_used_bytes{{{DB}, contents="PERMANENT"}}[6h]) > 0) / 86400)',
                            ts_leg)], w=8, th=[_in_days(cfg.th('O4_tablespace_days')), _in_days(cfg.th('O4_tablespace_hours'))]),
        timeseries_panel("Recovery area used", f"[O4, R15] Fast recovery area in use net of reclaimable files; a "
                         f"ticket above {o4f.colour_at:.0%}, a page (red) above {cfg.th('O4_fra_crit').colour_at:.0%}: when full, archiving stops, then commits.", "percentunit",
                         [q(f"{R.RECOVERY_AREA_USED}{{{DB}}}", "{{database}}")], w=8, th=fleetview.tiers(cfg, "O4_fra")),
        timeseries_panel("ASM usable file space", f"[O4] Space left for files in each disk group against its size "
                         "(oracle_asm_diskgroup_file_space_bytes: USABLE_FILE_MB, or free space per copy / raw free "
                         f"where Oracle gives no meaningful one, FLEX and EXTEND); below {o4a.colour_at:.0%} it is a "
                         "ticket; negative: a failure group lost now could not be re-mirrored.", "percentunit",
                         [q(f"oracle_asm_diskgroup_file_space_bytes{{{DB}}} / (oracle_asm_diskgroup_file_capacity_bytes{{{DB}}} > 0)",
                            "{{database}} {{diskgroup}}")], w=8, th=o4a, minimum=None),
        timeseries_panel("ASM offline disks", "[O4] Offline disks per disk group (V$ASM_DISKGROUP_STAT."
                         "OFFLINE_DISKS): any is a ticket (OracleAsmDiskOffline); ASM drops them after "
                         "disk_repair_time and rebalances.", "none",
                         [q(f"max by (database, diskgroup) (oracle_asm_diskgroup_offline_disks{{{DB}}})",
                            "{{database}} {{diskgroup}}")], w=8, th=cfg.th("O4_asm_offline")),
        timeseries_panel("Data Guard lag", f"[O5] Transport and apply lag of the standby databases; a ticket above "
                         f"{o5l.colour_at:g} s.", "s",
                         [q(f"oracle_dataguard_lag_seconds{{{DB}}}", "{{database}} {{kind}}")], w=8, th=o5l),
        timeseries_panel("Data Guard lag data age", f"[O5] Age of the data each lag was computed from "
                         f"(TIME_COMPUTED - DATUM_TIME); above {cfg.th('O5_lag_stale').colour_at:g} s the standby "
                         "receives nothing and its lag is stale. The lag not computed at all (VALUE NULL) is "
                         "the 'not computed' line at 1 (OracleDataGuardLagNotComputed).", "s",
                         [q(f"oracle_dataguard_lag_datum_age_seconds{{{DB}}}", "{{database}} {{kind}} data age", "A"),
                          q(f"oracle_dataguard_lag_computed{{{DB}}} == bool 0", "{{database}} {{kind}} not computed",
                            "B")], w=8, th=cfg.th("O5_lag_stale")),
    ]

    space = [override_ref(p, "B", unit="none") if p._internal.title == "Data Guard lag data age" else p
             for p in space]

    d = new_dashboard(UID, "Capacity profile: workload, waits with thresholds, top 5 timed events and "
                      "system figures, now beside a baseline (field notes K1).",
                      [v_datasource(), v_database(), v_host(cfg), v_baseline(), v_baseline_end()],
                      refresh="1m", time_from="now-1h")
    d = (d.with_row(db.Row("Workload profile")).with_panel(workload).with_panel(trend)
         .with_row(db.Row("Waits")).with_panel(waits).with_panel(top)
         .with_row(db.Row("System figures")).with_panel(runq).with_panel(lgwr)
         .with_panel(lunw).with_panel(lunr)
         .with_row(db.Row("Load profile")).with_panel(load)
         .with_row(db.Row("Space and limits")))
    for p in space:
        d = d.with_panel(p)
    return d
