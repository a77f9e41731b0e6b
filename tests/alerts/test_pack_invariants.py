"""Invariants over the whole alert pack (issue 23), read from the generated alerts/*.yml, their
promtool tests and alerts/alertmanager.yml, so that a future rule cannot bring back what issue 23
fixed. Each check is a function returning its violations; every check is also run on a
deliberately bad synthetic rule or inhibition, which it must report.

1. An inhibition never hides a higher severity under a lower one.
2. An inhibition's `equal` names the exporter target (`instance` and `exporter`, the target in
   probe mode; and `job` except where two exporters of one host measure the same host and the
   symptom is derived from the cause). The one rule across exporters: the same alert of the same
   database from an HA pair's second exporter (`exporter_replica="secondary"`, the pair named by
   `ha_pair` on both exporters' targets).
2b. An inhibition's `equal` names every object label (tablespace, PDB, disk group, device ...) that
   its source and its target both carry: a critical hides the warning of the same object only.
3. An alert on a gauge tolerates one failed scrape: a raw gauge is read through a range
   function (last_over_time, max_over_time, rate ...), directly or in the recording rule it
   reads, or as "the series now, or its last value while its collector has no successful answer
   now" (a wait in progress, whose series vanish when it ends). GAUGE_DEBT (rules that did not
   yet) is empty and stays so.
4. No changing value (state, status, role of a database, reason, the SQL_ID a session runs now) in
   an alert's identity; no measured label (cause, field_note) computed by the expression, nor set to
   different values by rules of one alert and severity (SEPARATE_CONDITIONS: the reasoned few that
   judge conditions holding side by side).
2c. Grouping: a page's group key names its alert and every object it carries (a pager folds a new
   page into an acknowledged incident of the same key); an Oracle alert is grouped on the database,
   never on the exporter that saw it (an HA pair's two exporters make one notification), except an
   exporter's outage (the monitoring layer, OracleExporterLostDatabases, the monitoring-account
   ticket of OracleDown), grouped on the exporter: `instance`, or the `exporter` label in probe mode
   (where `instance` is the database); OracleDown's page names the exporter and the database
   (a second database down is a new page, alertfix #2).
5. No fixed look-back that lets a vanished thing resolve: no count/max/last/present_over_time over
   an hour or more in an alert (a learning window belongs in a recording rule that remembers
   presence, like database:oracle_instances:expected); the ones left are listed in
   LOOKBACK_DEBT (issue 23 items not yet converted), also only shrinking.
6. A presence memory (a recording rule reading its own series) reads itself through
   last_over_time(<itself>[>= 1h]): a rule-evaluation gap of more than 5 minutes does not make it
   forget (rev23 #7).
"""
from __future__ import annotations

import json
import re

from pack import ALERTS, ROOT, RULE_TESTS, alert_rules, load_rule_file

SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}
# changing values never in an alert's labels: the state or role of a thing, and the statement a
# session runs now (a PL/SQL call runs many: rev24 #5)
STATE_LABELS = {"state", "status", "reason", "database_role", "open_mode", "sql_id"}
# labels naming which of an alert's conditions holds (rev23 #9: OracleCommitCpuStarvation's measured
# cause, and the field_note each rule's thresholds give): never computed by the expression, and set
# statically with one value per alert and severity, except where the rules judge conditions that
# hold side by side (or separate objects), not one measured value on either side of a line
MEASURED_LABELS = STATE_LABELS | {"cause", "field_note"}
SEPARATE_CONDITIONS = {
    "OracleScrapeErrors": "a collector failing on every scrape, and errors counted while it succeeds: both can hold",
    "OraclePgaOverAllocation": "PGA allocated over target, and the over-allocation counter growing: two measures",
    "OracleBackupTooOld": "a backup older than the policy, and no backup recorded at all: the second follows the "
                          "first once the control file forgets the set, once, not back and forth",
    "LunHostQueueBacklog": "a host queue backlog and the LUN's queue-full share: two queues, both can hold",
    "LunWriteLatencyHigh": "redo LUNs and data/arch LUNs (role, from configuration): separate objects",
    "OracleAsmDiskgroupSpaceLow": "full within hours (time_to_full) and full now (no_space): the first leads into "
                                  "the second, they overlap while it fills, and the second holds once it is full",
    "OracleDataGuardLagNotComputed": "a lag computed from stale data, then no lag at all once the standby gave up "
                                     "on the primary: one way, not back and forth",
    "MonitoringDataTooOld": "a scrape interval, an exporter's refresh interval, a collector's interval: three "
                            "settings of three places, each its own series (target, database, collector), alertfix #4",
}
# cause -> symptom across two exporters of one host (instance = the host for both jobs)
CROSS_JOB_DERIVED = {("HostRunQueueSaturated", "OracleLgwrInvoluntaryContextSwitches")}
# Labels of an alert's identity that do not name an object: the scope (exporter target, site) and
# what differs between an alert's variants or series without naming another object. Every other
# label an alert carries is an object, which an inhibition between two alerts carrying it compares.
NOT_OBJECT = {"alertname", "severity", "layer", "field_note", "cause", "job", "instance", "exporter", "site",
              "event", "wait_class", "type", "space_basis", "class", "contents", "blocker_kind", "level", "code"}
