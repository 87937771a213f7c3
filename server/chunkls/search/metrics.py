"""Retrieval figures, each the mean over queries at a cut-off ``k``: R@1 and R@k
(the share of the relevant targets in the first 1 or ``k`` results), MRR@k (1 / the
rank of the first relevant one, 0 past ``k``) and nDCG@k (binary gains ``1 / log2(rank
+ 1)`` at each rank in the first ``k`` that holds a relevant target, over the best
possible for as many targets as the index can match).

A target is a chunk ID, or a file (a ``Span``: a path, and optionally its lines), as
semble's benchmark (MinishLab/semble, ``benchmarks/``) writes its gold: a chunk covers
a file target when its path matches (either path a ``/``-suffix of the other) and, if
the target has lines, its own lines overlap them. Its nDCG@k is this one: each
target's rank is the first result covering it; a rank covering two targets gains once;
the ideal counts every target some chunk of the index covers.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from typing import NamedTuple


class Figures(NamedTuple):
    """One ranking's figures over a set of queries."""

    queries: int
    recall_at_1: float
    recall_at_k: float
    mrr_at_k: float
    ndcg_at_k: float


class Span(NamedTuple):
    """A file target (semble's ``Target``): a path, and optionally lines (1-based,
    inclusive; both or neither)."""

    path: str
    start_line: int | None = None
    end_line: int | None = None

    def __str__(self) -> str:
        if self.start_line is None:
            return self.path
        return f"{self.path}:{self.start_line}-{self.end_line}"


Target = str | Span
"""A gold answer: a chunk ID, or a file (with lines or not)."""


class Place(NamedTuple):
    """Where a ranked chunk is: its ID, ``source_path`` and editor lines."""

    chunk_id: str
    source_path: str
    start_line: int
    end_line: int


def path_matches(source_path: str, path: str) -> bool:
    """Whether two paths name one file: equal, or either a ``/``-suffix of the other
    (a gold path may be relative to a checkout above the indexed root)."""
    mine = source_path.replace("\\", "/")
    theirs = path.replace("\\", "/")
    return mine == theirs or mine.endswith(f"/{theirs}") or theirs.endswith(f"/{mine}")


def covers(place: Place, target: Target) -> bool:
    """Whether a chunk answers a target (its ID; or its file and overlapping lines)."""
    if isinstance(target, str):
        return place.chunk_id == target
    if not path_matches(place.source_path, target.path):
        return False
    if target.start_line is None or target.end_line is None:
        return True
    return not (place.end_line < target.start_line or place.start_line > target.end_line)


def target_ranks(ranked: Sequence[Place], targets: Iterable[Target]) -> dict[Target, int | None]:
    """Each target's 1-based rank: the first chunk covering it (``None``: none does)."""
    return {
        target: next((r for r, place in enumerate(ranked, 1) if covers(place, target)), None)
        for target in targets
    }


def ranks(ranked: Sequence[str], relevant: Collection[str]) -> dict[str, int | None]:
    """Each relevant ID's 1-based rank in ``ranked`` (``None``: not there)."""
    first: dict[str, int] = {}
    for rank, chunk_id in enumerate(ranked, 1):
        first.setdefault(chunk_id, rank)
    return {chunk_id: first.get(chunk_id) for chunk_id in relevant}


def figures(results: Sequence[tuple[Sequence[str], Collection[str]]], k: int) -> Figures:
    """The mean figures of (ranked IDs, relevant IDs) pairs at cut-off ``k``."""
    return rank_figures([list(ranks(ranked, relevant).values()) for ranked, relevant in results], k)


def rank_figures(per_query: Sequence[Sequence[int | None]], k: int) -> Figures:
    """The mean figures at cut-off ``k`` of each query's targets' ranks (one per
    target the index can match; ``None``: not ranked). A query with no such target
    scores 0, as in semble's benchmark."""
    r1 = rk = mrr = ndcg = 0.0
    for got in per_query:
        found = [rank for rank in got if rank is not None]
        count = len(got) or 1
        r1 += sum(rank == 1 for rank in found) / count
        rk += sum(rank <= k for rank in found) / count
        best = min(found, default=None)
        mrr += 1 / best if best is not None and best <= k else 0.0
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(got), k)))
        gained = sum(1 / math.log2(rank + 1) for rank in set(found) if rank <= k)
        ndcg += gained / ideal if ideal else 0.0
    n = len(per_query) or 1
    return Figures(len(per_query), r1 / n, rk / n, mrr / n, ndcg / n)
