"""signals.test.yml: the on-call signals of issue 24 (O21...): backups, ..."""
from mixin.rules import LONG_CALL_SQL_ID
from mixin.scenarios.common import H, ORA, every, quiet, scenario, sel, Timeline

DB = {"database": "ODS"}


def signal_tests(pack) -> list:
    tests = []
    n = 40
    tl = Timeline(n)

    # ---------------------------------------------------------------- backups (O21)
    alert = "OracleBackupTooOld"
    day = 86400

    def age(kind, start, db=None):
        """oracle_backup_age_seconds growing by 60 s a minute from `start` seconds."""
        return tl.gauge("oracle_backup_age_seconds", {**ORA, **(db or DB), "kind": kind},
                        [(0, lambda t: start + 60 * t)])

    def policy(kind, seconds, db=None):
        return tl.gauge("oracle_backup_policy_max_age_seconds", {**ORA, **(db or DB), "kind": kind}, [(0, seconds)])

    # the level 0 of last Sunday did not run: 8 days minus H minutes old at H, past the 8 day policy after it
    start = 8 * day - H * 60
    tests.append(scenario(pack, "OracleBackupTooOld: the weekly level 0 did not run: past its 8 day policy fires", alert,
                          0, [age("full", start), policy("full", 8 * day)], {**DB, "kind": "full"},
                          (start + 60 * (H + pack.for_min(alert) + 1)) / (8 * day), window=0))
    tests.append(quiet("OracleBackupTooOld: a full backup 7 days old under an 8 day policy is quiet", alert,
                       [age("full", 7 * day), policy("full", 8 * day)], n))
    tests.append(quiet("OracleBackupTooOld: a database without a backup_policy (a standby backed up elsewhere) "
                       "is never judged, however old its backups", alert,
                       [age("full", 30 * day, {"database": "ODS_STBY"})], n))
    # the site declares an archivelog policy from minute H on (config reload); no archivelog backup exists
    declared = {"series": policy("archivelog", 7200)["series"],
                "values": " ".join(["_"] * (H + 1) + ["7200"] * (n - H))}
    tests.append(scenario(pack, "OracleBackupTooOld: a policy for archivelog backups and none recorded fires", alert, 1,
                          [declared, age("full", day)], {**DB, "kind": "archivelog"}, 7200,
                          window=0))
    tests.append(quiet("OracleBackupTooOld: every kind the policy declares has a backup within it: quiet", alert,
                       [policy("archivelog", 7200), age("archivelog", 600), age("full", day),
                        policy("full", 8 * day)], n))

    alert = "OracleBackupFailed"
    failed = {**ORA, **DB, "input_type": "DB INCR"}
    tests.append(scenario(pack, "OracleBackupFailed: last night's level 1 job FAILED fires", alert, 0,
                          [tl.gauge("oracle_backup_jobs_failed", failed, [(0, 0), (H, 1)])],
                          {**DB, "input_type": "DB INCR"}, 1, window=0))
    tests.append(quiet("OracleBackupFailed: jobs that ran and did not fail are quiet", alert,
                       [tl.gauge("oracle_backup_jobs_failed", failed, [(0, 0)])], n))

    # ---------------------------------------------------------------- undo and temp (O22)
    inst1 = {**DB, "inst_id": "1"}
    for alert, metric, what in (("OracleSnapshotTooOld", "oracle_undo_snapshot_too_old_errors", "a report failed with ORA-01555"),
                                ("OracleUndoSpaceErrors", "oracle_undo_space_errors", "a batch ran out of undo space")):
        # the count of the last hour: 0, then 2 errors from H on, back to 0 an hour later (not in this window)
        tests.append(scenario(pack, f"{alert}: {what} in the last hour fires", alert, 0,
                              [tl.gauge(metric, {**ORA, **inst1}, [(0, 0), (H, 2)])], inst1, 2, window=0))
        tests.append(quiet(f"{alert}: an hour without the error is quiet", alert,
                           [tl.gauge(metric, {**ORA, **inst1}, [(0, 0)])], n))

    alert = "OracleTempSpaceFull"
    gb = 1e9

    def tablespace(used, contents="TEMPORARY", name="TEMP", size=64 * gb):
        lab = {**ORA, **DB, "container": "CDB$ROOT", "tablespace": name, "contents": contents}
        return [tl.gauge("oracle_tablespace_used_bytes", lab, [(0, 0.2 * size), (H, used)]),
                tl.gauge("oracle_tablespace_max_bytes", lab, [(0, size)])]
    ts = {**DB, "container": "CDB$ROOT", "tablespace": "TEMP", "contents": "TEMPORARY"}
    tests.append(scenario(pack, "OracleTempSpaceFull: a hash join holds 60 of the 64 GB of TEMP fires", alert, 0,
                          tablespace(60 * gb), ts, 60 / 64, window=1))
    tests.append(quiet("OracleTempSpaceFull: TEMP 85% in use is quiet", alert, tablespace(0.85 * 64 * gb), n))
    tests.append(quiet("OracleTempSpaceFull: a full permanent tablespace is OracleTablespaceFull, not this", alert,
                       tablespace(63 * gb, contents="PERMANENT", name="USERS"), n))

    # ---------------------------------------------------------------- RAC global cache (O23)
    alert = "OracleGlobalCacheSlow"
    tl2 = Timeline(n)

    def gc(kind, per_s, avg_before, avg_after, inst="2"):
        lab = {**ORA, **DB, "inst_id": inst, "kind": kind}
        return [tl2.counter("oracle_gc_blocks_received_total", lab, [(0, per_s * 60)]),
                tl2.counter("oracle_gc_block_receive_time_seconds_total", lab,
                            [(0, per_s * 60 * avg_before), (H, per_s * 60 * avg_after)])]
    g2 = {**DB, "inst_id": "2", "kind": "cr"}
    tests.append(scenario(pack, "OracleGlobalCacheSlow: CR blocks at 25 ms on instance 2 (a saturated interconnect) "
                                "fires", alert, 0, gc("cr", 1500, 0.0004, 0.025), g2, 0.025, window=5))
    tests.append(quiet("OracleGlobalCacheSlow: 0.4 ms per block is a healthy interconnect", alert,
                       gc("cr", 1500, 0.0004, 0.0004), n))
    tests.append(quiet("OracleGlobalCacheSlow: 8 ms (under 10 ms) is quiet", alert, gc("cr", 1500, 0.0004, 0.008), n))
    tests.append(quiet("OracleGlobalCacheSlow: 3 slow blocks a second on an idle cluster are under the floor", alert,
                       gc("current", 3, 0.0004, 0.05), n))

    alert = "OracleGlobalCacheBlocksLost"

    def lost(per_min, corrupt_per_min=0):
        lab = {**ORA, **DB, "inst_id": "2"}
        return [tl2.counter("oracle_gc_blocks_lost_total", lab, [(0, 0), (H, per_min)], start=17),
                tl2.counter("oracle_gc_blocks_corrupt_total", lab, [(0, 0), (H, corrupt_per_min)], start=0)]
    tests.append(scenario(pack, "OracleGlobalCacheBlocksLost: 4 blocks lost a minute (UDP buffer overflows) fires",
                          alert, 0, lost(4), {**DB, "inst_id": "2"}, 60, window=15))
    tests.append(quiet("OracleGlobalCacheBlocksLost: 17 blocks lost since startup and none now is quiet", alert,
                       lost(0), n))

    # ---------------------------------------------------------------- PDB open mode (O24)
    alert = "OraclePdbNotOpen"
    primary = tl2.gauge("oracle_database_info", {**ORA, **DB, "dbid": "1", "db_name": "ODS", "db_unique_name": "ODS",
                                                 "database_role": "PRIMARY", "log_mode": "ARCHIVELOG",
                                                 "open_mode": "READ WRITE"}, [(0, 1)])
    standby = tl2.gauge("oracle_database_info", {**ORA, **DB, "dbid": "1", "db_name": "ODS", "db_unique_name": "ODS",
                                                 "database_role": "PHYSICAL STANDBY", "log_mode": "ARCHIVELOG",
                                                 "open_mode": "MOUNTED"}, [(0, 1)])

    def mode(pdb, rw_before, rw_after):
        lab = {**ORA, **DB, "inst_id": "1", "pdb": pdb}
        return [tl2.gauge("oracle_pdb_open_mode", {**lab, "open_mode": "READ WRITE"}, [(0, rw_before), (H, rw_after)]),
                tl2.gauge("oracle_pdb_open_mode", {**lab, "open_mode": "MOUNTED"},
                          [(0, 1 - rw_before), (H, 1 - rw_after)])]
    sales = {**DB, "inst_id": "1", "pdb": "SALES"}     # the open mode is a state: not in the identity
    tests.append(scenario(pack, "OraclePdbNotOpen: SALES left MOUNTED after a restart fires", alert, 0,
                          mode("SALES", 1, 0) + [primary], sales, 0, window=0))
    tests.append(quiet("OraclePdbNotOpen: a PDB kept MOUNTED on purpose (never open in the window) is quiet", alert,
                       mode("ARCHIVE", 0, 0) + [primary], n))
    tests.append(quiet("OraclePdbNotOpen: a standby's PDBs are not open READ WRITE by design", alert,
                       mode("SALES", 1, 0) + [standby], n))
    restricted = {**ORA, **DB, "inst_id": "1", "pdb": "HR"}
    tests.append(scenario(pack, "OraclePdbNotOpen: HR opened RESTRICTED (plug-in violations) fires", alert, 1,
                          [tl2.gauge("oracle_pdb_restricted", restricted, [(0, 0), (H, 1)]), primary],
                          {**DB, "inst_id": "1", "pdb": "HR"}, 1, window=0))
    tests.append(quiet("OraclePdbNotOpen: HR open unrestricted is quiet", alert,
                       [tl2.gauge("oracle_pdb_restricted", restricted, [(0, 0)]), primary], n))

    # ---------------------------------------------------------------- scheduler jobs (O25)
    alert = "OracleSchedulerJobFailed"
    job = {**ORA, **DB, "owner": "APP", "job_name": "PURGE_AUDIT"}
    tests.append(scenario(pack, "OracleSchedulerJobFailed: the nightly purge failed fires", alert, 0,
                          [tl2.gauge("oracle_scheduler_job_failures", job, [(0, 0), (H, 1)])],
                          {**DB, "owner": "APP", "job_name": "PURGE_AUDIT"}, 1, window=0))
    tests.append(quiet("OracleSchedulerJobFailed: no failed run in the last day is quiet", alert,
                       [tl2.gauge("oracle_scheduler_job_failures_omitted", {**ORA, **DB}, [(0, 0)])], n))

    # ---------------------------------------------------------------- alert log (O26)
    alert = "OracleAlertLogCriticalError"
    crit = {**DB, "code": "ORA-00600", "level": "critical"}
    # ORA-00600 known since before the window (counted 2), one more at minute H+1
    tests.append(scenario(pack, "OracleAlertLogCriticalError: a new ORA-00600 in the alert log fires", alert, 0,
                          [tl2.counter("oracle_alert_log_errors_total", {**ORA, **crit},
                                       [(0, 0), (H + 1, lambda t: 1 if t == H + 1 else 0)], start=2)],
                          # the rule's value is increase() over 15 minutes, which extrapolates the one new
                          # message to the window's edges: 2 here (the text calls it the count of new messages)
                          crit, 2, window=0))
    # the first ORA-04031 since the exporter started: its series appears at minute H+1 with 1
    oom = {**DB, "code": "ORA-04031", "level": "severe"}
    first = {"series": tl2.counter("oracle_alert_log_errors_total", {**ORA, **oom}, [(0, 0)], start=1)["series"],
             "values": " ".join(["_"] * (H + 1) + ["1"] * (n - H))}
    tests.append(scenario(pack, "OracleAlertLogCriticalError: the first ORA-04031 since the exporter started fires",
                          alert, 0, [first], oom, 1, window=0))
    quiet_log = [tl2.counter("oracle_alert_log_errors_total", {**ORA, **DB, "code": c, "level": lv}, [(0, every(7))])
                 for c, lv in (("ORA-01555", "normal"), ("ORA-16xxx", "severe"), ("other", "normal"))]
    quiet_log.append(tl2.counter("oracle_alert_log_errors_total", {**ORA, **crit}, [(0, 0)], start=3))
    tests.append(quiet("OracleAlertLogCriticalError: ORA-01555, Data Guard and other errors, and an "
                       "old ORA-00600 that does not recur, are quiet", alert, quiet_log, n))

    # ---------------------------------------------------------------- long-running calls (O27)
    alert = "OracleLongRunningCall"
    call = {**DB, "inst_id": "1", "sql_id": "9zg9qd9bm4spu", "username": "REPORTS"}
    start = 3600 - 60 * (H + 1) + 30                  # past the hour from minute H+1 on
    fire = H + pack.for_min(alert) + 1
    tests.append(scenario(pack, "OracleLongRunningCall: a report past one hour in one call fires with its SQL_ID",
                          alert, 0, [tl2.gauge("oracle_long_call_seconds", {**ORA, **call},
                                               [(0, lambda t: start + 60 * t)])],
                          {k: v for k, v in call.items() if k != "sql_id"}, start + 60 * fire, window=0,
                          queries={LONG_CALL_SQL_ID: "9zg9qd9bm4spu"}))
    tests += long_call_churn_tests(pack, start, fire)
    tests += long_call_kind_tests(pack, start, fire)
    tests += alert_log_gap_tests(pack)
    short = {**ORA, **DB, "inst_id": "1", "sql_id": "0k8522rmdzg4k", "username": "BATCH"}
    tests.append(quiet("OracleLongRunningCall: batch steps of 55 minutes, one after the other, are quiet", alert,
                       [tl2.gauge("oracle_long_call_seconds", short,
                                  [(0, lambda t: 60 * ((t + 20) % 55) + 30)])], n))
    return tests + pdb_restart_tests(pack)


