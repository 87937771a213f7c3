"""Chunk IDs written in text: go to definition, hover preview, document links."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from lsprotocol import types

from chunkls.chunk_ids import ChunkRef, find_chunk_refs_in, ref_at, resolve
from chunkls.index import IndexedChunk
from chunkls.lsp.convert import chunk_uri, location
from chunkls.lsp.server import ChunkServer, DocumentContext

PREVIEW_LINES = 12
"""Lines of a chunk shown in a hover."""

_FENCE_LANGUAGE = {"code": "python", "prose": "markdown"}

T = TypeVar("T")


def register(server: ChunkServer) -> None:
    """Register definition, hover and document links."""
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(text_document_definition)
    server.feature(types.TEXT_DOCUMENT_HOVER)(text_document_hover)
    server.feature(
        types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions(resolve_provider=False)
    )(text_document_document_link)


def navigable(ls: ChunkServer, uri: str) -> DocumentContext | None:
    """A document whose chunk IDs are navigable (by language setting), or ``None``."""
    context = ls.document(uri)
    if context is None or context.language not in ls.settings.navigation.languages:
        return None
    return context


def refs_of(context: DocumentContext) -> list[ChunkRef]:
    """The chunk IDs written in a document (recognised once per version)."""
    if context.refs is None:
        context.refs = find_chunk_refs_in(context.text, context.language)
    return context.refs


def resolve_ref(ls: ChunkServer, context: DocumentContext, ref: ChunkRef) -> list[IndexedChunk]:
    """The chunks a reference in a document points at, by index lookup only.

    ``#identity`` means a chunk of the document itself, as its text is now (so a
    heading typed a moment ago resolves), when the document is in the corpus.
    """
    if ref.form == "local" and context.rel_path is not None:
        buffer = ls.buffer(context)
        home = context.folder or ls.loose_folder(context)
        in_corpus = context.folder is None or (
            context.folder.rules.excluded_reason(context.rel_path) is None
        )
        if buffer is not None and home is not None and in_corpus:
            wanted = f"{context.rel_path}#{ref.identity}"
            return [
                IndexedChunk(home, chunk) for chunk in buffer.chunks if chunk.chunk_id == wanted
            ]
    return resolve(ls.index, ref, context.folder, context.rel_path)


def _ref_under_cursor(
    ls: ChunkServer, uri: str, position: types.Position
) -> tuple[DocumentContext, ChunkRef] | None:
    context = navigable(ls, uri)
    if context is None:
        return None
    offset = context.lines.offset(position.line, position.character)
    ref = ref_at(refs_of(context), offset)
    return None if ref is None else (context, ref)


def ref_range(context: DocumentContext, ref: ChunkRef) -> types.Range:
    """The range of a reference in its document (made once per document version:
    a hover comes with every rest of the mouse)."""
    key = (ref.start, ref.end)
    found = context.ranges.get(key)
    if found is None:
        start = context.lines.position(ref.start)
        end = context.lines.position(ref.end)
        found = context.ranges[key] = types.Range(types.Position(*start), types.Position(*end))
    return found


def text_document_definition(
    ls: ChunkServer, params: types.DefinitionParams
) -> list[types.Location] | None:
    """textDocument/definition: the chunk's range (every one, for duplicated IDs)."""
    found = _ref_under_cursor(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    context, ref = found
    return _answer(ls, context, ref, _definition)


def _definition(
    ls: ChunkServer, context: DocumentContext, ref: ChunkRef
) -> list[types.Location] | None:
    entries = resolve_ref(ls, context, ref)
    return [location(entry, ls.encoding) for entry in entries] or None


def _answer(ls: ChunkServer, context: DocumentContext, ref: ChunkRef, make: Callable[..., T]) -> T:
    """``make``'s answer for a reference, made once while the document's text
    and what else it depends on (the index, whether it is being built) stay the
    same: a hover comes with every rest of the mouse."""
    answers = context.answers((ls.index.version, ls.index.folders_version, ls.indexing > 0))
    key = (make, ref.start, ref.end)
    if key not in answers:
        answers[key] = make(ls, context, ref)
    return answers[key]  # type: ignore[no-any-return]


def text_document_hover(ls: ChunkServer, params: types.HoverParams) -> types.Hover | None:
    """textDocument/hover: the chunk's ID, place, symbol and first lines."""
    found = _ref_under_cursor(ls, params.text_document.uri, params.position)
    if found is None:
        return None
    context, ref = found
    return _answer(ls, context, ref, _hover)


def _hover(ls: ChunkServer, context: DocumentContext, ref: ChunkRef) -> types.Hover:
    entries = resolve_ref(ls, context, ref)
    shown = ref.chunk_id if ref.path else f"{context.rel_path or ''}#{ref.identity}"
    if entries:
        value = "\n\n---\n\n".join(preview(entry) for entry in entries)
    elif ls.indexing:  # it may be in what is not indexed yet
        value = f"Chunk ID `{shown}`: not in the index yet; the workspace is being indexed."
    else:
        value = f"Unknown chunk ID `{shown}`: no chunk in the index has it."
        suggestions = ls.index.suggest(shown)
        if suggestions:
            value += "\n\nClosest existing IDs:\n" + "\n".join(f"- `{s}`" for s in suggestions)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
        range=ref_range(context, ref),
    )


def preview(entry: IndexedChunk) -> str:
    """Markdown for one chunk: ID, path and lines, symbol, and its first lines."""
    chunk = entry.chunk
    lines = chunk.text.split("\n", PREVIEW_LINES)  # the first lines only: chunks can be long
    shown = "\n".join(lines[:PREVIEW_LINES])
    if len(lines) > PREVIEW_LINES:
        more = chunk.text.count("\n", len(shown))
        shown += f"\n… ({more} more lines)"
    fence = "````" if "```" in shown else "```"
    symbol = f" · symbol `{chunk.symbol}`" if chunk.symbol else ""
    return (
        f"**`{chunk.chunk_id}`**\n\n"
        f"`{chunk.source_path}` lines {chunk.start_line}-{chunk.end_line}{symbol}\n\n"
        f"{fence}{_FENCE_LANGUAGE.get(chunk.file_type, '')}\n{shown}\n{fence}"
    )


def text_document_document_link(
    ls: ChunkServer, params: types.DocumentLinkParams
) -> list[types.DocumentLink]:
    """textDocument/documentLink: bare and backticked IDs that resolve become links.

    Markdown link targets are left to the editor's Markdown support.
    """
    context = navigable(ls, params.text_document.uri)
    if context is None:
        return []
    tooltips = bool(ls.capability("text_document", "document_link", "tooltip_support"))
    links = []
    for ref in refs_of(context):
        if ref.form == "link":
            continue
        entries = resolve_ref(ls, context, ref)
        if not entries:
            continue
        entry = entries[0]
        links.append(
            types.DocumentLink(
                range=ref_range(context, ref),
                target=f"{chunk_uri(entry)}#L{entry.chunk.start_line}",
                tooltip=(
                    f"Go to {entry.chunk.chunk_id} (lines {entry.chunk.start_line}-"
                    f"{entry.chunk.end_line})"
                    if tooltips
                    else None
                ),
            )
        )
    return links
