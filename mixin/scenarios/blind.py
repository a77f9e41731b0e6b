"""blind.test.yml: a firing page while the exporter that measures it stops answering (alertfix #1).

Failure first (review "alerts" finding 1): every gauge is read through last_over_time(...[3m]), so
when oracle-exporter or dbhost-exporter died under a firing page, the page RESOLVED after 3 minutes
although the tablespace was still full, the redo LUN still without a path; when the exporter came
back the page went through its `for` again as a new incident. mixin.render.blind_bridge keeps every
firing critical alert firing while its scrape target's `up` is 0 (or the remembered target is
gone from `up`); once the exporter answers again the data decides.
"""
from mixin.scenarios.common import H, HOST, ORA, Timeline, sel

GB = 1e9
DOWN_AT, BACK_AT, END = 30, 46, 60      # up 0 from minute 31 to 45, 1 again from 46


def flap(t: int, at: int = H) -> int:
    """up 3 minutes, down 5, again and again from minute `at` on."""
    return 1 if t <= at or (t - at - 1) % 8 < 3 else 0


def observed_share(fn, t: int, window: int = 30, step: int = 60, bridge: int = 3) -> float:
    """alertfix #5: avg_over_time(max_over_time(up[3m])[30m:1m]) at minute t, up sampled every
    `step` seconds with the value fn(minute the sample is in) (Prometheus 2: both ends of a range
    included): the share of the minutes in which a scrape succeeded within the bridge."""
    samples = {k * step: fn((k * step) // 60) for k in range(0, t * 60 // step + 1)}
    obs = [max(v for ts, v in samples.items() if (x - bridge) * 60 <= ts <= x * 60)
           for x in range(max(0, t - window), t + 1)]
    return sum(obs) / len(obs)


def _per(step: int, fn, minutes: int) -> str:
    """promtool values of up sampled every `step` seconds for `minutes` minutes: fn(minute)."""
    return " ".join(str(fn((k * step) // 60)) for k in range(0, minutes * 60 // step + 1))


def _values(before: str, after: str | None) -> str:
    """A series scraped until DOWN_AT, stale during the outage, `after` once the exporter is back
    (None: never again)."""
    gap = BACK_AT - DOWN_AT - 2                          # samples DOWN_AT+2 .. BACK_AT-1 missing
    tail = f" {after}x{END - BACK_AT}" if after is not None else ""
    return f"{before}x{DOWN_AT} stale _x{gap}{tail}"


def _up(labels: dict) -> dict:
    return {"series": _sel("up", labels), "values": f"1x{DOWN_AT} 0x{BACK_AT - DOWN_AT - 2} 1x{END - BACK_AT + 1}"}


def _sel(name: str, labels: dict) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _tablespace(used_after: float | None, used: float = 99 * GB) -> list:
    lab = {**ORA, "database": "ODS", "container": "SALES", "tablespace": "USERS", "contents": "PERMANENT"}
    after = None if used_after is None else f"{used_after:.0f}"
    return [_up(ORA),
            {"series": _sel("oracle_up", {**ORA, "database": "ODS"}), "values": _values("1", "1")},
            {"series": _sel("oracle_tablespace_used_bytes", lab), "values": _values(f"{used:.0f}", after)},
            {"series": _sel("oracle_tablespace_max_bytes", lab), "values": _values(f"{100 * GB:.0f}", f"{100 * GB:.0f}")}]


def _paths(active_after: int) -> list:
    dbh = {"job": "dbhost", "instance": HOST}
    lab = {**dbh, "device": "dm-3"}
    info = {**lab, "hctl": "2:0:0:1", "vendor": "HITACHI", "model": "OPEN-V", "wwid": "naa.60060e80dm-3",
            "multipath": "", "role": "redo"}
    return [_up(dbh),
            # 4 paths, every one of them down from minute 6, running again (or not) once the exporter is back
            {"series": _sel("dbhost_multipath_paths", lab), "values": _values("4", "4")},
            {"series": _sel("dbhost_multipath_paths_active", lab),
             "values": f"4x5 0x{DOWN_AT - 6} stale _x{BACK_AT - DOWN_AT - 2} {active_after}x{END - BACK_AT}"},
            {"series": _sel("dbhost_lun_info", info), "values": _values("1", "1")}]


def blind_tests(pack) -> list:
    tests = []
    alert = "OracleTablespaceFull"
    ts = {"database": "ODS", "container": "SALES", "tablespace": "USERS", "contents": "PERMANENT"}
    page = lambda v: pack.expect(alert, 1, ts, v)          # noqa: E731
    ticket = lambda v: pack.expect(alert, 0, ts, v)        # noqa: E731
    during = (DOWN_AT + 4, DOWN_AT + 8, BACK_AT - 1)      # past the 3-minute look-back, up 0
    tests.append({
        "name": f"{alert}: oracle-exporter dies under the 99% page (up 0 for 15 min): the page stays firing "
                "(value 1 while blind), then resolves when the exporter answers with USERS at 50%",
        "interval": "1m", "input_series": _tablespace(50 * GB), "alert_rule_test": [
            {"eval_time": f"{DOWN_AT - 1}m", "alertname": alert, "exp_alerts": [ticket(0.99), page(0.99)]},
            *[{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": [page(1)]} for t in during],
            {"eval_time": f"{BACK_AT + 1}m", "alertname": alert, "exp_alerts": []},
            {"eval_time": f"{END}m", "alertname": alert, "exp_alerts": []}]})
    tests.append({
        "name": f"{alert}: the exporter comes back and USERS is still 99% full: the same page goes on firing "
                "(no RESOLVED, no new `for`)",
        "interval": "1m", "input_series": _tablespace(99 * GB), "alert_rule_test": [
            *[{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": [page(1)]} for t in during],
            # at BACK_AT + 1 the page is still the one that fired before the outage (its `for` of 5
            # minutes would not have passed yet had it restarted); the ticket's `for` runs again
            {"eval_time": f"{BACK_AT + 1}m", "alertname": alert, "exp_alerts": [page(0.99)]}]})
    tests.append({
        "name": f"{alert}: a page still pending when the exporter dies is not made to fire by the outage",
        "interval": "1m", "input_series": _tablespace(None, used=50 * GB)[:2] + [
            {"series": s["series"], "values": f"{50 * GB:.0f}x{DOWN_AT - 1} {99 * GB:.0f} stale"
             if "used" in s["series"] else s["values"]} for s in _tablespace(None, used=50 * GB)[2:]],
        "alert_rule_test": [{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []}
                            for t in (DOWN_AT - 1, DOWN_AT + 4, BACK_AT - 1)]})

    alert = "LunAllPathsDown"
    lun = {"instance": HOST, "device": "dm-3", "role": "redo"}
    tests.append({
        "name": f"{alert}: dbhost-exporter stops answering while no path of the redo LUN runs: the page stays "
                "firing, and resolves when the exporter is back with 4 paths running",
        "interval": "1m", "input_series": _paths(4), "alert_rule_test": [
            {"eval_time": f"{DOWN_AT - 1}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, lun, 4)]},
            *[{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, lun, 1)]}
              for t in during],
            {"eval_time": f"{BACK_AT + 1}m", "alertname": alert, "exp_alerts": []}]})
    tests.append({
        "name": f"{alert}: the exporter comes back and the redo LUN still has no path: still firing",
        "interval": "1m", "input_series": _paths(0), "alert_rule_test": [
            {"eval_time": f"{t}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, lun, v)]}
            for t, v in ((BACK_AT - 1, 1), (BACK_AT + 1, 4), (END, 4))]})
    return tests + freshness_tests(pack)


def flapping_in_time_tests(pack, alert: str, labels: dict, minutes: int, at: int) -> list:
    """alertfix #5 (review "alerts" finding 5): OracleExporterFlapping / HostExporterFlapping judge
    outages longer than the bridge, in time: real flapping fires at 15 s as at 60 s, isolated failed
    scrapes (each bridged) are quiet. (In monitoring.test.yml, next to the 60 s flapping case.)"""
    tl = Timeline(minutes)
    tests = []
    # alertfix #5: the same flapping scraped every 15 s fires too (judged in time, not in scrapes)
    tests.append({"name": f"{alert}: up 3 min, down 5 min, scraped every 15 s: {alert} fires",
                  "interval": "15s", "input_series": [{"series": sel("up", labels), "values": _per(15, flap, minutes)}],
                  "alert_rule_test": [
                      {"eval_time": f"{H + 5}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{at}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, labels, observed_share(flap, at, step=15))]}]})
    # alertfix #5, failure first (review "alerts" finding 5): one failed scrape every 7 minutes at a
    # 60 s interval (4-5 in 30 minutes: 85% of the scrapes) loses no data (each is bridged) and paged
    seventh = lambda t: 0 if t % 7 == 3 else 1        # noqa: E731
    tests.append({"name": f"{alert}: one isolated failed scrape every 7 minutes at 60 s (85% of the scrapes) "
                          "is bridged: quiet",
                  "interval": "1m", "input_series": [tl.gauge("up", labels, [(0, seventh)])], "alert_rule_test": [
                      {"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []} for t in (H + 40, H + 60, H + 80)]})
    tests.append({"name": f"{alert}: one failed scrape in two at 15 s is bridged: quiet",
                  "interval": "15s", "input_series": [{"series": sel("up", labels), "values": " ".join(
                      "0" if k % 2 else "1" for k in range(minutes * 4 + 1))}], "alert_rule_test": [
                      {"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []} for t in (H + 40, H + 80)]})
    return tests


def freshness_tests(pack) -> list:
    """alertfix #4 (review "alerts" finding 4): data older than the pack's reads switched every alert
    off without a word: a 5-minute scrape interval, refresh_interval_seconds 600, collector_intervals
    of wait_events at 600. MonitoringDataTooOld says so; 60 s scrapes, a 30 s refresh and the
    tablespaces collector's default 300 s (a slow view, no rate judged) stay quiet."""
    alert = "MonitoringDataTooOld"
    n = 60
    f = pack.for_min(alert, 0)
    db = {**ORA, "database": "ODS"}
    sawtooth = lambda period, step: " ".join(str((k * step) % period) for k in range(n * 60 // step + 1))  # noqa: E731
    series = [
        # refresh_interval_seconds 600: the served snapshot ages 0..600 s, then a new fetch
        {"series": _sel("oracle_snapshot_age_seconds", db), "values": sawtooth(600, 60)},
        {"series": _sel("oracle_snapshot_age_seconds", {**ORA, "database": "FRESH"}), "values": sawtooth(30, 60)},
        # collector_intervals {wait_events: 600}; tablespaces at its default 300 s
        {"series": _sel("oracle_collector_cache_age_seconds", {**db, "collector": "wait_events"}),
         "values": sawtooth(600, 60)},
        {"series": _sel("oracle_collector_cache_age_seconds", {**db, "collector": "tablespaces"}),
         "values": sawtooth(300, 60)},
    ]
    sparse = {"job": "node", "instance": "slow-host"}
    fine = {"job": "node", "instance": HOST}
    tl = Timeline(n)
    series += [
        # scrape_interval 5m: one up sample every 5 minutes
        {"series": _sel("up", sparse), "values": " ".join(["1" if k % 5 == 0 else "_" for k in range(n + 1)])},
        tl.gauge("up", fine, [(0, 1)]),
    ]
    fired = [pack.expect(alert, 0, {"database": "ODS"}, 600 - 60),
             pack.expect(alert, 1, {"database": "ODS", "collector": "wait_events"}, 600 - 60),
             pack.expect(alert, 2, {"job": "node", "instance": "slow-host"}, 3)]
    for e in fired[2:]:
        e["exp_labels"].pop("database", None)
    return [{"name": f"{alert}: refresh 600 s, wait_events read every 600 s and a 5-minute scrape interval are "
                     "too old for the pack; a 30 s refresh, tablespaces every 300 s and 60 s scrapes are not",
             "interval": "1m", "input_series": series, "alert_rule_test": [
                 {"eval_time": f"{f - 1}m", "alertname": alert, "exp_alerts": []},
                 {"eval_time": f"{n}m", "alertname": alert, "exp_alerts": fired}]}]
