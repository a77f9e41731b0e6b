"""hangs.test.yml: hangs (O2), the age of the current wait."""
from mixin.scenarios.common import DB, H, ORA, quiet, scenario, sel, Timeline, WAIT_CLASS


# ---------------------------------------------------------------- hangs (O2): the age of the current wait
def hang_tests(pack) -> list:
    tests = []
    n = 30
    tl = Timeline(n)

    def longest(event, per_minute, before=0.01, db=None):
        """oracle_sessions_waiting_longest_seconds of `event`: `before` until H, then a session
        stuck from H on (its wait grows by per_minute * 60 s each minute)."""
        lab = {**ORA, **(db or DB), "event": event, "wait_class": WAIT_CLASS.get(event, "Other")}
        return tl.gauge("oracle_sessions_waiting_longest_seconds", lab,
                        [(0, before), (H, lambda t: (t - H) * 60 * per_minute)])

    alert = "OracleCommitsStuck"
    sync = {**ORA, **DB, "event": "log file sync", "wait_class": "Commit"}
    # the failure: LGWR stops; no log file sync wait completes, so the counters freeze and every
    # average stays quiet, while every committing session waits longer and longer
    frozen = [tl.counter("oracle_wait_event_waits_total", sync, [(0, 72 * 60), (H, 0)]),
              tl.counter("oracle_wait_event_time_seconds_total", sync, [(0, 72 * 60 * 0.002), (H, 0)]),
              longest("log file sync", 1)]
    tests.append({"name": "OracleCommitsStuck: LGWR hangs, no commit completes: the averages stay silent, the hang pages",
                  "interval": "1m", "input_series": frozen, "alert_rule_test": [
                      {"eval_time": f"{H + 10}m", "alertname": "OracleLogFileSyncSlow", "exp_alerts": []},
                      {"eval_time": f"{H + 10}m", "alertname": "OracleCommitCpuStarvation", "exp_alerts": []},
                      {"eval_time": f"{H + 1}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{H + 2}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {**DB, "event": "log file sync"}, 120)]},
                      {"eval_time": f"{H + 10}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {**DB, "event": "log file sync"}, 600)]}]})
    ev = "log file switch (archiving needed)"
    tests.append(scenario(pack, "OracleCommitsStuck: archiver stuck, sessions wait 'log file switch (archiving needed)' fires",
                          alert, 0, [longest(ev, 0.75)], {**DB, "event": ev}, 90, window=0))
    tests.append(quiet("OracleCommitsStuck: a commit waiting 20 s (under 30 s) does not page", alert,
                       [tl.gauge("oracle_sessions_waiting_longest_seconds", sync, [(0, 0.01), (H, 20)])], H + 5))

    # issue 23, failure first: one checkpoint-incomplete wait of 38 s, seen by one scrape, paged at
    # night (no `for`); a hang is older at the next scrape, a single long wait is gone
    ckpt = {**ORA, **DB, "event": "log file switch (checkpoint incomplete)", "wait_class": "Configuration"}
    tests.append({"name": "OracleCommitsStuck: one 38 s checkpoint-incomplete wait, gone at the next scrape, does not page",
                  "interval": "1m", "input_series": [
                      tl.gauge("oracle_sessions_waiting_longest_seconds", ckpt, [(0, 0.01), (H, 38), (H + 1, 0.02)])],
                  "alert_rule_test": [{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []}
                                      for t in (H + 1, H + 2, H + 3, H + 6)]})

    alert = "OracleSessionsStuck"
    # issue 23, failure first: waits that last by design are not hangs: RMAN writing to tape
    # (sbtwrite2, Administrative), a Backup: event, Resource Manager queueing (Scheduler)
    for event, klass, why in (("sbtwrite2", "Administrative", "RMAN writing to tape"),
                              ("Backup: MML write backup piece", "Administrative", "RMAN through the media manager"),
                              ("resmgr:cpu quantum", "Scheduler", "Resource Manager queueing (the plan working)"),
                              ("resmgr:pq queued", "Scheduler", "Resource Manager queueing parallel statements")):
        tests.append(quiet(f"OracleSessionsStuck: 40 minutes in '{event}' ({klass}) is {why}, not a hang", alert,
                           [tl.gauge("oracle_sessions_waiting_longest_seconds",
                                     {**ORA, **DB, "event": event, "wait_class": klass},
                                     [(0, lambda t: 2400 + t * 60)])], H + 10))
    ev = "db file sequential read"
    tests.append(scenario(pack, "OracleSessionsStuck: a single-block read hanging for minutes (storage hang) fires", alert, 0,
                          [longest(ev, 1)], {**DB, "event": ev, "wait_class": "User I/O"}, (H + 8 - H) * 60, window=5))
    tests.append(quiet("OracleSessionsStuck: 10 minutes in 'enq: TX - row lock contention' is a blocked session, not this", alert,
                       [tl.gauge("oracle_sessions_waiting_longest_seconds",
                                 {**ORA, **DB, "event": "enq: TX - row lock contention", "wait_class": "Application"},
                                 [(0, 600)])], H + 10))
    tests.append(quiet("OracleSessionsStuck: a stuck commit is OracleCommitsStuck's page, not also this ticket", alert,
                       [longest("log file sync", 1)], H + 10))
    tests.append(quiet("OracleSessionsStuck: 4 minutes in a non-idle wait does not fire", alert,
                       [tl.gauge("oracle_sessions_waiting_longest_seconds", {**ORA, **DB, "event": ev, "wait_class": "User I/O"},
                                 [(0, 240)])], H + 10))

    alert = "OracleSessionsBlocked"
    user = {**ORA, **DB, "blocker_kind": "user"}
    tests.append(scenario(pack, "OracleSessionsBlocked: a session blocked for minutes by an uncommitted row lock fires", alert, 0,
                          [tl.gauge("oracle_sessions_blocked_by_longest_seconds", user,
                                    [(0, 0), (H, lambda t: (t - H) * 60)])], {**DB, "blocker_kind": "user"}, 480,
                          window=5))
    tests.append(quiet("OracleSessionsBlocked: blocks of 2 minutes come and go: no ticket", alert,
                       [tl.gauge("oracle_sessions_blocked_by_longest_seconds", user,
                                 [(0, lambda t: (t % 3) * 60)])], H + 10))
    # issue 22: commits waiting 10 minutes on LGWR are blocked sessions too (BLOCKING_SESSION = LGWR's SID),
    # but no row lock: OracleCommitsStuck's page, not this ticket blaming row locks
    tests.append(quiet("OracleSessionsBlocked: commits blocked by LGWR for 10 minutes are not blamed on row locks", alert,
                       [tl.gauge("oracle_sessions_blocked_by_longest_seconds", {**ORA, **DB, "blocker_kind": "lgwr"},
                                 [(0, 0), (H, lambda t: (t - H) * 60)]),
                        tl.gauge("oracle_sessions_blocked_by_longest_seconds", user, [(0, 0)]),
                        tl.gauge("oracle_sessions_blocked_longest_seconds", {**ORA, **DB},
                                 [(0, 0), (H, lambda t: (t - H) * 60)])], H + 15))
    return tests + hang_gap_tests(pack)


def hang_gap_tests(pack) -> list:
    """issue 23 review #1, failure first: a commit hang with one failed scrape (every series of the
    target stale at once, the collector's success too) neither resolves a firing OracleCommitsStuck
    nor restarts a pending one; the quiet counterpart: a wait that ended on a scrape that succeeded
    is gone at once (a stale copy must not make a 38 s wait page)."""
    alert = "OracleCommitsStuck"
    sync = {"event": "log file sync", "wait_class": "Commit"}
    other = {**DB, "database": "ODS2"}

    def raw(name, labels, values):
        return {"series": sel(name, {**ORA, **labels}), "values": values}

    ok = "sessions"
    series = [
        # firing by 3m (pending at 2m: 120 s > 30 s), the scrape at 5m fails
        raw("oracle_sessions_waiting_longest_seconds", {**DB, **sync}, "0 60 120 180 240 stale 360 420"),
        raw("oracle_collector_success", {**DB, "collector": ok}, "1 1 1 1 1 stale 1 1"),
        # pending at 2m (40 s), the scrape at 3m fails: still firing at 3m (for 1m ran on)
        raw("oracle_sessions_waiting_longest_seconds", {**other, **sync}, "0 20 40 stale 80 100 120 140"),
        raw("oracle_collector_success", {**other, "collector": ok}, "1 1 1 stale 1 1 1 1"),
    ]
    exp = [pack.expect(alert, 0, {**DB, "event": "log file sync"}, 180),
           pack.expect(alert, 0, {**other, "event": "log file sync"}, 40)]
    tests = [{"name": "OracleCommitsStuck: one failed scrape while firing (5m) or pending (3m) does not resolve or "
                      "restart the page (rev23 #1)",
              "interval": "1m", "input_series": series, "alert_rule_test": [
                  {"eval_time": "3m", "alertname": alert, "exp_alerts": exp},
                  {"eval_time": "5m", "alertname": alert,
                   "exp_alerts": [pack.expect(alert, 0, {**DB, "event": "log file sync"}, 240),
                                  pack.expect(alert, 0, {**other, "event": "log file sync"}, 100)]}]}]
    # the wait of 38 s ended (its series gone with a staleness marker) while the exporter answered:
    # no page, although the last value stays within the 3 minutes a failed scrape is bridged
    tests.append({"name": "OracleCommitsStuck: a 38 s wait that ended on a successful scrape is gone at once (rev23 #1)",
                  "interval": "1m", "input_series": [
                      raw("oracle_sessions_waiting_longest_seconds", {**DB, **sync}, "0.01 0.01 38 stale"),
                      raw("oracle_collector_success", {**DB, "collector": ok}, "1x8")],
                  "alert_rule_test": [{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []}
                                      for t in (3, 4, 5)]})
    return tests
