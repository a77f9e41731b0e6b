"""Host deep dives: host-storage, host-cpu, host-zfs."""
from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from mixin import records as R
from mixin.config import Config
from mixin.dashboards.common import (HOST, add_panels, ms, new_dashboard, override_name, q, table_panel, timeseries_panel,
                                    v_database, v_datasource, v_host, v_query)

DEV = 'device=~"$device"'
HD = f"{HOST}, {DEV}"
RI = "[$__rate_interval]"


# ------------------------------------------------------------------------------------ storage

def storage(cfg: Config):
    q2, q3 = cfg.th("Q2"), cfg.th("Q3")
    r17w, r17r = cfg.th("R17_write"), cfg.th("R17_read")
    q2f, r17o, i2 = cfg.th("Q2_full"), cfg.th("R17_other"), cfg.th("I2")
    q4, i2f = cfg.th("Q4"), cfg.th("I2_flash")
    leg = "{{instance}} {{device}}"
    lat = lambda rw: f"instance_device_role:node_disk_{rw}_latency_seconds:rate5m"
    panels = [
        db.Row("Queues: configured depth vs LUN queue vs host queue"),
        timeseries_panel("Configured depth vs LUN queue vs host queue", "[Q1, Q2, Q3] Per device: the "
                         "configured LUN queue depth, the requests dispatched to the LUN (5 m average) and "
                         "the requests waiting above it in the host queue. A LUN queue pinned at the depth "
                         "with a growing host queue is the throttle Q3 warns about.", "short",
                         [q(f"dbhost_lun_queue_depth{{{HD}}}", leg + " configured depth", "A"),
                          q(f"{R.LUN_LUN_QUEUE}{{{HD}}}", leg + " LUN queue", "B"),
                          q(f"{R.LUN_HOST_QUEUE}{{{HD}}}", leg + " host queue", "C")],
                         w=24, h=9),
        timeseries_panel("Configured LUN queue depth", f"[Q3] device/queue_depth: {q3.colour_at:.0f} or less "
                         "is a throttle ('ridiculously low'); the driver default and maximum is 256. "
                         "nr_requests is the block layer's limit above it. NVMe has no queue_depth: its limit is "
                         "the requests its hardware queues hold (queue tags), against which its queue-full share "
                         "is judged.", "short",
                         [q(f"dbhost_lun_queue_depth{{{HD}}}", leg + " queue_depth", "A"),
                          q(f"dbhost_lun_nr_requests{{{HD}}}", leg + " nr_requests", "B"),
                          q(f"dbhost_lun_queue_tags{{{HD}}}", leg + " NVMe queue tags", "C")], w=8, th=q3),
        timeseries_panel("LUN queue (dispatched, iostat actv)", "[Q1] Requests dispatched to the device and "
                         "being serviced, 5 m average.", "short",
                         [q(f"{R.LUN_LUN_QUEUE}{{{HD}}}", leg)], w=8),
        timeseries_panel("Host queue (waiting, iostat wait)", f"[Q1, Q2] Requests accepted by the block layer "
                         f"but not dispatched, 5 m average; the array cannot sort or merge them. Above "
                         f"{q2.colour_at:g} is a backlog (5-10 at peak with a good setting).", "short",
                         [q(f"{R.LUN_HOST_QUEUE}{{{HD}}}", leg)], w=8, th=q2),
        timeseries_panel("Share of samples with the LUN queue full", "[Q2, Q3] How often in-flight reached "
                         "the configured depth: a backlog must form above it even where the host queue is "
                         f"invisible (blk-mq 5.10-6.9): there LunHostQueueBacklog fires at {q2f.colour_at:.0%} "
                         "of the samples.", "percentunit",
                         [q(f"rate(dbhost_lun_queue_full_samples_total{{{HD}}}{RI}) / "
                            f"(rate(dbhost_lun_samples_total{{{HD}}}{RI}) > 0)", leg)], w=12, th=q2f),
        timeseries_panel("Average queue size (iostat aqu-sz)", "[Q1] node_exporter weighted I/O time rate: "
                         "host + LUN queue as iostat's aqu-sz.", "short",
                         [q(f"{R.DISK_QUEUE_SIZE}{{{HD}}}", leg)], w=12),
        timeseries_panel("SCSI command errors", "[Q4] Failed SCSI commands per device (device/ioerr_cnt, "
                         "increase per interval): a queue depth too high for the array shows up as errors and "
                         "resets, so do failing paths and HBAs. Any error is a finding (LunIoErrors).", "short",
                         [q(f"sum by (instance, device) (increase(dbhost_lun_ioerrors_total{{{HD}}}{RI}))", leg)],
                         w=24, th=q4),
        db.Row("Latency against the LUN's role thresholds"),
        timeseries_panel("Write latency: redo LUNs", f"[R17] Writes to role=redo LUNs < {ms(r17w)} "
                         "(12 ms before, < 1 ms after).", "s",
                         [q(f'{lat("write")}{{{HD}, role="redo"}}', leg)], w=12, th=r17w),
        timeseries_panel("Read latency: redo LUNs", f"[R17, R7] Reads from redo LUNs (ARCH) < {ms(r17r)} "
                         f"({r17r.severity}).", "s",
                         [q(f'{lat("read")}{{{HD}, role="redo"}}', leg)], w=12, th=r17r),
        timeseries_panel("Read and write latency: other roles", "[I2, Z2] Average service time per LUN and "
                         "role (data, arch, ...): spinning disks serve random 8 KB reads in 9-10 ms, SSD "
                         "cache devices in 0.4-0.6 ms. The R17 thresholds apply to redo LUNs only; data and "
                         f"arch LUNs alert above {ms(i2)} for reads (I2; {ms(i2f)} on flash LUNs, I2_flash) and "
                         f"{ms(r17o)} for writes (R17_other); "
                         "LUNs with role 'other' never alert.", "s",
                         [q(f'{lat("read")}{{{HD}, role!="redo"}}', leg + " {{role}} read", "A"),
                          q(f'{lat("write")}{{{HD}, role!="redo"}}', leg + " {{role}} write", "B")], w=24,
                         th=[i2, r17o] if i2.colour_at != r17o.colour_at else r17o),
        db.Row("Throughput"),
        timeseries_panel("IOPS", "[R17, Z2] Completed reads and writes per second (node_exporter diskstats).",
                         "iops",
                         [q(f"rate(node_disk_reads_completed_total{{{HD}}}{RI})", leg + " reads", "A"),
                          q(f"rate(node_disk_writes_completed_total{{{HD}}}{RI})", leg + " writes", "B")], w=8),
        timeseries_panel("Throughput", "[R15, F3] Bytes read and written per second (ARCH reached ~150 MB/s; "
                         "watch write bursts).", "Bps",
                         [q(f"rate(node_disk_read_bytes_total{{{HD}}}{RI})", leg + " read", "A"),
                          q(f"rate(node_disk_written_bytes_total{{{HD}}}{RI})", leg + " written", "B")], w=8),
        timeseries_panel("Average request size", "[F2] Bytes per completed request (avgrq-sz x 512): shows "
                         "where a layer splits I/O (e.g. 128 KB).", "bytes",
                         [q(f"rate(node_disk_read_bytes_total{{{HD}}}{RI}) / (rate(node_disk_reads_completed_total{{{HD}}}{RI}) > 0)",
                            leg + " read", "A"),
                          q(f"rate(node_disk_written_bytes_total{{{HD}}}{RI}) / (rate(node_disk_writes_completed_total{{{HD}}}{RI}) > 0)",
                            leg + " write", "B")], w=8),
        table_panel("LUN inventory", "[Q1-Q4, R17] dbhost_lun_info: device, H:C:T:L, vendor, model, WWID, "
                    "multipath map and the configured role the latency thresholds depend on; with the "
                    "configured queue depth.", "short",
                    [q(f"max by (instance, device, hctl, vendor, model, wwid, multipath, role) "
                       f"(dbhost_lun_info{{{HD}}}) * on (instance, device) group_left () "
                       f"max by (instance, device) (dbhost_lun_queue_depth{{{HD}}})", "", "A", instant=True,
                       fmt=PromQueryFormat.TABLE)], h=7, rename={"Value": "queue depth"}),
    ]
    o6, o6s = cfg.th("O6_paths"), cfg.th("O6_suspended")
    had = f"max by (instance, device) (max_over_time(dbhost_multipath_paths{{{HD}}}[1d]))"
    active = f"max by (instance, device) (dbhost_multipath_paths_active{{{HD}}})"
    panels += [
        db.Row("Multipath and NVMe paths"),
        timeseries_panel("Paths lost per multipath LUN", "[O6] Per dm-multipath map or NVMe native-multipath "
                         "namespace: the paths it had in the last day minus the paths carrying I/O now (SCSI "
                         "state running; NVMe controller live, ANA optimized or non-optimized). Above 0 the LUN "
                         "runs without redundancy: LunPathRedundancyLost (redo, data), LunAllPathsDown when "
                         "none is left.", "short",
                         [q(f"{had} - {active}", leg)], w=12, th=o6),
        timeseries_panel("Paths carrying I/O per multipath LUN", "[O6] dbhost_multipath_paths_active beside the "
                         "paths the map had in the last day (multipathd removes a path whose device is gone "
                         "from the map, so the map's own count drops too).", "short",
                         [q(active, leg + " active", "A"), q(had, leg + " had (1 d)", "B")], w=12),
        table_panel("Multipath maps", "[O6] Per map: its role, paths now, paths carrying I/O, and suspended "
                    f"(1: every I/O held; LunMultipathSuspended after {o6s.for_}).", "short",
                    [q(f"max by (instance, device) (dbhost_multipath_paths{{{HD}}})", "", "A", instant=True,
                       fmt=PromQueryFormat.TABLE),
                     q(active, "", "B", instant=True, fmt=PromQueryFormat.TABLE),
                     q(f"max by (instance, device) (dbhost_multipath_suspended{{{HD}}})", "", "C", instant=True,
                       fmt=PromQueryFormat.TABLE),
                     q(f"max by (instance, device, role) (dbhost_lun_info{{{HD}}}) and on (instance, device) "
                       f"dbhost_multipath_paths", "", "D", instant=True, fmt=PromQueryFormat.TABLE)],
                    w=12, h=7, hide=("Time", "Value #D"),
                    rename={"Value #A": "paths", "Value #B": "carrying I/O", "Value #C": "suspended"}),
        table_panel("NVMe controllers", "[O6] Each NVMe controller's state (live carries I/O; resetting, "
                    "connecting, deleting, dead do not: NvmeControllerNotLive after "
                    f"{cfg.th('O6_nvme').for_}), transport, model and subsystem, with its I/O queues.", "short",
                    [q(f"max by (instance, controller, state) (dbhost_nvme_controller_state{{{HOST}}} == 1) "
                       f"* on (instance, controller) group_left (transport, model, subsystem) "
                       f"max by (instance, controller, transport, model, subsystem) (dbhost_nvme_controller_info{{{HOST}}})",
                       "", "A", instant=True, fmt=PromQueryFormat.TABLE),
                     q(f"max by (instance, controller) (dbhost_nvme_controller_io_queues{{{HOST}}})", "", "B",
                       instant=True, fmt=PromQueryFormat.TABLE)],
                    w=12, h=7, hide=("Time", "Value #A"), rename={"Value #B": "I/O queues"}),
        table_panel("NVMe paths: ANA state", "[O6] Native NVMe multipath: each path (nvmeXcYnZ) of a namespace, "
                    "its controller and ANA state; inaccessible, persistent-loss and change carry no I/O and "
                    "count as lost paths. Empty without ANA (local PCIe SSDs).", "short",
                    [q(f"max by (instance, multipath, device, controller, state) "
                       f"(dbhost_nvme_path_ana_state{{{HOST}}} == 1)", "", "A", instant=True,
                       fmt=PromQueryFormat.TABLE)],
                    w=12, h=7, hide=("Time", "Value")),
    ]
    panels[-3] = override_name(panels[-3], "suspended", th=o6s, colour_cells=True)
    dev = v_query("device", "Device", 'label_values(dbhost_lun_info{instance=~"$host"}, device)')
    d = new_dashboard("host-storage", "Storage deep dive: LUN queue depths, latency by LUN role, IOPS, "
                      "request size (field notes Q1-Q4, R17, F2).", [v_datasource(), v_database(), v_host(cfg), dev])
    return add_panels(d, panels)


