"""promtool rule-test scenarios, generated from the thresholds.

Every alert rule gets:
  * a firing case: healthy for H minutes, then past the threshold; it must still be
    pending at H + for (cannot have fired yet) and firing, with its exact labels and
    annotations (the measured value rendered), once the windows hold only bad data;
  * a just-below case (the threshold read from thresholds.yaml, crossed by 10%) that
    never fires, and where the threshold has a noise floor, a low-traffic case past
    the threshold but under the floor that never fires.
casestudy.test.yml replays the field-notes section 1 "before" and "after" profiles.

Input series are built the way the exporters expose them: counters that only grow
(integer counts where Oracle or the kernel count events, seconds for times), gauges
sampled every minute, the contract's labels. Expected annotations are rendered by a
small renderer of the Prometheus template subset the rules use (go_value below
follows Go's humanizeDuration / humanizePercentage / printf); promtool, the real
template engine, checks them.
"""
import math
import re

from mixin import records as R

H = 5                  # minutes of healthy data before a scenario turns bad
ORA = {"job": "oracle", "instance": "oracle-exporter:19161"}
DB = {"database": "ODS", "inst_id": "1"}
HOST = "dbhost1"
COUNTER_START = 1000.0

WAIT_CLASS = {
    "log file parallel write": "System I/O",
    "log file sync": "Commit",
    "log buffer space": "Configuration",
    "log file switch (checkpoint incomplete)": "Configuration",
    "log file switch completion": "Configuration",
    "log file switch (archiving needed)": "Configuration",
    "latch: redo allocation": "Other",
    "latch: redo writing": "Configuration",
    "db file sequential read": "User I/O",
    "log file sequential read": "System I/O",
}


# ---------------------------------------------------------------- rendering helpers
def go_g(v: float, prec: int) -> str:
    """Go's %.<prec>g (same as C/Python for finite values)."""
    return "%.*g" % (prec, v)


def go_value(v: float, pipe: str | None) -> str:
    if pipe is None:
        if float(v).is_integer() and abs(v) < 1e21:
            return str(int(v))
        return repr(float(v))
    if pipe == "humanizeDuration":
        if v == 0:
            return "0s"
        if abs(v) >= 1:
            s = int(v)
            sec, mins, hours, days = s % 60, (s // 60) % 60, (s // 3600) % 24, s // 86400
            if days:
                return f"{days}d {hours}h {mins}m {sec}s"
            if hours:
                return f"{hours}h {mins}m {sec}s"
            if mins:
                return f"{mins}m {sec}s"
            return go_g(v, 4) + "s"
        prefix = ""
        for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
            if abs(v) >= 1:
                break
            prefix = p
            v *= 1000
        return go_g(v, 4) + prefix + "s"
    if pipe == "humanizePercentage":
        return go_g(v * 100, 4) + "%"
    m = re.fullmatch(r'printf "%\.(\d+)([gf])"', pipe)
    if m:
        return ("%." + m.group(1) + m.group(2)) % v
    raise ValueError(f"unsupported template pipeline {pipe!r}")


_TPL = re.compile(r"\{\{\s*(\$labels\.([a-z_]+)|\$value(?:\s*\|\s*([^}]+?))?)\s*\}\}")


def render(text: str, labels: dict, value: float) -> str:
    def repl(m):
        if m.group(2):
            return labels[m.group(2)]
        return go_value(value, m.group(3))
    out = _TPL.sub(repl, text)
    if "{{" in out:
        raise ValueError(f"unrendered template construct in {text!r}")
    return out


def source_kind(expr: str) -> str:
    """Which exporter the first series an expression reads comes from (its labels are the
    alert's): oracle, dbhost or node, from the metric name (recorded series: its middle part)."""
    for name in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr):
        if name.count(":") == 2 and name.startswith("database"):
            return "oracle"      # recorded per Oracle database (host measures joined to it too)
        if name.count(":") == 2 and name.startswith("instance:oracle_"):
            return "dbhost"      # Oracle measures summed per host (by_host)
        metric = name.split(":")[1] if name.count(":") == 2 else name
        for kind in ("oracle", "dbhost", "node"):
            if metric.startswith(kind + "_"):
                return kind
    return "none"


def sel(name: str, labels: dict) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def num(v: float) -> str:
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


# ---------------------------------------------------------------- series builders
class Timeline:
    """Per-minute values for `minutes` minutes (minutes+1 samples, t = 0..minutes)."""

    def __init__(self, minutes: int):
        self.minutes = minutes

    def steps(self, phases):
        """phases: [(from_minute, per_minute_value), ...] -> list of per-minute values for t=1..minutes."""
        out = []
        for t in range(1, self.minutes + 1):
            cur = None
            for start, val in phases:
                if t > start:
                    cur = val
            out.append(cur(t) if callable(cur) else cur)
        return out

    def counter(self, name, labels, phases, start=COUNTER_START):
        vals, acc = [start], start
        for inc in self.steps(phases):
            acc += inc
            vals.append(acc)
        return {"series": sel(name, labels), "values": " ".join(num(v) for v in vals)}

    def gauge(self, name, labels, phases):
        first = phases[0][1]
        vals = [first(0) if callable(first) else first] + self.steps(phases)
        return {"series": sel(name, labels), "values": " ".join(num(v) for v in vals)}


def every(k: int, count: float = 1):
    """Per-minute increment: `count` events every k-th minute (integer counters)."""
    return lambda t: count if t % k == 0 else 0


def rate_phases(rate_before, rate_after, at=H):
    return [(0, rate_before * 60), (at, rate_after * 60)]


def wait_event(tl: Timeline, event, phases, db=None):
    """phases: [(from_minute, waits_per_minute, avg_wait_seconds)]. Waits are integers per minute."""
    labels = {**ORA, **(db or DB), "event": event, "wait_class": WAIT_CLASS[event]}
    w = [(s, n) for s, n, _ in phases]
    tm = [(s, (lambda n, a: (lambda t: (n(t) if callable(n) else n) * a))(n, a)) for s, n, a in phases]
    return [tl.counter("oracle_wait_event_waits_total", labels, w),
            tl.counter("oracle_wait_event_time_seconds_total", labels, tm)]


# ---------------------------------------------------------------- test assembly
class Pack:
    def __init__(self, cfg, alerts_doc: dict):
        self.th = cfg.thresholds
        self.cfg = cfg
        self.target_labels = cfg.target_labels
        self.rules = {}
        for g in alerts_doc["groups"]:
            for r in g["rules"]:
                self.rules.setdefault(r["alert"], []).append(r)

    def target(self, kind: str, labels: dict) -> dict:
        """`labels` plus the target labels (job, instance) every aggregation keeps, as a series
        of this kind of exporter carries them in the scenarios."""
        if kind not in ("oracle", "dbhost", "node"):
            return dict(labels)
        mine = {"job": kind, "instance": ORA["instance"] if kind == "oracle" else HOST}
        return {**{k: v for k, v in mine.items() if k in self.target_labels}, **labels}

    def expect(self, alert, index, labels, value):
        rule = self.rules[alert][index]
        lab = {**self.target(source_kind(rule["expr"]), labels), **rule["labels"]}
        if lab.get("job") in ("oracle", "dbhost", "node"):     # the site's job names (see _relabel_jobs)
            lab["job"] = self.cfg.job_label(lab["job"])
        ann = {k: render(v, lab, value) for k, v in rule["annotations"].items()}
        return {"exp_labels": lab, "exp_annotations": ann}

    def for_min(self, alert, index=0):
        d = self.rules[alert][index].get("for", "0s")
        mult = {"s": 1 / 60, "m": 1, "h": 60}
        return int(sum(int(n) * mult[u] for n, u in re.findall(r"(\d+)([smh])", d)))


def scenario(pack, name, alert, index, series, labels, value, *, window=5, minutes=None, extra=None):
    """A firing case: bad from minute H on. The condition cannot hold before H+1, so the alert
    is not firing at H+for; once the windows hold only bad data (H+window) it holds, so the
    alert fires by H+window+for."""
    f = pack.for_min(alert, index)
    fire_at = H + f + window + 1
    checks = []
    if f > 0:
        checks.append({"eval_time": f"{H + f}m", "alertname": alert, "exp_alerts": []})
    checks.append({"eval_time": f"{fire_at}m", "alertname": alert,
                   "exp_alerts": [pack.expect(alert, index, labels, value)] + (extra or [])})
    return {"name": name, "interval": "1m", "input_series": series, "alert_rule_test": checks}


def quiet(name, alert, series, at):
    return {"name": name, "interval": "1m", "input_series": series,
            "alert_rule_test": [{"eval_time": f"{at}m", "alertname": alert, "exp_alerts": []}]}


