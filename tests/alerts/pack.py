"""Reading the rendered alert pack (helpers for the tests in this folder)."""
from __future__ import annotations

import copy
import functools
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "alerts"
RULE_TESTS = ALERTS / "tests"
RUNBOOKS = ROOT / "docs" / "runbooks"
RULE_FILES = (ALERTS / "recording.rules.yml", ALERTS / "alerts.rules.yml")


@functools.cache
def _parsed(path: Path, mtime_ns: int, size: int):
    return yaml.safe_load(path.read_text())


def load_rule_file(path: Path):
    """The YAML document of a file of the pack (rules, rule tests, alertmanager.yml), parsed once
    per version of the file (PyYAML takes about 0.2 s for alerts.rules.yml, and some tests read it
    once per threshold); every caller gets its own copy, so a test that changes what it got
    changes nothing for the next."""
    st = path.stat()
    return copy.deepcopy(_parsed(path, st.st_mtime_ns, st.st_size))


def alert_rules() -> list[dict]:
    doc = load_rule_file(ALERTS / "alerts.rules.yml")
    return [r for g in doc["groups"] for r in g["rules"]]


def records() -> list[str]:
    doc = load_rule_file(ALERTS / "recording.rules.yml")
    return [r["record"] for g in doc["groups"] for r in g["rules"]]


def rule_metric_names(prefix: str) -> set[str]:
    """Raw metric names (not recorded series) with this prefix that the rules read."""
    names = set()
    for f in RULE_FILES:
        for g in yaml.safe_load(f.read_text())["groups"]:
            for r in g["rules"]:
                names |= set(re.findall(rf"(?<![:\w])({prefix}_[a-z0-9_]+)(?![:\w])", r["expr"]))
    return names
