"""Issue 27: `make bench` writes outside the tracked tree unless asked (build/bench/RESULTS.md;
--write-results for bench/RESULTS.md), removes the trees it generated in the temporary
directory, and a bad option is one line."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from e2e_support import ROOT

import bench.run as bench_run  # noqa: E402


def _fake_lun(monkeypatch, seen: dict):
    def measure(tree, scrapes, node_binary=None, n_paths=1024):
        root = pathlib.Path(tree)
        root.mkdir(parents=True)
        (root / "big").write_bytes(b"\0" * (1 << 20))         # what a generated tree leaves
        seen["tree"] = root
        return {"scrapes": scrapes}
    monkeypatch.setattr(bench_run.lun, "measure", measure)
    monkeypatch.setattr(bench_run.lun, "section", lambda res, n: ["## LUN and ZFS collectors vs node_exporter", "",
                                                                  f"fake: {res['scrapes']} scrapes"])


def test_bench_writes_build_results_and_removes_its_trees(tmp_path, monkeypatch):
    tracked = ROOT / "bench" / "RESULTS.md"
    before = tracked.read_bytes()
    out = tmp_path / "build" / "bench" / "RESULTS.md"
    monkeypatch.setattr(bench_run, "DEFAULT_RESULTS", out)
    seen: dict = {}
    _fake_lun(monkeypatch, seen)
    assert bench_run.main(["--only", "lun", "--lun-scrapes", "3"]) == 0
    assert tracked.read_bytes() == before                      # the tracked file is untouched
    text = out.read_text()
    assert "fake: 3 scrapes" in text
    # sections not run come from the tracked file, so nothing is dropped
    kept = bench_run.split_sections(before.decode())
    assert set(bench_run.split_sections(text)) == set(kept) | {"lun"}
    assert kept.get("process") is None or kept["process"] in text
    # the generated tree lived in a temporary directory that is gone now
    assert seen["tree"].parent.name.startswith("bench-run-")
    assert not seen["tree"].parent.exists()


def test_bench_write_results_is_the_tracked_file_and_a_given_tree_is_kept(tmp_path, monkeypatch):
    target = tmp_path / "RESULTS.md"
    monkeypatch.setattr(bench_run, "TRACKED_RESULTS", target)
    seen: dict = {}
    _fake_lun(monkeypatch, seen)
    mine = tmp_path / "my-lun-tree"
    assert bench_run.main(["--only", "lun", "--write-results", "--lun-tree", str(mine)]) == 0
    assert "fake: 20 scrapes" in target.read_text()
    assert seen["tree"] == mine and (mine / "big").exists()   # the user's tree stays


def test_bench_results_dash_prints_and_writes_no_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    tracked = ROOT / "bench" / "RESULTS.md"
    before = tracked.read_bytes()
    _fake_lun(monkeypatch, {})
    assert bench_run.main(["--only", "lun", "--lun-scrapes", "2", "--results", "-"]) == 0
    assert "fake: 2 scrapes" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == [] and tracked.read_bytes() == before   # no file named "-"


@pytest.mark.parametrize("args,message", [
    (["--scrapes", "abc"], "error: argument --scrapes: invalid int value: 'abc'"),
    (["--only", "nope"], "error: argument --only: invalid choice: 'nope'"),
    (["--results", "x", "--write-results"], "error: give --results FILE or --write-results, not both"),
    (["--scrapes", "0"], "error: scrape counts must be at least 1"),
    (["--databases", "a,b"], "error: --databases: expected comma-separated integers, got 'a,b'"),
])
def test_bench_bad_options_are_one_line(args, message):
    res = subprocess.run([sys.executable, "-m", "bench.run", *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr and "usage:" not in res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(message), line
