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
         program="JDBC Thin Client"):
    background = type_ == "BACKGROUND"
    r = row(SESSION, INST_ID=inst, SID=sid, TYPE=type_, STATUS=status, STATE="WAITING",
            EVENT="db file scattered read", WAIT_CLASS="User I/O", WAIT_TIME_MICRO=4_000,
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
    return {count(inst, k): 0.0 for k in ("rman", "datapump", "px", "user")}


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
        count(1, "rman"): 8, count(1, "datapump"): 3, count(1, "px"): 17, count(1, "user"): 2,
        count(2, "rman"): 1, count(2, "datapump"): 1, count(2, "px"): 0, count(2, "user"): 0}
    assert found[call(1, "none", "SYS", "rman")] == 5407
    assert found[call(1, "bn6m4qm0wzpyq", "SYSTEM", "datapump")] == 4000
    assert found[call(1, "5ms6rbzdnq16t", "REPORTS", "px")] == 4300
    assert found[call(1, "5ms6rbzdnq16t", "REPORTS", "user")] == 4300       # the QC: the user's own call
    assert found[call(1, "1mt9jyd0wnw1c", "BATCH", "user")] == 3900
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
                                      "oracle@db1 (J001)", "sqlplus@app1 (TNS V1-V3)", "JDBC Thin Client",
                                      "rmanager.py", "python@app1 (P000)", None, "")] == [
        "rman", "rman", "rman", "datapump", "datapump", "px", "px", "user", "user", "user", "user", "user",
        "user", "user"]
