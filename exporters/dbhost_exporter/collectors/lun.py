"""LUN collector: identity, configured queue depth and the host-vs-LUN queue split.

Sources (all under ``--path.sysfs`` / ``--path.procfs``):

* ``/sys/block/sdX`` with ``device`` -> ``.../hostH/targetH:C:T/H:C:T:L`` (SCSI disks):
  ``device/{vendor,model,wwid,queue_depth,device_busy,iorequest_cnt,iodone_cnt,ioerr_cnt}``
* ``/sys/block/dm-N/dm/{name,uuid}`` with uuid ``mpath-<wwid>`` and ``slaves/`` (dm-multipath maps)
* ``/sys/block/nvmeXnY`` (NVMe namespaces: ``wwid``, ``device/model``; no SCSI host)
* ``/sys/block/X/{inflight,queue/nr_requests,hidden}``,
  ``/sys/class/scsi_host/hostH/{can_queue,cmd_per_lun,host_busy}``

Not LUNs: partitions (not in /sys/block), SCSI devices that are not disks (``device/type``
other than 0/7/0xe/0x14, e.g. sr0), hidden devices (``hidden`` = 1; native NVMe multipath
paths ``nvmeXcYnZ``, whose in-flight counts are summed under their head ``nvmeXnY``), dm
devices other than multipath maps (LVM-, CRYPT-, part1-mpath-). ``cciss!c0d0`` (sysfs) is
exported as ``cciss/c0d0`` (diskstats, node_exporter).
* ``/proc/diskstats`` (read once per scrape) for the in-progress count, field 12
  (the 9th statistic after the device name, Documentation/admin-guide/iostats.rst)
* ``/proc/sys/kernel/osrelease`` for dbhost_kernel_info

Queues (seed 004 / field notes Q1, Q2): the LUN queue is what the device is
servicing (SCSI ``device_busy``, iostat ``actv``); the host queue is what the
block layer accepted but has not dispatched (iostat ``wait``), computed as the
diskstats in-progress count minus the dispatched count, never below zero.

Kernel note (blk-mq; details and commits in docs/dbhost-exporter.md): the
diskstats in-progress count (``part_in_flight``) counts requests from block-layer
entry only from 6.10 (Yu Kuai, 99dc422335d8 + 7be835694dae), so requests waiting
in the plug list or an I/O scheduler are visible there and the host queue is real.
On 5.10-6.9 ("block: Consider only dispatched requests for inflight statistic",
a926c7afffcc) it counts only dispatched requests and the host queue reads ~0; on
4.17-5.9 it counts requests holding a driver tag (scheduler-queued ones are
missed): "partial". ``/sys/block/X/inflight`` counts dispatched requests on every
kernel since 5.10, so it is the LUN queue for devices without SCSI
``device_busy`` (NVMe, loop) and the split works for them on 6.10+ too. Where
the host queue is invisible, dbhost_lun_queue_full_samples_total /
dbhost_lun_samples_total still shows how often the LUN queue was at its
configured depth (a backlog must then be forming above it).

Identity (vendor, model, wwid, hctl, role, nr_requests, can_queue)
is cached and re-read every ``identity_refresh_seconds`` or when the set of
block devices changes; the changing values (including ``queue_depth``, which the
kernel lowers by itself on QUEUE FULL, and the ALUA ``access_state``) are read once
per scrape.
"""
from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

from exporter_common.config import Fields
from exporter_common.declare import Collector, Family, Setting

from ..sysfs import listdir, parse_int, read_attr, read_int, read_str, read_text

log = logging.getLogger(__name__)

KINDS = ("scsi", "multipath", "nvme", "virtio", "xen", "loop", "ram", "zram", "other")

