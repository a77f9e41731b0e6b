"""Issue 22, account lockout: a logon refused for its credentials (wrong password, locked or
expired account, no CREATE SESSION) is not tried again with the same credentials. Every
failed logon with a wrong password counts towards the profile's FAILED_LOGIN_ATTEMPTS (10 on
the DEFAULT profile): retrying it on the reconnect backoff locked the shared monitoring
account within minutes (the 10th failed logon at 315 s, 64 in the first hour at a 15 s
scrape). The password is read again from password_file / password_env at every attempt and
a changed password is tried at once: one failed logon per password change, at most."""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import oracledb
import pytest
from prometheus_client.exposition import generate_latest

from oracle_exporter.config import DatabaseConfig, Settings, load_config
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.ora_errors import BY_CODE, NEW_CREDENTIALS, REASON_ORDER, retry_for
from oracle_exporter.sources import failure_reason, is_failed
from oracle_exporter.sources.live import LiveSource
from oracle_sim import FakeClock, FakeConnection

SCRAPE = 15.0          # seconds between scrapes
HOUR = 3600.0
DAY = 86400.0

# One refusal of each kind as the driver words it, and the reason oracle_last_error_info gives.
REFUSALS = {
    "ORA-01017: invalid username/password; logon denied": "logon denied",
    # thin mode, a listener refusing for the credentials (e.g. a connection manager or proxy)
    "DPY-6005: cannot connect to database (CONNECTION_ID=x).\n"
    "DPY-6000: Listener refused connection. (Similar to ORA-1017)": "logon denied",
    "ORA-28000: The account is locked.": "account locked",
    "ORA-28001: the password has expired": "password expired",
    # each its own reason: a missing CREATE SESSION grant (password right) is not a wrong password
    "ORA-01045: user MON lacks CREATE SESSION privilege; logon denied": "no create session privilege",
    "ORA-01005: null password given; logon denied": "null password",
    "ORA-28009: connection as SYS should be as SYSDBA or SYSOPER": "sys must connect as sysdba",
}


class Logons:
    """A connect() that answers every logon with ``error`` while the password is not ``good``,
    recording (time, password) of each attempt."""

    def __init__(self, clock: FakeClock, error: str, good: str | None = None):
        self.clock, self.error, self.good = clock, error, good
        self.attempts: list[tuple[float, str]] = []
        self.conns: list[FakeConnection] = []

    def __call__(self, db: DatabaseConfig, timeout: float):
        self.attempts.append((self.clock.now, db.password))
        if db.password != self.good:
            raise oracledb.DatabaseError(self.error)
        self.conns.append(FakeConnection())
        return self.conns[-1]


def scrape_for(src: LiveSource, clock: FakeClock, seconds: float, every: float = SCRAPE) -> list:
    """Fetch every ``every`` seconds of the fake clock for ``seconds``; the snapshots."""
    snaps, end = [], clock.now + seconds
    while clock.now < end:
        snaps.append(src.fetch())
        clock.now += every
    return snaps


def source(db: DatabaseConfig, logons: Logons, clock: FakeClock) -> LiveSource:
    return LiveSource(db, Settings(), connect=logons, clock=clock)


def test_the_credential_codes_are_marked_in_the_one_table():
    for code in ("ORA-01017", "ORA-01005", "ORA-01045", "ORA-28000", "ORA-28001", "ORA-28009"):
        assert BY_CODE[code].retry == NEW_CREDENTIALS, code
    assert BY_CODE["ORA-28001"].reason == "password expired"
    assert "password expired" in REASON_ORDER
    # everything else keeps the backoff
    assert BY_CODE["ORA-12541"].retry == "backoff" and BY_CODE["DPY-6000"].retry == "backoff"
    # the listener's refusal is judged by the code it is similar to
    assert retry_for("DPY-6005: cannot connect to database.; DPY-6000: Listener refused connection. "
                     "(Similar to ORA-1017)") == NEW_CREDENTIALS
    assert retry_for("DPY-6005: cannot connect to database.; DPY-6000: Listener refused connection. "
                     "(Similar to ORA-12519)") == "backoff"
    assert retry_for("DPY-6005: cannot connect to database.; [Errno 111] Connection refused") == "backoff"


