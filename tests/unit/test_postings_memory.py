"""Saving the search postings by term bucket holds a bounded part of them at a
time (``postings.bucket_rows``): the indexing process's peak is the save's.

The bytes are counted by ``tracemalloc`` (numpy reports its arrays to it):
exact and the same on every run, unlike a process's resident memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import chunkls.search.postings
from chunkls.search.postings import Segment, Snapshot, bucket_rows
from chunkls.search.vocabulary import TermTable

TERMS = 20_000
PER_TERM = 100
DOCS = 400


def _snapshot() -> Snapshot:
    """Every term in ``PER_TERM`` documents (ascending), two million postings."""
    table = TermTable.from_terms((f"term{n:05d}", n) for n in range(TERMS))
    offsets = np.arange(TERMS + 1, dtype=np.int64) * PER_TERM
    docs = np.arange(PER_TERM, dtype=np.int32) * 3 + np.arange(TERMS, dtype=np.int32)[:, None] % 3
    tfs = np.ones(TERMS * PER_TERM, dtype=np.uint16)
    segment = Segment(offsets, docs.ravel(), tfs)
    lengths = np.full(3 * PER_TERM, DOCS, dtype=np.int32)
    return Snapshot([((0, "a.py"), len(lengths))], table, segment, lengths)


def _saved_peak(snapshot: Snapshot) -> tuple[int, int]:
    """(postings in the rows, the most bytes allocated at once while they were made)."""
    tracemalloc.start()
    try:
        saved = bucket_rows(snapshot)
        postings = sum(len(row[3]) for row in saved.rows)  # each row let go of
        return postings, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_rows_are_made_a_bounded_number_of_postings_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snapshot = _snapshot()
    segment_bytes = snapshot.segment.docs.nbytes + snapshot.segment.tfs.nbytes
    monkeypatch.setattr(chunkls.search.postings, "ROWS_AT_ONCE", 1 << 13)
    monkeypatch.setattr(chunkls.search.postings, "HASHED_AT_ONCE", 1 << 12)
    postings, peak = _saved_peak(snapshot)
    assert postings == TERMS * PER_TERM
    # what a save needs per term (its new id, bucket, offsets), about 60 bytes of
    # each, and one group's postings; all the postings regrouped at once were
    # more than three times the segment
    assert peak < segment_bytes / 2, (peak, segment_bytes)


def test_all_the_postings_at_once_exceed_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound above can fail: regrouping every posting in one go breaks it."""
    snapshot = _snapshot()
    segment_bytes = snapshot.segment.docs.nbytes + snapshot.segment.tfs.nbytes
    monkeypatch.setattr(chunkls.search.postings, "ROWS_AT_ONCE", 1 << 30)
    postings, peak = _saved_peak(snapshot)
    assert postings == TERMS * PER_TERM
    assert peak > segment_bytes, (peak, segment_bytes)
