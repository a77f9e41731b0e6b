"""End to end through the real binaries: oracle-exporter (replaying a
recording), dbhost-exporter (the generated sysfs/procfs fixture tree),
node_exporter (this host), Prometheus with the alert pack's recording and
alerting rules, Alertmanager with the alert pack's routing, and the webhook
receiver. Started by stack.run's own code (the one `make run` uses) on free
loopback ports.

Test-only differences from `make run`, all in StackOptions below:
* scrape and evaluation interval 1s (instead of 15s);
* every alert's `for` and every rule group's `interval` capped at 1s in a copy
  of the rule files (configs.shorten_rules): the real durations are minutes;
* Alertmanager group_wait/group_interval 1s (instead of tens of seconds);
* the recording: the demo recording's database (crosses R1 and R2) plus a copy
  of it named LOSTDB that becomes unreachable after DOWN_AFTER snapshots
  (empty views, errors {"*": "ORA-12170: ..."}), for the inhibition rule.
"""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

import pytest
import yaml

from e2e_support import (ALERTS, DEMO_BEFORE, ROOT, build_dbhost_fixture, derive_recording,
                      prom_query, read_recording, require_stack_inputs, system_event_rows, write_recording)
from stack import configs, run
from stack.procs import Supervisor, free_ports, http_json, wait_until

pytestmark = pytest.mark.e2e

LOST = "LOSTDB"
DOWN_AFTER = 6
SCRAPE = 1.0


@dataclass
class Stack:
    opts: run.StackOptions
    sup: Supervisor
    paths: dict
    demo: list[dict]
    database: str
    shortened: dict

    def prom(self, expr: str) -> list[dict]:
        return prom_query(self.opts.url("prometheus"), expr)

    def notifications(self) -> list[dict]:
        return http_json(self.opts.url("webhook") + "/notifications")

    def am_alerts(self, **labels) -> list[dict]:
        flt = "&".join(f'filter={k}="{v}"' for k, v in labels.items())
        return http_json(self.opts.url("alertmanager") + "/api/v2/alerts?" + flt.replace('"', "%22").replace(" ", "%20"))


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    require_stack_inputs()
    tmp = tmp_path_factory.mktemp("stack")
    rules = tmp / "rules"
    shortened = {}
    for name in configs.RULE_FILES:
        shortened.update(configs.shorten_rules(ALERTS / name, rules / name, "1s", max_interval="1s"))
    fx = build_dbhost_fixture(tmp / "fixture")
    demo = read_recording(DEMO_BEFORE)
    database = demo[0]["database"]
    recording = write_recording(tmp / "recording.jsonl", derive_recording(demo, database),
                                derive_recording(demo, LOST, down_after=DOWN_AFTER))
    ports = dict(zip(run.DEFAULT_PORTS, free_ports(len(run.DEFAULT_PORTS))))
    opts = run.StackOptions(
        state=tmp / "state", ports=ports,
        oracle_args=["--replay", str(recording)],
        dbhost_args=["--path.procfs", fx["procfs"], "--path.sysfs", fx["sysfs"], "--config.file", fx["config"]],
        rules_dir=rules, alertmanager_source=ALERTS / "alertmanager.yml", scrape_interval=f"{SCRAPE:.0f}s", evaluation_interval=f"{SCRAPE:.0f}s",
        alertmanager_timing={"group_wait": "1s", "group_interval": "1s", "repeat_interval": "1h"})
    sup = Supervisor()
    procs = []
    try:
        paths = run.start(opts, sup)
        procs = list(sup.procs)
        yield Stack(opts, sup, paths, demo, database, shortened)
    finally:
        procs = procs or list(sup.procs)
        sup.stop_all()
    # every process (and its process group) is gone, also when a test failed
    for p in procs:
        assert p.popen.poll() is not None, f"{p.name} still running"
        with pytest.raises(ProcessLookupError):
            os.killpg(p.pid, 0)


def test_every_target_up_with_host_instance_relabelled(stack):
    targets = run.wait_all_targets_up(stack.opts, stack.sup, timeout=60)
    by_job = {t["labels"]["job"]: t for t in targets}
    # make run also scrapes its webhook receiver (failed writes of the notification log, issue 27)
    assert set(by_job) == {"oracle", "dbhost", "node", "prometheus", "alertmanager", "webhook"}
    assert all(t["health"] == "up" for t in targets)
    # host exporters: instance is the host part only, so dbhost_* and node_* join on(instance)
    assert by_job["dbhost"]["labels"]["instance"] == "127.0.0.1"
    assert by_job["node"]["labels"]["instance"] == "127.0.0.1"
    assert by_job["oracle"]["labels"]["instance"] == stack.opts.addr("oracle")
    up = {(r["metric"]["database"], r["value"][1]) for r in wait_until(
        lambda: len(stack.prom("oracle_up")) == 2 and stack.prom("oracle_up"), 20, "oracle_up for both databases")}
    assert (stack.database, "1") in up


