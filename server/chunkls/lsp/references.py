"""Who cites this chunk: textDocument/references."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from chunkls.lsp.documents import chunk_at_line
from chunkls.lsp.ranges import citation_locations

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer


def register(server: ChunkServer) -> None:
    """Register the references provider."""
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(text_document_references)


def text_document_references(
    ls: ChunkServer, params: types.ReferenceParams
) -> list[types.Location] | None:
    """textDocument/references: every Markdown and text file place citing the chunk."""
    chunk = chunk_at_line(ls, params.text_document.uri, params.position.line)
    if chunk is None:
        return None
    return citation_locations(ls.queries.citing(chunk.chunk_id), ls.encoding)
