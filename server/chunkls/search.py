"""Okapi BM25 over chunks, with a code-aware tokenizer and one-file updates.

Postings are numpy arrays in compressed-row segments (see ``BM25Index``);
scores are computed with the same floating-point operations, in the same
order, as the straightforward per-posting loop, so they are bit-for-bit those
of a fresh build.
"""

from __future__ import annotations

import collections
import itertools
import math
import multiprocessing
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from chunkls.terms import TermTable, Vocabulary

K1 = 1.5
"""Term-frequency saturation."""
B = 0.75
"""Length normalisation."""

_WORD = re.compile(r"\w+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_WORD_BYTES = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
_SPACE_OUT = bytes(byte if byte in _WORD_BYTES else 32 for byte in range(256))
"""``bytes.translate`` table: word bytes kept, every other byte a space. In ASCII
text ``\\w+`` matches exactly the runs of word bytes, so splitting the translated
text gives the regex's words."""
_SNAKE = b"_abcdefghijklmnopqrstuvwxyz"

_count_elements: Callable[[dict[Any, int], Iterable[Any]], None] = getattr(
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
    """word -> tokens, for the words seen lately.

    Two generations bound it: once this one is full (``_CACHED_WORDS``, or
    ``_CACHED_WORDS_BULK`` in a worker process) a fresh one replaces it and
    keeps it as its elder, from which it takes back the words still in use;
    the generation before is dropped. Bulk indexing keeps its common words,
    and a long session cannot make it grow."""

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
    bulk = multiprocessing.parent_process() is not None
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
    _count_elements(counts, _words(text))
    return counts


def tokenize(text: str) -> list[str]:
    """Code-aware tokens: lowercase, split on non-alphanumerics, and split
    ``snake_case`` and ``camelCase`` into parts while keeping the whole word.

    >>> tokenize("chunk_python(HybridRetriever)")
    ['chunk_python', 'chunk', 'python', 'hybridretriever', 'hybrid', 'retriever']
    """
    return list(chain.from_iterable(map(_tokens_of().__getitem__, _words(text))))


def term_counts(text: str) -> Counter[str]:
    """Token counts of a text (the same tokens as ``tokenize``)."""
    return Counter(_counts(text))


def _counts(text: str) -> dict[str, int]:
    return _token_counts(_word_counts(text), _tokens_of())


def _token_counts(words: dict[bytes, int], cache: _WordTokens) -> dict[str, int]:
    """Token counts from word counts, tokens in order of first appearance."""
    counts: dict[str, int] = {}
    get = counts.get
    for word, n in words.items():
        for token in cache[word]:
            counts[token] = get(token, 0) + n
    return counts


T = TypeVar("T")

FileKey = tuple[int, str]
"""A file in corpus order: (workspace folder position, root-relative path)."""

_I32 = np.int32
_EMPTY = np.zeros(0, dtype=_I32)
_MERGE_AT = 100_000
"""Postings in the small write segment before it is merged into the main one."""
_CACHE_FROM = 1
"""Terms with this many documents keep their BM25 scores between queries (all:
a rare term's scores cost little memory, but computing them costs about as
many numpy calls as a common term's, the larger part of a query's time)."""
_CACHE_BUDGET = 2_000_000
"""Most postings whose scores are kept (about 12 bytes each)."""
_ENTRY_COST = 32
"""What a kept term costs beyond its postings, counted in postings (~400 bytes)."""
_QUERY_TERMS = 4096
"""Query tokens whose term ids are remembered (until the vocabulary is renumbered)."""
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


class _Term:
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


def _ascending(segment: Segment) -> Segment:
    """The segment with each term's documents ascending (as reading needs them),
    for a snapshot that may have been saved with them in another order."""
    docs = segment.docs
    if len(docs) < 2:
        return segment
    steps = docs[1:] > docs[:-1]
    starts = segment.offsets[1:-1]
    steps[starts[(starts > 0) & (starts < len(docs))] - 1] = True  # a new term may go down
    if steps.all():
        return segment
    terms = segment.triples()[0]
    order = np.lexsort((docs, terms))
    return Segment(segment.offsets, docs[order], segment.tfs[order])


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


class Hit(NamedTuple, Generic[T]):
    """One search result."""

    score: float
    item: T


class LearnedTerms(NamedTuple):
    """A file's term ids, as ``BM25Index.learn_terms`` gave them."""

    generation: int
    """The vocabulary's generation then (its ids are stale once it changed)."""
    ids: npt.NDArray[np.int32]


class FileTerms(NamedTuple):
    """One file's documents as term counts: what ``BM25Index`` stores of them.

    Plain strings, bytes and ints, so worker processes can compute it and the
    cache can keep it."""

    terms: tuple[str, ...] | bytes
    """The file's distinct terms, or them UTF-8 encoded and NUL-joined (as a worker
    sends them: one object to unpickle, not hundreds of short strings whose holes
    would be left in the heap among the chunks unpickled with them)."""
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
    """Term counts of a file's documents, ready for ``BM25Index.add_file_terms``.

    The same terms, rows and lengths, byte for byte, as counting each document's
    ``tokenize`` tokens in order; a large file is counted with numpy."""
    cache = _tokens_of()
    docs = list(map(_word_counts, texts))
    sizes = list(map(len, docs))
    pairs = sum(sizes)
    if pairs < _NUMPY_FROM:
        return _file_terms_small(docs, cache)
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
    lengths = np.bincount(doc, weights=tf, minlength=len(docs)).astype(_I32)
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
    rows = np.empty((3, len(appearance)), dtype=_I32)
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


class Segment(NamedTuple):
    """Postings in compressed-row form: term id -> slice of (docs, tfs)."""

    offsets: npt.NDArray[np.int64]
    docs: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.int32] | npt.NDArray[np.uint16]
    """Term frequencies: 16-bit when they all fit (almost always), else 32-bit."""

    @staticmethod
    def build(
        term_ids: npt.NDArray[np.int32],
        docs: npt.NDArray[np.int32],
        tfs: npt.NDArray[np.int32],
        vocabulary: int,
    ) -> Segment:
        """A segment from unordered (term, doc, tf) triples (docs ascending per term
        when they were ascending in the input)."""
        order = np.argsort(term_ids, kind="stable")
        counts = np.bincount(term_ids, minlength=vocabulary)
        offsets = np.zeros(vocabulary + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Segment(offsets, docs[order], _narrow(tfs[order]))

    def postings(
        self, term: int
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32] | npt.NDArray[np.uint16]]:
        """A term's (docs, tfs); empty arrays for a term it does not have."""
        if term + 1 >= len(self.offsets):
            return _EMPTY, _EMPTY
        start, stop = int(self.offsets[term]), int(self.offsets[term + 1])
        return self.docs[start:stop], self.tfs[start:stop]

    def triples(
        self,
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """Every (term, doc, tf) posting."""
        terms = np.repeat(np.arange(len(self.offsets) - 1, dtype=_I32), np.diff(self.offsets))
        return terms, self.docs, self.tfs.astype(_I32, copy=False)


def _narrow(tfs: npt.NDArray[Any]) -> npt.NDArray[np.int32] | npt.NDArray[np.uint16]:
    """Term frequencies in 16 bits when they fit (scores are the same: each is
    converted to float64 exactly either way)."""
    if len(tfs) and (int(tfs.max()) > 0xFFFF or int(tfs.min()) < 0):
        return tfs.astype(_I32, copy=False)
    return tfs.astype(np.uint16)


_NO_SEGMENT = Segment(np.zeros(1, dtype=np.int64), _EMPTY, _EMPTY)


class Snapshot(NamedTuple):
    """Some files' postings, renumbered from 0, for saving and loading."""

    files: list[tuple[FileKey, int]]
    """Files in document order, with how many documents each has."""
    terms: TermTable
    """The terms, with ids 0 to n-1 (those of ``segment``)."""
    segment: Segment
    lengths: npt.NDArray[np.int32]


def select_files(snapshot: Snapshot, keep: Callable[[FileKey], FileKey | None]) -> Snapshot:
    """The part of a snapshot for the files ``keep`` maps to a (new) key."""
    files: list[tuple[FileKey, int]] = []
    mask = np.zeros(len(snapshot.lengths), dtype=bool)
    doc = 0
    for key, count in snapshot.files:
        new_key = keep(key)
        if new_key is not None:
            files.append((new_key, count))
            mask[doc : doc + count] = True
        doc += count
    if mask.all():
        return Snapshot(files, snapshot.terms, snapshot.segment, snapshot.lengths)
    renumber = np.cumsum(mask, dtype=np.int64) - 1
    terms, docs, tfs = snapshot.segment.triples()
    kept = mask[docs]
    terms = terms[kept]
    # only the terms the kept files have, in the same order
    used = np.zeros(len(snapshot.terms), dtype=bool)
    used[terms] = True
    names = np.flatnonzero(used)
    local = np.full(len(snapshot.terms), -1, dtype=_I32)
    local[names] = np.arange(len(names), dtype=_I32)
    segment = Segment.build(local[terms], renumber[docs[kept]].astype(_I32), tfs[kept], len(names))
    return Snapshot(files, snapshot.terms.select(local), segment, snapshot.lengths[mask])


class BM25Index(Generic[T]):
    """An incremental BM25 index of documents grouped by file.

    Results are ordered by score, then by corpus order: the file's sort key,
    then the document's position in its file.

    Postings live in a large read-only segment plus a small one that takes
    writes; both are numpy arrays, so a query scores whole posting lists at
    once. Removing a file marks its documents dead (document frequencies are
    counted over live documents only, so scores are exactly those of a fresh
    build); dead postings are dropped when the segments are merged.
    """

    def __init__(self) -> None:
        self._vocabulary = Vocabulary()
        """term -> term id."""
        self._main = _NO_SEGMENT
        self._small = _NO_SEGMENT
        self._pending: list[tuple[npt.NDArray[np.int32], ...]] = []
        """(term ids, docs, tfs) added since the small segment was built."""
        self._pending_size = 0
        self._small_triples: list[tuple[npt.NDArray[np.int32], ...]] = []
        self._small_size = 0
        self._length = np.zeros(1024, dtype=_I32)
        """document id -> token count; -1 once the document is removed."""
        self._docs = 0
        """Document ids handed out so far."""
        self._slots: list[tuple[FileKey, Sequence[T], int, int] | None] = []
        """file slot -> (file key, items, index of its first item in ``items``, its
        first document id); ``None`` once removed. Items are kept per file, as the
        caller gave them (a lazy sequence costs nothing per document)."""
        self._slot_of: dict[FileKey, int] = {}
        """file key -> its slot."""
        self._doc_slot = np.zeros(1024, dtype=_I32)
        """document id -> its file's slot."""
        self._files: dict[FileKey, range] = {}
        """file key -> its document ids (consecutive)."""
        self._live = 0
        self._dead = 0
        self._total_length = 0
        self._norms: dict[int, _Term] = {}
        """term id -> its documents and scores, until the next change."""
        self._cached = 0
        self._query_ids: dict[str, int] = {}
        """query token -> its term id, for tokens asked for lately (a search as one
        types repeats them); ids stay valid while the vocabulary's generation does."""
        self._query_generation = -1

    def __len__(self) -> int:
        return self._live

    # -- writing ------------------------------------------------------------------

    def add_file(self, file_key: FileKey, docs: Iterable[tuple[str, T]]) -> None:
        """Index a file's documents (text to tokenize, item), replacing any before."""
        pairs = list(docs)
        self.add_file_terms(file_key, [item for _, item in pairs], file_terms(t for t, _ in pairs))

    def add_file_terms(
        self,
        file_key: FileKey,
        items: Sequence[T],
        terms: FileTerms,
        learned: LearnedTerms | None = None,
    ) -> None:
        """Index a file's documents from term counts computed elsewhere (with their
        term ids, when ``learn_terms`` gave them)."""
        if file_key in self._files:
            self.remove_file(file_key)
        self._changed()
        lengths = np.frombuffer(terms.lengths, dtype=_I32)
        if len(lengths) != len(items):
            raise ValueError(f"{len(items)} items for {len(lengths)} documents")
        first = self._reserve(len(items))
        self._length[first : first + len(items)] = lengths
        self._add_slot(file_key, items, 0, first, len(items))
        self._live += len(items)
        self._total_length += int(lengths.sum())
        rows = np.frombuffer(terms.rows, dtype=_I32).reshape(3, -1)
        if rows.shape[1]:
            if learned is not None and learned.generation == self._vocabulary.generation:
                ids = learned.ids
            else:  # not learned, or renumbered since (terms no file used were dropped)
                ids = self._term_ids(terms.names())
            self._pending.append((ids[rows[0]], rows[1] + first, rows[2].copy()))
            self._pending_size += rows.shape[1]

    def learn_terms(self, terms: FileTerms) -> LearnedTerms:
        """Add a file's terms to the vocabulary only (a bulk load's first pass;
        its postings are added later with ``add_file_terms``, given what this returns)."""
        ids = self._vocabulary.ids(terms.names()) if terms.rows else _EMPTY
        return LearnedTerms(self._vocabulary.generation, ids)

    def freeze_vocabulary(self, least: int = 0) -> None:
        """Fold the terms added since into the compact table (ids do not change),
        if there are at least ``least`` of them (rebuilding the table for a few
        costs more than keeping them in the dict)."""
        if len(self._vocabulary.added) >= least:
            self._vocabulary.freeze()

    def _term_ids(self, terms: Sequence[str]) -> npt.NDArray[np.int32]:
        """Term ids for terms, new ones added to the vocabulary."""
        return self._vocabulary.ids(terms)

    def _add_slot(
        self, file_key: FileKey, items: Sequence[T], base: int, first: int, count: int
    ) -> None:
        slot = len(self._slots)
        self._slots.append((file_key, items, base, first))
        self._slot_of[file_key] = slot
        self._doc_slot[first : first + count] = slot
        self._files[file_key] = range(first, first + count)

    def _reserve(self, count: int) -> int:
        first = self._docs
        needed = first + count
        if needed > len(self._length):
            size = max(needed, 2 * len(self._length))
            grown = np.zeros(size, dtype=_I32)
            grown[:first] = self._length[:first]
            self._length = grown
            slots = np.zeros(size, dtype=_I32)
            slots[:first] = self._doc_slot[:first]
            self._doc_slot = slots
        self._docs = needed
        return first

    def remove_file(self, file_key: FileKey) -> None:
        """Drop a file's documents; scores become those of a build without it."""
        ids = self._files.pop(file_key, None)
        if ids is None or not len(ids):
            return
        self._changed()
        lengths = self._length[ids.start : ids.stop]
        self._total_length -= int(lengths.sum())
        lengths[:] = -1
        self._live -= len(ids)
        self._dead += len(ids)
        slot = self._slot_of.pop(file_key, None)
        if slot is not None:
            self._slots[slot] = None

    def _changed(self) -> None:
        """Document counts, lengths or ids change: cached term scores are stale."""
        if self._norms:
            self._norms.clear()
            self._cached = 0

    def drop_caches(self) -> None:
        """Forget the term scores and query tokens kept between queries (the next
        query computes them again, as the first one after a change does)."""
        self._changed()
        self._query_ids.clear()

    def _settle(self) -> None:
        """Fold added postings into the segments before reading them."""
        if not self._pending:
            return
        self._small_triples.extend(self._pending)
        self._small_size += self._pending_size
        self._pending = []
        self._pending_size = 0
        size = len(self._vocabulary)
        if self._small_size >= _MERGE_AT or self._small_size >= len(self._main.docs):
            self._merge()
        else:
            self._small = Segment.build(*_concat(self._small_triples), size)

    def _merge(self) -> None:
        """One segment of live postings, documents renumbered without the dead."""
        self._changed()
        parts = [self._main.triples(), *self._small_triples, *self._pending]
        self._pending, self._small_triples = [], []
        self._pending_size = self._small_size = 0
        terms, docs, tfs = _concat(parts)
        live = self._length[: self._docs] >= 0
        if self._dead:
            keep = live[docs]
            terms, docs, tfs = terms[keep], docs[keep], tfs[keep]
            renumber = np.cumsum(live, dtype=np.int64) - 1
            docs = renumber[docs].astype(_I32)
            count = int(live.sum())
            self._length = self._length[: self._docs][live].copy()
            new_of = renumber
            # the live files' slots, renumbered in order, with their new first ids
            old_slots = self._doc_slot[: self._docs][live]
            kept = [slot for slot, entry in enumerate(self._slots) if entry is not None]
            slot_of_old = np.full(max(len(self._slots), 1), -1, dtype=_I32)
            slot_of_old[kept] = np.arange(len(kept), dtype=_I32)
            before = np.zeros(self._docs + 1, dtype=np.int64)  # live documents before each id
            np.cumsum(live, out=before[1:])
            slots: list[tuple[FileKey, Sequence[T], int, int] | None] = []
            for slot in kept:
                key, items, base, first = self._slots[slot]  # type: ignore[misc]
                slots.append((key, items, base, int(before[first])))
            self._slots = slots
            self._slot_of = {entry[0]: n for n, entry in enumerate(slots) if entry is not None}
            self._doc_slot = slot_of_old[old_slots].astype(_I32)
            self._docs = count
            self._files = {
                key: range(int(new_of[r.start]), int(new_of[r.start]) + len(r)) if len(r) else r
                for key, r in self._files.items()
            }
            self._dead = 0
        terms = self._drop_unused_terms(terms)
        # doc ids only grow, so a stable sort by term keeps each list in doc order
        self._main = Segment.build(terms, docs, tfs, len(self._vocabulary))
        self._small = _NO_SEGMENT

    def _drop_unused_terms(self, terms: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
        """Forget the terms no posting has any more (those of removed files): term
        ids are renumbered in the same order, so ``terms`` are returned renumbered."""
        used = np.zeros(len(self._vocabulary), dtype=bool)
        used[terms] = True
        renumber = self._vocabulary.keep(used)
        return terms if renumber is None else renumber[terms]

    def compact(self) -> None:
        """Merge everything into one segment and freeze the vocabulary (after a
        bulk load, before a save)."""
        if self._pending or self._small_triples or self._dead:
            self._merge()
        self._vocabulary.freeze()

    # -- snapshots ------------------------------------------------------------------

    def snapshot(self, keys: Iterable[FileKey]) -> Snapshot:
        """The postings of some files, documents renumbered from 0 in the order
        they are indexed in (so each term's documents stay ascending).

        Nothing is merged or frozen for it: a small folder's snapshot costs
        memory in proportion to its postings, not to the whole index's."""
        self._settle()  # every posting in the main or the small segment
        files = [(key, self._files[key]) for key in keys if key in self._files]
        files.sort(key=lambda pair: pair[1].start)
        old = np.concatenate(
            [np.arange(r.start, r.stop, dtype=np.int64) for _, r in files]
            or [np.zeros(0, np.int64)]
        )
        new_of = np.full(self._docs, -1, dtype=np.int64)
        new_of[old] = np.arange(len(old))
        wanted = new_of >= 0
        parts: list[tuple[npt.NDArray[Any], ...]] = []
        # the small segment's documents all came after the main one's: per term,
        # main's postings then small's stay in ascending document order
        for segment in (self._main, self._small):
            if not len(segment.docs):
                continue
            at = np.flatnonzero(wanted[segment.docs])
            terms = (np.searchsorted(segment.offsets, at, side="right") - 1).astype(_I32)
            parts.append((terms, new_of[segment.docs[at]].astype(_I32), segment.tfs[at]))
        terms, local_docs, tfs = _concat(parts) if parts else (_EMPTY, _EMPTY, _EMPTY)
        used = np.unique(terms)
        local = np.full(len(self._vocabulary), -1, dtype=_I32)
        local[used] = np.arange(len(used), dtype=_I32)
        segment = Segment.build(local[terms], local_docs, tfs.astype(_I32, copy=False), len(used))
        return Snapshot(
            [(key, len(r)) for key, r in files],
            self._vocabulary.select(local),
            segment,
            self._length[old].copy(),
        )

    def load_snapshot(self, snapshot: Snapshot, items: Sequence[T]) -> None:
        """Add the files of a snapshot (none of them may be indexed already)."""
        lengths = snapshot.lengths
        if len(lengths) != len(items) or sum(n for _, n in snapshot.files) != len(items):
            raise ValueError("snapshot and items disagree")
        if any(key in self._files for key, _ in snapshot.files):
            raise ValueError("snapshot files are indexed already")
        self._changed()
        first = self._reserve(len(items))
        self._length[first : first + len(items)] = lengths
        doc = first
        for key, count in snapshot.files:
            self._add_slot(key, items, doc - first, doc, count)
            doc += count
        self._live += len(items)
        self._total_length += int(lengths.sum())
        if not len(self._vocabulary) and not len(self._main.docs) and first == 0:
            self._vocabulary = Vocabulary(snapshot.terms)
            main = _ascending(snapshot.segment)
            self._main = Segment(main.offsets, main.docs, _narrow(main.tfs))
            return
        ids = self._term_ids(snapshot.terms.names())
        terms, docs, tfs = _ascending(snapshot.segment).triples()
        self._pending.append((ids[terms], docs + first, tfs))
        self._pending_size += len(docs)

    # -- reading --------------------------------------------------------------------

    def _term(self, term: int, n: int, base: float, scale: float) -> _Term | None:
        """A term's live documents and its BM25 score in each; ``None`` when it has none."""
        cached = self._norms.get(term)
        if cached is not None:
            return cached
        docs, tfs = self._main.postings(term)
        if len(self._small.docs):
            more_docs, more_tfs = self._small.postings(term)
            if len(more_docs):
                docs = np.concatenate([docs, more_docs])
                tfs = np.concatenate([tfs, more_tfs])
        dl = self._length[docs]
        if self._dead:
            alive = dl >= 0
            docs, tfs, dl = docs[alive], tfs[alive], dl[alive]
        df = len(docs)
        if not df:
            return None
        weight = math.log(1 + (n - df + 0.5) / (df + 0.5)) * (K1 + 1)
        # the same operations, in the same order, as ``weight * tf / (tf + base + scale * dl)``
        scores = weight * tfs.astype(np.float64) / (tfs + base + scale * dl)
        entry = _Term(docs, scores)
        if df >= _CACHE_FROM:
            cost = df + _ENTRY_COST
            self._cached += cost
            if self._cached > _CACHE_BUDGET:
                self._norms.clear()
                self._cached = cost
            self._norms[term] = entry
        return entry

    def _terms(self, query: str) -> list[_Term]:
        """The query's terms that match, one per query token (repeats included)."""
        self._settle()
        n = self._live
        if not n:
            return []
        avgdl = self._total_length / n or 1.0
        base = K1 * (1 - B)
        scale = K1 * B / avgdl
        found: dict[int, _Term | None] = {}
        terms: list[_Term] = []
        for term in self._query_term_ids(tokenize(query)):
            if term is None:
                continue
            if term in found:
                entry = found[term]
            else:
                entry = found[term] = self._term(term, n, base, scale)
            if entry is not None:
                terms.append(entry)
        return terms

    def _query_term_ids(self, tokens: list[str]) -> list[int | None]:
        """The term id of each query token (``None``: not in the vocabulary)."""
        vocabulary = self._vocabulary
        known = self._query_ids
        if self._query_generation != vocabulary.generation:
            known.clear()
            self._query_generation = vocabulary.generation
        ids: list[int | None] = list(map(known.get, tokens))
        if None in ids:
            missing = [i for i, term in enumerate(ids) if term is None]
            found = vocabulary.get_many([tokens[i] for i in missing])
            if len(known) + len(missing) > _QUERY_TERMS:
                known.clear()
            for i, term in zip(missing, found, strict=True):
                ids[i] = term
                if term is not None:  # an unknown one is asked again: a file may add it
                    known[tokens[i]] = term
        return ids

    def _dense(self, terms: Sequence[_Term]) -> npt.NDArray[np.float64]:
        """Scores by document id: each document's term scores added in query order."""
        scores = np.zeros(self._docs, dtype=np.float64)
        first = terms[0]
        scores[first.docs] = first.scores  # 0.0 + score, exactly
        for entry in terms[1:]:
            scores[entry.docs] += entry.scores
        return scores

    @staticmethod
    def _exact(terms: Sequence[_Term], docs: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        """The scores of some documents (ascending ids), bit for bit those of ``_dense``:
        the same additions, in the same order."""
        scores = np.zeros(len(docs), dtype=np.float64)
        for entry in terms:
            where = np.searchsorted(entry.docs, docs)
            np.minimum(where, len(entry.docs) - 1, out=where)
            has = entry.docs[where] == docs
            scores[has] += entry.scores[where[has]]
        return scores

    def scores(self, query: str) -> dict[int, float]:
        """BM25 score of every live document matching a query token."""
        terms = self._terms(query)
        if not terms:
            return {}
        scores = self._dense(terms)
        docs = np.flatnonzero(scores != 0)
        return dict(zip(docs.tolist(), scores[docs].tolist(), strict=True))

    def search(self, query: str, top_k: int = 10) -> list[Hit[T]]:
        """The ``top_k`` best documents for a query, best first."""
        if top_k <= 0:
            return []
        terms = self._terms(query)
        if not terms:
            return []
        docs, scores = self._candidates(terms, top_k)
        if len(docs) > top_k:
            kth = np.partition(scores, len(scores) - top_k)[len(scores) - top_k]
            tied = scores >= kth  # everything that can rank, ties included
            docs, scores = docs[tied], scores[tied]
        ranked = sorted(
            zip(docs.tolist(), scores.tolist(), strict=True),
            key=lambda pair: (-pair[1], self._order_key(pair[0])),
        )[:top_k]
        return [Hit(score, self._item(doc)) for doc, score in ranked]

    def _candidates(
        self, terms: list[_Term], top_k: int
    ) -> tuple[npt.NDArray[Any], npt.NDArray[np.float64]]:
        """Documents (ascending) with their exact scores: every document that can be
        among the ``top_k`` best is there.

        A lower bound on the ``top_k``-th best score, from the terms' own best
        scores and the exact scores of the rarest terms' documents, leaves out
        the terms that cannot lift a document to it on their own (MaxScore): only
        documents with one of the other terms are scored, unless they are many
        (then every document is, and only those reaching the bound are kept)."""
        distinct = list({id(entry): entry for entry in terms}.values())
        total = sum(len(entry.docs) for entry in distinct)
        if total <= _SCORE_ALL_BELOW:
            docs = _union([entry.docs for entry in distinct])
            return docs, self._exact(terms, docs)
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
                seed_scores = self._exact(terms, seed_docs)
                kth = np.partition(seed_scores, len(seed_scores) - top_k)[len(seed_scores) - top_k]
                floor = max(floor, float(kth))
        # terms whose best scores, all added up, stay under the floor: a document
        # needs one of the others to reach it
        bound = {id(entry): 0.0 for entry in distinct}
        for entry in terms:
            bound[id(entry)] += entry.best
        essential: list[_Term] = []
        spare = 0.0
        for entry in sorted(distinct, key=lambda entry: bound[id(entry)]):
            if not essential and (spare + bound[id(entry)]) * _MARGIN < floor:
                spare += bound[id(entry)]
            else:
                essential.append(entry)
        if sum(len(entry.docs) for entry in essential) <= _EXACT_UP_TO:
            docs = _union([entry.docs for entry in essential])
            return docs, self._exact(terms, docs)
        scores = self._dense(terms)
        reached = np.flatnonzero(scores >= floor if floor > 0 else scores != 0)
        return reached, scores[reached]

    def _order_key(self, doc: int) -> tuple[FileKey, int]:
        """A document's place in corpus order: its file's key, its position there."""
        entry = self._slots[int(self._doc_slot[doc])]
        assert entry is not None
        return entry[0], doc - entry[3]

    def _item(self, doc: int) -> T:
        entry = self._slots[int(self._doc_slot[doc])]
        assert entry is not None
        _, items, base, first = entry
        return items[base + doc - first]

    def file_items(self, file_key: FileKey) -> Sequence[T]:
        """The live items of one file, in order."""
        return [self._item(doc) for doc in self._files.get(file_key, ())]

    def file_keys(self) -> list[FileKey]:
        """Every indexed file."""
        return list(self._files)


def _concat(
    parts: Sequence[tuple[npt.NDArray[np.int32], ...]],
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    if not parts:
        return _EMPTY, _EMPTY, _EMPTY
    return (
        np.concatenate([p[0] for p in parts]).astype(_I32, copy=False),
        np.concatenate([p[1] for p in parts]).astype(_I32, copy=False),
        np.concatenate([p[2] for p in parts]).astype(_I32, copy=False),
    )
