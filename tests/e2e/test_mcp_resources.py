"""``chunkls mcp``'s chunks as resources, driven by the official MCP Python
SDK's stdio client: the capability, the template, reading, listing with
cursors, completion, the links in each tool's result, unknown IDs, traversal
attempts, ``notifications/resources/list_changed``, the client's roots, and a
client that never asks for resources."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import mcp.types as types
import pytest
from mcp import ClientSession, McpError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.context import RequestContext
from pydantic import AnyUrl, FileUrl

from chunkls.mcp.resources import MAX_VALUES, PAGE_SIZE, PREFIX, TEMPLATE, chunk_uri

from .test_mcp import ENV, TIMEOUT, _receive, _send, call, eventually, run_cli, text_of

REF = types.ResourceTemplateReference(type="ref/resource", uri=TEMPLATE)
ODD = {
    "dir with space/a b.py": "def f():\n    return 1\n",
    "pct/100%.md": "# 50% off\n\nCheap.\n",
    "ünï/cödé.py": "class Ü:\n    pass\n",
    "notes/c#.md": "# C# tips\n\nUse it.\n\n## Why #1?\n\nFast.\n",
    "a/b/c/d/e.py": "x = 1\n",
}


@asynccontextmanager
async def session_of(
    root: Path,
    roots: list[Path] | None = None,
    notified: list[types.ServerNotification] | None = None,
) -> AsyncIterator[ClientSession]:
    """An SDK client session; with ``roots``, a client that has roots; the
    server's notifications go to ``notified``."""

    async def list_roots(_context: RequestContext[ClientSession, Any]) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=FileUrl(path.as_uri())) for path in roots or []]
        )

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and notified is not None:
            notified.append(message)

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "chunkls", "mcp", "--root", str(root)], env=ENV
    )
    with open(os.devnull, "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(
                read,
                write,
                list_roots_callback=list_roots if roots is not None else None,
                message_handler=on_message,
            ) as session,
        ):
            await asyncio.wait_for(session.initialize(), TIMEOUT)
            yield session


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def cli_ids(root: Path) -> list[str]:
    _, printed = run_cli("chunks", str(root), "--format", "ids")
    return printed.splitlines()


async def every_page(session: ClientSession) -> tuple[list[types.Resource], int]:
    listed: list[types.Resource] = []
    cursor = None
    pages = 0
    while True:
        page = await asyncio.wait_for(session.list_resources(cursor), TIMEOUT)
        pages += 1
        listed += page.resources
        cursor = page.nextCursor
        if cursor is None:
            return listed, pages


async def test_the_capability_and_the_template(workspace: Path) -> None:
    async with session_of(workspace) as session:
        capabilities = session.get_server_capabilities()
        templates = await asyncio.wait_for(session.list_resource_templates(), TIMEOUT)
    assert capabilities is not None and capabilities.resources is not None
    assert capabilities.resources.listChanged is True
    assert capabilities.completions is not None
    assert [t.uriTemplate for t in templates.resourceTemplates] == ["chunkls:///{chunk_id}"]