def _interval_averages(snaps: list[dict], event: str) -> list[float]:
    """Average wait (seconds) of `event` in each interval of the recording, first instance."""
    series = []
    for s in snaps:
        rows = system_event_rows(s, event)
        if rows:
            r = min(rows, key=lambda r: r["INST_ID"])
            series.append((r["TOTAL_WAITS"], r["TIME_WAITED_MICRO"]))
    return [(t1 - t0) / 1e6 / (w1 - w0) for (w0, t0), (w1, t1) in zip(series, series[1:]) if w1 > w0]


@pytest.mark.parametrize("event,threshold", [("log file sync", 0.005), ("log file parallel write", 0.002)])
def test_recording_rule_average_wait_matches_the_recording(stack, event, threshold):
    """R2 / R1: the average wait the recording rule computes lies within the
    per-interval averages of the recording itself, and above the threshold."""
    expected = _interval_averages([s for s in stack.demo if s["database"] == stack.database], event)
    assert expected and min(expected) > threshold    # the demo crosses R1/R2 in every interval
    expr = (f'database_inst_event:oracle_wait_event_average_wait_seconds:rate5m'
            f'{{database="{stack.database}",event="{event}"}}')
    res = wait_until(lambda: stack.prom(expr), 30, expr, interval=1.0, alive=stack.sup.check_alive)
    for r in res:
        v = float(r["value"][1])
        assert min(expected) * 0.999 <= v <= max(expected) * 1.001, (v, min(expected), max(expected))
        assert r["metric"]["wait_class"] and r["metric"]["inst_id"]


def _sysstat(snaps: list[dict], name: str) -> list[int]:
    out = []
    for s in snaps:
        rows = [r for r in s["views"].get("GV$SYSSTAT", []) if r.get("NAME") == name]
        if rows:
            out.append(min(rows, key=lambda r: r["INST_ID"])["VALUE"])
    return out


def test_recording_rules_redo_per_commit_matches_the_recording(stack):
    """The redo-profile rates: redo size per commit from the two recording
    rules. rate() divides by the full 5m window while the series is younger than
    that, but both series share their sample times, so their ratio is exactly
    sum(delta redo) / sum(delta commits) over the samples seen: within the
    recording's own per-interval ratios (field notes section 1: ~131 kB/commit)."""
    snaps = [s for s in stack.demo if s["database"] == stack.database]
    redo, commits = _sysstat(snaps, "redo size"), _sysstat(snaps, "user commits")
    ratios = [(r1 - r0) / (c1 - c0) for r0, r1, c0, c1 in zip(redo, redo[1:], commits, commits[1:])]
    assert 100_000 < statistics.median(ratios) < 160_000
    expr = (f'database_inst:oracle_redo_size_bytes:rate5m{{database="{stack.database}"}} '
            f'/ database_inst:oracle_user_commits:rate5m{{database="{stack.database}"}}')
    res = wait_until(lambda: stack.prom(expr), 30, expr, interval=1.0, alive=stack.sup.check_alive)
    assert len(res) == len({r["INST_ID"] for r in snaps[0]["views"]["GV$SYSSTAT"]})
    for r in res:
        assert min(ratios) * 0.999 <= float(r["value"][1]) <= max(ratios) * 1.001, (r, min(ratios), max(ratios))


def test_host_recording_rules_have_values(stack):
    """Host side: node_exporter (this host) and dbhost-exporter (fixture tree)
    rules return series for instance 127.0.0.1."""
    for expr in ("instance:node_run_queue_per_cpu:avg5m", "instance:node_cpu_system_share_of_busy:rate5m",
                 "instance_device:dbhost_lun_host_queue:avg5m", "instance_device:dbhost_lun_lun_queue:avg5m"):
        res = wait_until(lambda: stack.prom(expr), 30, expr, interval=1.0)
        assert {r["metric"]["instance"] for r in res} == {"127.0.0.1"}, expr
    # the fixture tree's LUN queues are static: the averages equal the exporter's gauges
    for q in ("host", "lun"):
        rule = {r["metric"]["device"]: float(r["value"][1])
                for r in stack.prom(f"instance_device:dbhost_lun_{q}_queue:avg5m")}
        raw = {r["metric"]["device"]: float(r["value"][1])
               for r in stack.prom(f'dbhost_lun_inflight_requests{{queue="{q}"}}')}
        assert rule == raw and rule


