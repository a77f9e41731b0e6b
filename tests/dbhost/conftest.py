"""Fixtures for the dbhost-exporter tests; plain helpers live in dbhost_support.py."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import make_fixtures  # noqa: E402


@pytest.fixture
def tree(tmp_path):
    return make_fixtures.build_tree(tmp_path / "tree", with_proc=False)
