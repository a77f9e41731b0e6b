"""Issue 27: every config file rejects a key given twice with one line naming the file,
the line and the key (YAML and TOML would silently keep the last one: a second
`databases:` dropped the first database, a LUN's `redo` role became `other`), and a
hostile file (deep nesting, a 400-digit integer in a number field) is one line, exit
status 2, never a traceback. Covers both exporters' YAML, the web config, Oracle metric
files (TOML and YAML) and the stack's YAML (stack/configs.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from exporter_common.config import MAX_NESTING, ConfigError, load_yaml
from exporter_common.web import load_web_config
from oracle_exporter.custom import load_oracle_file

ROOT = Path(__file__).resolve().parents[2]
DB = "  - {name: a, dsn: 'h:1/s', user: u, password_env: PW}\n"
TOML_METRIC = '[[metric]]\ncontext = "x"\nrequest = "select 1 n from dual"\nmetricsdesc = { n = "help" }\n'
BIG = "9" * 400


def _run(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PW="x"), cwd=ROOT)


def _one_line(res: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    return lines[0]


# --- duplicate keys ------------------------------------------------------------------------------

def test_load_yaml_names_file_line_and_key_of_a_duplicate(tmp_path):
    cfg = tmp_path / "o.yml"
    cfg.write_text("databases:\n  - {name: a}\ntimeout_seconds: 3\ndatabases:\n  - {name: b}\n")
    with pytest.raises(ConfigError) as exc:
        load_yaml(str(cfg))
    assert str(exc.value) == (f"{cfg}: line 4: duplicate key 'databases' (first at line 1); "
                              "keep one: YAML would silently use the last")


def test_duplicates_inside_flow_and_nested_mappings(tmp_path):
    cfg = tmp_path / "d.yml"
    cfg.write_text("lun:\n  roles:\n    - {wwid: '3600a', role: redo, role: other}\n")
    with pytest.raises(ConfigError, match=r"line 3: duplicate key 'role' \(first at line 3\)"):
        load_yaml(str(cfg))
    # a merge key may be overridden (YAML's rule), and equal values in different mappings are fine
    ok = tmp_path / "ok.yml"
    ok.write_text("base: &b {x: 1, y: 2}\nn:\n  <<: *b\n  x: 3\nm: {x: 1}\n")
    assert load_yaml(str(ok)) == {"base": {"x": 1, "y": 2}, "n": {"x": 3, "y": 2}, "m": {"x": 1}}


def test_oracle_exporter_refuses_a_second_databases_list(tmp_path):
    cfg = tmp_path / "o.yml"
    cfg.write_text("databases:\n" + DB + "databases:\n" + DB.replace("name: a", "name: b"))
    res = _run("oracle_exporter", "--config.file", str(cfg), "--once")
    assert res.returncode == 2
    assert _one_line(res) == (f"error: {cfg}: line 3: duplicate key 'databases' (first at line 1); "
                              "keep one: YAML would silently use the last")


def test_dbhost_exporter_refuses_a_lun_role_given_twice(tmp_path):
    cfg = tmp_path / "d.yml"
    cfg.write_text("lun:\n  roles:\n    - wwid: 3600a098038303053453f463045727a41\n      role: redo\n"
                   "      role: other\n")
    res = _run("dbhost_exporter.cli", "--config.file", str(cfg), "--once")
    assert res.returncode == 2
    assert _one_line(res) == (f"error: {cfg}: line 5: duplicate key 'role' (first at line 4); "
                              "keep one: YAML would silently use the last")


def test_web_config_refuses_a_duplicate_user(tmp_path):
    web = tmp_path / "web.yml"
    web.write_text("basic_auth_users:\n  prometheus: $2b$12$x\n  prometheus: $2b$12$y\n")
    with pytest.raises(ConfigError) as exc:
        load_web_config(str(web))
    assert str(exc.value) == (f"--web.config.file {web}: line 3: duplicate key 'prometheus' (first at line 2); "
                              "keep one: YAML would silently use the last")
    res = _run("dbhost_exporter.cli", "--web.config.file", str(web), "--once")
    assert res.returncode == 2 and "line 3: duplicate key 'prometheus'" in _one_line(res)


@pytest.mark.parametrize("text,line,key", [
    (TOML_METRIC + 'context = "y"\n', 5, "context"),
    ('[metric]\ncontext = "x"\n[metric]\n', 3, "metric"),
    (TOML_METRIC.replace('{ n = "help" }', '{ n = "help", n = "again" }'), 4, "'n'"),
])
def test_toml_metric_file_duplicate_names_line_and_key(tmp_path, text, line, key):
    f = tmp_path / "m.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_oracle_file(str(f))
    msg = str(exc.value)
    assert msg.startswith(f"{f}: line {line}: duplicate key ") and "\n" not in msg
    assert key in msg


def test_yaml_metric_file_duplicate(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text("metrics:\n  - context: x\n    context: y\n")
    with pytest.raises(ConfigError, match=r"m\.yaml: line 3: duplicate key 'context'"):
        load_oracle_file(str(f))


def test_stack_configs_refuse_duplicates_and_stack_run_says_one_line(tmp_path):
    from stack import configs
    am = tmp_path / "am.yml"
    am.write_text("route:\n  receiver: a\nreceivers:\n  - name: a\nroute:\n  receiver: b\n")
    with pytest.raises(configs.ConfigRenderError) as exc:
        configs.render_alertmanager(am, "http://127.0.0.1:1")
    assert str(exc.value) == (f"{am}: line 5: duplicate key 'route' (first at line 1); "
                              "keep one: YAML would silently use the last")
    rules = tmp_path / "alerts.rules.yml"
    rules.write_text("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up\n        for: 1m\n"
                     "        for: 10m\n")
    with pytest.raises(configs.ConfigRenderError, match=r"line 7: duplicate key 'for' \(first at line 6\)"):
        configs.shorten_rules(rules, tmp_path / "out.yml", "1s")


# --- hostile files: deep nesting, huge integers ---------------------------------------------------

DEEP_YAML = {"flow": "[" * 5000, "block": "".join("  " * i + f"k{i}:\n" for i in range(2000)),
             "flow-map": "a: " + "{b: " * 3000}


@pytest.mark.parametrize("kind", sorted(DEEP_YAML))
def test_deeply_nested_yaml_is_one_line_in_every_yaml_config(tmp_path, kind):
    f = tmp_path / "deep.yml"
    f.write_text(DEEP_YAML[kind])
    for module, flag in (("oracle_exporter", "--config.file"), ("dbhost_exporter.cli", "--config.file"),
                         ("dbhost_exporter.cli", "--web.config.file")):
        res = _run(module, flag, str(f), "--once")
        assert res.returncode == 2, (module, flag)
        line = _one_line(res)
        assert line.startswith("error: ") and str(f) in line and f"nested deeper than {MAX_NESTING} levels" in line
    from stack import configs
    with pytest.raises(configs.ConfigRenderError, match=f"nested deeper than {MAX_NESTING} levels"):
        configs.load(f)


@pytest.mark.parametrize("text", ["a = " + "[" * 3000 + "]" * 3000, "a = " + "{b = " * 2000 + "1" + "}" * 2000,
                                  "a = " + "[" * 100 + "]" * 100])
def test_deeply_nested_toml_is_one_line(tmp_path, text):
    f = tmp_path / "deep.toml"
    f.write_text(text)
    cfg = tmp_path / "o.yml"
    cfg.write_text(f"custom_metric_files: [{f}]\ndatabases:\n" + DB)
    res = _run("oracle_exporter", "--config.file", str(cfg), "--once")
    assert res.returncode == 2
    line = _one_line(res)
    assert line.startswith(f"error: {f}: not a valid TOML file: nested ")


@pytest.mark.parametrize("module,text,field", [
    ("oracle_exporter", f"timeout_seconds: {BIG}\ndatabases:\n" + DB, "timeout_seconds"),
    ("oracle_exporter", "databases:\n" + DB.replace("}", f", timeout_seconds: {BIG}}}"), "databases[0].timeout_seconds"),
    ("oracle_exporter", f"session_events_max: {BIG}\ndatabases:\n" + DB, "session_events_max"),
    ("oracle_exporter", f"custom_metrics:\n  - {{name: q, sql: select 1 n from dual, metrics: [{{column: n, name: q_n}}],"
                        f" interval_seconds: {BIG}}}\ndatabases:\n" + DB, "custom_metrics[0].interval_seconds"),
    ("dbhost_exporter.cli", f"max_series: {BIG}\n", "max_series"),
    ("dbhost_exporter.cli", f"max_series: -{BIG}\n", "max_series"),
    ("dbhost_exporter.cli", f"lun: {{identity_refresh_seconds: {BIG}}}\n", "lun.identity_refresh_seconds"),
])
def test_400_digit_integers_are_one_line(tmp_path, module, text, field):
    cfg = tmp_path / "c.yml"
    cfg.write_text(text)
    res = _run(module, "--config.file", str(cfg), "--once")
    assert res.returncode == 2
    line = _one_line(res)
    assert line.startswith(f"error: {cfg}: {field}: ")
    assert "integer of 400 digits" in line and len(line) < 200


@pytest.mark.parametrize("extra,field", [
    (f"querytimeout = {BIG}\n", "querytimeout"),
    (f'scrapeinterval = "{BIG}s"\n', "scrapeinterval"),
    (f'metricstype = {{ n = "histogram" }}\nmetricsbuckets = {{ n = {{ b = {BIG} }} }}\n', "metricsbuckets.n"),
])
def test_400_digit_integers_in_toml_metric_files(tmp_path, extra, field):
    f = tmp_path / "m.toml"
    f.write_text(TOML_METRIC + extra)
    with pytest.raises(ConfigError) as exc:
        load_oracle_file(str(f))
    msg = str(exc.value)
    assert msg.startswith(f"{f}: metric[0].{field}: ") and "\n" not in msg and len(msg) < 250
