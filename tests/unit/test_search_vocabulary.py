"""The vocabulary forgets the terms of removed files when segments merge."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.search import inverted as search
from chunkls.search import scorer
from chunkls.search.inverted import BM25Index
from chunkls.search.tokens import file_terms, tokenize
from chunkls.search.vocabulary import Vocabulary

from . import search_helpers
from .search_helpers import select_files

WORDS = ["alpha", "beta", "gamma", "chunk_id", "HybridRetriever", "x"]


def build(files: dict[str, list[str]]) -> BM25Index[str]:
    index: BM25Index[str] = BM25Index()
    for name, docs in sorted(files.items()):
        index.add_file((0, name), [(text, f"{name}:{i}") for i, text in enumerate(docs)])
    return index


def results(index: BM25Index[str], queries: list[str]) -> list[list[tuple[float, str]]]:
    return [
        [(h.score, h.item) for h in search_helpers.search(index, q, top_k=10_000)] for q in queries
    ]


def saved_docs(cycle: int) -> list[str]:
    """A file saved again with new identifiers, as in an editing session."""
    return [f"def f{cycle}_{i}():\n    return alpha + beta{i % 3}" for i in range(1 + cycle % 7)]


@pytest.mark.parametrize("budget", [scorer.CACHE_BUDGET, 0])
def test_save_cycles_keep_the_vocabulary_bounded_and_scores_exact(
    budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scorer, "CACHE_BUDGET", budget)  # 0: a term's scores push out the others'
    rng = random.Random(3)
    others = {f"o{i}.py": [" ".join(rng.choices(WORDS, k=5)) for _ in range(3)] for i in range(30)}
    index = build(others)
    sizes = []
    for cycle in range(600):
        docs = saved_docs(cycle)
        index.add_file((0, "saved.py"), [(t, f"saved.py:{i}") for i, t in enumerate(docs)])
        if cycle % 37 == 0:
            queries = [f"f{cycle}_0", "alpha beta0", "f3_0", "chunk"]
            assert results(index, queries) == results(build({**others, "saved.py": docs}), queries)
        sizes.append(len(index._vocabulary))
        if cycle == 300:
            index.compact()  # the vocabulary frozen in a table, new terms beside it
    # merges drop the old identifiers: the vocabulary does not grow with the saves
    assert max(sizes[300:]) <= max(sizes[:300])
    index.compact()
    fresh = build({**others, "saved.py": saved_docs(599)})
    assert len(index._vocabulary) == len(fresh._vocabulary)
    names = search_helpers.vocabulary_names(index._vocabulary)
    assert set(names) == set(search_helpers.vocabulary_names(fresh._vocabulary)) and len(
        set(names)
    ) == len(names)
    assert index._vocabulary.get_many(names) == list(range(len(names)))
    queries = ["f599_0 alpha", "beta1", "hybrid retriever x", "f598_0"]
    assert results(index, queries) == results(fresh, queries)


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "search", "compact"]),
        st.integers(0, 4),
        st.lists(st.lists(st.sampled_from([*WORDS, "u1", "u2", "v_w"]), max_size=4), max_size=3),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(_OPS, st.sampled_from([scorer.CACHE_BUDGET, 0]))
def test_compaction_in_any_sequence_keeps_fresh_scores(
    ops: list[tuple[str, int, list[list[str]]]], budget: int
) -> None:
    original = scorer.CACHE_BUDGET
    scorer.CACHE_BUDGET = budget  # 0: each term's scores push out the others'
    try:
        index: BM25Index[str] = BM25Index()
        state: dict[str, list[str]] = {}
        queries = ["alpha", "u1 beta", "v_w", "u2 u2 x", "hybrid"]
        for op, number, words in ops:
            name = f"f{number}"
            docs = [" ".join(w) for w in words]
            if op == "add":
                index.add_file((0, name), [(t, f"{name}:{i}") for i, t in enumerate(docs)])
                state[name] = docs
            elif op == "remove":
                index.remove_file((0, name))
                state.pop(name, None)
            elif op == "compact":
                index.compact()
                used = {t for docs in state.values() for d in docs for t in tokenize(d)}
                assert set(search_helpers.vocabulary_names(index._vocabulary)) == used
            else:
                search_helpers.search(index, " ".join(queries))
            assert results(index, queries) == results(build(state), queries)
    finally:
        scorer.CACHE_BUDGET = original


def test_snapshots_after_compaction_load_with_the_same_scores() -> None:
    rng = random.Random(5)
    files = {f"f{i}.py": [" ".join(rng.choices(WORDS, k=4)) for _ in range(2)] for i in range(20)}
    files["only.py"] = ["unique_word another_one"]
    index = build(files)
    index.remove_file((0, "only.py"))
    index.add_file((0, "f3.py"), [("fresh_term alpha", "f3.py:0")])
    files["f3.py"] = ["fresh_term alpha"]
    del files["only.py"]
    snapshot = index.snapshot(index.file_keys())
    assert "unique_word" not in snapshot.terms and "fresh_term" in snapshot.terms
    loaded: BM25Index[str] = BM25Index()
    items = [f"{key[1]}:{i}" for key, count in snapshot.files for i in range(count)]
    loaded.load_snapshot(snapshot, items)
    queries = ["alpha beta", "fresh_term", "unique_word", "chunk_id x"]
    assert results(loaded, queries) == results(build(files), queries)
    # a part of it keeps only its own terms
    part = select_files(snapshot, lambda key: key if key[1] in ("f3.py", "f4.py") else None)
    kept = {t for name in ("f3.py", "f4.py") for d in files[name] for t in tokenize(d)}
    assert set(part.terms) == kept and len(part.segment.offsets) == len(part.terms) + 1
    small: BM25Index[str] = BM25Index()
    small.load_snapshot(part, [f"{key[1]}:{i}" for key, count in part.files for i in range(count)])
    subset = {name: files[name] for name in ("f3.py", "f4.py")}
    assert results(small, queries) == results(build(subset), queries)
    # and loading it next to other files (term ids mapped, not adopted)
    small.add_file((0, "z.py"), [("alpha zeta", "z.py:0")])
    subset["z.py"] = ["alpha zeta"]
    assert results(small, [*queries, "zeta"]) == results(build(subset), [*queries, "zeta"])


@pytest.mark.parametrize("merge_between", [False, True])
def test_learned_term_ids_go_stale_when_a_merge_renumbers(merge_between: bool) -> None:
    """A bulk load learns its terms first and adds postings later with those ids;
    a merge in between (a query while the server indexes) drops the learned terms
    no posting uses yet and renumbers the others: the postings must not use the
    stale ids."""
    index: BM25Index[str] = BM25Index()
    index.add_file((0, "old"), [("alpha zeta", "old:0")])
    index.remove_file((0, "old"))  # "zeta" is used by nothing once merged
    bulk = {f"new{i}": [f"beta{i} alpha gamma", "HybridRetriever x"] for i in range(3)}
    terms = {name: file_terms(docs) for name, docs in bulk.items()}
    learned = {name: index.learn_terms(t) for name, t in terms.items()}
    generation = index._vocabulary.generation
    if merge_between:
        index._merge()
        assert index._vocabulary.generation != generation  # the ids were renumbered
    for name, docs in sorted(bulk.items()):
        items = [f"{name}:{i}" for i in range(len(docs))]
        index.add_file_terms((0, name), items, terms[name], learned[name])
    queries = ["alpha", "beta1 gamma", "hybrid retriever", "x zeta"]
    assert results(index, queries) == results(build(bulk), queries)


def test_learned_term_ids_of_a_replaced_vocabulary_are_not_used() -> None:
    """Generations are unique in the process: ids learned from a vocabulary that
    was since replaced (an empty index loading a snapshot makes a new one) are
    never taken for the new one's."""
    index: BM25Index[str] = BM25Index()
    terms = file_terms(["alpha beta"])
    learned = index.learn_terms(terms)
    index._vocabulary = search.Vocabulary()  # as ``load_snapshot`` replaces it
    index._vocabulary.ids(["zeta", "eta", "beta", "alpha"])  # other ids for the same terms
    index.add_file_terms((0, "f"), ["f:0"], terms, learned)
    assert results(index, ["alpha", "beta", "zeta"]) == results(
        build({"f": ["alpha beta"]}), ["alpha", "beta", "zeta"]
    )