# ------------------------------------------------------------------------------------ CPU

def cpu(cfg: Config):
    c1, c4, r14 = cfg.th("C1"), cfg.th("C4"), cfg.th("R14")
    ncpu = f'count by (instance) (node_cpu_seconds_total{{{HOST}, mode="idle"}})'
    busy = (f'sum by (instance) (rate(node_cpu_seconds_total{{{HOST}, mode!~"idle|iowait"}}{RI})) / {ncpu}')
    sr = "{{instance}} {{sid}} {{role}}"
    panels = [
        db.Row("Run queue and CPU time"),
        timeseries_panel("Run queue per CPU", f"[C1, R18] Runnable tasks / CPUs, 5 m average: "
                         f"{c1.colour_at:g} or more per CPU with involuntary switches is a CPU bottleneck "
                         "(1.2 in the redo case study: not the bottleneck).", "short",
                         [q(f"{R.RUN_QUEUE_PER_CPU}{{{HOST}}}", "{{instance}}")], w=8, th=c1),
        timeseries_panel("CPU time by mode", "[C2] Share of all CPU per mode: user is the real work; system "
                         "(kernel) ideally below 5%.", "percentunit",
                         [q(f'sum by (instance, mode) (rate(node_cpu_seconds_total{{{HOST}, mode!="idle"}}{RI})) '
                            f"/ on (instance) group_left {ncpu}", "{{instance}} {{mode}}")], w=8, stack=True),
        timeseries_panel("System share of busy CPU", f"[C2, C4] System / (all non-idle, non-iowait CPU): above "
                         f"{c4.colour_at:g} the kernel dominates (80-90% when statistics gathering contended "
                         "on a kernel lock).", "percentunit",
                         [q(f"{R.CPU_SYSTEM_SHARE_OF_BUSY}{{{HOST}}}", "{{instance}}")], w=8, th=c4),
        timeseries_panel("Oracle's view of host load", "[C6] V$SYSMETRIC 'Current OS Load' and host CPU "
                         "utilisation as Oracle reports them, per database.", "short",
                         [q('oracle_host_os_load{database=~"$database"}', "{{database}}/{{inst_id}} OS load", "A")],
                         w=12),
        timeseries_panel("Oracle's view of host CPU utilisation", "[C6] V$SYSMETRIC 'Host CPU Utilization "
                         "(%)' as a ratio, per database: compare with node_exporter's CPU time by mode.",
                         "percentunit",
                         [q('oracle_host_cpu_utilization_ratio{database=~"$database"}', "{{database}}/{{inst_id}}")],
                         w=12),
        timeseries_panel("Context switches and interrupts per second", "[C3, C5] Host-wide: many voluntary "
                         "switches are fine; see the per-role involuntary share below.", "ops",
                         [q(f"rate(node_context_switches_total{{{HOST}}}{RI})", "{{instance}} context switches", "A"),
                          q(f"rate(node_intr_total{{{HOST}}}{RI})", "{{instance}} interrupts", "B")], w=24),
        db.Row("Oracle processes by role"),
        timeseries_panel("Involuntary context-switch share by role", f"[R14, C3] involuntary / all switches "
                         f"per sid and role (lgwr, dbw0, ..., foreground); LGWR above {r14.colour_at:g} is "
                         "R14's finding.", "percentunit",
                         [q(f"{R.PROC_INVOLUNTARY_SHARE}{{{HOST}}}", sr)],
                         w=12, th=r14),
        timeseries_panel("Involuntary context switches per second by role", "[C3, R14] The rate behind the "
                         "share: involuntary switches mean the process was preempted.", "ops",
                         [q(f'sum by (instance, sid, role) (rate(dbhost_process_context_switches_total{{{HOST}, kind="involuntary"}}{RI}))', sr)],
                         w=12),
        timeseries_panel("Migrations per second by role", "[C3] Thread migrations between CPUs per sid and "
                         "role; with involuntary switches a CPU-bottleneck signal.", "ops",
                         [q(f"{R.PROC_MIGRATIONS}{{{HOST}}}", sr)], w=12),
        timeseries_panel("Run-queue wait per dispatch by role", "[R13, R14] Time the group's threads waited on "
                         "a run queue for a CPU per dispatch (schedstat run_delay / timeslices): the direct "
                         f"measure of CPU starvation. LGWR or foregrounds above {cfg.th('R13_run_delay').colour_at * 1000:g} ms "
                         "while commits lag LGWR's writes is OracleCommitCpuStarvation's named cause.", "s",
                         [q(f"{R.PROC_RUN_DELAY_PER_DISPATCH}{{{HOST}}}", sr)], w=12, th=cfg.th("R13_run_delay")),
        timeseries_panel("Run-queue wait by role (CPU-seconds waited per second)", "[C1, R14] Seconds per second "
                         "the group's threads were runnable but waiting for a CPU (1 = one thread waiting all "
                         "the time), beside the CPU it used: rate(run_delay) against rate(running).", "short",
                         [q(f"{R.PROC_RUN_DELAY}{{{HOST}}}", sr + " waiting", "A"),
                          q(f"sum by (instance, sid, role) (rate(dbhost_process_running_seconds_total{{{HOST}}}{RI}))",
                            sr + " running", "B")], w=12),
        timeseries_panel("Oracle CPU by role and mode", "[C2, C4] CPU seconds per second (1 = one CPU) used by "
                         "each sid and role, user vs system.", "short",
                         [q(f"sum by (instance, sid, role, mode) (rate(dbhost_process_cpu_seconds_total{{{HOST}}}{RI}))",
                            sr + " {{mode}}")], w=12, stack=True),
        db.Row("Cycles per instruction (node_exporter --collector.perf)"),
        timeseries_panel("CPI: cycles per instruction", "[C7] node_perf_cpucycles_total / "
                         "node_perf_instructions_total, only while CPUs are more than 5% busy: ~0.34 is the "
                         "best an AMD64 core does, ~1.1 cache-friendly, ~8.5 scattered memory reads. Empty "
                         "unless node_exporter runs with --collector.perf.", "short",
                         [q(f"(sum by (instance) (rate(node_perf_cpucycles_total{{{HOST}}}{RI})) / "
                            f"(sum by (instance) (rate(node_perf_instructions_total{{{HOST}}}{RI})) > 0)) "
                            f"and on (instance) ({busy} > 0.05)", "{{instance}}")], w=24),
    ]
    panels += [
        db.Row("Monitoring agents: cheap, never the cause (C4)"),
        timeseries_panel("Exporter scrape duration", "[C4, C5] How long each scrape of the exporters takes "
                         "(Prometheus' scrape_duration_seconds) and the oracle-exporter's own per-database "
                         "query time: C4's host lost 80-90% to statistics gathering, so the agent must stay "
                         "cheap.", "s",
                         [q(f'scrape_duration_seconds{{{cfg.selector("oracle", "dbhost", "node")}}}', "{{job}} {{instance}}", "A"),
                          q('oracle_scrape_duration_seconds{database=~"$database"}', "oracle {{database}}", "B")],
                         w=12),
        timeseries_panel("Collector success", "[C5] 1 when the last run of each collector succeeded "
                         "(dbhost-exporter per host, oracle-exporter per database); 0 means its metrics and "
                         "the alerts built on them are missing.", "bool",
                         [q(f"dbhost_collector_success{{{HOST}}}", "dbhost {{instance}} {{collector}}", "A"),
                          q('oracle_collector_success{database=~"$database"}', "oracle {{database}} {{collector}}", "B")],
                         w=12),
    ]
    d = new_dashboard("host-cpu", "CPU scheduling deep dive: run queue, system vs user, per-role "
                      "involuntary switches and migrations, CPI (field notes C1-C7, R14).",
                      [v_datasource(), v_database(), v_host(cfg)])
    return add_panels(d, panels)