def _length(pack, alert, index=0, window=5):
    return H + pack.for_min(alert, index) + window + 3


# ---------------------------------------------------------------- oracle wait-event averages
def avg_event_cases(pack, alert, tid, event, fire_avg, fire_rate):
    t = pack.th[tid]
    n = _length(pack, alert)
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
    n = _length(pack, alert, index)
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
    n = _length(pack, alert)
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
    n = _length(pack, alert, window=0)
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
        n = _length(pack, alert, window=0)
        tl = Timeline(n)
        tests.append(scenario(pack, f"{alert}: {metric} 0 fires", alert, 0,
                              [tl.gauge(metric, labels, [(0, 1), (H, 0)])], labels, 0, window=0))
        tests.append(quiet(f"{alert}: one failed scrape in two does not fire", alert,
                           [tl.gauge(metric, labels, [(0, lambda t: t % 2)])], n))
    alert = "OracleScrapeErrors"
    n = _length(pack, alert, window=15)
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
    n = _length(pack, alert, window=0)
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
    n = _length(pack, alert)
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
    n = _length(pack, alert)
    tl = Timeline(n)

    def pair(sync_avg, lfpw_avg, sync_rate=72, lfpw_rate=74):
        s = round(sync_rate * 60)
        return (wait_event(tl, "log file sync", [(0, s, 0.002), (H, s, sync_avg)])
                + wait_event(tl, "log file parallel write", [(0, lfpw_rate * 60, 0.001), (H, lfpw_rate * 60, lfpw_avg)]))
    tests.append(scenario(pack, "OracleCommitCpuStarvation: 26.45 ms sync vs 11.8 ms write fires", alert, 0,
                          pair(0.02645, 0.0118), dict(DB), 0.02645 - 0.0118))
    tests.append(scenario(pack, "OracleCommitCpuStarvation: 7.1 ms vs 3.5 ms (2.03x, 3.6 ms gap) fires", alert, 0,
                          pair(0.0071, 0.0035), dict(DB), 0.0071 - 0.0035))
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
    n = _length(pack, alert)
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
                  "alert_rule_test": [{**only, "exp_alerts": [pack.expect(alert, 0, dict(DB), 0.02645 - 0.0118)]}]})
    tests.append({"name": "OracleCommitCpuStarvation: 0.1 ms run delay per LGWR dispatch names no cause",
                  "interval": "1m", "input_series": gap + [info("dbhost1")] + sched("lgwr", 0.0001),
                  "alert_rule_test": [{**only, "exp_alerts": [pack.expect(alert, 0, dict(DB), 0.02645 - 0.0118)]}]})
    tests.append(scenario(pack, f"OracleCommitCpuStarvation: LGWR waits 2 ms per dispatch for a CPU (over "
                          f"{rd * 1000:g} ms): cause lgwr_cpu_wait, and not the unexplained rule", alert, 1,
                          gap + [info("dbhost1")] + sched("lgwr", 0.002) + sched("foreground", 0.0001),
                          dict(DB), 0.002))
    tests.append(scenario(pack, "OracleCommitCpuStarvation: LG00 (an LGWR worker) starved on the right host of a "
                          "shared SID: cause lgwr_cpu_wait", alert, 1,
                          two_hosts + sched("lg00", 0.003) + sched("lgwr", 0.00002, host="dbhost2"), dict(DB), 0.003))
    tests.append(scenario(pack, "OracleCommitCpuStarvation: the foregrounds wait 1 ms per dispatch: cause "
                          "session_cpu_wait", alert, 2,
                          gap + [info("dbhost1")] + sched("lgwr", 0.00002) + sched("foreground", 0.001, dispatches=5000),
                          dict(DB), 0.001))

    # --- R14 LGWR involuntary share
    alert = "OracleLgwrInvoluntaryContextSwitches"
    n = _length(pack, alert)
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
    n = _length(pack, alert, window=60)
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
    n = _length(pack, alert, window=0)
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
    n = _length(pack, "OracleLatchHitRatioLow", 0)
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
    n = _length(pack, alert)
    tl = Timeline(n)
    gib = 1024 ** 3

    def pga(alloc, target):
        return [tl.gauge("oracle_pga_allocated_bytes", {**ORA, **DB}, [(0, 1.5 * gib), (H, alloc)]),
                tl.gauge("oracle_pga_target_bytes", {**ORA, **DB}, [(0, target)])]
    tests.append(scenario(pack, "OraclePgaOverAllocation: allocated 110% of target fires", alert, 0,
                          pga(2.2 * gib, 2 * gib), dict(DB), 1.1))
    tests.append(quiet("OraclePgaOverAllocation: allocated 95% of target does not fire", alert, pga(1.9 * gib, 2 * gib), n))
    tests.append(quiet("OraclePgaOverAllocation: no pga_aggregate_target (0) does not fire", alert, pga(2.2 * gib, 0), n))
    n = _length(pack, alert, 1, window=15)
    tl = Timeline(n)
    tests.append(scenario(pack, "OraclePgaOverAllocation: over-allocation count +1 fires at once", alert, 1,
                          [tl.counter("oracle_pga_over_allocation_count_total", {**ORA, **DB}, [(0, 0), (H, lambda t: 1 if t == H + 1 else 0)])],
                          dict(DB), 1, window=0))
    tests.append(quiet("OraclePgaOverAllocation: constant over-allocation count does not fire", alert,
                       [tl.counter("oracle_pga_over_allocation_count_total", {**ORA, **DB}, [(0, 0)], start=7)], n))
    return tests


# ---------------------------------------------------------------- host
def cpu_series(tl, cpus, before: dict, after: dict):
    out = []
    for c in range(cpus):
        for mode in ("user", "nice", "system", "irq", "softirq", "iowait", "idle", "steal"):
            out.append(tl.counter("node_cpu_seconds_total", {"job": "node", "instance": HOST, "cpu": str(c), "mode": mode},
                                  [(0, before.get(mode, 0) * 60), (H, after.get(mode, 0) * 60)], start=100000))
    return out


def host_tests(pack) -> list:
    tests = []
    node = {"job": "node", "instance": HOST}
    hl = {"instance": HOST}
    # C1
    alert = "HostRunQueueSaturated"
    n = _length(pack, alert)
    tl = Timeline(n)
    idle = {"user": 0.5, "system": 0.03, "idle": 0.47}

    def rq(running, vol, invol):
        base = {"job": "dbhost", "instance": HOST, "sid": "ODS1", "role": "foreground"}
        return (cpu_series(tl, 12, idle, {"user": 0.9, "system": 0.08, "idle": 0.02})
                + [tl.gauge("node_procs_running", node, [(0, 6), (H, running)]),
                   tl.counter("dbhost_process_context_switches_total", {**base, "kind": "voluntary"}, [(0, 6000), (H, vol)]),
                   tl.counter("dbhost_process_context_switches_total", {**base, "kind": "involuntary"}, [(0, 60), (H, invol)])])
    tests.append(scenario(pack, "HostRunQueueSaturated: 30 runnable on 12 CPUs with 10% involuntary switches fires", alert, 0,
                          rq(30, 54000, 6000), hl, 2.5))
    tests.append(quiet("HostRunQueueSaturated: 23 runnable on 12 CPUs (1.92/CPU) does not fire", alert, rq(23, 54000, 6000), n))
    tests.append(quiet("HostRunQueueSaturated: 30 runnable but 1% involuntary switches does not fire", alert, rq(30, 59400, 600), n))
    invol_floor = pack.th["C1"].floor("involuntary_rate").value
    tests.append(quiet(f"HostRunQueueSaturated: 30 runnable, 10% involuntary but only {invol_floor * 0.5:g} involuntary "
                       f"switches/s (floor {invol_floor:g}/s) does not fire", alert,
                       rq(30, round(invol_floor * 0.5 * 60 * 9), round(invol_floor * 0.5 * 60)), n))
    tests.append(scenario(pack, f"HostRunQueueSaturated: 10% involuntary at {invol_floor * 1.1:g} involuntary switches/s fires",
                          alert, 0, rq(30, round(invol_floor * 1.1 * 60 * 9), round(invol_floor * 1.1 * 60)), hl, 2.5))
    # C4 / C2
    alert = "HostSystemCpuDominant"
    n = _length(pack, alert)
    tl = Timeline(n)
    base = {"user": 0.3, "system": 0.03, "iowait": 0.02, "idle": 0.65}
    tests.append(scenario(pack, "HostSystemCpuDominant: 80% system of 90% busy (C4) fires", alert, 0,
                          cpu_series(tl, 2, base, {"user": 0.1, "system": 0.8, "iowait": 0.02, "idle": 0.08}), hl, 0.8 / 0.9))
    tests.append(scenario(pack, "HostSystemCpuDominant: irq+softirq count as kernel time", alert, 0,
                          cpu_series(tl, 2, base, {"user": 0.3, "system": 0.2, "irq": 0.05, "softirq": 0.1, "idle": 0.35}),
                          hl, 0.35 / 0.65))
    tests.append(quiet("HostSystemCpuDominant: 40% system of 90% busy does not fire", alert,
                       cpu_series(tl, 2, base, {"user": 0.5, "system": 0.4, "idle": 0.1}), n))
    tests.append(quiet("HostSystemCpuDominant: idle host, 3% system of 4% busy (under the C2 5% floor) does not fire", alert,
                       cpu_series(tl, 2, base, {"user": 0.01, "system": 0.03, "idle": 0.96}), n))
    # M2
    alert = "HostMajorPageFaultRatioHigh"
    n = _length(pack, alert)
    tl = Timeline(n)

    def faults(total, major):
        return [tl.counter("node_vmstat_pgfault", node, [(0, 600000), (H, total * 60)]),
                tl.counter("node_vmstat_pgmajfault", node, [(0, 60), (H, major * 60)])]
    tests.append(scenario(pack, "HostMajorPageFaultRatioHigh: 1% major faults fires", alert, 0, faults(10000, 100), hl, 0.01))
    tests.append(quiet("HostMajorPageFaultRatioHigh: 0.4% does not fire", alert, faults(10000, 40), n))
    tests.append(quiet("HostMajorPageFaultRatioHigh: 1% of 50 faults/s (0.5 major/s) does not fire", alert, faults(50, 0.5), n))
    # M3
    alert = "HostSwapping"
    n = _length(pack, alert)
    tl = Timeline(n)

    def swap(pin, pout):
        return [tl.counter("node_vmstat_pswpin", node, [(0, 0), (H, pin * 60)]),
                tl.counter("node_vmstat_pswpout", node, [(0, 0), (H, pout * 60)])]
    tests.append(scenario(pack, "HostSwapping: 50 pages/s fires", alert, 0, swap(30, 20), hl, 50))
    tests.append(quiet("HostSwapping: 8 pages/s does not fire", alert, swap(5, 3), n))
    return tests + shm_tests(pack)


