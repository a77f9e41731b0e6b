"""Alert rules: one entry per rule, as templates; several rules may share an alert name.

    from mixin import rules
    rules.alerts(cfg)     # [dict(alert=..., ids=[...], layer=..., expr=..., ...)]

An entry's keys:
  ids:       threshold ids the rule uses; the first one gives `for` and severity
  for_:      optional override of the first threshold's `for`
  layer:     oracle | host | storage | zfs | monitoring (inhibition uses it)
  dashboard: Grafana dashboard uid the alert links to (when a Grafana URL is configured)
  doc:       the condition as docs/alerts.md states it (default: the threshold's description)

Expressions and texts are templates: `${ID}` is the value of threshold ID from
thresholds.yaml, `${ID.floor.NAME}` a noise-floor value, `${ID.for}` its `for`, and
`${ID|fmt}` / `${ID.floor.NAME|fmt}` a human form (fmt: dur, pct, num); mixin.render fills
them in, so nothing here holds a number that belongs in thresholds.yaml. Recorded series
are named through mixin.records, scrape jobs through the config's selectors. Texts may use
Prometheus template syntax ({{ $value }}, {{ $labels.x }}).
"""
from __future__ import annotations

from mixin import records as R
from mixin.config import Config

_DB = "{{ $labels.database }} instance {{ $labels.inst_id }}"

# OracleDown says why (issue 27): the reason oracle-exporter exports for the database in
# oracle_last_error_info (a fixed set: "connection refused", "logon denied", ...), read when
# the alert is evaluated; a query in the template, not a join in the expression, so a
# changing reason does not restart the alert's `for` (nor make a new alert).
ORACLE_DOWN_REASON = (
    '{{ with printf "oracle_last_error_info{job=%q,instance=%q,database=%q}" '
    '$labels.job $labels.instance $labels.database | query }}'
    '{{ with . | first }}{{ or .Labels.reason "no error reported yet" }}{{ end }}'
    '{{ else }}reason unknown (no oracle_last_error_info){{ end }}')


# issue 23: reading a gauge through last_over_time over GAP_WINDOW keeps its last value across
# one or two failed scrapes (a failed scrape marks every series of the target stale at once), so a
# crash-looping exporter neither resets `for` nor resolves a firing alert (RESOLVED sent for a
# database still down). Not keep_firing_for: Prometheus 2.42 has it, but vmalert (Debian's
# victoria-metrics, which the scale-out stack runs on the same rule files) rejects the field; and
# last_over_time also keeps a *pending* alert's `for`, which keep_firing_for does not.
GAP_WINDOW = "3m"
# rev23 #14b: how long OracleDown outlives its exporter (up 0): past OracleExporterDown's `for` (5m)
EXPORTER_DOWN_BRIDGE = "15m"
# alertfix #4: collectors whose views change slowly and are read every 300 s by default (no rate of
# them is judged over 5 minutes): their cache age is not a freshness problem of the pack
SLOW_COLLECTORS = "tablespaces|alert_log|backups|scheduler_jobs"
CREDENTIAL_REASONS = 'reason=~"logon denied|null password|no create session privilege|sys must connect as sysdba|account locked|password expired"'


# issue 23: long single waits that are not hangs: a plan, a tape, a client (OracleSessionsStuck)
NOT_HANG_CLASSES = "Idle|Application|Network|Administrative|Scheduler"
NOT_HANG_EVENTS = "Backup: .*|sbt.*|resmgr:.*"


NVME_STATE = ('{{ with printf "dbhost_nvme_controller_state{job=%q,instance=%q,controller=%q} == 1" '
              '$labels.job $labels.instance $labels.controller | query }}{{ with . | first }}{{ .Labels.state }}'
              '{{ end }}{{ else }}unknown{{ end }}')


def _gauge(expr: str) -> str:
    """A gauge selector read so that one failed scrape does not hide it."""
    return "last_over_time(" + expr + "[" + GAP_WINDOW + "])"


# rev23 #9: OracleCommitCpuStarvation's measured cause, read when the alert is evaluated (a query in
# the template, like ORACLE_DOWN_REASON): LGWR's run delay per dispatch, else the foregrounds'.
def _run_delay_query(record: str) -> str:
    return ('printf "' + record + '{job=%q,instance=%q,database=%q,inst_id=%q} > ${R13_run_delay}" '
            '$labels.job $labels.instance $labels.database $labels.inst_id | query')


STARVATION_CAUSE = (
    '{{ with ' + _run_delay_query(R.LGWR_RUN_DELAY) + ' }}{{ with . | first }}LGWR waits '
    '{{ .Value | humanizeDuration }} per dispatch on a run queue for a CPU (over ${R13_run_delay|dur}; '
    'cause lgwr_cpu_wait, R14): give LGWR a CPU (fixed-priority class, processor set) or unload the run '
    'queue (C1).{{ end }}'
    '{{ else }}{{ with ' + _run_delay_query(R.FOREGROUND_RUN_DELAY) + ' }}{{ with . | first }}the foreground '
    'sessions wait {{ .Value | humanizeDuration }} per dispatch on a run queue for a CPU (over '
    '${R13_run_delay|dur}; cause session_cpu_wait): a committing session is posted by LGWR but waits for a '
    'CPU to return; the host is CPU-starved (C1).{{ end }}'
    '{{ else }}none (no run delay of LGWR or the sessions above ${R13_run_delay|dur}, or no dbhost-exporter '
    'on the host): check LGWR involuntary context switches (R14), the run queue (C1), CPU steal.{{ end }}{{ end }}')


# rev24 #5: the statement a long call runs now, read when the alert is evaluated (not a label)
LONG_CALL_SQL_ID = (
    '{{ with printf "topk(1, oracle_long_call_seconds{job=%q,instance=%q,database=%q,inst_id=%q,username=%q,'
    'program_kind!~%q})" $labels.job $labels.instance $labels.database $labels.inst_id $labels.username '
    '"rman|datapump|px|job" | query }}'
    '{{ with . | first }}{{ .Labels.sql_id }}{{ end }}{{ else }}unknown (no sample now){{ end }}')

# rev24 #15: the calls the alert judges: a user's own, not an RMAN channel, a Data Pump process or a PX
# slave (their call lasts the backup, the export, the query); a negative matcher, so an exporter from
# before program_kind (no such label) is still judged as before. Scheduler job slaves (job: the nightly
# statistics gathering runs for hours) are left out too: a job's own limit is its MAX_RUN_DURATION
LONG_CALL_USERS = 'oracle_long_call_seconds{program_kind!~"rman|datapump|px|job"}'


def _fresh_or_bridged(sel: str, collector: str, scope: str) -> str:
    """A gauge whose series exists only while the condition holds (a wait in progress: absent
    means none), read so that one failed scrape neither resolves nor restarts the alert (issue 23
    review #1) and a condition that ended is not kept alive by a stale copy: the series as scraped
    now, or, only while `collector` has no successful answer now (the exporter or the database
    scrape failed, so every series of the target is stale), its last value within GAP_WINDOW. A
    wait that ended on a scrape that succeeded is gone at once (a 38 s single wait does not page)."""
    return ("(" + sel + " or (" + _gauge(sel) + " unless on (" + scope + ") "
            "oracle_collector_success{collector=\"" + collector + "\"} == 1))")


def _lost_databases(cfg: Config, scope: str, mode: str) -> str:
    """OracleExporterLostDatabases of one mode: scope `instance` (the exporter's /metrics scraped,
    its series without an `exporter` label) or `exporter` (probe mode: every database a target)."""
    by = ", ".join(dict.fromkeys((*(t for t in cfg.target_labels if t != "instance"), scope)))
    down = ('count by (' + by + ') (ALERTS{alertname="OracleDown", alertstate="firing", severity="critical", '
            + mode + '})')
    return ("(\n"
            "  " + down + "\n"
            "  / count by (" + by + ") (last_over_time(oracle_up{" + cfg.selector("oracle") + ", " + mode + "}[15m]))\n"
            "  >= ${ops_oracle_down_many}\n"
            "  and " + down + " >= ${ops_oracle_down_many.floor.databases}\n"
            ")")


def _observed(sel: str) -> str:
    """alertfix #5: the share of the minutes of 30 in which the target was observed: a scrape of it
    succeeded within GAP_WINDOW (what the rules' last_over_time bridges), in time, not in scrapes."""
    return "avg_over_time(max_over_time(up{" + sel + "}[" + GAP_WINDOW + "])[30m:1m])"


def _blind_changes(sel: str) -> str:
    """alertfix #5: how often the target went blind (no successful scrape for GAP_WINDOW) or came back
    in 30 minutes."""
    return "changes(max_over_time(up{" + sel + "}[" + GAP_WINDOW + "])[30m:1m])"


def _shared(cfg: Config) -> tuple[str, ...]:
    """Selectors and expression parts several sections use."""
    oracle, hosts = cfg.selector("oracle"), cfg.selector("dbhost", "node")
    every_job = cfg.selector("oracle", "dbhost", "node")
    target = cfg.by("job", "instance")        # one scrape target
    limited = 'resource=~"processes|sessions|transactions"'
    paths_had = ("max by (" + cfg.by("instance", "device") + ") (max_over_time(dbhost_multipath_paths[1d]))")
    paths_active = "max by (" + cfg.by("instance", "device") + ") (dbhost_multipath_paths_active)"
    # R13: commits wait far longer than LGWR writes (ratio and gap), with traffic behind both
    r13 = ("(\n"
           "  " + R.WAIT_AVG + "{event=\"log file sync\"}\n"
           "  - ignoring (event, wait_class)\n"
           "  " + R.WAIT_AVG + "{event=\"log file parallel write\"}\n"
           ") > ${R13_gap}\n"
           "and on (" + cfg.by("database", "inst_id") + ") (\n"
           "  " + R.WAIT_AVG + "{event=\"log file sync\"}\n"
           "  / ignoring (event, wait_class)\n"
           "  " + R.WAIT_AVG + "{event=\"log file parallel write\"}\n"
           ") > ${R13}\n"
           "and on (" + cfg.by("database", "inst_id") + ")\n" +
           R.WAITS + "{event=\"log file sync\"} >= ${R13.floor.waits}\n"
           "and on (" + cfg.by("database", "inst_id") + ")\n" +
           R.WAITS + "{event=\"log file parallel write\"} >= ${R13.floor.waits}")
    return oracle, hosts, every_job, target, limited, paths_had, paths_active, r13


def alerts(cfg: Config) -> list[dict]:
    """Every alert rule entry, section by section (the order of the generated rule file)."""
    return [rule for section in SECTIONS for rule in section(cfg)]


