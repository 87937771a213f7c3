"""Postings storage: compressed-row segments, and snapshots of some files' postings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

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
    terms: npt.NDArray[np.int32] | None = None
    """The term of each row (ascending) when only the terms present have rows, as
    in the small write segment; ``None``: row ``i`` is term ``i``."""

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

    @staticmethod
    def build_sparse(
        term_ids: npt.NDArray[np.int32],
        docs: npt.NDArray[np.int32],
        tfs: npt.NDArray[np.int32],
    ) -> Segment:
        """A segment with rows for the terms present only: its size follows the
        postings, not the vocabulary (a one-file save rebuilds it)."""
        order = np.argsort(term_ids, kind="stable")
        ordered = term_ids[order]
        first = np.ones(len(ordered), dtype=bool)
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        offsets = np.empty(len(starts) + 1, dtype=np.int64)
        offsets[:-1] = starts
        offsets[-1] = len(ordered)
        terms = ordered[starts].astype(_I32, copy=False)
        return Segment(offsets, docs[order], narrow_tfs(tfs[order]), terms)

    def row_terms(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int32]:
        """The term ids of some rows."""
        if self.terms is None:
            return rows.astype(_I32, copy=False)
        return self.terms[rows]

    def postings(
        self, term: int
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32] | npt.NDArray[np.uint16]]:
        """A term's (docs, tfs); empty arrays for a term it does not have."""
        if self.terms is not None:
            row = int(np.searchsorted(self.terms, term))
            if row == len(self.terms) or int(self.terms[row]) != term:
                return EMPTY, EMPTY
            term = row
        if term + 1 >= len(self.offsets):
            return EMPTY, EMPTY
        start, stop = int(self.offsets[term]), int(self.offsets[term + 1])
        return self.docs[start:stop], self.tfs[start:stop]

    def triples(
        self,
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """Every (term, doc, tf) posting."""
        rows = np.arange(len(self.offsets) - 1, dtype=np.int64)
        terms = np.repeat(self.row_terms(rows), np.diff(self.offsets))
        return terms, self.docs, self.tfs.astype(_I32, copy=False)


def narrow_tfs(tfs: npt.NDArray[Any]) -> npt.NDArray[np.int32] | npt.NDArray[np.uint16]:
    """Term frequencies in 16 bits when they fit (scores are the same: each is
    converted to float64 exactly either way)."""
    if len(tfs) and (int(tfs.max()) > 0xFFFF or int(tfs.min()) < 0):
        return tfs.astype(_I32, copy=False)
    return tfs.astype(np.uint16, copy=False)  # (already 16-bit: as it is)


def place(
    terms: npt.NDArray[Any],
    docs: npt.NDArray[np.int32],
    tfs: npt.NDArray[Any],
    cursor: npt.NDArray[np.int64],
    into_docs: npt.NDArray[np.int32],
    into_tfs: npt.NDArray[Any],
) -> None:
    """Put a batch of (term, doc, tf) postings in their terms' rows of
    ``into_docs``/``into_tfs``, each term's at its ``cursor`` (moved past them), in
    batch order within a term; what it allocates is the batch's size, never the
    vocabulary's (a bulk merge's peak has each batch's on top of the postings)."""
    if not len(terms):
        return
    order = np.argsort(terms, kind="stable")
    terms = terms[order]
    starts = np.flatnonzero(np.concatenate(([True], terms[1:] != terms[:-1])))
    present = terms[starts]
    lengths = np.diff(np.append(starts, len(terms)))
    at = np.repeat(cursor[present] - starts, lengths)
    at += np.arange(len(terms), dtype=np.int64)
    into_docs[at] = docs[order]
    into_tfs[at] = tfs[order]
    cursor[present] += lengths


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
    return segment._replace(docs=docs[order], tfs=segment.tfs[order])


def concat_triples(
    parts: Sequence[tuple[npt.NDArray[np.int32], ...]],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """(term ids, docs, tfs) triples of arrays joined into one, as int32."""
    if not parts:
        return EMPTY, EMPTY, EMPTY
    terms, docs, tfs = (
        np.concatenate(column).astype(_I32, copy=False) for column in zip(*parts, strict=True)
    )
    return terms, docs, tfs