async def test_every_chunk_is_listed_page_by_page_in_corpus_order(workspace: Path) -> None:
    functions = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(PAGE_SIZE * 2))
    write(workspace, {"app/many.py": functions, **ODD})
    async with session_of(workspace) as session:
        listed, pages = await every_page(session)
    assert [resource.name for resource in listed] == cli_ids(workspace)
    assert pages == -(-len(listed) // PAGE_SIZE) and pages >= 3
    assert all(str(r.uri) == chunk_uri(r.name) for r in listed)
    kinds = {(r.description or "").partition(":")[0].rpartition(".")[2]: r.mimeType for r in listed}
    assert kinds == {"py": "text/x-python", "md": "text/markdown"}


async def test_the_clients_roots_come_first(workspace: Path) -> None:
    roots = [workspace / "app"]
    async with session_of(workspace, roots=roots) as session:
        listed, _ = await every_page(session)
        roots[:] = [workspace / "notes"]  # the client's roots change: it says so
        await session.send_roots_list_changed()
        relisted, _ = await every_page(session)
    ids = cli_ids(workspace)
    for pages, folder in ((listed, "app/"), (relisted, "notes/")):
        names = [resource.name for resource in pages]
        first = [name for name in ids if name.startswith(folder)]
        assert first and names[: len(first)] == first and names[0] != ids[0]
        assert sorted(names) == sorted(ids)


@pytest.mark.parametrize("chunk_id", [None, *ODD])
async def test_reading_a_chunk_gives_its_text_id_path_and_lines(
    workspace: Path, chunk_id: str | None
) -> None:
    """Each odd ID, by its listed URI and by the template as RFC 6570 expands it,
    reads back the text ``chunkls chunks`` gives."""
    write(workspace, ODD)
    _, printed = run_cli("chunks", str(workspace))
    chunks = {chunk["chunk_id"]: chunk for chunk in map(json.loads, printed.splitlines())}
    async with session_of(workspace) as session:
        listed, _ = await every_page(session)
        wanted = [r for r in listed if chunk_id is None or r.name.startswith(chunk_id + "#")]
        assert wanted
        for resource in wanted[:8]:
            for uri in (str(resource.uri), PREFIX + quote(resource.name, safe="")):
                read = await asyncio.wait_for(session.read_resource(AnyUrl(uri)), TIMEOUT)
                (content,) = read.contents
                assert isinstance(content, types.TextResourceContents)
                chunk = chunks[resource.name]
                assert content.text == chunk["text"] and content.mimeType == resource.mimeType
                assert content.meta is not None
                assert content.meta["chunk_id"] == resource.name
                assert content.meta["path"] == chunk["source_path"]
                lines = (content.meta["start_line"], content.meta["end_line"])
                assert lines == (chunk["start_line"], chunk["end_line"])


@pytest.mark.parametrize(
    ("uri", "code", "said"),
    [
        ("chunkls:///app/greet.py%23function-gret", -32002, "app/greet.py#function-greet"),
        ("chunkls:///..%2Foutside.py%23function-secret", -32602, "climbs out of the roots"),
        ("chunkls:///%2e%2e%2Foutside.py%23function-secret", -32602, "climbs out of the roots"),
        ("chunkls:///../outside.py%23function-secret", -32002, "outside.py#function-secret"),
        ("chunkls:///%2e%2e/outside.py%23function-secret", -32002, "outside.py#function-secret"),
        ("chunkls:////etc/passwd%23module-1", -32602, "outside every root"),
        ("file:///etc/passwd", -32602, "is not a chunk's URI"),
    ],
)
async def test_unknown_ids_and_traversal_attempts_are_errors(
    workspace: Path, uri: str, code: int, said: str
) -> None:
    """An unknown ID names itself and resolve's suggestions; a URI that climbs
    out is an error (a bare ``../`` is removed by every URL parser, the SDK's
    included, before the server sees it: it names a chunk inside the root)."""
    (workspace.parent / "outside.py").write_text("def secret():\n    return 42\n")
    async with session_of(workspace) as session:
        with pytest.raises(McpError) as problem:
            await asyncio.wait_for(session.read_resource(AnyUrl(uri)), TIMEOUT)
        assert problem.value.error.code == code
        assert said in problem.value.error.message
        assert "42" not in problem.value.error.message
        answered = await call(session, "search_chunks", {"query": "greet"})  # still answering
    assert not answered.isError


@pytest.mark.parametrize(
    ("typed", "first"),
    [
        ("app/gr", "app/greet.py#module-1"),
        ("app/greet.py#function-g", "app/greet.py#function-greet"),
        ("Greeter", None),  # ranked as workspace/symbol ranks: compared with search
        ("Greter", "app/greet.py#class-Greeter"),  # a mistyped name: the fuzzy tier
        ("Graeter", "app/greet.py#class-Greeter"),  # one edit away
        ("fetchgreet", "app/greet.py#function-fetch_greeting"),  # abbreviated
    ],
)
async def test_completion_proposes_chunk_ids(
    workspace: Path, typed: str, first: str | None
) -> None:
    async with session_of(workspace) as session:
        done = await asyncio.wait_for(
            session.complete(REF, {"name": "chunk_id", "value": typed}), TIMEOUT
        )
        searched = await call(session, "search_chunks", {"query": typed, "top_k": 100})
    values = done.completion.values
    assert values and len(values) <= MAX_VALUES and done.completion.hasMore is False
    if first is not None:
        assert values[0] == first
    elif not searched.isError and searched.structuredContent["results"]:  # type: ignore[index]
        ranked = [r["chunk_id"] for r in searched.structuredContent["results"]]  # type: ignore[index]
        assert values == list(dict.fromkeys(ranked))  # (an ID a file repeats: once)


async def test_completion_stops_at_100_and_says_there_is_more(workspace: Path) -> None:
    functions = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(150))
    write(workspace, {"app/many.py": functions})
    async with session_of(workspace) as session:
        done = await asyncio.wait_for(
            session.complete(REF, {"name": "chunk_id", "value": "app/many.py#"}), TIMEOUT
        )
    assert len(done.completion.values) == MAX_VALUES and done.completion.hasMore is True
    assert done.completion.values[:2] == ["app/many.py#function-f0", "app/many.py#function-f1"]


