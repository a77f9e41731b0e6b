"""host.test.yml: host CPU, memory, and the SGAs against the kernel's shared memory and huge pages."""
from mixin.scenarios.common import H, HOST, length, ORA, quiet, scenario, sel, Timeline


# ---------------------------------------------------------------- host
def cpu_series(tl, cpus, before: dict, after: dict):
    out = []
    for c in range(cpus):
        for mode in ("user", "nice", "system", "irq", "softirq", "iowait", "idle", "steal"):
            out.append(tl.counter("node_cpu_seconds_total", {"job": "node", "instance": HOST, "cpu": str(c), "mode": mode},
                                  [(0, before.get(mode, 0) * 60), (H, after.get(mode, 0) * 60)], start=100000))
    return out


def host_tests(pack) -> list:
    tests = []
    node = {"job": "node", "instance": HOST}
    hl = {"instance": HOST}
    # C1
    alert = "HostRunQueueSaturated"
    n = length(pack, alert)
    tl = Timeline(n)
    idle = {"user": 0.5, "system": 0.03, "idle": 0.47}

    def rq(running, vol, invol):
        base = {"job": "dbhost", "instance": HOST, "sid": "ODS1", "role": "foreground"}
        return (cpu_series(tl, 12, idle, {"user": 0.9, "system": 0.08, "idle": 0.02})
                + [tl.gauge("node_procs_running", node, [(0, 6), (H, running)]),
                   tl.counter("dbhost_process_context_switches_total", {**base, "kind": "voluntary"}, [(0, 6000), (H, vol)]),
                   tl.counter("dbhost_process_context_switches_total", {**base, "kind": "involuntary"}, [(0, 60), (H, invol)])])
    tests.append(scenario(pack, "HostRunQueueSaturated: 30 runnable on 12 CPUs with 10% involuntary switches fires", alert, 0,
                          rq(30, 54000, 6000), hl, 2.5))
    tests.append(quiet("HostRunQueueSaturated: 23 runnable on 12 CPUs (1.92/CPU) does not fire", alert, rq(23, 54000, 6000), n))
    tests.append(quiet("HostRunQueueSaturated: 30 runnable but 1% involuntary switches does not fire", alert, rq(30, 59400, 600), n))
    invol_floor = pack.th["C1"].floor("involuntary_rate").value
    tests.append(quiet(f"HostRunQueueSaturated: 30 runnable, 10% involuntary but only {invol_floor * 0.5:g} involuntary "
                       f"switches/s (floor {invol_floor:g}/s) does not fire", alert,
                       rq(30, round(invol_floor * 0.5 * 60 * 9), round(invol_floor * 0.5 * 60)), n))
    tests.append(scenario(pack, f"HostRunQueueSaturated: 10% involuntary at {invol_floor * 1.1:g} involuntary switches/s fires",
                          alert, 0, rq(30, round(invol_floor * 1.1 * 60 * 9), round(invol_floor * 1.1 * 60)), hl, 2.5))
    # C4 / C2
    alert = "HostSystemCpuDominant"
    n = length(pack, alert)
    tl = Timeline(n)
    base = {"user": 0.3, "system": 0.03, "iowait": 0.02, "idle": 0.65}
    tests.append(scenario(pack, "HostSystemCpuDominant: 80% system of 90% busy (C4) fires", alert, 0,
                          cpu_series(tl, 2, base, {"user": 0.1, "system": 0.8, "iowait": 0.02, "idle": 0.08}), hl, 0.8 / 0.9))
    tests.append(scenario(pack, "HostSystemCpuDominant: irq+softirq count as kernel time", alert, 0,
                          cpu_series(tl, 2, base, {"user": 0.3, "system": 0.2, "irq": 0.05, "softirq": 0.1, "idle": 0.35}),
                          hl, 0.35 / 0.65))
    tests.append(quiet("HostSystemCpuDominant: 40% system of 90% busy does not fire", alert,
                       cpu_series(tl, 2, base, {"user": 0.5, "system": 0.4, "idle": 0.1}), n))
    tests.append(quiet("HostSystemCpuDominant: idle host, 3% system of 4% busy (under the C2 5% floor) does not fire", alert,
                       cpu_series(tl, 2, base, {"user": 0.01, "system": 0.03, "idle": 0.96}), n))
    # M2
    alert = "HostMajorPageFaultRatioHigh"
    n = length(pack, alert)
    tl = Timeline(n)

    def faults(total, major):
        return [tl.counter("node_vmstat_pgfault", node, [(0, 600000), (H, total * 60)]),
                tl.counter("node_vmstat_pgmajfault", node, [(0, 60), (H, major * 60)])]
    tests.append(scenario(pack, "HostMajorPageFaultRatioHigh: 1% major faults fires", alert, 0, faults(10000, 100), hl, 0.01))
    tests.append(quiet("HostMajorPageFaultRatioHigh: 0.4% does not fire", alert, faults(10000, 40), n))
    tests.append(quiet("HostMajorPageFaultRatioHigh: 1% of 50 faults/s (0.5 major/s) does not fire", alert, faults(50, 0.5), n))
    # M3
    alert = "HostSwapping"
    n = length(pack, alert)
    tl = Timeline(n)

    def swap(pin, pout):
        return [tl.counter("node_vmstat_pswpin", node, [(0, 0), (H, pin * 60)]),
                tl.counter("node_vmstat_pswpout", node, [(0, 0), (H, pout * 60)])]
    tests.append(scenario(pack, "HostSwapping: 50 pages/s fires", alert, 0, swap(30, 20), hl, 50))
    tests.append(quiet("HostSwapping: 8 pages/s does not fire", alert, swap(5, 3), n))
    return tests + shm_tests(pack) + filesystem_tests(pack)


