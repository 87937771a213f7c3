"""Code lenses: each chunk's ID at its first line (click: copy the ID)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from chunkls.chunking.suffixes import file_type_for
from chunkls.lsp.contract import COPY_CHUNK_ID, SHOW_REFERENCES
from chunkls.lsp.documents import get_buffer, get_document
from chunkls.lsp.ranges import DOCUMENT_START, citation_locations, first_line_range

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer


def register(server: ChunkServer) -> None:
    """Register the code lens provider."""
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(
        text_document_code_lens
    )


def text_document_code_lens(ls: ChunkServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    """textDocument/codeLens: one lens per chunk of the open text, titled with its ID."""
    if not ls.settings.code_lens.enabled:
        return []
    context = get_document(ls, params.text_document.uri)
    if context is None or context.rel_path is None:
        return []
    name = context.rel_path.rsplit("/", 1)[-1]
    if file_type_for(name) is None:
        return []
    if context.folder is not None:
        reason = context.folder.rules.excluded_reason(context.rel_path)
        if reason is not None:
            title = f"Not in the chunk corpus: {reason}"
            return [
                types.CodeLens(range=DOCUMENT_START, command=types.Command(title=title, command=""))
            ]
    buffer = get_buffer(ls, context)
    if buffer is None:
        return []
    lenses = []
    for chunk in buffer.chunks:
        at = first_line_range(chunk)
        lenses.append(
            types.CodeLens(
                range=at,
                command=types.Command(
                    title=chunk.chunk_id, command=COPY_CHUNK_ID, arguments=[chunk.chunk_id]
                ),
            )
        )
        cited = citation_locations(ls.citations.citing(chunk.chunk_id), ls.encoding)
        if cited:
            lenses.append(
                types.CodeLens(
                    range=at,
                    command=types.Command(
                        title=f"cited by {len(cited)}",
                        command=SHOW_REFERENCES,
                        arguments=[context.uri, at.start, cited],
                    ),
                )
            )
    if buffer.error is not None and not lenses:
        title = f"Not chunked: {buffer.error}"
        lenses.append(
            types.CodeLens(range=DOCUMENT_START, command=types.Command(title=title, command=""))
        )
    return lenses
