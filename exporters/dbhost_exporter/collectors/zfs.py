"""ZFS ARC / L2ARC collector (field notes Z1-Z5).

Sources, first one that applies:

1. ``zfs.kstat_file`` from the config: illumos/Solaris ``kstat -p zfs:0:arcstats``
   text saved to a file (``zfs:0:arcstats:hits<TAB>123`` per line).
2. Linux OpenZFS ``<procfs>/spl/kstat/zfs/arcstats``: a kstat header line, the
   column line ``name type data``, then one ``<name> <type> <value>`` row per
   statistic. OpenZFS 2.2 added ``iohits`` and ``<kind>_iohits`` and the
   ``uncached`` state; 2.1 has neither (their metrics are then simply absent).
3. Not on Linux and a ``kstat`` binary on PATH: run ``kstat -p zfs:0:arcstats``.
   Never on Linux, so the hot path there never forks.

No ZFS on the host (no arcstats file, no configured kstat file, no ``kstat``
command): nothing is yielded (one debug log line the first time). A source that
exists but cannot be read or parsed (empty, cut, not a kstat file, a value that
is not a number) fails the collector (``dbhost_collector_success{collector="zfs"} 0``
and one log line naming the file and line), never a silently shorter set of series.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from typing import Iterable

from prometheus_client.metrics_core import Metric

from exporter_common.config import Fields
from exporter_common.declare import Collector, Family, Setting

from ..sysfs import read_text

log = logging.getLogger(__name__)

_KIND = ("kind",)
SPEC = Collector(
    "zfs", "ZFS ARC and L2ARC (field notes Z1-Z5): Linux OpenZFS arcstats, or illumos/Solaris "
    "kstat -p zfs:0:arcstats text.",
    reads=("/proc/spl/kstat/zfs/arcstats", "zfs.kstat_file (kstat -p zfs:0:arcstats text)",
           "kstat -p zfs:0:arcstats (command, never on Linux)"),
    settings=(
        Setting("kstat_file", None, "illumos/Solaris: file holding `kstat -p zfs:0:arcstats` output "
                "(relative: to the config file's directory)", kind="custom",
                parse=lambda fields, key: parse_kstat_file(fields, key), doc_default="unset"),
    ),
    metrics=(
        Family("dbhost_zfs_arc_hits_total", "counter", "ARC requests served from memory without I/O, by kind.",
               _KIND, source='`<kind>_hits`', measure='requests', note='Labels: `kind` (`demand_data`, `demand_metadata`, `prefetch_data`, `prefetch_metadata`).'),
        Family("dbhost_zfs_arc_misses_total", "counter", "ARC requests that needed new I/O, by kind.",
               _KIND, source='`<kind>_misses`', measure='requests'),
        Family("dbhost_zfs_arc_iohits_total", "counter", "ARC requests that found their I/O already in progress, "
               "by kind (OpenZFS 2.2+).", _KIND, source='`<kind>_iohits` (OpenZFS 2.2+: the block was already being read)', since="OpenZFS 2.2", measure='requests'),
        Family("dbhost_zfs_arc_state_hits_total", "counter",
               "ARC hits by list: MRU, MFU, their ghost lists "
               "(a ghost hit is a miss the ARC would have had with more memory), uncached "
               "(OpenZFS 2.2+).", ("state",),
               source='`mru_hits`, `mfu_hits`, `mru_ghost_hits`, `mfu_ghost_hits`, `uncached_hits` (2.2+)', measure='requests', note='Labels: `state` (`mru`, `mfu`, `mru_ghost`, `mfu_ghost`, `uncached`).'),
        Family("dbhost_zfs_arc_size_bytes", "gauge", "Current ARC size.", source='`size`'),
        Family("dbhost_zfs_arc_target_bytes", "gauge", "ARC target size (c).", source='`c`'),
        Family("dbhost_zfs_arc_min_bytes", "gauge", "ARC minimum target size (c_min).", source='`c_min`'),
        Family("dbhost_zfs_arc_max_bytes", "gauge", "ARC maximum target size (c_max).", source='`c_max`'),
        Family("dbhost_zfs_l2arc_hits_total", "counter", "L2ARC read hits.", source='`l2_hits`', measure='requests'),
        Family("dbhost_zfs_l2arc_misses_total", "counter", "L2ARC read misses.", source='`l2_misses`', measure='requests'),
        Family("dbhost_zfs_l2arc_size_bytes", "gauge", "Data held in L2ARC (uncompressed, l2_size).",
               source='`l2_size`'),
        Family("dbhost_zfs_l2arc_allocated_bytes", "gauge", "Space allocated on the L2ARC devices (l2_asize).",
               source='`l2_asize`'),
        Family("dbhost_zfs_l2arc_read_bytes_total", "counter", "Bytes read from L2ARC devices.",
               source='`l2_read_bytes`'),
        Family("dbhost_zfs_l2arc_written_bytes_total", "counter", "Bytes written to L2ARC devices (the feed).",
               source='`l2_write_bytes` (the feed rate)'),
        Family("dbhost_zfs_l2arc_feeds_total", "counter", "L2ARC feed thread runs.", source='`l2_feeds`', measure='runs'),
        Family("dbhost_zfs_l2arc_errors_total", "counter",
               "L2ARC read errors by kind (io: l2_io_error, "
               "checksum: l2_cksum_bad); the read falls back to the pool (Z4).", _KIND,
               source='`l2_io_error`, `l2_cksum_bad`', measure='reads', note='Labels: `kind` (`io`, `checksum`).'),
        Family("dbhost_zfs_l2arc_write_errors_total", "counter", "L2ARC writes that failed (l2_writes_error).",
               source='`l2_writes_error`', measure='writes'),
        Family("dbhost_zfs_kstat_file_mtime_seconds", "gauge",
               "Modification time of zfs.kstat_file (Unix seconds): the age of the ARC statistics read "
               "from it, like node_exporter's node_textfile_mtime_seconds.", ("file",),
               source='`stat()` of `zfs.kstat_file` after each read; only when a `kstat_file` is configured. A capture job that stopped leaves frozen counters with `dbhost_collector_success` 1: `time() - dbhost_zfs_kstat_file_mtime_seconds` is their age', note='Labels: `file` (the configured path).'),
    ),
    exporter="dbhost-exporter", doc='Linux: `/proc/spl/kstat/zfs/arcstats` (OpenZFS 2.1 and 2.2+). illumos/Solaris: `kstat -p zfs:0:arcstats` text from `zfs.kstat_file`, or the `kstat` command where it exists (never on Linux). Without ZFS none of these series exist. Metrics whose arcstats field is missing in a release (e.g. `iohits` before 2.2) are absent.', title='ZFS')


def parse_kstat_file(fields: Fields, key: str) -> str | None:
    """``zfs.kstat_file``: a path, relative to the config file's directory."""
    return fields.file_path(key)


