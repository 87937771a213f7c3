"""``chunkls mcp`` end to end, driven by the official MCP Python SDK's stdio client.

Every tool on a copy of the fixture workspace, the answers compared with the
CLI's where they overlap, freshness after a write, a rename, a delete and a
``[tool.chunkls]`` edit, and every bad input of issue 19 (arguments, sizes,
paths and IDs that lead out of the root, bad roots, a client that goes away).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import select
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from chunkls.cli import main as cli

TIMEOUT = 60
CACHE_HOME = tempfile.mkdtemp(prefix="chunkls-mcp-e2e-cache-")
ENV = {**os.environ, "XDG_CACHE_HOME": CACHE_HOME, "PYTHONUNBUFFERED": "1"}


@asynccontextmanager
async def mcp_session(*roots: Path, log: Path | None = None) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session with ``chunkls mcp --root ...``."""
    args = ["-m", "chunkls", "mcp"]
    for root in roots:
        args += ["--root", str(root)]
    params = StdioServerParameters(command=sys.executable, args=args, env=ENV)
    with open(log or os.devnull, "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), TIMEOUT)
            yield session


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """A tool call (the SDK client checks structured content against the schema)."""
    return await asyncio.wait_for(session.call_tool(name, arguments), TIMEOUT)


def text_of(result: CallToolResult) -> str:
    """A result's text (its first item; resource links follow it)."""
    assert result.content[0].type == "text"
    assert all(item.type == "resource_link" for item in result.content[1:])
    return result.content[0].text


def run_cli(*argv: str) -> tuple[int, str]:
    """``chunkls ARGV`` in this process: (exit code, stdout)."""
    out, err = io.StringIO(), io.StringIO()
    code = cli([*argv, "--no-cache"], out, err)
    return code, out.getvalue()


async def eventually(ask: Callable[[], Awaitable[bool]]) -> None:
    """Wait until ``ask`` says yes (a watcher hands changes over within ms)."""

    async def poll() -> None:
        while not await ask():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), TIMEOUT)


# -- the tools -------------------------------------------------------------------


async def test_the_tools_are_listed_with_schemas_written_for_a_model(workspace: Path) -> None:
    async with mcp_session(workspace) as session:
        listed = await asyncio.wait_for(session.list_tools(), TIMEOUT)
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == ["search_chunks", "read_chunk", "outline", "check_citations"]
    required = {name: tool.inputSchema["required"] for name, tool in tools.items()}
    assert required == {
        "search_chunks": ["query"],
        "read_chunk": ["chunk_id"],
        "outline": ["path"],
        "check_citations": ["text"],
    }
    mode = tools["search_chunks"].inputSchema["properties"]["mode"]
    assert mode["enum"] == ["hybrid", "bm25"]
    assert tools["search_chunks"].outputSchema["required"] == ["indexed", "mode", "results"]  # type: ignore[index]
    top_k = tools["search_chunks"].inputSchema["properties"]["top_k"]
    assert (top_k["minimum"], top_k["maximum"], top_k["default"]) == (1, 100, 10)
    for tool in tools.values():
        assert "chunk ID" in (tool.description or ""), tool.name
        assert tool.inputSchema["additionalProperties"] is False
        assert tool.outputSchema is not None and tool.outputSchema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.readOnlyHint


@pytest.mark.parametrize("mode", [None, "hybrid", "bm25"])
async def test_search_agrees_with_the_cli(workspace: Path, mode: str | None) -> None:
    """The same query, the same order and scores, in each mode (the default:
    hybrid), and the answer says which mode ranked it."""
    chosen = ["--mode", mode] if mode else []
    query = "how do I greet someone politely"
    code, printed = run_cli("search", query, "--root", str(workspace), "--json", *chosen)
    assert code == 0
    expected = json.loads(printed)
    assert expected["mode"] == (mode or "hybrid")
    _, text_lines = run_cli("search", query, "--root", str(workspace), *chosen)
    arguments: dict[str, Any] = {"query": query, "top_k": 5, **({"mode": mode} if mode else {})}
    async with mcp_session(workspace) as session:
        result = await call(session, "search_chunks", arguments)
        narrowed = await call(
            session, "search_chunks", {**arguments, "query": "greet hello", "path_glob": "*.md"}
        )
    assert not result.isError and result.structuredContent is not None
    found = result.structuredContent
    assert found["indexed"] == expected["indexed"]
    assert found["mode"] == expected["mode"]
    assert f"({expected['mode']} " in text_of(result)
    assert [(r["chunk_id"], r["score"]) for r in found["results"]] == [
        (r["chunk_id"], r["score"]) for r in expected["results"]
    ]
    for mine, theirs in zip(found["results"], expected["results"], strict=True):
        assert mine["path"] == theirs["source_path"]
        assert (mine["start_line"], mine["end_line"]) == (theirs["start_line"], theirs["end_line"])
        assert mine["preview"]
    # the text rendering's ID lines are the CLI's
    id_lines = [line for line in text_of(result).splitlines() if not line.startswith("   ")]
    assert id_lines == text_lines.splitlines()
    paths = {r["path"] for r in narrowed.structuredContent["results"]}  # type: ignore[index]
    assert paths and all(path.endswith(".md") for path in paths)


