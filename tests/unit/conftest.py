"""Fixtures of the persistent index's tests (``test_cache``, ``test_mapped``); a
module with a fixture of the same name uses its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.strategies import small_corpus


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small corpus (``small_corpus``) in a fresh folder."""
    return small_corpus(tmp_path / "ws")


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A cache directory of the test's own."""
    return tmp_path / "cache"