# issue 23 debt: alerts that read a raw gauge without a range function (one failed scrape makes
# the series stale for a scrape interval and restarts their `for`). Never add to this list.
GAUGE_DEBT: set[str] = set()
LOOKBACK_DEBT: set[str] = set()

_MATCHER = re.compile(r'^\s*([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"(.*)"\s*$')
_METRIC = re.compile(r"(?<![\w:.\"])((?:oracle|dbhost|node|process)_[a-z0-9_]+)\b")
_RECORDED = re.compile(r"(?<![\w:])([a-z_]+:[a-z0-9_]+:[a-z0-9_]+)")
_RANGE_SELECTOR = re.compile(r"[a-zA-Z_:][\w:]*(\{[^}]*\})?\[[^\]]+\]")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# rules.fresh_or_bridged: a series that exists only while its condition holds (a wait in progress),
# read as scraped now or, while its collector has no successful answer now, its last value: it
# survives a failed scrape and does not outlive the condition (issue 23 review #1)
_BRIDGED = re.compile(r'\((?P<sel>[a-z_]+(?:\{[^}]*\})?) or \(last_over_time\((?P=sel)\[[^\]]+\]\) '
                      r'unless on \([^)]*\) oracle_collector_success\{collector="[a-z_]+"\} == 1\)\)')


# ---------------------------------------------------------------- reading the pack
def _recording() -> dict[str, str]:
    doc = load_rule_file(ALERTS / "recording.rules.yml")
    return {r["record"]: r["expr"] for g in doc["groups"] for r in g["rules"]}


def _am() -> dict:
    return load_rule_file(ALERTS / "alertmanager.yml")


def _counters() -> set[str]:
    cat = json.loads((ROOT / "exporters" / "exporter_common" / "metrics_catalog.json").read_text())
    found = {n for n, m in cat["metrics"].items() if m.get("type") in ("counter", "histogram", "summary")}
    assert "oracle_wait_event_waits_total" in found
    return found


def _matches(matchers: list[str], labels: dict) -> bool:
    """Whether an alert with these static labels can match (a matcher on a label the rule does not
    set statically, such as database or instance, is taken as matchable)."""
    for m in matchers:
        name, op, value = _MATCHER.match(m).groups()
        if name not in labels:
            continue
        v = labels[name]
        ok = {"=": v == value, "!=": v != value, "=~": re.fullmatch(value, v) is not None,
              "!~": re.fullmatch(value, v) is None}[op]
        if not ok:
            return False
    return True


def _static(rule: dict) -> dict:
    return {"alertname": rule["alert"], **rule.get("labels", {})}


# ---------------------------------------------------------------- the checks
def _pairs(inh: dict, rules: list[dict]):
    """The (source, target) rules an inhibition can pair: both match, and every label of `equal`
    that both set statically (severity, cause) is the same."""
    sources = [r for r in rules if _matches(inh["source_matchers"], _static(r))]
    targets = [r for r in rules if _matches(inh["target_matchers"], _static(r))]
    for s in sources:
        for t in targets:
            ss, ts = _static(s), _static(t)
            if all(ss.get(k) == ts.get(k) for k in inh.get("equal", []) if k in ss and k in ts):
                yield s, t


def inhibition_severity_violations(rules: list[dict], am: dict) -> list[str]:
    out = []
    for i, inh in enumerate(am.get("inhibit_rules", [])):
        for rs, rt in _pairs(inh, rules):
            s, t = _static(rs), _static(rt)
            if s["alertname"] == t["alertname"] and s.get("cause") == t.get("cause") and s["severity"] == t["severity"]:
                continue    # an alert does not inhibit itself (equal keeps a series apart)
            if SEVERITY_RANK.get(t["severity"], 9) > SEVERITY_RANK.get(s["severity"], -1):
                out.append(f"inhibit_rules[{i}]: {s['alertname']} ({s['severity']}) can hide "
                           f"{t['alertname']} ({t['severity']})")
    return sorted(set(out))


