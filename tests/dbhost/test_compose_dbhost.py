"""The compose dbhost-exporter service shares the host's IPC namespace (review host finding 3).

/proc/sysvipc/shm and /proc/sys/kernel/shm{max,all,mni} answer for the IPC namespace of the
process that reads them, whatever procfs mount it reads through: a container without
`ipc: host` sees its own empty namespace (0 segments, shmall of a fresh namespace), so
dbhost_shm_bytes is 0 and HostShmallBelowSga (M5) cannot fire."""
from __future__ import annotations

import yaml

from dbhost_support import REPO


def test_dbhost_exporter_runs_in_the_host_ipc_pid_and_network_namespaces():
    svc = yaml.safe_load((REPO / "compose" / "docker-compose.yml").read_text())["services"]["dbhost-exporter"]
    assert svc["ipc"] == "host"
    assert svc["pid"] == "host"
    assert svc["network_mode"] == "host"


def test_docs_say_the_memory_collector_needs_the_host_ipc_namespace():
    text = (REPO / "docs" / "dbhost-exporter.md").read_text()
    assert "ipc: host" in text and "IPC namespace" in text
