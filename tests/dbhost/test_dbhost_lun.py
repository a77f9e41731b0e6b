"""LUN collector on the generated tree: every value computed from the generator's spec."""
from __future__ import annotations

import os

import pytest

import make_fixtures as mf
from dbhost_support import samples, value
from prometheus_client import CollectorRegistry, generate_latest

from dbhost_exporter.collectors.lun import (LunCollector, LunConfig, RoleRule, host_queue, kernel_release_tuple,
                                            normalize_wwid, parse_diskstats, parse_inflight)
from dbhost_exporter.sysfs import parse_int


def scrape(collector) -> dict:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(collector)
    return samples(generate_latest(reg).decode())


def test_hex_and_decimal_counters():
    assert parse_int("0x1a2b\n") == 6699
    assert parse_int("0X10") == 16
    assert parse_int("  42 \n") == 42
    assert parse_int("0x") is None
    assert parse_int("-3") is None
    assert parse_int("garbage") is None
    assert parse_int("") is None


def test_host_queue_is_in_progress_minus_dispatched_clamped_at_zero():
    assert host_queue(24, 16) == 8
    assert host_queue(22, 25) == 0
    assert host_queue(7, 7) == 0
    assert host_queue(None, 3) is None
    assert host_queue(3, None) is None


def test_diskstats_field_12_is_in_progress():
    # 17 statistics after the name (kernel 5.5+); the 9th of them is "I/Os currently in progress"
    line = "   8       0 sda 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27\n"
    assert parse_diskstats(line) == {"sda": 19}
    # the original 14-field layout (11 statistics) is parsed the same way
    assert parse_diskstats("   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11\n") == {"sdb": 9}
    # a truncated line or a garbage field is not diskstats: an error naming the line, never a
    # silently missing host queue (issue 10.5)
    with pytest.raises(ValueError, match=r"^/proc/diskstats line 1: not a diskstats line .*'8      32 sdc 1 2 3'"):
        parse_diskstats("   8      32 sdc 1 2 3\n")
    with pytest.raises(ValueError, match=r"^/x/diskstats line 2: "):
        parse_diskstats("   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11\n   8 48 sdd 1 2 3 4 5 6 7 8 x 10 11\n", "/x/diskstats")
    # blank lines are no damage
    assert parse_diskstats("\n   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11\n\n") == {"sdb": 9}


def test_inflight_file_sums_reads_and_writes():
    assert parse_inflight("       3       12\n") == 15
    assert parse_inflight("3\n") is None
    assert parse_inflight("a b") is None


def test_wwid_forms_compare_equal():
    assert normalize_wwid("naa.600A098038303053453F463045727A41") == "3600a098038303053453f463045727a41"
    assert normalize_wwid("3600a098038303053453f463045727a41") == "3600a098038303053453f463045727a41"
    assert normalize_wwid("t10.ATA     ST600MM0009") == "t10.ATA     ST600MM0009"


def test_kernel_release_parsing():
    assert kernel_release_tuple("5.14.0-427.13.1.el9_4.x86_64") == (5, 14)
    assert kernel_release_tuple("6.10.0") == (6, 10)
    assert kernel_release_tuple("weird") is None


