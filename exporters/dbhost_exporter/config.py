"""The dbhost-exporter config file (``--config.file``, YAML). Every field is optional.

    collectors: {lun: true, zfs: true, process: true}
    max_series: 50000               # per collector and scrape; the rest is dropped and counted
    lun:
      include_types: [scsi, multipath, nvme, virtio, xen]   # also: loop, ram, zram, other
      identity_refresh_seconds: 300
      default_role: other
      roles:                        # first match wins; exactly one of wwid/device/multipath
        - {wwid: "3600a0b80002a0d2a000026e64cde8e1c", role: redo}
        - {multipath: mpath_data01, role: data}
        - {device: sdq, role: arch}
    process:
      extra_groups:                 # regex on the command line -> group name
        - {name: asm, regex: "^asm_"}
    zfs:
      kstat_file: /var/tmp/arcstats.kstat   # illumos `kstat -p zfs:0:arcstats` text
                                            # (relative: to this file's directory)

Errors are ConfigError(file, field, message) -> exit status 2.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from exporter_common.config import ConfigError, ErrorList, Fields, load_yaml

from .collectors.lun import DEFAULT_KINDS, KINDS, LunConfig, RoleRule

COLLECTORS = ("lun", "zfs", "process", "memory")
DEFAULT_MAX_SERIES = 50000
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9_.:-]+$")


@dataclass
class DbhostConfig:
    collectors: dict[str, bool] = field(default_factory=lambda: {c: True for c in COLLECTORS})
    max_series: int = DEFAULT_MAX_SERIES
    lun: LunConfig = field(default_factory=LunConfig)
    extra_groups: list[tuple[str, str]] = field(default_factory=list)
    zfs_kstat_file: str | None = None


def _lun(root: Fields, path: str) -> LunConfig:
    lun = root.sub("lun")
    types = lun.str_list("include_types", sorted(DEFAULT_KINDS))
    for i, t in enumerate(types):
        if t not in KINDS:
            raise ConfigError(path, f"lun.include_types[{i}]", f"must be one of {', '.join(KINDS)}, got {t!r}")
    refresh = lun.number("identity_refresh_seconds", 300.0, minimum=0)
    default_role = lun.str("default_role", "other")
    if not _LABEL_VALUE.match(default_role):
        raise lun.error("default_role", f"expected a short word (letters, digits, _.:-), got {default_role!r}")
    rules: list[RoleRule] = []
    for item in lun.list_of("roles"):
        role = item.str("role", required=True)
        if not _LABEL_VALUE.match(role):
            raise item.error("role", f"expected a short word (letters, digits, _.:-), got {role!r}")
        keys = [k for k in ("wwid", "device", "multipath") if item.data.get(k) is not None]
        if len(keys) != 1:
            raise item.error("role", "give exactly one of wwid, device, multipath to match")
        value = item.str(keys[0], required=True)
        item.reject_unknown()
        rules.append(RoleRule(keys[0], value, role))
    lun.reject_unknown()
    return LunConfig(include_types=frozenset(types), roles=rules, default_role=default_role,
                     identity_refresh_seconds=float(refresh))


def _extra_groups(root: Fields) -> list[tuple[str, str]]:
    proc = root.sub("process")
    groups = []
    for item in proc.list_of("extra_groups"):
        name = item.str("name", required=True)
        regex = item.str("regex", required=True)
        try:
            re.compile(regex)
        except re.error as exc:
            raise item.error("regex", f"invalid regular expression: {exc}") from None
        item.reject_unknown()
        groups.append((name, regex))
    proc.reject_unknown()
    return groups


def load_config(path: str | None) -> DbhostConfig:
    """Every problem of the file is reported at once (one ConfigError per independent part)."""
    cfg = DbhostConfig()
    if not path:
        return cfg
    root = Fields(path, "", load_yaml(path))
    root.declare("collectors", "max_series", "lun", "process", "zfs")
    errs = ErrorList()

    with errs.part():
        coll = root.sub("collectors")
        for name in COLLECTORS:
            cfg.collectors[name] = coll.bool(name, True)
        coll.reject_unknown()

    with errs.part():
        cfg.max_series = int(root.number("max_series", DEFAULT_MAX_SERIES, minimum=1))
        if root.data.get("max_series") is not None and not isinstance(root.data["max_series"], int):
            raise root.error("max_series", f"expected a whole number, got {root.data['max_series']!r}")

    cfg.lun = errs.value(lambda: _lun(root, path), cfg.lun)
    cfg.extra_groups = errs.value(lambda: _extra_groups(root), [])

    with errs.part():
        zfs = root.sub("zfs")
        cfg.zfs_kstat_file = zfs.file_path("kstat_file")
        zfs.reject_unknown()
    with errs.part():
        root.reject_unknown()
    errs.check()
    return cfg
