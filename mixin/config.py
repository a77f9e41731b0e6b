"""The mixin's one configuration: what a site changes without editing the package.

    from mixin.config import Config, load
    cfg = load()                      # the defaults (what the repository ships)
    cfg = load("site.yml")            # the defaults, overridden by one small YAML file
    cfg.th("R1").value                # thresholds, from alerts/thresholds.yaml
    cfg.selector("oracle")            # 'job="oracle"'
    cfg.runbook_url("OracleDown")     # where a notification's runbook link points

The override file (every key optional; relative paths are relative to the file). Whatever it
does not name keeps the shipped default, so a threshold a later release adds takes its shipped value:

    thresholds:                               # change single thresholds, or single fields of one:
      R2: {value: 0.004}                      #   value, for, severity, noise_floor: {NAME: {value: N}}
      R13: {value: 3, for: 15m, noise_floor: {waits: {value: 2}}}
    # thresholds: my-thresholds.yaml          # ... or a FULL REPLACEMENT of alerts/thresholds.yaml
    #                                         # (same format; must list every threshold the pack uses)
    jobs:                                     # Prometheus job names of each scrape target kind
      oracle: oracle-prod                     # one name ...
      node: [node, node-exporter]             # ... or several (selector job=~"node|node-exporter")
    target_labels: [job, instance, site]      # labels of a scrape target kept by every aggregation (the default)
    runbook_base_url: https://git.example.com/dba/monitoring/blob/main/docs/runbooks/
    grafana_url: https://grafana.example.com  # alerts get a dashboard_url only when this is set
    fleetview_url: https://fleetview.example.com/   # without grafana_url, alerts link to the Grafana-free pages
                                              # here (oracle-fleetview): capacity_url, wallboard_url; null: none
    flash_luns:                               # dbhost_lun_info matchers of flash LUNs (judged by I2_flash),
      - 'device=~"nvme.+"'                    # any one matches (default: NVMe devices only)
      - 'model=~"FlashArray.*"'
    oracle_filesystems: 'mountpoint=~"/u01|/u02|/oraarch.*"'   # node_filesystem_* matchers of the file systems
                                              # Oracle writes to (data files, archive destinations, diag and
                                              # audit directories): HostFilesystem* alerts (issue 23)

Render with it: `make generate MIXIN_CONFIG=site.yml` (writes under build/mixin/, see
mixin/generate.py); the repository's own files are always rendered from the defaults.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from mixin import strict_yaml
from mixin import thresholds as thresholds_mod
from mixin.thresholds import Threshold

# The stack `make run` starts serves docs/ over HTTP from its webhook receiver (stack/webhook.py,
# port 19199, the port alerts/alertmanager.yml's receivers use), so the default runbook links
# open the runbook out of the box; a site points them at its own copy of docs/runbooks/.
DEFAULT_RUNBOOK_BASE = "http://127.0.0.1:19199/docs/runbooks/"
# Without Grafana, the alerts link to the pages of oracle-fleetview (exporters/fleetview, issue 25),
# which `make run` serves on port 19180: the capacity page of the alert's database, else the wallboard.
DEFAULT_FLEETVIEW_URL = "http://127.0.0.1:19180/"
DEFAULT_JOBS = {"oracle": ("oracle",), "dbhost": ("dbhost",), "node": ("node",)}
KEYS = ("thresholds", "jobs", "target_labels", "runbook_base_url", "grafana_url", "fleetview_url", "flash_luns",
        "oracle_filesystems")
# LUNs judged by flash latency (I2_flash) rather than spinning-disk latency (I2): a label matcher on
# dbhost_lun_info. NVMe devices are flash; SAN arrays say so in their model string, which a site names.
DEFAULT_FLASH_LUNS = ('device=~"nvme.+"',)
# The file systems Oracle writes to (issue 23): OFA mount points (/u01.., ORACLE_BASE with diag/ and
# admin/<db>/adump), data and archive mounts by their usual names; a site names its own.
DEFAULT_ORACLE_FILESYSTEMS = ('mountpoint=~"/u[0-9][0-9](/.*)?|/ora[a-z0-9_]*(/.*)?|/arch[a-z0-9_]*(/.*)?'
                              '|/fra(/.*)?|/opt/oracle(/.*)?|/oracle(/.*)?"', 'fstype!~"tmpfs|ramfs|squashfs|overlay"')
_MATCHERS = re.compile(r'\s*[a-zA-Z_]\w*\s*(=|!=|=~|!~)\s*"[^"]*"\s*(,\s*[a-zA-Z_]\w*\s*(=|!=|=~|!~)\s*"[^"]*"\s*)*')
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_URL = re.compile(r"^https?://[^\s/]+(/\S*)?$")


class ConfigError(ValueError):
    """A bad override file or a missing threshold; the message names the file and key."""


@dataclass(frozen=True)
class Config:
    thresholds_file: Path = thresholds_mod.DEFAULT_PATH
    jobs: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_JOBS))
    # alertfix #3: `site` kept (empty where the series have none), so the shipped routing, which
    # tells same-named databases apart by `site`, and the rules agree
    target_labels: tuple[str, ...] = ("job", "instance", "site")
    runbook_base_url: str = DEFAULT_RUNBOOK_BASE
    grafana_url: str | None = None
    fleetview_url: str | None = DEFAULT_FLEETVIEW_URL
    flash_luns: tuple[str, ...] = DEFAULT_FLASH_LUNS
    oracle_filesystems: tuple[str, ...] = DEFAULT_ORACLE_FILESYSTEMS
    thresholds: dict[str, Threshold] = field(default_factory=dict, compare=False, repr=False)
    # a site file's per-threshold changes ({id: {value: ...}}), applied by load(); and that file
    threshold_changes: dict = field(default_factory=dict, compare=False, repr=False)
    site_file: Path | None = None

    # ---------------------------------------------------------------- thresholds
    def th(self, tid: str) -> Threshold:
        """The threshold with this id (R1, R17_write, I1_red ...), exactly as thresholds.yaml names it."""
        return self.thresholds[tid]

    # ---------------------------------------------------------------- selectors
    def job_names(self, *kinds: str) -> tuple[str, ...]:
        out: list[str] = []
        for kind in kinds:
            out += [n for n in self.jobs[kind] if n not in out]
        return tuple(out)

    def selector(self, *kinds: str) -> str:
        """The label matcher of the scrape jobs of these kinds: job="oracle", job=~"dbhost|node"."""
        names = self.job_names(*kinds)
        if len(names) == 1:
            return f'job="{names[0]}"'
        return 'job=~"' + "|".join(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\\\1", n) for n in names) + '"'

    def job_label(self, kind: str) -> str:
        """The job label a series of this kind carries in the promtool scenarios (the first name)."""
        return self.jobs[kind][0]

    def by(self, *labels: str) -> str:
        """An aggregation's label list: the target labels to keep, then the given ones."""
        return ", ".join(dict.fromkeys((*self.target_labels, *labels)))

    def join(self, *labels: str) -> str:
        """The labels two series from different scrape jobs (node_exporter and dbhost-exporter of
        one host) match on: the target labels but `job`, then the given ones."""
        return ", ".join(dict.fromkeys((*(t for t in self.target_labels if t != "job"), *labels)))

    def flash_lun_info(self) -> str:
        """The dbhost_lun_info series of the LUNs judged as flash (an empty list: none)."""
        if not self.flash_luns:
            return "vector(0) == 1"
        return " or ".join(f"last_over_time(dbhost_lun_info{{{m}}}[3m])" for m in self.flash_luns)

    def oracle_fs(self) -> str:
        """The label matchers (all must hold) of the node_filesystem_* series Oracle writes to."""
        return ", ".join(self.oracle_filesystems)

    # ---------------------------------------------------------------- links
    def runbook_url(self, alert: str) -> str:
        return self.runbook_base_url + alert + ".md"

    def dashboard_url(self, uid: str, query: str = "") -> str | None:
        if not self.grafana_url:
            return None
        return self.grafana_url.rstrip("/") + "/d/" + uid + query

    def fleetview_link(self, page: str) -> str | None:
        """A page of oracle-fleetview ('wallboard', 'capacity?database=...'); None without Grafana-free
        pages (fleetview_url: null) or where Grafana is (grafana_url set: dashboard_url links there)."""
        if not self.fleetview_url or self.grafana_url:
            return None
        return self.fleetview_url.rstrip("/") + "/" + page


