"""What a newcomer meets on the command line of both exporters (issue 16.6, issue 10.4):
every mistake is reported on stderr as lines starting with ``error:`` (exit 2, never a
traceback), names the flag or the file and field, suggests the key meant, and lists
every problem of a file at once rather than one per attempt."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "exporters" / "oracle_exporter" / "demo" / "demo-before.jsonl"


def _run(exe: str, *args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    module = {"oracle_exporter": "oracle_exporter", "dbhost_exporter": "dbhost_exporter.cli"}[exe]
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=env)


def _errors(res: subprocess.CompletedProcess) -> list[str]:
    assert "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), res.stderr
    return lines


def test_dbhost_exporter_version():
    res = _run("dbhost_exporter", "--version")
    from dbhost_exporter import __version__
    assert res.returncode == 0 and res.stdout.strip() == f"dbhost-exporter {__version__}"


@pytest.mark.parametrize("exe,extra", [("dbhost_exporter", []), ("oracle_exporter", ["--replay", str(DEMO)])])
def test_missing_web_config_names_the_flag_also_with_once(tmp_path, exe, extra):
    missing = tmp_path / "web.yml"
    for once in ([], ["--once"]):
        res = _run(exe, *extra, "--web.config.file", str(missing), "--web.listen-address", "127.0.0.1:0", *once)
        assert res.returncode == 2, (once, res.stdout[:200])
        assert _errors(res) == [f"error: --web.config.file {missing}: file not found"]
        assert res.stdout == ""


def test_tls_load_error_names_the_paths(tmp_path):
    (tmp_path / "c.pem").write_text("not a certificate\n")
    (tmp_path / "k.pem").write_text("not a key\n")
    web = tmp_path / "web.yml"
    web.write_text("tls_server_config: {cert_file: c.pem, key_file: k.pem}\n")
    res = _run("dbhost_exporter", "--web.config.file", str(web), "--once")
    (line,) = _errors(res)
    assert line.startswith(f"error: {web}: tls_server_config.cert_file: cannot load certificate "
                           f"{tmp_path / 'c.pem'} with key {tmp_path / 'k.pem'}: ")


def test_recording_given_as_config_hints_at_replay():
    res = _run("oracle_exporter", "--config.file", str(DEMO), "--once")
    assert res.returncode == 2
    assert _errors(res) == [f"error: {DEMO}: this is a recording (JSON Lines), not a config file: "
                            "serve it with --replay FILE"]


def test_unknown_field_suggests_the_known_one(tmp_path):
    cfg = tmp_path / "o.yml"
    cfg.write_text("timeout_second: 3\ndatabases:\n  - {name: a, dsn: 'h:1/s', user: u, password_env: PW, "
                   "lables: {env: x}}\n")
    res = _run("oracle_exporter", "--config.file", str(cfg), "--once", env=dict(os.environ, PW="x"))
    assert res.returncode == 2
    assert _errors(res) == [
        f"error: {cfg}: databases[0].lables: unknown field (did you mean labels?)",
        f"error: {cfg}: timeout_second: unknown field (did you mean timeout_seconds?)",
    ] or _errors(res) == [
        f"error: {cfg}: timeout_second: unknown field (did you mean timeout_seconds?)",
        f"error: {cfg}: databases[0].lables: unknown field (did you mean labels?)",
    ]


def test_all_errors_of_a_file_at_once(tmp_path):
    cfg = tmp_path / "o.yml"
    cfg.write_text("timeout_seconds: .nan\nconnect_timeout_seconds: .inf\nlatchs: []\ndatabases:\n"
                   "  - {name: a, dsn: 'h:1/s', user: u}\n"
                   "  - {name: b, dsn: 'h:1/s', user: u, password_env: PW, timeout_seconds: -1}\n")
    res = _run("oracle_exporter", "--config.file", str(cfg), "--once", env=dict(os.environ, PW="x"))
    assert res.returncode == 2
    assert sorted(_errors(res)) == sorted([
        f"error: {cfg}: timeout_seconds: expected a finite number, got nan",
        f"error: {cfg}: connect_timeout_seconds: expected a finite number, got inf",
        f"error: {cfg}: latchs: unknown field (did you mean latches?)",
        f"error: {cfg}: databases[0].password_file: a password is required: set password_file or password_env",
        f"error: {cfg}: databases[1].timeout_seconds: must be >= 0.1, got -1",
    ])


@pytest.mark.slow
@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", ".NaN"])
def test_non_finite_numbers_are_one_line_exit_2(tmp_path, value):
    cfg = tmp_path / "o.yml"
    cfg.write_text(f"timeout_seconds: {value}\ndatabases:\n  - {{name: a, dsn: 'h:1/s', user: u, password_env: PW}}\n")
    res = _run("oracle_exporter", "--config.file", str(cfg), "--once", env=dict(os.environ, PW="x"))
    assert res.returncode == 2
    (line,) = _errors(res)
    assert line.startswith(f"error: {cfg}: timeout_seconds: expected a finite number, got ")
    dcfg = tmp_path / "d.yml"
    dcfg.write_text(f"max_series: {value}\n")
    res = _run("dbhost_exporter", "--config.file", str(dcfg), "--once")
    assert res.returncode == 2
    (line,) = _errors(res)
    assert line.startswith(f"error: {dcfg}: max_series: expected a finite number, got ")


def test_dbhost_config_reports_every_error(tmp_path):
    cfg = tmp_path / "d.yml"
    cfg.write_text("collectors: {lun: yes, zfs: maybe}\nmax_serie: 5\nlun: {default_role: 'a b'}\n")
    res = _run("dbhost_exporter", "--config.file", str(cfg), "--once")
    assert res.returncode == 2
    assert sorted(_errors(res)) == sorted([
        f"error: {cfg}: collectors.zfs: expected true or false, got 'maybe'",
        f"error: {cfg}: max_serie: unknown field (did you mean max_series?)",
        f"error: {cfg}: lun.default_role: expected a short word (letters, digits, _.:-), got 'a b'",
    ])


def test_log_format_has_help():
    for exe in ("dbhost_exporter", "oracle_exporter"):
        out = _run(exe, "--help").stdout
        m = re.search(r"\n  --log.format \{logfmt,json\}\s+(.+?)\n  -", out, re.S)
        assert m and "logfmt" in m.group(1) and "json" in m.group(1), out


@pytest.mark.parametrize("dsn", ["scott/tiger@db1:1521/PROD", "scott/tiger@PRODALIAS", " c##mon/tiger@//db1/PROD"])
def test_credentials_in_a_dsn_are_rejected_without_repeating_them(tmp_path, dsn):
    """Issue 15.5: user/password@... in a DSN would put the password in every log line and
    recording that shows the DSN: rejected at start, naming the field, never the value."""
    cfg = tmp_path / "o.yml"
    cfg.write_text(f"databases:\n  - {{name: a, dsn: '{dsn}', user: u, password_env: PW}}\n")
    res = _run("oracle_exporter", "--config.file", str(cfg), "--once", env=dict(os.environ, PW="x"))
    assert res.returncode == 2
    assert _errors(res) == [f"error: {cfg}: databases[0].dsn: contains a user name and password "
                            "(user/password@...): give the user in user and the password in password_file "
                            "or password_env"]
    assert "tiger" not in res.stderr + res.stdout


@pytest.mark.parametrize("dsn", ["db1:1521/PROD", "db1.example.com/PROD", "tcps://db1:2484/PROD?ssl_server_dn_match=on",
                                 "(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=db1)(PORT=1521))(CONNECT_DATA=(SERVICE_NAME=P)))",
                                 "PRODALIAS"])
def test_ordinary_dsns_are_accepted(tmp_path, dsn):
    from oracle_exporter.config import load_config
    cfg = tmp_path / "o.yml"
    cfg.write_text(f"databases:\n  - {{name: a, dsn: '{dsn}', user: u, password_env: HOME}}\n")
    assert load_config(str(cfg)).databases[0].dsn == dsn
