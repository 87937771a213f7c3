"""Reads never write: every front door asks the query API with hooks that fail
any write to the cache and any opened file while a question runs
(``tests/guards.py``), and every answer comes, with nothing refused.

A chunk ID's way from an LSP hover and from an MCP ``read_chunk`` to the store
passes through the one query class (``ChunkStore``) and writes nothing; so do
the CLI's commands, on a cold cache (indexed first: the write step) and a warm
one (read in place)."""

from __future__ import annotations

import asyncio
import io
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from chunkls.cli import main as cli
from chunkls.index.store import ChunkStore
from chunkls.mcp.resources import TEMPLATE
from tests import guards
from tests.hardening.rpc import RawServer

FIXTURES = Path(__file__).parent.parent / "fixtures"
GUARDED = str(Path(guards.__file__).resolve())
TIMEOUT = 60
NOTES = "# Notes\n\nSee app/greet.py#function-greet and `app/greet.py#class-Gone`.\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    shutil.copytree(FIXTURES / "workspace", root)
    (root / "notes" / "cites.md").write_text(NOTES)
    return root


def _counted(log: str) -> tuple[int, int]:
    """(questions answered, writes or opens refused) as ``guards.main`` reports them."""
    found = re.findall(rf"{guards.COUNTED} (\d+); refused: (\d+)", log)
    assert found, log[-2000:]
    return int(found[-1][0]), int(found[-1][1])


def test_a_question_that_writes_is_caught(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> None:
    """The hooks can fail: a lookup that writes the cache raises ``ReadWrote``."""
    real = ChunkStore.lookup

    def writing(self: ChunkStore, chunk_id: str, prefer: Any = None) -> Any:
        for folder in self.folders:
            if folder.cache is not None:
                folder.cache.flush()
        return real(self, chunk_id, prefer)

    monkeypatch.setattr(ChunkStore, "lookup", writing)
    guards.install(monkeypatch.setattr)
    monkeypatch.setenv("XDG_CACHE_HOME", str(workspace.parent / "cache"))
    with pytest.raises(guards.ReadWrote, match="flush inside a question"):
        cli(["resolve", "app/greet.py#function-greet", "--root", str(workspace)])


def test_a_generator_question_that_opens_a_file_is_caught(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """The hooks follow a question's generator: each step is inside the question."""
    real = ChunkStore.chunk_ids

    def opening(self: ChunkStore) -> Any:
        for chunk_id in real(self):
            with open(workspace / "app" / "greet.py", encoding="utf-8"):
                yield chunk_id

    monkeypatch.setattr(ChunkStore, "chunk_ids", opening)
    guards.install(monkeypatch.setattr)
    monkeypatch.setenv("XDG_CACHE_HOME", str(workspace.parent / "cache"))
    with pytest.raises(guards.ReadWrote, match="open inside a question"):
        cli(["chunks", "--format", "ids", "--root", str(workspace)], io.StringIO(), io.StringIO())


def test_a_question_that_connects_to_write_is_caught(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    import sqlite3

    real = ChunkStore.file_count

    def connecting(self: ChunkStore) -> int:
        sqlite3.connect(workspace.parent / "other.sqlite3").close()
        return real(self)

    monkeypatch.setattr(ChunkStore, "file_count", connecting)
    guards.install(monkeypatch.setattr)
    with pytest.raises(guards.ReadWrote, match=r"sqlite3\.connect"):
        from chunkls.index.session import build_index

        build_index([workspace]).queries.file_count()


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "greeting polite"],
        ["resolve", "app/greet.py#function-greet"],
        ["resolve", "app/greet.py#function-gret"],
        ["check"],
        ["chunks"],
        ["chunks", "--format", "ids"],
    ],
    ids=" ".join,
)
def test_the_cli_asks_without_writing(
    monkeypatch: pytest.MonkeyPatch, workspace: Path, argv: list[str]
) -> None:
    cache = workspace.parent / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))

    def run() -> tuple[int, str]:
        out = io.StringIO()
        return cli([*argv, "--root", str(workspace)], out, io.StringIO()), out.getvalue()

    expected = run()
    shutil.rmtree(cache)
    guards.install(monkeypatch.setattr)
    before = dict(guards.asked)
    # the first indexes into the cache (the write step), the second reads it in place
    assert [run(), run()] == [expected, expected]
    assert guards.asked["questions"] > before["questions"]
    assert guards.asked["refused"] == before["refused"]