def _names(src: str, key: str, value) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) and i.strip() for i in items):
        raise ConfigError(f"{src}: {key}: expected a name or a non-empty list of names, got {value!r}")
    return tuple(items)


class Thresholds(dict):
    """{id: Threshold}; a missing id is a ConfigError naming the thresholds file (never a bare KeyError)."""

    def __init__(self, src: Path, items: dict[str, Threshold]):
        super().__init__(items)
        self.src = src

    def __missing__(self, tid):
        hint = ""
        if Path(self.src).resolve() != thresholds_mod.DEFAULT_PATH:
            hint = (" (a thresholds file replaces alerts/thresholds.yaml in full and must list every "
                    "threshold the pack uses; a site file can instead name only the thresholds it changes: "
                    "`thresholds: {R2: {value: 0.004}}`, see mixin/README.md)")
        raise ConfigError(f"{self.src}: no threshold with id {tid!r}{hint}")


def load(path: str | Path | None = None, thresholds_file: str | Path | None = None) -> Config:
    """The defaults, overridden by the YAML file at `path` (if given); thresholds loaded.
    `thresholds_file` (e.g. a command-line flag) is the base instead of alerts/thresholds.yaml
    (it wins over a site file's `thresholds: FILE`); a site file's per-threshold changes
    (`thresholds: {R2: {value: 0.004}}`) apply on top of whichever base."""
    cfg = Config() if path is None else _override(Config(), Path(path))
    if thresholds_file is None:
        thresholds_file = cfg.thresholds_file
    base = _read_thresholds(thresholds_file)
    src = str(cfg.site_file)
    for tid, changes in cfg.threshold_changes.items():
        if tid not in base:     # an id a later release dropped or renamed, or a typo: never ignored
            close = [t for t in base if t.startswith(f"{tid}_")][:3] or \
                difflib.get_close_matches(str(tid), list(base), n=3)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            raise ConfigError(f"{src}: thresholds.{tid}: unknown threshold id ({hint}every id: docs/thresholds.md)")
        try:
            base[tid] = thresholds_mod.override(base[tid], changes, src, f"thresholds.{tid}")
        except thresholds_mod.ThresholdError as exc:
            raise ConfigError(str(exc)) from None
    return replace(cfg, thresholds_file=Path(thresholds_file), thresholds=Thresholds(Path(thresholds_file), base))


