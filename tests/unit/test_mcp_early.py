"""The MCP server's early answers (``chunkls.mcp.early``): lines, keys, what it
answers from kept answers and from the cache read in place, what it leaves to
the SDK, and how the SDK then reads and writes."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

import chunkls.storage.cache
from chunkls.chunking.corpus import CorpusRules
from chunkls.index.session import Session
from chunkls.mcp.early import (
    AnswerFilter,
    McpEarly,
    PreludeInput,
    cut_line,
    frame,
    initialize_key,
    list_key,
    mcp_fingerprint,
)
from chunkls.mcp.service import McpService, loading
from chunkls.mcp.tools import Tools, call_result, checked
from chunkls.runtime.early_reader import KeptAnswers, Prelude

INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "a"}}
ANSWER = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "chunkls"}}
TOOLS = {"tools": [{"name": "search_chunks"}]}


@pytest.mark.parametrize(
    ("data", "lines", "left"),
    [
        (b'{"a":1}\n', [b'{"a":1}'], b""),
        (b'{"a":1}\n{"b":2}\n{"c"', [b'{"a":1}', b'{"b":2}'], b'{"c"'),
        (b"\n", [b""], b""),
        (b'{"a":1}\r\n', [b'{"a":1}\r'], b""),
    ],
)
def test_cut_line_takes_whole_lines(data: bytes, lines: list[bytes], left: bytes) -> None:
    buffer = bytearray(data)
    cut = []
    while (line := cut_line(buffer)) is not None:
        cut.append(line)
    assert cut == lines and bytes(buffer) == left


def test_frame_is_one_ascii_line() -> None:
    line = frame({"id": 1, "result": {"text": "é\n"}})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"id": 1, "result": {"text": "é\n"}}


def test_keys_are_what_the_answers_depend_on() -> None:
    assert initialize_key(INITIALIZE) == initialize_key({**INITIALIZE, "clientInfo": {"name": "b"}})
    assert initialize_key(INITIALIZE) != initialize_key({**INITIALIZE, "protocolVersion": "x"})
    assert initialize_key(INITIALIZE) != initialize_key({**INITIALIZE, "capabilities": {"a": {}}})
    assert initialize_key(None) == ""
    assert list_key(None) == list_key({}) != list_key({"cursor": "2"})
    assert len(mcp_fingerprint()) == 64


@pytest.fixture
def kept(tmp_path: Path) -> KeptAnswers:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    kept.put(initialize_key(INITIALIZE), ANSWER)
    kept.put(list_key(None), TOOLS)
    return kept


@pytest.fixture
def tree(tmp_path: Path, cache_home: Path) -> Path:
    """A root whose cache (in ``cache_home``) holds it as it is."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "m.py").write_text("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n")
    (root / "notes.md").write_text("# Notes\n\nSee m.py#function-alpha.\n")
    index = Session(chunkls.storage.cache.cache_dir())
    folder = index.add_root(root, CorpusRules())
    index.index_folder(folder)
    index.close()
    return root


def _call(name: str, arguments: Any, message_id: Any = 3) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": message_id, "method": "tools/call", "params": params}


def _early(kept: KeptAnswers, *roots: Path, cache: bool = True) -> McpEarly:
    early = McpEarly(kept, McpService(list(roots), [], cache))
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE}
    assert early.first(request) == ANSWER
    return early


def test_ping_and_the_kept_tool_list_are_answered(kept: KeptAnswers, tree: Path) -> None:
    early = _early(kept, tree)
    assert early.answer({"jsonrpc": "2.0", "id": 1, "method": "ping"}) == {}
    assert early.answer({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) == TOOLS
    assert (
        early.answer({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "x"}})
        is None
    )
    assert early.answer({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert early.answer({"jsonrpc": "2.0", "id": 4, "method": "resources/list"}) is None


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("search_chunks", {"query": "alpha"}),
        ("read_chunk", {"chunk_id": "m.py#function-beta"}),
        ("read_chunk", {"chunk_id": "m.py#function-gamma"}),
        ("outline", {"path": "m.py"}),
        ("check_citations", {"text": "m.py#function-alpha and m.py#function-alpah"}),
        ("search_chunks", {"query": 3}),
        ("search_chunks", None),
        ("nothing", {}),
    ],
)
def test_a_tool_call_is_the_tools_answer_on_the_loaded_index(
    kept: KeptAnswers, tree: Path, name: str, arguments: Any
) -> None:
    early = _early(kept, tree)
    answered = early.answer(_call(name, arguments))
    early.finish()
    session = Session(None)
    session.index_folder(session.add_root(tree, CorpusRules()))
    queries = session.queries
    # the loaded index's answer, saying that the index is still loading
    expected = loading(checked(name, Tools(queries).call(name, arguments), queries, [tree]))
    assert answered == call_result(expected)


