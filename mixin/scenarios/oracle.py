"""oracle.test.yml: the Oracle alert rules (wait-event averages and rates, redo, latches, PGA ...)."""
from mixin.scenarios.common import (DB, every, H, HOST, length, ORA, quiet, scenario, sel, starvation_cause,
    Timeline, WAIT_CLASS, wait_event)


# ---------------------------------------------------------------- oracle wait-event averages
def avg_event_cases(pack, alert, tid, event, fire_avg, fire_rate):
    t = pack.th[tid]
    n = length(pack, alert)
    tl = Timeline(n)
    labels = {**DB, "event": event, "wait_class": WAIT_CLASS[event]}
    floor = t.floor("waits").value
    healthy = t.value * 0.25
    per_min = round(fire_rate * 60)
    above, below = t.value * 1.1, t.value * 0.9
    low_per_min = every(round(1 / (floor * 0.5) / 60)) if floor * 0.5 < 1 / 60 else floor * 0.5 * 60
    return [
        scenario(pack, f"{alert}: {fire_rate}/s at {fire_avg * 1000:g} ms fires", alert, 0,
                 wait_event(tl, event, [(0, per_min, healthy), (H, per_min, fire_avg)]), labels, fire_avg),
        scenario(pack, f"{alert}: just above the threshold ({tid}: {t.value}) fires", alert, 0,
                 wait_event(tl, event, [(0, per_min, healthy), (H, per_min, above)]), labels, above),
        quiet(f"{alert}: just below the threshold does not fire", alert,
              wait_event(tl, event, [(0, per_min, healthy), (H, per_min, below)]), n),
        quiet(f"{alert}: {floor * 0.5:g} waits/s (under the {floor:g}/s floor) at {fire_avg * 1000:g} ms does not fire",
              alert, wait_event(tl, event, [(0, low_per_min, healthy), (H, low_per_min, fire_avg)]), n),
    ]


def rate_event_cases(pack, alert, tid, events, fire, above, below, index=0, value_of=None):
    """'Eliminate' wait events: fire/above/below are (waits_per_minute or callable, avg, expected rate)."""
    n = length(pack, alert, index)
    tl = Timeline(n)

    def series(spec):
        out = []
        for ev in events:
            out += wait_event(tl, ev, [(0, 0, 0.0), (H, spec[0], spec[1])])
        return out

    labels = dict(DB) if len(events) > 1 else {**DB, "event": events[0], "wait_class": WAIT_CLASS[events[0]]}
    if value_of == "sum":
        labels = dict(DB)
    return [
        scenario(pack, f"{alert}: {fire[2]:g} waits/s fires", alert, index, series(fire), labels, fire[2] * len(events)),
        scenario(pack, f"{alert}: {above[2]:g} waits/s, just over the floor, fires", alert, index, series(above),
                 labels, above[2] * len(events)),
        quiet(f"{alert}: {below[2]:g} waits/s (under the floor) does not fire", alert, series(below), n),
    ]


def counter_rate_cases(pack, alert, tid, metric, fire, above, below):
    """Oracle statistics counters (integer per minute); fire/above/below = per-minute increments (int or callable)."""
    n = length(pack, alert)
    tl = Timeline(n)
    labels = dict(DB)

    def series(inc):
        return [tl.counter(metric, {**ORA, **DB}, [(0, 0), (H, inc)])]

    return [
        scenario(pack, f"{alert}: {fire / 60:g}/s fires", alert, 0, series(fire), labels, fire / 60),
        scenario(pack, f"{alert}: {above / 60:.3g}/s, just over the floor, fires", alert, 0, series(above), labels, above / 60),
        quiet(f"{alert}: {below[1]} does not fire", alert, series(below[0]), n),
    ]


