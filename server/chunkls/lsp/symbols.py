"""Outline and workspace search: documentSymbol and workspace/symbol."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types

from chunkls.chunking.located_chunk import ChunkHead
from chunkls.lsp.documents import get_buffer, get_document, listed_chunk
from chunkls.lsp.ranges import chunk_range, chunk_uri, line_start, location
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
    server.feature(types.WORKSPACE_SYMBOL, types.WorkspaceSymbolOptions(resolve_provider=True))(
        workspace_symbol
    )
    server.feature(types.WORKSPACE_SYMBOL_RESOLVE)(workspace_symbol_resolve)


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
    definition inside: by its own name, its container the chunk's ID; fuzzy: ``fuzzy``).
    A client that resolves a range (``workspaceSymbol/resolve``) gets the parts of
    only the chunks defining a name with a query word; the rest: when chosen."""
    mode = ls.queries.search_mode(ls.settings.search.requested)
    if query_problem(params.query, mode) is not None:
        return []
    lazy = "location.range" in (
        ls.capability("workspace", "symbol", "resolve_support", "properties") or ()
    )
    found = []
    hits, fuzzy = ls.queries.symbol_search(params.query, WORKSPACE_SYMBOL_LIMIT, mode, not lazy)
    for number, hit in enumerate(hits):
        how = f"{'fuzzy' if number < fuzzy else mode} {hit.score:.3f}"
        chunk = hit.item.chunk
        place: types.Location | types.LocationUriOnly
        # (each of a lazy listing has data: a client may read the list's type from its first)
        data: dict[str, Any] | None = {} if lazy else None
        if lazy and number >= fuzzy and hit.part is None:  # its part: when chosen
            place = types.LocationUriOnly(chunk_uri(hit.item))
            data = {"query": params.query, "chunkId": chunk.chunk_id, "line": chunk.start_line - 1}
        else:
            place = location(hit.item, ls.encoding, hit.lines)
        found.append(
            types.WorkspaceSymbol(
                name=chunk.chunk_id,
                kind=symbol_kind(chunk),
                location=place,
                container_name=how,
                data=data,
            )
        )
        if hit.part is not None:  # a definition inside the chunk: by its name, in the chunk
            found.append(
                types.WorkspaceSymbol(
                    name=hit.part,
                    kind=types.SymbolKind.Method,
                    location=place,
                    container_name=f"{how} in {chunk.chunk_id}",
                    data={} if lazy else None,
                )
            )
    return found


def workspace_symbol_resolve(
    ls: ChunkServer, symbol: types.WorkspaceSymbol
) -> types.WorkspaceSymbol:
    """workspaceSymbol/resolve: the range of a chunk ``workspace_symbol`` listed
    without one: the part of it that answers the query best (as a search finds
    it); the chunk's first line when the index no longer has it. A symbol listed
    with its range comes back as it is."""
    if isinstance(symbol.location, types.Location):
        return symbol
    data = symbol.data if isinstance(symbol.data, dict) else {}
    query, chunk_id, line = data.get("query"), data.get("chunkId"), data.get("line")
    if not (isinstance(query, str) and isinstance(chunk_id, str) and isinstance(line, int)):
        raise ValueError("workspaceSymbol/resolve: no symbol workspace/symbol listed (its data)")
    mode = ls.queries.search_mode(ls.settings.search.requested)
    entry = listed_chunk(ls, chunk_id, symbol.location.uri, line)
    if entry is None:
        place = types.Location(symbol.location.uri, line_start(max(line, 0)))
    else:
        place = location(entry, ls.encoding, ls.queries.best_lines(entry, query, mode)[0])
    return attrs.evolve(symbol, location=place, data=None)


def symbol_kind(chunk: ChunkHead) -> types.SymbolKind:
    """A symbol kind for a chunk's identity kind."""
    return SYMBOL_KINDS.get(chunk.identity.split("-", 1)[0], types.SymbolKind.Object)
