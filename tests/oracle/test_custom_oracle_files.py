"""Oracle's metric files (oracle-db-appdev-monitoring, iamseth/oracledb_exporter) produce
Oracle's exact names, and every form Oracle's parser accepts is accepted.

The failure the on-call engineer fears: a team points custom_metric_files at the files its
Oracle exporter used, and the dashboards built on them go blank (a counter renamed with
``_total``), or the exporter refuses to start on a file Oracle's exporter reads.

The dashboard names below are the metric names the sample Grafana dashboard shipped with
Oracle's exporter (docker-compose/grafana/dashboards/oracle_rev3.json) queries, listed here
by hand; the metric file is written for this test in Oracle's format with the contexts and
columns those names come from (the default metrics of Oracle's exporter).
"""
from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporter_common.config import ConfigError
from oracle_exporter.cli import build_exporter, build_parser, make_routes
from oracle_exporter.config import load_config
from oracle_exporter.custom import load_oracle_file, parse_duration

ROOT = Path(__file__).resolve().parents[2]

# The names Oracle's sample dashboard selects (besides oracledb_up, the Go exporter's own
# liveness gauge, which is oracle_up here).
DASHBOARD_GAUGES = (
    "oracledb_dbtype", "oracledb_sessions_value", "oracledb_db_system_value", "oracledb_db_platform_value",
    "oracledb_activity_execute_count", "oracledb_activity_user_commits", "oracledb_cache_hit_ratio_value",
    "oracledb_top_sql_elapsed",
)
WAIT_CLASSES = {          # GV$SYSTEM_WAIT_CLASS.WAIT_CLASS -> the name Oracle's exporter makes of it
    "Administrative": "administrative", "Application": "application", "Cluster": "cluster", "Commit": "commit",
    "Concurrency": "concurrency", "Configuration": "configuration", "Network": "network", "Other": "other",
    "Scheduler": "scheduler", "User I/O": "user_io", "System I/O": "system_io",
}
DASHBOARD_COUNTERS = tuple(f"oracledb_wait_time_{v}" for v in WAIT_CLASSES.values())

ORACLE_DEFAULTS = '''
[[metric]]
context = ""
metricsdesc = { dbtype = "0 non-CDB, 1 CDB root, above 1 a PDB." }
request = "select sys_context('USERENV', 'CON_ID') as dbtype from dual"

[[metric]]
context = "sessions"
labels = [ "inst_id", "status", "type" ]
metricsdesc = { value = "Sessions per instance, status and type." }
request = "select inst_id, status, type, count(*) as value from gv$session group by inst_id, status, type"

[[metric]]
context = "activity"
labels = [ "inst_id" ]
metricsdesc = { value = "Statistics of gv$sysstat." }
fieldtoappend = "name"
request = "select inst_id, name, value from gv$sysstat where name in ('execute count', 'user commits')"

[[metric]]
context = "wait_time"
labels = [ "inst_id", "wait_class", "con_id" ]
metricsdesc = { time_waited_sec_total = "Seconds waited per wait class." }
metricstype = { time_waited_sec_total = "counter" }
fieldtoappend = "wait_class"
request = "select inst_id, wait_class, round(time_waited/100,3) time_waited_sec_total, con_id from gv$system_wait_class"
ignorezeroresult = true

[[metric]]
context = "db_system"
labels = [ "inst_id", "name" ]
metricsdesc = { value = "A few parameters." }
request = "select inst_id, name, value from gv$parameter where name in ('cpu_count', 'sga_max_size')"

[[metric]]
context = "db_platform"
labels = [ "inst_id", "platform_name" ]
metricsdesc = { value = "The platform." }
request = "select inst_id, platform_name, 1 as value from gv$database"

[[metric]]
context = "top_sql"
labels = [ "inst_id", "sql_id", "sql_text" ]
metricsdesc = { elapsed = "Elapsed seconds of the top statements." }
request = "select inst_id, sql_id, elapsed_time / 1000000 as elapsed, sql_text from gv$sqlstats"
ignorezeroresult = true
querytimeout = "10s"

[[metric]]
context = "cache_hit_ratio"
labels = [ "inst_id", "cache_hit_type" ]
metricsdesc = { value = "Cache hit ratios." }
request = "select inst_id, metric_name as cache_hit_type, value from gv$con_sysmetric"

[[metric]]
context = "redo"
labels = [ "inst_id" ]
metricsdesc = { bytes_total = "Redo bytes written." }
metricstype = { bytes_total = "counter" }
request = "select inst_id, value as bytes_total from gv$sysstat where name = 'redo size'"
'''


