"""Issue 27: make run's notification log (stack/webhook.py) survives kill -9 and a full
disk. A partial line left by a killed writer is never glued to the next notification; a
write that fails (ENOSPC) leaves no partial line, is answered 500 (Alertmanager retries),
is counted in a metric the stack's Prometheus scrapes (with an alert on it) and printed
loudly; hostile requests are one line and a 4xx, never a traceback."""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from e2e_support import ROOT, post_json
from stack import run, webhook
from stack.procs import Proc, Supervisor, free_ports, http_get, http_json

PAGE = {"version": "4", "status": "firing", "receiver": "pager",
        "alerts": [{"labels": {"alertname": "OracleDown", "database": "PROD1"},
                    "annotations": {"summary": "Oracle database PROD1 is down or unreachable: connection refused"}}]}




def _lines(path: Path) -> list[str]:
    return path.read_bytes().decode().split("\n")


def _start(sup: Supervisor, tmp_path: Path, log: Path, prefix: list[str] | None = None,
           docs: Path | None = None) -> tuple[Proc, str]:
    port = free_ports(1)[0]
    argv = [*(prefix or []), sys.executable, "-m", "stack.webhook", "--listen", f"127.0.0.1:{port}", "--log", str(log)]
    if docs:
        argv += ["--docs", str(docs)]
    url = f"http://127.0.0.1:{port}"
    return sup.start(Proc("webhook", argv, tmp_path / "webhook.log", cwd=ROOT, ready_url=url + "/-/ready")), url


def _metric(url: str, name: str) -> float:
    status, body = http_get(url + "/metrics")
    assert status == 200
    (line,) = [l for l in body.decode().splitlines() if l.startswith(name + " ")]
    return float(line.split()[1])


# --- kill -9 -----------------------------------------------------------------------------------