async def test_the_repositorys_search_mode_is_the_default_and_the_argument_overrides_it(
    workspace: Path,
) -> None:
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'search-mode = "bm25"\n', encoding="utf-8")
    async with mcp_session(workspace) as session:
        default = await call(session, "search_chunks", {"query": "greet"})
        chosen = await call(session, "search_chunks", {"query": "greet", "mode": "hybrid"})
    assert default.structuredContent is not None and chosen.structuredContent is not None
    assert default.structuredContent["mode"] == "bm25"
    assert "(bm25 " in text_of(default)
    assert chosen.structuredContent["mode"] == "hybrid"


async def test_read_chunk_takes_every_written_form_and_agrees_with_resolve(
    workspace: Path,
) -> None:
    chunk_id = "app/greet.py#function-greet"
    code, resolved = run_cli("resolve", chunk_id, "--root", str(workspace))
    assert code == 0
    async with mcp_session(workspace) as session:
        for written in (
            chunk_id,
            f"`{chunk_id}`",
            f"[greet]({chunk_id})",
            f"/{chunk_id}",
            f"./{chunk_id}",
        ):
            result = await call(session, "read_chunk", {"chunk_id": written})
            assert not result.isError, written
            assert result.structuredContent is not None
            (chunk,) = result.structuredContent["chunks"]
            assert chunk["chunk_id"] == chunk_id and chunk["path"] == "app/greet.py"
            assert text_of(result) == f"{chunk_id}\n{resolved.rstrip(chr(10))}"
        several = await call(
            session, "read_chunk", {"chunk_id": f"{chunk_id}, README.md#heading-setup"}
        )
        unknown = await call(session, "read_chunk", {"chunk_id": "app/greet.py#function-gret"})
    assert [c["chunk_id"] for c in several.structuredContent["chunks"]] == [  # type: ignore[index]
        chunk_id,
        "README.md#heading-setup",
    ]
    assert unknown.isError
    assert chunk_id in text_of(unknown)
    assert "unknown chunk ID app/greet.py#function-gret" in text_of(unknown)


async def test_outline_agrees_with_chunks(workspace: Path) -> None:
    _, printed = run_cli("chunks", str(workspace))
    expected = [
        {key: record[key] for key in ("chunk_id", "start_line", "end_line", "symbol")}
        for record in map(json.loads, printed.splitlines())
        if record["source_path"] == "app/greet.py"
    ]
    assert expected
    async with mcp_session(workspace) as session:
        results = [
            await call(session, "outline", {"path": path})
            for path in ("app/greet.py", "./app/greet.py", str(workspace / "app" / "greet.py"))
        ]
    for result in results:
        assert not result.isError and result.structuredContent is not None
        rows = result.structuredContent["chunks"]
        assert [{key: row[key] for key in expected[0]} for row in rows] == expected
        ids = [line.split()[0] for line in text_of(result).splitlines()[1:]]
        assert ids == [row["chunk_id"] for row in expected]


async def test_check_citations_agrees_with_check(workspace: Path) -> None:
    draft = (
        "The greeting is app/greet.py#function-greet, see `app/greet.py#function-gret`\n"
        "and [the readme](README.md#heading-setp); app/gone.py#class-Gone is gone.\n"
    )
    (workspace / "draft.md").write_text(draft, encoding="utf-8")
    code, printed = run_cli(
        "check", str(workspace / "draft.md"), "--root", str(workspace), "--format", "json"
    )
    assert code == 1
    expected = json.loads(printed)
    async with mcp_session(workspace) as session:
        result = await call(session, "check_citations", {"text": draft})
        clean = await call(session, "check_citations", {"text": "app/greet.py#function-greet"})
    assert not result.isError and result.structuredContent is not None
    problems = result.structuredContent["problems"]
    assert [
        (p["line"], p["column"], p["chunk_id"], p["written"], p["suggestions"]) for p in problems
    ] == [(e["line"], e["column"], e["chunk_id"], e["written"], e["suggestions"]) for e in expected]
    assert result.structuredContent["checked"] == 4
    _, lines = run_cli("check", str(workspace / "draft.md"), "--root", str(workspace))
    shown = str(workspace / "draft.md")
    assert text_of(result).splitlines()[:-1] == [
        "text" + line[len(shown) :] for line in lines.splitlines()
    ]
    assert clean.structuredContent == {"checked": 1, "problems": []}


