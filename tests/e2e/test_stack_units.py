"""Fast tests of the stack's building blocks (stack/procs.py, stack/configs.py,
stack/webhook.py, stack/run.py's failure paths), with real processes and
sockets: no mocks."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from e2e_support import ROOT, post_json
from stack import configs, run
from stack.procs import (Proc, StackError, Supervisor, check_ports, free_ports, http_get, http_json,
                         port_in_use)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_supervisor_stops_whole_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    sup = Supervisor()
    proc = sup.start(Proc("sleeper", ["sh", "-c", f"sleep 300 & echo $! > {pidfile}; wait"],
                          tmp_path / "sleeper.log"))
    child = int(wait_for_file(pidfile))
    assert _alive(proc.pid) and _alive(child)
    sup.stop_all()
    assert not _alive(proc.pid)
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "grandchild in the same process group survived stop_all"
    assert sup.procs == []


def test_supervisor_context_manager_stops_on_exception(tmp_path):
    procs = []
    with pytest.raises(RuntimeError, match="boom"):
        with Supervisor() as sup:
            procs.append(sup.start(Proc("a", ["sleep", "300"], tmp_path / "a.log")))
            procs.append(sup.start(Proc("b", ["sleep", "300"], tmp_path / "b.log")))
            raise RuntimeError("boom")
    assert [p.running() for p in procs] == [False, False]
    assert [p.popen.returncode for p in procs] == [-15, -15]   # SIGTERM was enough


def test_sigterm_ignoring_process_is_killed(tmp_path):
    p = Proc("stubborn", ["sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"], tmp_path / "s.log").start()
    time.sleep(0.2)
    t0 = time.monotonic()
    assert p.stop(timeout=0.5) == -9
    assert time.monotonic() - t0 < 5


def test_crash_during_startup_is_reported_with_log_tail(tmp_path):
    port = free_ports(1)[0]
    p = Proc("crasher", ["sh", "-c", "echo 'fatal: bad flag --x' >&2; exit 3"], tmp_path / "c.log",
             ready_url=f"http://127.0.0.1:{port}/")
    with Supervisor() as sup:
        with pytest.raises(StackError) as exc:
            sup.start(p, ready_timeout=10)
    msg = str(exc.value)
    assert "crasher exited with status 3" in msg and "fatal: bad flag --x" in msg


def test_missing_binary_is_a_clear_error(tmp_path):
    with pytest.raises(StackError, match=r"nope: cannot start /nonexistent/bin: No such file"):
        Proc("nope", ["/nonexistent/bin"], tmp_path / "n.log").start()


def test_check_ports_names_every_taken_port():
    a, b, c = free_ports(3)
    s1, s2 = socket.socket(), socket.socket()
    try:
        for s, port in ((s1, a), (s2, c)):
            s.bind(("127.0.0.1", port))
            s.listen()
        with pytest.raises(StackError) as exc:
            check_ports({"prometheus": a, "alertmanager": b, "webhook": c})
        assert str(exc.value).startswith(
            f"port already in use: prometheus (127.0.0.1:{a}), webhook (127.0.0.1:{c});")
        check_ports({"alertmanager": b})   # the free one passes
    finally:
        s1.close()
        s2.close()


def test_make_run_fails_clearly_when_a_port_is_taken(tmp_path):
    """Only the port taken here is named: every component gets a free port of its own, so the
    default ports being busy (a `make run` up on this machine) changes nothing."""
    ports = dict(zip(run.DEFAULT_PORTS, free_ports(len(run.DEFAULT_PORTS))))
    port = ports["prometheus"]
    recording = tmp_path / "r.jsonl"
    recording.write_text("")
    argv = [sys.executable, "-m", "stack.run", "--state-dir", str(tmp_path / "state"), "--oracle-replay", str(recording)]
    for comp, p in ports.items():
        argv += [f"--{comp}-port", str(p)]
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        res = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert res.stderr.startswith(f"error: port already in use: prometheus (127.0.0.1:{port}); "), res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    assert not (tmp_path / "state" / "logs").exists()   # nothing was started


def test_make_run_rejects_missing_oracle_config(tmp_path):
    res = subprocess.run([sys.executable, "-m", "stack.run", "--state-dir", str(tmp_path),
                          "--oracle-config", str(tmp_path / "absent.yml")],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip() == f"error: --oracle-config {tmp_path / 'absent.yml'}: no such file"


# ---------------------------------------------------------------- configs

def test_duration_seconds():
    assert [configs.duration_seconds(d) for d in ("15s", "2m", "1h30m", "500ms", "1d")] == [15, 120, 5400, 0.5, 86400]
    with pytest.raises(configs.ConfigRenderError, match="not a Prometheus duration: '5 minutes'"):
        configs.duration_seconds("5 minutes")


def test_shorten_rules_caps_only_longer_for(tmp_path):
    src = tmp_path / "in.yml"
    src.write_text(yaml.safe_dump({"groups": [{"name": "g", "interval": "1m", "rules": [
        {"record": "a:b:c", "expr": "1"},
        {"alert": "Slow", "expr": "vector(1)", "for": "10m", "labels": {"severity": "warning"}},
        {"alert": "Fast", "expr": "vector(1)", "for": "500ms"},
        {"alert": "Never", "expr": "vector(1)"},
    ]}]}))
    changed = configs.shorten_rules(src, tmp_path / "out.yml", "1s")
    assert changed == {"Slow": "10m"}
    assert yaml.safe_load((tmp_path / "out.yml").read_text())["groups"][0]["interval"] == "1m"
    changed = configs.shorten_rules(src, tmp_path / "out.yml", "1s", max_interval="1s")
    assert changed == {"group g": "1m", "Slow": "10m"}
    assert yaml.safe_load((tmp_path / "out.yml").read_text())["groups"][0]["interval"] == "1s"
    rules = yaml.safe_load((tmp_path / "out.yml").read_text())["groups"][0]["rules"]
    assert [r.get("for") for r in rules] == [None, "1s", "500ms", None]
    assert rules[1]["labels"] == {"severity": "warning"}


def test_render_alertmanager_points_webhooks_at_local_receiver(tmp_path):
    src = tmp_path / "am.yml"
    src.write_text(yaml.safe_dump({
        "route": {"receiver": "ticket", "group_wait": "30s", "routes": [
            {"receiver": "pager", "matchers": ['severity="critical"'], "group_wait": "10s"},
            {"receiver": "ticket", "matchers": ['severity="warning"']}]},
        "receivers": [{"name": "pager", "webhook_configs": [{"url": "http://127.0.0.1:19199/pager", "send_resolved": True}]},
                      {"name": "ticket", "webhook_configs": [{"url": "https://hooks.example.com:8443/ticket?x=1"}]},
                      {"name": "null"}]}))
    doc = configs.render_alertmanager(src, "http://127.0.0.1:40001", {"group_wait": "1s", "group_interval": "1s"})
    urls = [w["url"] for r in doc["receivers"] for w in r.get("webhook_configs", [])]
    assert urls == ["http://127.0.0.1:40001/pager", "http://127.0.0.1:40001/ticket?x=1"]
    assert doc["receivers"][0]["webhook_configs"][0]["send_resolved"] is True
    root = doc["route"]
    assert (root["group_wait"], root["group_interval"]) == ("1s", "1s")
    assert root["routes"][0]["group_wait"] == "1s" and "group_interval" not in root["routes"][0]
    assert "group_wait" not in root["routes"][1]


def test_render_alertmanager_without_webhooks_is_an_error(tmp_path):
    src = tmp_path / "am.yml"
    src.write_text("route: {receiver: x}\nreceivers: [{name: x}]\n")
    with pytest.raises(configs.ConfigRenderError, match="no webhook_configs"):
        configs.render_alertmanager(src, "http://127.0.0.1:1", None)


def test_render_prometheus_replaces_every_address_and_only_addresses():
    addrs = {"oracle": "127.0.0.1:1", "dbhost": "127.0.0.1:2", "node": "127.0.0.1:3",
             "prometheus": "127.0.0.1:4", "alertmanager": "127.0.0.1:5"}
    doc = configs.render_prometheus(addrs)
    tmpl = configs.load(configs.PROMETHEUS_TEMPLATE)
    jobs = {sc["job_name"]: sc["static_configs"][0]["targets"] for sc in doc["scrape_configs"]}
    assert jobs == {"oracle": ["127.0.0.1:1"], "dbhost": ["127.0.0.1:2"], "node": ["127.0.0.1:3"],
                    "prometheus": ["127.0.0.1:4"], "alertmanager": ["127.0.0.1:5"]}
    assert doc["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == ["127.0.0.1:5"]
    assert doc["global"] == tmpl["global"] and doc["rule_files"] == tmpl["rule_files"]
    with pytest.raises(configs.ConfigRenderError, match="no address given for: node"):
        configs.render_prometheus({k: v for k, v in addrs.items() if k != "node"})


def test_host_relabel_drops_the_port_like_prometheus_does(tmp_path):
    """The dbhost/node instance relabeling on the address forms of a fleet
    (hostname, IPv4, bracketed IPv6). Prometheus anchors relabel regexes, so
    fullmatch has its semantics for this RE2-compatible pattern; the e2e test
    checks the result in real Prometheus (instance="127.0.0.1")."""
    import re
    tmpl = configs.load(configs.PROMETHEUS_TEMPLATE)
    for sc in tmpl["scrape_configs"]:
        if sc["job_name"] in ("dbhost", "node"):
            rl = sc["relabel_configs"][0]
            assert (rl["source_labels"], rl["target_label"], rl["replacement"]) == (["__address__"], "instance", "$1")
            rx = re.compile(rl["regex"])
            assert rx.fullmatch("dbhost01.example.com:19162").group(1) == "dbhost01.example.com"
            assert rx.fullmatch("127.0.0.1:19100").group(1) == "127.0.0.1"
            assert rx.fullmatch("[2001:db8::1]:19100").group(1) == "2001:db8::1"


# ---------------------------------------------------------------- webhook

def wait_for_file(path: Path, timeout: float = 5.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")




def test_webhook_logs_every_notification_as_json_lines(tmp_path):
    port = free_ports(1)[0]
    log = tmp_path / "n.jsonl"
    with Supervisor() as sup:
        p = sup.start(Proc("webhook", [sys.executable, "-m", "stack.webhook", "--listen", f"127.0.0.1:{port}",
                                       "--log", log], tmp_path / "webhook.log", cwd=ROOT,
                           ready_url=f"http://127.0.0.1:{port}/-/ready"))
        # the Alertmanager webhook payload (version 4) as documented in its configuration docs
        payload = {"version": "4", "groupKey": '{}:{alertname="OracleDown"}', "truncatedAlerts": 0,
                   "status": "firing", "receiver": "pager", "groupLabels": {"alertname": "OracleDown"},
                   "commonLabels": {"alertname": "OracleDown", "severity": "critical"},
                   "commonAnnotations": {}, "externalURL": "http://127.0.0.1:19093",
                   "alerts": [{"status": "firing", "labels": {"alertname": "OracleDown", "database": "X"},
                               "annotations": {"summary": "down"}, "startsAt": "2026-01-01T00:00:00Z",
                               "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://p/graph",
                               "fingerprint": "abc"}]}
        assert post_json(f"http://127.0.0.1:{port}/pager", json.dumps(payload).encode()) == 200
        assert post_json(f"http://127.0.0.1:{port}/ticket", json.dumps({**payload, "receiver": "ticket"}).encode()) == 200
        assert post_json(f"http://127.0.0.1:{port}/pager", b"{not json") == 400
        assert post_json(f"http://127.0.0.1:{port}/pager", b"[1,2]") == 400
        lines = [json.loads(l) for l in log.read_text().splitlines()]
        assert [(l["path"], l["receiver"]) for l in lines] == [("/pager", "pager"), ("/ticket", "ticket")]
        assert lines[0]["alerts"] == payload["alerts"] and lines[0]["received_at"].endswith("Z")
        got = http_json(f"http://127.0.0.1:{port}/notifications")
        assert got == lines
        # a receiver's URL, as the banner prints it, opens: what arrived there (issue 27)
        assert http_json(f"http://127.0.0.1:{port}/pager") == [lines[0]]
        assert http_json(f"http://127.0.0.1:{port}/ticket") == [lines[1]]
        assert http_json(f"http://127.0.0.1:{port}/elsewhere") == []
        assert http_get(f"http://127.0.0.1:{port}/a/b")[0] == 404
        time.sleep(0.2)
        stdout_lines = [l for l in p.log_path.read_text().splitlines() if l.startswith("{")]
        assert [json.loads(l) for l in stdout_lines] == lines   # also printed on stdout
    assert not p.running()


def test_webhook_reports_taken_port(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = subprocess.run([sys.executable, "-m", "stack.webhook", "--listen", f"127.0.0.1:{port}",
                              "--log", str(tmp_path / "x")], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert res.returncode == 2
    assert res.stderr.strip() == f"error: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_make_run_names_a_missing_rule_file(tmp_path):
    recording = tmp_path / "r.jsonl"
    recording.write_text("")
    (tmp_path / "rules").mkdir()
    argv = [sys.executable, "-m", "stack.run", "--state-dir", str(tmp_path / "state"),
            "--oracle-replay", str(recording), "--rules-dir", str(tmp_path / "rules")]
    for comp, port in zip(("webhook", "oracle", "dbhost", "node", "alertmanager", "prometheus"), free_ports(6)):
        argv += [f"--{comp}-port", str(port)]
    res = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert res.stderr.strip() == (f"error: rule file {tmp_path / 'rules' / 'recording.rules.yml'} is missing "
                                  "(the alert pack, alerts/)")
    assert res.stdout.splitlines()[-1] == "[stack] stopped"


def test_scaleout_renders_one_file_per_shard(tmp_path):
    res = subprocess.run([sys.executable, "-m", "stack.scaleout", "--shards", "3", "--exporter", "exp:1",
                          "--remote-write", "http://vm:8428/api/v1/write", "--out-dir", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [str(tmp_path / f"agent-{n}.yml") for n in range(3)]
    for n in range(3):
        doc = yaml.safe_load((tmp_path / f"agent-{n}.yml").read_text())
        rl = doc["scrape_configs"][0]["relabel_configs"]
        assert [r["modulus"] for r in rl if r.get("action") == "hashmod"] == [3]
        assert [r["regex"] for r in rl if r.get("action") == "keep"] == [str(n)]
        assert doc["global"]["external_labels"] == {"shard": str(n)}
        assert [r["replacement"] for r in rl if r.get("target_label") == "__address__"] == ["exp:1"]
        # the exporter's own /metrics (process_* for ExporterCrashLooping), kept by one shard like a probe
        proc = next(sc for sc in doc["scrape_configs"] if sc["job_name"] == "oracle-exporter-process")
        assert proc["static_configs"] == [{"targets": ["exp:1"]}]
        assert [r["regex"] for r in proc["relabel_configs"] if r.get("action") == "keep"] == [str(n)]
        assert proc["metric_relabel_configs"] == [{"source_labels": ["__name__"], "regex": "process_.+", "action": "keep"}]
        assert doc["remote_write"][0]["url"] == "http://vm:8428/api/v1/write"
    bad = subprocess.run([sys.executable, "-m", "stack.scaleout", "--shards", "0", "--exporter", "e:1",
                          "--remote-write", "http://x"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --shards must be at least 1"


# ---------------------------------------------------------------- supervisor death (issue 16.1)

_SUPERVISOR = """
import sys, time
from pathlib import Path
from stack.procs import Proc, Supervisor
sup = Supervisor()
tmp = Path(sys.argv[1])
# one plain sleeper, one that ignores SIGTERM, one that listens on a port
a = sup.start(Proc("sleeper", ["sleep", "300"], tmp / "a.log"))
b = sup.start(Proc("stubborn", ["sh", "-c", "trap '' TERM HUP; while :; do sleep 0.1; done"], tmp / "b.log"))
c = sup.start(Proc("listener", [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", sys.argv[2]],
                   tmp / "c.log", ready_url="http://127.0.0.1:" + sys.argv[2] + "/"))
print(a.pid, b.pid, c.pid, flush=True)
time.sleep(300)
"""


def _wait_dead(pids, timeout=10.0):
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def test_components_die_when_the_supervisor_is_killed_hard(tmp_path):
    """kill -9 of the supervisor (no chance to clean up): every component goes with it
    (parent-death signal), also one that ignores SIGTERM, and its port is free again."""
    port = free_ports(1)[0]
    sup = subprocess.Popen([sys.executable, "-c", _SUPERVISOR, str(tmp_path), str(port)], cwd=ROOT,
                           stdout=subprocess.PIPE, text=True, start_new_session=True)
    pids = []
    try:
        pids = [int(x) for x in sup.stdout.readline().split()]
        assert len(pids) == 3 and all(_alive(p) for p in pids)
        os.kill(sup.pid, signal.SIGKILL)
        sup.wait(10)
        assert _wait_dead(pids) == [], "components survived their supervisor's kill -9"
        assert not port_in_use("127.0.0.1", port)
    finally:
        for p in pids:
            try:
                os.killpg(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if sup.poll() is None:
            sup.kill()


def test_make_run_refuses_a_state_directory_in_use(tmp_path):
    """A second `make run` on the same .state/ stops before touching anything and names
    the PID of the one that holds it; once the holder is gone (even by kill -9) it starts."""
    state = tmp_path / "state"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from pathlib import Path; from stack.run import lock_state\n"
                               "fd = lock_state(Path(sys.argv[1])); print('locked', flush=True); time.sleep(300)",
                               str(state)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        recording = tmp_path / "r.jsonl"
        recording.write_text("")
        argv = [sys.executable, "-m", "stack.run", "--state-dir", str(state), "--oracle-replay", str(recording)]
        res = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert res.returncode == 1, res.stderr
        assert res.stderr.strip() == (f"error: state directory {state} is in use by another `make run` "
                                      f"(pid {holder.pid}); stop it first (kill {holder.pid}) "
                                      f"or give another --state-dir"), res.stderr
        assert sorted(p.name for p in state.iterdir()) == ["lock"]     # nothing rewritten
        holder.kill()
        holder.wait(10)
        res = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                              "from stack.run import lock_state; lock_state(Path(sys.argv[1])); print('ok')",
                              str(state)], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert res.stdout.strip() == "ok", res.stderr
    finally:
        if holder.poll() is None:
            holder.kill()


# ---------------------------------------------------------------- demo mode (issue 16.4)

def test_demo_rules_shorten_for_and_page_the_worst_finding_labelled(tmp_path):
    from stack import demo
    src = ROOT / "alerts"
    out = demo.demo_rules(src, tmp_path, "1m")

    def alerts(d):   # (file, group, index) -> rule: alert names repeat (one rule per variant)
        return {(f, gi, ri): r for f in configs.RULE_FILES
                for gi, g in enumerate((configs.load(d / f) or {}).get("groups", []))
                for ri, r in enumerate(g.get("rules", [])) if "alert" in r}
    orig, new = alerts(src), alerts(tmp_path)
    assert set(new) == set(orig)
    for key, rule in new.items():
        o = orig[key]
        assert rule["expr"] == o["expr"] and rule["alert"] == o["alert"]
        if o.get("for") and configs.duration_seconds(o["for"]) > 60:
            assert rule["for"] == "1m" and rule["alert"] in out.shortened
            assert f"for: {o['for']} shortened to 1m" in rule["annotations"]["demo"]
        else:
            assert rule.get("for") == o.get("for")
        if "demo" in rule.get("annotations", {}):
            assert rule["annotations"]["demo"].startswith("make run DEMO=1: ")
        else:
            assert rule.get("annotations") == o.get("annotations")
    paged = [k for k, r in orig.items() if r["labels"].get("field_note") == "R1"]
    assert paged and out.paged == sorted({orig[k]["alert"] for k in paged})
    for key in paged:
        assert new[key]["labels"]["severity"] == "critical"
        assert "raised to critical" in new[key]["annotations"]["demo"]
    assert [k for k, r in new.items() if r["labels"].get("severity") != orig[k]["labels"].get("severity")] == paged
    # recording rules untouched; Prometheus accepts the copy
    assert configs.load(tmp_path / "recording.rules.yml") == configs.load(src / "recording.rules.yml")
    res = subprocess.run(["promtool", "check", "rules", *(str(tmp_path / f) for f in configs.RULE_FILES)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_first_alert_estimate():
    from stack import demo
    assert demo.first_alert_seconds(15, 15, 60) == 120
    assert demo.first_alert_seconds(1, 1, 600) == 604


def test_render_prometheus_extra_targets():
    addrs = {c: f"127.0.0.1:{i}" for i, c in enumerate(sorted(set(configs.TEMPLATE_ADDRESSES.values())), 1)}
    doc = configs.render_prometheus(addrs, extra_targets={"dbhost": ["127.0.0.2:9"], "node": ["127.0.0.2:8"]})
    targets = {sc["job_name"]: sc["static_configs"][0]["targets"] for sc in doc["scrape_configs"]}
    assert targets["dbhost"] == [addrs["dbhost"], "127.0.0.2:9"]
    assert targets["node"] == [addrs["node"], "127.0.0.2:8"]
    with pytest.raises(configs.ConfigRenderError, match="no job 'nope'"):
        configs.render_prometheus(addrs, extra_targets={"nope": ["x:1"]})


@pytest.mark.slow
def test_demo_animator_moves_the_counters(tmp_path):
    from stack import demo
    fx = demo.build_host(tmp_path / "host")
    before = (fx.procfs / "diskstats").read_text()
    p = subprocess.Popen([sys.executable, "-m", "stack.demo", "animate", str(fx.root), "--interval", "0.2"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 10
        while (fx.procfs / "diskstats").read_text() == before and time.monotonic() < deadline:
            time.sleep(0.2)
        assert (fx.procfs / "diskstats").read_text() != before
    finally:
        p.terminate()
        p.wait(10)
    bad = subprocess.run([sys.executable, "-m", "stack.demo", "animate", str(tmp_path / "nope")],
                         cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and bad.stderr.strip() == f"error: {tmp_path / 'nope'} is not a demo host tree (no proc/diskstats)"


def test_make_run_prints_why_a_database_is_down(tmp_path):
    """Issue 27: the notification line make run prints carries the page's summary, which for
    OracleDown ends in the reason; a notification of alerts with different summaries has none.
    A line cut by a crash is skipped, the offset advancing over complete lines only."""
    from stack.run import new_notifications
    down = {"path": "/pager", "status": "firing", "alerts": [
        {"labels": {"alertname": "OracleDown", "database": "PROD1"},
         "annotations": {"summary": "Oracle database PROD1 is down or unreachable: connection refused"}}]}
    two = {"path": "/ticket", "status": "firing", "alerts": [
        {"labels": {"alertname": "A", "database": "X"}, "annotations": {"summary": "one"}},
        {"labels": {"alertname": "B", "database": "Y"}, "annotations": {"summary": "two"}}]}
    log = tmp_path / "n.jsonl"
    log.write_text(json.dumps(down) + "\n" + json.dumps(two) + "\n" + '{"path": "/pa')
    lines, offset = new_notifications(log, 0)
    assert lines == ["notification /pager: firing OracleDown (PROD1), 1 alert(s): "
                     "Oracle database PROD1 is down or unreachable: connection refused",
                     "notification /ticket: firing A, B (X, Y), 2 alert(s)"]
    assert offset == len(json.dumps(down)) + len(json.dumps(two)) + 2


def test_free_ports_are_distinct_free_and_below_the_ephemeral_range(monkeypatch):
    """Ports the kernel may hand to any outgoing connection are avoided: one was taken between
    the pick and node_exporter's bind once ("address already in use")."""
    import socket
    from stack import procs
    low = procs._ephemeral_low()
    ports = procs.free_ports(30)
    assert len(set(ports)) == 30
    if low is not None and low - procs.PORTS_FROM >= 1000:
        assert all(procs.PORTS_FROM <= p < low for p in ports), (low, ports)
    for p in ports:                                   # released: each can be bound now
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))
    assert procs._ephemeral_low("/nonexistent") is None
    monkeypatch.setattr(procs, "_ephemeral_low", lambda: procs.PORTS_FROM + 10)   # no room: the kernel picks
    assert len(set(procs.free_ports(5))) == 5


def test_free_ports_of_parallel_test_workers_come_from_their_own_slices(monkeypatch):
    from stack import procs
    monkeypatch.setattr(procs, "_ephemeral_low", lambda: 32768)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
    seen = {}
    for i in range(4):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{i}")
        seen[i] = set(procs.free_ports(40))
        lo, hi = procs._worker_span(procs.PORTS_FROM, 32768)
        assert hi - lo == (32768 - procs.PORTS_FROM) // 4 and all(lo <= p < hi for p in seen[i]), (i, lo, hi)
    assert all(seen[i].isdisjoint(seen[j]) for i in range(4) for j in range(i + 1, 4))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw9")                # not one of the 4: the whole range
    assert procs._worker_span(procs.PORTS_FROM, 32768) == (procs.PORTS_FROM, 32768)
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert procs._worker_span(procs.PORTS_FROM, 32768) == (procs.PORTS_FROM, 32768)
