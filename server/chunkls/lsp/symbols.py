"""Outline and workspace search: documentSymbol and workspace/symbol."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.lsp.documents import get_buffer, get_document
from chunkls.lsp.ranges import chunk_range, line_start, location
from chunkls.search.modes import query_problem

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer

WORKSPACE_SYMBOL_LIMIT = 100
"""Results of a workspace/symbol query."""

SYMBOL_KINDS = {
    "function": types.SymbolKind.Function,
    "class": types.SymbolKind.Class,
    "module": types.SymbolKind.Module,
    "heading": types.SymbolKind.String,
}
"""A chunk identity's kind (its first word) -> the symbol kind shown for it."""


def register(server: ChunkServer) -> None:
    """Register the outline and workspace symbol providers."""
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(text_document_document_symbol)
    server.feature(types.WORKSPACE_SYMBOL)(workspace_symbol)


def text_document_document_symbol(
    ls: ChunkServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol]:
    """textDocument/documentSymbol: the chunks, in order, by name (the ID as detail)."""
    context = get_document(ls, params.text_document.uri)
    buffer = get_buffer(ls, context) if context is not None else None
    if context is None or buffer is None:
        return []
    return [
        types.DocumentSymbol(
            name=chunk.symbol or chunk.identity,  # ``greet``, a heading's text, ``<module>``
            detail=chunk.chunk_id,
            kind=symbol_kind(chunk),
            range=chunk_range(chunk, context.lines, ls.encoding),
            selection_range=line_start(chunk.start_line - 1),
        )
        for chunk in buffer.chunks
        if chunk.end_line - 1 < len(context.lines)
    ]


def workspace_symbol(
    ls: ChunkServer, params: types.WorkspaceSymbolParams
) -> list[types.WorkspaceSymbol]:
    """workspace/symbol: ``Queries.symbol_search``'s chunks, each at its best part (a
    definition inside: by its own name, its container the chunk's ID; fuzzy: ``fuzzy``)."""
    mode = ls.queries.search_mode(ls.settings.search.requested)
    if query_problem(params.query, mode) is not None:
        return []
    found = []
    hits, fuzzy = ls.queries.symbol_search(params.query, WORKSPACE_SYMBOL_LIMIT, mode)
    for number, hit in enumerate(hits):
        how = f"{'fuzzy' if number < fuzzy else mode} {hit.score:.3f}"
        found.append(
            types.WorkspaceSymbol(
                name=hit.item.chunk.chunk_id,
                kind=symbol_kind(hit.item.chunk),
                location=location(hit.item, ls.encoding, hit.lines),
                container_name=how,
            )
        )
        if hit.part is not None:  # a definition inside the chunk: by its name, in the chunk
            found.append(
                types.WorkspaceSymbol(
                    name=hit.part,
                    kind=types.SymbolKind.Method,
                    location=location(hit.item, ls.encoding, hit.lines),
                    container_name=f"{how} in {hit.item.chunk.chunk_id}",
                )
            )
    return found


def symbol_kind(chunk: LocatedChunk) -> types.SymbolKind:
    """A symbol kind for a chunk's identity kind."""
    return SYMBOL_KINDS.get(chunk.identity.split("-", 1)[0], types.SymbolKind.Object)