SPEC = Collector(
    "lun", "LUN identity, configured queue depth, the host-vs-LUN queue split and path health "
    "(SCSI disks, dm-multipath maps, NVMe namespaces).",
    reads=("/sys/block/*/device/type", "/sys/block/*/device/vendor", "/sys/block/*/device/model",
           "/sys/block/*/device/wwid", "/sys/block/*/device/queue_depth", "/sys/block/*/device/device_busy",
           "/sys/block/*/device/iorequest_cnt", "/sys/block/*/device/iodone_cnt", "/sys/block/*/device/ioerr_cnt",
           "/sys/block/*/device/state", "/sys/block/*/device/access_state", "/sys/block/*/device/model (NVMe)", "/sys/block/*/wwid (NVMe)",
           "/sys/block/*/hidden", "/sys/block/vd*/serial", "/sys/block/*/inflight", "/sys/block/*/queue/nr_requests",
           "/sys/block/*/mq/*/nr_tags", "/sys/block/*/mq/*/nr_reserved_tags", "/sys/block/*/ana_state", "/sys/block/dm-*/dm/name",
           "/sys/block/dm-*/dm/uuid", "/sys/block/dm-*/dm/suspended", "/sys/block/dm-*/slaves/",
           "/sys/class/scsi_host/*/can_queue", "/sys/class/scsi_host/*/cmd_per_lun",
           "/sys/class/scsi_host/*/host_busy", "/sys/class/nvme/*/state", "/sys/class/nvme/*/transport",
           "/sys/class/nvme/*/model", "/sys/class/nvme/*/queue_count", "/sys/class/nvme/*/sqsize",
           "/sys/class/nvme-subsystem/*/", "/proc/diskstats", "/proc/sys/kernel/osrelease"),
    settings=(
        Setting("include_types", ("scsi", "multipath", "nvme", "virtio", "xen"),
                f"block device kinds exported, of {', '.join(KINDS)}", kind="custom",
                parse=lambda fields, key: parse_include_types(fields, key)),
        Setting("identity_refresh_seconds", 300.0, "how often identity and configured limits are re-read "
                "(also whenever a block device appears or goes)", kind="number", minimum=0),
        Setting("default_role", "other", "role of LUNs no rule matches", kind="custom",
                parse=lambda fields, key: parse_role_word(fields, key)),
        Setting("roles", (), "first match wins: {wwid|device|multipath: ..., role: ...}", kind="custom",
                parse=lambda fields, key: parse_roles(fields, key)),
    ),
    metrics=(
        Family("dbhost_lun_info", "info",
               "Identity of a block device: SCSI disk (hctl), dm-multipath map or NVMe "
               "namespace; multipath is the map a path belongs to or the map's own name; role from config.",
               ("device", "hctl", "vendor", "model", "wwid", "multipath", "role"),
               source="SCSI: `block/X/device` -> `.../hostH/targetH:C:T/H:C:T:L` (hctl), `device/{vendor,model,wwid}`; dm-multipath: `block/dm-N/dm/{name,uuid}` (uuid `mpath-<wwid>`), `slaves/`; NVMe: `block/nvmeXnY/wwid`, `device/model`. `wwid` in the scsi_id/multipath form (`naa.600a...` becomes `3600a...`). `multipath`: the map a path belongs to, or the map's own name. `role` from config (default `other`). Loop/ram/zram/other devices only when configured. Never reported: partitions, SCSI devices that are not disks (`device/type` other than 0, 7, 0xe, 0x14, e.g. `sr0`), hidden block devices (`hidden` = 1, and NVMe native-multipath paths `nvmeXcYnZ`), dm devices other than multipath maps (LVM, dm-crypt, kpartx `part1-mpath-...`). A path without `device/wwid` (kernels before 4.5) takes the WWID of its map. A virtio-blk disk (no WWID) has `wwid` = `virtio-<serial>` from `block/vdX/serial` (udev\'s `/dev/disk/by-id/virtio-<serial>`; OpenStack: the volume id cut to 20 characters), empty when the hypervisor gives no serial. An NVMe native-multipath head (`device` -> `nvme-subsysX`) has `multipath` = its own name. virtio-blk (`vdX`, kind `virtio`) and Xen (`xvdX`, kind `xen`) disks are reported by default (the disks of a KVM/OpenStack or Xen database host); cciss, md and other block devices are kind `other` (opt-in)."),
        Family("dbhost_lun_queue_depth", "gauge", "Configured LUN queue depth (SCSI device/queue_depth).",
               ("device",), source='`block/X/device/queue_depth` (SCSI only), read every scrape: the driver lowers it by itself when the array answers QUEUE FULL / TASK SET FULL (`scsi_track_queue_full()`, lpfc ramp-down) and raises it later', measure='requests'),
        Family("dbhost_lun_nr_requests", "gauge", "Block-layer request queue size (queue/nr_requests).",
               ("device",), source='`block/X/queue/nr_requests`', measure='requests'),
        Family("dbhost_lun_inflight_requests", "gauge",
               "Requests in flight. queue=lun: dispatched to the device (SCSI device_busy, else "
               "/sys/block/X/inflight; iostat actv). queue=host: accepted by the block layer but not yet "
               "dispatched (diskstats in-progress minus dispatched, never below 0; iostat wait). On blk-mq "
               "kernels 5.10-6.9 diskstats counts only dispatched requests, so the host queue reads 0 "
               "there (see dbhost_kernel_info host_queue_visible).",
               ("device", "queue"),
               source="`lun`: `device/device_busy` (SCSI), else `block/X/inflight` (reads + writes); for an NVMe native-multipath head, the sum over its hidden paths `nvmeXcYnZ` (the head's own counters stay 0 unless `queue/iostats` is on), and `host` likewise the sum of the paths' host queues; iostat `actv`. `host`: `/proc/diskstats` field 12 (I/Os in progress) minus the `lun` value, never below 0; iostat `wait`. On blk-mq kernels 5.10-6.9 the host queue reads ~0 (diskstats counts dispatched requests only); from 6.10 it includes plugged and scheduler-queued requests, also for NVMe and loop devices (see docs/dbhost-exporter.md).", measure='requests', note='Labels: `device, queue` (`lun`, `host`).'),
        Family("dbhost_lun_host_queue_visible", "gauge",
               "1 if this device's host queue (inflight queue=host) can be "
               "seen on this kernel: blk-mq from 6.10, or a SCSI disk on the legacy request path (before 5.0, "
               "no /sys/block/X/mq); 0 where diskstats counts dispatched requests only.", ("device",),
               source='whether `inflight{queue="host"}` can be non-zero on this device: 1 on blk-mq kernels from 6.10 (diskstats counts from block-layer entry) and for SCSI disks on the legacy request path (kernels before 5.0 without `/sys/block/X/mq`, e.g. RHEL 7: elevator-queued requests are counted); 0 on blk-mq before 6.10 (dispatched or driver-tag requests only). No series when the kernel release cannot be read. Source: `/proc/sys/kernel/osrelease`, `block/X/mq/`', measure='1/0'),
        Family("dbhost_lun_iorequests_total", "counter", "SCSI commands issued to the LUN (device/iorequest_cnt).",
               ("device",), source='`device/iorequest_cnt` (hex `0x...`), a 32-bit counter (`iocounterbits`): the kernel prints it sign-extended past 2^31 (`0xffffffff8...`), exported masked to 32 bits, so it wraps to 0 at 2^32 (a counter reset for `rate()`)', measure='commands'),
        Family("dbhost_lun_iodone_total", "counter", "SCSI commands completed (device/iodone_cnt).",
               ("device",), source='`device/iodone_cnt` (hex; 32 bits, masked like `iorequest_cnt`)', measure='commands'),
        Family("dbhost_lun_ioerrors_total", "counter", "SCSI commands completed with an error (device/ioerr_cnt).",
               ("device",), source='`device/ioerr_cnt` (hex; 32 bits, masked like `iorequest_cnt`): every command completed with a non-zero result, passthrough (SG_IO) included: the multipathd TUR checker on an ALUA standby path counts here every polling interval (see `dbhost_scsi_device_access_state`)', measure='commands'),
        Family("dbhost_lun_samples_total", "counter", "Scrapes that sampled the LUN queue against its "
               "configured depth.", ("device",),
               source='scrapes that compared the LUN queue with `queue_depth` (exporter lifetime)', measure='scrapes'),
        Family("dbhost_lun_queue_full_samples_total", "counter",
               "Scrapes that found the LUN queue full (in-flight >= configured "
               "queue depth); judges Q2 where the host queue is invisible.", ("device",),
               source='scrapes that found `inflight{queue="lun"} >= queue_depth`; `rate(full)/rate(samples)` is the share of time the LUN queue was full (Q2/Q3 on kernels where the host queue is invisible)', measure='scrapes'),
        Family("dbhost_scsi_host_can_queue", "gauge", "Commands the SCSI host adapter accepts at once (can_queue).",
               ("host",), source='`class/scsi_host/hostH/can_queue`', measure='commands', note='Labels: `host` (`host2`).'),
        Family("dbhost_scsi_host_cmd_per_lun", "gauge", "Default queue depth the SCSI host "
               "adapter gives each LUN (cmd_per_lun).", ("host",), source="`class/scsi_host/hostH/cmd_per_lun` (the adapter's default per-LUN queue depth; cached with identity)", measure='commands'),
        Family("dbhost_scsi_host_busy", "gauge", "Commands outstanding on the SCSI host adapter "
               "(host_busy).", ("host",), source='`class/scsi_host/hostH/host_busy`', measure='commands'),
        Family("dbhost_kernel_info", "info",
               "Running kernel release; host_queue_visible: true from 6.10 (diskstats counts "
               "requests from block-layer entry), false on 5.10-6.9 (dispatched only), partial before 5.10 "
               "(requests holding a driver tag; scheduler-queued ones missed), unknown if unparsable.",
               ("release", "host_queue_visible"), source='`/proc/sys/kernel/osrelease`', note='Labels: `release, host_queue_visible` (`true` from 6.10, `false` on 5.10-6.9, `partial` before 5.10, `unknown` if unparsable).'),
        Family("dbhost_scsi_device_state", "gauge",
               "1 for the SCSI disk's current state (device/state: running, offline, "
               "blocked, transport-offline, quiesce, ...); only running devices carry I/O.", ("device", "state"),
               source='`block/X/device/state` of every SCSI disk, one series with the current state: `running` carries I/O; `blocked` (FC dev_loss_tmo pending), `transport-offline` (fast_io_fail_tmo), `offline` (error recovery gave up), `quiesce`, `cancel`, `deleted`, `created`, `created-blocked`; text that is not a short state word reads `unknown`'),
        Family("dbhost_scsi_device_access_state", "gauge",
               "1 for the ALUA access state the SCSI device handler last saw for this path "
               "(device/access_state: active/optimized, active/non-optimized, standby, unavailable, "
               "lba-dependent, offline, transitioning).", ("device", "state"),
               source='`block/X/device/access_state` (kernel 4.6+, CONFIG_SCSI_DH), one series with the current state, only for SCSI disks with a device handler attached (`scsi_dh_alua`, `rdac`, `emc`, `hp_sw`; without one the file reads EINVAL and there is no series; checked at each identity refresh): `active/optimized`, `active/non-optimized`, `standby`, `unavailable`, `lba-dependent`, `offline`, `transitioning`; other text reads `unknown`. A `standby` or `unavailable` path answers the path checker\'s TEST UNIT READY with NOT READY, which `ioerr_cnt` counts', note='Labels: `device, state`.'),
        Family("dbhost_multipath_paths", "gauge",
               "Paths of a multipath device: slaves/ of a dm-multipath map, hidden "
               "per-controller paths of an NVMe native-multipath namespace.", ("device",),
               source="dm-multipath map: entries of `block/dm-N/slaves/` (read every scrape: multipathd drops failed paths by reloading the map); NVMe: the namespace's hidden per-controller paths `nvmeXcZnY`", measure='paths', note='Labels: `device` (`dm-N`, or an NVMe native-multipath namespace `nvmeXnY`).'),
        Family("dbhost_multipath_paths_active", "gauge",
               "Paths that can carry I/O: SCSI state running, NVMe controller "
               "live (and ANA optimized or non-optimized for NVMe native multipath). Below "
               "dbhost_multipath_paths: the device lost redundancy.", ("device",),
               source="paths that can carry I/O: a path's `device/state` is `running` (SCSI) or `live` (an NVMe slave's controller); for NVMe native multipath the controller is `live` and the path's `ana_state` is `optimized` or `non-optimized` (or the controller has no ANA). Below `dbhost_multipath_paths`: the device lost redundancy. Does not see dm-multipath's own path checker (a path whose SCSI device runs but which multipathd marked failed, e.g. ALUA standby)", measure='paths'),
        Family("dbhost_multipath_suspended", "gauge",
               "1 if the dm-multipath map is suspended (dm/suspended): its I/O is "
               "held until it is resumed.", ("device",), source='`block/dm-N/dm/suspended` (dm-multipath maps): 1 while the map is suspended and its I/O held (a reload that never resumed freezes every write)', measure='1/0'),
        Family("dbhost_nvme_controller_info", "info",
               "NVMe controller: its subsystem (native multipath joins controllers of "
               "one subsystem), transport (pcie, tcp, rdma, fc, loop), model.",
               ("controller", "subsystem", "transport", "model"),
               source='`class/nvme/nvmeN/{transport,model}`; `subsystem` the `class/nvme-subsystem/nvme-subsysN` that holds the controller (joins the controllers of one native-multipath namespace)'),
        Family("dbhost_nvme_controller_state", "gauge",
               "1 for the NVMe controller's current state (live, resetting, "
               "connecting, deleting, dead, new); only live controllers carry I/O.", ("controller", "state"),
               source='`class/nvme/nvmeN/state`, one series with the current state: `live` carries I/O; `resetting`, `connecting` (fabrics reconnect), `deleting`, `deleting (no IO)`, `dead`, `new`'),
        Family("dbhost_nvme_controller_io_queues", "gauge",
               "I/O queue pairs of the NVMe controller (queue_count minus the "
               "admin queue).", ("controller",), source='`queue_count` - 1 (the admin queue)', measure='queues'),
        Family("dbhost_nvme_controller_queue_size", "gauge",
               "Entries per I/O submission queue of the NVMe controller "
               "(sqsize + 1; a PCIe queue holds one command less).", ("controller",),
               source="`sqsize` + 1 (sqsize is 0's based); a PCIe queue holds one command less, a fabrics queue all of them", measure='entries'),
        Family("dbhost_nvme_path_ana_state", "gauge",
               "1 for the ANA state of an NVMe native-multipath path (ana_state: "
               "optimized, non-optimized, inaccessible, persistent-loss, change).",
               ("device", "multipath", "controller", "state"), source='`block/nvmeXcZnY/ana_state` (controllers with ANA: arrays over NVMe/FC, TCP, RDMA): `optimized`, `non-optimized`, `inaccessible`, `persistent-loss`, `change`', note='Labels: `device` (`nvmeXcZnY`), `multipath` (its namespace), `controller`, `state`.'),
        Family("dbhost_lun_queue_tags", "gauge",
               "Requests the NVMe device's hardware queues can hold at once for I/O (sum of "
               "mq/*/nr_tags minus nr_reserved_tags; for a native-multipath namespace, over the paths I/O "
               "is sent to): the NVMe counterpart of the SCSI queue depth for the queue-full samples.", ("device",),
               source='NVMe only: requests the device\'s blk-mq hardware queues can hold at once for I/O, the sum of `block/X/mq/*/nr_tags` minus `nr_reserved_tags` (NVMe over Fabrics reserves one tag per queue for Connect; PCIe none). A native-multipath namespace: summed over the paths the kernel sends I/O to now (live controller and ANA `optimized`, or, when there is none, the live `non-optimized` ones; no ANA counts as optimized), no series when no path can carry I/O. The NVMe counterpart of `queue_depth` for `dbhost_lun_queue_full_samples_total` (full = `inflight{queue="lun"} >= queue_tags`, every queue full)', measure='requests'),
    ),
    exporter="dbhost-exporter", title='LUN')

