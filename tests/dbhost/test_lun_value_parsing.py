"""Value parsing on the generated tree: uint64 counters at their maximum, negative and
garbage values, empty attribute files. Expectations from the generator's spec (make_fixtures.SCSI)."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

import make_fixtures as mf
from dbhost_support import samples, value

from dbhost_exporter.collectors.lun import LunCollector


def scrape(tree) -> dict:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(LunCollector(str(tree.procfs), str(tree.sysfs)))
    return samples(generate_latest(reg).decode())


def test_uint64_max_negative_garbage_and_empty(tree):
    dev = tree.sysfs / "block"
    (dev / "sda/device/iorequest_cnt").write_text(f"0x{2**64 - 1:x}\n")       # all 64 bits set
    (dev / "sda/device/iodone_cnt").write_text("0x8000000000000000\n")
    (dev / "sdb/device/device_busy").write_text("-1\n")                         # negative: not a count
    (dev / "sdc/device/device_busy").write_text("")                             # empty file
    (dev / "sdd/device/queue_depth").write_text("\x00\x00\n")                   # NUL bytes
    (dev / "sde/hidden").write_text("")                                         # empty hidden: not hidden
    got = scrape(tree)
    # the SCSI counters are 32-bit atomic_t printed sign-extended (review host 5): all-ones is
    # (int)-1 = 2^32 - 1; bits above the 32 are never the counter's and are masked off
    assert value(got, "dbhost_lun_iorequests_total", device="sda") == float(2**32 - 1)
    assert value(got, "dbhost_lun_iodone_total", device="sda") == 0.0
    sdb, sdc = (next(x for x in mf.SCSI if x.name == n) for n in ("sdb", "sdc"))
    # device_busy unusable -> /sys/block/X/inflight (the generator writes in_progress there)
    assert value(got, "dbhost_lun_inflight_requests", device="sdb", queue="lun") == sdb.in_progress
    assert value(got, "dbhost_lun_inflight_requests", device="sdc", queue="lun") == sdc.in_progress
    assert value(got, "dbhost_lun_inflight_requests", device="sdc", queue="host") == 0
    assert ("dbhost_lun_queue_depth", (("device", "sdd"),)) not in got
    assert ("dbhost_lun_samples_total", (("device", "sdd"),)) not in got
    assert value(got, "dbhost_lun_queue_depth", device="sde") == 8
