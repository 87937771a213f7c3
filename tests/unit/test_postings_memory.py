"""Saving the search postings writes the segment's arrays as they are: a save
holds no copy of the postings (the indexing process's peak is not the save's).

The bytes are counted by ``tracemalloc`` (numpy reports its arrays to it):
exact and the same on every run, unlike a process's resident memory."""

from __future__ import annotations

import sqlite3
import tracemalloc
from pathlib import Path

import numpy as np

from chunkls.search.postings import Segment, Snapshot
from chunkls.storage import saved_postings as saved
from chunkls.storage.cache import FolderCache

from .search_helpers import term_table

TERMS = 20_000
PER_TERM = 100
DOCS = 400


def _snapshot(ascending: bool = True) -> Snapshot:
    """Every term in ``PER_TERM`` documents, two million postings."""
    table = term_table((f"term{n:05d}", n) for n in range(TERMS))
    offsets = np.arange(TERMS + 1, dtype=np.int64) * PER_TERM
    docs = np.arange(PER_TERM, dtype=np.int32) * 3 + np.arange(TERMS, dtype=np.int32)[:, None] % 3
    if not ascending:  # each term's documents the other way round
        docs = docs[:, ::-1]
    tfs = np.ones(TERMS * PER_TERM, dtype=np.uint16)
    segment = Segment(offsets, np.ascontiguousarray(docs).ravel(), tfs)
    lengths = np.full(3 * PER_TERM, DOCS, dtype=np.int32)
    return Snapshot([((0, "a.py"), len(lengths))], table, segment, lengths)


def _saved_peak(snapshot: Snapshot, tmp_path: Path) -> int:
    """The most bytes allocated at once while the snapshot was saved."""
    cache = FolderCache(tmp_path / "index.sqlite3", tmp_path)
    db = cache._connect()
    assert isinstance(db, sqlite3.Connection)
    tracemalloc.start()
    try:
        saved.save(db, tmp_path, snapshot, {"a.py": 1})
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        cache.close()


def test_a_save_holds_no_copy_of_the_postings(tmp_path: Path) -> None:
    snapshot = _snapshot()
    segment_bytes = snapshot.segment.docs.nbytes + snapshot.segment.tfs.nbytes
    peak = _saved_peak(snapshot, tmp_path)
    assert peak < segment_bytes / 4, (peak, segment_bytes)
    loaded, generations = saved.load(sqlite3.connect(tmp_path / "index.sqlite3"), tmp_path)
    assert loaded is not None and generations == {"a.py": 1}
    assert np.array_equal(loaded.segment.docs, snapshot.segment.docs)


def test_a_save_that_reorders_the_postings_copies_them(tmp_path: Path) -> None:
    """The bound above can fail: documents not ascending are sorted (a copy)."""
    snapshot = _snapshot(ascending=False)
    segment_bytes = snapshot.segment.docs.nbytes + snapshot.segment.tfs.nbytes
    assert _saved_peak(snapshot, tmp_path) > segment_bytes / 4
