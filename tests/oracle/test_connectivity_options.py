"""Issue 10.7: the connectivity real sites need (thick mode, config_dir / tnsnames aliases, TCPS
wallets, SYSDG / SYSBACKUP logon), each checked where it can go wrong.

What reaches python-oracledb is checked on the wire where a fake listener can see it: the
real thin driver resolves a tnsnames.ora alias from config_dir and sends that descriptor's
SERVICE_NAME to the listener the alias names; a TCPS alias with wallet_location sends a TLS
ClientHello. The logon mode travels in the authentication phase (after the listener), so it is
checked in the keyword arguments handed to oracledb.connect(). Thick mode itself cannot run
here (no Oracle Client libraries on this machine): its configuration and its failure at start
(libraries absent: one line, exit 2) are what is tested."""
from __future__ import annotations

import datetime
import time
from pathlib import Path

import oracledb
import pytest

from exporter_common.config import ConfigError
from oracle_exporter.config import load_config
from oracle_exporter.sources import failure_reason
from oracle_exporter.sources.live import LiveSource, connect_args, init_driver

init_driver()   # thin, as the CLI settles it at start


def write_config(tmp_path: Path, body: str) -> Path:
    cfg = tmp_path / "oracle.yml"
    cfg.write_text(body)
    return cfg


def db_entry(dsn: str, extra: str = "") -> str:
    return f"""
databases:
  - name: mon
    dsn: "{dsn}"
    user: mon
    password_env: PW
{extra}"""


def config_error(cfg: Path, monkeypatch) -> str:
    monkeypatch.setenv("PW", "x")
    with pytest.raises(ConfigError) as err:
        load_config(str(cfg))
    return str(err.value)


def fetch_reason(cfg: Path, monkeypatch) -> tuple[str, str]:
    monkeypatch.setenv("PW", "x")
    config = load_config(str(cfg))
    source = LiveSource(config.databases[0], config.settings, connect_timeout=1.0)
    try:
        snap = source.fetch()
    finally:
        source.close()
    text = snap.errors["*"]
    return failure_reason(text), text


def tnsnames(directory: Path, port: int) -> None:
    directory.mkdir(exist_ok=True)
    (directory / "tnsnames.ora").write_text(
        f"MONDB = (DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=127.0.0.1)(PORT={port}))"
        f"(CONNECT_DATA=(SERVICE_NAME=SVC_FROM_ALIAS)))\n"
        f"MONDB_TLS =\n  (DESCRIPTION=(ADDRESS=(PROTOCOL=TCPS)(HOST=127.0.0.1)(PORT={port}))\n"
        f"    (CONNECT_DATA=(SERVICE_NAME=SVC_TLS)))\n")


