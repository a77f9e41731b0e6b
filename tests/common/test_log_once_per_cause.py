"""Issue 27: docs/oracle-exporter.md says a failing database's error is logged "once per
change of cause"; it was logged every scrape (the text carries the reconnect backoff delay).
Now: one line per outage and cause, a new line when the cause changes, one on recovery."""
from __future__ import annotations

import logging
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from exporter_common.runner import CollectorRunner as Runner
from stack.procs import free_ports as _free_ports

ROOT = Path(__file__).resolve().parents[2]


def test_an_unreachable_database_is_logged_once_not_every_scrape(tmp_path):
    listen, dead = _free_ports(2)                  # nothing listens on `dead`: connection refused
    cfg = tmp_path / "o.yml"
    cfg.write_text("timeout_seconds: 3\nconnect_timeout_seconds: 2\ndatabases:\n"
                   f"  - {{name: LOST, dsn: '127.0.0.1:{dead}/NOPE', user: u, password_env: HOME}}\n")
    log = tmp_path / "x.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "oracle_exporter", "--config.file", str(cfg),
                                 "--web.listen-address", f"127.0.0.1:{listen}"], stdout=out, stderr=out, cwd=ROOT)
    try:
        deadline = time.monotonic() + 20
        scrapes = 0
        while scrapes < 6 and time.monotonic() < deadline:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{listen}/metrics", timeout=10).read().decode()
            except OSError:
                time.sleep(0.2)
                continue
            assert 'oracle_up{database="LOST"} 0' in body
            scrapes += 1
            time.sleep(0.3)
        assert scrapes == 6
    finally:
        proc.terminate()
        proc.wait(10)
    lines = [l for l in log.read_text().splitlines() if "fetch failed" in l]
    assert len(lines) == 1, "\n".join(lines)
    assert re.search(r'database LOST: fetch failed: connect failed: .*Connection refused', lines[0])


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_runner_logs_start_change_of_cause_and_recovery():
    logger = logging.getLogger("test-once-per-cause")
    cap = _Capture()
    logger.addHandler(cap)
    logger.setLevel(logging.INFO)
    r = Runner(logger=logger)
    texts = ["connect failed: refused", "connect failed: refused (reconnect backoff, next attempt in 0.7 s)",
             "connect failed: refused (reconnect backoff, next attempt in 0.4 s)"]
    for t in texts:
        r.note("fetch", t, "DB", cause="connection refused")
    r.note("fetch", "ORA-01017: invalid username/password", "DB", cause="logon denied")
    r.note("fetch", "ORA-01017: invalid username/password", "DB", cause="logon denied")
    r.note("fetch", None, "DB")
    r.note("fetch", "connect failed: refused", "DB", cause="connection refused")
    assert len(cap.lines) == 4, cap.lines
    assert cap.lines[0].endswith("failed: connect failed: refused")
    assert cap.lines[1].endswith("failed: ORA-01017: invalid username/password")
    assert cap.lines[2].endswith("recovered")
    assert cap.lines[3].endswith("failed: connect failed: refused")
    assert r.errors[("DB", "fetch")] == 6          # every failure counted, only changes logged
