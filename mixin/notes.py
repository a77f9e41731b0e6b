"""The field-notes ids (R1, Q2, I1, M4 ...) that thresholds, alert labels (`field_note`),
runbooks and panel descriptions cite: what each means and the measurement it comes from.

mixin.docs renders them, with the thresholds that cite each one, into docs/thresholds.md,
so every id resolves inside the repository. The numbers are those of the case studies the
project's thresholds were distilled from (performance-engineering write-ups about Oracle on
Solaris and Linux, SAN LUNs and ZFS); the text is ours.
"""
from __future__ import annotations

import re

ID = re.compile(r"\b([RQCMIZFKO]\d{1,2})\b")

# (section title, what the section's measurements come from, [(id, title, text)])
SECTIONS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    ("Redo and LGWR",
     "A 4 TB operational data store on a 12-CPU host (replication plus ETL), measured at its peak hour "
     "before and after an expert's tuning. 'Before' ran 72 commits/s and 9.45 MB/s of redo; 'after' ran "
     "520 commits/s and 10.1 MB/s, seven times the throughput, and is the accepted healthy state: the "
     "alert pack must raise every finding on 'before' and nothing on 'after' (alerts/tests/casestudy.test.yml "
     "replays both).",
     [
         ("R1", "log file parallel write: LGWR's redo write",
          "The average time LGWR needs to write a batch of redo to the online log members, i.e. the "
          "service time of the redo LUN as Oracle sees it. Before: 74 writes/s averaging 11.8 ms. After: "
          "845 writes/s averaging 0.55 ms. Healthy is below 2 ms."),
         ("R2", "log file sync: what a commit waits",
          "The average time a committing session waits for LGWR to confirm its redo is on disk. Before: "
          "72 waits/s averaging 26.45 ms; after: 519/s averaging 2.13 ms. Healthy is below 5 ms. The "
          "business ran for months at 26 ms: slow but working, so a ticket, not a page."),
         ("R3", "log buffer space",
          "Sessions waiting for room in the redo log buffer. Before: 3.5 waits/s averaging 28.6 ms; after: "
          "none. The goal is zero (see R16 for the buffer size that removed it)."),
         ("R4", "log file switch (checkpoint incomplete)",
          "A log switch that must wait for DBWR to finish the checkpoint of the log it wants to reuse; "
          "redo generation stops meanwhile. Before: 0.5/s (0.38 ms each); after: none. The goal is zero."),
         ("R5", "redo allocation and redo writing latches",
          "Waits for the latches that serialise redo allocation and LGWR's writing. Negligible before; "
          "after the tuning 0.002/s at 0.9 ms remained and was accepted. The goal is zero; a residue that "
          "small costs nothing."),
         ("R6", "log file switch completion",
          "Sessions waiting for a log switch to finish. Before: 0.5/s at 20.82 ms; after: 0.02/s at "
          "31.5 ms. The average got worse while the problem went away: here the rate is what counts."),
         ("R7", "log file sequential read: ARCH reading redo",
          "The archiver reading the online logs it copies. Before: 10/s at 7.02 ms; after: 10.5/s at "
          "16.62 ms. No threshold: it is watched because those reads compete with LGWR's writes on the "
          "same LUNs (R17)."),
         ("R8", "redo synch time per redo synch write",
          "Redo synch time divided by redo synch writes. The source quotes 0.27 ms against a target of "
          "under 0.1 ms, which cannot be true next to R2's 26 ms commits: most likely a unit slip (Oracle "
          "counts these statistics in centiseconds, or microseconds for the (usec) variants). Recorded "
          "and shown, never alerted; R2 carries the finding."),
         ("R9", "redo write time per redo write",
          "Redo write time divided by redo writes: quoted as 0.12 ms against under 0.1 ms, with the same "
          "unit caveat as R8. Recorded and shown, never alerted; R1 carries the finding."),
         ("R10", "redo buffer allocation retries",
          "How often a session had to retry allocating space in the log buffer. Before: 3.8/s, 0.0002 "
          "per redo entry. The goal is zero."),
         ("R11", "redo log space requests",
          "Sessions that needed space in the online log while a switch was under way. Before: 1/s. The "
          "goal is zero."),
         ("R12", "redo log space wait time per request",
          "Quoted as 0.12 ms against under 0.1 ms, with R8's unit caveat. Shown, never alerted."),
         ("R13", "commit wait against LGWR write",
          "A commit waits for one LGWR write, so the log file sync average should be about the log file "
          "parallel write average. Before: 26.45 ms against 11.8 ms, 2.24 times and 14.65 ms apart: the "
          "sessions or LGWR waited for CPU, not for the disk. After: 2.13 ms against 0.55 ms, 3.9 times "
          "but only 1.58 ms apart, which is healthy (a sub-millisecond write makes any ratio large, hence "
          "the second condition on the gap)."),
         ("R14", "LGWR involuntary context switches",
          "The share of LGWR's context switches in which the scheduler took the CPU away. Before: 30%; "
          "after: below 0.1%. The fix was a fixed-priority scheduling class, a longer time quantum and "
          "LGWR bound to a processor set. The goal is zero."),
         ("R15", "log switch frequency and archiving",
          "500 MB online logs switched once a minute, which is too often (redo generation stops during a "
          "switch); 8 GB logs switched every 7 minutes, which is good. The archiver has to finish well "
          "inside the switch interval: 2 minutes of archiving against 7 minutes between switches in the "
          "tuned system, with the archiver reaching about 150 MB/s."),
         ("R16", "log buffer size",
          "The 4 MB default log buffer was too small for 9.45 MB/s of redo; 72 MB, about 5 seconds of "
          "redo, removed log buffer space waits (R3) up to about 14 MB/s."),
         ("R17", "redo LUN service times",
          "Redo LUNs should serve writes under 2 ms and reads under 10 ms. Before: 12 ms writes, 8 ms "
          "reads; after: writes under 1 ms, reads 16 ms (the archiver's reads, R7, accepted by the "
          "expert). Data and archive LUNs are judged by I2's numbers instead."),
         ("R18", "run queue in the redo case",
          "The average run queue was 1.2 before and after: overall CPU load was not the bottleneck; "
          "LGWR being switched off the CPU was (R14)."),
     ]),
    ("LUN queue depth",
     "The same expert's notes on host and LUN queues with SCSI command tag queuing, from a data "
     "warehouse on SAN storage.",
     [
         ("Q1", "host queue and LUN queue",
          "Requests in the I/O stack are either in the host queue (accepted, not yet sent to the device: "
          "iostat wait, sar avque; time there is avwait) or in the LUN queue (sent and being serviced: "
          "iostat actv; time there is avserv). The queue depth is their sum."),
         ("Q2", "host-queue backlog",
          "The LUN queue depth must be high enough that requests do not wait in the host queue, where "
          "the array cannot sort or merge them. With the expert's data-warehouse setting (LUN queue "
          "depth 30, target queue depth 256) only 5 to 10 requests waited in the host queue at peak; a "
          "sustained backlog above that is a finding."),
         ("Q3", "a throttled LUN",
          "A per-LUN queue depth of 8, a common vendor default, is far too low; the driver default, and "
          "maximum, is 256."),
         ("Q4", "too deep a queue",
          "A queue depth that is too high shows up as SCSI errors and resets: the depth is a balance "
          "between Q3 and this."),
     ]),
    ("CPU and scheduling",
     "The expert's slides on how applications load a system, and a host running many Oracle "
     "instances.",
     [
         ("C1", "run queue",
          "A sustained run queue of 10 or more together with many involuntary context switches means a "
          "CPU bottleneck; the classic rule is 2 or more runnable threads per CPU."),
         ("C2", "system CPU",
          "Kernel (system) CPU time is ideally below 5% of all CPU; user time is the real work."),
         ("C3", "involuntary switches and migrations",
          "Involuntary context switches and thread migrations together signal a CPU bottleneck; many "
          "voluntary switches (even 100,000/s) are fine."),
         ("C4", "system CPU dominating",
          "A host running many Oracle instances spent 80-90% of its CPU in the kernel: the instances' "
          "own statistics gathering contended on a kernel lock. Two lessons: alert when system CPU "
          "dominates busy CPU, and a monitoring agent must itself be cheap."),
         ("C5", "what to collect",
          "Collect at least every 5 minutes and keep months of run queue, utilisation, voluntary and "
          "involuntary context switches, migrations, interrupts and system calls; sar lacks the "
          "involuntary switches and migrations. The alert pack's monitoring-health alerts (exporters "
          "down, collectors failing) cite this row: data that is not collected cannot be judged."),
         ("C6", "Oracle's view of host load",
          "V$SYSMETRIC 'Current OS Load' (and host CPU utilisation) as the instance reports them."),
         ("C7", "cycles per instruction",
          "About 0.34 is the best an AMD64 core does, about 1.1 for cache-friendly memory access and "
          "about 8.5 for scattered memory reads; a bigger NUMA box ran the same application at 3.3-4.2 "
          "against 2.0-2.3 on a smaller one. Meaningless on idle CPUs (ignore below about 5% busy)."),
     ]),
    ("Memory",
     "The expert's notes on page sizes and PGA, and an instance's statspack report.",
     [
         ("M1", "TLB misses",
          "Spending 20% or more of the time servicing TLB/TSB misses means the page sizes need revisiting "
          "(an SGA that does not fit its huge pages falls back to small ones)."),
         ("M2", "major page faults",
          "Major faults (those that need I/O) stay below 0.5% of all page faults on a well-configured "
          "system."),
         ("M3", "swapping",
          "A database host that swaps needs more memory."),
         ("M4", "PGA over-allocation",
          "Larger page-size hints sped a 1 GB sort from 30-32 s to 24-27 s for about 1% more PGA. When "
          "the instance allocates more PGA than pga_aggregate_target, sessions end with ORA-4030: watch "
          "PGA allocated against the target and the over-allocation count."),
         ("M5", "shared memory limits",
          "kernel.shmall / kernel.shmmax below the SGA size stop an instance from starting (ORA-27102)."),
     ]),
    ("Instance efficiency",
     "A statspack report of a production instance, and the storage numbers of the ZFS case below.",
     [
         ("I1", "latch hit ratio",
          "The share of latch gets that succeed at once should be about 99.5%; 98% is a red flag."),
         ("I2", "single-block read time",
          "db file sequential read averaging 10 ms is not bad for spinning disks (the report showed 1.7 "
          "million waits at 10 ms): disks serve random 8 KB reads in 9-10 ms, SSD cache devices in "
          "0.4-0.6 ms. What is normal depends on the storage class."),
         ("I3", "load profile",
          "Show per second and per transaction: redo size, logical reads, block changes, physical reads "
          "and writes, user calls, parses, hard parses, sorts, logons, executes, transactions; and the "
          "top 5 timed events with their share of the wait time."),
         ("I4", "physical reads",
          "A physical read for Oracle may still be a cache hit below it (host or array cache): high "
          "physical reads alone are not a finding."),
     ]),
    ("ZFS ARC and L2ARC",
     "A 500 GB working set on a host with 128 GB of DRAM, with and without six SSD cache devices.",
     [
         ("Z1", "read path",
          "ARC in DRAM (sub-microsecond), then the L2ARC on SSD cache devices, then the pool's disks "
          "(milliseconds)."),
         ("Z2", "the L2ARC reference case",
          "Disks only: 1,890 IOPS at 9-10 ms. With six SSD L2ARC devices, once warm (hours later): "
          "15,800 IOPS, 8.4 times more, at 0.4-0.6 ms, 20 times faster."),
         ("Z3", "L2ARC warm-up",
          "The L2ARC holds clean data only, is fed asynchronously from the ARC's eviction end, ignores "
          "streaming and prefetch reads by default, and takes hours to warm up."),
         ("Z4", "L2ARC errors",
          "L2ARC data is checksummed: on a checksum or I/O error the read falls back to the pool, and "
          "enough errors take the device offline. Errors are a finding although reads keep working."),
         ("Z5", "what to show",
          "ARC size against its target and maximum, demand and prefetch hit ratios, L2ARC hit ratio, "
          "size and feed rate, L2ARC errors, per-device service time."),
     ]),
    ("File systems",
     "The expert's notes on VxFS, XFS and ZFS under Oracle.",
     [
         ("F1", "VxFS fragmentation",
          "Healthy: under 1% of the free space in extents shorter than 8 blocks, under 5% in extents "
          "shorter than 64 blocks, over 5% of the file system free in extents of 64 blocks or more. "
          "Badly fragmented: over 5% in extents under 8 blocks, over 50% under 64 blocks, or under 5% "
          "free in extents of 64 or more."),
         ("F2", "request size",
          "Average request size is avgrq-sz (sectors) times 512 bytes; a layer below the application may "
          "split I/O (XFS capped sequential reads at 128 KB)."),
         ("F3", "write bursts",
          "Write bursts from buffered file systems can flood an array's write-pending cache."),
         ("F4", "VxFS against ZFS",
          "For OLTP with 8 KB direct I/O, VxFS was about 3 times faster than ZFS in 2007 tests."),
     ]),
    ("Operations: what on-call needs beyond the case studies",
     "These rows are the project's own, not measurements of the case studies: the failure modes an "
     "adversarial review of the alert pack found silent (hangs, vanished instances and targets, "
     "flapping exporters), encoded the way kube-prometheus and node-mixin do.",
     [
         ("O1", "the monitoring must see itself",
          "An exporter that is down pages; one that flaps (3 minutes up, 5 minutes down, again and "
          "again) never holds `up == 0` for the 5 minutes OracleExporterDown needs and resets every "
          "other alert's `for`, so availability over a window is judged too (below 90% of the scrapes "
          "of 30 minutes, with at least two outages). A scrape job that is renamed or whose service "
          "discovery returns nothing has no `up` series at all, and a target dropped from discovery "
          "ends its series: both are alerted on as absences. A Watchdog alert fires all the time and "
          "is routed to a dead-man's-switch receiver, which alarms when the heartbeat stops: then "
          "Prometheus, the rules or Alertmanager are down."),
         ("O2", "hangs: the age of the current wait",
          "Every wait-event average is computed over waits that completed; when LGWR stops, no log file "
          "sync wait completes and every average stays quiet while every committing session is stuck. "
          "GV$SESSION shows each session's current wait and how long it has lasted (WAIT_TIME_MICRO), "
          "sampled at each scrape: a commit stuck for more than 30 s pages; any other non-idle wait or "
          "a blocked session older than 5 minutes opens a ticket."),
         ("O3", "what was there and is gone",
          "oracle_up is per database: when one RAC instance stops, the database still answers and "
          "oracle_up stays 1. An instance (GV$INSTANCE) or a database (the exporter's output) seen "
          "in the last hour and missing now is alerted on."),
         ("O4", "limits that stop a database",
          "The everyday instance-health limits every peer exporter watches: processes and sessions "
          "against their limits (ORA-00020, ORA-00018 refuse new connections), a permanent tablespace "
          "near the size it can reach (ORA-01653 fails inserts) or filling up within days, the fast "
          "recovery area near full (archiving stops with ORA-19809/ORA-00257, then every commit waits "
          "'log file switch (archiving needed)', R15), an ASM disk group that could not restore its "
          "redundancy after a disk failure, or with disks offline. A ticket at 85-90%, a page at "
          "95-97%."),
         ("O5", "the standby and the archive destinations",
          "A Data Guard standby more than 5 minutes behind in transport (redo lost on failover) or "
          "apply (failover takes longer), a lag that is no longer computed or computed from stale "
          "data (the standby lost the primary: a small lag figure then means nothing), and an archive "
          "destination in error."),
         ("O6", "storage paths: redundancy that is gone without an error",
          "A multipath LUN with a failed path still serves I/O, at reduced bandwidth and with no "
          "redundancy left: the classic silent SAN degradation; the database sees nothing until the "
          "second path fails and every write to the LUN queues or fails. The measure is the paths "
          "that carry I/O (SCSI device state running, NVMe controller live and ANA optimized or "
          "non-optimized) against the paths the map had in the last day (multipathd removes a path "
          "whose device is gone, so the map's own path count drops too). A map left suspended holds "
          "every I/O; an NVMe controller that stays resetting or connecting has lost its paths."),
     ]),
    ("Method",
     "The expert's method.",
     [
         ("K1", "baseline",
          "Data is useless without context: a snapshot proves nothing; put 'now' beside a baseline (the "
          "same hour last week, or a chosen good window)."),
         ("K2", "define the problem",
          "Say first what deviated from normal, since when, and by how much."),
     ]),
]

