"""Config file: values, defaults, and clear errors (exit 2, file + field) for bad files."""
from __future__ import annotations

import textwrap

import pytest

from exporter_common.config import ConfigError
from oracle_exporter import collectors
from oracle_exporter.config import (DEFAULT_HISTOGRAM_EVENTS, DEFAULT_LATCHES, Settings, load_config)

PASSWORD = "s3cr3t-Pa55word!"


def write(tmp_path, text: str, name="cfg.yml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


@pytest.fixture
def pwfile(tmp_path):
    p = tmp_path / "pw"
    p.write_text(PASSWORD + "\n")
    return str(p)


def test_full_config_values_and_defaults(tmp_path, pwfile, monkeypatch):
    monkeypatch.setenv("DB2_PW", "env-secret")
    path = write(tmp_path, f"""
        timeout_seconds: 7
        connect_timeout_seconds: 2.5
        latches: ["redo allocation", "redo copy"]
        collectors: {{latches: false}}
        databases:
          - name: prod1
            dsn: db1.example.com:1521/PROD1
            user: c##monitor
            password_file: {pwfile}
            labels: {{env: prod, site: fra}}
          - name: prod2
            dsn: db2:1521/P2
            user: mon
            password_env: DB2_PW
            timeout_seconds: 3
    """)
    cfg = load_config(path, known_collectors=["latches", "redo"])
    assert cfg.timeout_seconds == 7.0
    assert cfg.connect_timeout_seconds == 2.5
    assert [d.name for d in cfg.databases] == ["prod1", "prod2"]
    p1, p2 = cfg.databases
    assert (p1.dsn, p1.user, p1.password, p1.labels) == (
        "db1.example.com:1521/PROD1", "c##monitor", PASSWORD, {"env": "prod", "site": "fra"})
    assert p1.timeout_seconds == 7.0  # inherits the global timeout
    assert (p2.password, p2.timeout_seconds, p2.labels) == ("env-secret", 3.0, {})
    assert cfg.settings.latches == ["redo allocation", "redo copy"]
    assert cfg.settings.histogram_events == list(DEFAULT_HISTOGRAM_EVENTS)
    assert cfg.settings.enabled("latches") is False
    assert cfg.settings.enabled("redo") is True


def test_settings_defaults_match_issue_and_collectors():
    s = Settings()
    assert s.histogram_events == [
        "log file sync", "log file parallel write", "db file sequential read", "db file scattered read",
        "direct path read", "direct path write", "log buffer space", "log file switch completion",
        "log file sequential read", "control file parallel write", "log file switch (checkpoint incomplete)"]
    # 'library cache' is not a latch since 11g (mutexes replaced it): it must not be a default.
    assert "library cache" not in s.latches
    assert {"redo allocation", "redo copy", "redo writing", "cache buffers chains"} <= set(s.latches)
    assert s.latches == list(DEFAULT_LATCHES)
    assert list(collectors.DEFAULT_HISTOGRAM_EVENTS) == s.histogram_events
    assert list(collectors.DEFAULT_LATCHES) == s.latches


def test_repr_never_shows_password(tmp_path, pwfile):
    path = write(tmp_path, f"""
        databases: [{{name: a, dsn: "h:1/s", user: u, password_file: {pwfile}}}]
    """)
    cfg = load_config(path)
    assert cfg.databases[0].password == PASSWORD
    for text in (repr(cfg), str(cfg), repr(cfg.databases[0]), str(cfg.databases[0]), f"{cfg.databases}"):
        assert PASSWORD not in text
        assert "password='***'" in text


BAD = [
    ("databases: []\n", "databases", "needs at least one database"),
    ("timeout_seconds: 1\n", "databases", "is required"),
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW}, "
     "{name: a, dsn: 'h:1/t', user: u, password_file: PW}]\n", "databases[1].name", "duplicate database name 'a'"),
    ("databases: [{name: a, user: u, password_file: PW}]\n", "databases[0].dsn", "is required"),
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password: hunter2}]\n", "databases[0].password",
     "passwords do not go in the config file"),
    ("databases: [{name: a, dsn: 'h:1/s', user: u}]\n", "databases[0].password_file", "a password is required"),
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password_env: NO_SUCH_VAR_XYZ}]\n",
     "databases[0].password_env", "environment variable NO_SUCH_VAR_XYZ is not set"),
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password_file: /nonexistent/pw}]\n",
     "databases[0].password_file", "cannot read password file"),
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW, lables: {x: y}}]\n",
     "databases[0].lables", "unknown field"),
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW, labels: {database: x}}]\n",
     "databases[0].labels.database", "is a label the exporter sets itself"),
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW, labels: {reason: x}}]\n",
     "databases[0].labels.reason", "is a label the exporter sets itself"),     # oracle_last_error_info's
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW, labels: {view: x}}]\n",
     "databases[0].labels.view", "is a label the exporter sets itself"),       # oracle_view_errors'
    ("databases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW, labels: {'bad-name': x}}]\n",
     "databases[0].labels.bad-name", "is not a valid Prometheus label name"),
    ("timeout_seconds: fast\ndatabases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW}]\n",
     "timeout_seconds", "expected a number, got 'fast'"),
    ("timeout_seconds: 0\ndatabases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW}]\n",
     "timeout_seconds", "must be >= 0.1"),
    ("collectors: {nosuch: true}\ndatabases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW}]\n",
     "collectors.nosuch", "unknown collector"),
    ("collectors: {redo: 'no'}\ndatabases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW}]\n",
     "collectors.redo", "expected true or false"),
    ("histogram_events: [log file sync, log file sync]\n"
     "databases: [{name: a, dsn: 'h:1/s', user: u, password_file: PW}]\n",
     "histogram_events[1]", "duplicate entry 'log file sync'"),
    ("databases: {name: a}\n", "databases", "expected a list"),
    ("databases: [\n", None, "invalid YAML at line 2"),
]


