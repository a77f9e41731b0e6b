"""monitoring.test.yml: the monitoring watching itself (O1, O3)."""
from mixin.scenarios.blind import flap as _flap, flapping_in_time_tests, observed_share
from mixin.scenarios.common import H, HOST, ORA, quiet, sel, Timeline


# ---------------------------------------------------------------- the monitoring watching itself (O1, O3)
def _series(name: str, labels: dict, values: str) -> dict:
    return {"series": sel(name, labels), "values": values}


def series_dropped_tests(pack) -> list:
    """Review host #1: the series cap cut the lun collector's output silently."""
    from mixin.scenarios.common import length, scenario   # noqa: PLC0415
    alert = "DbhostSeriesDropped"
    n = length(pack, alert, window=15)
    tl = Timeline(n)
    lab = {"job": "dbhost", "instance": HOST, "collector": "lun"}
    return [
        scenario(pack, "DbhostSeriesDropped: the lun collector cuts 1,209 samples every scrape fires", alert, 0,
                 [tl.counter("dbhost_collector_dropped_series_total", lab, [(0, 0), (H, 1209)])],
                 {"instance": HOST, "collector": "lun"}, 1209 * 15, window=15),
        quiet("DbhostSeriesDropped: nothing dropped (counter at 0) does not fire", alert,
              [tl.counter("dbhost_collector_dropped_series_total", lab, [(0, 0)], start=0)], n),
        quiet("DbhostSeriesDropped: a cut long ago (counter flat at 640 since) does not fire", alert,
              [Timeline(n + 20).counter("dbhost_collector_dropped_series_total", lab, [(0, 0)], start=640)], n + 20),
    ]


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
                           "exp_alerts": [pack.expect(alert, 0, labels, observed_share(_flap, at))]}]})
        tests += flapping_in_time_tests(pack, alert, labels, minutes, at)
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
                      {"eval_time": f"{H + 7}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, gone, 1)]}]})
    tests.append(quiet("ScrapeTargetVanished: a target that is down (up 0) has not vanished", alert,
                       [_series("up", dbh, f"1x{H} 0x{n}")], H + 10))

    # a database gone from the exporter's output (the exporter itself fine)
    alert = "OracleDatabaseVanished"
    tests.append({"name": "OracleDatabaseVanished: ODS2 missing from the exporter's output fires, ODS stays quiet",
                  "interval": "1m", "input_series": [
                      _series("up", ora, f"1x{n}"), _series("oracle_up", {**ora, "database": "ODS"}, f"1x{n}"),
                      _series("oracle_up", {**ora, "database": "ODS2"}, f"1x{H} stale")], "alert_rule_test": [
                      {"eval_time": f"{H + 4}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + 10}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"database": "ODS2"}, 1)]}]})
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
                      {"eval_time": f"{H + 9}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"database": "ODS"}, 1)]}]})
    tests.append(quiet("OracleInstanceVanished: the whole database down (oracle_up 0): OracleDown's finding", alert,
                       [_series("oracle_up", {**ora, "database": "ODS"}, f"1x{H} 0x{n}"),
                        info("1", f"1x{H} stale"), info("2", f"1x{H} stale")], H + 10))

    tests += issue23_tests(pack)
    tests += vanished_tests(pack)
    tests += exporter_bridge_tests(pack)
    tests += exporter_bridge_one_failed_fetch_tests(pack)
    tests += series_dropped_tests(pack)

    # the heartbeat
    tests.append({"name": "Watchdog: always firing", "interval": "1m", "input_series": [node_up],
                  "alert_rule_test": [{"eval_time": "1m", "alertname": "Watchdog",
                                       "exp_alerts": [pack.expect("Watchdog", 0, {}, 1)]}]})
    return tests


def issue23_tests(pack) -> list:
    """Issue 23, failure first: scrape gaps and exporter restarts do not resolve or hide an
    outage; vanished instances stay alerted; relocations and daylight-saving changes are quiet."""
    from mixin.rules import ORACLE_DOWN_REASON
    tests = []
    ora = {"job": "oracle", "instance": ORA["instance"]}
    odb = {**ora, "database": "ODS"}

    # OracleDown: one failed scrape of the exporter during a real outage (every series stale for a
    # minute) sent RESOLVED for a database that is still down
    alert = "OracleDown"
    f = pack.for_min(alert)
    n = H + f + 12
    gap = H + f + 4
    up = " ".join(["1"] * (H + 1) + ["0"] * (gap - H - 1) + ["stale"] + ["0"] * (n - gap))
    unknown = {ORACLE_DOWN_REASON: "reason unknown (no oracle_last_error_info)"}
    firing = [pack.expect(alert, 0, {"database": "ODS"}, 0, unknown)]
    tests.append({"name": "OracleDown: a failed scrape of the exporter during the outage keeps the alert firing (no RESOLVED)",
                  "interval": "1m", "input_series": [_series("oracle_up", odb, up)], "alert_rule_test": [
                      {"eval_time": f"{H + f}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + f + 2}m", "alertname": alert, "exp_alerts": firing},
                      {"eval_time": f"{gap}m", "alertname": alert, "exp_alerts": firing},
                      {"eval_time": f"{gap + 1}m", "alertname": alert, "exp_alerts": firing}]})
    # ... and a failed scrape while it is pending does not restart `for`
    early = H + 2
    up = " ".join(["1"] * (H + 1) + ["0"] * (early - H - 1) + ["stale"] + ["0"] * (n - early))
    tests.append({"name": "OracleDown: a failed scrape while pending does not restart `for`",
                  "interval": "1m", "input_series": [_series("oracle_up", odb, up)], "alert_rule_test": [
                      {"eval_time": f"{H + f + 1}m", "alertname": alert, "exp_alerts": firing}]})

    # OracleDown for a refused monitoring account: a ticket with its own cause, not the page
    reason = {**odb, "reason": "password expired"}
    series = [_series("oracle_up", odb, f"1x{H} 0x{n}"), _series("oracle_last_error_info", reason, f"1x{n + H}")]
    tests.append({"name": "OracleDown: the monitoring password expired: the credentials ticket, not the database-down page",
                  "interval": "1m", "input_series": series, "alert_rule_test": [
                      {"eval_time": f"{H + f + 2}m", "alertname": alert, "exp_alerts": [
                          pack.expect(alert, 1, {"database": "ODS"}, 0, {ORACLE_DOWN_REASON: "password expired"})]}]})
    assert pack.rules[alert][1]["labels"]["cause"] == "monitoring_credentials"
    assert pack.rules[alert][1]["labels"]["severity"] == "warning"

    # an exporter that crashes every 8 minutes: one failed scrape each time; `up` stays 97%
    # available (the flapping alert is quiet), only its restarts show it
    alert = "ExporterCrashLooping"
    m = 40
    restarts = (11, 19, 27, 35)
    start, ups, vals = 1.7e9, [], []
    for t in range(m + 1):
        if t in restarts:
            start = 1.7e9 + t * 60
            ups.append("0")
            vals.append("stale")
        else:
            ups.append("1")
            vals.append(str(int(start)))
    series = [_series("up", ora, " ".join(ups)), _series("process_start_time_seconds", ora, " ".join(vals))]
    tests.append({"name": "ExporterCrashLooping: oracle-exporter restarts every 8 minutes: fires at the third restart; "
                          "OracleExporterFlapping and OracleExporterDown stay quiet",
                  "interval": "1m", "input_series": series, "alert_rule_test": [
                      {"eval_time": "21m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": "29m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, ora, 3)]},
                      {"eval_time": "38m", "alertname": "OracleExporterFlapping", "exp_alerts": []},
                      {"eval_time": "38m", "alertname": "OracleExporterDown", "exp_alerts": []}]})
    once = " ".join(["1700000000"] * 10 + ["stale"] + ["1700000660"] * 30)
    tests.append(quiet("ExporterCrashLooping: one restart (a deploy) does not fire", alert,
                       [_series("process_start_time_seconds", ora, once)], 35))

    # OracleInstanceRestarted: a crash that Clusterware restarts within a minute (oracle_up never 0)
    alert = "OracleInstanceRestarted"
    lab = {**odb, "inst_id": "1"}
    t0 = 1_700_000_000

    def start_time(shift):
        return _series("oracle_instance_start_time_seconds", lab, f"{t0}x{H} {t0 + shift}x25")
    tests.append({"name": "OracleInstanceRestarted: the instance crashed and Clusterware restarted it within a minute: fires",
                  "interval": "1m", "input_series": [_series("oracle_up", odb, f"1x{H + 25}"), start_time(86400 * 3)],
                  "alert_rule_test": [
                      {"eval_time": f"{H}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + 1}m", "alertname": alert, "exp_alerts": [
                          pack.expect(alert, 0, {"database": "ODS", "inst_id": "1"}, 86400 * 3)]},
                      {"eval_time": f"{H + 1}m", "alertname": "OracleDown", "exp_alerts": []}]})
    for shift, what in ((3600, "spring forward"), (-3600, "fall back"), (1800, "a half-hour zone's change")):
        tests.append(quiet(f"OracleInstanceRestarted: the database host's daylight-saving change ({what}, "
                           f"{shift:+d} s) is not a restart", alert, [start_time(shift)], H + 3))
    # rev23 #12, failure first: crashes after 62 and 31 minutes of uptime (the start time moves by
    # 3720 s and 1860 s, inside the old +-5 minute daylight-saving bands), and one after exactly an
    # hour (3600 s, the redo and commit counters reset by the restart): all alert. Quiet
    # counterpart: the daylight-saving change with the counters growing on.
    redo = {**lab}

    def counters(reset):
        before = [1000 + 50 * t for t in range(H)]
        after = [(7 if reset else before[-1] + 50) + 50 * t for t in range(26)]
        return [_series(m, redo, " ".join(str(v) for v in before + after))
                for m in ("oracle_redo_size_bytes_total", "oracle_user_commits_total")]
    for shift, why in ((3720, "62 minutes"), (1860, "31 minutes")):
        tests.append({"name": f"OracleInstanceRestarted: a crash after {why} of uptime (start time +{shift} s) "
                              "alerts (rev23 #12)",
                      "interval": "1m", "input_series": [start_time(shift)],
                      "alert_rule_test": [{"eval_time": f"{H + 1}m", "alertname": alert, "exp_alerts": [
                          pack.expect(alert, 0, {"database": "ODS", "inst_id": "1"}, shift)]}]})
    tests.append({"name": "OracleInstanceRestarted: a crash after exactly one hour of uptime (start time +3600 s) "
                          "resets the instance's counters: alerts (rev23 #12)",
                  "interval": "1m", "input_series": [start_time(3600)] + counters(reset=True),
                  "alert_rule_test": [{"eval_time": f"{H + 1}m", "alertname": alert, "exp_alerts": [
                      pack.expect(alert, 0, {"database": "ODS", "inst_id": "1"}, 3600)]}]})
    tests.append(quiet("OracleInstanceRestarted: the daylight-saving change (+3600 s) with the counters growing on is "
                       "not a restart (rev23 #12)", alert, [start_time(3600)] + counters(reset=False), H + 3))

    # OracleInstanceVanished: stays firing while the instance stays down (the [1h] look-back closed
    # it about 70 minutes after the node went down)
    alert = "OracleInstanceVanished"
    long = 100

    def info(inst, host, values):
        return _series("oracle_instance_info", {**odb, "inst_id": inst, "instance_name": f"ODS_{inst}",
                                                "host_name": host, "version": "19.0.0.0.0", "db_name": "ODS",
                                                "db_unique_name": "ODS", "database_role": "PRIMARY"}, values)
    fired = [pack.expect(alert, 0, {"database": "ODS"}, 1)]
    tests.append({"name": "OracleInstanceVanished: a RAC node down for 90 minutes stays alerted until it is back",
                  "interval": "1m", "input_series": [
                      _series("oracle_up", odb, f"1x{long}"), info("1", "dbhost1", f"1x{long}"),
                      info("2", "dbhost2", f"1x{H} stale _x{long - H - 2} 1")],
                  "alert_rule_test": [
                      {"eval_time": f"{t}m", "alertname": alert, "exp_alerts": fired} for t in (H + 9, H + 75, long - 1)
                  ] + [{"eval_time": f"{long}m", "alertname": alert, "exp_alerts": []}]})
    # RAC One Node: the instance moves to the other host (online relocation: both run for a few
    # minutes, then the old one stops): the count stays 1; not a vanishing
    tests.append(quiet("OracleInstanceVanished: a RAC One Node relocation (ODS_1 on dbhost1 -> ODS_2 on dbhost2) "
                       "is not a vanishing", alert, [
                           _series("oracle_up", odb, f"1x{H + 40}"),
                           info("1", "dbhost1", f"1x{H + 3} stale"),
                           info("2", "dbhost2", f"_x{H} 1x40")], H + 30))
    return tests


def vanished_tests(pack) -> list:
    """Issue 23 item 3, failure first: a vanished target or database stays alerted past any hour
    until it is back; a database removed from the exporter's configuration resolves; an exporter
    outage concludes nothing about its databases."""
    tests = []
    ora = {"job": "oracle", "instance": ORA["instance"]}
    dbh = {"job": "dbhost", "instance": HOST}

    # ScrapeTargetVanished: the [1h] look-back resolved it an hour after the target was dropped
    alert = "ScrapeTargetVanished"
    long = 200
    gone = {"job": "dbhost", "instance": "dbhost2"}
    fired = [pack.expect(alert, 0, gone, 1)]
    tests.append({"name": "ScrapeTargetVanished: dbhost2 dropped from service discovery for 3 hours stays alerted "
                          "until it is scraped again",
                  "interval": "1m", "input_series": [
                      _series("up", dbh, f"1x{long}"),
                      _series("up", gone, f"1x{H} stale _x{long - H - 12} 1x10")], "alert_rule_test": [
                      *[{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": fired} for t in (H + 7, H + 70, H + 175)],
                      {"eval_time": f"{long}m", "alertname": alert, "exp_alerts": []}]})

    # OracleDatabaseVanished
    alert = "OracleDatabaseVanished"
    fired = [pack.expect(alert, 0, {"database": "ODS2"}, 1)]
    ods = _series("oracle_up", {**ora, "database": "ODS"}, f"1x{long}")
    # rev23 #14c: the exporter process that exported ODS2 still runs and answers without it (it
    # lost it: the configuration is read at start only): stays alerted past any hour, until back
    start = _series("process_start_time_seconds", ora, f"1000x{long}")
    tests.append({"name": "OracleDatabaseVanished: ODS2 missing from the output of the same exporter process fires "
                          "and stays firing (not taken as a configuration change)",
                  "interval": "1m", "input_series": [
                      _series("up", ora, f"1x{long}"), ods, start,
                      _series("oracle_up", {**ora, "database": "ODS2"}, f"1x{H} stale")], "alert_rule_test": [
                      *[{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": fired} for t in (H + 10, H + 70)]]})
    # the DBA removed ODS2 from the exporter's config and restarted it (a newer process answers
    # without ODS2): forgotten before the alert's `for`, no ticket (the 1-hour rule ticketed it)
    tests.append({"name": "OracleDatabaseVanished: ODS2 removed from the exporter's configuration (restarted "
                          "without it) is quiet",
                  "interval": "1m", "input_series": [
                      _series("up", ora, f"1x{H} 0x1 1x{long - H - 2}"),
                      _series("process_start_time_seconds", ora, f"1000x{H} stale _ 5000x{long - H - 2}"),
                      _series("oracle_up", {**ora, "database": "ODS"}, f"1x{H} stale _ 1x{long - H - 2}"),
                      _series("oracle_up", {**ora, "database": "ODS2"}, f"1x{H} stale")], "alert_rule_test": [
                      {"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []} for t in (H + 4, H + 8, H + 12, H + 40)]})
    # the exporter down for two hours (its databases are OracleExporterDown's), then back without
    # ODS2: nothing was concluded while it was down, so ODS2 is still expected and fires
    down = 120
    tests.append({"name": "OracleDatabaseVanished: the exporter unreachable for 2 hours (the same process) comes "
                          "back without ODS2: fires (an exporter outage does not forget its databases)",
                  "interval": "1m", "input_series": [
                      _series("up", ora, f"1x{H} 0x{down} 1x{long - H - down}"),
                      _series("oracle_up", {**ora, "database": "ODS"}, f"1x{H} stale _x{down - 2} 1x{long - H - down}"),
                      _series("oracle_up", {**ora, "database": "ODS2"}, f"1x{H} stale")], "alert_rule_test": [
                      {"eval_time": f"{H + 60}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + down + 12}m", "alertname": alert, "exp_alerts": fired}]})

    # OracleInstanceVanished: a RAC node down for 3 hours stays alerted (its memory is kept while
    # the database answers)
    alert = "OracleInstanceVanished"
    odb = {**ora, "database": "ODS"}

    def info(inst, values):
        return _series("oracle_instance_info", {**odb, "inst_id": inst, "instance_name": f"ODS_{inst}",
                                                "host_name": f"dbhost{inst}", "version": "19.0.0.0.0", "db_name": "ODS",
                                                "db_unique_name": "ODS", "database_role": "PRIMARY"}, values)
    fired = [pack.expect(alert, 0, {"database": "ODS"}, 1)]
    tests.append({"name": "OracleInstanceVanished: a RAC node down for 3 hours stays alerted",
                  "interval": "1m", "input_series": [
                      _series("oracle_up", odb, f"1x{long}"), info("1", f"1x{long}"), info("2", f"1x{H} stale")],
                  "alert_rule_test": [{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": fired}
                                      for t in (H + 9, H + 120, H + 190)]})
    return tests


def exporter_bridge_tests(pack) -> list:
    """rev23 #14b, failure first: the exporter of a database that is down dies; OracleDown stays
    firing until OracleExporterDown has fired (it resolved 3 minutes after the exporter died, two
    minutes before OracleExporterDown's `for` ended). Quiet: a database that was up when its exporter
    died gets no OracleDown, nor one refusing the monitoring account (a ticket, not a page)."""
    from mixin.rules import ORACLE_DOWN_REASON
    unknown = {ORACLE_DOWN_REASON: "reason unknown (no oracle_last_error_info)"}
    die, n = 10, 30
    series, down = [], []
    for inst, db, last in (("e1:9161", "D", 0), ("e2:9161", "U", 1), ("e3:9161", "C", 0)):
        t = {"job": "oracle", "instance": inst}
        series.append(_series("up", t, f"1x{die} 0x{n - die - 1}"))
        series.append(_series("oracle_up", {**t, "database": db}, f"{last}x{die} stale"))
        down.append(pack.expect("OracleExporterDown", 0, {"job": "oracle", "instance": inst}, 0))
    series.append(_series("oracle_last_error_info", {"job": "oracle", "instance": "e3:9161", "database": "C",
                                                     "reason": "logon denied"}, f"1x{die} stale"))
    fired = [pack.expect("OracleDown", 0, {"instance": "e1:9161", "database": "D"}, 0, unknown)]
    return [{"name": "OracleDown: the exporter of a database that is down dies: OracleDown stays firing until "
                     "OracleExporterDown fires (no moment with neither); none for the database that was up, nor "
                     "for the one refusing the monitoring account",
             "interval": "1m", "input_series": series, "alert_rule_test": [
                 {"eval_time": f"{die + 4}m", "alertname": "OracleDown", "exp_alerts": fired},
                 {"eval_time": f"{die + 4}m", "alertname": "OracleExporterDown", "exp_alerts": []},
                 {"eval_time": f"{die + 7}m", "alertname": "OracleDown", "exp_alerts": fired},
                 {"eval_time": f"{die + 7}m", "alertname": "OracleExporterDown", "exp_alerts": down},
                 {"eval_time": f"{die + 17}m", "alertname": "OracleDown", "exp_alerts": []}]}]


def exporter_bridge_one_failed_fetch_tests(pack) -> list:
    """fix2 #3, failure first: a healthy database, one failed fetch (oracle_up 0) on the exporter's
    last scrape, then the exporter dies: the bridge paged OracleDown for 15 minutes. It bridges only
    an oracle_up that was 0 for the alert's own `for` while the exporter answered; a database down
    for that long before its exporter died still keeps OracleDown (exporter_bridge_tests)."""
    from mixin.rules import ORACLE_DOWN_REASON
    unknown = {ORACLE_DOWN_REASON: "reason unknown (no oracle_last_error_info)"}
    die, n = 30, 60
    series = []
    for inst, db, vals in (("e1:9161", "ONE", f"1x{die - 1} 0 stale"),        # one failed fetch, then death
                           ("e3:9161", "DWN", f"1x{die - 4} 0x3 stale")):     # down 3m (> `for` 2m): bridged
        t = {"job": "oracle", "instance": inst}
        series.append(_series("up", t, f"1x{die} 0x{n - die - 1}"))
        series.append(_series("oracle_up", {**t, "database": db}, vals))
    fired = [pack.expect("OracleDown", 0, {"instance": "e3:9161", "database": "DWN"}, 0, unknown)]
    # (at die+2 the one failed fetch is still within the 3m gap read of the alert's first branch;
    # from die+3 only the bridge could keep it)
    return [{"name": "OracleDown: one failed fetch on the exporter's last scrape, then the exporter dies: no "
                     "15-minute OracleDown (OracleExporterDown says it); a database down for the alert's `for` "
                     "before is bridged",
             "interval": "1m", "input_series": series, "alert_rule_test": [
                 {"eval_time": f"{t}m", "alertname": "OracleDown", "exp_alerts": fired}
                 for t in (die + 4, die + 10, die + 15)] + [
                 {"eval_time": f"{die + 17}m", "alertname": "OracleDown", "exp_alerts": []}]}]
