"""Okapi BM25 over chunks, with a code-aware tokenizer and one-file updates.

Postings are compact ``array`` pairs per term. Removing a file marks its
documents dead (document frequencies drop at once, so scores are exactly those
of a fresh build); dead postings are skipped and compacted away in bulk.
"""

from __future__ import annotations

import heapq
import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Generic, NamedTuple, TypeVar

K1 = 1.5
"""Term-frequency saturation."""
B = 0.75
"""Length normalisation."""

_WORD = re.compile(r"\w+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@lru_cache(maxsize=1 << 18)
def _word_tokens(word: str) -> tuple[str, ...]:
    """Tokens for one ``\\w+`` word: its parts, plus the whole identifier."""
    pieces = [piece for piece in word.split("_") if piece]
    if not pieces:
        return ()
    parts: list[str] = []
    for piece in pieces:
        if piece.isascii() and piece.isalnum():
            parts.extend(_CAMEL_PART.findall(piece))
        else:
            parts.append(piece)
    lowered = [part.lower() for part in parts]
    if len(lowered) == 1:
        return (lowered[0],)
    return ("_".join(piece.lower() for piece in pieces), *lowered)


def tokenize(text: str) -> list[str]:
    """Code-aware tokens: lowercase, split on non-alphanumerics, and split
    ``snake_case`` and ``camelCase`` into parts while keeping the whole word.

    >>> tokenize("chunk_python(HybridRetriever)")
    ['chunk_python', 'chunk', 'python', 'hybridretriever', 'hybrid', 'retriever']
    """
    tokens: list[str] = []
    for word in _WORD.findall(text):
        tokens.extend(_word_tokens(word))
    return tokens


def term_counts(text: str) -> Counter[str]:
    """Token counts of a text (the same tokens as ``tokenize``)."""
    counts: Counter[str] = Counter()
    for word, n in Counter(_WORD.findall(text)).items():
        for token in _word_tokens(word):
            counts[token] += n
    return counts


T = TypeVar("T")

FileKey = tuple[int, str]
"""A file in corpus order: (workspace folder position, root-relative path)."""


class Hit(NamedTuple, Generic[T]):
    """One search result."""

    score: float
    item: T


class BM25Index(Generic[T]):
    """An incremental BM25 index of documents grouped by file.

    Results are ordered by score, then by corpus order: the file's sort key,
    then the document's position in its file.
    """

    def __init__(self) -> None:
        self._postings: dict[str, tuple[array[int], array[int]]] = {}
        """term -> (document ids, term frequencies), in insertion order."""
        self._df: dict[str, int] = {}
        """term -> number of live documents containing it."""
        self._length: array[int] = array("i")
        """document id -> token count; -1 once the document is removed."""
        self._terms: list[tuple[str, ...] | None] = []
        """document id -> its distinct terms (to update df on removal)."""
        self._items: list[T | None] = []
        """document id -> the caller's item (a chunk)."""
        self._order: list[tuple[FileKey, int] | None] = []
        """document id -> corpus order key."""
        self._files: dict[FileKey, list[int]] = {}
        """file key -> its live document ids."""
        self._live = 0
        self._total_length = 0
        self._dead_postings = 0
        self._live_postings = 0

    def __len__(self) -> int:
        return self._live

    def add_file(self, file_key: FileKey, docs: Iterable[tuple[str, T]]) -> None:
        """Index a file's documents (text to tokenize, item), replacing any before."""
        if file_key in self._files:
            self.remove_file(file_key)
        ids: list[int] = []
        for position, (text, item) in enumerate(docs):
            doc = len(self._length)
            counts = term_counts(text)
            length = sum(counts.values())
            for term, tf in counts.items():
                posting = self._postings.get(term)
                if posting is None:
                    posting = self._postings[term] = (array("i"), array("i"))
                    self._df[term] = 0
                posting[0].append(doc)
                posting[1].append(tf)
                self._df[term] += 1
            self._length.append(length)
            self._terms.append(tuple(counts))
            self._items.append(item)
            self._order.append((file_key, position))
            self._live += 1
            self._total_length += length
            self._live_postings += len(counts)
            ids.append(doc)
        self._files[file_key] = ids

    def remove_file(self, file_key: FileKey) -> None:
        """Drop a file's documents; scores become those of a build without it."""
        for doc in self._files.pop(file_key, ()):
            terms = self._terms[doc] or ()
            for term in terms:
                self._df[term] -= 1
            self._live -= 1
            self._total_length -= self._length[doc]
            self._length[doc] = -1
            self._terms[doc] = None
            self._items[doc] = None
            self._order[doc] = None
            self._live_postings -= len(terms)
            self._dead_postings += len(terms)
        if self._dead_postings > max(self._live_postings, 10_000):
            self._compact()

    def _compact(self) -> None:
        length = self._length
        for term, (docs, tfs) in list(self._postings.items()):
            if self._df[term] == 0:
                del self._postings[term]
                del self._df[term]
                continue
            if len(docs) == self._df[term]:
                continue
            keep = [i for i, doc in enumerate(docs) if length[doc] >= 0]
            self._postings[term] = (
                array("i", [docs[i] for i in keep]),
                array("i", [tfs[i] for i in keep]),
            )
        self._dead_postings = 0

    def scores(self, query: str) -> dict[int, float]:
        """BM25 score of every live document matching a query token."""
        scores: dict[int, float] = {}
        if not self._live:
            return scores
        n = self._live
        avgdl = self._total_length / n or 1.0
        base = K1 * (1 - B)
        scale = K1 * B / avgdl
        length = self._length
        get = scores.get
        for term in tokenize(query):
            df = self._df.get(term)
            if not df:
                continue
            weight = math.log(1 + (n - df + 0.5) / (df + 0.5)) * (K1 + 1)
            docs, tfs = self._postings[term]
            for doc, tf in zip(docs, tfs, strict=True):
                dl = length[doc]
                if dl >= 0:
                    scores[doc] = get(doc, 0.0) + weight * tf / (tf + base + scale * dl)
        return scores

    def search(self, query: str, top_k: int = 10) -> list[Hit[T]]:
        """The ``top_k`` best documents for a query, best first."""
        scores = self.scores(query)
        order = self._order
        best = heapq.nsmallest(top_k, scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
        return [Hit(score, self._item(doc)) for doc, score in best]

    def _item(self, doc: int) -> T:
        item = self._items[doc]
        assert item is not None
        return item

    def file_items(self, file_key: FileKey) -> Sequence[T]:
        """The live items of one file, in order."""
        return [self._item(doc) for doc in self._files.get(file_key, ())]
