"""Oracle deep dives: oracle-redo, oracle-waits, oracle-memory."""
from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from mixin import records as R
from mixin.config import Config
from mixin.dashboards.common import (DB, HOST, LGWR_ROLES, add_panels, heatmap_panel, ms,
                                    new_dashboard, override_name, q, re_escape, stat_panel, table_panel,
                                    timeseries_panel, v_database,
                                    v_datasource, v_host, v_query)
# sid -> database joins: one definition, shared with the Grafana-free pages (mixin/fleetview.py)
from mixin.fleetview import sid_to_database as with_database

LEG = "{{database}}/{{inst_id}}"


def event_avg(event: str) -> str:
    return f'{R.WAIT_AVG}{{{DB}, event="{event}"}}'


def event_rate(events) -> str:
    rx = "|".join(re_escape(e) for e in events)
    return f'{R.WAITS}{{{DB}, event=~"{rx}"}}'


# ------------------------------------------------------------------------------------ redo

def redo(cfg: Config):
    r1, r2, r13, r13g = cfg.th("R1"), cfg.th("R2"), cfg.th("R13"), cfg.th("R13_gap")
    r3, r4, r5, r6 = cfg.th("R3"), cfg.th("R4"), cfg.th("R5"), cfg.th("R6")
    r10, r11, r14, r15 = cfg.th("R10"), cfg.th("R11"), cfg.th("R14"), cfg.th("R15")
    r15a = cfg.th("R15_archiving_needed")
    r13rd = cfg.th("R13_run_delay")
    r17w, r17r = cfg.th("R17_write"), cfg.th("R17_read")
    sync_avg = event_avg("log file sync")
    pw_avg = event_avg("log file parallel write")

    o5d = cfg.th("O5_archive_dest")
    archive_table = table_panel(
        "Archive destinations", "[O5, R15] Configured archive destinations (GV$ARCHIVE_DEST, STATUS not "
        "INACTIVE): status, whether valid in the database's role, the ORA- error, and 'in error' = "
        "oracle_archive_dest_error (1: in use and ERROR, DISABLED, BAD PARAM or FULL; "
        "OracleArchiveDestinationError). Deferred destinations are 0.", "none",
        [q(f"max by (database, inst_id, dest_name, target, destination, status, valid_now, error) "
           f"(oracle_archive_dest_info{{{DB}}})", "", "A", instant=True, fmt=PromQueryFormat.TABLE),
         q(f"max by (database, inst_id, dest_name) (oracle_archive_dest_error{{{DB}}})", "", "B", instant=True,
           fmt=PromQueryFormat.TABLE)],
        w=14, h=8, hide=("Time", "Value #A"), rename={"Value #B": "in error"})
    archive_table = override_name(archive_table, "in error", th=o5d, colour_cells=True)

    panels = [
        db.Row("Commit path: log file sync vs log file parallel write"),
        timeseries_panel("log file sync average", f"[R2] What a committing session waits: time waited / "
                         f"waits over 5 m. Threshold {ms(r2)} ({r2.severity}); case study 26.45 ms before, "
                         "2.13 ms after.", "s", [q(sync_avg, LEG)], w=8, th=r2),
        timeseries_panel("log file parallel write average", f"[R1] LGWR's redo write to the online logs. "
                         f"Threshold {ms(r1)} ({r1.severity}); 11.8 ms before, 0.55 ms after.",
                         "s", [q(pw_avg, LEG)], w=8, th=r1),
        timeseries_panel("log file sync / log file parallel write", f"[R13] Should be about 1: a ratio above "
                         f"{r13.colour_at:g} means committing sessions or LGWR wait for CPU (corroborate with "
                         "the LGWR involuntary switch share below). 2.24x before.", "x",
                         [q(f"{sync_avg} / ignoring (event, wait_class) {pw_avg}", LEG)], w=8, th=r13),
        timeseries_panel("Gap: log file sync minus log file parallel write", f"[R13] The absolute gap between "
                         f"the two averages; the alert also needs it above {ms(r13g)} (14.65 ms before).",
                         "s", [q(f"{sync_avg} - ignoring (event, wait_class) {pw_avg}", LEG)], w=8, th=r13g,
                         minimum=None),
        timeseries_panel("LGWR involuntary context-switch share", f"[R14, C3] Share of LGWR's context switches "
                         f"that were involuntary (host exporter, joined by sid, and by host where two databases "
                         f"share a SID): 30% before, < 0.1% after; threshold {r14.colour_at:g}.", "percentunit",
                         [q(with_database(R.PROC_INVOLUNTARY_SHARE + '{' + LGWR_ROLES + '}'),
                            "{{database}} {{sid}} {{role}} on {{instance}}")],
                         w=8, th=r14),
        timeseries_panel("LGWR migrations per second", "[C3] CPU migrations of LGWR threads (host exporter); "
                         "with involuntary switches a sign of CPU contention (R14's fix bound LGWR to a "
                         "processor set).", "ops",
                         [q(with_database(R.PROC_MIGRATIONS + '{' + LGWR_ROLES + '}'),
                            "{{database}} {{sid}} {{role}} on {{instance}}")],
                         w=8),
        timeseries_panel("CPU wait per dispatch: LGWR and sessions", f"[R13, R14] How long LGWR's and the "
                         "foreground sessions' threads waited on a run queue for a CPU each time they were "
                         "dispatched (schedstat run_delay / timeslices, host exporter, joined like the share). "
                         f"Above {ms(r13rd)} beside R13's gap, OracleCommitCpuStarvation names it as the cause "
                         "(cause lgwr_cpu_wait / session_cpu_wait).", "s",
                         [q(with_database(R.PROC_RUN_DELAY_PER_DISPATCH + '{' + LGWR_ROLES + '}'),
                            "{{database}} {{sid}} {{role}} on {{instance}}", "A"),
                          q(with_database(R.PROC_RUN_DELAY_PER_DISPATCH + '{role="foreground"}'),
                            "{{database}} {{sid}} foreground on {{instance}}", "B")],
                         w=8, th=r13rd),
        db.Row("Workload profile"),
        timeseries_panel("Average active sessions: DB time and DB CPU", "[I3] DB time and DB CPU per second "
                         "from the time model (GV$SYS_TIME_MODEL, updated while calls run): the gap between the "
                         "two lines is time spent waiting.", "short",
                         [q(f"sum by (database, inst_id) (rate(oracle_db_time_seconds_total{{{DB}}}[$__rate_interval]))",
                            LEG + " DB time", "A"),
                          q(f"sum by (database, inst_id) (rate(oracle_db_cpu_seconds_total{{{DB}}}[$__rate_interval]))",
                            LEG + " DB CPU", "B")], w=24),
        timeseries_panel("Commits, redo synch writes, LGWR writes per second", "[R1, R2; section 1 workload profile] "
                         "commits wait on log file sync, LGWR writes are log file parallel writes: 72 commits/s and 74 LGWR writes/s before, 520/s and 845/s after.", "ops",
                         [q(f"{R.USER_COMMITS}{{{DB}}}", LEG + " commits", "A"),
                          q(f"{R.REDO_SYNCH_WRITES}{{{DB}}}", LEG + " redo synch writes", "B"),
                          q(f"{R.REDO_WRITES}{{{DB}}}", LEG + " LGWR writes", "C")], w=8),
        timeseries_panel("Redo generated", "[Section 1 workload profile, R16] redo size per second: 9.45 MB/s "
                         "before, 10.1 MB/s after.", "Bps",
                         [q(f"{R.REDO_SIZE}{{{DB}}}", LEG)], w=8),
        timeseries_panel("Redo entries per second", "[R10; section 1 workload profile] 13,326/s before, 14,677/s after; R10 counts "
                         "buffer allocation retries per entry (0.0002 before).",
                         "ops", [q(f"{R.REDO_ENTRIES}{{{DB}}}", LEG)], w=8),
        db.Row("Eliminate: log buffer, checkpoints, latches, retries"),
        timeseries_panel("log buffer space waits/s", f"[R3, R16] Eliminate: any sustained rate above the noise "
                         f"floor {r3.colour_at:g}/s is a finding (3.5/s before a 72 MB log buffer).", "ops",
                         [q(event_rate(["log buffer space"]), LEG)], w=8, th=r3),
        timeseries_panel("log file switch (checkpoint incomplete) waits/s", f"[R4] Eliminate (noise floor "
                         f"{r4.colour_at:g}/s); 0.5/s before.", "ops",
                         [q(event_rate(["log file switch (checkpoint incomplete)"]), LEG)], w=8, th=r4),
        timeseries_panel("Redo latch waits/s", f"[R5] 'latch: redo allocation' and 'latch: redo writing': "
                         f"eliminate (noise floor {r5.colour_at:g}/s; 0.002/s accepted after the fix).", "ops",
                         [q(event_rate(["latch: redo allocation", "latch: redo writing"]), LEG + " {{event}}")],
                         w=8, th=r5),
        timeseries_panel("Redo buffer allocation retries/s", f"[R10] Eliminate (noise floor {r10.colour_at:g}/s); "
                         "3.8/s before.", "ops",
                         [q(f"{R.REDO_BUFFER_ALLOCATION_RETRIES}{{{DB}}}", LEG)],
                         w=8, th=r10),
        timeseries_panel("Redo log space requests/s", f"[R11] Eliminate (noise floor {r11.colour_at:g}/s); "
                         "1/s before.", "ops",
                         [q(f"{R.REDO_LOG_SPACE_REQUESTS}{{{DB}}}", LEG)], w=8, th=r11),
        timeseries_panel("Redo log space wait time per request", "[R12] redo log space wait time / requests; "
                         "shown, not alerted (field notes: R12's 0.12 ms is likely a unit slip).", "s",
                         [q(f"sum by (database, inst_id) (rate(oracle_redo_log_space_wait_time_seconds_total{{{DB}}}[$__rate_interval]))"
                            f" / sum by (database, inst_id) (rate(oracle_redo_log_space_requests_total{{{DB}}}[$__rate_interval]) > 0)", LEG)],
                         w=8),
        db.Row("Log switches, log buffer, derived redo times"),
        timeseries_panel("Log switches per hour", f"[R15] More than {r15.colour_at:g}/h (a switch every < "
                         f"{3600 / r15.colour_at / 60:g} min) is too often: once a minute before (500 MB logs), "
                         "every ~7 min after (8 GB logs).", "short",
                         [q(f"{R.LOG_SWITCHES_1H}{{{DB}}}", LEG)], w=8, th=r15),
        timeseries_panel("Log switch interval", "[R15] 3600 / switches per hour; archiving must finish well "
                         "inside it (2 min archive vs 7 min switch in the fixed system).", "s",
                         [q(f"{R.LOG_SWITCH_INTERVAL}{{{DB}}}", LEG)], w=8),
        timeseries_panel("log file switch waits/s", f"[R6, R15] 'log file switch completion' (threshold "
                         f"{r6.colour_at:g}/s: the rate matters more than the average) and 'log file switch "
                         f"(archiving needed)' (critical above {r15a.colour_at:g}/s).", "ops",
                         [q(event_rate(["log file switch completion", "log file switch (archiving needed)"]),
                            LEG + " {{event}}")], w=8, th=r6),
        timeseries_panel("Log buffer: seconds of redo it holds", "[R16] log buffer bytes / redo bytes per "
                         "second: 4 MB was too small for 9.45 MB/s; 72 MB (about 5 s of redo) eliminated "
                         "'log buffer space'.", "s",
                         [q(f"max by (job, instance, database, inst_id) (oracle_log_buffer_bytes{{{DB}}}) / "
                            f"({R.REDO_SIZE}{{{DB}}} > 0)", LEG)], w=8),
        stat_panel("Online redo log group size", "[R15] Size of the online redo log groups: 500 MB switched "
                   "every minute; 8 GB every ~7 minutes.", "bytes",
                   [q(f"max by (database, inst_id) (oracle_redo_log_group_size_bytes{{{DB}}})", LEG,
                      instant=True)], w=4, h=8),
        stat_panel("Log buffer size", "[R16] log_buffer: the 4 MB default was too small; 72 MB fixed it.",
                   "bytes", [q(f"max by (database, inst_id) (oracle_log_buffer_bytes{{{DB}}})", LEG,
                               instant=True)], w=4, h=8),
        timeseries_panel("Derived: redo synch time and redo write time per operation", "[R8, R9] redo synch "
                         "time / redo synch writes and redo write time / redo writes. Shown, not alerted: "
                         "the field notes' 0.27 ms / 0.12 ms do not fit R1/R2 (likely a unit slip); R1 and R2 "
                         "carry the finding.", "s",
                         [q(f"{R.REDO_SYNCH_TIME_AVG}{{{DB}}}", LEG + " synch", "A"),
                          q(f"{R.REDO_WRITE_TIME_AVG}{{{DB}}}", LEG + " write", "B")],
                         w=8),
        db.Row("Archive destinations"),
        archive_table,
        timeseries_panel("Archive destinations: log sequences behind", "[O5, R15] Per destination, how many "
                         "log sequences it is behind the most advanced destination of its instance "
                         "(GV$ARCHIVE_DEST.LOG_SEQUENCE): a remote destination that stopped receiving grows "
                         "here by one per log switch.", "short",
                         [q(f"max by (job, instance, database, inst_id) (oracle_archive_dest_log_sequence{{{DB}}}) "
                            f"- on (job, instance, database, inst_id) group_right "
                            f"oracle_archive_dest_log_sequence{{{DB}}}", LEG + " {{dest_name}}")], w=10),
        db.Row("Redo LUNs (host)"),
        timeseries_panel("Redo LUN write latency", f"[R17] Average write service time of LUNs with role=redo: "
                         f"writes < {ms(r17w)} (12 ms before, < 1 ms after).", "s",
                         [q(f'{R.DISK_WRITE_LATENCY}{{{HOST}, role="redo"}}',
                            "{{instance}} {{device}}")], w=12, th=r17w),
        timeseries_panel("Redo LUN read latency", f"[R17, R7] Average read service time of redo LUNs (ARCH "
                         f"reading redo): reads < {ms(r17r)} (8 ms before, 16 ms after).", "s",
                         [q(f'{R.DISK_READ_LATENCY}{{{HOST}, role="redo"}}',
                            "{{instance}} {{device}}")], w=12, th=r17r),
    ]
    d = new_dashboard("oracle-redo", "Redo and LGWR deep dive (field notes section 1: R1-R17).",
                      [v_datasource(), v_database(), v_host(cfg)])
    return add_panels(d, panels)


