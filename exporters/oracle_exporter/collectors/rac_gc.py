"""RAC global cache (Cache Fusion): blocks received over the interconnect, their receive time, and
blocks lost or corrupt (GV$SYSSTAT; on by default, read with the other GV$SYSSTAT statistics).

* ``oracle_gc_blocks_received_total{inst_id, kind}``: 'gc cr blocks received' (kind="cr",
  consistent-read copies) and 'gc current blocks received' (kind="current") per instance.
* ``oracle_gc_block_receive_time_seconds_total{inst_id, kind}``: 'gc cr block receive time' /
  'gc current block receive time' (centiseconds in V$SYSSTAT, seconds here): the round trip of a
  block request through the remote LMS and the interconnect. Average receive time per block =
  rate(time) / rate(blocks), in PromQL.
* ``oracle_gc_blocks_lost_total{inst_id}`` ('gc blocks lost') and
  ``oracle_gc_blocks_corrupt_total{inst_id}`` ('gc blocks corrupt'): blocks sent and never
  received, or received damaged: an interconnect problem (UDP buffer overflows, a faulty NIC or
  switch, MTU mismatch). On a healthy cluster they stay flat.

A single-instance database has the statistics too (all 0): the series exist and stay flat.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import SYSSTAT
from ._common import emit, inst_stats, sorted_inst

RECEIVED = (("cr", "gc cr blocks received", "gc cr block receive time"),
            ("current", "gc current blocks received", "gc current block receive time"))
LOST, CORRUPT = "gc blocks lost", "gc blocks corrupt"
NAMES = {SYSSTAT.name: tuple(n for _, b, t in RECEIVED for n in (b, t)) + (LOST, CORRUPT)}
CENTISECONDS = 0.01

SPEC = Collector(
    "rac_gc", "RAC global cache: blocks received over the interconnect, their receive time, blocks lost or corrupt.",
    title="RAC global cache",
    reads=(SYSSTAT.name,),
    doc="Cache Fusion as each instance sees it (GV$SYSSTAT): CR and current blocks received and the time "
        "their requests took (OracleGlobalCacheSlow: the average above Oracle Enterprise Manager's 10 ms "
        "default warning), blocks lost or corrupt on the interconnect (OracleGlobalCacheBlocksLost).",
    metrics=(
        Family("oracle_gc_blocks_received_total", "counter",
               "Blocks received from another instance's cache: 'gc cr blocks received' (kind=cr) and "
               "'gc current blocks received' (kind=current).", ("inst_id", "kind"),
               source="GV$SYSSTAT 'gc cr blocks received', 'gc current blocks received'", since="10.1"),
        Family("oracle_gc_block_receive_time_seconds_total", "counter",
               "Total time to receive those blocks: 'gc cr block receive time' / 'gc current block receive "
               "time' (centiseconds in V$SYSSTAT).", ("inst_id", "kind"),
               source="GV$SYSSTAT 'gc cr block receive time', 'gc current block receive time'", since="10.1"),
        Family("oracle_gc_blocks_lost_total", "counter",
               "Global cache blocks lost in transit over the interconnect ('gc blocks lost').", ("inst_id",),
               source="GV$SYSSTAT 'gc blocks lost'", since="10.1"),
        Family("oracle_gc_blocks_corrupt_total", "counter",
               "Global cache blocks received corrupt ('gc blocks corrupt').", ("inst_id",),
               source="GV$SYSSTAT 'gc blocks corrupt'", since="10.1"),
    ))
NAME, VIEWS = SPEC.name, SPEC.reads


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    received = SPEC.family("oracle_gc_blocks_received_total")
    time = SPEC.family("oracle_gc_block_receive_time_seconds_total")
    lost = SPEC.family("oracle_gc_blocks_lost_total")
    corrupt = SPEC.family("oracle_gc_blocks_corrupt_total")
    stats = inst_stats(snapshot, SYSSTAT.name)
    for i in sorted_inst(stats):
        values = stats[i]
        for kind, blocks, centis in RECEIVED:
            if blocks in values:
                received.add_metric([i, kind], values[blocks])
            if centis in values:
                time.add_metric([i, kind], values[centis] * CENTISECONDS)
        if LOST in values:
            lost.add_metric([i], values[LOST])
        if CORRUPT in values:
            corrupt.add_metric([i], values[CORRUPT])
    yield from emit([received, time, lost, corrupt])
