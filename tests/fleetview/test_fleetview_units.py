"""Pure functions of exporters/fleetview: substitution, formatting, colours, verdicts, windows,
the wallboard's fixed query count (fake Prometheus), the spec generated from the mixin."""
from __future__ import annotations

import json
import re

import pytest

from fleetview import capacity, wallboard
from fleetview.core import FleetviewError, colour, fmt, judge, load_spec, re_escape, substitute
from mixin import config, fleetview as mixin_fleetview
from stack.procs import free_port

SPEC = load_spec()


def test_spec_is_what_the_mixin_generates():
    assert json.loads(mixin_fleetview.spec_json(config.load())) == SPEC


def test_substitute_as_grafana():
    e = 'rate(x{database=~"$database"}[$__range] $baseline) * 3600 / $__range_s'
    assert substitute(e, re_escape("DB.1"), range_s=1800, offset_s=604800) == \
        'rate(x{database=~"DB\\\\.1"}[1800s] offset 604800s) * 3600 / 1800'


def test_fmt_and_colour():
    assert fmt(0.02644, "s") == "26.4 ms" and fmt(0.00055, "s") == "550 µs"
    assert fmt(0.3, "percentunit") == "30.0%" and fmt(None, "s") == "no data"
    r2 = SPEC["thresholds"]["R2"]["steps"]
    assert colour(0.004, r2) == "green" and colour(0.026, r2) == "orange"
    i1 = SPEC["thresholds"]["I1"]["steps"]
    assert colour(0.98, i1) == "yellow" and colour(0.999, i1) == "green"


def test_judge_with_floors():
    th = SPEC["thresholds"]
    assert judge(th["R2"], 0.026, 72, "waits").kind == "finding"
    assert judge(th["R2"], 0.026, 0.5, "waits").kind == "floor"       # idle database: not a finding
    assert judge(th["R2"], 0.002, 500, "waits").kind == "ok"
    assert judge(th["R3"], 3.5).kind == "finding" and judge(th["R3"], 0.001).kind == "ok"
    assert judge(th["I1_red"], 0.98, 1e6, "gets", th).kind == "finding"   # I1's floor, I1_red's tier
    assert judge(th["R2"], None).kind == "nodata" and judge(None, 1.0).kind == "none"


def test_windows():
    s, e, off = capacity.windows("2025-03-11T09:00:00Z/35m", "7d")
    assert e - s == 2100 and off == 604800
    s, e, off = capacity.windows("2025-03-11T09:00:00Z/2025-03-11T10:00:00Z", "2025-03-04T09:00:00Z")
    assert off == 604800
    s, e, off = capacity.windows(None, None, now=1_000_000_000)
    assert (s, e, off) == (1_000_000_000 - 3600, 1_000_000_000, 604800)
    for w, b in (("2025-03-11T09:00:00Z/2025-03-11T09:00:00Z", "7d"), ("xx", "7d"), ("1h", "-1d"), ("30s", "7d")):
        with pytest.raises(FleetviewError):
            capacity.windows(w, b)


class FakeProm:
    """Answers every instant query with one series per database or host, counting queries."""
    def __init__(self, dbs: int, hosts: int):
        self.dbs, self.hosts, self.queries, self.url = dbs, hosts, 0, "http://prom.example"

    def query(self, expr, at=None):
        self.queries += 1
        key, n = ("database", self.dbs) if "by (database)" in expr else ("instance", self.hosts)
        return [{"metric": {key: f"{key[:2]}{i:03d}"}, "value": [0, str(i % 4 if expr.startswith("max by") and "ALERTS" in expr else 0.001 * i)]}
                for i in range(n)]


@pytest.mark.parametrize("dbs,hosts", [(10, 8), (200, 150)])
def test_wallboard_queries_do_not_grow_with_the_fleet(dbs, hosts):
    prom = FakeProm(dbs, hosts)
    board = wallboard.collect(SPEC, prom, None)
    assert board.queries == len(SPEC["db_tiles"]) + len(SPEC["host_tiles"]) == 15
    assert len(board.databases) == dbs and len(board.hosts) == hosts
    page = wallboard.render(board, SPEC, prom.url)
    assert page.count('class="t') == dbs + hosts and 'http-equiv="refresh"' in page
    assert {"OK", "WARNING", "CRITICAL", "UNKNOWN"} <= {t.split('"')[0] for t in page.split('data-state="')[1:]}
    # worst first
    states = [t.split('"')[0] for t in page.split('id="databases"')[1].split('data-state="')[1:dbs + 1]]
    rank = {"CRITICAL": 0, "UNKNOWN": 0, "WARNING": 1, "OK": 2}
    assert [rank[s] for s in states] == sorted(rank[s] for s in states)


class OneDatabase:
    """One database whose figures are given by tile key (the spec's expressions, matched exactly)."""
    def __init__(self, values: dict[str, float]):
        self.by_expr = {f["expr"]: values.get(f["key"]) for f in SPEC["db_tiles"]}
        self.queries, self.url = 0, "http://prom.example"

    def query(self, expr, at=None):
        self.queries += 1
        v = next((v for e, v in self.by_expr.items() if wallboard.substitute(e) == expr), None)
        return [] if v is None else [{"metric": {"database": "PROD"}, "value": [0, str(v)]}]


