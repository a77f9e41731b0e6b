"""Render the rule files: fill the threshold templates of mixin.rules, lay out the groups.

    from mixin import config, render
    cfg = config.load()
    render.recording(cfg)          # the recording.rules.yml document
    render.alerting(cfg)           # the alerts.rules.yml document
    render.dump_yaml(doc, header)  # as text
"""
from __future__ import annotations

import re

import yaml

from mixin import records, rules
from mixin.config import Config
from mixin.thresholds import Threshold, duration_seconds

_SUB = re.compile(r"\$\{([A-Za-z][A-Za-z0-9_]*)(?:\.(floor)\.([a-z_]+)|\.(for))?(?:\|([a-z]+))?\}")
GROUPS = {"monitoring": "monitoring.alerts", "oracle": "oracle.alerts", "host": "host.alerts",
          "storage": "storage.alerts", "zfs": "zfs.alerts"}


def fmt_number(v: float) -> str:
    """Shortest exact decimal form: 0.002 -> '0.002', 10 -> '10'."""
    if float(v).is_integer():
        return str(int(v))
    return format(v, ".10g")


def fmt_human(v: float, how: str) -> str:
    if how == "dur":          # seconds -> ms/s
        if v < 1:
            return fmt_number(round(v * 1000, 6)) + "ms"
        return fmt_number(v) + "s"
    if how == "pct":
        return fmt_number(round(v * 100, 6)) + "%"
    if how == "num":
        return fmt_number(v)
    if how == "bytes":        # binary units, as humanize1024 shows a value (1 GiB, 512 MiB)
        for unit, size in (("TiB", 1024 ** 4), ("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
            if v >= size:
                return fmt_number(round(v / size, 3)) + " " + unit
        return fmt_number(v) + " B"
    raise ValueError(f"unknown format {how!r}")


def substitute(text: str, th: dict[str, Threshold], used: set | None = None) -> str:
    """Fill in ${ID}, ${ID.floor.NAME}, ${ID.for} and their |fmt forms."""
    def repl(m: re.Match) -> str:
        tid, is_floor, floor_name, is_for, how = m.groups()
        if tid not in th:
            raise KeyError(f"template refers to unknown threshold {tid!r}: {m.group(0)}")
        t = th[tid]
        if used is not None:
            used.add(tid)
        if is_for:
            return t.for_
        v = t.floor(floor_name).value if is_floor else t.value
        return fmt_human(v, how) if how else fmt_number(v)
    return _SUB.sub(repl, text)


def field_notes(th: dict[str, Threshold], ids) -> list[str]:
    """The field-notes ids behind these threshold ids, first seen first."""
    notes: list[str] = []
    for tid in ids:
        notes += [n for n in th[tid].notes if n not in notes]
    return notes


# libyaml's emitter where PyYAML has it (its wheels do): the same bytes as the pure-Python one for
# these documents (mixin.generate --check compares them), about 15x faster (6.1 -> 0.4 s a run).
class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    pass


def _str_presenter(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)


def dump_yaml(doc, header: str) -> str:
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=4096, allow_unicode=True)
    return header + body


def recording(cfg: Config) -> dict:
    return {"groups": [{"name": name, "rules": [{"record": r, "expr": e} for r, e in group]}
                       for name, group in records.groups(cfg)]}


def _dashboard_query(a: dict) -> str:
    """Open the dashboard on the alert's own database / host, where the alert carries that
    label (its own summary/description use it)."""
    text = a["summary"] + a["description"]
    if a["dashboard"].startswith("oracle-") and "$labels.database" in text:
        return "?var-database={{ $labels.database }}"
    if a["dashboard"].startswith("host-") and "$labels.instance" in text:
        return "?var-host={{ $labels.instance }}"
    return ""


def _fleetview_links(cfg: Config, a: dict) -> dict[str, str]:
    """Without Grafana, the Grafana-free pages (oracle-fleetview): an alert about one database (its
    summary or description names $labels.database) links to that database's capacity page
    (capacity_url), every other alert to the fleet wallboard (wallboard_url)."""
    if "$labels.database" in a["summary"] + a["description"]:
        url = cfg.fleetview_link("capacity?database={{ $labels.database }}")
        return {"capacity_url": url} if url else {}
    url = cfg.fleetview_link("wallboard")
    return {"wallboard_url": url} if url else {}


def blind_bridge(cfg: Config, alert: str, labels: dict, expr: str) -> str:
    """alertfix #1: a firing page stays firing while the exporter target that measures it is blind.

    Every gauge is read through last_over_time(...[3m]); when the exporter behind a firing page stops
    answering, its data goes stale after 3 minutes and the page would resolve (RESOLVED sent while the
    tablespace is still full, the redo LUN still without a path). The rule's own ALERTS series (this
    rule only: its alertname, state firing and its static labels) is kept while its scrape target's
    `up` is 0, or the target is gone from `up` but remembered (target:up:expected: a target retired
    on purpose is forgotten by deleting that memory, ScrapeTargetVanished's runbook). Once the target
    answers again, the data alone decides: the page resolves if the condition is over. `alertstate`
    and the rule's static labels are dropped so the kept series has the expression's labels (the same alert, `for` not restarted);
    its value is 1 while bridged."""
    target = cfg.by()
    ups = "up{" + cfg.selector("oracle", "dbhost", "node") + "}"
    matchers = ", ".join([f'alertname="{alert}"', 'alertstate="firing"'] +
                         [f'{k}="{v}"' for k, v in labels.items()])
    # the series the expression itself gives carry neither alertstate nor the rule's own labels: drop
    # them, or `or` keeps both copies and the rule fails (same labels once the rule's are applied)
    kept = "ALERTS{" + matchers + "}"
    for name in ("alertstate", "alertname", *labels):
        kept = f'label_replace({kept}, "{name}", "", "{name}", ".*")'
    return ("(\n" + expr + "\n)\n"
            "or\n"
            "(\n"
            "  " + kept + "\n"
            "  unless on (" + target + ") " + ups + " == 1\n"
            "  and on (" + target + ") (" + ups + " == 0 or " + records.TARGETS_EXPECTED + ")\n"
            ")")


def alerting(cfg: Config, used: set | None = None) -> dict:
    th = cfg.thresholds
    out: dict[str, list] = {}
    for a in rules.alerts(cfg):
        primary = th[a["ids"][0]]
        labels = {"severity": primary.severity, "layer": a["layer"],
                  "field_note": ",".join(field_notes(th, a["ids"]))}
        labels.update(a.get("labels", {}))
        ann = {"summary": substitute(a["summary"], th, used),
               "description": substitute(a["description"], th, used),
               "runbook_url": cfg.runbook_url(a["alert"])}
        url = cfg.dashboard_url(a["dashboard"], _dashboard_query(a)) if a.get("dashboard") else None
        if url:
            ann["dashboard_url"] = url
        ann.update(_fleetview_links(cfg, a))
        expr = substitute(a["expr"], th, used)
        if primary.severity == "critical" and a.get("blind_bridge", a["layer"] != "monitoring"):
            expr = blind_bridge(cfg, a["alert"], labels, expr)
        rule = {"alert": a["alert"], "expr": expr}
        dur = a.get("for_", primary.for_)
        if duration_seconds(dur) > 0:
            rule["for"] = dur
        rule["labels"] = labels
        rule["annotations"] = ann
        out.setdefault(GROUPS[a["layer"]], []).append(rule)
    return {"groups": [{"name": g, "rules": rs} for g, rs in out.items()]}
