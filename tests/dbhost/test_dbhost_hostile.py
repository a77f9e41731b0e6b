"""Hostile input: unreadable, truncated and malformed sysfs/procfs/arcstats values.
No exception escapes, the other values are still right, and promtool stays happy."""
from __future__ import annotations

import os
import re
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
    """Damaged sysfs attributes: each one leaves its own series out, the rest stays right."""
    blk = fx.sysfs / "block"
    (blk / "sda/device/queue_depth").write_text("garbage\n")
    busy = blk / "sdb/device/device_busy"              # a directory where a file should be: EISDIR on read
    busy.unlink()
    busy.mkdir()
    (blk / "sdc/device/iorequest_cnt").write_text("0xZZ\n")
    (blk / "sdc/device/iodone_cnt").write_text("")
    (blk / "sdd/device/vendor").write_bytes(b'NET"A\\P\xff\n')   # quote, backslash, invalid UTF-8
    (blk / "sdd/device/model").write_bytes(b"LUN\nC-Mode   \n")  # newline inside the value
    (blk / "sde/device/state").write_bytes(b"run\xffning {x=1}\n")   # not a state word: "unknown"
    (blk / "dm-1/dm/uuid").unlink()                     # map without uuid: not recognised as multipath
    (blk / "nvme0n1/inflight").write_text("")
    os.symlink("../devices/does/not/exist", blk / "sdz")   # dangling symlink
    (fx.sysfs / "class/scsi_host/host2/can_queue").write_text("-1\n")
    (fx.sysfs / "class/scsi_host/host3/host_busy").unlink()
    (fx.procfs / "sys/kernel/osrelease").unlink()


def once(fx: mf.Fixture) -> subprocess.CompletedProcess:
    return run_once("--path.procfs", str(fx.procfs), "--path.sysfs", str(fx.sysfs), "--config.file", str(fx.config))


def test_corrupted_sysfs_values_leave_only_their_own_series_out(tmp_path):
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    corrupt(fx)
    proc = once(fx)
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
    # sdc: bad hex and empty counters are left out
    assert ("dbhost_lun_iorequests_total", (("device", "sdc"),)) not in got
    assert ("dbhost_lun_iodone_total", (("device", "sdc"),)) not in got
    assert value(got, "dbhost_lun_ioerrors_total", device="sdc") == 0
    assert value(got, "dbhost_lun_inflight_requests", device="sdc", queue="lun") == 11
    # sde: a state that is not a state word is "unknown", and such a path carries no I/O
    assert value(got, "dbhost_scsi_device_state", device="sde", state="unknown") == 1
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


def _failed(proc, collector: str) -> list[str]:
    """The log lines naming the collector's failure (one per state change, so one here)."""
    return [ln for ln in proc.stderr.splitlines() if f"collector {collector} failed" in ln]


@pytest.mark.parametrize("damage,message", [
    ("cut", r"diskstats line \d+: not a diskstats line"),       # a line cut short
    ("garbage", r"diskstats line \d+: not a diskstats line"),   # a counter that is not a number
    ("empty", r"diskstats is empty while \d+ block devices are exported"),
    ("missing", r"cannot read .*diskstats"),                   # --path.procfs names some other directory
])
def test_damaged_diskstats_fails_the_lun_collector_with_one_line(tmp_path, damage, message):
    """Issue 10.5: garbage or empty diskstats used to drop the host queue series silently while
    dbhost_collector_success stayed 1."""
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    disk = fx.procfs / "diskstats"
    text = disk.read_text().splitlines(True)
    if damage == "cut":
        disk.write_text("".join(ln if " sdc " not in ln else ln[:20] + "\n" for ln in text))
    elif damage == "garbage":
        disk.write_text("".join(ln if " sde " not in ln else ln.replace(" 13 ", " x13 ", 1) for ln in text))
    elif damage == "empty":
        disk.write_text("")
    else:
        disk.unlink()
    proc = once(fx)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    got = samples(proc.stdout)
    assert value(got, "dbhost_collector_success", collector="lun") == 0
    assert value(got, "dbhost_collector_success", collector="zfs") == 1
    assert not any(k[0].startswith("dbhost_lun") for k in got)
    lines = _failed(proc, "lun")
    assert len(lines) == 1 and re.search(message, lines[0]), proc.stderr