# virtio-blk (vdX: KVM, OpenStack) and Xen (xvdX) disks are the real disks of a virtual database host
DEFAULT_KINDS = frozenset(SPEC.default("include_types"))
HOST_QUEUE_VISIBLE_SINCE = (6, 10)  # diskstats counts from block-layer entry
DISPATCHED_ONLY_SINCE = (5, 10)  # a926c7afffcc: dispatched requests only

_HCTL = re.compile(r"^\d+:\d+:\d+:\d+$")
_HOST = re.compile(r"^host\d+$")
_NVME_NS = re.compile(r"^nvme(\d+)n(\d+)$")
# native NVMe multipath: hidden per-controller paths nvme<subsys>c<ctrl>n<nsid> of head nvme<subsys>n<nsid>
_NVME_PATH = re.compile(r"^nvme(\d+)c\d+n(\d+)$")
# SCSI peripheral device types sd binds to: disk, optical memory, RBC, host-managed zoned (ZBC)
_SD_TYPES = frozenset({0x00, 0x07, 0x0E, 0x14})
_SIMPLE = {"loop": re.compile(r"^loop\d+$"), "ram": re.compile(r"^ram\d+$"), "zram": re.compile(r"^zram\d+$"),
           # drivers/block/virtio_blk.c virtblk_name_format("vd", ...); drivers/block/xen-blkfront.c "xvd"
           "virtio": re.compile(r"^vd[a-z]+$"), "xen": re.compile(r"^xvd[a-z]+$")}
