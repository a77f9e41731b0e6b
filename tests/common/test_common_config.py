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