def test_query_tokens_are_looked_up_again_once_a_file_adds_them() -> None:
    index = build({"a.py": ["alpha beta"]})
    assert results(index, ["zeta alpha"]) == [[(results(index, ["alpha"])[0][0][0], "a.py:0")]]
    index.add_file((0, "b.py"), [("zeta", "b.py:0")])  # zeta was asked for before it existed
    assert [item for _, item in results(index, ["zeta alpha"])[0]] == ["b.py:0", "a.py:0"]
    assert results(index, ["zeta alpha"]) == results(
        build({"a.py": ["alpha beta"], "b.py": ["zeta"]}), ["zeta alpha"]
    )


def test_remembered_query_tokens_follow_a_renumbered_vocabulary() -> None:
    files = {f"f{i}.py": [f"t{i} common"] for i in range(6)}
    index = build(files)
    queries = ["t5 common", "t4", "t0 t5"]
    assert results(index, queries) == results(build(files), queries)  # ids remembered
    for i in range(4):  # the terms t0-t3 go: the others are renumbered
        index.remove_file((0, f"f{i}.py"))
        del files[f"f{i}.py"]
    index.compact()
    assert results(index, queries) == results(build(files), queries)


def test_remembered_query_tokens_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "_QUERY_TERMS", 8)
    index = build({"a.py": [" ".join(f"w{i}" for i in range(40))]})
    for i in range(40):
        assert [h.item for h in search_helpers.search(index, f"w{i} w{(i + 1) % 40}")] == ["a.py:0"]
        assert len(index._query_ids) <= 8


