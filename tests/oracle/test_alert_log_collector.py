

def test_before_12_1_the_missing_view_is_its_own_error_and_the_session_keeps_its_timeout():
    """11.2 has no V$DIAG_ALERT_EXT (X$DBGALERTEXT only): ORA-00942 is that view's error; the
    other views are read and the session's call timeout is restored."""
    conn = FakeConnection(fail={"V$DIAG_ALERT_EXT": "ORA-00942: table or view does not exist"})
    src = live(conn)
    snap = src.fetch()
    assert snap.errors == {"V$DIAG_ALERT_EXT": "ORA-00942: table or view does not exist"}
    assert "GV$SYSSTAT" in snap.views and conn.timeouts[-1] == conn.timeouts[-3]
    assert conn.timeouts[-2] == 10_000                                 # alert_log_timeout_seconds default