def create(cfg, procfs: str, sysfs: str) -> "ZfsCollector":
    """The collector for a dbhost_exporter.config.DbhostConfig (its ``zfs`` settings)."""
    return ZfsCollector(procfs, kstat_file=cfg.settings[SPEC.name]["kstat_file"])

ARC_KINDS = ("demand_data", "demand_metadata", "prefetch_data", "prefetch_metadata")
ARC_STATES = ("mru", "mfu", "mru_ghost", "mfu_ghost", "uncached")
_INT_KSTAT_TYPES = frozenset({1, 2, 3, 4, 5, 6})


_INTEGER = re.compile(r"-?[0-9]+")


def _int(text: str) -> int | None:
    """A plain decimal integer (no '+', '_' or blanks that int() would accept), else None."""
    return int(text) if _INTEGER.fullmatch(text) else None


def parse_linux_arcstats(text: str, source: str = "arcstats") -> dict[str, int]:
    """Rows of /proc/spl/kstat/zfs/arcstats as name -> integer value.

    The kstat header (7 numbers) and the ``name type data`` line come first; every row after
    them is ``<name> <type> <value>``. Types 1-6 are the integer kstat types (INT32, UINT32,
    INT64, UINT64, LONG, ULONG; arcstats uses UINT64 and one INT64); CHAR (0) and STRING (7)
    rows are skipped. Anything else (no ``name type data`` line, a row without three fields, a
    type or an integer value that is not a number) means the file is not what the kernel
    wrote: ValueError naming the line, never a silently shorter set of series."""
    stats: dict[str, int] = {}
    rows = False
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not rows:
            if parts == ["name", "type", "data"]:
                rows = True
            continue
        if not parts:
            continue
        kstat_type = _int(parts[1]) if len(parts) == 3 else None
        if kstat_type is None:
            raise ValueError(f"{source} line {n}: not a kstat row (name type data): {line.strip()[:80]!r}")
        if kstat_type not in _INT_KSTAT_TYPES:
            continue
        value = _int(parts[2])
        if value is None:
            raise ValueError(f"{source} line {n}: value of {parts[0]} is not an integer: {parts[2][:40]!r}")
        stats[parts[0]] = value
    if not rows:
        raise ValueError(f"{source}: no 'name type data' line: not a kstat file")
    if not stats:
        raise ValueError(f"{source}: no statistics after the 'name type data' line")
    return stats


