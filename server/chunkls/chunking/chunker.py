"""The tutorial's chunkers, on text, with editor line ranges.

``chunk_python_source`` and ``chunk_markdown_source`` reproduce the tutorial's
``chunk_python`` and ``chunk_markdown`` exactly (IDs, text, symbols, order and
quirks, such as ``str.splitlines()`` breaking lines at ``\\v \\f \\x85``... where
editors do not). A ``function-``/``class-`` chunk's editor range is its
definition's own lines; a ``module-``/``heading-`` chunk's maps the lines of its
stripped text back to the editor lines they sit on.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.chunking.outline import Outline, Parsed, outline_of, parse_module, reparse
from chunkls.chunking.suffixes import file_type_for, suffix_of

_MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_NON_EDITOR_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_ASCII_NON_EDITOR_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e")
_SLUG_JUNK = re.compile(r"[^a-z0-9]+")


class ChunkingError(ValueError):
    """A file that cannot be chunked; ``reason`` is one line for the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def normalize_newlines(text: str) -> str:
    """Translate ``\\r\\n`` and ``\\r`` to ``\\n``, as ``Path.read_text()`` does."""
    if "\r" in text:
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _slug(value: str) -> str:
    return _SLUG_JUNK.sub("-", value.lower()).strip("-") or "section"


class _Lines:
    """The ``splitlines()`` lines of a source and their 1-based editor lines."""

    __slots__ = ("editor_line", "lines")

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self.editor_line: Callable[[int], int]
        if not _has_non_editor_breaks(source):
            self.editor_line = _identity_line
        else:
            table: list[int] = []
            line = 1
            for piece in source.splitlines(keepends=True):
                table.append(line)
                if piece.endswith("\n"):
                    line += 1
            self.editor_line = lambda index: table[index]

    def span(self, start: int, stop: int) -> tuple[int, int]:
        """Editor lines of the stripped text of ``"\\n".join(lines[start:stop])``."""
        lines = self.lines
        stop = min(stop, len(lines))
        first = start
        while first < stop and not lines[first].strip():
            first += 1
        if first >= stop:  # empty text: point at where the slice begins
            anchor = min(start, len(lines) - 1)
            line = self.editor_line(anchor) if anchor >= 0 else 1
            return line, line
        last = stop - 1
        while not lines[last].strip():
            last -= 1
        return self.editor_line(first), self.editor_line(last)


def _identity_line(index: int) -> int:
    return index + 1


def _has_non_editor_breaks(source: str) -> bool:
    """Whether ``splitlines()`` breaks ``source`` where editors do not."""
    if source.isascii():  # five substring scans: several times faster than the regex
        return any(char in source for char in _ASCII_NON_EDITOR_BREAKS)
    return _NON_EDITOR_BREAKS.search(source) is not None


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """``outline.parse_module`` (the tutorial's nesting limit, wherever this is
    called from) with every failure turned into a one-line ``ChunkingError``."""
    if source.startswith("\ufeff"):
        raise ChunkingError(
            "starts with a UTF-8 byte-order mark, which the chunker's ast.parse rejects"
        )
    nul = source.find("\0")
    if nul != -1:
        raise ChunkingError(
            f"contains NUL bytes (first at character {nul}), which ast.parse rejects:"
            " a binary file?"
        )
    try:
        return parse_module(source, filename)
    except SyntaxError as error:  # includes IndentationError, TabError
        where = f" line {error.lineno}" if error.lineno else ""
        raise ChunkingError(f"{type(error).__name__}{where}: {error.msg}") from None
    except (RecursionError, MemoryError) as error:
        raise ChunkingError(f"{type(error).__name__}: nesting too deep for ast.parse") from None
    except ValueError as error:
        raise ChunkingError(f"ValueError: {error}") from None


def chunk_python_source(
    source: str, source_path: str, filename: str = "<unknown>"
) -> list[LocatedChunk]:
    """Chunk Python text at top-level definitions; ``ChunkingError`` when it does not parse."""
    return chunk_python_outline(outline_of(parse_python(source, filename)), source, source_path)


