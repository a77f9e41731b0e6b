"""Issue 10: one stuck database never blinds the exporter to the others; no leaks under faults.

The real python-oracledb thin driver connects to fake listeners in this process
(oracle_sim.FakeListener): accept-and-never-answer, accept-and-close, a closed port, and a
slow answer (a REFUSE after a delay). The healthy database is a LiveSource on a fake session
(no Oracle database here), in the same exporter."""
from __future__ import annotations

import os
import threading
import time

import pytest

from oracle_exporter.config import DatabaseConfig, Settings
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.sources import failure_reason
from oracle_exporter.sources.live import LiveSource, init_driver
from oracle_sim import FakeConnection, make_snapshot

init_driver()   # what the CLI does at start (the subprocess test below checks the CLI itself)


def live(name: str, port: int, budget: float = 1.0, **kw) -> LiveSource:
    db = DatabaseConfig(name, dsn=f"127.0.0.1:{port}/ORCL", user="mon", password="pw", timeout_seconds=budget)
    return LiveSource(db, Settings(), connect_timeout=0.5, **kw)


def healthy_source() -> LiveSource:
    snap = make_snapshot("ok", 0)
    rows = {v: [tuple(r.values()) for r in rs] for v, rs in snap.views.items()}
    db = DatabaseConfig("ok", dsn="h:1/S", user="mon", password="pw", timeout_seconds=1.0)
    return LiveSource(db, Settings(), connect=lambda d, t: FakeConnection(rows=rows))


def scrape(exp: OracleExporter) -> dict:
    """{(name, database, reason): value} of the self metrics of one scrape."""
    out = {}
    for fam in exp.scrape():
        for s in fam.samples:
            if s.name in ("oracle_up", "oracle_last_error_info"):
                out[(s.name, s.labels["database"], s.labels.get("reason"))] = s.value
    return out


@pytest.mark.slow
def test_every_fault_costs_only_its_own_database_and_names_its_cause(fake_listener, core):
    hang, close, slow = fake_listener("hang"), fake_listener("close"), fake_listener("slow", delay=0.3)
    closed_port = core.free_port()
    sources = [live("hang", hang.port), live("close", close.port), live("refused", closed_port),
               live("slow", slow.port), healthy_source()]
    exp = OracleExporter([Target(s.name, s, timeout=1.0) for s in sources], Settings())
    t0 = time.monotonic()
    got = scrape(exp)
    assert time.monotonic() - t0 < 1.5                  # the hung database's budget, not more
    assert got[("oracle_up", "ok", None)] == 1.0
    assert got[("oracle_last_error_info", "hang", "logon timeout")] == 1.0
    assert got[("oracle_last_error_info", "close", "connection closed")] == 1.0
    assert got[("oracle_last_error_info", "refused", "connection refused")] == 1.0
    assert got[("oracle_last_error_info", "slow", "unknown service")] == 1.0
    assert sum(1 for k in got if k[0] == "oracle_up" and got[k] == 0.0) == 4
    assert got[("oracle_last_error_info", "ok", "")] == 1.0      # no failure yet: empty reason
    exp.close()


@pytest.mark.slow
def test_the_causes_are_the_real_ones_alone_as_next_to_a_hung_database(fake_listener, core):
    """A database fails exactly as it would alone: the refused port says so at once even while
    another database's connect hangs (python-oracledb would otherwise hold every connect()
    until the first one settles the driver mode)."""
    hang = fake_listener("hang")
    stuck = live("hang", hang.port, budget=3.0)
    threading.Thread(target=stuck.fetch, daemon=True).start()
    time.sleep(0.2)                                      # its connect is in progress now
    t0 = time.monotonic()
    snap = live("refused", core.free_port()).fetch()
    assert time.monotonic() - t0 < 0.5
    assert failure_reason(snap.errors["*"]) == "connection refused", snap.errors
    stuck.close()


