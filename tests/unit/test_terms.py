"""The compact vocabulary: a sorted term table plus the terms added since,
checked against a plain dict."""

from __future__ import annotations

import bisect
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.search.vocabulary import EMPTY_TABLE, TermTable, Vocabulary

from .search_helpers import find, term_table, vocabulary_names

# short terms, terms sharing eight-byte prefixes, non-ASCII ones (multi-byte UTF-8,
# and lead bytes >= 0x80 whose prefix keys need all 64 bits)
_TERMS = st.one_of(
    st.text("abc_", min_size=1, max_size=4),
    st.builds(lambda tail: "abcdefgh" + tail, st.text("ab", max_size=3)),
    st.sampled_from(["abcdefg", "abcdefgh", "abcdefgi", "z" * 30, "é", "éa", "日本語", "ÿ", "0"]),
)


def _table(terms: set[str]) -> TermTable:
    return term_table((term, n) for n, term in enumerate(sorted(terms)))


@settings(max_examples=200, deadline=None)
@given(st.sets(_TERMS, max_size=40), st.lists(_TERMS, max_size=20))
def test_lookups_find_exactly_the_terms(terms: set[str], probes: list[str]) -> None:
    ids = {term: n for n, term in enumerate(sorted(terms, key=str.encode))}
    table = term_table(ids.items())
    ordered = sorted(term.encode() for term in terms)
    assert [term.encode() for term in table] == ordered
    assert len(table) == len(terms)
    assert table.find_many([*terms, *probes]) == [ids.get(t, -1) for t in [*terms, *probes]]
    for term in [*terms, *probes]:
        assert find(table, term) == ids.get(term, -1)
        assert table.ranks([term.encode()]) == [bisect.bisect_left(ordered, term.encode())]
    assert table.names() == sorted(terms, key=str.encode)


@settings(max_examples=150, deadline=None)
@given(st.sets(_TERMS, max_size=40), st.sets(_TERMS, max_size=40), st.randoms())
def test_merging_and_selecting_keep_each_term_with_its_id(
    old: set[str], new: set[str], rng: random.Random
) -> None:
    table = term_table((term, n) for n, term in enumerate(sorted(old)))
    added = {term: len(old) + n for n, term in enumerate(sorted(new - old))}
    merged = table.merged(added)
    expected = {**{term: n for n, term in enumerate(sorted(old))}, **added}
    assert {term: find(merged, term) for term in expected} == expected
    assert [t.encode() for t in merged] == sorted(t.encode() for t in expected)
    # drop some ids, renumber the rest in order
    keep = np.array([rng.random() < 0.5 for _ in range(len(expected))], dtype=bool)
    renumber = np.full(len(expected), -1, dtype=np.int32)
    renumber[keep] = np.arange(int(keep.sum()), dtype=np.int32)
    selected = merged.select(renumber)
    kept = {term: int(renumber[n]) for term, n in expected.items() if keep[n]}
    assert {term: find(selected, term) for term in expected} == {
        term: kept.get(term, -1) for term in expected
    }


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "freeze", "keep"]), st.lists(_TERMS, max_size=8)),
        max_size=25,
    )
)
def test_a_vocabulary_behaves_as_a_dict(steps: list[tuple[str, list[str]]]) -> None:
    vocabulary = Vocabulary()
    reference: dict[str, int] = {}
    for op, words in steps:
        if op == "add":
            ids = vocabulary.ids(words).tolist()
            assert ids == [reference.setdefault(term, len(reference)) for term in words]
        elif op == "freeze":
            vocabulary.freeze()
            assert not vocabulary.added
        else:  # keep the terms not named
            used = np.ones(len(reference), dtype=bool)
            for term in words:
                if term in reference:
                    used[reference[term]] = False
            renumber = vocabulary.keep(used)
            names = [term for term, n in sorted(reference.items(), key=lambda p: p[1])]
            reference = {
                term: new for new, term in enumerate(t for t in names if used[reference[t]])
            }
            if renumber is not None:
                assert renumber.tolist() == [reference.get(term, -1) for term in names]
        assert len(vocabulary) == len(reference)
        assert vocabulary_names(vocabulary) == sorted(reference, key=reference.__getitem__)
        for term in [*reference, *words, "never"]:
            assert vocabulary.get_many([term])[0] == reference.get(term)


def test_a_table_rejects_ids_that_do_not_fit() -> None:
    with pytest.raises(ValueError, match="2 terms with 1 ids"):
        TermTable(b"a\0b\0", np.zeros(1, dtype=np.int32))
    with pytest.raises(ValueError):
        TermTable(b"a\0b", np.zeros(1, dtype=np.int32))  # not NUL-terminated
    assert len(EMPTY_TABLE) == 0 and find(EMPTY_TABLE, "a") == -1 and list(EMPTY_TABLE) == []


def test_a_large_merge_and_a_small_one() -> None:
    base = _table({f"t{n:05d}" for n in range(0, 2000, 2)})
    few = {f"t{n:05d}": 1000 + i for i, n in enumerate(range(1, 41, 2))}
    many = {f"t{n:05d}": 1000 + i for i, n in enumerate(range(1, 2000, 2))}
    for added in (few, many):
        merged = base.merged(added)
        assert all(find(merged, term) == n for term, n in added.items())
        assert find(merged, "t00000") == 0 and find(merged, "t01998") == 999
        assert list(merged) == sorted(merged)
