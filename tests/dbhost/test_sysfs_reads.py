"""Issue 26.3: the cost of a sysfs read. A LUN scrape reads thousands of one-value attributes; each
must cost one open, one read and one close (no fstat, no second read for the end of the file),
while a multi-page procfs file (seq_file answers a page per read) is still read whole. The
counting wraps the real os functions; nothing is faked."""
from __future__ import annotations

import os
from collections import Counter

import make_fixtures as mf

from dbhost_exporter.collectors.lun import LunCollector
from dbhost_exporter.config import load_config
from dbhost_exporter.sysfs import read_attr, read_int, read_text


def _counting(monkeypatch):
    calls = Counter()
    for fn in ("open", "read", "close", "fstat", "stat"):
        real = getattr(os, fn)

        def wrapper(*a, _real=real, _fn=fn, **kw):
            calls[_fn] += 1
            return _real(*a, **kw)
        monkeypatch.setattr(os, fn, wrapper)
    return calls


def test_a_steady_lun_scrape_reads_each_attribute_once_without_fstat(tmp_path, monkeypatch):
    fx = mf.build_paths_tree(tmp_path / "paths")
    coll = LunCollector(str(fx.procfs), str(fx.sysfs), load_config(str(fx.config)).lun)
    list(coll.collect())                                  # identity read, cached
    calls = _counting(monkeypatch)
    list(coll.collect())
    assert calls["fstat"] == 0 and calls["stat"] == 0
    assert calls["open"] == calls["close"] > 20
    # one read per attribute; /proc/diskstats (read to its end) is the only file read twice
    assert calls["read"] == calls["open"] + 1


def test_one_value_attribute_is_one_read(tmp_path, monkeypatch):
    (tmp_path / "queue_depth").write_text("32\n")
    calls = _counting(monkeypatch)
    assert read_int(str(tmp_path / "queue_depth")) == 32
    assert (calls["open"], calls["read"], calls["close"], calls["fstat"]) == (1, 1, 1, 0)


def test_files_longer_than_one_read_are_read_whole(tmp_path):
    big = "".join(f"{i:4d} {i:7d} sd{i} " + " ".join(["1"] * 17) + "\n" for i in range(3000))   # ~150 KB
    (tmp_path / "diskstats").write_text(big)
    assert read_text(str(tmp_path / "diskstats")) == big
    assert read_attr(str(tmp_path / "diskstats")) == big


def test_a_multi_page_procfs_file_is_read_to_its_end():
    """/proc/self/smaps is a seq_file of many pages: one read returns about a page of it. Every
    mapping's block ends with its VmFlags line, so a cut read has fewer VmFlags than mappings."""
    text = read_text("/proc/self/smaps")
    assert text is not None and len(text) > 3 * 4096
    lines = text.splitlines()
    headers = [ln for ln in lines if ln and ln.split()[0].count("-") == 1 and ":" not in ln.split()[0]]
    assert len(headers) == sum(ln.startswith("VmFlags:") for ln in lines) > 10
    assert lines[-1].startswith("VmFlags:")


def test_a_directory_or_fifo_where_an_attribute_belongs_reads_as_missing(tmp_path):
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "f")
    assert read_attr(str(tmp_path / "d")) is None and read_text(str(tmp_path / "d")) is None
    assert read_int(str(tmp_path / "f")) is None          # O_NONBLOCK: no hang, no value
