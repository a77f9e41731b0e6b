"""ALUA access state of SCSI paths (review finding 4): dbhost_scsi_device_access_state from
device/access_state (kernel 4.6+, drivers/scsi/scsi_sysfs.c sdev_access_states), so that
LunIoErrors can tell the path checker's TEST UNIT READY on a standby port (a NOT READY that
ioerr_cnt counts every polling interval) from real errors. On make_fixtures.build_paths_tree:
two FC paths each to a redo (dm-0: sdj, sdk) and a data LUN (dm-1: sdl, sdm)."""
from __future__ import annotations

import pytest

import make_fixtures as mf
from dbhost_support import value

from dbhost_exporter.collectors.lun import ACCESS_STATES, LunCollector, access_state_label


@pytest.fixture
def fx(tmp_path):
    return mf.build_paths_tree(tmp_path / "paths")


def scrape(c):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in c.collect() for s in f.samples}


def access(fx, dev, text):
    (fx.sysfs / "block" / dev / "device" / "access_state").write_text(text + "\n")


def states(got):
    return {dict(k[1])["device"]: dict(k[1])["state"] for k, v in got.items()
            if k[0] == "dbhost_scsi_device_access_state" and v == 1}


def test_active_passive_array_each_path_reports_its_alua_state(fx):
    for dev, st in (("sdj", "active/optimized"), ("sdk", "standby"), ("sdl", "active/non-optimized"),
                    ("sdm", "unavailable")):
        access(fx, dev, st)
    got = scrape(LunCollector(str(fx.procfs), str(fx.sysfs)))
    assert states(got) == {"sdj": "active/optimized", "sdk": "standby", "sdl": "active/non-optimized",
                           "sdm": "unavailable"}
    # one series per path: the current state
    assert sum(1 for k in got if k[0] == "dbhost_scsi_device_access_state") == 4
    # the standby path's SCSI device still runs: it counts as active for the map (sysfs view)
    assert value(got, "dbhost_scsi_device_state", device="sdk", state="running") == 1


def test_the_tree_as_built_optimized_and_non_optimized(fx):
    got = scrape(LunCollector(str(fx.procfs), str(fx.sysfs)))
    assert states(got) == {"sdj": "active/optimized", "sdk": "active/non-optimized",
                           "sdl": "active/optimized", "sdm": "active/non-optimized"}


def test_failover_is_seen_at_the_next_scrape(fx):
    access(fx, "sdj", "active/optimized")
    access(fx, "sdk", "standby")
    col = LunCollector(str(fx.procfs), str(fx.sysfs))
    got = states(scrape(col))
    assert (got["sdj"], got["sdk"]) == ("active/optimized", "standby")
    access(fx, "sdj", "transitioning")          # the array moves the port group over
    access(fx, "sdk", "active/optimized")
    got = states(scrape(col))
    assert (got["sdj"], got["sdk"]) == ("transitioning", "active/optimized")


def test_no_device_handler_no_series(fx):
    # without a handler the kernel's attribute fails the read (EINVAL); before 4.6 it is absent.
    # A directory in its place also fails the read: no series, and nothing else lost
    f = fx.sysfs / "block" / "sdj" / "device" / "access_state"
    f.unlink()
    f.mkdir()
    (fx.sysfs / "block" / "sdk" / "device" / "access_state").unlink()    # a kernel before 4.6
    got = scrape(LunCollector(str(fx.procfs), str(fx.sysfs)))
    assert set(states(got)) == {"sdl", "sdm"}
    assert value(got, "dbhost_scsi_device_state", device="sdj", state="running") == 1


def test_text_outside_the_kernel_table_reads_unknown():
    assert access_state_label("standby\n") == "standby"
    assert access_state_label("active/optimized") == "active/optimized"
    assert access_state_label("weird state with spaces and a very long text") == "unknown"
    assert access_state_label(None) is None
    assert ACCESS_STATES == {"active/optimized", "active/non-optimized", "standby", "unavailable",
                             "lba-dependent", "offline", "transitioning"}
