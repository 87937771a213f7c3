"""Chunk IDs written in text: go to definition, hover preview, document links."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from lsprotocol import types

from chunkls.ids.grammar import ChunkRef, candidate_ids, ref_at
from chunkls.index.folder import IndexedChunk
from chunkls.lsp.documents import DocumentContext
from chunkls.lsp.ranges import chunk_uri, location, ref_range
from chunkls.lsp.written_ids import navigable, refs_near, refs_of, resolve_ref

if TYPE_CHECKING:
    from chunkls.index.replacement import Replacement
    from chunkls.lsp.server import ChunkServer

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


def _answer_at(
    ls: ChunkServer, params: types.DefinitionParams | types.HoverParams, make: Callable[..., T]
) -> T | None:
    """``make``'s answer for the chunk ID under the cursor, made once while the
    document's text and what else it depends on (the index, whether it is being
    built) stay the same: a hover comes with every rest of the mouse."""
    context = navigable(ls, params.text_document.uri)
    if context is None:
        return None
    offset = context.lines.offset(params.position.line, params.position.character)
    ref = ref_at(refs_near(context, offset), offset)
    if ref is None:
        return None
    answers = context.answers((ls.queries.version, ls.queries.folders_version, ls.indexing > 0))
    key = (make, ref.start, ref.end)
    if key not in answers:
        answers[key] = make(ls, context, ref)
    return answers[key]  # type: ignore[no-any-return]


def text_document_definition(
    ls: ChunkServer, params: types.DefinitionParams
) -> list[types.Location] | None:
    """textDocument/definition: the chunk's range (every one, for duplicated IDs)."""
    return _answer_at(ls, params, _definition)


def _definition(
    ls: ChunkServer, context: DocumentContext, ref: ChunkRef
) -> list[types.Location] | None:
    entries = resolve_ref(ls, context, ref)
    if not entries:  # a stale ID: where its chunk went, if its history says
        replacement = replacement_of(ls, context, ref)
        if replacement is not None and replacement.chunk_id is not None:
            entries = ls.queries.lookup(replacement.chunk_id, context.folder)
    return [location(entry, ls.encoding) for entry in entries] or None


def replacement_of(ls: ChunkServer, context: DocumentContext, ref: ChunkRef) -> Replacement | None:
    """What a stale reference's chunk became, as ``chunkls check`` says it."""
    for chunk_id in candidate_ids(ref, context.rel_path):
        found = ls.queries.replacement(chunk_id)
        if found is not None:
            return found
    return None


def text_document_hover(ls: ChunkServer, params: types.HoverParams) -> types.Hover | None:
    """textDocument/hover: the chunk's ID, place, symbol and first lines."""
    return _answer_at(ls, params, _hover)


def _hover(ls: ChunkServer, context: DocumentContext, ref: ChunkRef) -> types.Hover:
    entries = resolve_ref(ls, context, ref)
    shown = ref.chunk_id if ref.path else f"{context.rel_path or ''}#{ref.identity}"
    if entries:
        value = "\n\n---\n\n".join(preview(entry) for entry in entries)
    elif ls.indexing:  # it may be in what is not indexed yet
        value = f"Chunk ID `{shown}`: not in the index yet; the workspace is being indexed."
    elif (replacement := replacement_of(ls, context, ref)) is not None:
        value = _history(ls, context, shown, replacement)
    else:
        value = f"Unknown chunk ID `{shown}`: no chunk in the index has it."
        suggestions = ls.queries.fix_candidates(shown)  # the quick fixes' list
        if suggestions:
            value += "\n\nClosest existing IDs:\n" + "\n".join(f"- `{s}`" for s in suggestions)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
        range=ref_range(context, ref),
    )


def _history(
    ls: ChunkServer, context: DocumentContext, shown: str, replacement: Replacement
) -> str:
    """A stale ID's hover: where it moved and a preview, or a deleted chunk's last text."""
    where = (
        f"{replacement.commit[:7]}, {replacement.date}"
        if replacement.commit
        else "as the index saw it"
    )
    if replacement.chunk_id is not None:
        entries = ls.queries.lookup(replacement.chunk_id, context.folder)
        said = (
            f"Chunk ID `{shown}` {replacement.kind} to `{replacement.chunk_id}` ({where}"
            + (f", {replacement.similarity:.0%} alike" if replacement.kind == "changed" else "")
            + ")."
        )
        return "\n\n---\n\n".join([said, *(preview(entry) for entry in entries)])
    lines = replacement.old_text.split("\n", PREVIEW_LINES)
    text = "\n".join(lines[:PREVIEW_LINES]) + ("\n…" if len(lines) > PREVIEW_LINES else "")
    fence = "````" if "```" in text else "```"
    kind = shown.partition("#")[0].rsplit(".", 1)[-1]
    language = "python" if kind == "py" else "markdown" if kind in ("md", "markdown") else ""
    return (
        f"Chunk ID `{shown}` was deleted; last seen {where}.\n\n"
        f"*History: its last text, in no file today:*\n\n{fence}{language}\n{text}\n{fence}"
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
    """textDocument/documentLink: bare and backticked IDs that resolve (not Markdown links)."""
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
        chunk = entries[0].chunk
        target = f"{chunk_uri(entries[0])}#L{chunk.start_line}"
        tooltip = f"Go to {chunk.chunk_id} (lines {chunk.start_line}-{chunk.end_line})"
        links.append(
            types.DocumentLink(ref_range(context, ref), target, tooltip if tooltips else None)
        )
    return links
