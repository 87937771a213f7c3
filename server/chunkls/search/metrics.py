"""Retrieval figures, each the mean over queries at a cut-off ``k``: R@1 and R@k
(the share of the relevant IDs in the first 1 or ``k`` results), MRR@k (1 / the
rank of the first relevant one, 0 past ``k``) and nDCG@k (gains ``1 / log2(rank +
1)`` in the first ``k``, over the best possible).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import NamedTuple


class Figures(NamedTuple):
    """One ranking's figures over a set of queries."""

    queries: int
    recall_at_1: float
    recall_at_k: float
    mrr_at_k: float
    ndcg_at_k: float


def ranks(ranked: Sequence[str], relevant: Collection[str]) -> dict[str, int | None]:
    """Each relevant ID's 1-based rank in ``ranked`` (``None``: not there)."""
    first: dict[str, int] = {}
    for rank, chunk_id in enumerate(ranked, 1):
        first.setdefault(chunk_id, rank)
    return {chunk_id: first.get(chunk_id) for chunk_id in relevant}


def figures(results: Sequence[tuple[Sequence[str], Collection[str]]], k: int) -> Figures:
    """The mean figures of (ranked, relevant) pairs at cut-off ``k``."""
    r1 = rk = mrr = ndcg = 0.0
    for ranked, relevant in results:
        found = [rank for rank in ranks(ranked, relevant).values() if rank is not None]
        count = len(relevant) or 1
        r1 += sum(rank == 1 for rank in found) / count
        rk += sum(rank <= k for rank in found) / count
        best = min(found, default=None)
        mrr += 1 / best if best is not None and best <= k else 0.0
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
        gained = sum(1 / math.log2(rank + 1) for rank in found if rank <= k)
        ndcg += gained / ideal if ideal else 0.0
    n = len(results) or 1
    return Figures(len(results), r1 / n, rk / n, mrr / n, ndcg / n)
