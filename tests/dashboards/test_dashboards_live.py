"""Every dashboard query against a real Prometheus that scrapes both exporters and node_exporter
with the alert pack's recording rules loaded (see dash_stack.py for the stack).

Variables are substituted the way Grafana does: query variables from their own label_values()
query against this Prometheus, multi-value as (a|b) with regex escaping, repeated panels once per
value, $__range / $__interval / $__rate_interval from the time range and the 1 s scrape interval.
"""
from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dash_model as dm  # noqa: E402
import dash_stack as ds  # noqa: E402

pytestmark = pytest.mark.e2e

BOARDS = dm.load_all()
TARGETS = dm.targets(BOARDS)
MULTI = {"database", "host", "event", "device"}
RANGE_S = 60          # the dashboard time range used for $__range and range queries
INTERVAL_S = 2        # $__interval (and the range-query step)

# Targets allowed to be empty in this stack, each with the PromQL that proves why: the reason
# query must return a sample, otherwise the target has to return data like every other one.
ALLOWED_EMPTY = {
    ("host-cpu", "CPI: cycles per instruction", "A"):
        ("node_exporter runs without --collector.perf (needs perf_event access)",
         "absent(node_perf_instructions_total)"),
    ("host-zfs", "ARC hit ratio: all, demand, prefetch", "A"):
        ("the fixture tree's arcstats counters do not move (no ZFS on this machine)",
         "sum(rate(dbhost_zfs_arc_hits_total[30s])) + sum(rate(dbhost_zfs_arc_misses_total[30s])) == 0"),
    ("host-zfs", "ARC hit ratio: all, demand, prefetch", "B"):
        ("the fixture tree's arcstats counters do not move",
         "sum(rate(dbhost_zfs_arc_hits_total[30s])) + sum(rate(dbhost_zfs_arc_misses_total[30s])) == 0"),
    ("oracle-wallboard", "$host", "C"):
        ("the fixture tree's arcstats counters do not move",
         "sum(rate(dbhost_zfs_arc_hits_total[30s])) + sum(rate(dbhost_zfs_arc_misses_total[30s])) == 0"),
    ("host-zfs", "L2ARC hit ratio", "A"):
        ("the fixture tree's L2ARC counters do not move",
         "sum(rate(dbhost_zfs_l2arc_hits_total[30s])) + sum(rate(dbhost_zfs_l2arc_misses_total[30s])) == 0"),
    ("host-storage", "Read and write latency: other roles", "A"):
        ("no LUN with a role other than redo has node_exporter reads here (fixture LUNs exist only in "
         "sysfs; this machine's disk has role redo)",
         'absent(rate(node_disk_reads_completed_total[30s]) * on (instance, device) group_left () '
         'max by (instance, device) (dbhost_lun_info{role!="redo"}) > 0)'),
    ("host-storage", "Read and write latency: other roles", "B"):
        ("no LUN with a role other than redo has node_exporter writes here",
         'absent(rate(node_disk_writes_completed_total[30s]) * on (instance, device) group_left () '
         'max by (instance, device) (dbhost_lun_info{role!="redo"}) > 0)'),
    ("oracle-wallboard", "Firing alerts", "A"):
        ("no alert has been firing for its `for` duration yet (rules without `for` do fire on the "
         "demo's 'before' profile, then this must have data)",
         'absent(ALERTS{alertstate="firing"})'),
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    reason = ds.missing()
    if reason:
        pytest.skip(reason)
    st = ds.Stack(tmp_path_factory.mktemp("dash-stack"))
    try:
        st.start()
        st.wait_ready(timeout=60)
        st.wait_for("database_inst:oracle_user_commits:rate5m", timeout=60)
        yield st
    finally:
        st.stop()


def label_values(st: ds.Stack, query: str, values: dict) -> list[str]:
    """Grafana's label_values(selector, label) for the Prometheus data source."""
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", query.strip())
    assert m, f"not a label_values query: {query}"
    selector = ds.interpolate(m.group(1), values, MULTI, RANGE_S, INTERVAL_S, ds.SCRAPE_INTERVAL_S)
    r = st.api(f"label/{m.group(2)}/values", **{"match[]": selector})
    assert r["status"] == "success", (query, r)
    return sorted(r["data"])


def variable_values(st: ds.Stack, board: dict, now: float, baseline: str | None = None) -> dict:
    values: dict = {"datasource": "prometheus", "baseline_end": str(int(now))}
    for v in dm.variables(board):
        if v["type"] == "query":
            values[v["name"]] = label_values(st, v["query"], values)
        elif v["type"] == "custom":
            values[v["name"]] = baseline if baseline is not None else v["current"]["value"]
        elif v["type"] == "textbox":
            values.setdefault(v["name"], v["current"]["value"])
    if "baseline" in values:  # a custom variable's value may refer to another variable
        values["baseline"] = values["baseline"].replace("${baseline_end}", values["baseline_end"])
    return values


def run_target(st: ds.Stack, t: dm.Target, values: dict, now: float) -> tuple[str | None, list]:
    """(error, results over the repeat values) for one target."""
    results = []
    for rv in (values[t.repeat] if t.repeat else [None]):
        vals = dict(values)
        if rv is not None:
            vals[t.repeat] = [rv]
        expr = ds.interpolate(t.expr, vals, MULTI, RANGE_S, INTERVAL_S, ds.SCRAPE_INTERVAL_S)
        assert "$" not in re.sub(r'"\$1"', "", expr), f"uninterpolated variable in {expr}"
        if t.instant:
            r = st.api("query", query=expr, time=now)
        else:
            r = st.api("query_range", query=expr, start=now - RANGE_S, end=now, step=INTERVAL_S)
        if r.get("status") != "success":
            return f"{r.get('errorType')}: {r.get('error')} in {expr}", []
        results += r["data"]["result"]
    return None, results


# ------------------------------------------------------------------------------------ tests

def test_variable_queries_return_the_scraped_values(stack):
    demo = ds.DEMO if ds.DEMO.exists() else stack.workdir / "demo-before.jsonl"
    databases, events = set(), set()
    for recording in (demo, stack.rac):
        with open(recording, encoding="utf-8") as fh:
            for line in fh:
                snap = json.loads(line)
                databases.add(snap["database"])
                for row in (snap["views"].get("GV$EVENT_HISTOGRAM_MICRO", [])
                            or snap["views"].get("GV$EVENT_HISTOGRAM", [])):
                    events.add(row["EVENT"])
    assert len(databases) == 2  # DEMO and the RAC database: the multi-value (a|b) path
    now = time.time()
    for uid, board in BOARDS.items():
        values = variable_values(stack, board, now)
        assert set(values["database"]) == databases, uid
        assert set(values["host"]) == {"127.0.0.1", "127.0.0.2"}, uid
        if "event" in values:
            assert set(values["event"]) == events
        if "device" in values:
            assert {"sda", "dm-0", "nvme0n1"} <= set(values["device"])
            if stack.real_disk:
                assert stack.real_disk in values["device"]


def test_every_expression_is_valid_promql_with_every_baseline(stack):
    now = time.time()
    checked = 0
    for uid, board in BOARDS.items():
        baselines = [None]
        for v in dm.variables(board):
            if v["name"] == "baseline":
                baselines = [value for _, value in dm.custom_options(v)]
        for baseline in baselines:
            values = variable_values(stack, board, now, baseline)
            for t in (t for t in TARGETS if t.uid == uid):
                err, _ = run_target(stack, t, values, now)
                assert err is None, f"{uid} / {t.panel} / {t.ref}: {err}"
                checked += 1
    for key, (_, reason_expr) in ALLOWED_EMPTY.items():
        assert stack.api("query", query=reason_expr)["status"] == "success", key
    assert checked >= len(TARGETS) + 2 * sum(1 for t in TARGETS if t.uid == "oracle-capacity")


def test_every_panel_query_returns_data(stack):
    deadline = time.time() + 90
    while True:
        now = time.time()
        failures, allowed_empty = [], []
        values_by_board = {uid: variable_values(stack, b, now, baseline=f"@ {int(now)}")
                           for uid, b in BOARDS.items()}
        for t in TARGETS:
            err, results = run_target(stack, t, values_by_board[t.uid], now)
            assert err is None, err
            if results:
                continue
            key = (t.uid, t.panel, t.ref)
            if key in ALLOWED_EMPTY:
                why, reason_expr = ALLOWED_EMPTY[key]
                r = stack.api("query", query=reason_expr)
                if r["status"] == "success" and r["data"]["result"]:
                    allowed_empty.append(key)
                    continue
            failures.append(f"{t.uid} / {t.panel} / {t.ref}: {t.expr}")
        if not failures or time.time() > deadline:
            break
        time.sleep(2)  # recording rules with 5m windows fill in over the first scrapes
    assert not failures, "queries without data:\n" + "\n".join(failures)
    assert len(allowed_empty) <= len(ALLOWED_EMPTY)
    assert len(TARGETS) - len(allowed_empty) >= 130


# ------------------------------------------------------------------------------------ values

def _instant(stack, t: dm.Target, board: str, now: float | None = None) -> list:
    now = now or time.time()
    values = variable_values(stack, BOARDS[board], now, baseline=f"@ {int(now)}")
    err, results = run_target(stack, t, values, now)
    assert err is None, err
    return results


def _for_db(results: list, database: str = "DEMO") -> list:
    return [r for r in results if r["metric"].get("database") == database]


def _target(uid: str, panel: str, ref: str) -> dm.Target:
    return next(t for t in TARGETS if (t.uid, t.panel, t.ref) == (uid, panel, ref))


def test_wallboard_tile_shows_the_recorded_workload(stack):
    """The 'before' recording (field notes section 1): log file sync 26.45 ms on average,
    72 commits/s and 9.45 MB/s of redo. Replay serves one snapshot per 1 s scrape and the
    series are younger than the 5 m rule windows, so absolute per-second rates are scaled;
    ratios of rates over the same series (average wait, redo bytes per commit) are exact."""
    deadline = time.time() + 60
    while True:
        now = time.time()
        got = {ref: _for_db(_instant(stack, _target("oracle-wallboard", "$database", ref), "oracle-wallboard", now))
               for ref in "ABCDE"}
        if all(got.values()) or time.time() > deadline:
            break
        time.sleep(2)
    status, lfs, commits, redo, lgwr_share = (float(got[r][0]["value"][1]) for r in "ABCDE")
    # the status value: 2 if a critical alert fires for the database, 1 for a warning, else 0
    firing = stack.api("query", query='ALERTS{alertstate="firing", database="DEMO"}', time=now)
    severities = {a["metric"].get("severity") for a in firing["data"]["result"]}
    assert status == (2 if "critical" in severities else 1 if "warning" in severities else 0)
    assert lfs == pytest.approx(0.02645, rel=0.05)
    assert commits > 0 and redo / commits == pytest.approx(9.45e6 / 72, rel=0.05)
    assert 0 <= lgwr_share <= 1  # the ora_lgwr_<SID> process of this machine, joined by sid


def test_redo_ratio_and_histogram_quantiles(stack):
    ratio = _instant(stack, dm.Target("oracle-redo", "", "A",
                                      _target("oracle-redo", "log file sync / log file parallel write", "A").expr,
                                      True, None), "oracle-redo")
    ratio = _for_db(ratio)
    assert float(ratio[0]["value"][1]) == pytest.approx(26.45 / 11.8, rel=0.06)  # R13: 2.24 before
    q = _target("oracle-waits", "p50 and p99 latency", "A")
    now = time.time()
    values = variable_values(stack, BOARDS["oracle-waits"], now)
    values["event"] = ["log file sync"]
    _, p50 = run_target(stack, dm.Target(q.uid, q.panel, q.ref, q.expr, True, None), values, now)
    q99 = _target("oracle-waits", "p50 and p99 latency", "B")
    _, p99 = run_target(stack, dm.Target(q99.uid, q99.panel, q99.ref, q99.expr, True, None), values, now)
    v50, v99 = float(_for_db(p50)[0]["value"][1]), float(_for_db(p99)[0]["value"][1])
    # Oracle's buckets double in size: a 26.45 ms mean puts the median in the 16-64 ms buckets
    assert 0.008 < v50 <= 0.064 and v50 <= v99 <= 1.0


def test_capacity_top5_shares(stack):
    shares = _instant(stack, _target("oracle-capacity",
                                     "Top 5 timed events (now) with share of wait time and average latency", "A"),
                      "oracle-capacity")
    shares = _for_db(shares)
    assert len(shares) == 5
    total = sum(float(s["value"][1]) for s in shares)
    assert 0 < total <= 1.0 + 1e-9
    assert "log file sync" in {s["metric"]["event"] for s in shares}


def test_wallboard_status_is_critical_while_a_database_is_unreachable(stack):
    """The RAC database's recording has unreachable snapshots (oracle_up 0): whenever the
    exporter reports it down, its tile's status is 2 (CRITICAL); when it is up, the status
    follows the firing alerts. Both states must be seen while the recording loops."""
    racdb = json.loads(open(stack.rac, encoding="utf-8").readline())["database"]
    status_t = _target("oracle-wallboard", "$database", "A")
    seen = set()
    deadline = time.time() + 60
    while seen != {0.0, 1.0} and time.time() < deadline:
        now = time.time()
        up = _for_db(stack.api("query", query="oracle_up", time=now)["data"]["result"], racdb)
        status = _for_db(_instant(stack, status_t, "oracle-wallboard", now), racdb)
        if up and status:
            up_v, status_v = float(up[0]["value"][1]), float(status[0]["value"][1])
            firing = stack.api("query", query=f'ALERTS{{alertstate="firing", database="{racdb}"}}', time=now)
            sev = {a["metric"].get("severity") for a in firing["data"]["result"]}
            expected = 2 if up_v == 0 or "critical" in sev else 1 if "warning" in sev else 0
            assert status_v == expected, (up_v, sev, status_v)
            seen.add(up_v)
        time.sleep(0.5)
    assert seen == {0.0, 1.0}, f"oracle_up values seen for {racdb}: {seen}"
    # two instances: the tile aggregates them into one value per database
    insts = stack.api("query", query=f'count by (database) (last_over_time(oracle_instance_info{{database="{racdb}"}}[1m]))')
    assert insts["data"]["result"] and float(insts["data"]["result"][0]["value"][1]) == 2
