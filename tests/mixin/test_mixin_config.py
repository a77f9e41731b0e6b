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
    ("runbook: x\n", "unknown key(s) runbook (known: thresholds, jobs, target_labels, runbook_base_url, grafana_url, flash_luns)"),
    ("flash_luns: 'model=~\"SSD.*\"'\n", "flash_luns: expected a list of PromQL label matchers"),
    ("flash_luns: ['model=~SSD']\n", "flash_luns: expected a list of PromQL label matchers"),
    ("jobs: {oracel: x}\n", "jobs: unknown kind(s) oracel (known: oracle, dbhost, node)"),
    ("jobs: {oracle: []}\n", "jobs.oracle: expected a name or a non-empty list of names"),
    ("target_labels: [job, 'bad-label']\n", "target_labels: expected a list of label names"),
    ("runbook_base_url: https://x.example/runbooks\n", "runbook_base_url: must end with '/'"),
    ("grafana_url: grafana.example\n", "grafana_url: expected an http(s) URL, got 'grafana.example'"),
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