@pytest.mark.parametrize("damage", ["cut", "empty", "garbage"])
def test_damaged_arcstats_fails_the_zfs_collector_with_one_line(tmp_path, damage):
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    arc = fx.procfs / "spl/kstat/zfs/arcstats"
    data = arc.read_bytes()
    arc.write_bytes({"cut": data[: len(data) // 2], "empty": b"",
                     "garbage": data[: len(data) // 2] + b"\xff\xfe\x00garbage 4\n"}[damage])
    proc = once(fx)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    got = samples(proc.stdout)
    assert value(got, "dbhost_collector_success", collector="zfs") == 0
    assert value(got, "dbhost_collector_success", collector="lun") == 1
    assert not any(k[0].startswith("dbhost_zfs") for k in got)
    lines = _failed(proc, "zfs")
    assert len(lines) == 1 and "arcstats" in lines[0], proc.stderr


def test_empty_root_yields_self_metrics_only_and_says_why(tmp_path):
    """Existing but empty directories (a mistyped --path.* that happens to exist): nothing to
    report is not a failure, but the log says once that no block device and no process was found."""
    proc = run_once("--path.procfs", str(tmp_path), "--path.sysfs", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    promtool_clean(proc.stdout)
    got = samples(proc.stdout)
    assert value(got, "dbhost_collector_success", collector="lun") == 1
    assert value(got, "dbhost_collector_success", collector="zfs") == 1
    assert not any(k[0].startswith(("dbhost_lun", "dbhost_zfs", "dbhost_scsi")) for k in got)
    assert proc.stderr.count("no block devices under") == 1, proc.stderr
    assert "is --path.sysfs the sysfs mount point?" in proc.stderr
    assert proc.stderr.count("no process directories under") == 1, proc.stderr


@pytest.mark.parametrize("option", ["--path.sysfs", "--path.procfs"])
def test_a_path_that_does_not_exist_is_an_error_at_start(tmp_path, option):
    other = "--path.procfs" if option == "--path.sysfs" else "--path.sysfs"
    missing = tmp_path / "sys-typo"
    proc = run_once(option, str(missing), other, str(tmp_path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [f"error: {option}: {missing} does not exist"]
    (tmp_path / "afile").write_text("x")
    proc = run_once(option, str(tmp_path / "afile"), other, str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {option}: {tmp_path / 'afile'} is not a directory"]


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


@pytest.mark.slow
@pytest.mark.parametrize("rel,collector", [
    ("proc/diskstats", "lun"),
    ("proc/spl/kstat/zfs/arcstats", "zfs"),
    ("sys/block/sda/device/device_busy", "lun"),
    ("proc/meminfo", "memory"),
])
def test_a_fifo_where_a_file_belongs_does_not_hang_the_scrape(tmp_path, rel, collector):
    """Issue 15.7: opening a FIFO blocks until a writer comes; a FIFO at diskstats, arcstats or a
    sysfs attribute hung a scrape thread for ever. Now it reads as unreadable: the scrape
    completes (run_once's timeout would fail the test otherwise)."""
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    path = tmp_path / "t" / rel
    path = path.resolve() if path.is_symlink() or path.parent.is_symlink() else path
    path.unlink()
    os.mkfifo(path)
    proc = run_once("--path.procfs", str(fx.procfs), "--path.sysfs", str(fx.sysfs), "--config.file", str(fx.config),
                    timeout=30)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    got = samples(proc.stdout)
    for other in {"lun", "zfs", "memory"} - {collector}:
        assert value(got, "dbhost_collector_success", collector=other) == 1
