"""The JSON-RPC layer keeps nothing after it is done with it: no future per
notification, no entry for a request the client never answered."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

from chunkls.lsp.protocol import _NOT_PLAIN, _plain_result, _position_request
from chunkls.lsp.server import ChunkServer
from chunkls.lsp.setup import create_server


class Capture:
    """A writer that keeps what the server sends."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass


def _feed(server: ChunkServer, message: dict[str, Any]) -> None:
    protocol = server.protocol
    protocol.handle_message(
        json.loads(
            json.dumps({"jsonrpc": "2.0", **message}), object_hook=protocol.structure_message
        )
    )


async def _started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ChunkServer, Capture]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.py").write_text("def f():\n    pass\n")
    server = create_server()
    writer = Capture()
    server.protocol.set_writer(writer)
    root = (tmp_path / "ws").as_uri()
    _feed(
        server, {"id": 1, "method": "initialize", "params": {"rootUri": root, "capabilities": {}}}
    )
    _feed(server, {"method": "initialized", "params": {}})
    for _ in range(200):
        if not server.indexing:
            break
        await asyncio.sleep(0.02)
    return server, writer


async def test_notifications_leave_no_futures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _ = await _started(tmp_path, monkeypatch)
    uri = (tmp_path / "ws" / "a.py").as_uri()
    document = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
    _feed(server, {"method": "textDocument/didOpen", "params": {"textDocument": document}})
    for version in range(2, 102):
        _feed(
            server,
            {
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": f"x = {version}\n"}],
                },
            },
        )
        _feed(server, {"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
        await asyncio.sleep(0)
    await asyncio.sleep(0.05)
    assert server.protocol._request_futures == {}


async def test_a_request_the_client_never_answers_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    server, writer = await _started(tmp_path, monkeypatch)
    pending = dict(server.protocol._request_futures)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(server.workspace_code_lens_refresh_async(None), 0.05)
    await asyncio.sleep(0)
    assert server.protocol._request_futures == pending
    assert not [key for key in server.protocol._result_types if key not in pending]
    sent = [m for m in writer.messages if m.get("method") == "workspace/codeLens/refresh"]
    assert sent
    # the answer comes late: dropped with a warning, nothing raised
    with caplog.at_level(logging.WARNING):
        _feed(server, {"id": sent[-1]["id"], "result": None})
    assert any("unknown message id" in r.getMessage() for r in caplog.records)
    # and the server still answers
    _feed(
        server,
        {"id": 7, "method": "workspace/executeCommand", "params": {"command": "chunkls.stats"}},
    )
    await asyncio.sleep(0.01)
    answer = next(m for m in writer.messages if m.get("id") == 7)
    assert answer["result"]["files"] == 1


async def test_shutdown_with_requests_pending_is_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, writer = await _started(tmp_path, monkeypatch)
    waiting = asyncio.ensure_future(server.workspace_code_lens_refresh_async(None))
    await asyncio.sleep(0)
    assert server.protocol._request_futures
    _feed(server, {"id": 9, "method": "shutdown"})
    await asyncio.sleep(0.01)
    answer = next(m for m in writer.messages if m.get("id") == 9)
    assert answer == {"jsonrpc": "2.0", "id": 9, "result": None}
    assert server.protocol._request_futures == {}
    waiting.cancel()


@pytest.mark.parametrize(
    ("raised", "code"),
    [(None, None), (ValueError("boom"), -32603), (JsonRpcInvalidParams("no such thing"), -32602)],
)
async def test_plain_handlers_are_answered_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: Exception | None, code: int | None
) -> None:
    """A plain handler's result (or error) is written in the same call, as pygls
    would write it, with nothing left behind."""
    server, writer = await _started(tmp_path, monkeypatch)
    calls: list[Any] = []

    def probe(params: Any) -> Any:
        calls.append(params)
        if raised is not None:
            raise raised
        return None if len(calls) == 1 else types.Hover(contents="x")

    monkeypatch.setitem(server.protocol.fm.features, types.TEXT_DOCUMENT_HOVER, probe)
    uri = (tmp_path / "ws" / "a.py").as_uri()
    params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 4}}
    for number in (41, 42):
        writer.messages.clear()
        _feed(server, {"id": number, "method": types.TEXT_DOCUMENT_HOVER, "params": params})
        [answer] = writer.messages  # no await: answered within the call
        assert answer["id"] == number
        if code is None:
            assert answer["result"] == (None if number == 41 else {"contents": "x"})
        else:
            assert answer["error"]["code"] == code
            assert "result" not in answer
    assert isinstance(calls[0], types.HoverParams)
    assert calls[0].position == types.Position(0, 4)
    assert 41 not in server.protocol._result_types and 42 not in server.protocol._result_types
    assert not server.protocol._request_futures


