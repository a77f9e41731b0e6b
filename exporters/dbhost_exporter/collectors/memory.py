"""Shared memory limits and huge pages: what decides whether an SGA fits (field notes M5, M1).

An instance whose SGA does not fit the System V shared memory limits does not start
(ORA-27102: out of memory): ``kernel.shmmax`` (largest segment, bytes), ``kernel.shmall``
(all segments together, in pages of the kernel's page size) and ``kernel.shmmni`` (number
of segments). An SGA that does not fit its huge pages falls back to small pages
(``use_large_pages=TRUE``) or fails to start (``ONLY``): the TLB problem of M1. Compare
these with ``oracle_sga_*`` of the oracle-exporter in rules.

Sources (all under ``--path.procfs``):

* ``sys/kernel/shmmax``, ``sys/kernel/shmall``, ``sys/kernel/shmmni``: one integer each;
* ``sysvipc/shm``: one row per segment (ipc/shm.c sysvipc_shm_proc_show: key, shmid,
  perms, size in bytes, ...), after a header line;
* ``meminfo``: ``HugePages_Total``, ``HugePages_Free``, ``HugePages_Rsvd``,
  ``HugePages_Surp`` (pages of the default huge page size) and ``Hugepagesize`` (kB).

The page size is the exporter's own (``os.sysconf("SC_PAGE_SIZE")``), the monitored
host's when the exporter runs there; a tree recorded on a host with another page size
(64 KiB on some arm64/ppc64le kernels) gets this host's. A missing file leaves its series
out (a recorded tree, a kernel without System V IPC); a file that is there but does not
parse fails the collector with one line naming it.
"""
from __future__ import annotations

import os
from typing import Iterable

from prometheus_client.metrics_core import Metric

from exporter_common.declare import Collector, Family

from ..sysfs import read_text

SPEC = Collector(
    "memory", "System V shared memory limits and segments, and huge pages: whether an SGA fits "
    "(field notes M5, M1).",
    reads=("/proc/sys/kernel/shmmax", "/proc/sys/kernel/shmall", "/proc/sys/kernel/shmmni", "/proc/sysvipc/shm",
           "/proc/meminfo"),
    metrics=(
        Family("dbhost_kernel_shmmax_bytes", "gauge",
               "Largest System V shared memory segment allowed (kernel.shmmax): "
               "an SGA segment above it does not start (ORA-27102).", source='`/proc/sys/kernel/shmmax`: the largest segment; Oracle splits an SGA into segments of at most this size'),
        Family("dbhost_kernel_shmall_bytes", "gauge",
               "All System V shared memory together allowed (kernel.shmall pages x "
               "page size): every SGA on the host must fit in it.",
               source='`/proc/sys/kernel/shmall` (pages) x the page size: all segments together must fit'),
        Family("dbhost_kernel_shmmni", "gauge", "System V shared memory segments allowed (kernel.shmmni).",
               source='`/proc/sys/kernel/shmmni`', measure='segments'),
        Family("dbhost_kernel_page_size_bytes", "gauge", "The kernel's base page size (the unit of "
               "kernel.shmall).", source="the exporter's `sysconf(_SC_PAGE_SIZE)` (the monitored host's when the exporter runs there; the unit of `shmall`)"),
        Family("dbhost_shm_segments", "gauge", "System V shared memory segments now "
               "(/proc/sysvipc/shm).", source='rows of `/proc/sysvipc/shm`', measure='segments'),
        Family("dbhost_shm_bytes", "gauge", "Size of all System V shared memory segments now "
               "(/proc/sysvipc/shm size column): the SGAs and others.",
               source='sum of the `size` column of `/proc/sysvipc/shm`: the SGAs and any other segments'),
        Family("dbhost_memory_hugepages", "gauge",
               "Huge pages of the default size by state (/proc/meminfo HugePages_*): "
               "total configured, free, reserved (promised to a mapping, not yet faulted in), surplus.",
               ("state",), source='`/proc/meminfo` `HugePages_Total`, `_Free`, `_Rsvd`, `_Surp` (pages of the default huge page size)', measure='pages', note='Labels: `state` (`total`, `free`, `reserved`, `surplus`).'),
        Family("dbhost_memory_hugepage_size_bytes", "gauge", "Default huge page size "
               "(/proc/meminfo Hugepagesize).", source='`/proc/meminfo` `Hugepagesize`'),
    ),
    exporter="dbhost-exporter", doc="System V shared memory limits and segments, and huge pages: what decides whether an SGA fits (ORA-27102 at startup when it does not) and whether it sits on huge pages. Compare with the oracle-exporter's `oracle_sga_target_bytes` in PromQL. A missing file leaves its series out (a kernel without System V IPC, a recorded tree); a file that is there but does not parse fails the collector with one line naming it.", title='Memory')


