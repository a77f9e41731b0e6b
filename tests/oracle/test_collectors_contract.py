"""Contract names and labels, the COLLECTORS interface, docs/metrics.md coverage, promtool."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import CollectorRegistry

from oracle_sim import OracleSim, collect

from oracle_exporter.collectors import COLLECTORS, DEFAULT_HISTOGRAM_EVENTS, DEFAULT_LATCHES

ROOT = Path(__file__).resolve().parents[2]
# The product contract lives beside the repository in the development workspace only;
# a user's clone has no such file and these checks are skipped there.
CONTRACT = ROOT.parent / "shared" / "contract.md"
CORE_METRICS = {"oracle_up"}          # added by the exporter core, not by a collector


def contract_oracle_metrics() -> dict[str, set[str]]:
    if not CONTRACT.exists():
        pytest.skip("../shared/contract.md not present next to the repository")
    text = CONTRACT.read_text()
    section = text[text.index("## Oracle exporter"):text.index("## Host exporter")]
    out: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`oracle_"):
            continue
        # label names only: a parenthesised remark ("(`CPU` when on CPU)", "(`transport`, `apply`)") lists values
        names = re.sub(r"\([^)]*\)", " ", cells[1])
        labels = set(re.findall(r"`?(\w+)`?", names.replace("`", " "))) if names.strip() else set()
        for name in re.findall(r"`(oracle_\w+)`", cells[0]):
            out[name] = labels
    return out


def full_snapshot_families(micro: bool = True):
    sim = OracleSim([(1, "ODS1", "dbhost1", 1), (2, "ODS2", "dbhost2", 2)], micro_histogram=micro,
                    role="PHYSICAL STANDBY")     # so that the Data Guard lag is exported too
    sim.advance(60, events={e: (10, 0.004) for e in DEFAULT_HISTOGRAM_EVENTS},
                latches={name: {"GETS": 100, "MISSES": 1} for name in DEFAULT_LATCHES})
    return collect(sim.snapshot())


def test_contract_table_parsed():
    metrics = contract_oracle_metrics()
    assert len(metrics) >= 23
    assert metrics["oracle_wait_event_latency_seconds"] == {"inst_id", "event"}
    assert metrics["oracle_instance_info"] == {"inst_id", "instance_name", "host_name", "version", "db_name",
                                               "db_unique_name", "database_role"}


@pytest.mark.parametrize("micro", [True, False], ids=["micro", "milli"])
def test_every_contract_metric_exists_with_exact_labels(micro):
    families = {f.name: f for f in full_snapshot_families(micro)}
    exposed: dict[str, set[str]] = {}
    for f in families.values():
        for s in f.samples:
            base = f.name + "_total" if f.type == "counter" else f.name
            labels = set(s.labels) - ({"le"} if f.type == "histogram" else set())
            exposed.setdefault(base, set()).update(labels)
    for name, labels in contract_oracle_metrics().items():
        if name in CORE_METRICS:
            continue
        assert name in exposed, f"{name} missing"
        assert exposed[name] == labels, (name, exposed[name], labels)


def test_collectors_interface():
    # the built-in collectors (a collector added later is found by itself: docs/adding-a-collector.md)
    assert {"wait_events", "redo", "pga", "latches", "load_profile", "host_load", "instance",
            "sessions", "resource_limits", "tablespaces", "recovery_area", "dataguard",
            "archive_dest", "asm", "custom", "time_model", "pdb", "pdb_state"} <= set(COLLECTORS)
    from oracle_exporter.config import OPT_IN_COLLECTORS
    assert {k for k, m in COLLECTORS.items() if m.SPEC.opt_in} == OPT_IN_COLLECTORS >= {"pdb"}
    assert "pdb_state" not in OPT_IN_COLLECTORS      # OraclePdbNotOpen pages on it (review of issue 24)
    seen: dict[str, str] = {}
    for key, module in COLLECTORS.items():
        assert module.NAME == key
        assert isinstance(module.VIEWS, tuple) and all(v == v.upper() for v in module.VIEWS)
    for f in full_snapshot_families():
        assert "database" not in f._labelnames if hasattr(f, "_labelnames") else True
        for s in f.samples:
            assert "database" not in s.labels
        assert f.samples, f.name
    for key, module in COLLECTORS.items():
        for f in module.collect(OracleSim().snapshot(), object()):
            assert f.name not in seen, f"{f.name} emitted by {seen.get(f.name)} and {key}"
            seen[f.name] = key


def test_docs_list_every_metric_with_its_type():
    doc = (ROOT / "docs" / "metrics.md").read_text()
    # The oracle section comes first (the dbhost section, merged after it, follows).
    assert 0 <= doc.index("## oracle-exporter") < doc.index("## dbhost-exporter")
    for f in full_snapshot_families():
        name = f.name + "_total" if f.type == "counter" else f.name
        m = re.search(r"^\|\s*`" + re.escape(name) + r"`\s*\|\s*(\w+)\s*\|", doc, re.M)
        assert m, f"{name} not documented in docs/metrics.md"
        assert m.group(1) == f.type, (name, m.group(1), f.type)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
@pytest.mark.parametrize("micro", [True, False], ids=["micro", "milli"])
def test_exposition_passes_promtool(micro):
    families = full_snapshot_families(micro)

    class Fixed:
        def collect(self):
            return families

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Fixed())
    text = generate_latest(registry)
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert result.stdout.decode().strip() == "" and result.stderr.decode().strip() == ""
