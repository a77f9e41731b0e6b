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


def sess(inst, sid, *, type_="USER", status="ACTIVE", secs=2, sql_id="7h35uxf5uhmm1", user="APP",
         program="JDBC Thin Client", state="WAITING", event="db file scattered read", wait_class="User I/O"):
    background = type_ == "BACKGROUND"
    r = row(SESSION, INST_ID=inst, SID=sid, TYPE=type_, STATUS=status, STATE=state,
            EVENT=event, WAIT_CLASS=wait_class, WAIT_TIME_MICRO=4_000,
            BLOCKING_SESSION_STATUS="NO HOLDER", BLOCKING_INSTANCE=None, BLOCKING_SESSION=None,
            **{"SERIAL#": 100 + sid}, USERNAME=None if background else user,
            PROGRAM="oracle@db1 (LGWR)" if background else program,
            FINAL_BLOCKING_SESSION_STATUS="NO HOLDER", FINAL_BLOCKING_INSTANCE=None, FINAL_BLOCKING_SESSION=None,
            LAST_CALL_ET=secs, SQL_ID=None if background else sql_id)
    r["CON_ID"] = 0
    return r


def run(rows, settings=None):
    return samples(collect(Snapshot("ODS", NOW, {"GV$SESSION": rows}), settings or Settings(), names=["long_calls"]))


def count(inst, kind="user"):
    return ("oracle_long_calls", (("inst_id", str(inst)), ("program_kind", kind)))


def call(inst, sql_id, user, kind="user"):
    return ("oracle_long_call_seconds", (("inst_id", str(inst)), ("program_kind", kind), ("sql_id", sql_id),
                                         ("username", user)))


def zeros(inst):
    return {count(inst, k): 0.0 for k in ("rman", "datapump", "px", "job", "user")}


OLTP = [sess(1, 3, type_="BACKGROUND", secs=864_000, status="ACTIVE"),        # LGWR, 10 days
        sess(1, 4, type_="BACKGROUND", secs=864_000)] + [sess(1, 100 + k, secs=k % 4) for k in range(40)]


def test_background_processes_and_short_calls_stay_quiet():
    found = run(OLTP + [sess(1, 300, status="INACTIVE", secs=7200, sql_id=None)])  # idle 2 h, not a call
    assert found == zeros(1)


def test_a_two_hour_report_is_named_by_sql_id_and_user():
    found = run(OLTP + [sess(1, 200, secs=7260, sql_id="9zg9qd9bm4spu", user="REPORTS"),
                        sess(2, 201, secs=95, sql_id="0k8522rmdzg4k", user="BATCH")])
    assert found[call(1, "9zg9qd9bm4spu", "REPORTS")] == 7260
    assert found[call(2, "0k8522rmdzg4k", "BATCH")] == 95
    assert found[count(1)] == 1
    assert found[count(2)] == 1


def test_top_n_bounds_the_series_and_the_count_keeps_the_rest():
    storm = [sess(1, 500 + k, secs=100 + k, sql_id=f"a{k:012d}") for k in range(30)]
    storm += [sess(1, 600, secs=5000, sql_id="a000000000029"),         # same statement, same user: one series
              sess(1, 601, secs=80, sql_id=None)]                       # between statements of a PL/SQL call
    found = run(OLTP + storm, Settings(long_calls_max=3))
    series = {dict(k[1])["sql_id"]: v for k, v in found.items() if k[0] == "oracle_long_call_seconds"}
    assert series == {"a000000000029": 5000, "a000000000028": 128, "a000000000027": 127}
    assert found[count(1)] == 32
    lowered = run(OLTP, Settings(long_calls_min_seconds=3))
    assert lowered[count(1)] == 10
    assert lowered[call(1, "7h35uxf5uhmm1", "APP")] == 3


def test_no_session_rows_no_series():
    assert run([]) == {}
    assert samples(collect(Snapshot("ODS", NOW, {}, errors={"GV$SESSION": "ORA-00942"}), Settings(),
                           names=["long_calls"])) == {}


# review of issue 24 #15: the nightly backup, the export and the slaves of a parallel query are user
# sessions with calls as long as the job; GV$SESSION.PROGRAM as Oracle sets it for each
NIGHT = [sess(1, 700 + k, secs=5400 + k, sql_id=None, user="SYS", program="rman@db1 (TNS V1-V3)")
         for k in range(8)]                                                        # 8 channels, 1.5 h
NIGHT += [sess(1, 720, secs=4000, sql_id="bn6m4qm0wzpyq", user="SYSTEM", program="oracle@db1 (DM00)"),
          sess(1, 721, secs=3990, sql_id="3x9z5kbrn2ck8", user="SYSTEM", program="oracle@db1 (DW00)"),
          sess(1, 722, secs=3990, sql_id="3x9z5kbrn2ck8", user="SYSTEM", program="oracle@db1 (DW01)"),
          sess(2, 723, secs=3700, sql_id="f3yfg50ga0r8n", user="SYS", program="RMAN.EXE"),
          sess(2, 724, secs=3700, sql_id="f3yfg50ga0r8n", user="SYS", program="ORACLE.EXE (DW00)")]
PQ = [sess(1, 800 + k, secs=4300, sql_id="5ms6rbzdnq16t", user="REPORTS", program=f"oracle@db1 (P{k:03d})")
      for k in range(16)] + [sess(1, 820, secs=4300, sql_id="5ms6rbzdnq16t", user="REPORTS",
                                  program="oracle@db1 (PZ99)")]


