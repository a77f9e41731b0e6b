"""Rule definitions: recording rules and alert templates.

Alert expressions and texts are templates; `${ID}` is replaced by the value of
threshold ID from thresholds.yaml, `${ID.floor.NAME}` by a noise-floor value,
and `${ID|fmt}` / `${ID.floor.NAME|fmt}` by a human form (fmt: dur, pct, num).
alerts/generate.py renders them; nothing here holds a number that belongs in
thresholds.yaml.
"""

WINDOW = "5m"

# ----------------------------------------------------------------------------
# Recording rules: (record, expr). Groups are evaluated in order, so a rule may
# use the rules recorded above it in the same group.
# ----------------------------------------------------------------------------
RECORDING_GROUPS = [
    ("oracle_waits.rules", [
        ("database_inst_event:oracle_wait_event_waits:rate5m",
         "sum by (database, inst_id, event, wait_class) (rate(oracle_wait_event_waits_total[5m]))"),
        ("database_inst_event:oracle_wait_event_time_seconds:rate5m",
         "sum by (database, inst_id, event, wait_class) (rate(oracle_wait_event_time_seconds_total[5m]))"),
        ("database_inst_event:oracle_wait_event_average_wait_seconds:rate5m",
         "database_inst_event:oracle_wait_event_time_seconds:rate5m\n"
         "  / (database_inst_event:oracle_wait_event_waits:rate5m > 0)"),
    ]),
    ("oracle_redo.rules", [
        *[(f"database_inst:oracle_{m}:rate5m",
           f"sum by (database, inst_id) (rate(oracle_{m}_total[5m]))")
          for m in ("redo_size_bytes", "redo_entries", "redo_writes", "redo_synch_writes",
                    "user_commits", "redo_buffer_allocation_retries", "redo_log_space_requests",
                    "redo_write_time_seconds", "redo_synch_time_seconds",
                    "redo_log_space_wait_time_seconds")],
        ("database_inst:oracle_redo_write_time_seconds:avg_rate5m",
         "database_inst:oracle_redo_write_time_seconds:rate5m\n"
         "  / (database_inst:oracle_redo_writes:rate5m > 0)"),
        ("database_inst:oracle_redo_synch_time_seconds:avg_rate5m",
         "database_inst:oracle_redo_synch_time_seconds:rate5m\n"
         "  / (database_inst:oracle_redo_synch_writes:rate5m > 0)"),
        ("database_inst:oracle_redo_log_space_wait_time_seconds:avg_rate5m",
         "database_inst:oracle_redo_log_space_wait_time_seconds:rate5m\n"
         "  / (database_inst:oracle_redo_log_space_requests:rate5m > 0)"),
        ("database_inst:oracle_redo_buffer_allocation_retries_per_entry:ratio_rate5m",
         "database_inst:oracle_redo_buffer_allocation_retries:rate5m\n"
         "  / (database_inst:oracle_redo_entries:rate5m > 0)"),
        ("database_inst:oracle_redo_log_switches:increase1h",
         "sum by (database, inst_id) (increase(oracle_redo_log_switches_total[1h]))"),
        ("database_inst:oracle_redo_log_switch_interval_seconds:avg1h",
         "3600 / (database_inst:oracle_redo_log_switches:increase1h > 0)"),
    ]),
    ("oracle_instance.rules", [
        ("database_inst:oracle_latch_gets:rate5m",
         "sum by (database, inst_id) (rate(oracle_latch_gets_total{latch=\"all\"}[5m]))"),
        ("database_inst:oracle_latch_misses:rate5m",
         "sum by (database, inst_id) (rate(oracle_latch_misses_total{latch=\"all\"}[5m]))"),
        ("database_inst:oracle_latch_hit_ratio:rate5m",
         "1 - database_inst:oracle_latch_misses:rate5m\n"
         "  / (database_inst:oracle_latch_gets:rate5m > 0)"),
        ("database_inst:oracle_pga_allocated_to_target:ratio",
         "sum by (database, inst_id) (oracle_pga_allocated_bytes)\n"
         "  / (sum by (database, inst_id) (oracle_pga_target_bytes) > 0)"),
    ]),
    ("dbhost_process.rules", [
        ("instance_sid_role:dbhost_process_context_switches:rate5m",
         "sum by (instance, sid, role) (rate(dbhost_process_context_switches_total[5m]))"),
        ("instance_sid_role:dbhost_process_involuntary_context_switches_share:rate5m",
         "sum by (instance, sid, role) (rate(dbhost_process_context_switches_total{kind=\"involuntary\"}[5m]))\n"
         "  / (instance_sid_role:dbhost_process_context_switches:rate5m > 0)"),
        ("instance:dbhost_process_involuntary_context_switches:rate5m",
         "sum by (instance) (rate(dbhost_process_context_switches_total{kind=\"involuntary\"}[5m]))"),
        ("instance:dbhost_process_involuntary_context_switches_share:rate5m",
         "sum by (instance) (rate(dbhost_process_context_switches_total{kind=\"involuntary\"}[5m]))\n"
         "  / (sum by (instance) (rate(dbhost_process_context_switches_total[5m])) > 0)"),
        ("instance_sid_role:dbhost_process_migrations:rate5m",
         "sum by (instance, sid, role) (rate(dbhost_process_migrations_total[5m]))"),
    ]),
    ("host_storage.rules", [
        ("instance_device:dbhost_lun_host_queue:avg5m",
         "sum by (instance, device) (avg_over_time(dbhost_lun_inflight_requests{queue=\"host\"}[5m]))"),
        ("instance_device:dbhost_lun_lun_queue:avg5m",
         "sum by (instance, device) (avg_over_time(dbhost_lun_inflight_requests{queue=\"lun\"}[5m]))"),
        ("instance_device:dbhost_lun_queue_full_share:rate5m",
         "sum by (instance, device) (rate(dbhost_lun_queue_full_samples_total[5m]))\n"
         "  / (sum by (instance, device) (rate(dbhost_lun_samples_total[5m])) > 0)"),
        ("instance_device:node_disk_reads_completed:rate5m",
         "sum by (instance, device) (rate(node_disk_reads_completed_total[5m]))"),
        ("instance_device:node_disk_writes_completed:rate5m",
         "sum by (instance, device) (rate(node_disk_writes_completed_total[5m]))"),
        # exactly one role per (instance, device): dbhost_lun_info can briefly hold two series
        # for a device (a role changed in the config, two exporters on one host); group_left
        # would then fail the whole rule for every device, so topk picks one.
        ("instance_device:dbhost_lun_role:info",
         "topk by (instance, device) (1, max by (instance, device, role) (dbhost_lun_info))"),
        ("instance_device_role:node_disk_read_latency_seconds:rate5m",
         "sum by (instance, device) (rate(node_disk_read_time_seconds_total[5m]))\n"
         "  / (instance_device:node_disk_reads_completed:rate5m > 0)\n"
         "  * on (instance, device) group_left (role) instance_device:dbhost_lun_role:info"),
        ("instance_device_role:node_disk_write_latency_seconds:rate5m",
         "sum by (instance, device) (rate(node_disk_write_time_seconds_total[5m]))\n"
         "  / (instance_device:node_disk_writes_completed:rate5m > 0)\n"
         "  * on (instance, device) group_left (role) instance_device:dbhost_lun_role:info"),
        ("instance_device:node_disk_queue_size:rate5m",
         "sum by (instance, device) (rate(node_disk_io_time_weighted_seconds_total[5m]))"),
    ]),
    ("host_zfs.rules", [
        # OpenZFS arc_summary: accesses = hits + iohits + misses (iohits since 2.2;
        # absent on older releases and on illumos, hence the "or ... * 0").
        ("instance_kind:dbhost_zfs_arc_accesses:rate5m",
         "sum by (instance, kind) (rate(dbhost_zfs_arc_hits_total[5m]))\n"
         "  + sum by (instance, kind) (rate(dbhost_zfs_arc_misses_total[5m]))\n"
         "  + (sum by (instance, kind) (rate(dbhost_zfs_arc_iohits_total[5m]))\n"
         "     or sum by (instance, kind) (rate(dbhost_zfs_arc_hits_total[5m])) * 0)"),
        ("instance_kind:dbhost_zfs_arc_hit_ratio:rate5m",
         "sum by (instance, kind) (rate(dbhost_zfs_arc_hits_total[5m]))\n"
         "  / (instance_kind:dbhost_zfs_arc_accesses:rate5m > 0)"),
        ("instance:dbhost_zfs_arc_hit_ratio:rate5m",
         "sum by (instance) (rate(dbhost_zfs_arc_hits_total[5m]))\n"
         "  / (sum by (instance) (instance_kind:dbhost_zfs_arc_accesses:rate5m) > 0)"),
        ("instance:dbhost_zfs_l2arc_lookups:rate5m",
         "sum by (instance) (rate(dbhost_zfs_l2arc_hits_total[5m]))\n"
         "  + sum by (instance) (rate(dbhost_zfs_l2arc_misses_total[5m]))"),
        ("instance:dbhost_zfs_l2arc_hit_ratio:rate5m",
         "sum by (instance) (rate(dbhost_zfs_l2arc_hits_total[5m]))\n"
         "  / (instance:dbhost_zfs_l2arc_lookups:rate5m > 0)"),
    ]),
    ("host_cpu_memory.rules", [
        ("instance:node_cpus:count",
         "count by (instance) (node_cpu_seconds_total{mode=\"idle\"})"),
        # kernel time: system plus interrupt handling (Solaris "sys" includes both)
        ("instance:node_cpu_system:rate5m",
         "sum by (instance) (rate(node_cpu_seconds_total{mode=~\"system|irq|softirq\"}[5m]))"),
        ("instance:node_cpu_busy:rate5m",
         "sum by (instance) (rate(node_cpu_seconds_total{mode!~\"idle|iowait\"}[5m]))"),
        ("instance:node_cpu_system_share_of_busy:rate5m",
         "instance:node_cpu_system:rate5m / (instance:node_cpu_busy:rate5m > 0)"),
        ("instance:node_cpu_system_share:rate5m",
         "instance:node_cpu_system:rate5m\n"
         "  / (sum by (instance) (rate(node_cpu_seconds_total[5m])) > 0)"),
        ("instance:node_run_queue_per_cpu:avg5m",
         "max by (instance) (avg_over_time(node_procs_running[5m]))\n"
         "  / on (instance) instance:node_cpus:count"),
        ("instance:node_vmstat_pgmajfault:rate5m",
         "sum by (instance) (rate(node_vmstat_pgmajfault[5m]))"),
        ("instance:node_major_page_fault_ratio:rate5m",
         "instance:node_vmstat_pgmajfault:rate5m\n"
         "  / (sum by (instance) (rate(node_vmstat_pgfault[5m])) > 0)"),
        ("instance:node_swap_pages:rate5m",
         "sum by (instance) (rate(node_vmstat_pswpin[5m]))\n"
         "  + sum by (instance) (rate(node_vmstat_pswpout[5m]))"),
    ]),
]

