"""Completion of chunk IDs: identities after ``path#``, corpus file paths before it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.ids.grammar import typed_id_at
from chunkls.ids.positions import column_to_index
from chunkls.lsp.ranges import range_before
from chunkls.lsp.written_ids import navigable

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer

TRIGGER_CHARACTERS = ["#", "/"]
MAX_ITEMS = 200
"""Items per answer; the list is marked incomplete beyond it."""

_KINDS = {
    "function": types.CompletionItemKind.Function,
    "class": types.CompletionItemKind.Class,
    "module": types.CompletionItemKind.Module,
    "heading": types.CompletionItemKind.Text,
}


def register(server: ChunkServer) -> None:
    """Register the completion provider."""
    server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=False),
    )(text_document_completion)


def text_document_completion(
    ls: ChunkServer, params: types.CompletionParams
) -> types.CompletionList | None:
    """textDocument/completion: chunk identities after ``path#``, paths before."""
    context = navigable(ls, params.text_document.uri)
    if context is None:
        return None
    line = context.lines.line(params.position.line)
    cursor = column_to_index(line, params.position.character, context.lines.encoding)
    typed = typed_id_at(line, cursor)
    if typed is None:
        return None
    written, path = typed.written, typed.path
    encoding = context.lines.encoding
    if typed.identity is not None:
        identity = typed.identity
        replace = range_before(params.position, identity, encoding)
        chunks = ls.queries.chunks_of_source(path, prefer=context.folder)
        items = [
            _identity_item(chunk, replace)
            for chunk in chunks
            if chunk.identity.startswith(identity)
        ]
        return types.CompletionList(is_incomplete=False, items=items[:MAX_ITEMS])
    if "/" not in written and "." not in written:
        return None  # a plain word, not a path being typed
    replace = range_before(params.position, written, encoding)
    matches = ls.queries.source_paths_starting(path)
    prefix = written[: len(written) - len(path)]
    items = [
        types.CompletionItem(
            label=candidate,
            kind=types.CompletionItemKind.File,
            text_edit=types.TextEdit(replace, prefix + candidate + "#"),
            filter_text=prefix + candidate,
        )
        for candidate in matches[:MAX_ITEMS]
    ]
    return types.CompletionList(is_incomplete=len(matches) > MAX_ITEMS, items=items)


def _identity_item(chunk: LocatedChunk, replace: types.Range) -> types.CompletionItem:
    return types.CompletionItem(
        label=chunk.identity,
        kind=_KINDS.get(chunk.identity.split("-", 1)[0], types.CompletionItemKind.Reference),
        detail=chunk.first_line[:120],
        text_edit=types.TextEdit(replace, chunk.identity),
        sort_text=f"{chunk.start_line:08d}",
    )
