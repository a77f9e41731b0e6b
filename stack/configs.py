"""Render the project's configuration files for a concrete set of addresses.

One source of truth for each file:

* compose/prometheus/prometheus.yml: the Prometheus config. Compose mounts it
  unchanged; ``make run`` and the tests replace only the target addresses
  (TEMPLATE_ADDRESSES -> 127.0.0.1:<port>) and, for the tests, the intervals.
* alerts/alertmanager.yml (the alert pack's routing): the webhook receivers'
  scheme://host:port are pointed at the local webhook receiver, paths kept
  (/pager, /ticket).
* alerts/*.rules.yml: used as they are; the tests use shortened copies
  (shorten_rules) because the rules' ``for`` durations are minutes long.
* compose/scale-out/agent.yml: the Prometheus agent config, rendered per shard.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml
from exporter_common.config import strict_yaml, yaml_error_message

ROOT = Path(__file__).resolve().parent.parent
PROMETHEUS_TEMPLATE = ROOT / "compose" / "prometheus" / "prometheus.yml"
AGENT_TEMPLATE = ROOT / "compose" / "scale-out" / "agent.yml"
ALERTS_DIR = ROOT / "alerts"
RULE_FILES = ("recording.rules.yml", "alerts.rules.yml")

# Addresses as written in the template (compose service names) -> component.
TEMPLATE_ADDRESSES = {
    "oracle-exporter:19161": "oracle",
    "host.docker.internal:19162": "dbhost",
    "host.docker.internal:19100": "node",
    "localhost:19090": "prometheus",
    "alertmanager:19093": "alertmanager",
}


class ConfigRenderError(Exception):
    pass


def load(path: Path) -> Any:
    """A YAML file of the stack (Prometheus template, Alertmanager routing, rule files):
    a key given twice or too deep nesting is an error naming file, line and key
    (exporter_common.config.StrictLoader), like every config file of the exporters."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ConfigRenderError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigRenderError(f"{path}: not UTF-8 text ({exc.reason})") from None
    try:
        return strict_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigRenderError(f"{path}: {yaml_error_message(exc)}") from None
    except RecursionError:
        raise ConfigRenderError(f"{path}: invalid YAML: nested too deeply") from None


def dump(doc: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=False)
    return path


def _target_lists(doc: dict):
    """Every static_configs[].targets list in scrape and alerting configs."""
    for sc in doc.get("scrape_configs") or []:
        for st in sc.get("static_configs") or []:
            yield st.setdefault("targets", [])
    for am in (doc.get("alerting") or {}).get("alertmanagers") or []:
        for st in am.get("static_configs") or []:
            yield st.setdefault("targets", [])


def replace_addresses(doc: dict, addresses: dict[str, str]) -> dict:
    """Replace template addresses by real ones: addresses maps component -> host:port.

    Every address in the template must be a known component and every
    component must be given, so the template and make run cannot drift apart."""
    out = copy.deepcopy(doc)
    missing = sorted(set(TEMPLATE_ADDRESSES.values()) - set(addresses))
    if missing:
        raise ConfigRenderError(f"no address given for: {', '.join(missing)}")
    for targets in _target_lists(out):
        for i, t in enumerate(targets):
            comp = TEMPLATE_ADDRESSES.get(t)
            if comp is None:
                raise ConfigRenderError(f"template target {t!r} is not one of {sorted(TEMPLATE_ADDRESSES)}")
            targets[i] = addresses[comp]
    return out


def render_prometheus(addresses: dict[str, str], scrape_interval: str | None = None,
                      evaluation_interval: str | None = None,
                      template: Path = PROMETHEUS_TEMPLATE,
                      extra_targets: dict[str, list[str]] | None = None) -> dict:
    """The Prometheus config for make run / the tests (intervals only for tests).
    extra_targets: {job: [host:port, ...]} appended to that job's first static_configs
    (make run DEMO=1's demo host)."""
    doc = replace_addresses(load(template), addresses)
    for job, targets in (extra_targets or {}).items():
        sc = next((sc for sc in doc["scrape_configs"] if sc.get("job_name") == job), None)
        if sc is None or not sc.get("static_configs"):
            raise ConfigRenderError(f"{template}: no job {job!r} with static_configs for {targets}")
        sc["static_configs"][0]["targets"].extend(targets)
    if scrape_interval:
        doc["global"]["scrape_interval"] = scrape_interval
        doc["global"]["scrape_timeout"] = scrape_interval
        for sc in doc["scrape_configs"]:
            sc.pop("scrape_interval", None)
            sc.pop("scrape_timeout", None)
    if evaluation_interval:
        doc["global"]["evaluation_interval"] = evaluation_interval
    return doc


