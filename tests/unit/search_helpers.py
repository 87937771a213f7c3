"""Search helpers that only tests use: built on the search package's own parts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import numpy as np

from chunkls.search import tokens
from chunkls.search.inverted import BM25Index
from chunkls.search.postings import FileKey, Segment, Snapshot
from chunkls.search.scorer import Hit
from chunkls.search.vocabulary import TermTable, Vocabulary

T = TypeVar("T")


def term_table(terms: Iterable[tuple[str, int]]) -> TermTable:
    """A table of (term, id) pairs, in any order."""
    pairs = sorted((term.encode("utf-8"), term_id) for term, term_id in terms)
    blob = b"".join(term + b"\0" for term, _ in pairs)
    return TermTable(blob, np.array([term_id for _, term_id in pairs], dtype=np.int32))


def vocabulary_names(vocabulary: Vocabulary) -> list[str]:
    """Every term of a vocabulary, by id."""
    found = vocabulary.table.names() if len(vocabulary.table) else []
    found.extend(vocabulary.added)  # ids follow the table's, in insertion order
    return found


def find(table: TermTable, term: str) -> int:
    """The id of ``term`` in a table, or -1."""
    return table.find_many([term])[0]


def token_counts(text: str) -> dict[str, int]:
    """Token counts of a text, tokens in order of first appearance (as
    ``file_terms`` counts a document)."""
    return tokens._token_counts(tokens._word_counts(text), tokens._tokens_of())


def term_counts(text: str) -> Counter[str]:
    """Token counts of a text (the same tokens as ``tokenize``)."""
    return Counter(token_counts(text))


def scores(index: BM25Index[T], query: str) -> dict[int, float]:
    """BM25 score of every live document matching a query token."""
    terms = index.scorer.terms(index, tokens.tokenize(query))
    if not terms:
        return {}
    docs, found = index.kernel.candidates(terms, index.size, index.size)
    return {int(doc): float(score) for doc, score in zip(docs, found, strict=True)}


def search(index: BM25Index[T], query: str, top_k: int = 10) -> list[Hit[T]]:
    """The ``top_k`` best documents for a query, best first (the scorer's)."""
    return [
        Hit(score, index.item(doc))
        for doc, score in index.scorer.top(index, tokens.tokenize(query), top_k)
    ]


def file_items(index: BM25Index[T], file_key: FileKey) -> Sequence[T]:
    """The live items of one file, in order."""
    return [index.item(doc) for doc in index._files.get(file_key, ())]


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
    local = np.full(len(snapshot.terms), -1, dtype=np.int32)
    local[names] = np.arange(len(names), dtype=np.int32)
    segment = Segment.build(
        local[terms], renumber[docs[kept]].astype(np.int32), tfs[kept], len(names)
    )
    return Snapshot(files, snapshot.terms.select(local), segment, snapshot.lengths[mask])
