"""Scale-out (docs/scale-out.md) with the pieces Debian ships: two Prometheus
agents share one target list and keep their hashmod shard of it, scrape the
oracle-exporter's /probe?target=<database>, remote_write to VictoriaMetrics
(single node here; vminsert/vmselect/vmstorage in production); vmalert
evaluates the project's rules against VictoriaMetrics and sends to
Alertmanager. Test-only differences: 1s intervals, `for` capped at 1s,
Alertmanager group_wait 1s, VictoriaMetrics' latency offset 1s (default 30s)."""
from __future__ import annotations

import shutil
import sys
import urllib.parse

import pytest
import yaml

from e2e_support import (ALERTS, DEMO_BEFORE, derive_recording, prometheus_hashmod, read_recording, require,
                         write_recording)
from stack import configs
from stack.procs import Proc, Supervisor, free_ports, http_json, wait_until

pytestmark = pytest.mark.e2e

DATABASES = ["ODS01", "ODS02", "DWH01", "DWH02", "ERP01", "CRM01"]
SHARDS = 2
VM_BIN, VMALERT_BIN, PROM_BIN, AM_BIN = ("/usr/bin/victoria-metrics", "/usr/bin/vmalert", "/usr/bin/prometheus",
                                         "/usr/bin/prometheus-alertmanager")


