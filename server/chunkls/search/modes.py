"""The search modes (``hybrid``, the default; ``bm25``: the tutorial's, exactly) and
``rank``, through which every front door ranks: one query, one order everywhere."""

from __future__ import annotations

from collections.abc import Callable

from chunkls.search import MODES, hybrid
from chunkls.search.scorer import PostingsSource
from chunkls.search.tokens import tokenize


def mode_problem(mode: str) -> str | None:
    """What is wrong with a mode's name, if anything."""
    if mode in MODES:
        return None
    return f"unknown search mode {mode!r} (modes: {', '.join(MODES)})"


def query_problem(query: str, mode: str) -> str | None:
    """Why a query cannot be searched in a mode, if it cannot: no letters or
    digits, or (``hybrid``) nothing but question and stop words."""
    if not tokenize(query):
        return f"the query has no searchable terms (no letters or digits): {query!r}"
    if mode == "hybrid" and not hybrid.hybrid_query(query).terms:
        return (
            "the query has no searchable terms (only question and stop words, "
            f"such as 'how', 'does', 'the'): {query!r}"
        )
    return None


def rank(
    source: PostingsSource,
    query: str,
    top_k: int,
    mode: str,
    describe: hybrid.Describe,
    where: Callable[[str], bool] | None = None,
) -> list[tuple[int, float]]:
    """The ``top_k`` best (document, score) pairs, best first, ties in corpus order, one per
    chunk ID of a folder; ``where`` keeps the chunks whose ``source_path`` it accepts."""
    if mode == "hybrid":
        return hybrid.rank(source, hybrid.hybrid_query(query), top_k, describe, where)
    if mode != "bm25":
        raise ValueError(mode_problem(mode))
    tokens = tokenize(query)
    depth = top_k
    while True:  # overloads share an ID: one result each (the first, best)
        found = hybrid.top_where(source, tokens, depth, describe, where)
        seen: set[tuple[object, str]] = set()
        kept = []
        for doc, score in found:
            stub = describe(doc)
            key = (source.order_key(doc)[0][0], stub[0] if stub else "")
            if key not in seen:
                seen.add(key)
                kept.append((doc, score))
        if len(kept) >= top_k or len(found) < depth:
            return kept[:top_k]
        depth *= 2


def query_words(query: str, mode: str) -> tuple[str, ...]:
    """The words a best part is chosen by: ``hybrid``'s content words, ``bm25``'s tokens."""
    if mode == "hybrid":
        return hybrid.hybrid_query(query).terms
    return tuple(tokenize(query))
