"""End to end: `dbhost-exporter --once` on the generated fixture tree, diffed against
tests/dbhost/expected/fixture.prom (reviewed by hand). Regenerate with

    .venv/bin/python tests/dbhost/test_dbhost_golden.py --update

then read the diff before accepting it."""
from __future__ import annotations

import difflib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
from dbhost_support import run_once  # noqa: E402
import make_fixtures  # noqa: E402

EXPECTED = HERE / "expected" / "fixture.prom"
_DURATION = re.compile(r"^(dbhost_collector_duration_seconds\{[^}]*\}) \S+$", re.M)
# the exporter's own process metrics (last in the exposition): their values are the process's
_PROCESS = re.compile(r"^(process_[a-z_]+) \S+$", re.M)


def normalize(text: str) -> str:
    """The only values that change from run to run are how long a collector took and the
    exporter process's own metrics."""
    return _PROCESS.sub(r"\1 <value>", _DURATION.sub(r"\1 <duration>", text))


def exposition(root: Path) -> str:
    fx = make_fixtures.build_tree(root, with_proc=True)
    proc = run_once("--path.procfs", str(fx.procfs), "--path.sysfs", str(fx.sysfs),
                    "--config.file", str(fx.config))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_fixture_exposition_matches_reviewed_file(tmp_path):
    got = normalize(exposition(tmp_path / "tree"))
    want = EXPECTED.read_text()
    diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "expected", "got"))
    assert got == want, diff


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_fixture_exposition_passes_promtool(tmp_path):
    text = exposition(tmp_path / "tree")
    res = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip() == "" and res.stderr.strip() == "", res.stdout + res.stderr


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        print(__doc__)
        sys.exit(2)
    with tempfile.TemporaryDirectory() as d:
        EXPECTED.parent.mkdir(exist_ok=True)
        EXPECTED.write_text(normalize(exposition(Path(d) / "tree")))
    print(f"wrote {EXPECTED}")
