"""The LUN collector against device shapes the golden tree lacks (make_fixtures.build_variant_tree):
sr0, native NVMe multipath with hidden paths, kpartx/LVM/crypt dm maps, paths without device/wwid,
t10./eui. WWIDs, virtio/Xen/cciss disks, partitions, and the 14/18/20-field /proc/diskstats layouts.
Every expectation is computed from the generator's spec constants."""
from __future__ import annotations

import shutil
import subprocess

import pytest
from prometheus_client import CollectorRegistry, generate_latest

import make_fixtures as mf
from dbhost_support import run_once, samples, value

from dbhost_exporter.collectors.lun import (KINDS, LunCollector, LunConfig, RoleRule, device_label,
                                            normalize_wwid, parse_diskstats, wwid_key)


def scrape(collector) -> dict:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(collector)
    return samples(generate_latest(reg).decode())


def devices(got, metric="dbhost_lun_info") -> set[str]:
    return {dict(k[1])["device"] for k in got if k[0] == metric}


def info(got, device) -> dict:
    rows = [dict(k[1]) for k in got if k[0] == "dbhost_lun_info" and dict(k[1])["device"] == device]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.fixture
def vtree(tmp_path):
    return mf.build_variant_tree(tmp_path / "v")


def test_cdrom_is_not_a_lun_even_with_every_kind(vtree):
    # sr0 has an H:C:T:L device like a disk; it was reported as a SCSI LUN before the review
    for kinds in (None, frozenset(KINDS)):
        cfg = LunConfig() if kinds is None else LunConfig(include_types=kinds)
        got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs), cfg))
        assert "sr0" not in devices(got)
        assert not any(dict(k[1]).get("device") == "sr0" for k in got)


def test_nvme_native_multipath_hidden_paths_counted_once_under_the_head(vtree):
    nv = mf.VARIANT_NVME
    for kinds in (None, frozenset(KINDS)):       # hidden paths stay out even when "other" is asked for
        cfg = LunConfig() if kinds is None else LunConfig(include_types=kinds)
        got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs), cfg))
        for path, *_ in nv["paths"]:
            assert path not in devices(got, "dbhost_lun_info")
            assert path not in devices(got, "dbhost_lun_inflight_requests")
        # the head's own inflight reads 0 (bio-based, queue/iostats off); the requests are on the paths
        assert value(got, "dbhost_lun_inflight_requests", device=nv["head"], queue="lun") == \
            sum(sum(p[2]) for p in nv["paths"]) == 11
        assert value(got, "dbhost_lun_inflight_requests", device=nv["head"], queue="host") == \
            sum(max(0, p[3] - sum(p[2])) for p in nv["paths"]) == 2
    i = info(got, nv["head"])
    assert i["model"] == nv["model"] and i["wwid"] == nv["wwid"] and i["multipath"] == nv["head"]


def test_only_mpath_maps_are_multipath(vtree):
    got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs), LunConfig(include_types=frozenset(KINDS))))
    for name, *_ in mf.VARIANT_DM_SKIP:        # kpartx partition of a map, dm-crypt, LVM
        assert name not in devices(got)
    mp = mf.VARIANT_MPATH
    assert info(got, mp["dm"])["wwid"] == mp["wwid"]


def test_paths_without_device_wwid_inherit_the_map_wwid_and_role(vtree):
    # kernels before scsi_vpd_lun_id (4.5) have no device/wwid; the map's uuid names the LUN
    cfg = LunConfig(roles=[RoleRule("wwid", "naa." + mf.VARIANT_MPATH["wwid"][1:], "redo")])
    got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs), cfg))
    mp = mf.VARIANT_MPATH
    for name, _minor, hctl, busy, prog in mp["paths"]:
        i = info(got, name)
        assert (i["wwid"], i["multipath"], i["role"], i["hctl"]) == (mp["wwid"], mp["name"], "redo", hctl)
        assert value(got, "dbhost_lun_inflight_requests", device=name, queue="lun") == busy
        assert value(got, "dbhost_lun_inflight_requests", device=name, queue="host") == max(0, prog - busy)
    assert info(got, mp["dm"])["role"] == "redo"


def test_wwid_forms_and_role_matching():
    # kernel scsi_vpd_lun_id: "eui.%8phN" is lower-case hex, any first digit; scsi_id spells it 2<hex>
    assert normalize_wwid("eui.0025385b71b0f1a2") == "20025385b71b0f1a2"
    assert normalize_wwid("naa.5000C500A1B2C3D4") == "35000c500a1b2c3d4"
    # an NVMe NGUID id and its rule match whatever the first digit (the old code only matched eui.0...)
    assert wwid_key("eui.e8238fa6bf530001001b448b4a1c2d3e") == wwid_key("EUI.E8238FA6BF530001001B448B4A1C2D3E")
    assert wwid_key("t10.ATA     ST600MM0009                             WAF0A1B2") == "1ata_st600mm0009_waf0a1b2"
    assert wwid_key("1ATA_ST600MM0009_WAF0A1B2") == "1ata_st600mm0009_waf0a1b2"
    assert wwid_key("naa.600a098038303053453f463045727a41") == wwid_key("3600A098038303053453F463045727A41")


