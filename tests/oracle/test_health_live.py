"""Live source behaviour of the health work, on a fake session (the logic, not the driver):
per-collector minimum intervals (cached rows and their age), container detection at connect,
custom statements with their own timeout, scope and isolation."""
from __future__ import annotations

import oracledb

from oracle_exporter.config import DatabaseConfig, Settings
from oracle_exporter.custom import CustomQuery, Field
from oracle_exporter.exporter import OracleExporter, Target
from oracle_exporter.sources import is_failed
from oracle_exporter.sources.live import LiveSource
from oracle_sim import FakeClock, FakeConnection, FakeCursor

CONTAINER_SQL = "SELECT SYS_CONTEXT('USERENV', 'CON_ID')"


class Cursor(FakeCursor):
    """FakeCursor that also answers the container statement and custom statements."""

    def execute(self, sql, binds):
        conn = self.conn
        if sql.startswith(CONTAINER_SQL):
            conn.executed.append(sql)
            if conn.container is None:
                raise oracledb.DatabaseError("ORA-02003: invalid USERENV parameter")
            self.description = [("CON_ID",), ("CON_NAME",)]
            self._rows = [conn.container]
            return
        if sql in conn.custom:
            conn.executed.append(sql)
            conn.custom_timeouts.append(conn.call_timeout)
            result = conn.custom[sql]
            if isinstance(result, Exception):
                raise result
            cols, rows = result
            self.description = [(c,) for c in cols]
            self._rows = rows
            return
        super().execute(sql, binds)


class Conn(FakeConnection):
    def __init__(self, container=("1", "CDB$ROOT"), custom=None, **kw):
        super().__init__(**kw)
        self.container = container
        self.custom = custom or {}
        self.custom_timeouts: list[int] = []

    def cursor(self):
        return Cursor(self)


def source(conn, settings=None, clock=None):
    db = DatabaseConfig("prod1", dsn="h:1521/S", user="mon", password="pw", timeout_seconds=4)
    return LiveSource(db, settings or Settings(), connect=lambda d, t: conn, clock=clock or FakeClock())


def count(conn, view):
    return sum(1 for sql in conn.executed if f" FROM {view}" in sql)


def test_tablespaces_read_every_5_minutes_and_served_from_cache_with_their_age():
    conn, clock = Conn(), FakeClock()
    src = source(conn, clock=clock)
    first = src.fetch()
    assert not is_failed(first) and first.ages == {}
    clock.now += 120
    second = src.fetch()
    assert count(conn, "CDB_TABLESPACE_USAGE_METRICS") == 1 and count(conn, "GV$SESSION") == 2
    assert second.ages["CDB_TABLESPACE_USAGE_METRICS"] == 120 and "GV$SESSION" not in second.ages
    assert second.views["CDB_TABLESPACE_USAGE_METRICS"] == first.views["CDB_TABLESPACE_USAGE_METRICS"]
    assert "V$ASM_DISKGROUP_STAT" not in second.ages and count(conn, "V$ASM_DISKGROUP_STAT") == 2   # 60 s: due
    clock.now += 180                                            # 300 s after the first read
    third = src.fetch()
    assert count(conn, "CDB_TABLESPACE_USAGE_METRICS") == 2 and "CDB_TABLESPACE_USAGE_METRICS" not in third.ages


def test_intervals_are_configurable_and_a_shared_view_follows_its_most_frequent_reader():
    conn, clock = Conn(), FakeClock()
    settings = Settings(collector_intervals={"tablespaces": 0, "asm": 600, "dataguard": 600})
    src = source(conn, settings, clock)
    src.fetch()
    clock.now += 61
    snap = src.fetch()
    assert count(conn, "CDB_TABLESPACE_USAGE_METRICS") == 2           # interval 0: every fetch
    assert count(conn, "V$ASM_DISKGROUP_STAT") == 1 and snap.ages["V$ASM_DISKGROUP_STAT"] == 61
    assert count(conn, "V$DATAGUARD_STATS") == 1
    assert count(conn, "V$DATABASE") == 2                             # also read by instance (every fetch)


def test_a_failed_read_keeps_its_interval_and_is_read_again_after_it():
    """Issue 22: a slow view that fails is not tried again every scrape (the failure keeps the
    interval; the error stands meanwhile: no rows were read before), and is read after it."""
    conn, clock = Conn(fail={"CDB_TABLESPACES": "ORA-01013: user requested cancel of current operation"}), \
        FakeClock()
    src = source(conn, clock=clock)
    assert "CDB_TABLESPACES" in src.fetch().errors
    conn.fail.clear()
    clock.now += 15
    snap = src.fetch()
    assert count(conn, "CDB_TABLESPACES") == 1 and "CDB_TABLESPACES" in snap.errors
    clock.now += 300
    snap = src.fetch()
    assert "CDB_TABLESPACES" in snap.views and "CDB_TABLESPACES" not in snap.ages and not snap.errors