def test_the_language_server_answers_without_writing(workspace: Path, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    server = RawServer(tmp_path / "server.stderr", env=env, command=(GUARDED,))
    try:
        server.initialize([workspace])
        server.wait_indexed()
        notes = server.open(workspace / "notes" / "cites.md")
        greet = server.open(workspace / "app" / "greet.py")
        at = {"textDocument": {"uri": notes}, "position": {"line": 2, "character": 8}}
        asked: list[Any] = [
            server.call("textDocument/hover", at),
            server.call("textDocument/definition", at),
            server.call("textDocument/documentLink", {"textDocument": {"uri": notes}}),
            server.call("textDocument/codeLens", {"textDocument": {"uri": greet}}),
            server.call("textDocument/documentSymbol", {"textDocument": {"uri": greet}}),
            server.call("workspace/symbol", {"query": "greeting polite"}),
            server.call(
                "textDocument/references",
                {**at, "textDocument": {"uri": greet}, "context": {"includeDeclaration": True}},
            ),
            server.command("chunkls.search", {"query": "greet", "topK": 3}),
            server.command("chunkls.resolve", {"chunkId": "app/greet.py#function-greet"}),
            server.command("chunkls.stats"),
            server.command("chunkls.chunks"),
        ]
        # a save (the write step), then the questions again
        (workspace / "app" / "greet.py").write_text("def greet(name):\n    return name\n")
        server.notify("textDocument/didSave", {"textDocument": {"uri": greet}})
        asked.append(server.call("textDocument/hover", at))
        assert "app/greet.py#function-greet" in str(asked[0]) and asked[1]
        assert asked[-1] and "return name" in str(asked[-1])
        assert server.shutdown(TIMEOUT) == 0
    finally:
        server.close()
    questions, refused = _counted(server.stderr_text())
    assert questions >= len(asked) and refused == 0, server.stderr_tail()


CALLS = [
    ("search_chunks", {"query": "greeting polite"}),
    ("read_chunk", {"chunk_id": "app/greet.py#function-greet"}),
    ("read_chunk", {"chunk_id": "app\\/greet.py#function-gret"}),
    ("outline", {"path": "app/greet.py"}),
    ("check_citations", {"text": NOTES}),
]


async def _mcp_session(workspace: Path, log: Path, cache: Path) -> list[Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONUNBUFFERED": "1"}
    params = StdioServerParameters(
        command=sys.executable, args=[GUARDED, "mcp", "--root", str(workspace)], env=env
    )
    with open(log, "a", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), TIMEOUT)
            results: list[Any] = [
                await asyncio.wait_for(session.call_tool(name, arguments), TIMEOUT)
                for name, arguments in CALLS
            ]
            # the resources too: a page, a chunk read, a completion
            listed = await asyncio.wait_for(session.list_resources(), TIMEOUT)
            read = await asyncio.wait_for(session.read_resource(listed.resources[0].uri), TIMEOUT)
            template = types.ResourceTemplateReference(type="ref/resource", uri=TEMPLATE)
            done = await asyncio.wait_for(
                session.complete(template, {"name": "chunk_id", "value": "app/"}), TIMEOUT
            )
            assert read.contents and done.completion.values
            return results


async def test_the_mcp_server_answers_without_writing(workspace: Path, tmp_path: Path) -> None:
    log, cache = tmp_path / "mcp.stderr", tmp_path / "cache"
    for _ in range(2):  # a cold start, then one that reads its cache in place first
        results = await _mcp_session(workspace, log, cache)
        assert not results[0].isError and not results[1].isError, results
        assert "app/greet.py#function-greet" in results[1].content[0].text  # type: ignore[union-attr]
        assert not any("failed inside chunkls" in str(result) for result in results)
    counts = re.findall(rf"{guards.COUNTED} (\d+); refused: (\d+)", log.read_text())
    assert len(counts) == 2, log.read_text()[-2000:]
    assert all(int(questions) > 0 and int(refused) == 0 for questions, refused in counts)