def _rows(queries) -> dict:
    """One recorded fetch of the statements above, keyed as the live source records them."""
    by_context = {q.prefix: q for q in queries}
    rows = {
        "oracledb": [{"DBTYPE": "0"}],
        "oracledb_sessions": [{"INST_ID": 1, "STATUS": "ACTIVE", "TYPE": "USER", "VALUE": 42}],
        "oracledb_activity": [{"INST_ID": 1, "NAME": "execute count", "VALUE": 91234},
                              {"INST_ID": 1, "NAME": "user commits", "VALUE": 5120}],
        "oracledb_wait_time": [{"INST_ID": 1, "WAIT_CLASS": wc, "TIME_WAITED_SEC_TOTAL": 10.5 + i, "CON_ID": 0}
                               for i, wc in enumerate(WAIT_CLASSES)],
        "oracledb_db_system": [{"INST_ID": 1, "NAME": "cpu_count", "VALUE": "16"},
                               {"INST_ID": 1, "NAME": "sga_max_size", "VALUE": "8589934592"}],
        "oracledb_db_platform": [{"INST_ID": 1, "PLATFORM_NAME": "Linux x86 64-bit", "VALUE": 1}],
        "oracledb_top_sql": [{"INST_ID": 1, "SQL_ID": "7ztv2z24kw0s0", "ELAPSED": 812.5, "SQL_TEXT": "select 1"}],
        "oracledb_cache_hit_ratio": [{"INST_ID": 1, "CACHE_HIT_TYPE": "Buffer Cache Hit Ratio", "VALUE": 99.2}],
        "oracledb_redo": [{"INST_ID": 1, "BYTES_TOTAL": 123456789}],
    }
    return {by_context[prefix].key: r for prefix, r in rows.items()}


def _setup(tmp_path: Path) -> tuple[str, str]:
    toml = tmp_path / "default-metrics.toml"
    toml.write_text(ORACLE_DEFAULTS)
    pw = tmp_path / "pw"
    pw.write_text("secret\n")
    cfg = tmp_path / "oracle-exporter.yml"
    cfg.write_text(textwrap.dedent(f"""
        databases:
          - {{name: prod1, dsn: 'h:1521/S', user: mon, password_file: {pw}}}
        custom_metric_files: [default-metrics.toml]
        """))
    views = _rows(load_oracle_file(str(toml)))
    rec = tmp_path / "rec.jsonl"
    rec.write_text(json.dumps({"time": "2025-03-11T09:00:00Z", "database": "prod1", "views": views}) + "\n")
    return str(cfg), str(rec)


def _types(text: str) -> dict[str, str]:
    return {line.split()[2]: line.split()[3] for line in text.splitlines() if line.startswith("# TYPE ")}


def _sample_names(text: str) -> set[str]:
    return {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}


