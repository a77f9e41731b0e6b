"""Recording rules: every recorded series' name as a constant, and how it is computed.

The alert rules (mixin.rules) and the dashboards (mixin.dashboards) name recorded series
only through these constants, so a rename is one edit and a typo is an ImportError.
Names follow the Prometheus convention level:metric:operations.
"""
from __future__ import annotations

from mixin.config import Config

# label matcher of LGWR and its 12c+ workers (LG00, LG01 ...), for rules and panels alike
LGWR_ROLES = 'role=~"lgwr|lg[0-9]+"'
# the waits of a commit: the session waits for LGWR, for a log switch, or for log buffer space
COMMIT_WAITS = 'event=~"log file sync|log file switch.*|log buffer space"'

# ---------------------------------------------------------------- Oracle wait events
WAITS = "database_inst_event:oracle_wait_event_waits:rate5m"
WAIT_TIME = "database_inst_event:oracle_wait_event_time_seconds:rate5m"
WAIT_AVG = "database_inst_event:oracle_wait_event_average_wait_seconds:rate5m"

# ---------------------------------------------------------------- Oracle redo statistics
REDO_COUNTERS = ("redo_size_bytes", "redo_entries", "redo_writes", "redo_synch_writes", "user_commits",
                 "redo_buffer_allocation_retries", "redo_log_space_requests", "redo_write_time_seconds",
                 "redo_synch_time_seconds", "redo_log_space_wait_time_seconds")


def redo_rate(counter: str) -> str:
    """database_inst:oracle_<counter>:rate5m, for each of REDO_COUNTERS."""
    if counter not in REDO_COUNTERS:
        raise KeyError(f"no recorded rate for oracle_{counter}_total")
    return f"database_inst:oracle_{counter}:rate5m"


REDO_SIZE = redo_rate("redo_size_bytes")
REDO_ENTRIES = redo_rate("redo_entries")
REDO_WRITES = redo_rate("redo_writes")
REDO_SYNCH_WRITES = redo_rate("redo_synch_writes")
USER_COMMITS = redo_rate("user_commits")
REDO_BUFFER_ALLOCATION_RETRIES = redo_rate("redo_buffer_allocation_retries")
REDO_LOG_SPACE_REQUESTS = redo_rate("redo_log_space_requests")
REDO_WRITE_TIME_AVG = "database_inst:oracle_redo_write_time_seconds:avg_rate5m"
REDO_SYNCH_TIME_AVG = "database_inst:oracle_redo_synch_time_seconds:avg_rate5m"
REDO_LOG_SPACE_WAIT_AVG = "database_inst:oracle_redo_log_space_wait_time_seconds:avg_rate5m"
REDO_RETRIES_PER_ENTRY = "database_inst:oracle_redo_buffer_allocation_retries_per_entry:ratio_rate5m"
LOG_SWITCHES_1H = "database_inst:oracle_redo_log_switches:increase1h"
LOG_SWITCH_INTERVAL = "database_inst:oracle_redo_log_switch_interval_seconds:avg1h"
REDO_SIZE_1H = "database_inst:oracle_redo_size_bytes:increase1h"
# how many times the redo of the last hour fills an online log: the switches the redo volume
# forces (R15), whatever ARCHIVE_LAG_TARGET or a manual switch adds
LOG_FILLS_1H = "database_inst:oracle_redo_log_fills:increase1h"