@pytest.mark.parametrize("error, reason", REFUSALS.items(), ids=[t.split(":")[0] + ("/1017" if "1017)" in t else "")
                                                                     for t in REFUSALS])
def test_a_refused_logon_is_tried_once_in_a_day_and_says_why(error, reason):
    clock = FakeClock()
    logons = Logons(clock, error)
    # (ORA-28000 is also tried again every locked_retry_seconds, 0 here: test_live_review)
    src = LiveSource(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="wrong"), Settings(),
                     connect=logons, clock=clock, locked_retry=0)
    snaps = scrape_for(src, clock, DAY)
    assert len(logons.attempts) == 1
    assert all(is_failed(s) for s in snaps)
    assert {failure_reason(s.errors["*"]) for s in snaps} == {reason}
    assert "not tried again with the same password" in snaps[-1].errors["*"]


def test_one_hour_at_a_15_s_scrape_costs_one_failed_logon_not_64():
    """The measurement of the issue: 64 failed logons in the first hour, the 10th at 315 s."""
    clock = FakeClock()
    logons = Logons(clock, "ORA-01017: invalid username/password; logon denied")
    src = source(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="wrong"), logons, clock)
    scrape_for(src, clock, HOUR)
    assert len(logons.attempts) == 1


def test_other_connect_failures_still_back_off_and_retry():
    clock = FakeClock()
    logons = Logons(clock, "DPY-6005: cannot connect to database.\n[Errno 111] Connection refused")
    src = source(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="pw"), logons, clock)
    scrape_for(src, clock, HOUR)
    assert len(logons.attempts) > 50


def test_a_changed_password_file_is_tried_at_once_and_only_once(tmp_path):
    pw = tmp_path / "mon.pw"
    pw.write_text("wrong\n")
    clock = FakeClock()
    logons = Logons(clock, "ORA-01017: invalid username/password; logon denied", good="right")
    db = DatabaseConfig("p", dsn="h:1521/S", user="mon", password="wrong", password_file=str(pw))
    src = source(db, logons, clock)
    scrape_for(src, clock, HOUR)
    assert [p for _, p in logons.attempts] == ["wrong"]
    pw.write_text("still-wrong\n")                      # a rotation with a typo: one more attempt
    scrape_for(src, clock, HOUR)
    assert [p for _, p in logons.attempts] == ["wrong", "still-wrong"]
    pw.write_text("right\n")
    changed_at = clock.now
    snaps = scrape_for(src, clock, HOUR)
    assert [p for _, p in logons.attempts] == ["wrong", "still-wrong", "right"]
    assert logons.attempts[-1][0] == changed_at          # at once, no backoff left from the failures
    assert not any(is_failed(s) for s in snaps)
    # the password in memory is not the one in the config any more (a reconnect uses the new one)
    logons.conns[-1].dead = True
    scrape_for(src, clock, 60)
    assert [p for _, p in logons.attempts][-1] == "right" and len(logons.attempts) == 4


