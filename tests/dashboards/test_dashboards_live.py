"""Every dashboard query against a real Prometheus that scrapes both exporters and node_exporter
with the alert pack's recording rules loaded (see dash_stack.py for the stack).

Variables are substituted the way Grafana does: query variables from their own label_values()
query against this Prometheus, multi-value as (a|b) with regex escaping, repeated panels once per
value, $__range / $__interval / $__rate_interval from the time range and the 1 s scrape interval.
"""
from __future__ import annotations

import json
import re
import time

import pytest

import dash_model as dm
from mixin import config
import dash_stack as ds
import make_fixtures as mf

pytestmark = pytest.mark.e2e

BOARDS = dm.load_all()
TARGETS = dm.targets(BOARDS)
MULTI = {"database", "host", "event", "device"}
RANGE_S = 60          # the dashboard time range used for $__range and range queries
INTERVAL_S = 2        # $__interval (and the range-query step)

# The fixture host (127.0.0.2) is animated (make_fixtures.advance_tree, one step per scrape), so
# its ZFS/L2ARC ratios, LUN latencies by role and process rates exist; the only query that may be
# empty is CPI, and only on a machine whose kernel exposes no hardware instruction counter. Each
# expected-empty target carries the PromQL that proves why: it must return a sample.
HW_INSTRUCTIONS, HW_REASON = ds.hardware_instructions()
CPI = ("host-cpu", "CPI: cycles per instruction", "A")
EXPECTED_EMPTY = {} if HW_INSTRUCTIONS is not False else {
    CPI: (HW_REASON,
          f'absent(node_perf_instructions_total{{instance="{ds.REAL_HOST}"}}) and on () '
          f'(node_scrape_collector_success{{collector="perf", instance="{ds.REAL_HOST}"}} == 1)'),
}


# The stack's standby (DEMOSB) computes its lag except while its transport is broken (the middle
# of its recording): the "not computed" cells are empty while the lag is computed, with that proof.
NOT_COMPUTED = ("every standby computes its lag now",
                'absent(oracle_dataguard_lag_computed == 0) and on () count(oracle_dataguard_lag_computed) > 0')
# The fixture's NVMe controller is a local PCIe SSD: no ANA, so no path states (the `paths`
# fixture tree of tests/dbhost has them; the docs-consistency test runs it).
NO_ANA = {("host-storage", "NVMe paths: ANA state", "A"): (
    "no NVMe controller of the stack has ANA paths",
    'absent(dbhost_nvme_path_ana_state) and on () count(dbhost_nvme_controller_info{transport="pcie"}) > 0')}
EXPECTED_EMPTY.update(NO_ANA)

# Empty only while the real host (this machine, scraped as ds.REAL_HOST) is quiet: the host tile shows the system share of busy
# CPU only while system CPU is above C4's floor of all CPU, as the alert does. On a machine that is
# idle (or busy in user space) that is legitimately nothing; the proof must hold when it is empty.
MAYBE_EMPTY = {
    ("oracle-capacity", "Data Guard lag data age", "B"): NOT_COMPUTED,
    ("oracle-wallboard", "Standby lag data age", "B"): NOT_COMPUTED,
    # the demo SGAs live on this machine (its fake LGWR carries the demo SID); huge pages are
    # configured on few machines that run the tests, and without them there is no ratio
    ("oracle-memory", "SGAs against kernel.shmall and the huge pages", "B"): (
        "no host that runs an instance has huge pages configured",
        'count(instance:oracle_sga_target_bytes:sum) > 0 unless on () '
        '(dbhost_memory_hugepages{state="total"} > 0 and on (job, instance) instance:oracle_sga_target_bytes:sum)'),
    # opt-in collectors whose views no demo recording carries (GV$PDBS, DBA_SCHEDULER_JOB_RUN_DETAILS)
    # and that the stack does not switch on: their panels are empty, and the proof is that no
    # exporter runs them
    **{("oracle-signals", panel, ref): (f"the opt-in {collector} collector runs nowhere in the stack",
                                        f'absent(oracle_collector_success{{collector="{collector}"}})')
       for panel, ref, collector in (("Failed scheduler job runs (last 24 h)", "A", "scheduler_jobs"),
                                     ("Failed scheduler job runs (last 24 h)", "B", "scheduler_jobs"),
                                     ("Newest error code per failing job", "A", "scheduler_jobs"),
                                     ("PDBs not open READ WRITE", "A", "pdb_state"),
                                     ("PDBs open RESTRICTED", "A", "pdb_state"))},
    ("oracle-wallboard", "Hosts", "E"): (
    "system CPU is below C4's floor on every host",
    f'absent(instance:node_cpu_system_share:rate5m > {config.load().thresholds["C4"].floor("system_share").value:g})')}


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
    for recording in (demo, stack.rac, stack.standby):
        with open(recording, encoding="utf-8") as fh:
            for line in fh:
                snap = json.loads(line)
                databases.add(snap["database"])
                for row in (snap["views"].get("GV$EVENT_HISTOGRAM_MICRO", [])
                            or snap["views"].get("GV$EVENT_HISTOGRAM", [])):
                    events.add(row["EVENT"])
    assert len(databases) == 3  # DEMO, the RAC database and the standby: the multi-value (a|b|c) path
    now = time.time()
    for uid, board in BOARDS.items():
        values = variable_values(stack, board, now)
        assert set(values["database"]) == databases, uid
        assert set(values["host"]) == {ds.REAL_HOST, "127.0.0.2"}, uid
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
    for key, (_, reason_expr) in EXPECTED_EMPTY.items():
        assert stack.api("query", query=reason_expr)["status"] == "success", key
    assert checked >= len(TARGETS) + 2 * sum(1 for t in TARGETS if t.uid == "oracle-capacity")


