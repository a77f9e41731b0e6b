"""Redo / LGWR profile (field-notes section 1): GV$SYSSTAT, GV$LOG, GV$SYSTEM_PARAMETER.

Units: 'redo write time', 'redo synch time' and 'redo log space wait time'
are in centiseconds ("10s of milliseconds"); 'redo synch time (usec)'
(11.2+) and 'redo write time (usec)' (12.2+) are in microseconds and are
preferred when present. Everything is exposed in seconds.

Log switches: GV$LOG describes the database's redo groups and is returned
once per instance by GV$ (every instance reads the same control file), so
rows are deduplicated on (THREAD#, GROUP#). The switch counter of a thread
is the SEQUENCE# of its CURRENT group (it grows by one per switch); it is
labelled with the instance that opened that thread (GV$INSTANCE.THREAD#).
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import INSTANCE, LOG, PARAMETER, SYSSTAT
from ._common import (declared_parameter, declared_per_instance, emit, inst_stats, num, sorted_inst, text,
                      thread_owners)

LOG_STATUSES = ("UNUSED", "CURRENT", "ACTIVE", "INACTIVE", "CLEARING", "CLEARING_CURRENT", "INVALIDATED")

# metric, statistic, scale to base unit
COUNTERS: tuple[tuple[str, str, float], ...] = (
    ("oracle_redo_size_bytes_total", "redo size", 1.0),
    ("oracle_redo_entries_total", "redo entries", 1.0),
    ("oracle_redo_writes_total", "redo writes", 1.0),
    ("oracle_redo_synch_writes_total", "redo synch writes", 1.0),
    ("oracle_redo_buffer_allocation_retries_total", "redo buffer allocation retries", 1.0),
    ("oracle_redo_log_space_requests_total", "redo log space requests", 1.0),
    ("oracle_redo_log_space_wait_time_seconds_total", "redo log space wait time", 0.01),
    ("oracle_redo_wastage_bytes_total", "redo wastage", 1.0),
    ("oracle_redo_blocks_written_total", "redo blocks written", 1.0),
    ("oracle_user_commits_total", "user commits", 1.0),
    ("oracle_commit_wait_requested_total", "commit wait requested", 1.0),
    ("oracle_commit_wait_performed_total", "commit wait performed", 1.0),
)

# metric, preferred (usec) statistic, fallback (centisecond) statistic
TIMES: tuple[tuple[str, str, str], ...] = (
    ("oracle_redo_write_time_seconds_total", "redo write time (usec)", "redo write time"),
    ("oracle_redo_synch_time_seconds_total", "redo synch time (usec)", "redo synch time"),
)

_INST = ("inst_id",)
_GROUP = ("inst_id", "group", "thread")
SPEC = Collector(
    "redo", "Redo generation, LGWR writes, commits, log switches and redo log groups (field-notes section 1).",
    reads=(SYSSTAT.name, LOG.name, INSTANCE.name, PARAMETER.name),
    metrics=(
        Family("oracle_redo_size_bytes_total", "counter", "Redo generated, bytes ('redo size').", _INST,
               source="'redo size'", views=(SYSSTAT.name,)),
        Family("oracle_redo_entries_total", "counter", "Redo entries copied into the log buffer ('redo entries').",
               _INST, source="'redo entries'", measure='entries', views=(SYSSTAT.name,)),
        Family("oracle_redo_writes_total", "counter", "LGWR writes to the redo log ('redo writes').", _INST,
               source="'redo writes' (LGWR writes)", measure='writes', views=(SYSSTAT.name,)),
        Family("oracle_redo_synch_writes_total", "counter", "Redo writes requested by commits ('redo synch writes').",
               _INST, source="'redo synch writes'", measure='writes', views=(SYSSTAT.name,)),
        Family("oracle_redo_buffer_allocation_retries_total", "counter",
               "Retries to allocate space in the log buffer ('redo buffer allocation retries'; R10).", _INST,
               source="'redo buffer allocation retries' (R10)", measure='retries', views=(SYSSTAT.name,)),
        Family("oracle_redo_log_space_requests_total", "counter",
               "Waits for space in the redo log file, i.e. for a log switch ('redo log space requests'; R11).", _INST,
               source="'redo log space requests' (R11)", measure='requests', views=(SYSSTAT.name,)),
        Family("oracle_redo_log_space_wait_time_seconds_total", "counter",
               "Time waited for redo log space, seconds ('redo log space wait time' is centiseconds; R12).", _INST,
               source="'redo log space wait time' (centiseconds) / 100 (R12)", views=(SYSSTAT.name,)),
        Family("oracle_redo_wastage_bytes_total", "counter",
               "Unused bytes in redo blocks written before they were full ('redo wastage').", _INST,
               source="'redo wastage'", views=(SYSSTAT.name,)),
        Family("oracle_redo_blocks_written_total", "counter",
               "Redo blocks written by LGWR ('redo blocks written'; blocks of oracle_redo_log_block_size_bytes: "
               "512 or 4096 bytes).", _INST,
               source="'redo blocks written' (blocks of the log's BLOCKSIZE: times oracle_redo_log_block_size_bytes, 512 or 4096, never 512 blindly, gives the bytes LGWR wrote)", measure='redo blocks', views=(SYSSTAT.name,)),
        Family("oracle_user_commits_total", "counter", "User commits ('user commits').", _INST,
               source="'user commits'", measure='commits', views=(SYSSTAT.name,)),
        Family("oracle_commit_wait_requested_total", "counter",
               "Commits that requested to wait for redo ('commit wait requested').", _INST,
               source="'commit wait requested' (11.1+)", since="11.1", measure='commits', views=(SYSSTAT.name,)),
        Family("oracle_commit_wait_performed_total", "counter",
               "Commits that waited for redo ('commit wait performed').", _INST,
               source="'commit wait performed' (11.1+)", since="11.1", measure='commits', views=(SYSSTAT.name,)),
        Family("oracle_redo_write_time_seconds_total", "counter",
               "Elapsed time of LGWR redo writes, seconds ('redo write time (usec)' when present, else "
               "'redo write time' centiseconds; R9).", _INST,
               source="'redo write time (usec)' / 1e6 where the release has it (12.1+), else 'redo write time' (centiseconds) / 100 (R9)", views=(SYSSTAT.name,)),
        Family("oracle_redo_synch_time_seconds_total", "counter",
               "Time commits spent in redo synch writes, seconds ('redo synch time (usec)' when present, else "
               "'redo synch time' centiseconds; R8).", _INST,
               source="'redo synch time (usec)' / 1e6 (11.2+), else 'redo synch time' (centiseconds) / 100 (R8)", views=(SYSSTAT.name,)),
        Family("oracle_redo_log_switches_total", "counter",
               "Log switches of the redo thread opened by this instance: SEQUENCE# of the CURRENT log (GV$LOG; R15).",
               _INST, source='SEQUENCE# of the CURRENT group of the redo thread this instance opened (GV$LOG, GV$INSTANCE.THREAD#) (R15)', measure='switches', views=(LOG.name, INSTANCE.name)),
        Family("oracle_redo_log_group_size_bytes", "gauge",
               "Size of each member of the redo log group, bytes (GV$LOG.BYTES).", _GROUP, source='GV$LOG.BYTES (size of each member)', views=(LOG.name, INSTANCE.name)),
        Family("oracle_redo_log_group_members", "gauge",
               "Members (multiplexed copies) of the redo log group (GV$LOG.MEMBERS).", _GROUP, source='GV$LOG.MEMBERS', measure='members', views=(LOG.name, INSTANCE.name)),
        Family("oracle_redo_log_group_archived", "gauge",
               "1 if the redo log group has been archived (GV$LOG.ARCHIVED).", _GROUP, source='GV$LOG.ARCHIVED = YES', measure='1/0', views=(LOG.name, INSTANCE.name)),
        Family("oracle_redo_log_group_status", "gauge",
               "1 for the current status of the redo log group, 0 for the others (GV$LOG.STATUS: "
               + ", ".join(LOG_STATUSES) + ").", _GROUP + ("status",),
               source='GV$LOG.STATUS; one series per status UNUSED, CURRENT, ACTIVE, INACTIVE, CLEARING, CLEARING_CURRENT, INVALIDATED (+ OTHER for anything unknown), 1 for the current one', note="Unknown statuses are exported as OTHER.", measure='1/0', views=(LOG.name, INSTANCE.name)),
        Family("oracle_redo_log_block_size_bytes", "gauge",
               "Redo block size of the instance's redo thread, bytes (GV$LOG.BLOCKSIZE: 512 or 4096).", _INST,
               source="GV$LOG.BLOCKSIZE (11.2+) of the instance's redo thread: 512, or 4096 on 4K-sector / flash redo. 'redo blocks written' and the wastage are in these blocks: bytes = blocks x this, never x 512 blindly", since="11.2", views=(LOG.name, INSTANCE.name)),
        Family("oracle_log_buffer_bytes", "gauge",
               "Size of the redo log buffer, bytes (GV$SYSTEM_PARAMETER log_buffer; R16).", _INST,
               source='GV$SYSTEM_PARAMETER log_buffer (R16)', views=(PARAMETER.name,)),
    ), doc='GV$LOG describes the whole database and every instance returns it, so rows are deduplicated on (THREAD#, GROUP#). For the redo group metrics and the switch counter, `inst_id` is the instance that opened the thread (GV$INSTANCE.THREAD#); the groups of a thread whose instance is down are not reported until it opens again. A single-instance snapshot without GV$INSTANCE maps its only thread to its only instance.', title='Redo / LGWR')
NAME, VIEWS = SPEC.name, SPEC.reads

# The names this collector reads from the name-filtered views (the statement asks for the
# union of every collector's NAMES).
NAMES = {
    "GV$SYSSTAT": tuple(s for _, s, _ in COUNTERS) + tuple(s for _, u, c in TIMES for s in (u, c)),
    "GV$SYSTEM_PARAMETER": ("log_buffer",),
}


def _log_groups(snapshot: Any) -> dict[tuple[int, int], dict[str, Any]]:
    """Deduplicated GV$LOG rows keyed by (THREAD#, GROUP#); the highest SEQUENCE# wins."""
    groups: dict[tuple[int, int], dict[str, Any]] = {}
    for row in snapshot.rows("GV$LOG"):
        thread, group = num(row.get("THREAD#")), num(row.get("GROUP#"))
        if thread is None or group is None:
            continue
        key = (int(thread), int(group))
        seen = groups.get(key)
        if seen is None or (num(row.get("SEQUENCE#")) or 0) > (num(seen.get("SEQUENCE#")) or 0):
            groups[key] = row
    return groups


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    stats = inst_stats(snapshot)
    families = declared_per_instance(SPEC, stats, COUNTERS)
    for name, usec, csec in TIMES:
        family = SPEC.family(name)
        for i in sorted_inst(stats):
            if usec in stats[i]:
                family.add_metric([i], stats[i][usec] / 1e6)
            elif csec in stats[i]:
                family.add_metric([i], stats[i][csec] / 100.0)
        families.append(family)

    owners = thread_owners(snapshot)
    groups = _log_groups(snapshot)
    switches = SPEC.family("oracle_redo_log_switches_total")
    current: dict[int, float] = {}
    highest: dict[int, float] = {}
    for (thread, _group), row in groups.items():
        seq = num(row.get("SEQUENCE#"))
        if seq is None:
            continue
        highest[thread] = max(highest.get(thread, seq), seq)
        if text(row.get("STATUS")).upper() == "CURRENT":
            current[thread] = max(current.get(thread, seq), seq)
    for thread in sorted(highest):
        owner = owners.get(thread)
        if owner is not None:
            switches.add_metric([owner], current.get(thread, highest[thread]))
    families.append(switches)

    size = SPEC.family("oracle_redo_log_group_size_bytes")
    members = SPEC.family("oracle_redo_log_group_members")
    archived = SPEC.family("oracle_redo_log_group_archived")
    status = SPEC.family("oracle_redo_log_group_status")
    for (thread, group) in sorted(groups):
        owner = owners.get(thread)
        if owner is None:
            continue
        row = groups[(thread, group)]
        lv = [owner, str(group), str(thread)]
        if (b := num(row.get("BYTES"))) is not None:
            size.add_metric(lv, b)
        if (m := num(row.get("MEMBERS"))) is not None:
            members.add_metric(lv, m)
        arch = text(row.get("ARCHIVED")).upper()
        if arch in ("YES", "NO"):
            archived.add_metric(lv, 1.0 if arch == "YES" else 0.0)
        state = text(row.get("STATUS")).upper()
        if state:
            # Unknown states are folded into "OTHER" to keep the label bounded.
            states = LOG_STATUSES if state in LOG_STATUSES else LOG_STATUSES + ("OTHER",)
            state = state if state in LOG_STATUSES else "OTHER"
            for s in states:
                status.add_metric(lv + [s], 1.0 if s == state else 0.0)
    families += [size, members, archived, status]

    # Redo block size (V$LOG.BLOCKSIZE, 11.2+): 512 or 4096 bytes. 'redo blocks written' and the
    # redo wastage per write are in these blocks; bytes = blocks x this, never x 512 blindly.
    block = SPEC.family("oracle_redo_log_block_size_bytes")
    sizes: dict[str, float] = {}
    for (thread, _group), row in groups.items():
        owner, value = owners.get(thread), num(row.get("BLOCKSIZE"))
        if owner is not None and value is not None:
            sizes[owner] = max(sizes.get(owner, value), value)
    for owner in sorted_inst(sizes):
        block.add_metric([owner], sizes[owner])
    families.append(block)

    families.append(declared_parameter(snapshot, "log_buffer", SPEC.metric("oracle_log_buffer_bytes")))
    yield from emit(families)