def test_roles_by_t10_eui_and_nvme_wwid_from_the_config_file(vtree):
    proc = run_once("--path.procfs", str(vtree.procfs), "--path.sysfs", str(vtree.sysfs),
                    "--config.file", str(vtree.config))
    assert proc.returncode == 0, proc.stderr
    if shutil.which("promtool"):
        res = subprocess.run(["promtool", "check", "metrics"], input=proc.stdout, capture_output=True, text=True)
        assert res.returncode == 0 and not res.stdout.strip() and not res.stderr.strip(), res.stdout + res.stderr
    got = samples(proc.stdout)
    t10, eui = mf.VARIANT_T10, mf.VARIANT_EUI
    assert info(got, t10[0])["role"] == "arch" and info(got, t10[0])["wwid"] == t10[5]
    assert info(got, eui[0])["role"] == "data" and info(got, eui[0])["wwid"] == "2" + eui[5][4:]
    assert info(got, mf.VARIANT_NVME["head"])["role"] == "data"
    # padded vendor/model come out stripped
    assert (info(got, t10[0])["vendor"], info(got, t10[0])["model"]) == ("ATA", "ST600MM0009")


def test_virtio_and_xen_disks_are_on_by_default_cciss_only_when_configured(vtree):
    """Issue 14.4: on a KVM/OpenStack (vda) or Xen (xvda) database host these are the disks."""
    got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs)))
    assert {"vda", "xvda"} <= devices(got)
    assert "cciss/c0d0" not in devices(got)
    for name in ("vda", "xvda"):
        assert value(got, "dbhost_lun_inflight_requests", device=name, queue="lun") >= 0
    got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs), LunConfig(include_types=frozenset({"scsi"}))))
    assert not {"vda", "xvda"} & devices(got)
    cfg = LunConfig(include_types=frozenset({"virtio", "xen", "other"}),
                    roles=[RoleRule("device", "cciss/c0d0", "arch")])
    got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs), cfg))
    assert devices(got) == {"vda", "xvda", "cciss/c0d0"}
    for name, _maj, _min, _dir, _link, infl, prog in mf.VARIANT_OTHER:
        label = name.replace("!", "/")          # diskstats / node_exporter spelling
        assert value(got, "dbhost_lun_inflight_requests", device=label, queue="lun") == sum(infl)
        assert value(got, "dbhost_lun_inflight_requests", device=label, queue="host") == max(0, prog - sum(infl))
    assert info(got, "cciss/c0d0")["role"] == "arch"


def test_diskstats_names_with_slash_key_the_sysfs_name():
    assert parse_diskstats(" 104       0 cciss/c0d0 1 2 3 4 5 6 7 8 9 10 11\n") == {"cciss!c0d0": 9}
    assert device_label("cciss!c0d0") == "cciss/c0d0"


def test_partitions_are_never_luns(vtree):
    got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs), LunConfig(include_types=frozenset(KINDS))))
    assert not {d for d in devices(got) if d[-1].isdigit() and d.startswith("sd")}


@pytest.mark.parametrize("nfields", [14, 18, 20])
def test_diskstats_layouts_give_the_same_host_queue(tmp_path, nfields):
    fx = mf.build_variant_tree(tmp_path / "v", nfields=nfields)
    first = (fx.procfs / "diskstats").read_text().splitlines()[0].split()
    assert len(first) == nfields
    got = scrape(LunCollector(str(fx.procfs), str(fx.sysfs)))
    mp = mf.VARIANT_MPATH
    assert value(got, "dbhost_lun_inflight_requests", device=mp["dm"], queue="host") == \
        mp["in_progress"] - sum(mp["inflight"]) == 21
    for name, _minor, _hctl, busy, prog in mp["paths"]:
        assert value(got, "dbhost_lun_inflight_requests", device=name, queue="host") == max(0, prog - busy)
    assert value(got, "dbhost_kernel_info", release=mf.VARIANT_KERNELS[nfields],
                 host_queue_visible={14: "partial", 18: "partial", 20: "false"}[nfields]) == 1


def test_scsi_host_cmd_per_lun(tree):
    got = scrape(LunCollector(str(tree.procfs), str(tree.sysfs)))
    for host, cpl in mf.CMD_PER_LUN.items():
        assert value(got, "dbhost_scsi_host_cmd_per_lun", host=f"host{host}") == cpl


def test_sysfs_hidden_attribute_hides_any_device(tree):
    # GENHD_FL_HIDDEN is generic; a hidden disk of another driver is skipped too
    (tree.sysfs / "block/sde/hidden").write_text("1\n")
    got = scrape(LunCollector(str(tree.procfs), str(tree.sysfs)))
    assert "sde" not in devices(got)
    assert "sda" in devices(got)


def test_virtio_disk_has_its_serial_as_stable_identity(vtree):
    # review host finding 9: vdX names change with attach order; the serial does not
    # (/dev/disk/by-id/virtio-<serial>; OpenStack: the volume id cut to 20 characters)
    got = scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs)))
    assert info(got, "vda")["wwid"] == "virtio-" + mf.VARIANT_VIRTIO_SERIAL
    assert info(got, "xvda")["wwid"] == ""
    cfg = LunConfig(roles=[RoleRule("wwid", "virtio-" + mf.VARIANT_VIRTIO_SERIAL, "redo")])
    assert info(scrape(LunCollector(str(vtree.procfs), str(vtree.sysfs), cfg)), "vda")["role"] == "redo"


def test_virtio_serial_values():
    from dbhost_exporter.collectors.lun import virtio_id
    assert virtio_id("8b1c6f0e-3d2a-4e5b-9") == "virtio-8b1c6f0e-3d2a-4e5b-9"
    assert virtio_id("") == virtio_id(None) == ""
    assert virtio_id("QM 00001") == "virtio-QM_00001"          # blanks as udev writes them
    assert virtio_id("x" * 21) == ""                             # longer than virtio allows
    assert virtio_id("bad\x01") == ""
