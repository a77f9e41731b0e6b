"""exporter_common: config errors name file and field; listen addresses parse; web config validates."""
import pytest

from exporter_common.config import ConfigError, Fields, load_yaml, secret_from
from exporter_common.web import load_web_config, parse_listen_address


def test_load_yaml_reports_line_and_file(tmp_path):
    p = tmp_path / "bad.yml"
    p.write_text("databases:\n  - name: a\n   dsn: x\n")
    with pytest.raises(ConfigError) as exc:
        load_yaml(str(p))
    assert str(p) in str(exc.value)
    assert "line 3" in str(exc.value)


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_yaml(str(tmp_path / "nope.yml"))


def test_fields_name_the_path():
    f = Fields("c.yml", "databases[2]", {"name": 5, "extra": 1})
    with pytest.raises(ConfigError) as exc:
        f.str("name")
    assert str(exc.value) == "c.yml: databases[2].name: expected a non-empty string, got 5"
    with pytest.raises(ConfigError, match=r"databases\[2\]\.dsn: is required"):
        f.str("dsn", required=True)


def test_reject_unknown_catches_typos():
    f = Fields("c.yml", "", {"timeout_seconds": 3, "timout": 4})
    assert f.number("timeout_seconds") == 3
    with pytest.raises(ConfigError, match="timout: unknown field"):
        f.reject_unknown()


def test_number_bounds_and_bool_rejected():
    f = Fields("c.yml", "", {"a": True, "b": -1})
    with pytest.raises(ConfigError, match="expected a number"):
        f.number("a")
    with pytest.raises(ConfigError, match="must be >= 0"):
        f.number("b", minimum=0)


def test_secret_from_file_env_and_errors(tmp_path, monkeypatch):
    pw = tmp_path / "pw"
    pw.write_text("s3cret\n")
    assert secret_from(Fields("c", "db", {"password_file": str(pw)}), "password_file", "password_env", "password") == "s3cret"
    monkeypatch.setenv("ORA_PW", "fromenv")
    assert secret_from(Fields("c", "db", {"password_env": "ORA_PW"}), "password_file", "password_env", "password") == "fromenv"
    with pytest.raises(ConfigError, match="not both"):
        secret_from(Fields("c", "db", {"password_env": "ORA_PW", "password_file": str(pw)}),
                    "password_file", "password_env", "password")
    with pytest.raises(ConfigError, match="MISSING_VAR is not set"):
        secret_from(Fields("c", "db", {"password_env": "MISSING_VAR"}), "password_file", "password_env", "password")
    with pytest.raises(ConfigError) as exc:
        secret_from(Fields("c", "db", {}), "password_file", "password_env", "password")
    assert "s3cret" not in str(exc.value)


@pytest.mark.parametrize("addr,expected", [
    (":19161", ("", 19161)), ("127.0.0.1:80", ("127.0.0.1", 80)), ("[::1]:9", ("::1", 9)),
])
def test_parse_listen_address(addr, expected):
    assert parse_listen_address(addr) == expected


@pytest.mark.parametrize("addr", ["19161", "host:", "host:99999", "host:abc"])
def test_parse_listen_address_rejects(addr):
    with pytest.raises(ConfigError):
        parse_listen_address(addr)


def test_web_config_rejects_plain_password_and_unknown_keys(tmp_path):
    p = tmp_path / "web.yml"
    p.write_text("basic_auth_users:\n  prom: plaintext\n")
    with pytest.raises(ConfigError, match="basic_auth_users.prom: expected a bcrypt hash"):
        load_web_config(str(p))
    p.write_text("tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: /nonexistent.key\n")
    with pytest.raises(ConfigError, match="tls_server_config.cert_file: cannot load"):
        load_web_config(str(p))
    p.write_text("basic_auth_user: {}\n")
    with pytest.raises(ConfigError, match="basic_auth_user: unknown field"):
        load_web_config(str(p))


def test_web_config_accepts_htpasswd_2y_hashes(tmp_path):
    import bcrypt
    h = bcrypt.hashpw(b"pw", bcrypt.gensalt(rounds=4)).decode().replace("$2b$", "$2y$", 1)
    p = tmp_path / "web.yml"
    p.write_text(f"basic_auth_users:\n  prom: '{h}'\n")
    cfg = load_web_config(str(p))
    assert bcrypt.checkpw(b"pw", cfg.users["prom"])


def test_web_config_rejects_a_malformed_bcrypt_hash(tmp_path):
    p = tmp_path / "web.yml"
    p.write_text("basic_auth_users:\n  prom: '$2y$10$REPLACE_WITH_A_REAL_BCRYPT_HASH'\n")
    with pytest.raises(ConfigError, match="basic_auth_users.prom: not a valid bcrypt hash"):
        load_web_config(str(p))