# ----------------------------------------------------------------------------
# Alerts. Each entry is one rule; several rules may share an alert name.
#   ids:       threshold ids the rule uses; the first one gives `for` and severity
#   for:       optional override of the first threshold's `for`
#   layer:     oracle | host | storage | zfs | monitoring (inhibition uses it)
#   dashboard: Grafana dashboard uid, or None
# Texts may use Prometheus template syntax ({{ $value }}, {{ $labels.x }}).
# ----------------------------------------------------------------------------
_DB = "{{ $labels.database }} instance {{ $labels.inst_id }}"

ALERTS = [
    # ------------------------------------------------------------ monitoring
    dict(alert="OracleDown", ids=["ops_oracle_down"], layer="oracle", dashboard="oracle-wallboard",
         expr="oracle_up == ${ops_oracle_down}",
         summary="Oracle database {{ $labels.database }} is down or unreachable",
         description="oracle-exporter {{ $labels.instance }} could not query database {{ $labels.database }} "
                     "for ${ops_oracle_down.for} (oracle_up = {{ $value }}); its other alerts are inhibited."),
    dict(alert="OracleExporterDown", ids=["ops_exporter_down"], layer="monitoring", dashboard="oracle-wallboard",
         expr="up{job=\"oracle\"} == ${ops_exporter_down}",
         summary="oracle-exporter {{ $labels.instance }} cannot be scraped",
         description="Prometheus has failed to scrape oracle-exporter {{ $labels.instance }} for "
                     "${ops_exporter_down.for} (up = {{ $value }}): the databases it serves are unobserved."),
    dict(alert="DbhostExporterDown", ids=["ops_host_exporter_down"], layer="monitoring", dashboard="host-storage",
         expr="up{job=\"dbhost\"} == ${ops_host_exporter_down}",
         summary="dbhost-exporter on {{ $labels.instance }} cannot be scraped",
         description="Prometheus has failed to scrape dbhost-exporter on {{ $labels.instance }} for "
                     "${ops_host_exporter_down.for} (up = {{ $value }}); LUN, ZFS and process alerts of the host are inhibited."),
    dict(alert="NodeExporterDown", ids=["ops_host_exporter_down"], layer="monitoring", dashboard="host-cpu",
         expr="up{job=\"node\"} == ${ops_host_exporter_down}",
         summary="node_exporter on {{ $labels.instance }} cannot be scraped",
         description="Prometheus has failed to scrape node_exporter on {{ $labels.instance }} for "
                     "${ops_host_exporter_down.for} (up = {{ $value }}); CPU, memory and disk alerts of the host are inhibited."),
    dict(alert="OracleScrapeErrors", ids=["ops_scrape_errors"], layer="oracle", dashboard="oracle-wallboard",
         labels={"cause": "collector_failing"},
         expr="max by (job, instance, database, collector) (oracle_collector_success) == ${ops_scrape_errors}",
         summary="Collector {{ $labels.collector }} fails for {{ $labels.database }}",
         description="oracle-exporter collector {{ $labels.collector }} has failed on every scrape of "
                     "{{ $labels.database }} for ${ops_scrape_errors.for} (oracle_collector_success = {{ $value }}): its metrics are missing."),
    dict(alert="OracleScrapeErrors", ids=["ops_scrape_errors"], layer="oracle", dashboard="oracle-wallboard",
         labels={"cause": "query_errors"},
         doc="oracle_scrape_errors_total grows faster than the floor over 15 minutes.",
         expr="sum by (job, instance, database, collector) (rate(oracle_scrape_errors_total[15m]))"
              " > ${ops_scrape_errors.floor.errors}",
         summary="Collector {{ $labels.collector }} reports errors for {{ $labels.database }}",
         description="oracle-exporter collector {{ $labels.collector }} of {{ $labels.database }} errors "
                     "{{ $value | printf \"%.3g\" }} times/s over 15m (floor ${ops_scrape_errors.floor.errors}/s)."),
    dict(alert="DbhostCollectorFailed", ids=["ops_scrape_errors"], layer="monitoring", dashboard="host-storage",
         doc="A dbhost-exporter collector keeps failing (dbhost_collector_success 0).",
         expr="max by (job, instance, collector) (dbhost_collector_success) == ${ops_scrape_errors}",
         summary="dbhost-exporter collector {{ $labels.collector }} fails on {{ $labels.instance }}",
         description="dbhost-exporter collector {{ $labels.collector }} on {{ $labels.instance }} has failed "
                     "for ${ops_scrape_errors.for} (dbhost_collector_success = {{ $value }}): its metrics (and the alerts built on them) are missing."),

    # ------------------------------------------------------------ redo / LGWR
    dict(alert="OracleLogFileParallelWriteSlow", ids=["R1"], layer="oracle", dashboard="oracle-redo",
         expr="database_inst_event:oracle_wait_event_average_wait_seconds:rate5m{event=\"log file parallel write\"} > ${R1}\n"
              "and on (database, inst_id, event)\n"
              "database_inst_event:oracle_wait_event_waits:rate5m{event=\"log file parallel write\"} >= ${R1.floor.waits}",
         summary="LGWR redo writes are slow on " + _DB,
         description="'log file parallel write' averages {{ $value | humanizeDuration }} on " + _DB +
                     " (threshold ${R1|dur}, R1; the tuned system ran at 0.55ms). Check the redo LUN service time."),
    dict(alert="OracleLogFileSyncSlow", ids=["R2"], layer="oracle", dashboard="oracle-redo",
         expr="database_inst_event:oracle_wait_event_average_wait_seconds:rate5m{event=\"log file sync\"} > ${R2}\n"
              "and on (database, inst_id, event)\n"
              "database_inst_event:oracle_wait_event_waits:rate5m{event=\"log file sync\"} >= ${R2.floor.waits}",
         summary="Commits are slow on " + _DB,
         description="'log file sync' (commit wait) averages {{ $value | humanizeDuration }} on " + _DB +
                     " (threshold ${R2|dur}, R2; the tuned system ran at 2.13ms)."),
    dict(alert="OracleLogBufferSpaceWaits", ids=["R3"], layer="oracle", dashboard="oracle-redo",
         expr="database_inst_event:oracle_wait_event_waits:rate5m{event=\"log buffer space\"} > ${R3.floor.rate}",
         summary="Sessions wait for space in the log buffer on " + _DB,
         description="{{ $value | printf \"%.3g\" }} 'log buffer space' waits/s on " + _DB +
                     " (R3: eliminate; noise floor ${R3.floor.rate}/s). The log buffer is too small for the redo rate (R16) or LGWR writes too slowly (R1)."),
    dict(alert="OracleCheckpointIncomplete", ids=["R4"], layer="oracle", dashboard="oracle-redo",
         expr="database_inst_event:oracle_wait_event_waits:rate5m{event=\"log file switch (checkpoint incomplete)\"} > ${R4.floor.rate}",
         summary="Log switches wait for checkpoints on " + _DB,
         description="{{ $value | printf \"%.3g\" }} 'log file switch (checkpoint incomplete)' waits/s on " + _DB +
                     " (R4: eliminate; noise floor ${R4.floor.rate}/s): redo generation stops until DBWR finishes the checkpoint."),
    dict(alert="OracleRedoAllocationLatchWaits", ids=["R5"], layer="oracle", dashboard="oracle-redo",
         expr="sum by (database, inst_id) (database_inst_event:oracle_wait_event_waits:rate5m"
              "{event=~\"latch: redo allocation|latch: redo writing\"}) > ${R5.floor.rate}",
         summary="Redo allocation/writing latch waits on " + _DB,
         description="{{ $value | printf \"%.3g\" }} 'latch: redo allocation' + 'latch: redo writing' waits/s on " + _DB +
                     " (R5: eliminate; noise floor ${R5.floor.rate}/s)."),
    dict(alert="OracleLogFileSwitchCompletionWaits", ids=["R6"], layer="oracle", dashboard="oracle-redo",
         expr="database_inst_event:oracle_wait_event_waits:rate5m{event=\"log file switch completion\"} > ${R6}",
         summary="Sessions wait for log switches to complete on " + _DB,
         description="{{ $value | printf \"%.3g\" }} 'log file switch completion' waits/s on " + _DB +
                     " (threshold ${R6}/s, R6: the rate matters more than the average)."),
    dict(alert="OracleRedoBufferAllocationRetries", ids=["R10"], layer="oracle", dashboard="oracle-redo",
         expr="database_inst:oracle_redo_buffer_allocation_retries:rate5m > ${R10.floor.rate}",
         summary="Redo buffer allocation retries on " + _DB,
         description="{{ $value | printf \"%.3g\" }} redo buffer allocation retries/s on " + _DB +
                     " (R10: eliminate; noise floor ${R10.floor.rate}/s): the log buffer fills faster than LGWR empties it."),
    dict(alert="OracleRedoLogSpaceRequests", ids=["R11"], layer="oracle", dashboard="oracle-redo",
         expr="database_inst:oracle_redo_log_space_requests:rate5m > ${R11.floor.rate}",
         summary="Redo log space requests on " + _DB,
         description="{{ $value | printf \"%.3g\" }} redo log space requests/s on " + _DB +
                     " (R11: eliminate; noise floor ${R11.floor.rate}/s): sessions wait for a log switch to free space."),
    dict(alert="OracleCommitCpuStarvation", ids=["R13", "R13_gap"], layer="oracle", dashboard="oracle-redo",
         expr="(\n"
              "  database_inst_event:oracle_wait_event_average_wait_seconds:rate5m{event=\"log file sync\"}\n"
              "  - ignoring (event, wait_class)\n"
              "  database_inst_event:oracle_wait_event_average_wait_seconds:rate5m{event=\"log file parallel write\"}\n"
              ") > ${R13_gap}\n"
              "and on (database, inst_id) (\n"
              "  database_inst_event:oracle_wait_event_average_wait_seconds:rate5m{event=\"log file sync\"}\n"
              "  / ignoring (event, wait_class)\n"
              "  database_inst_event:oracle_wait_event_average_wait_seconds:rate5m{event=\"log file parallel write\"}\n"
              ") > ${R13}\n"
              "and on (database, inst_id)\n"
              "database_inst_event:oracle_wait_event_waits:rate5m{event=\"log file sync\"} >= ${R13.floor.waits}\n"
              "and on (database, inst_id)\n"
              "database_inst_event:oracle_wait_event_waits:rate5m{event=\"log file parallel write\"} >= ${R13.floor.waits}",
         summary="Committing sessions wait far longer than LGWR writes on " + _DB,
         description="'log file sync' averages {{ $value | humanizeDuration }} more than 'log file parallel write' on " + _DB +
                     " (more than ${R13}x and ${R13_gap|dur}, R13): sessions or LGWR are not getting CPU; "
                     "check LGWR involuntary context switches (R14) and the run queue (C1)."),
    dict(alert="OracleLgwrInvoluntaryContextSwitches", ids=["R14"], layer="host", dashboard="host-cpu",
         expr="instance_sid_role:dbhost_process_involuntary_context_switches_share:rate5m{role=~\"lgwr|lg[0-9]+\"} > ${R14}\n"
              "and on (instance, sid, role)\n"
              "instance_sid_role:dbhost_process_context_switches:rate5m{role=~\"lgwr|lg[0-9]+\"} >= ${R14.floor.switches}",
         summary="LGWR of {{ $labels.sid }} on {{ $labels.instance }} is being preempted",
         description="{{ $value | humanizePercentage }} of the context switches of LGWR ({{ $labels.role }} of {{ $labels.sid }} on {{ $labels.instance }}) "
                     "are involuntary (threshold ${R14|pct}, R14: 30% before the fix, < 0.1% after)."),
    dict(alert="OracleLogSwitchesTooFrequent", ids=["R15"], layer="oracle", dashboard="oracle-redo",
         expr="database_inst:oracle_redo_log_switches:increase1h > ${R15}",
         summary="Redo logs switch too often on " + _DB,
         description="{{ $value | printf \"%.0f\" }} log switches in the last hour on " + _DB +
                     " (threshold ${R15}/h, a switch every 5 minutes; R15: every ~7 minutes was good, once a minute too often). Redo generation stops during each switch: use larger log members."),
    dict(alert="OracleArchivingBehind", ids=["R15_archive"], layer="oracle", dashboard="oracle-redo",
         labels={"cause": "unarchived_groups"},
         expr="count by (database, thread) (\n"
              "  max by (database, thread, group) (oracle_redo_log_group_archived) == 0\n"
              "  unless on (database, thread, group)\n"
              "  max by (database, thread, group) (oracle_redo_log_group_status{status=\"CURRENT\"}) == 1\n"
              ") >= ${R15_archive}",
         summary="Archiving of redo thread {{ $labels.thread }} lags on {{ $labels.database }}",
         description="{{ $value }} non-current redo log groups of thread {{ $labels.thread }} on {{ $labels.database }} "
                     "are not archived yet (threshold ${R15_archive}, R15: archiving must finish well inside the switch interval)."),
    dict(alert="OracleArchivingBehind", ids=["R15_archiving_needed"], layer="oracle", dashboard="oracle-redo",
         labels={"cause": "archiving_needed_waits"},
         expr="sum by (database, inst_id) (database_inst_event:oracle_wait_event_waits:rate5m"
              "{event=\"log file switch (archiving needed)\"}) > ${R15_archiving_needed.floor.rate}",
         summary="Redo generation stalls waiting for the archiver on " + _DB,
         description="{{ $value | printf \"%.3g\" }} 'log file switch (archiving needed)' waits/s on " + _DB +
                     " (R15; noise floor ${R15_archiving_needed.floor.rate}/s): every log group is full and unarchived."),

    # ------------------------------------------------------------ instance efficiency
    dict(alert="OracleLatchHitRatioLow", ids=["I1"], layer="oracle", dashboard="oracle-waits",
         expr="database_inst:oracle_latch_hit_ratio:rate5m < ${I1}\n"
              "and on (database, inst_id)\n"
              "database_inst:oracle_latch_gets:rate5m >= ${I1.floor.gets}",
         summary="Latch hit ratio below ${I1|pct} on " + _DB,
         description="The latch hit ratio (all latches) is {{ $value | humanizePercentage }} on " + _DB +
                     " (I1: about ${I1|pct} is normal, ${I1_red|pct} a red flag)."),
    dict(alert="OracleLatchHitRatioLow", ids=["I1_red", "I1"], layer="oracle", dashboard="oracle-waits",
         doc="Latch hit ratio below ${I1_red|pct} (the red flag), with the I1 traffic floor.",
         expr="database_inst:oracle_latch_hit_ratio:rate5m < ${I1_red}\n"
              "and on (database, inst_id)\n"
              "database_inst:oracle_latch_gets:rate5m >= ${I1.floor.gets}",
         summary="Latch hit ratio below ${I1_red|pct} on " + _DB,
         description="The latch hit ratio (all latches) is {{ $value | humanizePercentage }} on " + _DB +
                     " (I1: ${I1_red|pct} is the red flag)."),
    dict(alert="OracleDbFileSequentialReadSlow", ids=["I2"], layer="oracle", dashboard="oracle-waits",
         expr="database_inst_event:oracle_wait_event_average_wait_seconds:rate5m{event=\"db file sequential read\"} > ${I2}\n"
              "and on (database, inst_id, event)\n"
              "database_inst_event:oracle_wait_event_waits:rate5m{event=\"db file sequential read\"} >= ${I2.floor.waits}",
         summary="Single-block reads are slow on " + _DB,
         description="'db file sequential read' averages {{ $value | humanizeDuration }} on " + _DB +
                     " (threshold ${I2|dur}, I2: 10ms is normal for spinning disks, 0.4-0.6ms for SSD caches)."),
    dict(alert="OraclePgaOverAllocation", ids=["M4"], layer="oracle", dashboard="oracle-memory",
         labels={"cause": "allocated_over_target"},
         expr="database_inst:oracle_pga_allocated_to_target:ratio > ${M4}",
         summary="PGA allocated exceeds pga_aggregate_target on " + _DB,
         description="PGA allocated is {{ $value | humanizePercentage }} of pga_aggregate_target on " + _DB +
                     " (M4: over-allocation leads to ORA-4030)."),
    dict(alert="OraclePgaOverAllocation", ids=["M4"], layer="oracle", dashboard="oracle-memory", for_="0s",
         labels={"cause": "over_allocation_count"},
         doc="The GV$PGASTAT 'over allocation count' grew by at least ${M4.floor.increase} in 15 minutes.",
         expr="sum by (database, inst_id) (increase(oracle_pga_over_allocation_count_total[15m])) >= ${M4.floor.increase}",
         summary="PGA over-allocation count increasing on " + _DB,
         description="The PGA 'over allocation count' grew by {{ $value | printf \"%.0f\" }} in 15 minutes on " + _DB +
                     " (M4: the target is too small for the work areas; ORA-4030 follows)."),

    # ------------------------------------------------------------ host CPU and memory
    dict(alert="HostRunQueueSaturated", ids=["C1"], layer="host", dashboard="host-cpu",
         expr="instance:node_run_queue_per_cpu:avg5m >= ${C1}\n"
              "and on (instance)\n"
              "instance:dbhost_process_involuntary_context_switches_share:rate5m >= ${C1.floor.involuntary_share}\n"
              "and on (instance)\n"
              "instance:dbhost_process_involuntary_context_switches:rate5m >= ${C1.floor.involuntary_rate}",
         summary="CPU run queue saturated on {{ $labels.instance }}",
         description="{{ $value | printf \"%.2f\" }} runnable processes per CPU on {{ $labels.instance }} with at least "
                     "${C1.floor.involuntary_share|pct} of Oracle context switches involuntary, and at least ${C1.floor.involuntary_rate}/s (C1: >= ${C1} per CPU plus involuntary switches is a CPU bottleneck)."),
    dict(alert="HostSystemCpuDominant", ids=["C4"], layer="host", dashboard="host-cpu",
         expr="instance:node_cpu_system_share_of_busy:rate5m > ${C4}\n"
              "and on (instance)\n"
              "instance:node_cpu_system_share:rate5m > ${C4.floor.system_share}",
         summary="Kernel time dominates busy CPU on {{ $labels.instance }}",
         description="System CPU is {{ $value | humanizePercentage }} of busy CPU on {{ $labels.instance }} "
                     "(threshold ${C4|pct}, C4; and above the ${C4.floor.system_share|pct} of all CPU an ideal system stays below, C2)."),
    dict(alert="HostMajorPageFaultRatioHigh", ids=["M2"], layer="host", dashboard="oracle-memory",
         expr="instance:node_major_page_fault_ratio:rate5m > ${M2}\n"
              "and on (instance)\n"
              "instance:node_vmstat_pgmajfault:rate5m >= ${M2.floor.majfaults}",
         summary="Major page faults are high on {{ $labels.instance }}",
         description="{{ $value | humanizePercentage }} of page faults on {{ $labels.instance }} are major faults "
                     "(threshold ${M2|pct}, M2)."),
    dict(alert="HostSwapping", ids=["M3"], layer="host", dashboard="oracle-memory",
         expr="instance:node_swap_pages:rate5m > ${M3.floor.rate}",
         summary="{{ $labels.instance }} is swapping",
         description="{{ $value | printf \"%.3g\" }} pages/s swapped in and out on {{ $labels.instance }} "
                     "(M3: a swapping host needs more memory; noise floor ${M3.floor.rate} pages/s)."),

    # ------------------------------------------------------------ LUNs
    dict(alert="LunHostQueueBacklog", ids=["Q2"], layer="storage", dashboard="host-storage",
         labels={"cause": "host_queue"},
         expr="instance_device:dbhost_lun_host_queue:avg5m > ${Q2}",
         summary="I/O requests pile up in the host queue of {{ $labels.device }} on {{ $labels.instance }}",
         description="{{ $value | printf \"%.1f\" }} requests wait in the host queue of {{ $labels.device }} on {{ $labels.instance }} "
                     "on average (threshold ${Q2}, Q2): the LUN queue depth is too low for the load."),
    dict(alert="LunHostQueueBacklog", ids=["Q2_full"], layer="storage", dashboard="host-storage",
         labels={"cause": "lun_queue_full"},
         doc="${Q2_full|pct} or more of the samples found the LUN queue full (in flight >= queue_depth) on a "
             "device whose host queue the kernel does not show (dbhost_lun_host_queue_visible 0 or absent).",
         expr="instance_device:dbhost_lun_queue_full_share:rate5m >= ${Q2_full}\n"
              "unless on (instance, device)\n"
              "max by (instance, device) (dbhost_lun_host_queue_visible) == 1",
         summary="The LUN queue of {{ $labels.device }} on {{ $labels.instance }} is full most of the time",
         description="The LUN queue of {{ $labels.device }} on {{ $labels.instance }} was full in {{ $value | humanizePercentage }} "
                     "of the samples (threshold ${Q2_full|pct}, Q2); this kernel does not show the host queue "
                     "(dbhost_lun_host_queue_visible), so requests arriving now wait there unseen: the LUN queue depth is too low for the load."),
    dict(alert="LunQueueDepthThrottled", ids=["Q3"], layer="storage", dashboard="host-storage",
         expr="max by (instance, device) (dbhost_lun_queue_depth) <= ${Q3}\n"
              "and on (instance, device) (\n"
              "  instance_device:dbhost_lun_queue_full_share:rate5m >= ${Q3.floor.queue_full_share}\n"
              "  or\n"
              "  instance_device:dbhost_lun_host_queue:avg5m >= ${Q3.floor.host_queue}\n"
              ")",
         summary="LUN {{ $labels.device }} on {{ $labels.instance }} is throttled by its queue depth",
         description="{{ $labels.device }} on {{ $labels.instance }} has queue_depth {{ $value }} (Q3: ${Q3} or less is "
                     "too low; the driver default and maximum is 256) and its queue fills up under load."),
    dict(alert="LunWriteLatencyHigh", ids=["R17_write"], layer="storage", dashboard="host-storage",
         expr="instance_device_role:node_disk_write_latency_seconds:rate5m{role=\"redo\"} > ${R17_write}\n"
              "and on (instance, device)\n"
              "instance_device:node_disk_writes_completed:rate5m >= ${R17_write.floor.ops}",
         summary="Writes to {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
         description="Writes to {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                     "{{ $value | humanizeDuration }} on average (threshold ${R17_write|dur}, R17)."),
    dict(alert="LunWriteLatencyHigh", ids=["R17_other"], layer="storage", dashboard="host-storage",
         doc="Average write service time of a data or arch LUN above ${R17_other|dur} (R17's 2 ms is for redo LUNs; "
             "I2: disks serve 9-10 ms).",
         expr="instance_device_role:node_disk_write_latency_seconds:rate5m{role=~\"data|arch\"} > ${R17_other}\n"
              "and on (instance, device)\n"
              "instance_device:node_disk_writes_completed:rate5m >= ${R17_other.floor.ops}",
         summary="Writes to {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
         description="Writes to {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                     "{{ $value | humanizeDuration }} on average (threshold ${R17_other|dur} for data/arch LUNs, R17/I2; "
                     "redo LUNs alert at ${R17_write|dur})."),
    dict(alert="LunReadLatencyHigh", ids=["R17_read"], layer="storage", dashboard="host-storage",
         expr="instance_device_role:node_disk_read_latency_seconds:rate5m{role=\"redo\"} > ${R17_read}\n"
              "and on (instance, device)\n"
              "instance_device:node_disk_reads_completed:rate5m >= ${R17_read.floor.ops}",
         summary="Reads from {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
         description="Reads from {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                     "{{ $value | humanizeDuration }} on average (threshold ${R17_read|dur}, R17; ARCH reads compete with LGWR, R7)."),
    dict(alert="LunReadLatencyHigh", ids=["I2", "R17_read"], layer="storage", dashboard="host-storage",
         doc="Average read service time of a data or arch LUN above ${I2|dur} (I2: 9-10 ms is normal for spinning disks).",
         expr="instance_device_role:node_disk_read_latency_seconds:rate5m{role=~\"data|arch\"} > ${I2}\n"
              "and on (instance, device)\n"
              "instance_device:node_disk_reads_completed:rate5m >= ${R17_read.floor.ops}",
         summary="Reads from {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} are slow",
         description="Reads from {{ $labels.role }} LUN {{ $labels.device }} on {{ $labels.instance }} take "
                     "{{ $value | humanizeDuration }} on average (threshold ${I2|dur}, I2: 9-10ms is normal for spinning disks)."),

    # ------------------------------------------------------------ ZFS
    dict(alert="ZfsL2arcErrors", ids=["Z4"], layer="zfs", dashboard="host-zfs",
         expr="sum by (instance, kind) (increase(dbhost_zfs_l2arc_errors_total[15m])) > ${Z4}",
         summary="L2ARC {{ $labels.kind }} errors on {{ $labels.instance }}",
         description="{{ $value | printf \"%.0f\" }} L2ARC {{ $labels.kind }} errors in the last 15 minutes on {{ $labels.instance }} "
                     "(Z4: reads fall back to the pool; enough errors offline the cache device)."),
    dict(alert="ZfsL2arcNotWarming", ids=["Z3"], layer="zfs", dashboard="host-zfs",
         expr="instance:dbhost_zfs_l2arc_hit_ratio:rate5m < ${Z3}\n"
              "and on (instance)\n"
              "instance:dbhost_zfs_l2arc_lookups:rate5m >= ${Z3.floor.lookups}\n"
              "and on (instance)\n"
              "max by (instance) (dbhost_zfs_l2arc_size_bytes) > 0",
         summary="L2ARC on {{ $labels.instance }} is not warming up",
         description="The L2ARC hit ratio on {{ $labels.instance }} is {{ $value | humanizePercentage }} after ${Z3.for} "
                     "of at least ${Z3.floor.lookups} lookups/s (threshold ${Z3|pct}; Z3: L2ARC warms over hours, Z2: warm it served most reads)."),
]
