"""Hostile input: unreadable, truncated and malformed sysfs/procfs/arcstats values.
No exception escapes, the other values are still right, and promtool stays happy."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import make_fixtures as mf
from dbhost_support import run_once, samples, value


def promtool_clean(text: str) -> None:
    if shutil.which("promtool") is None:
        pytest.skip("promtool not installed")
    res = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert res.returncode == 0 and not res.stdout.strip() and not res.stderr.strip(), res.stdout + res.stderr


def corrupt(fx: mf.Fixture) -> None:
    blk = fx.sysfs / "block"
    (blk / "sda/device/queue_depth").write_text("garbage\n")
    busy = blk / "sdb/device/device_busy"              # a directory where a file should be: EISDIR on read
    busy.unlink()
    busy.mkdir()
    (blk / "sdc/device/iorequest_cnt").write_text("0xZZ\n")
    (blk / "sdc/device/iodone_cnt").write_text("")
    (blk / "sdd/device/vendor").write_bytes(b'NET"A\\P\xff\n')   # quote, backslash, invalid UTF-8
    (blk / "sdd/device/model").write_bytes(b"LUN\nC-Mode   \n")  # newline inside the value
    (blk / "dm-1/dm/uuid").unlink()                     # map without uuid: not recognised as multipath
    (blk / "nvme0n1/inflight").write_text("")
    os.symlink("../devices/does/not/exist", blk / "sdz")   # dangling symlink
    (fx.sysfs / "class/scsi_host/host2/can_queue").write_text("-1\n")
    (fx.sysfs / "class/scsi_host/host3/host_busy").unlink()
    text = (fx.procfs / "diskstats").read_text().splitlines(True)
    # sdc's line cut short, sde's in-progress field not a number, then a cut final line
    text = [ln if " sdc " not in ln else ln[:20] + "\n" for ln in text]
    text = [ln if " sde " not in ln else ln.replace(" 13 ", " x13 ", 1) for ln in text]
    (fx.procfs / "diskstats").write_text("".join(text) + " 259 1 nvme1n1 1 2")
    arc = (fx.procfs / "spl/kstat/zfs/arcstats").read_bytes()
    (fx.procfs / "spl/kstat/zfs/arcstats").write_bytes(arc[: len(arc) // 2] + b"\xff\xfe\x00garbage 4\n")
    (fx.procfs / "sys/kernel/osrelease").unlink()


def test_corrupted_tree_still_scrapes(tmp_path):
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    corrupt(fx)
    proc = run_once("--path.procfs", str(fx.procfs), "--path.sysfs", str(fx.sysfs), "--config.file", str(fx.config))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    promtool_clean(proc.stdout)
    got = samples(proc.stdout)
    assert value(got, "dbhost_collector_success", collector="lun") == 1
    assert value(got, "dbhost_collector_success", collector="zfs") == 1
    # sda: queue_depth unreadable -> no depth sample, no queue-full sampling, queues still right
    assert ("dbhost_lun_queue_depth", (("device", "sda"),)) not in got
    assert ("dbhost_lun_samples_total", (("device", "sda"),)) not in got
    assert value(got, "dbhost_lun_inflight_requests", device="sda", queue="host") == 8
    # sdb: device_busy unreadable -> falls back to /sys/block/sdb/inflight (= diskstats in-progress 22)
    assert value(got, "dbhost_lun_inflight_requests", device="sdb", queue="lun") == 22
    assert value(got, "dbhost_lun_inflight_requests", device="sdb", queue="host") == 0
    # sdc: bad hex and empty counters are left out; truncated diskstats line -> no host queue
    assert ("dbhost_lun_iorequests_total", (("device", "sdc"),)) not in got
    assert ("dbhost_lun_iodone_total", (("device", "sdc"),)) not in got
    assert value(got, "dbhost_lun_ioerrors_total", device="sdc") == 0
    assert ("dbhost_lun_inflight_requests", (("device", "sdc"), ("queue", "host"))) not in got
    assert value(got, "dbhost_lun_inflight_requests", device="sdc", queue="lun") == 11
    # sde: in-progress field not a number -> no host queue
    assert ("dbhost_lun_inflight_requests", (("device", "sde"), ("queue", "host"))) not in got
    # sdd: hostile label bytes survive escaped (invalid UTF-8 becomes U+FFFD)
    info = [dict(k[1]) for k in got if k[0] == "dbhost_lun_info" and dict(k[1])["device"] == "sdd"]
    assert info[0]["vendor"] == 'NET"A\\P\ufffd' and info[0]["model"] == "LUN\nC-Mode"
    # dm-1 lost its uuid: no longer a multipath map, its paths have no map name
    assert not any(k[0] == "dbhost_lun_info" and dict(k[1])["device"] == "dm-1" for k in got)
    assert info[0]["multipath"] == ""
    # nvme0n1: empty inflight -> no LUN queue sample; dangling sdz ignored
    assert ("dbhost_lun_inflight_requests", (("device", "nvme0n1"), ("queue", "lun"))) not in got
    assert not any(dict(k[1]).get("device") == "sdz" for k in got)
    assert ("dbhost_scsi_host_can_queue", (("host", "host2"),)) not in got
    assert ("dbhost_scsi_host_busy", (("host", "host3"),)) not in got
    assert not any(k[0] == "dbhost_kernel_info" for k in got)
    # arcstats cut in half: the rows before the cut are still exported
    v = mf.arc_values(mf.ARC_FIELDS_22)
    assert value(got, "dbhost_zfs_arc_hits_total", kind="demand_data") == v["demand_data_hits"]
    assert not any(k[0].startswith("dbhost_zfs_l2arc") for k in got)


def test_empty_root_yields_self_metrics_only(tmp_path):
    proc = run_once("--path.procfs", str(tmp_path), "--path.sysfs", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    promtool_clean(proc.stdout)
    got = samples(proc.stdout)
    assert value(got, "dbhost_collector_success", collector="lun") == 1
    assert value(got, "dbhost_collector_success", collector="zfs") == 1
    assert not any(k[0].startswith(("dbhost_lun", "dbhost_zfs", "dbhost_scsi")) for k in got)


def _without_dac_override() -> list[str] | None:
    """A command prefix under which even root gets EACCES on mode-000 files."""
    if os.geteuid() != 0:
        return []            # an ordinary user already cannot read mode-000 files
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def test_permission_denied_files(tmp_path):
    """Files that really cannot be opened (EACCES), not just missing ones."""
    prefix = _without_dac_override()
    if prefix is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: cannot make files unreadable")
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    for p in (fx.sysfs / "block/sda/device/device_busy", fx.procfs / "spl/kstat/zfs/arcstats",
              fx.sysfs / "block/sdb/device/vendor"):
        p.chmod(0o000)
    sdc_dir = (fx.sysfs / "block/sdc/device").resolve()
    sdc_dir.chmod(0o000)                                # whole SCSI device directory untraversable
    try:
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "dbhost_exporter.cli", "--once", "--path.procfs", str(fx.procfs),
             "--path.sysfs", str(fx.sysfs), "--config.file", str(fx.config)],
            capture_output=True, text=True, timeout=60, env=env, cwd=str(Path(__file__).parent.parent.parent))
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        promtool_clean(proc.stdout)
        got = samples(proc.stdout)
        assert value(got, "dbhost_collector_success", collector="lun") == 1
        # arcstats exists but cannot be read: a collector failure (unlike a host without ZFS)
        assert value(got, "dbhost_collector_success", collector="zfs") == 0
        assert "collector zfs failed: OSError: cannot read" in proc.stderr
        assert not any(k[0].startswith("dbhost_zfs") for k in got)
        # device_busy unreadable -> /sys/block/sda/inflight (24 in progress) -> host queue 0
        assert value(got, "dbhost_lun_inflight_requests", device="sda", queue="lun") == 24
        assert value(got, "dbhost_lun_inflight_requests", device="sda", queue="host") == 0
        sdb = [dict(k[1]) for k in got if k[0] == "dbhost_lun_info" and dict(k[1])["device"] == "sdb"][0]
        assert sdb["vendor"] == "" and sdb["model"] == "LUN C-Mode"
        # sdc's device directory cannot be entered: its SCSI attributes are simply absent
        assert not any(dict(k[1]).get("device") == "sdc" and k[0] in (
            "dbhost_lun_queue_depth", "dbhost_lun_iorequests_total") for k in got)
    finally:
        sdc_dir.chmod(0o755)