@pytest.mark.slow
def test_cli_settles_thin_mode_at_start_so_a_hung_listener_stalls_no_other_connect(fake_listener, core, tmp_path):
    """Through the real CLI (a fresh process, driver mode not yet settled): the hung database
    is listed first, the closed port must still report 'connection refused'."""
    hang = fake_listener("hang")
    cfg = tmp_path / "oracle.yml"
    cfg.write_text(f"""
timeout_seconds: 2
connect_timeout_seconds: 1
databases:
  - {{name: hung, dsn: "127.0.0.1:{hang.port}/ORCL", user: mon, password_env: PW}}
  - {{name: refused, dsn: "127.0.0.1:{core.free_port()}/ORCL", user: mon, password_env: PW}}
""")
    t0 = time.monotonic()
    res = core.run_cli("--config.file", str(cfg), "--once", env={"PW": "x"})
    assert time.monotonic() - t0 < 10
    assert res.returncode == 1, res.stderr
    assert core.sample(res.stdout, "oracle_last_error_info", database="refused", reason="connection refused") == 1
    assert core.sample(res.stdout, "oracle_last_error_info", database="hung", reason="logon timeout") == 1
    assert "database(s) down: hung, refused" in res.stderr


def _threads() -> int:
    return threading.active_count()


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["hang", "close", "slow"])
def test_threads_and_fds_stay_flat_over_many_reconnects(fake_listener, core, mode):
    listener = fake_listener(mode, delay=0.5)
    src = live(mode, listener.port, budget=0.15, backoff_initial=0.001, backoff_cap=0.001)
    ok = healthy_source()
    exp = OracleExporter([Target(mode, src, timeout=0.3), Target("ok", ok, timeout=0.3)], Settings())
    scrape(exp)
    threads, fds = _threads(), _fds()
    for _ in range(40):
        time.sleep(0.002)
        got = scrape(exp)
        assert got[("oracle_up", "ok", None)] == 1.0 and got[("oracle_up", mode, None)] == 0.0
    assert _threads() <= threads + 1, (threads, _threads())     # one connect thread at most
    assert _fds() <= fds + 2, (fds, _fds())                     # one socket (and its pair) at most
    if mode == "hang":
        assert listener.accepted == 1                            # one attempt, waited for by every fetch
    else:
        assert listener.accepted >= 10                           # fast answers: a fresh attempt each time
    exp.close()


def test_a_hung_attempt_that_finally_answers_is_used_not_leaked(fake_listener):
    """A slow listener answering after the budget: the attempt is not abandoned, its answer
    (here a refusal) is what the next fetch reports, and no second connection was made."""
    slow = fake_listener("slow", delay=0.6)
    src = live("slow", slow.port, budget=0.3, backoff_initial=0.001, backoff_cap=0.001)
    first = src.fetch()
    assert failure_reason(first.errors["*"]) == "logon timeout"
    time.sleep(0.5)
    second = src.fetch()
    assert failure_reason(second.errors["*"]) == "unknown service", second.errors
    assert slow.accepted == 1
    src.close()


def test_min_interval_gives_one_query_set_per_interval_to_any_number_of_scrapers():
    conn = FakeConnection()
    src = LiveSource(DatabaseConfig("db", dsn="h:1/S", user="u", password="p", timeout_seconds=1),
                     Settings(), connect=lambda d, t: conn)
    exp = OracleExporter([Target("db", src, timeout=1.0, min_interval=0.5)], Settings())
    per_fetch = 1 + len(src.plan.views)     # the host clock (DUAL), then every view
    results = []
    scrapers = [threading.Thread(target=lambda: results.append(exp.scrape())) for _ in range(6)]
    for t in scrapers:     # an HA pair and then some, all at once
        t.start()
    for t in scrapers:
        t.join()
    exp.scrape()           # and once more, within the interval
    assert len(conn.executed) == 1 + per_fetch            # the container query at connect, one query set
    ages = [s.value for fams in results for f in fams if f.name == "oracle_snapshot_age_seconds" for s in f.samples]
    assert len(ages) == 6 and all(0 <= a < 0.5 for a in ages)
    time.sleep(0.55)
    exp.scrape()
    assert len(conn.executed) >= 1 + per_fetch + 1 and len(conn.executed) <= 1 + 2 * per_fetch
    exp.close()


