"""The edges of a session and of the base protocol, as the LSP specification
asks: requests before ``initialize`` and after ``shutdown`` are answered with
errors, ``exit`` sets the exit code, a batch is refused, and a frame with a
wrong ``Content-Length`` costs that message only.

No module-wide event loop here: ``bare_client`` is a function-scoped fixture.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import CACHE_HOME, start_session, uri
from tests.e2e.helpers import command, hover
from tests.hardening.rpc import RawServer

SHORT = 10
"""Seconds to wait for an answer that comes at once when it comes at all."""

SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600


def miscounted(message: dict[str, Any]) -> bytes:
    """A frame whose Content-Length counts the body's characters, not its bytes
    (as some clients do): short on any text that is not ASCII."""
    body = json.dumps(message, ensure_ascii=False)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body.encode()


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[RawServer]:
    """A server on a raw JSON-RPC connection (not initialized yet)."""
    server = RawServer(tmp_path / "server.stderr", env={"XDG_CACHE_HOME": CACHE_HOME})
    try:
        yield server
    finally:
        server.close()


def exit_code(server: RawServer) -> int:
    """Send ``exit``; the process's exit code."""
    server.notify("exit")
    server.drain(SHORT)
    return server.proc.wait(SHORT)


def error_of(server: RawServer, id: Any) -> dict[str, Any]:
    response = server.wait(id, SHORT)
    assert "error" in response, response
    return response["error"]  # type: ignore[no-any-return]


# -- a wrong Content-Length -----------------------------------------------------------


async def test_a_short_counted_message_costs_only_itself(
    bare_client: LanguageClient, workspace: Path
) -> None:
    await start_session(bare_client, "visual-studio-code", workspace)
    path = workspace / "notes" / "café.md"
    text = "Café — voilà: app/greet.py#function-greet 😀\n" * 20
    path.write_text(text, encoding="utf-8")
    bad = {
        "jsonrpc": "2.0",
        "method": types.TEXT_DOCUMENT_DID_OPEN,
        "params": {
            "textDocument": {"uri": uri(path), "languageId": "markdown", "version": 1, "text": text}
        },
    }
    writer: Any = bare_client.protocol.writer
    writer.write(miscounted(bad))
    # every message after it is read: requests, and the document opened again
    for _ in range(3):
        stats = await asyncio.wait_for(command(bare_client, "chunkls.stats"), SHORT)
        assert stats["folders"]
    bare_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri(path), language_id="markdown", version=2, text=text)
        )
    )
    shown = await asyncio.wait_for(hover(bare_client, uri(path), types.Position(0, 20)), SHORT)
    assert shown is not None and "greet" in shown
    # (the fixture shuts the session down)


def test_a_short_counted_message_then_shutdown(raw: RawServer, tmp_path: Path) -> None:
    raw.initialize([tmp_path])
    text = "naïve — 😀 " * 50
    raw.write(
        miscounted(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": uri(tmp_path / "a.md"),
                        "languageId": "markdown",
                        "version": 1,
                        "text": text,
                    }
                },
            }
        )
    )
    assert raw.command("chunkls.stats", timeout=SHORT)["folders"] == [str(tmp_path)]
    assert raw.shutdown(SHORT) == 0
    assert "bytes of input that were not a message header" in raw.log_text()


def test_an_over_counted_message_at_end_of_input_ends_the_process(raw: RawServer) -> None:
    raw.initialize([])
    body = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}).encode()
    raw.write(b"Content-Length: %d\r\n\r\n" % (len(body) + 1000) + body)
    raw.drain(SHORT)
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    assert raw.proc.wait(SHORT) == 0


# -- the session's states ---------------------------------------------------------------


def test_requests_before_initialize_are_refused(raw: RawServer, tmp_path: Path) -> None:
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///x.md"}})  # dropped
    stats = raw.request("workspace/executeCommand", {"command": "chunkls.stats"})
    shutdown = raw.request("shutdown")
    for id in (stats, shutdown):
        error = error_of(raw, id)
        assert error["code"] == SERVER_NOT_INITIALIZED, error
        assert "initialize" in error["message"]
    raw.initialize([tmp_path])
    assert raw.command("chunkls.stats", timeout=SHORT)["folders"] == [str(tmp_path)]
    assert raw.shutdown(SHORT) == 0
    assert not raw.problems, raw.problems


