"""The chunk record of the tutorial, and the located chunk the editor needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class Chunk:
    """A source unit that can be indexed and cited."""

    chunk_id: str
    text: str
    source_path: str
    file_type: str
    symbol: str | None = None


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
        return next((line.strip() for line in self.text.split("\n") if line.strip()), "")

    def to_chunk(self) -> Chunk:
        """The tutorial's record for this chunk."""
        return Chunk(self.chunk_id, self.text, self.source_path, self.file_type, self.symbol)
