"""Code lenses: each chunk's ID at its first line (click: copy the ID)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from chunkls.lsp.contract import SHOW_REFERENCES
from chunkls.lsp.documents import get_buffer, get_document
from chunkls.lsp.lens_items import chunk_lenses
from chunkls.lsp.ranges import citation_locations, line_start

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer


def register(server: ChunkServer) -> None:
    """Register the code lens provider."""
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(
        text_document_code_lens
    )


def text_document_code_lens(ls: ChunkServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    """textDocument/codeLens: one lens per chunk of the open text, titled with its
    ID (``chunk_lenses``), and a "cited by N" lens beside those documents cite."""
    if not ls.settings.code_lens.enabled:
        return []
    context = get_document(ls, params.text_document.uri)
    if context is None or context.rel_path is None:
        return []
    folder = context.folder
    excluded = folder.rules.excluded_reason(context.rel_path) if folder is not None else None
    buffer = get_buffer(ls, context) if excluded is None else None
    if excluded is None and buffer is None:
        return []
    chunks = buffer.chunks if buffer is not None else []
    error = buffer.error if buffer is not None else None
    lenses: list[types.CodeLens] = []
    citing, encoding = ls.queries.citing, ls.encoding
    for line, title, command, chunk_id in chunk_lenses(context.rel_path, excluded, chunks, error):
        at = line_start(line)
        arguments = None if chunk_id is None else [chunk_id]
        lenses.append(types.CodeLens(at, types.Command(title, command, arguments=arguments)))
        if chunk_id is None:
            continue
        cited = citation_locations(citing(chunk_id), encoding)
        if cited:
            title = f"cited by {len(cited)}"
            cited_by = types.Command(
                title, SHOW_REFERENCES, arguments=[context.uri, at.start, cited]
            )
            lenses.append(types.CodeLens(at, cited_by))
    return lenses