def render_alertmanager(source: Path, webhook_base: str, timing: dict[str, str] | None = None) -> dict:
    """alerts/alertmanager.yml with every webhook URL's scheme://host:port replaced by
    webhook_base (e.g. http://127.0.0.1:19199), paths kept. timing overrides
    group_wait/group_interval/repeat_interval on every route (tests only)."""
    doc = load(source)
    if not isinstance(doc, dict) or not isinstance(doc.get("receivers"), list):
        raise ConfigRenderError(f"{source}: no receivers list")
    base = urlsplit(webhook_base)
    n = 0
    for rcv in doc["receivers"]:
        for wh in rcv.get("webhook_configs") or []:
            u = urlsplit(wh["url"])
            wh["url"] = urlunsplit((base.scheme, base.netloc, u.path, u.query, u.fragment))
            n += 1
    if n == 0:
        raise ConfigRenderError(f"{source}: no webhook_configs to point at the local receiver")
    if timing:
        def walk(route: dict) -> None:
            for k, v in timing.items():
                if k in route or route is doc.get("route"):
                    route[k] = v
            for child in route.get("routes") or []:
                walk(child)
        walk(doc.setdefault("route", {}))
    return doc


_DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")


def duration_seconds(text: str) -> float:
    text = str(text).strip()
    m = _DURATION.match(text) if len(text) <= 40 else None
    if not m or not any(m.groups()):
        raise ConfigRenderError(f"not a Prometheus duration: {text[:40]!r}" + ("..." if len(text) > 40 else ""))
    d, h, mi, s, ms = (int(g or 0) for g in m.groups())
    return d * 86400 + h * 3600 + mi * 60 + s + ms / 1000


def shorten_rules(source: Path, dest: Path, max_for: str, max_interval: str | None = None) -> dict[str, str]:
    """Copy a rule file, capping every alert's ``for`` at max_for and, if given,
    every group's evaluation ``interval`` at max_interval (tests only: the real
    durations are minutes). Returns {alert or group: original value} of what changed."""
    doc = load(source)
    changed: dict[str, str] = {}
    cap = duration_seconds(max_for)
    for group in (doc or {}).get("groups") or []:
        if max_interval and "interval" in group and duration_seconds(group["interval"]) > duration_seconds(max_interval):
            changed[f"group {group.get('name', '?')}"] = group["interval"]
            group["interval"] = max_interval
        for rule in group.get("rules") or []:
            if "for" in rule and duration_seconds(rule["for"]) > cap:
                changed[rule.get("alert", "?")] = rule["for"]
                rule["for"] = max_for
    dump(doc, dest)
    return changed


def render_agent(shard: int, shards: int, exporter_address: str, remote_write_url: str,
                 targets_file: str, scrape_interval: str | None = None,
                 template: Path = AGENT_TEMPLATE) -> dict:
    """The scale-out agent config for one shard (see docs/scale-out.md)."""
    if not 0 <= shard < shards:
        raise ConfigRenderError(f"shard {shard} outside 0..{shards - 1}")
    doc = load(template)
    doc["global"]["external_labels"]["shard"] = str(shard)
    if scrape_interval:
        doc["global"]["scrape_interval"] = scrape_interval
        doc["global"]["scrape_timeout"] = scrape_interval
    for sc in doc["scrape_configs"]:
        if scrape_interval:           # every job at the given interval (tests)
            sc.pop("scrape_interval", None)
            sc.pop("scrape_timeout", None)
        for fsd in sc.get("file_sd_configs") or []:
            fsd["files"] = [targets_file]
        for rl in sc.get("relabel_configs") or []:
            if rl.get("action") == "hashmod":
                rl["modulus"] = shards
            elif rl.get("action") == "keep" and rl.get("source_labels") == ["__tmp_shard"]:
                rl["regex"] = str(shard)
            elif rl.get("target_label") == "__address__" and rl.get("replacement") == "oracle-exporter:19161":
                rl["replacement"] = exporter_address
        for st in sc.get("static_configs") or []:     # the exporter's own /metrics (process_*)
            st["targets"] = [exporter_address if t == "oracle-exporter:19161" else t for t in st.get("targets", [])]
    for rw in doc.get("remote_write") or []:
        rw["url"] = remote_write_url
    return doc