# ---------------------------------------------------------------- Oracle instance
LATCH_GETS = "database_inst:oracle_latch_gets:rate5m"
LATCH_MISSES = "database_inst:oracle_latch_misses:rate5m"
LATCH_HIT_RATIO = "database_inst:oracle_latch_hit_ratio:rate5m"
PGA_ALLOCATED_TO_TARGET = "database_inst:oracle_pga_allocated_to_target:ratio"
RESOURCE_UTILIZATION = "database_inst_resource:oracle_resource_utilization:ratio"
TABLESPACE_USED = "database_tablespace:oracle_tablespace_used:ratio"
RECOVERY_AREA_USED = "database:oracle_recovery_area_used:ratio"
# issue 23: presence remembered by recording rules (no fixed look-back that lets a vanished
# instance resolve itself): the number of instances a database has now, and the number it is
# expected to have: the largest count that held for an hour (a RAC One Node relocation's
# overlap of two instances, up to its 30-minute shutdown timeout, does not raise it), kept while
# the database stays in the exporter's output (oracle_up within a day).
INSTANCES = "database:oracle_instances:count"
INSTANCES_EXPECTED = "database:oracle_instances:expected"
INSTANCES_STABLE_WINDOW = "1h"
# issue 24: a PDB seen open READ WRITE is expected open for as long as it exists: a PDB left
# MOUNTED after a restart alerts until it is opened or dropped. Dropped: its instance answers
# (other PDBs of it are in oracle_pdb_open_mode) without it; an instance down or restarting for
# minutes or hours concludes nothing (the memory is kept, the alert waits for its data).
PDB_OPEN_EXPECTED = "pdb:oracle_pdb_open:expected"
# issue 23 (item 3): scrape targets, databases and multipath maps remembered the same way.
# A scrape target (job, instance) seen in `up` is expected for as long as Prometheus keeps this
# series: no look-back forgets a target dropped from service discovery. A target retired on
# purpose is forgotten by deleting its memory series (docs/runbooks/ScrapeTargetVanished.md).
TARGETS_EXPECTED = "target:up:expected"
# A database seen in oracle_up is expected from its exporter target until it leaves the
# exporter's configuration. oracle-exporter reads its configuration at start only and exports
# oracle_up for every database it lists (0 when it cannot reach it), so "left the configuration"
# is: a newer exporter process (process_start_time_seconds) than the one that last exported the
# database (DATABASE_EXPORTED_BY) answers without it. Then the database is forgotten at once,
# before OracleDatabaseVanished's `for`: a planned removal (config edit + restart) is quiet. A
# database missing from the output of the same process (the exporter lost it), or from an
# exporter that is down or not scraped, stays expected.
DATABASES_EXPECTED = "database:oracle_up:expected"
DATABASE_EXPORTED_BY = "database:oracle_exporter_process_start_time_seconds:last"
# The paths a multipath map (dm-multipath, NVMe native multipath) is expected to have: the most it
# has had. Never lowered by the rule: a path lost between two scrapes (the kernel deleted the SCSI
# device before a scrape saw it failed: paths and active paths drop together) looks exactly like a
# planned reduction, and stays alerted until it is back. A planned reduction is declared by
# deleting the map's memory series (docs/runbooks/LunPathRedundancyLost.md): the rule learns the
# new count at its next evaluation. Forgotten once the map has been out of the exporter's output
# for a day.
# An ASM disk group a database saw (oracle_asm_diskgroup_info, any state) is expected for as long
# as the database is (DATABASES_EXPECTED): a disk group dismounted under a running database stays
# alerted until it is mounted again; one dropped on purpose is forgotten by deleting its memory.
DISKGROUPS_EXPECTED = "database_diskgroup:oracle_asm_diskgroup:expected"
PATHS = "instance_device:dbhost_multipath_paths:last3m"
PATHS_ACTIVE = "instance_device:dbhost_multipath_paths_active:last3m"
PATHS_EXPECTED = "instance_device:dbhost_multipath_paths:expected"
# rev23 #7: every memory reads its own previous value over MEMORY_RECALL, not as an instant
# vector (5 minutes of look-back): a rule-evaluation gap (Prometheus restart with a long WAL
# replay, a vmalert restart) of up to MEMORY_RECALL forgets nothing. A memory stops being written
# only when the thing left the configuration as each rule says (or its series is deleted).
MEMORY_RECALL = "2h"


def recall(name: str, labels: str) -> str:
    """A memory's previous value, read across an evaluation gap of up to MEMORY_RECALL, through
    `max by` its own labels (a ruler that adds external labels to what it records, vmalert's
    -external.label, reads them back with them)."""
    return f"max by ({labels}) (last_over_time({name}[{MEMORY_RECALL}]))"
# issue 23 (item 4): the fast recovery area's reclaimable bytes, per ASM disk group it lives in
# (oracle_recovery_area_info{diskgroup}): space Oracle deletes by itself when the FRA needs room
# as space for files (oracle_asm_diskgroup_file_space_bytes' basis: divided by the mirror copies
# unless the basis is raw free space), summed over the databases whose FRA is in the disk group
FRA_RECLAIMABLE_IN_DISKGROUP = "asm_diskgroup:oracle_recovery_area_reclaimable_file_space_bytes:sum"

