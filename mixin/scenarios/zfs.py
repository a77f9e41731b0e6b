"""zfs.test.yml: ZFS ARC and L2ARC."""
from mixin.scenarios.common import H, HOST, length, quiet, scenario, Timeline


def zfs_tests(pack) -> list:
    tests = []
    db = {"job": "dbhost", "instance": HOST}
    alert = "ZfsL2arcErrors"
    n = length(pack, alert, window=15)
    tl = Timeline(n)

    def errs(step):
        return [tl.counter("dbhost_zfs_l2arc_errors_total", {**db, "kind": "checksum"},
                           [(0, 0), (H, lambda t: step if t == H + 1 else 0)], start=0),
                tl.counter("dbhost_zfs_l2arc_errors_total", {**db, "kind": "io"}, [(0, 0)], start=0)]
    tests.append(scenario(pack, "ZfsL2arcErrors: 3 checksum errors fire at once", alert, 0, errs(3),
                          {"instance": HOST, "kind": "checksum"}, 3, window=0))
    tests.append(quiet("ZfsL2arcErrors: no new errors does not fire", alert, errs(0), n))

    alert = "ZfsL2arcNotWarming"
    n = length(pack, alert)
    tl = Timeline(n)

    def l2(hits, misses, size=200 * 1024 ** 3):
        return [tl.counter("dbhost_zfs_l2arc_hits_total", db, [(0, hits * 60)]),
                tl.counter("dbhost_zfs_l2arc_misses_total", db, [(0, misses * 60)]),
                tl.gauge("dbhost_zfs_l2arc_size_bytes", db, [(0, size)])]
    f = pack.for_min(alert)
    tests.append({"name": "ZfsL2arcNotWarming: 5% hit ratio for 6h fires", "interval": "1m",
                  "input_series": l2(50, 950),
                  "alert_rule_test": [
                      {"eval_time": f"{f}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{f + 10}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"instance": HOST}, 0.05)]}]})
    tests.append(quiet("ZfsL2arcNotWarming: 30% hit ratio does not fire", alert, l2(300, 700), n))
    tests.append(quiet("ZfsL2arcNotWarming: 5% of 50 lookups/s does not fire", alert, l2(2.5, 47.5), n))
    tests.append(quiet("ZfsL2arcNotWarming: no L2ARC device (size 0) does not fire", alert, l2(50, 950, size=0), n))
    return tests