def pdb_restart_tests(pack) -> list:
    """rev24 #1, failure first: SALES open READ WRITE, the instance restarted for 15 minutes (no
    data at all: the memory, read through a 3-minute look-back, forgot SALES), SALES comes back
    MOUNTED: pages until opened. Quiet counterparts: memory.test.yml (a dropped PDB is forgotten)."""
    alert = "OraclePdbNotOpen"
    lab = {**ORA, **DB, "inst_id": "1", "pdb": "SALES"}
    info = {**ORA, **DB, "dbid": "1", "db_name": "ODS", "db_unique_name": "ODS", "database_role": "PRIMARY",
            "log_mode": "ARCHIVELOG", "open_mode": "READ WRITE"}

    def sr(name, labels, values):
        return {"series": name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}", "values": values}
    series = [sr("oracle_pdb_open_mode", {**lab, "open_mode": "READ WRITE"}, "1x10 _x15 0x25"),
              sr("oracle_pdb_open_mode", {**lab, "open_mode": "MOUNTED"}, "0x10 _x15 1x25"),
              sr("oracle_database_info", info, "1x10 _x15 1x25")]
    fired = [pack.expect(alert, 0, {**DB, "inst_id": "1", "pdb": "SALES"}, 0)]
    return [{"name": "OraclePdbNotOpen: SALES open, the instance down 15 minutes, SALES back MOUNTED fires (the "
                     "memory outlives the restart)",
             "interval": "1m", "input_series": series, "alert_rule_test": [
                 {"eval_time": "29m", "alertname": alert, "exp_alerts": []},
                 {"eval_time": "33m", "alertname": alert, "exp_alerts": fired}]}]



