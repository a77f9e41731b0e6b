"""A bigger host: many paths and maps, files larger than one read() chunk."""
from __future__ import annotations

from collections import Counter

import pytest

import make_fixtures as mf

from dbhost_exporter.collectors.lun import LunCollector, parse_diskstats
from dbhost_exporter.sysfs import read_text


def test_large_diskstats_is_read_completely(tmp_path):
    # 3000 devices: ~250 KiB, several read() chunks (a single 64 KiB read once lost the tail)
    text = "".join(mf._diskstat(8 + i // 16, (i % 16) * 16, f"sd{mf._sd_suffix(i)}", i % 97, i % 50)
                   for i in range(3000))
    path = tmp_path / "diskstats"
    path.write_text(text)
    assert len(text) > 3 * 65536
    assert read_text(str(path)) == text
    parsed = parse_diskstats(read_text(str(path)))
    assert len(parsed) == 3000
    assert parsed["sd" + mf._sd_suffix(2999)] == 2999 % 97


@pytest.mark.slow
def test_scale_tree_every_device_reported(tmp_path):
    n = 256
    fx = mf.build_scale_tree(tmp_path / "big", n_paths=n)
    col = LunCollector(str(fx.procfs), str(fx.sysfs))
    fams = list(col.collect())
    counts = Counter({f.name: len(f.samples) for f in fams})
    maps = n // 2
    assert counts["dbhost_lun"] == n + maps
    assert counts["dbhost_lun_queue_depth"] == n
    assert counts["dbhost_lun_inflight_requests"] == 2 * (n + maps)
    assert counts["dbhost_lun_iorequests"] == n
    assert counts["dbhost_scsi_host_can_queue"] == 4
    by = {(s.labels["device"], s.labels["queue"]): s.value
          for f in fams if f.name == "dbhost_lun_inflight_requests" for s in f.samples}
    for i in range(n):
        name = "sd" + mf._sd_suffix(i)
        assert by[(name, "lun")] == i % 33
        assert by[(name, "host")] == max(0, i % 40 - i % 33)
    info = {s.labels["device"]: s.labels for f in fams if f.name == "dbhost_lun" for s in f.samples}
    assert info["sda"]["multipath"] == "lun0000" and info["sdb"]["multipath"] == "lun0000"
    assert info["sdc"]["multipath"] == "lun0001"
    assert info["dm-5"]["wwid"] == info["sd" + mf._sd_suffix(10)]["wwid"] == "3600a0980383030534" + f"{5:015x}"
    assert info["sd" + mf._sd_suffix(255)]["hctl"] == "13:0:1:127"


def test_sd_names_follow_the_kernel_scheme():
    assert [mf._sd_suffix(i) for i in (0, 25, 26, 27, 701, 702)] == ["a", "z", "aa", "ab", "zz", "aaa"]
