"""dbhost_lun_host_queue_visible: whether a device's host queue can be seen, per kernel era and
request path (blk-mq vs the legacy request path of kernels before 5.0)."""
from __future__ import annotations

import shutil

import pytest

from dbhost_support import samples
import make_fixtures as mf
from dbhost_exporter.collectors.lun import LunCollector


def visible(tree) -> dict[str, float]:
    got = samples_of(LunCollector(str(tree.procfs), str(tree.sysfs)))
    return {dict(k[1])["device"]: v for k, v in got.items() if k[0] == "dbhost_lun_host_queue_visible"}


def samples_of(col):
    from prometheus_client import CollectorRegistry, generate_latest

    reg = CollectorRegistry()
    reg.register(type("C", (), {"collect": lambda self: col.collect()})())
    return samples(generate_latest(reg).decode())


@pytest.fixture
def tree(tmp_path):
    return mf.build_tree(tmp_path / "t", with_proc=False)


def set_release(tree, release):
    (tree.procfs / "sys/kernel/osrelease").write_text(release + "\n")


@pytest.mark.parametrize("release,expected", [
    ("6.12.0-55.9.1.el10_0.x86_64", 1), ("6.10.0", 1),          # part_in_flight from block-layer entry
    ("6.9.12", 0), ("5.14.0-427.13.1.el9_4.x86_64", 0), ("5.10.0-28-amd64", 0),  # dispatched only
    ("4.18.0-553.el8_10.x86_64", 0),                             # blk-mq, driver-tag holders only
])
def test_blk_mq_devices_follow_the_kernel_era(tree, release, expected):
    set_release(tree, release)
    got = visible(tree)
    assert set(got) == {"sda", "sdb", "sdc", "sdd", "sde", "dm-0", "dm-1", "nvme0n1"}
    assert set(got.values()) == {expected}


def test_legacy_request_path_scsi_disks_show_their_host_queue(tree):
    """RHEL 7 (3.10) SCSI disks without scsi_mod.use_blk_mq have no /sys/block/sdX/mq: the
    in-progress count includes requests in the elevator, so the host queue is real; NVMe is
    always blk-mq and dm maps are not SCSI disks."""
    set_release(tree, "3.10.0-1160.el7.x86_64")
    for dev in ("sda", "sdb", "sdc", "sdd", "sde"):
        shutil.rmtree((tree.sysfs / "block" / dev).resolve() / "mq")
    got = visible(tree)
    assert {d: got[d] for d in ("sda", "sdb", "sdc", "sdd", "sde")} == dict.fromkeys(
        ("sda", "sdb", "sdc", "sdd", "sde"), 1)
    assert got["nvme0n1"] == 0 and got["dm-0"] == 0 and got["dm-1"] == 0


def test_legacy_kernel_with_blk_mq_enabled_is_not_visible(tree):
    set_release(tree, "3.10.0-1160.el7.x86_64")      # scsi_mod.use_blk_mq=1: mq directories present
    assert set(visible(tree).values()) == {0}


def test_a_missing_mq_directory_on_a_modern_kernel_changes_nothing(tree):
    """Recorded trees may lack the mq/ subtree; from 5.0 every SCSI disk is blk-mq anyway."""
    set_release(tree, "5.14.0-427.13.1.el9_4.x86_64")
    shutil.rmtree((tree.sysfs / "block" / "sda").resolve() / "mq")
    assert visible(tree)["sda"] == 0


def test_unknown_release_gives_no_series(tree):
    set_release(tree, "garbage")
    assert visible(tree) == {}
