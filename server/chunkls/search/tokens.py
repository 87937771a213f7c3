"""The code-aware tokenizer (``tokenize``), and one file's documents as term counts
(``file_terms``: what ``BM25Index`` stores, worker processes compute and the cache keeps).
"""

from __future__ import annotations

import collections
import itertools
import re
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from typing import Any, NamedTuple

_WORD = re.compile(r"\w+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_WORD_BYTES = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
_SPACE_OUT = bytes(byte if byte in _WORD_BYTES else 32 for byte in range(256))
"""``bytes.translate`` table: word bytes kept, others a space (in ASCII text ``\\w+``
matches exactly the runs of word bytes)."""
_SNAKE = b"_abcdefghijklmnopqrstuvwxyz"

count_elements: Callable[[dict[Any, int], Iterable[Any]], None] = getattr(
    collections, "_count_elements", None
) or (lambda counts, items: counts.update(Counter(items)))
"""Counts items into an empty dict, at C speed (CPython's helper of ``Counter``)."""


def _word_tokens(word: str) -> tuple[str, ...]:
    """Tokens for one ``\\w+`` word: its parts, plus the whole identifier."""
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


def _ascii_word_tokens(word: bytes) -> tuple[str, ...]:
    """``_word_tokens`` of an ASCII word (``[A-Za-z0-9_]+``), given as bytes."""
    text = word.decode("ascii")
    if not word.translate(None, _SNAKE):  # lowercase letters and underscores only
        if "_" not in text:
            return (text,)
        pieces = [piece for piece in text.split("_") if piece]
        if len(pieces) < 2:
            return tuple(pieces)
        return ("_".join(pieces), *pieces)
    if text.isdigit():
        return (text,)
    # camel-case parts never span an underscore, so the whole word splits as its pieces do
    parts = _CAMEL_PART.findall(text)
    if len(parts) < 2:
        return (parts[0].lower(),) if parts else ()
    whole = text.strip("_")
    if "__" in whole:
        whole = "_".join([piece for piece in whole.split("_") if piece])
    return (whole.lower(), *[part.lower() for part in parts])


class _WordTokens(dict[bytes, tuple[str, ...]]):
    """word -> tokens, for the words seen lately: once full (``_tokens_of``) a fresh
    generation replaces it, taking back from it the words still in use, and the
    generation before is dropped (bounded, yet common words stay)."""

    def __init__(self, elder: dict[bytes, tuple[str, ...]] | None = None) -> None:
        super().__init__()
        self.elder: dict[bytes, tuple[str, ...]] = {} if elder is None else elder

    def __missing__(self, word: bytes) -> tuple[str, ...]:
        tokens = self.elder.get(word)
        if tokens is None:
            if word.isascii():
                tokens = _ascii_word_tokens(word)
            else:
                tokens = _word_tokens(word.decode("utf-8"))
        self[word] = tokens
        return tokens


_CACHED_WORDS = 1 << 12
"""Words in a generation in a long-lived process (a language server: a few MB)."""
_CACHED_WORDS_BULK = 1 << 17
"""Words in a generation in a worker process, which indexes many files and exits."""
_word_cache = _WordTokens()


def _tokens_of() -> _WordTokens:
    """The current generation of the word cache."""
    global _word_cache
    cache = _word_cache
    # a worker process (multiprocessing started it, so has it imported); a process
    # that never imported multiprocessing (a CLI query) is no worker
    processes = sys.modules.get("multiprocessing")
    bulk = processes is not None and processes.parent_process() is not None
    if len(cache) >= (_CACHED_WORDS_BULK if bulk else _CACHED_WORDS):
        cache.elder = {}
        cache = _word_cache = _WordTokens(cache)
    return cache


def _words(text: str) -> list[bytes]:
    """The ``\\w+`` words of a text, in order, UTF-8 encoded."""
    if text.isascii():
        return text.encode("ascii").translate(_SPACE_OUT).split()
    return [word.encode("utf-8") for word in _WORD.findall(text)]


def _word_counts(text: str) -> dict[bytes, int]:
    counts: dict[bytes, int] = {}
    count_elements(counts, _words(text))
    return counts


def tokenize(text: str) -> list[str]:
    """Code-aware tokens: lowercase, split on non-alphanumerics, and split
    ``snake_case`` and ``camelCase`` into parts while keeping the whole word.

    >>> tokenize("chunk_python(HybridRetriever)")
    ['chunk_python', 'chunk', 'python', 'hybridretriever', 'hybrid', 'retriever']
    """
    return list(chain.from_iterable(map(_tokens_of().__getitem__, _words(text))))


def _token_counts(words: dict[bytes, int], cache: _WordTokens) -> dict[str, int]:
    """Token counts from word counts, tokens in order of first appearance."""
    counts: dict[str, int] = {}
    get = counts.get
    for word, n in words.items():
        for token in cache[word]:
            counts[token] = get(token, 0) + n
    return counts


class FileTerms(NamedTuple):
    """One file's documents as term counts, as ``BM25Index`` stores them: plain
    strings, bytes and ints, for worker processes and the cache."""

    terms: tuple[str, ...] | bytes
    """The file's distinct terms, or them UTF-8 encoded and NUL-joined (as a worker
    sends them: one object to unpickle, not hundreds of short strings)."""
    rows: bytes
    """int32 arrays of equal length, one after the other: term index in ``terms``,
    document position in the file, term frequency."""
    lengths: bytes
    """int32 token count of each document."""

    def packed(self) -> FileTerms:
        """The same, with the terms in one blob."""
        if isinstance(self.terms, bytes):
            return self
        return self._replace(terms="\0".join(self.terms).encode("utf-8"))

    def names(self) -> Sequence[str]:
        """The terms, as strings."""
        if isinstance(self.terms, bytes):
            return self.terms.decode("utf-8").split("\0") if self.terms else ()
        return self.terms


def file_terms(texts: Iterable[str]) -> FileTerms:
    """Term counts of a file's documents, ready for ``BM25Index.add_file_terms``:
    byte for byte those of counting each document's ``tokenize`` tokens in order."""
    cache = _tokens_of()
    docs = list(map(_word_counts, texts))
    sizes = list(map(len, docs))
    pairs = sum(sizes)
    if pairs < _NUMPY_FROM:
        return _file_terms_small(docs, cache)
    import numpy as np  # only here: a query's ``tokenize`` runs without numpy

    # every (document, word) pair expands to the word's tokens: number them by first
    # appearance in the file, then add up the repeats of a (document, term) pair
    tokens = list(map(cache.__getitem__, chain.from_iterable(docs)))
    flat = list(chain.from_iterable(tokens))
    size = len(flat)
    if not size:
        return FileTerms((), b"", bytes(4 * len(docs)))
    local: dict[str, int] = {}
    first = np.fromiter(map(local.setdefault, flat, itertools.count()), np.int64, size)
    widths = np.fromiter(map(len, tokens), np.int64, pairs)
    doc = np.repeat(np.repeat(np.arange(len(docs), dtype=np.int64), sizes), widths)
    tf = np.repeat(
        np.fromiter(chain.from_iterable(map(dict.values, docs)), np.int64, pairs), widths
    )
    lengths = np.bincount(doc, weights=tf, minlength=len(docs)).astype(np.int32)
    key = doc * size + first  # doc-major; a term's first position orders it
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sums = np.add.reduceat(tf[order], starts)
    # each document's terms in the order they first appear in it
    appearance = np.argsort(order[starts], kind="stable")
    pair_docs, term_first = np.divmod(ordered[starts[appearance]], size)
    term_of = np.empty(size, dtype=np.int64)
    term_of[np.fromiter(local.values(), np.int64, len(local))] = np.arange(len(local))
    rows = np.empty((3, len(appearance)), dtype=np.int32)
    rows[0] = term_of[term_first]
    rows[1] = pair_docs
    rows[2] = sums[appearance]
    return FileTerms(tuple(local), rows.tobytes(), lengths.tobytes())


_NUMPY_FROM = 200
"""(document, word) pairs from which ``file_terms`` counts with numpy."""


def _file_terms_small(docs: list[dict[bytes, int]], cache: _WordTokens) -> FileTerms:
    local: dict[str, int] = {}
    term_index = array("i")
    positions = array("i")
    frequencies = array("i")
    lengths = array("i")
    setdefault = local.setdefault
    for position, words in enumerate(docs):
        counts = _token_counts(words, cache)
        lengths.append(sum(counts.values()))
        indexes = [setdefault(term, len(local)) for term in counts]
        term_index.extend(indexes)
        positions.extend([position] * len(indexes))
        frequencies.extend(counts.values())
    rows = term_index.tobytes() + positions.tobytes() + frequencies.tobytes()
    return FileTerms(tuple(local), rows, lengths.tobytes())
