"""Postings storage: compressed-row segments, and snapshots of some files' postings.

A ``Segment`` maps each term id to a slice of numpy arrays of (document, term
frequency); a ``Snapshot`` is some files' postings, renumbered from 0, as the
cache saves and loads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from chunkls.buckets import bucket_count, term_hash
from chunkls.terms import TermTable

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
    return tfs.astype(np.uint16)


NO_SEGMENT = Segment(np.zeros(1, dtype=np.int64), EMPTY, EMPTY)


class Snapshot(NamedTuple):
    """Some files' postings, renumbered from 0, for saving and loading."""

    files: list[tuple[FileKey, int]]
    """Files in document order, with how many documents each has."""
    terms: TermTable
    """The terms, with ids 0 to n-1 (those of ``segment``)."""
    segment: Segment
    lengths: npt.NDArray[np.int32]


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
        return Snapshot(files, snapshot.terms, snapshot.segment, snapshot.lengths)
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
    """How many buckets (``chunkls.buckets.bucket_count``)."""
    rows: list[BucketRow]
    """A row per bucket that has terms, in bucket order: their postings, one
    after the other, are the whole segment."""
    term_ids: npt.NDArray[np.int32]
    """The new id of each term of the snapshot's table (in its sorted order)."""
    offsets: npt.NDArray[np.int64]
    """The segment's offsets by new term id."""


def bucket_rows(snapshot: Snapshot) -> Buckets:
    """A snapshot's postings grouped by term bucket (``chunkls.buckets``), terms
    numbered in bucket order (then by their bytes). Each term's documents are
    ascending, as in the snapshot once read."""
    table = snapshot.terms
    segment = docs_ascending(snapshot.segment)
    names = table.blob[:-1].split(b"\0") if table.blob else []
    buckets = bucket_count(len(names))
    # ``bucket_of`` of every term, the modulo taken at once
    of = np.fromiter(map(term_hash, names), np.int64, len(names)) % buckets
    order = np.argsort(of, kind="stable")  # by bucket, then (within one) by term
    term_ids = np.empty(len(names), dtype=_I32)
    term_ids[order] = np.arange(len(names), dtype=_I32)
    ordered = list(map(names.__getitem__, order.tolist()))
    ids = table.ids[order].astype(np.int64)
    starts = segment.offsets[ids]
    counts = segment.offsets[ids + 1] - starts
    ends = np.cumsum(counts)
    offsets = np.zeros(len(names) + 1, dtype=np.int64)
    offsets[1:] = ends
    total = int(ends[-1]) if len(ends) else 0
    gather = np.repeat(starts - (ends - counts), counts) + np.arange(total, dtype=np.int64)
    docs = segment.docs[gather].astype(_I32, copy=False)
    tfs = segment.tfs[gather]
    counts32 = counts.astype(_I32)
    term_ends = np.cumsum(np.bincount(of, minlength=buckets)).tolist()
    posting_ends = offsets.tolist()
    rows: list[BucketRow] = []
    low = 0
    for bucket, high in enumerate(term_ends):
        if high > low:
            first, last = posting_ends[low], posting_ends[high]
            rows.append(
                (
                    bucket,
                    b"\0".join(ordered[low:high]),
                    counts32[low:high].data,  # (no copy: SQLite reads the buffer)
                    docs[first:last].data,
                    tfs[first:last].data,
                )
            )
        low = high
    return Buckets(buckets, rows, term_ids, offsets)
