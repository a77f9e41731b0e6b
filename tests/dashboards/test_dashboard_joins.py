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


def _uname(instance, nodename):
    return {"series": f'node_uname_info{{job="node",instance="{instance}",nodename="{nodename}",sysname="Linux"}}',
            "values": "1x10"}


def _dg_pair(instances=("db01.dc1.example.com", "db01.dc2.example.com"),
             host_names=("db01.dc1.example.com", "db01.dc2.example.com")):
    """rev-views #1: a Data Guard pair, PROD1 on both sites' db01, both databases monitored; the
    primary's LGWR is CPU-starved (0.30, 40 ms), the standby's not (0.01, 0.1 ms)."""
    (i1, i2), (h1, h2) = instances, host_names
    series = [_info("PRODNYC", "PROD1", h1), _info("PRODLDN", "PROD1", h2)]
    for inst, share, delay in ((i1, 0.30, 0.04), (i2, 0.01, 0.0001)):
        series += [_proc(R.PROC_INVOLUNTARY_SHARE, inst, "PROD1", share), _proc(R.PROC_SWITCHES, inst, "PROD1", 500),
                   _proc(R.PROC_RUN_DELAY_PER_DISPATCH, inst, "PROD1", delay),
                   _proc("dbhost_process_context_switches_total", inst, "PROD1", 100)]
    return series


def _dg_tests(i1="db01.dc1.example.com", i2="db01.dc2.example.com", sel=".+"):
    """Each database gets its own host's LGWR, in every figure of its tile, and its own host."""
    from mixin.fleetview import HOSTS_OF_DATABASE
    tiles = {f.key: f.expr for f in db_tiles(load())}
    both = [{"labels": '{database="PRODLDN"}', "value": 0.01}, {"labels": '{database="PRODNYC"}', "value": 0.30}]
    return [
        {"expr": f"sort({_sel(tiles['lgwr_involuntary'], sel)})", "eval_time": "5m", "exp_samples": both},
        {"expr": f"sort({_sel(tiles['lgwr_cpu_wait'], sel)})", "eval_time": "5m",
         "exp_samples": [{"labels": '{database="PRODLDN"}', "value": 0.0001},
                         {"labels": '{database="PRODNYC"}', "value": 0.04}]},
        {"expr": _sel(HOSTS_OF_DATABASE, "PRODNYC"), "eval_time": "5m",
         "exp_samples": [{"labels": f'{{instance="{i1}"}}', "value": 1}]},
        {"expr": _sel(HOSTS_OF_DATABASE, "PRODLDN"), "eval_time": "5m",
         "exp_samples": [{"labels": f'{{instance="{i2}"}}', "value": 1}]},
    ]


def test_data_guard_pair_with_the_same_sid_and_short_host_name_neither_fails_nor_mixes(tmp_path):
    """rev-views #1: the short-name join answered HTTP 422 (many-to-many) for the whole fleet and
    gave PRODNYC both hosts."""
    _promtool(tmp_path, _dg_pair(), _dg_tests())


def test_data_guard_pair_scraped_by_ip_joins_on_the_nodename(tmp_path):
    """Host exporters listed by IP address: node_exporter's nodename is the host's identity."""
    series = _dg_pair(instances=("10.1.0.5", "10.2.0.5"))
    series += [_uname("10.1.0.5", "db01.dc1.example.com"), _uname("10.2.0.5", "db01.dc2.example.com")]
    _promtool(tmp_path, series, _dg_tests("10.1.0.5", "10.2.0.5"))


def test_indistinguishable_pair_gives_no_host_figure_rather_than_the_other_host(tmp_path):
    """Both HOST_NAMEs the same short name and nothing else to tell the hosts apart: no figure
    (an empty result, not an error, not the other site's LGWR)."""
    series = _dg_pair(host_names=("db01", "db01"))
    tiles = {f.key: f.expr for f in db_tiles(load())}
    _promtool(tmp_path, series, [{"expr": _sel(tiles["lgwr_involuntary"]), "eval_time": "5m", "exp_samples": []}])


def test_recording_rules_keep_the_data_guard_pair_apart(tmp_path):
    """database_inst:dbhost_lgwr_run_delay_per_dispatch:rate5m and instance:oracle_sga_target_bytes:sum
    (rev-views #1, the same join): each database its own host."""
    cfg = load()
    series = _dg_pair()
    series += [{"series": f'oracle_sga_target_bytes{{job="oracle",instance="oe:19161",database="{db}",inst_id="1"}}',
                "values": f"{v}x10"} for db, v in (("PRODNYC", 8e9), ("PRODLDN", 4e9))]
    lgwr = R.by_database_instance(cfg, R.PROC_RUN_DELAY_PER_DISPATCH + '{role="lgwr"}')
    sga = R.by_host(cfg, f"max by ({cfg.by('database', 'inst_id')}) (last_over_time(oracle_sga_target_bytes[3m]))")
    _promtool(tmp_path, series, [
        {"expr": f"sort(max by (database) ({lgwr}))", "eval_time": "5m",
         "exp_samples": [{"labels": '{database="PRODLDN"}', "value": 0.0001},
                         {"labels": '{database="PRODNYC"}', "value": 0.04}]},
        {"expr": f"sort(sum by (instance) ({sga}))", "eval_time": "5m",
         "exp_samples": [{"labels": '{instance="db01.dc2.example.com"}', "value": 4e9},
                         {"labels": '{instance="db01.dc1.example.com"}', "value": 8e9}]}])


def _sga_and_lgwr(cfg):
    lgwr = R.by_database_instance(cfg, R.PROC_RUN_DELAY_PER_DISPATCH + '{role="lgwr"}')
    sga = R.by_host(cfg, f"max by ({cfg.by('database', 'inst_id')}) (last_over_time(oracle_sga_target_bytes[3m]))")
    return lgwr, sga


