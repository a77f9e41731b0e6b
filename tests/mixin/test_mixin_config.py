"""mixin.config: the defaults the repository ships, and a site's override file."""
import pytest

from mixin import config
from mixin.config import ConfigError


def test_defaults():
    cfg = config.load()
    assert cfg.selector("oracle") == 'job="oracle"'
    assert cfg.selector("dbhost", "node") == 'job=~"dbhost|node"'
    assert cfg.runbook_url("OracleDown") == "http://127.0.0.1:19199/docs/runbooks/OracleDown.md"
    assert cfg.dashboard_url("oracle-redo") is None          # no Grafana configured: no link
    assert cfg.th("R1").value == 0.002
    with pytest.raises(ConfigError, match=r"thresholds.yaml: no threshold with id 'R17'"):
        cfg.th("R17")                                          # exact ids only, no guessing


def test_a_site_overrides_jobs_labels_and_urls(tmp_path):
    (tmp_path / "th.yaml").write_text((config.thresholds_mod.DEFAULT_PATH).read_text().replace("value: 0.002\n", "value: 0.003\n", 1))
    site = tmp_path / "site.yml"
    site.write_text("thresholds: th.yaml\n"
                    "jobs: {oracle: oracle-prod, node: [node, node.exporter]}\n"
                    "target_labels: [job, instance, site]\n"
                    "runbook_base_url: https://git.example.com/dba/mon/blob/main/docs/runbooks/\n"
                    "grafana_url: https://grafana.example.com/\n")
    cfg = config.load(site)
    assert cfg.th("R1").value == 0.003
    assert cfg.selector("oracle") == 'job="oracle-prod"'
    assert cfg.selector("dbhost") == 'job="dbhost"'
    assert cfg.selector("node", "dbhost") == r'job=~"node|node\\.exporter|dbhost"'
    assert cfg.job_label("node") == "node"
    assert cfg.by("instance", "device") == "job, instance, site, device"
    assert cfg.runbook_url("X") == "https://git.example.com/dba/mon/blob/main/docs/runbooks/X.md"
    assert cfg.dashboard_url("host-cpu", "?var-host=a") == "https://grafana.example.com/d/host-cpu?var-host=a"


@pytest.mark.parametrize("text,message", [
    ("runbook: x\n", "site.yml: runbook: unknown key (did you mean runbook_base_url? known: thresholds, jobs, target_labels, runbook_base_url, grafana_url, fleetview_url, flash_luns, oracle_filesystems)"),
    ("oracle_filesystems: ['mountpoint=/u01']\n", "oracle_filesystems: expected PromQL label matchers"),
    ("oracle_filesystems: []\n", "oracle_filesystems: expected PromQL label matchers"),
    ("flash_luns: 'model=~\"SSD.*\"'\n", "flash_luns: expected a list of PromQL label matchers"),
    ("flash_luns: ['model=~SSD']\n", "flash_luns: expected a list of PromQL label matchers"),
    ("jobs: {oracel: x}\n", "site.yml: jobs.oracel: unknown kind (did you mean oracle? known: oracle, dbhost, node)"),
    ("jobs: {oracle: []}\n", "jobs.oracle: expected a name or a non-empty list of names"),
    ("target_labels: [job, 'bad-label']\n", "target_labels: expected a list of label names"),
    ("runbook_base_url: https://x.example/runbooks\n", "runbook_base_url: must end with '/'"),
    ("grafana_url: grafana.example\n", "grafana_url: expected an http(s) URL, got 'grafana.example'"),
    ("fleetview_url: fleetview.example\n", "fleetview_url: expected an http(s) URL, got 'fleetview.example'"),
    ("thresholds: missing.yaml\n", "missing.yaml: cannot read: No such file or directory"),
    ("[1, 2]\n", "expected a mapping of thresholds, jobs"),
])
def test_override_errors_name_the_file_and_key(tmp_path, text, message):
    site = tmp_path / "site.yml"
    site.write_text(text)
    with pytest.raises(ConfigError) as exc:
        config.load(site)
    assert message in str(exc.value)
    assert str(tmp_path) in str(exc.value)


def test_a_site_names_the_file_systems_oracle_writes_to(tmp_path):
    """Issue 23: the HostFilesystem* rules read node_filesystem_* of the mounts the site names."""
    from mixin import render
    site = tmp_path / "site.yml"
    site.write_text("oracle_filesystems: 'mountpoint=~\"/oradata|/orafra\"'\n")
    cfg = config.load(site)
    assert cfg.oracle_fs() == 'mountpoint=~"/oradata|/orafra"'
    rules = {r["alert"]: r for g in render.alerting(cfg)["groups"] for r in g["rules"]}
    for name in ("HostFilesystemFillingUp", "HostFilesystemFull", "HostFilesystemUnreadable"):
        assert 'job="node", mountpoint=~"/oradata|/orafra"}' in rules[name]["expr"], name
        assert "/u[0-9]" not in rules[name]["expr"]
    default = {r["alert"]: r for g in render.alerting(config.load())["groups"] for r in g["rules"]}
    assert 'mountpoint=~"/u[0-9][0-9](/.*)?' in default["HostFilesystemFull"]["expr"]
    assert 'fstype!~"tmpfs|ramfs|squashfs|overlay"' in default["HostFilesystemFull"]["expr"]


