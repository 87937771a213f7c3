"""The fast tokenizer against the plain regex one: the same tokens, counts, rows."""

from __future__ import annotations

import multiprocessing
import re
from array import array
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.search import tokens
from chunkls.search.tokens import FileTerms, file_terms, tokenize

from .search_helpers import term_counts, token_counts

# -- the reference: the tokenizer as first written (regex words, per-word tokens) ------

_WORD = re.compile(r"\w+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def reference_word_tokens(word: str) -> tuple[str, ...]:
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


def reference_tokenize(text: str) -> list[str]:
    return [token for word in _WORD.findall(text) for token in reference_word_tokens(word)]


def reference_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word, n in Counter(_WORD.findall(text)).items():
        for token in reference_word_tokens(word):
            counts[token] = counts.get(token, 0) + n
    return counts


def reference_file_terms(texts: list[str]) -> FileTerms:
    local: dict[str, int] = {}
    term_index, positions, frequencies, lengths = array("i"), array("i"), array("i"), array("i")
    for position, text in enumerate(texts):
        counts = reference_counts(text)
        lengths.append(sum(counts.values()))
        indexes = [local.setdefault(term, len(local)) for term in counts]
        term_index.extend(indexes)
        positions.extend([position] * len(indexes))
        frequencies.extend(counts.values())
    rows = term_index.tobytes() + positions.tobytes() + frequencies.tobytes()
    return FileTerms(tuple(local), rows, lengths.tobytes())


# -- texts that stress the fast paths ---------------------------------------------------

PIECES = [
    "chunk_id",
    "HybridRetriever",
    "HTTPServer",
    "getHTTPResponse2",
    "__init__",
    "_private",
    "a__b",
    "x1_y2",
    "utf8",
    "UTF8Codec",
    "ABC",
    "abc",
    "42",
    "0x1F",
    "1e10",
    "___",
    "_",
    "snake_camelCase",
    "Ärger_über",
    "naïveValue",
    "café",
    "ǅungla",
    "İstanbul",
    "ß",
    "ﬁne",
    "x²",
    "٣٤",
    "日本語_テキスト",
    "a" * 300,
    "Ab" * 150,
    "_".join(["part"] * 60),
]
SEPARATORS = [" ", "\n", "\t", ".", "(", ")", "#", "-", "/", ":", "\u00a0", "\u2028", "  ", ""]

words = st.one_of(
    st.sampled_from(PIECES),
    st.from_regex(r"[A-Za-z0-9_]{1,12}", fullmatch=True),
    st.text(max_size=6),
)
texts = st.lists(st.tuples(words, st.sampled_from(SEPARATORS)), max_size=30).map(
    lambda pairs: "".join(word + separator for word, separator in pairs)
)


@pytest.mark.parametrize("text", ["", " ", "___", *PIECES, " ".join(PIECES), "\n".join(PIECES)])
def test_known_words_tokenize_as_the_regex_does(text: str) -> None:
    assert tokenize(text) == reference_tokenize(text)
    assert term_counts(text) == Counter(reference_tokenize(text))
    assert list(token_counts(text).items()) == list(reference_counts(text).items())


@settings(max_examples=300, deadline=None)
@given(texts)
def test_any_text_tokenizes_as_the_regex_does(text: str) -> None:
    assert tokenize(text) == reference_tokenize(text)
    assert list(token_counts(text).items()) == list(reference_counts(text).items())


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_unicode_text_tokenizes_as_the_regex_does(text: str) -> None:
    assert tokenize(text) == reference_tokenize(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, max_size=40))
def test_file_terms_are_those_of_the_regex_byte_for_byte(docs: list[str]) -> None:
    # both ways of counting (per document and with numpy) give the same bytes
    assert file_terms(docs) == reference_file_terms(docs)


@pytest.mark.parametrize("numpy_from", [0, 1, 10**9])
def test_both_ways_of_counting_agree(numpy_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_NUMPY_FROM", numpy_from)
    docs = [
        "",
        "def chunk_python(path):\n    return chunk_python(path) + chunkPython",
        "___ 42 42 x1_y2 X1Y2",
        "",
        "café naïveValue Ärger_über chunk",
        " ".join(PIECES) * 3,
    ]
    assert file_terms(docs) == reference_file_terms(docs)
    assert file_terms([]) == reference_file_terms([])
    assert file_terms(["", "..."]) == reference_file_terms(["", "..."])
    rows = np.frombuffer(file_terms(docs).rows, dtype=np.int32).reshape(3, -1)
    assert rows.shape[1] > 0 and set(rows[1].tolist()) == {1, 2, 4, 5}


@pytest.mark.parametrize("worker", [False, True])
def test_the_word_cache_stays_bounded_and_exact(
    worker: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a long-lived process keeps fewer words than a worker process does
    monkeypatch.setattr(tokens, "_CACHED_WORDS", 64 if not worker else 10**9)
    monkeypatch.setattr(tokens, "_CACHED_WORDS_BULK", 64 if worker else 10**9)
    # (a worker has multiprocessing imported; ``tokens`` asks it only then)
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object() if worker else None)
    monkeypatch.setattr(tokens, "_word_cache", tokens._WordTokens())
    for cycle in range(300):
        docs = [f"def f{cycle}_{i}():\n    return g{cycle}Value{i}" for i in range(5)]
        assert file_terms(docs) == reference_file_terms(docs)
        assert tokenize(docs[0]) == reference_tokenize(docs[0])
        cache = tokens._word_cache
        assert len(cache) + len(cache.elder) <= 2 * (64 + 40)
        assert not getattr(cache.elder, "elder", {})  # one generation back at most
