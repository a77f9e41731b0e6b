"""casestudy.test.yml: the field-notes section 1 "before" and "after" profiles."""
from mixin import records as R
from mixin.scenarios.common import DB, every, HOST, ORA, sel, Timeline, wait_event


# ---------------------------------------------------------------- case study (field notes section 1)
BEFORE = {
    "events": {  # per second, average seconds
        "log file parallel write": (74, 0.0118), "log file sync": (72, 0.02645),
        "log buffer space": (3.5, 0.0286), "log file switch (checkpoint incomplete)": (0.5, 0.00038),
        "log file switch completion": (0.5, 0.02082), "log file sequential read": (10, 0.00702),
    },
    "stats": {"oracle_user_commits_total": 72, "oracle_redo_entries_total": 13326,
              "oracle_redo_size_bytes_total": 9.45e6, "oracle_redo_synch_writes_total": 72,
              "oracle_redo_writes_total": 74, "oracle_redo_buffer_allocation_retries_total": 3.8,
              "oracle_redo_log_space_requests_total": 1},
    "switch_every_min": 1,
    "log_bytes": 500e6,      # R15: 500 MB logs switched once a minute
    "lgwr": (6216, 2664),    # voluntary, involuntary switches per minute: 30% involuntary
}
AFTER = {
    "events": {
        "log file parallel write": (845, 0.00055), "log file sync": (519, 0.00213),
        "latch: redo allocation": (every(8), 0.0009), "log file switch completion": (every(50), 0.0315),
        "log file sequential read": (10.5, 0.01662),
    },
    "stats": {"oracle_user_commits_total": 520, "oracle_redo_entries_total": 14677,
              "oracle_redo_size_bytes_total": 10.1e6, "oracle_redo_synch_writes_total": 520,
              "oracle_redo_writes_total": 845, "oracle_redo_buffer_allocation_retries_total": 0,
              "oracle_redo_log_space_requests_total": every(7)},
    "switch_every_min": 7,
    "log_bytes": 8e9,        # R15: 8 GB logs, a switch every ~7 minutes
    "lgwr": (101949, 51),    # per minute: 0.05% involuntary
}
FINDINGS = {  # alert -> (labels beyond database/inst_id, value as field notes give it, rendered value)
    "OracleLogFileParallelWriteSlow": ({"event": "log file parallel write", "wait_class": "System I/O"}, 0.0118, "11.8ms"),
    "OracleLogFileSyncSlow": ({"event": "log file sync", "wait_class": "Commit"}, 0.02645, "26.45ms"),
    "OracleLogBufferSpaceWaits": ({"event": "log buffer space", "wait_class": "Configuration"}, 3.5, "3.5"),
    "OracleCheckpointIncomplete": ({"event": "log file switch (checkpoint incomplete)", "wait_class": "Configuration"}, 0.5, "0.5"),
    "OracleLogFileSwitchCompletionWaits": ({"event": "log file switch completion", "wait_class": "Configuration"}, 0.5, "0.5"),
    "OracleRedoBufferAllocationRetries": ({}, 3.8, "3.8"),
    "OracleRedoLogSpaceRequests": ({}, 1, "1"),
    "OracleCommitCpuStarvation": ({}, 0.02645 - 0.0118, "14.65ms"),
    "OracleLgwrInvoluntaryContextSwitches": (None, 0.3, "30%"),
    "OracleLogSwitchesTooFrequent": ({}, 60, "60"),
}
QUIET_TOO = ["OracleRedoAllocationLatchWaits", "OracleLatchHitRatioLow", "OracleDbFileSequentialReadSlow",
             "OracleArchivingBehind", "OraclePgaOverAllocation", "OracleDown"]


def profile_series(tl, prof):
    out = []
    for ev, (rate, avg) in prof["events"].items():
        per_min = rate if callable(rate) else round(rate * 60)
        out += wait_event(tl, ev, [(0, per_min, avg)])
    for metric, rate in prof["stats"].items():
        out.append(tl.counter(metric, {**ORA, **DB}, [(0, rate if callable(rate) else rate * 60)]))
    out.append(tl.counter("oracle_redo_log_switches_total", {**ORA, **DB}, [(0, every(prof["switch_every_min"]))], start=4711))
    out += [tl.gauge("oracle_redo_log_group_size_bytes", {**ORA, **DB, "thread": "1", "group": str(g)}, [(0, prof["log_bytes"])])
            for g in (1, 2, 3)]
    vol, invol = prof["lgwr"]
    base = {"job": "dbhost", "instance": HOST, "sid": "ODS1", "role": "lgwr"}
    out.append(tl.counter("dbhost_process_context_switches_total", {**base, "kind": "voluntary"}, [(0, vol)]))
    out.append(tl.counter("dbhost_process_context_switches_total", {**base, "kind": "involuntary"}, [(0, invol)]))
    out.append(tl.gauge("oracle_up", {**ORA, "database": "ODS"}, [(0, 1)]))
    return out