# ---------------------------------------------------------------- a site changes single thresholds

def _site(tmp_path, text):
    site = tmp_path / "site.yml"
    site.write_text(text)
    return site


def test_a_site_changes_one_threshold_and_everything_else_is_shipped(tmp_path):
    shipped = config.load().thresholds
    cfg = config.load(_site(tmp_path, "thresholds:\n  R2: {value: 0.004}\n"))
    assert cfg.th("R2").value == 0.004
    assert cfg.th("R2").for_ == shipped["R2"].for_ == "10m"          # the fields it does not name: shipped
    assert cfg.th("R2").noise_floor == shipped["R2"].noise_floor
    assert {k: v for k, v in cfg.thresholds.items() if k != "R2"} == {k: v for k, v in shipped.items() if k != "R2"}
    assert list(cfg.thresholds) == list(shipped)                      # every shipped id, in file order
    assert cfg.thresholds_file == config.thresholds_mod.DEFAULT_PATH


def test_a_site_changes_single_fields(tmp_path):
    cfg = config.load(_site(tmp_path, "thresholds:\n"
                                      "  R2: {value: 0.004, for: 15m}\n"
                                      "  R1:\n    severity: critical\n    noise_floor: {waits: {value: 5}}\n"))
    assert (cfg.th("R2").value, cfg.th("R2").for_, cfg.th("R2").severity) == (0.004, "15m", "warning")
    assert cfg.th("R1").value == 0.002 and cfg.th("R1").severity == "critical"
    assert cfg.th("R1").floor("waits").value == 5 and cfg.th("R1").floor("waits").unit == "waits/s"


def test_per_entry_changes_survive_a_release_that_adds_or_drops_other_thresholds(tmp_path):
    """A site file written for an older release names R2 only; the shipped file it applies to
    gained an entry and lost another: the new one takes its shipped value, R2 the site's."""
    import yaml
    doc = yaml.safe_load(config.thresholds_mod.DEFAULT_PATH.read_text())
    new = dict(next(t for t in doc["thresholds"] if t["id"] == "M5_hugepages"), id="M5_new", value=7)
    doc["thresholds"] = [t for t in doc["thresholds"] if t["id"] != "M5_hugepages"] + [new]
    base = tmp_path / "thresholds.yaml"
    base.write_text(yaml.safe_dump(doc, sort_keys=False))
    cfg = config.load(_site(tmp_path, "thresholds: {R2: {value: 0.004}}\n"), thresholds_file=base)
    assert cfg.th("R2").value == 0.004
    assert cfg.th("M5_new").value == 7
    assert "M5_hugepages" not in cfg.thresholds
    # what the pack then misses is a ConfigError naming the base file and the id, not a KeyError
    with pytest.raises(ConfigError, match=r"thresholds.yaml: no threshold with id 'M5_hugepages' \(a thresholds "
                                          r"file replaces alerts/thresholds.yaml in full"):
        cfg.thresholds["M5_hugepages"]


@pytest.mark.parametrize("text,message", [
    ("thresholds:\n  R2: {valeu: 0.004}\n",
     "site.yml: thresholds.R2.valeu: unknown field (known: value, for, severity, noise_floor)"),
    ("thresholds:\n  R2: {op: '<'}\n",
     "site.yml: thresholds.R2.op: cannot be changed by a site (known: value, for, severity, noise_floor)"),
    ("thresholds:\n  R17: {value: 1}\n", "site.yml: thresholds.R17: unknown threshold id (did you mean R17_unmeasured, R17_write, R17_read? every id: docs/thresholds.md)"),
    ("thresholds:\n  R2: {value: fast}\n", "site.yml: thresholds.R2.value: must be a number, got 'fast'"),
    ("thresholds:\n  R2: {value: true}\n", "site.yml: thresholds.R2.value: must be a number, got True"),
    ("thresholds:\n  R2: {value: -0.001}\n", "site.yml: thresholds.R2.value: must not be negative, got -0.001"),
    ("thresholds:\n  ops_oracle_down: {value: 2}\n",
     "site.yml: thresholds.ops_oracle_down.value: a boolean threshold is 0 or 1, got 2"),
    ("thresholds:\n  R2: {for: 10 minutes}\n", "site.yml: thresholds.R2.for: not a Prometheus duration: '10 minutes'"),
    ("thresholds:\n  R2: {severity: page}\n", "site.yml: thresholds.R2.severity: expected one of critical, warning, info"),
    ("thresholds:\n  R2: 0.004\n", "site.yml: thresholds.R2: expected a mapping of the fields to change"),
    ("thresholds:\n  R1: {noise_floor: {wait: {value: 2}}}\n",
     "site.yml: thresholds.R1.noise_floor.wait: unknown noise floor (known: waits)"),
    ("thresholds:\n  R1: {noise_floor: {waits: {value: 2, unit: x}}}\n",
     "site.yml: thresholds.R1.noise_floor.waits.unit: unknown field (known: value)"),
    ("thresholds:\n  R1: {noise_floor: {waits: {value: -2}}}\n",
     "site.yml: thresholds.R1.noise_floor.waits.value: must not be negative"),
    ("thresholds: [R2]\n", "site.yml: thresholds: expected a thresholds file name or a mapping of threshold id"),
    ("thresholds:\n  R2: {value: 0.004}\n  R1: {value: 0.003}\n  R2: {for: 5m}\n",
     "site.yml: line 4: duplicate key 'R2' (first at line 2)"),
    ("thresholds:\n  R2: {value: 0.004, value: 0.003}\n", "site.yml: line 2: duplicate key 'value' (first at line 2)"),
    ("grafana_url: https://g.example\ngrafana_url: https://h.example\n",
     "site.yml: line 2: duplicate key 'grafana_url' (first at line 1)"),
    ("jobs: {oracle: a\n", "site.yml: line 2: not valid YAML"),
])
def test_site_threshold_errors_are_one_line_with_the_key_path(tmp_path, text, message):
    with pytest.raises(ConfigError) as exc:
        config.load(_site(tmp_path, text))
    assert message in str(exc.value)
    assert str(exc.value).startswith(str(tmp_path / "site.yml") + ":")
    assert "\n" not in str(exc.value)