def test_web_config_tls_paths_are_relative_to_the_file(tmp_path):
    """exporter-toolkit resolves cert_file/key_file relative to the web config file."""
    import shutil
    import subprocess
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    tls = tmp_path / "conf" / "tls"
    tls.mkdir(parents=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-keyout", str(tls / "k.pem"), "-out", str(tls / "c.pem")], check=True, capture_output=True)
    web = tmp_path / "conf" / "web.yml"
    web.write_text("tls_server_config:\n  cert_file: tls/c.pem\n  key_file: tls/k.pem\n")
    assert load_web_config(str(web)).ssl_context is not None


def test_auth_cache_treats_unusable_hash_as_failed_login():
    import base64
    from exporter_common.web import _AuthCache
    cache = _AuthCache({"prom": b"$2b$10$tooshort"})
    header = "Basic " + base64.b64encode(b"prom:pw").decode()
    assert cache.check(header) is False


# ---------------------------------------------------------------- relative paths (issue 16.3)
# Every path in a config file is relative to that file's directory (as in Prometheus and
# exporter-toolkit), never to the working directory of the process.

def _elsewhere(tmp_path, monkeypatch):
    other = tmp_path / "cwd"
    other.mkdir()
    monkeypatch.chdir(other)


def test_oracle_password_file_is_relative_to_the_config_file(tmp_path, monkeypatch):
    from oracle_exporter.config import load_config
    conf = tmp_path / "etc"
    conf.mkdir()
    (conf / "pw.txt").write_text("s3cret\n")
    cfg = conf / "db.yml"
    cfg.write_text("databases:\n  - {name: a, dsn: 'h:1521/s', user: u, password_file: pw.txt}\n")
    _elsewhere(tmp_path, monkeypatch)
    assert load_config(str(cfg)).databases[0].password == "s3cret"
    # and the error names the path it looked at
    cfg.write_text("databases:\n  - {name: a, dsn: 'h:1521/s', user: u, password_file: nope.txt}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(str(cfg))
    assert f"cannot read password file {str(conf / 'nope.txt')!r}" in str(exc.value)


def test_relative_config_path_given_relative_to_cwd_still_resolves(tmp_path, monkeypatch):
    from oracle_exporter.config import load_config
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "pw").write_text("x\n")
    (tmp_path / "etc" / "db.yml").write_text(
        "databases:\n  - {name: a, dsn: 'h:1521/s', user: u, password_file: ./pw}\n")
    monkeypatch.chdir(tmp_path)
    assert load_config("etc/db.yml").databases[0].password == "x"


def test_dbhost_kstat_file_is_relative_to_the_config_file(tmp_path, monkeypatch):
    import subprocess
    import sys
    from dbhost_exporter.config import load_config
    from dbhost_exporter.demo import tree
    fx = tree.build_tree(tmp_path / "tree", arcstats=None, with_proc=False)
    cfg = tmp_path / "tree" / "dbhost.yml"
    cfg.write_text("zfs: {kstat_file: kstat_p.txt}\n")
    _elsewhere(tmp_path, monkeypatch)
    assert load_config(str(cfg)).zfs_kstat_file == str(fx.kstat_file)
    out = subprocess.run([sys.executable, "-m", "dbhost_exporter.cli", "--once", f"--path.procfs={fx.procfs}",
                          f"--path.sysfs={fx.sysfs}", f"--config.file={cfg}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert 'dbhost_collector_success{collector="zfs"} 1.0' in out.stdout


@pytest.mark.slow
def test_web_config_client_ca_is_relative_to_the_file(tmp_path, monkeypatch):
    import shutil
    import subprocess
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    tls = tmp_path / "conf" / "tls"
    tls.mkdir(parents=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-keyout", str(tls / "k.pem"), "-out", str(tls / "c.pem")], check=True, capture_output=True)
    web = tmp_path / "conf" / "web.yml"
    web.write_text("tls_server_config:\n  cert_file: tls/c.pem\n  key_file: tls/k.pem\n"
                   "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: tls/c.pem\n")
    _elsewhere(tmp_path, monkeypatch)
    assert load_web_config(str(web)).ssl_context is not None


def test_fields_path_resolves_against_the_file():
    f = Fields("/etc/x/c.yml", "", {"a": "rel/f", "b": "/abs/f"})
    assert f.file_path("a") == "/etc/x/rel/f"
    assert f.file_path("b") == "/abs/f"
    assert f.file_path("c") is None
