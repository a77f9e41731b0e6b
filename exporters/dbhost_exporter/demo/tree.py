"""Generate sysfs + procfs fixture trees for dbhost-exporter (never hand-edited).

Used by the tests (tests/dbhost/make_fixtures.py is this module under its old
name) and at run time by ``make run DEMO=1`` (stack/demo.py), which serves an
animated tree (advance_tree) so the host dashboards and alerts have data on any
machine. Part of the package so the stack never imports the tests.

The tree is shaped like the real one (paths and file formats checked against
the kernel's Documentation/ABI/testing/{sysfs-block,procfs-diskstats},
Documentation/admin-guide/iostats.rst and OpenZFS module/zfs/arc.c):

* ``sys/block/sdX`` is a symlink to
  ``../devices/pci0000:00/<pci>/<pci>/hostH/rport-H:0-0/targetH:C:T/H:C:T:L/block/sdX``;
  ``sdX/device`` -> ``../../../H:C:T:L`` which holds ``vendor`` (8 chars, space padded),
  ``model`` (16 chars, space padded), ``wwid`` (``naa.<hex>``), ``queue_depth``,
  ``device_busy``, ``iorequest_cnt``/``iodone_cnt``/``ioerr_cnt`` (``0x%x``).
* ``sys/block/dm-N`` -> ``../devices/virtual/block/dm-N`` with ``dm/name``, ``dm/uuid``
  (``mpath-<wwid>`` for multipath, ``LVM-...`` for LVM) and ``slaves/<path>`` symlinks.
* ``sys/block/nvme0n1`` -> ``../devices/pci.../nvme/nvme0/nvme0n1`` with ``wwid`` and
  ``device`` -> ``../../nvme0`` (``model``, ``serial``, ``firmware_rev``).
* ``inflight`` is ``%8u %8u`` (reads, writes); ``/proc/diskstats`` lines are
  ``%4d %7d %s`` and 17 numbers (kernel 5.5+; field 12 = I/Os in progress).
* ``sys/class/scsi_host/hostH`` -> ``../../devices/.../hostH/scsi_host/hostH`` with
  ``can_queue`` and ``host_busy``.
* ``proc/spl/kstat/zfs/arcstats``: kstat header line, ``name type data``, rows
  ``%-31s %-4u %llu`` (SPL kstat_seq_show) with the OpenZFS 2.1 or 2.2 field list; illumos ``kstat -p
  zfs:0:arcstats`` text (``module:instance:name:statistic<TAB>value``) in ``kstat_p.txt``.

The numbers live in the spec below; tests compute their expectations from the
spec, never from exporter output. Run as a script to write a tree somewhere:
``python -m dbhost_exporter.demo.tree /tmp/tree``.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from . import procs as fixtures_proc

GOLDEN_KERNEL = "6.12.0-55.9.1.el10_0.x86_64"  # 6.10+: diskstats counts from block-layer entry, host queue visible


@dataclass(frozen=True)
class ScsiLun:
    name: str
    minor: int
    hctl: str
    vendor: str
    model: str
    naa: str | None          # device/wwid is "naa.<naa>"; None: kernel without device/wwid
    queue_depth: int
    device_busy: int
    iorequest_cnt: int
    iodone_cnt: int
    ioerr_cnt: int
    nr_requests: int
    in_progress: int         # /proc/diskstats field 12


@dataclass(frozen=True)
class DmMap:
    name: str                # dm-N
    minor: int
    dm_name: str
    uuid: str
    slaves: tuple[str, ...]
    inflight: tuple[int, int]
    in_progress: int
    nr_requests: int


PCI = {2: "0000:00:03.0/0000:03:00.0", 3: "0000:00:03.0/0000:03:00.1", 4: "0000:00:1f.2/0000:05:00.0"}
HOSTS = {2: (4096, 41), 3: (4096, 20), 4: (256, 8)}          # host -> (can_queue, host_busy)
CMD_PER_LUN = {2: 3, 3: 3, 4: 8}     # scsi_host/hostH/cmd_per_lun (lpfc: 3; a SAS HBA: 8)

SCSI = [
    # two FC paths each to a redo LUN and a data LUN (NetApp), one local SAS disk throttled to 8
    ScsiLun("sda", 0, "2:0:0:0", "NETAPP", "LUN C-Mode", "600a098038303053453f463045727a41", 16, 16,
            0x1a2b3c, 0x1a2b2c, 0x0, 256, 24),
    ScsiLun("sdb", 16, "2:0:0:1", "NETAPP", "LUN C-Mode", "600a098038303053453f463045727a42", 32, 25,
            0x2f00d1, 0x2f00b8, 0x4, 256, 22),
    ScsiLun("sdc", 32, "3:0:0:0", "NETAPP", "LUN C-Mode", "600a098038303053453f463045727a41", 16, 11,
            0x19ff01, 0x19fef6, 0x0, 256, 11),
    ScsiLun("sdd", 48, "3:0:0:1", "NETAPP", "LUN C-Mode", "600a098038303053453f463045727a42", 32, 9,
            0x2e1a7f, 0x2e1a76, 0x1f, 256, 5),
    ScsiLun("sde", 64, "4:0:0:0", "SEAGATE", "ST600MM0009", None, 8, 8,
            0xbeef, 0xbee7, 0x0, 64, 13),
]
DMS = [
    DmMap("dm-0", 0, "redo01", "mpath-3600a098038303053453f463045727a41", ("sda", "sdc"), (0, 27), 27, 256),
    DmMap("dm-1", 1, "data01", "mpath-3600a098038303053453f463045727a42", ("sdb", "sdd"), (30, 4), 34, 256),
    DmMap("dm-2", 2, "vg_u01-lv_u01", "LVM-k3Jd8mP0aQ2rT9yXcVbN1mE4fG7hJ0kLz8wX5yQ2rT9yXcVbN1mE4fG7hJ0kL",
          ("sde",), (1, 2), 3, 128),
]
NVME = {"name": "nvme0n1", "major": 259, "minor": 0, "wwid": "eui.0025388b71b0f1a2",
        "model": "SAMSUNG MZVL2512HCJQ-00B00", "serial": "S675NX0T123456", "inflight": (2, 3),
        "in_progress": 5, "nr_requests": 1023, "queue_count": 3, "sqsize": 1023}
SKIPPED = [("loop0", 7, 0, (0, 0), 0), ("zram0", 252, 0, (0, 0), 0)]   # name, major, minor, inflight, in_progress

ROLES_CONFIG = """\
max_series: 10000
collectors: {lun: true, zfs: true, process: true}
lun:
  default_role: other
  roles:
    - {wwid: "naa.600a098038303053453f463045727a41", role: redo}
    - {multipath: data01, role: data}
    - {device: nvme0n1, role: arch}
