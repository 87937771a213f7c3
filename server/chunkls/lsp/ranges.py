"""Chunks to LSP ranges, locations and URIs: the one place that does it."""

from __future__ import annotations

from lsprotocol import types

from chunkls.chunking import LocatedChunk
from chunkls.index import IndexedChunk
from chunkls.lsp.uris import uri_of
from chunkls.positions import Encoding, TextLines, units


def chunk_range(
    chunk: LocatedChunk, lines: TextLines | None, encoding: Encoding = "utf-16"
) -> types.Range:
    """The range of a chunk's stripped text: from the start of its first line to
    the end of its last. With the document's lines the end is exact; without,
    it is the end of the chunk text's last line (the same for all but exotic
    line separators)."""
    start = chunk.start_line - 1
    end = chunk.end_line - 1
    if lines is not None:
        end = min(end, len(lines) - 1)
        start = min(start, end)
        return types.Range(types.Position(start, 0), types.Position(end, lines.line_end(end)))
    last = chunk.text.rsplit("\n", 1)[-1]
    return types.Range(types.Position(start, 0), types.Position(end, units(last, encoding)))


def first_line_range(chunk: LocatedChunk) -> types.Range:
    """A zero-width range at the start of a chunk's first line."""
    position = types.Position(chunk.start_line - 1, 0)
    return types.Range(position, position)


def chunk_uri(entry: IndexedChunk) -> str:
    """The file URI of the file a chunk's text comes from."""
    return uri_of(entry.path)


def location(entry: IndexedChunk, encoding: Encoding = "utf-16") -> types.Location:
    """Where a chunk is."""
    return types.Location(chunk_uri(entry), chunk_range(entry.chunk, None, encoding))


SYMBOL_KINDS = {
    "function": types.SymbolKind.Function,
    "class": types.SymbolKind.Class,
    "module": types.SymbolKind.Module,
    "heading": types.SymbolKind.String,
}


def symbol_kind(chunk: LocatedChunk) -> types.SymbolKind:
    """A symbol kind for a chunk's identity kind."""
    return SYMBOL_KINDS.get(chunk.identity.split("-", 1)[0], types.SymbolKind.Object)
