"""The tutorial's chunk record, field for field: a dataclass, alone in its module so that
what only reads chunks (``LocatedChunk``) does not import ``dataclasses``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chunk:
    """A source unit that can be indexed and cited."""

    chunk_id: str
    text: str
    source_path: str
    file_type: str
    symbol: str | None = None