def pem_wallet(directory: Path, password: bytes | None) -> Path:
    """A PEM wallet as `orapki wallet pkcs12_to_pem` writes it: private key + certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    directory.mkdir(exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "monitor")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    enc = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    (directory / "ewallet.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc)
        + cert.public_bytes(serialization.Encoding.PEM))
    return directory


# -- config_dir: a tnsnames.ora alias as dsn ---------------------------------------------------

def test_an_alias_without_config_dir_is_named_as_unresolved_and_reaches_no_listener(fake_listener, tmp_path,
                                                                                   monkeypatch):
    listener = fake_listener("slow", delay=0.1)
    tnsnames(tmp_path / "tns", listener.port)
    reason, text = fetch_reason(write_config(tmp_path, db_entry("MONDB")), monkeypatch)
    assert reason == "alias not resolved", text
    assert "DPY-4027" in text
    assert listener.accepted == 0


def test_config_dir_resolves_the_alias_to_the_listener_and_service_it_names(fake_listener, tmp_path, monkeypatch):
    listener = fake_listener("slow", delay=0.1)
    tnsnames(tmp_path / "tns", listener.port)
    cfg = write_config(tmp_path, "config_dir: tns          # relative: to this file\n" + db_entry("MONDB"))
    reason, text = fetch_reason(cfg, monkeypatch)
    assert listener.accepted == 1
    assert b"(SERVICE_NAME=SVC_FROM_ALIAS)" in listener.received[0]
    assert reason == "unknown service", text            # the listener's REFUSE, read through


def test_an_alias_missing_from_tnsnames_is_unresolved(fake_listener, tmp_path, monkeypatch):
    listener = fake_listener("slow", delay=0.1)
    tnsnames(tmp_path / "tns", listener.port)
    reason, text = fetch_reason(write_config(tmp_path, "config_dir: tns\n" + db_entry("NOSUCH")), monkeypatch)
    assert reason == "alias not resolved", text
    assert listener.accepted == 0


@pytest.mark.parametrize("key, body", [
    ("config_dir", "config_dir: no-such-dir\n"),
    ("thick_mode.lib_dir", "thick_mode: {lib_dir: no-such-dir}\n"),
])
def test_a_directory_that_does_not_exist_is_an_error_at_start(tmp_path, monkeypatch, key, body):
    message = config_error(write_config(tmp_path, body + db_entry("h:1521/S")), monkeypatch)
    assert f"{key}: {tmp_path / 'no-such-dir'}: no such directory" in message


# -- TCPS wallet (thin mode) ---------------------------------------------------------------------

def test_a_tcps_alias_with_a_wallet_speaks_tls_to_the_listener(fake_listener, tmp_path, monkeypatch):
    listener = fake_listener("slow", delay=0.1)
    tnsnames(tmp_path / "tns", listener.port)
    pem_wallet(tmp_path / "wallet", b"wallet-secret")
    (tmp_path / "wallet.pw").write_text("wallet-secret\n")
    cfg = write_config(tmp_path, "config_dir: tns\n" + db_entry(
        "MONDB_TLS", "    wallet_location: wallet\n    wallet_password_file: wallet.pw\n"))
    reason, text = fetch_reason(cfg, monkeypatch)
    assert listener.accepted == 1
    assert listener.received[0][:3] == b"\x16\x03\x01"        # a TLS handshake record: ClientHello
    assert b"SVC_TLS" not in listener.received[0]             # the descriptor travels inside TLS only
    assert reason in ("tls failed", "connection closed"), text   # our fake answers TNS, not TLS


def test_a_wallet_removed_after_start_is_named_as_a_tls_failure(fake_listener, tmp_path, monkeypatch):
    listener = fake_listener("slow", delay=0.1)
    wallet = pem_wallet(tmp_path / "wallet", None)
    cfg = write_config(tmp_path, db_entry(f"tcps://127.0.0.1:{listener.port}/S",
                                          "    wallet_location: wallet\n"))
    monkeypatch.setenv("PW", "x")
    config = load_config(str(cfg))
    (wallet / "ewallet.pem").unlink()
    source = LiveSource(config.databases[0], config.settings, connect_timeout=1.0)
    text = source.fetch().errors["*"]
    source.close()
    assert failure_reason(text) == "tls failed", text
    assert "ewallet.pem" in text


@pytest.mark.parametrize("setup, extra, expect", [
    ("missing", "    wallet_location: wallet\n", "ewallet.pem: No such file or directory"),
    ("not-pem", "    wallet_location: wallet\n", "ewallet.pem: not a PEM file"),
    ("encrypted", "    wallet_location: wallet\n", "holds an encrypted private key: set wallet_password_file"),
    ("plain", "    wallet_password_env: WPW\n", "wallet_password_env: needs wallet_location"),
])
def test_wallet_mistakes_are_one_line_at_start_never_a_passphrase_prompt(tmp_path, monkeypatch, setup, extra,
                                                                        expect):
    """An encrypted key without a password would make OpenSSL prompt "Enter PEM pass phrase:" on
    the exporter's terminal at the first connect (seen with python-oracledb 26.1)."""
    wallet = tmp_path / "wallet"
    wallet.mkdir()
    if setup == "not-pem":
        (wallet / "ewallet.pem").write_bytes(b"\x30\x82\x01\x0a")     # a DER/PKCS#12 file, not PEM
    elif setup in ("encrypted", "plain"):
        pem_wallet(wallet, b"secret" if setup == "encrypted" else None)
    monkeypatch.setenv("WPW", "secret")
    message = config_error(write_config(tmp_path, db_entry("tcps://h:2484/S", extra)), monkeypatch)
    assert expect in message
    assert "\n" not in message


# -- logon mode ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode, constant", [("sysdg", "AUTH_MODE_SYSDGD"), ("sysbackup", "AUTH_MODE_SYSBKP"),
                                            ("default", "AUTH_MODE_DEFAULT"), ("SYSDG", "AUTH_MODE_SYSDGD")])
def test_the_logon_mode_reaches_connect(tmp_path, monkeypatch, mode, constant):
    monkeypatch.setenv("PW", "x")
    cfg = write_config(tmp_path, db_entry("h:1521/S", f"    mode: {mode}\n"))
    args = connect_args(load_config(str(cfg)).databases[0], 2.5)
    assert args["mode"] == getattr(oracledb, constant)
    assert (args["user"], args["password"], args["tcp_connect_timeout"], args["retry_count"]) == ("mon", "x", 2.5, 0)


def test_sysdba_and_unknown_modes_are_refused(tmp_path, monkeypatch):
    message = config_error(write_config(tmp_path, db_entry("h:1521/S", "    mode: sysdba\n")), monkeypatch)
    assert "mode: must be one of default, sysdg, sysbackup, got 'sysdba'" in message


def test_thin_mode_hands_config_dir_and_the_wallet_to_connect(tmp_path, monkeypatch):
    pem_wallet(tmp_path / "wallet", b"pw")
    (tmp_path / "tns").mkdir()
    monkeypatch.setenv("WPW", "pw")
    monkeypatch.setenv("PW", "x")
    cfg = write_config(tmp_path, "config_dir: tns\n" + db_entry(
        "tcps://h:2484/S", "    wallet_location: wallet\n    wallet_password_env: WPW\n"))
    db = load_config(str(cfg)).databases[0]
    args = connect_args(db, 5.0, thin=True)
    assert (args["config_dir"], args["wallet_location"], args["wallet_password"]) == (
        str(tmp_path / "tns"), str(tmp_path / "wallet"), "pw")
    assert "pw" not in repr(db)                                      # never printed


