"""ASM disk groups (V$ASM_DISKGROUP_STAT): space and offline disks.

Always V$ASM_DISKGROUP_STAT, never V$ASM_DISKGROUP: querying V$ASM_DISKGROUP
makes ASM rediscover every disk (a disk scan per scrape), the _STAT view
returns the same columns from memory.

* ``oracle_asm_diskgroup_total_bytes{diskgroup}``: TOTAL_MB x 2^20.
* ``oracle_asm_diskgroup_free_bytes{diskgroup}``: FREE_MB x 2^20 (raw, before mirroring).
* ``oracle_asm_diskgroup_usable_file_bytes{diskgroup}``: USABLE_FILE_MB x 2^20,
  what files can still use with redundancy restorable after a disk failure.
  It goes negative when a failure could not be re-mirrored: kept as it is.
* ``oracle_asm_diskgroup_required_mirror_free_bytes{diskgroup}``: REQUIRED_MIRROR_FREE_MB x 2^20.
* ``oracle_asm_diskgroup_offline_disks{diskgroup}``: OFFLINE_DISKS.
* ``oracle_asm_diskgroup_info{diskgroup, state, type}``: STATE (CONNECTED,
  MOUNTED, ...) and TYPE (EXTERN, NORMAL, HIGH, FLEX), value 1.

A database without ASM returns no rows: no series.
"""
from __future__ import annotations

from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import ASM_DISKGROUP_STAT
from ._common import emit, num
from ._health import clean

MiB = 1 << 20

SPEC = Collector(
    "asm", "ASM disk group space and state (V$ASM_DISKGROUP_STAT: no disk discovery).",
    reads=(ASM_DISKGROUP_STAT.name,),
    interval=60.0,      # disk group space changes slowly (collector_intervals overrides)
    metrics=(
        Family('oracle_asm_diskgroup_total_bytes', "gauge", 'Size of the ASM disk group, bytes (V$ASM_DISKGROUP_STAT.TOTAL_MB).', ("diskgroup",), source='TOTAL_MB x 2^20'),
        Family('oracle_asm_diskgroup_free_bytes', "gauge", 'Free space in the ASM disk group before mirroring, bytes (FREE_MB).', ("diskgroup",), source='FREE_MB x 2^20 (raw, before mirroring)'),
        Family('oracle_asm_diskgroup_usable_file_bytes', "gauge", 'Space files can still use with redundancy restorable, bytes (USABLE_FILE_MB; negative when a disk failure could not be re-mirrored).', ("diskgroup",), source='USABLE_FILE_MB x 2^20: space files can still use with redundancy restorable after a disk failure; **negative** when it could not be'),
        Family('oracle_asm_diskgroup_required_mirror_free_bytes', "gauge", 'Free space needed to restore redundancy after the worst failure, bytes (REQUIRED_MIRROR_FREE_MB).', ("diskgroup",), source='REQUIRED_MIRROR_FREE_MB x 2^20'),
        Family('oracle_asm_diskgroup_offline_disks', "gauge", 'Disks of the disk group that are offline (OFFLINE_DISKS).', ("diskgroup",), source='OFFLINE_DISKS', measure='disks'),
        Family("oracle_asm_diskgroup_info", "gauge", "ASM disk group state and redundancy type, value 1.",
               ("diskgroup", "state", "type"), source='STATE (CONNECTED, MOUNTED, ...), TYPE (EXTERN, NORMAL, HIGH, FLEX)', measure='1'),
    ), doc='Read from V$ASM_DISKGROUP_STAT, never V$ASM_DISKGROUP (which rediscovers every disk on each query). A database without ASM has no rows and no series.', title='ASM disk groups')
NAME, VIEWS = SPEC.name, SPEC.reads

# metric, column, scale
COLUMNS = (
    ('oracle_asm_diskgroup_total_bytes', 'TOTAL_MB', MiB),
    ('oracle_asm_diskgroup_free_bytes', 'FREE_MB', MiB),
    ('oracle_asm_diskgroup_usable_file_bytes', 'USABLE_FILE_MB', MiB),
    ('oracle_asm_diskgroup_required_mirror_free_bytes', 'REQUIRED_MIRROR_FREE_MB', MiB),
    ('oracle_asm_diskgroup_offline_disks', 'OFFLINE_DISKS', 1),
)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    groups: dict[str, dict[str, Any]] = {}
    for row in snapshot.rows("V$ASM_DISKGROUP_STAT"):
        name = clean(row.get("NAME"))
        if name:
            groups.setdefault(name, row)
    families = []
    for metric, column, scale in COLUMNS:
        family = SPEC.family(metric)
        for name in sorted(groups):
            value = num(groups[name].get(column))
            if value is not None:
                family.add_metric([name], value * scale)
        families.append(family)
    info = SPEC.family("oracle_asm_diskgroup_info")
    for name in sorted(groups):
        info.add_metric([name, clean(groups[name].get("STATE")), clean(groups[name].get("TYPE"))], 1.0)
    families.append(info)
    yield from emit(families)
