"""``chunkls mcp`` before its index is loaded: a call on a single root whose
cache is current is answered from the cache read in place (issue 21: an
agent's session start), exactly as the loaded index answers; a change on disk,
a stale cache, or several roots make the call wait for the index."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from chunkls.cli import main as cli
from chunkls.index.ondisk import DiskIndex
from chunkls.mcp.server import ChunkService

from .strategies import write_tree

TIMEOUT = 30
TREE = {
    "app/greet.py": "def greet(name):\n    return name\n\n\nclass Greeter:\n    pass\n",
    "docs/notes.md": "# Notes\nSee app/greet.py#function-greet and app/greet.py#function-gone.\n",
}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_chunks", {"query": "greet name"}),
    ("read_chunk", {"chunk_id": "app/greet.py#function-greet"}),
    ("read_chunk", {"chunk_id": "app/greet.py#function-gret"}),
    ("outline", {"path": "app/greet.py"}),
    ("check_citations", {"text": "see app/greet.py#class-Greeter, app/x.py#module-1"}),
]


@pytest.fixture
def tree(tmp_path: Path, cache_home: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    write_tree(root, TREE)
    return root


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The index load, held until the event is set."""
    release = threading.Event()
    load = ChunkService.index_roots

    def held_load(self: ChunkService) -> None:
        release.wait(TIMEOUT)
        load(self)

    monkeypatch.setattr(ChunkService, "index_roots", held_load)
    return release


@pytest.fixture
async def started(tree: Path, held: threading.Event) -> AsyncIterator[ChunkService]:
    out = io.StringIO()
    assert cli(["search", "greet", "--root", str(tree)], out, io.StringIO()) == 0, out.getvalue()
    service = ChunkService([tree], [], cache=True)
    service.start()
    try:
        yield service
    finally:
        held.set()
        if service._built is not None:
            await asyncio.wait_for(service._built, TIMEOUT)
        service.close()


async def _loaded_answers(tree: Path) -> list[Any]:
    service = ChunkService([tree], [], cache=False)
    service.start()
    try:
        return [(await service.answer(name, dict(args))).structured for name, args in CALLS]
    finally:
        await asyncio.wait_for(service._built, TIMEOUT)  # type: ignore[arg-type]
        service.close()


async def _until(ask: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not ask():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), TIMEOUT)


async def test_calls_are_answered_in_place_while_the_index_loads(
    tree: Path, started: ChunkService, held: threading.Event
) -> None:
    assert isinstance(started.in_place, DiskIndex)
    answers = [
        (await asyncio.wait_for(started.answer(name, dict(args)), TIMEOUT)).structured
        for name, args in CALLS
    ]
    assert started._built is not None and not started._built.done()  # still loading
    held.set()
    assert answers == await _loaded_answers(tree)


async def test_a_change_on_disk_makes_the_call_wait_for_the_index(
    tree: Path, started: ChunkService, held: threading.Event
) -> None:
    await asyncio.wait_for(started.answer("search_chunks", {"query": "greet"}), TIMEOUT)
    (tree / "app/welcome.py").write_text("def welcome(name):\n    return name\n")
    await _until(started.freshness.pending)
    waiting = asyncio.ensure_future(started.answer("search_chunks", {"query": "welcome"}))
    await asyncio.sleep(0.3)
    assert not waiting.done()  # the cache no longer holds the root as it is
    held.set()
    answer = await asyncio.wait_for(waiting, TIMEOUT)
    assert answer.structured["results"][0]["chunk_id"] == "app/welcome.py#function-welcome"
    assert started.in_place is None  # let go of once the index was loaded


async def test_a_cache_that_turns_out_stale_makes_the_call_wait(
    tree: Path, started: ChunkService, held: threading.Event
) -> None:
    assert started.in_place is not None
    # a file the cache read in place believes it has, with no row behind it
    started.in_place._sources().append("zz_gone.py")  # (sorted: after every other path)
    waiting = asyncio.ensure_future(
        started.answer("read_chunk", {"chunk_id": "zz_gone.py#module-1"})
    )
    await asyncio.sleep(0.3)
    assert not waiting.done() and started.in_place is None
    held.set()
    answer = await asyncio.wait_for(waiting, TIMEOUT)
    assert answer.is_error and "zz_gone.py#module-1" in answer.text


async def test_several_roots_wait_for_the_index(tmp_path: Path, tree: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.py").write_text("def x():\n    return 1\n")
    service = ChunkService([tree, other], [], cache=True)
    service.start()
    try:
        assert service.in_place is None
        answer = await asyncio.wait_for(service.answer("search_chunks", {"query": "x"}), TIMEOUT)
        assert not answer.is_error
    finally:
        await asyncio.wait_for(service._built, TIMEOUT)  # type: ignore[arg-type]
        service.close()