def shm_tests(pack) -> list:
    """M5: the SGAs of the instances on a host against kernel.shmall and the huge pages. Failure
    first: a Data Guard pair sharing the SID ODS1 on two hosts must not add the other host's
    SGA here; shmmax below the SGA is not a finding; no huge pages at all is a choice."""
    tests = []
    gib = float(1 << 30)
    alert = "HostShmallBelowSga"
    n = _length(pack, alert)
    tl = Timeline(n)
    hl = {"instance": HOST}

    def instance(database, sid, host, sga):
        lab = {**ORA, "database": database, "inst_id": "1"}
        return [tl.gauge("oracle_instance_info", {**lab, "instance_name": sid, "host_name": f"{host}.example.com",
                                                  "version": "19.0.0.0.0"}, [(0, 1)]),
                tl.gauge("oracle_sga_target_bytes", lab, [(0, sga)])]

    def procs(sid, host=HOST):
        return [tl.counter("dbhost_process_context_switches_total",
                           {"job": "dbhost", "instance": host, "sid": sid, "role": "pmon", "kind": "voluntary"},
                           [(0, 60)])]

    def kernel(shmall, host=HOST, huge_total=0, huge_size=2 << 20):
        lab = {"job": "dbhost", "instance": host}
        # the settings a change at minute H (sysctl -p) left behind; ample before
        return [tl.gauge("dbhost_kernel_shmall_bytes", lab, [(0, 256 * gib), (H, shmall)]),
                tl.gauge("dbhost_kernel_shmmax_bytes", lab, [(0, 4 * gib)]),
                tl.gauge("dbhost_memory_hugepages", {**lab, "state": "total"},
                         [(0, 65536 if huge_total else 0), (H, huge_total)]),
                tl.gauge("dbhost_memory_hugepage_size_bytes", lab, [(0, huge_size)])]
    pair = (instance("ODS", "ODS1", HOST, 10 * gib) + instance("ODSSB", "ODS1", "dbhost2", 20 * gib)
            + procs("ODS1") + procs("ODS1", host="dbhost2"))
    tests.append(quiet("HostShmallBelowSga: a Data Guard pair sharing SID ODS1: the standby host's 20 GiB SGA "
                       "does not count on the primary's host (10 GiB SGA, 16 GiB shmall)", alert,
                       pair + kernel(16 * gib) + kernel(32 * gib, host="dbhost2"), n))
    tests.append(quiet("HostShmallBelowSga: a 10 GiB SGA with shmmax 4 GiB (split into segments) and shmall "
                       "16 GiB does not fire", alert,
                       instance("ODS", "ODS1", HOST, 10 * gib) + procs("ODS1") + kernel(16 * gib), n))
    tests.append(quiet("HostShmallBelowSga: an instance whose SID runs on no monitored host is nobody's", alert,
                       instance("ODS", "ODS1", HOST, 10 * gib) + kernel(8 * gib), n))
    tests.append(scenario(pack, "HostShmallBelowSga: a 10 GiB SGA, shmall 8 GiB: the next start fails (ORA-27102)",
                          alert, 0, instance("ODS", "ODS1", HOST, 10 * gib) + procs("ODS1") + kernel(8 * gib),
                          hl, 1.25, window=0))
    tests.append(scenario(pack, "HostShmallBelowSga: two instances of 6 GiB on one host, shmall 10 GiB fires", alert, 0,
                          instance("ODS", "ODS1", HOST, 6 * gib) + instance("DW", "DW1", HOST, 6 * gib)
                          + procs("ODS1") + procs("DW1") + kernel(10 * gib), hl, 1.2, window=0))

    alert = "HostHugePagesBelowSga"
    ods = instance("ODS", "ODS1", HOST, 10 * gib) + procs("ODS1")
    tests.append(quiet("HostHugePagesBelowSga: no huge pages configured at all (a choice) does not fire", alert,
                       ods + kernel(64 * gib, huge_total=0), n))
    tests.append(quiet("HostHugePagesBelowSga: 5632 huge pages of 2 MiB (11 GiB) hold a 10 GiB SGA", alert,
                       ods + kernel(64 * gib, huge_total=5632), n))
    tests.append(scenario(pack, "HostHugePagesBelowSga: 2048 huge pages of 2 MiB (4 GiB) under a 10 GiB SGA fires",
                          alert, 0, ods + kernel(64 * gib, huge_total=2048), hl, 2.5, window=0))
    return tests