def _ha_secondary_rule(inh: dict, rules: list[dict]) -> bool:
    """The HA pair's rule: the same alert (alertname, severity, cause compared) of the same database
    (site, database compared), from the pair's second exporter only."""
    equal = set(inh.get("equal", []))
    names = {r["alert"] for r in rules if _matches(inh["source_matchers"], _static(r))} | {
        r["alert"] for r in rules if _matches(inh["target_matchers"], _static(r))}
    return ('exporter_replica="secondary"' in inh["target_matchers"]
            and 'exporter_replica!="secondary"' in inh["source_matchers"]
            and 'ha_pair=~".+"' in inh["source_matchers"]
            and {"alertname", "severity", "cause", "site", "database", "ha_pair"} <= equal and len(names) == 1)


def inhibition_target_violations(rules: list[dict], am: dict) -> list[str]:
    out = []
    for i, inh in enumerate(am.get("inhibit_rules", [])):
        equal = set(inh.get("equal", []))
        if _ha_secondary_rule(inh, rules):
            continue
        # probe mode (both sides carry `exporter`: every database is a target of its own, `instance` the
        # database): the exporter label is the exporter target (alertfix #2, OracleExporterLostDatabases)
        probe = ('exporter=~".+"' in inh["source_matchers"] and 'exporter=~".+"' in inh["target_matchers"]
                 and {"job", "exporter"} <= equal)
        if not {"instance", "exporter"} <= equal and not probe:
            out.append(f"inhibit_rules[{i}]: equal {sorted(equal)} does not name the exporter target "
                       "(instance, and exporter in probe mode)")
            continue
        if "job" in equal:
            continue
        sources = {r["alert"] for r in rules if _matches(inh["source_matchers"], _static(r))}
        targets = {r["alert"] for r in rules if _matches(inh["target_matchers"], _static(r))}
        if not {(s, t) for s in sources for t in targets} <= CROSS_JOB_DERIVED:
            out.append(f"inhibit_rules[{i}]: equal {sorted(equal)} lacks job: one exporter's alert "
                       f"({sorted(sources)}) could hide another exporter's ({sorted(targets)})")
    return out


def _identities(tests: list[dict]) -> dict:
    """(alertname, severity, cause) -> the labels its alerts carry, from the promtool tests' firing
    alerts (an alert's identity as it reaches Alertmanager), and alertname -> their union."""
    out: dict = {}
    for t in tests:
        for check in t.get("alert_rule_test", []):
            for exp in check.get("exp_alerts", []):
                labels = exp.get("exp_labels", {})
                for key in ((check["alertname"], labels.get("severity"), labels.get("cause")), check["alertname"]):
                    out.setdefault(key, set()).update(labels)
    return out


def _objects(rule: dict, identities: dict) -> set[str]:
    st = _static(rule)
    labels = identities.get((rule["alert"], st.get("severity"), st.get("cause")), identities.get(rule["alert"], set()))
    return set(labels) - NOT_OBJECT


def inhibition_object_violations(rules: list[dict], am: dict, identities: dict) -> list[str]:
    out = []
    for i, inh in enumerate(am.get("inhibit_rules", [])):
        equal = set(inh.get("equal", []))
        for s, t in _pairs(inh, rules):
            missing = (_objects(s, identities) & _objects(t, identities)) - equal
            if missing:
                out.append(f"inhibit_rules[{i}]: {s['alert']} ({s['labels']['severity']}) can hide "
                           f"{t['alert']} ({t['labels']['severity']}) of another {'/'.join(sorted(missing))}: "
                           f"equal {sorted(equal)} lacks {sorted(missing)}")
    return sorted(set(out))


def _am_matches(matchers: list[str], labels: dict) -> bool:
    """Alertmanager's matching: an absent label is the empty string."""
    for m in matchers:
        name, op, value = _MATCHER.match(m).groups()
        v = labels.get(name, "")
        ok = {"=": v == value, "!=": v != value, "=~": re.fullmatch(value, v) is not None,
              "!~": re.fullmatch(value, v) is None}[op]
        if not ok:
            return False
    return True


