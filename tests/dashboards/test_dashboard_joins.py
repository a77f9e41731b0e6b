"""The dashboards' and the wallboard's join of host-exporter series (per sid) with Oracle's
`database`, evaluated by promtool: always on host AND sid. A SID is unique per host only: a Data
Guard standby, or a clone, runs the primary's SID on another host, and when it is not monitored
(no oracle_instance_info of its own) a join on the sid alone gives its LGWR to the primary."""
import subprocess

import pytest

import yaml

from mixin import records as R
from mixin.config import load
from mixin.fleetview import db_tiles, sid_to_database as with_database


def _info(db, sid, host):
    return {"series": f'oracle_instance_info{{job="oracle",instance="oe:19161",database="{db}",inst_id="1",'
                      f'instance_name="{sid}",host_name="{host}"}}', "values": "1x10"}


def _proc(metric, host, sid, value):
    return {"series": f'{metric}{{job="dbhost",instance="{host}",sid="{sid}",role="lgwr"}}',
            "values": f"{value}x10"}


def _promtool(tmp_path, series, tests):
    doc = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": series, "promql_expr_test": tests}]}
    (tmp_path / "join.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 20))
    res = subprocess.run(["promtool", "test", "rules", "join.test.yml"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def _sel(expr, databases=".+"):
    return expr.replace('database=~"$database"', f'database=~"{databases}"')


def test_shared_sids_join_on_host(tmp_path):
    expr = _sel(with_database(R.PROC_INVOLUNTARY_SHARE + '{role="lgwr"}'))
    series = [
        _info("PROD", "ORCL1", "dbhost1.example.com"), _proc(R.PROC_INVOLUNTARY_SHARE, "dbhost1.example.com", "ORCL1", 0.30),
        _info("PRODSTBY", "ORCL1", "dbhost2"), _proc(R.PROC_INVOLUNTARY_SHARE, "dbhost2", "ORCL1", 0.01),
    ]
    _promtool(tmp_path, series, [{"expr": f"sort(max by (database, instance) ({expr}))", "eval_time": "5m",
                                  "exp_samples": [
                                      {"labels": '{database="PRODSTBY", instance="dbhost2"}', "value": 0.01},
                                      {"labels": '{database="PROD", instance="dbhost1.example.com"}', "value": 0.30}]}])


def test_unmonitored_standby_with_the_primarys_sid_shows_nothing_under_the_primary(tmp_path):
    """The standby on dbhost2 runs ORCL1 too and is not monitored: its LGWR (CPU-starved, 0.9
    share, 40 ms run-queue wait) must not appear under PROD, in no figure of PROD's tile; the
    same when the standby is monitored but not selected ($database = PROD)."""
    cfg = load()
    tiles = {f.key: f.expr for f in db_tiles(cfg)}
    series = [
        _info("PROD", "ORCL1", "dbhost1.example.com"),
        _proc(R.PROC_INVOLUNTARY_SHARE, "dbhost1", "ORCL1", 0.02),
        _proc(R.PROC_SWITCHES, "dbhost1", "ORCL1", 500),
        _proc(R.PROC_RUN_DELAY_PER_DISPATCH, "dbhost1", "ORCL1", 0.0001),
        # the unmonitored standby's host (only its host exporters are scraped)
        _proc(R.PROC_INVOLUNTARY_SHARE, "dbhost2", "ORCL1", 0.9),
        _proc(R.PROC_SWITCHES, "dbhost2", "ORCL1", 500),
        _proc(R.PROC_RUN_DELAY_PER_DISPATCH, "dbhost2", "ORCL1", 0.04),
    ]
    tests = [
        {"expr": _sel(tiles["lgwr_involuntary"]), "eval_time": "5m",
         "exp_samples": [{"labels": '{database="PROD"}', "value": 0.02}]},
        {"expr": _sel(tiles["lgwr_cpu_wait"]), "eval_time": "5m",
         "exp_samples": [{"labels": '{database="PROD"}', "value": 0.0001}]},
        {"expr": f"group by (instance) ({_sel(with_database(R.PROC_SWITCHES))})", "eval_time": "5m",
         "exp_samples": [{"labels": '{instance="dbhost1"}', "value": 1}]},
    ]
    _promtool(tmp_path, series, tests)
    # now the standby is monitored, and only PROD is selected: still nothing of dbhost2 under PROD
    series.append(_info("PRODSTBY", "ORCL1", "dbhost2"))
    for t in tests[:2]:
        t["expr"] = t["expr"].replace('database=~".+"', 'database=~"PROD"')
    _promtool(tmp_path, series, tests[:2])


@pytest.mark.slow
def test_a_database_whose_exporter_is_down_stays_unknown_while_its_target_is_configured(tmp_path):
    """Its oracle-exporter stops answering at 2h (up 0, no oracle_up): the tile is UNKNOWN (3) at
    2h30 and still at 6h, not gone after the hour; a database whose target left the configuration
    (no `up` any more) leaves the wallboard."""
    from mixin.fleetview import db_status_expr
    from tests.dashboards.dash_model import REPO
    ora = 'job="oracle",instance="oe:19161"'
    gone = 'job="oracle",instance="old:19161"'
    series = [
        {"series": f'oracle_up{{{ora},database="PROD"}}', "values": "1x120"},
        {"series": f'up{{{ora}}}', "values": "1x120 0x400"},
        {"series": f'oracle_instance_info{{{ora},database="PROD",inst_id="1",instance_name="PROD1",host_name="h1"}}',
         "values": "1x120"},
        {"series": f'oracle_up{{{gone},database="OLD"}}', "values": "1x120"},
        {"series": f'up{{{gone}}}', "values": "1x120"},
        {"series": f'oracle_instance_info{{{gone},database="OLD",inst_id="1",instance_name="OLD1",host_name="h2"}}',
         "values": "1x120"},
    ]
    expr = _sel(db_status_expr())
    doc = {"rule_files": [str(REPO / "alerts" / "recording.rules.yml")], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": series, "promql_expr_test": [
            {"expr": expr, "eval_time": "60m", "exp_samples": [{"labels": '{database="OLD"}', "value": 0},
                                                              {"labels": '{database="PROD"}', "value": 0}]},
            {"expr": expr, "eval_time": "150m", "exp_samples": [{"labels": '{database="OLD"}', "value": 3},
                                                               {"labels": '{database="PROD"}', "value": 3}]},
            {"expr": expr, "eval_time": "6h", "exp_samples": [{"labels": '{database="PROD"}', "value": 3}]}]}]}
    (tmp_path / "join.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 20))
    res = subprocess.run(["promtool", "test", "rules", "join.test.yml"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
