"""Helpers of the end-to-end tests: what is missing (skip with the exact
reason), the fixture tree of the host exporter, recordings derived from the
oracle-exporter's demo recording, and Prometheus/Alertmanager queries.

Processes are started only through stack.procs / stack.run (the same code as
`make run`), inside fixtures whose finally stops every process group."""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from stack.procs import http_json  # noqa: E402

# Overridable to run the end-to-end tests against another recording / alert pack.
DEMO_BEFORE = Path(os.environ.get("E2E_DEMO_RECORDING",
                                  ROOT / "exporters" / "oracle_exporter" / "demo" / "demo-before.jsonl"))
FIXTURE_GENERATOR = ROOT / "exporters" / "dbhost_exporter" / "demo" / "tree.py"
ALERTS = Path(os.environ.get("E2E_ALERTS_DIR", ROOT / "alerts"))
DOWN_ERROR = "ORA-12170: TNS:Connect timeout occurred"


def require(path: Path, what: str) -> Path:
    """A file of the project the test needs: missing is a broken checkout (or a wrong
    E2E_* override), a failure, never a silent skip."""
    if not path.exists():
        pytest.fail(f"{path} is missing ({what})")
    return path


def require_stack_inputs() -> None:
    require(DEMO_BEFORE, "oracle-exporter demo recording that crosses R1 and R2")
    require(FIXTURE_GENERATOR, "dbhost-exporter fixture generator")
    for name in ("recording.rules.yml", "alerts.rules.yml", "alertmanager.yml"):
        require(ALERTS / name, "alert pack")


def build_dbhost_fixture(dest: Path, tree: str = "golden") -> dict[str, str]:
    """Run the dbhost fixture generator (a real sysfs/procfs-shaped tree); return its paths.
    tree: golden (SCSI, dm-multipath, NVMe, ZFS, processes), paths (path health: failed SCSI
    paths, NVMe native multipath with ANA) or variant."""
    res = subprocess.run([sys.executable, "-m", "dbhost_exporter.demo.tree", "--tree", tree, str(dest)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, f"fixture generator failed: {res.stderr}"
    out = dict(kv.split("=", 1) for kv in res.stdout.split())
    assert {"procfs", "sysfs", "config"} <= set(out), res.stdout
    return out


def read_recording(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def derive_recording(source: list[dict], database: str, down_after: int | None = None) -> list[dict]:
    """The snapshots of the source's first database renamed to `database`; from
    snapshot index `down_after` on, the database is unreachable: empty views and
    errors {"*": ORA-12170} (the replay convention for a failed connection)."""
    first = source[0]["database"]
    out = []
    for i, snap in enumerate(s for s in source if s["database"] == first):
        snap = json.loads(json.dumps(snap))
        snap["database"] = database
        if down_after is not None and i >= down_after:
            snap["views"] = {}
            snap["errors"] = {"*": DOWN_ERROR}
        out.append(snap)
    return out


def write_recording(path: Path, *streams: list[dict]) -> Path:
    """Interleave per-database streams in time order (the order a recorder writes)."""
    merged = sorted((s for stream in streams for s in stream), key=lambda s: s["time"])
    path.write_text("".join(json.dumps(s) + "\n" for s in merged))
    return path


def prom_query(base: str, expr: str) -> list[dict]:
    data = http_json(f"{base}/api/v1/query?query={urllib.parse.quote(expr)}")
    assert data["status"] == "success", data
    return data["data"]["result"]


def system_event_rows(snap: dict, event: str) -> list[dict]:
    return [r for r in snap["views"].get("GV$SYSTEM_EVENT", []) if r.get("EVENT") == event]


def prometheus_hashmod(value: str, modulus: int) -> int:
    """Prometheus' relabel hashmod: md5 of the joined source labels, the low 8
    bytes as a big-endian uint64, modulo `modulus` (model/relabel/relabel.go)."""
    return int.from_bytes(hashlib.md5(value.encode()).digest()[8:], "big") % modulus


def post_json(url: str, body: bytes, timeout: float = 10) -> int:
    """POST a JSON body; the HTTP status (an error status too, never an exception for one)."""
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


class StackRun:
    """`python -m stack.run` started like a user starts it; `text` is its output up to
    "Press Ctrl-C to stop.", `pids` the components it reported ready."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True, env=env)
        self.pids: dict[str, int] = {}
        out: list[str] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            out.append(line)
            if "Press Ctrl-C to stop." in line:
                break
        self.text = "".join(out)
        self.pids.update({name: int(pid) for name, pid in
                          re.findall(r"\[stack\] (\S+) ready \(pid (\d+)\)", self.text)})

    def stop(self, sig: int) -> str:
        """Send `sig`, expect exit 0 and every component gone; return the rest of the output."""
        self.proc.send_signal(sig)
        rest, _ = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, self.text + rest
        assert rest.splitlines()[-1] == "[stack] stopped"
        for pid in self.pids.values():
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        return rest

    def kill(self) -> None:
        """Last resort in `finally`: nothing may outlive the test, also when it failed."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        for pid in self.pids.values():   # components run in their own process groups
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