def _threshold(alert: str) -> dict:
    doc = yaml.safe_load((ALERTS / "thresholds.yaml").read_text())
    return next(t for t in doc["thresholds"] if t.get("alert") == alert)


# The demo database is the field notes' "before" state: LGWR writes slowly (R1), so its slow
# commits (R2, OracleLogFileSyncSlow) are inhibited under that cause (alerts/alertmanager.yml);
# R1 is what reaches the webhook.
def test_log_file_parallel_write_alert_reaches_the_webhook(stack):
    def found():
        for n in stack.notifications():
            for a in n["alerts"]:
                if (a["labels"].get("alertname") == "OracleLogFileParallelWriteSlow"
                        and a["labels"].get("database") == stack.database and a["status"] == "firing"):
                    return n, a
        return None
    note, alert = wait_until(found, 60, "OracleLogFileParallelWriteSlow at the webhook", interval=1.0,
                             alive=stack.sup.check_alive)
    severity = _threshold("OracleLogFileParallelWriteSlow")["severity"]
    assert alert["labels"]["severity"] == severity
    assert note["path"] == {"critical": "/pager", "warning": "/ticket"}[severity]
    url = alert["annotations"]["runbook_url"]
    assert "docs/runbooks/" in url
    runbook = url.split("docs/runbooks/", 1)[1].split("#")[0]
    assert (ROOT / "docs" / "runbooks" / runbook).is_file(), url
    assert alert["annotations"]["summary"] and alert["annotations"]["description"]
    assert alert["generatorURL"].startswith(stack.opts.url("prometheus") + "/graph?")
    assert note["externalURL"] == stack.opts.url("alertmanager")


def test_oracle_down_inhibits_that_databases_alerts(stack):
    # LOSTDB is unreachable after DOWN_AFTER snapshots: the exporter says oracle_up 0 ...
    wait_until(lambda: stack.prom(f'oracle_up{{database="{LOST}"}} == 0'), 30, f"oracle_up 0 for {LOST}")
    # ... OracleDown fires and reaches the webhook ...
    def down_notified():
        return any(a["labels"].get("alertname") == "OracleDown" and a["labels"].get("database") == LOST
                   and a["status"] == "firing" for n in stack.notifications() for a in n["alerts"])
    wait_until(down_notified, 60, f"OracleDown for {LOST} at the webhook", interval=1.0,
               alive=stack.sup.check_alive)
    down = [a for a in stack.am_alerts(alertname="OracleDown") if a["labels"]["database"] == LOST]
    assert len(down) == 1 and down[0]["status"]["state"] == "active"
    # ... and the page says why (issue 27): the reason the exporter exports in oracle_last_error_info
    (info,) = stack.prom(f'oracle_last_error_info{{database="{LOST}"}}')
    reason = info["metric"]["reason"]
    assert reason and reason != "other", info
    paged = [a for n in stack.notifications() for a in n["alerts"]
             if a["labels"].get("alertname") == "OracleDown" and a["labels"].get("database") == LOST]
    assert paged[-1]["annotations"]["summary"] == f"Oracle database {LOST} is down or unreachable: {reason}"
    assert f"; last error: {reason} (oracle_last_error_info;" in paged[-1]["annotations"]["description"]

    # ... and Alertmanager suppresses LOSTDB's other alerts (still firing in
    # Prometheus from the samples before the outage), not the healthy database's.
    def suppressed():
        mine = [a for a in stack.am_alerts(alertname="OracleLogFileParallelWriteSlow") if a["labels"]["database"] == LOST]
        return mine if mine and all(a["status"]["state"] == "suppressed" for a in mine) else None
    lost = wait_until(suppressed, 60, f"OracleLogFileParallelWriteSlow for {LOST} suppressed", interval=1.0)
    assert all(a["status"]["inhibitedBy"] == [down[0]["fingerprint"]] for a in lost)
    healthy = [a for a in stack.am_alerts(alertname="OracleLogFileParallelWriteSlow")
               if a["labels"]["database"] == stack.database]
    assert healthy and all(a["status"]["state"] == "active" and not a["status"]["inhibitedBy"] for a in healthy)