async def test_every_root_is_served(workspace: Path) -> None:
    second = workspace.parent / "second"
    async with mcp_session(workspace, second) as session:
        both = await call(
            session,
            "read_chunk",
            {"chunk_id": "app/greet.py#function-greet lib/util.py#function-helper"},
        )
        outline = await call(session, "outline", {"path": str(second / "lib" / "util.py")})
    assert not both.isError and both.structuredContent is not None
    assert [c["chunk_id"] for c in both.structuredContent["chunks"]] == [
        "app/greet.py#function-greet",
        "lib/util.py#function-helper",
    ]
    assert outline.structuredContent is not None
    assert [c["chunk_id"] for c in outline.structuredContent["chunks"]] == [
        "lib/util.py#function-helper"
    ]


# -- freshness ---------------------------------------------------------------------


async def test_writes_renames_deletes_and_rules_show_in_the_next_answers(
    workspace: Path,
) -> None:
    async with mcp_session(workspace) as session:

        async def resolves(chunk_id: str) -> bool:
            result = await call(session, "read_chunk", {"chunk_id": chunk_id})
            chunks = (result.structuredContent or {}).get("chunks", [])
            # (a stale ID its history follows answers where it went: not itself)
            return not result.isError and not any("moved_from" in chunk for chunk in chunks)

        async def search_ids(query: str) -> list[str]:
            result = await call(session, "search_chunks", {"query": query})
            return [r["chunk_id"] for r in result.structuredContent["results"]]  # type: ignore[index]

        assert await resolves("app/greet.py#function-greet")
        # a write: a new file, then a new function in it
        new = workspace / "app" / "fresh.py"
        new.write_text("def zebra_crossing():\n    return 'stripes'\n", encoding="utf-8")
        await eventually(lambda: resolves("app/fresh.py#function-zebra_crossing"))
        assert "app/fresh.py#function-zebra_crossing" in await search_ids("zebra_crossing")
        new.write_text("def okapi_forest():\n    return 1\n", encoding="utf-8")
        await eventually(lambda: resolves("app/fresh.py#function-okapi_forest"))
        assert not await resolves("app/fresh.py#function-zebra_crossing")
        # a rename
        new.rename(workspace / "app" / "moved.py")
        await eventually(lambda: resolves("app/moved.py#function-okapi_forest"))
        assert not await resolves("app/fresh.py#function-okapi_forest")
        outline = await call(session, "outline", {"path": "app/fresh.py"})
        assert outline.isError
        # a delete
        (workspace / "app" / "moved.py").unlink()

        async def gone() -> bool:
            return not await resolves("app/moved.py#function-okapi_forest")

        await eventually(gone)
        assert "okapi_forest" not in " ".join(await search_ids("okapi_forest okapi"))
        # [tool.chunkls]: exclude app/ too
        (workspace / "pyproject.toml").write_text(
            '[tool.chunkls]\nexclude = ["generated/**", "app/**"]\n', encoding="utf-8"
        )

        async def excluded() -> bool:
            return not await resolves("app/greet.py#function-greet")

        await eventually(excluded)


# -- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("search_chunks", {"query": "greet", "colour": "red"}, "unknown argument 'colour'"),
        ("search_chunks", {}, "the argument 'query' is required"),
        ("search_chunks", {"query": 42}, "'query' must be a string, got a number"),
        ("search_chunks", {"query": "greet", "top_k": "ten"}, "'top_k' must be a whole number"),
        ("search_chunks", {"query": "greet", "top_k": 0}, "must be from 1 to 100, got 0"),
        ("search_chunks", {"query": "greet", "top_k": 101}, "must be from 1 to 100, got 101"),
        ("search_chunks", {"query": "greet", "top_k": True}, "got a boolean"),
        ("search_chunks", {"query": "?!"}, "no searchable terms"),
        ("search_chunks", {"query": "how does the"}, "only question and stop words"),
        (
            "search_chunks",
            {"query": "greet", "mode": "dense"},
            "'mode': unknown search mode 'dense' (modes: hybrid, bm25)",
        ),
        ("search_chunks", {"query": "greet", "mode": 25}, "'mode' must be a string, got a number"),
        ("search_chunks", {"query": "greet", "path_glob": ["*.py"]}, "got an array"),
        ("read_chunk", {"chunk_id": ["a.py#function-f"]}, "got an array"),
        ("read_chunk", {"chunk_id": "   "}, "'chunk_id' is empty"),
        ("read_chunk", {"chunk_id": "greet"}, "is not a chunk ID"),
        ("outline", {"path": None}, "got null"),
        ("check_citations", {"text": {"a": 1}}, "got an object"),
        ("check_citations", {"text": "x" * 1_000_001}, "at most 1,000,000 are checked"),
        ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
    ],
)
async def test_bad_arguments_get_an_error_result_and_the_server_goes_on(
    shared_workspace: Path, name: str, arguments: dict[str, Any], message: str
) -> None:
    async with mcp_session(shared_workspace) as session:
        result = await call(session, name, arguments)
        assert result.isError
        assert message in text_of(result)
        after = await call(session, "read_chunk", {"chunk_id": "app/greet.py#function-greet"})
        assert not after.isError