def oracle_down_tests(pack) -> list:
    """OracleDown fires on oracle_up 0 and its page says why: summary and description quote
    the reason of oracle_last_error_info (a query in the template, which render() cannot
    evaluate: the expectation has the reason filled in); without that series it says so;
    a change of reason during the outage neither restarts `for` nor makes a second alert."""
    from mixin.rules import ORACLE_DOWN_REASON
    alert, labels = "OracleDown", {**ORA, "database": "ODS"}
    n = length(pack, alert, window=0)
    tl = Timeline(n)
    f = pack.for_min(alert)
    rule = pack.rules[alert][0]

    def expect(reason: str) -> dict:
        saved = rule["annotations"]
        rule["annotations"] = {k: v.replace(ORACLE_DOWN_REASON, reason) for k, v in saved.items()}
        try:
            return pack.expect(alert, 0, labels, 0)
        finally:
            rule["annotations"] = saved

    def case(name, series, reason, fire_at=H + f + 1):
        return {"name": name, "interval": "1m", "input_series": [tl.gauge("oracle_up", labels, [(0, 1), (H, 0)])] + series,
                "alert_rule_test": [{"eval_time": f"{H + f}m", "alertname": alert, "exp_alerts": []},
                                    {"eval_time": f"{fire_at}m", "alertname": alert, "exp_alerts": [expect(reason)]}]}

    why = {**labels, "reason": "connection refused"}
    other = {**ORA, "database": "OTHER", "reason": "logon denied"}     # another database's reason is not quoted
    timeout = {**labels, "reason": "connect timeout"}
    return [
        case("OracleDown: oracle_up 0 fires; the page quotes oracle_last_error_info's reason",
             [tl.gauge("oracle_last_error_info", why, [(0, 1)]), tl.gauge("oracle_last_error_info", other, [(0, 1)])],
             "connection refused"),
        case("OracleDown: the reason changes during the outage: one alert, `for` kept, the latest reason",
             [{"series": sel("oracle_last_error_info", timeout), "values": " ".join(["1"] * (H + 2) + ["stale"])},
              {"series": sel("oracle_last_error_info", why),
               "values": " ".join(["_"] * (H + 2) + ["1"] * (n - H - 1))}], "connection refused"),
        case("OracleDown: without oracle_last_error_info the page says the reason is unknown", [],
             "reason unknown (no oracle_last_error_info)"),
        quiet(f"{alert}: one failed scrape in two does not fire", alert,
              [tl.gauge("oracle_up", labels, [(0, lambda t: t % 2)])], n),
    ]