# -- thick mode ---------------------------------------------------------------------------------------

def test_thick_mode_settings_and_external_auth(tmp_path, monkeypatch):
    monkeypatch.setenv("PW", "x")
    (tmp_path / "lib").mkdir()
    (tmp_path / "tns").mkdir()
    cfg = write_config(tmp_path, """config_dir: tns
thick_mode: {lib_dir: lib}
databases:
  - {name: mon, dsn: /@MONDB, external_auth: true, mode: sysdg}
""")
    config = load_config(str(cfg))
    assert (config.thick_mode, config.lib_dir, config.config_dir) == (True, str(tmp_path / "lib"), str(tmp_path / "tns"))
    args = connect_args(config.databases[0], 5.0, thin=False)
    assert args["externalauth"] is True and "user" not in args and "password" not in args
    assert "config_dir" not in args and "wallet_location" not in args   # thick: init_oracle_client / sqlnet.ora
    assert args["mode"] == oracledb.AUTH_MODE_SYSDGD
    assert load_config(str(write_config(tmp_path, "thick_mode: true\n" + db_entry("h:1/S")))).thick_mode is True


@pytest.mark.parametrize("body, expect", [
    (db_entry("h:1/S", "    external_auth: true\n"), "external_auth: needs thick_mode"),
    ("thick_mode: true\n" + db_entry("h:1/S", "    external_auth: true\n"),
     "user: not with external_auth: the wallet holds the credentials"),
    ("thick_mode: true\n" + db_entry("h:1/S", "    wallet_location: w\n"), "wallet_location: thin mode only"),
    ("thick_mode: yes please\n" + db_entry("h:1/S"), "thick_mode"),
    ("thick_mode: {lib_dir: ., libdir: x}\n" + db_entry("h:1/S"), "libdir"),
])
def test_thick_mode_mistakes_are_config_errors(tmp_path, monkeypatch, body, expect):
    assert expect in config_error(write_config(tmp_path, body), monkeypatch)


def test_thick_mode_without_oracle_client_libraries_stops_at_start_with_one_line(core, tmp_path):
    """A fresh process (the driver mode is settled once per process): the libraries cannot be
    loaded from an empty lib_dir, nor from the system path on this machine."""
    (tmp_path / "empty").mkdir()
    cfg = write_config(tmp_path, "thick_mode: {lib_dir: empty}\n" + db_entry("h:1/S"))
    res = core.run_cli("--config.file", str(cfg), "--once", env={"PW": "x"})
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "thick_mode: cannot load the Oracle Client libraries: DPI-1047" in lines[0]
    assert "Traceback" not in res.stderr and res.stdout == ""


@pytest.mark.parametrize("text, reason", [
    ("connect failed: DPY-4027: no configuration directory specified", "alias not resolved"),
    ('connect failed: DPY-4000: unable to find "X" in /etc/tnsnames.ora', "alias not resolved"),
    ("connect failed: ORA-12154: TNS:could not resolve the connect identifier specified", "alias not resolved"),
    ("connect failed: DPY-6005: cannot connect to database.; DPY-2018: wallet file /w/ewallet.pem was not found",
     "tls failed"),
    ("connect failed: DPY-6005: cannot connect to database.; [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
     "failed", "tls failed"),
    ("connect failed: ORA-29024: Certificate validation failure", "tls failed"),
])
def test_connectivity_failures_have_their_own_reasons(text, reason):
    assert failure_reason(text) == reason


# -- reconnect backoff ---------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("cap, attempts", [(0.2, (6, 40)), (None, (1, 3))])
def test_reconnect_backoff_max_seconds_bounds_the_retry_gap(fake_listener, exporter_process, tmp_path, monkeypatch,
                                                            cap, attempts):
    """Scraped every 0.1 s for 2.5 s, a database whose listener closes every connection is
    retried after 1 s, 2 s, ... by default, and every 0.2 s with the cap at 0.2 s."""
    import requests
    listener = fake_listener("close")
    cfg = write_config(tmp_path, ("" if cap is None else f"reconnect_backoff_max_seconds: {cap}\n")
                       + "connect_timeout_seconds: 0.5\n" + db_entry(f"127.0.0.1:{listener.port}/S"))
    monkeypatch.setenv("PW", "x")
    proc = exporter_process("--config.file", str(cfg))
    end = time.monotonic() + 2.5
    while time.monotonic() < end:
        assert 'oracle_up{database="mon"} 0.0' in requests.get(proc.url + "/metrics", timeout=5).text
        time.sleep(0.1)
    low, high = attempts
    assert low <= listener.accepted <= high, listener.accepted


def test_reconnect_backoff_max_seconds_must_be_a_positive_number(tmp_path, monkeypatch):
    message = config_error(write_config(tmp_path, "reconnect_backoff_max_seconds: 0\n" + db_entry("h:1/S")),
                           monkeypatch)
    assert "reconnect_backoff_max_seconds" in message
