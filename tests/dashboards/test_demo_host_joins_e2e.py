"""`make run DEMO=1` (python -m stack.run --demo, on free ports): the Oracle-to-host panels have
data. The replayed database DEMO has instance DEMO1 on host dbhost01 (GV$INSTANCE); the demo
host tree runs DEMO1's processes and is scraped as instance dbhost01, so the host-and-sid joins
of the dashboards and the wallboard (mixin/fleetview.py sid_to_database) find DEMO's LGWR on
dbhost01, and nothing of the demo host's other instances."""
from __future__ import annotations

import re
import signal
import sys
import time

import pytest

import dash_model as dm
import dash_stack as ds
from e2e_support import ALERTS, DEMO_BEFORE, StackRun, prom_query, require
from mixin import config, fleetview
from mixin import records as R
from stack import run
from stack.procs import free_ports, port_in_use

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def oracle_to_host_targets() -> list:
    """Every dashboard query that joins host-exporter series with an Oracle database (the
    baseline columns left out: a fresh stack has no last week)."""
    return [t for t in dm.targets(dm.load_all()) if "$baseline" not in t.expr and (
        ("oracle_instance_info" in t.expr and "dbhost_" in t.expr) or "database_inst:dbhost" in t.expr
        or R.SGA_ON_HOST in t.expr)]


def _all(expr: str) -> str:
    return expr.replace('"$database"', '".+"').replace('"$host"', '".+"')


def test_demo_oracle_to_host_panels_have_data(tmp_path):
    require(DEMO_BEFORE, "oracle-exporter demo recording")
    for name in ("recording.rules.yml", "alerts.rules.yml", "alertmanager.yml"):
        require(ALERTS / name, "alert pack")
    ports = dict(zip(run.DEFAULT_PORTS, free_ports(len(run.DEFAULT_PORTS))))
    if any(port_in_use("127.0.0.2", ports[c]) for c in ("dbhost", "node")):
        pytest.skip("a demo-host port is taken on 127.0.0.2")
    argv = [sys.executable, "-m", "stack.run", "--demo", "--state-dir", str(tmp_path / "state"),
            "--scrape-interval", "1s", "--oracle-replay", str(DEMO_BEFORE), "--rules-dir", str(ALERTS),
            "--alertmanager-config", str(ALERTS / "alertmanager.yml")]
    for comp, port in ports.items():
        argv += [f"--{comp}-port", str(port)]
    cfg = config.load()
    tiles = {f.key: _all(f.expr) for f in fleetview.db_tiles(cfg)}
    checks = {
        "hosts of DEMO": _all(fleetview.HOSTS_OF_DATABASE),
        "LGWR involuntary": tiles["lgwr_involuntary"],
        "LGWR CPU wait": tiles["lgwr_cpu_wait"],
    }
    values = {"datasource": "prometheus", "database": ["DEMO"], "host": ["dbhost01", "127.0.0.1"]}
    panels = oracle_to_host_targets()
    assert len(panels) >= 8
    for t in panels:
        checks[f"{t.uid} / {t.panel} / {t.ref}"] = ds.interpolate(t.expr, values, {"database", "host"}, 300, 15, 1)
    stack = StackRun(argv)
    try:
        assert re.search(r"^\[stack\] all targets up", stack.text, re.M), stack.text
        prom = f"http://127.0.0.1:{ports['prometheus']}"
        got: dict = {}
        deadline = time.time() + 90
        while time.time() < deadline:
            got = {k: prom_query(prom, e) for k, e in checks.items()}
            if all(got.values()):
                break
            time.sleep(2)
        assert not [k for k, v in got.items() if not v], [k for k, v in got.items() if not v]
        assert {r["metric"]["instance"] for r in got["hosts of DEMO"]} == {"dbhost01"}, got
        for k in ("LGWR involuntary", "LGWR CPU wait"):
            assert [r["metric"]["database"] for r in got[k]] == ["DEMO"], (k, got[k])
        # the demo tree's LGWR of DEMO1 (its ORCL renamed): R14's 30 % involuntary switches
        assert float(got["LGWR involuntary"][0]["value"][1]) == pytest.approx(0.3, abs=0.05)
        stack.stop(signal.SIGINT)
    finally:
        stack.kill()
