"""The dbhost-exporter config file (``--config.file``, YAML). Every field is optional; the
defaults are listed by ``dbhost-exporter --help`` (and docs/dbhost-exporter.md). For example:

    collectors: {process: false}    # one switch per collector
    max_series: 20000               # per collector and scrape; the rest is dropped and counted
    lun:
      include_types: [scsi, multipath, nvme, loop]   # of scsi, multipath, nvme, virtio, xen, loop, ram, zram, other
      identity_refresh_seconds: 600
      default_role: misc
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

The keys, defaults, limits and checks are the declarations' (exporter_common.declare.Setting):
the exporter-level ones (``max_series``) on dbhost_exporter.scrape.SPEC, each collector's under
its own key on the collector module's SPEC; ``collectors`` has one switch per collector
(on unless the collector is declared opt_in). ``dbhost-exporter --help`` lists them all.

Errors are ConfigError(file, field, message) -> exit status 2.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from exporter_common.config import ErrorList, Fields, load_yaml

from .collectors import collector_specs
from .collectors.lun import LunConfig
from .scrape import SPEC as EXPORTER

SPECS = collector_specs()                  # in scrape order
COLLECTORS = tuple(spec.name for spec in SPECS)
DEFAULT_MAX_SERIES = EXPORTER.default("max_series")


def _read_settings(spec_settings, fields: Fields) -> dict[str, Any]:
    return {s.key: s.read(fields) for s in spec_settings}


def default_settings() -> dict[str, dict[str, Any]]:
    """Every collector's settings as an empty section reads them (the declared defaults, in the
    types the parse gives: a custom setting's parse sees the key absent)."""
    return {spec.name: _read_settings(spec.settings, Fields("", spec.name, {})) for spec in SPECS}


@dataclass
class DbhostConfig:
    collectors: dict[str, bool] = field(default_factory=lambda: {c.name: not c.opt_in for c in SPECS})
    max_series: int = DEFAULT_MAX_SERIES
    # collector name -> setting key -> value, for every collector (settings-less ones: {})
    settings: dict[str, dict[str, Any]] = field(default_factory=default_settings)

    # The shapes the collectors' callers know (views of ``settings``).
    @property
    def lun(self) -> LunConfig:
        return LunConfig(**self.settings["lun"])

    @property
    def extra_groups(self) -> list[tuple[str, str]]:
        return self.settings["process"]["extra_groups"]

    @property
    def zfs_kstat_file(self) -> str | None:
        return self.settings["zfs"]["kstat_file"]


def load_config(path: str | None) -> DbhostConfig:
    """Every problem of the file is reported at once (one ConfigError per independent part:
    the switches, each exporter-level setting, each collector's section, unknown keys)."""
    cfg = DbhostConfig()
    if not path:
        return cfg
    root = Fields(path, "", load_yaml(path))
    sections = list(SPECS)       # a collector without settings has its section too: `memory: {x: 1}` is memory.x
    root.declare("collectors", *(s.key for s in EXPORTER.settings), *(spec.name for spec in sections))
    errs = ErrorList()

    with errs.part():
        switches = root.sub("collectors")
        for spec in SPECS:
            cfg.collectors[spec.name] = switches.bool(spec.name, not spec.opt_in)
        switches.reject_unknown()

    for setting in EXPORTER.settings:
        with errs.part():
            setattr(cfg, setting.key, setting.read(root))

    for spec in sections:
        with errs.part():
            section = root.sub(spec.name)
            values = _read_settings(spec.settings, section)
            section.reject_unknown()
            cfg.settings[spec.name] = values

    with errs.part():
        root.reject_unknown()
    errs.check()
    return cfg