def test_an_unlocked_account_is_tried_again_on_a_reload_not_when_the_file_is_rewritten(tmp_path):
    """ORA-28000 and ORA-01045 are fixed by a DBA (ALTER USER ... ACCOUNT UNLOCK, a grant) without
    a new password: a reload (SIGHUP: request_retry) asks for one more attempt. Rewriting the file
    with the same content does not (a vault job rewriting it every 5 minutes cost 48 logons in 4 h)."""
    pw = tmp_path / "mon.pw"
    pw.write_text("right\n")
    clock = FakeClock()
    logons = Logons(clock, "ORA-28000: The account is locked.")
    db = DatabaseConfig("p", dsn="h:1521/S", user="mon", password="right", password_file=str(pw))
    src = source(db, logons, clock)
    scrape_for(src, clock, HOUR)
    assert len(logons.attempts) == 1
    for _ in range(48):                                    # 4 h of a vault job rewriting the file
        pw.write_text("right\n")
        st = pw.stat()
        os.utime(pw, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        scrape_for(src, clock, 300)
    assert len(logons.attempts) == 1
    logons.good = "right"                                  # the DBA unlocks the account
    src.request_retry()                                    # systemctl reload
    snaps = scrape_for(src, clock, 60)
    assert len(logons.attempts) == 2 and not is_failed(snaps[-1])


def test_a_changed_password_env_is_tried_at_once(monkeypatch):
    monkeypatch.setenv("MON_PW", "wrong")
    clock = FakeClock()
    logons = Logons(clock, "ORA-01017: invalid username/password; logon denied", good="right")
    db = DatabaseConfig("p", dsn="h:1521/S", user="mon", password="wrong", password_env="MON_PW")
    src = source(db, logons, clock)
    scrape_for(src, clock, HOUR)
    assert len(logons.attempts) == 1
    monkeypatch.setenv("MON_PW", "right")
    assert not is_failed(src.fetch()) and len(logons.attempts) == 2


def test_the_config_keeps_where_the_password_comes_from(tmp_path, monkeypatch):
    (tmp_path / "a.pw").write_text("secret-a\n")
    monkeypatch.setenv("B_PW", "secret-b")
    cfg = tmp_path / "o.yml"
    cfg.write_text("databases:\n"
                   "  - {name: A, dsn: 'h:1521/A', user: mon, password_file: a.pw}\n"
                   "  - {name: B, dsn: 'h:1521/B', user: mon, password_env: B_PW}\n")
    a, b = load_config(str(cfg)).databases
    assert (a.password, a.password_file, a.password_env) == ("secret-a", str(tmp_path / "a.pw"), None)
    assert (b.password, b.password_file, b.password_env) == ("secret-b", None, "B_PW")
    assert "secret" not in repr(a) + repr(b)


def test_an_unreadable_password_file_keeps_the_last_password_and_costs_no_logon(tmp_path, caplog):
    pw = tmp_path / "mon.pw"
    pw.write_text("wrong\n")
    clock = FakeClock()
    logons = Logons(clock, "ORA-01017: invalid username/password; logon denied")
    src = source(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="wrong", password_file=str(pw)),
                 logons, clock)
    scrape_for(src, clock, 60)
    pw.unlink()                                            # mid-rotation
    with caplog.at_level(logging.WARNING):
        snaps = scrape_for(src, clock, HOUR)
    assert len(logons.attempts) == 1 and failure_reason(snaps[-1].errors["*"]) == "logon denied"
    assert sum("mon.pw" in r.getMessage() for r in caplog.records) == 1   # said once, not every scrape


def test_a_listener_refusing_for_the_credentials_is_connected_to_once(fake_listener):
    """The real thin driver against a listener that answers ERR=1017 (DPY-6000 ... Similar to
    ORA-1017): was retried 15 times in 10 minutes."""
    listener = fake_listener("slow", delay=0.01, error=1017)
    clock = FakeClock()
    src = LiveSource(DatabaseConfig("p", dsn=f"127.0.0.1:{listener.port}/S", user="mon", password="pw",
                                    timeout_seconds=5), Settings(), connect_timeout=2.0, clock=clock)
    try:
        snaps = scrape_for(src, clock, 600)
    finally:
        src.close()
    assert listener.accepted == 1
    assert "Similar to ORA-1017" in snaps[0].errors["*"]
    assert {failure_reason(s.errors["*"]) for s in snaps} == {"logon denied"}


# -- ORA-28002: the password is in its grace period ---------------------------------------

class Warned(FakeConnection):
    def __init__(self, warning):
        super().__init__()
        self.warning = warning


