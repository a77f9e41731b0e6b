"""Issue 27: every bad value on make run's command line (python -m stack.run) is one line
on stderr naming the option, exit status 2 (1 for a state directory it cannot use), never a
traceback nor argparse's usage block, and nothing is started."""
from __future__ import annotations

import subprocess
import sys

import pytest

from e2e_support import ROOT

BIG = "9" * 400


@pytest.mark.parametrize("args,message,status", [
    (["--prometheus-port", "99999"], "error: argument --prometheus-port: must be 1-65535, got 99999", 2),
    (["--node-port", "-1"], "error: argument --node-port: must be 1-65535, got -1", 2),
    (["--webhook-port", "0"], "error: argument --webhook-port: must be 1-65535, got 0", 2),
    (["--alertmanager-port", BIG], "error: argument --alertmanager-port: must be 1-65535, got " + BIG[:40], 2),
    (["--oracle-port", "abc"], "error: argument --oracle-port: expected a port number, got 'abc'", 2),
    (["--node-port", "29999", "--dbhost-port", "29999"], "error: --node-port 29999 is also --dbhost-port", 2),
    (["--bogus"], "error: unrecognized arguments: --bogus", 2),
    (["--scrape-interval", "0s"], "error: --scrape-interval: must be between 0.001s and 3600s, got '0s'", 2),
    (["--scrape-interval", BIG + "h"], "error: --scrape-interval: not a Prometheus duration: '" + BIG[:40] + "'...", 2),
    (["--scrape-interval", "9" * 5000 + "ms"], "error: --scrape-interval: not a Prometheus duration: '"
     + BIG[:40] + "'...", 2),
    (["--demo-for", "2d"], "error: --demo-for: must be between 0s and 86400s, got '2d'", 2),
    (["--dbhost-config", "/nonexistent/d.yml"], "error: --dbhost-config /nonexistent/d.yml: no such file", 2),
    (["--oracle-config", "/nonexistent/o.yml"], "error: --oracle-config /nonexistent/o.yml: no such file", 2),
])
def test_bad_command_line_values_are_one_line(tmp_path, args, message, status):
    state = tmp_path / "state"
    res = subprocess.run([sys.executable, "-m", "stack.run", "--state-dir", str(state), *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == status
    assert "Traceback" not in res.stderr and "usage:" not in res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(message), line
    assert not state.exists()                   # refused before anything was touched


@pytest.mark.parametrize("make_bad", ["missing-parent", "a-file"])
def test_unusable_state_dir_is_one_line(tmp_path, make_bad):
    if make_bad == "a-file":
        state = tmp_path / "state"
        state.write_text("not a directory")
    else:
        blocker = tmp_path / "file"
        blocker.write_text("x")
        state = blocker / "state"
    res = subprocess.run([sys.executable, "-m", "stack.run", "--state-dir", str(state)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"error: --state-dir {state}: cannot use it: ")
