"""A real Prometheus for the fleetview tests: on a TSDB backfilled from OpenMetrics text (promtool
tsdb create-blocks-from openmetrics), or empty."""
from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from stack.procs import free_port


@contextlib.contextmanager
def real_prometheus(workdir: Path, openmetrics: str | None = None):
    """Prometheus serving `openmetrics` (text ending in '# EOF'), backfilled into workdir/tsdb;
    yields its base URL and stops it at the end."""
    for exe in ("prometheus", "promtool"):
        if not shutil.which(exe):
            pytest.skip(f"{exe} not installed (Debian package prometheus)")
    workdir.mkdir(parents=True, exist_ok=True)
    if openmetrics is not None:
        (workdir / "data.om").write_text(openmetrics)
        subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(workdir / "data.om"),
                        str(workdir / "tsdb")], check=True, capture_output=True, timeout=120)
    (workdir / "prometheus.yml").write_text("global:\n  scrape_interval: 15s\n")
    port = free_port()
    proc = subprocess.Popen(["prometheus", f"--config.file={workdir / 'prometheus.yml'}",
                             f"--storage.tsdb.path={workdir / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}",
                             "--storage.tsdb.retention.time=100y", "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "/-/ready", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("Prometheus did not become ready")
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def real_alertmanager(workdir: Path):
    """Alertmanager (Debian's) with one null receiver; yields its base URL."""
    exe = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    if exe is None:
        pytest.skip("alertmanager not installed (Debian package prometheus-alertmanager)")
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "am.yml").write_text('route:\n  receiver: "null"\nreceivers:\n  - name: "null"\n')
    port = free_port()
    proc = subprocess.Popen([exe, f"--config.file={workdir / 'am.yml'}", f"--storage.path={workdir / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address=", "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "/-/ready", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("Alertmanager did not become ready")
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
