"""monitoring.test.yml: the monitoring watching itself (O1, O3)."""
from mixin.scenarios.common import H, HOST, ORA, quiet, sel, Timeline


# ---------------------------------------------------------------- the monitoring watching itself (O1, O3)
def _series(name: str, labels: dict, values: str) -> dict:
    return {"series": sel(name, labels), "values": values}


def _flap(t: int, at: int = H) -> int:
    """up 3 minutes, down 5, again and again from minute `at` on."""
    return 1 if t <= at or (t - at - 1) % 8 < 3 else 0


def _availability(fn, t: int, window: int = 30) -> float:
    """avg_over_time(up[30m]) at minute t with 1-minute samples (Prometheus 2: both ends included)."""
    vals = [fn(x) for x in range(max(0, t - window), t + 1)]
    return sum(vals) / len(vals)


def monitoring_tests(pack) -> list:
    tests = []
    ora = {"job": "oracle", "instance": ORA["instance"]}
    dbh = {"job": "dbhost", "instance": HOST}
    for alert, labels, down in (("OracleExporterFlapping", ora, "OracleExporterDown"),
                                ("HostExporterFlapping", dbh, "DbhostExporterDown")):
        minutes = 95
        tl = Timeline(minutes)
        flapping = [tl.gauge("up", labels, [(0, 1), (H, _flap)])]
        at = H + 40
        # the failure: every outage is 5 minutes, so `up == 0 for 5m` never holds and the down
        # alert never fires, for an hour and a half; the availability over 30 minutes does
        tests.append({"name": f"{alert}: up 3 min, down 5 min, for 90 minutes: {down} never fires, {alert} does",
                      "interval": "1m", "input_series": flapping, "alert_rule_test": [
                          *[{"eval_time": f"{t}m", "alertname": down, "exp_alerts": []} for t in range(H + 5, minutes, 8)],
                          {"eval_time": f"{H + 5}m", "alertname": alert, "exp_alerts": []},
                          {"eval_time": f"{at}m", "alertname": alert,
                           "exp_alerts": [pack.expect(alert, 0, labels, _availability(_flap, at))]}]})
        outage = lambda t: 0 if H < t <= H + 10 else 1   # noqa: E731
        tests.append({"name": f"{alert}: one 10-minute outage, then healthy: {down}'s finding, not a flap",
                      "interval": "1m", "input_series": [tl.gauge("up", labels, [(0, outage)])], "alert_rule_test": [
                          {"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []} for t in (H + 12, H + 20, H + 30)]})
        lost = lambda t: 0 if t % 10 == 0 else 1          # noqa: E731
        tests.append(quiet(f"{alert}: one lost scrape every 10 minutes (97% available) does not fire", alert,
                           [tl.gauge("up", labels, [(0, lost)])], H + 40))

    # a whole scrape job absent (renamed, service discovery empty)
    alert = "ScrapeJobAbsent"
    cfg = pack.cfg
    absent_labels = lambda kind: {"job": kind} if len(cfg.jobs[kind]) == 1 else {}   # noqa: E731
    tl = Timeline(20)
    node_up = tl.gauge("up", {"job": "node", "instance": HOST}, [(0, 1)])
    tests.append({"name": "ScrapeJobAbsent: no oracle and no dbhost target at all (job renamed) fires for both",
                  "interval": "1m", "input_series": [node_up], "alert_rule_test": [
                      {"eval_time": "9m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": "11m", "alertname": alert, "exp_alerts": [
                          pack.expect(alert, 0, absent_labels("oracle"), 1),
                          pack.expect(alert, 1, absent_labels("dbhost"), 1)]}]})
    tests.append(quiet("ScrapeJobAbsent: targets present but down: the down alerts' finding, not an absence", alert,
                       [tl.gauge("up", ora, [(0, 0)]), tl.gauge("up", dbh, [(0, 0)]), node_up], 15))

    # a target dropped from service discovery: its series ends (promtool: a stale marker)
    alert = "ScrapeTargetVanished"
    n = 20
    gone = {"job": "dbhost", "instance": "dbhost2"}
    tests.append({"name": "ScrapeTargetVanished: dbhost2 dropped from service discovery fires, dbhost1 stays quiet",
                  "interval": "1m", "input_series": [
                      _series("up", dbh, f"1x{n}"), _series("up", gone, f"1x{H} stale")], "alert_rule_test": [
                      {"eval_time": f"{H + 4}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + 7}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, gone, H + 1)]}]})
    tests.append(quiet("ScrapeTargetVanished: a target that is down (up 0) has not vanished", alert,
                       [_series("up", dbh, f"1x{H} 0x{n}")], H + 10))

    # a database gone from the exporter's output (the exporter itself fine)
    alert = "OracleDatabaseVanished"
    tests.append({"name": "OracleDatabaseVanished: ODS2 missing from the exporter's output fires, ODS stays quiet",
                  "interval": "1m", "input_series": [
                      _series("up", ora, f"1x{n}"), _series("oracle_up", {**ora, "database": "ODS"}, f"1x{n}"),
                      _series("oracle_up", {**ora, "database": "ODS2"}, f"1x{H} stale")], "alert_rule_test": [
                      {"eval_time": f"{H + 4}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + 7}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"database": "ODS2"}, H + 1)]}]})
    tests.append(quiet("OracleDatabaseVanished: the whole exporter down: OracleExporterDown's finding", alert,
                       [_series("up", ora, f"1x{H} 0x{n}"), _series("oracle_up", {**ora, "database": "ODS"}, f"1x{H} stale")],
                       H + 10))

    # a RAC instance gone while the database answers on the other one
    alert = "OracleInstanceVanished"

    def info(inst, values):
        return _series("oracle_instance_info", {**ora, "database": "ODS", "inst_id": inst, "instance_name": f"ODS{inst}",
                                                "host_name": f"dbhost{inst}", "version": "19.0.0.0.0", "db_name": "ODS",
                                                "db_unique_name": "ODS", "database_role": "PRIMARY"}, values)
    tests.append({"name": "OracleInstanceVanished: instance 2 of a two-instance RAC stops, oracle_up stays 1: fires",
                  "interval": "1m", "input_series": [
                      _series("oracle_up", {**ora, "database": "ODS"}, f"1x{n}"),
                      info("1", f"1x{n}"), info("2", f"1x{H} stale")], "alert_rule_test": [
                      {"eval_time": f"{H + 7}m", "alertname": "OracleDown", "exp_alerts": []},
                      {"eval_time": f"{H + 4}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + 7}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"database": "ODS", "inst_id": "2", "instance_name": "ODS2"},
                                                  H + 1)]}]})
    tests.append(quiet("OracleInstanceVanished: the whole database down (oracle_up 0): OracleDown's finding", alert,
                       [_series("oracle_up", {**ora, "database": "ODS"}, f"1x{H} 0x{n}"),
                        info("1", f"1x{H} stale"), info("2", f"1x{H} stale")], H + 10))

    # the heartbeat
    tests.append({"name": "Watchdog: always firing", "interval": "1m", "input_series": [node_up],
                  "alert_rule_test": [{"eval_time": "1m", "alertname": "Watchdog",
                                       "exp_alerts": [pack.expect("Watchdog", 0, {}, 1)]}]})
    return tests