# ------------------------------------------------------------------------------------ ZFS

def zfs(cfg: Config):
    z4 = cfg.th("Z4")
    z3 = cfg.th("Z3")
    panels = [
        db.Row("ARC"),
        timeseries_panel("ARC size vs target, min and max", "[Z5, Z1] Current ARC size against its target "
                         "(c), c_min and c_max.", "bytes",
                         [q(f"dbhost_zfs_arc_size_bytes{{{HOST}}}", "{{instance}} size", "A"),
                          q(f"dbhost_zfs_arc_target_bytes{{{HOST}}}", "{{instance}} target", "B"),
                          q(f"dbhost_zfs_arc_min_bytes{{{HOST}}}", "{{instance}} min", "C"),
                          q(f"dbhost_zfs_arc_max_bytes{{{HOST}}}", "{{instance}} max", "D")], w=12),
        timeseries_panel("ARC hit ratio: all, demand, prefetch", "[Z5] hits / (hits + misses) over 5 m, all "
                         "kinds and per kind (demand_data, demand_metadata, prefetch_data, prefetch_metadata).",
                         "percentunit",
                         [q(f"{R.ARC_HIT_RATIO}{{{HOST}}}", "{{instance}} all", "A"),
                          q(f"{R.ARC_HIT_RATIO_BY_KIND}{{{HOST}}}", "{{instance}} {{kind}}", "B")],
                         w=12, minimum=None),
        timeseries_panel("ARC requests per second by kind", "[Z5] hits, misses and I/O hits (request found "
                         "its I/O already in flight) per kind.", "ops",
                         [q(f"sum by (instance, kind) (rate(dbhost_zfs_arc_hits_total{{{HOST}}}{RI}))", "{{instance}} {{kind}} hits", "A"),
                          q(f"sum by (instance, kind) (rate(dbhost_zfs_arc_misses_total{{{HOST}}}{RI}))", "{{instance}} {{kind}} misses", "B"),
                          q(f"sum by (instance, kind) (rate(dbhost_zfs_arc_iohits_total{{{HOST}}}{RI}))", "{{instance}} {{kind}} iohits", "C")],
                         w=24),
        db.Row("L2ARC"),
        timeseries_panel("L2ARC hit ratio", f"[Z5, Z2, Z3] l2_hits / (l2_hits + l2_misses) over 5 m; warms "
                         f"over hours; still below {z3.colour_at:g} after 6 h of demand is a finding (info).",
                         "percentunit", [q(f"{R.L2ARC_HIT_RATIO}{{{HOST}}}", "{{instance}}")],
                         w=8, th=z3, minimum=None),
        timeseries_panel("L2ARC size", "[Z5, Z3] Data held in the L2ARC (l2_size) and space allocated on the "
                         "cache devices (l2_asize).", "bytes",
                         [q(f"dbhost_zfs_l2arc_size_bytes{{{HOST}}}", "{{instance}} size", "A"),
                          q(f"dbhost_zfs_l2arc_allocated_bytes{{{HOST}}}", "{{instance}} allocated", "B")], w=8),
        timeseries_panel("L2ARC feed rate", "[Z5, Z3] Bytes written to the cache devices per second (filled "
                         "asynchronously from the ARC's eviction end) and feed-thread runs per second.", "Bps",
                         [q(f"rate(dbhost_zfs_l2arc_written_bytes_total{{{HOST}}}{RI})", "{{instance}} written", "A"),
                          q(f"rate(dbhost_zfs_l2arc_feeds_total{{{HOST}}}{RI})", "{{instance}} feeds/s", "B")], w=8),
        timeseries_panel("L2ARC errors", "[Z4] Checksum and I/O errors reading the L2ARC (increase per interval): "
                         "reads fall back to the pool, but any error is a finding (enough of them offline the "
                         "device).", "short",
                         [q(f"sum by (instance, kind) (increase(dbhost_zfs_l2arc_errors_total{{{HOST}}}{RI}))",
                            "{{instance}} {{kind}}")], w=12, th=z4),
        timeseries_panel("Per-device service time", "[Z5, Z2] Average read and write service time of every "
                         "block device of the host, L2ARC cache devices included (0.4-0.6 ms from warm SSD "
                         "cache vs 9-10 ms from disks).", "s",
                         [q(f"rate(node_disk_read_time_seconds_total{{{HOST}}}{RI}) / (rate(node_disk_reads_completed_total{{{HOST}}}{RI}) > 0)",
                            "{{instance}} {{device}} read", "A"),
                          q(f"rate(node_disk_write_time_seconds_total{{{HOST}}}{RI}) / (rate(node_disk_writes_completed_total{{{HOST}}}{RI}) > 0)",
                            "{{instance}} {{device}} write", "B")], w=12),
    ]
    d = new_dashboard("host-zfs", "ZFS ARC and L2ARC deep dive (field notes Z1-Z5).",
                      [v_datasource(), v_database(), v_host(cfg)])
    return add_panels(d, panels)
