"""The long tail of GV$SYSTEM_EVENT on a busy 19c RAC instance (issue 11.7): event names and
wait classes as V$EVENT_NAME lists them, each waited a little since startup. A real 19c
instance shows 300-400 events that ever waited, a third of them in the Idle class (timers
of background processes, PX and job slaves waiting for work, AQ and Data Guard idle
waits; every PX dequeue wait for a message, a reply or credit is Idle, the PX waits for an
acknowledgement, statistics or a latch are Other); the demo's RACDB carries these next to its named workload events
(generate.RACDB_TAIL). Rates and average waits are drawn per event from a fixed seed
(generate.tail_events): rates from 0.001 to 3 per second, averages 50 us to 60 ms.
"""
from __future__ import annotations

NON_IDLE: tuple[tuple[str, str], ...] = (
    # User I/O
    ("db file parallel read", "User I/O"), ("direct path read temp", "User I/O"),
    ("direct path write temp", "User I/O"), ("read by other session", "User I/O"),
    ("Disk file operations I/O", "User I/O"), ("local write wait", "User I/O"),
    ("db file single write", "User I/O"), ("direct path sync", "User I/O"),
    ("Datapump dump file I/O", "User I/O"), ("BFILE read", "User I/O"),
    ("securefile direct-read completion", "User I/O"), ("securefile direct-write completion", "User I/O"),
    ("buffer read retry", "User I/O"), ("Parameter File I/O", "User I/O"),
    ("dbms_file_transfer I/O", "User I/O"),
    # System I/O
    ("control file single write", "System I/O"), ("db file async I/O submit", "System I/O"),
    ("Log archive I/O", "System I/O"), ("RMAN backup & recovery I/O", "System I/O"),
    ("Network file transfer", "System I/O"), ("recovery read", "System I/O"),
    ("io done", "System I/O"), ("kfk: async disk IO", "System I/O"),
    ("ksfd: async disk IO", "System I/O"), ("RMAN Disk slave I/O", "System I/O"),
    # Concurrency
    ("library cache lock", "Concurrency"), ("library cache pin", "Concurrency"),
    ("library cache load lock", "Concurrency"), ("cursor: pin S wait on X", "Concurrency"),
    ("cursor: pin S", "Concurrency"), ("cursor: mutex X", "Concurrency"), ("cursor: mutex S", "Concurrency"),
    ("row cache lock", "Concurrency"), ("enq: TX - index contention", "Concurrency"),
    ("latch: In memory undo latch", "Concurrency"), ("latch: row cache objects", "Concurrency"),
    ("os thread creation", "Concurrency"), ("resmgr:internal state change", "Concurrency"),
    ("logout restrictor", "Concurrency"), ("library cache: mutex S", "Concurrency"),
    ("latch: undo global data", "Concurrency"),
    # Application
    ("enq: TM - contention", "Application"), ("enq: UL - contention", "Application"),
    ("SQL*Net break/reset to client", "Application"), ("enq: RO - fast object reuse", "Application"),
    ("enq: KO - fast object checkpoint", "Application"),
    # Configuration
    ("enq: HW - contention", "Configuration"), ("enq: SQ - contention", "Configuration"),
    ("enq: TX - allocate ITL entry", "Configuration"), ("free buffer waits", "Configuration"),
    ("write complete waits", "Configuration"), ("log file switch (archiving needed)", "Configuration"),
    ("log file switch (private strand flush incomplete)", "Configuration"), ("enq: ST - contention", "Configuration"),
    ("undo segment extension", "Configuration"),
    # Administrative
    ("switch logfile command", "Administrative"), ("index (re)build lock or pin object", "Administrative"),
    ("enq: DB - contention", "Administrative"), ("alter system set dispatcher", "Administrative"),
    ("JS coord start wait", "Administrative"),
    # Scheduler
    ("resmgr:cpu quantum", "Scheduler"), ("resmgr:become active", "Scheduler"), ("resmgr:pq queued", "Scheduler"),
    # Queueing
    ("Streams AQ: enqueue blocked on low memory", "Queueing"),
    # Network
    ("SQL*Net more data to client", "Network"), ("SQL*Net more data from client", "Network"),
    ("SQL*Net message to dblink", "Network"), ("SQL*Net more data from dblink", "Network"),
    # Cluster
    ("gc cr multi block request", "Cluster"), ("gc current block busy", "Cluster"), ("gc cr block busy", "Cluster"),
    ("gc current grant busy", "Cluster"), ("gc cr block congested", "Cluster"),
    ("gc current block congested", "Cluster"), ("gc cr block lost", "Cluster"), ("gc current block lost", "Cluster"),
    ("gc current grant 2-way", "Cluster"), ("gc cr failure", "Cluster"), ("gc current retry", "Cluster"),
    ("gc remaster", "Cluster"), ("gc buffer busy release", "Cluster"), ("gc cr disk read", "Cluster"),
    ("gc current multi block request", "Cluster"), ("gc cr block 3-way", "Cluster"),
    ("gc current block 3-way", "Cluster"), ("gc cr grant congested", "Cluster"), ("gc current split", "Cluster"),
    ("gc current grant congested", "Cluster"),
    # Other (LGWR workers LGnn, PX, RAC messaging, enqueues)
    ("LGWR worker group ordering", "Other"), ("LGWR any worker group", "Other"), ("LGWR all worker groups", "Other"),
    ("log file sync: SCN ordering", "Other"), ("target log write size", "Other"),
    ("LGWR intra group sync", "Other"),
    ("PX Deq: Slave Session Stats", "Other"), ("PX Deq: reap credit", "Other"),
    ("PX qref latch", "Other"), ("PX Deq: Signal ACK RSG", "Other"),
    ("PX Deq: Signal ACK EXT", "Other"), ("PX Deq: Slave Join Frag", "Other"), ("PX Nsq: PQ load info query", "Other"),
    ("latch free", "Other"), ("enq: CF - contention", "Other"), ("enq: CR - block range reuse ckpt", "Other"),
    ("reliable message", "Other"), ("DFS lock handle", "Other"), ("enq: PS - contention", "Other"),
    ("IPC send completion sync", "Other"), ("enq: WF - contention", "Other"), ("enq: TA - contention", "Other"),
    ("enq: TT - contention", "Other"), ("wait list latch free", "Other"), ("rdbms ipc reply", "Other"),
    ("enq: JS - queue lock", "Other"), ("enq: MR - contention", "Other"), ("enq: PR - contention", "Other"),
    ("enq: FB - contention", "Other"), ("GCS lock open S", "Other"), ("GCS lock open X", "Other"),
    ("ges inquiry response", "Other"), ("KJC: Wait for msg sends to complete", "Other"),
    ("DLM cross inst call completion", "Other"), ("buffer deadlock", "Other"), ("oracle thread bootstrap", "Other"),
    ("CGS wait for IPC msg", "Other"), ("SGA: allocation forcing component growth", "Other"),
    ("process diagnostic dump", "Other"), ("ASM file metadata operation", "Other"), ("Sync ASM rebalance", "Other"),
    ("name-service call wait", "Other"), ("log write(odd)", "Other"), ("log write(even)", "Other"),
    ("enq: TX - contention", "Other"), ("ges generic event", "Other"), ("kksfbc child completion", "Other"),
    ("global enqueue expand wait", "Other"), ("lock remastering", "Other"), ("enq: AF - task serialization", "Other"),
    ("enq: MV - datafile move", "Other"), ("enq: PV - syncstart", "Other"), ("enq: RF - synch: DG Broker metadata",
                                                                            "Other"),
)