def storage_tests(pack) -> list:
    tests = []
    db = {"job": "dbhost", "instance": HOST}
    node = {"job": "node", "instance": HOST}

    def lun_info(tl, device, role):
        return tl.gauge("dbhost_lun_info", {**db, "device": device, "hctl": "2:0:0:1", "vendor": "HITACHI",
                                            "model": "OPEN-V", "wwid": f"naa.60060e80{device}", "multipath": "",
                                            "role": role}, [(0, 1)])
    # Q2
    alert = "LunHostQueueBacklog"
    n = _length(pack, alert)
    tl = Timeline(n)

    def queues(host, lun, device="sdb"):
        return [tl.gauge("dbhost_lun_inflight_requests", {**db, "device": device, "queue": "host"}, [(0, 2), (H, host)]),
                tl.gauge("dbhost_lun_inflight_requests", {**db, "device": device, "queue": "lun"}, [(0, 8), (H, lun)])]
    tests.append(scenario(pack, "LunHostQueueBacklog: 14 requests in the host queue fires", alert, 0,
                          queues(14, 30), {"instance": HOST, "device": "sdb"}, 14))
    tests.append(quiet("LunHostQueueBacklog: 9 requests (the expert's 5-10 at peak) does not fire", alert, queues(9, 30), n))

    def full(full_per_min, visible, device="sdb"):
        """blk-mq 5.10-6.9: the host queue reads 0; the exporter samples every 15 s (4/min)."""
        out = [tl.counter("dbhost_lun_samples_total", {**db, "device": device}, [(0, 4)]),
               tl.counter("dbhost_lun_queue_full_samples_total", {**db, "device": device},
                          [(0, 0), (H, full_per_min)]),
               tl.gauge("dbhost_lun_inflight_requests", {**db, "device": device, "queue": "host"}, [(0, 0)]),
               tl.gauge("dbhost_lun_inflight_requests", {**db, "device": device, "queue": "lun"}, [(0, 30)])]
        if visible is not None:
            out.append(tl.gauge("dbhost_lun_host_queue_visible", {**db, "device": device}, [(0, visible)]))
        return out
    q2f = pack.th["Q2_full"].value
    tests.append(scenario(pack, "LunHostQueueBacklog: LUN queue full in 3 of 4 samples, host queue invisible (kernel 6.1) fires",
                          alert, 1, full(3, 0), {"instance": HOST, "device": "sdb"}, 0.75))
    tests.append(scenario(pack, "LunHostQueueBacklog: LUN queue full in every sample, visibility unknown fires",
                          alert, 1, full(4, None), {"instance": HOST, "device": "sdb"}, 1))
    tests.append(scenario(pack, "LunHostQueueBacklog: an NVMe namespace with every hardware queue full (in flight >= "
                          "queue tags) in 3 of 4 samples fires (issue 14.3)",
                          alert, 1, full(3, 0, device="nvme0n1"), {"instance": HOST, "device": "nvme0n1"}, 0.75))
    tests.append(quiet(f"LunHostQueueBacklog: LUN queue full in 1 of 4 samples (under {q2f:g}) does not fire", alert,
                       full(1, 0), n))
    tests.append(quiet("LunHostQueueBacklog: LUN queue always full but host queue visible (6.10+) and 0: the host-queue "
                       "rule decides, no alert", alert, full(4, 1), n))
    # Q3
    alert = "LunQueueDepthThrottled"
    n = _length(pack, alert)
    tl = Timeline(n)

    def q3(depth, full_per_min, host):
        return [tl.gauge("dbhost_lun_queue_depth", {**db, "device": "sdb"}, [(0, depth)]),
                tl.counter("dbhost_lun_samples_total", {**db, "device": "sdb"}, [(0, 60)]),
                tl.counter("dbhost_lun_queue_full_samples_total", {**db, "device": "sdb"}, [(0, 0), (H, full_per_min)]),
                tl.gauge("dbhost_lun_inflight_requests", {**db, "device": "sdb", "queue": "host"}, [(0, 0), (H, host)])]
    lab = {"instance": HOST, "device": "sdb"}
    tests.append(scenario(pack, "LunQueueDepthThrottled: depth 8, queue full in 20% of samples fires", alert, 0,
                          q3(8, 12, 0), lab, 8))
    tests.append(scenario(pack, "LunQueueDepthThrottled: depth 8 with a host-queue backlog of 3 fires", alert, 0,
                          q3(8, 0, 3), lab, 8))
    tests.append(quiet("LunQueueDepthThrottled: depth 9 (just above the throttle) with a full queue does not fire", alert,
                       q3(9, 12, 3), n))
    tests.append(quiet("LunQueueDepthThrottled: depth 8 on an idle LUN (never full, no backlog) does not fire", alert,
                       q3(8, 2, 0), n))

    # R17 / I2 latency
    def disk(tl, device, kind, ops, lat):
        return [tl.counter(f"node_disk_{kind}s_completed_total", {**node, "device": device}, [(0, ops * 60), (H, ops * 60)]),
                tl.counter(f"node_disk_{kind}_time_seconds_total", {**node, "device": device},
                           [(0, ops * 60 * 0.0005), (H, ops * 60 * lat)])]
    alert = "LunWriteLatencyHigh"
    n = _length(pack, alert)
    tl = Timeline(n)
    lab = {"instance": HOST, "device": "sdc", "role": "redo"}
    tests.append(scenario(pack, "LunWriteLatencyHigh: redo LUN writes at 12 ms (R17 before) fire", alert, 0,
                          [lun_info(tl, "sdc", "redo")] + disk(tl, "sdc", "write", 74, 0.012)
                          + [lun_info(tl, "sdd", "data")] + disk(tl, "sdd", "write", 200, 0.012), lab, 0.012))
    tests.append(scenario(pack, "LunWriteLatencyHigh: 2.2 ms fires", alert, 0,
                          [lun_info(tl, "sdc", "redo")] + disk(tl, "sdc", "write", 74, 0.0022), lab, 0.0022))
    tests.append(quiet("LunWriteLatencyHigh: 0.8 ms (R17 after) does not fire", alert,
                       [lun_info(tl, "sdc", "redo")] + disk(tl, "sdc", "write", 845, 0.0008), n))
    tests.append(quiet("LunWriteLatencyHigh: 1.8 ms does not fire", alert,
                       [lun_info(tl, "sdc", "redo")] + disk(tl, "sdc", "write", 845, 0.0018), n))
    tests.append(quiet("LunWriteLatencyHigh: 12 ms at 5 writes/s does not fire", alert,
                       [lun_info(tl, "sdc", "redo")] + disk(tl, "sdc", "write", 5, 0.012), n))
    alert = "LunWriteLatencyHigh"
    n = _length(pack, alert, 1)
    tl = Timeline(n)
    other = pack.th["R17_other"].value
    tests.append(scenario(pack, f"LunWriteLatencyHigh: data LUN writes at {other * 1.25 * 1000:g} ms fire", alert, 1,
                          [lun_info(tl, "sdd", "data")] + disk(tl, "sdd", "write", 200, other * 1.25),
                          {"instance": HOST, "device": "sdd", "role": "data"}, other * 1.25))
    tests.append(scenario(pack, f"LunWriteLatencyHigh: arch LUN writes at {other * 1.5 * 1000:g} ms fire", alert, 1,
                          [lun_info(tl, "sde", "arch")] + disk(tl, "sde", "write", 150, other * 1.5),
                          {"instance": HOST, "device": "sde", "role": "arch"}, other * 1.5))
    tests.append(quiet("LunWriteLatencyHigh: data LUN writes at 12 ms (would be 6x the redo threshold) do not fire", alert,
                       [lun_info(tl, "sdd", "data")] + disk(tl, "sdd", "write", 200, 0.012), n))
    tests.append(quiet(f"LunWriteLatencyHigh: data LUN writes at {other * 0.9 * 1000:g} ms do not fire", alert,
                       [lun_info(tl, "sdd", "data")] + disk(tl, "sdd", "write", 200, other * 0.9), n))
    tests.append(quiet("LunWriteLatencyHigh: LUN without a role (other) at 30 ms does not fire", alert,
                       [lun_info(tl, "sdf", "other")] + disk(tl, "sdf", "write", 200, 0.03), n))
    alert = "LunReadLatencyHigh"
    n = _length(pack, alert)
    tl = Timeline(n)
    tests.append(scenario(pack, "LunReadLatencyHigh: arch LUN reads at 25 ms (RMAN reading archived logs) fire", alert, 1,
                          [lun_info(tl, "sde", "arch")] + disk(tl, "sde", "read", 100, 0.025),
                          {"instance": HOST, "device": "sde", "role": "arch"}, 0.025))
    tests.append(scenario(pack, "LunReadLatencyHigh: redo LUN reads at 16 ms (R17 after, info) fire", alert, 0,
                          [lun_info(tl, "sdc", "redo")] + disk(tl, "sdc", "read", 10.5, 0.016),
                          {"instance": HOST, "device": "sdc", "role": "redo"}, 0.016))
    tests.append(quiet("LunReadLatencyHigh: redo LUN reads at 8 ms (R17 before) do not fire", alert,
                       [lun_info(tl, "sdc", "redo")] + disk(tl, "sdc", "read", 10.5, 0.008), n))
    tests.append(scenario(pack, "LunReadLatencyHigh: data LUN reads at 25 ms fire", alert, 1,
                          [lun_info(tl, "sdd", "data")] + disk(tl, "sdd", "read", 400, 0.025),
                          {"instance": HOST, "device": "sdd", "role": "data"}, 0.025))
    tests.append(quiet("LunReadLatencyHigh: data LUN reads at 10 ms (I2: normal for disks) do not fire", alert,
                       [lun_info(tl, "sdd", "data")] + disk(tl, "sdd", "read", 400, 0.010), n))
    tests.append(quiet("LunReadLatencyHigh: data LUN reads at 25 ms, 5 reads/s, do not fire", alert,
                       [lun_info(tl, "sdd", "data")] + disk(tl, "sdd", "read", 5, 0.025), n))
    # I2 by storage class: flash serves 0.4-0.6 ms, so 10 ms (fine on disks) is a 20x regression
    flash = pack.th["I2_flash"].value
    tests.append(scenario(pack, "LunReadLatencyHigh: flash data LUN (NVMe) reads at 10 ms fire, by I2_flash", alert, 2,
                          [lun_info(tl, "nvme0n1", "data")] + disk(tl, "nvme0n1", "read", 400, 0.010),
                          {"instance": HOST, "device": "nvme0n1", "role": "data"}, 0.010))
    tests.append(quiet(f"LunReadLatencyHigh: flash data LUN reads at {flash * 0.5 * 1000:g} ms do not fire", alert,
                       [lun_info(tl, "nvme0n1", "data")] + disk(tl, "nvme0n1", "read", 400, flash * 0.5), n))
    tests.append({"name": "LunReadLatencyHigh: a flash LUN at 25 ms fires once, as flash, not also as disk", "interval": "1m",
                  "input_series": [lun_info(tl, "nvme0n1", "data")] + disk(tl, "nvme0n1", "read", 400, 0.025),
                  "alert_rule_test": [{"eval_time": f"{n}m", "alertname": alert, "exp_alerts": [
                      pack.expect(alert, 2, {"instance": HOST, "device": "nvme0n1", "role": "data"}, 0.025)]}]})

    # Q4 SCSI errors
    alert = "LunIoErrors"
    n = _length(pack, alert, window=15)
    tl = Timeline(n)

    def ioerr(step):
        return [tl.counter("dbhost_lun_ioerrors_total", {**db, "device": "sdb"}, [(0, 0), (H, step)])]
    tests.append(scenario(pack, "LunIoErrors: one SCSI error a minute fires", alert, 0, ioerr(1),
                          {"instance": HOST, "device": "sdb"}, 15, window=15))
    tests.append(quiet("LunIoErrors: error counter not moving (old errors) does not fire", alert,
                       [Timeline(n + 10).counter("dbhost_lun_ioerrors_total", {**db, "device": "sdb"}, [(0, 0)], start=42)],
                       n + 10))
    return tests + path_tests(pack, lun_info)