def gauge(name: str, value: float) -> Metric:
    """The declared family ``name`` with its one unlabelled sample."""
    fam = SPEC.family(name)
    fam.add_metric([], value)
    return fam


def create(cfg, procfs: str, sysfs: str) -> "MemoryCollector":
    """The collector for a dbhost_exporter.config.DbhostConfig (it has no settings)."""
    return MemoryCollector(procfs)

HUGEPAGE_STATES = (("total", "HugePages_Total"), ("free", "HugePages_Free"), ("reserved", "HugePages_Rsvd"),
                   ("surplus", "HugePages_Surp"))


def parse_single_int(text: str | None, source: str) -> int | None:
    """A /proc/sys value: one decimal integer (None if the file is absent)."""
    if text is None:
        return None
    value = text.strip()
    if not value.isdigit():
        raise ValueError(f"{source}: not a number: {value[:40]!r}")
    return int(value)


def parse_sysvipc_shm(text: str, source: str = "/proc/sysvipc/shm") -> tuple[int, int]:
    """(segments, bytes) from /proc/sysvipc/shm: a header line starting with ``key``, then
    one row per segment whose 4th column is its size in bytes."""
    lines = text.splitlines()
    if not lines or lines[0].split()[:4] != ["key", "shmid", "perms", "size"]:
        raise ValueError(f"{source}: no 'key shmid perms size' header")
    segments = total = 0
    for n, line in enumerate(lines[1:], 2):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 7 or not parts[3].isdigit():
            raise ValueError(f"{source} line {n}: not a segment row: {line.strip()[:80]!r}")
        segments += 1
        total += int(parts[3])
    return segments, total


def parse_meminfo_hugepages(text: str, source: str = "/proc/meminfo") -> dict[str, int]:
    """The HugePages_* counts and Hugepagesize (in bytes) of /proc/meminfo."""
    out: dict[str, int] = {}
    wanted = {key for _, key in HUGEPAGE_STATES} | {"Hugepagesize"}
    for n, line in enumerate(text.splitlines(), 1):
        key, sep, rest = line.partition(":")
        if key not in wanted:
            continue
        parts = rest.split()
        if not sep or not parts or not parts[0].isdigit() or parts[1:] not in ([], ["kB"]):
            raise ValueError(f"{source} line {n}: not a number: {line.strip()[:80]!r}")
        out[key] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return out


class MemoryCollector:
    name = "memory"

    def __init__(self, procfs: str, page_size: int | None = None):
        self.procfs = procfs
        self.page_size = page_size or os.sysconf("SC_PAGE_SIZE")

    def collect(self) -> Iterable[Metric]:
        p = self.procfs
        kernel = {}
        for name in ("shmmax", "shmall", "shmmni"):
            path = os.path.join(p, "sys", "kernel", name)
            kernel[name] = parse_single_int(read_text(path), path)
        fams: list[Metric] = []
        if kernel["shmmax"] is not None:
            fams.append(gauge("dbhost_kernel_shmmax_bytes", kernel["shmmax"]))
        if kernel["shmall"] is not None:
            fams.append(gauge("dbhost_kernel_shmall_bytes", kernel["shmall"] * self.page_size))
        if kernel["shmmni"] is not None:
            fams.append(gauge("dbhost_kernel_shmmni", kernel["shmmni"]))
        fams.append(gauge("dbhost_kernel_page_size_bytes", self.page_size))
        path = os.path.join(p, "sysvipc", "shm")
        text = read_text(path)
        if text is not None:
            segments, size = parse_sysvipc_shm(text, path)
            fams.append(gauge("dbhost_shm_segments", segments))
            fams.append(gauge("dbhost_shm_bytes", size))
        path = os.path.join(p, "meminfo")
        text = read_text(path)
        if text is not None:
            huge = parse_meminfo_hugepages(text, path)
            pages = SPEC.family("dbhost_memory_hugepages")
            for state, key in HUGEPAGE_STATES:
                if key in huge:
                    pages.add_metric([state], huge[key])
            if pages.samples:
                fams.append(pages)
            if "Hugepagesize" in huge:
                fams.append(gauge("dbhost_memory_hugepage_size_bytes", huge["Hugepagesize"]))
        return fams