def _read_thresholds(thresholds_file: str | Path) -> dict[str, Threshold]:
    try:
        return thresholds_mod.load(thresholds_file)
    except thresholds_mod.ThresholdError as exc:
        raise ConfigError(str(exc)) from None


def _unknown(src: str, where: str, key, known, what: str = "unknown key") -> ConfigError:
    close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    known_text = ", ".join(map(str, known))
    return ConfigError(f"{src}: {where}{key}: {what} ({hint}known: {known_text})")


def _threshold_changes(src: str, value: dict) -> dict:
    """A site's per-threshold changes: {id: {value, for, severity, noise_floor}}; load() checks them
    against the thresholds file they apply to."""
    if not value:
        raise ConfigError(f"{src}: thresholds: expected a thresholds file name or a mapping of threshold id "
                          f"to the fields to change, e.g. {{R2: {{value: 0.004}}}}, got {value!r}")
    return dict(value)


def _override(cfg: Config, path: Path) -> Config:
    src = str(path)
    try:
        doc = strict_yaml.load_file(path)
    except strict_yaml.YamlError as exc:
        raise ConfigError(str(exc)) from None
    if doc is None:
        return replace(cfg, site_file=path)
    if not isinstance(doc, dict):
        raise ConfigError(f"{src}: expected a mapping of {', '.join(KEYS)}")
    for key in doc:
        if key not in KEYS:
            raise _unknown(src, "", key, KEYS)
    changes: dict = {"site_file": path}
    if "thresholds" in doc:
        value = doc["thresholds"]
        if isinstance(value, str):          # a full replacement of alerts/thresholds.yaml
            changes["thresholds_file"] = (path.parent / value).resolve()
        elif isinstance(value, dict):       # single thresholds, single fields
            changes["threshold_changes"] = _threshold_changes(src, value)
        else:
            raise ConfigError(f"{src}: thresholds: expected a thresholds file name or a mapping of threshold id "
                              f"to the fields to change, e.g. {{R2: {{value: 0.004}}}}, got {value!r}")
    if "jobs" in doc:
        jobs = doc["jobs"]
        if not isinstance(jobs, dict):
            raise ConfigError(f"{src}: jobs: expected a mapping of {', '.join(DEFAULT_JOBS)} to job names")
        for kind in jobs:
            if kind not in DEFAULT_JOBS:
                raise _unknown(src, "jobs.", kind, DEFAULT_JOBS, "unknown kind")
        changes["jobs"] = {**cfg.jobs, **{k: _names(src, f"jobs.{k}", v) for k, v in jobs.items()}}
    if "target_labels" in doc:
        labels = doc["target_labels"] if doc["target_labels"] is not None else []
        if not isinstance(labels, list) or not all(isinstance(x, str) and _LABEL.match(x) for x in labels):
            raise ConfigError(f"{src}: target_labels: expected a list of label names, got {doc['target_labels']!r}")
        if "instance" not in labels:
            raise ConfigError(f"{src}: target_labels: must keep instance (the pack's alerts name the host or exporter "
                              f"by it), got {doc['target_labels']!r}")
        changes["target_labels"] = tuple(labels)
    if "flash_luns" in doc:
        value = doc["flash_luns"]
        if not isinstance(value, list) or not all(isinstance(v, str) and _MATCHERS.fullmatch(v) for v in value):
            raise ConfigError(f"{src}: flash_luns: expected a list of PromQL label matchers like "
                              f"'device=~\"nvme.+\"', got {value!r}")
        changes["flash_luns"] = tuple(value)
    if "oracle_filesystems" in doc:
        value = doc["oracle_filesystems"]
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and _MATCHERS.fullmatch(v) for v in value):
            raise ConfigError(f"{src}: oracle_filesystems: expected PromQL label matchers like "
                              f"'mountpoint=~\"/u01|/u02\"', got {doc['oracle_filesystems']!r}")
        changes["oracle_filesystems"] = tuple(value)
    for key in ("runbook_base_url", "grafana_url", "fleetview_url"):
        if key not in doc:
            continue
        value = doc[key]
        if key in ("grafana_url", "fleetview_url") and value in (None, ""):
            changes[key] = None
            continue
        if not isinstance(value, str) or not _URL.match(value):
            raise ConfigError(f"{src}: {key}: expected an http(s) URL, got {value!r}")
        if key == "runbook_base_url" and not value.endswith("/"):
            raise ConfigError(f"{src}: {key}: must end with '/' (the alert name and .md are appended), got {value!r}")
        changes[key] = value
    return replace(cfg, **changes)