def _monitoring(cfg: Config) -> list[dict]:
    """Monitoring."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    restart_jump = ("max by (" + cfg.by("database", "inst_id") + ") (\n"
                    "  " + _gauge("oracle_instance_start_time_seconds")
                    + " - min_over_time(oracle_instance_start_time_seconds[30m])\n)")
    return [
        # alertfix #1: not the generic blind bridge (mixin.render.blind_bridge): OracleDown has its own
        # (EXPORTER_DOWN_BRIDGE, only for a database down for the alert's `for` while its exporter
        # answered), and OracleExporterDown, a page too, takes over within it
        dict(alert="OracleDown", ids=["ops_oracle_down"], layer="oracle", dashboard="oracle-wallboard",
             blind_bridge=False,
             doc="oracle_up is 0 (its last sample within " + GAP_WINDOW + ", so a failed scrape of the exporter "
                 "during the outage neither resets `for` nor resolves it), for a reason other than the monitoring "
                 "account being refused. When the exporter itself dies during the outage (`up` 0), its last "
                 "oracle_up 0 keeps the alert firing for " + EXPORTER_DOWN_BRIDGE + ", well past "
                 "OracleExporterDown's `for`: no moment with neither alert active; only if oracle_up was 0 on every "
                 "scrape of the alert's `for` while the exporter still answered (one failed fetch on its last "
                 "scrape is not an outage).",
             expr="last_over_time(oracle_up[" + GAP_WINDOW + "]) == ${ops_oracle_down}\n"
                  "unless on (" + cfg.by("database") + ")\n"
                  "last_over_time(oracle_last_error_info{" + CREDENTIAL_REASONS + "}[" + GAP_WINDOW + "])\n"
                  # rev23 #14b: the exporter died while the database was down: its last oracle_up (0)
                  # keeps OracleDown firing for EXPORTER_DOWN_BRIDGE, well past OracleExporterDown's `for`
                  "or\n"
                  "(\n"
                  "  last_over_time(oracle_up[" + EXPORTER_DOWN_BRIDGE + "]) == ${ops_oracle_down}\n"
                  # fix2 #3: only if oracle_up was 0 on every scrape of the alert's own `for` while the
                  # exporter still answered (one failed fetch on its last scrape is not an outage)
                  "  and on (" + cfg.by("database") + ") last_over_time((\n"
                  "    max_over_time(oracle_up[${ops_oracle_down.for}])\n"
                  "    and on (" + target + ") min by (" + target + ") (min_over_time(up{" + oracle + "}[${ops_oracle_down.for}])) == 1\n"
                  "  )[" + EXPORTER_DOWN_BRIDGE + ":1m]) == ${ops_oracle_down}\n"
                  "  and on (" + target + ") max by (" + target + ") (up{" + oracle + "}) == 0\n"
                  "  unless on (" + cfg.by("database") + ")\n"
                  "  last_over_time(oracle_last_error_info{" + CREDENTIAL_REASONS + "}[" + EXPORTER_DOWN_BRIDGE + "])\n"
                  ")",
             summary="Oracle database {{ $labels.database }} is down or unreachable: " + ORACLE_DOWN_REASON,
             description="oracle-exporter {{ $labels.instance }} could not query database {{ $labels.database }} "
                         "for ${ops_oracle_down.for} (oracle_up = {{ $value }}); last error: " + ORACLE_DOWN_REASON +
                         " (oracle_last_error_info; the exporter's log has the full message); "
                         "its other alerts are inhibited."),
        # issue 23: the database refuses the monitoring account (ORA-01017/28000/28001): the database
        # serves its users; the monitoring account needs a DBA, in working hours (a ticket).
        dict(alert="OracleDown", ids=["ops_oracle_down_credentials"], layer="oracle", dashboard="oracle-wallboard",
             labels={"cause": "monitoring_credentials"},
             doc="oracle_up is 0 because the database refuses the monitoring account (oracle_last_error_info reason "
                 "logon denied, account locked or password expired).",
             expr="last_over_time(oracle_up[" + GAP_WINDOW + "]) == ${ops_oracle_down_credentials}\n"
                  "and on (" + cfg.by("database") + ")\n"
                  "last_over_time(oracle_last_error_info{" + CREDENTIAL_REASONS + "}[" + GAP_WINDOW + "])",
             summary="The monitoring account is refused by {{ $labels.database }}: " + ORACLE_DOWN_REASON,
             description="oracle-exporter {{ $labels.instance }} has been refused by database {{ $labels.database }} for "
                         "${ops_oracle_down_credentials.for} (oracle_up = {{ $value }}): " + ORACLE_DOWN_REASON +
                         " (oracle_last_error_info). The "
                         "database may well be serving its users; the monitoring account's password or lock needs a "
                         "DBA (the exporter does not retry a refused password), and until then nothing of this "
                         "database is observed."),
        # alertfix #2: OracleDown is grouped per database (a second database down is a new page, never
        # folded into an acknowledged incident's key); one exporter losing most of its databases at once
        # is this one page, which hides that exporter's OracleDown pages (alerts/alertmanager.yml). In
        # the oracle group, after OracleDown: it reads OracleDown's ALERTS of the same evaluation.
        dict(alert="OracleExporterLostDatabases", ids=["ops_oracle_down_many"], layer="oracle",
             dashboard="oracle-wallboard", blind_bridge=False,
             doc="At least ${ops_oracle_down_many|pct} of the databases an oracle-exporter reports (oracle_up "
                 "within 15 minutes), and at least ${ops_oracle_down_many.floor.databases}, have OracleDown "
                 "(critical) firing: per exporter target, or per `exporter` label in probe mode. Its page "
                 "hides that exporter's OracleDown pages (one page, not one per database).",
             expr=_lost_databases(cfg, "instance", 'exporter=""') + "\nor\n" +
                  _lost_databases(cfg, "exporter", 'exporter!=""'),
             summary="oracle-exporter {{ $labels.instance }}{{ $labels.exporter }} lost most of its databases",
             description="{{ $value | humanizePercentage }} of the databases oracle-exporter "
                         "{{ $labels.instance }}{{ $labels.exporter }} reports are down at once (OracleDown; at least "
                         "${ops_oracle_down_many|pct} and ${ops_oracle_down_many.floor.databases} databases, C5): a "
                         "cause on the exporter's side (its network, host, a shared listener or wallet) is likelier "
                         "than that many outages (refused monitoring logons are tickets, not counted here); the "
                         "per-database OracleDown pages of this "
                         "exporter are inhibited (their list is in Alertmanager)."),
        dict(alert="OracleExporterDown", ids=["ops_exporter_down"], layer="monitoring", dashboard="oracle-wallboard",
             expr="up{" + cfg.selector("oracle") + "} == ${ops_exporter_down}",
             summary="oracle-exporter {{ $labels.instance }} cannot be scraped",
             description="Prometheus has failed to scrape oracle-exporter {{ $labels.instance }} for "
                         "${ops_exporter_down.for} (up = {{ $value }}): the databases it serves are unobserved."),
        dict(alert="DbhostExporterDown", ids=["ops_host_exporter_down"], layer="monitoring", dashboard="host-storage",
             expr="up{" + cfg.selector("dbhost") + "} == ${ops_host_exporter_down}",
             summary="dbhost-exporter on {{ $labels.instance }} cannot be scraped",
             description="Prometheus has failed to scrape dbhost-exporter on {{ $labels.instance }} for "
                         "${ops_host_exporter_down.for} (up = {{ $value }}); LUN, ZFS and process alerts of the host are inhibited."),
        dict(alert="NodeExporterDown", ids=["ops_host_exporter_down"], layer="monitoring", dashboard="host-cpu",
             expr="up{" + cfg.selector("node") + "} == ${ops_host_exporter_down}",
             summary="node_exporter on {{ $labels.instance }} cannot be scraped",
             description="Prometheus has failed to scrape node_exporter on {{ $labels.instance }} for "
                         "${ops_host_exporter_down.for} (up = {{ $value }}); CPU, memory and disk alerts of the host are inhibited."),
        # alertfix #5 (review "alerts" finding 5): judged in time, on the outages the pack's own bridge
        # (last_over_time over GAP_WINDOW) cannot cover: a minute counts as blind when no scrape of the
        # target succeeded in the GAP_WINDOW before it. Isolated failed scrapes lose no data at any
        # scrape interval (four in 30 minutes at 60 s were 87% of the scrapes and paged).
        dict(alert="OracleExporterFlapping", ids=["ops_exporter_flapping"], layer="monitoring", dashboard="oracle-wallboard",
             doc="oracle-exporter observed (a successful scrape within the last " + GAP_WINDOW + ", the pack's "
                 "bridge) in less than ${ops_exporter_flapping|pct} of the minutes of 30 minutes, with at least "
                 "${ops_exporter_flapping.floor.changes} changes between observed and blind (two outages longer than "
                 "the bridge). Isolated failed scrapes are bridged and never count, whatever the scrape interval.",
             expr=_observed(oracle) + " < ${ops_exporter_flapping}\n"
                  "and on (" + target + ")\n" + _blind_changes(oracle) + " >= ${ops_exporter_flapping.floor.changes}",
             summary="oracle-exporter {{ $labels.instance }} keeps failing and recovering",
             description="oracle-exporter {{ $labels.instance }} was observed (a successful scrape within "
                         + GAP_WINDOW + ") {{ $value | humanizePercentage }} of the last 30 minutes, with repeated "
                         "outages longer than " + GAP_WINDOW + " (threshold ${ops_exporter_flapping|pct}, O1): its "
                         "databases are mostly unobserved and every `for` of their alerts keeps resetting."),
        # alertfix #4 (review "alerts" finding 4): the pack reads gauges over GAP_WINDOW and counters over
        # 5-minute rates; data older than that switched it off without a word (a 5-minute scrape interval,
        # refresh_interval_seconds 600, collector_intervals of wait_events above 300)
        dict(alert="MonitoringDataTooOld", ids=["ops_data_too_old"], layer="monitoring", dashboard=None,
             labels={"cause": "snapshot_age"},
             doc="oracle_snapshot_age_seconds above ${ops_data_too_old|dur} at some point of 10 minutes (the "
                 "exporter serves older data: refresh_interval_seconds above the pack's limit, or fetches that "
                 "hang), for ${ops_data_too_old.for}.",
             expr="max by (" + cfg.by("database") + ") (max_over_time(oracle_snapshot_age_seconds[10m])) > ${ops_data_too_old}",
             summary="oracle-exporter {{ $labels.instance }} serves data of {{ $labels.database }} too old for the alert pack",
             description="The data oracle-exporter {{ $labels.instance }} serves for {{ $labels.database }} reached "
                         "{{ $value | humanizeDuration }} of age in the last 10 minutes (oracle_snapshot_age_seconds; "
                         "limit ${ops_data_too_old|dur}, C5, O1): the pack's 3-minute reads and 5-minute rates see "
                         "gaps and flat counters, and its alerts on this database go quiet. Set "
                         "refresh_interval_seconds to 120 or less, or find the fetch that hangs."),
        dict(alert="MonitoringDataTooOld", ids=["ops_data_too_old"], layer="monitoring", dashboard=None,
             labels={"cause": "collector_interval"},
             doc="oracle_collector_cache_age_seconds above ${ops_data_too_old|dur} at some point of 10 minutes for a "
                 "collector other than the slow-changing ones read every 300 s by default (tablespaces, alert_log, "
                 "backups, scheduler_jobs), for ${ops_data_too_old.for}: collector_intervals above the pack's limit.",
             expr="max by (" + cfg.by("database", "collector") + ") (max_over_time(oracle_collector_cache_age_seconds"
                  "{collector!~\"" + SLOW_COLLECTORS + "\"}[10m])) > ${ops_data_too_old}",
             summary="Collector {{ $labels.collector }} of {{ $labels.database }} serves rows too old for the alert pack",
             description="oracle-exporter {{ $labels.instance }} serves rows of collector {{ $labels.collector }} for "
                         "{{ $labels.database }} up to {{ $value | humanizeDuration }} old (oracle_collector_cache_age_seconds; "
                         "limit ${ops_data_too_old|dur}, C5, O1): its counters become staircases whose 5-minute rate "
                         "is 0 half of the time, and the alerts built on them go quiet. Set its collector_intervals "
                         "entry to 120 or less."),
        dict(alert="MonitoringDataTooOld", ids=["ops_scrape_too_sparse"], layer="monitoring", dashboard=None,
             labels={"cause": "scrape_interval"},
             doc="Fewer than ${ops_scrape_too_sparse} scrapes of an oracle, dbhost or node target in 10 minutes "
                 "(count_over_time(up[10m]); a failed scrape counts too), for ${ops_scrape_too_sparse.for}: a "
                 "scrape interval above 2 minutes.",
             expr="count_over_time(up{" + every_job + "}[10m]) < ${ops_scrape_too_sparse}",
             summary="{{ $labels.job }} target {{ $labels.instance }} is scraped too rarely for the alert pack",
             description="Prometheus scraped {{ $labels.job }} target {{ $labels.instance }} only {{ $value }} times in "
                         "10 minutes (threshold ${ops_scrape_too_sparse}, C5, O1): a scrape interval above 2 minutes. "
                         "The pack reads gauges over 3 minutes and counters over 5-minute rates; at a 5-minute interval "
                         "none of its alerts can fire. Set scrape_interval to 60 s (at most 2 minutes)."),
        dict(alert="ExporterCrashLooping", ids=["ops_exporter_crash_looping"], layer="monitoring", dashboard=None,
             doc="The exporter process (oracle-exporter or dbhost-exporter) restarted at least "
                 "${ops_exporter_crash_looping} times in an hour (changes of process_start_time_seconds).",
             expr="changes(process_start_time_seconds{" + cfg.selector("oracle", "dbhost") + "}[1h]) >= "
                  "${ops_exporter_crash_looping}",
             summary="{{ $labels.job }} on {{ $labels.instance }} keeps restarting",
             description="{{ $labels.job }} on {{ $labels.instance }} restarted {{ $value }} times in the last hour "
                         "(process_start_time_seconds; threshold ${ops_exporter_crash_looping}, O1): each restart is a "
                         "failed scrape that marks every series stale, so `for` of the alerts on it restarts while "
                         "`up` still looks 97% available. Read the exporter's log (systemd: journalctl -u ...)."),
        dict(alert="HostExporterFlapping", ids=["ops_host_exporter_flapping"], layer="monitoring", dashboard="host-cpu",
             doc="dbhost-exporter or node_exporter observed (a successful scrape within the last " + GAP_WINDOW +
                 ") in less than ${ops_host_exporter_flapping|pct} of the minutes of 30 minutes, with at least "
                 "${ops_host_exporter_flapping.floor.changes} changes between observed and blind (see OracleExporterFlapping).",
             expr=_observed(hosts) + " < ${ops_host_exporter_flapping}\n"
                  "and on (" + target + ")\n" + _blind_changes(hosts) + " >= ${ops_host_exporter_flapping.floor.changes}",
             summary="{{ $labels.job }} on {{ $labels.instance }} keeps failing and recovering",
             description="{{ $labels.job }} on {{ $labels.instance }} was observed (a successful scrape within "
                         + GAP_WINDOW + ") {{ $value | humanizePercentage }} of the last 30 minutes, with repeated "
                         "outages longer than " + GAP_WINDOW + " (threshold ${ops_host_exporter_flapping|pct}, O1): "
                         "the host's alerts keep resetting."),
        dict(alert="ScrapeJobAbsent", ids=["ops_job_absent"], layer="monitoring", dashboard=None,
             labels={"exporter": "oracle-exporter"},
             expr="absent(up{" + oracle + "}) == ${ops_job_absent}",
             summary="Prometheus scrapes no oracle-exporter at all",
             description="No target matches up{" + oracle + "} for ${ops_job_absent.for} (absent = {{ $value }}; O1): "
                         "the scrape job was renamed or its service discovery is empty, so no Oracle alert can fire."),
        dict(alert="ScrapeJobAbsent", ids=["ops_host_job_absent"], layer="monitoring", dashboard=None,
             labels={"exporter": "dbhost-exporter"},
             expr="absent(up{" + cfg.selector("dbhost") + "}) == ${ops_host_job_absent}",
             summary="Prometheus scrapes no dbhost-exporter at all",
             description="No target matches up{" + cfg.selector("dbhost") + "} for ${ops_host_job_absent.for} "
                         "(absent = {{ $value }}; O1): LUN, ZFS and Oracle process alerts cannot fire."),
        dict(alert="ScrapeJobAbsent", ids=["ops_host_job_absent"], layer="monitoring", dashboard=None,
             labels={"exporter": "node_exporter"},
             expr="absent(up{" + cfg.selector("node") + "}) == ${ops_host_job_absent}",
             summary="Prometheus scrapes no node_exporter at all",
             description="No target matches up{" + cfg.selector("node") + "} for ${ops_host_job_absent.for} "
                         "(absent = {{ $value }}; O1): CPU, memory and disk alerts cannot fire."),
        # issue 23: a target is remembered by a recording rule (records.TARGETS_EXPECTED): it stays
        # alerted until it is scraped again (the [1h] look-back closed it after an hour)
        dict(alert="ScrapeTargetVanished", ids=["ops_target_vanished"], layer="monitoring", dashboard=None,
             doc="A target of the oracle, dbhost or node job that Prometheus scraped has no `up` series now; "
                 "remembered by a recording rule (no look-back to expire), so it stays firing until the target is "
                 "scraped again or its memory is deleted (a target retired on purpose: see the runbook).",
             expr="(\n"
                  "  " + R.TARGETS_EXPECTED + "\n"
                  "  unless on (" + target + ")\n"
                  "  up{" + every_job + "}\n"
                  ") > ${ops_target_vanished}",
             summary="{{ $labels.job }} target {{ $labels.instance }} is no longer scraped",
             description="Prometheus scraped {{ $labels.job }} target {{ $labels.instance }} and does not any more "
                         "({{ $value }} target remembered by " + R.TARGETS_EXPECTED + ", O1): "
                         "it was dropped from service discovery or the config, so no down alert can fire for it. This "
                         "stays firing until the target is back; a target retired on purpose is forgotten by deleting "
                         "its " + R.TARGETS_EXPECTED + " series (runbook)."),
        # issue 23: the database is remembered (records.DATABASES_EXPECTED) and forgotten once it left the
        # exporter's configuration: a newer exporter process answers without it (rev23 #14c: quiet)
        dict(alert="OracleDatabaseVanished", ids=["ops_database_vanished"], layer="monitoring", dashboard="oracle-wallboard",
             doc="A database oracle-exporter reported is missing from the output of the same exporter process "
                 "(process_start_time_seconds unchanged) while it answers: the exporter lost it. A database "
                 "removed from the exporter's configuration (read at start only: the exporter restarted without "
                 "it) is forgotten within " + GAP_WINDOW + " and never fires. While the exporter is down or not "
                 "scraped the database stays remembered (OracleExporterDown, ScrapeTargetVanished say why).",
             expr="(\n"
                  "  " + R.DATABASES_EXPECTED + "\n"
                  "  unless on (" + cfg.by("database") + ")\n"
                  "  " + _gauge("oracle_up") + "\n"
                  ") > ${ops_database_vanished}\n"
                  "and on (" + target + ")\n"
                  "up{" + oracle + "} == 1",
             summary="Database {{ $labels.database }} vanished from oracle-exporter {{ $labels.instance }}",
             description="oracle-exporter {{ $labels.instance }} reported database {{ $labels.database }} and does not any "
                         "more ({{ $value }} database remembered by " + R.DATABASES_EXPECTED + "), while the exporter "
                         "itself answers (O3): the database left the exporter's config or output, "
                         "so OracleDown cannot fire for it. A database removed from the configuration (the exporter "
                         "restarted without it) is forgotten at once; this one was lost by a running exporter process."),
        # issue 23: the count of instances a database is expected to have is remembered by a
        # recording rule (records.INSTANCES_EXPECTED): an instance that stays down stays alerted
        # (the [1h] look-back closed it 70 minutes after the node went down); a RAC One Node
        # relocation moves the instance (same count) and is not a vanishing.
        dict(alert="OracleInstanceVanished", ids=["ops_instance_vanished"], layer="oracle", dashboard="oracle-wallboard",
             doc="Fewer RAC instances in GV$INSTANCE than the database had for an hour at a time (remembered by a "
                 "recording rule, no look-back to expire), while its database answers (oracle_up 1). A relocation "
                 "(RAC One Node: the instance moves host, the count stays) is not a vanishing.",
             expr=R.INSTANCES_EXPECTED + "\n"
                  "  - on (" + cfg.by("database") + ") (" + R.INSTANCES + " or " + R.INSTANCES_EXPECTED + " * 0)\n"
                  "> ${ops_instance_vanished}\n"
                  "and on (" + cfg.by("database") + ")\n" +
                  _gauge("oracle_up") + " == 1",
             summary="{{ $value }} RAC instance(s) of {{ $labels.database }} are gone",
             description="{{ $labels.database }} runs {{ $value }} instance(s) fewer than the number it had for an hour at "
                         "a time, while the database answers on its other instances (O3): oracle_up stays 1, so "
                         "OracleDown does not fire. This stays firing until the instance is back (GV$INSTANCE)."),
        # rev23 #12: the daylight-saving exclusion was a +-5 minute band around one hour and half an hour,
        # which hid every crash after ~1h or ~30m of uptime. The exporter converts STARTUP_TIME with the
        # host's UTC offset, so an offset change moves it by exactly 3600 or 1800 s (to the second), and
        # it resets no counter; a restart always resets the instance's GV$SYSSTAT counters.
        dict(alert="OracleInstanceRestarted", ids=["ops_instance_restarted"], layer="oracle", dashboard="oracle-wallboard",
             doc="An instance's start time moved forward by more than ${ops_instance_restarted|dur} within 30 minutes "
                 "(a restart, also one Clusterware completed within a minute). Not a restart: a shift of exactly one "
                 "hour or half an hour (to the second: the database host's daylight-saving change, which the exporter "
                 "converts with) while the instance's counters (redo size, user commits) did not reset; a restart "
                 "resets them, so a crash after one hour of uptime still alerts.",
             expr=restart_jump + " > ${ops_instance_restarted}\n"
                  "unless on (" + cfg.by("database", "inst_id") + ") (\n"
                  "  (abs(" + restart_jump + " - 3600) < 1 or abs(" + restart_jump + " - 1800) < 1)\n"
                  "  unless on (" + cfg.by("database", "inst_id") + ")\n"
                  "  max by (" + cfg.by("database", "inst_id") + ") (\n"
                  "    resets(oracle_redo_size_bytes_total[30m]) or resets(oracle_user_commits_total[30m])\n"
                  "  ) > 0\n"
                  ")",
             summary="Instance " + "{{ $labels.inst_id }} of {{ $labels.database }} was restarted",
             description="The startup time of " + _DB + " moved forward by {{ $value | humanizeDuration }} in the last "
                         "30 minutes (V$INSTANCE.STARTUP_TIME; O3): the instance was restarted. A restart Clusterware "
                         "completes within a minute never shows as down; find the cause in the alert log "
                         "(ORA-00600, ORA-07445, an instance eviction) before it repeats."),
        dict(alert="Watchdog", ids=["ops_watchdog"], layer="monitoring", dashboard=None,
             doc="Always firing: the heartbeat of the alerting pipeline, routed to the dead-man's-switch receiver.",
             expr="vector(${ops_watchdog})",
             summary="The alerting pipeline is alive (always firing)",
             description="This alert always fires (value {{ $value }}; O1). Alertmanager sends it to the dead-man's-switch "
                         "receiver every few minutes; when it stops arriving, Prometheus, its rules or Alertmanager are down."),
        dict(alert="OracleScrapeErrors", ids=["ops_scrape_errors"], layer="oracle", dashboard="oracle-wallboard",
             labels={"cause": "collector_failing"},
             expr="max by (" + cfg.by("database", "collector") + ") (" + _gauge("oracle_collector_success") + ") == ${ops_scrape_errors}",
             summary="Collector {{ $labels.collector }} fails for {{ $labels.database }}",
             description="oracle-exporter collector {{ $labels.collector }} has failed on every scrape of "
                         "{{ $labels.database }} for ${ops_scrape_errors.for} (oracle_collector_success = {{ $value }}): its metrics are missing."),
        dict(alert="OracleScrapeErrors", ids=["ops_scrape_errors"], layer="oracle", dashboard="oracle-wallboard",
             labels={"cause": "query_errors"},
             doc="oracle_scrape_errors_total grows faster than the floor over 15 minutes.",
             expr="sum by (" + cfg.by("database", "collector") + ") (rate(oracle_scrape_errors_total[15m]))"
                  " > ${ops_scrape_errors.floor.errors}",
             summary="Collector {{ $labels.collector }} reports errors for {{ $labels.database }}",
             description="oracle-exporter collector {{ $labels.collector }} of {{ $labels.database }} errors "
                         "{{ $value | printf \"%.3g\" }} times/s over 15m (floor ${ops_scrape_errors.floor.errors}/s)."),
        dict(alert="DbhostCollectorFailed", ids=["ops_scrape_errors"], layer="monitoring", dashboard="host-storage",
             doc="A dbhost-exporter collector keeps failing (dbhost_collector_success 0).",
             expr="max by (" + cfg.by("collector") + ") (" + _gauge("dbhost_collector_success") + ") == ${ops_scrape_errors}",
             summary="dbhost-exporter collector {{ $labels.collector }} fails on {{ $labels.instance }}",
             description="dbhost-exporter collector {{ $labels.collector }} on {{ $labels.instance }} has failed "
                         "for ${ops_scrape_errors.for} (dbhost_collector_success = {{ $value }}): its metrics (and the alerts built on them) are missing."),
        # review host #1: the cap cut series silently (the lun collector's path health went first)
        dict(alert="DbhostSeriesDropped", ids=["ops_series_dropped"], layer="monitoring", dashboard="host-storage",
             doc="A dbhost-exporter collector went over `max_series` in the last 15 minutes "
                 "(dbhost_collector_dropped_series_total grew): the series it cut are unobserved.",
             expr="sum by (" + cfg.by("collector") + ") (increase(dbhost_collector_dropped_series_total[15m]))"
                  " > ${ops_series_dropped}",
             summary="dbhost-exporter on {{ $labels.instance }} drops series of collector {{ $labels.collector }}",
             description="dbhost-exporter collector {{ $labels.collector }} on {{ $labels.instance }} went over its "
                         "max_series and dropped {{ $value | printf \"%.0f\" }} samples in the last 15 minutes: "
                         "part of its metrics (and the alerts built on them) are missing. The lun collector keeps path "
                         "health and LUN identity first; raise max_series in the exporter's config."),

    ]


def _hangs(cfg: Config) -> list[dict]:
    """Hangs (GV$SESSION: the age of the current wait)."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    return [
        dict(alert="OracleCommitsStuck", ids=["O2_commit"], layer="oracle", dashboard="oracle-redo",
             doc="A session's current commit-path wait (log file sync, log file switch ..., log buffer space) is "
                 "older than ${O2_commit|dur} for ${O2_commit.for}: a single wait of 38 s (one checkpoint "
                 "incomplete) does not page, a hang does.",
             expr="max by (" + cfg.by("database", "inst_id", "event") + ") "
                  "(" + _fresh_or_bridged("oracle_sessions_waiting_longest_seconds{" + R.COMMIT_WAITS + "}", "sessions",
                                        cfg.by("database")) + ") > ${O2_commit}",
             summary="Commits are stuck on " + _DB,
             description="A session has been waiting {{ $value | humanizeDuration }} in '{{ $labels.event }}' on " + _DB +
                         " (threshold ${O2_commit|dur}, O2): commits do not complete. LGWR, the archiver or the redo LUN is "
                         "hung; wait-event averages cannot show it because no wait completes."),
        dict(alert="OracleSessionsStuck", ids=["O2_wait"], layer="oracle", dashboard="oracle-waits",
             doc="A session's current non-idle wait is older than ${O2_wait|dur}; not a hang, and not judged: "
                 "the Application and Network classes (row locks: OracleSessionsBlocked; a client that went "
                 "quiet), Administrative and Backup: events (RMAN writing to tape waits in sbtwrite2 for as long "
                 "as the tape takes), Scheduler (Resource Manager queueing: resmgr:cpu quantum is the plan "
                 "working), and commit waits (OracleCommitsStuck).",
             expr="max by (" + cfg.by("database", "inst_id", "event", "wait_class") + ") "
                  "(" + _fresh_or_bridged("oracle_sessions_waiting_longest_seconds{wait_class!~\"" + NOT_HANG_CLASSES + "\", "
                                          "event!~\"" + NOT_HANG_EVENTS + "\", "
                                          + R.COMMIT_WAITS.replace("=~", "!~") + "}", "sessions", cfg.by("database"))
                  + ") > ${O2_wait}",
             summary="A session is stuck in '{{ $labels.event }}' on " + _DB,
             description="A session has been waiting {{ $value | humanizeDuration }} in '{{ $labels.event }}' "
                         "({{ $labels.wait_class }}) on " + _DB + " (threshold ${O2_wait|dur}, O2): an I/O, a library "
                         "cache or row cache lock or a background process is hung."),
        # issue 22: only sessions a *user* session blocks (row lock, enqueue); a commit waiting on LGWR or a
        # log switch on the archiver is blocked by a background process (OracleCommitsStuck's finding)
        dict(alert="OracleSessionsBlocked", ids=["O2_blocked"], layer="oracle", dashboard="oracle-waits",
             expr="max by (" + cfg.by("database", "inst_id", "blocker_kind") + ") "
                  "(" + _fresh_or_bridged("oracle_sessions_blocked_by_longest_seconds{blocker_kind=\"user\"}", "sessions",
                                        cfg.by("database")) + ") > ${O2_blocked}",
             summary="Sessions are blocked by a {{ $labels.blocker_kind }} session (row lock) on " + _DB,
             description="A session on " + _DB + " has been blocked by a {{ $labels.blocker_kind }} session for "
                         "{{ $value | humanizeDuration }} (threshold ${O2_blocked|dur}, O2): a row lock or enqueue "
                         "holder is not ending its transaction. oracle_session_blocker_blocked_sessions names the "
                         "root blocker (inst_id, sid, serial, username, program)."),

    ]


