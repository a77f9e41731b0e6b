"""Reading the rendered alert pack (helpers for the tests in this folder)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "alerts"
RULE_TESTS = ALERTS / "tests"
RUNBOOKS = ROOT / "docs" / "runbooks"
RULE_FILES = (ALERTS / "recording.rules.yml", ALERTS / "alerts.rules.yml")


def alert_rules() -> list[dict]:
    doc = yaml.safe_load((ALERTS / "alerts.rules.yml").read_text())
    return [r for g in doc["groups"] for r in g["rules"]]


def records() -> list[str]:
    doc = yaml.safe_load((ALERTS / "recording.rules.yml").read_text())
    return [r["record"] for g in doc["groups"] for r in g["rules"]]


def rule_metric_names(prefix: str) -> set[str]:
    """Raw metric names (not recorded series) with this prefix that the rules read."""
    names = set()
    for f in RULE_FILES:
        for g in yaml.safe_load(f.read_text())["groups"]:
            for r in g["rules"]:
                names |= set(re.findall(rf"(?<![:\w])({prefix}_[a-z0-9_]+)(?![:\w])", r["expr"]))
    return names
