"""Fixtures for the dbhost-exporter tests; plain helpers live in dbhost_support.py."""
from __future__ import annotations


import pytest

import make_fixtures  # noqa: E402


@pytest.fixture
def tree(tmp_path):
    return make_fixtures.build_tree(tmp_path / "tree", with_proc=False)
