"""recording.test.yml: recording rules on host data."""
from mixin import records as R
from mixin.scenarios.common import HOST, sel, Timeline


# ---------------------------------------------------------------- recording rules on host data
def recording_tests(pack) -> list:
    tests = []
    db = {"job": "dbhost", "instance": HOST}
    node = {"job": "node", "instance": HOST}
    tl = Timeline(20)
    kinds = {"demand_data": (900, 50, 50), "demand_metadata": (990, 5, 5),
             "prefetch_data": (100, 0, 900), "prefetch_metadata": (10, 0, 0)}
    series = []
    for k, (hits, iohits, misses) in kinds.items():
        series.append(tl.counter("dbhost_zfs_arc_hits_total", {**db, "kind": k}, [(0, hits * 60)]))
        series.append(tl.counter("dbhost_zfs_arc_iohits_total", {**db, "kind": k}, [(0, iohits * 60)]))
        series.append(tl.counter("dbhost_zfs_arc_misses_total", {**db, "kind": k}, [(0, misses * 60)]))
    series += [tl.counter("dbhost_zfs_l2arc_hits_total", db, [(0, 600 * 60)]),
               tl.counter("dbhost_zfs_l2arc_misses_total", db, [(0, 350 * 60)])]
    total_hits = sum(v[0] for v in kinds.values())
    total = sum(sum(v) for v in kinds.values())
    tests.append({"name": "ARC and L2ARC hit ratios (OpenZFS arc_summary formulas, iohits counted as accesses)",
                  "interval": "1m", "input_series": series, "promql_expr_test": [
                      {"expr": R.ARC_HIT_RATIO, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.ARC_HIT_RATIO, pack.target("dbhost", {"instance": HOST})),
                                        "value": total_hits / total}]},
                      {"expr": R.ARC_HIT_RATIO_BY_KIND + '{kind="demand_data"}', "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.ARC_HIT_RATIO_BY_KIND,
                                                      pack.target("dbhost", {"instance": HOST, "kind": "demand_data"})), "value": 0.9}]},
                      {"expr": R.L2ARC_HIT_RATIO, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.L2ARC_HIT_RATIO, pack.target("dbhost", {"instance": HOST})),
                                        "value": 600 / 950}]}]})
    # without iohits (OpenZFS < 2.2, illumos): hits / (hits + misses)
    series = [tl.counter("dbhost_zfs_arc_hits_total", {**db, "kind": "demand_data"}, [(0, 900 * 60)]),
              tl.counter("dbhost_zfs_arc_misses_total", {**db, "kind": "demand_data"}, [(0, 100 * 60)])]
    tests.append({"name": "ARC hit ratio without iohits (older OpenZFS, illumos kstat)", "interval": "1m",
                  "input_series": series, "promql_expr_test": [
                      {"expr": R.ARC_HIT_RATIO, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.ARC_HIT_RATIO, pack.target("dbhost", {"instance": HOST})),
                                        "value": 0.9}]}]})
    # LUN latency joined with role, queue size, LUN queue averages
    series = [tl.gauge("dbhost_lun_info", {**db, "device": "sdc", "hctl": "2:0:0:1", "vendor": "HITACHI", "model": "OPEN-V",
                                           "wwid": "naa.60060e80sdc", "multipath": "mpatha", "role": "redo"}, [(0, 1)]),
              tl.counter("node_disk_writes_completed_total", {**node, "device": "sdc"}, [(0, 845 * 60)]),
              tl.counter("node_disk_write_time_seconds_total", {**node, "device": "sdc"}, [(0, 845 * 60 * 0.0008)]),
              tl.counter("node_disk_io_time_weighted_seconds_total", {**node, "device": "sdc"}, [(0, 0.7 * 60)]),
              tl.gauge("dbhost_lun_inflight_requests", {**db, "device": "sdc", "queue": "lun"},
                       [(0, lambda t: 4 if t % 2 else 6)]),
              tl.gauge("dbhost_lun_inflight_requests", {**db, "device": "sdc", "queue": "host"}, [(0, 0)])]
    dup = [tl.gauge("dbhost_lun_info", {**db, "device": "sdc", "hctl": "2:0:0:1", "vendor": "HITACHI", "model": "OPEN-V",
                                        "wwid": "naa.60060e80sdc", "multipath": "mpatha", "role": role}, [(0, 1)])
           for role in ("redo", "data")]
    tests.append({"name": "LUN latency by role: two dbhost_lun_info series for one device still give one result",
                  "interval": "1m", "input_series": dup + series[1:3], "promql_expr_test": [
                      {"expr": f"count({R.DISK_WRITE_LATENCY})", "eval_time": "15m",
                       "exp_samples": [{"labels": "{}", "value": 1}]},
                      {"expr": f"sum({R.DISK_WRITE_LATENCY})", "eval_time": "15m",
                       "exp_samples": [{"labels": "{}", "value": 0.0008}]}]})
    tests.append({"name": "LUN latency by role, queue size, LUN queue average", "interval": "1m", "input_series": series,
                  "promql_expr_test": [
                      {"expr": R.DISK_WRITE_LATENCY, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.DISK_WRITE_LATENCY,
                                                      pack.target("node", {"device": "sdc", "instance": HOST, "role": "redo"})), "value": 0.0008}]},
                      {"expr": R.DISK_QUEUE_SIZE, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.DISK_QUEUE_SIZE,
                                                      pack.target("node", {"device": "sdc", "instance": HOST})), "value": 0.7}]},
                      # samples at 10..15m alternate 6,4,6,4,6,4 -> average 5
                      {"expr": R.LUN_LUN_QUEUE, "eval_time": "15m",
                       "exp_samples": [{"labels": sel(R.LUN_LUN_QUEUE,
                                                      pack.target("dbhost", {"device": "sdc", "instance": HOST})), "value": 5}]}]})
    return tests + sid_join_tests(pack)