# ---------------------------------------------------------------- Oracle processes on the host
PROC_SWITCHES = "instance_sid_role:dbhost_process_context_switches:rate5m"
PROC_INVOLUNTARY_SHARE = "instance_sid_role:dbhost_process_involuntary_context_switches_share:rate5m"
HOST_INVOLUNTARY = "instance:dbhost_process_involuntary_context_switches:rate5m"
HOST_INVOLUNTARY_SHARE = "instance:dbhost_process_involuntary_context_switches_share:rate5m"
PROC_MIGRATIONS = "instance_sid_role:dbhost_process_migrations:rate5m"
# schedstat run delay: seconds the group's threads waited on a run queue per second, and per dispatch
PROC_RUN_DELAY = "instance_sid_role:dbhost_process_run_delay:rate5m"
PROC_RUN_DELAY_PER_DISPATCH = "instance_sid_role:dbhost_process_run_delay_per_dispatch:rate5m"
# the same per Oracle database instance (sid -> database, inst_id through oracle_instance_info)
LGWR_RUN_DELAY = "database_inst:dbhost_lgwr_run_delay_per_dispatch:rate5m"
FOREGROUND_RUN_DELAY = "database_inst:dbhost_foreground_run_delay_per_dispatch:rate5m"
# the SGAs of the Oracle instances whose SID runs on a host (per dbhost target)
SGA_ON_HOST = "instance:oracle_sga_target_bytes:sum"

# ---------------------------------------------------------------- LUNs
LUN_HOST_QUEUE = "instance_device:dbhost_lun_host_queue:avg5m"
LUN_LUN_QUEUE = "instance_device:dbhost_lun_lun_queue:avg5m"
LUN_QUEUE_FULL_SHARE = "instance_device:dbhost_lun_queue_full_share:rate5m"
DISK_READS = "instance_device:node_disk_reads_completed:rate5m"
DISK_WRITES = "instance_device:node_disk_writes_completed:rate5m"
LUN_ROLE = "instance_device:dbhost_lun_role:info"
DISK_READ_LATENCY = "instance_device_role:node_disk_read_latency_seconds:rate5m"
DISK_WRITE_LATENCY = "instance_device_role:node_disk_write_latency_seconds:rate5m"
DISK_QUEUE_SIZE = "instance_device:node_disk_queue_size:rate5m"

# ---------------------------------------------------------------- ZFS
ARC_ACCESSES_BY_KIND = "instance_kind:dbhost_zfs_arc_accesses:rate5m"
ARC_HIT_RATIO_BY_KIND = "instance_kind:dbhost_zfs_arc_hit_ratio:rate5m"
ARC_HIT_RATIO = "instance:dbhost_zfs_arc_hit_ratio:rate5m"
L2ARC_LOOKUPS = "instance:dbhost_zfs_l2arc_lookups:rate5m"
L2ARC_HIT_RATIO = "instance:dbhost_zfs_l2arc_hit_ratio:rate5m"

# ---------------------------------------------------------------- host CPU and memory
CPUS = "instance:node_cpus:count"
CPU_SYSTEM = "instance:node_cpu_system:rate5m"
CPU_BUSY = "instance:node_cpu_busy:rate5m"
CPU_SYSTEM_SHARE_OF_BUSY = "instance:node_cpu_system_share_of_busy:rate5m"
CPU_SYSTEM_SHARE = "instance:node_cpu_system_share:rate5m"
RUN_QUEUE_PER_CPU = "instance:node_run_queue_per_cpu:avg5m"
MAJOR_FAULTS = "instance:node_vmstat_pgmajfault:rate5m"
MAJOR_FAULT_RATIO = "instance:node_major_page_fault_ratio:rate5m"
SWAP_PAGES = "instance:node_swap_pages:rate5m"