def long_call_churn_tests(pack, start: int, fire: int) -> list:
    """rev24 #5, failure first: one PL/SQL call of BATCH past one hour whose current statement (SQL_ID)
    changes every 2 minutes: each SQL_ID is its own series living 2 minutes (gone with a staleness
    marker when the next statement starts), none as long as `for`. The alert is the call: it fires,
    naming the SQL_ID running at that moment. Quiet counterpart: the same churn in a call of 50
    minutes."""
    alert = "OracleLongRunningCall"
    n = fire + 2

    def churn(user, first):
        out = []
        for k in range(0, n + 1, 2):
            vals = ["_"] * (n + 1)
            for t in (k, k + 1):
                if t <= n:
                    vals[t] = str(first + 60 * t)
            if k + 2 <= n:
                vals[k + 2] = "stale"
            lab = {**ORA, **DB, "inst_id": "1", "sql_id": f"b{k:02d}q8x7n3m4s1", "username": user}
            out.append({"series": sel("oracle_long_call_seconds", lab), "values": " ".join(vals)})
        out.append({"series": sel("oracle_collector_success", {**ORA, **DB, "collector": "long_calls"}),
                    "values": f"1x{n}"})
        return out
    now = f"b{fire - fire % 2:02d}q8x7n3m4s1"
    exp = pack.expect(alert, 0, {**DB, "inst_id": "1", "username": "BATCH"}, start + 60 * fire, {LONG_CALL_SQL_ID: now})
    return [{"name": "OracleLongRunningCall: a PL/SQL call past one hour whose SQL_ID changes every 2 minutes fires "
                     "once, as the call, naming the SQL_ID running now (rev24 #5)",
             "interval": "1m", "input_series": churn("BATCH", start),
             "alert_rule_test": [{"eval_time": f"{fire - 1}m", "alertname": alert, "exp_alerts": []},
                                 {"eval_time": f"{fire}m", "alertname": alert, "exp_alerts": [exp]}]},
            quiet("OracleLongRunningCall: the same churning PL/SQL call at 50 minutes is quiet", alert,
                  churn("BATCH", 3000 - 60 * n), n)]


