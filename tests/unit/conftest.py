"""Fixtures of the persistent index's tests (``test_cache``, ``test_mapped``,
the MCP server's); a module with a fixture of the same name uses its own."""

from __future__ import annotations

from pathlib import Path

import pytest

import chunkls.storage.cache
from tests.unit.strategies import small_corpus


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small corpus (``small_corpus``) in a fresh folder."""
    return small_corpus(tmp_path / "ws")


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A cache directory of the test's own."""
    return tmp_path / "cache"


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache directory in ``tmp_path`` (``XDG_CACHE_HOME``), where a
    cache of files written a moment ago counts as current (``RACY_NS`` 0)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(chunkls.storage.cache, "RACY_NS", 0)
    return tmp_path / "xdg"
