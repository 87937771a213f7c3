"""A hover on an ID the index does not have while indexing runs says so, rather
than calling the ID unknown (it may be in a file not indexed yet)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_protocol import _feed, _started


async def test_a_missing_id_while_indexing_is_not_called_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, writer = await _started(tmp_path, monkeypatch)
    notes = tmp_path / "ws" / "notes.md"
    text = "# Notes\n\nsee `a.py#function-g` and `a.py#function-f`\n"
    notes.write_text(text)
    document = {"uri": notes.as_uri(), "languageId": "markdown", "version": 1, "text": text}
    _feed(server, {"method": "textDocument/didOpen", "params": {"textDocument": document}})

    def hover(request_id: int, character: int) -> str:
        position = {"line": 2, "character": character}
        params = {"textDocument": {"uri": notes.as_uri()}, "position": position}
        _feed(server, {"id": request_id, "method": "textDocument/hover", "params": params})
        answer = next(m for m in writer.messages if m.get("id") == request_id)
        return str(answer["result"]["contents"]["value"])

    assert hover(10, 8).startswith("Unknown chunk ID `a.py#function-g`")
    assert hover(11, 30).startswith("**`a.py#function-f`**")
    server.indexing += 1  # as while a folder is indexed
    try:
        assert hover(12, 8) == (
            "Chunk ID `a.py#function-g`: not in the index yet; the workspace is being indexed."
        )
        assert hover(13, 30).startswith("**`a.py#function-f`**")  # what is indexed resolves
    finally:
        server.indexing -= 1