@pytest.mark.parametrize("key,ticket,page", [("tablespace", 0.92, 0.975), ("resources", 0.92, 0.98),
                                             ("recovery_area", 0.9, 0.96)])
def test_paging_levels_are_red_on_the_wallboard(key, ticket, page):
    """97% tablespace, 97% processes, 95% recovery area page (the _crit tiers of
    alerts/thresholds.yaml): red, not the ticket's orange."""
    th = SPEC["thresholds"]
    assert th[key and {"tablespace": "O4_tablespace_crit", "resources": "O4_resource_crit",
                       "recovery_area": "O4_fra_crit"}[key]]["colour"] == "red"
    label = next(f["label"] for f in SPEC["db_tiles"] if f["key"] == key)
    got = {}
    for v in (0.5, ticket, page):
        (tile,) = wallboard.collect_tiles(OneDatabase({"status": 0, key: v}), SPEC["db_tiles"], "database",
                                          "database", th, [])
        got[v] = next(c for lbl, _, c, _ in tile.figures if lbl == label)
    assert got == {0.5: "green", ticket: "orange", page: "red"}


def test_wallboard_unreachable_prometheus_is_a_page():
    from fleetview.cli import make_routes
    from fleetview.core import Upstream
    port = free_port()
    routes = make_routes(SPEC, Upstream(f"http://127.0.0.1:{port}", timeout=2), None)
    resp = routes["/wallboard"]({}, {})
    assert resp.status == 503 and b"is unreachable" in resp.body
    resp = routes["/capacity"]({}, {})
    assert resp.status == 400 and b"missing parameter" in resp.body