def path_tests(pack, lun_info) -> list:
    """O6: multipath redundancy, all paths down, a map left suspended, an NVMe controller not live.
    Failure first: the path multipathd removed from the map must still count as lost, a map that
    never had a second path and a LUN of no database role must not fire."""
    tests = []
    db = {"job": "dbhost", "instance": HOST}
    alert = "LunPathRedundancyLost"
    n = _length(pack, alert)
    tl = Timeline(n)

    def mpath(paths, active, role="data", device="dm-3", paths0=None):
        lab = {**db, "device": device}
        return [tl.gauge("dbhost_multipath_paths", lab, [(0, paths0 or paths), (H, paths)]),
                tl.gauge("dbhost_multipath_paths_active", lab, [(0, paths0 or paths), (H, active)]),
                lun_info(tl, device, role)]
    lun = {"instance": HOST, "device": "dm-3"}
    tests.append(scenario(pack, "LunPathRedundancyLost: multipathd removed the 2 failed paths from the map "
                          "(4 paths yesterday, 2 of 2 now) fires", alert, 0,
                          mpath(2, 2, paths0=4), {**lun, "role": "data"}, 2, window=0))
    tests.append(scenario(pack, "LunPathRedundancyLost: redo LUN with 1 of 2 paths running fires", alert, 0,
                          mpath(2, 1, role="redo"), {**lun, "role": "redo"}, 1, window=0))
    tests.append(quiet("LunPathRedundancyLost: a map that never had a second path (1 of 1) does not fire", alert,
                       mpath(1, 1), n))
    tests.append(quiet("LunPathRedundancyLost: a LUN of role other losing a path does not fire", alert,
                       mpath(4, 2, role="other"), n))
    tests.append(quiet("LunPathRedundancyLost: every path lost is LunAllPathsDown's (critical), not this", alert,
                       mpath(4, 0, role="redo"), n))
    tests.append(quiet("LunPathRedundancyLost: 4 of 4 paths running does not fire", alert, mpath(4, 4), n))

    alert = "LunAllPathsDown"
    tests.append(scenario(pack, "LunAllPathsDown: no path of a redo LUN runs (4 yesterday) fires", alert, 0,
                          mpath(4, 0, role="redo"), {**lun, "role": "redo"}, 4, window=0))
    tests.append(scenario(pack, "LunAllPathsDown: multipathd removed every path from the map fires", alert, 0,
                          mpath(0, 0, role="arch", paths0=2), {**lun, "role": "arch"}, 2, window=0))
    tests.append(quiet("LunAllPathsDown: 1 of 4 paths running does not fire", alert, mpath(4, 1, role="redo"), n))

    alert = "LunMultipathSuspended"
    tl2 = Timeline(n)

    def suspended(phases, role="redo"):
        return [tl2.gauge("dbhost_multipath_suspended", {**db, "device": "dm-3"}, phases), lun_info(tl2, "dm-3", role)]
    tests.append(scenario(pack, "LunMultipathSuspended: the redo map stays suspended fires", alert, 0,
                          suspended([(0, 0), (H, 1)]), {**lun, "role": "redo"}, 1, window=0))
    tests.append(quiet("LunMultipathSuspended: a reload's one-minute suspension does not fire", alert,
                       suspended([(0, 0), (H, 1), (H + 1, 0)]), n))

    alert = "NvmeControllerNotLive"
    n = _length(pack, alert)
    tl3 = Timeline(n)

    def ctrl(phases):
        """phases: [(from_minute, state)]: one series per state, 1 while current (the exporter's form)."""
        states = sorted({st for _, st in phases})
        return [tl3.gauge("dbhost_nvme_controller_state", {**db, "controller": "nvme1", "state": st},
                          [(t, 1 if cur == st else 0) for t, cur in phases]) for st in states]
    tests.append(scenario(pack, "NvmeControllerNotLive: a fabrics controller stuck connecting fires", alert, 0,
                          ctrl([(0, "live"), (H, "connecting")]),
                          {"instance": HOST, "controller": "nvme1", "state": "connecting"}, 1, window=0))
    tests.append(quiet("NvmeControllerNotLive: a 2-minute reset does not fire", alert,
                       ctrl([(0, "live"), (H, "resetting"), (H + 2, "live")]), n))
    return tests