def test_view_durations_and_snapshot_age_are_exported():
    conn = FakeConnection(delay={"GV$LATCH": 0.05})
    src = LiveSource(DatabaseConfig("db", dsn="h:1/S", user="u", password="p", timeout_seconds=1),
                     Settings(), connect=lambda d, t: conn)
    exp = OracleExporter([Target("db", src, timeout=1.0)], Settings())
    fams = {f.name: f for f in exp.scrape()}
    views = {s.labels["view"]: s.value for s in fams["oracle_view_query_duration_seconds"].samples}
    assert set(views) == {v.name for v in src.plan.views}
    assert 0.05 <= views["GV$LATCH"] < 0.2 and views["GV$SYSSTAT"] < 0.05
    (age,) = fams["oracle_snapshot_age_seconds"].samples
    assert 0.05 <= age.value < 0.5
    exp.close()


@pytest.mark.slow
def test_a_scrape_deadline_before_the_fetch_ends_serves_the_last_snapshot_with_its_age():
    conn = FakeConnection()
    src = LiveSource(DatabaseConfig("db", dsn="h:1/S", user="u", password="p", timeout_seconds=2),
                     Settings(), connect=lambda d, t: conn)
    exp = OracleExporter([Target("db", src, timeout=2.0)], Settings())
    first = {f.name: f for f in exp.scrape()}
    assert first["oracle_up"].samples[0].value == 1.0
    conn.delay = {"GV$SYSTEM_EVENT": 0.6}             # the next fetch takes 0.6 s
    t0 = time.monotonic()
    second = {f.name: f for f in exp.scrape(timeout=0.2)}   # Prometheus' scrape timeout is shorter
    assert time.monotonic() - t0 < 0.4
    assert second["oracle_up"].samples[0].value == 1.0
    assert second["oracle_snapshot_age_seconds"].samples[0].value >= 0.2
    time.sleep(0.6)
    third = {f.name: f for f in exp.scrape()}
    assert third["oracle_snapshot_age_seconds"].samples[0].value < 0.7
    exp.close()


def test_failure_reasons_are_a_fixed_set():
    cases = {
        "connect failed: DPY-6005: cannot connect to database.; [Errno 111] Connection refused": "connection refused",
        "connect failed: DPY-6005: cannot connect to database.; [Errno -2] Name or service not known":
            "name not resolved",
        "connect failed: DPY-6005: cannot connect to database.; timed out": "connect timeout",
        "ORA-12170: TNS:Connect timeout occurred": "connect timeout",
        "connect failed: ORA-01017: invalid username/password; logon denied": "logon denied",
        "connect failed: ORA-28000: The account is locked.": "account locked",
        "connect failed: ORA-01033: ORACLE initialization or shutdown in progress": "database not open",
        "session lost while reading GV$LATCH: DPY-4011: the database or network closed the connection":
            "session lost",
        "timeout: no snapshot within 10 s": "timeout",
        "fetch raised ValueError: x": "other",
    }
    assert {text: failure_reason(text) for text in cases} == cases
    assert failure_reason("ORA-01017: x (reconnect backoff, next attempt in 3.0 s)") == "logon denied"


@pytest.mark.slow
def test_the_scrapers_time_limit_also_bounds_the_collectors():
    """Issue 15.7: with a very large snapshot the collectors ran 10 s past Prometheus' 5 s
    limit. Past the limit no further collector starts: they fail with the reason, and the
    answer comes at most one collector after the limit."""
    from types import SimpleNamespace

    from oracle_exporter.sources.replay import ReplaySource

    def slow(seconds: float):
        return SimpleNamespace(VIEWS=(), collect=lambda snap, settings: time.sleep(seconds) or [])

    exp = OracleExporter([Target("db", ReplaySource("db", [make_snapshot(database="db")]), timeout=5.0)], Settings())
    exp.collectors = {f"c{i}": slow(0.15) for i in range(8)}        # 1.2 s of collectors in all
    t0 = time.monotonic()
    fams = {f.name: f for f in exp.scrape(timeout=0.4)}
    took = time.monotonic() - t0
    assert took < 0.4 + 0.15 + 0.15, took                          # the limit, one collector, some slack
    ok = {s.labels["collector"]: s.value for s in fams["oracle_collector_success"].samples}
    assert ok["c0"] == 1.0 and ok["c7"] == 0.0
    ran = sum(ok.values())
    assert 2 <= ran <= 4, ok
    assert fams["oracle_up"].samples[0].value == 1.0                 # the database is fine: only time ran out
    full = {f.name: f for f in exp.scrape()}                         # no limit given: every collector runs
    assert all(s.value == 1.0 for s in full["oracle_collector_success"].samples)
    exp.close()
