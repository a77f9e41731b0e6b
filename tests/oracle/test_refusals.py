"""Issue 22 point 1, second review: a wrong password costs at most one failed logon per password
change, however long it stays wrong -- across rewrites of the password file (a vault job), across
restarts (a crash loop, a rollout), and SIGHUP reloads instead of killing the exporter."""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import stat
import time
import urllib.request
from pathlib import Path

import pytest

from exporter_common.config import ConfigError, read_secret_file
from mixin.rules import CREDENTIAL_REASONS
from oracle_exporter.config import DatabaseConfig, Settings, load_config
from oracle_exporter.ora_errors import ERRORS, NEW_CREDENTIALS
from oracle_exporter.refusals import SIGHUP_RETRIES, RefusalStore, default_path
from oracle_exporter.sources import failure_reason, is_failed
from oracle_exporter.sources.live import LiveSource
from oracle_sim import FakeClock
from test_lockout import HOUR, Logons, scrape_for

DENIED = "ORA-01017: invalid username/password; logon denied"


def restarted(db: DatabaseConfig, logons: Logons, clock: FakeClock, state: Path) -> LiveSource:
    """A fresh process's source: new objects, only the refusals file shared."""
    return LiveSource(db, Settings(), connect=logons, clock=clock, refusals=RefusalStore(str(state)))


def pw_db(pw: Path) -> DatabaseConfig:
    return DatabaseConfig("p", dsn="h:1521/S", user="mon", password=read_secret_file(str(pw)),
                          password_file=str(pw))


# -- B2: restarts and rewrites ----------------------------------------------------------------

def test_three_restarts_with_the_same_wrong_password_cost_one_logon(tmp_path):
    pw, state = tmp_path / "mon.pw", tmp_path / "state" / "refusals.json"
    pw.write_text("wrong\n")
    clock = FakeClock()
    logons = Logons(clock, DENIED)
    for _ in range(3):
        src = restarted(pw_db(pw), logons, clock, state)
        snaps = scrape_for(src, clock, 600)
        assert all(is_failed(s) for s in snaps)
        assert {failure_reason(s.errors["*"]) for s in snaps} == {"logon denied"}
        src.close()
    assert len(logons.attempts) == 1
    text = state.read_text()
    assert "wrong" not in text                               # hashes only, never the password
    assert stat.S_IMODE(state.stat().st_mode) == 0o600


def test_ten_rewrites_with_the_same_content_cost_one_then_a_change_one_more_then_success(tmp_path):
    pw, state = tmp_path / "mon.pw", tmp_path / "refusals.json"
    pw.write_text("wrong\n")
    clock = FakeClock()
    logons = Logons(clock, DENIED, good="right")
    src = restarted(pw_db(pw), logons, clock, state)
    scrape_for(src, clock, 60)
    for i in range(10):                                      # a vault job rewriting the file
        pw.write_text("wrong\n")
        st = pw.stat()
        os.utime(pw, ns=(st.st_atime_ns, st.st_mtime_ns + (i + 1) * 1_000_000_000))
        scrape_for(src, clock, 300)
    assert [p for _, p in logons.attempts] == ["wrong"]
    pw.write_text("still-wrong\n")
    scrape_for(src, clock, 300)
    assert [p for _, p in logons.attempts] == ["wrong", "still-wrong"]
    pw.write_text("right\n")
    snaps = scrape_for(src, clock, 300)
    assert [p for _, p in logons.attempts] == ["wrong", "still-wrong", "right"]
    assert not is_failed(snaps[-1])
    # the success forgets the refusal: the file holds none any more
    assert json.loads(state.read_text())["refused"] == {}


def test_a_refusal_is_per_user_and_dsn(tmp_path):
    state = tmp_path / "refusals.json"
    store = RefusalStore(str(state))
    store.refuse("mon", "h:1521/A", "pw", DENIED)
    again = RefusalStore(str(state))
    assert again.refused("mon", "h:1521/A", "pw") == DENIED
    assert again.refused("mon", "h:1521/B", "pw") is None   # another database: its own logon
    assert again.refused("other", "h:1521/A", "pw") is None
    assert again.refused("mon", "h:1521/A", "pw2") is None


def test_a_corrupt_refusals_file_is_one_warning_and_starts_empty(tmp_path, caplog):
    state = tmp_path / "refusals.json"
    state.write_text("{not json")
    clock = FakeClock()
    logons = Logons(clock, DENIED)
    with caplog.at_level(logging.WARNING):
        src = restarted(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="wrong"), logons, clock, state)
        scrape_for(src, clock, HOUR)
    assert len(logons.attempts) == 1
    assert sum("refusals file" in r.getMessage() for r in caplog.records) == 1
    assert "hash" in state.read_text()                      # rewritten, usable by the next start