def test_a_line_cut_by_kill_9_is_not_glued_to_the_next(tmp_path):
    """A webhook killed with -9 in the middle of a write leaves an unterminated line; the
    next run's first notification starts on a line of its own and make run prints it."""
    log = tmp_path / "n.jsonl"
    whole = json.dumps({**PAGE, "path": "/pager"})
    log.write_text(whole + "\n" + whole[: len(whole) // 2])          # what the kill left
    with Supervisor() as sup:
        p, url = _start(sup, tmp_path, log)
        offset = log.stat().st_size
        assert post_json(url + "/pager", json.dumps(PAGE).encode()) == 200
        # ... and really killed with -9 now: nothing of the answered notification is lost
        os.kill(p.pid, signal.SIGKILL)
        p.popen.wait(10)
    lines = _lines(log)
    assert lines[-1] == "" and len(lines) == 4
    assert json.loads(lines[0]) == {**PAGE, "path": "/pager"}
    assert lines[1] == whole[: len(whole) // 2]                        # the broken one, alone on its line
    assert json.loads(lines[2])["alerts"] == PAGE["alerts"]
    printed, _ = run.new_notifications(log, offset)
    assert printed == ["notification /pager: firing OracleDown (PROD1), 1 alert(s): "
                       "Oracle database PROD1 is down or unreachable: connection refused"]


# --- full disk ---------------------------------------------------------------------------------

def test_enospc_part_way_through_a_write_leaves_no_partial_line(tmp_path, monkeypatch):
    """An injected ENOSPC after half of the line was written: the half is cut off again,
    the error propagates, the next write is whole."""
    log = tmp_path / "n.jsonl"
    webhook.append_line(log, b'{"a":1}\n')
    real_write = os.write
    calls = []

    def half_then_full(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(webhook.os, "write", half_then_full)
    with pytest.raises(OSError) as exc:
        webhook.append_line(log, b'{"b":2}\n')
    assert exc.value.errno == errno.ENOSPC and len(calls) == 2
    monkeypatch.setattr(webhook.os, "write", real_write)
    assert log.read_bytes() == b'{"a":1}\n'
    webhook.append_line(log, b'{"c":3}\n')
    assert log.read_bytes() == b'{"a":1}\n{"c":3}\n'


def test_receiver_on_a_device_that_is_always_full(tmp_path):
    """/dev/full answers every write with ENOSPC: the receiver raises, counts it, says so
    once per failure on stderr and keeps nothing in /notifications."""
    import io
    err = io.StringIO()
    rec = webhook.Receiver(Path("/dev/full"), echo=None, errors=err)
    for i in (1, 2):
        with pytest.raises(webhook.LogWriteError):
            rec.record("/pager", PAGE)
        assert rec.write_failures == i
    assert rec.received == [] and rec.status()["last_write_ok"] is False
    assert err.getvalue().splitlines() == [
        f"ERROR: cannot write notification to /dev/full: No space left on device ({i} failed so far); "
        "answered 500, Alertmanager retries it" for i in (1, 2)]
    assert "webhook_notification_log_write_failures_total 2\n" in rec.metrics()
    assert "webhook_notification_log_last_write_success 0\n" in rec.metrics()


def _tiny_fs_prefix(mnt: Path, size: str) -> list[str] | None:
    """argv prefix running a command with a tmpfs of `size` mounted at mnt, in a mount
    namespace of its own (unprivileged user namespace if needed); None if this machine
    cannot (then the injected-ENOSPC tests above stand in)."""
    unshare = shutil.which("unshare")
    if not unshare:
        return None
    for flags in (["-m"], ["-r", "-m"]):
        probe = subprocess.run([unshare, *flags, "sh", "-c", f"mount -t tmpfs -o size={size} tmpfs {mnt} && "
                                "touch " + str(mnt / "probe")], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return [unshare, *flags, "sh", "-c", f'mount -t tmpfs -o size={size} tmpfs {mnt} && exec "$@"', "sh"]
    return None


def test_full_tiny_filesystem(tmp_path):
    """A real 64 KiB tmpfs filled by notifications: every write that does not fit is a 500,
    counted and reported, the file holds complete JSON lines only; once space is freed the
    next notification is logged whole."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    prefix = _tiny_fs_prefix(mnt, "64k")
    if prefix is None:
        pytest.skip("cannot mount a tmpfs here (no unshare/mount namespaces); ENOSPC is covered by injection")
    log = mnt / "notifications.jsonl"
    big = {**PAGE, "pad": "x" * 7000}
    statuses = []
    with Supervisor() as sup:
        p, url = _start(sup, tmp_path, log, prefix)
        for _ in range(14):
            statuses.append(post_json(url + "/pager", json.dumps(big).encode()))
        assert 200 in statuses and 500 in statuses, statuses
        first_fail = statuses.index(500)
        assert set(statuses[first_fail:]) == {500}
        fails = statuses.count(500)
        assert _metric(url, "webhook_notification_log_write_failures_total") == fails
        assert _metric(url, "webhook_notification_log_last_write_success") == 0
        assert _metric(url, "webhook_notifications_logged_total") == statuses.count(200)
        st = http_json(url + "/-/status")
        assert st["write_failures"] == fails and st["last_error"] == "No space left on device"
        line, seen = run.webhook_trouble(url, 0)
        assert seen == fails and line.startswith(f"WARNING: the webhook receiver could not write {fails} "
                                                 f"notification(s) to {log}: No space left on device")
        assert run.webhook_trouble(url, seen) == (None, seen)           # said once per new failure
        # the file (read through the namespace: /proc/PID/root) holds whole lines only
        inner = Path(f"/proc/{p.pid}/root") / str(log).lstrip("/")
        data = inner.read_bytes()
        assert data.endswith(b"\n")
        assert [json.loads(l)["pad"] for l in data.splitlines()] == [big["pad"]] * statuses.count(200)
        # free space: the oldest half of the log goes; the next notification is logged whole
        inner.write_bytes(b"")
        assert post_json(url + "/pager", json.dumps(PAGE).encode()) == 200
        assert _metric(url, "webhook_notification_log_last_write_success") == 1
        assert [json.loads(l)["alerts"] for l in inner.read_bytes().splitlines()] == [PAGE["alerts"]]
    text = (tmp_path / "webhook.log").read_text()
    assert text.count("ERROR: cannot write notification to") == fails and "Traceback" not in text


# --- the stack scrapes the receiver and alerts on failed writes ----------------------------------

def test_make_run_scrapes_the_webhook_and_alerts_on_failed_writes(tmp_path):
    """stack.run's Prometheus config has a `webhook` job and loads the stack rule
    NotificationLogWriteFailing; promtool checks the rule fires on one failed write."""
    promtool = shutil.which("promtool")
    opts = run.StackOptions(state=tmp_path / "state", ports=dict(zip(run.DEFAULT_PORTS, free_ports(6))))
    paths = run.prepare(opts)
    import yaml
    prom = yaml.safe_load(paths["prometheus"].read_text())
    assert {"job_name": "webhook", "static_configs": [{"targets": [opts.addr("webhook")]}]} in prom["scrape_configs"]
    assert "stack.rules.yml" in prom["rule_files"]
    if not promtool:
        pytest.skip("promtool not installed")
    res = subprocess.run([promtool, "check", "config", str(paths["prometheus"])], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    test = tmp_path / "state" / "prometheus" / "stack.test.yml"
    lab = 'job="webhook",instance="127.0.0.1:19199"'
    test.write_text(json.dumps({
        "rule_files": ["stack.rules.yml"], "evaluation_interval": "15s",
        "tests": [{"interval": "15s", "input_series": [
            {"series": f"webhook_notification_log_write_failures_total{{{lab}}}", "values": "0 0 0 1 1 1 1"},
            {"series": f"webhook_notification_log_last_write_success{{{lab}}}", "values": "1 1 1 0 1 1 1"}],
            "alert_rule_test": [
                {"eval_time": "30s", "alertname": "NotificationLogWriteFailing", "exp_alerts": []},
                {"eval_time": "75s", "alertname": "NotificationLogWriteFailing", "exp_alerts": [
                    {"exp_labels": {"job": "webhook", "instance": "127.0.0.1:19199", "severity": "critical",
                                    "layer": "monitoring"},
                     "exp_annotations": run.STACK_RULES["groups"][0]["rules"][0]["annotations"] | {
                         "description": run.STACK_RULES["groups"][0]["rules"][0]["annotations"]["description"]
                         .replace("{{ $labels.instance }}", "127.0.0.1:19199")}}]}]}]}))
    res = subprocess.run([promtool, "test", "rules", str(test)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


# --- hostile requests: one line, a 4xx ---------------------------------------------------------

def test_hostile_requests_are_answered_not_tracebacks(tmp_path):
    docs = tmp_path / "docs"
    (docs / "runbooks").mkdir(parents=True)
    (docs / "runbooks" / "OracleDown.md").write_text("# OracleDown\n")
    (docs / "loop.md").symlink_to(docs / "loop.md")                  # a symlink loop
    (docs / "a").symlink_to(docs / "b")
    (docs / "b").symlink_to(docs / "a")
    log = tmp_path / "n.jsonl"
    with Supervisor() as sup:
        p, url = _start(sup, tmp_path, log, docs=docs)
        for path in ("/docs/%00", "/docs/runbooks/%00.md", "/docs/" + "a" * 5000 + ".md",
                     "/docs/" + "/".join(["d" * 250] * 20) + ".md", "/docs/loop.md", "/docs/a/x.md", "/docs/a",
                     "/docs/%ff%fe.md", "/docs/../../etc/passwd", "/docs/%2e%2e/%2e%2e/etc/passwd"):
            status, body = http_get(url + path)
            assert status == 404, (path[:60], status)
            assert b"Not found" in body
        assert http_get(url + "/docs/runbooks/OracleDown.md")[0] == 200
        deep = b'{"a":' * 100000 + b"1" + b"}" * 100000
        assert post_json(url + "/pager", deep) == 400
        assert post_json(url + "/pager", b"[" * 100000) == 400
        assert post_json(url + "/" + "p" * 5000, json.dumps(PAGE).encode()) in (400, 414)
        assert post_json(url + "/pager", json.dumps(PAGE).encode()) == 200      # still serving
        time.sleep(0.2)
    text = (tmp_path / "webhook.log").read_text()
    assert "Traceback" not in text, text


def test_a_browser_get_of_the_notifications_page_is_one_response(tmp_path):
    """Issue 27 review: the HTML notifications page was answered, then the JSON one after it on the
    same connection (two responses to one request: the next request on a kept-alive connection
    read the wrong one). One request, one response, HTML for a browser, JSON for a program."""
    import socket

    with Supervisor() as sup:
        _, url = _start(sup, tmp_path, tmp_path / "n.jsonl")
        assert post_json(url + "/pager", json.dumps(PAGE).encode()) == 200
        port = int(url.rsplit(":", 1)[1])
        for accept, kind in ((b"text/html", b"text/html"), (b"application/json", b"application/json")):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"GET /notifications HTTP/1.1\r\nHost: x\r\nAccept: " + accept + b"\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            assert data.count(b"HTTP/1.1 ") == 1, data[:300]
            assert b"Content-Type: " + kind in data
