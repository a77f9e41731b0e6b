"""compose/scale-out/: the reference fleet layout is validated, not run
(tests/e2e/test_scale_out.py runs the same topology with Debian's binaries):
docker-compose accepts it, every mounted file exists, the agent configs are
current renderings of the one template and valid for Prometheus in agent
mode, and every database of the target list is kept by exactly one agent."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from e2e_support import ALERTS, ROOT, prometheus_hashmod, read_recording, require
from stack import scaleout

DIR = ROOT / "compose" / "scale-out"


@pytest.fixture(scope="module")
def compose() -> dict:
    if not shutil.which("docker-compose"):
        pytest.skip("docker-compose is not installed (Debian package docker-compose; `make deps`)")
    res = subprocess.run(["docker-compose", "-f", str(DIR / "docker-compose.yml"), "config"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return yaml.safe_load(res.stdout)


def _bind_mounts(compose: dict) -> dict[tuple[str, str], Path]:
    out = {}
    for name, svc in compose["services"].items():
        for v in svc.get("volumes") or []:
            src, dst = v.split(":")[:2]
            if src.startswith("/"):
                out[(name, dst)] = Path(src)
    return out


def test_topology(compose):
    svcs = compose["services"]
    assert {"agent-0", "agent-1", "vminsert", "vmselect", "vmstorage-1", "vmstorage-2", "vmalert",
            "alertmanager", "webhook", "oracle-exporter"} == set(svcs)
    for a in ("agent-0", "agent-1"):
        assert "--enable-feature=agent" in svcs[a]["command"]
    vmalert = svcs["vmalert"]["command"]
    assert "-datasource.url=http://vmselect:8481/select/0/prometheus" in vmalert
    assert "-notifier.url=http://alertmanager:19093" in vmalert


def test_every_mounted_file_exists(compose):
    mounts = _bind_mounts(compose)
    missing = [f"{svc}: {src}" for (svc, dst), src in mounts.items() if not src.exists()]
    assert not missing, missing
    rules = {dst: src for (svc, dst), src in mounts.items() if svc == "vmalert"}
    assert rules == {"/etc/alerts": ALERTS}
    for arg in compose["services"]["vmalert"]["command"]:
        if arg.startswith("-rule="):
            assert (ALERTS / Path(arg.split("=", 1)[1]).name).is_file(), arg


def test_agent_configs_are_current_renderings(tmp_path):
    fresh = scaleout.render_all(2, "oracle-exporter:19161", "http://vminsert:8480/insert/0/prometheus/api/v1/write",
                                "targets/oracle-*.yml", tmp_path)
    for f in fresh:
        assert (DIR / f.name).read_text() == f.read_text(), f"{f.name} is stale: run python -m stack.scaleout"
    assert sorted(p.name for p in DIR.glob("agent-*.yml")) == ["agent-0.yml", "agent-1.yml"]


def test_agent_configs_pass_promtool_in_agent_mode(tmp_path):
    shutil.copytree(DIR / "targets", tmp_path / "targets")
    for n in (0, 1):
        shutil.copy(DIR / f"agent-{n}.yml", tmp_path)
        res = subprocess.run(["promtool", "check", "config", "--agent", f"agent-{n}.yml"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stdout + res.stderr


def test_each_listed_database_is_kept_by_exactly_one_agent(compose):
    listed = [t for f in sorted((DIR / "targets").glob("oracle-*.yml"))
              for group in yaml.safe_load(f.read_text()) for t in group["targets"]]
    cmd = compose["services"]["oracle-exporter"]["command"]
    replay = next(a.split("=", 1)[1] for a in cmd if a.startswith("--replay="))
    host_file = _bind_mounts(compose)[("oracle-exporter", replay)]
    require(host_file, "oracle-exporter demo recording")
    assert sorted(listed) == sorted({s["database"] for s in read_recording(host_file)})
    kept = {}
    for n in (0, 1):
        cfg = yaml.safe_load((DIR / f"agent-{n}.yml").read_text())
        rl = cfg["scrape_configs"][0]["relabel_configs"]
        modulus = next(r["modulus"] for r in rl if r.get("action") == "hashmod")
        keep = next(r["regex"] for r in rl if r.get("action") == "keep")
        assert cfg["global"]["external_labels"]["shard"] == keep == str(n)
        for db in listed:
            if str(prometheus_hashmod(db, modulus)) == keep:
                kept.setdefault(db, []).append(n)
    assert sorted(kept) == sorted(listed) and all(len(v) == 1 for v in kept.values())
