"""The search vocabulary: a ``TermTable`` (sorted NUL-ended terms in one blob, numpy starts,
prefixes and ids) plus the terms added since (``Vocabulary``). Terms never contain NUL
(``\\w+`` pieces), so a NUL-padded prefix orders terms as their bytes do."""

from __future__ import annotations

import mmap
from collections.abc import Iterator, Sequence
from itertools import compress, count, repeat
from operator import is_

import numpy as np
import numpy.typing as npt

from chunkls.search.scorer import prefix_key, rank_among

_I32 = np.int32
_PREFIX = 8
"""Bytes of a term in its prefix key."""


def _prefixes(
    data: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> npt.NDArray[np.uint64]:
    """The first ``_PREFIX`` bytes of each term (``data[starts[i]:ends[i]]``),
    NUL-padded, as a big-endian number; ``ends`` is overwritten. Besides the
    result it holds one position and a byte or two per term at a time (a bulk
    index builds a table of every term, near its peak)."""
    lengths = np.subtract(ends, starts[:-1], out=ends)
    short = np.minimum(lengths, _PREFIX, out=lengths).astype(np.uint8)
    del lengths, ends
    prefixes = np.zeros(len(short), dtype=np.uint64)
    at = starts[:-1].copy()
    last = len(data) - 1
    for k in range(_PREFIX):
        if k:
            at += 1
        np.minimum(at, last, out=at)  # (past a term's end its byte is not read)
        byte = data[at]
        byte[short <= k] = 0
        prefixes <<= np.uint64(8)
        prefixes |= byte
    return prefixes


def _in_order(added: dict[str, int]) -> tuple[list[str], npt.NDArray[np.int32]]:
    """The terms of ``added`` sorted as their UTF-8 bytes are, and their ids."""
    # strings sort as their UTF-8 bytes do (code point order), and faster
    order = sorted(added)
    return order, np.fromiter(map(added.__getitem__, order), _I32, len(order))


_JOIN = 1 << 16
"""Terms joined into one string at a time (``_joined``)."""


def _joined(terms: list[str]) -> bytes:
    """The terms UTF-8 encoded, each followed by NUL; ``terms`` is emptied. Joined
    a slice at a time: one string of them all would take up to four bytes a
    character (a single non-ASCII term widens it), beside its encoded copy."""
    pieces = [
        ("\0".join(terms[at : at + _JOIN]) + "\0").encode("utf-8")
        for at in range(0, len(terms), _JOIN)
    ]
    terms.clear()
    return b"".join(pieces)


class TermTable:
    """An immutable set of terms with ids, sorted by their UTF-8 bytes."""

    __slots__ = ("blob", "ids", "prefixes", "starts")

    blob: bytes | mmap.mmap
    """The sorted terms, each followed by NUL (slicing a mapped file's gives ``bytes`` too)."""

    def __init__(self, blob: bytes | mmap.mmap, ids: npt.NDArray[np.int32]) -> None:
        """``ids``: each term's id, in order (``ValueError`` if they do not fit together)."""
        data = np.frombuffer(blob, dtype=np.uint8)
        ends = np.flatnonzero(data == 0)
        if len(ends) != len(ids) or (len(blob) and blob[-1:] != b"\0"):
            raise ValueError(f"a term table of {len(ends)} terms with {len(ids)} ids")
        self.blob = blob
        self.ids = np.ascontiguousarray(ids, dtype=_I32)
        """Term id of each term, in sorted order."""
        starts = np.zeros(len(ends) + 1, dtype=np.int64)
        np.add(ends, 1, out=starts[1:])
        self.starts = starts
        """Where each term begins in ``blob`` (and, last, the blob's length)."""
        self.prefixes = _prefixes(data, starts, ends)
        """The first eight bytes of each term, NUL-padded, as a big-endian number."""

    @classmethod
    def from_parts(
        cls,
        blob: bytes | mmap.mmap,
        ids: npt.NDArray[np.int32],
        starts: npt.NDArray[np.int64],
        prefixes: npt.NDArray[np.uint64],
    ) -> TermTable:
        """A table as saved whole, nothing recomputed (``ValueError`` if sizes do not fit)."""
        if not (len(ids) == len(prefixes) == len(starts) - 1) or (
            len(starts) and int(starts[-1]) != len(blob)
        ):
            raise ValueError(f"a term table of {len(ids)} terms and {len(starts)} starts")
        table = cls.__new__(cls)
        table.blob = blob
        table.ids = ids
        table.starts = starts
        table.prefixes = prefixes
        return table

    def __len__(self) -> int:
        return len(self.ids)

    def _bytes(self, rank: int) -> bytes:
        starts = self.starts
        return self.blob[starts[rank] : starts[rank + 1] - 1]

    def __iter__(self) -> Iterator[str]:
        """The terms in sorted order."""
        if not self.blob:
            return iter(())
        return (term.decode("utf-8") for term in self.blob[:-1].split(b"\0"))

    def ranks(self, terms: Sequence[bytes]) -> list[int]:
        """Where each term is or would go: one numpy search of the prefixes, then ties."""
        keys = np.fromiter(map(prefix_key, terms), np.uint64, len(terms))
        lows = np.searchsorted(self.prefixes, keys, "left").tolist()
        highs = np.searchsorted(self.prefixes, keys, "right").tolist()
        ranks: list[int] = []
        for term, lo, hi in zip(terms, lows, highs, strict=True):
            ranks.append(rank_among(term, lo, hi, self._bytes))
        return ranks

    def find_many(self, terms: Sequence[str]) -> list[int]:
        """The id of each term, or -1."""
        if not len(self.ids) or not terms:
            return [-1] * len(terms)
        encoded = [term.encode("utf-8") for term in terms]
        ids, size = self.ids, len(self.ids)
        return [
            int(ids[rank]) if rank < size and self._bytes(rank) == term else -1
            for term, rank in zip(encoded, self.ranks(encoded), strict=True)
        ]

    def starting(self, prefix: bytes, limit: int) -> list[str]:
        """The first ``limit`` terms that start with ``prefix``, in sorted order."""
        found: list[str] = []
        if not len(self.ids):
            return found
        rank = self.ranks([prefix])[0]
        while rank < len(self.ids) and len(found) < limit:
            term = self._bytes(rank)
            if not term.startswith(prefix):
                break
            found.append(term.decode("utf-8"))
            rank += 1
        return found

    def names(self) -> list[str]:
        """Every term, by id (ids must be 0 to n-1)."""
        names = [""] * len(self.ids)
        for term, term_id in zip(self, self.ids.tolist(), strict=True):
            names[term_id] = term
        return names

    def select(self, renumber: npt.NDArray[np.int32]) -> TermTable:
        """The terms whose id maps to a new id (-1: dropped), with the new ids."""
        new_ids = renumber[self.ids]
        kept = new_ids >= 0
        if kept.all():
            return TermTable(self.blob, new_ids)
        lengths = np.diff(self.starts)  # with their NUL
        mask = np.repeat(kept, lengths)
        blob = np.frombuffer(self.blob, dtype=np.uint8)[mask].tobytes()
        return TermTable(blob, new_ids[kept])

    def merged(self, added: dict[str, int]) -> TermTable:
        """This table plus terms it does not have."""
        return self.with_sorted(*_in_order(added))

    def with_sorted(self, order: list[str], new_ids: npt.NDArray[np.int32]) -> TermTable:
        """This table plus terms it does not have, given sorted (``_in_order``),
        with their ids; ``order`` is used up."""
        if not order:
            return self
        if not len(self.ids):
            return TermTable(_joined(order), new_ids)
        new = [term.encode("utf-8") for term in order]
        ranks = self.ranks(new)
        starts = self.starts
        blob = self.blob
        pieces: list[bytes] = []
        last = 0
        for term, rank in zip(new, ranks, strict=True):
            cut = int(starts[rank])
            pieces.append(blob[last:cut])
            pieces.append(term + b"\0")
            last = cut
        pieces.append(blob[last:])
        ids = np.insert(self.ids, ranks, new_ids).astype(_I32)
        return TermTable(b"".join(pieces), ids)


EMPTY_TABLE = TermTable(b"", np.zeros(0, dtype=_I32))


_GENERATIONS = count()
"""Vocabulary generations, unique in the process."""


def _nones(values: list[int | None]) -> list[int]:
    """Where ``values`` holds ``None`` (scanned in C: a bulk load asks for millions)."""
    return list(compress(range(len(values)), map(is_, values, repeat(None))))


class Vocabulary:
    """term -> term id (ids 0 to n-1): a ``TermTable`` plus the terms added since."""

    __slots__ = ("added", "generation", "size", "table")

    def __init__(self, table: TermTable = EMPTY_TABLE) -> None:
        self.table = table
        """The terms frozen in a table (ids 0 to ``len(table) - 1``)."""
        self.added: dict[str, int] = {}
        """Terms added since, with their ids (``len(table)`` and up)."""
        self.size = len(table)
        self.generation = next(_GENERATIONS)
        """Changes whenever ids are renumbered (``keep``): ids handed out before are
        stale. Never the same in two vocabularies (an index may replace its own)."""

    def __len__(self) -> int:
        return self.size

    def get_many(self, terms: Sequence[str]) -> list[int | None]:
        """The id of each term (``None`` for an unknown one), the table searched once."""
        found = list(map(self.added.get, terms))
        if len(self.table) and None in found:
            missing = _nones(found)
            in_table = self.table.find_many([terms[i] for i in missing])
            for i, term_id in zip(missing, in_table, strict=True):
                found[i] = term_id if term_id >= 0 else None
        return found

    def starting(self, prefix: str, limit: int) -> list[str]:
        """The first ``limit`` terms that start with ``prefix``, sorted."""
        found = self.table.starting(prefix.encode("utf-8"), limit)
        found += [term for term in self.added if term.startswith(prefix)]
        return sorted(found, key=lambda term: term.encode("utf-8"))[:limit]

    def ids(self, terms: Sequence[str]) -> npt.NDArray[np.int32]:
        """The ids of terms, adding the new ones (numbered in order of first appearance)."""
        ids = self.get_many(terms)
        if None in ids:
            missing = _nones(ids)
            new = list(map(terms.__getitem__, missing))
            fresh = dict.fromkeys(new)  # (a term repeated in ``terms`` is one new term)
            added = self.added
            added.update(zip(fresh, range(self.size, self.size + len(fresh)), strict=True))
            self.size += len(fresh)
            for i, term_id in zip(missing, map(added.__getitem__, new), strict=True):
                ids[i] = term_id
        return np.array(ids, dtype=_I32)

    def freeze(self) -> None:
        """Fold the added terms into the table."""
        if self.added:
            order, new_ids = _in_order(self.added)
            self.added = {}  # (its memory given back before the table is built)
            self.table = self.table.with_sorted(order, new_ids)

    def select(self, renumber: npt.NDArray[np.int32]) -> TermTable:
        """A table of the terms whose id maps to a new id (-1: dropped); this one stays."""
        table = self.table.select(renumber[: len(self.table)])
        extra = {term: int(renumber[i]) for term, i in self.added.items() if renumber[i] >= 0}
        return table.merged(extra)

    def keep(self, used: npt.NDArray[np.bool_]) -> npt.NDArray[np.int32] | None:
        """Drop the terms whose id is not ``used``, the others renumbered in the
        same order; returns old id -> new id (-1: dropped), ``None`` if all are used."""
        if used.all():
            return None
        renumber = np.full(len(used), -1, dtype=_I32)
        kept = np.flatnonzero(used)
        renumber[kept] = np.arange(len(kept), dtype=_I32)
        self.table = self.table.select(renumber[: len(self.table)])
        self.added = {
            term: int(renumber[term_id])
            for term, term_id in self.added.items()
            if renumber[term_id] >= 0
        }
        self.size = len(kept)
        self.generation = next(_GENERATIONS)
        return renumber
