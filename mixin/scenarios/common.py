"""Shared by every section: the scenario constants, the renderer of the Prometheus template
subset the rules use, the series builders (Timeline) and the test assembly (Pack, scenario, quiet)."""
import re

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
    if pipe == "humanize1024":
        if abs(v) <= 1:
            return go_g(v, 4)
        prefix = ""
        for p in ("ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"):
            if abs(v) < 1024:
                break
            prefix = p
            v /= 1024
        return go_g(v, 4) + prefix
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
            return labels.get(m.group(2), "")     # Go templates: a missing key of $labels is ""
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

    def expect(self, alert, index, labels, value, queries: dict | None = None):
        """queries: {template text: what it renders to}, for the `query` templates render() cannot
        evaluate (promtool evaluates them against the test's series)."""
        rule = self.rules[alert][index]
        lab = {**self.target(source_kind(rule["expr"]), labels), **rule["labels"]}
        if lab.get("job") in ("oracle", "dbhost", "node"):     # the site's job names (see _relabel_jobs)
            lab["job"] = self.cfg.job_label(lab["job"])
        texts = dict(rule["annotations"])
        for tpl, out in (queries or {}).items():
            texts = {k: v.replace(tpl, out) for k, v in texts.items()}
        ann = {k: render(v, lab, value) for k, v in texts.items()}
        return {"exp_labels": lab, "exp_annotations": ann}

    def for_min(self, alert, index=0):
        d = self.rules[alert][index].get("for", "0s")
        mult = {"s": 1 / 60, "m": 1, "h": 60}
        return int(sum(int(n) * mult[u] for n, u in re.findall(r"(\d+)([smh])", d)))


def scenario(pack, name, alert, index, series, labels, value, *, window=5, minutes=None, extra=None, queries=None):
    """A firing case: bad from minute H on. The condition cannot hold before H+1, so the alert
    is not firing at H+for; once the windows hold only bad data (H+window) it holds, so the
    alert fires by H+window+for."""
    f = pack.for_min(alert, index)
    fire_at = H + f + window + 1
    checks = []
    if f > 0:
        checks.append({"eval_time": f"{H + f}m", "alertname": alert, "exp_alerts": []})
    checks.append({"eval_time": f"{fire_at}m", "alertname": alert,
                   "exp_alerts": [pack.expect(alert, index, labels, value, queries)] + (extra or [])})
    return {"name": name, "interval": "1m", "input_series": series, "alert_rule_test": checks}


def quiet(name, alert, series, at):
    return {"name": name, "interval": "1m", "input_series": series,
            "alert_rule_test": [{"eval_time": f"{at}m", "alertname": alert, "exp_alerts": []}]}


def length(pack, alert, index=0, window=5):
    return H + pack.for_min(alert, index) + window + 3


def starvation_cause(pack, which: str, value: float = 0.0) -> dict:
    """{OracleCommitCpuStarvation's cause template: what it renders to} (rev23 #9: the measured cause
    is read by the text, a query render() cannot evaluate): lgwr, session or none."""
    desc = pack.rules["OracleCommitCpuStarvation"][0]["annotations"]["description"]
    tpl = desc.split("Cause measured now: ", 1)[1]
    lgwr, session = re.findall(r"\{\{ with \. \| first \}\}(.*?)\{\{ end \}\}", tpl)
    none = re.search(r"\{\{ else \}\}(none .*?)\{\{ end \}\}", tpl).group(1)
    text = {"lgwr": lgwr, "session": session, "none": none}[which]
    return {tpl: text.replace("{{ .Value | humanizeDuration }}", go_value(value, "humanizeDuration"))}