def test_duplicate_keys_in_a_thresholds_file(tmp_path):
    text = config.thresholds_mod.DEFAULT_PATH.read_text()
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip() == "- id: R2")
    value_line = next(i for i in range(at, len(lines)) if lines[i].strip().startswith("value:"))
    lines.insert(value_line + 1, "    value: 0.009\n")
    bad = tmp_path / "t.yaml"
    bad.write_text("".join(lines))
    with pytest.raises(ConfigError) as exc:
        config.load(thresholds_file=bad)
    assert str(exc.value) == f"{bad}: line {value_line + 2}: duplicate key 'value' (first at line {value_line + 1})"


def test_strict_loader_keeps_merge_keys_and_plain_yaml():
    from mixin import strict_yaml
    assert strict_yaml.loads("a: &x {b: 1}\nc:\n  <<: *x\n  d: 2\n") == {"a": {"b": 1}, "c": {"b": 1, "d": 2}}
    with pytest.raises(strict_yaml.YamlError, match=r"^s: line 2: duplicate key 'a' \(first at line 1\)$"):
        strict_yaml.loads("a: 1\na: 2\n", "s")


def test_the_full_replacement_form_still_works(tmp_path):
    (tmp_path / "th.yaml").write_text(config.thresholds_mod.DEFAULT_PATH.read_text().replace(
        "value: 0.005\n", "value: 0.006\n", 1))
    cfg = config.load(_site(tmp_path, "thresholds: th.yaml\n"))
    assert cfg.thresholds_file == tmp_path / "th.yaml"
    assert cfg.th("R2").value == 0.006


def test_alerts_link_to_the_grafana_free_pages_where_grafana_is_absent(tmp_path):
    """Issue 25: without grafana_url, an alert about one database links to its capacity page and
    every other alert to the fleet wallboard, on the oracle-fleetview of `make run` by default;
    with grafana_url, dashboard_url instead; fleetview_url: null, neither."""
    from mixin import render
    from stack import run, webhook

    def links(cfg):
        rules = {r["alert"]: r["annotations"] for g in render.alerting(cfg)["groups"] for r in g["rules"]}
        return {a: {k: v for k, v in ann.items() if k.endswith("_url") and k != "runbook_url"}
                for a, ann in rules.items()}

    default = links(config.load())
    assert config.DEFAULT_FLEETVIEW_URL == webhook.DEFAULT_FLEETVIEW == f"http://127.0.0.1:{run.DEFAULT_PORTS['fleetview']}/"
    assert default["OracleLogFileParallelWriteSlow"] == {
        "capacity_url": "http://127.0.0.1:19180/capacity?database={{ $labels.database }}"}
    assert default["LunWriteLatencyHigh"] == {"wallboard_url": "http://127.0.0.1:19180/wallboard"}
    assert all(len(v) == 1 for v in default.values()), [a for a, v in default.items() if len(v) != 1]
    site = tmp_path / "site.yml"
    site.write_text("fleetview_url: https://fv.example.com/dba\n")
    assert links(config.load(site))["OracleDown"] == {
        "capacity_url": "https://fv.example.com/dba/capacity?database={{ $labels.database }}"}
    site.write_text("grafana_url: https://grafana.example.com\n")
    assert all("capacity_url" not in v and "wallboard_url" not in v for v in links(config.load(site)).values())
    site.write_text("fleetview_url: null\n")
    assert all(v == {} for v in links(config.load(site)).values())