def sid_join_tests(pack) -> list:
    """rev23 #8, failure first: the primary ORCL on dbprim is monitored; its physical standby (also SID
    ORCL) runs on dbstby, which has a dbhost-exporter but no oracle-exporter target, so the SID is
    unique among the monitored databases. dbstby's LGWR waits 2 ms per dispatch, dbprim's 0.01 ms.
    The host measure joins on host AND SID: ORCL's LGWR run delay is dbprim's, and ORCL's SGA counts
    on dbprim only (the SID-only join gave 2 ms and put the primary's SGA on the standby host too)."""
    tl = Timeline(20)
    ora = {"job": "oracle", "instance": "oracle-exporter:19161", "database": "ORCL", "inst_id": "1"}
    series = [tl.gauge("oracle_instance_info", {**ora, "instance_name": "ORCL", "host_name": "dbprim.example.com",
                                                "version": "19.0.0.0.0"}, [(0, 1)]),
              tl.gauge("oracle_sga_target_bytes", ora, [(0, 8e9)])]
    for host, delay in (("dbprim", 0.00001), ("dbstby", 0.002)):
        lab = {"job": "dbhost", "instance": host, "sid": "ORCL", "role": "lgwr"}
        series += [tl.counter("dbhost_process_timeslices_total", lab, [(0, 60000)]),
                   tl.counter("dbhost_process_run_delay_seconds_total", lab, [(0, 60000 * delay)], start=10.0),
                   tl.counter("dbhost_process_context_switches_total", {**lab, "kind": "voluntary"}, [(0, 6000)])]
    return [{"name": "host measures join an Oracle instance on host and SID: an unmonitored standby with the same "
                     "SID on another host lends it nothing (rev23 #8)", "interval": "1m", "input_series": series,
             "promql_expr_test": [
                 {"expr": R.LGWR_RUN_DELAY, "eval_time": "15m",
                  "exp_samples": [{"labels": sel(R.LGWR_RUN_DELAY, pack.target("oracle", {"database": "ORCL", "inst_id": "1"})),
                                   "value": 0.00001}]},
                 {"expr": R.SGA_ON_HOST, "eval_time": "15m",
                  "exp_samples": [{"labels": sel(R.SGA_ON_HOST, pack.target("dbhost", {"instance": "dbprim"})),
                                   "value": 8e9}]}]}]