async def test_nothing_outside_the_root_is_read_or_shown(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "app").mkdir(parents=True)
    (root / "app" / "inside.py").write_text("def inside():\n    return 1\n", encoding="utf-8")
    (tmp_path / "outside.py").write_text("def leaked():\n    return 'SECRET'\n", encoding="utf-8")
    (tmp_path / "outside.md").write_text("# Leaked\n\nSECRET\n", encoding="utf-8")
    (root / "link").symlink_to(tmp_path)  # a folder symlink leading out: never followed
    answers: list[CallToolResult] = []
    async with mcp_session(root) as session:
        for chunk_id in (
            "../outside.py#function-leaked",
            "/../outside.py#function-leaked",
            f"{tmp_path}/outside.py#function-leaked",
            "link/outside.py#function-leaked",
            "app/../../outside.py#function-leaked",
            "/etc/passwd#module-1",
        ):
            answers.append(await call(session, "read_chunk", {"chunk_id": chunk_id}))
        for path in (
            "../outside.py",
            str(tmp_path / "outside.py"),
            "link/outside.md",
            "app/../../outside.md",
            "/etc/passwd",
            "..",
        ):
            answers.append(await call(session, "outline", {"path": path}))
        answers.append(await call(session, "search_chunks", {"query": "leaked"}))
    for answer in answers:
        assert "SECRET" not in text_of(answer)
        assert "leaked" not in json.dumps(answer.structuredContent or {}).replace(
            "function-leaked", ""
        )
    assert all(answer.isError for answer in answers[:-1])
    assert answers[-1].structuredContent == {"indexed": 1, "mode": "hybrid", "results": []}


