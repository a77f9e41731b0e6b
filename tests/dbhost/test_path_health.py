"""Path health (issue 14.2, 14.3): dm-multipath maps and NVMe native multipath on
make_fixtures.build_paths_tree (two FC paths each to a redo and a data LUN, an NVMe/TCP
namespace on two controllers with ANA). The failures an on-call engineer fears first: a
path goes offline, multipathd drops a path, a map stays suspended, a controller resets,
an ANA group becomes inaccessible; then recovery. Files are changed the way the kernel
changes them (one attribute, no block device coming or going)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

import make_fixtures as mf
from dbhost_support import run_once, samples, value

from dbhost_exporter.collectors.lun import LunCollector, LunConfig, state_label
from dbhost_exporter.config import load_config


@pytest.fixture
def fx(tmp_path):
    return mf.build_paths_tree(tmp_path / "paths")


@pytest.fixture
def coll(fx):
    return LunCollector(str(fx.procfs), str(fx.sysfs), load_config(str(fx.config)).lun)


def scrape(c):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in c.collect() for s in f.samples}


def paths(got, device):
    return (value(got, "dbhost_multipath_paths", device=device),
            value(got, "dbhost_multipath_paths_active", device=device))


def scsi_state(fx, dev, state):
    (fx.sysfs / "block" / dev / "device" / "state").write_text(state + "\n")


def test_healthy_host_every_map_has_all_paths_active(coll):
    got = scrape(coll)
    for dm in ("dm-0", "dm-1", "nvme2n1"):
        assert paths(got, dm) == (2, 2)
    assert value(got, "dbhost_multipath_suspended", device="dm-0") == 0
    for dev in ("sdj", "sdk", "sdl", "sdm"):
        assert value(got, "dbhost_scsi_device_state", device=dev, state="running") == 1
    assert value(got, "dbhost_nvme_path_ana_state", device="nvme2c3n1", multipath="nvme2n1", controller="nvme3",
                 state="optimized") == 1
    assert value(got, "dbhost_nvme_path_ana_state", device="nvme2c4n1", multipath="nvme2n1", controller="nvme4",
                 state="non-optimized") == 1
    # NVMe/TCP queues: queue_count 3 = 2 I/O queues + admin; sqsize 127 = 128 entries
    assert value(got, "dbhost_nvme_controller_io_queues", controller="nvme3") == 2
    assert value(got, "dbhost_nvme_controller_queue_size", controller="nvme3") == 128
    assert value(got, "dbhost_nvme_controller_info", controller="nvme3", subsystem="nvme-subsys2",
                 transport="tcp", model="NetApp ONTAP Controller") == 1
    # I/O goes to the optimized path only (nvme3): 2 queues x (128 tags - 1 reserved for Connect)
    assert value(got, "dbhost_lun_queue_tags", device="nvme2n1") == 2 * 127
    assert value(got, "dbhost_lun_samples_total", device="nvme2n1") == 1


@pytest.mark.parametrize("state", ["offline", "transport-offline", "blocked", "quiesce", "cancel", "deleted"])
def test_a_redo_path_that_is_not_running_costs_redundancy(coll, fx, state):
    """A map with a failed path still serves I/O, with no redundancy left: the classic silent SAN
    degradation. blocked is what an FC path shows during dev_loss_tmo, offline after a failed
    error recovery, transport-offline after fast_io_fail_tmo."""
    scrape(coll)
    scsi_state(fx, "sdk", state)
    got = scrape(coll)
    assert paths(got, "dm-0") == (2, 1)
    assert paths(got, "dm-1") == (2, 2)
    assert value(got, "dbhost_scsi_device_state", device="sdk", state=state) == 1
    assert ("dbhost_scsi_device_state", (("device", "sdk"), ("state", "running"))) not in got
    scsi_state(fx, "sdj", state)
    assert paths(scrape(coll), "dm-0") == (2, 0)
    # the paths come back
    scsi_state(fx, "sdj", "running")
    scsi_state(fx, "sdk", "running")
    assert paths(scrape(coll), "dm-0") == (2, 2)


def test_a_path_multipathd_removed_from_the_map_is_seen_at_the_next_scrape(coll, fx):
    """multipathd reloads the map without the failed path: slaves/ shrinks, /sys/block keeps the
    same devices (sdk still exists), so the identity cache is not rebuilt; the path count is
    read every scrape all the same."""
    scrape(coll)
    (fx.sysfs / "block" / "dm-1" / "slaves" / "sdm").unlink()
    got = scrape(coll)
    assert paths(got, "dm-1") == (1, 1)


def test_a_suspended_map_is_reported(coll, fx):
    scrape(coll)
    (fx.sysfs / "block" / "dm-0" / "dm" / "suspended").write_text("1\n")
    got = scrape(coll)
    assert value(got, "dbhost_multipath_suspended", device="dm-0") == 1
    assert value(got, "dbhost_multipath_suspended", device="dm-1") == 0
    (fx.sysfs / "block" / "dm-0" / "dm" / "suspended").write_text("0\n")
    assert value(scrape(coll), "dbhost_multipath_suspended", device="dm-0") == 0


@pytest.mark.parametrize("state", ["resetting", "connecting", "deleting", "deleting (no IO)", "dead", "new"])
def test_an_nvme_controller_that_is_not_live_costs_its_path(coll, fx, state):
    scrape(coll)
    ctrl = fx.sysfs / "class" / "nvme" / "nvme4"
    (ctrl / "state").write_text(state + "\n")
    got = scrape(coll)
    assert paths(got, "nvme2n1") == (2, 1)
    assert value(got, "dbhost_nvme_controller_state", controller="nvme4", state=state) == 1
    assert ("dbhost_nvme_controller_state", (("controller", "nvme4"), ("state", "live"))) not in got
    (ctrl / "state").write_text("live\n")
    assert paths(scrape(coll), "nvme2n1") == (2, 2)


@pytest.mark.parametrize("ana", ["inaccessible", "persistent-loss", "change"])
def test_an_ana_group_that_carries_no_io_costs_its_path(coll, fx, ana):
    """The controller is live but the array says this path's ANA group cannot serve the
    namespace (nvme_find_path uses optimized, then non-optimized paths only)."""
    scrape(coll)
    (fx.sysfs / "block" / "nvme2c3n1" / "ana_state").write_text(ana + "\n")
    got = scrape(coll)
    assert paths(got, "nvme2n1") == (2, 1)
    assert value(got, "dbhost_nvme_path_ana_state", device="nvme2c3n1", multipath="nvme2n1", controller="nvme3",
                 state=ana) == 1
    assert value(got, "dbhost_nvme_controller_state", controller="nvme3", state="live") == 1


def test_unreadable_or_garbage_state_is_never_counted_active(coll, fx):
    scrape(coll)
    (fx.sysfs / "block" / "sdj" / "device" / "state").unlink()
    scsi_state(fx, "sdl", "\x00\x01 {bad=\"x\"}")
    got = scrape(coll)
    assert paths(got, "dm-0") == (2, 1)
    assert paths(got, "dm-1") == (2, 1)
    assert not any(k[0] == "dbhost_scsi_device_state" and dict(k[1])["device"] == "sdj" for k in got)
    assert value(got, "dbhost_scsi_device_state", device="sdl", state="unknown") == 1


def test_state_labels_are_bounded():
    assert state_label("running\n") == "running"
    assert state_label("deleting (no IO)\n") == "deleting (no IO)"
    assert state_label("x" * 80) == "unknown"
    assert state_label("a\nb") == "unknown"
    assert state_label(None) is None


def test_exposition_of_a_degraded_host_is_valid_and_names_the_roles(fx):
    scsi_state(fx, "sdk", "offline")
    (fx.sysfs / "class" / "nvme" / "nvme3" / "state").write_text("resetting\n")
    proc = run_once("--path.procfs", str(fx.procfs), "--path.sysfs", str(fx.sysfs), "--config.file", str(fx.config))
    assert proc.returncode == 0, proc.stderr
    if shutil.which("promtool"):
        res = subprocess.run(["promtool", "check", "metrics"], input=proc.stdout, capture_output=True, text=True)
        assert res.returncode == 0 and not res.stdout.strip() and not res.stderr.strip(), res.stdout + res.stderr
    got = samples(proc.stdout)
    assert paths(got, "dm-0") == (2, 1)
    assert paths(got, "nvme2n1") == (2, 1)
    # the alert joins the map to its role through dbhost_lun_info{device}
    roles = {dict(k[1])["device"]: dict(k[1])["role"] for k in got if k[0] == "dbhost_lun_info"}
    assert roles["dm-0"] == "redo" and roles["dm-1"] == "data" and roles["nvme2n1"] == "data"


def test_maps_and_paths_of_the_golden_tree(tmp_path):
    gx = mf.build_tree(tmp_path / "g", with_proc=False)
    got = scrape(LunCollector(str(gx.procfs), str(gx.sysfs), LunConfig()))
    assert paths(got, "dm-0") == (2, 2) and paths(got, "dm-1") == (2, 2)
    assert ("dbhost_multipath_paths", (("device", "dm-2"),)) not in got      # LVM, not multipath
    # a single-controller PCIe SSD: no multipath series, its queues sampled against its tags
    assert ("dbhost_multipath_paths", (("device", "nvme0n1"),)) not in got
    assert value(got, "dbhost_nvme_controller_state", controller="nvme0", state="live") == 1
    assert value(got, "dbhost_lun_queue_tags", device="nvme0n1") == 2 * mf.NVME["sqsize"]


def test_an_unreadable_slaves_directory_fails_the_collector_not_all_paths_down(coll, fx, monkeypatch):
    """Issue 26: a multipath map whose slaves/ cannot be listed (EACCES under a hardened sysfs, an
    I/O error) exported 0 paths and 0 active with the collector successful: exactly what pages
    LunAllPathsDown; then it exported nothing for the map, which quietly stops watching it.
    Not knowing is a failure of the collector (dbhost_collector_success 0, one error naming the
    map); when slaves/ is readable again, the map is back with its paths. A map that multipathd
    really emptied (readable, no entries) is still 0 paths."""
    import os

    from dbhost_exporter.scrape import DbhostExporter

    real = os.listdir
    broken = str(fx.sysfs / "block" / "dm-0" / "slaves")

    def listdir(path):
        if str(path) == broken:
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    with pytest.raises(OSError, match=r"multipath map dm-0: cannot list .*dm-0/slaves \(Permission denied\)"):
        scrape(coll)
    exp = DbhostExporter([coll], 50000)
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in exp.collect() for s in f.samples}
    assert value(got, "dbhost_collector_success", collector="lun") == 0
    assert not [k for k in got if k[0] == "dbhost_multipath_paths_active"]   # never a false 0
    monkeypatch.setattr(os, "listdir", real)
    assert paths(scrape(coll), "dm-0") == (2, 2)
    for entry in (fx.sysfs / "block" / "dm-0" / "slaves").iterdir():
        entry.unlink()                                  # multipathd removed every path of the map
    assert paths(scrape(coll), "dm-0") == (0, 0)


def _fill_paths(fx, per_path):
    """Writes in flight on each NVMe/TCP path of nvme2n1 (the head's I/O lives on its paths)."""
    for path, n in per_path.items():
        (fx.sysfs / "block" / path / "inflight").write_text(f"{0:8d} {n:8d}\n")


def test_a_full_nvme_tcp_queue_counts_as_full_net_of_the_reserved_connect_tags(coll, fx):
    """Issue 26.4: Fabrics reserve one tag per queue (Connect); nr_tags counts it. The optimized
    path's 2 queues carry at most 2 x 127 I/Os: with 254 in flight the namespace is full. Counted
    against the raw 2 x 2 x 128 = 512 tags of both paths it never was."""
    _fill_paths(fx, {"nvme2c3n1": 254, "nvme2c4n1": 0})
    got = scrape(coll)
    assert value(got, "dbhost_lun_queue_full_samples_total", device="nvme2n1") == 1
    _fill_paths(fx, {"nvme2c3n1": 253, "nvme2c4n1": 0})     # one free tag: not full
    got = scrape(coll)
    assert value(got, "dbhost_lun_queue_full_samples_total", device="nvme2n1") == 1
    assert value(got, "dbhost_lun_samples_total", device="nvme2n1") == 2


def test_the_limit_follows_the_paths_io_is_sent_to(coll, fx):
    """Only optimized paths carry I/O while one is usable; when the optimized path's controller
    is reconnecting, I/O moves to the non-optimized one and the limit is its tags; with no usable
    path there is no limit (nothing sampled as full)."""
    ana = fx.sysfs / "block" / "nvme2c4n1" / "ana_state"
    ana.write_text("optimized\n")                           # both optimized: both carry I/O
    assert value(scrape(coll), "dbhost_lun_queue_tags", device="nvme2n1") == 4 * 127
    ana.write_text("non-optimized\n")
    (fx.sysfs / "class" / "nvme" / "nvme3" / "state").write_text("connecting\n")
    _fill_paths(fx, {"nvme2c3n1": 0, "nvme2c4n1": 254})
    got = scrape(coll)
    assert value(got, "dbhost_lun_queue_tags", device="nvme2n1") == 2 * 127
    assert value(got, "dbhost_lun_queue_full_samples_total", device="nvme2n1") == 1
    ana.write_text("inaccessible\n")
    got = scrape(coll)
    assert ("dbhost_lun_queue_tags", (("device", "nvme2n1"),)) not in got
    assert value(got, "dbhost_lun_samples_total", device="nvme2n1") == 2   # not sampled: no path