# ------------------------------------------------------------------------------------ waits

def waits(cfg: Config):
    i1, i1r, i2 = cfg.th("I1"), cfg.th("I1_red"), cfg.th("I2")
    r1, r2 = cfg.th("R1"), cfg.th("R2")
    bucket = f'oracle_wait_event_latency_seconds_bucket{{{DB}, event=~"$event"}}'
    hq = lambda p: (f"histogram_quantile({p}, sum by (database, inst_id, event, le) "
                    f"(rate({bucket}[$__rate_interval])))")
    panels = [
        db.Row("Latency histograms ($event)"),
        heatmap_panel("Latency heatmap: $event", "[R1, R2, I2] GV$EVENT_HISTOGRAM made cumulative: waits per "
                      "latency bucket over time (one panel per selected event). A healthy redo path keeps "
                      f"'log file parallel write' under {ms(r1)} and 'log file sync' under {ms(r2)}.", "s",
                      [q(f"sum by (le) (rate({bucket}[$__rate_interval]))", "{{le}}",
                         fmt=PromQueryFormat.HEATMAP)],
                      w=24).repeat("event").repeat_direction("h").max_per_row(2),
        timeseries_panel("p50 and p99 latency", "[R1, R2, I2] histogram_quantile over the event histograms "
                         "(bucket upper bounds; Oracle's buckets double, so quantiles are coarse).", "s",
                         [q(hq(0.5), LEG + " {{event}} p50", "A"), q(hq(0.99), LEG + " {{event}} p99", "B")],
                         w=24, h=9),
        db.Row("Wait events"),
        timeseries_panel("Average wait: top 10 non-idle events", "[I3, R1, R2, I2] time waited / waits over "
                         "5 m for the ten events with the longest average.", "s",
                         [q(f'topk(10, {R.WAIT_AVG}{{{DB}, wait_class!="Idle"}})', LEG + " {{event}}")], w=12, h=9),
        timeseries_panel("Time waited by wait class", "[I3] Seconds waited per second (= average sessions "
                         "waiting) per wait class, idle excluded.", "short",
                         [q(f'sum by (database, wait_class) ({R.WAIT_TIME}{{{DB}, wait_class!="Idle"}})',
                            "{{database}} {{wait_class}}")], w=12, h=9, stack=True),
        timeseries_panel("db file sequential read average", f"[I2] Single-block reads: 9-10 ms is 'not bad' "
                         f"for spinning disks, 0.4-0.6 ms from SSD cache; alert above {ms(i2)}.", "s",
                         [q(event_avg("db file sequential read"), LEG)], w=12, th=i2),
        timeseries_panel("Wait timeouts per second", "[I3] GV$SYSTEM_EVENT timeouts: waits that ended by "
                         "timing out (e.g. latch or enqueue spins).", "ops",
                         [q(f'topk(10, sum by (database, event) (rate(oracle_wait_event_timeouts_total{{{DB}}}[$__rate_interval])))',
                            "{{database}} {{event}}")], w=12),
        db.Row("Per PDB (opt-in pdb collector, read from CDB$ROOT)"),
        timeseries_panel("Average active sessions per PDB", "[I3] DB time per second of each PDB "
                         "(GV$CON_SYS_TIME_MODEL), stacked: which PDB the instance's load comes from. Needs "
                         "collectors: {pdb: true}; empty otherwise.", "short",
                         [q(f"sum by (database, pdb) (rate(oracle_pdb_db_time_seconds_total{{{DB}}}"
                            f"[$__rate_interval]))", "{{database}} {{pdb}}")], w=8, stack=True),
        timeseries_panel("Commit latency per PDB: log file sync p99", f"[R2] histogram_quantile over the "
                         f"per-PDB log file sync histograms (GV$CON_EVENT_HISTOGRAM_MICRO): a PDB whose commits "
                         f"wait longer than the others'. Not coloured: R2 judges the instance-wide average "
                         f"(under {ms(r2)}), and a p99 lies far above the average (the tuned case study: 2.13 ms "
                         f"average, 9.3 ms p99); compare the PDBs with each other.",
                         "s", [q(f"histogram_quantile(0.99, sum by (database, pdb, le) (rate("
                                 f"oracle_pdb_wait_event_latency_seconds_bucket{{{DB}, event=\"log file sync\"}}"
                                 f"[$__rate_interval])))", "{{database}} {{pdb}} p99")], w=8),
        timeseries_panel("Commits per second per PDB", "[I3, R2] user commits of each PDB (GV$CON_SYSSTAT): "
                         "every commit waits on log file sync.", "ops",
                         [q(f"sum by (database, pdb) (rate(oracle_pdb_user_commits_total{{{DB}}}"
                            f"[$__rate_interval]))", "{{database}} {{pdb}}")], w=8, stack=True),
        db.Row("Latches"),
        timeseries_panel("Latch hit ratio (all latches)", f"[I1] 1 - misses/gets over 5 m: about 99.5% is "
                         f"healthy; below {i1.colour_at:.3g} warns, below {i1r.colour_at:.3g} is the expert's "
                         "red flag.", "percentunit",
                         [q(f"{R.LATCH_HIT_RATIO}{{{DB}}}", LEG)], w=12,
                         th=[i1, i1r], minimum=None),
        timeseries_panel("Latch misses and sleeps per second", "[I1, R5] misses and sleeps for the configured "
                         "latches (redo allocation, redo writing, ...).", "ops",
                         [q(f'sum by (database, latch) (rate(oracle_latch_misses_total{{{DB}, latch!="all"}}[$__rate_interval]))',
                            "{{database}} {{latch}} misses", "A"),
                          q(f'sum by (database, latch) (rate(oracle_latch_sleeps_total{{{DB}, latch!="all"}}[$__rate_interval]))',
                            "{{database}} {{latch}} sleeps", "B")], w=12),
    ]
    event_var = v_query("event", "Histogram event",
                        f"label_values(oracle_wait_event_latency_seconds_bucket{{{DB}}}, event)")
    d = new_dashboard("oracle-waits", "Wait events deep dive: latency heatmaps, p50/p99, averages, latches "
                      "(field notes R1, R2, I1-I3).", [v_datasource(), v_database(), v_host(cfg), event_var])
    return add_panels(d, panels)