def test_dropped_caches_give_the_same_results() -> None:
    index = build({"a.py": ["alpha beta", "beta"], "b.py": ["alpha x"]})
    queries = ["alpha beta", "x beta"]
    before = results(index, queries)
    assert index.scorer._kept and index._query_ids
    index.drop_caches()
    assert not index.scorer._kept and not index._query_ids
    assert results(index, queries) == before


def test_a_query_that_fills_the_remembered_tokens_keeps_all_its_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search, "_QUERY_TERMS", 3)
    files = {"a.py": ["alpha beta gamma", "alpha"], "b.py": ["beta x", "gamma x chunk_id"]}
    index = build(files)
    assert results(index, ["alpha"]) == results(build(files), ["alpha"])  # alpha remembered
    # alpha is known; beta, gamma and x are not, and overflow what is remembered
    queries = ["alpha beta gamma x"]
    assert results(index, queries) == results(build(files), queries)


def _ids_one_by_one(vocabulary: Vocabulary, terms: list[str]) -> list[int]:
    """``Vocabulary.ids`` as first written: each unknown term numbered as it comes."""
    ids = vocabulary.get_many(terms)
    for i, term_id in enumerate(ids):
        if term_id is None:
            found = vocabulary.added.get(terms[i])
            if found is None:
                found = vocabulary.added[terms[i]] = vocabulary.size
                vocabulary.size += 1
            ids[i] = found
    return [term_id for term_id in ids if term_id is not None]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([*WORDS, "u1", "\x02u1", "é", ""]), max_size=8), max_size=6),
    st.integers(0, 5),
)
def test_new_terms_are_numbered_as_they_come(batches: list[list[str]], freeze_at: int) -> None:
    """Repeats and known terms (frozen in the table or added since) keep one id."""
    fast, slow = Vocabulary(), Vocabulary()
    for number, terms in enumerate(batches):
        if number == freeze_at:
            fast.freeze()
            slow.freeze()
        assert fast.ids(terms).tolist() == _ids_one_by_one(slow, terms)
        assert fast.added == slow.added and len(fast) == len(slow)
