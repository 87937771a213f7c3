"""Postings storage: compressed-row segments, and snapshots of some files' postings.

A ``Segment`` maps each term id to a slice of numpy arrays of (document, term
frequency); a ``Snapshot`` is some files' postings, renumbered from 0, as the
cache saves and loads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from chunkls.search.buckets import bucket_count, term_hash
from chunkls.search.vocabulary import TermTable

if TYPE_CHECKING:
    from chunkls.storage.mapped import Mapped

FileKey = tuple[int, str]
"""A file in corpus order: (workspace folder position, root-relative path)."""

_I32 = np.int32
EMPTY = np.zeros(0, dtype=_I32)


class Segment(NamedTuple):
    """Postings in compressed-row form: term id -> slice of (docs, tfs)."""

    offsets: npt.NDArray[np.int64]
    docs: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.int32] | npt.NDArray[np.uint16]
    """Term frequencies: 16-bit when they all fit (almost always), else 32-bit."""

    @staticmethod
    def build(
        term_ids: npt.NDArray[np.int32],
        docs: npt.NDArray[np.int32],
        tfs: npt.NDArray[np.int32],
        vocabulary: int,
    ) -> Segment:
        """A segment from unordered (term, doc, tf) triples (docs ascending per term
        when they were ascending in the input)."""
        order = np.argsort(term_ids, kind="stable")
        counts = np.bincount(term_ids, minlength=vocabulary)
        offsets = np.zeros(vocabulary + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Segment(offsets, docs[order], narrow_tfs(tfs[order]))

    def postings(
        self, term: int
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32] | npt.NDArray[np.uint16]]:
        """A term's (docs, tfs); empty arrays for a term it does not have."""
        if term + 1 >= len(self.offsets):
            return EMPTY, EMPTY
        start, stop = int(self.offsets[term]), int(self.offsets[term + 1])
        return self.docs[start:stop], self.tfs[start:stop]

    def triples(
        self,
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """Every (term, doc, tf) posting."""
        terms = np.repeat(np.arange(len(self.offsets) - 1, dtype=_I32), np.diff(self.offsets))
        return terms, self.docs, self.tfs.astype(_I32, copy=False)


def narrow_tfs(tfs: npt.NDArray[Any]) -> npt.NDArray[np.int32] | npt.NDArray[np.uint16]:
    """Term frequencies in 16 bits when they fit (scores are the same: each is
    converted to float64 exactly either way)."""
    if len(tfs) and (int(tfs.max()) > 0xFFFF or int(tfs.min()) < 0):
        return tfs.astype(_I32, copy=False)
    return tfs.astype(np.uint16, copy=False)  # (already 16-bit: as it is)


NO_SEGMENT = Segment(np.zeros(1, dtype=np.int64), EMPTY, EMPTY)


class Snapshot(NamedTuple):
    """Some files' postings, renumbered from 0, for saving and loading."""

    files: list[tuple[FileKey, int]]
    """Files in document order, with how many documents each has."""
    terms: TermTable
    """The terms, with ids 0 to n-1 (those of ``segment``)."""
    segment: Segment
    lengths: npt.NDArray[np.int32]
    mapped: Mapped | None = None
    """The postings file ``terms`` and ``segment`` are read from in place, if
    they are (``chunkls.storage.mapped``)."""


def select_files(snapshot: Snapshot, keep: Callable[[FileKey], FileKey | None]) -> Snapshot:
    """The part of a snapshot for the files ``keep`` maps to a (new) key."""
    files: list[tuple[FileKey, int]] = []
    mask = np.zeros(len(snapshot.lengths), dtype=bool)
    doc = 0
    for key, count in snapshot.files:
        new_key = keep(key)
        if new_key is not None:
            files.append((new_key, count))
            mask[doc : doc + count] = True
        doc += count
    if mask.all():
        return Snapshot(files, snapshot.terms, snapshot.segment, snapshot.lengths, snapshot.mapped)
    renumber = np.cumsum(mask, dtype=np.int64) - 1
    terms, docs, tfs = snapshot.segment.triples()
    kept = mask[docs]
    terms = terms[kept]
    # only the terms the kept files have, in the same order
    used = np.zeros(len(snapshot.terms), dtype=bool)
    used[terms] = True
    names = np.flatnonzero(used)
    local = np.full(len(snapshot.terms), -1, dtype=_I32)
    local[names] = np.arange(len(names), dtype=_I32)
    segment = Segment.build(local[terms], renumber[docs[kept]].astype(_I32), tfs[kept], len(names))
    return Snapshot(files, snapshot.terms.select(local), segment, snapshot.lengths[mask])


def docs_ascending(segment: Segment) -> Segment:
    """The segment with each term's documents ascending (as reading needs them),
    for a snapshot that may have been saved with them in another order."""
    docs = segment.docs
    if len(docs) < 2:
        return segment
    steps = docs[1:] > docs[:-1]
    starts = segment.offsets[1:-1]
    steps[starts[(starts > 0) & (starts < len(docs))] - 1] = True  # a new term may go down
    if steps.all():
        return segment
    terms = segment.triples()[0]
    order = np.lexsort((docs, terms))
    return Segment(segment.offsets, docs[order], segment.tfs[order])


def concat_triples(
    parts: Sequence[tuple[npt.NDArray[np.int32], ...]],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """(term ids, docs, tfs) triples of arrays joined into one, as int32."""
    if not parts:
        return EMPTY, EMPTY, EMPTY
    return (
        np.concatenate([p[0] for p in parts]).astype(_I32, copy=False),
        np.concatenate([p[1] for p in parts]).astype(_I32, copy=False),
        np.concatenate([p[2] for p in parts]).astype(_I32, copy=False),
    )


BucketRow = tuple[int, bytes, memoryview, memoryview, memoryview]
"""One saved bucket: (bucket, its terms NUL-joined, int32 postings count of
each, int32 documents, term frequencies as the segment keeps them)."""


class Buckets(NamedTuple):
    """A snapshot's postings as saved: terms renumbered bucket by bucket."""

    buckets: int
    """How many buckets (``chunkls.search.buckets.bucket_count``)."""
    rows: Iterator[BucketRow]
    """A row per bucket that has terms, in bucket order (made as they are
    written: a few buckets' postings at a time): their postings, one after the
    other, are the whole segment."""
    term_ids: npt.NDArray[np.int32]
    """The new id of each term of the snapshot's table (in its sorted order)."""
    offsets: npt.NDArray[np.int64]
    """The segment's offsets by new term id."""


ROWS_AT_ONCE = 1 << 18
"""Postings regrouped at a time while bucket rows are written (a bound on the
memory a save takes beside the segment)."""


def bucket_rows(snapshot: Snapshot) -> Buckets:
    """A snapshot's postings grouped by term bucket (``chunkls.search.buckets``), terms
    numbered in bucket order (then by their bytes). Each term's documents are
    ascending, as in the snapshot once read."""
    table = snapshot.terms
    segment = docs_ascending(snapshot.segment)
    size = len(table)
    buckets = bucket_count(size)
    of = _term_buckets(table, buckets)
    order = np.argsort(of, kind="stable")  # by bucket, then (within one) by term
    term_ids = np.empty(size, dtype=_I32)
    term_ids[order] = np.arange(size, dtype=_I32)
    ids = table.ids[order].astype(np.int64)
    first_posting = segment.offsets[ids]
    counts = segment.offsets[ids + 1] - first_posting
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    term_ends = np.cumsum(np.bincount(of, minlength=buckets))
    return Buckets(
        buckets,
        _rows(table, segment, order, first_posting, counts, offsets, term_ends),
        term_ids,
        offsets,
    )


HASHED_AT_ONCE = 1 << 16
"""Terms hashed at a time (their bounds as Python ints: a bound on the memory)."""


def _term_buckets(table: TermTable, buckets: int) -> npt.NDArray[np.int64]:
    """``bucket_of`` of every term of a table (its bytes without their NUL), the
    modulo taken at once; ``HASHED_AT_ONCE`` terms' bounds as Python ints at a time
    (all of them at once were 40 MB of ints on the stdlib's half a million terms)."""
    size = len(table)
    blob = memoryview(table.blob)
    hashed = np.empty(size, dtype=np.int64)
    for low in range(0, size, HASHED_AT_ONCE):
        high = min(size, low + HASHED_AT_ONCE)
        starts = table.starts[low : high + 1].tolist()
        spans = map(slice, starts[:-1], [start - 1 for start in starts[1:]])
        hashed[low:high] = np.fromiter(
            map(term_hash, map(blob.__getitem__, spans)), np.int64, high - low
        )
    hashed %= buckets
    return hashed


def _rows(
    table: TermTable,
    segment: Segment,
    order: npt.NDArray[np.int64],
    first_posting: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    term_ends: npt.NDArray[np.int64],
) -> Iterator[BucketRow]:
    """The bucket rows, regrouping about ``ROWS_AT_ONCE`` postings at a time."""
    letters = np.frombuffer(table.blob, dtype=np.uint8)
    lengths = np.diff(table.starts)  # each term with its NUL
    bounds = term_ends.tolist()
    # where each bucket's postings start (the offsets of its first term), by term:
    # only the buckets' bounds are ever asked for (a bucket's first term, or the end)
    posting_at = dict(zip([0, *bounds], offsets[[0, *bounds]].tolist(), strict=True))
    low_bucket = 0
    while low_bucket < len(bounds):
        low = bounds[low_bucket - 1] if low_bucket else 0
        high_bucket = low_bucket
        while high_bucket < len(bounds) and (
            high_bucket == low_bucket
            or posting_at[bounds[high_bucket]] - posting_at[low] <= ROWS_AT_ONCE
        ):
            high_bucket += 1
        high = bounds[high_bucket - 1]
        # this group's postings and term bytes, gathered in bucket order
        group_counts = counts[low:high]
        total = int(group_counts.sum())
        before = np.cumsum(group_counts) - group_counts
        gather = np.repeat(first_posting[low:high] - before, group_counts)
        gather += np.arange(total)
        docs = segment.docs[gather].astype(_I32, copy=False)
        tfs = segment.tfs[gather]
        ranks = order[low:high]
        sizes = lengths[ranks]
        before_letters = np.cumsum(sizes) - sizes
        pick = np.repeat(table.starts[ranks] - before_letters, sizes) + np.arange(int(sizes.sum()))
        names = letters[pick].tobytes()
        counts32 = group_counts.astype(_I32)
        letter_at = [0, *np.cumsum(sizes).tolist()]
        base = posting_at[low]
        start = low
        for bucket in range(low_bucket, high_bucket):
            stop = bounds[bucket]
            if stop > start:
                first, last = posting_at[start] - base, posting_at[stop] - base
                yield (
                    bucket,
                    names[letter_at[start - low] : letter_at[stop - low] - 1],  # no last NUL
                    counts32[start - low : stop - low].data,
                    docs[first:last].data,
                    tfs[first:last].data,
                )
            start = stop
        low_bucket = high_bucket