def test_values_match_the_generated_tree(tree):
    cfg = LunConfig(roles=[RoleRule("wwid", "naa.600a098038303053453f463045727a41", "redo"),
                           RoleRule("multipath", "data01", "data"), RoleRule("device", "nvme0n1", "arch")])
    got = scrape(LunCollector(str(tree.procfs), str(tree.sysfs), cfg))
    maps = {s: dm for dm in mf.DMS if dm.uuid.startswith("mpath-") for s in dm.slaves}
    for lun in mf.SCSI:
        d = lun.name
        wwid = "3" + lun.naa if lun.naa else ""
        mp = maps[d].dm_name if d in maps else ""
        role = {"redo01": "redo", "data01": "data"}.get(mp, "other")
        assert value(got, "dbhost_lun_info", device=d, hctl=lun.hctl, vendor=lun.vendor, model=lun.model,
                     wwid=wwid, multipath=mp, role=role) == 1
        assert value(got, "dbhost_lun_queue_depth", device=d) == lun.queue_depth
        assert value(got, "dbhost_lun_nr_requests", device=d) == lun.nr_requests
        assert value(got, "dbhost_lun_inflight_requests", device=d, queue="lun") == lun.device_busy
        assert value(got, "dbhost_lun_inflight_requests", device=d, queue="host") == \
            max(0, lun.in_progress - lun.device_busy)
        assert value(got, "dbhost_lun_iorequests_total", device=d) == lun.iorequest_cnt
        assert value(got, "dbhost_lun_iodone_total", device=d) == lun.iodone_cnt
        assert value(got, "dbhost_lun_ioerrors_total", device=d) == lun.ioerr_cnt
        assert value(got, "dbhost_lun_samples_total", device=d) == 1
        assert value(got, "dbhost_lun_queue_full_samples_total", device=d) == \
            (1 if lun.device_busy >= lun.queue_depth else 0)
    # concrete spot checks of the spec itself: sda backlog 24-16, sdb clamped, sde throttled at 8
    assert value(got, "dbhost_lun_inflight_requests", device="sda", queue="host") == 8
    assert value(got, "dbhost_lun_inflight_requests", device="sdb", queue="host") == 0
    assert value(got, "dbhost_lun_queue_full_samples_total", device="sde") == 1
    for dm in mf.DMS:
        if not dm.uuid.startswith("mpath-"):
            assert not any(k[1] and ("device", dm.name) in k[1] for k in got), f"{dm.name} (LVM) must be skipped"
            continue
        first = next(x for x in mf.SCSI if x.name == dm.slaves[0])
        role = {"redo01": "redo", "data01": "data"}[dm.dm_name]
        assert value(got, "dbhost_lun_info", device=dm.name, hctl="", vendor=first.vendor, model=first.model,
                     wwid=dm.uuid[len("mpath-"):], multipath=dm.dm_name, role=role) == 1
        assert value(got, "dbhost_lun_inflight_requests", device=dm.name, queue="lun") == sum(dm.inflight)
        assert value(got, "dbhost_lun_inflight_requests", device=dm.name, queue="host") == \
            max(0, dm.in_progress - sum(dm.inflight))
        assert ("dbhost_lun_queue_depth", (("device", dm.name),)) not in got
    n = mf.NVME
    assert value(got, "dbhost_lun_info", device=n["name"], hctl="", vendor="", model=n["model"], wwid=n["wwid"],
                 multipath="", role="arch") == 1
    assert value(got, "dbhost_lun_inflight_requests", device=n["name"], queue="lun") == sum(n["inflight"])
    for name, *_ in mf.SKIPPED:
        assert not any(("device", name) in k[1] for k in got), f"{name} must be skipped by default"
    for host, (can_queue, busy) in mf.HOSTS.items():
        assert value(got, "dbhost_scsi_host_can_queue", host=f"host{host}") == can_queue
        assert value(got, "dbhost_scsi_host_busy", host=f"host{host}") == busy
    assert value(got, "dbhost_kernel_info", release=mf.GOLDEN_KERNEL, host_queue_visible="true") == 1


def test_queue_full_counts_accumulate_per_scrape(tree):
    col = LunCollector(str(tree.procfs), str(tree.sysfs))
    for _ in range(3):
        got = scrape(col)
    assert value(got, "dbhost_lun_samples_total", device="sda") == 3
    assert value(got, "dbhost_lun_queue_full_samples_total", device="sda") == 3
    # the LUN queue drains: in-flight drops below the configured depth of 16
    busy = os.path.join(tree.sysfs, "block", "sda", "device", "device_busy")
    with open(busy, "w") as fh:
        fh.write("15\n")
    got = scrape(col)
    assert value(got, "dbhost_lun_samples_total", device="sda") == 4
    assert value(got, "dbhost_lun_queue_full_samples_total", device="sda") == 3
    assert value(got, "dbhost_lun_inflight_requests", device="sda", queue="host") == 24 - 15


def _vendor(got, device):
    return next(dict(k[1])["vendor"] for k in got if k[0] == "dbhost_lun_info" and dict(k[1])["device"] == device)


def test_identity_is_cached_until_refresh(tree):
    now = [1000.0]
    col = LunCollector(str(tree.procfs), str(tree.sysfs), LunConfig(identity_refresh_seconds=300),
                       clock=lambda: now[0])
    before = _vendor(scrape(col), "sdb")
    (tree.sysfs / "block" / "sdb" / "device" / "vendor").write_text("NEWVENDR\n")
    now[0] += 299
    assert _vendor(scrape(col), "sdb") == before
    now[0] += 1
    assert _vendor(scrape(col), "sdb") == "NEWVENDR"