def _sga(db, value):
    return {"series": f'oracle_sga_target_bytes{{job="oracle",instance="oe:19161",database="{db}",inst_id="1"}}',
            "values": f"{value}x10"}


def test_a_host_matched_both_by_instance_and_by_nodename_counts_its_sga_once(tmp_path):
    """Review round 2 #1: instance = node_exporter nodename = HOST_NAME (the set-up the docs ask
    for) matched twice, the nodename copy kept its label, and the per-host SGA sum was doubled:
    HostShmallBelowSga at half the real SGA."""
    cfg = load()
    host = "db01.example.com"
    series = [_info("PROD", "PROD1", host), _sga("PROD", 6e9), _uname(host, host),
              _proc(R.PROC_RUN_DELAY_PER_DISPATCH, host, "PROD1", 0.002),
              _proc("dbhost_process_context_switches_total", host, "PROD1", 100)]
    lgwr, sga = _sga_and_lgwr(cfg)
    _promtool(tmp_path, series, [
        {"expr": f"sum by (instance) ({sga})", "eval_time": "5m",
         "exp_samples": [{"labels": f'{{instance="{host}"}}', "value": 6e9}]},
        {"expr": f"count by (database) ({lgwr})", "eval_time": "5m",
         "exp_samples": [{"labels": '{database="PROD"}', "value": 1}]}])


@pytest.mark.parametrize("instance,host_name", [
    ("db01.example.com", "db01.localdomain"),       # the scrape name's domain is not the host's
    ("db01.example.com.", "db01.example.com"),      # a trailing dot in the target
])
def test_a_host_whose_names_differ_only_after_the_first_dot_still_joins(tmp_path, instance, host_name):
    """Review round 2 #2: the full-name join lost these hosts (the short-name join of before had
    them): with no other host of that short name, both sides cut to it still match."""
    cfg = load()
    series = [_info("PROD", "PROD1", host_name), _sga("PROD", 6e9),
              _proc(R.PROC_RUN_DELAY_PER_DISPATCH, instance, "PROD1", 0.002),
              _proc("dbhost_process_context_switches_total", instance, "PROD1", 100)]
    lgwr, sga = _sga_and_lgwr(cfg)
    _promtool(tmp_path, series, [
        {"expr": f"sum by (instance) ({sga})", "eval_time": "5m",
         "exp_samples": [{"labels": f'{{instance="{instance}"}}', "value": 6e9}]},
        {"expr": f"max by (database) ({lgwr})", "eval_time": "5m",
         "exp_samples": [{"labels": '{database="PROD"}', "value": 0.002}]}])


def test_unmonitored_standby_on_a_host_with_the_same_short_nodename_is_not_the_primarys(tmp_path):
    """Review round 2 #3: both sites' hosts report the short nodename db01 (hostname set short),
    HOST_NAME is db01, the standby is not monitored by oracle-exporter: the nodename key names two
    host targets, so it decides nothing; the primary gets no host figure rather than a mix."""
    cfg = load()
    i1, i2 = "db01.dc1.example.com", "db01.dc2.example.com"
    series = [_info("PRODNYC", "PROD1", "db01"), _sga("PRODNYC", 6e9), _uname(i1, "db01"), _uname(i2, "db01")]
    for inst, delay in ((i1, 0.0001), (i2, 0.01)):
        series += [_proc(R.PROC_RUN_DELAY_PER_DISPATCH, inst, "PROD1", delay),
                   _proc("dbhost_process_context_switches_total", inst, "PROD1", 100)]
    lgwr, sga = _sga_and_lgwr(cfg)
    _promtool(tmp_path, series, [
        {"expr": lgwr, "eval_time": "5m", "exp_samples": []},
        {"expr": sga, "eval_time": "5m", "exp_samples": []}])


def test_a_database_refusing_the_monitoring_account_is_warning_not_critical(tmp_path):
    """rev-views #3: oracle_up 0 because the monitoring account is locked (OracleDown severity
    warning, a ticket): WARNING (1), not CRITICAL; a database down for another reason stays
    CRITICAL (2); one that is up is OK (0)."""
    from mixin.fleetview import db_status_expr
    ora = lambda db: f'job="oracle",instance="oe-{db.lower()}:19161",database="{db}"'  # noqa: E731
    series = [
        {"series": f'oracle_up{{{ora("LOCKED")}}}', "values": "0x10"},
        {"series": f'oracle_last_error_info{{{ora("LOCKED")},reason="account locked"}}',
         "values": "1x10"},
        {"series": f'oracle_up{{{ora("DOWN")}}}', "values": "0x10"},
        {"series": f'oracle_last_error_info{{{ora("DOWN")},reason="connection refused"}}',
         "values": "1x10"},
        {"series": f'oracle_up{{{ora("FINE")}}}', "values": "1x10"},
        # the alert's severity alone (its error series gone from the look-back): still WARNING
        {"series": f'oracle_up{{{ora("EXPIRED")}}}', "values": "0x10"},
        {"series": f'ALERTS{{{ora("EXPIRED")},alertname="OracleDown",alertstate="firing",severity="warning"}}',
         "values": "1x10"},
    ]
    _promtool(tmp_path, series, [{"expr": f"sort({_sel(db_status_expr())})", "eval_time": "5m", "exp_samples": [
        {"labels": '{database="FINE"}', "value": 0}, {"labels": '{database="EXPIRED"}', "value": 1},
        {"labels": '{database="LOCKED"}', "value": 1}, {"labels": '{database="DOWN"}', "value": 2}]}])