def _route(labels: dict, node: dict, group_by=(), receiver=None) -> tuple[list[str], str]:
    """The group_by and receiver of the route Alertmanager picks (first matching child, recursively)."""
    group_by = node.get("group_by", group_by)
    receiver = node.get("receiver", receiver)
    for child in node.get("routes", []):
        if _am_matches(child.get("matchers", []), labels):
            return _route(labels, child, group_by, receiver)
    return list(group_by), receiver


# grouped on the exporter that failed, not on the database (one exporter losing 50 databases is one page)
# alertfix #2: OracleDown is one incident per database of an exporter (a second database down is a new
# page: database is in its key, which the pager check above demands); an exporter losing most of its
# databases is OracleExporterLostDatabases, grouped on the exporter
# (the monitoring account refused: one ticket per exporter and cause, a shared password expiring at once)
GROUPED_BY_EXPORTER = {"OracleDown", "OracleExporterLostDatabases", ("OracleDown", "monitoring_credentials")}
# the same page on several instances of one RAC database (commits hung on every node) is one incident
INSTANCES_OF_ONE_INCIDENT = {"inst_id"}


def grouping_violations(rules: list[dict], am: dict, identities: dict) -> list[str]:
    out = []
    for r in rules:
        st = _static(r)
        ident = identities.get((r["alert"], st.get("severity"), st.get("cause")), identities.get(r["alert"], set()))
        base = {**{k: "x" for k in ident}, **st}
        for mode, labels in (("metrics", {k: v for k, v in base.items() if k != "exporter" or r["alert"] == "ScrapeJobAbsent"}),
                             ("probe", {**base, "exporter": base.get("exporter", "x")} if "instance" in ident else base)):
            group_by, receiver = _route(labels, am["route"])
            g = set(group_by)
            where = f"{r['alert']} ({st['severity']}, {mode} mode): group_by {group_by}"
            if receiver == "pager":
                missing = ({"alertname"} | _objects(r, identities)) - g
                if (r["alert"], st.get("cause")) in GROUPED_BY_EXPORTER:     # a ticket per exporter only
                    missing -= {"database"}
                if st["layer"] == "oracle":
                    missing -= INSTANCES_OF_ONE_INCIDENT
                if missing:
                    out.append(f"{where} lacks {sorted(missing)}: a new page of another object joins an acknowledged one")
            exporter_scoped = (st["layer"] == "monitoring" or r["alert"] in GROUPED_BY_EXPORTER
                               or (r["alert"], st.get("cause")) in GROUPED_BY_EXPORTER)
            if exporter_scoped and "instance" in ident:
                want = "exporter" if mode == "probe" else "instance"
                if want not in g or (mode == "probe" and "instance" in g):
                    out.append(f"{where}: one exporter's outage must be one notification, grouped on {want}")
            elif st["layer"] == "oracle" and receiver in ("pager", "ticket"):
                if g & {"instance", "exporter", "job"} or not {"database", "asm_cluster"} & g:
                    out.append(f"{where}: an Oracle alert is grouped on its database, not on the exporter that saw it")
    return sorted(set(out))


def _strip(expr: str) -> str:
    return _RANGE_SELECTOR.sub(" RANGE ", _STRING.sub('""', _BRIDGED.sub(" BRIDGED ", expr)))


def _raw_gauges(expr: str, recording: dict, counters: set, seen: tuple = ()) -> set[str]:
    """The raw gauges an expression reads outside any range selector, through recording rules."""
    body = _strip(expr)
    found = {m for m in _METRIC.findall(body) if m not in counters and not m.endswith("_total")}
    for rec in _RECORDED.findall(body):
        if rec in recording and rec not in seen:
            found |= _raw_gauges(recording[rec], recording, counters, seen + (rec,))
    return found


def gauge_gap_violations(rules: list[dict], recording: dict, counters: set) -> list[str]:
    out = []
    for r in rules:
        gauges = _raw_gauges(r["expr"], recording, counters)
        if gauges:
            out.append(f"{r['alert']}: reads gauge(s) {sorted(gauges)} without a range function "
                       "(one failed scrape restarts its `for`; use last_over_time(...[3m]))")
    return out


