"""Issue 25, "tested in a real browser": the fleet wallboard of `make run DEMO=1` (python -m
stack.run --demo, on free ports, the demo's own `for:` of 1 minute) as headless Chromium shows
it. Once R1 fires, the DEMO database's tile is CRITICAL with the R1 alert (critical, its
runbook, evidence and capacity-page links, the last opening DEMO's capacity page) in the alerts table; there is one host tile per demo host (this
machine and the demo database host dbhost01, nothing else: a database alert's `instance` is no
host); and once the oracle-exporter is stopped (SIGSTOP: alive, answering nothing, as a hung
exporter) the DEMO tile turns UNKNOWN. Screenshots of both states are kept under the test's
tmp dir (UPDATE_DOCS_SCREENSHOTS=1 also copies them to docs/img/)."""
from __future__ import annotations

import os
import re
import signal
import sys
import urllib.request

import pytest

from browser_support import dump_dom, keep_for_docs, parse, screenshot
from browser_support import chromium as require_chromium
from e2e_support import ALERTS, DEMO_BEFORE, StackRun, prom_query, require
from stack import run
from stack.procs import free_ports, port_in_use, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

R1 = "OracleLogFileParallelWriteSlow"


def _page(url: str, workdir) -> dict:
    """The wallboard as Chromium built it: tiles {name: state} per grid, and the alerts table."""
    root = parse(dump_dom(url, workdir))
    tiles = {grid: {a.attrs["data-name"]: a.attrs["data-state"] for a in root.find("div", id=grid).find_all("a", class_="t")}
             for grid in ("databases", "hosts")}
    table = root.find("table", id="alerts")
    rows = []
    for tr in table.find_all("tr")[1:]:
        cells = tr.find_all("td")
        links = {a.text(): a.attrs.get("href", "") for a in tr.find_all("a")}
        rows.append({"severity": cells[0].text(), "alert": cells[1].text(), "target": cells[2].text(),
                     "summary": cells[3].text(), "links": links})
    return {**tiles, "alerts": rows, "title": root.find("title").text()}


def _served_state(url: str, name: str) -> str | None:
    """The state of a database tile in the page as served (cheap polling before Chromium looks)."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        m = re.search(rf'data-state="([A-Z]+)" data-name="{re.escape(name)}"', resp.read().decode())
    return m.group(1) if m else None


def _served_alert(url: str, alertname: str) -> bool:
    """Whether the alerts table as served lists `alertname` (it comes from Alertmanager, a
    group_wait after Prometheus fires it)."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        return f"<td>{alertname}</td>" in resp.read().decode()


def test_demo_wallboard_in_chromium(tmp_path):
    require(DEMO_BEFORE, "oracle-exporter demo recording")
    for name in ("recording.rules.yml", "alerts.rules.yml", "alertmanager.yml"):
        require(ALERTS / name, "alert pack")
    require_chromium()
    ports = dict(zip(run.DEFAULT_PORTS, free_ports(len(run.DEFAULT_PORTS))))
    if any(port_in_use("127.0.0.2", ports[c]) for c in ("dbhost", "node")):
        pytest.skip("a demo-host port is taken on 127.0.0.2")
    argv = [sys.executable, "-m", "stack.run", "--demo", "--state-dir", str(tmp_path / "state"),
            "--scrape-interval", "1s", "--oracle-replay", str(DEMO_BEFORE), "--rules-dir", str(ALERTS),
            "--alertmanager-config", str(ALERTS / "alertmanager.yml")]
    for comp, port in ports.items():
        argv += [f"--{comp}-port", str(port)]
    shots, browser = tmp_path / "screenshots", tmp_path / "chromium"
    stack = StackRun(argv)
    stopped = None
    try:
        assert re.search(r"^\[stack\] all targets up", stack.text, re.M), stack.text
        assert re.search(r"^\[stack\] DEMO: alert for: capped at 1m ", stack.text, re.M), stack.text
        wb = re.search(r"^  wallboard +(http://\S+)$", stack.text, re.M).group(1)
        prom = f"http://127.0.0.1:{ports['prometheus']}"

        # R1 fires about a minute after the start (for: 1m), its page some 30 s later. Other
        # critical demo alerts (a full tablespace) can turn the tile CRITICAL first: wait for R1
        # itself in the alerts table as served, not for the tile alone.
        wait_until(lambda: _served_state(wb, "DEMO") == "CRITICAL" and _served_alert(wb, R1), 240,
                   "the DEMO tile CRITICAL and R1 in the alerts table", interval=3.0)
        page = _page(wb, browser)
        assert page["title"] == "Fleet wallboard"
        assert page["databases"] == {"DEMO": "CRITICAL"}, page
        # one host tile per demo host: the ones whose host exporters Prometheus scrapes, this
        # machine (127.0.0.1) and the demo database host (dbhost01), and no other
        hosts = {r["metric"]["instance"] for r in prom_query(prom, 'up{job=~"node|dbhost"}')}
        assert hosts == {"127.0.0.1", "dbhost01"}, hosts
        assert set(page["hosts"]) == hosts, page["hosts"]
        assert all(state in ("OK", "WARNING", "CRITICAL") for state in page["hosts"].values()), page["hosts"]
        r1 = [a for a in page["alerts"] if a["alert"] == R1]
        assert r1 and r1[0]["severity"] == "critical" and r1[0]["target"] == "DEMO", page["alerts"]
        assert r1[0]["links"]["runbook"].endswith(f"/docs/runbooks/{R1}.md"), r1
        assert r1[0]["links"]["evidence"].startswith(prom + "/graph?"), r1
        assert page["alerts"][0]["severity"] == "critical"            # critical first
        # without Grafana the alert links to its database's capacity page, on this stack's fleetview
        capacity = r1[0]["links"]["capacity"]
        assert capacity == f"http://127.0.0.1:{ports['fleetview']}/capacity?database=DEMO", r1
        assert parse(dump_dom(capacity, browser)).find("h1").text() == "Capacity report: DEMO"
        keep_for_docs(screenshot(wb, shots / "wallboard.png", browser), "wallboard.png")

        # an exporter that is stopped: the oracle-exporter (its own process group) no longer answers
        stopped = stack.pids["oracle-exporter"]
        os.killpg(stopped, signal.SIGSTOP)
        wait_until(lambda: _served_state(wb, "DEMO") == "UNKNOWN", 60, "the DEMO tile UNKNOWN", interval=2.0)
        page = _page(wb, browser)
        assert page["databases"] == {"DEMO": "UNKNOWN"}, page
        assert set(page["hosts"]) == hosts, page["hosts"]
        keep_for_docs(screenshot(wb, shots / "wallboard-unknown.png", browser), "wallboard-unknown.png")

        os.killpg(stopped, signal.SIGCONT)
        stopped = None
        stack.stop(signal.SIGINT)
    finally:
        if stopped:
            try:
                os.killpg(stopped, signal.SIGCONT)
            except ProcessLookupError:
                pass
        stack.kill()
    assert sorted(p.name for p in shots.iterdir()) == ["wallboard-unknown.png", "wallboard.png"]
