"""mixin.catalog: every metric and label a rule, a panel or a dashboard variable names is declared by
an exporter (exporters/exporter_common/metrics_catalog.json), recorded by a recording rule or listed
in mixin/external_metrics.py; otherwise generation stops with one line naming the rule or panel and
the name, exit 2. Throw-away rules and panels are added here, in the test, never to the package."""
import json

import pytest

from mixin import catalog, config, generate, promql, render, rules
from mixin.dashboards import build
from mixin.dashboards.common import q, timeseries_panel
from mixin.external_metrics import EXTERNAL, NODE_EXPORTER
from stack.procs import free_port


def _run(capsys, *args):
    code = generate.main(["--check", *args])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


def _with_rule(monkeypatch, expr):
    shipped = rules.alerts

    def alerts(cfg):
        return shipped(cfg) + [dict(alert="ThrowAway", ids=["R2"], layer="oracle", dashboard=None,
                                    expr=expr, summary="s", description="d")]
    monkeypatch.setattr(rules, "alerts", alerts)


def _with_panel(monkeypatch, expr, title="Throw-away panel"):
    shipped = build.BUILDERS["oracle-redo"]
    monkeypatch.setitem(build.BUILDERS, "oracle-redo",
                        lambda cfg: shipped(cfg).with_panel(timeseries_panel(title, "d", "s", [q(expr, "", "A")])))


def test_the_shipped_pack_names_only_declared_metrics_and_labels():
    cfg = config.load()
    boards = build.build_all(cfg)
    assert catalog.check(cfg, render.recording(cfg), render.alerting(cfg), boards) == []


def test_a_rule_naming_an_undeclared_metric_fails_generation(capsys, monkeypatch):
    _with_rule(monkeypatch, "oracle_log_file_sync_nope_seconds > ${R2}")
    code, err = _run(capsys)
    assert code == 2
    assert err == ["generate: error: alert rule ThrowAway: metric oracle_log_file_sync_nope_seconds is declared by "
                   "no exporter (exporters/exporter_common/metrics_catalog.json), recorded by no recording rule "
                   "and not listed in mixin/external_metrics.py"]


def test_a_rule_naming_a_label_the_metric_lacks_fails_generation(capsys, monkeypatch):
    _with_rule(monkeypatch, 'oracle_wait_event_waits_total{evnt="log file sync"} > ${R2}')
    code, err = _run(capsys)
    assert code == 2 and len(err) == 1
    assert err[0].startswith("generate: error: alert rule ThrowAway: label evnt (matcher) is not a label of "
                             "oracle_wait_event_waits_total (its labels: database, event, exporter, inst_id, instance, job, "
                             "site, wait_class)")


def test_a_by_label_no_series_of_the_aggregation_has_fails(capsys, monkeypatch):
    _with_rule(monkeypatch, "max by (database, pdb) (oracle_up) > ${R2}")
    code, err = _run(capsys)
    assert code == 2
    assert err == ["generate: error: alert rule ThrowAway: label pdb (by) is not a label of oracle_up"]


def test_a_panel_naming_an_undeclared_metric_fails_generation(capsys, monkeypatch):
    _with_panel(monkeypatch, 'rate(node_disk_flush_requests_total{instance=~"$host"}[$__rate_interval])')
    code, err = _run(capsys)
    assert code == 2
    assert err == ["generate: error: dashboard oracle-redo panel 'Throw-away panel' query A: metric "
                   "node_disk_flush_requests_total is declared by no exporter (exporters/exporter_common/"
                   "metrics_catalog.json), recorded by no recording rule and not listed in mixin/external_metrics.py"]


def test_a_panel_filtering_a_recorded_series_by_a_label_it_dropped_fails(capsys, monkeypatch):
    # the recorded wait rates keep database, inst_id, event, wait_class: not the exporter's `con_id`
    _with_panel(monkeypatch, 'database_inst_event:oracle_wait_event_waits:rate5m{database=~"$database", con_id="1"}')
    code, err = _run(capsys)
    assert code == 2 and len(err) == 1
    assert "dashboard oracle-redo panel 'Throw-away panel' query A: label con_id (matcher) is not a label of " \
           "database_inst_event:oracle_wait_event_waits:rate5m" in err[0]


