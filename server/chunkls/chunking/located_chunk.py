"""The located chunk the editor needs (the tutorial's is ``tutorial_chunk.Chunk``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from chunkls.chunking.tutorial_chunk import Chunk

_FIRST_LINE = re.compile(r"\S[^\n]*")
"""From a text's first non-whitespace character to the end of its line."""


class LocatedChunk(NamedTuple):
    """A chunk plus its editor lines (1-based, inclusive, counted with ``\\n``,
    ``\\r\\n`` and ``\\r`` only): a ``function-``/``class-`` chunk's are its
    definition's, a ``module-``/``heading-`` chunk's those its stripped text spans.
    A tuple: compact, and untracked by the garbage collector."""

    chunk_id: str
    text: str
    source_path: str
    file_type: str
    symbol: str | None
    start_line: int
    end_line: int

    @property
    def identity(self) -> str:
        """The part of the chunk ID after ``#``."""
        return self.chunk_id[len(self.source_path) + 1 :]

    @property
    def first_line(self) -> str:
        """The chunk's first non-blank line, stripped (for previews and details)."""
        found = _FIRST_LINE.search(self.text)  # (its lines are not split: a class has 1,000)
        return found.group().rstrip() if found else ""

    @property
    def last_end(self) -> int | str:
        """Where the text's last line ends (a range of the whole chunk): its length
        when it is ASCII (as many units in every position encoding), else the line."""
        last = self.text[self.text.rfind("\n") + 1 :]
        return len(last) if last.isascii() else last

    def to_chunk(self) -> Chunk:
        """The tutorial's record for this chunk."""
        from chunkls.chunking.tutorial_chunk import Chunk  # (dataclasses: not for a search)

        return Chunk(self.chunk_id, self.text, self.source_path, self.file_type, self.symbol)


class ChunkStub(NamedTuple):
    """A chunk without its text, as a listing shows it: ``LocatedChunk``'s fields but
    ``text``, then its ``first_line`` (at most ``PREVIEW`` characters) and ``last_end``
    (``chunkls.storage.packed.Stub``, the same tuple)."""

    chunk_id: str
    source_path: str
    file_type: str
    symbol: str | None
    start_line: int
    end_line: int
    first_line: str
    last_end: int | str

    @property
    def identity(self) -> str:
        """The part of the chunk ID after ``#``."""
        return self.chunk_id[len(self.source_path) + 1 :]


PREVIEW = 200
"""Characters of a chunk's first line a stub keeps (a listing's preview)."""


class ChunkHead(Protocol):
    """What a listing reads of a chunk, with its text (``LocatedChunk``) or without
    (``ChunkStub``)."""

    @property
    def chunk_id(self) -> str: ...

    @property
    def source_path(self) -> str: ...

    @property
    def file_type(self) -> str: ...

    @property
    def symbol(self) -> str | None: ...

    @property
    def start_line(self) -> int: ...

    @property
    def end_line(self) -> int: ...

    @property
    def first_line(self) -> str: ...

    @property
    def last_end(self) -> int | str: ...

    @property
    def identity(self) -> str: ...