def vm_query(base: str, expr: str) -> list[dict]:
    data = http_json(f"{base}/api/v1/query?query={urllib.parse.quote(expr)}")
    assert data["status"] == "success", data
    return data["data"]["result"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    require(DEMO_BEFORE, "oracle-exporter demo recording")
    for name in (*configs.RULE_FILES, "alertmanager.yml"):
        require(ALERTS / name, "alert pack")
    for b in (VM_BIN, VMALERT_BIN):
        if not shutil.which(b):
            pytest.skip(f"{b} missing (Debian package victoria-metrics; make deps)")
    tmp = tmp_path_factory.mktemp("scaleout")
    demo = read_recording(DEMO_BEFORE)
    recording = write_recording(tmp / "fleet.jsonl", *(derive_recording(demo, db) for db in DATABASES))
    rules = tmp / "rules"
    for name in configs.RULE_FILES:
        configs.shorten_rules(ALERTS / name, rules / name, "1s", max_interval="1s")
    p = dict(zip(["exporter", "vm", "vmalert", "am", "webhook", "agent0", "agent1"], free_ports(7)))
    url = {k: f"http://127.0.0.1:{v}" for k, v in p.items()}
    targets = tmp / "targets" / "oracle-fleet.yml"
    targets.parent.mkdir()
    targets.write_text(yaml.safe_dump([{"targets": DATABASES, "labels": {"site": "test"}}]))
    agent_cfgs = []
    for shard in range(SHARDS):
        doc = configs.render_agent(shard, SHARDS, f"127.0.0.1:{p['exporter']}", url["vm"] + "/api/v1/write",
                                   str(targets), scrape_interval="1s")
        doc["remote_write"][0]["queue_config"]["batch_send_deadline"] = "1s"
        agent_cfgs.append(configs.dump(doc, tmp / f"agent-{shard}.yml"))
    am_cfg = configs.dump(configs.render_alertmanager(ALERTS / "alertmanager.yml", url["webhook"],
                                                      {"group_wait": "1s", "group_interval": "1s"}),
                          tmp / "alertmanager.yml")
    logs = tmp / "logs"
    sup = Supervisor()
    try:
        sup.start(Proc("oracle-exporter", [str(configs.ROOT / ".venv" / "bin" / "oracle-exporter")
                                           if (configs.ROOT / ".venv" / "bin" / "oracle-exporter").exists()
                                           else shutil.which("oracle-exporter"),
                                           "--replay", recording, "--replay-loop",
                                           "--web.listen-address", f"127.0.0.1:{p['exporter']}"],
                       logs / "oracle-exporter.log", ready_url=url["exporter"] + "/-/healthy"))
        sup.start(Proc("victoria-metrics", [VM_BIN, f"-storageDataPath={tmp / 'vm'}",
                                            f"-httpListenAddr=127.0.0.1:{p['vm']}", "-search.latencyOffset=1s",
                                            "-search.disableCache", "-loggerLevel=WARN"],
                       logs / "vm.log", ready_url=url["vm"] + "/health"))
        sup.start(Proc("webhook", [sys.executable, "-m", "stack.webhook", "--listen", f"127.0.0.1:{p['webhook']}",
                                   "--log", tmp / "notifications.jsonl"], logs / "webhook.log",
                       cwd=configs.ROOT, ready_url=url["webhook"] + "/-/ready"))
        sup.start(Proc("alertmanager", [AM_BIN, "--config.file", am_cfg, "--storage.path", tmp / "am",
                                        "--web.listen-address", f"127.0.0.1:{p['am']}", "--cluster.listen-address="],
                       logs / "am.log", ready_url=url["am"] + "/-/ready"))
        for shard in range(SHARDS):
            sup.start(Proc(f"agent-{shard}", [PROM_BIN, "--enable-feature=agent", "--config.file", agent_cfgs[shard],
                                              "--storage.agent.path", tmp / f"agent-{shard}",
                                              "--web.listen-address", f"127.0.0.1:{p[f'agent{shard}']}"],
                           logs / f"agent-{shard}.log", ready_url=url[f"agent{shard}"] + "/-/ready"))
        sup.start(Proc("vmalert", [VMALERT_BIN, *[f"-rule={rules / n}" for n in configs.RULE_FILES],
                                   f"-datasource.url={url['vm']}", f"-remoteWrite.url={url['vm']}",
                                   f"-notifier.url={url['am']}", "-evaluationInterval=1s",
                                   "-external.label=ruler=vmalert", f"-httpListenAddr=127.0.0.1:{p['vmalert']}",
                                   "-loggerLevel=WARN"],
                       logs / "vmalert.log", ready_url=url["vmalert"] + "/health"))
        yield url, sup
    finally:
        procs = list(sup.procs)
        sup.stop_all()
        assert all(p.popen.poll() is not None for p in procs)


def test_each_database_is_scraped_by_exactly_one_agent(fleet):
    url, sup = fleet
    expected = {s: {db for db in DATABASES if prometheus_hashmod(db, SHARDS) == s} for s in range(SHARDS)}
    assert all(expected.values()), expected    # the test list spreads over both shards

    def scraped():
        out = {}
        for s in range(SHARDS):
            ts = [t for t in http_json(url[f"agent{s}"] + "/api/v1/targets?state=active")["data"]["activeTargets"]
                  if t["scrapePool"] == "oracle"]      # the probes (not the exporter's own /metrics)
            if not ts or any(t["health"] != "up" for t in ts):
                return None
            out[s] = ts
        return out
    got = wait_until(scraped, 30, "both agents' targets up", interval=0.5, alive=sup.check_alive)
    for s, ts in got.items():
        assert {t["labels"]["instance"] for t in ts} == expected[s]
        assert all(t["scrapeUrl"].startswith(url["exporter"] + "/probe?target=") for t in ts)

    # in the central store each database arrives from exactly one shard, the right one
    def arrived():
        res = vm_query(url["vm"], "count by (database, shard) (oracle_up)")
        return res if {r["metric"]["database"] for r in res} == set(DATABASES) else None
    res = wait_until(arrived, 40, "oracle_up of every database in VictoriaMetrics", interval=1.0,
                     alive=sup.check_alive)
    shards = {}
    for r in res:
        shards.setdefault(r["metric"]["database"], []).append(int(r["metric"]["shard"]))
    assert shards == {db: [prometheus_hashmod(db, SHARDS)] for db in DATABASES}


def test_probes_name_their_exporter_and_its_process_metrics_arrive(fleet):
    """Review of issue 23, findings 4 and 13: in probe mode `instance` is the database, so every
    probe also carries `exporter` (the exporter's address; Alertmanager groups one exporter's
    outage on it), and /probe has no process metrics: one agent also scrapes the exporter's
    /metrics for process_* only (job oracle, like the probes), so ExporterCrashLooping sees the
    exporter's restarts."""
    url, sup = fleet
    address = url["exporter"].removeprefix("http://")

    def arrived():
        res = vm_query(url["vm"], 'changes(process_start_time_seconds{job=~"oracle|dbhost"}[1h])')
        return res or None
    res = wait_until(arrived, 40, "the exporter's process_start_time_seconds in VictoriaMetrics", interval=1.0,
                     alive=sup.check_alive)
    assert [(r["metric"]["job"], r["metric"]["instance"], r["metric"]["exporter"], r["metric"]["shard"])
            for r in res] == [("oracle", address, address, str(prometheus_hashmod(address, SHARDS)))]
    # the alert's input is there and a healthy exporter stays below its 3 restarts (VictoriaMetrics'
    # changes() counts the first sample of a new series as one change)
    assert float(res[0]["value"][1]) < 3
    # only the process metrics of that scrape are kept: no second copy of the databases' series
    assert vm_query(url["vm"], f'count(oracle_up{{instance="{address}"}})') == []
    ups = vm_query(url["vm"], "count by (exporter, database) (oracle_up)")
    assert {(r["metric"]["exporter"], r["metric"]["database"]) for r in ups} == {(address, db) for db in DATABASES}


def test_vmalert_rules_on_victoriametrics_reach_alertmanager(fleet):
    url, sup = fleet
    expr = 'database_inst_event:oracle_wait_event_average_wait_seconds:rate5m{event="log file sync"}'
    res = wait_until(lambda: vm_query(url["vm"], expr), 60, "vmalert's recording rule in VictoriaMetrics",
                     interval=1.0, alive=sup.check_alive)
    assert {r["metric"]["database"] for r in res} <= set(DATABASES)
    assert all(float(r["value"][1]) > 0.005 for r in res)     # R2 crossed: demo-before averages ~26 ms

    def alerted():
        alerts = http_json(url["am"] + '/api/v2/alerts?filter=alertname%3D%22OracleLogFileSyncSlow%22')
        mine = [a for a in alerts if a["labels"].get("ruler") == "vmalert"]
        return mine if {a["labels"]["database"] for a in mine} == set(DATABASES) else None
    alerts = wait_until(alerted, 90, "OracleLogFileSyncSlow from vmalert for every database in Alertmanager",
                        interval=1.0, alive=sup.check_alive)
    for a in alerts:
        assert a["generatorURL"].startswith(url["vmalert"]) or "vmalert" in a["generatorURL"]
        assert a["annotations"]["runbook_url"] and a["labels"]["severity"]


def test_vmalert_evaluates_every_project_rule_without_error(fleet):
    """vmalert (MetricsQL) accepts and evaluates every recording and alerting rule
    of the alert pack against VictoriaMetrics: none reports an evaluation error."""
    url, sup = fleet
    expected = sum(len(g["rules"]) for n in configs.RULE_FILES
                   for g in yaml.safe_load((ALERTS / n).read_text())["groups"])

    def evaluated():
        groups = http_json(url["vmalert"] + "/api/v1/rules")["data"]["groups"]
        rules = [r for g in groups for r in g["rules"]]
        return rules if len(rules) == expected and all(r.get("lastEvaluation", "").startswith("2") and
                                                       not r["lastEvaluation"].startswith("0001")
                                                       for r in rules) else None
    rules = wait_until(evaluated, 30, "vmalert to evaluate every rule once", interval=1.0, alive=sup.check_alive)
    errors = {r["name"]: r["lastError"] for r in rules if r.get("lastError")}
    assert errors == {}