def shm_tests(pack) -> list:
    """M5: the SGAs of the instances on a host against kernel.shmall and the huge pages. Failure
    first: a Data Guard pair sharing the SID ODS1 on two hosts must not add the other host's
    SGA here; shmmax below the SGA is not a finding; no huge pages at all is a choice."""
    tests = []
    gib = float(1 << 30)
    alert = "HostShmallBelowSga"
    n = length(pack, alert)
    tl = Timeline(n)
    hl = {"instance": HOST}

    def instance(database, sid, host, sga):
        lab = {**ORA, "database": database, "inst_id": "1"}
        return [tl.gauge("oracle_instance_info", {**lab, "instance_name": sid, "host_name": f"{host}.example.com",
                                                  "version": "19.0.0.0.0"}, [(0, 1)]),
                tl.gauge("oracle_sga_target_bytes", lab, [(0, sga)])]

    def procs(sid, host=HOST):
        return [tl.counter("dbhost_process_context_switches_total",
                           {"job": "dbhost", "instance": host, "sid": sid, "role": "pmon", "kind": "voluntary"},
                           [(0, 60)])]

    def kernel(shmall, host=HOST, huge_total=0, huge_size=2 << 20):
        lab = {"job": "dbhost", "instance": host}
        # the settings a change at minute H (sysctl -p) left behind; ample before
        return [tl.gauge("dbhost_kernel_shmall_bytes", lab, [(0, 256 * gib), (H, shmall)]),
                tl.gauge("dbhost_kernel_shmmax_bytes", lab, [(0, 4 * gib)]),
                tl.gauge("dbhost_memory_hugepages", {**lab, "state": "total"},
                         [(0, 65536 if huge_total else 0), (H, huge_total)]),
                tl.gauge("dbhost_memory_hugepage_size_bytes", lab, [(0, huge_size)])]
    pair = (instance("ODS", "ODS1", HOST, 10 * gib) + instance("ODSSB", "ODS1", "dbhost2", 20 * gib)
            + procs("ODS1") + procs("ODS1", host="dbhost2"))
    tests.append(quiet("HostShmallBelowSga: a Data Guard pair sharing SID ODS1: the standby host's 20 GiB SGA "
                       "does not count on the primary's host (10 GiB SGA, 16 GiB shmall)", alert,
                       pair + kernel(16 * gib) + kernel(32 * gib, host="dbhost2"), n))
    tests.append(quiet("HostShmallBelowSga: a 10 GiB SGA with shmmax 4 GiB (split into segments) and shmall "
                       "16 GiB does not fire", alert,
                       instance("ODS", "ODS1", HOST, 10 * gib) + procs("ODS1") + kernel(16 * gib), n))
    tests.append(quiet("HostShmallBelowSga: an instance whose SID runs on no monitored host is nobody's", alert,
                       instance("ODS", "ODS1", HOST, 10 * gib) + kernel(8 * gib), n))
    tests.append(scenario(pack, "HostShmallBelowSga: a 10 GiB SGA, shmall 8 GiB: the next start fails (ORA-27102)",
                          alert, 0, instance("ODS", "ODS1", HOST, 10 * gib) + procs("ODS1") + kernel(8 * gib),
                          hl, 1.25, window=0))
    tests.append(scenario(pack, "HostShmallBelowSga: two instances of 6 GiB on one host, shmall 10 GiB fires", alert, 0,
                          instance("ODS", "ODS1", HOST, 6 * gib) + instance("DW", "DW1", HOST, 6 * gib)
                          + procs("ODS1") + procs("DW1") + kernel(10 * gib), hl, 1.2, window=0))

    alert = "HostHugePagesBelowSga"
    ods = instance("ODS", "ODS1", HOST, 10 * gib) + procs("ODS1")
    tests.append(quiet("HostHugePagesBelowSga: no huge pages configured at all (a choice) does not fire", alert,
                       ods + kernel(64 * gib, huge_total=0), n))
    tests.append(quiet("HostHugePagesBelowSga: 5632 huge pages of 2 MiB (11 GiB) hold a 10 GiB SGA", alert,
                       ods + kernel(64 * gib, huge_total=5632), n))
    tests.append(scenario(pack, "HostHugePagesBelowSga: 2048 huge pages of 2 MiB (4 GiB) under a 10 GiB SGA fires",
                          alert, 0, ods + kernel(64 * gib, huge_total=2048), hl, 2.5, window=0))
    return tests


