"""health.test.yml: space, limits, standby (O4, O5)."""
from mixin.scenarios.common import DB, H, ORA, quiet, scenario, Timeline


# ---------------------------------------------------------------- space, limits, standby (O4, O5)
def health_tests(pack) -> list:
    tests = []
    th = pack.th
    n = 40
    tl = Timeline(n)

    # resource limits (GV$RESOURCE_LIMIT)
    alert = "OracleResourceLimitNear"

    def resource(name, current, limit=1000):
        lab = {**ORA, **DB, "resource": name}
        out = [tl.gauge("oracle_resource_current_utilization", lab, [(0, (limit or 1000) * 0.5), (H, current)])]
        if limit is not None:
            out.append(tl.gauge("oracle_resource_limit", lab, [(0, limit)]))
        return out
    tests.append(scenario(pack, "OracleResourceLimitNear: processes at 95% of the limit tickets", alert, 0,
                          resource("processes", 950), {**DB, "resource": "processes"}, 0.95, window=1))
    tests.append(scenario(pack, "OracleResourceLimitNear: sessions at 99% of the limit pages (ORA-00018 next)", alert, 1,
                          resource("sessions", 990), {**DB, "resource": "sessions"}, 0.99, window=1))
    tests.append(quiet("OracleResourceLimitNear: processes at 85% does not fire", alert, resource("processes", 850), n))
    tests.append(quiet("OracleResourceLimitNear: UNLIMITED (no limit series) does not fire", alert,
                       resource("transactions", 5000, limit=None), n))
    tests.append(quiet("OracleResourceLimitNear: a resource that refuses nothing (enqueue_locks at 99%) does not fire", alert,
                       resource("enqueue_locks", 990), n))

    # tablespaces
    alert = "OracleTablespaceFull"
    gb = 1e9

    def tablespace(used, size=100 * gb, contents="PERMANENT", name="USERS"):
        lab = {**ORA, "database": "ODS", "container": "SALES", "tablespace": name, "contents": contents}
        return [tl.gauge("oracle_tablespace_used_bytes", lab, [(0, 0.5 * size), (H, used)]),
                tl.gauge("oracle_tablespace_max_bytes", lab, [(0, size)])]
    ts = {"database": "ODS", "container": "SALES", "tablespace": "USERS", "contents": "PERMANENT"}
    tests.append(scenario(pack, "OracleTablespaceFull: USERS 93% of its maximum size tickets", alert, 0,
                          tablespace(93 * gb), ts, 0.93, window=1))
    tests.append(scenario(pack, "OracleTablespaceFull: USERS 99% pages", alert, 1, tablespace(99 * gb), ts, 0.99, window=1))
    tests.append(quiet("OracleTablespaceFull: a full TEMP tablespace (sort space in use) is not this alert", alert,
                       tablespace(99 * gb, contents="TEMPORARY", name="TEMP"), n))
    tests.append(quiet("OracleTablespaceFull: USERS 85% does not fire", alert, tablespace(85 * gb), n))
    # issue 22: a READ ONLY tablespace (a closed year) is full by design and cannot grow: never judged
    ro = {**ORA, "database": "ODS", "container": "SALES", "tablespace": "SALES_2019", "contents": "PERMANENT"}
    tests.append(quiet("OracleTablespaceFull: a READ ONLY tablespace at 100% does not fire", alert,
                       [tl.gauge("oracle_tablespace_used_bytes", ro, [(0, 100 * gb)]),
                        tl.gauge("oracle_tablespace_max_bytes", ro, [(0, 100 * gb)]),
                        tl.gauge("oracle_tablespace_info", {**ro, "status": "READ ONLY"}, [(0, 1)])], n))
    off = {**ro, "tablespace": "OLD_DATA"}
    tests.append(quiet("OracleTablespaceFull: an OFFLINE tablespace at 99% does not fire", alert,
                       [tl.gauge("oracle_tablespace_used_bytes", off, [(0, 99 * gb)]),
                        tl.gauge("oracle_tablespace_max_bytes", off, [(0, 100 * gb)]),
                        tl.gauge("oracle_tablespace_info", {**off, "status": "OFFLINE"}, [(0, 1)])], n))
    # issue 22: percent alone never pages. 20 TB at 97.5% with 500 GB left, growing 1 GB a day (500 days)
    big = {**ORA, "database": "ODS", "container": "SALES", "tablespace": "DWH_FACTS", "contents": "PERMANENT"}
    tb = 1e12
    huge = [tl.gauge("oracle_tablespace_used_bytes", big, [(0, lambda t: 19.5 * tb + t * gb / 1440)]),
            tl.gauge("oracle_tablespace_max_bytes", big, [(0, 20 * tb)]),
            tl.gauge("oracle_tablespace_info", {**big, "status": "ONLINE"}, [(0, 1)])]
    big_ts = {"database": "ODS", "container": "SALES", "tablespace": "DWH_FACTS", "contents": "PERMANENT"}
    used_at = (19.5 * tb + (H + pack.for_min(alert, 0) + 2) * gb / 1440) / (20 * tb)
    tests.append({"name": "OracleTablespaceFull: 20 TB at 97.5% with 500 GB left and 500 days of growth tickets, never pages",
                  "interval": "1m", "input_series": huge, "alert_rule_test": [
                      {"eval_time": f"{H + pack.for_min(alert, 0) + 2}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, big_ts, used_at)]},
                      {"eval_time": f"{H + pack.for_min(alert, 0) + 2}m", "alertname": "OracleTablespaceFillingUp",
                       "exp_alerts": []}]})

    alert = "OracleTablespaceFillingUp"
    days = th["O4_tablespace_days"].value
    per_min = 20 * gb / 1440          # 20 GB a day into a 100 GB tablespace 60% full: full in 2 days
    tl2 = Timeline(75)
    lab = {**ORA, "database": "ODS", "container": "SALES", "tablespace": "USERS", "contents": "PERMANENT"}

    def growing(start, size=100 * gb, rate=per_min):
        return [tl2.gauge("oracle_tablespace_used_bytes", lab, [(0, lambda t: start + t * rate)]),
                tl2.gauge("oracle_tablespace_max_bytes", lab, [(0, size)])]
    at = 65
    left_days = (100 * gb - (60 * gb + at * per_min)) / (per_min / 60) / 86400
    tests.append({"name": f"OracleTablespaceFillingUp: 20 GB/day into 40 GB of room: full in 2 days (under {days:g}) fires",
                  "interval": "1m", "input_series": growing(60 * gb), "alert_rule_test": [
                      {"eval_time": "59m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{at}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, ts, left_days)]}]})
    tests.append(quiet("OracleTablespaceFillingUp: a 30% full tablespace loading fast does not fire (floor)", alert,
                       growing(30 * gb, rate=per_min * 2), at))
    tests.append(quiet("OracleTablespaceFillingUp: 95% full but not growing: OracleTablespaceFull's finding", alert,
                       growing(95 * gb, rate=0), at))
    # issue 22: the page: full within 4 hours at the growth of the last 6 hours (10 GB/hour, 25 GB left)
    hourly = 10 * gb / 60
    fast = growing(60 * gb, rate=hourly)
    left_s = (100 * gb - (60 * gb + at * hourly)) / (hourly / 60)
    tests.append({"name": "OracleTablespaceFillingUp: 10 GB an hour into the last 40 GB: full within 4 hours pages",
                  "interval": "1m", "input_series": fast, "alert_rule_test": [
                      {"eval_time": f"{at}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, ts, (100 * gb - (60 * gb + at * hourly)) / (hourly / 60) / 86400),
                                      pack.expect(alert, 1, ts, left_s)]}]})
    tests.append(quiet("OracleTablespaceFillingUp: a READ ONLY tablespace (its usage figure moving) does not fire", alert,
                       fast + [tl2.gauge("oracle_tablespace_info", {**lab, "status": "READ ONLY"}, [(0, 1)])], at))

    # fast recovery area
    alert = "OracleRecoveryAreaFull"

    def fra(used, reclaimable, limit=1000 * gb):
        lab = {**ORA, "database": "ODS"}
        return [tl.gauge("oracle_recovery_area_used_bytes", lab, [(0, 0.3 * limit), (H, used)]),
                tl.gauge("oracle_recovery_area_reclaimable_bytes", lab, [(0, 0), (H, reclaimable)]),
                tl.gauge("oracle_recovery_area_limit_bytes", lab, [(0, limit)])]
    tests.append(scenario(pack, "OracleRecoveryAreaFull: 90% full net of reclaimable tickets", alert, 0,
                          fra(950 * gb, 50 * gb), {"database": "ODS"}, 0.9, window=1))
    tests += recovery_area_page_tests(pack, fra, tl, gb)
    tests.append(quiet("OracleRecoveryAreaFull: 99% used but 30% reclaimable (Oracle deletes it itself) does not fire",
                       alert, fra(990 * gb, 300 * gb), n))

    # ASM
    alert = "OracleAsmDiskgroupSpaceLow"

    def asm(usable, offline=0, total=1000 * gb, type_="NORMAL", basis="usable_file", free=None, db="ODS",
            name="DATA", cluster="prodclu"):
        """What oracle-exporter exports for one disk group seen by one database (issue 22: file space
        by redundancy type, the info metric naming the cluster and the basis)."""
        lab = {**ORA, "database": db, "diskgroup": name}
        out = [tl.gauge("oracle_asm_diskgroup_file_space_bytes", lab, [(0, 0.4 * total), (H, usable)]),
               tl.gauge("oracle_asm_diskgroup_free_bytes", lab, [(0, free if free is not None else 0.8 * total)]),
               tl.gauge("oracle_asm_diskgroup_total_bytes", lab, [(0, total)]),
               # the size in the file space's basis (here the same: the scenarios give file space as a
               # share of it)
               tl.gauge("oracle_asm_diskgroup_file_capacity_bytes", lab, [(0, total)]),
               tl.gauge("oracle_asm_diskgroup_offline_disks", lab, [(0, 0), (H, offline)]),
               tl.gauge("oracle_asm_diskgroup_info", {**lab, "state": "CONNECTED", "type": type_, "asm_cluster": cluster,
                                                      "space_basis": basis}, [(0, 1)])]
        if basis == "usable_file":
            out.append(tl.gauge("oracle_asm_diskgroup_usable_file_bytes", lab, [(0, 0.4 * total), (H, usable)]))
        return out
    dg = {"asm_cluster": "prodclu", "diskgroup": "DATA", "type": "NORMAL", "space_basis": "usable_file"}
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: 5% usable file space tickets", alert, 0,
                          asm(50 * gb), dg, 0.05, window=0))
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: negative usable space (a failure group lost now could not be "
                          "re-mirrored) tickets, with that meaning", alert, 0, asm(-20 * gb), dg, -0.02, window=0))
    tests.append(quiet("OracleAsmDiskgroupSpaceLow: 30% usable does not fire", alert, asm(300 * gb), n))
    # issue 22: FLEX groups have no USABLE_FILE_MB (Oracle shows 0): the exporter judges raw free space
    flex = {"asm_cluster": "prodclu", "diskgroup": "DATA", "type": "FLEX", "space_basis": "raw_free"}
    tests.append(quiet("OracleAsmDiskgroupSpaceLow: a FLEX group (USABLE_FILE_MB 0) with 60% raw free stays quiet", alert,
                       asm(600 * gb, type_="FLEX", basis="raw_free"), n))
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: a FLEX group with 4% raw free tickets, judged on raw free",
                          alert, 0, asm(40 * gb, type_="FLEX", basis="raw_free"), flex, 0.04, window=0))
    # HIGH, 3 failure groups, 5% used: Oracle's USABLE_FILE_MB is 9.4% (a two-failure-group reserve); the exporter
    # judges free space per copy there: 95% / 3
    tests.append(quiet("OracleAsmDiskgroupSpaceLow: HIGH with 3 failure groups at 5% raw use stays quiet", alert,
                       asm(950 * gb / 3, total=1000 * gb, type_="HIGH", basis="free_per_copy", free=950 * gb), n))
    # one disk group seen by two databases: one alert, not one per database
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: a disk group shared by two databases gives one alert", alert, 0,
                          asm(50 * gb) + asm(50 * gb, db="DWH"), dg, 0.05, window=0))
    # issue 23 item 4: +RECO holds the fast recovery area, full of reclaimable files by design
    # (archived logs already backed up, obsolete backups: Oracle deletes them when the FRA needs
    # room). Its free space is 4%, its space net of the reclaimable files 74%: no ticket.
    def reco(dest, copies=1, reclaimable=700 * gb, type_="EXTERN"):
        lab = {**ORA, "database": "ODS"}
        return asm(40 * gb, type_=type_, name="RECO") + [
            tl.gauge("oracle_asm_diskgroup_mirror_copies", {**lab, "diskgroup": "RECO"}, [(0, copies)]),
            tl.gauge("oracle_recovery_area_reclaimable_bytes", lab, [(0, reclaimable)]),
            tl.gauge("oracle_recovery_area_info", {**lab, "destination": dest,
                                                   "diskgroup": dest[1:].split("/")[0].upper() if dest[:1] == "+" else ""},
                     [(0, 1)])]
    reco_dg = {"asm_cluster": "prodclu", "diskgroup": "RECO", "type": "EXTERN", "space_basis": "usable_file"}
    tests.append(quiet("OracleAsmDiskgroupSpaceLow: the FRA's disk group +RECO at 4% free, full of reclaimable files "
                       "(700 GB of 1000), stays quiet", alert, reco("+RECO"), n))
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: the same disk group at 4% free with the FRA on a file "
                          "system (its reclaimable files are not in +RECO) tickets", alert, 0,
                          reco("/u03/fra"), reco_dg, 0.04, window=0))
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: +RECO at 4% free with only 30 GB reclaimable in its FRA "
                          "tickets (7% net)", alert, 0, reco("+RECO", reclaimable=30 * gb), reco_dg, 0.07, window=0))
    # NORMAL redundancy: usable file space is per copy; the reclaimable bytes count per copy too
    tests.append(scenario(pack, "OracleAsmDiskgroupSpaceLow: a NORMAL +RECO at 4% usable with 100 GB reclaimable "
                          "credits 50 GB per copy and tickets (9%)", alert, 0,
                          reco("+RECO", copies=2, reclaimable=100 * gb, type_="NORMAL"),
                          {**reco_dg, "type": "NORMAL"}, 0.09, window=0))
    tests += asm_full_tests(pack, asm, tl, gb)
    # issue 23 item 3: a disk group that vanished from the database's view stays alerted for hours
    # (until mounted again); a failing asm collector or a database that is down are not a vanishing
    alert = "OracleAsmDiskgroupVanished"
    long = 150
    tl4 = Timeline(long)
    lab4 = {**ORA, "database": "ODS"}

    def group(name, phases):
        return tl4.gauge("oracle_asm_diskgroup_info", {**lab4, "diskgroup": name, "state": "CONNECTED", "type": "EXTERN",
                                                       "asm_cluster": "prodclu", "space_basis": "usable_file"}, phases)

    def values(series, upto):
        """the series' values up to minute `upto`, then stale (the row is gone)"""
        return {**series, "values": " ".join(series["values"].split()[:upto + 1]) + " stale"}
    up4 = tl4.gauge("oracle_up", lab4, [(0, 1)])
    ok4 = tl4.gauge("oracle_collector_success", {**lab4, "collector": "asm"}, [(0, 1)])
    back = long - 10
    reco4 = group("RECO", [(0, 1)])
    returning = {**reco4, "values": " ".join(reco4["values"].split()[:H + 1] + ["stale"] + ["_"] * (back - H - 2)
                                             + reco4["values"].split()[back:])}
    fired = [pack.expect(alert, 0, {"asm_cluster": "prodclu", "diskgroup": "RECO"}, 1)]
    tests.append({"name": "OracleAsmDiskgroupVanished: +RECO dismounted under a running database stays alerted for "
                          "2 hours, until it is mounted again",
                  "interval": "1m", "input_series": [up4, ok4, group("DATA", [(0, 1)]), returning], "alert_rule_test": [
                      {"eval_time": f"{H + 5}m", "alertname": alert, "exp_alerts": []},
                      *[{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": fired} for t in (H + 10, H + 70, back - 1)],
                      {"eval_time": f"{long}m", "alertname": alert, "exp_alerts": []}]})
    tests.append(quiet("OracleAsmDiskgroupVanished: the asm collector failing (no rows read) is not a vanishing",
                       alert, [up4, tl4.gauge("oracle_collector_success", {**lab4, "collector": "asm"}, [(0, 1), (H, 0)]),
                               values(group("RECO", [(0, 1)]), H)], H + 30))
    tests.append(quiet("OracleAsmDiskgroupVanished: the database down (OracleDown's finding) is not a vanishing",
                       alert, [tl4.gauge("oracle_up", lab4, [(0, 1), (H, 0)]), ok4, values(group("RECO", [(0, 1)]), H)],
                       H + 30))
    alert = "OracleAsmDiskgroupSpaceLow"
    # the page: free space running out within 4 hours at the rate of the last 6 hours
    tl3 = Timeline(75)
    lab3 = {**ORA, "database": "ODS", "diskgroup": "DATA"}
    per_min = 1 * gb                                     # 60 GB an hour, 250 GB free at minute 0
    filling = [tl3.gauge("oracle_asm_diskgroup_free_bytes", lab3, [(0, lambda t: 250 * gb - t * per_min)]),
               tl3.gauge("oracle_asm_diskgroup_file_space_bytes", lab3, [(0, lambda t: 250 * gb - t * per_min)]),
               tl3.gauge("oracle_asm_diskgroup_total_bytes", lab3, [(0, 1000 * gb)]),
               tl3.gauge("oracle_asm_diskgroup_file_capacity_bytes", lab3, [(0, 1000 * gb)]),
               tl3.gauge("oracle_asm_diskgroup_info", {**lab3, "state": "CONNECTED", "type": "EXTERN",
                                                       "asm_cluster": "prodclu", "space_basis": "usable_file"}, [(0, 1)])]
    at = 65
    left = (250 * gb - at * per_min) / per_min * 60
    tests.append({"name": "OracleAsmDiskgroupSpaceLow: free space running out within 4 hours pages (a 25% free group)",
                  "interval": "1m", "input_series": filling, "alert_rule_test": [
                      {"eval_time": f"{at}m", "alertname": alert, "exp_alerts": [
                          pack.expect(alert, 1, {"asm_cluster": "prodclu", "diskgroup": "DATA", "type": "EXTERN"},
                                      left)]}]})
    alert = "OracleAsmDiskOffline"
    tests.append(scenario(pack, "OracleAsmDiskOffline: one disk offline fires", alert, 0, asm(300 * gb, offline=1),
                          {"database": "ODS", "diskgroup": "DATA"}, 1,
                          window=0))
    tests.append(quiet("OracleAsmDiskOffline: all disks online does not fire", alert, asm(300 * gb), n))

    # Data Guard. Failure first: a primary (or any database without Data Guard) has no
    # V$DATAGUARD_STATS rows, so no lag series: neither alert may read that as "not computed".
    primary = [tl.gauge("oracle_database_info", {**ORA, "database": "ODS", "database_role": "PRIMARY",
                                                 "log_mode": "ARCHIVELOG"}, [(0, 1)]),
               tl.gauge("oracle_up", {**ORA, "database": "ODS"}, [(0, 1)])]
    for name in ("OracleDataGuardLag", "OracleDataGuardLagNotComputed"):
        tests.append(quiet(f"{name}: a primary without Data Guard (no V$DATAGUARD_STATS rows) does not fire",
                           name, primary, n))
    alert = "OracleDataGuardLag"

    def dataguard(lag, computed=1, age=5, kind="transport"):
        lab = {**ORA, "database": "ODSSTBY", "kind": kind}
        return [tl.gauge("oracle_dataguard_lag_seconds", lab, [(0, 2), (H, lag)]),
                tl.gauge("oracle_dataguard_lag_computed", lab, [(0, 1), (H, computed)]),
                tl.gauge("oracle_dataguard_lag_datum_age_seconds", lab, [(0, 3), (H, age)])]
    sb = {"database": "ODSSTBY", "kind": "transport"}
    tests.append(scenario(pack, "OracleDataGuardLag: standby 40 minutes behind in transport fires", alert, 0,
                          dataguard(2400), sb, 2400, window=0))
    tests.append(quiet("OracleDataGuardLag: 2 minutes behind does not fire", alert, dataguard(120), n))
    alert = "OracleDataGuardLagNotComputed"
    tests.append(scenario(pack, "OracleDataGuardLagNotComputed: the lag is NULL (standby lost the primary) fires", alert, 0,
                          dataguard(0, computed=0), sb, 0, window=0))
    tests.append(scenario(pack, "OracleDataGuardLagNotComputed: a lag of 0 s computed from 15-minute-old data fires", alert, 1,
                          dataguard(0, age=900), sb, 900, window=0))
    tests.append(quiet("OracleDataGuardLagNotComputed: lag computed from fresh data does not fire", alert, dataguard(3), n))
    tests += apply_tests(pack, tl, n)

    # archive destinations
    alert = "OracleArchiveDestinationError"
    lab = {**ORA, **DB, "dest_name": "LOG_ARCHIVE_DEST_2"}
    tests.append(scenario(pack, "OracleArchiveDestinationError: LOG_ARCHIVE_DEST_2 in ERROR fires", alert, 0,
                          [tl.gauge("oracle_archive_dest_error", lab, [(0, 0), (H, 1)])],
                          {**DB, "dest_name": "LOG_ARCHIVE_DEST_2"}, 1, window=0))
    tests.append(quiet("OracleArchiveDestinationError: a deferred destination (error 0) does not fire", alert,
                       [tl.gauge("oracle_archive_dest_error", lab, [(0, 0)])], n))

    def info(log_mode):
        return tl.gauge("oracle_database_info", {**ORA, "database": "ODS", "database_role": "PRIMARY",
                                                 "log_mode": log_mode}, [(0, 1)])
    tests.append(quiet("OracleArchiveDestinationError: a NOARCHIVELOG database with a destination in ERROR "
                       "does not fire (it archives nowhere)", alert,
                       [tl.gauge("oracle_archive_dest_error", lab, [(0, 0), (H, 1)]), info("NOARCHIVELOG")], n))
    tests.append(scenario(pack, "OracleArchiveDestinationError: the same destination in ERROR on an ARCHIVELOG "
                          "database fires", alert, 0,
                          [tl.gauge("oracle_archive_dest_error", lab, [(0, 0), (H, 1)]), info("ARCHIVELOG")],
                          {**DB, "dest_name": "LOG_ARCHIVE_DEST_2"}, 1, window=0))
    return tests


# ---------------------------------------------------------------- Data Guard apply (issue 22, O5)
def apply_tests(pack, tl, n) -> list:
    """A delayed standby lags by its delay on purpose; a stopped apply is its own alert; a snapshot
    standby applies nothing by design."""
    tests = []
    sb = {"database": "ODSSTBY"}
    lab = {**ORA, **sb}

    def standby(apply_lag, delay=600, running=1, snapshot=0, computed=1, with_delay=True):
        before = delay + 2 if with_delay else 2
        out = [tl.gauge("oracle_dataguard_lag_seconds", {**lab, "kind": "apply"}, [(0, before), (H, apply_lag)]),
               tl.gauge("oracle_dataguard_lag_seconds", {**lab, "kind": "transport"}, [(0, 1)]),
               tl.gauge("oracle_dataguard_lag_computed", {**lab, "kind": "apply"}, [(0, 1), (H, computed)]),
               tl.gauge("oracle_dataguard_lag_computed", {**lab, "kind": "transport"}, [(0, 1)]),
               tl.gauge("oracle_dataguard_snapshot_standby", lab, [(0, 0), (H, snapshot)])]
        if with_delay:
            out.append(tl.gauge("oracle_dataguard_apply_delay_seconds", lab, [(0, delay)]))
        if running is not None:
            out.append(tl.gauge("oracle_dataguard_apply_running", {**lab, "inst_id": "1"}, [(0, 1), (H, running)]))
        return out

    alert = "OracleDataGuardLag"
    tests.append(quiet("OracleDataGuardLag: a standby 10 minutes behind in apply with a 10-minute apply delay "
                       "(DELAY_MINS) does not fire", alert, standby(603), n))
    tests.append(scenario(pack, "OracleDataGuardLag: apply 10 minutes beyond a 10-minute apply delay fires", alert, 0,
                          standby(1200), {**sb, "kind": "apply"}, 600, window=0))
    tests.append(scenario(pack, "OracleDataGuardLag: apply 20 minutes behind, no delay exported, fires", alert, 0,
                          standby(1200, with_delay=False), {**sb, "kind": "apply"}, 1200, window=0))
    tests.append(quiet("OracleDataGuardLag: apply stopped (its own alert) does not fire on the apply lag", alert,
                       standby(5000, running=0), n))
    tests.append(quiet("OracleDataGuardLag: a snapshot standby (no apply during its test) does not fire", alert,
                       standby(5000, running=None, snapshot=1), n))
    alert = "OracleDataGuardLagNotComputed"
    tests.append(quiet("OracleDataGuardLagNotComputed: apply lag not computed while apply is stopped does not fire",
                       alert, standby(600, running=0, computed=0), n))
    tests.append(quiet("OracleDataGuardLagNotComputed: apply lag not computed on a snapshot standby does not fire",
                       alert, standby(600, running=None, snapshot=1, computed=0), n))

    alert = "OracleDataGuardApplyStopped"
    tests.append(scenario(pack, "OracleDataGuardApplyStopped: no MRP0 on any instance of a physical standby fires",
                          alert, 0, standby(603, running=0), sb, 0, window=0))
    two = standby(603, running=None) + [
        tl.gauge("oracle_dataguard_apply_running", {**lab, "inst_id": "1"}, [(0, 1), (H, 0)]),
        tl.gauge("oracle_dataguard_apply_running", {**lab, "inst_id": "2"}, [(0, 0), (H, 1)])]
    tests.append(quiet("OracleDataGuardApplyStopped: apply moved to the other RAC instance does not fire", alert, two, n))
    restart = standby(603, running=None) + [
        tl.gauge("oracle_dataguard_apply_running", {**lab, "inst_id": "1"},
                 [(0, 1), (H, 0), (H + pack.for_min(alert) - 3, 1)])]
    tests.append(quiet("OracleDataGuardApplyStopped: apply stopped for a switchover or restart and started again "
                       "within the `for` does not fire", alert, restart, n))
    tests.append(quiet("OracleDataGuardApplyStopped: a snapshot standby (apply off by design) does not fire", alert,
                       standby(5000, running=0, snapshot=1), n))
    primary = [tl.gauge("oracle_database_info", {**ORA, "database": "ODS", "database_role": "PRIMARY",
                                                 "log_mode": "ARCHIVELOG"}, [(0, 1)]),
               tl.gauge("oracle_up", {**ORA, "database": "ODS"}, [(0, 1)])]
    tests.append(quiet("OracleDataGuardApplyStopped: a primary (no apply series) does not fire", alert, primary, n))
    return tests


def recovery_area_page_tests(pack, fra, tl, gb) -> list:
    """rev23 #14e, failure first: the percent tickets, the page is absolute. 98% of a
    1000 GB area with 20 GB free and 1 GB online logs (room for 20 more archived logs) is the 85%
    ticket, not a page (it paged at 95%); 99.8% with 2 GB free (fewer than 3 logs) pages."""
    alert = "OracleRecoveryAreaFull"
    lab = {**ORA, "database": "ODS"}
    logs = [tl.gauge("oracle_redo_log_group_size_bytes", {**lab, "thread": "1", "group": str(g)}, [(0, 1 * gb)])
            for g in (1, 2, 3)]
    ticket, page = ({"database": "ODS"}, 0), ({"database": "ODS"}, 1)
    n = tl.minutes
    tests = [{"name": "OracleRecoveryAreaFull: 98% full with room for 20 archived logs of 1 GB tickets and does not "
                      "page (rev23 #14e)",
              "interval": "1m", "input_series": fra(990 * gb, 10 * gb) + logs,
              "alert_rule_test": [{"eval_time": f"{n}m", "alertname": alert,
                                   "exp_alerts": [pack.expect(alert, ticket[1], ticket[0], 0.98)]}]},
             scenario(pack, "OracleRecoveryAreaFull: 99.8% full with room for 2 archived logs of 1 GB pages", alert,
                      page[1], fra(998 * gb, 0) + logs, page[0], 0.998, window=1),
             # fix2 #5, failure first: without the redo collector (no online log size) it never paged
             scenario(pack, "OracleRecoveryAreaFull: 99.5% full, nothing reclaimable, no online log size collected "
                      "pages (fallback)", alert, page[1], fra(995 * gb, 0), page[0], 0.995, window=1),
             {"name": "OracleRecoveryAreaFull: 98% full, no online log size collected: the ticket, no page (fallback "
                      "at 99%)",
              "interval": "1m", "input_series": fra(980 * gb, 0),
              "alert_rule_test": [{"eval_time": f"{n}m", "alertname": alert,
                                   "exp_alerts": [pack.expect(alert, ticket[1], ticket[0], 0.98)]}]}]
    return tests


def asm_full_tests(pack, asm, tl, gb) -> list:
    """rev23 #3, failure first: DATA full (FREE_MB 0) and flat: the time-to-full page (predict_linear)
    sees no change and is silent or ends, the absolute page holds while it is full. Quiet
    counterpart: +RECO with 0.5 GB raw free but 700 GB of reclaimable FRA files in it."""
    alert = "OracleAsmDiskgroupSpaceLow"
    index = next(i for i, r in enumerate(pack.rules[alert]) if r["labels"].get("cause") == "no_space")
    dg = {"asm_cluster": "prodclu", "diskgroup": "DATA", "type": "NORMAL"}
    lab = {**ORA, "database": "ODS"}
    reco = asm(40 * gb, type_="EXTERN", name="RECO", free=gb / 2) + [
        tl.gauge("oracle_asm_diskgroup_mirror_copies", {**lab, "diskgroup": "RECO"}, [(0, 1)]),
        tl.gauge("oracle_recovery_area_reclaimable_bytes", lab, [(0, 700 * gb)]),
        tl.gauge("oracle_recovery_area_info", {**lab, "destination": "+RECO", "diskgroup": "RECO"}, [(0, 1)])]
    only = [r for r in reco if "oracle_asm_diskgroup" in r["series"] or "oracle_recovery_area" in r["series"]]
    return [{"name": "OracleAsmDiskgroupSpaceLow: DATA full (FREE_MB 0, flat) pages within minutes and keeps "
                     "paging; the time-to-full page sees no change (rev23 #3)",
             "interval": "1m", "input_series": asm(0, free=0),
             "alert_rule_test": [
                 {"eval_time": "1m", "alertname": alert, "exp_alerts": []},
                 {"eval_time": "4m", "alertname": alert, "exp_alerts": [pack.expect(alert, index, dg, 0)]}]},
            quiet("OracleAsmDiskgroupSpaceLow: +RECO with 0.5 GB free but 700 GB of reclaimable recovery-area files "
                  "in it does not page", alert, only, 4),
            # fix2 #4: a 2 GiB OCR/voting group (MOUNTED, seen by the instance) with 0.8 GiB free is 60% used
            quiet("OracleAsmDiskgroupSpaceLow: a 2 GiB OCR/voting disk group with 0.8 GiB free (60% used) does not "
                  "page", alert, [r for r in asm(0.8 * 2**30, total=2 * 2**30, type_="EXTERN", name="OCR",
                                                 free=0.8 * 2**30)], 30)]