def test_queue_depth_ramp_down_is_seen_at_the_next_scrape(tree):
    # review finding 6: the LLD lowers device/queue_depth by itself on QUEUE FULL (lpfc ramp-down,
    # scsi_track_queue_full); the next scrape must show the new depth and judge "full" against it,
    # not wait for identity_refresh_seconds
    now = [1000.0]
    col = LunCollector(str(tree.procfs), str(tree.sysfs), LunConfig(identity_refresh_seconds=300),
                       clock=lambda: now[0])
    dev = tree.sysfs / "block" / "sdb" / "device"
    dev.joinpath("device_busy").write_text("8\n")
    got = scrape(col)
    assert value(got, "dbhost_lun_queue_depth", device="sdb") == 32
    assert value(got, "dbhost_lun_queue_full_samples_total", device="sdb") == 0
    dev.joinpath("queue_depth").write_text("8\n")      # the kernel ramped it down
    now[0] += 15
    got = scrape(col)
    assert value(got, "dbhost_lun_queue_depth", device="sdb") == 8
    assert value(got, "dbhost_lun_inflight_requests", device="sdb", queue="lun") == 8
    assert value(got, "dbhost_lun_queue_full_samples_total", device="sdb") == 1
    assert value(got, "dbhost_lun_samples_total", device="sdb") == 2
    dev.joinpath("queue_depth").write_text("16\n")     # and ramped back up
    now[0] += 15
    got = scrape(col)
    assert value(got, "dbhost_lun_queue_depth", device="sdb") == 16
    assert value(got, "dbhost_lun_queue_full_samples_total", device="sdb") == 1


def test_scsi_counters_past_2_31_are_masked_to_32_bits(tree):
    # review finding 5: atomic_t printed "0x%llx" from an unsigned long long: past 2^31 commands
    # the kernel prints the sign-extended value; at 2^32 it wraps to 0 (iocounterbits 32)
    col = LunCollector(str(tree.procfs), str(tree.sysfs))
    dev = tree.sysfs / "block" / "sdb" / "device"
    dev.joinpath("iorequest_cnt").write_text("0x7fffff00\n")
    dev.joinpath("iodone_cnt").write_text("0x7ffffef0\n")
    dev.joinpath("ioerr_cnt").write_text("0x3\n")
    got = scrape(col)
    assert value(got, "dbhost_lun_iorequests_total", device="sdb") == 0x7fffff00
    dev.joinpath("iorequest_cnt").write_text("0xffffffff80000010\n")   # 0x110 commands later
    dev.joinpath("iodone_cnt").write_text("0xffffffff80000000\n")
    dev.joinpath("ioerr_cnt").write_text("0xfffffffffffffffe\n")       # (int)-2: 2^32 - 2
    got = scrape(col)
    assert value(got, "dbhost_lun_iorequests_total", device="sdb") == 0x80000010
    assert value(got, "dbhost_lun_iorequests_total", device="sdb") - 0x7fffff00 == 0x110
    assert value(got, "dbhost_lun_iodone_total", device="sdb") == 0x80000000
    assert value(got, "dbhost_lun_ioerrors_total", device="sdb") == 2 ** 32 - 2
    dev.joinpath("iorequest_cnt").write_text("0x5\n")                  # wrapped at 2^32
    got = scrape(col)
    assert value(got, "dbhost_lun_iorequests_total", device="sdb") == 5   # a reset, not 1.8e19
    assert all(v < 2 ** 32 for k, v in got.items() if k[0].startswith("dbhost_lun_io"))


def test_new_device_triggers_identity_rebuild(tree):
    col = LunCollector(str(tree.procfs), str(tree.sysfs), LunConfig(identity_refresh_seconds=1e9))
    scrape(col)
    os.unlink(os.path.join(tree.sysfs, "block", "sde"))
    got = scrape(col)
    assert not any(("device", "sde") in k[1] for k in got)


@pytest.mark.parametrize("release,visible", [("6.9.12", "false"), ("6.10.0-rc1", "true"), ("6.18.44", "true"),
                                             ("4.18.0-553.el8_10.x86_64", "partial"),
                                             ("5.10.0-28-amd64", "false"), ("abc", "unknown")])
def test_kernel_info_host_queue_visibility(tree, release, visible):
    (tree.procfs / "sys/kernel/osrelease").write_text(release + "\n")
    got = scrape(LunCollector(str(tree.procfs), str(tree.sysfs)))
    assert value(got, "dbhost_kernel_info", release=release, host_queue_visible=visible) == 1


def test_loop_devices_only_when_configured(tree):
    got = scrape(LunCollector(str(tree.procfs), str(tree.sysfs),
                              LunConfig(include_types=frozenset({"loop"}))))
    devices = {dict(k[1]).get("device") for k in got if k[0] == "dbhost_lun_info"}
    assert devices == {"loop0"}
