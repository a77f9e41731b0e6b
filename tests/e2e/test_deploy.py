"""deploy/: the systemd units pass `systemd-analyze verify` without a single
warning, carry the hardening the project promises, score well in
`systemd-analyze security`, and the example configs load with the exporters'
own config loaders."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_support import ROOT

UNITS = ROOT / "deploy" / "systemd"
INSTALL_BIN = "/opt/oracle-dbhost-monitoring/venv/bin/"


def _unit(name: str) -> dict[str, list[str]]:
    """Key -> values of a unit file (continuation lines joined), section-agnostic."""
    out: dict[str, list[str]] = {}
    text = (UNITS / name).read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        k, _, v = line.partition("=")
        out.setdefault(k.strip(), []).append(v.strip())
    return out


@pytest.fixture
def installed_units(tmp_path) -> Path:
    """The units with ExecStart pointing at this checkout's venv (the /opt path of
    a real install does not exist here; verify checks that the binary exists)."""
    bindir = Path(sys.executable).parent
    for exe in ("oracle-exporter", "dbhost-exporter"):
        if not (bindir / exe).exists():
            pytest.skip(f"{bindir / exe} missing: install the project (make venv)")
    for unit in UNITS.glob("*.service"):
        (tmp_path / unit.name).write_text(unit.read_text().replace(INSTALL_BIN, f"{bindir}/"))
    return tmp_path


@pytest.mark.parametrize("unit", ["oracle-exporter.service", "dbhost-exporter.service"])
def test_systemd_analyze_verify_is_clean(installed_units, unit):
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze not available")
    res = subprocess.run(["systemd-analyze", "verify", str(installed_units / unit)], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stderr.strip() == "" and res.stdout.strip() == "", res.stderr   # verify reports bad values as warnings


@pytest.mark.parametrize("unit", ["oracle-exporter.service", "dbhost-exporter.service"])
def test_systemd_analyze_security_exposure_is_low(installed_units, unit):
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze not available")
    res = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(installed_units / unit)],
                         capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", res.stdout)
    assert m, res.stdout[-500:] + res.stderr
    assert float(m.group(1)) <= 2.5, res.stdout   # "OK" band; an unhardened service scores 9.6


@pytest.mark.parametrize("unit,exe,user", [("oracle-exporter.service", "oracle-exporter", "oracle-exporter"),
                                           ("dbhost-exporter.service", "dbhost-exporter", "dbhost-exporter")])
def test_units_are_hardened(unit, exe, user):
    u = _unit(unit)
    assert u["User"] == [user] and u["Group"] == [user]
    assert u["NoNewPrivileges"] == ["yes"]
    assert u["ProtectSystem"] == ["strict"]
    assert u["CapabilityBoundingSet"] == [""] and u["AmbientCapabilities"] == [""]
    assert u["ReadOnlyPaths"][0].split()[-1] == f"/etc/{exe}"
    assert u["ExecStart"][0].split()[0] == INSTALL_BIN + exe
    # the port in ExecStart is the documented default
    port = {"oracle-exporter": "19161", "dbhost-exporter": "19162"}[exe]
    assert f"--web.listen-address=:{port}" in u["ExecStart"][0]
    sysusers = (UNITS / "oracle-dbhost-monitoring.sysusers").read_text()
    assert re.search(rf"^u\s+{user}\s+-\s", sysusers, re.M)


def test_dbhost_unit_sees_other_users_processes():
    u = _unit("dbhost-exporter.service")
    # ProtectProc=invisible or ProcSubset=pid would hide the oracle user's /proc/PID
    assert "ProtectProc" not in u and "ProcSubset" not in u
    assert set(u["ReadOnlyPaths"][0].split()) == {"/proc", "/sys", "/etc/dbhost-exporter"}


def test_oracle_password_is_a_credential_not_an_argument():
    u = _unit("oracle-exporter.service")
    assert u["LoadCredential"] == ["monitor.password:/etc/oracle-exporter/monitor.password"]
    assert "password" not in u["ExecStart"][0].replace("--config.file", "")
    import yaml
    doc = yaml.safe_load((ROOT / "deploy" / "oracle-exporter.yml").read_text())
    assert {d["password_file"] for d in doc["databases"]} == {
        "/run/credentials/oracle-exporter.service/monitor.password"}


def test_example_configs_load_with_the_exporters_loaders(tmp_path):
    from dbhost_exporter.config import load_config as load_dbhost
    from oracle_exporter.config import load_config as load_oracle
    cfg = load_dbhost(str(ROOT / "deploy" / "dbhost-exporter.yml"))
    assert [(r.by, r.value, r.role) for r in cfg.lun.roles] == [
        ("multipath", "mpath_redo01", "redo"), ("multipath", "mpath_redo02", "redo"),
        ("multipath", "mpath_data01", "data"), ("multipath", "mpath_arch01", "arch")]
    # the oracle example with its credential path pointed at a real file
    pw = tmp_path / "monitor.password"
    pw.write_text("s3cret\n")
    text = (ROOT / "deploy" / "oracle-exporter.yml").read_text().replace(
        "/run/credentials/oracle-exporter.service/monitor.password", str(pw))
    (tmp_path / "o.yml").write_text(text)
    ocfg = load_oracle(str(tmp_path / "o.yml"))
    assert [(d.name, d.user, d.password) for d in ocfg.databases] == [
        ("ODS01", "oramon", "s3cret"), ("DWH01", "oramon", "s3cret")]


def test_sysusers_creates_both_users_and_the_tls_group(tmp_path):
    if not shutil.which("systemd-sysusers"):
        pytest.skip("systemd-sysusers not available")
    conf = tmp_path / "etc" / "sysusers.d" / "oracle-dbhost-monitoring.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text((UNITS / "oracle-dbhost-monitoring.sysusers").read_text())
    res = subprocess.run(["systemd-sysusers", f"--root={tmp_path}"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    users = {l.split(":")[0]: l.split(":") for l in (tmp_path / "etc" / "passwd").read_text().splitlines()}
    groups = {l.split(":")[0]: l.split(":") for l in (tmp_path / "etc" / "group").read_text().splitlines()}
    for user in ("oracle-exporter", "dbhost-exporter"):
        assert users[user][6] == "/usr/sbin/nologin"
        assert 0 < int(users[user][2]) < 1000          # a system user
        assert users[user][3] == groups[user][2]      # its own primary group (the units' Group=)
    assert sorted(groups["oracle-dbhost-monitoring"][3].split(",")) == ["dbhost-exporter", "oracle-exporter"]


def test_web_config_example_loads_once_filled_in(tmp_path):
    """deploy/web-config.yml with a real key pair at the paths docs/stack.md installs
    them to and a real bcrypt hash: the exporters' loader accepts it (TLS on, one user)."""
    if not shutil.which("openssl"):
        pytest.skip("openssl not available")
    import bcrypt
    import yaml

    from exporter_common.web import load_web_config
    src = (ROOT / "deploy" / "web-config.yml").read_text()
    doc = yaml.safe_load(src)
    cert, key = doc["tls_server_config"]["cert_file"], doc["tls_server_config"]["key_file"]
    stack_md = (ROOT / "docs" / "stack.md").read_text()
    assert re.search(rf"^install -m 0644 host\.crt {re.escape(cert)}$", stack_md, re.M)
    assert re.search(rf"^install -m 0640 -g oracle-dbhost-monitoring host\.key {re.escape(key)}$", stack_md, re.M)
    for exe in ("oracle-exporter", "dbhost-exporter"):
        assert f"--web.config.file=/etc/{exe}/web-config.yml" in " ".join(_unit(f"{exe}.service")["ExecStart"])
        assert re.search(rf"^install -m 0640 -g {exe} deploy/web-config.yml /etc/{exe}/web-config.yml$", stack_md, re.M)
    res = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=db1",
                          "-keyout", str(tmp_path / "k.pem"), "-out", str(tmp_path / "c.pem")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    placeholder = doc["basic_auth_users"]["prometheus"]
    real = bcrypt.hashpw(b"pw", bcrypt.gensalt(4)).decode().replace("$2b$", "$2y$", 1)
    filled = src.replace(cert, str(tmp_path / "c.pem")).replace(key, str(tmp_path / "k.pem")).replace(placeholder, real)
    (tmp_path / "web.yml").write_text(filled)
    cfg = load_web_config(str(tmp_path / "web.yml"))
    assert cfg.ssl_context is not None and cfg.ssl_context.minimum_version.name == "TLSv1_2"
    assert list(cfg.users) == ["prometheus"]
    assert bcrypt.checkpw(b"pw", cfg.users["prometheus"])
