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

from ..views import ASM_DISKGROUP_STAT
from ._common import emit, gauge, num
from ._health import clean

NAME = "asm"

VIEWS = (ASM_DISKGROUP_STAT.name,)
MIN_INTERVAL_SECONDS = 60.0   # default; config collector_intervals overrides (disk group space changes slowly)

MiB = 1 << 20

COLUMNS = (
    ("oracle_asm_diskgroup_total_bytes", "Size of the ASM disk group, bytes (V$ASM_DISKGROUP_STAT.TOTAL_MB).",
     "TOTAL_MB", MiB),
    ("oracle_asm_diskgroup_free_bytes", "Free space in the ASM disk group before mirroring, bytes (FREE_MB).",
     "FREE_MB", MiB),
    ("oracle_asm_diskgroup_usable_file_bytes", "Space files can still use with redundancy restorable, bytes "
                                               "(USABLE_FILE_MB; negative when a disk failure could not be "
                                               "re-mirrored).", "USABLE_FILE_MB", MiB),
    ("oracle_asm_diskgroup_required_mirror_free_bytes", "Free space needed to restore redundancy after the worst "
                                                        "failure, bytes (REQUIRED_MIRROR_FREE_MB).",
     "REQUIRED_MIRROR_FREE_MB", MiB),
    ("oracle_asm_diskgroup_offline_disks", "Disks of the disk group that are offline (OFFLINE_DISKS).",
     "OFFLINE_DISKS", 1),
)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    groups: dict[str, dict[str, Any]] = {}
    for row in snapshot.rows("V$ASM_DISKGROUP_STAT"):
        name = clean(row.get("NAME"))
        if name:
            groups.setdefault(name, row)
    families = []
    for metric, doc, column, scale in COLUMNS:
        family = gauge(metric, doc, ["diskgroup"])
        for name in sorted(groups):
            value = num(groups[name].get(column))
            if value is not None:
                family.add_metric([name], value * scale)
        families.append(family)
    info = gauge("oracle_asm_diskgroup_info", "ASM disk group state and redundancy type, value 1.",
                 ["diskgroup", "state", "type"])
    for name in sorted(groups):
        info.add_metric([name, clean(groups[name].get("STATE")), clean(groups[name].get("TYPE"))], 1.0)
    families.append(info)
    yield from emit(families)