_NVME_CTRL = re.compile(r"^nvme\d+$")
# What a path's state must read to carry I/O: SCSI device/state "running" (drivers/scsi/scsi_sysfs.c
# sdev_states), NVMe controller state "live" (drivers/nvme/host/sysfs.c); ANA states that the NVMe
# multipath driver sends I/O to (nvme_find_path: optimized, then non-optimized).
PATH_UP_STATES = frozenset({"running", "live"})
ANA_USABLE = frozenset({"optimized", "non-optimized"})
_STATE_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9 ()_.-]{0,39}$")
# SCSI iorequest_cnt / iodone_cnt / ioerr_cnt are atomic_t: 32 bits (device/iocounterbits reads 32)
COUNTER_MASK = 0xFFFFFFFF
# device/access_state (drivers/scsi/scsi_sysfs.c sdev_access_states, 4.6+): the ALUA state the device
# handler (scsi_dh_alua, also rdac/emc/hp_sw) last saw for this path; "unknown" for anything else
ACCESS_STATES = frozenset({"active/optimized", "active/non-optimized", "standby", "unavailable",
                           "lba-dependent", "offline", "transitioning"})


def access_state_label(raw: str | None) -> str | None:
    """device/access_state as a label value: None if unreadable, one of ACCESS_STATES or "unknown"."""
    if raw is None:
        return None
    raw = raw.strip()
    return raw if raw in ACCESS_STATES else "unknown"


def state_label(raw: str | None) -> str | None:
    """A state file's text as a label value: None if absent, "unknown" if it is not a short word
    (the kernel prints a fixed set: running, offline, blocked, transport-offline, live, resetting,
    "deleting (no IO)" ...; anything else must not become an unbounded label)."""
    if raw is None:
        return None
    raw = raw.strip()
    return raw if _STATE_LABEL.match(raw) else "unknown"


@dataclass
class NvmeController:
    name: str
    path: str                 # the controller's sysfs directory
    subsystem: str = ""
    transport: str = ""
    model: str = ""
    io_queues: int | None = None
    queue_size: int | None = None


@dataclass(frozen=True)
class RoleRule:
    by: str      # "wwid", "device" or "multipath"
    value: str
    role: str


@dataclass
class LunConfig:
    """The lun settings of SPEC (same names; defaults from there)."""
    include_types: frozenset[str] = DEFAULT_KINDS
    roles: list[RoleRule] = field(default_factory=list)
    default_role: str = SPEC.default("default_role")
    identity_refresh_seconds: float = SPEC.default("identity_refresh_seconds")


# ---- config: the custom settings of SPEC (``fields`` is the config file's ``lun`` mapping) ----
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9_.:-]+$")


def _label_word(fields: Fields, key: str, value: str) -> str:
    if not _LABEL_VALUE.match(value):
        raise fields.error(key, f"expected a short word (letters, digits, _.:-), got {value!r}")
    return value


def parse_include_types(fields: Fields, key: str) -> frozenset[str]:
    types = fields.str_list(key, list(SPEC.default(key)))
    for i, t in enumerate(types):
        if t not in KINDS:
            raise fields.error(f"{key}[{i}]", f"must be one of {', '.join(KINDS)}, got {t!r}")
        if t in types[:i]:
            raise fields.error(f"{key}[{i}]", f"duplicate entry {t!r}")
    return frozenset(types)


def parse_role_word(fields: Fields, key: str) -> str:
    return _label_word(fields, key, fields.str(key, SPEC.default(key)))


def parse_roles(fields: Fields, key: str) -> list[RoleRule]:
    rules: list[RoleRule] = []
    for item in fields.list_of(key):
        role = _label_word(item, "role", item.str("role", required=True))
        keys = [k for k in ("wwid", "device", "multipath") if item.data.get(k) is not None]
        if len(keys) != 1:
            raise item.error("role", "give exactly one of wwid, device, multipath to match")
        value = item.str(keys[0], required=True)
        item.reject_unknown()
        rules.append(RoleRule(keys[0], value, role))
    return rules


def create(cfg, procfs: str, sysfs: str) -> "LunCollector":
    """The collector for a dbhost_exporter.config.DbhostConfig (its ``lun`` settings)."""
    return LunCollector(procfs, sysfs, LunConfig(**cfg.settings[SPEC.name]))


@dataclass
class LunIdentity:
    device: str
    kind: str
    hctl: str = ""
    host: str = ""
    vendor: str = ""
    model: str = ""
    wwid: str = ""
    multipath: str = ""
    role: str = ""
    alua: bool = False            # SCSI device/access_state readable (a device handler is attached)
    nr_requests: int | None = None
    scsi_dir: str | None = None
    paths: tuple[str, ...] = ()   # NVMe native multipath head: its hidden per-controller paths
    controllers: tuple[str, ...] = ()   # NVMe: the controller of each path (or of the namespace)
    queue_tags: int | None = None       # NVMe without native multipath: requests its hardware queues hold
    path_tags: tuple[int | None, ...] = ()   # NVMe native multipath: the same per path (paths order)
    blk_mq: bool = True           # /sys/block/X/mq exists (False: legacy request path, kernels < 5.0)


def normalize_wwid(raw: str) -> str:
    """SCSI ``device/wwid`` reads ``naa.600a0b80...`` (kernel scsi_vpd_lun_id: ``naa.``/``eui.`` +
    lower-case hex, ``t10.`` + vendor id text, or a SCSI name string); dm-multipath (scsi_id) names
    the same LUN ``3600a0b80...`` (designator type 3 = NAA, 2 = EUI-64). Map to the scsi_id form so
    paths, maps and configured WWIDs compare equal. Lower case for hex forms; text forms as they are."""
    raw = raw.strip()
    low = raw.lower()
    if low.startswith("naa.") and re.fullmatch(r"[0-9a-f]+", low[4:]):
        return "3" + low[4:]
    if low.startswith("eui.") and re.fullmatch(r"[0-9a-f]+", low[4:]):
        return "2" + low[4:]
    return low if re.fullmatch(r"[0-9a-f]+", low) else raw


_VIRTIO_SERIAL = re.compile(r"^[\x21-\x7e]{1,20}$")


def virtio_id(serial: str | None) -> str:
    """``virtio-<serial>`` (udev's by-id name) from /sys/block/vdX/serial (VIRTIO_BLK_ID_BYTES: at
    most 20 bytes; empty when the hypervisor gives none); blanks become ``_`` as udev does; "" when
    there is no usable serial."""
    if not serial:
        return ""
    serial = "_".join(serial.split())
    return "virtio-" + serial if _VIRTIO_SERIAL.match(serial) else ""


def wwid_key(raw: str) -> str:
    """What two WWID spellings must agree on to name the same LUN (role rules): the scsi_id form for
    ``naa.``/``eui.`` ids (SCSI or NVMe), ``1`` + vendor id with whitespace runs as ``_`` for ``t10.``
    (scsi_id --replace-whitespace), everything else lower case."""
    raw = raw.strip()
    if raw[:4].lower() == "t10.":
        return ("1" + "_".join(raw[4:].split())).lower()
    return normalize_wwid(raw).lower()