# Issue 24: the questions asked in the first five minutes of a call (backups, undo and temp, the alert
# log, the RAC interconnect, long calls, PDB state, scheduler jobs); Oracle facts, cited in the runbooks.
SECTIONS.append((
    "On-call signals",
    "Not from the case studies: what experienced DBAs check first on a call, with the Oracle facts "
    "behind each threshold (the runbooks cite the Oracle documentation).",
    [
        ("O21", "backups: can we restore it",
         "The age of the newest full (or level 0), incremental and archived-log backup against the policy "
         "the site declares per database (backup_policy), and any RMAN job of the last day that failed. A "
         "database without a declared policy (a standby backed up elsewhere, a test database) is not "
         "judged: a fleet-wide default would page for every database that is backed up another way."),
        ("O22", "undo and temp: the errors the application saw",
         "ORA-01555 (snapshot too old: a query needed undo that was overwritten; V$UNDOSTAT.SSOLDERRCNT) and "
         "undo out-of-space (V$UNDOSTAT.NOSPACEERRCNT, ORA-30036) are failures, not trends: one in the last "
         "hour is a finding. A query longer than the tuned undo retention (MAXQUERYLEN against "
         "TUNED_UNDORETENTION) is the 01555 to come. A temporary tablespace over 90% of the size it can "
         "reach is one large sort away from ORA-01652; the top consumer (user, SQL_ID) says whose."),
        ("O23", "RAC interconnect: global cache receive time and lost blocks",
         "The average time to receive a CR or current block from another instance (V$SYSSTAT 'gc cr block "
         "receive time' / 'gc cr blocks received', and the current pair; centiseconds) measures the "
         "interconnect and the remote LMS together. Oracle Enterprise Manager's metric 'Global Cache Average "
         "Current Block Request Time' warns above 1 cs (10 ms) and is critical above 2 cs; a healthy private "
         "interconnect answers in well under a millisecond. Lost or corrupt blocks ('gc blocks lost', 'gc "
         "blocks corrupt') are network faults: each one costs a retransmit after a timeout."),
        ("O24", "PDB open mode",
         "A PDB left MOUNTED after an instance restart (no ALTER PLUGGABLE DATABASE ... SAVE STATE) or opened "
         "RESTRICTED is the commonest multitenant outage: the CDB answers, oracle_up is 1, the application "
         "cannot connect. 'Should be open' is read from the last day: a PDB open READ WRITE then and not now; "
         "only on a primary (a standby's PDBs are MOUNTED or READ ONLY by design)."),
        ("O25", "scheduler jobs that failed",
         "A DBMS_SCHEDULER job whose run FAILED in the last day (DBA_SCHEDULER_JOB_RUN_DETAILS): the job "
         "log has the row and the error code, nobody reads it. The code is exported as a value, the text "
         "stays in the log."),
    ]))
