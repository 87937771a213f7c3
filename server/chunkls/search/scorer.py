"""The one BM25 scorer: the tutorial's Okapi BM25 over any source of postings, each token's
scores added in query order. Its ``Kernel``: numpy (``maxscore``), or Python ints for a cache
read in place (``LIST_KERNEL``: a CLI query imports no numpy); the same floats either way."""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

K1 = 1.5
"""Term-frequency saturation."""
B = 0.75
"""Length normalisation."""

T = TypeVar("T", covariant=True)

CACHE_BUDGET = 2_000_000
"""Most postings whose scores a scorer keeps between queries (about 12 bytes each)."""
ENTRY_COST = 32
"""What a kept term costs beyond its postings, counted in postings (~400 bytes)."""


Part = tuple[tuple[int, int], str | None]
"""A hit's ``lines`` and ``part`` (the definition they are; ``None``: a window, or all)."""


class Hit(NamedTuple, Generic[T]):
    """One search result."""

    score: float
    item: T
    lines: tuple[int, int] | None = None
    """The lines (1-based, inclusive) of the part of the chunk that answers best:
    a definition inside it, a window of a long one, or the whole chunk's lines."""
    part: str | None = None
    """The name of the definition inside the chunk that ``lines`` are, if they are one."""


def idf(documents: int, df: int) -> float:
    """A term's inverse document frequency among ``documents``."""
    return math.log(1 + (documents - df + 0.5) / (df + 0.5))


def term_score(weight: Any, tf: Any, length: Any, base: float, scale: float) -> Any:
    """A term's BM25 score: numbers, or numpy arrays of them (the same operations)."""
    return weight * tf / (tf + base + scale * length)


class TermScores(Protocol):
    """One query term: its documents (ascending), its score in each, and the best."""

    @property
    def docs(self) -> Any: ...

    @property
    def scores(self) -> Any: ...

    @property
    def best(self) -> float: ...


class Kernel(Protocol):
    """The array operations of one kind of postings (numpy arrays, Python lists)."""

    def term(self, weight: float, postings: Postings, base: float, scale: float) -> TermScores:
        """A term's scores in its documents (with ``term_score``)."""

    def candidates(self, terms: Sequence[Any], top_k: int, size: int) -> tuple[Any, Any]:
        """Documents (in any order) with their exact scores (term scores added in
        query order), every one that can be among the ``top_k`` best (``size``: doc ids)."""

    def best(self, docs: Any, scores: Any, top_k: int) -> list[tuple[int, float]]:
        """The pairs scoring at least the ``top_k``-th best (ties included), in any order."""


class Postings(NamedTuple):
    """A token's live documents (ascending), its frequency in each, and their lengths."""

    docs: Any
    tfs: Any
    lengths: Any


class PostingsSource(Protocol):
    """Where the scorer reads postings (an in-memory index, a cache read in place)."""

    @property
    def kernel(self) -> Kernel:
        """The operations on its arrays."""

    @property
    def scorer(self) -> Scorer:
        """The scorer over it (which keeps term scores between queries)."""

    @property
    def version(self) -> int:
        """Changes whenever a document is added or removed (kept scores are stale)."""

    @property
    def live(self) -> int:
        """Documents that can be found."""

    @property
    def total_length(self) -> int:
        """Tokens in all of them."""

    @property
    def size(self) -> int:
        """Document ids handed out (live or not)."""

    def postings(self, tokens: Sequence[str]) -> list[Postings | None]:
        """Each token's postings (``None``: no live document has it)."""

    def terms_starting(self, prefix: str, limit: int) -> list[str]:
        """The first ``limit`` terms that start with ``prefix``, sorted by UTF-8."""

    def order_key(self, doc: int) -> Any:
        """A document's place in corpus order (ties are ranked by it)."""

    def length(self, doc: int) -> int:
        """A document's length in tokens."""


def in_order(
    pairs: list[tuple[int, float]], order_key: Callable[[int], Any]
) -> list[tuple[int, float]]:
    """Pairs best first, ties in corpus order (``order_key`` asked only on ties)."""
    pairs.sort(key=lambda pair: -pair[1])
    if len({score for _, score in pairs}) < len(pairs):
        pairs.sort(key=lambda pair: (-pair[1], order_key(pair[0])))
    return pairs


