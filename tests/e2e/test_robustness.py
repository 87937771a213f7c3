"""Bad requests get empty results or errors, and the server keeps answering."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT, open_document, uri
from tests.e2e.helpers import command, definition, doc, hover

pytestmark = pytest.mark.asyncio(loop_scope="module")

ODD_URIS = [
    "file:///nowhere/never-opened.md",
    "untitled:Untitled-1",
    "https://example.com/app/greet.py",
    "file:///tmp/../../etc/passwd",
    "not a uri at all",
    "",
]


async def still_answers(client: LanguageClient) -> None:
    results = await command(client, "chunkls.search", {"query": "greet", "topK": 50})
    assert "app/greet.py#function-greet" in [result["chunkId"] for result in results]


@pytest.mark.parametrize("document_uri", ODD_URIS)
async def test_requests_on_unknown_or_foreign_documents(
    shared_client: LanguageClient, document_uri: str
) -> None:
    position = types.Position(0, 0)
    for call in (
        shared_client.text_document_code_lens_async(
            types.CodeLensParams(text_document=doc(document_uri))
        ),
        shared_client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=doc(document_uri))
        ),
        shared_client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(document_uri))
        ),
    ):
        try:
            result = await asyncio.wait_for(call, TIMEOUT)
        except JsonRpcException:
            continue
        assert not result
    try:
        assert await definition(shared_client, document_uri, position) == []
        assert await hover(shared_client, document_uri, position) is None
    except JsonRpcException:
        pass
    await still_answers(shared_client)


@pytest.mark.parametrize(
    "position",
    [types.Position(10_000, 0), types.Position(3, 10_000), types.Position(0, 2**31 - 1)],
)
async def test_out_of_range_positions(
    shared_client: LanguageClient, shared_workspace: Path, position: types.Position
) -> None:
    document_uri = open_document(shared_client, shared_workspace / "docs" / "transcript.md")
    assert await definition(shared_client, document_uri, position) == []
    assert await hover(shared_client, document_uri, position) is None
    await still_answers(shared_client)


async def test_closed_document_is_read_from_disk_or_ignored(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    path = shared_workspace / "notes" / "chat.txt"
    document_uri = open_document(shared_client, path)
    shared_client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=doc(document_uri))
    )
    shared_client.text_document_did_close(  # twice
        types.DidCloseTextDocumentParams(text_document=doc(document_uri))
    )
    await still_answers(shared_client)
    assert document_uri == uri(path)


async def test_untitled_transcript_is_navigable(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    document_uri = "untitled:Untitled-7"
    text = "pasted chat: app/greet.py#function-greet\n"
    shared_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=document_uri, language_id="plaintext", version=1, text=text)
        )
    )
    locations = await definition(shared_client, document_uri, types.Position(0, 20))
    assert [loc.uri for loc in locations] == [uri(shared_workspace / "app" / "greet.py")]