def _redo(cfg: Config) -> list[dict]:
    """Redo / LGWR."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    return [
        dict(alert="OracleLogFileParallelWriteSlow", ids=["R1"], layer="oracle", dashboard="oracle-redo",
             expr=R.WAIT_AVG + "{event=\"log file parallel write\"} > ${R1}\n"
                  "and on (" + cfg.by("database", "inst_id", "event") + ")\n" +
                  R.WAITS + "{event=\"log file parallel write\"} >= ${R1.floor.waits}",
             summary="LGWR redo writes are slow on " + _DB,
             description="'log file parallel write' averages {{ $value | humanizeDuration }} on " + _DB +
                         " (threshold ${R1|dur}, R1; the tuned system ran at 0.55ms). Check the redo LUN service time."),
        dict(alert="OracleLogFileSyncSlow", ids=["R2"], layer="oracle", dashboard="oracle-redo",
             expr=R.WAIT_AVG + "{event=\"log file sync\"} > ${R2}\n"
                  "and on (" + cfg.by("database", "inst_id", "event") + ")\n" +
                  R.WAITS + "{event=\"log file sync\"} >= ${R2.floor.waits}",
             summary="Commits are slow on " + _DB,
             description="'log file sync' (commit wait) averages {{ $value | humanizeDuration }} on " + _DB +
                         " (threshold ${R2|dur}, R2; the tuned system ran at 2.13ms)."),
        dict(alert="OracleLogBufferSpaceWaits", ids=["R3"], layer="oracle", dashboard="oracle-redo",
             expr=R.WAITS + "{event=\"log buffer space\"} > ${R3.floor.rate}",
             summary="Sessions wait for space in the log buffer on " + _DB,
             description="{{ $value | printf \"%.3g\" }} 'log buffer space' waits/s on " + _DB +
                         " (R3: eliminate; noise floor ${R3.floor.rate}/s). The log buffer is too small for the redo rate (R16) or LGWR writes too slowly (R1)."),
        dict(alert="OracleCheckpointIncomplete", ids=["R4"], layer="oracle", dashboard="oracle-redo",
             expr=R.WAITS + "{event=\"log file switch (checkpoint incomplete)\"} > ${R4.floor.rate}",
             summary="Log switches wait for checkpoints on " + _DB,
             description="{{ $value | printf \"%.3g\" }} 'log file switch (checkpoint incomplete)' waits/s on " + _DB +
                         " (R4: eliminate; noise floor ${R4.floor.rate}/s): redo generation stops until DBWR finishes the checkpoint."),
        dict(alert="OracleRedoAllocationLatchWaits", ids=["R5"], layer="oracle", dashboard="oracle-redo",
             expr="sum by (" + cfg.by("database", "inst_id") + ") (" + R.WAITS +
                  "{event=~\"latch: redo allocation|latch: redo writing\"}) > ${R5.floor.rate}",
             summary="Redo allocation/writing latch waits on " + _DB,
             description="{{ $value | printf \"%.3g\" }} 'latch: redo allocation' + 'latch: redo writing' waits/s on " + _DB +
                         " (R5: eliminate; noise floor ${R5.floor.rate}/s)."),
        dict(alert="OracleLogFileSwitchCompletionWaits", ids=["R6"], layer="oracle", dashboard="oracle-redo",
             expr=R.WAITS + "{event=\"log file switch completion\"} > ${R6}",
             summary="Sessions wait for log switches to complete on " + _DB,
             description="{{ $value | printf \"%.3g\" }} 'log file switch completion' waits/s on " + _DB +
                         " (threshold ${R6}/s, R6: the rate matters more than the average)."),
        dict(alert="OracleRedoBufferAllocationRetries", ids=["R10"], layer="oracle", dashboard="oracle-redo",
             expr=R.REDO_BUFFER_ALLOCATION_RETRIES + " > ${R10.floor.rate}",
             summary="Redo buffer allocation retries on " + _DB,
             description="{{ $value | printf \"%.3g\" }} redo buffer allocation retries/s on " + _DB +
                         " (R10: eliminate; noise floor ${R10.floor.rate}/s): the log buffer fills faster than LGWR empties it."),
        dict(alert="OracleRedoLogSpaceRequests", ids=["R11"], layer="oracle", dashboard="oracle-redo",
             expr=R.REDO_LOG_SPACE_REQUESTS + " > ${R11.floor.rate}",
             summary="Redo log space requests on " + _DB,
             description="{{ $value | printf \"%.3g\" }} redo log space requests/s on " + _DB +
                         " (R11: eliminate; noise floor ${R11.floor.rate}/s): sessions wait for a log switch to free space."),
        # rev23 #9: one rule, whatever the measured cause: a run delay crossing R13_run_delay moved the
        # alert between three rules (no cause / lgwr_cpu_wait / session_cpu_wait, each with its own
        # field_note), each move a new alert whose `for` restarted: a delay alternating 0.35/0.65 ms
        # never fired. The cause is read by the text (STARVATION_CAUSE), not kept in the labels.
        dict(alert="OracleCommitCpuStarvation", ids=["R13", "R13_gap", "R13_run_delay"], layer="oracle",
             dashboard="oracle-redo",
             doc="'log file sync' average more than ${R13}x and ${R13_gap|dur} above 'log file parallel write'. "
                 "The text names the cause where dbhost-exporter measures it (run delay per dispatch above "
                 "${R13_run_delay|dur}: LGWR's, then the foreground sessions'); the cause is not a label, so a "
                 "cause that changes does not restart `for`.",
             expr=r13,
             summary="Committing sessions wait far longer than LGWR writes on " + _DB,
             description="'log file sync' averages {{ $value | humanizeDuration }} more than 'log file parallel write' on " + _DB +
                         " (more than ${R13}x and ${R13_gap|dur}, R13). Cause measured now: " + STARVATION_CAUSE),
        dict(alert="OracleLgwrInvoluntaryContextSwitches", ids=["R14"], layer="host", dashboard="host-cpu",
             expr=R.PROC_INVOLUNTARY_SHARE + "{" + R.LGWR_ROLES + "} > ${R14}\n"
                  "and on (" + cfg.by("instance", "sid", "role") + ")\n" +
                  R.PROC_SWITCHES + "{" + R.LGWR_ROLES + "} >= ${R14.floor.switches}",
             summary="LGWR of {{ $labels.sid }} on {{ $labels.instance }} is being preempted",
             description="{{ $value | humanizePercentage }} of the context switches of LGWR ({{ $labels.role }} of {{ $labels.sid }} on {{ $labels.instance }}) "
                         "are involuntary (threshold ${R14|pct}, R14: 30% before the fix, < 0.1% after)."),
        dict(alert="OracleLogSwitchesTooFrequent", ids=["R15"], layer="oracle", dashboard="oracle-redo",
             doc="More than ${R15} log switches in the last hour, and the redo generated in that hour fills the online "
                 "logs more than ${R15} times (switches forced by ARCHIVE_LAG_TARGET on an idle database do not count).",
             expr=R.LOG_SWITCHES_1H + " > ${R15}\n"
                  "and on (" + cfg.by("database", "inst_id") + ")\n" +
                  R.LOG_FILLS_1H + " > ${R15}",
             summary="Redo logs switch too often on " + _DB,
             description="{{ $value | printf \"%.0f\" }} log switches in the last hour on " + _DB +
                         " (threshold ${R15}/h, a switch every 5 minutes; R15: every ~7 minutes was good, once a minute too often). Redo generation stops during each switch: use larger log members."),
        dict(alert="OracleArchivingBehind", ids=["R15_archive"], layer="oracle", dashboard="oracle-redo",
             labels={"cause": "unarchived_groups"},
             expr="count by (" + cfg.by("database", "thread") + ") (\n"
                  "  max by (" + cfg.by("database", "thread", "group") + ") (" + _gauge("oracle_redo_log_group_archived") + ") == 0\n"
                  "  unless on (" + cfg.by("database", "thread", "group") + ")\n"
                  "  max by (" + cfg.by("database", "thread", "group") + ") (" + _gauge("oracle_redo_log_group_status{status=\"CURRENT\"}") + ") == 1\n"
                  ") >= ${R15_archive}\n"
                  "and on (" + cfg.by("database") + ")\n"
                  + _gauge("oracle_database_info{log_mode=\"ARCHIVELOG\"}"),
             summary="Archiving of redo thread {{ $labels.thread }} lags on {{ $labels.database }}",
             description="{{ $value }} non-current redo log groups of thread {{ $labels.thread }} on {{ $labels.database }} "
                         "are not archived yet (threshold ${R15_archive}, R15: archiving must finish well inside the switch interval)."),
        dict(alert="OracleArchivingBehind", ids=["R15_archiving_needed"], layer="oracle", dashboard="oracle-redo",
             labels={"cause": "archiving_needed_waits"},
             expr="sum by (" + cfg.by("database", "inst_id") + ") (" + R.WAITS +
                  "{event=\"log file switch (archiving needed)\"}) > ${R15_archiving_needed.floor.rate}",
             summary="Redo generation stalls waiting for the archiver on " + _DB,
             description="{{ $value | printf \"%.3g\" }} 'log file switch (archiving needed)' waits/s on " + _DB +
                         " (R15; noise floor ${R15_archiving_needed.floor.rate}/s): every log group is full and unarchived."),

    ]


def _space(cfg: Config) -> list[dict]:
    """Space, limits, standby (O4, O5)."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    # issue 22: a READ ONLY or OFFLINE tablespace cannot grow: never judged (oracle_tablespace_info{status})
    ts_on = cfg.by("database", "container", "tablespace")
    ts_judged = "\nunless on (" + ts_on + ") " + _gauge("oracle_tablespace_info{status=~\"READ ONLY|OFFLINE\"}")
    ts_by = cfg.by("database", "container", "tablespace", "contents")
    ts_room = ("max by (" + ts_by + ") (" + _gauge("oracle_tablespace_max_bytes{contents=\"PERMANENT\"}") + ")\n"
               "  - max by (" + ts_by + ") (" + _gauge("oracle_tablespace_used_bytes{contents=\"PERMANENT\"}") + ")")
    # issue 22: one ASM disk group seen by several databases is one alert: (asm_cluster, diskgroup) from the
    # info metric, per scrape target (the target labels every alert keeps: one exporter serving the databases
    # of a cluster gives one alert per disk group)
    dg_one = cfg.by("asm_cluster", "diskgroup")
    # rev23 #14e: the recovery area's free space net of what Oracle reclaims by itself, bytes
    fra_free = ("(\n"
                "  max by (" + cfg.by("database") + ") (" + _gauge("oracle_recovery_area_limit_bytes") + ")\n"
                "  - max by (" + cfg.by("database") + ") (" + _gauge("oracle_recovery_area_used_bytes") + ")\n"
                "  + max by (" + cfg.by("database") + ") (" + _gauge("oracle_recovery_area_reclaimable_bytes") + ")\n"
                ")")
    dg_db = cfg.by("database", "diskgroup")
    dg_info = "max by (" + dg_db + ", asm_cluster, type, space_basis) (" + _gauge("oracle_asm_diskgroup_info") + ")"
    # rev23 #3: raw free space of a disk group, one series per (asm_cluster, diskgroup, type)
    asm_free = ("min by (" + dg_one + ", type) (\n"
                "    max by (" + dg_db + ") (" + _gauge("oracle_asm_diskgroup_free_bytes") + ")\n"
                "    * on (" + dg_db + ") group_left (asm_cluster, type) " + dg_info + "\n"
                "  )")
    # fix2 #4: raw used share of a disk group (1 - FREE_MB/TOTAL_MB), the no_space page's floor
    asm_used = ("1 - min by (" + dg_one + ", type) (\n"
                "    max by (" + dg_db + ") (" + _gauge("oracle_asm_diskgroup_free_bytes") + ")\n"
                "    / (max by (" + dg_db + ") (" + _gauge("oracle_asm_diskgroup_total_bytes") + ") > 0)\n"
                "    * on (" + dg_db + ") group_left (asm_cluster, type) " + dg_info + "\n"
                "  )")
    # issue 23 item 4: space for files of a disk group, with the reclaimable files of the recovery
    # areas that live in it counted as free (Oracle deletes them when an FRA needs room)
    dg_ratio = ("min by (" + dg_one + ", type, space_basis) (\n"
                "    max by (" + dg_db + ") (" + _gauge("oracle_asm_diskgroup_file_space_bytes") + ")\n"
                "    / (max by (" + dg_db + ") (" + _gauge("oracle_asm_diskgroup_file_capacity_bytes") + ") > 0)\n"
                "    * on (" + dg_db + ") group_left (asm_cluster, type, space_basis) " + dg_info + "\n"
                "  )")
    dg_total = ("max by (" + dg_one + ") (\n"
                "      max by (" + dg_db + ") (" + _gauge("oracle_asm_diskgroup_file_capacity_bytes") + ")\n"
                "      * on (" + dg_db + ") group_left (asm_cluster) max by (" + dg_db + ", asm_cluster) ("
                + _gauge("oracle_asm_diskgroup_info") + ")\n"
                "    )")
    return [
        dict(alert="OracleResourceLimitNear", ids=["O4_resource"], layer="oracle", dashboard="oracle-capacity",
             expr=R.RESOURCE_UTILIZATION + "{" + limited + "} > ${O4_resource}",
             summary="{{ $labels.resource }} near its limit on " + _DB,
             description="{{ $labels.resource }} in use is {{ $value | humanizePercentage }} of its limit on " + _DB +
                         " (threshold ${O4_resource|pct}, O4): at the limit new connections fail (ORA-00020 processes, "
                         "ORA-00018 sessions)."),
        dict(alert="OracleResourceLimitNear", ids=["O4_resource_crit"], layer="oracle", dashboard="oracle-capacity",
             expr=R.RESOURCE_UTILIZATION + "{" + limited + "} > ${O4_resource_crit}",
             summary="{{ $labels.resource }} at its limit on " + _DB,
             description="{{ $labels.resource }} in use is {{ $value | humanizePercentage }} of its limit on " + _DB +
                         " (threshold ${O4_resource_crit|pct}, O4): the next logons fail with ORA-00020/ORA-00018."),
        dict(alert="OracleTablespaceFull", ids=["O4_tablespace"], layer="oracle", dashboard="oracle-capacity",
             doc="A permanent ONLINE tablespace uses more than ${O4_tablespace|pct} of the size it can reach "
                 "(READ ONLY and OFFLINE tablespaces are never judged).",
             expr=R.TABLESPACE_USED + "{contents=\"PERMANENT\"} > ${O4_tablespace}" + ts_judged,
             summary="Tablespace {{ $labels.tablespace }} of {{ $labels.database }} is filling up",
             description="Tablespace {{ $labels.tablespace }} of {{ $labels.database }} uses "
                         "{{ $value | humanizePercentage }} of the size it can reach (threshold ${O4_tablespace|pct}, O4): "
                         "at 100% inserts fail with ORA-01653."),
        dict(alert="OracleTablespaceFull", ids=["O4_tablespace_crit"], layer="oracle", dashboard="oracle-capacity",
             doc="A permanent ONLINE tablespace above ${O4_tablespace_crit|pct} of the size it can reach **and** with "
                 "less than ${O4_tablespace_crit.floor.free|bytes} left (percent alone never pages: a 20 TB "
                 "tablespace at 97.5% still has 500 GB).",
             expr=R.TABLESPACE_USED + "{contents=\"PERMANENT\"} > ${O4_tablespace_crit}\n"
                  "and on (" + ts_on + ") (" + ts_room + ") < ${O4_tablespace_crit.floor.free}" + ts_judged,
             summary="Tablespace {{ $labels.tablespace }} of {{ $labels.database }} is nearly full",
             description="Tablespace {{ $labels.tablespace }} of {{ $labels.database }} uses "
                         "{{ $value | humanizePercentage }} of the size it can reach with less than "
                         "${O4_tablespace_crit.floor.free|bytes} left (threshold ${O4_tablespace_crit|pct}, O4; "
                         "percent alone never pages): inserts are about to fail with ORA-01653."),
        dict(alert="OracleTablespaceFillingUp", ids=["O4_tablespace_days"], layer="oracle", dashboard="oracle-capacity",
             doc="At the growth of the last 6 hours a permanent tablespace that is at least "
                 "${O4_tablespace_days.floor.used|pct} full reaches its maximum size within ${O4_tablespace_days} days.",
             expr="(" + _gauge("oracle_tablespace_max_bytes{contents=\"PERMANENT\"}") + " - "
                  + _gauge("oracle_tablespace_used_bytes{contents=\"PERMANENT\"}") + ")\n"
                  "  / (deriv(oracle_tablespace_used_bytes{contents=\"PERMANENT\"}[6h]) > 0) / 86400 < ${O4_tablespace_days}\n"
                  "and on (" + cfg.by("database", "container", "tablespace") + ")\n" +
                  R.TABLESPACE_USED + "{contents=\"PERMANENT\"} > ${O4_tablespace_days.floor.used}" + ts_judged,
             summary="Tablespace {{ $labels.tablespace }} of {{ $labels.database }} fills up within days",
             description="At the growth of the last 6 hours tablespace {{ $labels.tablespace }} of "
                         "{{ $labels.database }} reaches the size it can reach in {{ $value | printf \"%.1f\" }} days "
                         "(threshold ${O4_tablespace_days} days, O4): add space in working hours."),
        dict(alert="OracleTablespaceFillingUp", ids=["O4_tablespace_hours"], layer="oracle", dashboard="oracle-capacity",
             doc="At the growth of the last 6 hours (predict_linear) a permanent ONLINE tablespace reaches the size "
                 "it can reach within ${O4_tablespace_hours|dur}: the page of the tablespace alerts.",
             expr="(" + ts_room + ")\n"
                  "  / (max by (" + ts_by + ") (deriv(oracle_tablespace_used_bytes{contents=\"PERMANENT\"}[6h])) > 0)"
                  " < ${O4_tablespace_hours}\n"
                  "and on (" + ts_on + ")\n"
                  "max by (" + ts_by + ") (predict_linear(oracle_tablespace_used_bytes{contents=\"PERMANENT\"}[6h], "
                  "${O4_tablespace_hours}))\n"
                  "  > max by (" + ts_by + ") (" + _gauge("oracle_tablespace_max_bytes{contents=\"PERMANENT\"}") + ")" + ts_judged,
             summary="Tablespace {{ $labels.tablespace }} of {{ $labels.database }} will be full within hours",
             description="At the growth of the last 6 hours tablespace {{ $labels.tablespace }} of "
                         "{{ $labels.database }} reaches the size it can reach in {{ $value | humanizeDuration }} "
                         "(threshold ${O4_tablespace_hours|dur}, O4): inserts will fail with ORA-01653; add a data "
                         "file or raise MAXSIZE now."),
        dict(alert="OracleRecoveryAreaFull", ids=["O4_fra"], layer="oracle", dashboard="oracle-capacity",
             expr=R.RECOVERY_AREA_USED + " > ${O4_fra}",
             summary="The recovery area of {{ $labels.database }} is filling up",
             description="The fast recovery area of {{ $labels.database }} is {{ $value | humanizePercentage }} full, net of "
                         "reclaimable files (threshold ${O4_fra|pct}, O4): when full, archiving stops (ORA-19809) and then "
                         "every commit (R15)."),
        # rev23 #14e (issue 23 point 4): the percent alone tickets (O4_fra above); the page is absolute:
        # more than 95% used AND room for fewer than O4_fra_free archived logs of the database's largest
        # online log (a 20 TB area at 95% has room for hundreds). No time-to-full page: an RMAN backup
        # into the area is a step that keeps a 6-hour deriv positive for hours after it ended.
        dict(alert="OracleRecoveryAreaFull", ids=["O4_fra_crit", "O4_fra_free"], layer="oracle", dashboard="oracle-capacity",
             doc="The fast recovery area is more than ${O4_fra_crit|pct} full net of reclaimable files AND its free "
                 "space (limit - used + reclaimable) holds fewer than ${O4_fra_free} more archived logs of the "
                 "database's largest online log: the next logs do not fit, archiving stops (ORA-19809). Where the "
                 "online log size is not collected (no oracle_redo_log_group_size_bytes for the database), it pages "
                 "at more than ${O4_fra_crit.floor.no_redo_size|pct} full net of reclaimable files instead.",
             expr="(\n" + R.RECOVERY_AREA_USED + " > ${O4_fra_crit}\n"
                  "and on (" + cfg.by("database") + ")\n" + fra_free + "\n"
                  "  < on (" + cfg.by("database") + ") (max by (" + cfg.by("database") + ") ("
                  + _gauge("oracle_redo_log_group_size_bytes") + ") * ${O4_fra_free})\n)\n"
                  # fix2 #5: without the redo collector (no online log size) the absolute test cannot be
                  # made: page on a nearly full area with (next to) nothing reclaimable instead
                  "or\n(\n" + R.RECOVERY_AREA_USED + " > ${O4_fra_crit.floor.no_redo_size}\n"
                  "unless on (" + cfg.by("database") + ")\n"
                  "max by (" + cfg.by("database") + ") (" + _gauge("oracle_redo_log_group_size_bytes") + ")\n)",
             summary="The recovery area of {{ $labels.database }} is nearly full",
             description="The fast recovery area of {{ $labels.database }} is {{ $value | humanizePercentage }} full, net of "
                         "reclaimable files (threshold ${O4_fra_crit|pct}), and its free space holds fewer than "
                         "${O4_fra_free} more archived logs of its largest online log (O4): archiving is about to stop "
                         "(ORA-19809), then commits (R15). Back up and delete archived logs, or raise "
                         "DB_RECOVERY_FILE_DEST_SIZE (within the space of its disk group or file system)."),
        dict(alert="OracleAsmDiskgroupSpaceLow", ids=["O4_asm"], layer="oracle", dashboard="oracle-capacity",
             doc="The space left for files of an ASM disk group (oracle_asm_diskgroup_file_space_bytes: USABLE_FILE_MB, "
                 "free per copy or raw free by type, see space_basis) is below ${O4_asm|pct} of the group's size in the "
                 "same basis (oracle_asm_diskgroup_file_capacity_bytes); one alert per "
                 "(asm_cluster, diskgroup) whichever databases see it. The reclaimable files of the fast recovery areas "
                 "that live in the disk group (oracle_recovery_area_info{diskgroup}) count as free: Oracle deletes them "
                 "when an FRA needs room, so a recovery-area disk group full of them by design does not ticket. "
                 "A ticket: the page is the time to full.",
             expr="(\n"
                  "  " + dg_ratio + "\n"
                  "  + on (" + dg_one + ") group_left ()\n"
                  "  (" + R.FRA_RECLAIMABLE_IN_DISKGROUP + " / on (" + dg_one + ") " + dg_total + ")\n"
                  "  or\n"
                  "  " + dg_ratio + "\n"
                  ") < ${O4_asm}",
             summary="ASM disk group {{ $labels.diskgroup }} ({{ $labels.asm_cluster }}) is low on space for files",
             description="ASM disk group {{ $labels.diskgroup }} of cluster {{ $labels.asm_cluster }} "
                         "({{ $labels.type }}) has {{ $value | humanizePercentage }} of its size left for files, judged "
                         "on {{ $labels.space_basis }} (threshold ${O4_asm|pct}, O4). usable_file is Oracle's "
                         "USABLE_FILE_MB: negative means that were a failure group lost now, ASM could not restore full "
                         "redundancy (nothing has failed; files still grow until the free space runs out). "
                         "free_per_copy: a NORMAL/HIGH group with no more failure groups than copies. raw_free: a FLEX "
                         "or EXTEND group, for which Oracle computes no USABLE_FILE_MB."),
        dict(alert="OracleAsmDiskgroupSpaceLow", ids=["O4_asm_fill"], layer="oracle", dashboard="oracle-capacity",
             labels={"cause": "time_to_full"},
             doc="At the rate of the last 6 hours (predict_linear) an ASM disk group's free space (FREE_MB) runs out "
                 "within ${O4_asm_fill|dur}; one alert per (asm_cluster, diskgroup).",
             expr="min by (" + dg_one + ", type) (\n"
                  "  (\n"
                  "    max by (" + dg_db + ") (" + _gauge("oracle_asm_diskgroup_free_bytes") + ")\n"
                  "    / (-max by (" + dg_db + ") (deriv(oracle_asm_diskgroup_free_bytes[6h])) > 0)\n"
                  "    and on (" + dg_db + ")\n"
                  "    max by (" + dg_db + ") (predict_linear(oracle_asm_diskgroup_free_bytes[6h], ${O4_asm_fill})) < 0\n"
                  "  )\n"
                  "  * on (" + dg_db + ") group_left (asm_cluster, type) " + dg_info + "\n"
                  ") < ${O4_asm_fill}",
             summary="ASM disk group {{ $labels.diskgroup }} ({{ $labels.asm_cluster }}) will be full within hours",
             description="At the rate of the last 6 hours the free space of ASM disk group {{ $labels.diskgroup }} of "
                         "cluster {{ $labels.asm_cluster }} ({{ $labels.type }}) runs out in "
                         "{{ $value | humanizeDuration }} (threshold ${O4_asm_fill|dur}, O4): then no database on it "
                         "can extend a file, archive redo or, soon after, commit. Add disks or stop the writer now."),
        # rev23 #3: a full disk group keeps paging: the time-to-full page ends once FREE_MB stops changing
        # (a full group does not change), this one holds while it is full
        dict(alert="OracleAsmDiskgroupSpaceLow", ids=["O4_asm_free"], layer="oracle", dashboard="oracle-capacity",
             labels={"cause": "no_space"},
             doc="An ASM disk group's free space (FREE_MB, raw; plus the reclaimable files of the recovery areas in "
                 "it) is below ${O4_asm_free|bytes} and the group is more than ${O4_asm_free.floor.used|pct} used "
                 "(FREE_MB/TOTAL_MB): files cannot extend now. It pages as long as the group stays "
                 "full (the time-to-full page ends when the free space stops changing).",
             expr="(\n"
                  "  " + asm_free + "\n"
                  "  + on (" + dg_one + ") group_left ()\n"
                  "  " + R.FRA_RECLAIMABLE_IN_DISKGROUP + "\n"
                  "  or\n"
                  "  " + asm_free + "\n"
                  ") < ${O4_asm_free}\n"
                  # fix2 #4: a small group (a 2 GiB OCR/voting group) with little in it does not page
                  "and on (" + dg_one + ")\n"
                  "(" + asm_used + ") > ${O4_asm_free.floor.used}",
             summary="ASM disk group {{ $labels.diskgroup }} ({{ $labels.asm_cluster }}) is full",
             description="ASM disk group {{ $labels.diskgroup }} of cluster {{ $labels.asm_cluster }} "
                         "({{ $labels.type }}) has {{ $value | humanize1024 }}B free (FREE_MB with the reclaimable "
                         "files of recovery areas in it; threshold ${O4_asm_free|bytes}, O4): no database on it can "
                         "extend a file (ORA-01653, ORA-15041), archive redo there or, soon after, commit. Add "
                         "disks (ALTER DISKGROUP ... ADD DISK) or move or delete files now."),
        dict(alert="OracleAsmDiskOffline", ids=["O4_asm_offline"], layer="oracle", dashboard="oracle-capacity",
             expr="max by (" + cfg.by("database", "diskgroup") + ") (" + _gauge("oracle_asm_diskgroup_offline_disks") + ") > ${O4_asm_offline}",
             summary="ASM disk group {{ $labels.diskgroup }} ({{ $labels.database }}) has offline disks",
             description="{{ $value }} disks of ASM disk group {{ $labels.diskgroup }} seen by {{ $labels.database }} are "
                         "offline (O4): the group runs without its redundancy until they are back."),
        # issue 23: a disk group remembered by a recording rule (records.DISKGROUPS_EXPECTED) that is
        # gone from the databases' view: one alert per (asm_cluster, diskgroup), the databases counted
        dict(alert="OracleAsmDiskgroupVanished", ids=["O4_asm_vanished"], layer="oracle", dashboard="oracle-capacity",
             expr="count by (" + dg_one + ") (\n"
                  "  " + R.DISKGROUPS_EXPECTED + "\n"
                  "  unless on (" + dg_db + ") " + _gauge("oracle_asm_diskgroup_info") + "\n"
                  "  and on (" + cfg.by("database") + ") " + _gauge("oracle_up") + " == 1\n"
                  "  unless on (" + cfg.by("database") + ") max by (" + cfg.by("database") + ") ("
                  + _gauge("oracle_collector_success{collector=\"asm\"}") + ") == 0\n"
                  ") > ${O4_asm_vanished}",
             summary="ASM disk group {{ $labels.diskgroup }} ({{ $labels.asm_cluster }}) is gone",
             description="{{ $value }} database(s) that saw ASM disk group {{ $labels.diskgroup }} of cluster "
                         "{{ $labels.asm_cluster }} no longer do (V$ASM_DISKGROUP_STAT) while they answer (O4): the "
                         "group was dismounted (a lost disk beyond its redundancy, an ASM instance problem) or dropped. "
                         "Files in it are unreachable: an FRA there stops archiving (ORA-19809), data files go offline. "
                         "This stays firing until the group is mounted again; a group dropped on purpose is forgotten "
                         "by deleting its " + R.DISKGROUPS_EXPECTED + " series (runbook)."),
        dict(alert="OracleDataGuardLag", ids=["O5_lag"], layer="oracle", dashboard="oracle-wallboard",
             doc="A standby's transport lag, or its apply lag beyond the apply delay it is configured with "
                 "(oracle_dataguard_apply_delay_seconds), is above ${O5_lag|dur}. The apply lag is not judged while "
                 "apply is stopped (OracleDataGuardApplyStopped says so) nor on a snapshot standby (no apply by design).",
             expr="(\n"
                  "  max by (" + cfg.by("database", "kind") + ") (" + _gauge("oracle_dataguard_lag_seconds{kind!=\"apply\"}") + ")\n"
                  "  or\n"
                  "  " + _apply_lag_beyond_delay(cfg) + "\n"
                  ") > ${O5_lag}",
             summary="Standby {{ $labels.database }} is {{ $labels.kind }}-lagging",
             description="The {{ $labels.kind }} lag of standby {{ $labels.database }} is {{ $value | humanizeDuration }} "
                         "beyond its configured apply delay (none for transport) (threshold ${O5_lag|dur}, O5): transport "
                         "lag is redo lost on failover, apply lag is time to apply first."),
        dict(alert="OracleDataGuardApplyStopped", ids=["O5_apply_stopped"], layer="oracle", dashboard="oracle-wallboard",
             doc="A physical or logical standby runs no redo apply on any instance (oracle_dataguard_apply_running "
                 "0: no MRP0 / LSP0 in GV$PROCESS) for ${O5_apply_stopped.for}; not on a snapshot standby, not on a primary.",
             expr="max by (" + cfg.by("database") + ") (" + _gauge("oracle_dataguard_apply_running") + ") == ${O5_apply_stopped}\n"
                  "unless on (" + cfg.by("database") + ")\n"
                  + _gauge("oracle_dataguard_snapshot_standby") + " == 1",
             summary="Standby {{ $labels.database }} is not applying redo",
             description="No instance of standby {{ $labels.database }} runs redo apply (oracle_dataguard_apply_running "
                         "= {{ $value }}, no MRP0 for ${O5_apply_stopped.for}; O5): redo is received but not applied, "
                         "so a failover must apply all of it first, and its apply lag is not judged meanwhile."),
        dict(alert="OracleDataGuardLagNotComputed", ids=["O5_lag_not_computed"], layer="oracle", dashboard="oracle-wallboard",
             labels={"cause": "not_computed"},
             doc="A standby's transport or apply lag row has no value (lag_computed 0); the apply lag not while apply is "
                 "stopped (OracleDataGuardApplyStopped) nor on a snapshot standby.",
             expr="max by (" + cfg.by("database", "kind") + ") (" + _gauge("oracle_dataguard_lag_computed") + ") == ${O5_lag_not_computed}\n"
                  "unless on (" + cfg.by("database", "kind") + ") (\n"
                  "  " + _apply_not_judged(cfg) + "\n"
                  ")",
             summary="Standby {{ $labels.database }} no longer computes its {{ $labels.kind }} lag",
             description="Standby {{ $labels.database }} reports no {{ $labels.kind }} lag value (lag_computed = {{ $value }}, "
                         "O5): it lost contact with the primary or apply stopped; a missing lag is not a zero lag."),
        dict(alert="OracleDataGuardLagNotComputed", ids=["O5_lag_stale"], layer="oracle", dashboard="oracle-wallboard",
             labels={"cause": "stale"},
             expr="max by (" + cfg.by("database", "kind") + ") (" + _gauge("oracle_dataguard_lag_datum_age_seconds") + ") > ${O5_lag_stale}",
             summary="Standby {{ $labels.database }} computes its {{ $labels.kind }} lag from stale data",
             description="The {{ $labels.kind }} lag of standby {{ $labels.database }} is computed from data "
                         "{{ $value | humanizeDuration }} old (threshold ${O5_lag_stale|dur}, O5): the standby is not "
                         "receiving redo and its small lag figure is stale."),
        dict(alert="OracleArchiveDestinationError", ids=["O5_archive_dest"], layer="oracle", dashboard="oracle-redo",
             # a NOARCHIVELOG database archives nowhere: its destinations' state means nothing. `unless`
             # (not `and ... ARCHIVELOG`) so that a missing oracle_database_info does not silence it.
             expr="max by (" + cfg.by("database", "inst_id", "dest_name") + ") (" + _gauge("oracle_archive_dest_error") + ") == ${O5_archive_dest}\n"
                  "unless on (" + cfg.by("database") + ")\n"
                  + _gauge("oracle_database_info{log_mode=\"NOARCHIVELOG\"}"),
             summary="Archive destination {{ $labels.dest_name }} of {{ $labels.database }} is in error",
             description="Archive destination {{ $labels.dest_name }} of " + _DB + " is in error "
                         "(oracle_archive_dest_error = {{ $value }}; O5, R15): redo is not archived there; "
                         "see oracle_archive_dest_info for the status and ORA- error."),

    ]


