"""The dashboards' join of host-exporter series (per sid) with Oracle's `database`, evaluated by
promtool on series where two databases share a SID (a Data Guard pair, cloned test databases on
other hosts): each host's LGWR goes to its own database, none is lost to a many-to-many error."""
import subprocess

import yaml

from mixin import records as R
from mixin.fleetview import sid_to_database as with_database


def _info(db, sid, host):
    return {"series": f'oracle_instance_info{{job="oracle",instance="oe:19161",database="{db}",inst_id="1",'
                      f'instance_name="{sid}",host_name="{host}"}}', "values": "1x10"}


def _share(host, sid, value):
    return {"series": f'{R.PROC_INVOLUNTARY_SHARE}{{job="dbhost",instance="{host}",sid="{sid}",role="lgwr"}}',
            "values": f"{value}x10"}


def test_shared_sids_join_on_host_unique_sids_on_sid_alone(tmp_path):
    expr = with_database(R.PROC_INVOLUNTARY_SHARE + '{role="lgwr"}').replace('database=~"$database"', 'database=~".+"')
    series = [
        _info("PROD", "ORCL1", "dbhost1.example.com"), _share("dbhost1.example.com", "ORCL1", 0.30),
        _info("PRODSTBY", "ORCL1", "dbhost2"), _share("dbhost2", "ORCL1", 0.01),
        # a SID only one database has: joined on the sid even where the host names do not match
        # (GV$INSTANCE.HOST_NAME dbhost03 against the scrape target 127.0.0.1)
        _info("DEMO", "DEMO1", "dbhost03"), _share("127.0.0.1", "DEMO1", 0.05),
    ]
    doc = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [{"expr": f"sort(max by (database, instance) ({expr}))", "eval_time": "5m", "exp_samples": [
            {"labels": '{database="DEMO", instance="127.0.0.1"}', "value": 0.05},
            {"labels": '{database="PRODSTBY", instance="dbhost2"}', "value": 0.01},
            {"labels": '{database="PROD", instance="dbhost1.example.com"}', "value": 0.30}]}]}]}
    (tmp_path / "join.test.yml").write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 20))
    res = subprocess.run(["promtool", "test", "rules", "join.test.yml"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
