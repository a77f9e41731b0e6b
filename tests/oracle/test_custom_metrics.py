"""Custom SQL metrics: the config's custom_metrics and Oracle's exporter's metric files.

Failure cases first: a bad file stops the exporter at start with one line and exit 2; a
statement that fails, times out or returns a non-number costs only its own samples; NULL
is skipped, never a made-up 0. Then Oracle's file format read unchanged (the fixture below
is written for these tests in that format: [[metric]] tables, ''' strings, metricstype,
fieldtoappend, ignorezeroresult, querytimeout, scrapeinterval, metricsbuckets), and the
statements recorded and replayed like the views.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exporter_common.config import ConfigError
from oracle_exporter.collectors import custom_sql
from oracle_exporter.config import Settings, load_config
from oracle_exporter.custom import CustomQuery, Field, evaluate, load_oracle_file, parse_duration
from oracle_exporter.snapshot import Snapshot

ROOT = Path(__file__).resolve().parents[2]

ORACLE_FILE = '''
[[metric]]
context = "sessions"
labels = [ "inst_id", "status", "type" ]
metricsdesc = { value = "Sessions by instance, status and type." }
request = """
select inst_id, status, type, count(*) as value from gv$session group by inst_id, status, type
"""

[[metric]]
context = "activity"
labels = [ "inst_id" ]
metricsdesc = { value = "Activity statistics." }
fieldtoappend = "name"
request = \'\'\'
select inst_id, name, value from gv$sysstat where name in ('execute count', 'user commits', 'parse count (total)')
\'\'\'

[[metric]]
context = "wait_time"
labels = [ "inst_id", "wait_class" ]
metricsdesc = { time_waited_sec_total = "Time waited per wait class." }
metricstype = { time_waited_sec_total = "counter" }
request = "select inst_id, wait_class, round(time_waited/100,3) time_waited_sec_total from gv$system_wait_class"
ignorezeroresult = true
querytimeout = "2500ms"
scrapeinterval = "1m30s"

[[metric]]
context = ""
metricsdesc = { dbtype = "Type of database (0 non-CDB, 1 CDB, >1 PDB)." }
request = "select sys_context('USERENV', 'CON_ID') as dbtype from dual"

[[metric]]
context = "latency"
labels = [ "bucketed" ]
metricsdesc = { data = "A histogram." }
metricstype = { data = "histogram" }
metricsbuckets = { data = { le_20 = "20", le_40 = "40" } }
request = "select 'x' as bucketed, 3 as le_20, 19 as le_40, 45 as count, 123.45 as data from dual"
'''


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def config(tmp_path: Path, body: str) -> str:
    pw = tmp_path / "pw"
    pw.write_text("secret\n")
    text = textwrap.dedent(f"""
        databases:
          - name: prod1
            dsn: h:1521/S
            user: mon
            password_file: {pw}
            labels: {{env: prod}}
        """) + textwrap.dedent(body)
    path = tmp_path / "oracle-exporter.yml"
    path.write_text(text)
    return str(path)


def snap(views: dict, errors: dict | None = None, database: str = "prod1") -> Snapshot:
    obj = {"time": "2025-03-11T09:00:00Z", "database": database, "views": views}
    if errors:
        obj["errors"] = errors
    return Snapshot.from_obj(json.loads(json.dumps(obj)))


def samples(queries, snapshot) -> dict:
    settings = Settings(custom_queries=tuple(queries))
    out = {}
    for fam in custom_sql.collect(snapshot, settings):
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in out
            out[key] = (fam.type, s.value)
    return out


ORDERS = CustomQuery(name="app_orders", sql="SELECT status, COUNT(*) AS n FROM app.orders GROUP BY status",
                     labels=("status",), fields=(Field("n", "app_orders", "Orders by status."),))


# --------------------------------------------------------------------------- failures at start

@pytest.mark.parametrize("body,fragment", [
    ("custom_metrics: [{name: a, sql: 'SELECT 1 AS v FROM DUAL', metrics: [{column: v, name: 'bad name'}]}]",
     "not a valid Prometheus metric name"),
    ("custom_metrics: [{name: a, sql: 'SELECT 1 AS v FROM DUAL', metrics: [{column: v, name: x, type: summary}]}]",
     "must be gauge or counter"),
    ("custom_metrics: [{name: a, sql: 'SELECT 1 AS v FROM DUAL', labels: [database], metrics: [{column: v, name: x}]}]",
     "label 'database' is set by the exporter itself"),
    ("custom_metrics: [{name: a, sql: 'SELECT 1 AS v FROM DUAL', labels: [env], metrics: [{column: v, name: x}]}]",
     "label 'env' is set by the exporter itself"),
    ("custom_metrics: [{name: a, sql: 'SELECT 1', metrics: [{column: v, name: x}], scope: root}]",
     "must be one of any, cdb_root, pdb"),
    ("custom_metrics: [{name: a, sql: 'SELECT 1', metrics: [{column: v, name: x}]}, "
     "{name: a, sql: 'SELECT 2', metrics: [{column: v, name: y}]}]", "a second custom statement named 'a'"),
    ("custom_metrics: [{name: a, sql: 'SELECT 1', metrics: [{column: v, name: x}]}, "
     "{name: b, sql: 'SELECT 2', metrics: [{column: v, name: x, type: counter}]}]", "another type or other labels"),
    ("custom_metrics: [{name: a, sql: 'SELECT 1', metrics: [{column: v, name: x}], intervall: 5}]", "intervall"),
    ("custom_metric_files: [missing.toml]", "cannot read"),
])
def test_bad_custom_definitions_are_refused_at_start(tmp_path, body, fragment):
    with pytest.raises(ConfigError) as err:
        load_config(config(tmp_path, body))
    assert fragment in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("toml,fragment", [
    ('[[metric]]\ncontext = "x"\nmetricsdesc = { v = "h" }\n', "metric[0].request: is required"),
    ('[[metric]]\ncontext = "x"\nrequest = "select 1 v from dual"\n', "metricsdesc: is required"),
    ('[[metric]]\ncontext = "x"\nrequest = "s"\nmetricsdesc = { v = "h" }\nmetricstype = { v = "summary" }\n',
     "unknown type 'summary'"),
    ('[[metric]]\ncontext = "x"\nrequest = "s"\nmetricsdesc = { v = "h" }\nscrapeinterval = "5 minutes"\n',
     "scrapeinterval: '5 minutes' is not a duration"),
    ('[[metric]]\ncontext = "my context"\nrequest = "s"\nmetricsdesc = { v = "h" }\n', "not a valid one"),
    ('[[metric]]\ncontext = "x"\nrequest = "s"\nmetricsdesc = { v = "h" }\nmetricstype = { v = "histogram" }\n',
     "a histogram needs its bucket columns"),
    ('[[metric]\ncontext = "x"\n', "not a valid TOML file"),
])
def test_bad_oracle_metric_files_are_refused_with_file_and_field(tmp_path, toml, fragment):
    path = write(tmp_path, "m.toml", toml)
    with pytest.raises(ConfigError) as err:
        load_oracle_file(path)
    assert fragment in str(err.value) and path in str(err.value) and "\n" not in str(err.value)


def test_cli_exits_2_with_one_line_for_a_bad_metric_file(tmp_path):
    write(tmp_path, "bad.toml", '[[metric]]\ncontext = "x"\nrequest = "s"\nmetricsdesc = { v = "h" }\n'
                                'metricstype = { v = "sumary" }\n')
    cfg = config(tmp_path, "custom_metric_files: [bad.toml]\n")     # relative to the config file
    res = subprocess.run([sys.executable, "-m", "oracle_exporter", "--config.file", cfg, "--once"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 2, res.stderr
    lines = [x for x in res.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "bad.toml" in lines[0] and "unknown type 'sumary'" in lines[0]
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("text,seconds", [("300ms", 0.3), ("10s", 10), ("5m", 300), ("1h30m", 5400),
                                          ("0.5h", 1800), ("0", 0), (45, 45)])
def test_go_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["5", "5 m", "m", "-1s", "1d", ""])
def test_bad_go_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


# --------------------------------------------------------------------------- failures at run time

def test_failing_statement_costs_only_its_own_samples():
    other = CustomQuery(name="other", sql="SELECT 1 AS v FROM DUAL", fields=(Field("v", "app_one", "One."),))
    s = snap({"CUSTOM:OTHER": [{"V": 1}]}, {"CUSTOM:APP_ORDERS": "ORA-00942: table or view does not exist"})
    found = samples([ORDERS, other], s)
    assert found == {("app_one", ()): ("gauge", 1.0),
                     ("oracle_custom_query_success", (("query", "app_orders"),)): ("gauge", 0.0),
                     ("oracle_custom_query_success", (("query", "other"),)): ("gauge", 1.0)}


def test_non_number_is_skipped_and_flagged_null_is_skipped():
    rows = [{"STATUS": "NEW", "N": 12}, {"STATUS": "LATE", "N": "many"}, {"STATUS": "DONE", "N": None},
            {"STATUS": "OLD", "N": "7"}]
    found = samples([ORDERS], snap({"CUSTOM:APP_ORDERS": rows}))
    assert found[("app_orders", (("status", "NEW"),))] == ("gauge", 12.0)
    assert found[("app_orders", (("status", "OLD"),))] == ("gauge", 7.0)       # numeric text is a number
    assert ("app_orders", (("status", "LATE"),)) not in found
    assert ("app_orders", (("status", "DONE"),)) not in found                  # NULL: skipped, not 0
    assert found[("oracle_custom_query_success", (("query", "app_orders"),))] == ("gauge", 0.0)
    res = evaluate(ORDERS, rows, None)
    assert "n='many' is not a number" in res.error


def test_no_rows_is_a_failure_unless_ignorezeroresult():
    assert evaluate(ORDERS, [], None).error == "no rows"
    quiet = CustomQuery(**{**ORDERS.__dict__, "ignore_zero_result": True})
    assert evaluate(quiet, [], None).error is None


def test_statement_not_run_in_this_fetch_has_no_series():
    elsewhere = CustomQuery(**{**ORDERS.__dict__, "databases": ("prod2",)})
    assert samples([elsewhere], snap({"CUSTOM:APP_ORDERS": [{"STATUS": "NEW", "N": 1}]})) == {}
    assert samples([ORDERS], snap({})) == {}


# --------------------------------------------------------------------------- Oracle's format

def test_oracle_file_read_unchanged(tmp_path):
    queries = load_oracle_file(write(tmp_path, "default-metrics.toml", ORACLE_FILE))
    by_name = {q.name: q for q in queries}
    wait = by_name["wait_time_time_waited_sec_total"]
    assert (wait.timeout, wait.interval, wait.ignore_zero_result) == (2.5, 90.0, True)
    views = {
        queries[0].key: [{"INST_ID": 1, "STATUS": "ACTIVE", "TYPE": "USER", "VALUE": 17}],
        queries[1].key: [{"INST_ID": 1, "NAME": "execute count", "VALUE": 5000},
                         {"INST_ID": 1, "NAME": "parse count (total)", "VALUE": 1200}],
        wait.key: [{"INST_ID": 1, "WAIT_CLASS": "User I/O", "TIME_WAITED_SEC_TOTAL": 12.5}],
        queries[3].key: [{"DBTYPE": "0"}],
        queries[4].key: [{"BUCKETED": "x", "LE_20": 3, "LE_40": 19, "COUNT": 45, "DATA": 123.45}],
    }
    found = samples(queries, snap(views))
    assert found[("oracledb_sessions_value", (("inst_id", "1"), ("status", "ACTIVE"), ("type", "USER")))] == \
        ("gauge", 17.0)
    assert found[("oracledb_activity_execute_count", (("inst_id", "1"),))] == ("gauge", 5000.0)
    assert found[("oracledb_activity_parse_count_total", (("inst_id", "1"),))] == ("gauge", 1200.0)
    assert found[("oracledb_wait_time_time_waited_sec_total", (("inst_id", "1"), ("wait_class", "User I/O")))] \
        == ("counter", 12.5)
    assert found[("oracledb_dbtype", ())] == ("gauge", 0.0)
    assert found[("oracledb_latency_data_bucket", (("bucketed", "x"), ("le", "20")))] == ("histogram", 3.0)
    assert found[("oracledb_latency_data_bucket", (("bucketed", "x"), ("le", "+Inf")))] == ("histogram", 45.0)
    assert found[("oracledb_latency_data_sum", (("bucketed", "x"),))] == ("histogram", 123.45)
    assert all(v == ("gauge", 1.0) for k, v in found.items() if k[0] == "oracle_custom_query_success")


def test_a_later_definition_overrides_an_earlier_one(tmp_path):
    first = write(tmp_path, "a.toml", '[[metric]]\ncontext = "c"\nrequest = "select 1 v from dual"\n'
                                      'metricsdesc = { v = "h" }\n')
    second = write(tmp_path, "b.toml", '[[metric]]\ncontext = "c"\nrequest = "select 2 v from dual"\n'
                                       'metricsdesc = { v = "h" }\nscrapeinterval = "30s"\n')
    cfg = load_config(config(tmp_path, f"custom_metric_files: [{first}, {second}]\n"))
    (q,) = cfg.settings.custom_queries
    assert q.sql == "select 2 v from dual" and q.interval == 30


def test_yaml_metric_file_and_config_statements_together(tmp_path):
    yml = write(tmp_path, "m.yaml", """
        metrics:
          - context: "sessions"
            labels: [ "inst_id" ]
            metricsdesc: { value: "Sessions per instance." }
            request: select inst_id, count(*) as value from gv$session group by inst_id
        """)
    cfg = load_config(config(tmp_path, f"""
        custom_metrics:
          - name: app_orders
            sql: SELECT status, COUNT(*) AS n FROM app.orders GROUP BY status
            labels: [STATUS]
            metrics: [{{column: N, name: app_orders, help: Orders by status.}}]
            interval_seconds: 60
            timeout_seconds: 2
            scope: pdb
            databases: [prod1]
        custom_metric_files: [{yml}]
        """))
    orders, sessions = cfg.settings.custom_queries
    assert (orders.key, orders.labels, orders.fields[0].column, orders.interval, orders.timeout, orders.scope) == \
        ("CUSTOM:APP_ORDERS", ("status",), "n", 60.0, 2.0, "pdb")
    assert sessions.fields[0].name == "oracledb_sessions_value"


# --------------------------------------------------------------------------- recorded and replayed

def test_custom_rows_replay_through_the_cli(tmp_path):
    cfg = config(tmp_path, """
        custom_metrics:
          - name: app_orders
            sql: SELECT status, COUNT(*) AS n FROM app.orders GROUP BY status
            labels: [status]
            metrics: [{column: n, name: app_orders, help: Orders by status.}]
        """)
    rec = tmp_path / "rec.jsonl"
    with rec.open("w") as fh:
        for n in (3, 5):
            fh.write(json.dumps({"time": "2025-03-11T09:00:00Z", "database": "prod1",
                                 "views": {"CUSTOM:APP_ORDERS": [{"STATUS": "NEW", "N": n}]}}) + "\n")
    res = subprocess.run([sys.executable, "-m", "oracle_exporter", "--replay", str(rec), "--config.file", cfg,
                          "--once"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert 'app_orders{database="prod1",env="prod",status="NEW"} 3.0' in res.stdout
    assert 'oracle_custom_query_success{database="prod1",env="prod",query="app_orders"} 1.0' in res.stdout
