"""textDocument/documentSymbol and workspace/symbol."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from chunkls.index.session import build_index
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
    # named as they read in an outline or breadcrumbs; the chunk ID is the detail
    assert got[:4] == [
        ("<module>", types.SymbolKind.Module, 1, 6),
        ("trace", types.SymbolKind.Function, 9, 14),
        ("greet", types.SymbolKind.Function, 17, 20),
        ("Greeter", types.SymbolKind.Class, 23, 30),
    ]
    assert [s.detail for s in symbols[:4]] == [  # type: ignore[union-attr]
        "app/greet.py#module-1",
        "app/greet.py#function-trace",
        "app/greet.py#function-greet",
        "app/greet.py#class-Greeter",
    ]


async def test_markdown_symbols_are_named_by_heading_text(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    document_uri = open_document(shared_client, shared_workspace / "README.md")
    symbols = await asyncio.wait_for(
        shared_client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(document_uri))
        ),
        TIMEOUT,
    )
    assert symbols
    for symbol in symbols:
        assert isinstance(symbol, types.DocumentSymbol)
        assert symbol.detail is not None and symbol.detail.startswith("README.md#heading-")
        assert symbol.kind == types.SymbolKind.String
        assert not symbol.name.startswith("heading-")
        heading = symbol.detail.partition("#heading-")[2]
        assert heading.startswith(re.sub(r"[^a-z0-9]+", "-", symbol.name.lower()).strip("-"))


async def test_workspace_symbol_is_the_search(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    """The palette's ranking: the default mode's (hybrid), named with each score."""
    symbols = await asyncio.wait_for(
        shared_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="greeting polite")),
        TIMEOUT,
    )
    assert symbols
    first = symbols[0]
    assert first.name == "app/greet.py#class-Greeter"
    assert isinstance(first.location, types.Location)
    assert first.location.uri == uri(shared_workspace / "app" / "greet.py")
    roots = [shared_workspace, shared_workspace.parent / "second"]
    expected = build_index(roots).queries.search("greeting polite", len(symbols), "hybrid")
    # at the part of the class that answers best (``__init__`` sets the greeting)
    assert expected[0].lines == (26, 27)
    assert (first.location.range.start.line, first.location.range.end.line) == (25, 26)
    # each result, then (when its best part is a definition inside it) that part
    # by its own name, in the chunk's ID
    listed = []
    for hit in expected:
        listed.append((hit.item.chunk.chunk_id, f"hybrid {hit.score:.3f}"))
        if hit.part is not None:
            listed.append((hit.part, f"hybrid {hit.score:.3f} in {hit.item.chunk.chunk_id}"))
    assert [(s.name, s.container_name) for s in symbols] == listed
    for query in ("  ", "how does the", "?!"):
        empty = await asyncio.wait_for(
            shared_client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)), TIMEOUT
        )
        assert empty == [], query


async def test_workspace_symbol_reads_a_mistyped_name_fuzzily(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    """A name no symbol is, has as a part or begins: the chunks defining the names
    it stands for first (container ``fuzzy``), then the ranking's, as completion."""
    symbols = await asyncio.wait_for(
        shared_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="Greter")),
        TIMEOUT,
    )
    assert symbols
    first = symbols[0]
    assert (first.name, first.container_name) == ("app/greet.py#class-Greeter", "fuzzy 1.000")
    assert isinstance(first.location, types.Location)
    assert first.location.uri == uri(shared_workspace / "app" / "greet.py")
    assert (first.location.range.start.line, first.location.range.end.line) == (22, 29)
    roots = [shared_workspace, shared_workspace.parent / "second"]
    queries = build_index(roots).queries
    hits, fuzzy = queries.symbol_search("Greter", 100, "hybrid")
    assert fuzzy >= 1
    assert [s.name for s in symbols if "#" in s.name] == [h.item.chunk.chunk_id for h in hits]
    assert [s.name for s in symbols if "#" in s.name] == queries.propose_ids("Greter", 100)[0]
    abbreviated = await asyncio.wait_for(
        shared_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="fetchgreet")),
        TIMEOUT,
    )
    assert abbreviated and abbreviated[0].name.endswith("#function-fetch_greeting")