def by_database_instance(cfg: Config, host_expr: str) -> str:
    """A dbhost-exporter per-(instance, sid) measure as the Oracle instance's (database, inst_id,
    with the oracle-exporter's target labels), worst of its series. oracle_instance_info's
    INSTANCE_NAME is the sid and HOST_NAME the host: both must match (issue 23 review #8), the
    short host name being the dbhost target's `instance` against GV$INSTANCE.HOST_NAME, both up to
    the first dot (or colon); a target addressed by IPv4 address keeps its whole address
    (10.0.0.11:19162 -> 10.0.0.11, alertfix #6: not "10", which every host of 10.x shares). A SID alone never decides, not even where it is unique among the
    monitored databases: an unmonitored standby (or clone) on another host with the same SID
    would lend its processes to the primary. Each side is reduced to one series per join key
    first, so duplicates never fail the rule."""
    info = ('label_replace(label_replace(last_over_time(oracle_instance_info[3m]), "sid", "$1", "instance_name", "(.*)"), '
            '"host", "$1$2", "host_name", "([0-9]+[.][0-9]+[.][0-9]+[.][0-9]+)|([^.]+).*")')
    host = f'label_replace({host_expr}, "host", "$1$2", "instance", "([0-9]+[.][0-9]+[.][0-9]+[.][0-9]+)(?::.*)?|([^.:]+).*")'
    return (f"max by ({cfg.by('database', 'inst_id')}) (\n"
            f"  {info}\n"
            f"    * on (sid, host) group_left () max by (sid, host) ({host})\n"
            f")")


def by_host(cfg: Config, oracle_expr: str) -> str:
    """An Oracle per-(database, inst_id) measure summed over the instances whose SID has
    processes on a dbhost-exporter target (labelled as that target). The reverse of
    by_database_instance, with the same rule: SID and short host name both match, never the SID
    alone (an unmonitored standby with the primary's SID on another host must not count)."""
    info = ('label_replace(label_replace(last_over_time(oracle_instance_info[3m]), "sid", "$1", "instance_name", "(.*)"), '
            '"host", "$1$2", "host_name", "([0-9]+[.][0-9]+[.][0-9]+[.][0-9]+)|([^.]+).*")')
    ora = (f"({oracle_expr}) * on ({cfg.by('database', 'inst_id')}) group_left (sid, host) "
           f"max by ({cfg.by('database', 'inst_id', 'sid', 'host')}) ({info})")
    sids = f"group by ({cfg.by('instance', 'sid')}) (dbhost_process_context_switches_total)"
    sids_host = f'label_replace({sids}, "host", "$1$2", "instance", "([0-9]+[.][0-9]+[.][0-9]+[.][0-9]+)(?::.*)?|([^.:]+).*")'
    return (f"sum by ({cfg.by('instance')}) (\n"
            f"  {sids_host}\n"
            f"    * on (sid, host) group_left () max by (sid, host) ({ora})\n"
            f")")