def zfs_tests(pack) -> list:
    tests = []
    db = {"job": "dbhost", "instance": HOST}
    alert = "ZfsL2arcErrors"
    n = _length(pack, alert, window=15)
    tl = Timeline(n)

    def errs(step):
        return [tl.counter("dbhost_zfs_l2arc_errors_total", {**db, "kind": "checksum"},
                           [(0, 0), (H, lambda t: step if t == H + 1 else 0)], start=0),
                tl.counter("dbhost_zfs_l2arc_errors_total", {**db, "kind": "io"}, [(0, 0)], start=0)]
    tests.append(scenario(pack, "ZfsL2arcErrors: 3 checksum errors fire at once", alert, 0, errs(3),
                          {"instance": HOST, "kind": "checksum"}, 3, window=0))
    tests.append(quiet("ZfsL2arcErrors: no new errors does not fire", alert, errs(0), n))

    alert = "ZfsL2arcNotWarming"
    n = _length(pack, alert)
    tl = Timeline(n)

    def l2(hits, misses, size=200 * 1024 ** 3):
        return [tl.counter("dbhost_zfs_l2arc_hits_total", db, [(0, hits * 60)]),
                tl.counter("dbhost_zfs_l2arc_misses_total", db, [(0, misses * 60)]),
                tl.gauge("dbhost_zfs_l2arc_size_bytes", db, [(0, size)])]
    f = pack.for_min(alert)
    tests.append({"name": "ZfsL2arcNotWarming: 5% hit ratio for 6h fires", "interval": "1m",
                  "input_series": l2(50, 950),
                  "alert_rule_test": [
                      {"eval_time": f"{f}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{f + 10}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"instance": HOST}, 0.05)]}]})
    tests.append(quiet("ZfsL2arcNotWarming: 30% hit ratio does not fire", alert, l2(300, 700), n))
    tests.append(quiet("ZfsL2arcNotWarming: 5% of 50 lookups/s does not fire", alert, l2(2.5, 47.5), n))
    tests.append(quiet("ZfsL2arcNotWarming: no L2ARC device (size 0) does not fire", alert, l2(50, 950, size=0), n))
    return tests


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
        exp = pack.expect(alert, 0, labels, value)
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


# ---------------------------------------------------------------- recording rules on host data
def recording_tests(pack) -> list:
    tests = []
    db = {"job": "dbhost", "instance": HOST}
    node = {"job": "node", "instance": HOST}
    tl = Timeline(20)
    kinds = {"demand_data": (900, 50, 50), "demand_metadata": (990, 5, 5),
             "prefetch_data": (100, 0, 900), "prefetch_metadata": (10, 0, 0)}
    series = []
    for k, (hits, iohits, misses) in kinds.items():
        series.append(tl.counter("dbhost_zfs_arc_hits_total", {**db, "kind": k}, [(0, hits * 60)]))
        series.append(tl.counter("dbhost_zfs_arc_iohits_total", {**db, "kind": k}, [(0, iohits * 60)]))
        series.append(tl.counter("dbhost_zfs_arc_misses_total", {**db, "kind": k}, [(0, misses * 60)]))
    series += [tl.counter("dbhost_zfs_l2arc_hits_total", db, [(0, 600 * 60)]),
               tl.counter("dbhost_zfs_l2arc_misses_total", db, [(0, 350 * 60)])]
    total_hits = sum(v[0] for v in kinds.values())
    total = sum(sum(v) for v in kinds.values())
    tests.append({"name": "ARC and L2ARC hit ratios (OpenZFS arc_summary formulas, iohits counted as accesses)",
                  "interval": "1m", "input_series": series, "promql_expr_test": [
                      {"expr": R.ARC_HIT_RATIO, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.ARC_HIT_RATIO, pack.target("dbhost", {"instance": HOST})),
                                        "value": total_hits / total}]},
                      {"expr": R.ARC_HIT_RATIO_BY_KIND + '{kind="demand_data"}', "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.ARC_HIT_RATIO_BY_KIND,
                                                      pack.target("dbhost", {"instance": HOST, "kind": "demand_data"})), "value": 0.9}]},
                      {"expr": R.L2ARC_HIT_RATIO, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.L2ARC_HIT_RATIO, pack.target("dbhost", {"instance": HOST})),
                                        "value": 600 / 950}]}]})
    # without iohits (OpenZFS < 2.2, illumos): hits / (hits + misses)
    series = [tl.counter("dbhost_zfs_arc_hits_total", {**db, "kind": "demand_data"}, [(0, 900 * 60)]),
              tl.counter("dbhost_zfs_arc_misses_total", {**db, "kind": "demand_data"}, [(0, 100 * 60)])]
    tests.append({"name": "ARC hit ratio without iohits (older OpenZFS, illumos kstat)", "interval": "1m",
                  "input_series": series, "promql_expr_test": [
                      {"expr": R.ARC_HIT_RATIO, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.ARC_HIT_RATIO, pack.target("dbhost", {"instance": HOST})),
                                        "value": 0.9}]}]})
    # LUN latency joined with role, queue size, LUN queue averages
    series = [tl.gauge("dbhost_lun_info", {**db, "device": "sdc", "hctl": "2:0:0:1", "vendor": "HITACHI", "model": "OPEN-V",
                                           "wwid": "naa.60060e80sdc", "multipath": "mpatha", "role": "redo"}, [(0, 1)]),
              tl.counter("node_disk_writes_completed_total", {**node, "device": "sdc"}, [(0, 845 * 60)]),
              tl.counter("node_disk_write_time_seconds_total", {**node, "device": "sdc"}, [(0, 845 * 60 * 0.0008)]),
              tl.counter("node_disk_io_time_weighted_seconds_total", {**node, "device": "sdc"}, [(0, 0.7 * 60)]),
              tl.gauge("dbhost_lun_inflight_requests", {**db, "device": "sdc", "queue": "lun"},
                       [(0, lambda t: 4 if t % 2 else 6)]),
              tl.gauge("dbhost_lun_inflight_requests", {**db, "device": "sdc", "queue": "host"}, [(0, 0)])]
    dup = [tl.gauge("dbhost_lun_info", {**db, "device": "sdc", "hctl": "2:0:0:1", "vendor": "HITACHI", "model": "OPEN-V",
                                        "wwid": "naa.60060e80sdc", "multipath": "mpatha", "role": role}, [(0, 1)])
           for role in ("redo", "data")]
    tests.append({"name": "LUN latency by role: two dbhost_lun_info series for one device still give one result",
                  "interval": "1m", "input_series": dup + series[1:3], "promql_expr_test": [
                      {"expr": f"count({R.DISK_WRITE_LATENCY})", "eval_time": "15m",
                       "exp_samples": [{"labels": "{}", "value": 1}]},
                      {"expr": f"sum({R.DISK_WRITE_LATENCY})", "eval_time": "15m",
                       "exp_samples": [{"labels": "{}", "value": 0.0008}]}]})
    tests.append({"name": "LUN latency by role, queue size, LUN queue average", "interval": "1m", "input_series": series,
                  "promql_expr_test": [
                      {"expr": R.DISK_WRITE_LATENCY, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.DISK_WRITE_LATENCY,
                                                      pack.target("node", {"device": "sdc", "instance": HOST, "role": "redo"})), "value": 0.0008}]},
                      {"expr": R.DISK_QUEUE_SIZE, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.DISK_QUEUE_SIZE,
                                                      pack.target("node", {"device": "sdc", "instance": HOST})), "value": 0.7}]},
                      # samples at 10..15m alternate 6,4,6,4,6,4 -> average 5
                      {"expr": R.LUN_LUN_QUEUE, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.LUN_LUN_QUEUE,
                                                      pack.target("dbhost", {"device": "sdc", "instance": HOST})), "value": 5}]}]})
    return tests


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