def test_requests_after_shutdown_are_refused(raw: RawServer) -> None:
    raw.initialize([])
    assert raw.call("shutdown", timeout=SHORT) is None
    for method, params in [
        ("shutdown", None),
        ("workspace/executeCommand", {"command": "chunkls.stats"}),
        (
            "textDocument/hover",
            {"textDocument": {"uri": "file:///x.md"}, "position": {"line": 0, "character": 0}},
        ),
    ]:
        error = error_of(raw, raw.request(method, params))
        assert error["code"] == INVALID_REQUEST, error
        assert "shut down" in error["message"]
    raw.notify("textDocument/didClose", {"textDocument": {"uri": "file:///x.md"}})  # dropped
    assert exit_code(raw) == 0
    assert not raw.problems, raw.problems


@pytest.mark.parametrize("initialized", [True, False])
def test_exit_without_shutdown_exits_with_1(raw: RawServer, initialized: bool) -> None:
    if initialized:
        raw.initialize([])
    assert exit_code(raw) == 1


def test_exit_after_shutdown_exits_with_0(raw: RawServer) -> None:
    raw.initialize([])
    assert raw.call("shutdown", timeout=SHORT) is None
    assert exit_code(raw) == 0


# -- batches ------------------------------------------------------------------------


def test_a_batch_is_refused_once_and_the_session_goes_on(raw: RawServer) -> None:
    raw.initialize([])
    stats = {"jsonrpc": "2.0", "method": "workspace/executeCommand"}
    raw.send([{**stats, "id": 1001, "params": {"command": "chunkls.stats"}}, {**stats, "id": 1002}])
    error = error_of(raw, None)
    assert error["code"] == INVALID_REQUEST and "batch" in error["message"], error
    # notifications alone: nobody waits for an answer, none is sent
    raw.send([{"jsonrpc": "2.0", "method": "initialized", "params": {}}])
    assert raw.command("chunkls.stats", timeout=SHORT)["folders"] == []
    assert len(raw.responses[json.dumps(None)]) == 1
    assert json.dumps(1001) not in raw.responses and json.dumps(1002) not in raw.responses
    assert raw.shutdown(SHORT) == 0
    assert not raw.problems, raw.problems


def test_a_command_without_its_arguments_is_invalid_params(raw: RawServer) -> None:
    raw.initialize([])
    for name in ("chunkls.search", "chunkls.chunkAt"):
        error = error_of(raw, raw.request("workspace/executeCommand", {"command": name}))
        assert error["code"] == -32602, error  # InvalidParams, not an internal error
        assert "traceback" not in json.dumps(error)
    assert raw.command("chunkls.stats", timeout=SHORT)["folders"] == []  # none needed
    assert raw.shutdown(SHORT) == 0


@pytest.mark.parametrize("bad_id", [{"a": 1}, True, [1]])
def test_a_request_with_a_bad_id_is_refused_with_a_null_id(raw: RawServer, bad_id: Any) -> None:
    raw.initialize([])
    params = {"command": "chunkls.stats"}
    raw.send(
        {"jsonrpc": "2.0", "id": bad_id, "method": "workspace/executeCommand", "params": params}
    )
    error = error_of(raw, None)
    assert error["code"] == INVALID_REQUEST and "bad id" in error["message"], error
    assert raw.command("chunkls.stats", timeout=SHORT)["folders"] == []
    assert raw.shutdown(SHORT) == 0


@pytest.mark.parametrize("method", [5, ["x"], None])
def test_a_method_that_is_not_a_string_is_an_invalid_request(raw: RawServer, method: Any) -> None:
    raw.initialize([])
    error = error_of(raw, raw.request(method, {}))  # type: ignore[arg-type]
    assert error["code"] == INVALID_REQUEST and "method" in error["message"], error
    assert raw.command("chunkls.stats", timeout=SHORT)["folders"] == []
    assert raw.shutdown(SHORT) == 0


def test_each_log_record_goes_to_one_place_at_its_level(raw: RawServer, tmp_path: Path) -> None:
    """Once the client listens, a record is a ``window/logMessage`` of its level
    and is not also written to stderr (a client showing both would show it twice)."""
    (tmp_path / "a.py").write_text("def f():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text("[tool.chunkls]\nexclude = 3\n")  # a warning
    raw.initialize([tmp_path])
    raw.wait_indexed()
    assert raw.shutdown(SHORT) == 0
    sent = [
        (m["params"]["type"], m["params"]["message"])
        for m in raw.notifications
        if m.get("method") == "window/logMessage"
    ]
    indexed = [(kind, text) for kind, text in sent if text.startswith("Indexed 1 chunks in ")]
    warned = [(kind, text) for kind, text in sent if "exclude" in text]
    assert [kind for kind, _ in indexed] == [3] and [kind for kind, _ in warned] == [2], sent
    stderr = raw.stderr_text()
    assert "Indexed 1 chunks" not in stderr and "exclude" not in stderr, stderr