def test_report_cli_bad_input_is_one_line(tmp_path, capsys):
    from fleetview.cli import report_main
    port = free_port()
    assert report_main(["--prometheus", f"http://127.0.0.1:{port}", "--database", "X", "--out", str(tmp_path / "r.html")]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "unreachable" in err
    assert report_main(["--prometheus", f"http://127.0.0.1:{port}", "--database", "X", "--window", "2025-01-01T00:00:00Z/0m",
                        "--out", str(tmp_path / "r.html")]) == 1
    assert "empty window" in capsys.readouterr().err


@pytest.mark.parametrize("dbs,hosts,mode", [(8, 6, "big"), (60, 40, ""), (200, 150, "dense")])
def test_the_wallboard_layout_follows_the_fleet_size(dbs, hosts, mode):
    """Issue 25: readable at 200 databases and 150 hosts on one 1920x1080 screen. Above
    wallboard.DENSE tiles each tile is its name and a four-letter state on the state's colour (the
    figures move to its tooltip) and the alert table drops its summary column; small fleets keep big
    tiles with their figures. Every tile keeps its state and name for a reader and for tests."""
    import re

    spec = load_spec()
    levels = [0, 1, 2, 3]
    tiles = lambda kind, n: [wallboard.Tile(f"{kind[:2]}{i:03d}", kind, levels[i % 4],  # noqa: E731
                                            [("log file sync avg", "26.5 ms", "red", "R2")]) for i in range(n)]
    board = wallboard.Board(tiles("database", dbs), tiles("host", hosts), [], [])
    page = wallboard.render(board, spec, "http://prom:9090")
    classes = re.findall(r'<a class="(t[^"]*)" data-state="([A-Z]+)" data-name="([^"]+)"', page)
    assert len(classes) == dbs + hosts
    assert {c for c, _, _ in classes} == {("t " + mode).strip()}
    assert {s for _, s, _ in classes} == {"OK", "WARNING", "CRITICAL", "UNKNOWN"}
    if mode == "dense":
        assert '<main class="dense">' in page and "26.5 ms</span>" not in page
        assert '<b><span>da002</span><em>CRIT</em></b>' in page and "log file sync avg: 26.5 ms [R2]" in page     # the tooltip
    else:
        assert '<main class="dense">' not in page and "26.5 ms" in page


# ---------------------------------------------------------------- issue 25 review: hostile or broken upstreams

def test_a_host_whose_exporters_are_all_down_is_unknown_not_warning(tmp_path):
    """Every exporter of a host down (up 0: the host is dark, its figures stale) is UNKNOWN; one of
    its two exporters down is WARNING; both up is OK. Evaluated by promtool on the host status
    expression the Grafana wallboard and the page share."""
    import shutil
    import subprocess

    from fleetview.core import substitute as sub
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    expr = sub(mixin_fleetview.host_status_expr(config.load()), host=".+")
    (tmp_path / "r.yml").write_text(json.dumps({"groups": [{"name": "g", "rules": [
        {"record": "host_status", "expr": expr}]}]}))
    series = [("node", "dark", "0x10"), ("dbhost", "dark", "0x10"), ("node", "half", "0x10"),
              ("dbhost", "half", "1x10"), ("node", "fine", "1x10"), ("dbhost", "fine", "1x10")]
    (tmp_path / "t.yml").write_text(json.dumps({"rule_files": ["r.yml"], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": f'up{{job="{j}", instance="{i}"}}', "values": v} for j, i, v in series],
        "promql_expr_test": [{"expr": "host_status", "eval_time": "5m", "exp_samples": [
            {"labels": 'host_status{instance="dark"}', "value": 3},
            {"labels": 'host_status{instance="half"}', "value": 1},
            {"labels": 'host_status{instance="fine"}', "value": 0}]}]}]}))
    res = subprocess.run([promtool, "test", "rules", "t.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_links_from_alerts_are_http_only():
    """Alertmanager's API takes alerts without authentication: a javascript: runbook or evidence link
    must not become an href on the wallboard or the notifications page."""
    from stack import webhook
    row = wallboard._alert_row({"severity": "critical", "alertname": "Evil", "target": "DEMO", "summary": "s",
                                "runbook": "javascript:alert(1)", "evidence": "http://prom/graph?g0.expr=x",
                                "page": "data:text/html,<b>x</b>"})
    assert "javascript:" not in row and "data:" not in row and 'href="http://prom/graph?g0.expr=x"' in row
    page = webhook.notifications_html([{"received_at": "2026-01-01T00:00:00Z", "path": "/pager", "alerts": [
        {"labels": {"alertname": "Evil", "severity": "critical"},
         "annotations": {"runbook_url": "JavaScript:alert(1)", "capacity_url": "https://fv/capacity?database=D"}}]}])
    assert "avascript:" not in page and 'href="https://fv/capacity?database=D"' in page


@pytest.mark.parametrize("answer", [{"status": "success"}, {"status": "success", "data": {"result": [{"metric": {}}]}},
                                    {"status": "success", "data": {"result": "x"}}, ["not", "a", "dict"]])
def test_a_prometheus_answer_of_the_wrong_shape_is_one_error_not_a_traceback(answer):
    from fleetview.core import Upstream
    up = Upstream("http://127.0.0.1:9", name="Prometheus")
    with pytest.raises(FleetviewError, match="Prometheus"):
        up._result(answer, "value")


def test_an_alert_with_null_fields_does_not_take_the_wallboard_down():
    class AM:
        def get(self, path, params=None):
            return [{"labels": {"alertname": "X", "severity": "warning", "database": "D"}, "startsAt": None,
                     "annotations": {"summary": None}, "status": {"state": "active"}, "generatorURL": None},
                    "garbage", {"labels": None}]
    errors: list[str] = []
    alerts = wallboard.firing_alerts(AM(), errors)
    assert [(a["alertname"], a["target"], a["since"], a["summary"]) for a in alerts] == [("X", "D", "", ""), ("?", "", "", "")]
    assert errors == []


def test_a_value_exactly_at_a_threshold_is_coloured_as_its_verdict():
    """rev-views #8: `>` v colours from just above v, so exactly v (970 of 1000 processes against
    O4_resource_crit `> 0.97`, log file sync at R2's 5 ms, a LUN host queue of 10 against Q2 `> 10`)
    is neither red/orange on the tiles nor a finding in the report; `>=` v colours from v itself."""
    th = SPEC["thresholds"]
    for tid, t in th.items():
        if t["op"] not in (">", ">=", "<", "<="):      # == 0 (down): a state, not a measure
            continue
        at = t["colour_at"]
        values = (0.0, 1.0) if at == 1e-9 else (at, at * 1.01 + 1e-6, at * 0.99 - 1e-6)    # a bare `> 0`: 0 and 1
        for v in values:
            coloured = colour(v, t["steps"]) != "green"
            assert coloured == (judge(t, v).kind == "finding"), (tid, t["op"], v, t["steps"])
    figs = {f["key"]: f for f in SPEC["db_tiles"] + SPEC["host_tiles"]}
    assert colour(0.97, figs["resources"]["steps"]) == "orange"         # the ticket, not the page
    assert colour(0.95, figs["recovery_area"]["steps"]) == "orange"
    assert colour(0.005, figs["sync_avg"]["steps"]) == "green"
    assert colour(10, figs["lun_host_queue"]["steps"]) == "green"
    assert colour(10.01, figs["lun_host_queue"]["steps"]) == "orange"
    assert colour(2.0, figs["run_queue"]["steps"]) != "green"            # C1 is `>= 2`


def test_the_medium_layout_shows_the_worst_coloured_figure():
    """rev-views #9: AMIX, log file sync 8 ms (orange) and recovery area 99% (red): the medium tile
    (49..160 tiles) shows the red recovery area, not the first coloured figure."""
    tile = wallboard.Tile("AMIX", "database", 2, [("log file sync avg", "8 ms", "orange", "R2"),
                                                  ("commits/s", "50/s", "blue", None),
                                                  ("recovery area used", "99.0%", "red", "O4_fra")])
    others = [wallboard.Tile(f"DB{i:03d}", "database", 0) for i in range(60)]
    page = wallboard.render(wallboard.Board([tile] + others, [], [], []), SPEC, "http://prom:9090")
    shown = re.search(r'data-name="AMIX".*?<i>(.*?)</i>', page, re.S).group(1)
    assert shown == "recovery area used 99.0%", shown