def test_an_unwritable_refusals_file_is_one_warning_and_kept_in_memory(tmp_path, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    clock = FakeClock()
    logons = Logons(clock, DENIED)
    with caplog.at_level(logging.WARNING):
        src = restarted(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="wrong"), logons, clock,
                        blocker / "refusals.json")
        scrape_for(src, clock, HOUR)
    assert len(logons.attempts) == 1
    assert sum("not writable" in r.getMessage() for r in caplog.records) == 1


def test_the_default_refusals_file_follows_xdg_state_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_path() == str(tmp_path / "oracle-exporter" / "refusals.json")
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_path() == str(tmp_path / ".local" / "state" / "oracle-exporter" / "refusals.json")


# -- B1: SIGHUP -----------------------------------------------------------------------------

def test_a_reload_retries_an_unchanged_refused_password_at_most_3_times_an_hour(tmp_path):
    clock = FakeClock()
    logons = Logons(clock, DENIED)
    store = RefusalStore(str(tmp_path / "r.json"), clock=lambda: clock.now)
    src = LiveSource(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="wrong"), Settings(),
                     connect=logons, clock=clock, refusals=store)
    scrape_for(src, clock, 60)
    for _ in range(10):                      # a reload loop (a config manager reloading every 5 min)
        src.request_retry()
        scrape_for(src, clock, 120)
    assert SIGHUP_RETRIES == 3
    assert len(logons.attempts) == 1 + 3     # the first logon, then 3 reloads granted in the hour
    clock.now += HOUR
    src.request_retry()
    scrape_for(src, clock, 60)
    assert len(logons.attempts) == 5         # a new hour: one more


@pytest.mark.slow
def test_sighup_keeps_the_exporter_up_and_a_changed_password_file_is_used(tmp_path, fake_listener,
                                                                          exporter_process):
    """A real process: SIGHUP used to kill it (no handler; systemd's Restart=on-failure does not
    restart a death by SIGHUP)."""
    listener = fake_listener("slow", delay=0.01, error=1017)
    pw, state = tmp_path / "mon.pw", tmp_path / "refusals.json"
    pw.write_text("wrong\n")
    cfg = tmp_path / "o.yml"
    cfg.write_text(f"databases:\n  - {{name: P, dsn: '127.0.0.1:{listener.port}/S', user: mon, "
                   f"password_file: {pw}, timeout_seconds: 5}}\nconnect_timeout_seconds: 2\n")
    proc = exporter_process("--config.file", str(cfg), "--refusals.file", str(state))

    def get(path: str) -> tuple[int, str]:
        with urllib.request.urlopen(proc.url + path, timeout=10) as r:
            return r.status, r.read().decode()

    for _ in range(3):
        _, body = get("/metrics")
    assert re.search(r'oracle_last_error_info\{[^}]*reason="logon denied"', body)
    assert listener.accepted == 1
    pw.write_text("wrong\n")                              # same content: no new logon
    get("/metrics")
    assert listener.accepted == 1
    proc.proc.send_signal(signal.SIGHUP)
    time.sleep(0.3)
    assert proc.proc.poll() is None
    assert get("/-/healthy") == (200, "OK\n")
    get("/metrics")
    assert listener.accepted == 2                         # one retry of the unchanged password
    get("/metrics")
    assert listener.accepted == 2
    pw.write_text("new-password\n")                       # a changed password file is used at once
    get("/metrics")
    assert listener.accepted == 3
    assert proc.stderr().count("reload (SIGHUP)") == 1
    assert "new-password" not in state.read_text() and "wrong" not in state.read_text()


@pytest.mark.slow
def test_once_runs_honour_the_refusals_file(tmp_path, fake_listener, core):
    listener = fake_listener("slow", delay=0.01, error=1017)
    state = tmp_path / "refusals.json"
    cfg = tmp_path / "o.yml"
    cfg.write_text(f"databases:\n  - {{name: P, dsn: '127.0.0.1:{listener.port}/S', user: mon, "
                   f"password_env: PW, timeout_seconds: 5}}\n")
    for _ in range(3):                       # a cron job, or a crash loop
        res = core.run_cli("--config.file", str(cfg), "--once", "--refusals.file", str(state), env={"PW": "x"})
        assert res.returncode == 1 and 'reason="logon denied"' in res.stdout
    assert listener.accepted == 1


# -- B3: password_file is its first line ------------------------------------------------------

