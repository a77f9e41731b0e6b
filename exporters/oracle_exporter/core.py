"""oracle-exporter's own declaration: the exporter-wide settings (timeouts, backoff, the minimum
interval) and the self metrics every database gets, read like a collector's SPEC by the
config, the live source, the exporter and the metrics catalog."""
from __future__ import annotations

from exporter_common.declare import Collector, Family, Setting

_DB = ("database",)
_COLL = ("database", "collector")
_VIEW = ("database", "view")

SPEC = Collector(
    "exporter", "The exporter itself: is each database answering, how long a scrape takes, what failed.",
    exporter="oracle-exporter",
    settings=(
        Setting("timeout_seconds", 10.0, "time budget of one fetch of a database (connect and every statement) "
                "and its scrape deadline; a database may override it", minimum=0.1),
        Setting("connect_timeout_seconds", 5.0, "TCP connect timeout of a (re)connect", minimum=0.1),
        Setting("min_interval_seconds", 0.0, "at most one query set per database per interval, however many "
                "scrapers (an HA pair of Prometheus servers shares one fetch)", minimum=0.0),
        Setting("refresh_interval_seconds", 0.0, "0: every scrape fetches (or reuses a fetch younger than "
                "min_interval_seconds); above 0 (at least 1): every database is fetched in the background this "
                "often (at most 600), spread evenly over the interval, and a scrape serves the last fetch at once (for "
                "fleets of hundreds of databases: a scrape no longer waits for them)", minimum=0.0),
        Setting("reconnect_backoff_max_seconds", 60.0, "reconnects back off 1 s, 2 s, 4 s ... up to this",
                minimum=0.1),
        Setting("locked_retry_seconds", 3600.0, "a logon refused with ORA-28000 (account locked) is tried again "
                "this often with the same password (Oracle unlocks a LOCKED(TIMED) account itself after the "
                "profile's PASSWORD_LOCK_TIME, and a logon on a locked account counts no failed logon); 0: only "
                "after a password change or a reload", minimum=0.0),
    ),
    metrics=(
        Family("oracle_up", "gauge", "1 if the last fetch of the database succeeded, else 0.", _DB,
               note="0 also when the database answered but no view could be read (every view failed).", measure='1/0', source='1 if the last scrape of that database succeeded; an unreachable database (replay: `"errors": {"*": ...}`) gives 0, and so does one that answered but whose every view failed ("connected but blind", e.g. ORA-00942 everywhere: grants missing)'),
        Family("oracle_scrape_duration_seconds", "gauge",
               "Time the scrape of the database took (fetch and collectors), in seconds.", _DB, unit="seconds", source='time of the scrape of that database (fetch + collectors): its own, from the scrape\'s start until its fetch ended (or its deadline) plus its collectors, never the wait for the other databases; with `refresh_interval_seconds`, the served fetch\'s own time from its start to the end of its rendering'),
        Family("oracle_collector_duration_seconds", "gauge", "Time a collector took on the snapshot, in seconds.",
               _COLL, unit="seconds", source='time a collector took'),
        Family("oracle_collector_success", "gauge", "1 if the collector succeeded on the last snapshot, else 0.",
               _COLL, note="0 also when a view the collector reads failed.", source='1 if the collector succeeded on the last snapshot'),
        Family("oracle_scrape_errors_total", "counter", "Failed collector runs (collector=\"fetch\": failed "
                                                        "fetches) since the exporter started.", _COLL, measure='errors', source='failed collector runs since start; `collector="fetch"` counts failed fetches'),
        Family("oracle_collector_cache_age_seconds", "gauge",
               "Age of the rows a collector with a minimum interval used (0: read in this fetch), seconds.", _COLL,
               unit="seconds", source='for collectors with a minimum interval (tablespaces 300 s, recovery_area, archive_dest, asm 60 s by default; `collector_intervals` in the config): age of the rows the collector used, 0 when they were read in this fetch. Alert on it growing past its interval (a view that stopped being re-read)'),
        Family("oracle_view_errors", "gauge", "1 for each view that failed in the last fetch (absent "
                                              "otherwise); oracle_view_error_info names the error and grant.", _VIEW, measure='1', source='1 for each view that failed in the last fetch (ORA-00942, ORA-01031, ORA-00904 ...); absent otherwise. Custom statements have `oracle_custom_query_success` instead'),
        Family("oracle_view_error_info", "gauge", "The ORA- code of a view that failed in the last fetch and "
                                                  "the grant that would allow it, value 1.",
               ("database", "view", "code", "grant"), measure='1', source="the failed view's error code (`ORA-00942`, ... or `other`) and, for ORA-00942 / ORA-01031 / ORA-04043, the grant it needs (`SELECT ON SYS.GV_$SESSION`; empty otherwise). On a release that lacks the view the same code appears: check the view's release in docs/metrics.md before granting"),
        Family("oracle_last_error_info", "info", "Why the most recent failed fetch of the database failed, value 1 "
                                                 "(reason: a fixed set of causes; empty while no fetch has failed). "
                                                 "Down now: oracle_up == 0.", ("database", "reason"),
               note="reason is one of oracle_exporter.ora_errors.REASON_ORDER, or other.", source='constant 1: why the most recent failed fetch failed (down now: `oracle_up == 0`; `reason` empty while no fetch has failed since start). `reason` is one of a fixed set: connection refused, name not resolved, host unreachable, logon timeout (the listener accepted the connection but the logon never completed), connect timeout, logon denied (also: not tried again with the same password), account locked, password expired (ORA-28001), unknown service, listener refused, database not open, encryption required, alias not resolved (a tnsnames.ora alias not found: no `config_dir`, no such entry), tls failed (TCPS: wallet file missing, certificate not trusted), connection closed, timeout (the fetch budget ran out), session lost, connected but blind (every view failed), recording changed / recording unreadable (replay: the file was rewritten, cut or removed under the running exporter), other'),
        Family("oracle_snapshot_age_seconds", "gauge", "Age of the served snapshot (since its fetch started), in "
                                                       "seconds: above the scrape interval when a fetch is reused "
                                                       "(min_interval_seconds) or still running.", _DB,
               unit="seconds", source='age of the served snapshot since its fetch started: about the fetch time normally, up to `min_interval_seconds` when a recent fetch is reused, more when a scrape deadline came before the running fetch ended and the last completed snapshot was served'),
        Family("oracle_view_query_duration_seconds", "gauge", "Time the statement of each view took in the fetch "
                                                              "of the served snapshot, in seconds (live only).",
               _VIEW, unit="seconds", source='time each view\'s statement (and each custom statement, `view="CUSTOM:NAME"`) took in the fetch of the served snapshot; live databases only'),
        Family("oracle_password_expiring", "gauge", "1 if the last logon warned that the password expires soon "
                                                    "(ORA-28002 grace period), else 0 (live databases only).", _DB,
               measure='1/0', source="python-oracledb's `Connection.warning` at the last successful logon: ORA-28002 (the password is in its grace period; after it every logon fails with ORA-28001) or ORA-28011; 0 without a warning. Live databases only; logged once when it starts. Change the password (and `password_file`), or give the monitoring user a profile whose password does not expire (docs/oracle-monitoring-user.sql)"),
        Family("oracle_exporter_build_info", "gauge", "Version of oracle-exporter; constant 1.", ("version",), note='Labels: version (no database).', source='constant 1 (no `database` label)'),
    ), title='Self metrics')


def default(key: str):
    """The declared default of an exporter-wide setting."""
    return SPEC.default(key)
