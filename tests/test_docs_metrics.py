"""docs/metrics.md documents every metric family both exporters actually expose
(on the demo recording and on the full fixture host tree), and every contract name."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

import make_fixtures  # tests/dbhost is on pytest's pythonpath

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "metrics.md").read_text()


def families(text: str) -> set[str]:
    out = set()
    for fam in text_string_to_metric_families(text):
        name = fam.name
        if fam.type == "counter":
            name += "_total"
        elif fam.type == "info":
            name += "_info"
        out.add(name)
    return out


def documented(name: str) -> bool:
    return f"`{name}`" in DOC or re.search(rf"`{re.escape(name)}[{{(` ]", DOC) is not None


@pytest.mark.slow
def test_oracle_exporter_metrics_documented():
    demo = ROOT / "exporters" / "oracle_exporter" / "demo" / "demo-rac-outage.jsonl"
    res = subprocess.run([sys.executable, "-m", "oracle_exporter", "--replay", str(demo), "--once"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    names = families(res.stdout)
    assert len(names) > 60
    missing = sorted(n for n in names if not documented(n))
    assert not missing, f"undocumented oracle-exporter metrics: {missing}"


def test_dbhost_exporter_metrics_documented(tmp_path):
    fx = make_fixtures.build_tree(tmp_path / "tree", with_proc=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "tests" / "dbhost"))
    res = subprocess.run([sys.executable, "-m", "dbhost_exporter.cli", "--once", "--path.procfs", str(fx.procfs),
                          "--path.sysfs", str(fx.sysfs), "--config.file", str(fx.config)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert res.returncode == 0, res.stderr
    names = families(res.stdout)
    assert {"dbhost_lun_info", "dbhost_process_context_switches_total", "dbhost_zfs_arc_hits_total"} <= names
    missing = sorted(n for n in names if not documented(n))
    assert not missing, f"undocumented dbhost-exporter metrics: {missing}"


def test_contract_metric_names_documented():
    contract = (ROOT.parent / "shared" / "contract.md")
    if not contract.exists():
        import pytest
        pytest.skip("../shared/contract.md not present next to the repository")
    names = set(re.findall(r"`((?:oracle|dbhost)_[a-z0-9_]+)`", contract.read_text()))
    assert names and not sorted(n for n in names if not documented(n))