def state_label_violations(rules: list[dict], tests: list[dict]) -> list[str]:
    out = []
    for r in rules:
        for clause in re.findall(r"\b(?:by|group_left|group_right)\s*\(([^)]*)\)", r["expr"]):
            bad = {x.strip() for x in clause.split(",")} & MEASURED_LABELS
            if bad:
                out.append(f"{r['alert']}: keeps {sorted(bad)} in its labels (a changing value restarts `for`)")
        bad = set(r.get("labels", {})) & STATE_LABELS
        if bad:
            out.append(f"{r['alert']}: sets {sorted(bad)} as a label")
        for text in (r["annotations"]["summary"],):
            bad = set(re.findall(r"\$labels\.([a-z_]+)", text)) & MEASURED_LABELS
            if bad:
                out.append(f"{r['alert']}: its summary names $labels.{sorted(bad)[0]}: the value is in its identity")
    for t in tests:
        for check in t.get("alert_rule_test", []):
            for exp in check.get("exp_alerts", []):
                bad = set(exp.get("exp_labels", {})) & STATE_LABELS
                if bad:
                    out.append(f"{check['alertname']}: fires with {sorted(bad)} in its labels in test {t['name']!r}")
    return sorted(set(out))


def static_label_violations(rules: list[dict]) -> list[str]:
    """Rules of one alert and severity that set a measured label (cause, field_note) to different
    values: a value moving between their conditions ends one alert and starts another (a new
    notification, `for` from zero)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rules:
        groups.setdefault((r["alert"], r.get("labels", {}).get("severity")), []).append(r)
    out = []
    for (alert, severity), rs in sorted(groups.items()):
        for label in sorted(MEASURED_LABELS):
            values = {r.get("labels", {}).get(label) for r in rs}
            if len(values) > 1:
                out.append(f"{alert}: its {severity} rules set {label} to {sorted(map(str, values))}: a measured value "
                           "moving between them restarts `for` (name it in the text, or merge the rules)")
    return sorted(set(out))


def _hours(rng: str) -> float:
    mult = {"s": 1 / 3600, "m": 1 / 60, "h": 1, "d": 24, "w": 168}
    return sum(float(n) * mult[u] for n, u in re.findall(r"(\d+)([smhdw])", rng))


def lookback_violations(rules: list[dict]) -> list[str]:
    out = []
    for r in rules:
        expr = r["expr"]
        long = [m for m in re.finditer(r"(count|max|last|present)_over_time\(([^\[]*)\[([^\]]+)\]\)", expr)
                if _hours(m.group(3)) >= 1]
        if long:
            out.append(f"{r['alert']}: judges the present against a fixed {long[0].group(3)} look-back "
                       f"({long[0].group(1)}_over_time): what vanished resolves once the look-back forgets it "
                       "(remember presence in a recording rule instead)")
    return out


# ---------------------------------------------------------------- the shipped pack
def _tests() -> list[dict]:
    return [t for f in sorted(RULE_TESTS.glob("*.test.yml")) for t in load_rule_file(f)["tests"]]


def test_no_inhibition_hides_a_higher_severity():
    assert inhibition_severity_violations(alert_rules(), _am()) == []


def test_every_inhibition_is_scoped_to_the_exporter_target():
    assert inhibition_target_violations(alert_rules(), _am()) == []


def test_every_inhibition_compares_the_objects_source_and_target_share():
    ids = _identities(_tests())
    # the identities are read from the promtool tests: every alert of the pack has a firing test
    assert {r["alert"] for r in alert_rules()} - {"Watchdog"} <= set(ids)
    assert {"container", "tablespace"} <= _objects(
        next(r for r in alert_rules() if r["alert"] == "OracleTablespaceFull"), ids)
    assert inhibition_object_violations(alert_rules(), _am(), ids) == []


def test_group_keys_are_one_incident():
    ids = _identities(_tests())
    assert grouping_violations(alert_rules(), _am(), ids) == []
    # the review's routing (findings 4, 5, 6) is reported
    old = {"route": {"receiver": "ticket", "group_by": ["database", "instance"], "routes": [
        {"matchers": ['layer="monitoring"'], "group_by": ["alertname", "job"], "receiver": "pager"},
        {"matchers": ['alertname="OracleDown"'], "group_by": ["alertname", "job", "instance", "cause"], "receiver": "pager"},
        {"matchers": ['layer="oracle"', 'severity="critical"'], "group_by": ["alertname", "database", "inst_id"],
         "receiver": "pager"}]}}
    found = grouping_violations(alert_rules(), old, ids)
    assert any(v.startswith("OracleDown (critical, probe mode)") for v in found)                       # finding 4
    # alertfix #2 (review "alerts" finding 2): OracleDown grouped per exporter folds a second database's
    # outage into the first one's key
    assert any(v.startswith("OracleDown (critical, metrics mode)") and "lacks ['database']" in v for v in found)
    assert any(v.startswith("OracleLogFileSyncSlow (warning, metrics mode)") for v in found)           # finding 5
    assert any(v.startswith("OracleExporterDown (critical, metrics mode)") for v in found)             # finding 6
    assert any(v.startswith("OracleAsmDiskgroupSpaceLow (critical, metrics mode)") and "asm_cluster" in v for v in found)


def test_alerts_on_gauges_tolerate_one_failed_scrape():
    found = gauge_gap_violations(alert_rules(), _recording(), _counters())
    names = {v.split(":")[0] for v in found}
    assert sorted(names - GAUGE_DEBT) == [], [v for v in found if v.split(":")[0] not in GAUGE_DEBT]
    assert sorted(GAUGE_DEBT - names) == [], "fixed: remove these from GAUGE_DEBT"


def test_no_state_like_label_in_an_alert_identity():
    assert state_label_violations(alert_rules(), _tests()) == []


def test_no_measured_label_splits_an_alert_between_rules():
    names = {v.split(":")[0] for v in static_label_violations(alert_rules())}
    assert sorted(names - set(SEPARATE_CONDITIONS)) == []
    assert sorted(set(SEPARATE_CONDITIONS) - names) == [], "no longer split: remove from SEPARATE_CONDITIONS"


def test_no_fixed_lookback_lets_a_vanished_thing_resolve():
    names = {v.split(":")[0] for v in lookback_violations(alert_rules())}
    assert sorted(names - LOOKBACK_DEBT) == []
    assert sorted(LOOKBACK_DEBT - names) == [], "fixed: remove these from LOOKBACK_DEBT"


def test_issue_23_rules_are_not_in_the_debt_lists():
    fixed = {"OracleDown", "OracleCommitsStuck", "OracleInstanceVanished", "NvmeControllerNotLive",
             "ExporterCrashLooping", "OracleInstanceRestarted", "ScrapeTargetVanished", "OracleDatabaseVanished",
             "LunPathRedundancyLost", "LunAllPathsDown"}
    assert not fixed & (GAUGE_DEBT | LOOKBACK_DEBT)
    shipped = {r["alert"] for r in alert_rules()}
    assert fixed <= shipped
    down = [r for r in alert_rules() if r["alert"] == "OracleDown"]
    assert len(down) == 2 and all(r["expr"].lstrip("(\n").startswith("last_over_time(oracle_up[3m])") for r in down)
    # vmalert (the scale-out stack) rejects keep_firing_for: gaps are bridged by last_over_time
    assert not [r["alert"] for r in alert_rules() if "keep_firing_for" in r]


# ---------------------------------------------------------------- the checks catch a bad rule
BAD_RULES = [
    {"alert": "BadFillingUp", "expr": "oracle_recovery_area_used_bytes / oracle_recovery_area_limit_bytes > 0.8",
     "for": "15m", "labels": {"severity": "warning", "layer": "oracle"}, "annotations": {"summary": "x"}},
    {"alert": "BadArchiverStuck", "expr": "oracle_x_total > 0", "labels": {"severity": "critical", "layer": "oracle"},
     "annotations": {"summary": "x"}},
    {"alert": "BadNvme", "expr": 'max by (job, instance, controller, state) (rate(dbhost_x_total[5m])) > 0',
     "labels": {"severity": "warning", "layer": "storage"}, "annotations": {"summary": "{{ $labels.state }}"}},
    {"alert": "BadVanished", "expr": "count_over_time(oracle_up[1h]) unless on (job, instance, database) oracle_up",
     "labels": {"severity": "warning", "layer": "monitoring"}, "annotations": {"summary": "x"}},
]


def test_the_checks_report_a_deliberately_bad_pack():
    am = {"inhibit_rules": [
        # a ticket hiding a page (the issue's 'recovery area filling' over 'archiver stuck')
        {"source_matchers": ['alertname="BadFillingUp"'], "target_matchers": ['alertname="BadArchiverStuck"'],
         "equal": ["job", "instance", "exporter", "database"]},
        # OracleDown inhibiting on the database alone (the issue's HA pair)
        {"source_matchers": ['alertname="BadArchiverStuck"'], "target_matchers": ['alertname="BadFillingUp"'],
         "equal": ["database"]},
        # a host exporter's outage hiding another exporter's alerts of the host
        {"source_matchers": ['alertname="BadFillingUp"'], "target_matchers": ['layer="storage"'],
         "equal": ["instance", "exporter"]},
        # scoped by instance only: in probe mode (instance = the database) it crosses exporters
        {"source_matchers": ['alertname="BadArchiverStuck"'], "target_matchers": ['alertname="BadFillingUp"'],
         "equal": ["job", "instance", "database"]},
    ]}
    assert inhibition_severity_violations(BAD_RULES, am) == [
        "inhibit_rules[0]: BadFillingUp (warning) can hide BadArchiverStuck (critical)"]
    target = inhibition_target_violations(BAD_RULES, am)
    assert [v.split(":")[0] for v in target] == ["inhibit_rules[1]", "inhibit_rules[2]", "inhibit_rules[3]"]
    # the review's catch-all (finding 10): a critical hiding the warning of another tablespace or disk group
    ids = {("BadTbs", "critical", None): {"database", "container", "tablespace", "contents", "instance", "job"},
           ("BadTbs", "warning", None): {"database", "container", "tablespace", "contents", "instance", "job"},
           ("BadAsm", "critical", "time_to_full"): {"asm_cluster", "diskgroup", "type", "instance", "job"},
           ("BadAsm", "warning", None): {"asm_cluster", "diskgroup", "type", "space_basis", "instance", "job"}}
    variants = [{"alert": a, "labels": {"severity": sev, **({"cause": c} if c else {})}} for a, sev, c in ids]
    catch_all = {"source_matchers": ['severity="critical"'], "target_matchers": ['severity="warning"'],
                 "equal": ["alertname", "job", "instance", "exporter", "database"]}
    assert inhibition_object_violations(variants, {"inhibit_rules": [catch_all]}, ids) == [
        "inhibit_rules[0]: BadAsm (critical) can hide BadAsm (warning) of another asm_cluster/diskgroup: "
        "equal ['alertname', 'database', 'exporter', 'instance', 'job'] lacks ['asm_cluster', 'diskgroup']",
        "inhibit_rules[0]: BadTbs (critical) can hide BadTbs (warning) of another container/tablespace: "
        "equal ['alertname', 'database', 'exporter', 'instance', 'job'] lacks ['container', 'tablespace']"]
    fixed = dict(catch_all, equal=catch_all["equal"] + ["asm_cluster", "diskgroup", "container", "tablespace"])
    assert inhibition_object_violations(variants, {"inhibit_rules": [fixed]}, ids) == []
    # the HA pair's rule crosses exporters on purpose, but only for the same alert of the same database
    ha = {"source_matchers": ['alertname="BadArchiverStuck"', 'exporter_replica!="secondary"', 'ha_pair=~".+"'],
          "target_matchers": ['alertname="BadArchiverStuck"', 'exporter_replica="secondary"', 'ha_pair=~".+"'],
          "equal": ["alertname", "severity", "cause", "site", "database", "ha_pair"]}
    assert inhibition_target_violations(BAD_RULES, {"inhibit_rules": [ha]}) == []
    # unpaired (review: any non-secondary exporter's alert of a same-named database hid the secondary's)
    unpaired = dict(ha, source_matchers=ha["source_matchers"][:2],
                    equal=["alertname", "severity", "cause", "site", "database"])
    assert inhibition_target_violations(BAD_RULES, {"inhibit_rules": [unpaired]}) != []
    assert inhibition_target_violations(BAD_RULES, {"inhibit_rules": [dict(ha, equal=unpaired["equal"])]}) != []
    assert inhibition_target_violations(BAD_RULES, {"inhibit_rules": [dict(ha, equal=["alertname", "severity", "cause"])]}) != []
    gaps = gauge_gap_violations(BAD_RULES[:1], {}, set())
    assert gaps == ["BadFillingUp: reads gauge(s) ['oracle_recovery_area_limit_bytes', 'oracle_recovery_area_used_bytes'] "
                    "without a range function (one failed scrape restarts its `for`; use last_over_time(...[3m]))"]
    fixed = dict(BAD_RULES[0], expr="last_over_time(oracle_recovery_area_used_bytes[3m]) "
                                    "/ last_over_time(oracle_recovery_area_limit_bytes[3m]) > 0.8")
    assert gauge_gap_violations([fixed], {}, set()) == []
    # a wait age: a raw read is flagged (rev23 #1), the fresh-or-bridged read is not; a bridge that
    # is not guarded by the collector's answer (a stale copy outliving the wait) is not recognised
    age = 'oracle_sessions_waiting_longest_seconds{event=~"log file sync"}'
    raw = dict(BAD_RULES[0], expr=f"max by (database) ({age}) > 30")
    assert [v.split(":")[0] for v in gauge_gap_violations([raw], {}, set())] == ["BadFillingUp"]
    bridged = dict(raw, expr=f"max by (database) (({age} or (last_over_time({age}[3m]) unless on (job, instance, "
                             f'database) oracle_collector_success{{collector="sessions"}} == 1))) > 30')
    assert gauge_gap_violations([bridged], {}, set()) == []
    unguarded = dict(raw, expr=f"max by (database) (({age} or (last_over_time({age}[3m]) unless on (job, instance) "
                               "up == 0))) > 30")
    assert gauge_gap_violations([unguarded], {}, set()) != []
    # through a recording rule that reads the gauge directly
    rec = {"database:bad:ratio": "max by (database) (oracle_recovery_area_used_bytes)"}
    assert gauge_gap_violations([dict(fixed, expr="database:bad:ratio > 0.8")], rec, set()) != []
    states = state_label_violations(BAD_RULES, [{"name": "t", "alert_rule_test": [
        {"alertname": "BadNvme", "exp_alerts": [{"exp_labels": {"state": "resetting"}}]}]}])
    assert any("keeps ['state']" in v for v in states) and any("summary" in v for v in states)
    assert any("fires with ['state']" in v for v in states)
    assert [v.split(":")[0] for v in lookback_violations(BAD_RULES)] == ["BadVanished"]
    # rev23 #9: a measured cause in the labels, by rule (static) or by the expression
    starv = [dict(BAD_RULES[0], labels={"severity": "warning", "field_note": "R13"}),
             dict(BAD_RULES[0], labels={"severity": "warning", "field_note": "R13,R14", "cause": "lgwr_cpu_wait"})]
    assert [v.split(":")[0] for v in static_label_violations(starv)] == ["BadFillingUp", "BadFillingUp"]
    assert static_label_violations(starv[:1] + [dict(starv[1], labels={"severity": "critical"})]) == []
    by_cause = dict(BAD_RULES[0], expr="max by (database, cause) (x) > 1")
    assert any("keeps ['cause']" in v for v in state_label_violations([by_cause], []))
    # rev24 #5: the SQL_ID a session runs now in the identity of a long call
    call = dict(BAD_RULES[0], annotations={"summary": "SQL_ID {{ $labels.sql_id }} runs long"})
    assert any("summary" in v for v in state_label_violations([call], [{"name": "t", "alert_rule_test": [
        {"alertname": "BadFillingUp", "exp_alerts": [{"exp_labels": {"sql_id": "7h35uxf5uhmm1"}}]}]}]))


# ---------------------------------------------------------------- rev23 #7: memories outlive an evaluation gap
def memory_recall_violations(recording: dict[str, str]) -> list[str]:
    """A recording rule that reads its own series (a presence memory) reads it only through
    last_over_time(<itself>[d]) with d of an hour or more: as an instant vector (5 minutes of
    look-back) a rule-evaluation gap (Prometheus restart with a long WAL replay, vmalert restart)
    of more than 5 minutes made it forget everything it remembered."""
    out = []
    for name, expr in recording.items():
        for m in re.finditer(rf"(?<![\w:]){re.escape(name)}(?![\w:])", expr):
            before, after = expr[:m.start()], expr[m.end():]
            rng = re.match(r"\[([^\]]+)\]\)", after)
            if not (before.endswith("last_over_time(") and rng and _hours(rng.group(1)) >= 1):
                out.append(f"{name}: reads itself at offset {m.start()} without last_over_time(...[>= 1h]) "
                           "(a rule-evaluation gap of more than 5 minutes forgets it)")
    return out


def test_every_memory_outlives_an_evaluation_gap_of_an_hour():
    rec = _recording()
    memories = [n for n, e in rec.items() if re.search(rf"(?<![\w:]){re.escape(n)}(?![\w:])", e)]
    assert len(memories) >= 7, memories          # targets, databases, instances, PDBs, disk groups, paths ...
    assert memory_recall_violations(rec) == []
    bad = {"target:bad:expected": "group by (job, instance) (up)\nor\nmax by (job, instance) (target:bad:expected)",
           "target:short:expected": "up or max by (job) (last_over_time(target:short:expected[10m]))"}
    assert [v.split(":")[0] + ":" + v.split(":")[1] for v in memory_recall_violations(bad)] == [
        "target:bad", "target:short"]