def _apply_not_judged(cfg: Config) -> str:
    """Issue 22: the apply lag (kind="apply") of a standby whose apply is stopped (that is
    OracleDataGuardApplyStopped's finding) or that is a snapshot standby (no apply by design):
    a selector of series with labels (database, kind="apply") to `unless` away."""
    db = cfg.by("database")
    return ("max by (" + cfg.by("database", "kind") + ") (" + _gauge("oracle_dataguard_lag_computed{kind=\"apply\"}") + ")\n"
            "  and on (" + db + ") (\n"
            "    max by (" + db + ") (" + _gauge("oracle_dataguard_apply_running") + ") == 0\n"
            "    or max by (" + db + ") (" + _gauge("oracle_dataguard_snapshot_standby") + ") == 1\n"
            "  )")


def _apply_lag_beyond_delay(cfg: Config) -> str:
    """Issue 22: the apply lag beyond the configured apply delay (0 when the standby exports no
    delay), not while apply is stopped nor on a snapshot standby."""
    db, dbk = cfg.by("database"), cfg.by("database", "kind")
    return ("(\n"
            "    max by (" + dbk + ") (" + _gauge("oracle_dataguard_lag_seconds{kind=\"apply\"}") + ")\n"
            "    - on (" + db + ") group_left ()\n"
            "    (\n"
            "      max by (" + db + ") (" + _gauge("oracle_dataguard_apply_delay_seconds") + ")\n"
            "      or max by (" + db + ") (" + _gauge("oracle_dataguard_lag_seconds{kind=\"apply\"}") + ") * 0\n"
            "    )\n"
            "    unless on (" + db + ") (\n"
            "      max by (" + db + ") (" + _gauge("oracle_dataguard_apply_running") + ") == 0\n"
            "      or max by (" + db + ") (" + _gauge("oracle_dataguard_snapshot_standby") + ") == 1\n"
            "    )\n"
            "  )")


