"""Search results against a brute-force BM25: the same scores, bit for bit, and
the same order, whichever way the index finds its candidates."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.search import maxscore as ranking
from chunkls.search.inverted import BM25Index
from chunkls.search.postings import Segment, Snapshot
from chunkls.search.scorer import K1, B
from chunkls.search.tokens import tokenize

from .search_helpers import scores, search

Corpus = dict[str, list[str]]


def brute_force(corpus: Corpus, query: str, top_k: int) -> list[tuple[float, str]]:
    """The plain per-posting loop: every document, every query token in order."""
    docs = [
        (name, i, Counter(tokenize(text)))
        for name, texts in sorted(corpus.items())
        for i, text in enumerate(texts)
    ]
    n = len(docs)
    if not n:
        return []
    avgdl = sum(sum(c.values()) for _, _, c in docs) / n or 1.0
    df = Counter(token for _, _, c in docs for token in c)
    ranked = []
    for name, i, counts in docs:
        dl = sum(counts.values())
        score = 0.0
        matched = False
        for token in tokenize(query):
            tf = counts.get(token, 0)
            if not tf:
                continue
            weight = math.log(1 + (n - df[token] + 0.5) / (df[token] + 0.5)) * (K1 + 1)
            score += weight * tf / (tf + K1 * (1 - B) + K1 * B / avgdl * dl)
            matched = True
        if matched:
            ranked.append((-score, name, i))
    ranked.sort()
    return [(-score, f"{name}:{i}") for score, name, i in ranked[:top_k]]


def build(corpus: Corpus) -> BM25Index[str]:
    index: BM25Index[str] = BM25Index()
    for name, texts in corpus.items():
        index.add_file((0, name), [(text, f"{name}:{i}") for i, text in enumerate(texts)])
    return index


def found(index: BM25Index[str], query: str, top_k: int) -> list[tuple[float, str]]:
    return [(hit.score, hit.item) for hit in search(index, query, top_k)]


# a skewed vocabulary: a few words in most documents, many rare ones
COMMON = ["self", "def", "return", "value"]
RARE = [f"rare{i}" for i in range(40)]
MIDDLE = ["chunk_id", "HybridRetriever", "parse", "json", "lock", "thread"]


def skewed_corpus(rng: random.Random, files: int) -> Corpus:
    corpus: Corpus = {}
    for f in range(files):
        texts = []
        for _ in range(rng.randint(1, 6)):
            words = rng.choices(COMMON, k=rng.randint(0, 12))
            words += rng.choices(MIDDLE, k=rng.randint(0, 3))
            if rng.random() < 0.2:
                words += rng.choices(RARE, k=rng.randint(1, 2))
            rng.shuffle(words)
            texts.append(" ".join(words))
        corpus[f"m{f:03d}.py"] = texts
    return corpus


QUERIES = [
    "self",
    "self def",
    "rare3",
    "rare3 self return",
    "rare1 rare2 rare3 value value",
    "chunk_id self def return",
    "hybrid retriever self",
    "json parse lock thread value",
    "rare7 rare7",
    "nothing_here",
    "self self self rare0",
]

# each path: everything scored; bounds with the rare terms' documents scored only;
# bounds, then every document scored; no bounds at all
PATHS = [
    {},
    {"_SCORE_ALL_BELOW": 0},
    {"_SCORE_ALL_BELOW": 0, "_EXACT_UP_TO": 0},
    {"_SCORE_ALL_BELOW": 0, "_SEEDS": 0, "_TOPS": 2},
    {"_SCORE_ALL_BELOW": 10**9},
    {"_SCORE_ALL_BELOW": 0, "_SEEDS": 10**9, "_EXACT_UP_TO": 10**9},
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("top_k", [1, 3, 10, 1000])
def test_results_are_the_brute_force_ones(
    path: dict[str, int], top_k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in path.items():
        monkeypatch.setattr(ranking, name, value)
    corpus = skewed_corpus(random.Random(top_k), 120)
    index = build(corpus)
    for query in QUERIES:
        assert found(index, query, top_k) == brute_force(corpus, query, top_k), query
        assert found(index, query, top_k) == found(index, query, top_k)  # cached terms


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32),
    st.integers(1, 60),
    st.lists(st.sampled_from([*COMMON, *RARE[:6], *MIDDLE, "absent"]), max_size=6),
    st.integers(1, 25),
    st.sampled_from(PATHS),
)
def test_any_query_on_a_skewed_corpus(
    seed: int, files: int, words: list[str], top_k: int, path: dict[str, int]
) -> None:
    saved = {name: getattr(ranking, name) for name in path}
    try:
        for name, value in path.items():
            setattr(ranking, name, value)
        corpus = skewed_corpus(random.Random(seed), files)
        index = build(corpus)
        query = " ".join(words)
        assert found(index, query, top_k) == brute_force(corpus, query, top_k)
        # after removing files, the dead postings are skipped
        for name in list(corpus)[::3]:
            index.remove_file((0, name))
            del corpus[name]
        assert found(index, query, top_k) == brute_force(corpus, query, top_k)
    finally:
        for name, value in saved.items():
            setattr(ranking, name, value)


def test_ties_keep_corpus_order_when_candidates_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranking, "_SCORE_ALL_BELOW", 0)
    corpus = {f"t{i:02d}.py": ["rare0 self", "self def"] for i in range(30)}
    index = build(corpus)
    for top_k in (1, 5, 29, 30, 31):
        assert found(index, "rare0 self", top_k) == brute_force(corpus, "rare0 self", top_k)


def test_scores_map_is_the_brute_force_one() -> None:
    corpus = skewed_corpus(random.Random(9), 40)
    index = build(corpus)
    ids = [f"{name}:{i}" for name, texts in sorted(corpus.items()) for i in range(len(texts))]
    for query in QUERIES:
        expected = {item: score for score, item in brute_force(corpus, query, 10**6)}
        assert {ids[doc]: score for doc, score in scores(index, query).items()} == expected


def test_snapshots_with_documents_out_of_order_still_search_right() -> None:
    corpus = skewed_corpus(random.Random(4), 30)
    index = build(corpus)
    # files re-added out of name order: document ids no longer follow the names
    for name in sorted(corpus, reverse=True)[:10]:
        index.add_file((0, name), [(t, f"{name}:{i}") for i, t in enumerate(corpus[name])])
    snapshot = index.snapshot(sorted(index.file_keys()))
    loaded: BM25Index[str] = BM25Index()
    items = [f"{key[1]}:{i}" for key, count in snapshot.files for i in range(count)]
    loaded.load_snapshot(snapshot, items)
    for query in QUERIES:
        assert found(loaded, query, 10) == brute_force(corpus, query, 10)
    # a snapshot saved with each term's documents in another order (as an older
    # version wrote them) is put in order when loaded, into an empty index or not
    terms, docs, tfs = snapshot.segment.triples()
    order = np.lexsort((-docs, terms))
    shuffled = Snapshot(
        snapshot.files,
        snapshot.terms,
        Segment(snapshot.segment.offsets, docs[order], tfs[order]),
        snapshot.lengths,
    )
    for base in ({}, {"zz.py": ["rare0 self value"]}):
        target = build(base)
        target.load_snapshot(shuffled, items)
        expected = {**corpus, **base}
        for query in QUERIES:
            assert found(target, query, 10) == brute_force(expected, query, 10), query


@pytest.mark.parametrize("repeat", [3, 70_000])
def test_term_frequencies_past_16_bits_score_the_same(repeat: int) -> None:
    """Postings keep frequencies in 16 bits when they fit, in 32 otherwise: the
    scores are the brute-force ones either way, merged, snapshotted or not."""
    corpus = {
        "big.py": [" ".join(["value"] * repeat) + " parse", "value json"],
        "small.py": ["value lock", "parse thread value"],
    }
    index = build(corpus)
    index.compact()
    assert index._main.tfs.dtype == (np.uint16 if repeat < 0x10000 else np.int32)
    snapshot = index.snapshot(sorted(index.file_keys()))
    loaded: BM25Index[str] = BM25Index()
    loaded.load_snapshot(snapshot, [f"{k[1]}:{i}" for k, n in snapshot.files for i in range(n)])
    for query in ["value", "parse value", "json lock thread"]:
        expected = brute_force(corpus, query, 10)
        assert found(index, query, 10) == expected
        assert found(loaded, query, 10) == expected


def test_a_snapshot_of_both_segments_keeps_each_terms_documents_ascending() -> None:
    """A snapshot reads the main and the small segment as they are (nothing is
    merged for it): each term's documents come out ascending, and a snapshot of
    some files searches as those files alone."""
    corpus = skewed_corpus(random.Random(5), 30)
    names = sorted(corpus)
    index = build({name: corpus[name] for name in names[:20]})
    index.compact()  # these in the main segment
    for name in names[20:]:  # these in the small one
        index.add_file((0, name), [(t, f"{name}:{i}") for i, t in enumerate(corpus[name])])
    search(index, "self", 1)
    assert len(index._main.docs) and len(index._small.docs)
    for keys in (sorted(index.file_keys()), [(0, name) for name in names[15:25]]):
        snapshot = index.snapshot(keys)
        segment = snapshot.segment
        for term in range(len(segment.offsets) - 1):
            docs = segment.docs[segment.offsets[term] : segment.offsets[term + 1]]
            assert (np.diff(docs) > 0).all(), term
        loaded: BM25Index[str] = BM25Index()
        items = [f"{key[1]}:{i}" for key, count in snapshot.files for i in range(count)]
        loaded.load_snapshot(snapshot, items)
        subset = {key[1]: corpus[key[1]] for key in keys}
        for query in QUERIES:
            assert found(loaded, query, 10) == brute_force(subset, query, 10), query
    assert index._vocabulary.added, "a snapshot leaves the vocabulary as it is"


@pytest.mark.parametrize(
    ("terms", "docs"),
    [
        ([], []),
        ([7], [0]),
        ([3, 1, 3, 9, 1], [0, 1, 2, 2, 3]),
        ([40_000, 2, 40_000, 2, 5], [4, 4, 6, 7, 7]),
    ],
)
def test_a_sparse_segment_reads_as_a_dense_one(terms: list[int], docs: list[int]) -> None:
    """The small write segment keeps rows for its own terms only (its size
    follows its postings, not the vocabulary) and reads as the dense build."""
    vocabulary = 50_000
    term_ids = np.array(terms, dtype=np.int32)
    doc_ids = np.array(docs, dtype=np.int32)
    tfs = np.arange(1, len(terms) + 1, dtype=np.int32)
    dense = Segment.build(term_ids, doc_ids, tfs, vocabulary)
    sparse = Segment.build_sparse(term_ids, doc_ids, tfs)
    assert len(sparse.offsets) == len(set(terms)) + 1
    for term in sorted({*terms, 0, 4, 6, 39_999, 40_001, vocabulary + 3}):
        want_docs, want_tfs = dense.postings(term)
        got_docs, got_tfs = sparse.postings(term)
        assert got_docs.tolist() == want_docs.tolist(), term
        assert got_tfs.tolist() == want_tfs.tolist(), term
    assert [a.tolist() for a in sparse.triples()] == [a.tolist() for a in dense.triples()]