async def test_a_root_that_is_not_a_folder_is_an_error_result(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("hello", encoding="utf-8")
    log = tmp_path / "stderr.log"
    async with mcp_session(not_a_folder, log=log) as session:
        listed = await asyncio.wait_for(session.list_tools(), TIMEOUT)
        assert len(listed.tools) == 4
        for _ in range(2):  # and it keeps answering
            result = await call(session, "search_chunks", {"query": "hello"})
            assert result.isError
            assert f"root {str(not_a_folder)!r} is not a folder" in text_of(result)
    assert "is not a folder" in log.read_text(encoding="utf-8")


def test_a_bad_root_is_logged_before_the_sdk_has_loaded(tmp_path: Path) -> None:
    """A client can go before the SDK has loaded: the bad root is on stderr by
    then (here the SDK never loads: an ``mcp`` package that hangs shadows it)."""
    hanging = tmp_path / "hang" / "mcp"
    hanging.mkdir(parents=True)
    (hanging / "__init__.py").write_text("import time\ntime.sleep(600)\n", encoding="utf-8")
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("hello", encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(hanging.parent), ENV.get("PYTHONPATH")]))
    server = subprocess.Popen(
        [sys.executable, "-m", "chunkls", "mcp", "--root", str(not_a_folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**ENV, "PYTHONPATH": path},
    )
    try:
        assert server.stderr is not None
        waiting = select.poll()  # (not select(): a test process may hold fds past 1,023)
        waiting.register(server.stderr, select.POLLIN)
        assert waiting.poll(TIMEOUT * 1000), "nothing logged while the SDK loads"
        line = server.stderr.readline().decode()  # the first line, while the SDK hangs
        assert f"root {str(not_a_folder)!r} is not a folder" in line
    finally:
        server.kill()
        server.wait()


async def test_a_root_without_chunkable_files_is_an_error_result(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n", encoding="utf-8")
    async with mcp_session(tmp_path) as session:
        result = await call(session, "search_chunks", {"query": "anything"})
        assert result.isError
        assert "no chunkable files" in text_of(result)
        checked = await call(session, "check_citations", {"text": "see a.py#function-f"})
        assert checked.structuredContent is not None
        assert [p["chunk_id"] for p in checked.structuredContent["problems"]] == ["a.py#function-f"]


# -- the session itself ------------------------------------------------------------


def _raw_server(root: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "chunkls", "mcp", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )


def _send(server: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert server.stdin is not None
    server.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
    server.stdin.flush()


def _receive(server: subprocess.Popen[bytes], request_id: int | None) -> dict[str, Any]:
    """The answer to a request (``None``: the next answer to any)."""
    assert server.stdout is not None
    while True:
        line = server.stdout.readline()
        assert line, "the server closed stdout"
        message = json.loads(line)  # stdout carries the protocol only
        if "id" in message and request_id in (None, message["id"]):
            return message  # type: ignore[no-any-return]


def _initialize(server: subprocess.Popen[bytes]) -> None:
    _send(
        server,
        {
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
    )
    _receive(server, 0)
    _send(server, {"method": "notifications/initialized"})


def _hang_up(server: subprocess.Popen[bytes]) -> bytes:
    """Close the server's stdin, wait for it to end; returns what it logged."""
    assert server.stdin is not None and server.stderr is not None
    server.stdin.close()
    server.wait(timeout=TIMEOUT)
    return server.stderr.read()


def _call(request_id: int, query: str) -> dict[str, Any]:
    return {
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "search_chunks", "arguments": {"query": query}},
    }


def test_a_call_in_flight_when_stdin_closes_is_answered_first(workspace: Path) -> None:
    # a cold cache: the call waits for the index, and stdin closes meanwhile (enough
    # files that the index is still loading when the end of stdin is read, however
    # busy the machine: with the fixture's few, the call could be answered first)
    generated = workspace / "app" / "generated"
    generated.mkdir()
    for number in range(150):
        (generated / f"m{number}.py").write_text(
            "".join(f"def f{n}(x):\n    return x + {n}\n\n" for n in range(20))
        )
    server = _raw_server(workspace)
    _initialize(server)
    _send(server, _call(1, "greet"))
    assert server.stdin is not None and server.stdout is not None
    server.stdin.close()  # as `printf ... | chunkls mcp` does
    answer = _receive(server, 1)
    assert answer["result"]["isError"] is False
    assert answer["result"]["structuredContent"]["results"]
    assert server.stdout.read() == b""  # then the server ends
    stderr = _hang_up(server)
    assert server.returncode == 0
    assert b"answering the calls in flight first" in stderr
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")


def test_a_client_that_goes_away_mid_call_ends_the_server_cleanly(workspace: Path) -> None:
    server = _raw_server(workspace)
    _initialize(server)
    _send(server, _call(1, "greet"))
    assert server.stdout is not None
    server.stdout.close()  # gone before the answer: it has nowhere to go
    stderr = _hang_up(server)
    assert server.returncode == 0
    assert b"the client closed stdout" in stderr
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")
    assert b"Exception ignored" not in stderr, stderr.decode(errors="replace")


def test_a_cancelled_call_leaves_the_server_answering(workspace: Path) -> None:
    server = _raw_server(workspace)
    try:
        _initialize(server)
        _send(server, _call(1, "greet"))
        _send(server, {"method": "notifications/cancelled", "params": {"requestId": 1}})
        _send(server, _call(2, "hello"))
        answers = {}
        while len(answers) < 2:  # the cancelled call is answered too (it takes milliseconds)
            answer = _receive(server, None)
            answers[answer["id"]] = answer
        assert answers[1]["result"]["isError"] is False
        assert answers[2]["result"]["isError"] is False
        assert answers[2]["result"]["structuredContent"]["results"]
        _send(server, {"id": 3, "method": "ping"})
        assert _receive(server, 3)["result"] == {}
    finally:
        stderr = _hang_up(server)
    assert server.returncode == 0
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")


def test_the_watcher_leaves_out_what_the_corpus_rules_leave_out(workspace: Path) -> None:
    from chunkls.chunking.corpus import CorpusRules
    from chunkls.index.session import Session
    from chunkls.mcp.freshness import Freshness

    index = Session()
    index.add_root(workspace, CorpusRules())
    wanted = Freshness(index).wanted
    root = str(workspace)
    assert wanted(1, f"{root}/app/new.py")
    assert wanted(1, f"{root}/pyproject.toml")
    assert wanted(1, "/elsewhere/.git/x")  # not under a root: refresh decides
    for left_out in (".git/index", "build/a/b.py", ".venv/lib/x.py", "app/__pycache__"):
        assert not wanted(1, f"{root}/{left_out}"), left_out
