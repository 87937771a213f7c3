"""Which files of a folder have chunks of an ID, in 16 bytes an ID: its ``hash`` and CRC-32
with its file's number, in numpy arrays sorted by hash, plus an unsorted tail. A lookup
that reads a chunk checks its file's stubs all the same (``ChunkStore._holding``)."""

from __future__ import annotations

import threading
import zlib
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# numpy is imported when there is something to look up or sort

TAIL = 1 << 14
"""Entries added since the last sort at most (then they are sorted in)."""
SORTED_FOUND = 1 << 12
"""Lookups of the sorted arrays remembered until they are sorted again."""


class IdMap:
    """``hash(chunk ID)`` -> the root-relative paths of the files with chunks of it."""

    def __init__(self) -> None:
        self._sorted: (
            tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.int32]] | None
        ) = None
        """The sorted entries: hashes, CRC-32s and file numbers (``None``: none yet)."""
        self._tail_hashes = array("q")
        self._tail_checks = array("I")
        self._tail_numbers = array("i")
        self._tail_at: dict[int, int | list[int]] = {}
        """Hash -> its place(s) in the tail, for the first ``_tail_indexed`` entries."""
        self._tail_indexed = 0
        self._paths: list[str | None] = []
        """File number -> its path (``None`` once the file is removed)."""
        self._number_of: dict[str, int] = {}
        self._dropped = 0
        """Entries of removed files still in the arrays."""
        self._counts: list[int] = []
        self._lock = threading.Lock()
        """Held while the tail is indexed or replaced."""
        self._sorted_found: dict[str, list[int]] = {}
        """ID -> its file numbers in the sorted arrays, for IDs looked up since (bounded)."""

    def __len__(self) -> int:
        """How many files."""
        return len(self._number_of)

    def add(self, rel_path: str, chunk_ids: Iterable[str]) -> None:
        """Record a file's chunk IDs (replacing what it had)."""
        self.remove(rel_path)
        ids = list(chunk_ids)
        number = len(self._paths)
        self._paths.append(rel_path)
        self._counts.append(len(ids))
        self._number_of[rel_path] = number
        self._tail_hashes.extend(array("q", map(hash, ids)))
        self._tail_checks.extend(array("I", map(_check, ids)))
        self._tail_numbers.extend(array("i", [number]) * len(ids))
        if len(self._tail_hashes) >= TAIL:
            self.sort()

    def remove(self, rel_path: str) -> None:

        number = self._number_of.pop(rel_path, None)
        if number is not None:
            self._paths[number] = None
            self._dropped += self._counts[number]

    def get(self, chunk_id: str) -> list[str]:
        """The paths of the files with chunks of this ID, in the order they were added."""
        import numpy as np

        key, check = hash(chunk_id), _check(chunk_id)
        numbers: list[int] = []
        with self._lock:  # another thread may add or sort meanwhile
            if self._sorted is not None:
                hashes, checks, sorted_numbers = self._sorted
                remembered = self._sorted_found
                known = remembered.get(chunk_id)
                if known is None:
                    known = []
                    low = int(np.searchsorted(hashes, key, "left"))
                    if low < len(hashes) and int(hashes[low]) == key:
                        high = int(np.searchsorted(hashes, key, "right"))
                        same = checks[low:high] == check
                        known = sorted_numbers[low:high][same].tolist()
                    if len(remembered) >= SORTED_FOUND:
                        remembered.clear()
                    remembered[chunk_id] = known
                numbers += known
            tail_hashes, tail_checks = self._tail_hashes, self._tail_checks
            tail_numbers, at = self._tail_numbers, self._tail_at
            end = min(len(tail_hashes), len(tail_checks), len(tail_numbers))
            for i in range(self._tail_indexed, end):
                here = at.get(tail_hashes[i])
                if here is None:  # (most hashes once: an int, not a list of one)
                    at[tail_hashes[i]] = i
                elif isinstance(here, int):
                    at[tail_hashes[i]] = [here, i]
                else:
                    here.append(i)
            self._tail_indexed = max(self._tail_indexed, end)
            found = at.get(key, ())
            where: Iterable[int] = (found,) if isinstance(found, int) else found
            numbers += [tail_numbers[i] for i in where if tail_checks[i] == check]
            paths = self._paths  # numbered as the arrays are
        return [path for number in sorted(set(numbers)) if (path := paths[number]) is not None]

    def sort(self) -> None:
        """Sort the entries added since in (and drop those of removed files)."""
        with self._lock:  # a lookup in another thread sees the map before or after
            if not self._tail_hashes and not self._dropped:
                return
            import numpy as np

            hashes = np.frombuffer(self._tail_hashes, dtype=np.int64)
            checks = np.frombuffer(self._tail_checks, dtype=np.uint32)
            numbers = np.frombuffer(self._tail_numbers, dtype=np.int32)
            if self._sorted is not None:
                hashes = np.concatenate([self._sorted[0], hashes])
                checks = np.concatenate([self._sorted[1], checks])
                numbers = np.concatenate([self._sorted[2], numbers])
            else:  # copies: the tail arrays' buffers are let go of
                hashes, checks, numbers = hashes.copy(), checks.copy(), numbers.copy()
            self._tail_hashes = array("q")
            self._tail_checks = array("I")
            self._tail_numbers = array("i")
            self._tail_at = {}
            self._tail_indexed = 0
            if self._dropped or len(self._paths) > 2 * len(self._number_of):
                live = np.array([path is not None for path in self._paths], dtype=bool)
                keep = live[numbers]
                hashes, checks, numbers = hashes[keep], checks[keep], numbers[keep]
                renumber = np.cumsum(live, dtype=np.int32) - 1
                numbers = renumber[numbers]
                kept = [n for n, path in enumerate(self._paths) if path is not None]
                self._paths = [self._paths[n] for n in kept]
                self._counts = [self._counts[n] for n in kept]
                self._number_of = {
                    path: n for n, path in enumerate(self._paths) if path is not None
                }
                self._dropped = 0
            order = np.argsort(hashes, kind="stable")
            self._sorted_found = {}
            self._sorted = (hashes[order], checks[order], numbers[order])  # (new, contiguous)


def _check(chunk_id: str) -> int:
    """An ID's CRC-32 (a lone surrogate, from a file name that is not UTF-8, kept)."""
    return zlib.crc32(chunk_id.encode("utf-8", "surrogatepass"))