# kstat -p rows that are not integers by nature
_KSTAT_TEXT_ROWS = frozenset({"class", "crtime", "snaptime"})


def parse_kstat_p(text: str, source: str = "kstat -p output") -> dict[str, int]:
    """``kstat -p zfs:0:arcstats`` output: ``zfs:0:arcstats:<name>\\t<value>``.
    ``class`` (a string), ``crtime``/``snaptime`` (fractional seconds) and rows of other kstats
    are skipped; a line that is not ``module:instance:name:statistic<TAB>value``, or an arcstats
    row whose value is not an integer, is a ValueError naming the line (a wrong file, or a cut
    one), as is a text without any arcstats statistic."""
    stats: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition("\t")
        if not sep:
            parts = line.split(None, 1)
            key, value = (parts + [""])[:2]
        fields = key.strip().split(":")
        if len(fields) != 4 or not all(fields):
            raise ValueError(f"{source} line {n}: not a kstat -p row (module:instance:name:statistic): "
                             f"{line.strip()[:80]!r}")
        if fields[0] != "zfs" or fields[2] != "arcstats" or fields[3] in _KSTAT_TEXT_ROWS:
            # another kstat in the same capture (kstat -p zfs, kstat -p) is not ours to judge
            continue
        number = _int(value.strip())
        if number is None:
            raise ValueError(f"{source} line {n}: value of {fields[3]} is not an integer: {value.strip()[:40]!r}")
        stats[fields[3]] = number
    if not stats:
        raise ValueError(f"{source}: no zfs:N:arcstats statistics")
    return stats


