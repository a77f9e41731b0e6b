"""ASM disk groups (V$ASM_DISKGROUP_STAT): space by redundancy type, failure groups, offline disks.

Always V$ASM_DISKGROUP_STAT, never V$ASM_DISKGROUP: querying V$ASM_DISKGROUP
makes ASM rediscover every disk (a disk scan per scrape), the _STAT view
returns the same columns from memory. V$ASM_DISK_STAT (also from memory) gives
the failure groups, V$ASM_CLIENT the cluster the ASM instance belongs to.

Redundancy (TYPE): EXTERN (1 copy), NORMAL (2), HIGH (3), FLEX and EXTEND
(18c+: the redundancy is a property of each file group, so Oracle computes no
USABLE_FILE_MB and shows 0: "no value", not "no space").

* ``oracle_asm_diskgroup_total_bytes`` / ``_free_bytes``: TOTAL_MB / FREE_MB x 2^20 (raw, before mirroring).
* ``oracle_asm_diskgroup_usable_file_bytes``: USABLE_FILE_MB x 2^20, only where Oracle
  computes it (EXTERN, NORMAL, HIGH): (FREE_MB - REQUIRED_MIRROR_FREE_MB) / copies. It is
  **negative** when the free space is less than REQUIRED_MIRROR_FREE_MB: if a failure group
  were lost now, ASM could not restore full redundancy (files can still grow until FREE_MB
  runs out; nothing has failed yet).
* ``oracle_asm_diskgroup_required_mirror_free_bytes``: REQUIRED_MIRROR_FREE_MB x 2^20.
* ``oracle_asm_diskgroup_mirror_copies``: 1 / 2 / 3 for EXTERN / NORMAL / HIGH (absent for FLEX, EXTEND).
* ``oracle_asm_diskgroup_failure_groups``: REGULAR failure groups holding the group's disks.
* ``oracle_asm_diskgroup_file_space_bytes``: the space left for files the alerts judge, with
  its basis in the info metric's ``space_basis``:
  ``usable_file`` USABLE_FILE_MB (EXTERN; NORMAL/HIGH with more failure groups than copies, or
  the count unknown); ``free_per_copy`` FREE_MB / copies (NORMAL/HIGH with no more failure groups
  than copies: no failure group loss can be re-mirrored whatever the free space, so Oracle's
  REQUIRED_MIRROR_FREE_MB reserve, one or two failure groups' worth, would make a HIGH group of 3
  failure groups look full at 5 % raw use); ``raw_free`` FREE_MB (FLEX, EXTEND: redundancy per file
  group, no USABLE_FILE_MB).
* ``oracle_asm_diskgroup_offline_disks``: OFFLINE_DISKS.
* ``oracle_asm_diskgroup_info{diskgroup, state, type, asm_cluster, space_basis}``, value 1:
  ``asm_cluster`` is V$ASM_CLIENT.CLUSTER_NAME (12.1+), else the host name of the lowest instance
  (GV$INSTANCE; a standalone ASM serves only its own host), else empty: (asm_cluster, diskgroup)
  names one disk group whichever database reports it.

A database without ASM returns no rows: no series.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from prometheus_client.core import Metric

from exporter_common.declare import Collector, Family

from ..views import ASM_CLIENT, ASM_DISK_STAT, ASM_DISKGROUP_STAT
from ._common import emit, num
from ._health import clean

MiB = 1 << 20
_DG = ("diskgroup",)

SPEC = Collector(
    "asm", "ASM disk group space by redundancy type, failure groups and state (V$ASM_DISKGROUP_STAT: no disk discovery).",
    reads=(ASM_DISKGROUP_STAT.name, ASM_DISK_STAT.name, ASM_CLIENT.name),
    interval=60.0,      # disk group space changes slowly (collector_intervals overrides)
    metrics=(
        Family('oracle_asm_diskgroup_total_bytes', "gauge", 'Size of the ASM disk group, bytes (V$ASM_DISKGROUP_STAT.TOTAL_MB).', _DG, source='TOTAL_MB x 2^20', views=(ASM_DISKGROUP_STAT.name,)),
        Family('oracle_asm_diskgroup_free_bytes', "gauge", 'Free space in the ASM disk group before mirroring, bytes (FREE_MB).', _DG, source='FREE_MB x 2^20 (raw, before mirroring)', views=(ASM_DISKGROUP_STAT.name,)),
        Family('oracle_asm_diskgroup_usable_file_bytes', "gauge", 'Space files can still use keeping enough free to restore redundancy after a failure group loss, bytes (USABLE_FILE_MB; negative: that loss could not be re-mirrored now). EXTERN, NORMAL, HIGH only.', _DG, source='USABLE_FILE_MB x 2^20 = (FREE_MB - REQUIRED_MIRROR_FREE_MB) / copies; **negative** when the free space is below REQUIRED_MIRROR_FREE_MB: were a failure group lost now, ASM could not restore full redundancy (nothing has failed yet; files still grow until FREE_MB runs out). Absent for FLEX and EXTEND groups, where Oracle computes no value (USABLE_FILE_MB 0)', views=(ASM_DISKGROUP_STAT.name,)),
        Family('oracle_asm_diskgroup_required_mirror_free_bytes', "gauge", 'Free space needed to restore redundancy after the worst failure, bytes (REQUIRED_MIRROR_FREE_MB).', _DG, source='REQUIRED_MIRROR_FREE_MB x 2^20', views=(ASM_DISKGROUP_STAT.name,)),
        Family('oracle_asm_diskgroup_mirror_copies', "gauge", 'Copies of each extent the disk group keeps: 1 EXTERN, 2 NORMAL, 3 HIGH (absent for FLEX and EXTEND: per file group).', _DG, source='TYPE: EXTERN 1, NORMAL 2, HIGH 3', measure='copies', views=(ASM_DISKGROUP_STAT.name,)),
        Family('oracle_asm_diskgroup_failure_groups', "gauge", 'REGULAR failure groups holding the disk group\'s disks (V$ASM_DISK_STAT; quorum failure groups hold no data).', _DG, source='distinct FAILGROUP of V$ASM_DISK_STAT rows of the group, FAILGROUP_TYPE REGULAR (12.1+; all before)', measure='failure groups', views=(ASM_DISKGROUP_STAT.name, ASM_DISK_STAT.name)),
        Family('oracle_asm_diskgroup_file_space_bytes', "gauge", 'Space left for files that the ASM space alerts judge, bytes; its basis is the info metric\'s space_basis (usable_file, free_per_copy, raw_free).', _DG, source='`usable_file`: USABLE_FILE_MB (EXTERN; NORMAL/HIGH with more failure groups than copies); `free_per_copy`: FREE_MB / copies (NORMAL/HIGH with no more failure groups than copies: no failure group loss can be re-mirrored, Oracle\'s reserve would call a HIGH group of 3 failure groups full at 5 % raw use); `raw_free`: FREE_MB (FLEX, EXTEND: no USABLE_FILE_MB)', views=(ASM_DISKGROUP_STAT.name, ASM_DISK_STAT.name)),
        Family('oracle_asm_diskgroup_file_capacity_bytes', "gauge", 'The size of the disk group in the basis of oracle_asm_diskgroup_file_space_bytes, bytes: file_space / file_capacity is the share left that the ASM space alerts judge.', _DG, source='`usable_file`: (TOTAL_MB - REQUIRED_MIRROR_FREE_MB) / copies; `free_per_copy`: TOTAL_MB / copies; `raw_free`: TOTAL_MB (a HIGH group of 3 failure groups 72 % used has 28 % left, not the 9 % that free per copy over raw size would say)', views=(ASM_DISKGROUP_STAT.name, ASM_DISK_STAT.name)),
        Family('oracle_asm_diskgroup_offline_disks', "gauge", 'Disks of the disk group that are offline (OFFLINE_DISKS).', _DG, source='OFFLINE_DISKS', measure='disks', views=(ASM_DISKGROUP_STAT.name,)),
        Family("oracle_asm_diskgroup_info", "gauge", "ASM disk group state, redundancy type, ASM cluster and the basis of its file space, value 1.",
               ("diskgroup", "state", "type", "asm_cluster", "space_basis"), source='STATE (CONNECTED, MOUNTED, ...), TYPE (EXTERN, NORMAL, HIGH, FLEX, EXTEND), `asm_cluster` V$ASM_CLIENT.CLUSTER_NAME (12.1+; else the host name of the lowest instance, else empty): (asm_cluster, diskgroup) names one disk group across the databases that see it; `space_basis` as oracle_asm_diskgroup_file_space_bytes', measure='1', views=(ASM_DISKGROUP_STAT.name, ASM_CLIENT.name)),
    ), doc='Read from V$ASM_DISKGROUP_STAT and V$ASM_DISK_STAT, never V$ASM_DISKGROUP / V$ASM_DISK (which rediscover every disk on each query). A database without ASM has no rows and no series. Space by redundancy type: EXTERN, NORMAL and HIGH groups have Oracle\'s USABLE_FILE_MB; FLEX and EXTEND groups (redundancy per file group) have none (Oracle shows 0) and are judged on raw free space; a NORMAL or HIGH group with no more failure groups than copies cannot re-mirror after losing one, so it is judged on free space per copy. One disk group seen by several databases has one identity, `(asm_cluster, diskgroup)` of `oracle_asm_diskgroup_info`, and the alerts aggregate by it: one alert per disk group (per scrape target, whose labels every alert keeps), not one per database.', title='ASM disk groups')
NAME, VIEWS = SPEC.name, SPEC.reads

COPIES = {"EXTERN": 1, "NORMAL": 2, "HIGH": 3}
USABLE_TYPES = frozenset(COPIES)        # the types whose USABLE_FILE_MB Oracle computes

# metric, column, scale
COLUMNS = (
    ('oracle_asm_diskgroup_total_bytes', 'TOTAL_MB', MiB),
    ('oracle_asm_diskgroup_free_bytes', 'FREE_MB', MiB),
    ('oracle_asm_diskgroup_required_mirror_free_bytes', 'REQUIRED_MIRROR_FREE_MB', MiB),
    ('oracle_asm_diskgroup_offline_disks', 'OFFLINE_DISKS', 1),
)


def failure_groups(rows: Iterable[dict[str, Any]]) -> dict[int, int]:
    """{GROUP_NUMBER: REGULAR failure groups} from V$ASM_DISK_STAT rows."""
    seen: dict[int, set[str]] = defaultdict(set)
    for row in rows:
        group, fg = num(row.get("GROUP_NUMBER")), clean(row.get("FAILGROUP"))
        if group is None or not group or not fg:
            continue
        if clean(row.get("FAILGROUP_TYPE")).upper() not in ("", "REGULAR"):
            continue                    # QUORUM: voting files only, no data
        seen[int(group)].add(fg)
    return {g: len(v) for g, v in seen.items()}


def cluster_name(snapshot: Any) -> str:
    for row in snapshot.rows("V$ASM_CLIENT"):
        name = clean(row.get("CLUSTER_NAME"))
        if name:
            return name
    hosts = sorted((num(r.get("INST_ID")) or 0, clean(r.get("HOST_NAME"))) for r in snapshot.rows("GV$INSTANCE"))
    return next((h for _, h in hosts if h), "")


def space(row: dict[str, Any], fgs: int | None) -> tuple[str, float | None, float | None]:
    """(space_basis, bytes left for files, the group's size in that basis) of a
    V$ASM_DISKGROUP_STAT row (see the module doc)."""
    kind = clean(row.get("TYPE")).upper()
    free, usable = num(row.get("FREE_MB")), num(row.get("USABLE_FILE_MB"))
    total, mirror = num(row.get("TOTAL_MB")), num(row.get("REQUIRED_MIRROR_FREE_MB")) or 0.0
    copies = COPIES.get(kind)
    if copies is None:
        return "raw_free", None if free is None else free * MiB, None if total is None else total * MiB
    if copies > 1 and fgs is not None and fgs <= copies:
        return ("free_per_copy", None if free is None else free / copies * MiB,
                None if total is None else total / copies * MiB)
    return ("usable_file", None if usable is None else usable * MiB,
            None if total is None else max(total - mirror, 0.0) / copies * MiB)


def collect(snapshot: Any, settings: Any) -> Iterable[Metric]:
    groups: dict[str, dict[str, Any]] = {}
    for row in snapshot.rows("V$ASM_DISKGROUP_STAT"):
        name = clean(row.get("NAME"))
        if name:
            groups.setdefault(name, row)
    fgs = failure_groups(snapshot.rows("V$ASM_DISK_STAT"))
    cluster = cluster_name(snapshot) if groups else ""
    families = []
    for metric, column, scale in COLUMNS:
        family = SPEC.family(metric)
        for name in sorted(groups):
            value = num(groups[name].get(column))
            if value is not None:
                family.add_metric([name], value * scale)
        families.append(family)
    usable = SPEC.family("oracle_asm_diskgroup_usable_file_bytes")
    copies = SPEC.family("oracle_asm_diskgroup_mirror_copies")
    nfg = SPEC.family("oracle_asm_diskgroup_failure_groups")
    left = SPEC.family("oracle_asm_diskgroup_file_space_bytes")
    capacity = SPEC.family("oracle_asm_diskgroup_file_capacity_bytes")
    info = SPEC.family("oracle_asm_diskgroup_info")
    for name in sorted(groups):
        row = groups[name]
        kind = clean(row.get("TYPE")).upper()
        number = num(row.get("GROUP_NUMBER"))
        count = fgs.get(int(number)) if number is not None else None
        value = num(row.get("USABLE_FILE_MB"))
        if kind in USABLE_TYPES and value is not None:
            usable.add_metric([name], value * MiB)
        if kind in COPIES:
            copies.add_metric([name], float(COPIES[kind]))
        if count is not None:
            nfg.add_metric([name], float(count))
        basis, room, size = space(row, count)
        if room is not None:
            left.add_metric([name], room)
        if size:
            capacity.add_metric([name], size)
        info.add_metric([name, clean(row.get("STATE")), clean(row.get("TYPE")), cluster, basis], 1.0)
    families[2:2] = [usable]
    families += [copies, nfg, left, capacity, info]
    yield from emit(families)
