"""Saving the search postings writes the segment's arrays as they are: a save
holds no copy of the postings (the indexing process's peak is not the save's).

The bytes are counted by ``tracemalloc`` (numpy reports its arrays to it):
exact and the same on every run, unlike a process's resident memory."""

from __future__ import annotations

import itertools
import random
import sqlite3
import string
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from chunkls.search.postings import Segment, Snapshot, concat_triples, place
from chunkls.search.vocabulary import Vocabulary
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


# -- a bulk index's merge and vocabulary: temporaries of their own size, no more ------


def _traced_peak(work: Callable[[], object]) -> int:
    """The most bytes ``work`` allocated at once (beyond what it started with)."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("seed", range(6))
def test_placed_postings_are_those_of_one_stable_sort(seed: int) -> None:
    """Batches placed one after the other give each term's postings in batch order,
    as one stable sort of them all by term would (``Segment.build``)."""
    rng = np.random.default_rng(seed)
    vocabulary = int(rng.integers(1, 50))
    batches = []
    for _ in range(int(rng.integers(0, 5))):
        size = int(rng.integers(0, 40))
        batches.append(
            (
                rng.integers(0, vocabulary, size).astype(np.int32),
                rng.integers(0, 1000, size).astype(np.int32),
                rng.integers(1, 70_000, size).astype(np.int32),
            )
        )
    terms, docs, tfs = concat_triples(batches)
    expected = Segment.build(terms, docs, tfs, vocabulary)
    cursor = expected.offsets[:-1].copy()
    placed_docs = np.full(len(docs), -1, dtype=np.int32)
    placed_tfs = np.full(len(docs), -1, dtype=np.int32)
    for batch in batches:
        place(*batch, cursor, placed_docs, placed_tfs)
    assert placed_docs.tolist() == expected.docs.tolist()
    assert placed_tfs.tolist() == expected.tfs.astype(np.int32).tolist()
    assert cursor.tolist() == expected.offsets[1:].tolist()


def test_placing_a_batch_allocates_for_the_batch_not_the_vocabulary() -> None:
    vocabulary = 1_000_000
    terms = np.arange(0, vocabulary, 1000, dtype=np.int32)  # 1,000 postings
    docs, tfs = np.arange(len(terms), dtype=np.int32), np.ones(len(terms), dtype=np.int32)
    cursor = np.arange(vocabulary, dtype=np.int64)
    into_docs = np.zeros(vocabulary, dtype=np.int32)
    into_tfs = np.zeros(vocabulary, dtype=np.uint16)
    peak = _traced_peak(lambda: place(terms, docs, tfs, cursor, into_docs, into_tfs))
    assert peak < 100 * len(terms), peak  # a vocabulary-sized array would be 8 MB
    assert into_docs[terms].tolist() == docs.tolist()


def _terms(count: int, wide: bool) -> list[str]:
    """Distinct terms of 1 to 20 characters (one non-ASCII: ``wide``), shuffled."""
    rng = random.Random(count)
    terms = {
        "".join(rng.choices(string.ascii_lowercase + "_", k=rng.randint(1, 20)))
        for _ in range(count)
    }
    if wide:
        terms.add("\U0001d518nicode")  # an identifier character past 16 bits
    ordered = sorted(terms)
    rng.shuffle(ordered)
    return ordered


@pytest.mark.parametrize("wide", [False, True])
def test_a_frozen_vocabulary_holds_about_its_tables_size_at_once(wide: bool) -> None:
    """Freezing a bulk index's terms (the dict emptied as the table is made) holds
    the dict, and the table with a few bytes a term more: not the terms joined
    in one string (up to four bytes a character) beside their encoded copy, nor
    eight-byte temporaries of every term."""
    terms = _terms(100_000, wide)
    vocabulary = Vocabulary()
    ids = vocabulary.ids(terms)
    peak = _traced_peak(vocabulary.freeze)
    table = vocabulary.table
    table_bytes = len(table.blob) + table.ids.nbytes + table.starts.nbytes + table.prefixes.nbytes
    assert peak < table_bytes + 30 * len(terms), (peak, table_bytes)
    assert not vocabulary.added
    assert vocabulary.get_many(terms) == ids.tolist()
    assert table.names() == [terms[i] for i in np.argsort(ids)]


@pytest.mark.parametrize("wide", [False, True])
def test_term_prefixes_are_their_first_eight_bytes(wide: bool) -> None:
    terms = [*_terms(2_000, wide), "", "a" * 8, "b" * 9]
    table = term_table((term, n) for n, term in enumerate(terms))
    encoded = sorted(term.encode("utf-8") for term in terms)
    expected = [int.from_bytes(term[:8].ljust(8, b"\0"), "big") for term in encoded]
    assert table.prefixes.tolist() == expected
    assert [table.blob[a:b] for a, b in itertools.pairwise(table.starts.tolist())] == [
        term + b"\0" for term in encoded
    ]
