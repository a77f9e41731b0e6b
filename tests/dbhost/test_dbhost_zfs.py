"""ZFS collector: OpenZFS 2.1 / 2.2 arcstats and illumos kstat -p text from the generator."""
from __future__ import annotations

import logging

import pytest

import make_fixtures as mf
from dbhost_support import samples, value
from prometheus_client import CollectorRegistry, generate_latest

from dbhost_exporter.collectors.zfs import ZfsCollector, parse_kstat_p, parse_linux_arcstats

KINDS = ("demand_data", "demand_metadata", "prefetch_data", "prefetch_metadata")


def scrape(collector) -> dict:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(collector)
    return samples(generate_latest(reg).decode())


def check_common(got, fields):
    v = mf.arc_values(fields)
    for kind in KINDS:
        assert value(got, "dbhost_zfs_arc_hits_total", kind=kind) == v[f"{kind}_hits"]
        assert value(got, "dbhost_zfs_arc_misses_total", kind=kind) == v[f"{kind}_misses"]
    # per-kind hits add up to the file's own "hits" row: nothing lost, nothing counted twice
    assert sum(value(got, "dbhost_zfs_arc_hits_total", kind=k) for k in KINDS) == v["hits"]
    assert value(got, "dbhost_zfs_arc_hits_total", kind="demand_data") == 48_602_473
    for state in ("mru", "mfu", "mru_ghost", "mfu_ghost"):
        assert value(got, "dbhost_zfs_arc_state_hits_total", state=state) == v[f"{state}_hits"]
    assert value(got, "dbhost_zfs_arc_size_bytes") == v["size"] == 68_719_476_736
    assert value(got, "dbhost_zfs_arc_target_bytes") == v["c"]
    assert value(got, "dbhost_zfs_arc_min_bytes") == v["c_min"]
    assert value(got, "dbhost_zfs_arc_max_bytes") == v["c_max"]
    assert value(got, "dbhost_zfs_l2arc_hits_total") == v["l2_hits"]
    assert value(got, "dbhost_zfs_l2arc_misses_total") == v["l2_misses"]
    assert value(got, "dbhost_zfs_l2arc_size_bytes") == v["l2_size"]
    assert value(got, "dbhost_zfs_l2arc_allocated_bytes") == v["l2_asize"]
    assert value(got, "dbhost_zfs_l2arc_read_bytes_total") == v["l2_read_bytes"]
    assert value(got, "dbhost_zfs_l2arc_written_bytes_total") == v["l2_write_bytes"]
    assert value(got, "dbhost_zfs_l2arc_feeds_total") == v["l2_feeds"]
    assert value(got, "dbhost_zfs_l2arc_errors_total", kind="io") == v["l2_io_error"] == 1
    assert value(got, "dbhost_zfs_l2arc_errors_total", kind="checksum") == v["l2_cksum_bad"] == 7
    assert value(got, "dbhost_zfs_l2arc_write_errors_total") == v["l2_writes_error"] == 2


def test_openzfs_22_has_iohits_and_uncached(tmp_path):
    fx = mf.build_tree(tmp_path / "t", arcstats="2.2", with_proc=False)
    got = scrape(ZfsCollector(str(fx.procfs)))
    check_common(got, mf.ARC_FIELDS_22)
    v = mf.arc_values(mf.ARC_FIELDS_22)
    for kind in KINDS:
        assert value(got, "dbhost_zfs_arc_iohits_total", kind=kind) == v[f"{kind}_iohits"]
    assert sum(value(got, "dbhost_zfs_arc_iohits_total", kind=k) for k in KINDS) == v["iohits"]
    assert value(got, "dbhost_zfs_arc_state_hits_total", state="uncached") == 0


def test_openzfs_21_has_no_iohits(tmp_path):
    fx = mf.build_tree(tmp_path / "t", arcstats="2.1", with_proc=False)
    got = scrape(ZfsCollector(str(fx.procfs)))
    check_common(got, mf.ARC_FIELDS_21)
    assert not [k for k in got if k[0] == "dbhost_zfs_arc_iohits_total"]
    assert ("dbhost_zfs_arc_state_hits_total", (("state", "uncached"),)) not in got


def test_illumos_kstat_file(tmp_path):
    fx = mf.build_tree(tmp_path / "t", arcstats=None, with_proc=False)
    got = scrape(ZfsCollector(str(fx.procfs), kstat_file=str(fx.kstat_file)))
    check_common(got, mf.ARC_FIELDS_ILLUMOS)


def test_parsers_read_every_row_of_the_generated_files():
    text = mf.linux_arcstats_text(mf.ARC_FIELDS_22)
    assert parse_linux_arcstats(text) == mf.arc_values(mf.ARC_FIELDS_22)
    assert parse_kstat_p(mf.illumos_kstat_text()) == mf.arc_values(mf.ARC_FIELDS_ILLUMOS)


def test_no_zfs_means_no_metrics_and_one_debug_line(tmp_path, caplog):
    fx = mf.build_tree(tmp_path / "t", arcstats=None, with_proc=False)
    col = ZfsCollector(str(fx.procfs), allow_command=False)
    with caplog.at_level(logging.DEBUG, logger="dbhost_exporter.collectors.zfs"):
        assert list(col.collect()) == []
        assert list(col.collect()) == []
    records = [r for r in caplog.records if r.name == "dbhost_exporter.collectors.zfs"]
    assert len(records) == 1 and records[0].levelno == logging.DEBUG


def test_malformed_and_truncated_rows_are_skipped():
    good = mf.linux_arcstats_text(mf.ARC_FIELDS_22).splitlines()
    hostile = "\n".join(good[:3] + [
        "size                            4    12x34",     # not a number
        "c                               4",              # truncated row
        "c_max                           9    100",       # not an integer kstat type
        "c_min 4 5 6",                                    # too many fields
        "\x00\xff garbage",
        "l2_hits                         4    77",
        "mfu_hits                        4    -5",        # int64 types may be negative: kept as read
    ] + [good[-1][:10]])                                  # final line cut mid-name
    stats = parse_linux_arcstats(hostile)
    assert stats["l2_hits"] == 77
    assert "size" not in stats and "c" not in stats and "c_max" not in stats and "c_min" not in stats
    got = scrape(_Static(stats))
    assert value(got, "dbhost_zfs_l2arc_hits_total") == 77
    assert ("dbhost_zfs_arc_size_bytes", ()) not in got


class _Static(ZfsCollector):
    def __init__(self, stats):
        super().__init__("/nonexistent", allow_command=False)
        self._stats = stats

    def _read(self):
        return self._stats


def test_kstat_p_skips_foreign_and_non_numeric_lines():
    text = ("zfs:0:arcstats:class\tmisc\nzfs:0:arcstats:crtime\t64.352843596\n"
            "zfs:0:arcstats:hits\t123\nunix:0:system_misc:ncpus\t8\nzfs:0:arcstats:size 456\n"
            "zfs:0:arcstats:c\t\nzfs:0\n")
    assert parse_kstat_p(text) == {"hits": 123, "size": 456}


def test_configured_kstat_file_missing_is_a_collector_failure(tmp_path):
    col = ZfsCollector(str(tmp_path), kstat_file=str(tmp_path / "missing.txt"))
    with pytest.raises(OSError, match="missing.txt"):
        list(col.collect())
