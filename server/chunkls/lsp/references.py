"""Who cites this chunk: textDocument/references, and the "cited by N" lens data."""

from __future__ import annotations

from lsprotocol import types

from chunkls.chunking import LocatedChunk
from chunkls.citations import Citation
from chunkls.lsp.server import ChunkServer
from chunkls.lsp.uris import uri_of
from chunkls.positions import Encoding, units


def register(server: ChunkServer) -> None:
    """Register the references provider."""
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(text_document_references)


def chunk_at(ls: ChunkServer, uri: str, line: int) -> LocatedChunk | None:
    """The chunk of a Python or Markdown document at a 0-based line."""
    context = ls.document(uri)
    buffer = ls.buffer(context) if context is not None else None
    if buffer is None:
        return None
    for chunk in buffer.chunks:
        if chunk.start_line <= line + 1 <= chunk.end_line:
            return chunk
    return None


def citation_location(citation: Citation, encoding: Encoding) -> types.Location:
    """Where a citation is written."""
    path = citation.folder.root / citation.rel_path
    if citation.prefix is None:
        start, end = citation.column, citation.end_column
    else:
        start = units(citation.prefix[: citation.column], encoding)
        end = units(citation.prefix[: citation.end_column], encoding)
    return types.Location(
        uri=uri_of(path),
        range=types.Range(types.Position(citation.line, start), types.Position(citation.line, end)),
    )


def citations_of(ls: ChunkServer, chunk: LocatedChunk) -> list[types.Location]:
    """Locations citing a chunk's ID."""
    return [citation_location(c, ls.encoding) for c in ls.citations.citing(chunk.chunk_id)]


def text_document_references(
    ls: ChunkServer, params: types.ReferenceParams
) -> list[types.Location] | None:
    """textDocument/references: every Markdown and text file place citing the chunk."""
    chunk = chunk_at(ls, params.text_document.uri, params.position.line)
    if chunk is None:
        return None
    return citations_of(ls, chunk)
