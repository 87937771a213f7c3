"""The files whose chunks were unpacked last, kept so that a run of reads of the
same files (hovers, a search as one types) decompresses each once."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chunkls.chunking.located_chunk import LocatedChunk
    from chunkls.index.folder import Folder
    from chunkls.storage.packed import StoredFile

UNPACKED_FILES = 512
"""Files whose chunks stay unpacked after a read, at most."""
UNPACKED_CHARS = 8_000_000
"""The characters of chunk text those files may hold in all."""


class Unpacked:
    """Least recently read first, each with its stored entry (one replaced since: a miss)."""

    def __init__(self) -> None:
        self._files: dict[tuple[Folder, str], tuple[StoredFile, tuple[LocatedChunk, ...], int]] = {}
        self.chars = 0

    def __len__(self) -> int:
        return len(self._files)

    def get(self, key: tuple[Folder, str], stored: StoredFile) -> tuple[LocatedChunk, ...] | None:
        """The chunks unpacked from ``stored``, if kept (then read last)."""
        known = self._files.get(key)
        if known is None or known[0] is not stored:
            return None
        del self._files[key]
        self._files[key] = known
        return known[1]

    def put(
        self, key: tuple[Folder, str], stored: StoredFile, chunks: tuple[LocatedChunk, ...]
    ) -> None:
        """Keep a file's chunks, letting go of the least recently read beyond the bounds."""
        self.pop(key)
        chars = sum(len(chunk.text) for chunk in chunks)
        self._files[key] = (stored, chunks, chars)
        self.chars += chars
        files = self._files
        while len(files) > 1 and (len(files) > UNPACKED_FILES or self.chars > UNPACKED_CHARS):
            self.pop(next(iter(files)))

    def replace(self, key: tuple[Folder, str], old: StoredFile, new: StoredFile) -> None:
        """Tie a kept file's chunks to its new stored entry (the same chunks)."""
        known = self._files.get(key)
        if known is not None and known[0] is old:
            self._files[key] = (new, known[1], known[2])

    def pop(self, key: tuple[Folder, str]) -> None:
        """Forget a file's chunks."""
        known = self._files.pop(key, None)
        if known is not None:
            self.chars -= known[2]
