"""Hardening suites: fuzzing, churn, load, faults and security, over raw JSON-RPC.

The default run is bounded for CI; ``CHUNKLS_HARDENING=long`` runs the long
variants (more examples, steps, requests and cycles).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.hardening.rpc import RawServer

LONG = os.environ.get("CHUNKLS_HARDENING", "").lower() == "long"
"""Whether to run the long variants."""

FIXTURES = Path(__file__).parent.parent / "fixtures"


def scaled(default: int, long: int) -> int:
    """A count for the default run or the long one."""
    return long if LONG else default


def copy_fixtures(base: Path) -> Path:
    """The e2e fixture workspace (and its ``second`` folder) under ``base``."""
    root = base / "workspace"
    shutil.copytree(FIXTURES / "workspace", root)
    shutil.copytree(FIXTURES / "second", base / "second")
    return root


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``XDG_CACHE_HOME`` (for this process and the servers it starts)."""
    cache = tmp_path / "xdg-cache"
    cache.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture
def start_server(tmp_path: Path, isolated_cache: Path) -> Iterator[Callable[..., RawServer]]:
    """Start raw servers (each killed at the end of the test if still running)."""
    started: list[RawServer] = []

    def start(**kwargs: object) -> RawServer:
        server = RawServer(tmp_path / f"server-{len(started)}.stderr", **kwargs)  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()