class Scorer:
    """BM25 over one postings source, each term's scores kept until it changes."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, float], TermScores | None] = {}
        self._kept_postings = 0
        self._kept_version = -1

    def forget(self) -> None:
        """Drop the kept scores (the next query computes them again)."""
        self._kept.clear()
        self._kept_postings = 0

    def terms(
        self,
        source: PostingsSource,
        tokens: Sequence[str],
        weights: Sequence[float] | None = None,
    ) -> list[TermScores]:
        """The scores of the query's tokens that match, one per token (repeats
        included); a token's ``weights`` (default 1) scales its term weight."""
        keys = list(zip(tokens, weights or [1.0] * len(tokens), strict=True))
        found = self._scored(source, keys)
        return [entry for key in keys if (entry := found.get(key)) is not None]

    def document_frequencies(self, source: PostingsSource, tokens: Sequence[str]) -> list[int]:
        """How many documents have each token (its scores are kept)."""
        found = self._scored(source, [(token, 1.0) for token in tokens])
        return [len(entry.docs) if (entry := found.get((t, 1.0))) else 0 for t in tokens]

    def _scored(
        self, source: PostingsSource, keys: Sequence[tuple[str, float]]
    ) -> dict[tuple[str, float], TermScores | None]:
        """Each (token, weight)'s scores, kept or computed now."""
        if self._kept_version != source.version:
            self.forget()
            self._kept_version = source.version
        live = source.live
        if not live:
            return {}
        kept = self._kept
        found = {key: kept[key] for key in keys if key in kept}
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing:
            # ``term_score``'s for documents of this average length
            base, scale = K1 * (1 - B), K1 * B / (source.total_length / live or 1.0)
            every = source.postings([token for token, _ in missing])
            for key, postings in zip(missing, every, strict=True):
                entry = None
                if postings is not None and len(postings.docs):
                    weight = idf(live, len(postings.docs)) * (K1 + 1) * key[1]
                    entry = source.kernel.term(weight, postings, base, scale)
                    cost = len(postings.docs) + ENTRY_COST
                    self._kept_postings += cost
                    if self._kept_postings > CACHE_BUDGET:
                        kept.clear()
                        self._kept_postings = cost
                kept[key] = found[key] = entry
        return found

    def top(
        self,
        source: PostingsSource,
        tokens: Sequence[str],
        top_k: int,
        weights: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``top_k`` best (document, score) pairs, best first, ties in corpus order."""
        if top_k <= 0:
            return []
        terms = self.terms(source, tokens, weights)
        if not terms:
            return []
        docs, scores = source.kernel.candidates(terms, top_k, source.size)
        return in_order(source.kernel.best(docs, scores, top_k), source.order_key)[:top_k]


class _ListTerm:
    """A term's postings in Python sequences, scored when asked (``candidates``: one pass)."""

    __slots__ = ("_scores", "docs", "factors", "lengths", "tfs")

    def __init__(self, postings: Postings, factors: tuple[float, float, float]) -> None:
        self.docs: Sequence[int] = postings.docs
        self.tfs: Sequence[int] = postings.tfs
        self.lengths: Sequence[int] = postings.lengths
        self.factors = factors
        """``term_score``'s weight, base and scale."""
        self._scores: list[float] | None = None

    @property
    def scores(self) -> list[float]:
        if self._scores is None:
            weight, base, scale = self.factors
            self._scores = [
                term_score(weight, tf, length, base, scale)
                for tf, length in zip(self.tfs, self.lengths, strict=True)
            ]
        return self._scores

    @property
    def best(self) -> float:
        return max(self.scores)


class ListKernel:
    """Postings as ``array``s of ints: every matching document is added up."""

    def term(self, weight: float, postings: Postings, base: float, scale: float) -> TermScores:
        return _ListTerm(postings, (weight, base, scale))

    def candidates(self, terms: Sequence[Any], top_k: int, size: int) -> tuple[Any, Any]:
        sums: dict[int, float] = {}
        get = sums.get
        for entry in terms:  # in query order; the first's scores as they are (0.0 + s is s)
            # ``term_score``, written out: a call per posting costs more than its sum
            weight, base, scale = entry.factors
            for doc, tf, length in zip(entry.docs, entry.tfs, entry.lengths, strict=True):
                sums[doc] = get(doc, 0.0) + weight * tf / (tf + base + scale * length)
        return list(sums), list(sums.values())

    def best(self, docs: Any, scores: Any, top_k: int) -> list[tuple[int, float]]:
        if not scores:
            return []
        kth = heapq.nlargest(top_k, scores)[-1]
        return [(doc, score) for doc, score in zip(docs, scores, strict=True) if score >= kth]


LIST_KERNEL = ListKernel()


def prefix_key(term: bytes) -> int:
    """A term's first eight bytes, NUL-padded, big-endian (sorted as the terms are)."""
    return int.from_bytes(term[:8].ljust(8, b"\0"), "big")


def rank_among(term: bytes, low: int, high: int, term_at: Callable[[int], bytes]) -> int:
    """Where a term is or would go in a sorted table, given the ranks ``low``-``high`` of
    those sharing its ``prefix_key`` (the one term lookup, loaded or read in place)."""
    if high - low > 1:  # eight bytes or longer, sharing their first eight
        return bisect.bisect_left(range(low, high), term, key=term_at) + low
    return high if low < high and term_at(low) < term else low
