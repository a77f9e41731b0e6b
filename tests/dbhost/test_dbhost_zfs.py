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


@pytest.mark.parametrize("bad,where", [
    ("size                            4    12x34", "value of size is not an integer"),
    ("c                               4", "not a kstat row"),          # truncated row
    ("c_min 4 5 6", "not a kstat row"),                                # too many fields
    ("\x00\xff garbage", "not a kstat row"),
    ("l2_hits                         x    77", "not a kstat row"),    # type not a number
])
def test_a_damaged_row_fails_naming_the_line(bad, where):
    """A row the kernel cannot have written means the file is damaged or not arcstats: the
    collector fails (success 0) with the line, instead of exporting fewer series (issue 10.5)."""
    good = mf.linux_arcstats_text(mf.ARC_FIELDS_22).splitlines()
    text = "\n".join(good[:3] + [bad] + good[3:])
    with pytest.raises(ValueError, match=rf"^/p/arcstats line 4: {where}"):
        parse_linux_arcstats(text, "/p/arcstats")


def test_rows_that_are_not_integers_by_type_and_negative_int64_are_fine():
    good = mf.linux_arcstats_text(mf.ARC_FIELDS_22).splitlines()
    text = "\n".join(good[:2] + [
        "c_max                           9    100",       # not an integer kstat type: skipped
        "some_string                     7    abc",       # STRING
        "l2_hits                         4    77",
        "mfu_hits                        4    -5",        # int64 types may be negative: kept as read
    ])
    stats = parse_linux_arcstats(text)
    assert stats == {"l2_hits": 77, "mfu_hits": -5}
    got = scrape(_Static(stats))
    assert value(got, "dbhost_zfs_l2arc_hits_total") == 77
    assert ("dbhost_zfs_arc_state_hits_total", (("state", "mfu"),)) not in got   # negative: left out


@pytest.mark.parametrize("text,msg", [("", "no 'name type data' line"),
                                      ("13 1 0x01 0 0 1 2\nname type data\n", "no statistics"),
                                      ("hits 4 5\n", "no 'name type data' line")])
def test_empty_or_headless_arcstats_fails(text, msg):
    with pytest.raises(ValueError, match=msg):
        parse_linux_arcstats(text)


def test_empty_or_garbage_arcstats_file_is_a_collector_failure(tmp_path):
    d = tmp_path / "spl/kstat/zfs"
    d.mkdir(parents=True)
    for content in ("", "garbage\n", mf.linux_arcstats_text(mf.ARC_FIELDS_22)[:300]):
        (d / "arcstats").write_text(content)
        with pytest.raises(ValueError, match=str(d / "arcstats")):
            list(ZfsCollector(str(tmp_path), allow_command=False).collect())


class _Static(ZfsCollector):
    def __init__(self, stats):
        super().__init__("/nonexistent", allow_command=False)
        self._stats = stats

    def _read(self):
        return self._stats


def test_kstat_p_skips_foreign_kstats_and_text_rows():
    text = ("zfs:0:arcstats:class\tmisc\nzfs:0:arcstats:crtime\t64.352843596\n"
            "zfs:0:arcstats:hits\t123\nunix:0:system_misc:ncpus\t8\nzfs:0:arcstats:size 456\n")
    assert parse_kstat_p(text) == {"hits": 123, "size": 456}


@pytest.mark.parametrize("bad,msg", [("zfs:0:arcstats:c\t", "value of c is not an integer"),
                                     ("zfs:0", "not a kstat -p row"),
                                     ("zfs:0:arcstats:size\t12x", "value of size is not an integer")])
def test_kstat_p_damaged_lines_fail_naming_the_line(bad, msg):
    with pytest.raises(ValueError, match=rf"^k.txt line 2: {msg}"):
        parse_kstat_p("zfs:0:arcstats:hits\t123\n" + bad + "\n", "k.txt")
    with pytest.raises(ValueError, match="no zfs:N:arcstats statistics"):
        parse_kstat_p("unix:0:system_misc:ncpus\t8\n")


def test_configured_kstat_file_missing_is_a_collector_failure(tmp_path):
    col = ZfsCollector(str(tmp_path), kstat_file=str(tmp_path / "missing.txt"))
    with pytest.raises(OSError, match="missing.txt"):
        list(col.collect())


def test_stale_kstat_file_says_its_age(tmp_path):
    # review host finding 10: a capture job that stopped 3 days ago leaves frozen counters served
    # with success 1; the file's mtime (like node_textfile_mtime_seconds) tells their age
    import os
    import time
    fx = mf.build_tree(tmp_path / "t", arcstats=None, with_proc=False)
    three_days_ago = time.time() - 3 * 86400
    os.utime(fx.kstat_file, (three_days_ago, three_days_ago))
    col = ZfsCollector(str(fx.procfs), kstat_file=str(fx.kstat_file))
    got = scrape(col)
    age = time.time() - value(got, "dbhost_zfs_kstat_file_mtime_seconds", file=str(fx.kstat_file))
    assert 3 * 86400 - 5 < age < 3 * 86400 + 60
    fx.kstat_file.write_text(fx.kstat_file.read_text())      # the job writes again
    got = scrape(col)
    assert time.time() - value(got, "dbhost_zfs_kstat_file_mtime_seconds", file=str(fx.kstat_file)) < 60


def test_no_mtime_series_without_a_kstat_file(tmp_path):
    fx = mf.build_tree(tmp_path / "t", with_proc=False)
    got = scrape(ZfsCollector(str(fx.procfs)))
    assert any(k[0] == "dbhost_zfs_arc_size_bytes" for k in got)
    assert not any(k[0] == "dbhost_zfs_kstat_file_mtime_seconds" for k in got)