_POSITION = {"textDocument": {"uri": "file:///w/notes.md"}, "position": {"line": 3, "character": 7}}


@pytest.mark.parametrize("method", [types.TEXT_DOCUMENT_HOVER, types.TEXT_DOCUMENT_DEFINITION])
@pytest.mark.parametrize(
    ("message_id", "params", "typed_by_hand"),
    [
        (1, _POSITION, True),
        ("a-1", _POSITION, True),
        (1, {**_POSITION, "workDoneToken": "t"}, False),  # more fields: cattrs
        (1, {**_POSITION, "position": {"line": True, "character": 0}}, False),
        (1, {**_POSITION, "position": {"line": -1, "character": 0}}, False),
        (1, {**_POSITION, "position": {"line": 2**31, "character": 0}}, False),
        (1, {**_POSITION, "position": {"line": 0}}, False),
        (1, {**_POSITION, "textDocument": {"uri": 5}}, False),
        (1, {"position": {"line": 0, "character": 0}}, False),
        (1.5, _POSITION, False),
        (1, None, False),
        (1, [], False),
    ],
)
def test_position_requests_typed_by_hand_equal_cattrs(
    method: str, message_id: Any, params: Any, typed_by_hand: bool
) -> None:
    """Hovers and definitions in their plain form skip cattrs, with the very same
    result; anything else goes to cattrs (which types it or says what is wrong)."""
    server = create_server()
    message = {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}
    fast = _position_request(message)
    assert (fast is not None) == typed_by_hand
    if fast is not None:
        slow = LanguageServerProtocol.structure_message(server.protocol, message)
        assert (fast.id, fast.method, fast.params) == (slow.id, slow.method, slow.params)
        assert type(fast.id) is type(slow.id)


_RANGE = types.Range(types.Position(1, 2), types.Position(3, 4))
_LOCATION = types.Location("file:///w/a.py", _RANGE)


@pytest.mark.parametrize(
    ("result", "built_directly"),
    [
        (None, True),
        (types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "**x** ·"), _RANGE), True),
        (types.Hover(types.MarkupContent(types.MarkupKind.PlainText, "")), True),
        (types.Hover("a plain string"), False),
        (types.Hover([types.MarkedStringWithLanguage("python", "x")]), False),
        ([], True),
        ([_LOCATION], True),
        ([_LOCATION, types.Location("file:///w/b.py", _RANGE)], True),
        ([types.LocationLink("file:///w/a.py", _RANGE, _RANGE)], False),
        ([types.CodeLens(_RANGE)], False),
    ],
)
def test_plain_results_equal_the_converters(result: Any, built_directly: bool) -> None:
    """A hover's or definition's answer built directly is the converter's, field
    for field (and key order); anything else is left to the converter."""
    converter = create_server().protocol._converter
    plain = _plain_result(result)
    assert (plain is not _NOT_PLAIN) == built_directly
    if built_directly:
        expected = converter.unstructure(result) if result is not None else None
        assert json.dumps(plain) == json.dumps(expected)


@pytest.mark.parametrize(
    "text", ["plain", "non-ASCII · é 日本", "an emoji 🦀", "a lone surrogate \udcff in a name"]
)
def test_messages_are_framed_by_their_bytes(text: str) -> None:
    """Bodies are UTF-8 (a lone surrogate, which UTF-8 cannot carry, is sent
    escaped) and the header counts bytes."""
    server = create_server()
    sent: list[bytes] = []

    class Raw:
        def write(self, data: bytes) -> None:
            sent.append(data)

        def close(self) -> None:
            pass

    server.protocol.set_writer(Raw())
    server.protocol._send_data({"jsonrpc": "2.0", "id": 1, "result": {"value": text}})
    [data] = sent
    header, body = data.split(b"\r\n\r\n", 1)
    assert header.split(b"\r\n")[0] == b"Content-Length: %d" % len(body)
    assert json.loads(body)["result"]["value"] == text
    body.decode("utf-8")  # valid UTF-8 on the wire
