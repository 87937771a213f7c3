"""textDocument/documentSymbol and workspace/symbol."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT, open_document, uri
from tests.e2e.helpers import doc

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_document_symbols_are_the_chunks(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    document_uri = open_document(shared_client, shared_workspace / "app" / "greet.py")
    symbols = await asyncio.wait_for(
        shared_client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(document_uri))
        ),
        TIMEOUT,
    )
    assert symbols is not None
    got = [(s.name, s.kind, s.range.start.line + 1, s.range.end.line + 1) for s in symbols]  # type: ignore[union-attr]
    assert got[:4] == [
        ("module-1", types.SymbolKind.Module, 1, 6),
        ("function-trace", types.SymbolKind.Function, 9, 14),
        ("function-greet", types.SymbolKind.Function, 17, 20),
        ("class-Greeter", types.SymbolKind.Class, 23, 30),
    ]


async def test_workspace_symbol_is_bm25_search(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    symbols = await asyncio.wait_for(
        shared_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="greeting polite")),
        TIMEOUT,
    )
    assert symbols
    first = symbols[0]
    assert first.name == "app/greet.py#class-Greeter"
    assert isinstance(first.location, types.Location)
    assert first.location.uri == uri(shared_workspace / "app" / "greet.py")
    assert first.location.range.start.line == 22
    empty = await asyncio.wait_for(
        shared_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="  ")), TIMEOUT
    )
    assert empty == []
