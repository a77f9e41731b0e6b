"""Issue 9: the 15 MB of demo recordings are not in the installed package; an installation
generates the one it needs on demand, byte for byte the recording of the repository."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from oracle_exporter import demo

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_recording_is_generated_once_byte_identical(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "DEMO_DIR", tmp_path / "installed")      # an installed package: no .jsonl
    cache = tmp_path / "cache"
    got = demo.path("demo-standby.jsonl", cache_dir=cache)
    assert got == cache / "demo-standby.jsonl"
    assert got.read_bytes() == (ROOT / "exporters/oracle_exporter/demo/demo-standby.jsonl").read_bytes()
    mtime = got.stat().st_mtime_ns
    assert demo.path("demo-standby.jsonl", cache_dir=cache).stat().st_mtime_ns == mtime   # reused, not rewritten
    assert sorted(p.name for p in cache.iterdir()) == [".demo-standby.jsonl.source", "demo-standby.jsonl"]  # no temporary


def test_the_cache_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "DEMO_DIR", tmp_path / "installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert demo.path("demo-standby.jsonl") == tmp_path / "xdg/oracle-exporter/demo/demo-standby.jsonl"


def test_unknown_recording_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown demo recording 'demo-x.jsonl'; known: demo-before.jsonl"):
        demo.path("demo-x.jsonl")


def test_in_a_checkout_the_repository_file_is_used():
    assert demo.path() == ROOT / "exporters/oracle_exporter/demo/demo-before.jsonl"


def test_in_a_checkout_a_missing_recording_is_written_next_to_the_module(tmp_path, monkeypatch):
    """The recordings are not committed: a fresh clone writes each one beside the module on first
    use (git ignores them), byte for byte what the generator writes."""
    fake = tmp_path / "repo" / "exporters" / "oracle_exporter" / "demo"
    fake.mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text("")
    monkeypatch.setattr(demo, "DEMO_DIR", fake)
    got = demo.path("demo-standby.jsonl")
    assert got == fake / "demo-standby.jsonl"
    assert got.read_bytes() == (ROOT / "exporters/oracle_exporter/demo/demo-standby.jsonl").read_bytes()
    assert sorted(p.name for p in fake.iterdir()) == [".demo-standby.jsonl.source", "demo-standby.jsonl"]


def test_a_recording_made_by_other_sources_is_made_again(tmp_path, monkeypatch):
    """A checkout whose generator changed (a pull, an edit) must not replay the old recording."""
    fake = tmp_path / "repo" / "exporters" / "oracle_exporter" / "demo"
    fake.mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text("")
    (fake / "generate_stub.py").write_text("x = 1\n")
    monkeypatch.setattr(demo, "DEMO_DIR", fake)
    got = demo.path("demo-standby.jsonl")
    got.write_text("stale\n")                                 # as if an older generator wrote it
    mtime = got.stat().st_mtime_ns
    assert demo.path("demo-standby.jsonl").read_text() == "stale\n"   # same sources: reused as it is
    assert got.stat().st_mtime_ns == mtime
    (fake / "generate_stub.py").write_text("x = 2\n")           # the sources change
    assert demo.path("demo-standby.jsonl").read_bytes() == \
        (ROOT / "exporters/oracle_exporter/demo/demo-standby.jsonl").read_bytes()


def test_git_ignores_the_generated_recordings():
    res = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q",
                          "exporters/oracle_exporter/demo/demo-before.jsonl"], timeout=30)
    assert res.returncode == 0


@pytest.mark.slow
def test_the_wheel_carries_no_recording_but_every_module(tmp_path):
    src = tmp_path / "src"                 # build from a copy: setuptools writes build/ into the source tree
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "exporters", src / "exporters",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    # --no-build-isolation: the venv's setuptools and wheel (pinned in the test extra) build it,
    # so the test needs no package index (an isolated build downloads its backend)
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                          "--no-index", "-w", str(tmp_path / "dist"), str(src)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not [n for n in names if n.endswith(".jsonl")]
    modules = {str(p.relative_to(ROOT / "exporters")) for p in (ROOT / "exporters").rglob("*.py")
               if "egg-info" not in str(p)}
    assert modules <= names, sorted(modules - names)[:5]