def _efficiency(cfg: Config) -> list[dict]:
    """Instance efficiency."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    return [
        dict(alert="OracleLatchHitRatioLow", ids=["I1"], layer="oracle", dashboard="oracle-waits",
             expr=R.LATCH_HIT_RATIO + " < ${I1}\n"
                  "and on (" + cfg.by("database", "inst_id") + ")\n" +
                  R.LATCH_GETS + " >= ${I1.floor.gets}",
             summary="Latch hit ratio below ${I1|pct} on " + _DB,
             description="The latch hit ratio (all latches) is {{ $value | humanizePercentage }} on " + _DB +
                         " (I1: about ${I1|pct} is normal, ${I1_red|pct} a red flag)."),
        dict(alert="OracleLatchHitRatioLow", ids=["I1_red", "I1"], layer="oracle", dashboard="oracle-waits",
             doc="Latch hit ratio below ${I1_red|pct} (the red flag), with the I1 traffic floor.",
             expr=R.LATCH_HIT_RATIO + " < ${I1_red}\n"
                  "and on (" + cfg.by("database", "inst_id") + ")\n" +
                  R.LATCH_GETS + " >= ${I1.floor.gets}",
             summary="Latch hit ratio below ${I1_red|pct} on " + _DB,
             description="The latch hit ratio (all latches) is {{ $value | humanizePercentage }} on " + _DB +
                         " (I1: ${I1_red|pct} is the red flag)."),
        dict(alert="OracleDbFileSequentialReadSlow", ids=["I2"], layer="oracle", dashboard="oracle-waits",
             expr=R.WAIT_AVG + "{event=\"db file sequential read\"} > ${I2}\n"
                  "and on (" + cfg.by("database", "inst_id", "event") + ")\n" +
                  R.WAITS + "{event=\"db file sequential read\"} >= ${I2.floor.waits}",
             summary="Single-block reads are slow on " + _DB,
             description="'db file sequential read' averages {{ $value | humanizeDuration }} on " + _DB +
                         " (threshold ${I2|dur}, I2: 10ms is normal for spinning disks, 0.4-0.6ms for SSD caches)."),
        dict(alert="OraclePgaOverAllocation", ids=["M4"], layer="oracle", dashboard="oracle-memory",
             labels={"cause": "allocated_over_target"},
             expr=R.PGA_ALLOCATED_TO_TARGET + " > ${M4}",
             summary="PGA allocated exceeds pga_aggregate_target on " + _DB,
             description="PGA allocated is {{ $value | humanizePercentage }} of pga_aggregate_target on " + _DB +
                         " (M4: over-allocation leads to ORA-4030)."),
        dict(alert="OraclePgaOverAllocation", ids=["M4"], layer="oracle", dashboard="oracle-memory", for_="0s",
             labels={"cause": "over_allocation_count"},
             doc="The GV$PGASTAT 'over allocation count' grew by at least ${M4.floor.increase} in 15 minutes.",
             expr="sum by (" + cfg.by("database", "inst_id") + ") (increase(oracle_pga_over_allocation_count_total[15m])) >= ${M4.floor.increase}",
             summary="PGA over-allocation count increasing on " + _DB,
             description="The PGA 'over allocation count' grew by {{ $value | printf \"%.0f\" }} in 15 minutes on " + _DB +
                         " (M4: the target is too small for the work areas; ORA-4030 follows)."),

    ]


def _host(cfg: Config) -> list[dict]:
    """Host CPU and memory."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    return [
        dict(alert="HostRunQueueSaturated", ids=["C1"], layer="host", dashboard="host-cpu",
             expr=R.RUN_QUEUE_PER_CPU + " >= ${C1}\n"
                  "and on (" + cfg.join("instance") + ")\n" +
                  R.HOST_INVOLUNTARY_SHARE + " >= ${C1.floor.involuntary_share}\n"
                  "and on (" + cfg.join("instance") + ")\n" +
                  R.HOST_INVOLUNTARY + " >= ${C1.floor.involuntary_rate}",
             summary="CPU run queue saturated on {{ $labels.instance }}",
             description="{{ $value | printf \"%.2f\" }} runnable processes per CPU on {{ $labels.instance }} with at least "
                         "${C1.floor.involuntary_share|pct} of Oracle context switches involuntary, and at least ${C1.floor.involuntary_rate}/s (C1: >= ${C1} per CPU plus involuntary switches is a CPU bottleneck)."),
        dict(alert="HostSystemCpuDominant", ids=["C4"], layer="host", dashboard="host-cpu",
             expr=R.CPU_SYSTEM_SHARE_OF_BUSY + " > ${C4}\n"
                  "and on (" + cfg.join("instance") + ")\n" +
                  R.CPU_SYSTEM_SHARE + " > ${C4.floor.system_share}",
             summary="Kernel time dominates busy CPU on {{ $labels.instance }}",
             description="System CPU is {{ $value | humanizePercentage }} of busy CPU on {{ $labels.instance }} "
                         "(threshold ${C4|pct}, C4; and above the ${C4.floor.system_share|pct} of all CPU an ideal system stays below, C2)."),
        dict(alert="HostMajorPageFaultRatioHigh", ids=["M2"], layer="host", dashboard="oracle-memory",
             expr=R.MAJOR_FAULT_RATIO + " > ${M2}\n"
                  "and on (" + cfg.join("instance") + ")\n" +
                  R.MAJOR_FAULTS + " >= ${M2.floor.majfaults}",
             summary="Major page faults are high on {{ $labels.instance }}",
             description="{{ $value | humanizePercentage }} of page faults on {{ $labels.instance }} are major faults "
                         "(threshold ${M2|pct}, M2)."),
        dict(alert="HostSwapping", ids=["M3"], layer="host", dashboard="oracle-memory",
             expr=R.SWAP_PAGES + " > ${M3.floor.rate}",
             summary="{{ $labels.instance }} is swapping",
             description="{{ $value | printf \"%.3g\" }} pages/s swapped in and out on {{ $labels.instance }} "
                         "(M3: a swapping host needs more memory; noise floor ${M3.floor.rate} pages/s)."),

    ]


