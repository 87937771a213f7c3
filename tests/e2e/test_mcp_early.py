"""``chunkls mcp`` answering while the SDK loads (``chunkls.mcp.early``): a later
start answers ``initialize``, ``tools/list``, ``ping`` and tool calls before the
SDK has loaded, with exactly what the SDK-served server answered before (a tool
call answered while the index loads says so: that notice aside).

A bare JSON-RPC client on the pipes sends every request at once after the
``initialize`` answer (so they arrive while the SDK loads) and reads the log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent.parent / "fixtures"
TIMEOUT = 120
SERVE = (
    "import sys, chunkls.storage.cache\n"
    "chunkls.storage.cache.RACY_NS = 0  # the files were written a moment ago\n"
    "from chunkls.cli import run\n"
    "sys.argv[0] = 'chunkls'\n"
    "run()\n"
)
"""``python -m chunkls`` for files just written: a cache holding a file changed
within ``RACY_NS`` of its check is not read in place (the server checks again)."""
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"},
}
CALLS: list[tuple[str, Any]] = [
    ("tools/list", None),
    ("ping", None),
    ("tools/call", {"name": "search_chunks", "arguments": {"query": "greet"}}),
    (
        "tools/call",
        {"name": "read_chunk", "arguments": {"chunk_id": "app/greet.py#function-greet"}},
    ),
    ("tools/call", {"name": "read_chunk", "arguments": {"chunk_id": "app/nowhere.py#function-x"}}),
    ("tools/call", {"name": "outline", "arguments": {"path": "app/greet.py"}}),
    (
        "tools/call",
        {"name": "check_citations", "arguments": {"text": "see app/greet.py#function-gret"}},
    ),
    ("tools/call", {"name": "search_chunks", "arguments": {"query": 3}}),
    ("tools/call", {"name": "no_such_tool", "arguments": {}}),
]


def session(
    root: Path, cache: Path, calls: list[tuple[str, Any]], *more: Path
) -> tuple[list[Any], str]:
    """One ``chunkls mcp`` session on ``root`` (and ``more`` roots): the answers
    (initialize's first) and the log."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    roots = [arg for path in (root, *more) for arg in ("--root", str(path))]
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE}]
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, "mcp", *roots],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()

    try:
        send(lines[0])
        answers = {0: json.loads(process.stdout.readline())}
        batch = [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
        for number, (method, params) in enumerate(calls, 1):
            request: dict[str, Any] = {"jsonrpc": "2.0", "id": number, "method": method}
            if params is not None:
                request["params"] = params
            batch.append(request)
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in batch))
        process.stdin.flush()
        while len(answers) < len(calls) + 1:
            message = json.loads(process.stdout.readline())
            if "id" in message and "method" not in message:
                answers[message["id"]] = message
        process.stdin.close()
        log = process.stderr.read().decode() if process.stderr else ""
        process.wait(TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return [answers[n] for n in range(len(calls) + 1)], log


def without_notice(answer: Any) -> Any:
    """An answer without the notice of one given while the index loads."""
    from chunkls.mcp.specs import LOADING_NOTICE

    result = answer.get("result")
    if not isinstance(result, dict) or "content" not in result:
        return answer
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        structured = {k: v for k, v in structured.items() if k != "notice"}
    text = result["content"][0]["text"].replace(f"\n\n({LOADING_NOTICE})", "")
    content = [{**result["content"][0], "text": text}, *result["content"][1:]]  # (its links)
    return {**answer, "result": {**result, "content": content, "structuredContent": structured}}


def noticed(answer: Any) -> bool:
    """Whether a tool call's answer says the index was still loading."""
    from chunkls.mcp.specs import LOADING_NOTICE

    return LOADING_NOTICE in answer["result"]["content"][0]["text"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    shutil.copytree(FIXTURES / "workspace", root)
    return root


def test_a_later_start_answers_early_what_the_sdk_answered(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, first_log = session(root, cache, CALLS)  # nothing kept: the SDK answers
    assert "while loading" not in first_log
    second, _ = session(root, cache, CALLS)  # initialize early; the rest kept for next time
    third, third_log = session(root, cache, CALLS)
    assert "answered initialize, tools/list, ping, tools/call while loading (7 tool calls)" in (
        third_log
    )
    assert [without_notice(a) for a in first] == [without_notice(a) for a in second]
    assert [without_notice(a) for a in second] == [without_notice(a) for a in third]
    # the third start's calls were answered from the cache, while its index loaded
    assert all(noticed(answer) for answer in third[3:])
    results = [answer.get("result") for answer in third]
    # the kept initialize answer declares the resources and completion, as the SDK did
    capabilities = results[0]["capabilities"]
    assert capabilities["resources"] == {"subscribe": False, "listChanged": True}
    assert capabilities["completions"] == {}
    assert results[1]["tools"] and results[2] == {}
    assert not results[3]["isError"] and results[3]["structuredContent"]["results"]
    assert results[8]["isError"] and results[9]["isError"]


def test_a_changed_tree_is_answered_by_the_server(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    call = [
        ("tools/call", {"name": "read_chunk", "arguments": {"chunk_id": "app/new.py#function-new"}})
    ]
    session(root, cache, CALLS)
    session(root, cache, CALLS)
    (root / "app" / "new.py").write_text("def new():\n    return 1\n", "utf-8")
    answers, log = session(root, cache, call)
    assert "answered initialize while loading (0 tool calls)" in log  # not current
    assert not answers[1]["result"]["isError"]
    assert "def new():" in answers[1]["result"]["content"][0]["text"]


def test_other_clients_and_roots_are_answered_by_the_server(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    session(root, cache, CALLS)
    session(root, cache, CALLS)
    answers, log = session(root, cache, CALLS[2:3], root / "app")
    assert "answered initialize while loading (0 tool calls)" in log  # two roots: the server's
    assert not answers[1]["result"]["isError"]
    assert answers[1]["result"]["structuredContent"]["results"]
