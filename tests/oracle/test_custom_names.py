"""Every name the exporter prints for custom metrics is checked before start.

The failure the on-call engineer fears: one bad name in one custom definition makes the
whole /metrics unparsable, and Prometheus loses every database's series; or two definitions
silently drop or duplicate series. Each of these is one line at start, exit status 2.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from exporter_common.config import ConfigError, Fields
from oracle_exporter.collectors import custom_sql
from oracle_exporter.config import Settings, load_config
from oracle_exporter.custom import CustomQuery, Field, exporter_names, parse_custom
from oracle_exporter.snapshot import Snapshot

ROOT = Path(__file__).resolve().parents[2]


def config(tmp_path: Path, body: str, labels: str = "{env: prod}") -> str:
    pw = tmp_path / "pw"
    pw.write_text("secret\n")
    text = textwrap.dedent(f"""
        databases:
          - name: prod1
            dsn: h:1521/S
            user: mon
            password_file: {pw}
            labels: {labels}
        """) + textwrap.dedent(body)
    path = tmp_path / "oracle-exporter.yml"
    path.write_text(text)
    return str(path)


def refused(tmp_path: Path, body: str, labels: str = "{env: prod}") -> str:
    with pytest.raises(ConfigError) as err:
        load_config(config(tmp_path, body, labels))
    text = str(err.value)
    assert "\n" not in text
    return text


# --------------------------------------------------------------------------- a trailing newline

def test_metric_name_ending_in_a_newline_is_refused(tmp_path):
    text = refused(tmp_path, 'custom_metrics: [{name: a, sql: "SELECT 1 v FROM DUAL", '
                             'metrics: [{column: v, name: "app_orders\\n"}]}]\n')
    assert "not a valid Prometheus metric name" in text


def test_custom_label_ending_in_a_newline_is_refused(tmp_path):
    text = refused(tmp_path, 'custom_metrics: [{name: a, sql: "SELECT 1 v, 2 s FROM DUAL", labels: ["s\\n"], '
                             'metrics: [{column: v, name: app_v}]}]\n')
    assert "not a valid Prometheus label name" in text


def test_extra_label_ending_in_a_newline_is_refused(tmp_path):
    text = refused(tmp_path, "", labels='{"env\\n": prod}')
    assert "not a valid Prometheus label name" in text


def test_oracle_file_column_ending_in_a_newline_is_refused(tmp_path):
    (tmp_path / "m.toml").write_text('[[metric]]\ncontext = "x"\nrequest = "s"\nmetricsdesc = { "v\\n" = "h" }\n')
    text = refused(tmp_path, "custom_metric_files: [m.toml]\n")
    assert "not a valid one" in text


def test_oracle_file_label_ending_in_a_newline_is_refused(tmp_path):
    (tmp_path / "m.toml").write_text('[[metric]]\ncontext = "x"\nlabels = ["a\\n"]\nrequest = "s"\n'
                                     'metricsdesc = { v = "h" }\n')
    text = refused(tmp_path, "custom_metric_files: [m.toml]\n")
    assert "not a valid Prometheus label name" in text


def test_cli_exits_2_with_one_line_for_a_newline_name(tmp_path):
    cfg = config(tmp_path, 'custom_metrics: [{name: a, sql: "SELECT 1 v FROM DUAL", '
                           'metrics: [{column: v, name: "app_orders\\n"}]}]\n')
    res = subprocess.run([sys.executable, "-m", "oracle_exporter", "--config.file", cfg, "--once"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 2
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "app_orders\\n" in lines[0] and "Traceback" not in res.stderr


# --------------------------------------------------------------------------- collisions

def test_one_metric_name_in_two_statements_is_refused(tmp_path):
    text = refused(tmp_path, """
        custom_metrics:
          - {name: a, sql: "SELECT 1 v FROM DUAL", metrics: [{column: v, name: app_x}]}
          - {name: b, sql: "SELECT 2 v FROM DUAL", metrics: [{column: v, name: app_x}]}
        """)
    assert "app_x" in text and "printed twice" in text


def test_one_metric_name_on_disjoint_databases_is_fine(tmp_path):
    cfg = load_config(config(tmp_path, """
        custom_metrics:
          - {name: a, sql: "SELECT 1 v FROM DUAL", metrics: [{column: v, name: app_x}], databases: [prod1]}
          - {name: b, sql: "SELECT 2 v FROM DUAL", metrics: [{column: v, name: app_x}], databases: [prod2]}
        """))
    assert [q.name for q in cfg.settings.custom_queries] == ["a", "b"]


def test_a_counter_and_a_gauge_printing_one_name_are_refused(tmp_path):
    # counter app_x prints app_x_total: a gauge called app_x_total would duplicate it
    text = refused(tmp_path, """
        custom_metrics:
          - {name: a, sql: "SELECT 1 v FROM DUAL", metrics: [{column: v, name: app_x, type: counter}]}
          - {name: b, sql: "SELECT 2 v FROM DUAL", metrics: [{column: v, name: app_x_total}]}
        """)
    assert "app_x_total" in text


@pytest.mark.parametrize("name,owner", [("oracle_up", "exporter"), ("oracle_scrape_errors_total", "exporter"),
                                        ("process_open_fds", "process"), ("oracle_custom_query_success", "custom")])
def test_the_exporters_own_names_are_refused(tmp_path, name, owner):
    text = refused(tmp_path, f'custom_metrics: [{{name: a, sql: "SELECT 1 v FROM DUAL", '
                             f'metrics: [{{column: v, name: {name}}}]}}]\n')
    assert f"'{name}' is the exporter's own (collector {owner})" in text


def test_a_counter_becoming_an_exporter_name_is_refused(tmp_path):
    text = refused(tmp_path, 'custom_metrics: [{name: a, sql: "SELECT 1 v FROM DUAL", '
                             'metrics: [{column: v, name: oracle_scrape_errors, type: counter}]}]\n')
    assert "oracle_scrape_errors_total" in text and "exporter's own" in text


def test_the_catalog_names_are_the_declared_ones():
    names = exporter_names()
    assert names["oracle_up"] == "exporter" and names["process_cpu_seconds_total"] == "process"
    assert names["oracle_wait_event_latency_seconds_bucket"] == "wait_events"   # a histogram's series too


def test_oracle_ids_colliding_across_files_are_refused(tmp_path):
    (tmp_path / "a.toml").write_text('[[metric]]\ncontext = "a_b"\nmetricsdesc = { c = "h" }\nrequest = "s"\n')
    (tmp_path / "b.toml").write_text('[[metric]]\ncontext = "a"\nmetricsdesc = { b_c = "h" }\nrequest = "t"\n')
    text = refused(tmp_path, "custom_metric_files: [a.toml, b.toml]\n")
    assert "b.toml" in text and "a.toml" in text and "silently drop" in text


def test_same_context_and_columns_in_a_later_file_still_overrides(tmp_path):
    (tmp_path / "a.toml").write_text('[[metric]]\ncontext = "c"\nmetricsdesc = { v = "h" }\nrequest = "s1"\n')
    (tmp_path / "b.toml").write_text('[[metric]]\ncontext = "c"\nmetricsdesc = { v = "h" }\nrequest = "s2"\n')
    (q,) = load_config(config(tmp_path, "custom_metric_files: [a.toml, b.toml]\n")).settings.custom_queries
    assert q.sql == "s2"


def test_oracle_metric_and_config_metric_of_one_name_are_refused(tmp_path):
    (tmp_path / "m.toml").write_text('[[metric]]\ncontext = "app"\nmetricsdesc = { x = "h" }\nrequest = "s"\n')
    text = refused(tmp_path, """
        custom_metric_files: [m.toml]
        custom_metrics:
          - {name: a, sql: "SELECT 1 v FROM DUAL", metrics: [{column: v, name: oracledb_app_x}]}
        """)
    assert "oracledb_app_x" in text


def test_a_fieldtoappend_name_another_statement_prints_is_skipped_at_run_time():
    fixed = CustomQuery(name="fixed", sql="s", fields=(Field("v", "oracledb_act_commits", "h", exact=True),))
    dynamic = CustomQuery(name="dyn", sql="t", fields=(Field("value", None, "h", exact=True),),
                          field_to_append="name", prefix="oracledb_act")
    snap = Snapshot.from_obj({"time": "2025-03-11T09:00:00Z", "database": "p", "views": {
        "CUSTOM:FIXED": [{"V": 1}], "CUSTOM:DYN": [{"NAME": "commits", "VALUE": 2}, {"NAME": "rollbacks", "VALUE": 3}]}})
    fams = list(custom_sql.collect(snap, Settings(custom_queries=(fixed, dynamic))))
    samples = {(s.name, tuple(s.labels.items())): s.value for f in fams for s in f.samples}
    assert samples[("oracledb_act_commits", ())] == 1.0          # the first owner's, once
    assert samples[("oracledb_act_rollbacks", ())] == 3.0
    assert samples[("oracle_custom_query_success", (("query", "dyn"),))] == 0.0
    assert samples[("oracle_custom_query_success", (("query", "fixed"),))] == 1.0


# --------------------------------------------------------------------------- linear

def _definitions(n: int) -> dict:
    return {"custom_metrics": [{"name": f"q{i}", "sql": "SELECT 1 v FROM DUAL", "labels": ["a"],
                                "metrics": [{"column": "v", "name": f"app_m{i}",
                                             "type": "counter" if i % 2 else "gauge"}]} for i in range(n)]}


def _seconds(n: int) -> float:
    data = _definitions(n)
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        assert len(parse_custom(Fields("c.yml", "", data), {"env"})) == n
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.slow
def test_the_checks_are_linear():
    exporter_names()                       # the catalog is built once, outside the timing
    small, large = _seconds(2_000), _seconds(20_000)
    # linear: about 10x; the quadratic check this replaces took about 100x (20,000: 17 s)
    assert large / small < 35, (small, large)


def test_a_fieldtoappend_value_ending_in_a_newline_makes_no_metric():
    # names built from row values are checked per row with the same grammar: the bad row is
    # skipped (its statement's success 0), the exposition stays parsable
    dynamic = CustomQuery(name="dyn", sql="t", fields=(Field("value", None, "h", exact=True),),
                          field_to_append="name", prefix="oracledb_act")
    snap = Snapshot.from_obj({"time": "2025-03-11T09:00:00Z", "database": "p", "views": {
        "CUSTOM:DYN": [{"NAME": "commits\n", "VALUE": 2}, {"NAME": "rollbacks", "VALUE": 3}]}})
    fams = list(custom_sql.collect(snap, Settings(custom_queries=(dynamic,))))
    names = {s.name for f in fams for s in f.samples}
    assert names == {"oracledb_act_rollbacks", "oracle_custom_query_success"}
    assert [s.value for f in fams for s in f.samples if s.name == "oracle_custom_query_success"] == [0.0]
