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

from chunkls.lsp.server import ChunkServer
from chunkls.lsp.setup import create_server
from tests.unit.test_compat import pending_futures


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
    assert pending_futures(server.protocol) == {}


async def test_a_request_the_client_never_answers_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    server, writer = await _started(tmp_path, monkeypatch)
    pending = dict(pending_futures(server.protocol))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(server.workspace_code_lens_refresh_async(None), 0.05)
    await asyncio.sleep(0)
    assert pending_futures(server.protocol) == pending
    assert not [key for key in server.protocol._result_types if key not in pending]
    assert server.protocol.pending == {}
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
    assert server.protocol.pending
    _feed(server, {"id": 9, "method": "shutdown"})
    await asyncio.sleep(0.01)
    answer = next(m for m in writer.messages if m.get("id") == 9)
    assert answer == {"jsonrpc": "2.0", "id": 9, "result": None}
    assert pending_futures(server.protocol) == {}
    assert server.protocol.pending == {}
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
    assert not pending_futures(server.protocol)


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
    server.protocol.notify("chunkls/test", {"value": text})  # pygls writes it
    server.protocol.send_error(1, -32600, text)  # chunkls writes it
    notified, refused = sent
    for data in sent:
        header, body = data.split(b"\r\n\r\n", 1)
        assert header.split(b"\r\n")[0] == b"Content-Length: %d" % len(body)
        body.decode("utf-8")  # valid UTF-8 on the wire
    assert json.loads(notified.split(b"\r\n\r\n", 1)[1])["params"]["value"] == text
    assert json.loads(refused.split(b"\r\n\r\n", 1)[1])["error"]["message"] == text