def groups(cfg: Config) -> list[tuple[str, list[tuple[str, str]]]]:
    """(group name, [(record, expr)]). Groups are evaluated in order, so a rule may use the
    rules recorded above it in the same group. Aggregations keep cfg.target_labels."""
    db_inst = cfg.by("database", "inst_id")
    host = cfg.by("instance")
    dev = cfg.by("instance", "device")
    dev_join = cfg.join("instance", "device")     # node_exporter series meet dbhost-exporter's
    return [
        ("oracle_waits.rules", [
            (WAITS, f"sum by ({cfg.by('database', 'inst_id', 'event', 'wait_class')}) "
                    "(rate(oracle_wait_event_waits_total[5m]))"),
            (WAIT_TIME, f"sum by ({cfg.by('database', 'inst_id', 'event', 'wait_class')}) "
                        "(rate(oracle_wait_event_time_seconds_total[5m]))"),
            (WAIT_AVG, f"{WAIT_TIME}\n  / ({WAITS} > 0)"),
        ]),
        ("oracle_redo.rules", [
            *[(redo_rate(m), f"sum by ({db_inst}) (rate(oracle_{m}_total[5m]))") for m in REDO_COUNTERS],
            (REDO_WRITE_TIME_AVG, f"{redo_rate('redo_write_time_seconds')}\n  / ({REDO_WRITES} > 0)"),
            (REDO_SYNCH_TIME_AVG, f"{redo_rate('redo_synch_time_seconds')}\n  / ({REDO_SYNCH_WRITES} > 0)"),
            (REDO_LOG_SPACE_WAIT_AVG,
             f"{redo_rate('redo_log_space_wait_time_seconds')}\n  / ({REDO_LOG_SPACE_REQUESTS} > 0)"),
            (REDO_RETRIES_PER_ENTRY, f"{REDO_BUFFER_ALLOCATION_RETRIES}\n  / ({REDO_ENTRIES} > 0)"),
            (LOG_SWITCHES_1H, f"sum by ({db_inst}) (increase(oracle_redo_log_switches_total[1h]))"),
            (LOG_SWITCH_INTERVAL, f"3600 / ({LOG_SWITCHES_1H} > 0)"),
            (REDO_SIZE_1H, f"sum by ({db_inst}) (increase(oracle_redo_size_bytes_total[1h]))"),
            (LOG_FILLS_1H, f"{REDO_SIZE_1H}\n  / on ({db_inst}) (max by ({db_inst}) (last_over_time(oracle_redo_log_group_size_bytes[3m])) > 0)"),
        ]),
        ("oracle_instance.rules", [
            (LATCH_GETS, f"sum by ({db_inst}) (rate(oracle_latch_gets_total{{latch=\"all\"}}[5m]))"),
            (LATCH_MISSES, f"sum by ({db_inst}) (rate(oracle_latch_misses_total{{latch=\"all\"}}[5m]))"),
            (LATCH_HIT_RATIO, f"1 - {LATCH_MISSES}\n  / ({LATCH_GETS} > 0)"),
            (PGA_ALLOCATED_TO_TARGET, f"sum by ({db_inst}) (last_over_time(oracle_pga_allocated_bytes[3m]))\n"
                                      f"  / (sum by ({db_inst}) (last_over_time(oracle_pga_target_bytes[3m])) > 0)"),
        ]),
        ("oracle_space.rules", [
            # GV$RESOURCE_LIMIT: no limit series when UNLIMITED, so no ratio either
            (RESOURCE_UTILIZATION, f"max by ({cfg.by('database', 'inst_id', 'resource')}) (last_over_time(oracle_resource_current_utilization[3m]))\n"
                                   f"  / (max by ({cfg.by('database', 'inst_id', 'resource')}) (last_over_time(oracle_resource_limit[3m])) > 0)"),
            # of the size the tablespace can reach (autoextensible files at MAXSIZE)
            (TABLESPACE_USED, f"max by ({cfg.by('database', 'container', 'tablespace', 'contents')}) (last_over_time(oracle_tablespace_used_bytes[3m]))\n"
                              f"  / (max by ({cfg.by('database', 'container', 'tablespace', 'contents')}) (last_over_time(oracle_tablespace_max_bytes[3m])) > 0)"),
            # what Oracle cannot reclaim by itself
            (RECOVERY_AREA_USED, f"(max by ({cfg.by('database')}) (last_over_time(oracle_recovery_area_used_bytes[3m]))\n"
                                 f"   - max by ({cfg.by('database')}) (last_over_time(oracle_recovery_area_reclaimable_bytes[3m])))\n"
                                 f"  / (max by ({cfg.by('database')}) (last_over_time(oracle_recovery_area_limit_bytes[3m])) > 0)"),
        ]),
        ("oracle_presence.rules", [
            # last_over_time: a failed scrape does not make every instance vanish for a minute
            (INSTANCES, f"count by ({cfg.by('database')}) (last_over_time(oracle_instance_info[3m]))"),
            (INSTANCES_EXPECTED,
             f"max by ({cfg.by('database')}) (min_over_time({INSTANCES}[{INSTANCES_STABLE_WINDOW}]))\n"
             f"  >= on ({cfg.by('database')}) {recall(INSTANCES_EXPECTED, cfg.by('database'))}\n"
             f"or\n"
             f"{recall(INSTANCES_EXPECTED, cfg.by('database'))} and on ({cfg.by('database')}) "
             f"last_over_time(oracle_up[1d])\n"
             f"or\n"
             f"max by ({cfg.by('database')}) (min_over_time({INSTANCES}[{INSTANCES_STABLE_WINDOW}]))"),
            (PDB_OPEN_EXPECTED, pdb_open_expected(cfg)),
        ]),
        ("presence.rules", presence_rules(cfg)),
        ("dbhost_process.rules", [
            (PROC_SWITCHES, f"sum by ({cfg.by('instance', 'sid', 'role')}) "
                            "(rate(dbhost_process_context_switches_total[5m]))"),
            (PROC_INVOLUNTARY_SHARE,
             f"sum by ({cfg.by('instance', 'sid', 'role')}) "
             "(rate(dbhost_process_context_switches_total{kind=\"involuntary\"}[5m]))\n"
             f"  / ({PROC_SWITCHES} > 0)"),
            (HOST_INVOLUNTARY, f"sum by ({host}) "
                               "(rate(dbhost_process_context_switches_total{kind=\"involuntary\"}[5m]))"),
            (HOST_INVOLUNTARY_SHARE,
             f"sum by ({host}) (rate(dbhost_process_context_switches_total{{kind=\"involuntary\"}}[5m]))\n"
             f"  / (sum by ({host}) (rate(dbhost_process_context_switches_total[5m])) > 0)"),
            (PROC_MIGRATIONS, f"sum by ({cfg.by('instance', 'sid', 'role')}) "
                              "(rate(dbhost_process_migrations_total[5m]))"),
            (PROC_RUN_DELAY, f"sum by ({cfg.by('instance', 'sid', 'role')}) "
                             "(rate(dbhost_process_run_delay_seconds_total[5m]))"),
            (PROC_RUN_DELAY_PER_DISPATCH, f"{PROC_RUN_DELAY}\n"
                                          f"  / (sum by ({cfg.by('instance', 'sid', 'role')}) "
                                          "(rate(dbhost_process_timeslices_total[5m])) > 0)"),
            (LGWR_RUN_DELAY, by_database_instance(cfg, PROC_RUN_DELAY_PER_DISPATCH + "{" + LGWR_ROLES + "}")),
            (FOREGROUND_RUN_DELAY, by_database_instance(cfg, PROC_RUN_DELAY_PER_DISPATCH + '{role="foreground"}')),
            (SGA_ON_HOST, by_host(cfg, f"max by ({cfg.by('database', 'inst_id')}) (last_over_time(oracle_sga_target_bytes[3m]))")),
        ]),
        ("host_storage.rules", [
            (LUN_HOST_QUEUE, f"sum by ({dev}) (avg_over_time(dbhost_lun_inflight_requests{{queue=\"host\"}}[5m]))"),
            (LUN_LUN_QUEUE, f"sum by ({dev}) (avg_over_time(dbhost_lun_inflight_requests{{queue=\"lun\"}}[5m]))"),
            (LUN_QUEUE_FULL_SHARE, f"sum by ({dev}) (rate(dbhost_lun_queue_full_samples_total[5m]))\n"
                                   f"  / (sum by ({dev}) (rate(dbhost_lun_samples_total[5m])) > 0)"),
            (DISK_READS, f"sum by ({dev}) (rate(node_disk_reads_completed_total[5m]))"),
            (DISK_WRITES, f"sum by ({dev}) (rate(node_disk_writes_completed_total[5m]))"),
            # exactly one role per (instance, device): dbhost_lun_info can briefly hold two series
            # for a device (a role changed in the config, two exporters on one host); group_left
            # would then fail the whole rule for every device, so topk picks one.
            (LUN_ROLE, f"topk by ({dev_join}) (1, max by ({cfg.by('instance', 'device', 'role')}) "
                       "(last_over_time(dbhost_lun_info[3m])))"),
            (DISK_READ_LATENCY, f"sum by ({dev}) (rate(node_disk_read_time_seconds_total[5m]))\n"
                                f"  / ({DISK_READS} > 0)\n"
                                f"  * on ({dev_join}) group_left (role) {LUN_ROLE}"),
            (DISK_WRITE_LATENCY, f"sum by ({dev}) (rate(node_disk_write_time_seconds_total[5m]))\n"
                                 f"  / ({DISK_WRITES} > 0)\n"
                                 f"  * on ({dev_join}) group_left (role) {LUN_ROLE}"),
            (DISK_QUEUE_SIZE, f"sum by ({dev}) (rate(node_disk_io_time_weighted_seconds_total[5m]))"),
        ]),
        ("host_zfs.rules", [
            # OpenZFS arc_summary: accesses = hits + iohits + misses (iohits since 2.2;
            # absent on older releases and on illumos, hence the "or ... * 0").
            (ARC_ACCESSES_BY_KIND,
             f"sum by ({cfg.by('instance', 'kind')}) (rate(dbhost_zfs_arc_hits_total[5m]))\n"
             f"  + sum by ({cfg.by('instance', 'kind')}) (rate(dbhost_zfs_arc_misses_total[5m]))\n"
             f"  + (sum by ({cfg.by('instance', 'kind')}) (rate(dbhost_zfs_arc_iohits_total[5m]))\n"
             f"     or sum by ({cfg.by('instance', 'kind')}) (rate(dbhost_zfs_arc_hits_total[5m])) * 0)"),
            (ARC_HIT_RATIO_BY_KIND, f"sum by ({cfg.by('instance', 'kind')}) (rate(dbhost_zfs_arc_hits_total[5m]))\n"
                                    f"  / ({ARC_ACCESSES_BY_KIND} > 0)"),
            (ARC_HIT_RATIO, f"sum by ({host}) (rate(dbhost_zfs_arc_hits_total[5m]))\n"
                            f"  / (sum by ({host}) ({ARC_ACCESSES_BY_KIND}) > 0)"),
            (L2ARC_LOOKUPS, f"sum by ({host}) (rate(dbhost_zfs_l2arc_hits_total[5m]))\n"
                            f"  + sum by ({host}) (rate(dbhost_zfs_l2arc_misses_total[5m]))"),
            (L2ARC_HIT_RATIO, f"sum by ({host}) (rate(dbhost_zfs_l2arc_hits_total[5m]))\n"
                              f"  / ({L2ARC_LOOKUPS} > 0)"),
        ]),
        ("host_cpu_memory.rules", [
            (CPUS, f"count by ({host}) (node_cpu_seconds_total{{mode=\"idle\"}})"),
            # kernel time: system plus interrupt handling (Solaris "sys" includes both)
            (CPU_SYSTEM, f"sum by ({host}) (rate(node_cpu_seconds_total{{mode=~\"system|irq|softirq\"}}[5m]))"),
            (CPU_BUSY, f"sum by ({host}) (rate(node_cpu_seconds_total{{mode!~\"idle|iowait\"}}[5m]))"),
            (CPU_SYSTEM_SHARE_OF_BUSY, f"{CPU_SYSTEM} / ({CPU_BUSY} > 0)"),
            (CPU_SYSTEM_SHARE, f"{CPU_SYSTEM}\n  / (sum by ({host}) (rate(node_cpu_seconds_total[5m])) > 0)"),
            (RUN_QUEUE_PER_CPU, f"max by ({host}) (avg_over_time(node_procs_running[5m]))\n"
                                f"  / on ({host}) {CPUS}"),
            (MAJOR_FAULTS, f"sum by ({host}) (rate(node_vmstat_pgmajfault[5m]))"),
            (MAJOR_FAULT_RATIO, f"{MAJOR_FAULTS}\n  / (sum by ({host}) (rate(node_vmstat_pgfault[5m])) > 0)"),
            (SWAP_PAGES, f"sum by ({host}) (rate(node_vmstat_pswpin[5m]))\n"
                         f"  + sum by ({host}) (rate(node_vmstat_pswpout[5m]))"),
        ]),
    ]


