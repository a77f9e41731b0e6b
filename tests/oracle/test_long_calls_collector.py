"""The long-calls collector (GV$SESSION.LAST_CALL_ET, issue 24 point 3).

What an on-call engineer fears: a report that has run for two hours and holds the undo, a batch
stuck in one statement; which SQL_ID, which user. What must stay quiet: background processes
(their call lasts since the instance started), sessions idle for hours (INACTIVE: LAST_CALL_ET is
the time since their last call), the many short calls of an OLTP application. Rows as the
statement returns them (views.SESSION columns, CON_ID last)."""
from __future__ import annotations

from oracle_sim import collect, samples

from oracle_exporter.config import Settings
from oracle_exporter.snapshot import Snapshot
from oracle_exporter.views import SESSION, row

NOW = "2025-03-11T09:00:00Z"


def sess(inst, sid, *, type_="USER", status="ACTIVE", secs=2, sql_id="7h35uxf5uhmm1", user="APP"):
    background = type_ == "BACKGROUND"
    r = row(SESSION, INST_ID=inst, SID=sid, TYPE=type_, STATUS=status, STATE="WAITING",
            EVENT="db file scattered read", WAIT_CLASS="User I/O", WAIT_TIME_MICRO=4_000,
            BLOCKING_SESSION_STATUS="NO HOLDER", BLOCKING_INSTANCE=None, BLOCKING_SESSION=None,
            **{"SERIAL#": 100 + sid}, USERNAME=None if background else user,
            PROGRAM="oracle@db1 (LGWR)" if background else "JDBC Thin Client",
            FINAL_BLOCKING_SESSION_STATUS="NO HOLDER", FINAL_BLOCKING_INSTANCE=None, FINAL_BLOCKING_SESSION=None,
            LAST_CALL_ET=secs, SQL_ID=None if background else sql_id)
    r["CON_ID"] = 0
    return r


def run(rows, settings=None):
    return samples(collect(Snapshot("ODS", NOW, {"GV$SESSION": rows}), settings or Settings(), names=["long_calls"]))


OLTP = [sess(1, 3, type_="BACKGROUND", secs=864_000, status="ACTIVE"),        # LGWR, 10 days
        sess(1, 4, type_="BACKGROUND", secs=864_000)] + [sess(1, 100 + k, secs=k % 4) for k in range(40)]


def test_background_processes_and_short_calls_stay_quiet():
    found = run(OLTP + [sess(1, 300, status="INACTIVE", secs=7200, sql_id=None)])  # idle 2 h, not a call
    assert found == {("oracle_long_calls", (("inst_id", "1"),)): 0.0}


def test_a_two_hour_report_is_named_by_sql_id_and_user():
    found = run(OLTP + [sess(1, 200, secs=7260, sql_id="9zg9qd9bm4spu", user="REPORTS"),
                        sess(2, 201, secs=95, sql_id="0k8522rmdzg4k", user="BATCH")])
    assert found[("oracle_long_call_seconds", (("inst_id", "1"), ("sql_id", "9zg9qd9bm4spu"),
                                               ("username", "REPORTS")))] == 7260
    assert found[("oracle_long_call_seconds", (("inst_id", "2"), ("sql_id", "0k8522rmdzg4k"),
                                               ("username", "BATCH")))] == 95
    assert found[("oracle_long_calls", (("inst_id", "1"),))] == 1
    assert found[("oracle_long_calls", (("inst_id", "2"),))] == 1


def test_top_n_bounds_the_series_and_the_count_keeps_the_rest():
    storm = [sess(1, 500 + k, secs=100 + k, sql_id=f"a{k:012d}") for k in range(30)]
    storm += [sess(1, 600, secs=5000, sql_id="a000000000029"),         # same statement, same user: one series
              sess(1, 601, secs=80, sql_id=None)]                       # between statements of a PL/SQL call
    found = run(OLTP + storm, Settings(long_calls_max=3))
    series = {dict(k[1])["sql_id"]: v for k, v in found.items() if k[0] == "oracle_long_call_seconds"}
    assert series == {"a000000000029": 5000, "a000000000028": 128, "a000000000027": 127}
    assert found[("oracle_long_calls", (("inst_id", "1"),))] == 32
    lowered = run(OLTP, Settings(long_calls_min_seconds=3))
    assert lowered[("oracle_long_calls", (("inst_id", "1"),))] == 10
    assert lowered[("oracle_long_call_seconds", (("inst_id", "1"), ("sql_id", "7h35uxf5uhmm1"),
                                                 ("username", "APP")))] == 3


def test_no_session_rows_no_series():
    assert run([]) == {}
    assert samples(collect(Snapshot("ODS", NOW, {}, errors={"GV$SESSION": "ORA-00942"}), Settings(),
                           names=["long_calls"])) == {}
