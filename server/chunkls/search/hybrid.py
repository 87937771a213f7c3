"""The hybrid ranking: BM25 over a question's content words (and their other
forms, at ``FORM_WEIGHT``), then the best candidates ranked again in blocks of
``CANDIDATES`` by their priors (``KIND_PRIOR``, ``TEST_PRIOR``, ``LENGTH``) plus
``SYMBOL`` times the IDF of each query word the definition's name has.

The figures are tuned on ``bench/retrieval.py``; see ``docs/search.md``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from chunkls.search.english import STOP_WORDS, other_forms, stem, strip_roles
from chunkls.search.scorer import PostingsSource, idf, in_order
from chunkls.search.tokens import tokenize

FORM_WEIGHT = 0.2
"""What another form of a query word counts for, against the word itself."""
CANDIDATES = 64
"""BM25's best chunks ranked again a block at a time, so that the first results do
not depend on how many are asked for (every front door shows the same order)."""
KIND_PRIOR = {"module": 0.5}
"""Score factors by chunk kind: module-level code is glue more often than answer."""
TEST_PRIOR = 0.8
"""The score factor of a chunk of a test file, unless the query names tests."""
TEST_WORDS = frozenset({"test", "tests", "testing"})
LENGTH = 0.15
"""A chunk's score is divided by ``1 + LENGTH * log1p(length / average)``."""
SYMBOL = 1.5
"""What a query word in the definition's name adds, times the word's IDF."""
MIN_INSIDE = 4
"""Letters a word's stem needs to match inside a name (``scan`` in ``scanstring``)."""
NAMES_KEPT = 1024
"""Names whose parts are kept between searches (a search scores 64 candidates a
block; more would only keep the names of a week of edits: new names every save)."""

_TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|testing)/|(?:^|/)(?:test_[^/]*|[^/]*_tests?\.py|conftest\.py)$"
)

Describe = Callable[[int], "tuple[str, str, str, str | None, int, int] | None"]
"""A document's chunk without its text (``None``: it has none now): chunk ID,
source path, file type, symbol, first and last line (a stored stub)."""


class HybridQuery(NamedTuple):
    """A query as the hybrid ranking reads it."""

    terms: tuple[str, ...]
    """Its content tokens, in order (repeats count again)."""
    forms: tuple[str, ...]
    """Other forms of its words, each once."""


@functools.lru_cache(maxsize=256)
def hybrid_query(query: str) -> HybridQuery:
    """The content words of a query and their other forms (no terms: it has
    only question and stop words)."""
    terms = [token for token in tokenize(strip_roles(query)) if token not in STOP_WORDS]
    distinct = dict.fromkeys(terms)
    forms: dict[str, None] = {}
    for term in distinct:
        if term.isalpha():
            forms.update((form, None) for form in other_forms(term) if form not in distinct)
    return HybridQuery(tuple(terms), tuple(forms))


def rank(
    source: PostingsSource,
    query: HybridQuery,
    top_k: int,
    describe: Describe,
    where: Callable[[str], bool] | None = None,
) -> list[tuple[int, float]]:
    """The ``top_k`` best (document, score) pairs, best first, ties in corpus
    order; ``where`` keeps the chunks whose ``source_path`` it accepts."""
    if top_k <= 0 or not query.terms or not source.live:
        return []
    tokens = query.terms + query.forms
    weights = [1.0] * len(query.terms) + [FORM_WEIGHT] * len(query.forms)
    depth = -(-top_k // CANDIDATES) * CANDIDATES  # whole blocks
    found = top_where(source, tokens, depth, describe, where, weights)
    candidates = [(doc, score, stub) for doc, score in found if (stub := describe(doc))]
    words = list(dict.fromkeys(query.terms))
    live = source.live
    idfs = {
        word: idf(live, df)
        for word, df in zip(words, source.scorer.document_frequencies(source, words), strict=True)
        if df
    }
    stems = {word: stem(word) for word in idfs}
    about_tests = not TEST_WORDS.isdisjoint(words)
    average = source.total_length / live or 1.0
    order = source.order_key
    ranked: list[tuple[int, float]] = []
    for start in range(0, len(candidates), CANDIDATES):
        block = []
        for doc, score, (chunk_id, source_path, _, symbol, _, _) in candidates[
            start : start + CANDIDATES
        ]:
            kind = chunk_id[len(source_path) + 1 :].split("-", 1)[0]
            score *= KIND_PRIOR.get(kind, 1.0)
            if not about_tests and _in_tests(source_path):
                score *= TEST_PRIOR
            score /= 1 + LENGTH * math.log1p(source.length(doc) / average)
            if symbol:
                score += SYMBOL * name_match(symbol, idfs, stems)
            block.append((doc, score))
        ranked += in_order(block, order)
    return ranked[:top_k]


def top_where(
    source: PostingsSource,
    tokens: Sequence[str],
    top_k: int,
    describe: Describe,
    where: Callable[[str], bool] | None,
    weights: Sequence[float] | None = None,
) -> list[tuple[int, float]]:
    """The scorer's ``top_k`` best (document, score) pairs among the chunks whose
    ``source_path`` ``where`` accepts (all of them: ``None``)."""
    if where is None:
        return source.scorer.top(source, tokens, top_k, weights)
    return [
        pair
        for pair in source.scorer.top(source, tokens, source.size, weights)
        if (stub := describe(pair[0])) is not None and where(stub[1])
    ][:top_k]


def name_match(symbol: str, idfs: dict[str, float], stems: dict[str, str]) -> float:
    """The summed IDF of the query words a definition's name has: as a part, as
    another form of a part, or (a stem of ``MIN_INSIDE`` letters) inside it."""
    parts, part_stems, lowered = _name_parts(symbol)
    return sum(
        weight
        for word, weight in idfs.items()
        if word in parts
        or (root := stems[word]) in part_stems
        or (len(root) >= MIN_INSIDE and root in lowered)
    )


@functools.lru_cache(maxsize=8192)
def _in_tests(source_path: str) -> bool:
    """Whether a file is a test's (in a ``tests`` folder, or named as pytest's are)."""
    return _TEST_PATH.search(source_path) is not None


@functools.lru_cache(maxsize=NAMES_KEPT)
def _name_parts(symbol: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """A name's parts, their stems (a few each: tuples, a fifth of sets' memory),
    and the name in lowercase."""
    name = symbol.rsplit(".", 1)[-1]
    parts = tuple(dict.fromkeys(tokenize(name)))
    return parts, tuple(dict.fromkeys(map(stem, parts))), name.lower()