def test_oracle_dashboard_names_are_served_exactly(tmp_path):
    cfg, rec = _setup(tmp_path)
    res = subprocess.run([sys.executable, "-m", "oracle_exporter", "--replay", rec, "--config.file", cfg, "--once"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    names, types = _sample_names(res.stdout), _types(res.stdout)
    missing = [n for n in (*DASHBOARD_GAUGES, *DASHBOARD_COUNTERS) if n not in names]
    assert missing == []
    for name in DASHBOARD_COUNTERS:              # counters keep Oracle's bare name, typed counter
        assert types[name] == "counter" and name + "_total" not in names
    assert 'oracledb_wait_time_user_io{con_id="0",database="prod1",inst_id="1"} 19.5' in res.stdout
    assert all(types[n] == "gauge" for n in DASHBOARD_GAUGES)
    # a counter whose name already ends in _total keeps it, under its own # TYPE line
    assert types["oracledb_redo_bytes_total"] == "counter" and "oracledb_redo_bytes_total_total" not in names
    # the exposition stays parsable as a whole
    parsed = {f.name: f.type for f in text_string_to_metric_families(res.stdout)}
    assert parsed["oracledb_wait_time_commit"] == "counter" and parsed["oracledb_dbtype"] == "gauge"


def _exporter(tmp_path):
    cfg, rec = _setup(tmp_path)
    exporter, _ = build_exporter(build_parser().parse_args(["--replay", rec, "--config.file", cfg]))
    return exporter


def test_openmetrics_serves_bare_counters_as_unknown_with_the_same_names(tmp_path):
    exporter = _exporter(tmp_path)
    try:
        routes = make_routes(exporter, openmetrics=True)
        om = routes["/metrics"]({}, {"Accept": "application/openmetrics-text; version=1.0.0"})
        assert om.content_type.startswith("application/openmetrics-text")
        text = om.body.decode()
        types = _types(text)
        assert types["oracledb_wait_time_commit"] == "unknown"
        assert 'oracledb_wait_time_commit{con_id="0",database="prod1",inst_id="1"} 13.5' in text
        assert types["oracledb_redo_bytes"] == "counter" and "oracledb_redo_bytes_total{" in text
        # and the text format of the same exporter still says counter
        plain = routes["/metrics"]({}, {"Accept": "text/plain"}).body.decode()
        assert _types(plain)["oracledb_wait_time_commit"] == "counter"
        probe = routes["/probe"]({"target": ["prod1"]}, {"Accept": "application/openmetrics-text; version=1.0.0"})
        assert _types(probe.body.decode())["oracledb_wait_time_commit"] == "unknown"
    finally:
        exporter.close()


# --------------------------------------------------------------------------- forms Oracle's parser accepts

def _load(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_oracle_file(str(path))


def test_camel_case_keys_are_read_as_oracle_reads_them(tmp_path):
    (q,) = _load(tmp_path, "camel.toml", textwrap.dedent('''
        [[Metric]]
        Context = "activity"
        Labels = [ "INST_ID" ]
        metricsDesc = { Value = "Statistics." }
        metricsType = { value = "Counter" }
        fieldToAppend = "NAME"
        Request = "select inst_id, name, value from gv$sysstat"
        ignoreZeroResult = true
        queryTimeout = "5s"
        scrapeInterval = "1m"
        '''))
    assert (q.prefix, q.labels, q.field_to_append, q.ignore_zero_result, q.timeout, q.interval) == \
        ("oracledb_activity", ("inst_id",), "name", True, 5.0, 60.0)
    assert [(f.column, f.type, f.exact) for f in q.fields] == [("value", "counter", True)]


def test_extra_keys_are_ignored_with_one_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="oracle_exporter.custom"):
        queries = _load(tmp_path, "extra.toml", textwrap.dedent('''
            [[metric]]
            context = "a"
            description = "written by the DBA team"
            metricsdesc = { v = "h" }
            request = "select 1 v from dual"

            [[metric]]
            context = "b"
            description = "again"
            enabled = true
            metricsdesc = { v = "h" }
            request = "select 2 v from dual"
            '''))
    assert [q.fields[0].name for q in queries] == ["oracledb_a_v", "oracledb_b_v"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "description" in warnings[0] and "enabled" in warnings[0]


def test_missing_context_makes_oracledb_column(tmp_path):
    (q,) = _load(tmp_path, "noctx.toml", '[[metric]]\nmetricsdesc = { dbtype = "h" }\nrequest = "select 1 dbtype from dual"\n')
    assert q.fields[0].name == "oracledb_dbtype"


@pytest.mark.parametrize("name,text", [("empty.toml", ""), ("comments.toml", "# nothing yet\n"),
                                       ("empty.yaml", ""), ("null.yaml", "metrics:\n")])
def test_empty_file_is_no_metrics_and_a_warning(tmp_path, caplog, name, text):
    with caplog.at_level(logging.WARNING, logger="oracle_exporter.custom"):
        assert _load(tmp_path, name, text) == []
    assert any("defines no metric" in r.getMessage() for r in caplog.records)


def test_empty_file_in_the_config_starts_with_no_custom_statement(tmp_path):
    (tmp_path / "empty.toml").write_text("")
    pw = tmp_path / "pw"
    pw.write_text("x\n")
    cfg = tmp_path / "c.yml"
    cfg.write_text(f"databases: [{{name: p, dsn: 'h:1/s', user: u, password_file: {pw}}}]\n"
                   "custom_metric_files: [empty.toml]\n")
    assert load_config(str(cfg)).settings.custom_queries == ()


@pytest.mark.parametrize("text,seconds", [
    ("1500\u00b5s", 0.0015), ("1500\u03bcs", 0.0015), ("1500us", 0.0015), ("250ms", 0.25), ("2s", 2.0),
    ("1m30s", 90.0), ("1.5h", 5400.0), ("2h45m30.5s", 9930.5), ("500000ns", 0.0005), ("+3s", 3.0),
])
def test_durations_in_every_unit_go_accepts(tmp_path, text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)
    (q,) = _load(tmp_path, "d.toml", f'[[metric]]\ncontext = "x"\nrequest = "s"\nmetricsdesc = {{ v = "h" }}\n'
                                     f'querytimeout = "{text}"\n')
    assert q.timeout == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["\u0661s", "1 s", "1S", "s1", "+"])    # Arabic-Indic digit, space, capital unit
def test_durations_go_refuses_are_refused(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_metricstype_of_a_label_column_is_ignored_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="oracle_exporter.custom"):
        (q,) = _load(tmp_path, "labeltype.toml", textwrap.dedent('''
            [[metric]]
            context = "tablespace"
            labels = [ "tablespace", "type" ]
            metricsdesc = { bytes = "Used bytes." }
            metricstype = { bytes = "gauge", tablespace = "gauge", type = "gauge" }
            request = "select tablespace_name tablespace, contents type, 1 bytes from dba_tablespaces"
            '''))
    assert [(f.name, f.type) for f in q.fields] == [("oracledb_tablespace_bytes", "gauge")]
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "metricstype.tablespace (a label column)" in warning


def test_yaml_file_with_camel_case_and_extra_keys(tmp_path):
    (q,) = _load(tmp_path, "m.yaml", textwrap.dedent('''
        metrics:
          - context: sessions
            labels: [inst_id]
            metricsDesc: {value: Sessions per instance.}
            owner: dba-team
            request: select inst_id, count(*) as value from gv$session group by inst_id
        '''))
    assert q.fields[0].name == "oracledb_sessions_value"


def test_same_metric_id_twice_in_one_file_is_refused(tmp_path):
    # Oracle's exporter keys metrics by context and columns joined by '_': "a_b" + "c" and
    # "a" + "b_c" are one id there, and the first is silently dropped
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "twice.toml", '[[metric]]\ncontext = "a_b"\nmetricsdesc = { c = "h" }\nrequest = "s"\n\n'
                                      '[[metric]]\ncontext = "a"\nmetricsdesc = { b_c = "h" }\nrequest = "t"\n')
    assert "metric[1]" in str(err.value) and "metric[0]" in str(err.value) and "\n" not in str(err.value)
