"""The promtool rule tests (alerts/tests/*.test.yml, rendered from mixin.scenarios): they pass,
every rule has a firing, a quiet and a pending case, the case-study profiles raise the expert's
findings and nothing else, and a wrong threshold, floor or `for` makes them fail.

promtool runs as the real Debian binary."""
import shutil
import subprocess

import pytest
import yaml

from mixin import config, render
from pack import ALERTS, RULE_TESTS, alert_rules, load_rule_file

RULE_TEST_FILES = sorted(p.name for p in RULE_TESTS.glob("*.test.yml"))


@pytest.fixture(scope="module")
def rule_test_runs():
    """Start promtool on every test file at once (they are independent); each test waits for its own."""
    procs = {name: subprocess.Popen(["promtool", "test", "rules", name], cwd=RULE_TESTS,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for name in RULE_TEST_FILES}
    yield procs
    for p in procs.values():
        if p.poll() is None:
            p.kill()
            p.wait()


def test_rule_test_files_exist():
    assert RULE_TEST_FILES == ["blind.test.yml", "casestudy.test.yml", "fleet.test.yml", "hangs.test.yml", "health.test.yml", "host.test.yml", "memory.test.yml",
                               "monitoring.test.yml", "oracle.test.yml", "recording.test.yml", "signals.test.yml",
                               "storage.test.yml", "zfs.test.yml"]


@pytest.mark.parametrize("name", RULE_TEST_FILES)
def test_promtool_rule_tests(rule_test_runs, name):
    out, _ = rule_test_runs[name].communicate(timeout=900)
    assert rule_test_runs[name].returncode == 0, out
    assert "SUCCESS" in out and "FAILED" not in out, out


def test_every_alert_rule_has_firing_and_quiet_scenarios():
    """Every rule (alert name + rule index) is expected to fire in some test, and every alert
    name is expected silent in some test, with `for` proven by a pending check."""
    fired, quiet, pending = set(), set(), set()
    for name in RULE_TEST_FILES:
        doc = load_rule_file(RULE_TESTS / name)
        for t in doc["tests"]:
            for c in t.get("alert_rule_test", []):
                if c["exp_alerts"]:
                    for a in c["exp_alerts"]:
                        fired.add((c["alertname"], a["exp_labels"]["severity"], a["exp_labels"].get("field_note"),
                                   a["exp_labels"].get("cause"), a["exp_labels"].get("role")))
                else:
                    quiet.add(c["alertname"])
                    if any(x["exp_alerts"] for x in t["alert_rule_test"] if x["alertname"] == c["alertname"]):
                        pending.add(c["alertname"])
    for r in alert_rules():
        key = (r["alert"], r["labels"]["severity"], r["labels"]["field_note"], r["labels"].get("cause"))
        assert any(f[:4] == key for f in fired), f"no scenario makes {key} fire"
        assert r["alert"] in quiet or r["alert"] == "Watchdog", f"no scenario where {r['alert']} stays silent"
        if "for" in r:
            assert r["alert"] in pending, f"no scenario checks {r['alert']} is still pending before its `for`"


def test_case_study_profiles():
    """The 'before' profile raises the expert's findings; the 'after' profile raises none."""
    doc = yaml.safe_load((RULE_TESTS / "casestudy.test.yml").read_text())
    before, after = doc["tests"][0], doc["tests"][1]
    raised = {c["alertname"] for c in before["alert_rule_test"] if c["exp_alerts"]}
    notes = {n for c in before["alert_rule_test"] for a in c["exp_alerts"] for n in a["exp_labels"]["field_note"].split(",")}
    assert {"R1", "R2", "R3", "R4", "R10", "R11", "R13", "R14", "R15"} <= notes
    assert "OracleLogFileParallelWriteSlow" in raised and "OracleLogFileSyncSlow" in raised
    assert all(not c["exp_alerts"] for c in after["alert_rule_test"])
    assert {c["alertname"] for c in after["alert_rule_test"]} >= raised
    descs = {c["alertname"]: c["exp_alerts"][0]["exp_annotations"]["description"]
             for c in before["alert_rule_test"] if c["exp_alerts"]}
    assert "'log file parallel write' averages 11.8ms" in descs["OracleLogFileParallelWriteSlow"]
    assert "'log file sync' (commit wait) averages 26.45ms" in descs["OracleLogFileSyncSlow"]
    assert descs["OracleLgwrInvoluntaryContextSwitches"].startswith("30% of the context switches of LGWR")
    assert descs["OracleLogSwitchesTooFrequent"].startswith("60 log switches in the last hour")
    assert "averages 14.65ms more than" in descs["OracleCommitCpuStarvation"]


def _run_mutated(tmp_path, mutate, test_file, group_prefix):
    """Render the rules from a mutated copy of thresholds.yaml and run the committed test
    groups of `test_file` whose name starts with `group_prefix` against them."""
    raw = yaml.safe_load((ALERTS / "thresholds.yaml").read_text())
    mutate({t["id"]: t for t in raw["thresholds"]})
    th_file = tmp_path / "thresholds.yaml"
    th_file.write_text(yaml.safe_dump(raw, sort_keys=False))
    cfg = config.load(thresholds_file=th_file)
    (tmp_path / "alerts.rules.yml").write_text(render.dump_yaml(render.alerting(cfg), ""))
    shutil.copy(ALERTS / "recording.rules.yml", tmp_path / "recording.rules.yml")
    (tmp_path / "tests").mkdir()
    doc = yaml.safe_load((RULE_TESTS / test_file).read_text())
    doc["tests"] = [t for t in doc["tests"] if t["name"].startswith(group_prefix)]
    assert doc["tests"], group_prefix
    (tmp_path / "tests" / test_file).write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 20))
    res = subprocess.run(["promtool", "test", "rules", test_file], cwd=tmp_path / "tests",
                         capture_output=True, text=True, timeout=120)
    return res.returncode, (res.stdout + res.stderr).replace(" ", "")