def long_call_kind_tests(pack, start: int, fire: int) -> list:
    """rev24 #15, failure first: the nightly backup (8 RMAN channels of SYS, 1.5 h), a Data Pump
    export of SYSTEM (over an hour) and the 16 PX slaves of REPORTS' parallel query (longer than their
    coordinator) run while REPORTS' own call (the coordinator) crosses one hour: the alert fires for
    REPORTS only, with the coordinator's value and SQL_ID, not a slave's; SYS's own short call is
    quiet. Quiet counterpart: the same night without any user call past the hour."""
    alert = "OracleLongRunningCall"
    n = fire + 2

    def g(sql_id, user, kind, first):
        lab = {**ORA, **DB, "inst_id": "1", "sql_id": sql_id, "username": user, "program_kind": kind}
        return {"series": sel("oracle_long_call_seconds", lab),
                "values": " ".join(str(first + 60 * t) for t in range(n + 1))}
    night = [g("none", "SYS", "rman", 5400), g("bn6m4qm0wzpyq", "SYSTEM", "datapump", 4000),
             g("5ms6rbzdnq16t", "REPORTS", "px", start + 600), g("f3yfg50ga0r8n", "SYS", "user", 120),
             g("b6usrg82hwsa3", "SYS", "job", 3 * 3600),      # the nightly statistics gathering (J001)
             {"series": sel("oracle_collector_success", {**ORA, **DB, "collector": "long_calls"}),
              "values": f"1x{n}"}]
    user = g("9zg9qd9bm4spu", "REPORTS", "user", start)
    exp = pack.expect(alert, 0, {**DB, "inst_id": "1", "username": "REPORTS"}, start + 60 * fire,
                      {LONG_CALL_SQL_ID: "9zg9qd9bm4spu"})
    return [{"name": "OracleLongRunningCall: RMAN channels, a Data Pump export, PX slaves and the statistics job past one hour are "
                     "quiet while a user's call past one hour fires, with its own SQL_ID (rev24 #15)",
             "interval": "1m", "input_series": night + [user],
             "alert_rule_test": [{"eval_time": f"{fire - 1}m", "alertname": alert, "exp_alerts": []},
                                 {"eval_time": f"{fire}m", "alertname": alert, "exp_alerts": [exp]}]},
            quiet("OracleLongRunningCall: an RMAN backup, a Data Pump export, PX slaves and the statistics job past one hour, no "
                  "user call past it, are quiet", alert, night, n)]