def test_cache_age_is_exported_per_collector():
    conn, clock = Conn(), FakeClock()
    src = source(conn, clock=clock)
    exp = OracleExporter([Target("prod1", src)], Settings())
    try:
        def ages():
            return {s.labels["collector"]: s.value for f in exp.scrape() for s in f.samples
                    if s.name == "oracle_collector_cache_age_seconds"}
        from oracle_exporter.collectors import COLLECTORS
        paced = {n for n, m in COLLECTORS.items() if m.SPEC.interval > 45 and Settings().enabled(n)}
        assert {"tablespaces", "recovery_area", "archive_dest", "asm"} <= paced    # the declared intervals
        assert ages() == {n: 0.0 for n in paced}
        clock.now += 45
        assert ages() == {n: 45.0 for n in paced}
    finally:
        exp.close()


def test_container_read_once_at_connect_and_none_before_12_1():
    conn = Conn(container=("3", "SALES"))
    src = source(conn)
    src.fetch()
    src.fetch()
    assert src.container == (3, "SALES") and sum(sql.startswith(CONTAINER_SQL) for sql in conn.executed) == 1
    old = Conn(container=None)
    src = source(old)
    assert not is_failed(src.fetch()) and src.container == (0, "")


ORDERS_SQL = "SELECT status, COUNT(*) AS n FROM app.orders GROUP BY status"
SLOW_SQL = "SELECT COUNT(*) AS v FROM big.table"


def custom_settings(**kw):
    orders = CustomQuery(name="app_orders", sql=ORDERS_SQL, labels=("status",),
                         fields=(Field("n", "app_orders", "Orders."),), interval=60, timeout=2.0)
    slow = CustomQuery(name="slow", sql=SLOW_SQL, fields=(Field("v", "app_big", "Rows."),), timeout=0.5)
    pdb_only = CustomQuery(name="pdb_only", sql="SELECT 1 AS v FROM pdb.t", fields=(Field("v", "app_pdb", "x"),),
                           scope="pdb")
    elsewhere = CustomQuery(name="elsewhere", sql="SELECT 1 AS v FROM x.t", fields=(Field("v", "app_x", "x"),),
                            databases=("prod2",))
    return Settings(custom_queries=(orders, slow, pdb_only, elsewhere), **kw)


def test_custom_statements_own_timeout_isolation_scope_and_interval():
    conn = Conn(custom={ORDERS_SQL: (["STATUS", "N"], [("NEW", 4)]),
                        SLOW_SQL: oracledb.DatabaseError("DPY-4024: call timeout of 500 ms exceeded")})
    clock = FakeClock()
    src = source(conn, custom_settings(), clock)
    snap = src.fetch()
    assert not is_failed(snap)                                          # the timeout cost only its statement
    assert snap.views["CUSTOM:APP_ORDERS"] == [{"STATUS": "NEW", "N": 4}]
    assert snap.errors["CUSTOM:SLOW"].startswith("call timeout (0.5 s)")
    assert conn.custom_timeouts == [2000, 500]       # their own timeouts (within the fetch budget of 4 s)
    assert "CUSTOM:PDB_ONLY" not in snap.views and "CUSTOM:ELSEWHERE" not in snap.views   # CDB root, prod1
    assert "GV$SESSION" in snap.views and not [e for e in snap.errors if not e.startswith("CUSTOM:")]
    clock.now += 30
    again = src.fetch()
    assert conn.executed.count(ORDERS_SQL) == 1 and again.ages["CUSTOM:APP_ORDERS"] == 30
    assert conn.executed.count(SLOW_SQL) == 2                           # failed: tried again


def test_custom_statement_that_loses_the_session_fails_the_fetch():
    conn = Conn(custom={ORDERS_SQL: oracledb.DatabaseError("DPY-4011: the database or network closed the "
                                                          "connection")})
    conn_dead = conn

    class Dying(Cursor):
        def execute(self, sql, binds):
            if sql == ORDERS_SQL:
                conn_dead.dead = True
            super().execute(sql, binds)
    conn.cursor = lambda: Dying(conn)
    snap = source(conn, custom_settings()).fetch()
    assert is_failed(snap) and "custom statement app_orders" in snap.errors["*"]


def test_custom_scope_pdb_runs_inside_a_pdb():
    conn = Conn(container=("3", "SALES"), custom={ORDERS_SQL: (["STATUS", "N"], []), SLOW_SQL: (["V"], [(1,)]),
                                                   "SELECT 1 AS v FROM pdb.t": (["V"], [(1,)])})
    snap = source(conn, custom_settings()).fetch()
    assert snap.views["CUSTOM:PDB_ONLY"] == [{"V": 1}]