async def test_each_tools_result_links_its_chunks(workspace: Path) -> None:
    async with session_of(workspace) as session:
        searched = await call(session, "search_chunks", {"query": "greet", "top_k": 5})
        read = await call(
            session,
            "read_chunk",
            {"chunk_id": "app/greet.py#function-greet app/greet.py#function-nope"},
        )
        outlined = await call(session, "outline", {"path": "app/greet.py"})
        checked = await call(session, "check_citations", {"text": "see app/greet.py#function-gret"})
        followed = [  # (a link to a result's best lines in its chunk is the file's)
            await asyncio.wait_for(session.read_resource(link.uri), TIMEOUT)
            for link in searched.content[1:]
            if isinstance(link, types.ResourceLink) and str(link.uri).startswith("chunkls:")
        ]
    for result, key in [(searched, "results"), (read, "chunks"), (outlined, "chunks")]:
        text_of(result)
        links = result.content[1:]
        ids = [item["chunk_id"] for item in result.structuredContent[key]]  # type: ignore[index]
        assert ids and [link.name for link in links] == ids  # type: ignore[union-attr]
        wanted = [chunk_uri(i) for i in ids]
        if key == "results":  # the chunk's URI, or its file's with the best lines inside it
            wanted = [
                chunk_uri(r["chunk_id"])
                if r["lines"] == [r["start_line"], r["end_line"]]
                else "{}#L{}-L{}".format((workspace / r["path"]).resolve().as_uri(), *r["lines"])
                for r in result.structuredContent[key]  # type: ignore[index]
            ]
        assert [str(link.uri) for link in links] == wanted  # type: ignore[union-attr]
    assert read.isError  # (one ID unknown: the one found is still linked)
    (suggested,) = checked.content[1:]
    problem = checked.structuredContent["problems"][0]  # type: ignore[index]
    assert isinstance(suggested, types.ResourceLink)
    assert suggested.name == problem["suggestions"][0]
    results = searched.structuredContent["results"]  # type: ignore[index]
    whole = [r["chunk_id"] for r in results if r["lines"] == [r["start_line"], r["end_line"]]]
    assert [r.contents[0].meta["chunk_id"] for r in followed] == whole  # type: ignore[index]


async def test_a_client_that_listed_hears_when_files_come_and_go(workspace: Path) -> None:
    notified: list[types.ServerNotification] = []

    def heard() -> int:
        return sum(isinstance(n.root, types.ResourceListChangedNotification) for n in notified)

    async with session_of(workspace, notified=notified) as session:
        await every_page(session)
        (workspace / "app" / "fresh.py").write_text("def fresh():\n    return 1\n")

        async def one() -> bool:
            return heard() >= 1

        await eventually(one)
        listed, _ = await every_page(session)
        assert "app/fresh.py#function-fresh" in [r.name for r in listed]
        (workspace / "app" / "fresh.py").unlink()

        async def two() -> bool:
            return heard() >= 2

        await eventually(two)
        listed, _ = await every_page(session)
        assert "app/fresh.py#function-fresh" not in [r.name for r in listed]
        (workspace / "app" / "greet.py").write_text("def greet():\n    return 2\n")
        await asyncio.sleep(0.5)  # an edit is no file coming or going
        assert heard() == 2


async def test_a_client_that_never_asks_for_resources_sees_nothing_new(workspace: Path) -> None:
    """It gets its tools' answers as before (text first, structured content as
    before) and no notification when files come and go."""
    notified: list[types.ServerNotification] = []
    async with session_of(workspace, notified=notified) as session:
        before = await call(session, "search_chunks", {"query": "fresh"})
        (workspace / "app" / "fresh.py").write_text("def fresh():\n    return 1\n")

        async def seen() -> bool:
            found = await call(session, "search_chunks", {"query": "fresh"})
            return "app/fresh.py#function-fresh" in text_of(found)

        await eventually(seen)
        await asyncio.sleep(0.3)
    assert "app/fresh.py" not in text_of(before)
    assert notified == []


@pytest.mark.parametrize(
    ("version", "linked"), [("2024-11-05", False), ("2025-03-26", False), ("2025-06-18", True)]
)
def test_a_client_of_a_protocol_before_links_gets_text_alone(
    workspace: Path, tmp_path: Path, version: str, linked: bool
) -> None:
    """``resource_link`` came with protocol 2025-06-18: an older client's results
    are as before, whether the SDK answers or the early reader (a second start
    on the same cache)."""
    env = {**ENV, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _start in range(2):
        server = subprocess.Popen(
            [sys.executable, "-m", "chunkls", "mcp", "--root", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        initialize = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "0"},
        }
        try:
            _send(server, {"id": 0, "method": "initialize", "params": initialize})
            _send(server, {"method": "notifications/initialized"})
            arguments = {"name": "search_chunks", "arguments": {"query": "greet", "top_k": 3}}
            _send(server, {"id": 1, "method": "tools/call", "params": arguments})
            assert _receive(server, 0)["result"]["protocolVersion"] == version
            content = _receive(server, 1)["result"]["content"]
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=TIMEOUT)
        kinds = [item["type"] for item in content]
        assert kinds == ["text"] + ["resource_link"] * 3 * linked