def alert_log_gap_tests(pack) -> list:
    """rev23 #14a, failure first: the first ORA-04031 since the exporter started (its series appears
    at minute 2 with 1), and the scrape at minute 4 fails (every series stale): the alert stays
    firing through it (it resolved and fired again: two notifications). Quiet counterpart: an old
    ORA-00600 series (3 messages, no new one) with a failed scrape at minute 16 does not look new 15
    minutes later (its look-back 15 minutes ago hit the stale sample)."""
    alert = "OracleAlertLogCriticalError"
    oom = {**DB, "code": "ORA-04031", "level": "severe"}
    old = {**DB, "code": "ORA-00600", "level": "critical"}
    first = {"series": sel("oracle_alert_log_errors_total", {**ORA, **oom}), "values": "_ _ 1 1 stale 1 1"}
    known = {"series": sel("oracle_alert_log_errors_total", {**ORA, **old}),
             "values": " ".join(["3"] * 16 + ["stale"] + ["3"] * 15)}
    return [{"name": "OracleAlertLogCriticalError: the first ORA-04031 stays firing through one failed scrape (rev23 #14a)",
             "interval": "1m", "input_series": [first],
             "alert_rule_test": [{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, oom, 1)]}
                                 for t in (3, 4, 5)]},
            quiet("OracleAlertLogCriticalError: an old ORA-00600 with a failed scrape 15 minutes ago does not look new "
                  "(rev23 #14a)", alert, [known], 31)]
