"""Chunk IDs written in a document, and the chunks each one points at."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunkls.ids.grammar import (
    ChunkRef,
    candidate_ids,
    find_chunk_refs_between,
    find_chunk_refs_in,
    line_span,
)
from chunkls.index.folder import FolderInfo, IndexedChunk
from chunkls.lsp.documents import DocumentContext, get_buffer, get_document, loose_folder

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer


def navigable(ls: ChunkServer, uri: str) -> DocumentContext | None:
    """A document whose chunk IDs are navigable (by language setting), or ``None``."""
    context = get_document(ls, uri)
    if context is None or context.language not in ls.settings.navigation.languages:
        return None
    return context


def refs_of(context: DocumentContext) -> list[ChunkRef]:
    """The chunk IDs written in a document (recognised once per version)."""
    if context.refs is None:
        context.refs = find_chunk_refs_in(context.text, context.language)
    return context.refs


def refs_near(context: DocumentContext, offset: int) -> list[ChunkRef]:
    """The chunk IDs written on the line of ``offset`` (the whole document's
    when they are known, or when only the whole text tells, as in Python):
    a hover in a log of tens of megabytes reads one line."""
    if context.refs is not None:
        return context.refs
    start, end = line_span(context.text, offset)
    found = find_chunk_refs_between(context.text, start, end, context.language)
    return refs_of(context) if found is None else found


def resolve_ref(ls: ChunkServer, context: DocumentContext, ref: ChunkRef) -> list[IndexedChunk]:
    """The chunks a reference points at, by index lookup only; ``#identity``: of the document
    itself as its text is now (a heading typed a moment ago resolves), if in the corpus."""
    if ref.form == "local" and context.rel_path is not None:
        buffer = get_buffer(ls, context)
        home = context.folder or loose_folder(context)
        in_corpus = context.folder is None or (
            context.folder.rules.excluded_reason(context.rel_path) is None
        )
        if buffer is not None and home is not None and in_corpus:
            wanted = f"{context.rel_path}#{ref.identity}"
            return [
                IndexedChunk(home, chunk) for chunk in buffer.chunks if chunk.chunk_id == wanted
            ]
    return resolve_written(ls, ref, context.rel_path, context.folder)


def resolve_written(
    ls: ChunkServer, ref: ChunkRef, rel_path: str | None, prefer: FolderInfo | None
) -> list[IndexedChunk]:
    """The chunks an ID written at ``rel_path`` (``None``: a terminal line) points at,
    ``prefer``'s first: go to definition's lookup, and ``chunkls.resolve``'s."""
    return ls.queries.resolve_first(candidate_ids(ref, rel_path), prefer=prefer)