"""

# ---------------------------------------------------------------- ZFS arcstats
# Field order of arc_stats in OpenZFS module/zfs/arc.c. 2.1 (zfs-2.1.x) and 2.2 (zfs-2.2.x).
_ARC_COMMON_HEAD = ["hits", "misses", "demand_data_hits", "demand_data_misses", "demand_metadata_hits",
                    "demand_metadata_misses", "prefetch_data_hits", "prefetch_data_misses",
                    "prefetch_metadata_hits", "prefetch_metadata_misses", "mru_hits", "mru_ghost_hits",
                    "mfu_hits", "mfu_ghost_hits"]
_L2 = ["l2_hits", "l2_misses", "l2_prefetch_asize", "l2_mru_asize", "l2_mfu_asize", "l2_bufc_data_asize",
       "l2_bufc_metadata_asize", "l2_feeds", "l2_rw_clash", "l2_read_bytes", "l2_write_bytes",
       "l2_writes_sent", "l2_writes_done", "l2_writes_error", "l2_writes_lock_retry", "l2_evict_lock_retry",
       "l2_evict_reading", "l2_evict_l1cached", "l2_free_on_write", "l2_abort_lowmem", "l2_cksum_bad",
       "l2_io_error", "l2_size", "l2_asize", "l2_hdr_size", "l2_log_blk_writes", "l2_log_blk_avg_asize",
       "l2_log_blk_asize", "l2_log_blk_count", "l2_data_to_meta_ratio", "l2_rebuild_success",
       "l2_rebuild_unsupported", "l2_rebuild_io_errors", "l2_rebuild_dh_errors", "l2_rebuild_cksum_lb_errors",
       "l2_rebuild_lowmem", "l2_rebuild_size", "l2_rebuild_asize", "l2_rebuild_bufs",
       "l2_rebuild_bufs_precached", "l2_rebuild_log_blks"]
_STATES_21 = [f"{st}_{f}" for st in ("anon", "mru", "mru_ghost", "mfu", "mfu_ghost")
              for f in ("size", "evictable_data", "evictable_metadata")]
ARC_FIELDS_21 = (_ARC_COMMON_HEAD + [
    "deleted", "mutex_miss", "access_skip", "evict_skip", "evict_not_enough", "evict_l2_cached",
    "evict_l2_eligible", "evict_l2_eligible_mfu", "evict_l2_eligible_mru", "evict_l2_ineligible",
    "evict_l2_skip", "hash_elements", "hash_elements_max", "hash_collisions", "hash_chains", "hash_chain_max",
    "p", "c", "c_min", "c_max", "size", "compressed_size", "uncompressed_size", "overhead_size", "hdr_size",
    "data_size", "metadata_size", "dbuf_size", "dnode_size", "bonus_size"] + _STATES_21 + _L2 + [
    "memory_throttle_count", "memory_direct_count", "memory_indirect_count", "memory_all_bytes",
    "memory_free_bytes", "memory_available_bytes", "arc_no_grow", "arc_tempreserve", "arc_loaned_bytes",
    "arc_prune", "arc_meta_used", "arc_meta_limit", "arc_dnode_limit", "arc_meta_max", "arc_meta_min",
    "async_upgrade_sync", "demand_hit_predictive_prefetch", "demand_hit_prescient_prefetch", "arc_need_free",
    "arc_sys_free", "arc_raw_size", "cached_only_in_progress", "abd_chunk_waste_size"])
_STATES_22 = [f"{st}_{f}" for st in ("anon", "mru", "mru_ghost", "mfu", "mfu_ghost", "uncached")
              for f in ("size", "data", "metadata", "evictable_data", "evictable_metadata")]
_STATES_22.remove("anon_size")
_STATES_22.insert(0, "anon_size")
ARC_FIELDS_22 = ([
    "hits", "iohits", "misses",
    "demand_data_hits", "demand_data_iohits", "demand_data_misses",
    "demand_metadata_hits", "demand_metadata_iohits", "demand_metadata_misses",
    "prefetch_data_hits", "prefetch_data_iohits", "prefetch_data_misses",
    "prefetch_metadata_hits", "prefetch_metadata_iohits", "prefetch_metadata_misses",
    "mru_hits", "mru_ghost_hits", "mfu_hits", "mfu_ghost_hits", "uncached_hits",
    "deleted", "mutex_miss", "access_skip", "evict_skip", "evict_not_enough", "evict_l2_cached",
    "evict_l2_eligible", "evict_l2_eligible_mfu", "evict_l2_eligible_mru", "evict_l2_ineligible",
    "evict_l2_skip", "hash_elements", "hash_elements_max", "hash_collisions", "hash_chains", "hash_chain_max",
    "meta", "pd", "pm", "c", "c_min", "c_max", "size", "compressed_size", "uncompressed_size",
    "overhead_size", "hdr_size", "data_size", "metadata_size", "dbuf_size", "dnode_size", "bonus_size"]
    + _STATES_22 + _L2 + [
    "memory_throttle_count", "memory_direct_count", "memory_indirect_count", "memory_all_bytes",
    "memory_free_bytes", "memory_available_bytes", "arc_no_grow", "arc_tempreserve", "arc_loaned_bytes",
    "arc_prune", "arc_meta_used", "arc_dnode_limit", "async_upgrade_sync", "predictive_prefetch",
    "demand_hit_predictive_prefetch", "demand_iohit_predictive_prefetch", "prescient_prefetch",
    "demand_hit_prescient_prefetch", "demand_iohit_prescient_prefetch", "arc_need_free", "arc_sys_free",
    "arc_raw_size", "cached_only_in_progress", "abd_chunk_waste_size"])
# illumos usr/src/uts/common/fs/zfs/arc.c (no iohits, no uncached, no l2 rebuild stats)
ARC_FIELDS_ILLUMOS = (_ARC_COMMON_HEAD + [
    "deleted", "mutex_miss", "access_skip", "evict_skip", "evict_not_enough", "evict_l2_cached",
    "evict_l2_eligible", "evict_l2_ineligible", "evict_l2_skip", "hash_elements", "hash_elements_max",
    "hash_collisions", "hash_chains", "hash_chain_max", "p", "c", "c_min", "c_max", "size",
    "compressed_size", "uncompressed_size", "overhead_size", "hdr_size", "data_size", "metadata_size",
    "other_size"] + _STATES_21 + _L2[:25] + [
    "memory_throttle_count", "arc_meta_used", "arc_meta_limit", "arc_meta_max", "arc_meta_min",
    "async_upgrade_sync", "demand_hit_predictive_prefetch", "demand_hit_prescient_prefetch"])

# The values the tests check; every other field gets a deterministic filler.
ARC_VALUES = {
    "demand_data_hits": 48_602_473, "demand_data_misses": 5_014_995, "demand_data_iohits": 1_207,
    "demand_metadata_hits": 7_086_083, "demand_metadata_misses": 156_591, "demand_metadata_iohits": 311,
    "prefetch_data_hits": 367_047, "prefetch_data_misses": 974_529, "prefetch_data_iohits": 20_551,
    "prefetch_metadata_hits": 1_970_835, "prefetch_metadata_misses": 61_775, "prefetch_metadata_iohits": 476,
    "mru_hits": 12_345_678, "mfu_hits": 45_320_906, "mru_ghost_hits": 70_311, "mfu_ghost_hits": 4_016,
    "uncached_hits": 0,
    "size": 68_719_476_736, "c": 68_987_912_192, "c_min": 4_294_967_296, "c_max": 103_079_215_104,
    "l2_hits": 9_607_113, "l2_misses": 3_393_022, "l2_size": 536_870_912_000, "l2_asize": 412_316_860_416,
    "l2_read_bytes": 81_604_378_624, "l2_write_bytes": 611_401_908_224, "l2_feeds": 1_843_211,
    "l2_writes_error": 2, "l2_cksum_bad": 7, "l2_io_error": 1,
}


def arc_values(fields: list[str]) -> dict[str, int]:
    values: dict[str, int] = {}
    for i, name in enumerate(fields):
        values[name] = ARC_VALUES.get(name, (i * 7919 + 104729) % 1_000_003)
    if "iohits" in values:
        values["iohits"] = sum(values[f"{k}_iohits"] for k in
                               ("demand_data", "demand_metadata", "prefetch_data", "prefetch_metadata"))
    values["hits"] = sum(values[f"{k}_hits"] for k in
                         ("demand_data", "demand_metadata", "prefetch_data", "prefetch_metadata"))
    values["misses"] = sum(values[f"{k}_misses"] for k in
                           ("demand_data", "demand_metadata", "prefetch_data", "prefetch_metadata"))
    return values


def linux_arcstats_text(fields: list[str]) -> str:
    values = arc_values(fields)
    # kstat header: ks_kid ks_type ks_flags ks_ndata ks_data_size ks_crtime ks_snaptime
    lines = [f"13 1 0x01 {len(fields)} {len(fields) * 272} 8402944205 632568437854307",
             f"{'name':<31} {'type':<4} data"]
    for name in fields:
        kstat_type = 3 if name == "memory_available_bytes" else 4    # KSTAT_DATA_INT64 / UINT64
        # SPL prints "%-31s %-4u " then the value: long names still get one separating space
        lines.append(f"{name:<31} {kstat_type:<4} {values[name]}")
    return "\n".join(lines) + "\n"


def illumos_kstat_text() -> str:
    values = arc_values(ARC_FIELDS_ILLUMOS)
    rows = {name: str(v) for name, v in values.items()}
    rows.update({"class": "misc", "crtime": "64.352843596", "snaptime": "8127345.778390471"})
    return "".join(f"zfs:0:arcstats:{name}\t{rows[name]}\n" for name in sorted(rows))


# ---------------------------------------------------------------- writers
def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _link(link: Path, target: str) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


def _diskstat(major: int, minor: int, name: str, in_progress: int, seed: int, nfields: int = 20) -> str:
    """One /proc/diskstats line (block/genhd.c diskstats_show: ``%4d %7d %pg`` then the counters).
    ``nfields`` counts major, minor and name too: 14 (before 4.18), 18 (4.18+: 4 discard fields),
    20 (5.5+: 2 flush fields). Field 12, I/Os in progress, is in the same place in all three."""
    rd, wr = 1000 + seed * 37, 2000 + seed * 53
    stats = [rd, seed, rd * 16, rd // 2, wr, seed * 2, wr * 16, wr // 3, in_progress, (rd + wr) // 4,
             (rd // 2 + wr // 3), 0, 0, 0, 0, seed * 10, seed][: nfields - 3]
    return f"{major:4d} {minor:7d} {name} " + " ".join(str(v) for v in stats) + "\n"


def nvme_controller(sysfs: Path, ctrl_dir: str, subsys: str, state: str, transport: str, queue_count: int,
                    sqsize: int, address: str = "") -> None:
    """An NVMe controller as drivers/nvme/host/sysfs.c shows it: state, transport, queue_count (I/O
    queues + the admin queue), sqsize (0's based), cntlid, address; /sys/class/nvme/nvmeN links to it
    and /sys/class/nvme-subsystem/<subsys>/nvmeN back to it from its subsystem."""
    d = sysfs / ctrl_dir
    name = d.name
    _write(d / "state", f"{state}\n")
    _write(d / "transport", f"{transport}\n")
    _write(d / "queue_count", f"{queue_count}\n")
    _write(d / "sqsize", f"{sqsize}\n")
    _write(d / "cntlid", f"{int(name[4:]) + 1}\n")
    _write(d / "address", f"{address}\n")
    _link(sysfs / "class/nvme" / name, f"../../{ctrl_dir}")
    sub = sysfs / "devices/virtual/nvme-subsystem" / subsys
    if not (sysfs / "class/nvme-subsystem" / subsys).is_symlink():
        _link(sysfs / "class/nvme-subsystem" / subsys, f"../../devices/virtual/nvme-subsystem/{subsys}")
    _link(sub / name, os.path.relpath(d, sub))


@dataclass
class Fixture:
    root: Path
    procfs: Path
    sysfs: Path
    kstat_file: Path
    config: Path


# System V shared memory and huge pages of the demo database host (M5, M1): one 19c instance
# (DEMO1, sga_target 6 GiB on 2 MiB huge pages) whose SGA is four segments, under the classic
# installation-guide limits (shmmax 4 GiB - 1, shmall 2 Mi pages = 8 GiB of 4 KiB pages).
SHM_LIMITS = {"shmmax": 4294967295, "shmall": 2097152, "shmmni": 4096}
SHM_SEGMENTS = [   # (key, shmid, size bytes, rss bytes): the SGA split at shmmax, as Oracle does
    (0, 32768, 8388608, 8388608), (0, 32769, 4292870144, 4292870144), (0, 32770, 2132803584, 2132803584),
    (0, 32771, 16777216, 16777216), (-1640194412, 32772, 2097152, 2097152)]
HUGEPAGES = {"total": 3100, "free": 60, "reserved": 21, "surplus": 0, "size_kb": 2048}


def write_memory(procfs: Path, limits=SHM_LIMITS, segments=SHM_SEGMENTS, huge=HUGEPAGES) -> None:
    """proc/sys/kernel/shm*, proc/sysvipc/shm and proc/meminfo as the kernel writes them
    (ipc/shm.c sysvipc_shm_proc_show; fs/proc/meminfo.c with mm/hugetlb.c hugetlb_report_meminfo)."""
    for name, value in limits.items():
        _write(procfs / "sys/kernel" / name, f"{value}\n")
    rows = ["       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid"
            "      atime      dtime      ctime                   rss                  swap\n"]
    for key, shmid, size, rss in segments:
        rows.append(f"{key:10d} {shmid:10d}  {0o640:4o} {size:21d} {4101:5d} {4187:5d}  {212:5d} "
                    f"{54321:5d} {54322:5d} {54321:5d} {54322:5d} {1764000000:10d} {0:10d} {1763990000:10d} "
                    f"{rss:21d} {0:21d}\n")
    _write(procfs / "sysvipc/shm", "".join(rows))
    hp = huge["total"] * huge["size_kb"]
    fields = [("MemTotal", 16393932), ("MemFree", 412356), ("MemAvailable", 2915460), ("Buffers", 102400),
              ("Cached", 2650124), ("SwapCached", 0), ("Active", 2451232), ("Inactive", 912220),
              ("Shmem", 26112), ("Slab", 289312), ("PageTables", 61240), ("SwapTotal", 8388604),
              ("SwapFree", 8388604), ("CommitLimit", 13022168), ("Committed_AS", 5124412),
              ("AnonHugePages", 0), ("ShmemHugePages", 0), ("FileHugePages", 0)]
    lines = [f"{k + ':':<16}{v:>8} kB\n" for k, v in fields]
    lines += [f"{'HugePages_Total:':<16}{huge['total']:>8}\n", f"{'HugePages_Free:':<16}{huge['free']:>8}\n",
              f"{'HugePages_Rsvd:':<16}{huge['reserved']:>8}\n", f"{'HugePages_Surp:':<16}{huge['surplus']:>8}\n",
              f"{'Hugepagesize:':<16}{huge['size_kb']:>8} kB\n", f"{'Hugetlb:':<16}{hp:>8} kB\n"]
    _write(procfs / "meminfo", "".join(lines))


def build_tree(root: Path, kernel: str = GOLDEN_KERNEL, arcstats: str | None = "2.2",
               with_proc: bool = True) -> Fixture:
    root = Path(root)
    sysfs, procfs = root / "sys", root / "proc"
    diskstats: list[str] = []

    for host, (can_queue, busy) in HOSTS.items():
        hostdir = f"devices/pci0000:00/{PCI[host]}/host{host}"
        _write(sysfs / hostdir / f"scsi_host/host{host}/can_queue", f"{can_queue}\n")
        _write(sysfs / hostdir / f"scsi_host/host{host}/host_busy", f"{busy}\n")
        _write(sysfs / hostdir / f"scsi_host/host{host}/cmd_per_lun", f"{CMD_PER_LUN[host]}\n")
        _link(sysfs / f"class/scsi_host/host{host}", f"../../{hostdir}/scsi_host/host{host}")

    for i, lun in enumerate(SCSI):
        h, c, t, l = lun.hctl.split(":")
        sdev = f"devices/pci0000:00/{PCI[int(h)]}/host{h}/rport-{h}:0-0/target{h}:{c}:{t}/{lun.hctl}"
        d = sysfs / sdev
        _write(d / "vendor", f"{lun.vendor:<8.8}\n")
        _write(d / "model", f"{lun.model:<16.16}\n")
        _write(d / "rev", "9800\n")
        _write(d / "type", "0\n")                     # TYPE_DISK
        if lun.naa:
            _write(d / "wwid", f"naa.{lun.naa}\n")
        _write(d / "queue_depth", f"{lun.queue_depth}\n")
        _write(d / "device_busy", f"{lun.device_busy}\n")
        _write(d / "iorequest_cnt", f"0x{lun.iorequest_cnt:x}\n")
        _write(d / "iodone_cnt", f"0x{lun.iodone_cnt:x}\n")
        _write(d / "ioerr_cnt", f"0x{lun.ioerr_cnt:x}\n")
        _write(d / "state", "running\n")
        blk = d / "block" / lun.name
        _write(blk / "dev", f"8:{lun.minor}\n")
        _write(blk / "queue/nr_requests", f"{lun.nr_requests}\n")
        _write(blk / "inflight", f"{0:8d} {lun.in_progress:8d}\n")
        _write(blk / "mq/0/cpu_list", "0, 1\n")          # blk-mq hardware queue (every SCSI disk since 5.0)
        _write(blk / "mq/0/nr_tags", f"{HOSTS[int(h)][0]}\n")
        _write(blk / "mq/0/nr_reserved_tags", "0\n")
        _link(blk / "device", f"../../../{lun.hctl}")
        _link(sysfs / "block" / lun.name, f"../{sdev}/block/{lun.name}")
        diskstats.append(_diskstat(8, lun.minor, lun.name, lun.in_progress, i + 1))
        if lun.name == "sda":   # a partition: a subdirectory of the disk and in diskstats, not in /sys/block
            _write(blk / "sda1/partition", "1\n")
            _write(blk / "sda1/inflight", f"{0:8d} {0:8d}\n")
            diskstats.append(_diskstat(8, 1, "sda1", 0, 40))

    for j, dm in enumerate(DMS):
        d = sysfs / "devices/virtual/block" / dm.name
        _write(d / "dm/name", f"{dm.dm_name}\n")
        _write(d / "dm/uuid", f"{dm.uuid}\n")
        _write(d / "dm/suspended", "0\n")
        _write(d / "dev", f"253:{dm.minor}\n")
        _write(d / "inflight", f"{dm.inflight[0]:8d} {dm.inflight[1]:8d}\n")
        _write(d / "queue/nr_requests", f"{dm.nr_requests}\n")
        for s in dm.slaves:
            lun = next(x for x in SCSI if x.name == s)
            h, c, t, _ = lun.hctl.split(":")
            _link(d / "slaves" / s, f"../../../../pci0000:00/{PCI[int(h)]}/host{h}/rport-{h}:0-0/"
                                    f"target{h}:{c}:{t}/{lun.hctl}/block/{s}")
        _link(sysfs / "block" / dm.name, f"../devices/virtual/block/{dm.name}")
        diskstats.append(_diskstat(253, dm.minor, dm.name, dm.in_progress, 20 + j))

    ctrl = "devices/pci0000:00/0000:00:04.0/nvme/nvme0"
    _write(sysfs / ctrl / "model", f"{NVME['model']:<40}\n")       # 40 bytes, space padded
    _write(sysfs / ctrl / "serial", f"{NVME['serial']:<20}\n")
    _write(sysfs / ctrl / "firmware_rev", "GXA7601Q\n")
    nvme_controller(sysfs, ctrl, "nvme-subsys0", "live", "pcie", NVME["queue_count"], NVME["sqsize"])
    ns = sysfs / ctrl / NVME["name"]
    _write(ns / "wwid", f"{NVME['wwid']}\n")
    _write(ns / "inflight", f"{NVME['inflight'][0]:8d} {NVME['inflight'][1]:8d}\n")
    _write(ns / "queue/nr_requests", f"{NVME['nr_requests']}\n")
    for q in range(NVME["queue_count"] - 1):            # one blk-mq hardware queue per I/O queue
        _write(ns / f"mq/{q}/cpu_list", f"{q}\n")
        _write(ns / f"mq/{q}/nr_tags", f"{NVME['sqsize']}\n")   # PCIe: q_depth - 1 = sqsize
        _write(ns / f"mq/{q}/nr_reserved_tags", "0\n")         # PCIe I/O queues reserve none
    _link(ns / "device", "../../nvme0")
    _link(sysfs / "block" / NVME["name"], f"../{ctrl}/{NVME['name']}")
    diskstats.append(_diskstat(NVME["major"], NVME["minor"], NVME["name"], NVME["in_progress"], 30))

    for name, major, minor, infl, prog in SKIPPED:
        d = sysfs / "devices/virtual/block" / name
        _write(d / "inflight", f"{infl[0]:8d} {infl[1]:8d}\n")
        _write(d / "queue/nr_requests", "128\n")
        _link(sysfs / "block" / name, f"../devices/virtual/block/{name}")
        diskstats.append(_diskstat(major, minor, name, prog, 0))

    # /proc/diskstats is ordered by major, minor like the kernel's
    diskstats.sort(key=lambda line: (int(line.split()[0]), int(line.split()[1])))
    _write(procfs / "diskstats", "".join(diskstats))
    _write(procfs / "sys/kernel/osrelease", kernel + "\n")
    write_memory(procfs)
    if arcstats == "2.2":
        _write(procfs / "spl/kstat/zfs/arcstats", linux_arcstats_text(ARC_FIELDS_22))
    elif arcstats == "2.1":
        _write(procfs / "spl/kstat/zfs/arcstats", linux_arcstats_text(ARC_FIELDS_21))
    kstat_file = root / "kstat_p.txt"
    _write(kstat_file, illumos_kstat_text())
    config = root / "dbhost-exporter.yml"
    _write(config, ROLES_CONFIG)

    if with_proc:
        fixtures_proc.build_proc_tree(procfs)
    return Fixture(root, procfs, sysfs, kstat_file, config)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    trees = {"golden": build_tree, "paths": build_paths_tree, "variant": build_variant_tree}
    kind = "golden"
    if len(argv) == 3 and argv[0] == "--tree" and argv[1] in trees:
        kind, argv = argv[1], argv[2:]
    usage = "usage: python -m dbhost_exporter.demo.tree [--tree golden|paths|variant] DIR"
    if argv and argv[0] in ("-h", "--help"):
        print(usage + "\n\nWrites a sysfs + procfs fixture tree (the golden host by default) into DIR.")
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    fx = trees[kind](Path(argv[0]))
    print(f"procfs={fx.procfs} sysfs={fx.sysfs} kstat_file={fx.kstat_file} config={fx.config}")
    return 0


def build_scale_tree(root: Path, n_paths: int = 1024, kernel: str = GOLDEN_KERNEL) -> Fixture:
    """A big host: ``n_paths`` SCSI paths on 4 FC HBAs, two paths per LUN, one
    dm-multipath map per LUN (n_paths/2 maps). Same file shapes as build_tree."""
    root = Path(root)
    sysfs, procfs = root / "sys", root / "proc"
    diskstats: list[str] = []
    hosts = range(10, 14)
    for h in hosts:
        hostdir = f"devices/pci0000:00/0000:00:0{h - 9}.0/0000:1{h - 10}:00.0/host{h}"
        _write(sysfs / hostdir / f"scsi_host/host{h}/can_queue", "4096\n")
        _write(sysfs / hostdir / f"scsi_host/host{h}/host_busy", f"{h}\n")
        _link(sysfs / f"class/scsi_host/host{h}", f"../../{hostdir}/scsi_host/host{h}")
    paths = []
    for i in range(n_paths):
        h = hosts[i % 4]
        lun_no = i // 2
        hctl = f"{h}:0:{i % 2}:{lun_no}"
        name = "sd" + _sd_suffix(i)
        sdev = (f"devices/pci0000:00/0000:00:0{h - 9}.0/0000:1{h - 10}:00.0/host{h}/rport-{h}:0-0/"
                f"target{h}:0:{i % 2}/{hctl}")
        d = sysfs / sdev
        _write(d / "vendor", f"{'NETAPP':<8}\n")
        _write(d / "model", f"{'LUN C-Mode':<16}\n")
        _write(d / "wwid", f"naa.600a0980383030534{lun_no:015x}\n")
        _write(d / "queue_depth", "32\n")
        _write(d / "state", "running\n")
        _write(d / "device_busy", f"{i % 33}\n")
        for attr in ("iorequest_cnt", "iodone_cnt", "ioerr_cnt"):
            _write(d / attr, f"0x{i * 977:x}\n")
        blk = d / "block" / name
        _write(blk / "queue/nr_requests", "256\n")
        _write(blk / "inflight", f"{0:8d} {i % 40:8d}\n")
        _link(blk / "device", f"../../../{hctl}")
        _link(sysfs / "block" / name, f"../{sdev}/block/{name}")
        diskstats.append(_diskstat(8 + (i * 16) // 256, (i * 16) % 256, name, i % 40, i % 50))
        paths.append((name, sdev))
    for m in range(n_paths // 2):
        d = sysfs / "devices/virtual/block" / f"dm-{m}"
        _write(d / "dm/name", f"lun{m:04d}\n")
        _write(d / "dm/uuid", f"mpath-3600a0980383030534{m:015x}\n")
        _write(d / "dm/suspended", "0\n")
        _write(d / "inflight", f"{0:8d} {m % 60:8d}\n")
        _write(d / "queue/nr_requests", "256\n")
        for name, sdev in paths[2 * m: 2 * m + 2]:
            _link(d / "slaves" / name, f"../../../../{sdev[len('devices/'):]}/block/{name}")
        _link(sysfs / "block" / f"dm-{m}", f"../devices/virtual/block/dm-{m}")
        diskstats.append(_diskstat(253, m, f"dm-{m}", m % 60, m % 50))
    _write(procfs / "diskstats", "".join(diskstats))
    _write(procfs / "sys/kernel/osrelease", kernel + "\n")
    _write(procfs / "spl/kstat/zfs/arcstats", linux_arcstats_text(ARC_FIELDS_22))
    config = root / "dbhost-exporter.yml"
    _write(config, "collectors: {process: false}\n")
    kstat_file = root / "kstat_p.txt"
    _write(kstat_file, illumos_kstat_text())
    return Fixture(root, procfs, sysfs, kstat_file, config)


def _sd_suffix(i: int) -> str:
    """sd naming: a..z, aa..zz, aaa... (the kernel's sd_format_disk_name)."""
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(ord("a") + r) + s
    return s


# ---------------------------------------------------------------- variant shapes (review)
# Shapes from other real hosts, checked against the kernel sources: scsi_vpd_lun_id() prints
# device/wwid as naa./eui. + lower-case hex or t10. + the vendor id text; sr0 is a SCSI device of
# type 5 (TYPE_ROM) with a block device; dm uuids are "mpath-<wwid>" (multipath), "part1-mpath-<wwid>"
# (kpartx partition of a map), "LVM-<vg uuid><lv uuid>", "CRYPT-LUKS2-<uuid>-<name>"; native NVMe
# multipath: /sys/block/nvmeXnY -> devices/virtual/nvme-subsystem/nvme-subsysX/nvmeXnY with device ->
# the subsystem, hidden per-controller paths nvmeXcZnY (attribute hidden = 1, in /sys/block and in
# /proc/diskstats as "0 0 nvmeXcZnY"); virtio-blk vda (device -> virtioN), Xen xvda (device ->
# vbd-51712); cciss: sysfs "cciss!c0d0", diskstats "cciss/c0d0".

VARIANT_MPATH = {"dm": "dm-3", "minor": 3, "name": "redo02", "wwid": "36001405a1b2c3d4e5f60718293a4b5c6",
                 "paths": (("sdf", 80, "5:0:0:0", 7, 19), ("sdg", 96, "5:0:0:1", 12, 12)),  # name minor hctl busy prog
                 "inflight": (0, 19), "in_progress": 40}
VARIANT_T10 = ("sdh", 112, "6:0:0:0", "ATA", "ST600MM0009",
               "t10.ATA     ST600MM0009                             WAF0A1B2", 3, 5)
VARIANT_EUI = ("sdi", 128, "6:0:1:0", "HGST", "HUSMM1640ASS204", "eui.0025385b71b0f1a2", 2, 2)
VARIANT_SR = ("sr0", 0, "1:0:0:0")
VARIANT_NVME = {"subsys": "nvme-subsys1", "head": "nvme1n1", "wwid": "eui.e8238fa6bf530001001b448b4a1c2d3e",
                "model": "Dell Ent NVMe CM6 RI 1.92TB", "paths": (("nvme1c1n1", "nvme1", (1, 6), 9),
                                                                   ("nvme1c2n1", "nvme2", (0, 4), 4))}
VARIANT_VIRTIO_SERIAL = "8b1c6f0e-3d2a-4e5b-9"   # printed without a newline
VARIANT_OTHER = (("vda", 252, 0, "devices/pci0000:00/0000:00:07.0/virtio3", "virtio3", (1, 2), 3),
                 ("xvda", 202, 0, "devices/vbd-51712", "vbd-51712", (0, 1), 1),
                 ("cciss!c0d0", 104, 0, "devices/pci0000:00/0000:00:08.0/cciss0/c0d0", "c0d0", (2, 0), 5))
VARIANT_DM_SKIP = (("dm-4", 4, "redo02p1", "part1-mpath-36001405a1b2c3d4e5f60718293a4b5c6", ("dm-3",)),
                   ("dm-5", 5, "luks-0e0b9a8f", "CRYPT-LUKS2-0e0b9a8f6c1d4b2a9e3f5a7c8d9e0f1a-luks-0e0b9a8f",
                    ("sdh",)),
                   ("dm-6", 6, "vg00-lv_root", "LVM-Qw3rTy7uIo9pAs1dFg5hJk3lZx7cVb9nQw3rTy7uIo9pAs1dFg5hJk3lZx7cVb9n",
                    ("sdi",)))
VARIANT_KERNELS = {14: "3.10.0-1160.118.1.el7.x86_64", 18: "4.18.0-553.el8_10.x86_64",
                   20: "5.14.0-503.14.1.el9_5.x86_64"}


def build_variant_tree(root: Path, nfields: int = 20) -> Fixture:
    """Every device shape the golden tree lacks, on one host; /proc/diskstats with ``nfields`` fields."""
    root = Path(root)
    sysfs, procfs = root / "sys", root / "proc"
    diskstats: list[str] = []

    def scsi_disk(host_path: str, name: str, minor: int, hctl: str, vendor: str, model: str,
                  wwid: str | None, busy: int, prog: int, scsi_type: int = 0, seed: int = 1) -> None:
        h, c, t, _ = hctl.split(":")
        sdev = f"{host_path}/target{h}:{c}:{t}/{hctl}"
        d = sysfs / sdev
        _write(d / "vendor", f"{vendor:<8.8}\n")
        _write(d / "model", f"{model:<16.16}\n")
        _write(d / "type", f"{scsi_type}\n")
        if wwid is not None:
            _write(d / "wwid", f"{wwid}\n")
        _write(d / "queue_depth", "32\n" if scsi_type == 0 else "1\n")
        _write(d / "device_busy", f"{busy}\n")
        _write(d / "state", "running\n")
        for attr, v in (("iorequest_cnt", 0x100 + seed), ("iodone_cnt", 0x100 + seed), ("ioerr_cnt", 0)):
            _write(d / attr, f"0x{v:x}\n")
        blk = d / "block" / name
        _write(blk / "queue/nr_requests", "256\n")
        _write(blk / "inflight", f"{0:8d} {prog:8d}\n")
        _write(blk / "hidden", "0\n")
        _link(blk / "device", f"../../../{hctl}")
        _link(sysfs / "block" / name, f"../{sdev}/block/{name}")
        major = 11 if name.startswith("sr") else 8
        diskstats.append(_diskstat(major, minor, name, prog, seed, nfields))
        if name.startswith("sd"):
            _write(blk / f"{name}1/partition", "1\n")
            diskstats.append(_diskstat(major, minor + 1, f"{name}1", 0, seed + 1, nfields))

    for h, path, cpl in ((1, "devices/pci0000:00/0000:00:01.1/ata2/host1", 1),
                         (5, "devices/platform/host5/session1", 128),
                         (6, "devices/pci0000:00/0000:00:1f.2/ata3/host6", 32)):
        hostdir = f"{path}/scsi_host/host{h}" if h != 5 else "devices/platform/host5/scsi_host/host5"
        _write(sysfs / hostdir / "can_queue", "1\n" if h == 1 else "1024\n")
        _write(sysfs / hostdir / "host_busy", "0\n")
        _write(sysfs / hostdir / "cmd_per_lun", f"{cpl}\n")
        _link(sysfs / f"class/scsi_host/host{h}", f"../../{hostdir}")

    name, minor, hctl = VARIANT_SR
    scsi_disk("devices/pci0000:00/0000:00:01.1/ata2/host1", name, minor, hctl, "QEMU", "QEMU DVD-ROM",
              None, 0, 0, scsi_type=5, seed=2)
    mp = VARIANT_MPATH
    for i, (name, minor, hctl, busy, prog) in enumerate(mp["paths"]):   # iSCSI, no device/wwid (old kernel)
        scsi_disk("devices/platform/host5/session1", name, minor, hctl, "LIO-ORG", "redo_lun", None, busy, prog,
                  seed=3 + i)
    for spec in (VARIANT_T10, VARIANT_EUI):
        name, minor, hctl, vendor, model, wwid, busy, prog = spec
        scsi_disk("devices/pci0000:00/0000:00:1f.2/ata3/host6", name, minor, hctl, vendor, model, wwid, busy,
                  prog, seed=minor)

    def dm(name: str, minor: int, dm_name: str, uuid: str, slaves, inflight=(0, 0), prog=0) -> None:
        d = sysfs / "devices/virtual/block" / name
        _write(d / "dm/name", f"{dm_name}\n")
        _write(d / "dm/uuid", f"{uuid}\n")
        _write(d / "dm/suspended", "0\n")
        _write(d / "inflight", f"{inflight[0]:8d} {inflight[1]:8d}\n")
        _write(d / "queue/nr_requests", "128\n")
        _write(d / "hidden", "0\n")
        for sl in slaves:
            target = os.path.relpath(os.path.realpath(sysfs / "block" / sl), d / "slaves")
            _link(d / "slaves" / sl, target)
        _link(sysfs / "block" / name, f"../devices/virtual/block/{name}")
        diskstats.append(_diskstat(253, minor, name, prog, minor, nfields))

    dm(mp["dm"], mp["minor"], mp["name"], "mpath-" + mp["wwid"], [p[0] for p in mp["paths"]],
       mp["inflight"], mp["in_progress"])
    for name, minor, dm_name, uuid, slaves in VARIANT_DM_SKIP:
        dm(name, minor, dm_name, uuid, slaves, (1, 1), 2)

    nv = VARIANT_NVME
    sub = sysfs / "devices/virtual/nvme-subsystem" / nv["subsys"]
    _write(sub / "model", f"{nv['model']:<40}\n")          # NVMe model: 40 bytes, space padded
    _write(sub / "serial", f"{'Y1S0A01ZT8X3':<20}\n")
    _write(sub / "firmware_rev", "2.1.8   \n")
    _write(sub / "iopolicy", "numa\n")
    head = sub / nv["head"]
    _write(head / "wwid", f"{nv['wwid']}\n")
    _write(head / "inflight", f"{0:8d} {0:8d}\n")           # bio-based head, queue/iostats off
    _write(head / "queue/nr_requests", "128\n")           # bio-based: BLKDEV_DEFAULT_RQ
    _write(head / "queue/iostats", "0\n")
    _write(head / "hidden", "0\n")
    _link(head / "device", f"../../{nv['subsys']}")
    _link(sysfs / "block" / nv["head"], f"../devices/virtual/nvme-subsystem/{nv['subsys']}/{nv['head']}")
    diskstats.append(_diskstat(259, 2, nv["head"], 0, 0, nfields))
    for i, (path, ctrl, infl, prog) in enumerate(nv["paths"]):
        cdir = f"devices/pci0000:00/0000:00:0{5 + i}.0/nvme/{ctrl}"
        _write(sysfs / cdir / "model", f"{nv['model']:<40}\n")
        # a dual-port PCIe SSD: two controllers of one subsystem, no ANA
        nvme_controller(sysfs, cdir, nv["subsys"], "live", "pcie", 9, 1023)
        pdir = sysfs / cdir / path
        _write(pdir / "inflight", f"{infl[0]:8d} {infl[1]:8d}\n")
        _write(pdir / "queue/nr_requests", "1023\n")
        _write(pdir / "hidden", "1\n")
        _write(pdir / "wwid", f"{nv['wwid']}\n")
        for q in range(8):
            _write(pdir / f"mq/{q}/nr_tags", "1023\n")
            _write(pdir / f"mq/{q}/nr_reserved_tags", "0\n")
        _link(pdir / "device", f"../../{ctrl}")
        _link(sysfs / "block" / path, f"../{cdir}/{path}")
        diskstats.append(_diskstat(0, 0, path, prog, 7 + i, nfields))

    for name, major, minor, devdir, devlink, infl, prog in VARIANT_OTHER:
        blk = sysfs / devdir / "block" / name
        _write(blk / "inflight", f"{infl[0]:8d} {infl[1]:8d}\n")
        _write(blk / "queue/nr_requests", "256\n")
        _write(blk / "hidden", "0\n")
        if name.startswith("vd"):     # virtio_blk's serial: OpenStack's volume id, cut to 20 bytes
            _write(blk / "serial", VARIANT_VIRTIO_SERIAL)
        _link(blk / "device", f"../../../{devlink}")
        _link(sysfs / "block" / name, f"../{devdir}/block/{name}")
        diskstats.append(_diskstat(major, minor, name.replace("!", "/"), prog, major, nfields))

    diskstats.sort(key=lambda line: (int(line.split()[0]), int(line.split()[1])))
    _write(procfs / "diskstats", "".join(diskstats))
    _write(procfs / "sys/kernel/osrelease", VARIANT_KERNELS[nfields] + "\n")
    config = root / "dbhost-exporter.yml"
    _write(config, f"""\
collectors: {{process: false}}
lun:
  roles:
    - {{wwid: "naa.{mp['wwid'][1:]}", role: redo}}
    - {{wwid: "1ATA_ST600MM0009_WAF0A1B2", role: arch}}
    - {{wwid: "{VARIANT_EUI[5]}", role: data}}
    - {{wwid: "{nv['wwid']}", role: data}}
    - {{device: "cciss/c0d0", role: arch}}
""")
    kstat_file = root / "kstat_p.txt"
    _write(kstat_file, illumos_kstat_text())
    return Fixture(root, procfs, sysfs, kstat_file, config)


# ---------------------------------------------------------------- path health (multipath, NVMe)
# A host with redundant paths to every LUN, for the failure tests (a path goes offline, a map is
# suspended, a controller resets, an ANA group becomes inaccessible): two FC HBAs (lpfc, hosts 7
# and 8) with two paths to a redo LUN and two to a data LUN under dm-multipath maps, and an NVMe/TCP
# array namespace under native NVMe multipath (subsystem nvme-subsys2, head nvme2n1, controllers
# nvme3 and nvme4 -> hidden paths nvme2c3n1, nvme2c4n1 with ANA states). NVMe/TCP controllers live
# under devices/virtual/nvme-fabrics/ctl/ (drivers/nvme/host/fabrics.c); queue_count = I/O queues + 1,
# sqsize = queue_size - 1 (default queue_size 128); the tag set of a fabrics queue holds sqsize + 1.

PATHS_MAPS = (("dm-0", 0, "redo01", "3600a098038303053453f463045727b01", (("sdj", 144, "7:0:0:1"), ("sdk", 160, "8:0:0:1"))),
              ("dm-1", 1, "data01", "3600a098038303053453f463045727b02", (("sdl", 176, "7:0:0:2"), ("sdm", 192, "8:0:0:2"))))
PATHS_NVME = {"subsys": "nvme-subsys2", "head": "nvme2n1", "wwid": "uuid.4ee2a4c1-6f0e-4d16-9b1c-0c1d2e3f4a5b",
              "model": "NetApp ONTAP Controller", "queue_count": 3, "sqsize": 127,
              "paths": (("nvme2c3n1", "nvme3", "traddr=10.0.0.1,trsvcid=4420", "optimized"),
                        ("nvme2c4n1", "nvme4", "traddr=10.0.0.2,trsvcid=4420", "non-optimized"))}
PATHS_CONFIG = """\
collectors: {process: false, zfs: false}
lun:
  roles:
    - {multipath: redo01, role: redo}
    - {multipath: data01, role: data}
    - {device: nvme2n1, role: data}
"""


def build_paths_tree(root: Path) -> Fixture:
    root = Path(root)
    sysfs, procfs = root / "sys", root / "proc"
    diskstats: list[str] = []
    for h in (7, 8):
        hostdir = f"devices/pci0000:00/0000:00:0{h - 4}.0/0000:0{h}:00.0/host{h}"
        _write(sysfs / hostdir / f"scsi_host/host{h}/can_queue", "4096\n")
        _write(sysfs / hostdir / f"scsi_host/host{h}/host_busy", "0\n")
        _write(sysfs / hostdir / f"scsi_host/host{h}/cmd_per_lun", "3\n")
        _link(sysfs / f"class/scsi_host/host{h}", f"../../{hostdir}/scsi_host/host{h}")
    for dm_name, minor, name, wwid, paths in PATHS_MAPS:
        for dev, dminor, hctl in paths:
            h, c, t, _ = hctl.split(":")
            sdev = f"devices/pci0000:00/0000:00:0{int(h) - 4}.0/0000:0{h}:00.0/host{h}/rport-{h}:0-0/target{h}:{c}:{t}/{hctl}"
            d = sysfs / sdev
            _write(d / "vendor", f"{'NETAPP':<8}\n")
            _write(d / "model", f"{'LUN C-Mode':<16}\n")
            _write(d / "type", "0\n")
            _write(d / "wwid", f"naa.{wwid[1:]}\n")
            _write(d / "queue_depth", "32\n")
            _write(d / "device_busy", "1\n")
            _write(d / "state", "running\n")
            # scsi_dh_alua attached (4.6+ access_state): host 7 reaches the owning controller
            _write(d / "access_state", "active/optimized\n" if h == "7" else "active/non-optimized\n")
            for attr in ("iorequest_cnt", "iodone_cnt"):
                _write(d / attr, "0x1000\n")
            _write(d / "ioerr_cnt", "0x0\n")
            blk = d / "block" / dev
            _write(blk / "queue/nr_requests", "256\n")
            _write(blk / "inflight", f"{0:8d} {1:8d}\n")
            _link(blk / "device", f"../../../{hctl}")
            _link(sysfs / "block" / dev, f"../{sdev}/block/{dev}")
            diskstats.append(_diskstat(8, dminor, dev, 1, dminor))
        d = sysfs / "devices/virtual/block" / dm_name
        _write(d / "dm/name", f"{name}\n")
        _write(d / "dm/uuid", f"mpath-{wwid}\n")
        _write(d / "dm/suspended", "0\n")
        _write(d / "inflight", f"{0:8d} {2:8d}\n")
        _write(d / "queue/nr_requests", "256\n")
        for dev, _m, _h in paths:
            _link(d / "slaves" / dev, os.path.relpath(os.path.realpath(sysfs / "block" / dev), d / "slaves"))
        _link(sysfs / "block" / dm_name, f"../devices/virtual/block/{dm_name}")
        diskstats.append(_diskstat(253, minor, dm_name, 2, minor))
    nv = PATHS_NVME
    sub = sysfs / "devices/virtual/nvme-subsystem" / nv["subsys"]
    _write(sub / "model", f"{nv['model']:<40}\n")
    _write(sub / "iopolicy", "numa\n")
    head = sub / nv["head"]
    _write(head / "wwid", f"{nv['wwid']}\n")
    _write(head / "inflight", f"{0:8d} {0:8d}\n")
    _write(head / "queue/nr_requests", "128\n")
    _write(head / "hidden", "0\n")
    _link(head / "device", f"../../{nv['subsys']}")
    _link(sysfs / "block" / nv["head"], f"../devices/virtual/nvme-subsystem/{nv['subsys']}/{nv['head']}")
    diskstats.append(_diskstat(259, 0, nv["head"], 0, 0))
    for i, (path, ctrl, address, ana) in enumerate(nv["paths"]):
        cdir = f"devices/virtual/nvme-fabrics/ctl/{ctrl}"
        _write(sysfs / cdir / "model", f"{nv['model']:<40}\n")
        nvme_controller(sysfs, cdir, nv["subsys"], "live", "tcp", nv["queue_count"], nv["sqsize"], address)
        pdir = sysfs / cdir / path
        _write(pdir / "inflight", f"{0:8d} {3 + i:8d}\n")
        _write(pdir / "queue/nr_requests", "128\n")
        _write(pdir / "hidden", "1\n")
        _write(pdir / "ana_grpid", "1\n" if i == 0 else "2\n")
        _write(pdir / "ana_state", f"{ana}\n")
        for q in range(nv["queue_count"] - 1):
            # Fabrics: the tag set is sqsize + 1 deep, one tag reserved for the Connect command
            # (NVMF_RESERVED_TAGS); nr_tags counts the reserved tag too
            _write(pdir / f"mq/{q}/nr_tags", f"{nv['sqsize'] + 1}\n")
            _write(pdir / f"mq/{q}/nr_reserved_tags", "1\n")
        _link(pdir / "device", f"../../{ctrl}")
        _link(sysfs / "block" / path, f"../{cdir}/{path}")
        diskstats.append(_diskstat(0, 0, path, 3 + i, 9 + i))
    diskstats.sort(key=lambda line: (int(line.split()[0]), int(line.split()[1])))
    _write(procfs / "diskstats", "".join(diskstats))
    _write(procfs / "sys/kernel/osrelease", GOLDEN_KERNEL + "\n")
    config = root / "dbhost-exporter.yml"
    _write(config, PATHS_CONFIG)
    kstat_file = root / "kstat_p.txt"
    return Fixture(root, procfs, sysfs, kstat_file, config)


# ---------------------------------------------------------------- animation (live tests)
# advance_tree(fixture, n) sets every moving counter of a build_tree() tree to
# "original value + n x per-step increment" (n = 0: the original tree, byte for byte), so a
# live scrape stack sees rates whose ratios are known exactly from the constants below. Each
# file is rewritten whole and renamed over the old one, so a concurrent reader sees either the
# old or the new file, never a partial one (as with the kernel's seq_file reads, all counters
# of one file belong to one moment). Gauges (sizes, queue depths, in-flight counts) never move.

# arcstats, per step: per kind (hits, iohits, misses); the totals hits/iohits/misses are their sums
# (OpenZFS arc.c counts every access once in a kind and once in the total).
ARC_STEP_KINDS = {"demand_data": (900, 5, 100), "demand_metadata": (1900, 1, 20),
                  "prefetch_data": (60, 40, 180), "prefetch_metadata": (30, 0, 2)}
# The L2ARC is consulted on ARC misses (l2_hits + l2_misses <= misses); the feed thread runs once a
# second (l2arc_feed_secs = 1) and writes up to l2arc_write_max (8 MiB) per feed; one checksum error
# every L2_CKSUM_EVERY steps, no I/O errors.
ARC_STEP = {"mru_hits": 600, "mfu_hits": 2290, "mru_ghost_hits": 20, "mfu_ghost_hits": 5,
            "l2_hits": 150, "l2_misses": 130, "l2_read_bytes": 150 * 8192, "l2_feeds": 1,
            "l2_write_bytes": 4 << 20, "l2_writes_sent": 1, "l2_writes_done": 1}
L2_CKSUM_EVERY = 4


@dataclass(frozen=True)
class DiskStep:
    """Per-step I/O of one block device: completed ops, total ms spent, sectors (512 B)."""
    reads: int
    read_ms: int
    read_sectors: int
    writes: int
    write_ms: int
    write_sectors: int


# Average service time = ms / ops: redo paths write 16 KiB in 0.5 ms and read 1 MiB (ARCH) in
# 4 ms; data paths read 8 KiB in 6 ms and write 32 KiB in 1 ms; the local disk ("other") 8/4 ms;
# the NVMe arch device reads 128 KiB in 0.3 ms and writes 1 MiB in 0.2 ms. A dm-multipath map
# completes the sum of its paths' requests.
DISK_STEP = {
    "sda": DiskStep(2, 8, 2 * 2048, 40, 20, 40 * 32),
    "sdc": DiskStep(2, 8, 2 * 2048, 40, 20, 40 * 32),
    "sdb": DiskStep(60, 360, 60 * 16, 15, 15, 15 * 64),
    "sdd": DiskStep(60, 360, 60 * 16, 15, 15, 15 * 64),
    "sde": DiskStep(5, 40, 5 * 16, 5, 20, 5 * 16),
    "nvme0n1": DiskStep(10, 3, 10 * 256, 25, 5, 25 * 2048),
}
for _dm in DMS:
    _paths = [DISK_STEP[s] for s in _dm.slaves]
    DISK_STEP[_dm.name] = DiskStep(*(sum(getattr(p, f) for p in _paths) for f in DiskStep.__dataclass_fields__))
del _dm, _paths


def _thread_step(proc_index: int, k: int) -> dict[str, int]:
    """Per-step growth of thread k of the proc_index-th process of fixtures_proc.proc_specs()."""
    return dict(utime=1, stime=1, voluntary=20 + 3 * (proc_index % 5), involuntary=2 + proc_index % 3,
                migrations=1 + (proc_index + k) % 3, run_delay=200_000 + 50_000 * ((proc_index + k) % 4))


# ORCL's LGWR keeps field notes R14 "before": 30 % of its switches involuntary, and (R13) it waits
# for a CPU 30 % as long as it runs (2 ticks = 20 ms of CPU a step, 6 ms of run delay).
THREAD_STEP_OVERRIDES = {2107: dict(voluntary=70, involuntary=30, run_delay=6_000_000)}


def _replace_text(path: Path, text: str | bytes) -> None:
    tmp = path.with_name(f".{path.name}.advance")
    if isinstance(text, bytes):
        tmp.write_bytes(text)
    else:
        tmp.write_text(text)
    os.replace(tmp, path)


def _base_copy(fixture: Fixture, path: Path) -> str | None:
    """The file's content at step 0 (saved under <root>/.advance-base on first use)."""
    if not path.exists():
        return None
    saved = fixture.root / ".advance-base" / path.relative_to(fixture.root)
    if not saved.exists():
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(path.read_text())
    return saved.read_text()


def _advanced_arc(values: dict[str, int], n: int) -> dict[str, int]:
    out = dict(values)
    for kind, (hits, iohits, misses) in ARC_STEP_KINDS.items():
        for suffix, d in (("hits", hits), ("iohits", iohits), ("misses", misses)):
            name = f"{kind}_{suffix}"
            if name in out:
                out[name] += n * d
                if suffix in out:
                    out[suffix] += n * d
    for name, d in ARC_STEP.items():
        if name in out:
            out[name] += n * d
    if "l2_cksum_bad" in out:
        out["l2_cksum_bad"] += n // L2_CKSUM_EVERY
    return out


def advance_tree(fixture: Fixture, n: int, disk_step: dict[str, DiskStep] | None = None,
                 rename: tuple[str, str] | None = None) -> None:
    """Set the counters of a build_tree() tree to step ``n`` (see the constants above):
    arcstats (Linux and the illumos kstat text), /proc/diskstats, SCSI iorequest_cnt/iodone_cnt,
    and the fixtures_proc processes' stat/status/sched counters. ``n = 0`` restores the original.
    ``disk_step`` replaces DISK_STEP (make run DEMO=1's slow redo LUN, stack/demo.py);
    ``rename`` = (old, new) renames an instance in the rewritten process files (its SID)."""
    steps = DISK_STEP if disk_step is None else disk_step
    if n < 0:
        raise ValueError(f"step must be >= 0, got {n}")
    root = Path(fixture.root)
    # Linux arcstats: "name type data" rows after two header lines; the header's ks_snaptime (ns) moves too
    arc = fixture.procfs / "spl/kstat/zfs/arcstats"
    base = _base_copy(fixture, arc)
    if base is not None:
        lines = base.splitlines()
        head = lines[0].split()
        head[-1] = str(int(head[-1]) + n * 1_000_000_000)
        rows = [line.split() for line in lines[2:]]
        values = _advanced_arc({r[0]: int(r[2]) for r in rows}, n)
        out = [" ".join(head), lines[1]] + [f"{r[0]:<31} {r[1]:<4} {values[r[0]]}" for r in rows]
        _replace_text(arc, "\n".join(out) + "\n")
    # illumos kstat -p text
    base = _base_copy(fixture, fixture.kstat_file)
    if base is not None:
        rows = [line.split("\t", 1) for line in base.splitlines()]
        stat = {r[0].rsplit(":", 1)[1]: r[1] for r in rows}
        ints = _advanced_arc({k: int(v) for k, v in stat.items() if v.isdigit()}, n)
        _replace_text(fixture.kstat_file, "".join(
            f"{key}\t{ints.get(key.rsplit(':', 1)[1], value)}\n" for key, value in rows))
    # /proc/diskstats: fields 1-4 reads, merges, sectors, ms; 5-8 the same for writes; 10 io_ticks
    # (ms busy, at most the step's 1000 ms); 11 weighted ms (time in queue, the sum of both ms)
    disk = fixture.procfs / "diskstats"
    base = _base_copy(fixture, disk)
    if base is not None:
        out = []
        for line in base.splitlines():
            f = line.split()
            step = steps.get(f[2])
            if step is not None and n:
                c = [int(x) for x in f[3:]]
                c[0] += n * step.reads
                c[2] += n * step.read_sectors
                c[3] += n * step.read_ms
                c[4] += n * step.writes
                c[6] += n * step.write_sectors
                c[7] += n * step.write_ms
                c[9] += n * min(1000, step.read_ms + step.write_ms)
                c[10] += n * (step.read_ms + step.write_ms)
                line = f"{int(f[0]):4d} {int(f[1]):7d} {f[2]} " + " ".join(str(v) for v in c)
            out.append(line)
        _replace_text(disk, "\n".join(out) + "\n")
    # SCSI device counters (sysfs prints them as 0x%x): every completed request was issued and done
    for block in sorted((fixture.sysfs / "block").glob("sd*")):
        step = steps.get(block.name)
        dev = block / "device"
        if step is None or not (dev / "iorequest_cnt").exists():
            continue
        for attr in ("iorequest_cnt", "iodone_cnt"):
            value = int(_base_copy(fixture, dev / attr).strip(), 16)
            _replace_text(dev / attr, f"0x{value + n * (step.reads + step.writes):x}\n")
    # processes: each present PID directory rewritten from its spec with grown thread counters
    import dataclasses  # noqa: PLC0415
    staging = root / f".advance-proc-{os.getpid()}"
    for i, spec in enumerate(fixtures_proc.proc_specs()):
        pdir = fixture.procfs / str(spec.pid)
        if not pdir.is_dir():
            continue
        threads = []
        for k, t in enumerate(spec.threads):
            d = THREAD_STEP_OVERRIDES.get(spec.pid, {}) if k == 0 else {}
            d = {**_thread_step(i, k), **d}
            threads.append(dataclasses.replace(t, **{f: getattr(t, f) + n * v for f, v in d.items()}))
        grown = dataclasses.replace(spec, threads=tuple(threads))
        fixtures_proc.write_process(staging, grown)
        for src in sorted((staging / str(spec.pid)).rglob("*")):
            dst = pdir / src.relative_to(staging / str(spec.pid))
            if src.is_file() and dst.parent.is_dir() and dst.exists():
                if rename:
                    data = src.read_bytes()
                    if rename[0].encode() in data:
                        src.write_bytes(data.replace(rename[0].encode(), rename[1].encode()))
                os.replace(src, dst)
    for dirpath, dirnames, filenames in os.walk(staging, topdown=False):
        for name in filenames:
            os.unlink(os.path.join(dirpath, name))
        os.rmdir(dirpath)


if __name__ == "__main__":
    sys.exit(main())