def casestudy_tests(pack) -> list:
    minutes = 90
    at = 80     # the 1h log-switch window and every 5m window hold only profile data; every `for` has elapsed
    tests = []
    checks = []
    for alert, (extra, value, shown) in FINDINGS.items():
        labels = {"instance": HOST, "sid": "ODS1", "role": "lgwr"} if extra is None else {**DB, **extra}
        exp = pack.expect(alert, 0, labels, value, _queries(pack, alert))
        rule_desc = pack.rules[alert][0]["annotations"]["description"]
        if shown not in exp["exp_annotations"]["description"] and "$value" in rule_desc:
            raise AssertionError(f"{alert}: expected rendered value {shown!r} not in {exp['exp_annotations']['description']!r}")
        checks.append({"eval_time": f"{at}m", "alertname": alert, "exp_alerts": [exp]})
    for alert in QUIET_TOO:
        checks.append({"eval_time": f"{at}m", "alertname": alert, "exp_alerts": []})
    tests.append({"name": "case study BEFORE profile raises R1 R2 R3 R4 R6 R10 R11 R13 R14 R15", "interval": "1m",
                  "input_series": profile_series(Timeline(minutes), BEFORE), "alert_rule_test": checks})
    quiet_checks = [{"eval_time": f"{at}m", "alertname": a, "exp_alerts": []} for a in list(FINDINGS) + QUIET_TOO]
    tests.append({"name": "case study AFTER profile raises nothing", "interval": "1m",
                  "input_series": profile_series(Timeline(minutes), AFTER), "alert_rule_test": quiet_checks})
    # recording rules on the profiles: exact values the dashboards show
    tl = Timeline(minutes)
    rec = {"name": "case study AFTER profile: recording rules", "interval": "1m",
           "input_series": profile_series(tl, AFTER),
           "promql_expr_test": [
               {"expr": R.WAIT_AVG + '{event="log file parallel write"}',
                "eval_time": f"{at}m", "exp_samples": [{"labels": sel(R.WAIT_AVG,
                                                                     pack.target("oracle", {**DB, "event": "log file parallel write", "wait_class": "System I/O"})),
                                                        "value": 0.00055}]},
               {"expr": R.USER_COMMITS, "eval_time": f"{at}m",
                "exp_samples": [{"labels": sel(R.USER_COMMITS, pack.target("oracle", DB)), "value": 520}]},
               {"expr": R.REDO_SIZE, "eval_time": f"{at}m",
                "exp_samples": [{"labels": sel(R.REDO_SIZE, pack.target("oracle", DB)), "value": 10.1e6}]},
               {"expr": R.REDO_WRITES, "eval_time": f"{at}m",
                "exp_samples": [{"labels": sel(R.REDO_WRITES, pack.target("oracle", DB)), "value": 845}]},
               # a switch every 7 minutes: at 80m the window [20m, 80m] holds the switches at 21, 28, ..., 77 -> 9
               {"expr": R.LOG_SWITCHES_1H, "eval_time": f"{at}m",
                "exp_samples": [{"labels": sel(R.LOG_SWITCHES_1H, pack.target("oracle", DB)), "value": 9}]},
               {"expr": R.LOG_SWITCH_INTERVAL, "eval_time": f"{at}m",
                "exp_samples": [{"labels": sel(R.LOG_SWITCH_INTERVAL, pack.target("oracle", DB)), "value": 400}]},
               {"expr": R.PROC_INVOLUNTARY_SHARE, "eval_time": f"{at}m",
                "exp_samples": [{"labels": sel(R.PROC_INVOLUNTARY_SHARE,
                                               pack.target("dbhost", {"instance": HOST, "role": "lgwr", "sid": "ODS1"})), "value": 0.0005}]},
           ]}
    tests.append(rec)
    return tests


def _queries(pack, alert):
    """The case study has no oracle_instance_info, so no measured cause (rev23 #9: read by the text)."""
    if alert != "OracleCommitCpuStarvation":
        return None
    from mixin.scenarios.common import starvation_cause
    return starvation_cause(pack, "none")