@pytest.mark.parametrize("text,field,message", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_config_names_file_and_field(tmp_path, pwfile, text, field, message):
    path = write(tmp_path, text.replace("PW", pwfile))
    with pytest.raises(ConfigError) as err:
        load_config(path, known_collectors=["redo", "latches"])
    assert err.value.source == path
    assert err.value.field == field
    assert message in err.value.message
    assert str(err.value).startswith(f"{path}: {field + ': ' if field else ''}")


def test_cli_bad_config_exits_2_with_one_line(tmp_path, pwfile, core):
    path = write(tmp_path, f"databases: [{{name: a, dsn: 'h:1/s', user: u, password_file: {pwfile}, "
                           f"timeout_seconds: -1}}]\n")
    res = core.run_cli("--config.file", path, "--once")
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.strip() == f"error: {path}: databases[0].timeout_seconds: must be >= 0.1, got -1"
    assert "Traceback" not in res.stderr and PASSWORD not in res.stderr


def test_cli_missing_config_file_and_no_source(tmp_path, core):
    res = core.run_cli("--config.file", str(tmp_path / "nope.yml"))
    assert res.returncode == 2
    assert res.stderr.strip() == f"error: {tmp_path / 'nope.yml'}: file not found"
    res = core.run_cli("--once")
    assert res.returncode == 2
    assert "give --config.file FILE" in res.stderr and "--replay FILE" in res.stderr
    res = core.run_cli("--replay-loop", "--once")
    assert res.returncode == 2 and "--replay-loop: needs --replay FILE" in res.stderr


def test_password_never_in_output_or_logs(tmp_path, pwfile, core):
    """A live database on a closed port, debug logging: the password shows up nowhere."""
    port = core.free_port()
    path = write(tmp_path, f"""
        timeout_seconds: 3
        connect_timeout_seconds: 1
        databases:
          - name: down
            dsn: 127.0.0.1:{port}/ORCL
            user: monitor
            password_file: {pwfile}
    """)
    res = core.run_cli("--config.file", path, "--once", "--log.level", "debug")
    assert res.returncode == 1                  # --once: a database is down
    assert core.sample(res.stdout, "oracle_up", database="down") == 0.0
    assert PASSWORD not in res.stdout and PASSWORD not in res.stderr
    assert "DPY-6005" in res.stderr and "Connection refused" in res.stderr


def test_shipped_example_is_valid(tmp_path, pwfile, monkeypatch, core):
    text = (core.ROOT / "examples" / "oracle-exporter.yml").read_text()
    text = text.replace("/etc/oracle-exporter/prod1.password", pwfile)
    monkeypatch.setenv("RAC2_PASSWORD", "from-env")
    cfg = load_config(write(tmp_path, text), known_collectors=collectors.COLLECTORS)
    assert [(d.name, d.timeout_seconds, d.labels) for d in cfg.databases] == [
        ("prod1", 10.0, {"env": "prod"}), ("rac2", 5.0, {"env": "prod"})]
    assert cfg.settings.histogram_events == list(DEFAULT_HISTOGRAM_EVENTS)
    assert cfg.settings.latches == list(DEFAULT_LATCHES)
    # the example names every built-in collector (a collector added later need not edit it)
    assert set(collectors.ORDER) - {"custom_sql"} | {"custom"} <= set(cfg.settings.collectors) <= set(collectors.COLLECTORS)