def _shm(cfg: Config) -> list[dict]:
    """Shared memory, huge pages (M5, M1)."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    return [
        dict(alert="HostShmallBelowSga", ids=["M5"], layer="host", dashboard="oracle-memory",
             expr=R.SGA_ON_HOST + "\n"
                  "  / on (" + cfg.join("instance") + ") group_left () (max by (" + cfg.by("instance") + ") (" + _gauge("dbhost_kernel_shmall_bytes") + ") > 0)\n"
                  "> ${M5}",
             summary="The SGAs on {{ $labels.instance }} do not fit kernel.shmall",
             description="The sga_target of the Oracle instances running on {{ $labels.instance }} add up to "
                         "{{ $value | humanizePercentage }} of kernel.shmall (M5): the next instance that restarts "
                         "fails with ORA-27102 (out of memory). Raise kernel.shmall (pages) above the SGAs."),
        dict(alert="HostHugePagesBelowSga", ids=["M5_hugepages"], layer="host", dashboard="oracle-memory",
             expr=R.SGA_ON_HOST + "\n"
                  "  / on (" + cfg.join("instance") + ") group_left () (\n"
                  "    max by (" + cfg.by("instance") + ") (" + _gauge("dbhost_memory_hugepages{state=\"total\"}") + ")\n"
                  "    * on (" + cfg.join("instance") + ") max by (" + cfg.by("instance") + ") (" + _gauge("dbhost_memory_hugepage_size_bytes") + ")\n"
                  "    > 0\n"
                  "  )\n"
                  "> ${M5_hugepages}",
             summary="The SGAs on {{ $labels.instance }} do not fit its huge pages",
             description="The sga_target of the Oracle instances running on {{ $labels.instance }} add up to "
                         "{{ $value | humanizePercentage }} of the huge pages configured there (M5, M1): an SGA that "
                         "does not fit falls back to small pages (use_large_pages=TRUE; the TLB misses of M1) or does "
                         "not start (ONLY). Raise vm.nr_hugepages above the SGAs."),

    ]


def _luns(cfg: Config) -> list[dict]:
    """LUNs."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    return [
        dict(alert="LunHostQueueBacklog", ids=["Q2"], layer="storage", dashboard="host-storage",
             labels={"cause": "host_queue"},
             expr=R.LUN_HOST_QUEUE + " > ${Q2}",
             summary="I/O requests pile up in the host queue of {{ $labels.device }} on {{ $labels.instance }}",
             description="{{ $value | printf \"%.1f\" }} requests wait in the host queue of {{ $labels.device }} on {{ $labels.instance }} "
                         "on average (threshold ${Q2}, Q2): the LUN queue depth is too low for the load."),
        dict(alert="LunHostQueueBacklog", ids=["Q2_full"], layer="storage", dashboard="host-storage",
             labels={"cause": "lun_queue_full"},
             doc="${Q2_full|pct} or more of the samples found the LUN queue full (in flight >= queue_depth) on a "
                 "device whose host queue the kernel does not show (dbhost_lun_host_queue_visible 0 or absent).",
             expr=R.LUN_QUEUE_FULL_SHARE + " >= ${Q2_full}\n"
                  "unless on (" + cfg.join("instance", "device") + ")\n"
                  "max by (" + cfg.by("instance", "device") + ") (" + _gauge("dbhost_lun_host_queue_visible") + ") == 1",
             summary="The LUN queue of {{ $labels.device }} on {{ $labels.instance }} is full most of the time",
             description="The LUN queue of {{ $labels.device }} on {{ $labels.instance }} was full in {{ $value | humanizePercentage }} "
                         "of the samples (threshold ${Q2_full|pct}, Q2); this kernel does not show the host queue "
                         "(dbhost_lun_host_queue_visible), so requests arriving now wait there unseen: the LUN queue depth is too low for the load."),
        dict(alert="LunQueueDepthThrottled", ids=["Q3"], layer="storage", dashboard="host-storage",
             expr="max by (" + cfg.by("instance", "device") + ") (" + _gauge("dbhost_lun_queue_depth") + ") <= ${Q3}\n"
                  "and on (" + cfg.join("instance", "device") + ") (\n"
                  "  " + R.LUN_QUEUE_FULL_SHARE + " >= ${Q3.floor.queue_full_share}\n"
                  "  or\n"
                  "  " + R.LUN_HOST_QUEUE + " >= ${Q3.floor.host_queue}\n"
                  ")",
             summary="LUN {{ $labels.device }} on {{ $labels.instance }} is throttled by its queue depth",
             description="{{ $labels.device }} on {{ $labels.instance }} has queue_depth {{ $value }} (Q3: ${Q3} or less is "
                         "too low; the driver default and maximum is 256) and its queue fills up under load."),
        dict(alert="LunWriteLatencyHigh", ids=["R17_write"], layer="storage", dashboard="host-storage",
             expr=R.DISK_WRITE_LATENCY + "{role=\"redo\"} > ${R17_write}\n"
                  "and on (" + cfg.join("instance", "device") + ")\n" +
                  R.DISK_WRITES + " >= ${R17_write.floor.ops}",
             summary="Writes to {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
             description="Writes to {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                         "{{ $value | humanizeDuration }} on average (threshold ${R17_write|dur}, R17)."),
        dict(alert="LunWriteLatencyHigh", ids=["R17_other"], layer="storage", dashboard="host-storage",
             doc="Average write service time of a data or arch LUN above ${R17_other|dur} (R17's 2 ms is for redo LUNs; "
                 "I2: disks serve 9-10 ms).",
             expr=R.DISK_WRITE_LATENCY + "{role=~\"data|arch\"} > ${R17_other}\n"
                  "and on (" + cfg.join("instance", "device") + ")\n" +
                  R.DISK_WRITES + " >= ${R17_other.floor.ops}",
             summary="Writes to {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
             description="Writes to {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                         "{{ $value | humanizeDuration }} on average (threshold ${R17_other|dur} for data/arch LUNs, R17/I2; "
                         "redo LUNs alert at ${R17_write|dur})."),
        dict(alert="LunReadLatencyHigh", ids=["R17_read"], layer="storage", dashboard="host-storage",
             expr=R.DISK_READ_LATENCY + "{role=\"redo\"} > ${R17_read}\n"
                  "and on (" + cfg.join("instance", "device") + ")\n" +
                  R.DISK_READS + " >= ${R17_read.floor.ops}",
             summary="Reads from {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
             description="Reads from {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                         "{{ $value | humanizeDuration }} on average (threshold ${R17_read|dur}, R17; ARCH reads compete with LGWR, R7)."),
        dict(alert="LunReadLatencyHigh", ids=["I2", "R17_read"], layer="storage", dashboard="host-storage",
             labels={"class": "disk"},
             doc="Average read service time of a data or arch LUN above ${I2|dur} (I2: 9-10 ms is normal for spinning disks); "
                 "LUNs the config calls flash are judged by I2_flash.",
             expr=R.DISK_READ_LATENCY + "{role=~\"data|arch\"} > ${I2}\n"
                  "and on (" + cfg.join("instance", "device") + ")\n" +
                  R.DISK_READS + " >= ${R17_read.floor.ops}\n"
                  "unless on (" + cfg.join("instance", "device") + ")\n"
                  "(" + cfg.flash_lun_info() + ")",
             summary="Reads from {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
             description="Reads from {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                         "{{ $value | humanizeDuration }} on average (threshold ${I2|dur}, I2: 9-10ms is normal for spinning disks)."),
        dict(alert="LunReadLatencyHigh", ids=["I2_flash", "R17_read"], layer="storage", dashboard="host-storage",
             labels={"class": "flash"},
             doc="Average read service time of a data or arch flash LUN (dbhost_lun_info matching the config's flash_luns) "
                 "above ${I2_flash|dur} (I2: flash serves 0.4-0.6 ms; 10 ms there is a 20x regression).",
             expr=R.DISK_READ_LATENCY + "{role=~\"data|arch\"} > ${I2_flash}\n"
                  "and on (" + cfg.join("instance", "device") + ")\n" +
                  R.DISK_READS + " >= ${R17_read.floor.ops}\n"
                  "and on (" + cfg.join("instance", "device") + ")\n"
                  "(" + cfg.flash_lun_info() + ")",
             summary="Reads from flash {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
             description="Reads from flash {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                         "{{ $value | humanizeDuration }} on average (threshold ${I2_flash|dur}, I2: flash serves 0.4-0.6ms)."),
        # alertfix #6/#7 (review "alerts" findings 6, 7): the LUN latency alerts join node_exporter's disk
        # statistics with dbhost-exporter's LUN roles on (instance, device); with the two jobs' instance
        # labels differing (host:port), no diskstats collector, or Solaris, the join is empty and they
        # never fire, silently. Not while the host's node_exporter is down (NodeExporterDown says it).
        dict(alert="LunLatencyUnmeasured", ids=["R17_unmeasured"], layer="storage", dashboard="host-storage",
             doc="A redo, data or arch LUN of dbhost_lun_info has no node_exporter disk statistics with the same "
                 "instance and device (" + R.DISK_WRITES + ") for ${R17_unmeasured.for}, and no node_exporter "
                 "target of that instance is down: the LUN latency alerts (R17) cannot judge it.",
             expr="(\n"
                  "  group by (" + cfg.by("instance", "device", "role") + ") ("
                  + _gauge("dbhost_lun_info{role=~\"redo|data|arch\"}") + ")\n"
                  "  unless on (" + cfg.join("instance", "device") + ") " + R.DISK_WRITES + "\n"
                  "  unless on (" + cfg.join("instance") + ") (up{" + cfg.selector("node") + "} == 0)\n"
                  ") >= ${R17_unmeasured}",
             summary="No latency is measured for {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }}",
             description="dbhost-exporter on {{ $labels.instance }} reports {{ $labels.role }} LUN {{ $labels.device }}, "
                         "and no node_exporter disk statistics of instance {{ $labels.instance }} and device "
                         "{{ $labels.device }} exist ({{ $value }} LUN unmeasured for ${R17_unmeasured.for}, R17): LunWriteLatencyHigh and LunReadLatencyHigh cannot fire "
                         "for it. node_exporter's `instance` must be the same host name as dbhost-exporter's "
                         "(relabel the port away on both jobs); on Solaris node_exporter has no diskstats."),
        # review host #4: on an ALUA standby (or unavailable) port the multipathd TUR checker's TEST UNIT
        # READY fails with NOT READY every polling interval, and ioerr_cnt counts it: not a finding
        dict(alert="LunIoErrors", ids=["Q4"], layer="storage", dashboard="host-storage",
             expr="sum by (" + cfg.by("instance", "device") + ") (increase(dbhost_lun_ioerrors_total[15m])) > ${Q4}\n"
                  "unless on (" + cfg.join("instance", "device") + ")\n"
                  "max by (" + cfg.by("instance", "device") + ") (max_over_time("
                  "dbhost_scsi_device_access_state{state=~\"standby|unavailable|transitioning\"}[15m])) == 1",
             summary="SCSI command errors on {{ $labels.device }} on {{ $labels.instance }}",
             description="{{ $value | printf \"%.0f\" }} SCSI commands to {{ $labels.device }} on {{ $labels.instance }} failed "
                         "in the last 15 minutes (device/ioerr_cnt; Q4: a queue depth too high for the array shows up as "
                         "errors and resets; so do failing paths and HBAs)."),

    ]


def _paths(cfg: Config) -> list[dict]:
    """Paths: dm-multipath, NVMe (O6)."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    ic = cfg.by("instance", "controller")
    # rev23 #14d: the share of the scrapes of 30 minutes in which the controller was not live (each
    # scrape has one state series at 1: the current one)
    nvme_share = ("(\n"
                  "  sum by (" + ic + ") (sum_over_time(dbhost_nvme_controller_state{state!=\"live\"}[30m]))\n"
                  "  / (sum by (" + ic + ") (sum_over_time(dbhost_nvme_controller_state[30m])) > 0)\n"
                  ")")
    return [
        # issue 23: the paths a map is expected to have are remembered (records.PATHS_EXPECTED): a path
        # multipathd removed from the map (dev_loss_tmo) still counts, with no look-back to forget it;
        # a planned reduction (paths removed while running) is re-based once stable
        dict(alert="LunPathRedundancyLost", ids=["O6_paths"], layer="storage", dashboard="host-storage",
             expr="(\n"
                  "  " + R.PATHS_EXPECTED + "\n"
                  "    - " + R.PATHS_ACTIVE + " > ${O6_paths}\n"
                  "  and on (" + cfg.join("instance", "device") + ") " + R.PATHS_ACTIVE + " > 0\n"
                  ")\n"
                  "* on (" + cfg.join("instance", "device") + ") group_left (role) " + R.LUN_ROLE + "{role=~\"redo|data\"}",
             summary="{{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} lost multipath redundancy",
             description="{{ $value }} of the paths {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} is "
                         "expected to have carry no I/O now (O6): it still serves I/O, at reduced bandwidth and without "
                         "redundancy; the next path failure stops it. This stays firing until the paths are back; a "
                         "planned reduction is declared by deleting the map's " + R.PATHS_EXPECTED + " series "
                         "(runbook), which then learns the new count."),
        dict(alert="LunAllPathsDown", ids=["O6_paths_none"], layer="storage", dashboard="host-storage",
             expr="(\n"
                  "  " + R.PATHS_EXPECTED + " > 0\n"
                  "  and on (" + cfg.join("instance", "device") + ") " + R.PATHS_ACTIVE + " == ${O6_paths_none}\n"
                  ")\n"
                  "* on (" + cfg.join("instance", "device") + ") group_left (role) " + R.LUN_ROLE + "{role=~\"redo|data|arch\"}",
             summary="No path of {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} carries I/O",
             description="None of the {{ $value }} paths {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} is "
                         "expected to have carries I/O (O6): its I/O is queued (queue_if_no_path) or fails; a redo LUN "
                         "stops every commit."),
        dict(alert="LunMultipathSuspended", ids=["O6_suspended"], layer="storage", dashboard="host-storage",
             expr="(max by (" + cfg.by("instance", "device") + ") (" + _gauge("dbhost_multipath_suspended") + ") == ${O6_suspended})\n"
                  "* on (" + cfg.join("instance", "device") + ") group_left (role) " + R.LUN_ROLE + "{role=~\"redo|data|arch\"}",
             summary="Multipath map {{ $labels.device }} ({{ $labels.role }}) on {{ $labels.instance }} stays suspended",
             description="The device-mapper map {{ $labels.device }} ({{ $labels.role }} LUN) on {{ $labels.instance }} has been "
                         "suspended for ${O6_suspended.for} (dm/suspended = {{ $value }}, O6): every I/O to it is held. A "
                         "map reload that never resumed; `dmsetup resume` it."),
        dict(alert="NvmeControllerNotLive", ids=["O6_nvme", "O6_nvme_flap"], layer="storage", dashboard="host-storage",
             # issue 23: `state` is not in the alert's identity: a controller cycling between resetting,
             # connecting and dead is one alert whose `for` runs on; the current state is read by the text.
             # rev23 #14d: a controller live for a moment every few minutes (the live sample kept the
             # condition off for 3 of every 5 minutes) is caught by its share of not-live scrapes.
             doc="An NVMe controller has not been `live` for ${O6_nvme.for} (whatever non-live states it cycles "
                 "through; the state is named in the text, not in the alert's labels), or it was not live in more "
                 "than ${O6_nvme_flap|pct} of the scrapes of 30 minutes and at some scrape of the last 5 (it keeps "
                 "dropping out and coming back). The value is the not-live share of 30 minutes.",
             expr=nvme_share + "\n"
                  "and on (" + ic + ") (\n"
                  "  max by (" + ic + ") (" + _gauge("dbhost_nvme_controller_state{state!=\"live\"}") + ") == ${O6_nvme}\n"
                  "  unless on (" + ic + ")\n"
                  "  max by (" + ic + ") (" + _gauge("dbhost_nvme_controller_state{state=\"live\"}") + ") == 1\n"
                  "  or\n"
                  "  " + nvme_share + " > ${O6_nvme_flap}\n"
                  "  and on (" + ic + ") max by (" + ic + ") (max_over_time(dbhost_nvme_controller_state{state!=\"live\"}[5m])) == 1\n"
                  ")",
             summary="NVMe controller {{ $labels.controller }} on {{ $labels.instance }} is not live (now: " + NVME_STATE + ")",
             description="NVMe controller {{ $labels.controller }} on {{ $labels.instance }} has not been live for "
                         "${O6_nvme.for}, or keeps dropping out (not live in {{ $value | humanizePercentage }} of the "
                         "scrapes of 30 minutes, threshold ${O6_nvme_flap|pct}; now '" + NVME_STATE + "'; O6): its "
                         "namespaces carry no I/O through it while it is down; with native multipath the namespace runs "
                         "on its other paths (LunPathRedundancyLost), without it the disk is gone. A controller that "
                         "flaps fails its I/O over again and again: check the fabric or PCIe link (dmesg: nvme reset)."),
    ]


def _zfs(cfg: Config) -> list[dict]:
    """ZFS."""
    oracle, hosts, every_job, target, limited, paths_had, paths_active, r13 = _shared(cfg)  # noqa: F841
    return [
        dict(alert="ZfsL2arcErrors", ids=["Z4"], layer="zfs", dashboard="host-zfs",
             expr="sum by (" + cfg.by("instance", "kind") + ") (increase(dbhost_zfs_l2arc_errors_total[15m])) > ${Z4}",
             summary="L2ARC {{ $labels.kind }} errors on {{ $labels.instance }}",
             description="{{ $value | printf \"%.0f\" }} L2ARC {{ $labels.kind }} errors in the last 15 minutes on {{ $labels.instance }} "
                         "(Z4: reads fall back to the pool; enough errors offline the cache device)."),
        dict(alert="ZfsL2arcNotWarming", ids=["Z3"], layer="zfs", dashboard="host-zfs",
             expr=R.L2ARC_HIT_RATIO + " < ${Z3}\n"
                  "and on (" + cfg.join("instance") + ")\n" +
                  R.L2ARC_LOOKUPS + " >= ${Z3.floor.lookups}\n"
                  "and on (" + cfg.join("instance") + ")\n"
                  "max by (" + cfg.by("instance") + ") (" + _gauge("dbhost_zfs_l2arc_size_bytes") + ") > 0",
             summary="L2ARC on {{ $labels.instance }} is not warming up",
             description="The L2ARC hit ratio on {{ $labels.instance }} is {{ $value | humanizePercentage }} after ${Z3.for} "
                         "of at least ${Z3.floor.lookups} lookups/s (threshold ${Z3|pct}; Z3: L2ARC warms over hours, Z2: warm it served most reads)."),
    ]


def _filesystems(cfg: Config) -> list[dict]:
    """File systems Oracle writes to (issue 23): node_exporter's node_filesystem_*, the mounts the
    config's oracle_filesystems selects."""
    by = cfg.by("instance", "mountpoint")
    sel = cfg.selector("node") + ", " + cfg.oracle_fs()
    used = ("(\n"
            "  1 - max by (" + by + ") (" + _gauge("node_filesystem_avail_bytes{" + sel + "}") + ")\n"
            "    / (max by (" + by + ") (" + _gauge("node_filesystem_size_bytes{" + sel + "}") + ") > 0)\n"
            ")")
    unreadable = "max by (" + by + ") (" + _gauge("node_filesystem_device_error{" + sel + "}") + ") == 1"
    return [
        dict(alert="HostFilesystemFillingUp", ids=["O4_fs_time"], layer="host", dashboard="host-storage",
             doc="At the growth of the last hour a file system Oracle writes to is full within ${O4_fs_time|dur} and "
                 "more than ${O4_fs_time.floor.used|pct} used; it stays firing while the mount does not answer statfs "
                 "(node_filesystem_device_error 1: a hung NFS mount exports no size, which must not clear the page).",
             expr=used + " > ${O4_fs_time.floor.used}\n"
                  "and on (" + by + ")\n"
                  "max by (" + by + ") (predict_linear(node_filesystem_avail_bytes{" + sel + "}[1h], ${O4_fs_time})) < 0\n"
                  "or on (" + by + ") (\n"
                  "  " + unreadable + "\n"
                  "  and on (" + by + ")\n"
                  "  max by (" + by + ") (ALERTS{alertname=\"HostFilesystemFillingUp\", alertstate=\"firing\"})\n"
                  ")",
             summary="{{ $labels.mountpoint }} on {{ $labels.instance }} fills up within hours",
             description="File system {{ $labels.mountpoint }} on {{ $labels.instance }} is {{ $value | humanizePercentage }} "
                         "used and, at the growth of the last hour, full within ${O4_fs_time|dur} (O4; 100% while the mount "
                         "does not answer: a hung NFS server). Oracle writes there: an autoextending data file fails "
                         "(ORA-01653/ORA-01691), the archiver stops (ORA-00257, then commits), a full audit or diag "
                         "directory stops logons. Free space now (old archives after backup, traces, audit files)."),
        dict(alert="HostFilesystemFull", ids=["O4_fs"], layer="host", dashboard="host-storage",
             expr=used + " > ${O4_fs}",
             summary="{{ $labels.mountpoint }} on {{ $labels.instance }} is {{ $value | humanizePercentage }} full",
             description="File system {{ $labels.mountpoint }} on {{ $labels.instance }} is {{ $value | humanizePercentage }} "
                         "used (threshold ${O4_fs|pct}, O4), of the space available to Oracle (not root's reserve). "
                         "Add space or purge in working hours before it fills up."),
        # rev23 #2: a full file system keeps paging: the time-to-full page ends once predict_linear goes
        # flat (nothing more fits, so nothing grows); this one holds while it is full
        dict(alert="HostFilesystemFull", ids=["O4_fs_free"], layer="host", dashboard="host-storage",
             doc="A file system Oracle writes to has less than ${O4_fs_free|bytes} available (to unprivileged "
                 "users: Oracle) and is more than ${O4_fs_free.floor.used|pct} used. It pages as long as it stays "
                 "full (HostFilesystemFillingUp ends when the growth stops).",
             expr="max by (" + by + ") (" + _gauge("node_filesystem_avail_bytes{" + sel + "}") + ") < ${O4_fs_free}\n"
                  "and on (" + by + ")\n" + used + " > ${O4_fs_free.floor.used}",
             summary="{{ $labels.mountpoint }} on {{ $labels.instance }} is full",
             description="File system {{ $labels.mountpoint }} on {{ $labels.instance }} has {{ $value | humanize1024 }}B "
                         "available to Oracle (threshold ${O4_fs_free|bytes}, more than ${O4_fs_free.floor.used|pct} "
                         "used; O4): the next archived log (ORA-00257, then every commit), data file extension "
                         "(ORA-01653/ORA-01691) or audit file (logons fail) may not fit. Free space now (old "
                         "archives after backup, traces, audit files) or grow the file system."),
        dict(alert="HostFilesystemUnreadable", ids=["O4_fs_unreadable"], layer="host", dashboard="host-storage",
             expr=unreadable,
             summary="{{ $labels.mountpoint }} on {{ $labels.instance }} does not answer",
             description="node_exporter cannot read the size of {{ $labels.mountpoint }} on {{ $labels.instance }} for "
                         "${O4_fs_unreadable.for} (node_filesystem_device_error = {{ $value }}, O4): statfs failed or hung, "
                         "typically an NFS server that stopped answering. Oracle processes writing there (archiver, "
                         "RMAN, audit) hang in uninterruptible sleep; its free space is unknown."),
    ]


SECTIONS = (_monitoring, _hangs, _redo, _space, _efficiency, _host, _shm, _luns, _paths, _zfs, _filesystems)


# ---------------------------------------------------------------- on-call signals (issue 24)
def _signals(cfg: Config) -> list[dict]:
    """On-call signals (O21...): backups, undo and temp, alert log, RAC global cache, long calls,
    PDB state, scheduler jobs."""
    per_kind = cfg.by("database", "kind")
    # O26: the alert-log messages that page (issue 24 point 1): the three codes, or any CRITICAL level; a
    # counter that grew in 15 minutes, or whose series appeared (its first message since exporter start);
    # rev23 #14a: the appeared-branch reads both ends through last_over_time, so one failed scrape
    # neither resolves and re-fires it (now) nor makes an old series look new (15 minutes later)
    alert_log = ['oracle_alert_log_errors_total{code=~"ORA-00600|ORA-07445|ORA-04031"}',
                 'oracle_alert_log_errors_total{level="critical",code!~"ORA-00600|ORA-07445|ORA-04031"}']
    alert_log_new = "\nor\n".join([f"increase({s}[15m]) > ${{O26_alert_log}}" for s in alert_log]
                                   + [f"(last_over_time({s}[{GAP_WINDOW}]) unless last_over_time({s}[{GAP_WINDOW}] offset 15m))"
                                      for s in alert_log])
    return [
        dict(alert="OracleBackupTooOld", ids=["O21_backup_age"], layer="oracle", dashboard="oracle-signals",
             expr=_gauge("oracle_backup_age_seconds") + "\n  / on (" + per_kind + ")\n"
                  + _gauge("oracle_backup_policy_max_age_seconds") + " > ${O21_backup_age}",
             summary="The newest {{ $labels.kind }} backup of {{ $labels.database }} is older than its policy",
             description="The newest {{ $labels.kind }} backup of {{ $labels.database }} is "
                         "{{ $value | printf \"%.2f\" }} times the maximum age its backup_policy allows (O21): a "
                         "restore would need older backups and more redo, or fail; check the backup jobs "
                         "(oracle_backup_jobs_failed, the RMAN logs)."),
        dict(alert="OracleBackupTooOld", ids=["O21_backup_age"], layer="oracle", dashboard="oracle-signals",
             labels={"cause": "none"},
             doc="The backup_policy of the database declares a kind of which the control file records no backup.",
             expr=_gauge("oracle_backup_policy_max_age_seconds") + "\nunless on (" + per_kind + ")\n"
                  + _gauge("oracle_backup_age_seconds"),
             summary="{{ $labels.database }} has no {{ $labels.kind }} backup at all",
             description="The backup_policy of {{ $labels.database }} requires a {{ $labels.kind }} backup every "
                         "{{ $value | humanizeDuration }}, and its control file records none (O21): the database "
                         "cannot be restored from a {{ $labels.kind }} backup."),
        dict(alert="OracleBackupFailed", ids=["O21_backup_failed"], layer="oracle", dashboard="oracle-signals",
             expr=_gauge("oracle_backup_jobs_failed") + " > ${O21_backup_failed}",
             summary="An RMAN {{ $labels.input_type }} backup of {{ $labels.database }} failed",
             description="{{ $value }} RMAN {{ $labels.input_type }} backup job(s) of {{ $labels.database }} that "
                         "started in the last 24 hours ended FAILED or COMPLETED WITH ERRORS (O21, "
                         "V$RMAN_BACKUP_JOB_DETAILS): read the job's RMAN output and re-run it."),
        dict(alert="OracleSnapshotTooOld", ids=["O22_snapshot_too_old"], layer="oracle", dashboard="oracle-signals",
             expr=_gauge("oracle_undo_snapshot_too_old_errors") + " > ${O22_snapshot_too_old}",
             summary="ORA-01555 (snapshot too old) on " + _DB,
             description="{{ $value }} queries failed with ORA-01555 in the last hour on " + _DB + " (O22, "
                         "GV$UNDOSTAT.SSOLDERRCNT): the undo they needed was overwritten. Compare the longest query "
                         "with the tuned undo retention (oracle_undo_max_query_length_seconds, "
                         "oracle_undo_tuned_retention_seconds)."),
        dict(alert="OracleUndoSpaceErrors", ids=["O22_undo_space"], layer="oracle", dashboard="oracle-signals",
             expr=_gauge("oracle_undo_space_errors") + " > ${O22_undo_space}",
             summary="Transactions ran out of undo space on " + _DB,
             description="{{ $value }} requests for undo space failed in the last hour on " + _DB + " (O22, "
                         "GV$UNDOSTAT.NOSPACEERRCNT, ORA-30036): their DML failed; the undo tablespace is full."),
        dict(alert="OracleTempSpaceFull", ids=["O22_temp"], layer="oracle", dashboard="oracle-signals",
             expr=_gauge(R.TABLESPACE_USED + "{contents=\"TEMPORARY\"}") + " > ${O22_temp}",
             summary="Temporary tablespace {{ $labels.tablespace }} of {{ $labels.database }} is nearly full",
             description="Temporary tablespace {{ $labels.tablespace }} of {{ $labels.database }} has "
                         "{{ $value | humanizePercentage }} of the size it can reach in use (threshold ${O22_temp|pct}, "
                         "O22): the next large sort or hash join fails with ORA-01652; "
                         "oracle_temp_top_consumer_bytes names the session holding the most."),
        dict(alert="OracleGlobalCacheSlow", ids=["O23_gc"], layer="oracle", dashboard="oracle-signals",
             doc="The average receive time of CR or current blocks from other instances is above ${O23_gc|dur} "
                 "over 5 minutes, with at least ${O23_gc.floor.blocks} blocks/s of that kind.",
             expr="rate(oracle_gc_block_receive_time_seconds_total[5m])\n"
                  "  / on (" + cfg.by("database", "inst_id", "kind") + ")\n"
                  "rate(oracle_gc_blocks_received_total[5m]) > ${O23_gc}\n"
                  "and on (" + cfg.by("database", "inst_id", "kind") + ")\n"
                  "rate(oracle_gc_blocks_received_total[5m]) >= ${O23_gc.floor.blocks}",
             summary="Global cache {{ $labels.kind }} blocks are slow to arrive on " + _DB,
             description="Instance {{ $labels.inst_id }} of {{ $labels.database }} waits on average "
                         "{{ $value | humanizeDuration }} per {{ $labels.kind }} block received from another instance "
                         "(threshold ${O23_gc|dur}, Oracle Enterprise Manager's default warning; O23): the interconnect "
                         "or the remote LMS processes are slow; check lost blocks and the LMS CPU."),
        dict(alert="OracleGlobalCacheBlocksLost", ids=["O23_gc_lost"], layer="oracle", dashboard="oracle-signals",
             expr="increase(oracle_gc_blocks_lost_total[15m])\n"
                  "  + on (" + cfg.by("database", "inst_id") + ")\n"
                  "increase(oracle_gc_blocks_corrupt_total[15m]) > ${O23_gc_lost}",
             summary="Global cache blocks are lost on the interconnect of " + _DB,
             description="{{ $value | printf \"%.0f\" }} global cache blocks were lost or received corrupt in the "
                         "last 15 minutes on " + _DB + " (O23): a network fault on the private interconnect (NIC, "
                         "switch, UDP socket buffers, MTU); every lost block costs a retransmit after a timeout."),
        dict(alert="OraclePdbNotOpen", ids=["O24_pdb_closed"], layer="oracle", dashboard="oracle-signals",
             labels={"cause": "not_open"},
             expr="max by (" + cfg.by("database", "inst_id", "pdb") + ") ("
                  + _gauge("oracle_pdb_open_mode{open_mode=\"READ WRITE\"}") + ") == ${O24_pdb_closed}\n"
                  "and on (" + cfg.by("database", "inst_id", "pdb") + ")\n"
                  + R.PDB_OPEN_EXPECTED + "\n"
                  "and on (" + cfg.by("database") + ")\n"
                  + _gauge("oracle_database_info{database_role=\"PRIMARY\"}"),
             summary="PDB {{ $labels.pdb }} of {{ $labels.database }} is not open on instance {{ $labels.inst_id }}",
             description="PDB {{ $labels.pdb }} of {{ $labels.database }} was open READ WRITE on instance "
                         "{{ $labels.inst_id }} and is not now (open READ WRITE: {{ $value }}; O24; remembered while "
                         "the PDB exists, pdb:oracle_pdb_open:expected): the application cannot use it there. "
                         "ALTER PLUGGABLE DATABASE {{ $labels.pdb }} OPEN, then SAVE STATE."),
        dict(alert="OraclePdbNotOpen", ids=["O24_pdb_restricted"], layer="oracle", dashboard="oracle-signals",
             labels={"cause": "restricted"},
             expr=_gauge("oracle_pdb_restricted") + " == ${O24_pdb_restricted}\n"
                  "and on (" + cfg.by("database") + ")\n"
                  + _gauge("oracle_database_info{database_role=\"PRIMARY\"}"),
             summary="PDB {{ $labels.pdb }} of {{ $labels.database }} is open RESTRICTED on instance {{ $labels.inst_id }}",
             description="PDB {{ $labels.pdb }} of {{ $labels.database }} is open RESTRICTED on instance "
                         "{{ $labels.inst_id }} (oracle_pdb_restricted = {{ $value }}; O24): only users with RESTRICTED SESSION "
                         "can connect; see "
                         "PDB_PLUG_IN_VIOLATIONS."),
        dict(alert="OracleSchedulerJobFailed", ids=["O25_scheduler"], layer="oracle", dashboard="oracle-signals",
             expr=_gauge("oracle_scheduler_job_failures") + " > ${O25_scheduler}",
             summary="Scheduler job {{ $labels.owner }}.{{ $labels.job_name }} of {{ $labels.database }} failed",
             description="{{ $value }} run(s) of scheduler job {{ $labels.owner }}.{{ $labels.job_name }} of "
                         "{{ $labels.database }} FAILED in the last 24 hours (O25); the error code is "
                         "oracle_scheduler_job_last_error_code, the text in DBA_SCHEDULER_JOB_RUN_DETAILS."),
        dict(alert="OracleAlertLogCriticalError", ids=["O26_alert_log"], layer="oracle", dashboard="oracle-signals",
             doc="A new message in the last 15 minutes: the counter grew, or its series appeared (the first "
                 "message of that code and level since the exporter started).",
             expr=alert_log_new,
             summary="{{ $labels.code }} ({{ $labels.level }}) in the alert log of {{ $labels.database }}",
             description="The alert log of {{ $labels.database }} got new {{ $labels.code }} messages at level "
                         "{{ $labels.level }} in the last 15 minutes (increase {{ $value | printf \"%.0f\" }}, "
                         "extrapolated over the window; O26, V$DIAG_ALERT_EXT): the text is in the "
                         "exporter's log (critical messages) and in the alert log; an ORA-00600 or ORA-07445 has "
                         "an ADR incident for Oracle Support (adrci: show incident)."),
        # rev24 #5: the alert is the call (one user's call on one instance), not the statement it runs
        # now: a PL/SQL call moves through many SQL_IDs (each its own series, none living for `for`), so
        # sql_id is aggregated away and the SQL_ID running now is read by the text
        dict(alert="OracleLongRunningCall", ids=["O27_long_call"], layer="oracle", dashboard="oracle-signals",
             doc="An active call of a user has run longer than ${O27_long_call|dur} (the longest per user and "
                 "instance, whatever statement it runs now: a PL/SQL call's SQL_ID changes, the call does not); the "
                 "SQL_ID running now is in the text. RMAN channels, Data Pump processes, PX slaves and scheduler "
                 "job slaves (program_kind rman, datapump, px, job) are user sessions too: not judged, still on "
                 "the dashboard (rev24 #15).",
             expr="max by (" + cfg.by("database", "inst_id", "username") + ") (\n  "
                  + _fresh_or_bridged(LONG_CALL_USERS, "long_calls", cfg.by("database"))
                  + "\n) > ${O27_long_call}",
             summary="A call of {{ $labels.username }} has run for over an hour on " + _DB,
             description="A call of {{ $labels.username }} on " + _DB + " has been running for "
                         "{{ $value | humanizeDuration }} (GV$SESSION.LAST_CALL_ET, threshold ${O27_long_call|dur}, "
                         "O27); it runs SQL_ID " + LONG_CALL_SQL_ID + " now (a PL/SQL call moves through many "
                         "statements; 'none' between them): its plan (DBMS_XPLAN.DISPLAY_CURSOR), its waits and "
                         "whether it may be killed; the text is in GV$SQL. RMAN channels, Data Pump processes, "
                         "PX slaves and scheduler jobs are left out (program_kind): the runbook says why."),
    ]


SECTIONS = SECTIONS + (_signals,)