def filesystem_tests(pack) -> list:
    """Issue 23: file systems Oracle writes to (node_exporter). Failure first: there was no rule,
    so a data file autoextending into a full /u01 or a full audit directory paged nobody; a hung
    NFS mount (device_error, no size any more) must not clear the page."""
    tests = []
    node = {"job": "node", "instance": HOST}
    fs = {"device": "/dev/mapper/vg01-u01", "fstype": "xfs", "mountpoint": "/u01"}
    size = 100_000_000_000
    n = 40

    def series(labels, avail, length=n, error=None):
        lab = {**node, **labels}
        out = [{"series": sel("node_filesystem_size_bytes", lab), "values": " ".join(
                    str(size) if avail(t) is not None else "stale" for t in range(length + 1))},
               {"series": sel("node_filesystem_avail_bytes", lab), "values": " ".join(
                    str(int(avail(t))) if avail(t) is not None else "stale" for t in range(length + 1))}]
        if error is not None:
            out.append({"series": sel("node_filesystem_device_error", lab), "values": " ".join(
                str(error(t)) for t in range(length + 1))})
        return out

    alert = "HostFilesystemFillingUp"
    f = pack.for_min(alert)
    hang = f + 5
    # 81% used and 6 GB/h more: full in about 3 hours; then the NFS server stops answering
    filling = lambda t: None if t > hang else 19_000_000_000 - t * 100_000_000   # noqa: E731
    labels = {"mountpoint": "/u01", "device": fs["device"], "fstype": fs["fstype"]}
    by = {"mountpoint": "/u01"}
    used_at = 1 - (19_000_000_000 - (f + 1) * 100_000_000) / size
    tests.append({"name": "HostFilesystemFillingUp: /u01 81% used growing 6 GB/h (full within 4 h) pages; the mount "
                          "then hangs (device_error 1, no size): the page stays, HostFilesystemUnreadable tickets",
                  "interval": "1m", "input_series": series(labels, filling, error=lambda t: 1 if t > hang else 0),
                  "alert_rule_test": [
                      {"eval_time": f"{f - 1}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{f + 1}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, by, used_at)]},
                      *[{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": [pack.expect(alert, 0, by, 1)]}
                        for t in (hang + 5, n)],
                      {"eval_time": f"{hang + 4}m", "alertname": "HostFilesystemUnreadable", "exp_alerts": []},
                      {"eval_time": f"{hang + 6}m", "alertname": "HostFilesystemUnreadable",
                       "exp_alerts": [pack.expect("HostFilesystemUnreadable", 0, by, 1)]}]})
    tests.append(quiet("HostFilesystemFillingUp: /u01 81% used and not growing does not page", alert,
                       series(labels, lambda t: 19_000_000_000), n))
    tests.append(quiet("HostFilesystemFillingUp: /home (not a file system Oracle writes to) filling fast does not page",
                       alert, series({**labels, "mountpoint": "/home"}, lambda t: 19_000_000_000 - t * 300_000_000), n))
    tests.append(quiet("HostFilesystemFillingUp: /u02 20% used growing 6 GB/h has days left: no page", alert,
                       series({**labels, "mountpoint": "/u02"}, lambda t: 80_000_000_000 - t * 100_000_000), n))

    alert = "HostFilesystemFull"
    f = pack.for_min(alert)
    tests.append({"name": "HostFilesystemFull: /u01/app/oracle/admin 90% full (audit files) tickets",
                  "interval": "1m", "input_series": series({**labels, "mountpoint": "/u01/app/oracle/admin"},
                                                           lambda t: 10_000_000_000),
                  "alert_rule_test": [
                      {"eval_time": f"{f - 1}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{f + 1}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"mountpoint": "/u01/app/oracle/admin"}, 0.9)]}]})
    tests.append(quiet("HostFilesystemFull: /u01 81% full does not ticket", alert, series(labels, lambda t: 19_000_000_000), n))
    # issue 23, failure first for every gauge alert with a `for` of 8 minutes or more: node_exporter
    # crash-looping, one failed scrape every 8 minutes marks every series stale for a minute; a raw
    # gauge read restarted the 15-minute `for` each time and never fired, last_over_time does not
    m = 2 * f + 8
    crash = lambda t: None if t % 8 == 7 else 10_000_000_000     # noqa: E731
    lab = {**labels, "mountpoint": "/oraarch"}
    tests.append({"name": "HostFilesystemFull: /oraarch 90% full while node_exporter fails one scrape in 8 "
                          "(every series stale each time): the 15-minute `for` still completes",
                  "interval": "1m", "input_series": series(lab, crash, length=m),
                  "alert_rule_test": [
                      {"eval_time": f"{f - 1}m", "alertname": alert, "exp_alerts": []},
                      {"eval_time": f"{f + 1}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"mountpoint": "/oraarch"}, 0.9)]},
                      {"eval_time": f"{m}m", "alertname": alert,
                       "exp_alerts": [pack.expect(alert, 0, {"mountpoint": "/oraarch"}, 0.9)]}]})
    tests.append(quiet("HostFilesystemUnreadable: a mount that answers (device_error 0) does not ticket",
                       "HostFilesystemUnreadable", series(labels, lambda t: 19_000_000_000, error=lambda t: 0), n))
    return tests + filesystem_full_tests(pack)


def filesystem_full_tests(pack) -> list:
    """rev23 #2, failure first: /u01 full (0 bytes available) and flat: nothing grows any more, so the
    time-to-full page (predict_linear) is silent or ends; the absolute page holds while it is full.
    Quiet counterparts: a 100 GB file system at 95% with 5 GB left (the 85% ticket's, later) and a
    2 GiB mount with 0.5 GiB left at 75% used (small, not full)."""
    node = {"job": "node", "instance": HOST}
    n = 6

    def fs(mountpoint, size, avail):
        lab = {**node, "device": "/dev/mapper/vg01-" + mountpoint.strip("/").replace("/", "_"), "fstype": "xfs",
               "mountpoint": mountpoint}
        return [{"series": sel("node_filesystem_size_bytes", lab), "values": f"{size}x{n}"},
                {"series": sel("node_filesystem_avail_bytes", lab), "values": f"{avail}x{n}"}]
    alert = "HostFilesystemFull"
    index = next(i for i, r in enumerate(pack.rules[alert]) if r["labels"]["severity"] == "critical")
    return [{"name": "HostFilesystemFull: /u01 full (0 bytes available, flat) pages within minutes and keeps paging "
                     "while HostFilesystemFillingUp sees no growth (rev23 #2)",
             "interval": "1m", "input_series": fs("/u01", 100_000_000_000, 0),
             "alert_rule_test": [
                 {"eval_time": "1m", "alertname": alert, "exp_alerts": []},
                 {"eval_time": f"{n}m", "alertname": alert,
                  "exp_alerts": [pack.expect(alert, index, {"mountpoint": "/u01"}, 0)]},
                 {"eval_time": f"{n}m", "alertname": "HostFilesystemFillingUp", "exp_alerts": []}]},
            quiet("HostFilesystemFull: 5 GB left of 100 GB (95%) is the 85% ticket's, not a page; a 2 GiB mount "
                  "with 0.5 GiB left (75%) is not full", alert,
                  fs("/u02", 100_000_000_000, 5_000_000_000) + fs("/u01/app/oracle/admin", 2 * 1024 ** 3, 1024 ** 3 // 2),
                  n)]