def oracle_tests(pack) -> list:
    th = pack.th
    tests = []
    # --- monitoring
    tests += oracle_down_tests(pack)
    for alert, metric, labels in (
            ("OracleExporterDown", "up", {"job": "oracle", "instance": "oracle-exporter:19161"}),
            ("DbhostExporterDown", "up", {"job": "dbhost", "instance": HOST}),
            ("NodeExporterDown", "up", {"job": "node", "instance": HOST})):
        n = length(pack, alert, window=0)
        tl = Timeline(n)
        tests.append(scenario(pack, f"{alert}: {metric} 0 fires", alert, 0,
                              [tl.gauge(metric, labels, [(0, 1), (H, 0)])], labels, 0, window=0))
        tests.append(quiet(f"{alert}: one failed scrape in two does not fire", alert,
                           [tl.gauge(metric, labels, [(0, lambda t: t % 2)])], n))
    alert = "OracleScrapeErrors"
    n = length(pack, alert, window=15)
    tl = Timeline(n)
    lab = {**ORA, "database": "ODS", "collector": "redo"}
    tests.append(scenario(pack, "OracleScrapeErrors: collector failing every scrape fires", alert, 0,
                          [tl.gauge("oracle_collector_success", lab, [(0, 1), (H, 0)])], lab, 0, window=0))
    tests.append(quiet("OracleScrapeErrors: collector failing every other scrape does not fire", alert,
                       [tl.gauge("oracle_collector_success", lab, [(0, lambda t: t % 2)])], n))
    floor = th["ops_scrape_errors"].floor("errors").value
    lab2 = {**ORA, "database": "ODS", "collector": "wait_events"}
    tests.append(scenario(pack, "OracleScrapeErrors: 3 errors/minute fires", alert, 1,
                          [tl.counter("oracle_scrape_errors_total", lab2, [(0, 0), (H, 3)])], lab2, 0.05, window=15))
    tests.append(quiet(f"OracleScrapeErrors: one error every 2 minutes ({1 / 120:.3g}/s, floor {floor:g}/s) does not fire",
                       alert, [tl.counter("oracle_scrape_errors_total", lab2, [(0, 0), (H, every(2))])], n))
    alert = "DbhostCollectorFailed"
    n = length(pack, alert, window=0)
    tl = Timeline(n)
    lab = {"job": "dbhost", "instance": HOST, "collector": "zfs"}
    tests.append(scenario(pack, "DbhostCollectorFailed: collector failing fires", alert, 0,
                          [tl.gauge("dbhost_collector_success", lab, [(0, 1), (H, 0)])], lab, 0, window=0))
    tests.append(quiet("DbhostCollectorFailed: collector healthy does not fire", alert,
                       [tl.gauge("dbhost_collector_success", lab, [(0, 1)])], n))

    # --- averages of wait events
    tests += avg_event_cases(pack, "OracleLogFileParallelWriteSlow", "R1", "log file parallel write", 0.0118, 74)
    tests += avg_event_cases(pack, "OracleLogFileSyncSlow", "R2", "log file sync", 0.02645, 72)
    tests += avg_event_cases(pack, "OracleDbFileSequentialReadSlow", "I2", "db file sequential read", 0.025, 470)
    # I2: 10 ms, "not bad" for spinning disks, must not fire
    alert = "OracleDbFileSequentialReadSlow"
    n = length(pack, alert)
    tests.append(quiet("OracleDbFileSequentialReadSlow: 470/s at 10 ms (I2: not a problem) does not fire", alert,
                       wait_event(Timeline(n), "db file sequential read", [(0, 470 * 60, 0.010)]), n))

    # --- eliminate-type wait events (rates)
    tests += rate_event_cases(pack, "OracleLogBufferSpaceWaits", "R3", ["log buffer space"],
                              (210, 0.0286, 3.5), (1, 0.0286, 1 / 60), (every(3), 0.0286, 1 / 180))
    tests.append(quiet("OracleLogBufferSpaceWaits: 3 waits per hour does not fire", "OracleLogBufferSpaceWaits",
                       wait_event(Timeline(90), "log buffer space", [(0, every(20), 0.03)]), 90))
    tests += rate_event_cases(pack, "OracleCheckpointIncomplete", "R4", ["log file switch (checkpoint incomplete)"],
                              (30, 0.00038, 0.5), (1, 0.00038, 1 / 60), (every(3), 0.00038, 1 / 180))
    tests += rate_event_cases(pack, "OracleRedoAllocationLatchWaits", "R5", ["latch: redo allocation", "latch: redo writing"],
                              (6, 0.0009, 0.1), (2, 0.0009, 2 / 60), (every(8), 0.0009, 1 / 480), value_of="sum")
    tests += rate_event_cases(pack, "OracleLogFileSwitchCompletionWaits", "R6", ["log file switch completion"],
                              (30, 0.02082, 0.5), (7, 0.02082, 7 / 60), (5, 0.02082, 5 / 60))
    tests += rate_event_cases(pack, "OracleArchivingBehind", "R15_archiving_needed", ["log file switch (archiving needed)"],
                              (12, 0.5, 0.2), (1, 0.5, 1 / 60), (every(3), 0.5, 1 / 180), index=1, value_of="sum")

    # a 3-minute burst of 'archiving needed' waits that resolves by itself: the 5m rate stays over
    # the floor for ~7 minutes, which a 5m `for` would page on; the critical alert must not
    alert = "OracleArchivingBehind"
    f = pack.for_min(alert, 1)
    n = H + f + 15
    burst = wait_event(Timeline(n), "log file switch (archiving needed)",
                       [(0, 0, 0.0), (H, 200, 0.5), (H + 3, 0, 0.0)])
    tests.append({"name": "OracleArchivingBehind: a 3-minute burst of archiving-needed waits does not page",
                  "interval": "1m", "input_series": burst,
                  "alert_rule_test": [{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []}
                                      for t in range(H, n + 1)]})

    # --- statistics counters
    tests += counter_rate_cases(pack, "OracleRedoBufferAllocationRetries", "R10", "oracle_redo_buffer_allocation_retries_total",
                                228, 9, (5, "5 retries/minute (0.0833/s, under the 0.1/s floor)"))
    tests += counter_rate_cases(pack, "OracleRedoLogSpaceRequests", "R11", "oracle_redo_log_space_requests_total",
                                60, 4, (2, "2 requests/minute (0.033/s: ~10 per switch at 12 switches/hour)"))

    # --- R13 commit CPU starvation
    alert = "OracleCommitCpuStarvation"
    n = length(pack, alert)
    tl = Timeline(n)

    def pair(sync_avg, lfpw_avg, sync_rate=72, lfpw_rate=74):
        s = round(sync_rate * 60)
        return (wait_event(tl, "log file sync", [(0, s, 0.002), (H, s, sync_avg)])
                + wait_event(tl, "log file parallel write", [(0, lfpw_rate * 60, 0.001), (H, lfpw_rate * 60, lfpw_avg)]))
    tests.append(scenario(pack, "OracleCommitCpuStarvation: 26.45 ms sync vs 11.8 ms write fires", alert, 0,
                          pair(0.02645, 0.0118), dict(DB), 0.02645 - 0.0118, queries=starvation_cause(pack, "none")))
    tests.append(scenario(pack, "OracleCommitCpuStarvation: 7.1 ms vs 3.5 ms (2.03x, 3.6 ms gap) fires", alert, 0,
                          pair(0.0071, 0.0035), dict(DB), 0.0071 - 0.0035, queries=starvation_cause(pack, "none")))
    tests.append(quiet("OracleCommitCpuStarvation: 2.13 ms vs 0.55 ms (3.9x but 1.58 ms gap) does not fire", alert,
                       pair(0.00213, 0.00055, 519, 845), n))
    tests.append(quiet("OracleCommitCpuStarvation: 25 ms vs 15 ms (10 ms gap but 1.67x) does not fire", alert,
                       pair(0.025, 0.015), n))
    tests.append(quiet("OracleCommitCpuStarvation: 26.45 ms vs 11.8 ms at 0.5 commits/s does not fire", alert,
                       pair(0.02645, 0.0118, sync_rate=0.5), n))

    # --- R13 with the cause measured: run delay per dispatch of LGWR / the foregrounds (issue 14.1).
    # Failure first: the host measure must be joined to the right database (a Data Guard pair
    # shares the SID ODS1 on two hosts), a small run delay names no cause, and a starved LGWR
    # without R13's gap is not this alert.
    alert = "OracleCommitCpuStarvation"
    n = length(pack, alert)
    tl = Timeline(n)
    rd = pack.th["R13_run_delay"].value

    def info(host, database="ODS", sid="ODS1"):
        return tl.gauge("oracle_instance_info", {**ORA, "database": database, "inst_id": "1", "instance_name": sid,
                                                 "host_name": f"{host}.example.com", "version": "19.0.0.0.0"}, [(0, 1)])

    def sched(role, per_dispatch, host=HOST, dispatches=500):
        base = {"job": "dbhost", "instance": f"{host}:19162", "sid": "ODS1", "role": role}
        return [tl.counter("dbhost_process_timeslices_total", base, [(0, dispatches * 60)]),
                tl.counter("dbhost_process_run_delay_seconds_total", base,
                           [(0, dispatches * 60 * 0.00002), (H, dispatches * 60 * per_dispatch)], start=10.0)]
    gap = pair(0.02645, 0.0118)
    healthy_gap = pair(0.00213, 0.00055, 519, 845)
    tests.append(quiet("OracleCommitCpuStarvation: LGWR waiting 2 ms per dispatch but commits as fast as writes "
                       "(no R13 gap) does not fire", alert,
                       healthy_gap + [info("dbhost1")] + sched("lgwr", 0.002), n))
    two_hosts = gap + [info("dbhost1"), info("dbhost2", database="ODSSB")]
    only = {"eval_time": f"{n}m", "alertname": alert}
    tests.append({"name": "OracleCommitCpuStarvation: the standby host's starved LGWR (same SID ODS1) is not "
                          "the primary's cause: the unexplained rule fires",
                  "interval": "1m",
                  "input_series": two_hosts + sched("lgwr", 0.00002) + sched("lgwr", 0.004, host="dbhost2"),
                  "alert_rule_test": [{**only, "exp_alerts": [pack.expect(alert, 0, dict(DB), 0.02645 - 0.0118,
                                                                          starvation_cause(pack, "none"))]}]})
    tests.append({"name": "OracleCommitCpuStarvation: 0.1 ms run delay per LGWR dispatch names no cause",
                  "interval": "1m", "input_series": gap + [info("dbhost1")] + sched("lgwr", 0.0001),
                  "alert_rule_test": [{**only, "exp_alerts": [pack.expect(alert, 0, dict(DB), 0.02645 - 0.0118,
                                                                          starvation_cause(pack, "none"))]}]})
    tests.append(scenario(pack, f"OracleCommitCpuStarvation: LGWR waits 2 ms per dispatch for a CPU (over "
                          f"{rd * 1000:g} ms): the text names cause lgwr_cpu_wait", alert, 0,
                          gap + [info("dbhost1")] + sched("lgwr", 0.002) + sched("foreground", 0.0001),
                          dict(DB), 0.02645 - 0.0118, queries=starvation_cause(pack, "lgwr", 0.002)))
    tests.append(scenario(pack, "OracleCommitCpuStarvation: LG00 (an LGWR worker) starved on the right host of a "
                          "shared SID: the text names cause lgwr_cpu_wait", alert, 0,
                          two_hosts + sched("lg00", 0.003) + sched("lgwr", 0.00002, host="dbhost2"), dict(DB),
                          0.02645 - 0.0118, queries=starvation_cause(pack, "lgwr", 0.003)))
    tests.append(scenario(pack, "OracleCommitCpuStarvation: the foregrounds wait 1 ms per dispatch: the text names "
                          "cause session_cpu_wait", alert, 0,
                          gap + [info("dbhost1")] + sched("lgwr", 0.00002) + sched("foreground", 0.001, dispatches=5000),
                          dict(DB), 0.02645 - 0.0118, queries=starvation_cause(pack, "session", 0.001)))
    tests += starvation_identity_tests(pack)

    # --- R14 LGWR involuntary share
    alert = "OracleLgwrInvoluntaryContextSwitches"
    n = length(pack, alert)
    tl = Timeline(n)

    def cs(vol, invol, role="lgwr"):
        base = {"job": "dbhost", "instance": HOST, "sid": "ODS1", "role": role}
        return [tl.counter("dbhost_process_context_switches_total", {**base, "kind": "voluntary"}, [(0, vol + invol), (H, vol)]),
                tl.counter("dbhost_process_context_switches_total", {**base, "kind": "involuntary"}, [(0, 0), (H, invol)])]
    lab = {"instance": HOST, "sid": "ODS1", "role": "lgwr"}
    tests.append(scenario(pack, "OracleLgwrInvoluntaryContextSwitches: 30% involuntary (before) fires", alert, 0,
                          cs(6216, 2664) + cs(60000, 30000, "foreground"), lab, 0.3))
    tests.append(scenario(pack, "OracleLgwrInvoluntaryContextSwitches: 1.1% fires", alert, 0, cs(989, 11), lab, 0.011))
    tests.append(quiet("OracleLgwrInvoluntaryContextSwitches: 0.9% does not fire", alert, cs(991, 9), n))
    tests.append(quiet("OracleLgwrInvoluntaryContextSwitches: 30% of 0.5 switches/s does not fire", alert, cs(21, 9), n))
    tests.append(quiet("OracleLgwrInvoluntaryContextSwitches: 30% involuntary foreground switches only do not fire", alert,
                       cs(1000, 0) + cs(6216, 2664, "foreground"), n))

    # --- R15 log switch frequency (sequence numbers step by whole switches)
    alert = "OracleLogSwitchesTooFrequent"
    n = length(pack, alert, window=60)
    tl = Timeline(n)

    mb = 1e6

    def switches(k, redo_mb_s, log_mb=500):
        """A switch every k minutes with redo_mb_s MB/s of redo into log_mb MB online logs
        (healthy phase: every 7 minutes, 1 MB/s)."""
        return [tl.counter("oracle_redo_log_switches_total", {**ORA, **DB}, [(0, every(7)), (H, every(k))], start=4711),
                tl.counter("oracle_redo_size_bytes_total", {**ORA, **DB}, [(0, 1 * mb * 60), (H, redo_mb_s * mb * 60)]),
                *[tl.gauge("oracle_redo_log_group_size_bytes", {**ORA, **DB, "thread": "1", "group": str(g)},
                           [(0, log_mb * mb)]) for g in (1, 2, 3)]]
    tests.append(scenario(pack, "OracleLogSwitchesTooFrequent: a switch every minute (60/h) at 9.45 MB/s into 500 MB logs fires",
                          alert, 0, switches(1, 9.45), dict(DB), 60, window=60))
    tests.append(scenario(pack, "OracleLogSwitchesTooFrequent: every 4 minutes (15/h) at 2.5 MB/s into 500 MB logs fires", alert, 0,
                          switches(4, 2.5), dict(DB), 15, window=60))
    tests.append(quiet("OracleLogSwitchesTooFrequent: every 5 minutes (12/h, at the threshold) does not fire", alert,
                       switches(5, 9.45), n))
    tests.append(quiet("OracleLogSwitchesTooFrequent: every 7 minutes (after) does not fire", alert, switches(7, 10.1, 8000), n))
    tests.append(quiet("OracleLogSwitchesTooFrequent: idle Data Guard primary, ARCHIVE_LAG_TARGET forces a switch every "
                       "2 minutes (30/h) with 0.02 MB/s of redo: does not fire", alert, switches(2, 0.02), n))

    # --- R15 archiving behind (log groups)
    alert = "OracleArchivingBehind"
    n = length(pack, alert, window=0)
    tl = Timeline(n)

    def groups(archived: dict, current: int, inst_ids=("1",)):
        """GV$LOG as the exporter exposes it: per group ARCHIVED (1 = YES) and STATUS as a 0/1 enum.
        Healthy phase: group 4 CURRENT, all others archived and INACTIVE. Every instance of a RAC
        database sees every thread's groups, so each inst_id repeats the same rows."""
        out = []
        for inst in inst_ids:
            for g, arch in archived.items():
                base = {**ORA, "database": "ODS", "inst_id": inst, "thread": "1", "group": str(g)}
                out.append(tl.gauge("oracle_redo_log_group_archived", base, [(0, 0 if g == 4 else 1), (H, arch)]))
                for status in ("CURRENT", "ACTIVE", "INACTIVE"):
                    before = 1 if (status == "CURRENT") == (g == 4) and status != "ACTIVE" else 0
                    after = 1 if (status == "CURRENT") == (g == current) and status != "ACTIVE" else 0
                    out.append(tl.gauge("oracle_redo_log_group_status", {**base, "status": status},
                                        [(0, before), (H, after)]))
        return out
    def log_mode(mode):
        return [tl.gauge("oracle_database_info", {**ORA, "database": "ODS", "dbid": "1234", "db_name": "ODS",
                                                  "db_unique_name": "ODS", "database_role": "PRIMARY",
                                                  "log_mode": mode, "open_mode": "READ WRITE"}, [(0, 1)])]
    tests.append(scenario(pack, "OracleArchivingBehind: 2 of 3 non-current groups unarchived fires (RAC: both instances report)",
                          alert, 0, groups({1: 0, 2: 0, 3: 1, 4: 0}, current=4, inst_ids=("1", "2")) + log_mode("ARCHIVELOG"),
                          {"database": "ODS", "thread": "1"}, 2, window=0))
    tests.append(quiet("OracleArchivingBehind: only the group just switched from is unarchived: no alert", alert,
                       groups({1: 1, 2: 1, 3: 0, 4: 0}, current=4) + log_mode("ARCHIVELOG"), n))
    tests.append(quiet("OracleArchivingBehind: NOARCHIVELOG database, no group is ever archived: no alert", alert,
                       groups({1: 0, 2: 0, 3: 0, 4: 0}, current=4) + log_mode("NOARCHIVELOG"), n))

    # --- I1 latch hit ratio
    alert = "OracleLatchHitRatioLow"
    n = length(pack, "OracleLatchHitRatioLow", 0)
    tl = Timeline(n)

    def latch(gets, misses):
        base = {**ORA, **DB, "latch": "all"}
        return [tl.counter("oracle_latch_gets_total", base, [(0, gets), (H, gets)]),
                tl.counter("oracle_latch_misses_total", base, [(0, 0), (H, misses)])]
    tests.append(scenario(pack, "OracleLatchHitRatioLow: 99% is info", alert, 0, latch(60000, 600), dict(DB), 0.99))
    # critical after its 15m, the warning after its 30m: both fire at H + 30m + 10m
    tests.append({"name": "OracleLatchHitRatioLow: 97% warns (red flag, after 15m) and is also info (after 30m)", "interval": "1m",
                  "input_series": latch(60000, 1800), "alert_rule_test": [
                      {"eval_time": f"{H + pack.for_min(alert, 1)}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + pack.for_min(alert, 1) + 10}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 1, dict(DB), 0.97)]},
                      {"eval_time": f"{H + pack.for_min(alert, 0) + 10}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, dict(DB), 0.97), pack.expect(alert, 1, dict(DB), 0.97)]}]})
    tests.append(scenario(pack, "OracleLatchHitRatioLow: 98.37% (I1's own red-flag example) warns", alert, 1,
                          latch(60000, 978), dict(DB), 1 - 978 / 60000))
    tests.append(quiet("OracleLatchHitRatioLow: 99.6% does not fire", alert, latch(60000, 240), n))
    tests.append(quiet("OracleLatchHitRatioLow: 90% of 0.5 gets/s does not fire", alert, latch(30, 3), n))

    # --- M4 PGA
    alert = "OraclePgaOverAllocation"
    n = length(pack, alert)
    tl = Timeline(n)
    gib = 1024 ** 3

    def pga(alloc, target):
        return [tl.gauge("oracle_pga_allocated_bytes", {**ORA, **DB}, [(0, 1.5 * gib), (H, alloc)]),
                tl.gauge("oracle_pga_target_bytes", {**ORA, **DB}, [(0, target)])]
    tests.append(scenario(pack, "OraclePgaOverAllocation: allocated 110% of target fires", alert, 0,
                          pga(2.2 * gib, 2 * gib), dict(DB), 1.1))
    tests.append(quiet("OraclePgaOverAllocation: allocated 95% of target does not fire", alert, pga(1.9 * gib, 2 * gib), n))
    tests.append(quiet("OraclePgaOverAllocation: no pga_aggregate_target (0) does not fire", alert, pga(2.2 * gib, 0), n))
    n = length(pack, alert, 1, window=15)
    tl = Timeline(n)
    tests.append(scenario(pack, "OraclePgaOverAllocation: over-allocation count +1 fires at once", alert, 1,
                          [tl.counter("oracle_pga_over_allocation_count_total", {**ORA, **DB}, [(0, 0), (H, lambda t: 1 if t == H + 1 else 0)])],
                          dict(DB), 1, window=0))
    tests.append(quiet("OraclePgaOverAllocation: constant over-allocation count does not fire", alert,
                       [tl.counter("oracle_pga_over_allocation_count_total", {**ORA, **DB}, [(0, 0)], start=7)], n))
    return tests


def starvation_identity_tests(pack) -> list:
    """rev23 #9, failure first: LGWR's run delay flipping 0.35 / 0.65 ms per dispatch every 10 minutes
    (around R13_run_delay) under a steady R13 gap fires after `for` (the cause, a label, restarted it
    at every flip). Quiet counterpart: the same flipping delay with no R13 gap."""
    alert, tl = "OracleCommitCpuStarvation", Timeline(30)
    def pair(sync_avg, lfpw_avg):
        return (wait_event(tl, "log file sync", [(0, 4320, sync_avg)])
                + wait_event(tl, "log file parallel write", [(0, 4440, lfpw_avg)]))
    info = tl.gauge("oracle_instance_info", {**ORA, **DB, "instance_name": "ODS1",
                                             "host_name": f"{HOST}.example.com", "version": "19.0.0.0.0"}, [(0, 1)])
    base = {"job": "dbhost", "instance": f"{HOST}:19162", "sid": "ODS1", "role": "lgwr"}
    flip = [tl.counter("dbhost_process_timeslices_total", base, [(0, 1000)]),
            tl.counter("dbhost_process_run_delay_seconds_total", base,
                       [(0, lambda t: 0.35 if (t // 10) % 2 == 0 else 0.65)], start=10.0)]
    return [{"name": "OracleCommitCpuStarvation: LGWR's run delay flipping 0.35/0.65 ms every 10 minutes under a "
                     "steady gap fires once, the cause in the text (rev23 #9)",
             "interval": "1m", "input_series": pair(0.02645, 0.0118) + [info] + flip,
             "alert_rule_test": [{"eval_time": "19m", "alertname": alert, "exp_alerts": [
                 pack.expect(alert, 0, dict(DB), 0.02645 - 0.0118, starvation_cause(pack, "lgwr", 0.00065))]}]},
            quiet("OracleCommitCpuStarvation: the same flipping run delay without the R13 gap does not fire", alert,
                  pair(0.00213, 0.00055) + [info] + flip, 19)]
