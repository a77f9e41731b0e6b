"""Shared helpers for the dbhost-exporter tests (fixture trees come from make_fixtures.py).

A module of its own, not conftest: several test directories have a conftest, and
`from conftest import` would pick whichever was imported first."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXPORTER = [sys.executable, "-m", "dbhost_exporter.cli"]



def run_once(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(HERE))   # lets the generator's fixtures_proc import work too
    return subprocess.run([*EXPORTER, "--once", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO, env=env)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Exposition text -> {(sample name, sorted labels): value}."""
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(parsed, name: str, **labels) -> float:
    return parsed[(name, tuple(sorted(labels.items())))]