@pytest.mark.slow
def test_unmutated_groups_pass(tmp_path):
    rc, out = _run_mutated(tmp_path, lambda t: None, "oracle.test.yml", "OracleLogBufferSpaceWaits")
    assert rc == 0, out


@pytest.mark.slow
def test_rule_tests_detect_a_wrong_threshold(tmp_path):
    """R1 at 20 ms: the case-study 'before' profile (11.8 ms) no longer raises R1."""
    def mutate(t):
        t["R1"]["value"] = 0.02
    rc, out = _run_mutated(tmp_path, mutate, "casestudy.test.yml", "case study BEFORE")
    assert rc == 1
    assert "alertname:OracleLogFileParallelWriteSlow" in out and "got:[]" in out


@pytest.mark.slow
def test_rule_tests_detect_a_missing_noise_floor(tmp_path):
    """R3's floor lowered to 0.001/s: the 'one wait every 3 minutes' case (database ODSc3) now fires."""
    def mutate(t):
        t["R3"]["noise_floor"]["rate"]["value"] = 0.001
    rc, out = _run_mutated(tmp_path, mutate, "oracle.test.yml", "OracleLogBufferSpaceWaits")
    assert rc == 1
    got = out.split("got:", 1)[1]
    assert 'database="ODSc3"' in got or "database:ODSc3" in got, out


def test_rule_tests_detect_a_shortened_for(tmp_path):
    """R2 with `for: 1m`: the pending check at H + 10m finds the alert already firing."""
    def mutate(t):
        t["R2"]["for"] = "1m"
    rc, out = _run_mutated(tmp_path, mutate, "oracle.test.yml", "OracleLogFileSyncSlow")
    assert rc == 1
    assert "alertname:OracleLogFileSyncSlow" in out and "time:15m" in out and "exp:[]" in out, out