def device_label(sysfs_name: str) -> str:
    """/sys/block names have '/' replaced by '!' (kobject names: ``cciss!c0d0``); /proc/diskstats
    and node_exporter's ``device`` label keep the '/' (``cciss/c0d0``). Export the diskstats form."""
    return sysfs_name.replace("!", "/")


def kernel_release_tuple(release: str) -> tuple[int, int] | None:
    m = re.match(r"^(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None


def host_queue_visibility(ver: tuple[int, int] | None) -> str:
    """Whether diskstats in-progress includes requests not yet dispatched, by kernel release."""
    if ver is None:
        return "unknown"
    if ver >= HOST_QUEUE_VISIBLE_SINCE:
        return "true"
    return "false" if ver >= DISPATCHED_ONLY_SINCE else "partial"


LEGACY_PATH_UNTIL = (5, 0)  # the legacy (non-blk-mq) request path was removed in 5.0


def device_host_queue_visible(ver: tuple[int, int] | None, scsi: bool, blk_mq: bool) -> int | None:
    """1 if diskstats in-progress of this device includes requests not yet dispatched.

    blk-mq: from 6.10 only (see host_queue_visibility). A SCSI disk on the legacy request
    path (no ``mq`` directory, kernels before 5.0, e.g. RHEL 7) counts a request from the
    moment it is queued to the elevator (blk_account_io_start in add_acct_request), so its
    host queue is real. None when the kernel release is unknown."""
    if ver is None:
        return None
    if ver >= HOST_QUEUE_VISIBLE_SINCE:
        return 1
    if scsi and not blk_mq and ver < LEGACY_PATH_UNTIL:
        return 1
    return 0


def parse_diskstats(text: str | None, source: str = "/proc/diskstats") -> dict[str, int]:
    """/sys/block name -> I/Os currently in progress (field 12 of /proc/diskstats; the 14-, 18-
    (4.18+ discard) and 20-field (5.5+ flush) layouts all keep it at index 11). Names with '/'
    (``cciss/c0d0``) are keyed as sysfs spells them (``cciss!c0d0``).

    The kernel prints every line whole (``%4d %7d %pg`` and decimal counters), so anything else
    means the file is not diskstats (a mistyped --path.procfs, a truncated copy): ValueError
    naming the line, never a silently missing host queue. Blank lines are ignored."""
    result: dict[str, int] = {}
    if not text:
        return result
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 14 or not (parts[0].isdigit() and parts[1].isdigit()) or \
                not "".join(parts[3:]).isdigit():   # every counter decimal (one C call, not a loop)
            raise ValueError(f"{source} line {n}: not a diskstats line (major, minor, name and at least 11 "
                             f"decimal counters): {line.strip()[:80]!r}")
        result[parts[2].replace("/", "!")] = int(parts[11])   # keyed by the /sys/block name (cciss!c0d0)
    return result


def parse_inflight(text: str | None) -> int | None:
    """``/sys/block/X/inflight``: ``%8u %8u`` reads and writes in flight."""
    if text is None:
        return None
    parts = text.split()
    if len(parts) != 2:
        return None
    r, w = parse_int(parts[0]), parse_int(parts[1])
    if r is None or w is None:
        return None
    return r + w


def host_queue(in_progress: int | None, dispatched: int | None) -> int | None:
    """Requests accepted by the block layer but not dispatched; never below 0."""
    if in_progress is None or dispatched is None:
        return None
    return max(0, in_progress - dispatched)


class LunCollector:
    name = "lun"

    def __init__(self, procfs: str, sysfs: str, config: LunConfig | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.procfs = procfs
        self.sysfs = sysfs
        self.config = config or LunConfig()
        self.clock = clock
        self._identities: dict[str, LunIdentity] = {}
        self._device_set: tuple[str, ...] | None = None
        self._identity_time = float("-inf")
        self._can_queue: dict[str, int | None] = {}
        self._cmd_per_lun: dict[str, int | None] = {}
        self._samples: dict[str, int] = {}
        self._full: dict[str, int] = {}
        self._release: str | None = None
        self._nvme: dict[str, NvmeController] = {}
        self._device_cache: dict[str, tuple] = {}   # per device: label dicts and file paths (see collect)
        self._warned_empty = False

    # ---- identity (cached) -------------------------------------------------
    def _classify(self, name: str) -> tuple[str, str | None]:
        """(kind, scsi device dir or None); kind '' means not a disk we look at."""
        base = os.path.join(self.sysfs, "block", name)
        if _NVME_PATH.match(name):
            return "", None      # hidden native-multipath path: counted under its head, never twice
        if read_str(os.path.join(base, "hidden")) == "1":
            return "", None      # GENHD_FL_HIDDEN (sysfs-block "hidden", 5.16+): no /dev node, not a LUN
        if name.startswith("dm-"):
            # only dm-multipath maps: not LVM (LVM-), dm-crypt (CRYPT-), kpartx partitions of a
            # map (part1-mpath-...), or maps without a uuid
            uuid = read_str(os.path.join(base, "dm", "uuid")) or ""
            return ("multipath", None) if uuid.startswith("mpath-") else ("", None)
        for kind, rx in _SIMPLE.items():
            if rx.match(name):
                return kind, None
        if _NVME_NS.match(name):
            return "nvme", None
        try:
            target = os.path.realpath(os.path.join(base, "device"))
        except (OSError, ValueError):
            target = ""
        if _HCTL.match(os.path.basename(target)) and os.path.isdir(target):
            # a SCSI device, but only disks are LUNs: sr0 (CD/DVD, type 5) and other peripheral
            # types are not. Without a readable type, trust the sd name.
            scsi_type = read_int(os.path.join(target, "type"))
            if scsi_type is None and not name.startswith("sd"):
                return "", None
            if scsi_type is not None and scsi_type not in _SD_TYPES:
                return "", None
            return "scsi", target
        return "other", None

    def _build_identities(self, names: list[str]) -> None:
        ids: dict[str, LunIdentity] = {}
        maps: list[LunIdentity] = []
        for name in names:
            kind, scsi_dir = self._classify(name)
            if not kind or (kind not in self.config.include_types and kind not in ("scsi", "multipath")):
                continue
            base = os.path.join(self.sysfs, "block", name)
            ident = LunIdentity(device=name, kind=kind, scsi_dir=scsi_dir)
            ident.nr_requests = read_int(os.path.join(base, "queue", "nr_requests"))
            ident.blk_mq = os.path.isdir(os.path.join(base, "mq"))
            if kind == "scsi":
                ident.hctl = os.path.basename(scsi_dir)
                ident.host = next((p for p in scsi_dir.split(os.sep) if _HOST.match(p)), "")
                ident.vendor = read_str(os.path.join(scsi_dir, "vendor")) or ""
                ident.model = read_str(os.path.join(scsi_dir, "model")) or ""
                ident.wwid = normalize_wwid(read_str(os.path.join(scsi_dir, "wwid")) or "")
                # ALUA access state: the file exists from 4.6 (CONFIG_SCSI_DH) but reads EINVAL
                # while no device handler is attached: read every scrape only where it reads now
                ident.alua = read_attr(os.path.join(scsi_dir, "access_state")) is not None
            elif kind == "nvme":
                # device -> the controller (nvme0) or, with native multipath, the subsystem
                # (nvme-subsys0); both carry model
                ident.model = read_str(os.path.join(base, "device", "model")) or ""
                ident.wwid = read_str(os.path.join(base, "wwid")) or ""
                head = _NVME_NS.match(name)
                ident.paths = tuple(n for n in names if (m := _NVME_PATH.match(n))
                                    and m.groups() == head.groups())
                if ident.paths:
                    ident.multipath = device_label(name)   # the head is its own multipath device
                # each path's (or the namespace's own) controller, and the requests their blk-mq
                # hardware queues can hold (the head is bio-based: it has no queues of its own)
                devs = ident.paths or (name,)
                ident.controllers = tuple(self._controller_of(d) for d in devs)
                if ident.paths:
                    ident.path_tags = tuple(self._queue_tags(d) for d in ident.paths)
                else:
                    ident.queue_tags = self._queue_tags(name)
            elif kind == "virtio":
                # virtio-blk has no WWID; its serial (OpenStack: the volume id, cut to 20 bytes) is
                # the stable name udev gives it, /dev/disk/by-id/virtio-<serial>
                ident.wwid = virtio_id(read_str(os.path.join(base, "serial")))
            elif kind == "multipath":
                ident.multipath = read_str(os.path.join(base, "dm", "name")) or ""
                uuid = read_str(os.path.join(base, "dm", "uuid")) or ""
                ident.wwid = normalize_wwid(uuid[len("mpath-"):])
                maps.append(ident)
            ids[name] = ident
        # paths inherit the name of the map they belong to (and its WWID where the kernel has no
        # device/wwid, e.g. before 4.5); maps take vendor/model of a path
        for m in maps:
            for slave in listdir(os.path.join(self.sysfs, "block", m.device, "slaves")):
                path = ids.get(slave)
                if path is None:
                    continue
                path.multipath = m.multipath
                if not path.wwid:
                    path.wwid = m.wwid
                if not m.vendor:
                    m.vendor, m.model = path.vendor, path.model
        for ident in ids.values():
            ident.role = self._role(ident)
        # keep only what the config asks for (scsi/multipath were kept to link paths and maps)
        self._identities = {n: i for n, i in ids.items() if i.kind in self.config.include_types}
        self._device_cache: dict[str, tuple] = {}
        hosts = listdir(os.path.join(self.sysfs, "class", "scsi_host"))
        self._can_queue = {h: read_int(os.path.join(self.sysfs, "class", "scsi_host", h, "can_queue"))
                           for h in hosts}
        self._cmd_per_lun = {h: read_int(os.path.join(self.sysfs, "class", "scsi_host", h, "cmd_per_lun"))
                             for h in hosts}
        self._release = read_str(os.path.join(self.procfs, "sys", "kernel", "osrelease"))
        self._build_controllers()

    def _cache_device(self, name: str, ident: LunIdentity, blk: str) -> tuple:
        """What a scrape needs of a device that only changes with its identity: its label dicts
        and the paths of the files read every scrape."""
        label = device_label(name)
        lbl = {"device": label}
        info = {"device": label, "hctl": ident.hctl, "vendor": ident.vendor, "model": ident.model,
                "wwid": ident.wwid, "multipath": ident.multipath, "role": ident.role}
        sd = ident.scsi_dir
        return (lbl, {"device": label, "queue": "lun"}, {"device": label, "queue": "host"}, info,
                os.path.join(sd, "device_busy") if sd is not None else None,
                os.path.join(blk, name, "inflight"),
                tuple(os.path.join(sd, a) for a in ("iorequest_cnt", "iodone_cnt", "ioerr_cnt"))
                if sd is not None else None,
                # read every scrape like device_busy: the LLD lowers it by itself on QUEUE FULL /
                # TASK SET FULL (scsi_track_queue_full, lpfc ramp-down) and raises it again later
                os.path.join(sd, "queue_depth") if sd is not None else None)

    def _controller_of(self, block_name: str) -> str:
        """The NVMe controller (nvmeN) a namespace or path device belongs to ("" if unknown)."""
        try:
            target = os.path.basename(os.path.realpath(os.path.join(self.sysfs, "block", block_name, "device")))
        except (OSError, ValueError):
            return ""
        return target if _NVME_CTRL.match(target) else ""

    def _queue_tags(self, block_name: str) -> int | None:
        """The requests the device's hardware queues can hold for I/O: the sum over block/X/mq/*/ of
        nr_tags minus nr_reserved_tags. nr_tags counts the reserved tags too (blk_mq_init_tags), and
        NVMe over Fabrics (TCP, FC, RDMA) reserves one tag per queue for its Connect command: a
        queue of sqsize + 1 tags carries at most sqsize I/Os, so without the subtraction a full
        Fabrics queue never reads as full. PCIe I/O queues reserve none. A missing
        nr_reserved_tags reads as 0; a missing or unreadable nr_tags leaves the limit unknown."""
        mq = os.path.join(self.sysfs, "block", block_name, "mq")
        total = 0
        queues = listdir(mq)
        for q in queues:
            tags = read_int(os.path.join(mq, q, "nr_tags"))
            if tags is None:
                return None
            total += max(0, tags - (read_int(os.path.join(mq, q, "nr_reserved_tags")) or 0))
        return total if queues else None

    def _io_tags(self, ident: LunIdentity, c_state: dict[str, str | None],
                 ana: dict[str, str | None]) -> int | None:
        """The tag limit of an NVMe native-multipath namespace now: summed over the paths the
        kernel sends its I/O to (nvme_find_path: live controller and ANA optimized; only when no
        such path exists, the live non-optimized ones; a path without ANA counts as optimized).
        A standby or inaccessible path holds no I/O, so its tags must not raise the limit. None
        when no path can carry I/O or a used path's tags are unknown."""
        best: dict[str, list[int | None]] = {"optimized": [], "non-optimized": []}
        for path, ctrl, tags in zip(ident.paths, ident.controllers, ident.path_tags):
            if c_state.get(ctrl) not in PATH_UP_STATES:
                continue
            state = ana.get(path) or "optimized"
            if state in best:
                best[state].append(tags)
        used = best["optimized"] or best["non-optimized"]
        return sum(used) if used and None not in used else None

    def _build_controllers(self) -> None:
        """NVMe controllers from /sys/class/nvme: subsystem, transport, model, I/O queues
        (queue_count counts the admin queue too) and queue size (sqsize is 0's based)."""
        ctrls: dict[str, NvmeController] = {}
        cls = os.path.join(self.sysfs, "class", "nvme")
        for name in listdir(cls):
            if not _NVME_CTRL.match(name):
                continue
            d = os.path.realpath(os.path.join(cls, name))
            c = NvmeController(name, d)
            c.transport = read_str(os.path.join(d, "transport")) or ""
            c.model = read_str(os.path.join(d, "model")) or ""
            qc = read_int(os.path.join(d, "queue_count"))
            c.io_queues = qc - 1 if qc else None
            sq = read_int(os.path.join(d, "sqsize"))
            c.queue_size = sq + 1 if sq is not None else None
            ctrls[name] = c
        # the NVMe subsystem a controller belongs to: class/nvme-subsystem/nvme-subsysN/nvmeM
        # (the controller's own "subsystem" link is its class, nvme)
        subs = os.path.join(self.sysfs, "class", "nvme-subsystem")
        for sub in listdir(subs):
            for entry in listdir(os.path.join(subs, sub)):
                if entry in ctrls:
                    ctrls[entry].subsystem = sub
        self._nvme = ctrls

    def _role(self, ident: LunIdentity) -> str:
        key = wwid_key(ident.wwid) if ident.wwid else ""
        for rule in self.config.roles:
            if rule.by == "wwid" and key and wwid_key(rule.value) == key:
                return rule.role
            if rule.by == "device" and rule.value in (ident.device, device_label(ident.device)):
                return rule.role
            if rule.by == "multipath" and ident.multipath and rule.value == ident.multipath:
                return rule.role
        return self.config.default_role

    def _refresh(self) -> None:
        names = tuple(listdir(os.path.join(self.sysfs, "block")))
        now = self.clock()
        if names != self._device_set or now - self._identity_time >= self.config.identity_refresh_seconds:
            self._build_identities(list(names))
            self._device_set = names
            self._identity_time = now

    # ---- per scrape --------------------------------------------------------
    def collect(self) -> Iterable[Metric]:
        self._refresh()
        if not self._device_set:
            if not self._warned_empty:
                log.warning("no block devices under %s: is --path.sysfs the sysfs mount point? "
                            "(the lun collector exports nothing until some appear)",
                            os.path.join(self.sysfs, "block"))
                self._warned_empty = True
        else:
            self._warned_empty = False
        diskstats: dict[str, int] = {}
        if self._identities:
            path = os.path.join(self.procfs, "diskstats")
            text = read_text(path)
            if text is None:
                raise OSError(f"cannot read {path}: no host queue for any device")
            diskstats = parse_diskstats(text, path)
            if not diskstats:
                raise ValueError(f"{path} is empty while {len(self._identities)} block devices are exported: "
                                 "no host queue for any of them")

        info = SPEC.family("dbhost_lun_info")
        depth = SPEC.family("dbhost_lun_queue_depth")
        nr_req = SPEC.family("dbhost_lun_nr_requests")
        inflight = SPEC.family("dbhost_lun_inflight_requests")
        ioreq = SPEC.family("dbhost_lun_iorequests_total")
        iodone = SPEC.family("dbhost_lun_iodone_total")
        ioerr = SPEC.family("dbhost_lun_ioerrors_total")
        samples = SPEC.family("dbhost_lun_samples_total")
        full = SPEC.family("dbhost_lun_queue_full_samples_total")
        host_visible = SPEC.family("dbhost_lun_host_queue_visible")
        release = kernel_release_tuple(self._release) if self._release else None
        blk = os.path.join(self.sysfs, "block")
        # NVMe controller and path (ANA) states, read once: the queue-full limit of a native-
        # multipath namespace depends on them, and the path health families report them
        c_state = {name: state_label(read_attr(os.path.join(c.path, "state"))) for name, c in self._nvme.items()}
        ana: dict[str, str | None] = {}
        tags_now: dict[str, int | None] = {}
        for name, ident in self._identities.items():
            if ident.paths:
                for path in ident.paths:
                    ana[path] = state_label(read_attr(os.path.join(blk, path, "ana_state")))
                tags_now[name] = self._io_tags(ident, c_state, ana)
            elif ident.kind == "nvme":
                tags_now[name] = ident.queue_tags
        # Samples are built directly (what add_metric would append) with per-device label dicts
        # and file paths made once per identity (_device_cache): about a third of a steady scrape
        # of 1,536 devices went to add_metric and os.path.join.
        S = Sample
        n_vis, n_info, n_depth, n_nr = host_visible.name, info.name + "_info", depth.name, nr_req.name
        n_infl, n_req, n_done, n_err = inflight.name, ioreq.name + "_total", iodone.name + "_total", \
            ioerr.name + "_total"
        n_smp, n_full = samples.name + "_total", full.name + "_total"
        vis_s, info_s, depth_s, nr_s = host_visible.samples, info.samples, depth.samples, nr_req.samples
        infl_s, req_s, done_s, err_s = inflight.samples, ioreq.samples, iodone.samples, ioerr.samples
        smp_s, full_s = samples.samples, full.samples
        cache = self._device_cache
        counts, fulls = self._samples, self._full
        for name in sorted(self._identities):
            ident = self._identities[name]
            dc = cache.get(name)
            if dc is None:
                dc = cache[name] = self._cache_device(name, ident, blk)
            lbl, lbl_lun, lbl_host, lbl_info, p_busy, p_inflight, p_counts, p_depth = dc
            vis = device_host_queue_visible(release, ident.scsi_dir is not None, ident.blk_mq)
            if vis is not None:
                vis_s.append(S(n_vis, lbl, vis))
            info_s.append(S(n_info, lbl_info, 1.0))
            qdepth = parse_int(read_attr(p_depth)) if p_depth is not None else None
            if qdepth is not None:
                depth_s.append(S(n_depth, lbl, qdepth))
            if ident.nr_requests is not None:
                nr_s.append(S(n_nr, lbl, ident.nr_requests))
            lun = host = None
            if ident.paths:
                # NVMe native multipath: the head is bio-based and its own counters are 0 unless
                # queue/iostats is switched on; the requests live on the hidden paths
                for path in ident.paths:
                    p_lun = parse_inflight(read_attr(os.path.join(blk, path, "inflight")))
                    if p_lun is None:
                        continue
                    lun = (lun or 0) + p_lun
                    p_host = host_queue(diskstats.get(path), p_lun)
                    if p_host is not None:
                        host = (host or 0) + p_host
            if lun is None:
                if p_busy is not None:
                    lun = parse_int(read_attr(p_busy))
                if lun is None:
                    lun = parse_inflight(read_attr(p_inflight))
                host = host_queue(diskstats.get(name), lun)
            if lun is not None:
                infl_s.append(S(n_infl, lbl_lun, lun))
            if host is not None:
                infl_s.append(S(n_infl, lbl_host, host))
            if p_counts is not None:
                # atomic_t printed "0x%llx" from an unsigned long long: past 2^31 the kernel prints
                # the sign-extended value (0xffffffff8...); masked to the counter's 32 bits
                # (device/iocounterbits), the wrap at 2^32 is an ordinary counter reset
                value = parse_int(read_attr(p_counts[0]))
                if value is not None:
                    req_s.append(S(n_req, lbl, value & COUNTER_MASK))
                value = parse_int(read_attr(p_counts[1]))
                if value is not None:
                    done_s.append(S(n_done, lbl, value & COUNTER_MASK))
                value = parse_int(read_attr(p_counts[2]))
                if value is not None:
                    err_s.append(S(n_err, lbl, value & COUNTER_MASK))
            limit = qdepth if ident.kind != "nvme" else tags_now.get(name)
            if limit and lun is not None:
                counts[name] = counts.get(name, 0) + 1
                if lun >= limit:
                    fulls[name] = fulls.get(name, 0) + 1
            if name in counts:
                smp_s.append(S(n_smp, lbl, counts[name]))
                full_s.append(S(n_full, lbl, fulls.get(name, 0)))

        can_queue = SPEC.family("dbhost_scsi_host_can_queue")
        host_busy = SPEC.family("dbhost_scsi_host_busy")
        cmd_per_lun = SPEC.family("dbhost_scsi_host_cmd_per_lun")
        for host, cq in sorted(self._can_queue.items()):
            if cq is not None:
                can_queue.add_metric([host], cq)
            cpl = self._cmd_per_lun.get(host)
            if cpl is not None:
                cmd_per_lun.add_metric([host], cpl)
            busy = read_int(os.path.join(self.sysfs, "class", "scsi_host", host, "host_busy"))
            if busy is not None:
                host_busy.add_metric([host], busy)

        kernel = SPEC.family("dbhost_kernel_info")
        if self._release:
            ver = kernel_release_tuple(self._release)
            visible = host_queue_visibility(ver)
            kernel.add_metric([self._release, visible], {})

        # Under the series cap (scrape.py keeps the first samples in this order) the inputs of the
        # pages go first: path health (LunAllPathsDown, LunMultipathSuspended, LunPathRedundancyLost),
        # then the identity they join with for the role (maps sort before their sd paths), then the
        # bulky per-LUN families. A cut never silently takes the health of a path.
        health, other_health = self._health_families(c_state, ana, tags_now)
        for fam in (*health, info, depth, nr_req, inflight, host_visible, ioreq, iodone, ioerr, samples, full,
                    can_queue, cmd_per_lun, host_busy, kernel, *other_health):
            if fam.samples:
                yield fam

    # ---- path health: SCSI device state, dm-multipath maps, NVMe controllers and paths ----

    def _slaves(self, path: str, name: str) -> list[str] | None:
        """The paths of a dm-multipath map (its slaves/), or None when the map went away during the
        scrape. An empty, readable slaves/ is a map without paths (0: LunAllPathsDown). A slaves/
        that exists but cannot be listed (EACCES under a hardened sysfs, EIO) fails the collector
        (OSError naming the map and directory): its paths are unknown, and neither a false 0 (which
        pages LunAllPathsDown) nor a quietly missing series (a map no longer watched) may stand in."""
        try:
            return os.listdir(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise OSError(f"multipath map {name}: cannot list {path} ({exc.strerror or exc}): "
                          "its paths are unknown") from None

    def _health_families(self, c_state: dict[str, str | None], ana: dict[str, str | None],
                         tags_now: dict[str, int | None]) -> tuple[list[Metric], list[Metric]]:
        """Read every scrape (a path can fail at any time; multipathd can drop a path from a map
        without any block device coming or going): SCSI ``device/state``, each map's ``slaves/``
        and ``dm/suspended``, NVMe controller ``state``, NVMe path ``ana_state``, SCSI ``access_state``
        (where a device handler is attached). Returns (the path-health families, in the order they
        are kept under the series cap; the other NVMe families)."""
        blk = os.path.join(self.sysfs, "block")
        scsi_state = SPEC.family("dbhost_scsi_device_state")
        access_f = SPEC.family("dbhost_scsi_device_access_state")
        paths_f = SPEC.family("dbhost_multipath_paths")
        active_f = SPEC.family("dbhost_multipath_paths_active")
        suspended_f = SPEC.family("dbhost_multipath_suspended")
        ctrl_state = SPEC.family("dbhost_nvme_controller_state")
        ctrl_info = SPEC.family("dbhost_nvme_controller_info")
        ctrl_queues = SPEC.family("dbhost_nvme_controller_io_queues")
        ctrl_qsize = SPEC.family("dbhost_nvme_controller_queue_size")
        ana_f = SPEC.family("dbhost_nvme_path_ana_state")
        tags_f = SPEC.family("dbhost_lun_queue_tags")

        for name in sorted(self._nvme):
            c = self._nvme[name]
            st = c_state.get(name)
            if st is not None:
                ctrl_state.add_metric([name, st], 1)
            ctrl_info.add_metric([name, c.subsystem, c.transport, c.model], {})
            if c.io_queues is not None:
                ctrl_queues.add_metric([name], c.io_queues)
            if c.queue_size is not None:
                ctrl_qsize.add_metric([name], c.queue_size)

        states: dict[str, str | None] = {}

        def path_state(dev: str) -> str | None:
            """device/state of a path: the SCSI device's, or for an NVMe namespace its controller's."""
            if dev not in states:
                states[dev] = state_label(read_attr(os.path.join(blk, dev, "device", "state")))
            return states[dev]

        for name in sorted(self._identities):
            ident = self._identities[name]
            label = device_label(name)
            if ident.scsi_dir is not None:
                st = state_label(read_attr(ident.scsi_dir + "/state"))
                states[name] = st
                if st is not None:
                    scsi_state.add_metric([label, st], 1)
                if ident.alua:
                    acc = access_state_label(read_attr(ident.scsi_dir + "/access_state"))
                    if acc is not None:
                        access_f.add_metric([label, acc], 1)
        n_paths, n_active, n_susp = paths_f.name, active_f.name, suspended_f.name
        cache = self._device_cache
        up_states = PATH_UP_STATES
        for name in sorted(self._identities):
            ident = self._identities[name]
            label = device_label(name)
            if ident.kind == "multipath":
                lbl = cache[name][0] if name in cache else {"device": label}
                slaves = self._slaves(f"{blk}/{name}/slaves", name)
                if slaves is not None:      # not knowing the paths is not "no path": no series then
                    paths_f.samples.append(Sample(n_paths, lbl, len(slaves)))
                    active_f.samples.append(Sample(n_active, lbl, sum(
                        1 for sl in slaves if (states[sl] if sl in states else path_state(sl)) in up_states)))
                susp = read_int(f"{blk}/{name}/dm/suspended")
                if susp is not None:
                    suspended_f.samples.append(Sample(n_susp, lbl, 1 if susp else 0))
            elif ident.kind == "nvme":
                if tags_now.get(name):
                    tags_f.add_metric([label], tags_now[name])
                if ident.paths:
                    up = 0
                    for path, ctrl in zip(ident.paths, ident.controllers):
                        p_ana = ana.get(path)
                        if p_ana is not None:
                            ana_f.add_metric([device_label(path), label, ctrl, p_ana], 1)
                        cst = c_state.get(ctrl) if ctrl in c_state else path_state(path)
                        if cst in PATH_UP_STATES and (p_ana is None or p_ana in ANA_USABLE):
                            up += 1
                    paths_f.add_metric([label], len(ident.paths))
                    active_f.add_metric([label], up)
        return ([paths_f, active_f, suspended_f, scsi_state, access_f, ctrl_state, ana_f],
                [ctrl_info, ctrl_queues, ctrl_qsize, tags_f])
