"""The one place that makes LSP ranges, locations and URIs of chunks, IDs and citations."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from chunkls.chunking.located_chunk import ChunkHead, LocatedChunk
from chunkls.ids.positions import Encoding, TextLines, units
from chunkls.index.citations import Citation
from chunkls.index.folder import FoundChunk
from chunkls.lsp.uris import uri_of

if TYPE_CHECKING:
    from chunkls.ids.grammar import ChunkRef
    from chunkls.ids.rewrite import Edit
    from chunkls.lsp.documents import DocumentContext


def line_start(line: int) -> types.Range:
    """A zero-width range at the start of a 0-based line."""
    position = types.Position(line, 0)
    return types.Range(position, position)


def chunk_range(
    chunk: ChunkHead, lines: TextLines | None, encoding: Encoding = "utf-16"
) -> types.Range:
    """The range of a chunk's stripped text: start of its first line to end of its last
    (without the document's lines, of the text's last: the same but for exotic separators)."""
    start = chunk.start_line - 1
    end = chunk.end_line - 1
    if lines is not None:
        end = min(end, len(lines) - 1)
        start = min(start, end)
        return types.Range(types.Position(start, 0), types.Position(end, lines.line_end(end)))
    last = chunk.last_end  # (a stub keeps it: a listing unpacks no text)
    length = last if isinstance(last, int) else units(last, encoding)
    return types.Range(types.Position(start, 0), types.Position(end, length))


def range_json(found: types.Range) -> dict[str, dict[str, int]]:
    """A range as the JSON object the protocol sends."""
    start, end = found.start, found.end
    return {
        "start": {"line": start.line, "character": start.character},
        "end": {"line": end.line, "character": end.character},
    }


def chunk_uri(entry: FoundChunk) -> str:
    """The file URI of the file a chunk's text comes from."""
    return _file_uri(entry.folder.root, entry.chunk.source_path)


@functools.lru_cache(maxsize=4096)  # (made for each of a search's 50 results: 5% of it)
def _file_uri(root: Path, source_path: str) -> str:
    return uri_of(root / source_path)


def location(
    entry: FoundChunk,
    encoding: Encoding = "utf-16",
    lines: tuple[int, int] | None = None,
) -> types.Location:
    """Where a chunk is (``lines``: those of a part of it, 1-based, inclusive;
    the whole chunk's are its editor range, which its text may not span; a
    chunk listed without its text is at its whole range)."""
    chunk = entry.chunk
    if (
        lines is None
        or lines == (chunk.start_line, chunk.end_line)
        or not isinstance(chunk, LocatedChunk)
    ):
        return types.Location(chunk_uri(entry), chunk_range(chunk, None, encoding))
    return types.Location(chunk_uri(entry), part_range(chunk, lines, encoding))


def part_range(
    chunk: LocatedChunk, lines: tuple[int, int], encoding: Encoding = "utf-16"
) -> types.Range:
    """The range of some of a chunk's lines (1-based, inclusive; kept within the chunk's)."""
    text_lines = chunk.text.split("\n")
    first = min(max(lines[0], chunk.start_line), chunk.end_line)
    last = min(max(lines[1], first), chunk.start_line + len(text_lines) - 1)
    end = units(text_lines[last - chunk.start_line].rstrip("\r"), encoding)
    return types.Range(types.Position(first - 1, 0), types.Position(last - 1, end))


def ref_range(context: DocumentContext, ref: ChunkRef) -> types.Range:
    """The range of a chunk ID written in a document (once per version: hovers repeat)."""
    key = (ref.start, ref.end)
    found = context.ranges.get(key)
    if found is None:
        start = context.lines.position(ref.start)
        end = context.lines.position(ref.end)
        found = context.ranges[key] = types.Range(types.Position(*start), types.Position(*end))
    return found


def citation_locations(citations: Iterable[Citation], encoding: Encoding) -> list[types.Location]:
    """Where each of the citations is written."""
    found = []
    for citation in citations:
        start, end = citation.column, citation.end_column
        if citation.prefix is not None:
            start = units(citation.prefix[:start], encoding)
            end = units(citation.prefix[:end], encoding)
        at = types.Range(types.Position(citation.line, start), types.Position(citation.line, end))
        found.append(types.Location(uri_of(citation.folder.root / citation.rel_path), at))
    return found


def text_edit(context: DocumentContext, edit: Edit) -> types.TextEdit:
    """An edit of a document's text (character offsets) as the client takes it."""
    start, end = context.lines.position(edit.start), context.lines.position(edit.end)
    at = types.Range(types.Position(*start), types.Position(*end))
    return types.TextEdit(range=at, new_text=edit.new_text)


def range_before(end: types.Position, text: str, encoding: Encoding) -> types.Range:
    """The range of ``text`` that ends at ``end`` on the same line (what was
    typed before the cursor, the identity at the end of a written ID)."""
    start = types.Position(end.line, end.character - units(text, encoding))
    return types.Range(start, types.Position(end.line, end.character))


def overlaps(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges share a position (touching ends count)."""
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)
