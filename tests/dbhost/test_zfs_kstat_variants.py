"""The ZFS collector: kstat integer types, negative and 2^64-1 values, field sets it does not
know (a newer OpenZFS, a Solaris/illumos build without some rows), kstat -p text with CRLF, class,
crtime/snaptime. Inputs come from the make_fixtures generators (SPL row format "%-31s %-4u %llu")."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

import make_fixtures as mf
from dbhost_support import samples, value

from dbhost_exporter.collectors.zfs import ZfsCollector, parse_kstat_p, parse_linux_arcstats


def scrape_text(tmp_path, text: str, kstat: bool = False) -> dict:
    if kstat:
        f = tmp_path / "kstat.txt"
        f.write_text(text)
        col = ZfsCollector(str(tmp_path), kstat_file=str(f))
    else:
        d = tmp_path / "spl/kstat/zfs"
        d.mkdir(parents=True)
        (d / "arcstats").write_text(text)
        col = ZfsCollector(str(tmp_path))
    reg = CollectorRegistry(auto_describe=False)
    reg.register(col)
    return samples(generate_latest(reg).decode())


def _row(name: str, kstat_type: int, v) -> str:
    return f"{name:<31} {kstat_type:<4} {v}"


def test_all_integer_kstat_types_are_read_char_and_string_are_not():
    head = mf.linux_arcstats_text(mf.ARC_FIELDS_22).splitlines()[:2]   # kstat header + "name type data"
    text = "\n".join(head + [
        _row("l2_hits", 6, 17), _row("l2_misses", 5, 3), _row("c_min", 2, 1024), _row("l2_feeds", 1, 9),
        _row("l2_size", 0, 55), _row("l2_asize", 7, 66)]) + "\n"
    assert head[1].split() == ["name", "type", "data"]
    got = parse_linux_arcstats(text)
    assert {k: got[k] for k in ("l2_hits", "l2_misses", "c_min", "l2_feeds")} == \
        {"l2_hits": 17, "l2_misses": 3, "c_min": 1024, "l2_feeds": 9}
    assert "l2_size" not in got and "l2_asize" not in got


def test_negative_values_are_dropped_huge_ones_kept(tmp_path):
    fields = mf.ARC_FIELDS_22
    values = mf.arc_values(fields)
    text = mf.linux_arcstats_text(fields)
    # l2_cksum_bad garbled to a negative number, l2_io_error at 2^64-1 (a uint64 kstat at its maximum)
    text = text.replace(_row("l2_cksum_bad", 4, values["l2_cksum_bad"]), _row("l2_cksum_bad", 3, -7))
    text = text.replace(_row("l2_io_error", 4, values["l2_io_error"]), _row("l2_io_error", 4, 2**64 - 1))
    got = scrape_text(tmp_path, text)
    assert ("dbhost_zfs_l2arc_errors_total", (("kind", "checksum"),)) not in got
    assert value(got, "dbhost_zfs_l2arc_errors_total", kind="io") == float(2**64 - 1)
    assert value(got, "dbhost_zfs_l2arc_hits_total") == values["l2_hits"]


def test_unknown_rows_of_a_newer_release_change_nothing(tmp_path):
    # a release that adds rows (anywhere) and drops some we do not use must parse the same
    fields = list(mf.ARC_FIELDS_22)
    extended = fields[:20] + ["evict_skips_future", "arc_evict_blocks"] + fields[20:] + ["new_counter_x"]
    base, ext = parse_linux_arcstats(mf.linux_arcstats_text(fields)), \
        parse_linux_arcstats(mf.linux_arcstats_text(extended))
    for k in ("demand_data_hits", "demand_metadata_misses", "prefetch_data_iohits", "size", "c", "c_max",
              "l2_hits", "l2_misses", "l2_size", "l2_cksum_bad", "l2_io_error", "l2_writes_error"):
        assert ext[k] == base[k] == mf.ARC_VALUES[k]


def test_kstat_p_with_crlf_and_a_partial_field_set(tmp_path):
    # a build without the metadata split, without L2ARC rows and without c_min: emit what exists
    rows = {"hits": 900, "misses": 100, "demand_data_hits": 700, "demand_data_misses": 60,
            "prefetch_data_hits": 200, "prefetch_data_misses": 40, "mru_hits": 300, "mfu_hits": 600,
            "size": 4096, "c": 8192, "c_max": 16384}
    text = "".join(f"zfs:0:arcstats:{k}\t{v}\r\n" for k, v in rows.items())
    text += "zfs:0:arcstats:class\tmisc\r\nzfs:0:arcstats:crtime\t64.352843596\r\n" \
            "zfs:0:arcstats:snaptime\t8127345.778390471\r\n"
    assert parse_kstat_p(text) == rows
    got = scrape_text(tmp_path, text, kstat=True)
    assert value(got, "dbhost_zfs_arc_hits_total", kind="demand_data") == 700
    assert value(got, "dbhost_zfs_arc_misses_total", kind="prefetch_data") == 40
    assert ("dbhost_zfs_arc_hits_total", (("kind", "demand_metadata"),)) not in got
    assert value(got, "dbhost_zfs_arc_state_hits_total", state="mfu") == 600
    assert value(got, "dbhost_zfs_arc_max_bytes") == 16384
    assert not any(k[0].startswith("dbhost_zfs_l2arc") for k in got)
    assert ("dbhost_zfs_arc_min_bytes", ()) not in got