# ------------------------------------------------------------------------------------ memory

def memory(cfg: Config):
    m2, m3, m4 = cfg.th("M2"), cfg.th("M3"), cfg.th("M4")
    m5 = cfg.th("M5")
    panels = [
        db.Row("PGA"),
        timeseries_panel("PGA allocated, in use, maximum vs target", "[M4] GV$PGASTAT: allocated and in-use "
                         "PGA, the maximum allocated since startup, against pga_aggregate_target.", "bytes",
                         [q(f"oracle_pga_allocated_bytes{{{DB}}}", LEG + " allocated", "A"),
                          q(f"oracle_pga_inuse_bytes{{{DB}}}", LEG + " in use", "B"),
                          q(f"oracle_pga_max_allocated_bytes{{{DB}}}", LEG + " max allocated", "C"),
                          q(f"oracle_pga_target_bytes{{{DB}}}", LEG + " target", "D")], w=12),
        timeseries_panel("PGA allocated / target", f"[M4] Above {m4.colour_at:g} the instance allocates more "
                         "than its target; over-allocation leads to ORA-4030.", "percentunit",
                         [q(f"{R.PGA_ALLOCATED_TO_TARGET}{{{DB}}}", LEG)], w=12, th=m4),
        timeseries_panel("PGA over-allocations", "[M4] Increase of GV$PGASTAT 'over allocation count' per "
                         "interval: any increase means the target could not be honoured.", "short",
                         [q(f"sum by (database, inst_id) (increase(oracle_pga_over_allocation_count_total{{{DB}}}[$__rate_interval]))",
                            LEG)], w=8),
        timeseries_panel("Work-area executions per second by pass", "[M4] optimal / one-pass / multi-pass "
                         "work-area executions: one-pass and multi-pass sorts and hashes spill to temp.", "ops",
                         [q(f"sum by (database, kind) (rate(oracle_pga_workarea_executions_total{{{DB}}}[$__rate_interval]))",
                            "{{database}} {{kind}}")], w=8, stack=True),
        timeseries_panel("PGA cache hit ratio", "[M4] GV$PGASTAT 'cache hit percentage' as a ratio: the share "
                         "of work-area bytes processed without extra passes.", "percentunit",
                         [q(f"oracle_pga_cache_hit_ratio{{{DB}}}", LEG)], w=8, minimum=None),
        db.Row("Host memory ($host)"),
        timeseries_panel("Page faults per second: major and minor", "[M2] node_exporter vmstat: major faults "
                         "need I/O, minor faults do not (pgfault counts both).", "ops",
                         [q(f"rate(node_vmstat_pgmajfault{{{HOST}}}[$__rate_interval])", "{{instance}} major", "A"),
                          q(f"rate(node_vmstat_pgfault{{{HOST}}}[$__rate_interval]) - rate(node_vmstat_pgmajfault{{{HOST}}}[$__rate_interval])",
                            "{{instance}} minor", "B")], w=8),
        timeseries_panel("Major / all page faults", f"[M2] Below 0.5% in well-configured systems; threshold "
                         f"{m2.colour_at:g}.", "percentunit",
                         [q(f"{R.MAJOR_FAULT_RATIO}{{{HOST}}}", "{{instance}}")], w=8, th=m2),
        timeseries_panel("Swap pages in + out per second", f"[M3] A swapping host needs more memory; the alert "
                         f"counts a finding above {m3.colour_at:g} pages/s.", "ops",
                         [q(f"{R.SWAP_PAGES}{{{HOST}}}", "{{instance}}")], w=8, th=m3),
        timeseries_panel("Host memory: available, free, swap used", "[M3] MemAvailable, MemFree and swap "
                         "in use (SwapTotal - SwapFree).", "bytes",
                         [q(f"node_memory_MemAvailable_bytes{{{HOST}}}", "{{instance}} available", "A"),
                          q(f"node_memory_MemFree_bytes{{{HOST}}}", "{{instance}} free", "B"),
                          q(f"node_memory_SwapTotal_bytes{{{HOST}}} - node_memory_SwapFree_bytes{{{HOST}}}",
                            "{{instance}} swap used", "C")], w=24),
        timeseries_panel("SGAs against kernel.shmall and the huge pages", "[M5, M1] The sga_target of the "
                         "Oracle instances running on the host (joined by SID) against kernel.shmall and the huge "
                         f"pages configured: above {m5.colour_at:.0%} of shmall the next instance start fails "
                         "(ORA-27102, HostShmallBelowSga); above the huge pages an SGA runs on small pages "
                         "(HostHugePagesBelowSga). No huge pages configured: no huge-page line.", "percentunit",
                         [q(f"{R.SGA_ON_HOST}{{{HOST}}} / on (instance) group_left () "
                            f"(max by (instance) (dbhost_kernel_shmall_bytes{{{HOST}}}) > 0)",
                            "{{instance}} SGAs / shmall", "A"),
                          q(f"{R.SGA_ON_HOST}{{{HOST}}} / on (instance) group_left () "
                            f"(max by (instance) (dbhost_memory_hugepages{{{HOST}, state=\"total\"}}) "
                            f"* on (instance) max by (instance) (dbhost_memory_hugepage_size_bytes{{{HOST}}}) > 0)",
                            "{{instance}} SGAs / huge pages", "B")], w=12, th=m5),
        timeseries_panel("Shared memory and huge pages", "[M5, M1] kernel.shmall and kernel.shmmax (Oracle "
                         "splits an SGA into segments of at most shmmax, so only shmall is a limit), the System V "
                         "segments in use (/proc/sysvipc/shm) and the SGAs of the host's instances; huge pages "
                         "configured and free, in bytes.", "bytes",
                         [q(f"dbhost_kernel_shmall_bytes{{{HOST}}}", "{{instance}} shmall", "A"),
                          q(f"dbhost_kernel_shmmax_bytes{{{HOST}}}", "{{instance}} shmmax", "B"),
                          q(f"dbhost_shm_bytes{{{HOST}}}", "{{instance}} segments in use", "C"),
                          q(f"{R.SGA_ON_HOST}{{{HOST}}}", "{{instance}} SGAs (sga_target)", "D"),
                          q(f"dbhost_memory_hugepages{{{HOST}}} * on (instance) group_left () "
                            f"dbhost_memory_hugepage_size_bytes{{{HOST}}}", "{{instance}} huge pages {{state}}", "E")],
                         w=12),
    ]
    d = new_dashboard("oracle-memory", "PGA and host memory deep dive (field notes M2-M5).",
                      [v_datasource(), v_database(), v_host(cfg)])
    return add_panels(d, panels)

