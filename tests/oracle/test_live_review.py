"""Day-2 review of the live path (fake listeners, the real thin driver): refused databases that
held up every other database, two entries for one account that undid each other's refusal,
ORA-01031 and ORA-28000 at logon, the per-database scrape duration, SIGTERM during a hung fetch."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from oracle_exporter import refusals
from oracle_exporter.config import DatabaseConfig, Settings
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.refusals import RefusalStore
from oracle_exporter.sources import failure_reason, is_failed
from oracle_exporter.sources.live import LiveSource, init_driver
from oracle_sim import FakeConnection, make_snapshot

init_driver()   # what the CLI does at start


def healthy(name: str = "ok", budget: float = 2.0, **kw) -> LiveSource:
    """A database that answers (a LiveSource on a fake session: no Oracle database here)."""
    snap = make_snapshot(name, 0)
    rows = {v: [tuple(r.values()) for r in rs] for v, rs in snap.views.items()}
    db = DatabaseConfig(name, dsn="h:1/S", user="mon", password="pw", timeout_seconds=budget)
    return LiveSource(db, Settings(), connect=lambda d, t: FakeConnection(rows=rows), **kw)


def selfs(families) -> dict:
    """{(metric, database, reason): value} of oracle_up, oracle_last_error_info and
    oracle_scrape_duration_seconds."""
    out = {}
    for fam in families:
        for s in fam.samples:
            if s.name in ("oracle_up", "oracle_last_error_info", "oracle_scrape_duration_seconds"):
                out[(s.name, s.labels["database"], s.labels.get("reason"))] = s.value
    return out


def counter_values(snap, counters) -> dict:
    """{(view, identity, column): value} of every counter column in a snapshot (the maximum where
    rows share an identity, as the replay's loop takes it)."""
    out: dict = {}
    for view, spec in counters.items():
        for row in snap.views.get(view) or ():
            if not spec.is_counter_row(row):
                continue
            ident = tuple(row.get(c) for c in spec.series_identity)
            for col in spec.counters:
                value = row.get(col)
                if isinstance(value, (int, float)):
                    key = (view, ident, col)
                    out[key] = max(out.get(key, value), value)
    return out


# -- finding 1: a hundred refused databases with distinct passwords ---------------------------

@pytest.mark.slow
def test_a_hundred_refused_databases_hold_up_no_other_and_stay_logon_denied(fake_listener, tmp_path,
                                                                            monkeypatch):
    """Each fetch of a refused database hashed its password (PBKDF2) under the store-wide lock,
    the digest cache was cleared above 64 passwords, and the lock wait came out of the fetch
    budget: the healthy database was held for its whole budget (a false OracleDown page) and
    most refused ones showed "timeout" instead of "logon denied"."""
    monkeypatch.setattr(refusals, "PBKDF2_ITERATIONS", 20_000)    # a fifth of the cost: a fast test
    listener = fake_listener("slow", delay=0.0, error=1017)        # REFUSE (Similar to ORA-1017) at once
    store = RefusalStore(str(tmp_path / "refusals.json"))
    dbs = [LiveSource(DatabaseConfig(f"r{i:03d}", dsn=f"127.0.0.1:{listener.port}/S", user=f"mon{i}",
                                     password=f"pw{i}", timeout_seconds=2.0),
                      Settings(), connect_timeout=2.0, refusals=store) for i in range(100)]
    ok = healthy(refusals=store)
    exp = OracleExporter([Target(s.name, s, timeout=2.0) for s in [*dbs, ok]], Settings(),
                         collectors={})
    try:
        exp.scrape()          # every refused database logs on once and hashes its password once
        deadline = time.monotonic() + 20
        while any(t.inflight is not None for t in exp.targets.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        for _ in range(3):
            t0 = time.monotonic()
            got = selfs(exp.scrape())
            took = time.monotonic() - t0
            last = exp.targets["ok"].last
            assert got[("oracle_up", "ok", None)] == 1.0
            assert last.ended - last.started < 0.5, last     # the healthy fetch was not held up
            assert took < 1.0
            reasons = {k[2] for k in got if k[0] == "oracle_last_error_info" and k[1] != "ok"}
            assert reasons == {"logon denied"}
        assert listener.accepted == 100                  # one logon per refused password, no more
    finally:
        exp.close()


def test_the_digest_of_an_unchanged_password_is_remembered_per_database(monkeypatch):
    """More databases than any fixed cache: every lookup after the first hashes nothing slow."""
    monkeypatch.setattr(refusals, "PBKDF2_ITERATIONS", 1_000)
    store = RefusalStore(None)
    for i in range(200):
        store.refuse(f"mon{i}", "h:1/S", f"pw{i}", "ORA-01017: logon denied", f"db{i}")
    calls = []
    real = refusals.hashlib.pbkdf2_hmac
    monkeypatch.setattr(refusals.hashlib, "pbkdf2_hmac", lambda *a: calls.append(a) or real(*a))
    for _ in range(3):
        for i in range(200):
            assert store.refused(f"mon{i}", "h:1/S", f"pw{i}", f"db{i}") == "ORA-01017: logon denied"
    assert calls == []
    assert store.refused("mon7", "h:1/S", "new", "db7") is None and len(calls) == 1   # a change: hashed


# -- finding 2: two entries for one account -----------------------------------------------------

def test_two_entries_with_one_user_and_dsn_keep_their_own_refusals(fake_listener, tmp_path):
    """A duplicated inventory entry with a stale password file: the two refusals overwrote each
    other, each fetch read "the credentials changed" and logged on again (10-11 failed logons in
    10 scrapes: the account locked within a minute). Each keeps its own: one logon each."""
    from oracle_sim import FakeClock
    listener = fake_listener("slow", delay=0.0, error=1017)
    clock = FakeClock()
    store = RefusalStore(str(tmp_path / "refusals.json"), clock=lambda: clock.now)
    pair = [LiveSource(DatabaseConfig(name, dsn=f"127.0.0.1:{listener.port}/PROD", user="oramon", password=pw,
                                      timeout_seconds=3.0),
                       Settings(), connect_timeout=2.0, clock=clock, refusals=store)
            for name, pw in (("prod", "pwA"), ("prod_copy", "pwB"))]
    try:
        snaps = []
        for _ in range(20):                   # 5 minutes at a 15 s scrape
            clock.now += 15
            snaps += [src.fetch() for src in pair]
    finally:
        for src in pair:
            src.close()
    assert listener.accepted == 2
    assert all(is_failed(s) and failure_reason(s.errors["*"]) == "logon denied" for s in snaps)
    # a restart keeps both
    again = RefusalStore(str(tmp_path / "refusals.json"))
    assert again.refused("oramon", f"127.0.0.1:{listener.port}/PROD", "pwA", "prod") is not None
    assert again.refused("oramon", f"127.0.0.1:{listener.port}/PROD", "pwB", "prod_copy") is not None


def test_a_refusal_written_by_the_previous_version_still_holds(tmp_path):
    """Files written before refusals were kept per database ("user\\0dsn" keys) still refuse."""
    state = tmp_path / "refusals.json"
    RefusalStore(str(state)).refuse("mon", "h:1/S", "pw", "ORA-01017: logon denied")
    again = RefusalStore(str(state))
    assert again.refused("mon", "h:1/S", "pw", "p") == "ORA-01017: logon denied"
    again.accepted("mon", "h:1/S", "p")
    assert RefusalStore(str(state)).refused("mon", "h:1/S", "pw", "p") is None


def test_one_account_in_two_entries_is_one_warning_naming_both():
    from oracle_exporter.refusals import shared_logons
    dbs = [DatabaseConfig("prod", dsn="h:1/PROD", user="oramon", password="a"),
           DatabaseConfig("prod_copy", dsn="h:1/PROD", user="ORAMON", password="b"),
           DatabaseConfig("test", dsn="h:1/TEST", user="oramon", password="a")]
    lines = shared_logons(dbs)
    assert len(lines) == 1 and "prod, prod_copy" in lines[0] and "h:1/PROD" in lines[0]
    assert shared_logons(dbs[1:]) == []


# -- finding 3: ORA-01031 at logon ------------------------------------------------------------------

def test_ora_01031_at_logon_is_logon_denied_and_not_retried_on_the_backoff(fake_listener):
    """A mode: sysdg user without SYSDG: reason "logon denied", which the docs say is not retried;
    it was logged on again at every backoff (7 audited failed logons in 16 s, 60 an hour)."""
    from oracle_exporter.ora_errors import BY_CODE, NEW_CREDENTIALS
    from oracle_sim import FakeClock
    assert BY_CODE["ORA-01031"].retry == NEW_CREDENTIALS and BY_CODE["ORA-01031"].reason == "logon denied"
    listener = fake_listener("slow", delay=0.0, error=1031)
    clock = FakeClock()
    src = LiveSource(DatabaseConfig("stby", dsn=f"127.0.0.1:{listener.port}/S", user="mon", password="pw",
                                    mode="sysdg", timeout_seconds=3.0),
                     Settings(), connect_timeout=2.0, clock=clock, backoff_cap=2.0)
    try:
        snaps = []
        for _ in range(40):                  # 10 minutes at a 15 s scrape
            clock.now += 15
            snaps.append(src.fetch())
    finally:
        src.close()
    assert listener.accepted == 1
    assert {failure_reason(s.errors["*"]) for s in snaps} == {"logon denied"}
    assert "not tried again with the same password" in snaps[-1].errors["*"]


# -- finding 4: ORA-28000 account locked ------------------------------------------------------------

def _fetch_every(src: LiveSource, clock, seconds: float, every: float = 15.0) -> list:
    snaps = []
    for _ in range(int(seconds / every)):
        clock.now += every
        snaps.append(src.fetch())
    return snaps


def test_a_locked_account_is_tried_again_once_an_hour_over_the_real_driver(fake_listener, tmp_path):
    """Oracle unlocks a LOCKED(TIMED) account after PASSWORD_LOCK_TIME; the exporter used to stay at
    "account locked" until a reload, blind to a real outage meanwhile. A logon on a locked account
    adds no failed logon: once an hour is safe."""
    from oracle_sim import FakeClock
    listener = fake_listener("slow", delay=0.0, error=28000)
    clock = FakeClock()
    store = RefusalStore(str(tmp_path / "r.json"), clock=lambda: clock.now)
    src = LiveSource(DatabaseConfig("p", dsn=f"127.0.0.1:{listener.port}/S", user="mon", password="pw",
                                    timeout_seconds=3.0),
                     Settings(), connect_timeout=2.0, clock=clock, refusals=store)
    try:
        snaps = _fetch_every(src, clock, 3 * 3600)
    finally:
        src.close()
    assert listener.accepted == 3                 # at 0 h, 1 h, 2 h
    assert {failure_reason(s.errors["*"]) for s in snaps} == {"account locked"}
    assert "tried again every 3600 s" in snaps[-1].errors["*"]


def test_an_account_oracle_unlocked_itself_is_up_within_the_hour_and_a_wrong_password_still_waits():
    from oracle_sim import FakeClock
    from test_lockout import Logons
    clock = FakeClock()
    store = RefusalStore(None, clock=lambda: clock.now)
    logons = Logons(clock, "ORA-28000: The account is locked.")
    src = LiveSource(DatabaseConfig("p", dsn="h:1/S", user="mon", password="pw"), Settings(),
                     connect=logons, clock=clock, refusals=store, locked_retry=1800)
    _fetch_every(src, clock, 3600)
    assert len(logons.attempts) == 2
    logons.good = "pw"                            # PASSWORD_LOCK_TIME over: Oracle unlocked it
    snaps = _fetch_every(src, clock, 1800)
    assert len(logons.attempts) == 3 and not is_failed(snaps[-1])
    # a wrong password is never retried on a clock, and locked_retry_seconds 0 switches the retry off
    for name, error, every in (("q", "ORA-01017: invalid username/password; logon denied", 1800),
                               ("r", "ORA-28000: The account is locked.", 0)):
        logons = Logons(clock, error)
        src = LiveSource(DatabaseConfig(name, dsn="h:1/S", user="mon", password="pw"), Settings(),
                         connect=logons, clock=clock, refusals=store, locked_retry=every)
        _fetch_every(src, clock, 4 * 3600)
        assert len(logons.attempts) == 1, error


def test_locked_retry_seconds_is_read_from_the_config(tmp_path):
    from oracle_exporter.config import load_config
    cfg = tmp_path / "c.yml"
    cfg.write_text("locked_retry_seconds: 900\ndatabases:\n  - {name: a, dsn: 'h:1/S', user: m, password_env: HOME}\n")
    assert load_config(str(cfg)).locked_retry_seconds == 900
    cfg.write_text("databases:\n  - {name: a, dsn: 'h:1/S', user: m, password_env: HOME}\n")
    assert load_config(str(cfg)).locked_retry_seconds == 3600


# -- finding 6: each database's scrape duration is its own ------------------------------------------

@pytest.mark.slow
def test_a_hung_database_listed_first_does_not_make_the_others_look_slow(fake_listener, core):
    """Every database showed the hung one's 3.00 s (the scrape waits for the fetches in config order)."""
    from oracle_exporter.cli import make_routes
    hang, close = fake_listener("hang"), fake_listener("close")

    def live(name, port):
        return LiveSource(DatabaseConfig(name, dsn=f"127.0.0.1:{port}/S", user="mon", password="pw",
                                         timeout_seconds=1.5), Settings(), connect_timeout=0.5)
    sources = [live("hang", hang.port), live("close", close.port), live("refused", core.free_port()), healthy()]
    exp = OracleExporter([Target(s.name, s, timeout=1.5) for s in sources], Settings(), collectors={})
    try:
        got = selfs(exp.scrape())                               # --once
        assert got[("oracle_scrape_duration_seconds", "hang", None)] >= 1.4
        for name in ("close", "refused", "ok"):
            assert got[("oracle_scrape_duration_seconds", name, None)] < 0.7, (name, got)
        # the HTTP path (/metrics), once the hung one's backoff (1 s) is over: it waits again
        time.sleep(1.1)
        text = make_routes(exp)["/metrics"]({}, {}).body
        lines = {ln.split(b"{")[1].split(b"}")[0]: float(ln.rsplit(b" ", 1)[1]) for ln in text.splitlines()
                 if ln.startswith(b"oracle_scrape_duration_seconds{")}
        assert lines[b'database="hang"'] >= 1.4
        assert max(v for k, v in lines.items() if k != b'database="hang"') < 0.7, lines
    finally:
        exp.close()


# -- finding 7: SIGTERM while a fetch waits on a hung listener --------------------------------------

def test_close_does_not_wait_for_a_fetch_hung_on_a_listener(fake_listener):
    """close() took the source lock a running fetch holds until its deadline: exit took 28 s
    after SIGTERM with timeout_seconds 30 (systemd kills it at 90 s)."""
    import threading
    hang = fake_listener("hang")
    src = LiveSource(DatabaseConfig("hang", dsn=f"127.0.0.1:{hang.port}/S", user="mon", password="pw",
                                    timeout_seconds=30.0), Settings(), connect_timeout=1.0)
    exp = OracleExporter([Target("hang", src, timeout=30.0), Target("ok", healthy())], Settings(), collectors={})
    scraper = threading.Thread(target=exp.scrape, daemon=True)
    scraper.start()
    deadline = time.monotonic() + 5
    while hang.accepted < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    t0 = time.monotonic()
    stuck = exp.close(grace=0.5)
    assert time.monotonic() - t0 < 1.5
    assert stuck == 1                   # the CLI then exits without joining it (os._exit)
    src.close()                         # again: as quick
    assert time.monotonic() - t0 < 1.6


@pytest.mark.slow
def test_sigterm_with_a_fetch_hung_on_a_listener_exits_within_the_documented_grace(fake_listener, tmp_path,
                                                                                  exporter_process):
    import signal
    import urllib.request
    hang = fake_listener("hang")
    cfg = tmp_path / "c.yml"
    cfg.write_text(f"timeout_seconds: 30\ndatabases:\n  - {{name: h, dsn: '127.0.0.1:{hang.port}/S', user: m, "
                   f"password_env: HOME}}\n")
    proc = exporter_process("--config.file", str(cfg), "--refusals.file", "")
    import threading

    def scrape() -> None:
        try:
            urllib.request.urlopen(proc.url + "/metrics", timeout=40).read()
        except OSError:        # the exporter went away under it: what this test does
            pass
    threading.Thread(target=scrape, daemon=True).start()
    deadline = time.monotonic() + 5
    while hang.accepted < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    t0 = time.monotonic()
    proc.proc.send_signal(signal.SIGTERM)
    proc.proc.wait(15)
    assert time.monotonic() - t0 < 4.0, proc.stderr()     # 2 s grace, then out


# -- finding 8: --record restarted after a cut line ---------------------------------------------------

@pytest.mark.parametrize("tail, kept", [("cut", 2), ("no newline", 3)])
def test_a_recorder_restarted_after_a_cut_line_keeps_the_recording_replayable(tmp_path, caplog, tail, kept):
    """Killed mid-write and restarted with the same --record: the first new snapshot was glued onto
    the cut line and --replay then refused the whole file (exit 2)."""
    import logging

    from oracle_exporter.sources.recorder import Recorder
    from oracle_exporter.sources.replay import replay_sources
    path = tmp_path / "rec.jsonl"
    lines = [make_snapshot("DEMO", i).to_json() for i in range(3)]
    third = lines[2][: len(lines[2]) // 2] if tail == "cut" else lines[2]
    path.write_text(lines[0] + "\n" + lines[1] + "\n" + third)
    with caplog.at_level(logging.WARNING):
        rec = Recorder(str(path))
    rec.write(make_snapshot("DEMO", 5))
    rec.close()
    assert any("rec.jsonl" in r.getMessage() for r in caplog.records)
    [src] = replay_sources(str(path))
    times = [src.fetch().time for _ in range(kept + 1)]
    assert times[-1] == make_snapshot("DEMO", 5).time and len(set(times)) == kept + 1
    assert path.read_text().endswith("\n") and path.read_text().count("\n") == kept + 1


def test_a_recorder_on_a_whole_recording_changes_nothing_but_appends(tmp_path, caplog):
    from oracle_exporter.sources.recorder import Recorder
    path = tmp_path / "rec.jsonl"
    path.write_text(make_snapshot("DEMO", 0).to_json() + "\n")
    before = path.read_bytes()
    with caplog.at_level("WARNING"):
        Recorder(str(path)).close()
    assert path.read_bytes() == before and not caplog.records


# -- finding 5: --replay-loop over a recording made across an instance restart ------------------------

def test_replay_loop_over_an_instance_restart_keeps_counters_non_negative_and_monotonic_at_wraps(tmp_path):
    """The per-pass shift was last - first: after a reset inside the recording it was negative
    (-1.5e12), from the second pass on the counters went below zero and were dropped: the redo
    and wait-event series vanished for the rest of the run."""
    from oracle_exporter.sources.replay import COUNTERS, replay_sources
    path = tmp_path / "reset.jsonl"
    before = [make_snapshot("DEMO", 600 + 15 * i) for i in range(6)]      # up a day and 10 minutes
    after = [make_snapshot("DEMO", -86_400 + 60 + 15 * i) for i in range(6)]   # restarted a minute ago
    for k, snap in enumerate(after):
        snap.time = make_snapshot("DEMO", 700 + 15 * k).time
    path.write_text("".join(s.to_json() + "\n" for s in before + after))
    [src] = replay_sources(str(path), loop=True)
    served = [counter_values(src.fetch(), COUNTERS) for _ in range(12 * 4)]
    keys = set(served[0])
    assert keys and all(set(v) == keys for v in served)          # no series vanishes
    for n in range(1, len(served)):
        for key in keys:
            now, was = served[n][key], served[n - 1][key]
            assert now >= was >= 0, (n, key, was, now)             # the restart too is carried on
    # rate() sees the recorded increases: after the restart, the restarted counter's own
    [src] = replay_sources(str(path))
    raw = [counter_values(src.fetch(), COUNTERS) for _ in range(12)]
    for key in keys:
        assert served[7][key] - served[6][key] == pytest.approx(raw[7][key] - raw[6][key])
        assert served[6][key] - served[5][key] == pytest.approx(raw[6][key] if raw[6][key] < raw[5][key]
                                                                else raw[6][key] - raw[5][key])
    redo = [v for v in keys if v[0] == "GV$SYSSTAT" and "redo size" in v[1]]
    assert redo and served[-1][redo[0]] > served[11][redo[0]] > 0


# -- finding 10: smaller traps --------------------------------------------------------------------------

def test_replaying_into_its_own_recording_is_refused(tmp_path, core):
    """--replay F --record F appended the replay to its own file; the next start refused it."""
    path = core.write_recording(tmp_path / "r.jsonl", [make_snapshot("DEMO", 0), make_snapshot("DEMO", 15)])
    (tmp_path / "link.jsonl").symlink_to(path)
    before = path.read_bytes()
    for record in (str(path), str(tmp_path / "link.jsonl")):
        res = core.run_cli("--replay", str(path), "--record", record, "--once")
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert "--record" in res.stderr and "--replay serves" in res.stderr and "Traceback" not in res.stderr
    assert path.read_bytes() == before


@pytest.mark.slow
def test_a_reload_while_the_exporter_starts_is_not_fatal(tmp_path, core):
    """systemctl reload (ExecReload: kill -HUP) before the reload handler was installed ended the
    process with status 129. The config is a FIFO here: the exporter waits in its start for it."""
    import os
    import signal
    import socket
    import subprocess
    fifo = tmp_path / "c.yml"
    os.mkfifo(fifo)
    port = core.free_port()
    proc = subprocess.Popen([core.PYTHON, "-m", "oracle_exporter", "--config.file", str(fifo), "--refusals.file", "",
                             "--web.listen-address", f"127.0.0.1:{port}"], cwd=core.ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:           # the exporter is in its start, opening the FIFO
            if Path(f"/proc/{proc.pid}/wchan").read_text() == "wait_for_partner":
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGHUP)
        time.sleep(0.2)
        try:                                         # no reader (the exporter is gone): ENXIO, no hang
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            fd = None
        if fd is not None:
            os.write(fd, b"databases:\n  - {name: a, dsn: '127.0.0.1:1/S', user: m, password_env: HOME}\n")
            os.close(fd)
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()
    finally:
        proc.terminate()
        proc.wait(10)


def test_an_empty_password_env_is_a_start_error_as_an_empty_password_file(tmp_path, monkeypatch):
    """An empty password_env was accepted and every logon sent an empty password (ORA-01005)."""
    from exporter_common.config import ConfigError
    from oracle_exporter.config import load_config
    monkeypatch.setenv("ORA_PW", "")
    cfg = tmp_path / "c.yml"
    cfg.write_text("databases:\n  - {name: a, dsn: 'h:1/S', user: m, password_env: ORA_PW}\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(cfg))
    assert "environment variable ORA_PW is empty" in str(err.value)


@pytest.mark.parametrize("name", ["a\nb", "a\tb", "a\rb", "a\x1bb", "a\x85b"])
def test_a_database_name_with_a_control_character_is_refused(tmp_path, monkeypatch, name):
    """A newline in a name split --once's "database(s) down" line (and every log line) in two."""
    import json as _json

    from exporter_common.config import ConfigError
    from oracle_exporter.config import load_config
    cfg = tmp_path / "c.yml"
    cfg.write_text(f"databases:\n  - {{name: {_json.dumps(name)}, dsn: 'h:1/S', user: m, password_env: HOME}}\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(cfg))
    assert "control character" in str(err.value) and "\n" not in str(err.value)


# -- finding 9: a listener slower than the budget ---------------------------------------------------

@pytest.mark.slow
def test_a_listener_answering_after_the_budget_keeps_its_true_reason(fake_listener):
    """A listener that answers ORA-12514 after 5 s with timeout_seconds 3: the reason flipped
    between "logon timeout" and "unknown service" from fetch to fetch (a warning per flip, the
    true cause shown half the time)."""
    slow = fake_listener("slow", delay=1.2)
    src = LiveSource(DatabaseConfig("slow", dsn=f"127.0.0.1:{slow.port}/S", user="mon", password="pw",
                                    timeout_seconds=0.5), Settings(), connect_timeout=1.0, backoff_cap=0.5)
    reasons = []
    try:
        end = time.monotonic() + 7
        while time.monotonic() < end:
            reasons.append(failure_reason(src.fetch().errors["*"]))
            time.sleep(0.2)
    finally:
        src.close()
    first = reasons.index("unknown service")
    assert set(reasons[:first]) <= {"logon timeout"}
    assert set(reasons[first:]) == {"unknown service"}, reasons
    assert slow.accepted >= 3                      # still tried on the backoff: it may recover


@pytest.mark.slow
def test_a_restart_with_sixty_refusals_in_the_file_answers_each_at_once_with_its_refusal(fake_listener, tmp_path,
                                                                                         monkeypatch):
    """After a restart every refused database's password had to be hashed (PBKDF2) within the
    first scrape's deadline: on a busy 2-core host half of a hundred came out "timeout". The
    comparison now runs in the background and the refusal stands meanwhile: no logon either."""
    from concurrent.futures import ThreadPoolExecutor
    monkeypatch.setattr(refusals, "PBKDF2_ITERATIONS", 20_000)
    listener = fake_listener("slow", delay=0.0, error=1017)
    state = str(tmp_path / "refusals.json")
    dbs = [DatabaseConfig(f"r{i:02d}", dsn=f"127.0.0.1:{listener.port}/S", user=f"mon{i}", password=f"pw{i}",
                          timeout_seconds=2.0) for i in range(60)]
    before = RefusalStore(state)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda d: before.refuse(d.user, d.dsn, d.password, "DPY-6005: cannot connect to database.; "
                                              "DPY-6000: Listener refused connection. (Similar to ORA-1017)",
                                              d.name), dbs))
    store = RefusalStore(state)                       # the restart
    changed = DatabaseConfig("r00", dsn=dbs[0].dsn, user=dbs[0].user, password="new", timeout_seconds=2.0)
    sources = [LiveSource(d, Settings(), connect_timeout=2.0, refusals=store) for d in [changed, *dbs[1:]]]
    exp = OracleExporter([Target(s.name, s, timeout=2.0) for s in [*sources, healthy(refusals=store)]], Settings(),
                         collectors={})
    try:
        t0 = time.monotonic()
        got = selfs(exp.scrape())
        assert time.monotonic() - t0 < 0.5
        assert {k[2] for k in got if k[0] == "oracle_last_error_info" and k[1] != "ok"} == {"logon denied"}
        assert got[("oracle_up", "ok", None)] == 1.0
        assert listener.accepted == 0
        deadline = time.monotonic() + 20              # the comparisons end; only the changed one logs on
        while listener.accepted < 1 and time.monotonic() < deadline:
            exp.scrape()
            time.sleep(0.2)
        time.sleep(0.5)
        got = selfs(exp.scrape())
        assert {k[2] for k in got if k[0] == "oracle_last_error_info" and k[1] != "ok"} == {"logon denied"}
        assert listener.accepted == 1
    finally:
        exp.close()