def pdb_open_expected(cfg: Config) -> str:
    """pdb:oracle_pdb_open:expected: set while the PDB is open READ WRITE; kept (across an
    instance restart of any length and an evaluation gap up to MEMORY_RECALL) until the PDB is
    dropped: its instance answers, other PDBs of it are in oracle_pdb_open_mode, this one is not."""
    pdb = cfg.by("database", "inst_id", "pdb")
    inst = cfg.by("database", "inst_id")
    mem = recall(PDB_OPEN_EXPECTED, pdb)
    return (f"max by ({pdb}) (last_over_time(oracle_pdb_open_mode{{open_mode=\"READ WRITE\"}}[3m])) == 1\n"
            f"or\n"
            f"(\n"
            f"  {mem}\n"
            f"  unless on ({pdb}) (\n"
            f"    {mem}\n"
            f"    unless on ({pdb}) max by ({pdb}) (last_over_time(oracle_pdb_open_mode[3m]))\n"
            f"    and on ({inst}) max by ({inst}) (last_over_time(oracle_pdb_open_mode[3m]))\n"
            f"  )\n"
            f")")


def presence_rules(cfg: Config) -> list[tuple[str, str]]:
    """Issue 23 item 3: presence memory of scrape targets, databases and multipath paths, and the
    recovery area's reclaimable space per ASM disk group (item 4). (Each memory reads itself through
    `max by` its own labels: a ruler that adds external labels to what it records, vmalert's
    -external.label, reads them back with them, and the `or` would keep both.) Each memory reads its own
    previous value (`or <self>`), so what vanished stays remembered until it is back or, for a
    database and a path count, until the rule below says it left the configuration."""
    every_job = cfg.selector("oracle", "dbhost", "node")
    target = cfg.by("job", "instance")
    oracle = cfg.selector("oracle")
    db = cfg.by("database")
    dev = cfg.by("instance", "device")
    gap = "[3m]"
    dg_db = cfg.by("database", "diskgroup")
    dg_one = cfg.by("asm_cluster", "diskgroup")
    # the reclaimable bytes of each database's FRA, labelled with the ASM disk group it lives in
    fra = (f"max by ({dg_db}) (last_over_time(oracle_recovery_area_reclaimable_bytes{gap})\n"
           f"      * on ({db}) group_left (diskgroup) "
           f"max by ({dg_db}) (last_over_time(oracle_recovery_area_info{{diskgroup!=\"\"}}{gap})))")
    raw = f"max by ({dg_db}) (last_over_time(oracle_asm_diskgroup_info{{space_basis=\"raw_free\"}}{gap}))"
    return [
        (TARGETS_EXPECTED, f"group by ({target}) (up{{{every_job}}})\nor\n{recall(TARGETS_EXPECTED, target)}"),
        # the start time of the exporter process that exported the database last
        (DATABASE_EXPORTED_BY,
         f"group by ({db}) (oracle_up)\n"
         f"  * on ({target}) group_left () max by ({target}) (process_start_time_seconds{{{oracle}}})\n"
         f"or\n"
         f"{recall(DATABASE_EXPORTED_BY, db)} and on ({db}) {recall(DATABASES_EXPECTED, db)}"),
        (DATABASES_EXPECTED,
         f"group by ({db}) (last_over_time(oracle_up{gap}))\n"
         f"or\n"
         f"(\n"
         f"  {recall(DATABASES_EXPECTED, db)}\n"
         # left the configuration: a newer exporter process than the one that exported it last
         # answered without it
         f"  unless on ({db}) (\n"
         f"    {recall(DATABASE_EXPORTED_BY, db)}\n"
         f"    < on ({target}) group_left ()\n"
         f"    max by ({target}) (last_over_time(process_start_time_seconds{{{oracle}}}[{MEMORY_RECALL}]))\n"
         f"  )\n"
         f")"),
        (DISKGROUPS_EXPECTED,
         f"group by ({dg_db}, asm_cluster) (last_over_time(oracle_asm_diskgroup_info{gap}))\n"
         f"or\n"
         f"{recall(DISKGROUPS_EXPECTED, dg_db + ', asm_cluster')} and on ({db}) {DATABASES_EXPECTED}"),
        (PATHS, f"max by ({dev}) (last_over_time(dbhost_multipath_paths{gap}))"),
        (PATHS_ACTIVE, f"max by ({dev}) (last_over_time(dbhost_multipath_paths_active{gap}))"),
        (PATHS_EXPECTED,
         # rises at once to the paths the map has now; never lowered (see PATHS_EXPECTED)
         f"{PATHS} >= on ({dev}) {recall(PATHS_EXPECTED, dev)}\n"
         f"or\n"
         # kept while the map is in the exporter's output (a day, as the instances' memory)
         f"{recall(PATHS_EXPECTED, dev)} and on ({dev}) max by ({dev}) (last_over_time(dbhost_multipath_paths[1d]))\n"
         f"or\n"
         f"{PATHS}"),
        (FRA_RECLAIMABLE_IN_DISKGROUP,
         f"sum by ({dg_one}) (\n"
         f"  (\n"
         f"    {fra} / on ({dg_db}) (max by ({dg_db}) (last_over_time(oracle_asm_diskgroup_mirror_copies{gap})) > 0)\n"
         f"      unless on ({dg_db}) {raw}\n"
         f"    or\n"
         f"    {fra} and on ({dg_db}) {raw}\n"
         f"  )\n"
         f"  * on ({dg_db}) group_left (asm_cluster) "
         f"max by ({dg_db}, asm_cluster) (last_over_time(oracle_asm_diskgroup_info{gap}))\n"
         f")"),
    ]