# Issue 24 point 1: the alert log.
SECTIONS[-1][2].append(
    ("O26", "the alert log's critical errors",
     "ORA-00600 (internal error) and ORA-07445 (exception in a process: a core dump) are incidents Oracle "
     "Support must see (an ADR incident, MESSAGE_TYPE 2, usually MESSAGE_LEVEL 1 CRITICAL); ORA-04031 is "
     "the shared pool or another SGA pool out of memory, the next parse or logon fails. One of them in the "
     "alert log is a finding. Every other ORA- message is counted by code (ORA-01555, 01652/01653/01688 "
     "space, 00257 archiver stuck, 16xxx Data Guard, 15xxx ASM, 27xxx operating system) for the dashboard "
     "and the other alerts, which read their own views."))
# Issue 24 point 3: long-running calls.
SECTIONS[-1][2].append(
    ("O27", "long-running user calls",
     "GV$SESSION.LAST_CALL_ET of an ACTIVE user session is how long its current call has run. OLTP calls "
     "last milliseconds, reports and batch steps minutes; a single call past an hour is past the default "
     "UNDO_RETENTION (900 s) four times over, so it keeps a read-consistent snapshot the undo may no longer "
     "hold (ORA-01555 at the end of the hour), holds its locks and its PGA/temp the whole time, and is "
     "usually a plan gone wrong or a runaway; the SQL_ID names it, GV$SQL has its text. Background "
     "processes' calls last since the process started and are never judged."))

TITLES = {nid: title for _, _, rows in SECTIONS for nid, title, _ in rows}
