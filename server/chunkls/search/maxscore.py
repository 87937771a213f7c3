"""The scorer's numpy kernel: the documents that can be among the best (MaxScore), with
exact scores (the same additions, in the same order, as ``dense``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from chunkls.search.scorer import Postings, term_score

_SCORE_ALL_BELOW = 1_000
"""Postings of a query's terms under which every matching document is scored."""
_SEEDS = 1_000
"""Most postings of the rarest query terms scored first, for a bound on the results."""
_EXACT_UP_TO = 2_000
"""Most postings of the terms that can lift a document into the results for scoring
only their documents; beyond, every document is scored."""
_MARGIN = 1 + 1e-9
"""Room for rounding when bound scores are compared (sums of a few positive floats)."""
_TOPS = 64
"""Best scores kept per common term (the bound for results up to this many)."""


class TermScores:
    """One query term: its live documents (ascending) and its BM25 score in each."""

    __slots__ = ("best", "docs", "scores", "tops")

    def __init__(self, docs: npt.NDArray[np.int32], scores: npt.NDArray[np.float64]) -> None:
        self.docs = docs
        self.scores = scores
        self.best = float(scores.max())
        self.tops: npt.NDArray[np.float64] | None = None
        """The ``_TOPS`` best scores, best first (once asked for)."""

    def kth_best(self, k: int) -> float:
        """The k-th best score (``k`` at most the number of documents)."""
        scores = self.scores
        if k > _TOPS:
            return float(np.partition(scores, len(scores) - k)[len(scores) - k])
        if self.tops is None:
            cut = max(len(scores) - _TOPS, 0)
            self.tops = np.sort(np.partition(scores, cut)[cut:])[::-1]
        return float(self.tops[k - 1])


def _union(arrays: Sequence[npt.NDArray[np.int32]]) -> npt.NDArray[np.int32]:
    """The ascending distinct values of some arrays."""
    if len(arrays) == 1:
        return arrays[0]
    merged = np.sort(np.concatenate(arrays))
    if len(merged) < 2:
        return merged
    keep = np.empty(len(merged), dtype=bool)
    keep[0] = True
    np.not_equal(merged[1:], merged[:-1], out=keep[1:])
    return merged[keep]


def dense(terms: Sequence[TermScores], size: int) -> npt.NDArray[np.float64]:
    """Scores by document id: each document's term scores added in query order."""
    scores = np.zeros(size, dtype=np.float64)
    first = terms[0]
    scores[first.docs] = first.scores  # 0.0 + score, exactly
    for entry in terms[1:]:
        scores[entry.docs] += entry.scores
    return scores


def exact(terms: Sequence[TermScores], docs: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """The scores of some documents (ascending ids), bit for bit those of ``dense``."""
    scores = np.zeros(len(docs), dtype=np.float64)
    for entry in terms:
        where = np.searchsorted(entry.docs, docs)
        np.minimum(where, len(entry.docs) - 1, out=where)
        has = entry.docs[where] == docs
        scores[has] += entry.scores[where[has]]
    return scores


def candidates(
    terms: Sequence[TermScores], top_k: int, size: int
) -> tuple[npt.NDArray[Any], npt.NDArray[np.float64]]:
    """``Kernel.candidates``: a lower bound on the ``top_k``-th best score (from
    the terms' best scores and the rarest terms' documents) leaves out the terms
    that cannot lift a document to it alone; only documents with one of the
    others are scored, unless they are many (then every document is)."""
    distinct = list({id(entry): entry for entry in terms}.values())
    total = sum(len(entry.docs) for entry in distinct)
    if total <= _SCORE_ALL_BELOW:
        docs = _union([entry.docs for entry in distinct])
        return docs, exact(terms, docs)
    # a document has at least its best term score: the top_k-th best of one term's
    floor = 0.0
    for entry in distinct:
        if len(entry.docs) >= top_k:
            floor = max(floor, entry.kth_best(top_k))
    # and the top_k-th best exact score among the rarest terms' documents
    rarest = sorted(distinct, key=lambda entry: len(entry.docs))
    seeds: list[npt.NDArray[np.int32]] = []
    held = 0
    for entry in rarest:
        if held + len(entry.docs) > _SEEDS:
            break
        seeds.append(entry.docs)
        held += len(entry.docs)
    if seeds:
        seed_docs = _union(seeds)
        if len(seed_docs) >= top_k:
            seed_scores = exact(terms, seed_docs)
            kth = np.partition(seed_scores, len(seed_scores) - top_k)[len(seed_scores) - top_k]
            floor = max(floor, float(kth))
    # terms whose best scores, all added up, stay under the floor: a document
    # needs one of the others to reach it
    bound = {id(entry): 0.0 for entry in distinct}
    for entry in terms:
        bound[id(entry)] += entry.best
    essential: list[TermScores] = []
    spare = 0.0
    for entry in sorted(distinct, key=lambda entry: bound[id(entry)]):
        if not essential and (spare + bound[id(entry)]) * _MARGIN < floor:
            spare += bound[id(entry)]
        else:
            essential.append(entry)
    if sum(len(entry.docs) for entry in essential) <= _EXACT_UP_TO:
        docs = _union([entry.docs for entry in essential])
        return docs, exact(terms, docs)
    scores = dense(terms, size)
    reached = np.flatnonzero(scores >= floor if floor > 0 else scores != 0)
    return reached, scores[reached]


class NumpyKernel:
    """The ``chunkls.search.scorer.Kernel`` of numpy postings."""

    def term(self, weight: float, postings: Postings, base: float, scale: float) -> TermScores:
        tfs = postings.tfs.astype(np.float64)
        return TermScores(postings.docs, term_score(weight, tfs, postings.lengths, base, scale))

    candidates = staticmethod(candidates)

    def best(self, docs: Any, scores: Any, top_k: int) -> list[tuple[int, float]]:
        if len(docs) > top_k:
            kth = np.partition(scores, len(scores) - top_k)[len(scores) - top_k]
            tied = scores >= kth  # everything that can rank, ties included
            docs, scores = docs[tied], scores[tied]
        return list(zip(docs.tolist(), scores.tolist(), strict=True))


NUMPY_KERNEL = NumpyKernel()