class ZfsCollector:
    name = "zfs"

    def __init__(self, procfs: str, kstat_file: str | None = None, allow_command: bool | None = None,
                 kstat_timeout: float = 5.0):
        self.procfs = procfs
        self.kstat_file = kstat_file
        self.allow_command = (not sys.platform.startswith("linux")) if allow_command is None else allow_command
        self.kstat_timeout = kstat_timeout
        self._said_absent = False

    def _read(self) -> dict[str, int] | None:
        if self.kstat_file:
            text = read_text(self.kstat_file)
            if text is None:
                raise OSError(f"cannot read zfs.kstat_file {self.kstat_file}")
            return parse_kstat_p(text, self.kstat_file)
        path = os.path.join(self.procfs, "spl", "kstat", "zfs", "arcstats")
        if os.path.exists(path):
            text = read_text(path)
            if text is None:   # ZFS is there but we may not read it: a failure, not "no ZFS"
                raise OSError(f"cannot read {path}")
            return parse_linux_arcstats(text, path)
        if self.allow_command and shutil.which("kstat"):
            out = subprocess.run(["kstat", "-p", "zfs:0:arcstats"], capture_output=True, text=True,
                                 timeout=self.kstat_timeout, check=False)
            if out.returncode != 0:   # kstat exits 1 when nothing matches: no ZFS loaded
                return None
            return parse_kstat_p(out.stdout, "kstat -p zfs:0:arcstats")
        return None

    def collect(self) -> Iterable[Metric]:
        stats = self._read()
        if not stats:
            if not self._said_absent:
                log.debug("no ZFS arcstats found (procfs %s); the zfs collector yields nothing", self.procfs)
                self._said_absent = True
            return
        yield from self.families(stats)
        if self.kstat_file:
            # a capture written by a job (cron: kstat -p ... > file) that stopped is served as it
            # was: its age is what tells (review host #10)
            try:
                mtime = os.stat(self.kstat_file).st_mtime
            except OSError:
                return
            fam = SPEC.family("dbhost_zfs_kstat_file_mtime_seconds")
            fam.add_metric([self.kstat_file], mtime)
            yield fam

    @staticmethod
    def families(s: dict[str, int]) -> Iterable[Metric]:
        # every statistic exported here is a count or a size: a negative value is corruption
        # (or a signed kstat misread), and a negative counter would break rate(); leave it out
        s = {k: v for k, v in s.items() if v >= 0}
        def by_kind(suffix: str, name: str) -> Metric | None:
            fam = SPEC.family(name)
            for kind in ARC_KINDS:
                if f"{kind}_{suffix}" in s:
                    fam.add_metric([kind], s[f"{kind}_{suffix}"])
            return fam if fam.samples else None

        def single(name: str, key: str) -> Metric | None:
            if key not in s:
                return None
            fam = SPEC.family(name)
            fam.add_metric([], s[key])
            return fam

        states = SPEC.family("dbhost_zfs_arc_state_hits_total")
        for state in ARC_STATES:
            if f"{state}_hits" in s:
                states.add_metric([state], s[f"{state}_hits"])
        errors = SPEC.family("dbhost_zfs_l2arc_errors_total")
        for kind, key in (("io", "l2_io_error"), ("checksum", "l2_cksum_bad")):
            if key in s:
                errors.add_metric([kind], s[key])
        families = [
            by_kind("hits", "dbhost_zfs_arc_hits_total"),
            by_kind("misses", "dbhost_zfs_arc_misses_total"),
            by_kind("iohits", "dbhost_zfs_arc_iohits_total"),
            states if states.samples else None,
            single("dbhost_zfs_arc_size_bytes", "size"),
            single("dbhost_zfs_arc_target_bytes", "c"),
            single("dbhost_zfs_arc_min_bytes", "c_min"),
            single("dbhost_zfs_arc_max_bytes", "c_max"),
            single("dbhost_zfs_l2arc_hits_total", "l2_hits"),
            single("dbhost_zfs_l2arc_misses_total", "l2_misses"),
            single("dbhost_zfs_l2arc_size_bytes", "l2_size"),
            single("dbhost_zfs_l2arc_allocated_bytes", "l2_asize"),
            single("dbhost_zfs_l2arc_read_bytes_total", "l2_read_bytes"),
            single("dbhost_zfs_l2arc_written_bytes_total", "l2_write_bytes"),
            single("dbhost_zfs_l2arc_feeds_total", "l2_feeds"),
            errors if errors.samples else None,
            single("dbhost_zfs_l2arc_write_errors_total", "l2_writes_error"),
        ]
        for fam in families:
            if fam is not None:
                yield fam
