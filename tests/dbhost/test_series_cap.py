"""The series cap (max_series) must never silently cut the inputs of a page (review finding 1).

With the old yield order a host with ~320 two-path LUNs lost its multipath health series first
under the shipped deploy config (max_series 10000): LunAllPathsDown and LunMultipathSuspended
(critical) had no input, and nothing said so. The lun collector now yields the path-health
families first, then the identity they join with, then the bulky per-LUN families; the shipped
config fits the documented 1,024-path tree with margin; DbhostSeriesDropped tickets any cut."""
from __future__ import annotations

from collections import Counter

import pytest

import make_fixtures as mf
from dbhost_support import REPO

from dbhost_exporter.collectors.lun import LunCollector
from dbhost_exporter.config import load_config
from dbhost_exporter.scrape import DbhostExporter

DEPLOY = REPO / "deploy" / "dbhost-exporter.yml"
HEALTH = ("dbhost_multipath_paths", "dbhost_multipath_paths_active", "dbhost_multipath_suspended",
          "dbhost_scsi_device_state")


def _scrape(fx, max_series):
    exp = DbhostExporter([LunCollector(str(fx.procfs), str(fx.sysfs))], max_series)
    fams = list(exp.collect())
    counts = Counter()
    for f in fams:
        counts[f.name] += len(f.samples)
    dropped = next(s.value for f in fams if f.name == "dbhost_collector_dropped_series"
                   for s in f.samples if s.labels["collector"] == "lun")
    return counts, dropped, fams


def test_cap_cuts_bulky_families_never_path_health(tmp_path):
    # 350 two-path LUNs (the review's repro) under the old deploy cap of 10000: before the fix
    # paths_active 0, suspended 0, scsi_device_state 541 of 700
    n = 700
    fx = mf.build_scale_tree(tmp_path / "s700", n_paths=n)
    counts, dropped, fams = _scrape(fx, 10000)
    maps = n // 2
    assert dropped > 0                                   # the cap did cut (and says so)
    assert counts["dbhost_multipath_paths"] == maps
    assert counts["dbhost_multipath_paths_active"] == maps
    assert counts["dbhost_multipath_suspended"] == maps
    assert counts["dbhost_scsi_device_state"] == n
    # the identity the pages join with for the role: every map's dbhost_lun_info is kept
    info = {s.labels["device"] for f in fams if f.name == "dbhost_lun" for s in f.samples}
    assert {f"dm-{m}" for m in range(maps)} <= info
    # what was cut is the bulky per-LUN data, and the total is exactly the cap
    assert sum(v for k, v in counts.items() if not k.startswith("dbhost_collector")
               and k != "dbhost_exporter_build") == 10000
    assert counts["dbhost_lun_queue_full_samples"] < n


def test_health_families_come_first_in_collector_order(tree):
    names = [f.name for f in LunCollector(str(tree.procfs), str(tree.sysfs)).collect()]
    first_bulky = names.index("dbhost_lun")
    assert {"dbhost_multipath_paths", "dbhost_multipath_paths_active", "dbhost_multipath_suspended",
            "dbhost_scsi_device_state"} <= set(names[:first_bulky])


@pytest.mark.slow
def test_deploy_config_fits_the_documented_1024_path_tree_with_margin(tmp_path):
    cfg = load_config(str(DEPLOY))
    fx = mf.build_scale_tree(tmp_path / "s1024", n_paths=1024)
    counts, dropped, _ = _scrape(fx, cfg.max_series)
    assert dropped == 0
    total = sum(v for k, v in counts.items() if k.startswith(("dbhost_lun", "dbhost_scsi", "dbhost_multipath")))
    assert total > 16000                                 # 16,393 series measured
    assert cfg.max_series >= 2.5 * total, (cfg.max_series, total)   # room for 4-path LUNs, ALUA states
