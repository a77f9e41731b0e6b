"""The one definition of what the wallboard and the capacity profile show, for Grafana and
for the Grafana-free pages (exporters/fleetview, issue 25).

* ``db_tiles(cfg)`` / ``host_tiles(cfg)``: the figures of a database tile and of a host tile
  (PromQL, unit, the threshold id that colours it). mixin/dashboards/wallboard.py builds its
  Grafana tiles from them; the fleet wallboard page (fleetview.wallboard) runs the same
  expressions with ``$database`` / ``$host`` = ``.+`` (Grafana's "All").
* ``capacity_*``: the expressions of the oracle-capacity dashboard (mixin/dashboards/capacity.py)
  as functions of the range selector, and ``capacity_sections(cfg)``: the rows of the capacity
  report (fleetview.capacity) in the order of AWR Compare Periods, each naming the dashboard
  query it reads, its threshold id and how it is judged.
* ``steps(th, neutral)``: how a threshold colours a value, as Grafana threshold steps
  (mixin/dashboards/common.py turns them into Grafana's model; fleetview colours HTML with them).
* ``spec(cfg)``: all of the above resolved against the thresholds as one JSON document,
  written by ``make generate`` to exporters/fleetview/spec.json, so the installed console
  scripts need neither the mixin nor alerts/thresholds.yaml.

Expressions use Grafana's variable syntax ($database, $host, $__range, $baseline); fleetview
substitutes them exactly as Grafana does for a single value or "All".
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from mixin import hostjoin
from mixin import records as R
from mixin.config import Config
from mixin.records import LGWR_ROLES
from mixin.thresholds import ZERO_EPSILON, Threshold

DB = 'database=~"$database"'
HOST = 'instance=~"$host"'
RANGE_NOW = "[$__range]"
RANGE_BASE = "[$__range] $baseline"

# tile level: 0 ok, 1 warning, 2 critical (or database down), 3 unknown (seen within the hour,
# no data now). The Grafana value mappings and the HTML pages use these names and colours.
STATES = {0: ("OK", "green"), 1: ("WARNING", "orange"), 2: ("CRITICAL", "red"), 3: ("UNKNOWN", "purple")}


# ---------------------------------------------------------------- colours

def step_at(t: Threshold) -> float:
    """Where a value takes the threshold's colour (Grafana colours a value >= a step): its
    colour_at, but for a strict `>` just above it, so a value exactly at the threshold (970 of 1000
    processes against O4_resource_crit `> 0.97`, log file sync at R2's 5 ms) is not coloured as the
    finding no alert raises, as the report's judge() says (rev-views #8)."""
    at = t.colour_at
    if t.op == ">" and at != ZERO_EPSILON:
        return at + max(ZERO_EPSILON, abs(at) * ZERO_EPSILON)
    return at


def steps(th, neutral: str = "green") -> list[tuple[float | None, str]]:
    """Threshold steps for one alert threshold or several tiers of one measure (e.g. I1, I1_red):
    [(None, base colour), (value, colour from value on), ...] (a value is coloured by the last
    step whose value it reaches, as in Grafana)."""
    tiers = [] if th is None else ([th] if isinstance(th, Threshold) else list(th))
    if not tiers:
        return [(None, neutral)]
    tiers.sort(key=step_at)
    if tiers[0].lower_is_bad:
        s: list[tuple[float | None, str]] = [(None, tiers[0].colour)]
        for i, t in enumerate(tiers):
            s.append((step_at(t), tiers[i + 1].colour if i + 1 < len(tiers) else "green"))
        return s
    return [(None, "green")] + [(step_at(t), t.colour) for t in tiers]


# ---------------------------------------------------------------- wallboard tiles

@dataclass(frozen=True)
class Figure:
    key: str                    # stable id (fleetview, tests)
    label: str                  # the tile's field name (Grafana displayName)
    expr: str                   # PromQL, one series per database (by database) or host (by instance)
    unit: str                   # Grafana unit id
    threshold: str | None = None    # threshold id colouring it (alerts/thresholds.yaml)
    neutral: str = "blue"       # colour without a threshold
    status: bool = False        # the STATUS figure (0..3, STATES)
    tiers: tuple[str, ...] = ()     # the further tiers of the same measure (e.g. the paging O4_fra_crit)


def tiers(cfg: Config, tid: str | None) -> list[Threshold]:
    """The thresholds that colour one measure: `tid` and, where alerts/thresholds.yaml has it, its
    paging tier `<tid>_crit` (same alert, severity critical), so a value at a paging level is red,
    not the warning's orange."""
    if tid is None:
        return []
    out = [cfg.th(tid)]
    if f"{tid}_crit" in cfg.thresholds:
        out.append(cfg.th(f"{tid}_crit"))
    return out


# the worst space figures of a database (O4), shared by the tiles and the wallboard's space panels
RESOURCE_USED = f'max by (database) ({R.RESOURCE_UTILIZATION}{{{DB}, resource=~"processes|sessions|transactions"}})'
TABLESPACE_FULLEST = (f'max by (database) ({R.TABLESPACE_USED}{{{DB}, contents="PERMANENT"}} unless on '
                      f'(database, container, tablespace) oracle_tablespace_info{{{DB}, status=~"READ ONLY|OFFLINE"}})')
RECOVERY_AREA = f"max by (database) ({R.RECOVERY_AREA_USED}{{{DB}}})"


def db_known_expr() -> str:
    """The databases the wallboard keeps a tile for: seen within the hour, or remembered by the
    pack's presence rule (records.DATABASES_EXPECTED, which carries the exporter target's job and
    instance and is kept until the database leaves the exporter's configuration, however long the
    exporter is down) while that exporter target is still configured (its `up` series exists, 0
    when the exporter is down). A database whose exporter stopped answering stays UNKNOWN for as
    long as the outage lasts (rev23 #15: the instances' memory dropped it after a day); removing
    the target from the scrape config removes the tile."""
    return ('(group by (database) (last_over_time(oracle_up{' + DB + '}[1h]))'
            ' or group by (database) (' + R.DATABASES_EXPECTED + '{' + DB + '} and on (job, instance) up))')


def db_status_expr() -> str:
    """0 OK .. 3 UNKNOWN (STATES): the firing alerts' severity; a database down (oracle_up 0) is
    CRITICAL as OracleDown pages, but one refusing the monitoring account (oracle_last_error_info:
    logon denied, account locked, password expired) is WARNING, as OracleDown's ticket for it
    (thresholds.yaml ops_oracle_down_credentials: it may be serving its users; rev-views #3)."""
    from mixin.rules import CREDENTIAL_REASONS
    refused = ('(last_over_time(oracle_last_error_info{' + DB + ', ' + CREDENTIAL_REASONS + '}[3m])'
               ' or ALERTS{alertstate="firing", alertname="OracleDown", severity="warning", ' + DB + '})')
    return ('max by (database) ('
            '2 * ALERTS{alertstate="firing", severity="critical", ' + DB + '}'
            ' or ALERTS{alertstate="firing", severity="warning", ' + DB + '}'
            ' or 2 * (1 - oracle_up{' + DB + '}) unless on (database) ' + refused +
            ' or (1 - oracle_up{' + DB + '})'
            ' or 3 * (' + db_known_expr() + ' unless on (database) oracle_up{' + DB + '}))')


def host_status_expr(cfg: Config) -> str:
    # A host exporter that is down is WARNING, like DbhostExporterDown / NodeExporterDown (severity
    # warning); `min` so that one of the two exporters being down is enough (max would hide it).
    # Every exporter of the host down (up 0: the host is dark, its figures are stale) or gone (seen
    # within the hour, no `up` now): UNKNOWN, never a mere WARNING.
    # Only instances of the host exporters are hosts: a database alert also carries `instance` (the
    # oracle-exporter's target), which is no host and gets no host tile.
    hosts = cfg.selector("node", "dbhost")
    seen = 'group by (instance) (last_over_time(up{' + hosts + ', ' + HOST + '}[1h]))'
    return ('max by (instance) ('
            '(2 * ALERTS{alertstate="firing", severity="critical", ' + HOST + '}'
            ' or ALERTS{alertstate="firing", severity="warning", ' + HOST + '}) and on (instance) ' + seen +
            ' or (1 - min by (instance) (up{' + hosts + ', ' + HOST + '}))'
            ' + 2 * (max by (instance) (up{' + hosts + ', ' + HOST + '}) == bool 0)'
            ' or 3 * (' + seen + ' unless on (instance) up{' + hosts + ', ' + HOST + '}))')


def sid_to_database(expr: str) -> str:
    """A dbhost-exporter series (by instance, sid, role) with the `database` of the Oracle
    instance whose INSTANCE_NAME is its sid AND whose GV$INSTANCE.HOST_NAME is its host: the
    full host identity where both sides have it (the target's `instance`, or node_exporter's
    nodename of it), the short name only where one side has no more (mixin/hostjoin.py). Always
    on both: a SID is unique only per host. An unmonitored standby (or a clone) running the
    primary's SID on another host is not in oracle_instance_info at all, so a join on the sid
    alone would give that host's LGWR to the primary; a Data Guard pair with the same SID on
    hosts named alike per site (db01.dc1 / db01.dc2) must neither mix nor fail the query
    (rev-views #1). The scrape config must set the host exporters' `instance` to the host name
    (docs/dashboards.md)."""
    return hostjoin.to_database(expr, "oracle_instance_info{" + DB + "}")


def lgwr_share_by_db(cfg: Config) -> str:
    """LGWR's involuntary share per database, only with R14's traffic behind it (as the alert)."""
    floor = cfg.th("R14").floor("switches").value
    share = (R.PROC_INVOLUNTARY_SHARE + '{' + LGWR_ROLES + '} and on (' + cfg.by("instance", "sid", "role") + ') '
             + R.PROC_SWITCHES + '{' + LGWR_ROLES + '} >= ' + f"{floor:g}")
    return 'max by (database) (' + sid_to_database(share) + ')'


def lgwr_run_delay_by_db(rng: str | None = None) -> str:
    """LGWR's run-queue wait per dispatch per database, joined on host and sid here (not the
    recorded per-database series, whose join decides by the sid where only one monitored
    database has it)."""
    src = R.PROC_RUN_DELAY_PER_DISPATCH + '{' + LGWR_ROLES + '}'
    if rng:
        src = f"avg_over_time({src}{rng})"
    return 'max by (database) (' + sid_to_database(src) + ')'


def sync_avg_by_db(cfg: Config) -> str:
    """log file sync average per database, only with R2's traffic behind it (as the alert): an idle
    database's few slow commits do not colour its tile."""
    floor = cfg.th("R2").floor("waits").value
    return ('max by (database) (' + R.WAIT_AVG + '{' + DB + ', event="log file sync"}'
            ' and on (' + cfg.by("database", "inst_id", "event") + ') '
            + R.WAITS + '{' + DB + ', event="log file sync"} >= ' + f"{floor:g})")


def db_tiles(cfg: Config) -> list[Figure]:
    """The figures of one database tile, in the Grafana tile's order (refs A, B, ...)."""
    return [
        Figure("status", "status", db_status_expr(), "none", None, "green", status=True),
        Figure("sync_avg", "log file sync avg", sync_avg_by_db(cfg), "s", "R2"),
        Figure("commits", "commits/s", 'sum by (database) (' + R.USER_COMMITS + '{' + DB + '})', "ops"),
        Figure("redo", "redo", 'sum by (database) (' + R.REDO_SIZE + '{' + DB + '})', "Bps"),
        Figure("lgwr_involuntary", "LGWR involuntary", lgwr_share_by_db(cfg), "percentunit", "R14"),
        Figure("lgwr_cpu_wait", "LGWR CPU wait", lgwr_run_delay_by_db(), "s", "R13_run_delay"),
        Figure("resources", "processes/sessions used", RESOURCE_USED, "percentunit", "O4_resource",
               tiers=("O4_resource_crit",)),
        Figure("tablespace", "fullest tablespace", TABLESPACE_FULLEST, "percentunit", "O4_tablespace",
               tiers=("O4_tablespace_crit",)),
        Figure("recovery_area", "recovery area used", RECOVERY_AREA, "percentunit", "O4_fra",
               tiers=("O4_fra_crit",)),
    ]


def host_tiles(cfg: Config) -> list[Figure]:
    """The figures of one host tile, in the Grafana tile's order (refs A, B, ...)."""
    c4 = cfg.th("C4")
    return [
        Figure("status", "status", host_status_expr(cfg), "none", None, "green", status=True),
        Figure("lun_host_queue", "worst LUN host queue",
               'max by (instance) (' + R.LUN_HOST_QUEUE + '{' + HOST + '})', "short", "Q2"),
        Figure("arc_hit", "ARC hit ratio", 'max by (instance) (' + R.ARC_HIT_RATIO + '{' + HOST + '})',
               "percentunit"),
        Figure("run_queue", "run queue per CPU",
               'max by (instance) (' + R.RUN_QUEUE_PER_CPU + '{' + HOST + '})', "short", "C1"),
        Figure("system_share", "system CPU share",
               'max by (instance) (' + R.CPU_SYSTEM_SHARE_OF_BUSY + '{' + HOST + '} and on (' + cfg.by("instance")
               + ') ' + R.CPU_SYSTEM_SHARE + '{' + HOST + '} > ' + f"{c4.floor('system_share').value:g})",
               "percentunit", "C4"),
        Figure("paths_lost", "LUN paths lost",
               'max by (instance) (max by (instance, device) (max_over_time(dbhost_multipath_paths{' + HOST
               + '}[1d])) - max by (instance, device) (dbhost_multipath_paths_active{' + HOST + '}))',
               "none", "O6_paths"),
    ]


FIRING_ALERTS = ('sort_desc(max by (alertname, severity, database, instance) '
                 '(ALERTS{alertstate="firing", alertname!="Watchdog"}))')


# ---------------------------------------------------------------- capacity profile (oracle-capacity)
# "now" is each measure over a window (`rate(x[$__range])` at its end); the baseline is the same
# expression with `$baseline` (`offset 7d`, `@ <end>`) after the range selector.

# (label, counter, unit) -- the section 1 workload profile
WORKLOAD = [
    ("redo size", "oracle_redo_size_bytes_total", "Bps"),
    ("commits", "oracle_user_commits_total", "ops"),
    ("redo synch writes", "oracle_redo_synch_writes_total", "wps"),
    ("LGWR redo writes", "oracle_redo_writes_total", "wps"),
    ("redo entries", "oracle_redo_entries_total", "ops"),
]

# (field-notes id, event, kind of threshold): 'avg' = average wait ceiling, 'rate' = eliminate
WAITS = [
    ("R1", "log file parallel write", "avg"),
    ("R2", "log file sync", "avg"),
    ("R3", "log buffer space", "rate"),
    ("R4", "log file switch (checkpoint incomplete)", "rate"),
    ("R5", "latch: redo allocation", "rate"),
    ("R5", "latch: redo writing", "rate"),
    ("R6", "log file switch completion", "rate"),
    ("R7", "log file sequential read", None),
    ("I2", "db file sequential read", "avg"),
]

LOAD_PROFILE = [
    ("logical reads", "oracle_logical_reads_total"),
    ("block changes", "oracle_db_block_changes_total"),
    ("physical reads", "oracle_physical_reads_total"),
    ("physical writes", "oracle_physical_writes_total"),
    ("user calls", "oracle_user_calls_total"),
    ("parses", "oracle_parses_total"),
    ("hard parses", "oracle_hard_parses_total"),
    ("sorts", "oracle_sorts_total"),
    ("logons", "oracle_logons_total"),
    ("executes", "oracle_executions_total"),
]


def re_escape(value: str) -> str:
    """A literal for a PromQL regex inside a double-quoted string."""
    import re
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\\\1", value)


def events_regex(events) -> str:
    return "|".join(re_escape(e) for e in events)


def per_db_rate(counter: str, rng: str, extra: str = "") -> str:
    sel = DB + (", " + extra if extra else "")
    return f"sum by (database) (rate({counter}{{{sel}}}{rng}))"


def waits_selector() -> str:
    return f'event=~"{events_regex([e for _, e, _ in WAITS])}"'


def cap_waits_rate(rng: str) -> str:
    return (f"sum by (database, event) (rate(oracle_wait_event_waits_total"
            f"{{{DB}, {waits_selector()}}}{rng}))")


def cap_time_rate(rng: str) -> str:
    return (f"sum by (database, event) (rate(oracle_wait_event_time_seconds_total"
            f"{{{DB}, {waits_selector()}}}{rng}))")


def _inst_rate(metric: str, rng: str, sel: str) -> str:
    return f"sum by (database, inst_id, event) (rate({metric}{{{DB}, {sel}}}{rng}))"


def cap_inst_waits_rate(rng: str) -> str:
    """Waits/s of each event on the database's busiest instance: what a rate alert (R3-R6) judges
    per instance, and the traffic floor of an average (RAC: the alerts judge each inst_id)."""
    return f"max by (database, event) ({_inst_rate('oracle_wait_event_waits_total', rng, waits_selector())})"


def cap_wait_avg(rng: str, cfg: Config | None = None) -> str:
    """Each event's average wait on its worst instance, as the alerts judge RAC (rev-views #2: the
    pooled average hid a slow instance): among the instances with the alert's traffic floor behind
    them (R1, R2, I2: waits/s), else the worst instance's (its verdict then 'below the floor')."""
    def inst_avg(sel):
        return (f"{_inst_rate('oracle_wait_event_time_seconds_total', rng, sel)} / "
                f"({_inst_rate('oracle_wait_event_waits_total', rng, sel)} > 0)")
    worst = f"max by (database, event) ({inst_avg(waits_selector())})"
    if cfg is None:
        return worst
    floored = []
    for ident, event, kind in WAITS:
        if kind != "avg" or "waits" not in cfg.th(ident).noise_floor:
            continue
        sel = f'event="{event}"'
        floored.append(f"max by (database, event) ({inst_avg(sel)} and on (database, inst_id, event) "
                       f"{_inst_rate('oracle_wait_event_waits_total', rng, sel)} >= "
                       f"{cfg.th(ident).floor('waits').value:g})")
    return "(" + " or ".join(floored + [worst]) + ")"


def cap_wait_thresholds(cfg: Config) -> tuple[str, str]:
    """The waits table's 'max avg wait' and 'max waits/s' columns: each event's threshold as a
    series per database."""
    avg_th, rate_th = [], []
    for ident, event, kind in WAITS:
        if kind is None:
            continue
        th = cfg.th(ident)
        base = (f'label_replace(group by (database) (oracle_up{{{DB}}}), "event", '
                f'"{event}", "", "") * {th.colour_at!r}')
        (avg_th if kind == "avg" else rate_th).append(base)
    return " or ".join(avg_th), " or ".join(rate_th)


NONIDLE = f'{DB}, wait_class!="Idle"'


def cap_event_time(rng: str) -> str:
    return f"sum by (database, event) (rate(oracle_wait_event_time_seconds_total{{{NONIDLE}}}{rng}))"


def cap_event_waits(rng: str) -> str:
    return f"sum by (database, event) (rate(oracle_wait_event_waits_total{{{NONIDLE}}}{rng}))"


def cap_total_wait(rng: str) -> str:
    return f"sum by (database) (rate(oracle_wait_event_time_seconds_total{{{NONIDLE}}}{rng}))"


def cap_top5() -> str:
    return f"topk by (database) (5, {cap_event_time(RANGE_NOW)})"


def cap_top_queries() -> dict[str, str]:
    """The 'Top 5 timed events' table: share of wait time, avg wait, waits/s, share in baseline."""
    top5 = cap_top5()
    return {
        "share": f"{top5} / ignoring (event) group_left {cap_total_wait(RANGE_NOW)}",
        "avg": f"({cap_event_time(RANGE_NOW)} / ({cap_event_waits(RANGE_NOW)} > 0)) and on (database, event) {top5}",
        "waits": f"{cap_event_waits(RANGE_NOW)} and on (database, event) {top5}",
        "share_base": (f"({cap_event_time(RANGE_BASE)} / ignoring (event) group_left {cap_total_wait(RANGE_BASE)})"
                       f" and on (database, event) {top5}"),
    }


def cap_load_profile(rng: str, per_txn: bool = False) -> str:
    parts = []
    for label, counter in LOAD_PROFILE:
        e = per_db_rate(counter, rng)
        if per_txn:
            e = (f"{e} / ({per_db_rate('oracle_user_commits_total', rng)} + "
                 f"{per_db_rate('oracle_user_rollbacks_total', rng)} > 0)")
        parts.append(f'label_replace({e}, "measure", "{label}", "", "")')
    return " or ".join(parts)


def cap_run_queue(rng: str) -> str:
    return f"max by (instance) (avg_over_time({R.RUN_QUEUE_PER_CPU}{{{HOST}}}{rng}))"


def cap_lgwr_share(rng: str) -> str:
    return "max by (database) (" + sid_to_database(f"avg_over_time({R.PROC_INVOLUNTARY_SHARE}{{{LGWR_ROLES}}}{rng})") + ")"


def cap_lun_write(rng: str) -> str:
    return f"max by (instance) (avg_over_time({R.DISK_WRITE_LATENCY}{{{HOST}, role=\"redo\"}}{rng}))"


def cap_lun_read(rng: str) -> str:
    return f"max by (instance) (avg_over_time({R.DISK_READ_LATENCY}{{{HOST}, role=\"redo\"}}{rng}))"


# ---------------------------------------------------------------- capacity report sections
# The report (fleetview.capacity) in the order of AWR Compare Periods (awrddrpt.sql): load
# profile, top timed events, wait classes, wait events (here: the redo and I/O events the alert
# pack judges), redo/LGWR statistics, PGA, latches, then the host side. Where the oracle-capacity
# dashboard has the measure, the column is its query (`dashboard` names panel and ref); the rest
# is defined here, once, with the same `$__range` / `$baseline` conventions.

HOSTS_OF_DATABASE = ("group by (instance) (" + sid_to_database(
    'dbhost_process_context_switches_total{' + LGWR_ROLES + '}') + ")")

LOAD_EXTRA = [
    ("DB time", "oracle_db_time_seconds_total", "s"),
    ("DB CPU", "oracle_db_cpu_seconds_total", "s"),
    ("redo size", "oracle_redo_size_bytes_total", "bytes"),
    ("user commits", "oracle_user_commits_total", "ops"),
    ("user rollbacks", "oracle_user_rollbacks_total", "ops"),
]


def _subquery(rng: str) -> str:
    return rng.replace("]", ":]", 1)


def _base(rng: str) -> str:
    return RANGE_BASE if rng == RANGE_NOW else rng


def _col(cid, title, window, expr, unit, dashboard=None):
    return {"id": cid, "title": title, "window": window, "expr": expr, "unit": unit, "dashboard": dashboard}


def _scalar(label, fn, unit, threshold=None, floor=None, note="", dashboard=None):
    """A row with one value per window; fn(rng) -> PromQL with one series per database (or host);
    floor = (floor name, fn(rng)): the traffic the threshold needs behind the value."""
    row = {"label": label, "unit": unit, "threshold": threshold, "note": note, "dashboard": dashboard,
           "now": fn(RANGE_NOW), "base": fn(RANGE_BASE)}
    if floor:
        row["floor"] = {"name": floor[0], "now": floor[1](RANGE_NOW), "base": floor[1](RANGE_BASE)}
    return row


def _rate_sum(counter: str, extra: str = ""):
    return lambda rng: per_db_rate(counter, rng, extra)


def capacity_sections(cfg: Config) -> list[dict]:
    top = cap_top_queries()
    top5 = cap_top5()
    hist = lambda rng: (f"histogram_quantile(0.99, sum by (database, event, le) "
                        f"(rate(oracle_wait_event_latency_seconds_bucket{{{DB}}}{rng}))) and on (database, event) {top5}")
    avg_base = (f"({cap_event_time(RANGE_BASE)} / ({cap_event_waits(RANGE_BASE)} > 0)) and on (database, event) {top5}")
    cls_time = lambda rng: (f"sum by (database, wait_class) (rate(oracle_wait_event_time_seconds_total"
                            f"{{{NONIDLE}}}{rng}))")
    cls_share = lambda rng: f"{cls_time(rng)} / ignoring (wait_class) group_left {cap_total_wait(rng)}"
    cls_waits = lambda rng: (f"sum by (database, wait_class) (rate(oracle_wait_event_waits_total"
                             f"{{{NONIDLE}}}{rng}))")
    avg_th, rate_th = cap_wait_thresholds(cfg)
    load_extra = lambda rng, txn=False: " or ".join(
        f'label_replace({per_db_rate(c, rng)}'
        + (f" / ({per_db_rate('oracle_user_commits_total', rng)} + {per_db_rate('oracle_user_rollbacks_total', rng)} > 0)"
           if txn else "") + f', "measure", "{label}", "", "")' for label, c, _ in LOAD_EXTRA)
    wait_rows = []
    for ident, event, kind in WAITS:
        row = {"key": event, "threshold": None if kind is None else ident, "id": ident,
               "judge": {"avg": ("avg_now", "avg_base"), "rate": ("inst_waits_now", "inst_waits_base")}.get(kind)}
        if kind == "avg":
            row["floor"] = {"name": "waits", "columns": ("inst_waits_now", "inst_waits_base")}
        if kind is None:
            row["note"] = f"{ident}: no threshold (watched)"
        wait_rows.append(row)

    # per instance, as the alerts (R13 OracleCommitCpuStarvation judges each inst_id): the worst instance
    sync_avg = lambda rng: (f'sum by (database, inst_id) (rate(oracle_wait_event_time_seconds_total{{{DB}, event="log file sync"}}{rng}))'
                            f' / (sum by (database, inst_id) (rate(oracle_wait_event_waits_total{{{DB}, event="log file sync"}}{rng})) > 0)')
    lpw_avg = lambda rng: (f'sum by (database, inst_id) (rate(oracle_wait_event_time_seconds_total{{{DB}, event="log file parallel write"}}{rng}))'
                           f' / (sum by (database, inst_id) (rate(oracle_wait_event_waits_total{{{DB}, event="log file parallel write"}}{rng})) > 0)')
    inst_max = lambda counter: (lambda rng: f"max by (database) (sum by (database, inst_id) (rate({counter}{{{DB}}}{rng})))")
    pga_ratio = lambda rng: (f"max by (database) (max_over_time((sum by (database, inst_id) (oracle_pga_allocated_bytes{{{DB}}})"
                             f" / (sum by (database, inst_id) (oracle_pga_target_bytes{{{DB}}}) > 0)){_subquery(rng)}))")
    latch = lambda m: (lambda rng: f'sum by (database) (rate({m}{{{DB}, latch="all"}}{rng}))')
    latch_inst = lambda m, rng: f'sum by (database, inst_id) (rate({m}{{{DB}, latch="all"}}{rng}))'
    i1_gets = cfg.th("I1").floor("gets").value
    # the worst instance's hit ratio among those with I1's gets floor behind them (as the alert), else the worst's
    latch_hit_inst = lambda rng: (f'1 - {latch_inst("oracle_latch_misses_total", rng)} / '
                                  f'({latch_inst("oracle_latch_gets_total", rng)} > 0)')
    latch_hit = lambda rng: (f'(min by (database) ({latch_hit_inst(rng)} and on (database, inst_id) '
                             f'{latch_inst("oracle_latch_gets_total", rng)} >= {i1_gets:g}) '
                             f'or min by (database) ({latch_hit_inst(rng)}))')
    latch_gets_inst = lambda rng: f'max by (database) ({latch_inst("oracle_latch_gets_total", rng)})'
    cpu_mode = lambda mode: (lambda rng: (f'sum by (instance) (rate(node_cpu_seconds_total{{{HOST}, mode="{mode}"}}{rng}))'
                                          f' / sum by (instance) (rate(node_cpu_seconds_total{{{HOST}}}{rng}))'))
    avg_host = lambda rec: (lambda rng: f"max by (instance) (avg_over_time({rec}{{{HOST}}}{rng}))")
    return [
        {"id": "load", "title": "Load Profile", "key": "measure", "unit_per_row": True,
         "about": "per second and per transaction (user commits + user rollbacks), as the AWR load profile [I3, I4]",
         "columns": [
             _col("ps_now", "per second", "now", cap_load_profile(RANGE_NOW), "ops", "oracle-capacity/Load profile/A"),
             _col("pt_now", "per transaction", "now", cap_load_profile(RANGE_NOW, True), "short",
                  "oracle-capacity/Load profile/B"),
             _col("ps_base", "per second", "base", cap_load_profile(RANGE_BASE), "ops", "oracle-capacity/Load profile/C"),
             _col("pt_base", "per transaction", "base", cap_load_profile(RANGE_BASE, True), "short"),
             _col("ps_now", "per second", "now", load_extra(RANGE_NOW), "ops"),
             _col("pt_now", "per transaction", "now", load_extra(RANGE_NOW, True), "short"),
             _col("ps_base", "per second", "base", load_extra(RANGE_BASE), "ops"),
             _col("pt_base", "per transaction", "base", load_extra(RANGE_BASE, True), "short")],
         "order": [m for m, _, _ in LOAD_EXTRA] + [m for m, _ in LOAD_PROFILE]},
        {"id": "top", "title": "Top Timed Events", "key": "event",
         "about": "the five non-idle events with the most time waited in the current window, from GV$SYSTEM_EVENT: "
                  "foreground and background waits together (log file parallel write and db file parallel write "
                  "are LGWR's and DBWR's), and without DB CPU (see the Load Profile), unlike AWR's Top Timed "
                  "Foreground Events; average and p99 "
                  "(histogram_quantile over GV$EVENT_HISTOGRAM buckets, for the events the exporter histograms) [I3]",
         "columns": [
             _col("share_now", "% of wait time", "now", top["share"], "percentunit", "oracle-capacity/Top 5 timed events/A"),
             _col("avg_now", "avg wait", "now", top["avg"], "s", "oracle-capacity/Top 5 timed events/B"),
             _col("p99_now", "p99", "now", hist(RANGE_NOW), "s"),
             _col("waits_now", "waits/s", "now", top["waits"], "ops", "oracle-capacity/Top 5 timed events/C"),
             _col("share_base", "% of wait time", "base", top["share_base"], "percentunit",
                  "oracle-capacity/Top 5 timed events/D"),
             _col("avg_base", "avg wait", "base", avg_base, "s"),
             _col("p99_base", "p99", "base", hist(RANGE_BASE), "s")],
         "sort": "share_now"},
        {"id": "classes", "title": "Wait Classes", "key": "wait_class",
         "about": "non-idle wait time by class (GV$SYSTEM_EVENT, background processes included): seconds waited "
                  "per second and share; for the foreground classes (Commit, User I/O, ...) that is about the "
                  "average sessions waiting, for System I/O mostly LGWR and DBWR",
         "columns": [
             _col("time_now", "time waited/s", "now", cls_time(RANGE_NOW), "s"),
             _col("share_now", "% of wait time", "now", cls_share(RANGE_NOW), "percentunit"),
             _col("waits_now", "waits/s", "now", cls_waits(RANGE_NOW), "ops"),
             _col("time_base", "time waited/s", "base", cls_time(RANGE_BASE), "s"),
             _col("share_base", "% of wait time", "base", cls_share(RANGE_BASE), "percentunit"),
             _col("waits_base", "waits/s", "base", cls_waits(RANGE_BASE), "ops")],
         "sort": "time_now"},
        {"id": "waits", "title": "Wait Events: redo and I/O, with thresholds", "key": "event",
         "about": "the events the alert pack judges, per instance as the alerts do (RAC: each inst_id): the worst "
                  "instance's average wait (among the instances with the alert's traffic floor) against R1/R2/I2, "
                  "the busiest instance's rate of the 'eliminate' events against their noise floors (R3-R6); "
                  "waits/s is the database's total; R7 is watched without a threshold",
         "columns": [
             _col("waits_now", "waits/s", "now", cap_waits_rate(RANGE_NOW), "ops", "oracle-capacity/Waits/A"),
             _col("inst_waits_now", "waits/s, busiest instance", "now", cap_inst_waits_rate(RANGE_NOW), "ops",
                  "oracle-capacity/Waits/G"),
             _col("avg_now", "avg wait, worst instance", "now", cap_wait_avg(RANGE_NOW, cfg), "s", "oracle-capacity/Waits/C"),
             _col("waits_base", "waits/s", "base", cap_waits_rate(RANGE_BASE), "ops", "oracle-capacity/Waits/B"),
             _col("inst_waits_base", "waits/s, busiest instance", "base", cap_inst_waits_rate(RANGE_BASE), "ops",
                  "oracle-capacity/Waits/H"),
             _col("avg_base", "avg wait, worst instance", "base", cap_wait_avg(RANGE_BASE, cfg), "s", "oracle-capacity/Waits/D"),
             _col("max_avg", "max avg wait", "threshold", avg_th, "s", "oracle-capacity/Waits/E"),
             _col("max_rate", "max waits/s", "threshold", rate_th, "ops", "oracle-capacity/Waits/F")],
         "rows": wait_rows},
        {"id": "redo", "title": "Redo and LGWR", "key": None,
         "about": "the section 1 workload profile (the capacity dashboard's workload table) and the redo statistics "
                  "the alert pack judges",
         "rows": [_scalar(label, (lambda c: (lambda rng: per_db_rate(c, rng)))(counter), unit,
                          dashboard=f"oracle-capacity/Workload profile/{label}")
                  for label, counter, unit in WORKLOAD] + [
             _scalar("log file sync / log file parallel write, worst instance", lambda rng: f"{sync_avg(rng)} / ({lpw_avg(rng)} > 0)",
                     "x", note=f"R13: above {cfg.th('R13').value:g}x and with the gap below, commits wait for more "
                               "than the redo write (CPU, LGWR scheduling)"),
             _scalar("log file sync - log file parallel write, worst instance", lambda rng: f"{sync_avg(rng)} - {lpw_avg(rng)}",
                     "s", "R13_gap"),
             _scalar("redo buffer allocation retries/s, busiest instance",
                     inst_max("oracle_redo_buffer_allocation_retries_total"), "ops", "R10"),
             _scalar("redo log space requests/s, busiest instance", inst_max("oracle_redo_log_space_requests_total"),
                     "ops", "R11"),
             _scalar("log switches per hour, busiest instance",
                     lambda rng: (f"max by (database) (sum by (database, inst_id) (increase(oracle_redo_log_switches_total"
                                  f"{{{DB}}}{rng}))) * 3600 / $__range_s"), "short", "R15")]},
        {"id": "pga", "title": "PGA", "key": None,
         "about": "PGA memory against pga_aggregate_target, over-allocations, work-area executions [M4]",
         "rows": [
             _scalar("PGA allocated (avg)", lambda rng: f"sum by (database) (avg_over_time(oracle_pga_allocated_bytes{{{DB}}}{rng}))", "bytes"),
             _scalar("pga_aggregate_target", lambda rng: f"sum by (database) (avg_over_time(oracle_pga_target_bytes{{{DB}}}{rng}))", "bytes"),
             _scalar("PGA allocated / target (max)", pga_ratio, "percentunit", "M4"),
             _scalar("over-allocation count increase", lambda rng: f"sum by (database) (increase(oracle_pga_over_allocation_count_total{{{DB}}}{rng}))",
                     "short", note="M4: precedes ORA-4030 when it grows"),
             _scalar("PGA cache hit ratio (avg)", lambda rng: f"max by (database) (avg_over_time(oracle_pga_cache_hit_ratio{{{DB}}}{rng}))", "percentunit"),
             _scalar("work areas optimal/s", _rate_sum("oracle_pga_workarea_executions_total", 'kind="optimal"'), "ops"),
             _scalar("work areas one-pass/s", _rate_sum("oracle_pga_workarea_executions_total", 'kind="onepass"'), "ops"),
             _scalar("work areas multi-pass/s", _rate_sum("oracle_pga_workarea_executions_total", 'kind="multipass"'), "ops")]},
        {"id": "latches", "title": "Latch Activity", "key": None,
         "about": "all latches (GV$LATCH, latch=\"all\") [I1, R5]",
         "rows": [
             _scalar("latch hit ratio, worst instance", latch_hit, "percentunit", "I1_red",
                     floor=("gets", latch_gets_inst)),
             _scalar("latch gets/s", latch("oracle_latch_gets_total"), "ops"),
             _scalar("latch misses/s", latch("oracle_latch_misses_total"), "ops"),
             _scalar("latch sleeps/s", latch("oracle_latch_sleeps_total"), "ops")]},
        {"id": "host", "title": "Host", "key": None, "host": True,
         "about": "the hosts running the database's LGWR (dbhost-exporter's sid joined to oracle_instance_info), "
                  "from node_exporter and dbhost-exporter [C1, C4, R13, R14, R17, Q2, Z3, Z5]",
         "rows": [
             _scalar("run queue per CPU", cap_run_queue, "short", "C1", dashboard="oracle-capacity/Run queue per CPU"),
             _scalar("CPU user share", cpu_mode("user"), "percentunit"),
             _scalar("CPU system share", cpu_mode("system"), "percentunit"),
             _scalar("CPU iowait share", cpu_mode("iowait"), "percentunit"),
             _scalar("system share of busy CPU", avg_host(R.CPU_SYSTEM_SHARE_OF_BUSY), "percentunit", "C4"),
             _scalar("LGWR involuntary switch share", cap_lgwr_share, "percentunit", "R14",
                     dashboard="oracle-capacity/LGWR involuntary switch share"),
             _scalar("LGWR run-queue wait per dispatch",
                     lgwr_run_delay_by_db, "s", "R13_run_delay"),
             _scalar("redo LUN write latency", cap_lun_write, "s", "R17_write", dashboard="oracle-capacity/Redo LUN write latency"),
             _scalar("redo LUN read latency", cap_lun_read, "s", "R17_read", dashboard="oracle-capacity/Redo LUN read latency"),
             _scalar("worst LUN host queue", avg_host(R.LUN_HOST_QUEUE), "short", "Q2"),
             _scalar("ZFS ARC hit ratio", avg_host(R.ARC_HIT_RATIO), "percentunit"),
             _scalar("ZFS L2ARC hit ratio", avg_host(R.L2ARC_HIT_RATIO), "percentunit")]},
    ]


# ---------------------------------------------------------------- the generated spec

def _threshold_json(t: Threshold) -> dict:
    return {"id": t.id, "alert": t.alert, "op": t.op, "value": t.value, "unit": t.unit, "severity": t.severity,
            "colour": t.colour, "colour_at": t.colour_at, "lower_is_bad": t.lower_is_bad, "notes": list(t.notes),
            "description": t.description,
            "floors": {n: {"value": f.value, "unit": f.unit} for n, f in t.noise_floor.items()},
            "steps": [[v, c] for v, c in steps(t)]}


def figure_tiers(cfg: Config, f: Figure) -> list[Threshold]:
    """The thresholds colouring a figure: its own and its further tiers."""
    return [] if f.threshold is None else [cfg.th(f.threshold)] + [cfg.th(t) for t in f.tiers]


def _figure_json(cfg: Config, f: Figure) -> dict:
    d = asdict(f)
    d["tiers"] = list(f.tiers)
    # the colour steps of all its tiers (warning orange, then critical red from the paging level)
    d["steps"] = [[v, c] for v, c in steps(figure_tiers(cfg, f), f.neutral)] if f.threshold else None
    return d


def spec(cfg: Config) -> dict:
    """Everything the fleetview pages need, resolved against the thresholds (JSON-able)."""
    return {
        "generated": "GENERATED by `make generate` (python -m mixin.generate) from mixin/fleetview.py and "
                     "alerts/thresholds.yaml -- do not edit by hand",
        "states": {str(k): {"text": t, "colour": c} for k, (t, c) in STATES.items()},
        "runbook_base_url": cfg.runbook_base_url,
        "db_tiles": [_figure_json(cfg, f) for f in db_tiles(cfg)],
        "host_tiles": [_figure_json(cfg, f) for f in host_tiles(cfg)],
        "firing_alerts": FIRING_ALERTS,
        "hosts_of_database": HOSTS_OF_DATABASE,
        "capacity": capacity_sections(cfg),
        "thresholds": {tid: _threshold_json(t) for tid, t in cfg.thresholds.items()},
    }


def spec_json(cfg: Config) -> str:
    import json
    return json.dumps(spec(cfg), indent=1, sort_keys=False) + "\n"