def test_a_site_pack_is_checked_too(capsys, monkeypatch, tmp_path):
    _with_rule(monkeypatch, "oracle_nope > ${R2}")
    site = tmp_path / "site.yml"
    site.write_text("thresholds: {R2: {value: 0.004}}\n")
    code = generate.main(["--config", str(site), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "alert rule ThrowAway: metric oracle_nope is declared by no" in err[0]
    assert not (tmp_path / "out").exists()


def test_target_labels_of_a_site_count_as_labels_of_every_series(tmp_path):
    site = tmp_path / "site.yml"
    site.write_text("target_labels: [job, instance, cluster]\n")
    cfg = config.load(site)
    c = catalog.Checker(cfg, render.recording(cfg))
    c.expr("t", 'sum by (cluster, database) (oracle_up{cluster="a"})')
    assert c.problems == []
    c = catalog.Checker(config.load(), render.recording(config.load()))
    c.expr("t", 'sum by (cluster, database) (oracle_up{cluster="a"})')
    assert c.problems == ["t: label cluster (matcher) is not a label of oracle_up (its labels: database, exporter, instance, job, site)",
                          "t: label cluster (by) is not a label of oracle_up"]


def test_label_replace_makes_a_label_within_its_expression():
    cfg = config.load()
    c = catalog.Checker(cfg, render.recording(cfg))
    c.expr("t", 'max by (sid) (label_replace(oracle_instance_info, "sid", "$1", "instance_name", "(.*)"))')
    c.expr("t", 'label_join(oracle_up, "both", "/", "database", "instance")')
    assert c.problems == []
    c.expr("u", 'max by (sid) (oracle_instance_info)')
    c.expr("v", 'label_replace(oracle_up, "sid", "$1", "instance_name", "(.*)")')
    assert c.problems == ["u: label sid (by) is not a label of oracle_instance_info",
                          "v: label instance_name (label_replace source) is not a label of oracle_up"]


def test_dashboard_variables_are_checked():
    cfg = config.load()
    c = catalog.Checker(cfg, render.recording(cfg))
    c.label_values("var", "label_values(oracle_up, database)")
    assert c.problems == []
    c.label_values("var", "label_values(oracle_up, inst_id)")
    c.label_values("var2", "label_values(oracle_upp, database)")
    assert c.problems[0] == "var: label inst_id (label_values) is not a label of oracle_up (its labels: database, exporter, instance, job, site)"
    assert c.problems[1].startswith("var2: metric oracle_upp is declared by no exporter")


def test_histogram_bucket_series_have_le():
    cfg = config.load()
    c = catalog.Checker(cfg, render.recording(cfg))
    c.expr("t", 'histogram_quantile(0.99, sum by (le, event) (rate(oracle_wait_event_latency_seconds_bucket[5m])))')
    assert c.problems == []
    c.expr("u", 'sum by (le) (oracle_wait_event_latency_seconds_count)')
    assert c.problems == ["u: label le (by) is not a label of oracle_wait_event_latency_seconds_count"]


@pytest.mark.parametrize("expr,metrics,labels", [
    ('sum by (job, database) (rate(oracle_redo_size_bytes_total{database=~"$database"}[$__rate_interval]))',
     ["oracle_redo_size_bytes_total"], [("database", "matcher"), ("job", "by"), ("database", "by")]),
    ('a:b:c / ignoring (event, wait_class) d offset 5m > bool 0.5e-3 and on (x) e unless f or g',
     ["a:b:c", "d", "e", "f", "g"], [("event", "ignoring"), ("wait_class", "ignoring"), ("x", "on")]),
    ('x * on (sid) group_left (database, role) y{role=~"lgwr|lg[0-9]+", event="a,b (c)"}',
     ["x", "y"], [("role", "matcher"), ("event", "matcher"), ("sid", "on"), ("database", "group_left"),
                  ("role", "group_left")]),
    ('max_over_time(up{job="x"}[${__range}]) and sum(z) without (cpu) > 1e-9',
     ["up", "z"], [("job", "matcher"), ("cpu", "without")]),
    ('topk by (instance) (1, count_values("v", w)) + inf - NaN',
     ["w"], [("instance", "by")]),
])
def test_the_tokenizer_tells_metrics_from_labels_functions_and_keywords(expr, metrics, labels):
    refs = promql.references(expr)
    assert refs.metrics == metrics
    assert sorted((r.label, r.how) for r in refs.labels) == sorted(labels)


def test_the_allow_list_names_its_sources_and_every_node_metric_is_used():
    cfg = config.load()
    used = set()
    texts = [r["expr"] for g in render.recording(cfg)["groups"] + render.alerting(cfg)["groups"] for r in g["rules"]]
    for board in build.build_all(cfg).values():
        texts += [t["expr"] for p in catalog_panels(board) for t in p.get("targets", [])]
    for t in texts:
        used |= set(promql.references(t).metrics)
    assert sorted(set(NODE_EXPORTER) - used) == []
    for name, e in EXTERNAL.items():
        assert e.source.startswith(("node_exporter, collector `", "Prometheus: ")), name
    catalog_doc = json.loads(catalog.CATALOG.read_text())
    assert not set(EXTERNAL) & {s for m in catalog_doc["metrics"].values() for s in m["series"]}


def catalog_panels(board):
    for p in board.get("panels", []):
        yield p
        yield from p.get("panels", [])


def test_the_node_exporter_allow_list_matches_a_real_node_exporter(tmp_path):
    """The Debian node_exporter on this machine exposes every listed series with exactly the listed
    labels (perf counters only where the machine has hardware counters: skipped when absent)."""
    import shutil
    import subprocess
    import time
    import urllib.request
    from prometheus_client.parser import text_string_to_metric_families
    exe = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if exe is None:
        pytest.skip("no node_exporter installed")
    port = free_port()
    collectors = sorted({e.source.split("`")[1] for e in NODE_EXPORTER.values()})
    proc = subprocess.Popen([exe, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                             *(f"--collector.{c}" for c in collectors)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        text = None
        for _ in range(100):
            try:
                text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert text is not None
    seen: dict[str, set] = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            seen.setdefault(smp.name, set()).update(smp.labels)
    for name, e in NODE_EXPORTER.items():
        if name not in seen and "perf" in e.source:
            continue
        assert name in seen, name
        assert seen[name] == set(e.labels), name