def test_every_panel_query_returns_data(stack):
    """The set of targets without data is exactly EXPECTED_EMPTY (at most CPI, with its proof)."""
    deadline = time.time() + 60
    while True:
        now = time.time()
        values_by_board = {uid: variable_values(stack, b, now, baseline=f"@ {int(now)}")
                           for uid, b in BOARDS.items()}
        empty = {}
        for t in TARGETS:
            err, results = run_target(stack, t, values_by_board[t.uid], now)
            assert err is None, err
            if not results:
                empty[(t.uid, t.panel, t.ref)] = t.expr
        if set(empty) - set(MAYBE_EMPTY) == set(EXPECTED_EMPTY) or time.time() > deadline:
            break
        time.sleep(2)  # recording rules with 5m windows fill in over the first scrapes
    assert stack.animator.errors == [] and stack.animator.step >= 5
    for key, (why, reason_expr) in MAYBE_EMPTY.items():
        if key in empty:
            r = stack.api("query", query=reason_expr)
            assert r["status"] == "success" and r["data"]["result"], f"{key} is empty but not because {why}"
            del empty[key]
    unexpected = sorted(set(empty) - set(EXPECTED_EMPTY))
    assert not unexpected, "queries without data:\n" + "\n".join(f"{k}: {empty[k]}" for k in unexpected)
    assert set(empty) == set(EXPECTED_EMPTY), f"expected empty but has data: {set(EXPECTED_EMPTY) - set(empty)}"
    for key, (why, reason_expr) in EXPECTED_EMPTY.items():
        r = stack.api("query", query=reason_expr)
        assert r["status"] == "success" and r["data"]["result"], f"{key} is empty but not because {why}"
    assert len(TARGETS) >= 150 and len(EXPECTED_EMPTY) <= 1 + len(NO_ANA)


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
        got = {ref: _for_db(_instant(stack, _target("oracle-wallboard", "Databases", ref), "oracle-wallboard", now))
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
    status_t = _target("oracle-wallboard", "Databases", "A")
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


def _as_instant(t: dm.Target) -> dm.Target:
    return dm.Target(t.uid, t.panel, t.ref, t.expr, True, t.repeat)


def _fixture_host(results: list) -> dict:
    return {tuple(sorted((k, v) for k, v in r["metric"].items() if k not in ("instance", "job", "__name__"))):
            float(r["value"][1]) for r in results if r["metric"].get("instance") == "127.0.0.2"}


def test_animated_fixture_host_panels_show_the_generated_ratios(stack):
    """Ratios of rates over the same scrapes are exact: the fixture host's panels show the
    per-step increments of make_fixtures (ARC_STEP_KINDS, ARC_STEP, DISK_STEP, LGWR 70/30)."""
    deadline = time.time() + 30
    while True:
        got = {key: _fixture_host(_instant(stack, _as_instant(_target(*key)), key[0])) for key in (
            ("host-zfs", "ARC hit ratio: all, demand, prefetch", "A"),
            ("host-zfs", "ARC hit ratio: all, demand, prefetch", "B"),
            ("host-zfs", "L2ARC hit ratio", "A"),
            ("host-storage", "Read and write latency: other roles", "A"),
            ("host-storage", "Read and write latency: other roles", "B"),
            ("host-storage", "Write latency: redo LUNs", "A"),
            ("host-cpu", "Involuntary context-switch share by role", "A"),
            ("oracle-wallboard", "Hosts", "C"))}
        if all(got.values()) or time.time() > deadline:
            break
        time.sleep(1)
    zfs_all, zfs_kind, l2, other_read, other_write, redo_write, share, tile = got.values()
    kinds = mf.ARC_STEP_KINDS
    total = sum(h for h, _, _ in kinds.values()) / sum(sum(x) for x in kinds.values())
    assert zfs_all == {(): pytest.approx(total, rel=1e-9)}
    assert tile == {(): pytest.approx(total, rel=1e-9)}           # the wallboard's ARC number
    assert zfs_kind == {(("kind", k),): pytest.approx(h / (h + i + m), rel=1e-9) for k, (h, i, m) in kinds.items()}
    assert l2 == {(): pytest.approx(150 / (150 + 130), rel=1e-9)}
    step = mf.DISK_STEP
    # dm-2 is LVM on sde, not a LUN: no dbhost_lun_info, so no role to join
    role = {"sdb": "data", "sdd": "data", "dm-1": "data", "sde": "other", "nvme0n1": "arch"}
    assert other_read == {(("device", d), ("role", r)): pytest.approx(step[d].read_ms / step[d].reads / 1000, rel=1e-9)
                          for d, r in role.items()}
    assert other_write == {(("device", d), ("role", r)): pytest.approx(step[d].write_ms / step[d].writes / 1000, rel=1e-9)
                           for d, r in role.items()}
    assert redo_write == {(("device", d), ("role", "redo")): pytest.approx(0.0005, rel=1e-9)
                          for d in ("sda", "sdc", "dm-0")}
    assert other_read[(("device", "dm-1"), ("role", "data"))] == pytest.approx(0.006)
    assert share[(("role", "lgwr"), ("sid", "ORCL"))] == pytest.approx(0.3, rel=1e-9)    # R14 before
    assert len(share) == 18     # every (sid, role) of the process fixture


def test_l2arc_checksum_errors_fire_and_show_on_the_wallboard(stack):
    """One l2_cksum_bad every L2_CKSUM_EVERY steps: ZfsL2arcErrors (Z4, no `for`) fires for the
    fixture host, kind checksum only, and the wallboard's firing-alerts table lists it."""
    deadline = time.time() + 30
    rows = []
    while time.time() < deadline:
        rows = _instant(stack, _target("oracle-wallboard", "Firing alerts", "A"), "oracle-wallboard")
        if any(r["metric"].get("alertname") == "ZfsL2arcErrors" for r in rows):
            break
        time.sleep(1)
    zfs = [r["metric"] for r in rows if r["metric"].get("alertname") == "ZfsL2arcErrors"]
    assert zfs == [{"alertname": "ZfsL2arcErrors", "severity": "warning", "instance": "127.0.0.2"}]
    firing = stack.api("query", query='ALERTS{alertname="ZfsL2arcErrors", alertstate="firing"}')
    assert [(a["metric"]["instance"], a["metric"]["kind"]) for a in firing["data"]["result"]] == [("127.0.0.2", "checksum")]
    # the host tile turns amber (1: a warning fires) for the fixture host
    status = {r["metric"]["instance"]: float(r["value"][1])
              for r in _instant(stack, _target("oracle-wallboard", "Hosts", "A"), "oracle-wallboard")}
    assert status["127.0.0.2"] >= 1


def test_repeated_tiles_have_data_for_every_value_but_the_explained_ones(stack):
    """Grafana draws a repeated panel once per variable value: each copy is checked on its own.
    The copies without data are exactly these, each with the PromQL that proves why."""
    # the wallboard's database and host tiles are fleet tables now (one query per figure, checked
    # with every other target): what repeats are the waits board's heatmaps, one per event
    expected: dict = {}
    machine_state: set = set()
    repeated = [t for t in TARGETS if t.repeat]
    deadline = time.time() + 30
    while True:
        now = time.time()
        empty, copies = set(), 0
        for t in repeated:
            values = variable_values(stack, BOARDS[t.uid], now, baseline=f"@ {int(now)}")
            assert values[t.repeat], (t.uid, t.panel, t.repeat)
            for rv in values[t.repeat]:
                err, results = run_target(stack, dm.Target(t.uid, t.panel, t.ref, t.expr, True, None),
                                          {**values, t.repeat: [rv]}, now)
                assert err is None, err
                copies += 1
                if not results and (t.uid, t.panel, t.ref, rv) not in machine_state:
                    empty.add((t.uid, t.panel, t.ref, rv))
        if empty == set(expected) or time.time() > deadline:
            break
        time.sleep(1)
    assert empty == set(expected), (sorted(empty - set(expected)), sorted(set(expected) - empty))
    for key, proof in expected.items():
        r = stack.api("query", query=proof, time=now)
        assert r["status"] == "success" and r["data"]["result"], (key, proof, r)
    assert copies >= 11      # 11 heatmap events