def test_an_unfinished_uninitialized_session_answers_nothing(tmp_path: Path) -> None:
    early = McpEarly(KeptAnswers(tmp_path / "none.json", "code"), McpService([Path()], [], True))
    assert early.first({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}) is None
    assert early.first({"jsonrpc": "2.0", "id": 0, "method": "ping"}) is None


def test_calls_without_a_current_cache_are_left_to_the_server(
    kept: KeptAnswers, tree: Path, tmp_path: Path
) -> None:
    assert _early(kept, tree, cache=False).answer(_call("search_chunks", {"query": "a"})) is None
    assert _early(kept, tree, tree).answer(_call("search_chunks", {"query": "a"})) is None
    missing = tmp_path / "missing"  # the server's answer: there is no folder to serve
    answered = _early(kept, missing).answer(_call("search_chunks", {"query": "a"}))
    assert answered is not None and answered["isError"]
    assert "no folder to serve" in answered["content"][0]["text"]
    (tree / "m.py").write_text("def alpha():\n    return 11\n")  # changed since the cache
    assert _early(kept, tree).answer(_call("search_chunks", {"query": "a"})) is None
    early = _early(kept, tree)
    assert early.answer({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 7}) is None


def test_a_stale_cache_leaves_the_call_to_the_server(kept: KeptAnswers, tree: Path) -> None:
    import sqlite3

    from chunkls.storage.cache import cache_dir, store_path

    early = _early(kept, tree)
    db = sqlite3.connect(store_path(tree.resolve(), cache_dir()))
    db.execute("DELETE FROM contents")  # rewritten meanwhile: the rows the postings name are gone
    db.commit()
    db.close()
    assert early.answer(_call("read_chunk", {"chunk_id": "m.py#function-alpha"})) is None
    # let go of; later calls are the server's too (once it has loaded)
    assert all(folder.in_place is None for folder in early.service.session.folders)
    assert early.answer(_call("search_chunks", {"query": "a"})) is None


# -- the SDK takes over ---------------------------------------------------------------


def test_the_sdk_reads_the_kept_lines_then_the_rest_of_stdin() -> None:
    read, write = os.pipe()
    try:
        os.write(write, b'ge"}\n{"late": 1}\n')
        os.close(write)
        write = -1
        prelude = Prelude(bodies=[b'{"a": 1}', b"not json"], rest=b'{"parta": "chan')
        text = io.TextIOWrapper(io.BufferedReader(PreludeInput(prelude, read)), encoding="utf-8")
        assert text.readlines() == [
            '{"a": 1}\n',
            "not json\n",
            '{"parta": "change"}\n',
            '{"late": 1}\n',
        ]
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def _prelude(first_answer: Any) -> Prelude:
    return Prelude(
        bodies=[
            json.dumps(
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE}
            ).encode(),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
            json.dumps({"jsonrpc": "2.0", "id": "L", "method": "tools/list"}).encode(),
            json.dumps({"jsonrpc": "2.0", "id": [1], "method": "tools/list"}).encode(),
        ],
        first_answer=first_answer,
        answered=["initialize"] if first_answer is not None else [],
    )


def _line(message_id: Any, result: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n"


def test_the_sdk_answers_are_kept_and_the_early_one_not_sent_again(tmp_path: Path) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    out = io.StringIO()
    writer = AnswerFilter(out, _prelude(ANSWER), kept)
    writer.write(_line(0, ANSWER))
    writer.write(_line("L", TOOLS))
    writer.write(_line("L", {"tools": []}))  # a later answer to a reused id: only sent
    writer.write(_line([1], TOOLS))
    writer.flush()
    assert out.getvalue() == _line("L", TOOLS) + _line("L", {"tools": []}) + _line([1], TOOLS)
    assert kept.get(list_key(None)) == TOOLS
    assert kept.get(initialize_key(INITIALIZE)) is None  # the same as sent: not rewritten


def test_without_an_early_answer_the_sdk_answer_is_sent_and_kept(tmp_path: Path) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    out = io.StringIO()
    AnswerFilter(out, _prelude(None), kept).write(_line(0, ANSWER))
    assert out.getvalue() == _line(0, ANSWER)
    assert kept.get(initialize_key(INITIALIZE)) == ANSWER


def test_a_refusal_after_an_early_answer_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    out = io.StringIO()
    refusal = {"jsonrpc": "2.0", "id": 0, "error": {"code": -32602, "message": "bad"}}
    AnswerFilter(out, _prelude(ANSWER), kept).write(json.dumps(refusal) + "\n")
    assert out.getvalue() == ""  # answered already
    assert "refused a request answered early" in caplog.text
    assert kept.get(initialize_key(INITIALIZE)) is None


def test_a_stale_early_answer_is_reported_and_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    out = io.StringIO()
    AnswerFilter(out, _prelude({"old": True}), kept).write(_line(0, ANSWER))
    assert out.getvalue() == ""
    assert "kept from an earlier start was stale" in caplog.text
    assert kept.get(initialize_key(INITIALIZE)) == ANSWER
