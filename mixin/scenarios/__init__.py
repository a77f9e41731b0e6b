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

The package has one module per rule section, matching alerts/tests/*.test.yml (oracle, host,
storage, zfs, monitoring, hangs, health, casestudy, recording, memory), the shared helpers in
mixin.scenarios.common, and here the assembly of the test files.
"""
import math
import re

from mixin.scenarios.blind import blind_tests
from mixin.scenarios.casestudy import casestudy_tests
from mixin.scenarios.common import Pack
from mixin.scenarios.hangs import hang_tests
from mixin.scenarios.fleet import fleet_tests
from mixin.scenarios.health import health_tests
from mixin.scenarios.host import host_tests
from mixin.scenarios.memory import memory_tests
from mixin.scenarios.monitoring import monitoring_tests
from mixin.scenarios.oracle import oracle_tests
from mixin.scenarios.recording import recording_tests
from mixin.scenarios.signals import signal_tests
from mixin.scenarios.storage import storage_tests
from mixin.scenarios.zfs import zfs_tests


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
        "signals.test.yml": consolidate(signal_tests(pack)),
        "blind.test.yml": blind_tests(pack),
        "fleet.test.yml": fleet_tests(pack),
    }
    out = {name: {**head, "tests": _relabel_jobs(tests, cfg)} for name, tests in files.items()}
    # the presence memories on a recorded history (an evaluation gap): no rule files, each check
    # names its rule's expression (mixin.scenarios.memory)
    out["memory.test.yml"] = {"rule_files": [], "evaluation_interval": "1m",
                              "tests": _relabel_jobs(memory_tests(pack), cfg)}
    return out