def test_backup_export_and_px_slaves_are_told_apart_from_the_users_calls():
    found = run(OLTP + NIGHT + PQ + [sess(1, 830, secs=4300, sql_id="5ms6rbzdnq16t", user="REPORTS",
                                          program="sqlplus@app1 (TNS V1-V3)"),          # the query coordinator
                                     sess(1, 831, secs=3900, sql_id="1mt9jyd0wnw1c", user="BATCH",
                                          program="oracle@db1 (J000)")])                # a scheduler job
    assert {k: v for k, v in found.items() if k[0] == "oracle_long_calls"} == {
        count(1, "rman"): 8, count(1, "datapump"): 3, count(1, "px"): 17, count(1, "job"): 1, count(1, "user"): 1,
        count(2, "rman"): 1, count(2, "datapump"): 1, count(2, "px"): 0, count(2, "job"): 0, count(2, "user"): 0}
    assert found[call(1, "none", "SYS", "rman")] == 5407
    assert found[call(1, "bn6m4qm0wzpyq", "SYSTEM", "datapump")] == 4000
    assert found[call(1, "5ms6rbzdnq16t", "REPORTS", "px")] == 4300
    assert found[call(1, "5ms6rbzdnq16t", "REPORTS", "user")] == 4300       # the QC: the user's own call
    assert found[call(1, "1mt9jyd0wnw1c", "BATCH", "job")] == 3900
    assert found[call(2, "f3yfg50ga0r8n", "SYS", "rman")] == 3700
    assert found[call(2, "f3yfg50ga0r8n", "SYS", "datapump")] == 3700


def test_the_limit_is_per_kind_so_the_backup_never_hides_a_users_call():
    # one series per kind allowed: 8 RMAN channels longer than the report must not take its place
    found = run(OLTP + NIGHT + [sess(1, 900, secs=3700, sql_id="9zg9qd9bm4spu", user="REPORTS")],
                Settings(long_calls_max=1))
    series = {k: v for k, v in found.items() if k[0] == "oracle_long_call_seconds"}
    assert series == {call(1, "none", "SYS", "rman"): 5407, call(1, "bn6m4qm0wzpyq", "SYSTEM", "datapump"): 4000,
                      call(1, "9zg9qd9bm4spu", "REPORTS", "user"): 3700,
                      call(2, "f3yfg50ga0r8n", "SYS", "rman"): 3700,
                      call(2, "f3yfg50ga0r8n", "SYS", "datapump"): 3700}


def test_program_kind_reads_the_forms_oracle_sets():
    from oracle_exporter.collectors.long_calls import program_kind
    assert [program_kind(p) for p in ("rman@db1 (TNS V1-V3)", "rman.exe", "RMAN.EXE", "oracle@db1 (DW0A)",
                                      "oracle@db1 (DM00)", "oracle@db1.example.com (P00A)", "ORACLE.EXE (P001)",
                                      "oracle@db1 (J001)", "ORACLE.EXE (J000)", "sqlplus@app1 (TNS V1-V3)",
                                      "JDBC Thin Client", "rmanager.py", "python@app1 (P000)", "python@app1 (J000)",
                                      None, "")] == [
        "rman", "rman", "rman", "datapump", "datapump", "px", "px", "job", "job", "user", "user", "user", "user",
        "user", "user", "user"]


def test_an_active_session_waiting_in_an_idle_class_event_is_not_a_long_call():
    """Reviewer: an AQ listener dequeuing with WAIT FOREVER (its transaction open: GV$SESSION reads it
    through TADDR), a DBMS_LOCK.SLEEP loop, a DBMS_PIPE.RECEIVE_MESSAGE are ACTIVE calls of days that
    wait for work, not run: left out, so they never push a runaway query out of the top 5; the same
    session on CPU, or in a non-idle wait, is counted."""
    idle = [sess(1, 400 + k, secs=6 * 86400 + k, sql_id=f"8x0fpcfa9tm5{k}", user="APP_AQ", event=ev,
                 wait_class="Idle")
            for k, ev in enumerate(("Streams AQ: waiting for messages in the queue", "PL/SQL lock timer",
                                    "pipe get", "jobq slave wait", "SQL*Net message from client",
                                    "Streams AQ: waiting for messages in the queue"))]
    runaway = sess(1, 500, secs=7300, sql_id="9zg9qd9bm4spu", user="REPORTS")
    on_cpu = sess(1, 501, secs=3900, sql_id="b6usrg82hwsa3", user="APP_AQ", state="WAITED SHORT TIME",
                  event="Streams AQ: waiting for messages in the queue", wait_class="Idle")
    found = run(OLTP + idle + [runaway, on_cpu])
    assert found == {**zeros(1), count(1): 2.0, call(1, "9zg9qd9bm4spu", "REPORTS"): 7300,
                     call(1, "b6usrg82hwsa3", "APP_AQ"): 3900}


def test_scheduler_job_slaves_are_their_own_kind():
    """Oracle's job slaves (J000..) run the nightly statistics gathering and the applications' jobs:
    program_kind job, their own top 5, never counted as a user's call."""
    stats = sess(1, 600, secs=3 * 3600, sql_id="b6usrg82hwsa3", user="SYS", program="oracle@db1 (J001)")
    found = run(OLTP + [stats, sess(1, 601, secs=400, sql_id="9zg9qd9bm4spu", user="REPORTS")])
    assert found == {**zeros(1), count(1, "job"): 1.0, count(1): 1.0,
                     call(1, "b6usrg82hwsa3", "SYS", "job"): 3 * 3600, call(1, "9zg9qd9bm4spu", "REPORTS"): 400}