@pytest.mark.parametrize("content, password", [
    ("secret\n", "secret"),
    ("secret\r\n", "secret"),
    ("secret", "secret"),
    ("pass word\n# rotated 2026-11-28 by vault\n", "pass word"),   # a comment after it is not part
    ("secret\nold-secret\n", "secret"),
])
def test_password_file_is_its_first_line(tmp_path, content, password):
    pw = tmp_path / "mon.pw"
    pw.write_bytes(content.encode())
    cfg = tmp_path / "o.yml"
    cfg.write_text("databases:\n  - {name: A, dsn: 'h:1521/A', user: mon, password_file: mon.pw}\n")
    assert load_config(str(cfg)).databases[0].password == password          # at load
    clock = FakeClock()
    logons = Logons(clock, DENIED, good=password)
    src = LiveSource(pw_db(pw), Settings(), connect=logons, clock=clock)
    assert not is_failed(src.fetch())                                        # and at every logon
    assert [p for _, p in logons.attempts] == [password]


def test_a_password_file_with_an_empty_first_line_is_refused_at_load(tmp_path):
    (tmp_path / "mon.pw").write_text("\nsecret\n")
    cfg = tmp_path / "o.yml"
    cfg.write_text("databases:\n  - {name: A, dsn: 'h:1521/A', user: mon, password_file: mon.pw}\n")
    with pytest.raises(ConfigError, match="empty"):
        load_config(str(cfg))


# -- B8: one reason per refusal, each in the alert ----------------------------------------------

def test_every_credential_refusal_has_its_own_reason_and_the_alert_matches_each():
    reasons = {e.code: e.reason for e in ERRORS if e.retry == NEW_CREDENTIALS}
    assert reasons == {"ORA-01017": "logon denied", "ORA-01031": "logon denied", "ORA-01005": "null password",
                       "ORA-01045": "no create session privilege", "ORA-28009": "sys must connect as sysdba",
                       "ORA-28000": "account locked", "ORA-28001": "password expired"}
    pattern = re.fullmatch(r'reason=~"(.*)"', CREDENTIAL_REASONS).group(1)
    for reason in reasons.values():
        assert re.fullmatch(pattern, reason), reason
    runbook = (Path(__file__).resolve().parents[2] / "docs" / "runbooks" / "OracleDown.md").read_text()
    for code, reason in reasons.items():
        assert code in runbook and f"`{reason}`" in runbook, (code, reason)


@pytest.mark.slow
def test_promtool_every_credential_reason_gets_the_ticket_not_the_page(tmp_path):
    """The generated OracleDown rule, evaluated by promtool: each credential reason is the
    `cause="monitoring_credentials"` ticket (a missing grant is not a database-down page)."""
    import shutil
    import subprocess

    import yaml
    promtool = shutil.which("promtool")
    assert promtool, "promtool (Debian package prometheus) is required"
    root = Path(__file__).resolve().parents[2]
    suite = yaml.safe_load((root / "alerts" / "tests" / "monitoring.test.yml").read_text())
    [template] = [t for t in suite["tests"] if t["name"].startswith("OracleDown: the monitoring password expired")]
    reasons = [e.reason for e in ERRORS if e.retry == NEW_CREDENTIALS]

    def swap(node, reason):
        if isinstance(node, dict):
            return {k: swap(v, reason) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v, reason) for v in node]
        return node.replace("password expired", reason) if isinstance(node, str) else node

    suite["rule_files"] = [str(root / "alerts" / Path(f).name) for f in suite["rule_files"]]
    suite["tests"] = [swap(template, r) for r in reasons]
    (tmp_path / "t.yml").write_text(yaml.safe_dump(suite, sort_keys=False))
    res = subprocess.run([promtool, "test", "rules", str(tmp_path / "t.yml")], capture_output=True, text=True,
                         timeout=120)
    assert len(reasons) == 7
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_refusals_flag_default_and_empty(tmp_path, monkeypatch):
    from oracle_exporter.cli import build_exporter, build_parser, live_sources
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PW", "x")
    cfg = tmp_path / "o.yml"
    cfg.write_text("databases:\n  - {name: A, dsn: 'h:1521/A', user: mon, password_env: PW}\n"
                   "  - {name: B, dsn: 'h:1521/B', user: mon, password_env: PW}\n")
    exporter, _ = build_exporter(build_parser().parse_args(["--config.file", str(cfg)]))
    a, b = live_sources(exporter)
    assert a.refusals is b.refusals                                     # one file for all databases
    assert a.refusals.path == str(tmp_path / "xdg" / "oracle-exporter" / "refusals.json")
    exporter.close()
    exporter, _ = build_exporter(build_parser().parse_args(["--config.file", str(cfg), "--refusals.file", ""]))
    a, _ = live_sources(exporter)
    a.refusals.refuse("mon", "h:1521/A", "x", DENIED)
    assert a.refusals.path is None and not (tmp_path / "xdg").exists()  # in memory only
    exporter.close()
