"""Issue 13: every instance-health collector has an alert with a runbook, a wallboard tile and a
detail panel, and issue 14's host signals (run delay, multipath, NVMe) likewise an alert with a
runbook and a panel (the wallboard for run delay and lost paths).

A metric "is used" by a rule or panel when its expression (or a query in an alert's text) names it, directly or through a
recording rule (alerts/recording.rules.yml) that names it."""
from __future__ import annotations

import re

import pytest
import yaml

import dash_model as dm

REPO = dm.REPO
BOARDS = dm.load_all()
RUNBOOK_URL = re.compile(r"/docs/runbooks/([A-Za-z0-9]+\.md)$")

# collector (docs/metrics.md section) -> the metrics an on-call engineer must see judged
HEALTH = {
    "resource_limits": {"oracle_resource_current_utilization", "oracle_resource_limit"},
    "tablespaces": {"oracle_tablespace_used_bytes", "oracle_tablespace_max_bytes"},
    "recovery_area": {"oracle_recovery_area_used_bytes", "oracle_recovery_area_reclaimable_bytes",
                      "oracle_recovery_area_limit_bytes"},
    "archive_dest": {"oracle_archive_dest_error"},
    "dataguard lag": {"oracle_dataguard_lag_seconds"},
    "dataguard lag not computed": {"oracle_dataguard_lag_computed"},
    "dataguard lag stale": {"oracle_dataguard_lag_datum_age_seconds"},
    "asm space": {"oracle_asm_diskgroup_file_space_bytes", "oracle_asm_diskgroup_file_capacity_bytes"},   # issue 22 (same basis)
    "asm offline disks": {"oracle_asm_diskgroup_offline_disks"},
}

# issue 14's host signals: metric set -> whether the wallboard must show it too
HOST_SIGNALS = {
    "run delay (R13 cause)": ({"dbhost_process_run_delay_seconds_total", "dbhost_process_timeslices_total"}, True),
    "multipath redundancy": ({"dbhost_multipath_paths", "dbhost_multipath_paths_active"}, True),
    "multipath suspended": ({"dbhost_multipath_suspended"}, False),
    "nvme controller state": ({"dbhost_nvme_controller_state"}, False),
    "shm limits vs SGA (M5)": ({"dbhost_kernel_shmall_bytes", "oracle_sga_target_bytes"}, False),
    "huge pages vs SGA (M5, M1)": ({"dbhost_memory_hugepages", "dbhost_memory_hugepage_size_bytes",
                                    "oracle_sga_target_bytes"}, False),
}


def _rules(name: str) -> list[dict]:
    return [r for g in yaml.safe_load((REPO / "alerts" / name).read_text())["groups"] for r in g["rules"]]


def _names(expr: str) -> set[str]:
    return set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr))


RECORDS = {r["record"]: _names(r["expr"]) for r in _rules("recording.rules.yml")}


def _expand(expr: str) -> set[str]:
    """Metric names an expression reads, recording rules resolved (two levels deep is enough)."""
    names = _names(expr)
    for _ in range(3):
        names |= set().union(*(RECORDS.get(n, set()) for n in names))
    return names


def _annotation_queries(rule: dict) -> str:
    """The PromQL an alert's text runs (`{{ with printf "<query>" ... | query }}`): an alert that
    names its measured cause in its text (R13's run delay) reads that signal there, not in its
    identity (a measured cause in the labels restarts `for` whenever it changes)."""
    return " ".join(q for text in rule.get("annotations", {}).values()
                    for q in re.findall(r'printf "([^"]*)"[^}]*\| query', text))


ALERTS = [(r["alert"], _expand(r["expr"] + " " + _annotation_queries(r)), r["annotations"].get("runbook_url", ""))
          for r in _rules("alerts.rules.yml")]


def _panels(uid_pred) -> list[tuple[str, str, set]]:
    out = []
    for uid, board in BOARDS.items():
        if not uid_pred(uid):
            continue
        for p in dm.panels(board):
            for t in p.get("targets", []):
                out.append((uid, p["title"], _expand(t.get("expr", ""))))
    return out


WALLBOARD = _panels(lambda uid: uid == "oracle-wallboard")
DETAIL = _panels(lambda uid: uid != "oracle-wallboard")


@pytest.mark.parametrize("collector", sorted(HEALTH))
def test_every_health_signal_has_an_alert_with_a_runbook(collector):
    metrics = HEALTH[collector]
    alerts = [(a, url) for a, names, url in ALERTS if metrics <= names]
    assert alerts, f"{collector}: no alert reads {sorted(metrics)}"
    for alert, url in alerts:
        m = RUNBOOK_URL.search(url)
        assert m and m.group(1) == f"{alert}.md", (alert, url)
        assert (REPO / "docs" / "runbooks" / m.group(1)).is_file(), f"{alert}: runbook missing"


@pytest.mark.parametrize("collector", sorted(HEALTH))
def test_every_health_signal_has_a_wallboard_tile_and_a_detail_panel(collector):
    metrics = HEALTH[collector]
    tiles = {title for _, title, names in WALLBOARD if metrics <= names}
    detail = {(uid, title) for uid, title, names in DETAIL if metrics <= names}
    assert tiles, f"{collector}: no wallboard tile reads {sorted(metrics)}"
    assert detail, f"{collector}: no detail panel reads {sorted(metrics)}"


@pytest.mark.parametrize("signal", sorted(HOST_SIGNALS))
def test_every_issue14_signal_has_an_alert_with_a_runbook_and_panels(signal):
    metrics, on_wallboard = HOST_SIGNALS[signal]
    alerts = [(a, url) for a, names, url in ALERTS if metrics <= names]
    assert alerts, f"{signal}: no alert reads {sorted(metrics)}"
    for alert, url in alerts:
        m = RUNBOOK_URL.search(url)
        assert m and (REPO / "docs" / "runbooks" / m.group(1)).is_file(), (alert, url)
    assert {(uid, t) for uid, t, names in DETAIL if metrics <= names}, f"{signal}: no detail panel"
    if on_wallboard:
        assert {t for _, t, names in WALLBOARD if metrics <= names}, f"{signal}: no wallboard tile"
