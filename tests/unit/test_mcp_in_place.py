"""``chunkls mcp`` before its index is loaded: a call on a single root whose
cache is current is answered from the cache read in place (issue 21: an
agent's session start), by the same answering path as once it is loaded, and
says that the index is still loading; a change on disk, a stale cache, or
several roots make the call wait for the index."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chunkls.cli import main as cli
from chunkls.mcp import resources
from chunkls.mcp.server import Loader
from chunkls.mcp.service import McpService
from chunkls.mcp.specs import LOADING_NOTICE

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
    load = McpService.load

    def held_load(self: McpService) -> Iterator[None]:
        while not release.is_set():
            yield
        yield from load(self)

    monkeypatch.setattr(McpService, "load", held_load)
    return release


async def _start(roots: list[Path], cache: bool) -> Loader:
    return Loader(McpService(roots, [], cache))


async def _stop(loader: Loader) -> None:
    assert loader.task is not None
    await asyncio.wait_for(loader.task, TIMEOUT)
    loader.service.close()


@pytest.fixture
async def started(tree: Path, held: threading.Event) -> AsyncIterator[Loader]:
    out = io.StringIO()
    assert cli(["search", "greet", "--root", str(tree)], out, io.StringIO()) == 0, out.getvalue()
    loader = await _start([tree], cache=True)
    try:
        yield loader
    finally:
        held.set()
        await _stop(loader)


async def _loaded_answers(tree: Path) -> list[Any]:
    loader = await _start([tree], cache=False)
    try:
        return [(await loader.answer(name, dict(args))).structured for name, args in CALLS]
    finally:
        await _stop(loader)


async def _until(ask: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not ask():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), TIMEOUT)


def _in_place(loader: Loader) -> bool:
    return any(folder.in_place is not None for folder in loader.service.session.folders)


async def test_calls_are_answered_in_place_while_the_index_loads(
    tree: Path, started: Loader, held: threading.Event
) -> None:
    answers = [
        (await asyncio.wait_for(started.answer(name, dict(args)), TIMEOUT)).structured
        for name, args in CALLS
    ]
    assert _in_place(started)
    assert started.task is not None and not started.task.done()  # still loading
    assert all(answer["notice"] == LOADING_NOTICE for answer in answers)
    held.set()
    without = [{k: v for k, v in answer.items() if k != "notice"} for answer in answers]
    assert without == await _loaded_answers(tree)
    await asyncio.wait_for(started.task, TIMEOUT)
    loaded = await started.answer(*CALLS[0])
    assert loaded.structured is not None and "notice" not in loaded.structured


async def test_a_change_on_disk_makes_the_call_wait_for_the_index(
    tree: Path, started: Loader, held: threading.Event
) -> None:
    await asyncio.wait_for(started.answer("search_chunks", {"query": "greet"}), TIMEOUT)
    (tree / "app/welcome.py").write_text("def welcome(name):\n    return name\n")
    session = started.service.session
    session.note_changed(session.folders[0], ["app/welcome.py"])  # as the watcher tells it
    waiting = asyncio.ensure_future(started.answer("search_chunks", {"query": "welcome"}))
    await asyncio.sleep(0.3)
    assert not waiting.done()  # the cache no longer holds the root as it is
    held.set()
    answer = await asyncio.wait_for(waiting, TIMEOUT)
    assert answer.structured is not None
    assert answer.structured["results"][0]["chunk_id"] == "app/welcome.py#function-welcome"
    assert not _in_place(started)  # let go of once the index was loaded


async def test_a_cache_that_turns_out_stale_makes_the_call_wait(
    tree: Path, started: Loader, held: threading.Event
) -> None:
    await asyncio.wait_for(started.answer("search_chunks", {"query": "greet"}), TIMEOUT)
    in_place = started.service.session.folders[0].in_place
    assert in_place is not None
    # a file the cache read in place believes it has, with no row behind it
    in_place.counts["zz_gone.py"] = 1
    in_place.named.append("zz_gone.py")  # (sorted: after every other path)
    waiting = asyncio.ensure_future(
        started.answer("read_chunk", {"chunk_id": "zz_gone.py#module-1"})
    )
    await asyncio.sleep(0.3)
    assert not waiting.done() and not _in_place(started)
    held.set()
    answer = await asyncio.wait_for(waiting, TIMEOUT)
    assert answer.is_error and "zz_gone.py#module-1" in answer.text


async def test_several_roots_wait_for_the_index(tmp_path: Path, tree: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.py").write_text("def x():\n    return 1\n")
    loader = await _start([tree, other], cache=True)
    try:
        answer = await asyncio.wait_for(loader.answer("search_chunks", {"query": "x"}), TIMEOUT)
        assert not answer.is_error and not _in_place(loader)
        assert answer.structured is not None and "notice" not in answer.structured
    finally:
        await _stop(loader)


RESOURCE_QUESTIONS: list[Callable[[Any], Any]] = [
    lambda index: resources.list_page(index, None),
    lambda index: resources.read(index, resources.chunk_uri("app/greet.py#function-greet")),
    lambda index: resources.complete(index, resources.TEMPLATE, resources.VARIABLE, "greet"),
]


async def test_resources_are_answered_in_place_while_the_index_loads(
    tree: Path, started: Loader, held: threading.Event
) -> None:
    """A resource request while the index loads is answered from the cache read
    in place, and the server knows to say so (``loading``)."""
    answers = [
        await asyncio.wait_for(started.ask(question), TIMEOUT) for question in RESOURCE_QUESTIONS
    ]
    assert _in_place(started) and all(loading for _answer, loading in answers)
    held.set()
    loader = await _start([tree], cache=False)
    try:
        loaded = [await loader.ask(question) for question in RESOURCE_QUESTIONS]
    finally:
        await _stop(loader)
    assert [answer for answer, _ in answers] == [answer for answer, _ in loaded]
    assert not any(loading for _answer, loading in loaded)


async def test_a_resource_the_stale_cache_misses_waits_for_the_index(
    tree: Path, started: Loader, held: threading.Event
) -> None:
    """As a tool call: an unknown resource read from a cache that turns out
    stale is asked again once the index is loaded, not answered at once."""
    await asyncio.wait_for(started.answer("search_chunks", {"query": "greet"}), TIMEOUT)
    in_place = started.service.session.folders[0].in_place
    assert in_place is not None
    in_place.counts["zz_gone.py"] = 1  # a file the cache believes it has, with no row
    in_place.named.append("zz_gone.py")
    uri = resources.chunk_uri("zz_gone.py#module-1")
    waiting = asyncio.ensure_future(started.ask(lambda index: resources.read(index, uri)))
    await asyncio.sleep(0.3)
    assert not waiting.done() and not _in_place(started)
    held.set()
    with pytest.raises(resources.ResourceProblem) as unknown:
        await asyncio.wait_for(waiting, TIMEOUT)
    assert unknown.value.code == resources.RESOURCE_NOT_FOUND
    assert "zz_gone.py#module-1" in unknown.value.message