def _grace_warning():
    # what python-oracledb puts on Connection.warning (an oracledb._Error: str() is the message)
    return type("Warning", (), {"full_code": "ORA-28002", "message": "ORA-28002: the password will expire "
                                "within 7 days", "__str__": lambda self: self.message})()


def test_the_grace_period_warning_is_logged_once_and_exported(caplog):
    clock = FakeClock()
    conns = [Warned(_grace_warning()), Warned(_grace_warning()), FakeConnection()]

    def connect(db, timeout):
        return conns.pop(0)

    src = LiveSource(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="pw"), Settings(),
                     connect=connect, clock=clock)
    exp = OracleExporter([Target("p", src)], Settings(), {})
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            text = generate_latest(exp.registry()).decode()
        assert re.search(r'^oracle_password_expiring\{database="p"\} 1\.0$', text, re.M), text
        src._conn.dead = True                # reconnect: warned again, logged no second time
        src.fetch()
        clock.now += 10
        text = generate_latest(exp.registry()).decode()
        assert re.search(r'^oracle_password_expiring\{database="p"\} 1\.0$', text, re.M)
        warnings = [r for r in caplog.records if "ORA-28002" in r.getMessage()]
        assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
        assert "expire within 7 days" in warnings[0].getMessage()
        src._conn.dead = True                # the password was changed: no warning any more
        src.fetch()
        clock.now += 10
        text = generate_latest(exp.registry()).decode()
    assert re.search(r'^oracle_password_expiring\{database="p"\} 0\.0$', text, re.M)
    exp.close()


def test_no_grace_warning_exports_zero():
    clock = FakeClock()
    src = LiveSource(DatabaseConfig("p", dsn="h:1521/S", user="mon", password="pw"), Settings(),
                     connect=lambda db, t: FakeConnection(), clock=clock)
    exp = OracleExporter([Target("p", src)], Settings(), {})
    text = generate_latest(exp.registry()).decode()
    assert re.search(r'^oracle_password_expiring\{database="p"\} 0\.0$', text, re.M)
    exp.close()


# -- the monitoring user's profile ---------------------------------------------------------

def test_the_monitoring_user_gets_a_profile_whose_password_does_not_expire():
    sql = (Path(__file__).resolve().parents[2] / "docs" / "oracle-monitoring-user.sql").read_text()
    profile = re.search(r"^CREATE PROFILE ORAMON_PROFILE LIMIT\b(.*?);", sql, re.M | re.S)
    assert profile, "no CREATE PROFILE ORAMON_PROFILE"
    limits = dict(re.findall(r"\b(PASSWORD_LIFE_TIME|FAILED_LOGIN_ATTEMPTS|PASSWORD_LOCK_TIME)\s+(\w+)",
                             profile.group(1)))
    assert limits["PASSWORD_LIFE_TIME"] == "UNLIMITED"
    assert limits["FAILED_LOGIN_ATTEMPTS"] != "UNLIMITED"     # kept: it guards against guessing
    (user,) = re.findall(r"^CREATE USER (\w+)", sql, re.M)
    assert re.search(rf"^CREATE USER {user} IDENTIFIED BY \"[^\"]+\"\s+PROFILE ORAMON_PROFILE;", sql, re.M)
    assert sql.index("CREATE PROFILE ORAMON_PROFILE") < sql.index("CREATE USER")
    # the comment says why the failed-login limit is kept and why the exporter cannot trip it
    head = sql[:sql.index("CREATE PROFILE")]
    assert "FAILED_LOGIN_ATTEMPTS" in head and "once per password change" in head


def test_the_backoff_survives_a_day_of_failures():
    """Found by the day-long runs: 2 ** failures overflowed a float after ~1,030 failures (17 h of
    an unreachable database at the 60 s cap), and every fetch then raised OverflowError."""
    from oracle_exporter.sources.live import Backoff
    clock = FakeClock()
    b = Backoff(1.0, 60.0, clock)
    assert [b.failed() for _ in range(2000)][-1] == 60.0
