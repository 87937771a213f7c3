"""Chunks kept compactly, in memory and in the cache: a file's stubs (chunks without their
texts) one compressed blob, its texts another, the same blobs in both (once the cache holds
the texts, the index lets go of them: ``texts`` is ``None``)."""

from __future__ import annotations

import marshal
import zlib
from collections.abc import Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from chunkls.chunking.located_chunk import PREVIEW, LocatedChunk

if TYPE_CHECKING:
    from chunkls.chunking.ingest import FileChunks

Stub = tuple[str, str, str, str | None, int, int, str, int | str]
"""A chunk without its text: ``LocatedChunk``'s fields but ``text``, then what a listing
shows of the text (``ChunkStub``'s ``first_line`` and ``last_end``: no text is unpacked)."""

STUBS_MARSHAL = 2
"""The marshal format of stubs: 2 has no back-references, so equal stubs are
equal bytes, whichever process chunked them."""
LEVEL = 1
"""zlib level: fast; Python and Markdown still shrink about fourfold."""


class StoredFile(NamedTuple):
    """One file as the index keeps it."""

    rel_path: str
    packed: bytes
    """The chunks without their texts (``encode_stubs``), as the cache keeps them."""
    chunk_count: int
    texts: bytes | None
    """The chunks' texts, compressed (``None``: in the folder's cache only)."""
    mtime_ns: int
    size: int

    @property
    def stubs(self) -> tuple[Stub, ...]:
        """The chunks without their texts, decoded (each time: keep the result)."""
        stubs: tuple[Stub, ...] = marshal.loads(zlib.decompress(self.packed))
        return stubs

    def chunk_ids(self) -> list[str]:
        """The file's chunk IDs, in order."""
        return [stub[0] for stub in self.stubs]


def pack(entry: FileChunks) -> StoredFile:
    """A file's chunks as stubs plus one compressed blob of their texts."""
    source_path = entry.chunks[0].source_path if entry.chunks else ""
    stubs = tuple(
        (
            chunk.chunk_id,
            source_path if chunk.source_path == source_path else chunk.source_path,
            chunk.file_type,
            chunk.symbol,
            chunk.start_line,
            chunk.end_line,
            chunk.first_line[:PREVIEW],
            chunk.last_end,
        )
        for chunk in entry.chunks
    )
    texts = zlib.compress(marshal.dumps(tuple(chunk.text for chunk in entry.chunks)), LEVEL)
    return StoredFile(
        entry.rel_path, encode_stubs(stubs), len(stubs), texts, entry.mtime_ns, entry.size
    )


def unpack_stubs(stubs: tuple[Stub, ...], blob: bytes) -> tuple[LocatedChunk, ...]:
    """Chunks from their stubs and texts (``ValueError`` unless a text for each stub)."""
    try:
        texts = marshal.loads(zlib.decompress(blob))
    except (zlib.error, EOFError, TypeError, ValueError) as error:
        raise ValueError(f"bad text blob: {error}") from None
    if not isinstance(texts, tuple) or len(texts) != len(stubs):
        raise ValueError("bad text blob: wrong number of texts")
    if texts and not (isinstance(texts[0], str) and isinstance(texts[-1], str)):
        raise ValueError("bad text blob: not text")
    return tuple(
        LocatedChunk(stub[0], text, stub[1], stub[2], stub[3], stub[4], stub[5])
        for stub, text in zip(stubs, texts, strict=True)
    )


def encode_stubs(stubs: tuple[Stub, ...]) -> bytes:
    """Stubs as a blob for the index and the cache."""
    return zlib.compress(marshal.dumps(stubs, STUBS_MARSHAL), LEVEL)


def decode_stubs(blob: bytes) -> tuple[Stub, ...]:
    """The stubs of ``encode_stubs``; ``ValueError`` on a bad blob."""
    try:
        stubs = marshal.loads(zlib.decompress(blob))
    except (zlib.error, EOFError, TypeError, ValueError) as error:
        raise ValueError(f"bad chunk blob: {error}") from None
    if not isinstance(stubs, tuple):
        raise ValueError("bad chunk blob")
    for stub in stubs[:1] + stubs[-1:]:
        if (
            not isinstance(stub, tuple)
            or len(stub) != 8
            or not isinstance(stub[0], str)
            or not isinstance(stub[1], str)
            or not isinstance(stub[4], int)
            or not isinstance(stub[5], int)
            or not isinstance(stub[6], str)
            or not isinstance(stub[7], int | str)
        ):
            raise ValueError("bad chunk record")
    return stubs


def positions_of(stubs: Sequence[Stub], chunk_id: str) -> list[int]:
    """Where a chunk ID sits among a file's stubs (a file can repeat an ID)."""
    ids = list(map(_chunk_id_of, stubs))  # scanned in C, not in a Python loop
    positions: list[int] = []
    at = -1
    for _ in range(ids.count(chunk_id)):
        at = ids.index(chunk_id, at + 1)
        positions.append(at)
    return positions


_chunk_id_of = itemgetter(0)


def to_db(text: str) -> str | bytes:
    """A path or reason as SQLite keeps it: text, or its bytes when it holds lone
    surrogates (a name that is not UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape")
    return text


def from_db(value: str | bytes) -> str:
    """The text ``to_db`` was given."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value
