"""`make run`'s entry point itself (python -m stack.run), as a user runs it:
prints progress and "all targets up" with the URLs, keeps its state in the
state directory, and on Ctrl-C (SIGINT) or SIGTERM stops every component and
exits 0. Free ports instead of the defaults and a 1s scrape interval keep it
fast; everything else is the default (demo recording, this host's /proc and
/sys, the alert pack)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from e2e_support import ALERTS, DEMO_BEFORE, ROOT, require
from stack import run
from stack.procs import free_ports

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_make_run_reaches_all_targets_up_and_stops_cleanly(tmp_path, sig):
    require(DEMO_BEFORE, "oracle-exporter demo recording")
    for name in ("recording.rules.yml", "alerts.rules.yml", "alertmanager.yml"):
        require(ALERTS / name, "alert pack")
    ports = dict(zip(run.DEFAULT_PORTS, free_ports(len(run.DEFAULT_PORTS))))
    argv = [sys.executable, "-m", "stack.run", "--state-dir", str(tmp_path / "state"), "--scrape-interval", "1s",
            "--oracle-replay", str(DEMO_BEFORE), "--rules-dir", str(ALERTS),
            "--alertmanager-config", str(ALERTS / "alertmanager.yml")]
    for comp, port in ports.items():
        argv += [f"--{comp}-port", str(port)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    out = []
    pids: dict[str, int] = {}
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            out.append(line)
            if "Press Ctrl-C to stop." in line:
                break
        text = "".join(out)
        assert re.search(r"^\[stack\] all targets up \(\d+\.\ds after start\)$", text, re.M), text
        pids.update({name: int(pid) for name, pid in re.findall(r"\[stack\] (\S+) ready \(pid (\d+)\)", text)})
        assert set(pids) == {"webhook", "oracle-exporter", "dbhost-exporter", "node_exporter", "alertmanager",
                             "prometheus"}
        assert f"Prometheus       http://127.0.0.1:{ports['prometheus']}" in text
        assert f"webhook          http://127.0.0.1:{ports['webhook']}/notifications" in text
        # all state under the one state directory
        state = tmp_path / "state"
        assert {p.name for p in state.iterdir()} == {"prometheus", "alertmanager", "webhook", "logs"}
        assert (state / "prometheus" / "rules").resolve() == ALERTS.resolve()
        proc.send_signal(sig)
        rest, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, text + rest
        assert rest.splitlines()[-1] == "[stack] stopped"
        assert [l.split()[-1] for l in rest.splitlines() if l.startswith("[stack] stopped ")] == [
            "prometheus", "alertmanager", "node_exporter", "dbhost-exporter", "oracle-exporter", "webhook"]
        for name, pid in pids.items():
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        for pid in pids.values():   # components run in their own process groups
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