# ---------------------------------------------------------------- hangs (O2): the age of the current wait
def hang_tests(pack) -> list:
    tests = []
    n = 30
    tl = Timeline(n)

    def longest(event, per_minute, before=0.01, db=None):
        """oracle_sessions_waiting_longest_seconds of `event`: `before` until H, then a session
        stuck from H on (its wait grows by per_minute * 60 s each minute)."""
        lab = {**ORA, **(db or DB), "event": event, "wait_class": WAIT_CLASS.get(event, "Other")}
        return tl.gauge("oracle_sessions_waiting_longest_seconds", lab,
                        [(0, before), (H, lambda t: (t - H) * 60 * per_minute)])

    alert = "OracleCommitsStuck"
    sync = {**ORA, **DB, "event": "log file sync", "wait_class": "Commit"}
    # the failure: LGWR stops; no log file sync wait completes, so the counters freeze and every
    # average stays quiet, while every committing session waits longer and longer
    frozen = [tl.counter("oracle_wait_event_waits_total", sync, [(0, 72 * 60), (H, 0)]),
              tl.counter("oracle_wait_event_time_seconds_total", sync, [(0, 72 * 60 * 0.002), (H, 0)]),
              longest("log file sync", 1)]
    tests.append({"name": "OracleCommitsStuck: LGWR hangs, no commit completes: the averages stay silent, the hang pages",
                  "interval": "1m", "input_series": frozen, "alert_rule_test": [
                      {"eval_time": f"{H + 10}m", "alertname": "OracleLogFileSyncSlow", "exp_alerts": []},
                      {"eval_time": f"{H + 10}m", "alertname": "OracleCommitCpuStarvation", "exp_alerts": []},
                      {"eval_time": f"{H}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + 1}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {**DB, "event": "log file sync"}, 60)]},
                      {"eval_time": f"{H + 10}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {**DB, "event": "log file sync"}, 600)]}]})
    ev = "log file switch (archiving needed)"
    tests.append(scenario(pack, "OracleCommitsStuck: archiver stuck, sessions wait 'log file switch (archiving needed)' fires",
                          alert, 0, [longest(ev, 0.75)], {**DB, "event": ev}, 45, window=0))
    tests.append(quiet("OracleCommitsStuck: a commit waiting 20 s (under 30 s) does not page", alert,
                       [tl.gauge("oracle_sessions_waiting_longest_seconds", sync, [(0, 0.01), (H, 20)])], H + 5))

    alert = "OracleSessionsStuck"
    ev = "db file sequential read"
    tests.append(scenario(pack, "OracleSessionsStuck: a single-block read hanging for minutes (storage hang) fires", alert, 0,
                          [longest(ev, 1)], {**DB, "event": ev, "wait_class": "User I/O"}, (H + 8 - H) * 60, window=5))
    tests.append(quiet("OracleSessionsStuck: 10 minutes in 'enq: TX - row lock contention' is a blocked session, not this", alert,
                       [tl.gauge("oracle_sessions_waiting_longest_seconds",
                                 {**ORA, **DB, "event": "enq: TX - row lock contention", "wait_class": "Application"},
                                 [(0, 600)])], H + 10))
    tests.append(quiet("OracleSessionsStuck: a stuck commit is OracleCommitsStuck's page, not also this ticket", alert,
                       [longest("log file sync", 1)], H + 10))
    tests.append(quiet("OracleSessionsStuck: 4 minutes in a non-idle wait does not fire", alert,
                       [tl.gauge("oracle_sessions_waiting_longest_seconds", {**ORA, **DB, "event": ev, "wait_class": "User I/O"},
                                 [(0, 240)])], H + 10))

    alert = "OracleSessionsBlocked"
    tests.append(scenario(pack, "OracleSessionsBlocked: a session blocked for minutes by an uncommitted row lock fires", alert, 0,
                          [tl.gauge("oracle_sessions_blocked_longest_seconds", {**ORA, **DB},
                                    [(0, 0), (H, lambda t: (t - H) * 60)])], dict(DB), 480, window=5))
    tests.append(quiet("OracleSessionsBlocked: blocks of 2 minutes come and go: no ticket", alert,
                       [tl.gauge("oracle_sessions_blocked_longest_seconds", {**ORA, **DB},
                                 [(0, lambda t: (t % 3) * 60)])], H + 10))
    return tests


# ---------------------------------------------------------------- space, limits, standby (O4, O5)
def health_tests(pack) -> list:
    tests = []
    th = pack.th
    n = 40
    tl = Timeline(n)

    # resource limits (GV$RESOURCE_LIMIT)
    alert = "OracleResourceLimitNear"

    def resource(name, current, limit=1000):
        lab = {**ORA, **DB, "resource": name}
        out = [tl.gauge("oracle_resource_current_utilization", lab, [(0, (limit or 1000) * 0.5), (H, current)])]
        if limit is not None:
            out.append(tl.gauge("oracle_resource_limit", lab, [(0, limit)]))
        return out
    tests.append(scenario(pack, "OracleResourceLimitNear: processes at 95% of the limit tickets", alert, 0,
                          resource("processes", 950), {**DB, "resource": "processes"}, 0.95, window=1))
    tests.append(scenario(pack, "OracleResourceLimitNear: sessions at 99% of the limit pages (ORA-00018 next)", alert, 1,
                          resource("sessions", 990), {**DB, "resource": "sessions"}, 0.99, window=1))
    tests.append(quiet("OracleResourceLimitNear: processes at 85% does not fire", alert, resource("processes", 850), n))
    tests.append(quiet("OracleResourceLimitNear: UNLIMITED (no limit series) does not fire", alert,
                       resource("transactions", 5000, limit=None), n))
    tests.append(quiet("OracleResourceLimitNear: a resource that refuses nothing (enqueue_locks at 99%) does not fire", alert,
                       resource("enqueue_locks", 990), n))

    # tablespaces
    alert = "OracleTablespaceFull"
    gb = 1e9

    def tablespace(used, size=100 * gb, contents="PERMANENT", name="USERS"):
        lab = {**ORA, "database": "ODS", "container": "SALES", "tablespace": name, "contents": contents}
        return [tl.gauge("oracle_tablespace_used_bytes", lab, [(0, 0.5 * size), (H, used)]),
                tl.gauge("oracle_tablespace_max_bytes", lab, [(0, size)])]
    ts = {"database": "ODS", "container": "SALES", "tablespace": "USERS", "contents": "PERMANENT"}
    tests.append(scenario(pack, "OracleTablespaceFull: USERS 93% of its maximum size tickets", alert, 0,
                          tablespace(93 * gb), ts, 0.93, window=1))
    tests.append(scenario(pack, "OracleTablespaceFull: USERS 99% pages", alert, 1, tablespace(99 * gb), ts, 0.99, window=1))
    tests.append(quiet("OracleTablespaceFull: a full TEMP tablespace (sort space in use) is not this alert", alert,
                       tablespace(99 * gb, contents="TEMPORARY", name="TEMP"), n))
    tests.append(quiet("OracleTablespaceFull: USERS 85% does not fire", alert, tablespace(85 * gb), n))

    alert = "OracleTablespaceFillingUp"
    days = th["O4_tablespace_days"].value
    per_min = 20 * gb / 1440          # 20 GB a day into a 100 GB tablespace 60% full: full in 2 days
    tl2 = Timeline(75)
    lab = {**ORA, "database": "ODS", "container": "SALES", "tablespace": "USERS", "contents": "PERMANENT"}

    def growing(start, size=100 * gb, rate=per_min):
        return [tl2.gauge("oracle_tablespace_used_bytes", lab, [(0, lambda t: start + t * rate)]),
                tl2.gauge("oracle_tablespace_max_bytes", lab, [(0, size)])]
    at = 65
    left_days = (100 * gb - (60 * gb + at * per_min)) / (per_min / 60) / 86400
    tests.append({"name": f"OracleTablespaceFillingUp: 20 GB/day into 40 GB of room: full in 2 days (under {days:g}) fires",
                  "interval": "1m", "input_series": growing(60 * gb), "alert_rule_test": [
                      {"eval_time": "59m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{at}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, ts, left_days)]}]})
    tests.append(quiet("OracleTablespaceFillingUp: a 30% full tablespace loading fast does not fire (floor)", alert,
                       growing(30 * gb, rate=per_min * 2), at))
    tests.append(quiet("OracleTablespaceFillingUp: 95% full but not growing: OracleTablespaceFull's finding", alert,
                       growing(95 * gb, rate=0), at))

    # fast recovery area
    alert = "OracleRecoveryAreaFull"

    def fra(used, reclaimable, limit=1000 * gb):
        lab = {**ORA, "database": "ODS"}
        return [tl.gauge("oracle_recovery_area_used_bytes", lab, [(0, 0.3 * limit), (H, used)]),
                tl.gauge("oracle_recovery_area_reclaimable_bytes", lab, [(0, 0), (H, reclaimable)]),
                tl.gauge("oracle_recovery_area_limit_bytes", lab, [(0, limit)])]
    tests.append(scenario(pack, "OracleRecoveryAreaFull: 90% full net of reclaimable tickets", alert, 0,
                          fra(950 * gb, 50 * gb), {"database": "ODS"}, 0.9, window=1))
    tests.append(scenario(pack, "OracleRecoveryAreaFull: 98% full net of reclaimable pages", alert, 1,
                          fra(990 * gb, 10 * gb), {"database": "ODS"}, 0.98, window=1))
    tests.append(quiet("OracleRecoveryAreaFull: 99% used but 30% reclaimable (Oracle deletes it itself) does not fire",
                       alert, fra(990 * gb, 300 * gb), n))

    # ASM
    alert = "OracleAsmDiskgroupSpaceLow"

    def asm(usable, offline=0, total=1000 * gb):
        lab = {**ORA, "database": "ODS", "diskgroup": "DATA"}
        return [tl.gauge("oracle_asm_diskgroup_usable_file_bytes", lab, [(0, 0.4 * total), (H, usable)]),
                tl.gauge("oracle_asm_diskgroup_total_bytes", lab, [(0, total)]),
                tl.gauge("oracle_asm_diskgroup_offline_disks", lab, [(0, 0), (H, offline)])]
    dg = {"database": "ODS", "diskgroup": "DATA"}
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: 5% usable file space fires", alert, 0,
                          asm(50 * gb), dg, 0.05, window=0))
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: negative usable space (redundancy not restorable) fires", alert, 0,
                          asm(-20 * gb), dg, -0.02, window=0))
    tests.append(quiet("OracleAsmDiskgroupSpaceLow: 30% usable does not fire", alert, asm(300 * gb), n))
    alert = "OracleAsmDiskOffline"
    tests.append(scenario(pack, "OracleAsmDiskOffline: one disk offline fires", alert, 0, asm(300 * gb, offline=1), dg, 1,
                          window=0))
    tests.append(quiet("OracleAsmDiskOffline: all disks online does not fire", alert, asm(300 * gb), n))

    # Data Guard. Failure first: a primary (or any database without Data Guard) has no
    # V$DATAGUARD_STATS rows, so no lag series: neither alert may read that as "not computed".
    primary = [tl.gauge("oracle_database_info", {**ORA, "database": "ODS", "database_role": "PRIMARY",
                                                 "log_mode": "ARCHIVELOG"}, [(0, 1)]),
               tl.gauge("oracle_up", {**ORA, "database": "ODS"}, [(0, 1)])]
    for name in ("OracleDataGuardLag", "OracleDataGuardLagNotComputed"):
        tests.append(quiet(f"{name}: a primary without Data Guard (no V$DATAGUARD_STATS rows) does not fire",
                           name, primary, n))
    alert = "OracleDataGuardLag"

    def dataguard(lag, computed=1, age=5, kind="transport"):
        lab = {**ORA, "database": "ODSSTBY", "kind": kind}
        return [tl.gauge("oracle_dataguard_lag_seconds", lab, [(0, 2), (H, lag)]),
                tl.gauge("oracle_dataguard_lag_computed", lab, [(0, 1), (H, computed)]),
                tl.gauge("oracle_dataguard_lag_datum_age_seconds", lab, [(0, 3), (H, age)])]
    sb = {"database": "ODSSTBY", "kind": "transport"}
    tests.append(scenario(pack, "OracleDataGuardLag: standby 40 minutes behind in transport fires", alert, 0,
                          dataguard(2400), sb, 2400, window=0))
    tests.append(quiet("OracleDataGuardLag: 2 minutes behind does not fire", alert, dataguard(120), n))
    alert = "OracleDataGuardLagNotComputed"
    tests.append(scenario(pack, "OracleDataGuardLagNotComputed: the lag is NULL (standby lost the primary) fires", alert, 0,
                          dataguard(0, computed=0), sb, 0, window=0))
    tests.append(scenario(pack, "OracleDataGuardLagNotComputed: a lag of 0 s computed from 15-minute-old data fires", alert, 1,
                          dataguard(0, age=900), sb, 900, window=0))
    tests.append(quiet("OracleDataGuardLagNotComputed: lag computed from fresh data does not fire", alert, dataguard(3), n))

    # archive destinations
    alert = "OracleArchiveDestinationError"
    lab = {**ORA, **DB, "dest_name": "LOG_ARCHIVE_DEST_2"}
    tests.append(scenario(pack, "OracleArchiveDestinationError: LOG_ARCHIVE_DEST_2 in ERROR fires", alert, 0,
                          [tl.gauge("oracle_archive_dest_error", lab, [(0, 0), (H, 1)])],
                          {**DB, "dest_name": "LOG_ARCHIVE_DEST_2"}, 1, window=0))
    tests.append(quiet("OracleArchiveDestinationError: a deferred destination (error 0) does not fire", alert,
                       [tl.gauge("oracle_archive_dest_error", lab, [(0, 0)])], n))

    def info(log_mode):
        return tl.gauge("oracle_database_info", {**ORA, "database": "ODS", "database_role": "PRIMARY",
                                                 "log_mode": log_mode}, [(0, 1)])
    tests.append(quiet("OracleArchiveDestinationError: a NOARCHIVELOG database with a destination in ERROR "
                       "does not fire (it archives nowhere)", alert,
                       [tl.gauge("oracle_archive_dest_error", lab, [(0, 0), (H, 1)]), info("NOARCHIVELOG")], n))
    tests.append(scenario(pack, "OracleArchiveDestinationError: the same destination in ERROR on an ARCHIVELOG "
                          "database fires", alert, 0,
                          [tl.gauge("oracle_archive_dest_error", lab, [(0, 0), (H, 1)]), info("ARCHIVELOG")],
                          {**DB, "dest_name": "LOG_ARCHIVE_DEST_2"}, 1, window=0))
    return tests


def _checks(t):
    return t.get("alert_rule_test", [])


def consolidate(tests: list) -> list:
    """Run the cases of one alert side by side in one promtool test group (promtool evaluates
    every rule at every step of every group, so fewer groups is much faster).

    Case i > 0 gets its distinguishing label (database for Oracle alerts, instance for host
    alerts) suffixed with c<i> in its input series, expected labels and rendered annotations.
    Quiet cases are then also checked at the firing cases' check times: they must stay
    silent at every one of them, which is stricter than the single late check they had.
    Cases that do not fit (other check times, other label layout) stay separate groups."""
    out, i = [], 0
    while i < len(tests):
        name = {c["alertname"] for c in _checks(tests[i])}
        j = i
        while j < len(tests) and {c["alertname"] for c in _checks(tests[j])} == name and len(name) == 1:
            j += 1
        block, i = (tests[i:j], j) if j > i else ([tests[i]], i + 1)
        fire = [t for t in block if any(c["exp_alerts"] for c in _checks(t))]
        if not fire or len(block) == 1:
            out += block
            continue
        times = [c["eval_time"] for c in _checks(fire[0])]
        first = next(c for c in _checks(fire[0]) if c["exp_alerts"])["exp_alerts"][0]["exp_labels"]
        key = "database" if "database" in first else "instance"
        val = first[key]
        last = max(int(x[:-1]) for x in times)
        merged = {"name": "", "interval": "1m", "input_series": [], "alert_rule_test": [
            {"eval_time": t, "alertname": next(iter(name)), "exp_alerts": []} for t in times]}
        names, rest = [], []
        for k, t in enumerate(block):
            ok = all(f'{key}="{val}"' in sr["series"] for sr in t["input_series"])
            is_fire = t in fire
            if is_fire:
                ok = ok and [c["eval_time"] for c in _checks(t)] == times
            else:
                ok = ok and int(_checks(t)[0]["eval_time"][:-1]) <= last + 5
            if not ok:
                rest.append(t)
                continue
            suffix = "" if not names else f"c{len(names) + 1}"
            new = val + suffix
            for sr in t["input_series"]:
                merged["input_series"].append({"series": sr["series"].replace(f'{key}="{val}"', f'{key}="{new}"'),
                                               "values": sr["values"]})
            if is_fire:
                for c, m in zip(_checks(t), merged["alert_rule_test"]):
                    for a in c["exp_alerts"]:
                        lab = dict(a["exp_labels"])
                        lab[key] = new
                        ann = {kk: re.sub(rf"(?<![\w-]){re.escape(val)}(?![\w-])", new, vv)
                               for kk, vv in a["exp_annotations"].items()}
                        m["exp_alerts"].append({"exp_labels": lab, "exp_annotations": ann})
            names.append(f"[{key}={new}] " + t["name"])
        merged["name"] = f"{next(iter(name))}: " + " / ".join(names)
        out.append(merged)
        out += rest
    return out


def _rounded(tests: list) -> list:
    """promtool compares samples exactly; rates of float counters carry the last bits of
    accumulated rounding, so recording-rule checks compare the value rounded to 6 decimals
    (round(expr * 1e6) / 1e6: PromQL's round(v, 1e-6) divides by an inexact 1/1e-6)."""
    for t in tests:
        for e in t.get("promql_expr_test", []):
            e["expr"] = f"round(({e['expr']}) * 1e6) / 1e6"
            for smp in e["exp_samples"]:
                smp["labels"] = smp["labels"][smp["labels"].index("{"):]
                smp["value"] = math.floor(smp["value"] * 1e6 + 0.5) / 1e6
    return tests


def _relabel_jobs(tests: list, cfg) -> list:
    """The scenarios are written with the default job names (oracle, dbhost, node); a site's
    config may name its jobs otherwise, and its rules select those names. (Expected alerts get
    the site's names in Pack.expect, before their annotations are rendered.)"""
    mapping = {kind: cfg.job_label(kind) for kind in ("oracle", "dbhost", "node")}
    if all(k == v for k, v in mapping.items()):
        return tests
    for t in tests:
        for sr in t.get("input_series", []):
            for kind, name in mapping.items():
                sr["series"] = sr["series"].replace(f'job="{kind}"', f'job="{name}"')
        for e in t.get("promql_expr_test", []):
            for smp in e["exp_samples"]:
                for kind, name in mapping.items():
                    smp["labels"] = smp["labels"].replace(f'job="{kind}"', f'job="{name}"')
    return tests


def test_files(cfg, alerts_doc: dict) -> dict:
    """{file name: promtool test document}; rule_files point at ../<name>.rules.yml."""
    pack = Pack(cfg, alerts_doc)
    # Recording groups before alert groups at every evaluation: left to itself promtool may evaluate
    # an alert before the recording rule it reads, which then lags one interval (a "for" starts late).
    from mixin import render
    order = [g["name"] for g in render.recording(cfg)["groups"]] + [g["name"] for g in alerts_doc["groups"]]
    head = {"rule_files": ["../recording.rules.yml", "../alerts.rules.yml"], "evaluation_interval": "1m",
            "group_eval_order": order}
    files = {
        "oracle.test.yml": consolidate(oracle_tests(pack)),
        "monitoring.test.yml": monitoring_tests(pack),
        "hangs.test.yml": hang_tests(pack),
        "health.test.yml": consolidate(health_tests(pack)),
        "host.test.yml": consolidate(host_tests(pack)),
        "storage.test.yml": consolidate(storage_tests(pack)),
        "zfs.test.yml": consolidate(zfs_tests(pack)),
        "casestudy.test.yml": _rounded(casestudy_tests(pack)),
        "recording.test.yml": _rounded(recording_tests(pack)),
    }
    return {name: {**head, "tests": _relabel_jobs(tests, cfg)} for name, tests in files.items()}
