"""The language server recovers chunk texts its cache lost: a lookup stays a
lookup (it answers without them), and the file is read again in the background."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from tests import guards

from .test_protocol import _feed, _started


@pytest.mark.parametrize("guarded", [False, True], ids=["plain", "guarded"])
async def test_texts_gone_from_the_cache_are_read_again_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    """Guarded: the read that finds the texts gone neither takes nor schedules
    the write step (``tests/guards.py``); the server's freshness rule does, after."""
    server, writer = await _started(tmp_path, monkeypatch)
    if guarded:
        guards.install(monkeypatch.setattr)
    refused = guards.asked["refused"]
    folder = server.queries.folders[0]
    assert folder.cache is not None
    assert [stored.texts for stored in folder.files.values()] == [None]  # in the cache only
    other = sqlite3.connect(folder.cache.path)
    other.execute("DELETE FROM files")  # e.g. the user cleared the cache directory
    other.commit()
    other.close()
    notes = tmp_path / "ws" / "notes.md"
    text = "# Notes\n\nsee `a.py#function-f`\n"
    notes.write_text(text)
    document = {"uri": notes.as_uri(), "languageId": "markdown", "version": 1, "text": text}
    _feed(server, {"method": "textDocument/didOpen", "params": {"textDocument": document}})

    def hover(request_id: int) -> str:
        position = {"line": 2, "character": 8}
        params = {"textDocument": {"uri": notes.as_uri()}, "position": position}
        _feed(server, {"id": request_id, "method": "textDocument/hover", "params": params})
        answer = next(m for m in writer.messages if m.get("id") == request_id)
        return str(answer["result"]["contents"]["value"])

    hover(10)  # answered without the texts; the file is queued to be read again
    assert server.session.store.texts_missing
    for _ in range(200):
        if not server.session.store.texts_missing:
            break
        await asyncio.sleep(0.02)
    assert not server.session.store.texts_missing
    assert hover(11).startswith("**`a.py#function-f`**")
    assert "pass" in hover(12)
    assert guards.asked["refused"] == refused
