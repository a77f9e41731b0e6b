"""fleet.test.yml: what tells incidents apart across a fleet (alertfix #2, #3).

- OracleExporterLostDatabases: one exporter losing most of its databases at once is one page (it
  hides the per-database OracleDown pages in Alertmanager); one or two databases down are their own
  OracleDown pages and this stays quiet.
- `site` survives every aggregation (target_labels default job, instance, site): the shipped
  routing keeps two same-named databases of two sites apart by it, so the rules must keep it.
"""
from mixin import records as R
from mixin.scenarios.common import H, Timeline, sel


def _oracle_up(tl: Timeline, instance: str, down: int, total: int) -> list:
    target = {"job": "oracle", "instance": instance}
    return [tl.gauge("up", target, [(0, 1)])] + [
        tl.gauge("oracle_up", {**target, "database": f"DB{i}"}, [(0, 1), (H, 0 if i < down else 1)])
        for i in range(total)]


def fleet_tests(pack) -> list:
    tests = []
    alert = "OracleExporterLostDatabases"
    n = H + pack.for_min("OracleDown") + 6
    tl = Timeline(n)
    fires = H + pack.for_min("OracleDown") + 1          # OracleDown fires; this rule reads it in the same evaluation
    series = (_oracle_up(tl, "multi-a:19161", 3, 4)     # 3 of 4 down: the exporter's side
              + _oracle_up(tl, "multi-b:19161", 1, 4)   # 1 of 4: that database's own page
              + _oracle_up(tl, "multi-c:19161", 2, 3))  # 2 of 3: under the floor of 3 databases
    tests.append({"name": f"{alert}: 3 of 4 databases of one exporter down is one page; 1 of 4, and 2 of 3, are "
                          "OracleDown's own pages",
                  "interval": "1m", "input_series": series, "alert_rule_test": [
                      {"eval_time": f"{fires - 1}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{fires}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"instance": "multi-a:19161"}, 0.75)]},
                      {"eval_time": f"{n}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"instance": "multi-a:19161"}, 0.75)]}]})
    # probe mode: every database is a target of its own (instance = the database), the exporter is
    # the `exporter` label the scrape config sets
    probe = []
    for i in range(4):
        target = {"job": "oracle", "instance": f"DB{i}", "exporter": "probe-a:19161"}
        probe += [tl.gauge("up", target, [(0, 1)]),
                  tl.gauge("oracle_up", {**target, "database": f"DB{i}"}, [(0, 1), (H, 0)])]
    tests.append({"name": f"{alert}: probe mode, the 4 databases one exporter probes all down: one page per exporter",
                  "interval": "1m", "input_series": probe, "alert_rule_test": [
                      {"eval_time": f"{fires}m", "alertname": alert, "exp_alerts": [
                          {"exp_labels": {**{k: v for k, v in pack.expect(alert, 0, {}, 1)["exp_labels"].items()
                                             if k != "instance"}, "exporter": "probe-a:19161"},
                           "exp_annotations": pack.expect(alert, 0, {"instance": "", "exporter": "probe-a:19161"},
                                                          1)["exp_annotations"]}]}]})

    # alertfix #3: two databases named ORCL, one per site, both 99% full: two alerts, each with its site
    alert = "OracleTablespaceFull"
    gb = 1e9
    tl = Timeline(H + 12)
    same = []
    for site, inst in (("eu", "dbhost-eu1:19161"), ("us", "dbhost-us7:19161")):
        lab = {"job": "oracle", "instance": inst, "site": site, "database": "ORCL", "container": "PDB1",
               "tablespace": "SYSAUX", "contents": "PERMANENT"}
        same += [tl.gauge("oracle_tablespace_used_bytes", lab, [(0, 50 * gb), (H, 99 * gb)]),
                 tl.gauge("oracle_tablespace_max_bytes", lab, [(0, 100 * gb)]),
                 {"series": sel("up", {"job": "oracle", "instance": inst, "site": site}), "values": f"1x{H + 12}"}]
    ts = {"database": "ORCL", "container": "PDB1", "tablespace": "SYSAUX", "contents": "PERMANENT"}
    expect = [pack.expect(alert, i, {**ts, "instance": inst, "site": site}, 0.99)
              for site, inst in (("eu", "dbhost-eu1:19161"), ("us", "dbhost-us7:19161")) for i in (1,)]
    tests.append(ip_host_tests(pack))
    tests.append(unmeasured_lun_tests(pack))
    if "site" not in pack.target_labels:          # a site's pack that drops `site` from target_labels
        return tests
    tests.append({"name": f"{alert}: ORCL on site eu and ORCL on site us, both 99% full: each alert keeps its site",
                  "interval": "1m", "input_series": same, "alert_rule_test": [
                      {"eval_time": f"{H + 12}m", "alertname": alert, "exp_alerts": expect}]})
    return tests



def ip_host_tests(pack) -> dict:
    """alertfix #6 (review "alerts" finding 6): the host of a target addressed by IP address was its
    first octet ("10.0.0.11:19162" -> "10"), which every host of 10.x shares: the SGA of ORCL1 on
    10.0.0.11 was counted on 10.0.0.12 too (HostShmallBelowSga, HostHugePagesBelowSga). The address
    is kept whole (10.0.0.11), as GV$INSTANCE.HOST_NAME gives it when the host is named by it; a
    host name still matches up to its first dot or colon."""
    tl = Timeline(10)
    gib = 1024 ** 3
    series = []
    for addr, sga in (("10.0.0.11", 20 * gib), ("10.0.0.12", 8 * gib)):
        series.append(tl.counter("dbhost_process_context_switches_total",
                                 {"job": "dbhost", "instance": f"{addr}:19162", "sid": "ORCL1", "role": "lgwr",
                                  "kind": "voluntary"}, [(0, 60)]))
        ora = {"job": "oracle", "instance": f"ora-{addr}:19161", "database": f"DB{addr[-2:]}", "inst_id": "1"}
        series.append(tl.gauge("oracle_instance_info", {**ora, "instance_name": "ORCL1", "host_name": addr,
                                                        "version": "19.0.0.0.0", "db_name": "ORCL",
                                                        "db_unique_name": f"DB{addr[-2:]}", "database_role": "PRIMARY"},
                               [(0, 1)]))
        series.append(tl.gauge("oracle_sga_target_bytes", ora, [(0, sga)]))
    # a host named by its name: db1.example.com in GV$INSTANCE, db1:19162 as the target
    series.append(tl.counter("dbhost_process_context_switches_total",
                             {"job": "dbhost", "instance": "db1:19162", "sid": "PROD1", "role": "lgwr", "kind": "voluntary"},
                             [(0, 60)]))
    ora = {"job": "oracle", "instance": "ora-db1:19161", "database": "PROD", "inst_id": "1"}
    series += [tl.gauge("oracle_instance_info", {**ora, "instance_name": "PROD1", "host_name": "db1.example.com",
                                                 "version": "19.0.0.0.0", "db_name": "PROD", "db_unique_name": "PROD",
                                                 "database_role": "PRIMARY"}, [(0, 1)]),
               tl.gauge("oracle_sga_target_bytes", ora, [(0, 4 * gib)])]
    return {"name": "instance:oracle_sga_target_bytes:sum: a target addressed by IP keeps its whole address as its host",
            "interval": "1m", "input_series": series, "promql_expr_test": [
                {"expr": R.SGA_ON_HOST, "eval_time": "5m", "exp_samples": [
                    {"labels": sel(R.SGA_ON_HOST, pack.target("dbhost", {"instance": inst})), "value": v}
                    for inst, v in (("10.0.0.11:19162", 20 * gib), ("10.0.0.12:19162", 8 * gib),
                                    ("db1:19162", 4 * gib))]}]}


def unmeasured_lun_tests(pack) -> dict:
    """alertfix #6/#7, failure first (review "alerts" findings 6, 7): node_exporter scraped as
    dbhost1:9100 while dbhost-exporter is dbhost1: the redo LUN's latency joined nothing and R17
    never fired, silently. LunLatencyUnmeasured says so; a host whose two exporters agree on
    `instance`, and a host whose node_exporter is down (NodeExporterDown's), stay quiet."""
    alert = "LunLatencyUnmeasured"
    f = pack.for_min(alert)
    n = f + 10
    tl = Timeline(n)
    series = []
    for dbh, node_inst, up in (("dbhost1", "dbhost1:9100", 1), ("dbhost2", "dbhost2", 1), ("dbhost3", "dbhost3", 0)):
        lab = {"job": "dbhost", "instance": dbh, "device": "dm-3"}
        series.append(tl.gauge("dbhost_lun_info", {**lab, "hctl": "2:0:0:1", "vendor": "HITACHI", "model": "OPEN-V",
                                                   "wwid": "naa.60060e80dm-3", "multipath": "", "role": "redo"},
                               [(0, 1)]))
        node = {"job": "node", "instance": node_inst}
        series.append(tl.gauge("up", node, [(0, up)]))
        if up:
            series += [tl.counter("node_disk_writes_completed_total", {**node, "device": "dm-3"}, [(0, 74 * 60)]),
                       tl.counter("node_disk_write_time_seconds_total", {**node, "device": "dm-3"}, [(0, 74 * 60 * 0.012)])]
    return {"name": f"{alert}: node_exporter scraped as dbhost1:9100, dbhost-exporter as dbhost1: the redo LUN's "
                    "latency is unmeasured; dbhost2 (same instance) and dbhost3 (node_exporter down) are quiet",
            "interval": "1m", "input_series": series, "alert_rule_test": [
                {"eval_time": f"{f - 1}m", "alertname": alert, "exp_alerts": []},
                {"eval_time": f"{n}m", "alertname": alert, "exp_alerts": [
                    pack.expect(alert, 0, {"job": "dbhost", "instance": "dbhost1", "device": "dm-3", "role": "redo"}, 1)]}]}