def chunk_python_outline(outline: Outline, source: str, source_path: str) -> list[LocatedChunk]:
    """The tutorial's ``chunk_python`` loop over a parsed module's outline."""
    text_lines = _Lines(source)
    lines = text_lines.lines
    chunks: list[LocatedChunk] = []
    prefix = source_path + "#"
    next_module_line = 1

    def module_chunk(start: int, stop: int | None) -> None:
        text = "\n".join(lines[start - 1 : stop]).strip()
        if text:
            first, last = text_lines.span(start - 1, len(lines) if stop is None else stop)
            chunks.append(
                LocatedChunk(
                    f"{prefix}module-{start}", text, source_path, "code", "<module>", first, last
                )
            )

    for start_line, end_line, kind, name in outline:
        if kind is None:
            continue  # not a function or class: part of a module chunk
        module_chunk(next_module_line, start_line - 1)
        # the definition's own lines (first decorator to last line: the AST's,
        # which are the editor's), even where splitlines() shifts its text away
        chunks.append(
            LocatedChunk(
                f"{prefix}{kind}-{name}",
                "\n".join(lines[start_line - 1 : end_line]).strip(),
                source_path,
                "code",
                name,
                start_line,
                end_line,
            )
        )
        next_module_line = end_line + 1
    module_chunk(next_module_line, None)
    # (the tutorial's ``module-1`` fallback for no chunks never fires: every line is
    # then blank, so the whole source is whitespace)
    return chunks


def chunk_markdown_source(source: str, source_path: str) -> list[LocatedChunk]:
    """Chunk Markdown text into sections that begin at each heading line (as in
    the tutorial, a ``#`` line inside a fenced code block too)."""
    text_lines = _Lines(source)
    lines = text_lines.lines
    chunks: list[LocatedChunk] = []
    prefix = source_path + "#"
    identity_counts: dict[str, int] = {}

    def append_section(name: str, start: int, stop: int) -> None:
        text = "\n".join(lines[start:stop]).strip()
        if not text:
            return
        base_identity = f"heading-{_slug(name)}"
        occurrence = identity_counts[base_identity] = identity_counts.get(base_identity, 0) + 1
        identity = base_identity if occurrence == 1 else f"{base_identity}-{occurrence}"
        first, last = text_lines.span(start, stop)
        chunks.append(
            LocatedChunk(prefix + identity, text, source_path, "prose", name, first, last)
        )

    section_name = "preamble"
    section_start = 0
    match = _MARKDOWN_HEADING.match
    for index, line in enumerate(lines):
        if line[:1] == "#":
            heading = match(line)
            if heading:
                append_section(section_name, section_start, index)
                section_start = index
                section_name = heading.group(2)
    append_section(section_name, section_start, len(lines))
    return chunks


RECENT_TEXTS = 8
"""How many recent chunkings ``chunk_source`` remembers (by path and exact text)."""
_recent: dict[tuple[str, str], tuple[str, tuple[LocatedChunk, ...] | ChunkingError]] = {}
_parsed: dict[tuple[str, str], Parsed] = {}
"""The last text of each recent Python file that parsed, with its outline."""


def chunk_source(source: str, source_path: str, name: str) -> list[LocatedChunk]:
    """Dispatch normalised text to the chunker for ``name``'s suffix. The last few results
    are kept (an editor chunks a buffer, then again once saved), and a new text of a recent
    Python file is parsed only where it changed (``outline.reparse``)."""
    key = (source_path, name)
    known = _recent.get(key)
    if known is not None and known[0] == source:
        result = known[1]
        if isinstance(result, ChunkingError):
            raise ChunkingError(result.reason)
        return list(result)
    try:
        chunks = _chunk_source(source, source_path, name)
    except ChunkingError as error:
        _remember(_recent, key, (source, error))
        raise
    _remember(_recent, key, (source, tuple(chunks)))
    return chunks


def _remember(recent: dict[tuple[str, str], Any], key: tuple[str, str], value: Any) -> None:
    recent.pop(key, None)
    recent[key] = value
    while len(recent) > RECENT_TEXTS:
        del recent[next(iter(recent))]


def _chunk_source(source: str, source_path: str, name: str) -> list[LocatedChunk]:
    file_type = file_type_for(name)
    if file_type == "code":
        key = (source_path, name)
        previous = _parsed.get(key)
        parsed = None
        if previous is not None and not source.startswith("\ufeff") and "\0" not in source:
            parsed = reparse(previous, source)
        if parsed is None:
            parsed = Parsed(source, outline_of(parse_python(source, name)))
        _remember(_parsed, key, parsed)
        return chunk_python_outline(parsed.outline, source, source_path)
    if file_type == "prose":
        return chunk_markdown_source(source, source_path)
    raise ChunkingError(f"Unsupported file type: {suffix_of(name) or '<none>'}")


def decode_source(data: bytes) -> str:
    """Decode file bytes as the tutorial's ``read_text(encoding="utf-8")`` would
    (``ChunkingError`` for invalid UTF-8; NUL bytes are ``parse_python``'s concern)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = data[error.start : error.start + 1].hex()
        raise ChunkingError(
            f"not valid UTF-8 (byte 0x{bad} at offset {error.start}); the corpus is UTF-8 only"
        ) from None
    return normalize_newlines(text)