IDLE: tuple[str, ...] = (
    # PX: the waits Oracle classes Idle (My Oracle Support "Master Note Parallel Execution Wait Events",
    # Doc ID 1097154.1: slaves and the coordinator waiting for a message, a reply or credit to send)
    "PX Idle Wait", "PX Deque wait", "PX Deq: Execution Msg", "PX Deq: Table Q Normal", "PX Deq: Execute Reply",
    "PX Deq Credit: send blkd", "PX Deq Credit: need buffer", "PX Deq: Msg Fragment", "PX Deq: Join ACK",
    "PX Deq: Parse Reply", "PX Deq: Table Q Sample", "jobq slave wait", "class slave wait",
    "Space Manager: slave idle wait", "Streams AQ: qmn coordinator idle wait", "Streams AQ: qmn slave idle wait",
    "Streams AQ: waiting for time management or cleanup tasks", "Streams AQ: waiting for messages in the queue",
    "AQPC idle", "heartbeat redo informer", "LNS ASYNC end of log", "wait for unread message on broadcast channel",
    "GCR sleep", "VKTM Logical Idle Wait", "VKRM Idle", "Data Guard: Gap Manager", "Data Guard: Timer",
    "watchdog main loop", "pman timer", "lreg timer", "dispatcher timer", "virtual circuit next request",
    "OFS idle", "PL/SQL lock timer", "EMON slave idle wait", "SGA: MMAN sleep for component shrink", "PING",
    "IORM Scheduler Slave Idle Wait", "ASM background timer", "KSV master wait", "gcs for action",
    "LGWR real time apply sync", "LMS CR slave timer",
    "Sleep for db open", "shared server idle wait", "single-task message", "SQL*Net message from dblink",
    "Data Guard: process clean up", "Logminer: client waiting for transaction",
    "heartbeat monitor sleep", "fbar timer",
)
