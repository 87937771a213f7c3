"""The hybrid ranking: BM25 over a question's content words and the symbol table's chunks
defining them, ranked again in blocks by priors, name matches and file (``docs/search.md``,
where each constant below is described and measured)."""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from chunkls.search.definitions import INNER, OWN, PART
from chunkls.search.english import STOP_WORDS, other_forms, stem, strip_roles
from chunkls.search.files import file_lift
from chunkls.search.paths import in_tests, path_prior, stem_match
from chunkls.search.questions import QUESTION_WORDS, Asked, is_question
from chunkls.search.scorer import Postings, PostingsSource, idf
from chunkls.search.tokens import tokenize

FORM_WEIGHT = 0.2
"""What another form of a query word counts for, against the word itself."""
CANDIDATES = 64
"""BM25's best chunks ranked again a block at a time: the first results do not depend on
how many are asked for (every front door shows the same order)."""
KIND_PRIOR = {"module": 0.5}
"""Score factors by chunk kind: module-level code is glue more often than answer."""
TEST_PRIOR = 0.3
"""The score factor of a chunk of a test file, unless the query names tests."""
TEST_WORDS = frozenset({"test", "tests", "testing"})
LENGTH = 0.0
"""A chunk's score is divided by ``1 + LENGTH * log1p(length / average)`` (none for a
question or a topic, which asks for files; ``SENTENCE_LENGTH`` for a sentence)."""
SENTENCE_LENGTH = 0.15
SYMBOL = 1.5
"""What a query word in the definition's name adds, times the word's IDF."""
MIN_INSIDE = 4
"""Letters a word's stem needs to match inside a name (``scan`` in ``scanstring``)."""
NAMES_KEPT = 1024
"""Names whose parts are kept between searches (more keeps only older edits' names)."""
OWN_NAME = 1.0
"""What a query word that is a chunk's own name adds, times the word's IDF."""
INNER_NAME = 1.0
"""What a query word that is a name defined inside a chunk adds, times its IDF."""
INNER_PART = 0.3
"""What a query word that is part of a name defined inside a chunk adds, times its IDF."""
TABLE_CANDIDATES = 16
"""Most chunks the symbol table adds to BM25's (a name defined in more adds none)."""
STEM = 1.0
"""What a query word naming the file (a part of its name) adds, times its IDF."""
PATH_PRIOR = {
    "examples": 0.5,
    "vendored": 0.5,
    "compat": 0.5,
    "init": 1.0,
    "dot_markdown": 0.3,
    "markdown": 0.5,
}
"""Score factors by where a file is (``paths.path_kinds``), unless the query names the kind."""
SATURATION = 0.5
"""A file's second chunk in a block counts this much, its third this squared, ..."""
SENTENCE_SATURATION = 1.0
"""``SATURATION`` for a sentence (``HybridQuery.sentence``): it describes one definition,
often the sibling of a better-scoring chunk of its file; a question or a topic asks for files."""
SENTENCE_OWN_NAME = 0.0
"""``OWN_NAME`` for a sentence: a name it mentions is more often one it uses than its answer."""
SENTENCE_WORDS = 3
"""Fewest words a sentence has (``Depends``, ``StaticModel`` are names)."""
FILE_LIFT = 0.1
"""What a chunk's file's best ``FILE_TOP`` other candidates add to it, times their summed score."""
FILE_TOP = 3
SENTENCE_FILE_LIFT = 0.2
"""``FILE_LIFT`` for a query written as a sentence, from its file's best other candidate only."""
SPARE_NAMES = 0.0
"""How much of what a chunk's names add ``SATURATION`` spares (0: none)."""
PRIOR_ON_NAMES = True
"""Whether the kind and test priors scale what names add too (the path prior always does)."""
PREFIX_NAME = 2.0
"""What a chunk's own name adds when the whole query begins it (``BaseMod``), times its IDF."""
PREFIX_TERMS = 16
"""Most names one query's prefix is looked up as."""
WHOLE_FIRST = True
"""Whether a chunk whose own name is the whole query comes before the rest."""
NAMES_ONLY = True
"""Whether a chunk's names count only for the query words that name code (``names``)."""
WHOLE_WORDS = 3
"""Most words a query can have to be taken as one name (``base model``: ``basemodel``)."""

_WORD = re.compile(r"\w+")
_CODE_WORD = re.compile(r"_|[0-9]|.[A-Z]")
"""What makes a word code: an underscore, a digit, a capital after its first letter."""

Describe = Callable[[int], "tuple[str, str, str, str | None, int, int, str, int | str] | None"]
"""A document's chunk without its text, a stored stub (``None``: it has none now)."""


class HybridQuery(NamedTuple):
    """A query as the hybrid ranking reads it."""

    terms: tuple[str, ...]
    """Its content tokens, in order (repeats count again)."""
    forms: tuple[str, ...]
    """Other forms of its words, each once."""
    wholes: tuple[str, ...] = ()
    """The query as one name, lowercase (``basemodel``, ``base_model``), if it is short."""
    names: tuple[str, ...] = ()
    """Its words that name code: written as code (``ClientSession``, ``post_init``),
    or every word of a short query; lowercase."""
    sentence: bool = False
    """Whether it is written as a sentence (a capital first, as in ``Return the
    header's value.``, or a full stop last), not as a question or a topic."""
    question: bool = False
    """Whether it is a question (``how are routes registered``)."""


@functools.lru_cache(maxsize=256)
def hybrid_query(query: str) -> HybridQuery:
    """The content words of a query and their other forms (none: only stop words)."""
    terms = [token for token in tokenize(strip_roles(query)) if token not in STOP_WORDS]
    distinct = dict.fromkeys(terms)
    forms: dict[str, None] = {}
    for term in distinct:
        if term.isalpha():
            forms.update((form, None) for form in other_forms(term) if form not in distinct)
    words = [word.lower() for word in _WORD.findall(strip_roles(query))]
    wholes: tuple[str, ...] = ()
    names = [w.lower() for w in _WORD.findall(strip_roles(query)) if _CODE_WORD.search(w)]
    if terms and 1 <= len(words) <= WHOLE_WORDS:
        wholes = tuple(dict.fromkeys(["".join(words), "_".join(words)]))
        names += terms
    named = tuple(dict.fromkeys(names))
    sentence = _is_sentence(query)
    return HybridQuery(tuple(terms), tuple(forms), wholes, named, sentence, is_question(words))


def _is_sentence(query: str) -> bool:
    """Whether a query is written as a sentence describing one thing: its first
    word capitalised as prose (not code, not a question word), or a full stop last."""
    words = _WORD.findall(strip_roles(query))
    if len(words) < SENTENCE_WORDS or words[0].lower() in QUESTION_WORDS:
        return False
    first = words[0]
    prose = first[0].isupper() and first[1:] == first[1:].lower() and not _CODE_WORD.search(first)
    return prose or query.rstrip().endswith(".")


def rank(
    source: PostingsSource,
    query: HybridQuery,
    top_k: int,
    describe: Describe,
    where: Callable[[str], bool] | None = None,
) -> list[tuple[int, float]]:
    """``modes.rank`` in the hybrid mode."""
    if top_k <= 0 or not query.terms or not source.live:
        return []
    depth = -(-top_k // CANDIDATES) * CANDIDATES  # whole blocks
    while True:
        ranked, more = _ranked(source, query, depth, describe, where)
        if len(ranked) >= top_k or not more:
            return ranked[:top_k]
        depth *= 2  # repeated IDs took places: look deeper


def _ranked(
    source: PostingsSource,
    query: HybridQuery,
    depth: int,
    describe: Describe,
    where: Callable[[str], bool] | None,
) -> tuple[list[tuple[int, float]], bool]:
    """The best of BM25's ``depth`` best and the table's, and whether BM25 had more."""
    tokens = query.terms + query.forms
    weights = [1.0] * len(query.terms) + [FORM_WEIGHT] * len(query.forms)
    found = top_where(source, tokens, depth, describe, where, weights)
    words = list(dict.fromkeys(query.terms))
    table = _Table(source, words, query.wholes, query.names)
    more = len(found) >= depth
    first = {doc for doc, _ in found[:CANDIDATES]}
    extra = [doc for doc in table.candidates() if doc not in first]
    if where is not None:
        extra = [doc for doc in extra if (stub := describe(doc)) and where(stub[1])]
    if extra:  # into the first block, wherever BM25 has them
        later = set(extra)
        found = (
            found[:CANDIDATES]
            + _bm25_of(source, tokens, weights, extra)
            + [pair for pair in found[CANDIDATES:] if pair[0] not in later]
        )
    candidates = [(doc, score, stub) for doc, score in found if (stub := describe(doc))]
    live = source.live
    asked = list(dict.fromkeys(words + list(query.wholes)))
    idfs = {
        word: idf(live, df)
        for word, df in zip(asked, source.scorer.document_frequencies(source, asked), strict=True)
        if df
    }
    stems = {word: stem(word) for word in idfs}
    word_idfs = {word: weight for word, weight in idfs.items() if word in words}
    about_tests = not TEST_WORDS.isdisjoint(words)
    average = source.total_length / live or 1.0
    order = source.order_key
    ranked: list[tuple[int, float]] = []
    ids: set[tuple[object, str]] = set()
    own_name, saturation, lift, length = (
        (SENTENCE_OWN_NAME, SENTENCE_SATURATION, (SENTENCE_FILE_LIFT, 1), SENTENCE_LENGTH)
        if query.sentence
        else (OWN_NAME, SATURATION, (FILE_LIFT, FILE_TOP), LENGTH)
    )
    table.settle([doc for doc, _, _ in candidates], idfs, own_name)
    asks = Asked(query.question, query.sentence, words)
    first_block = CANDIDATES + len(extra)
    start = 0
    while start < len(candidates):
        size = first_block if start == 0 else CANDIDATES
        block = []
        for doc, score, (chunk_id, source_path, file_type, symbol, *_) in candidates[
            start : start + size
        ]:
            kind = chunk_id[len(source_path) + 1 :].split("-", 1)[0]
            prior = KIND_PRIOR.get(kind, 1.0) * asks.prior(symbol)
            if not about_tests and in_tests(source_path):
                prior *= TEST_PRIOR
            where_prior = path_prior(source_path, file_type, words, PATH_PRIOR)
            score *= prior * where_prior * asks.size(ratio := source.length(doc) / average)
            score /= 1 + length * math.log1p(ratio)
            named = SYMBOL * name_match(symbol, word_idfs, stems) if symbol else 0.0
            named += table.bonus.get(doc, 0.0) + STEM * stem_match(source_path, word_idfs)
            named *= where_prior * prior if PRIOR_ON_NAMES else where_prior
            tier = 1 if WHOLE_FIRST and doc in table.whole else 0
            place = order(doc)  # (ties sort by it; one ID in two folders is two chunks)
            ids_at = (place[0][0], chunk_id), (place[0][0], source_path)
            block.append((doc, score + named, tier, *ids_at, named, place))
        ranked += _settled(block, ids, saturation, lift)
        start += size
    return ranked, more


_Entry = tuple[int, float, int, tuple[object, str], tuple[object, str], float, object]
"""A candidate: doc, score, tier, (folder, ID), (folder, path), its names' share, order key."""


def _by_rank(entry: _Entry) -> tuple[int, float, Any]:  # tier, score, then corpus order
    return -entry[2], -entry[1], entry[6]


def _settled(
    block: list[_Entry],
    ids: set[tuple[object, str]],
    saturation: float,
    lift: tuple[float, int],
) -> list[tuple[int, float]]:
    """A block's chunks best first (a chunk named by the whole query before the
    rest), one per chunk ID (``ids``: those ranked before), each further chunk of a file
    counted ``saturation`` times less, each lifted by ``lift`` (weight, how many of
    its file's best other candidates): the weight times their summed score."""
    weight, top = lift
    if weight:
        tops: dict[tuple[object, str], list[float]] = {}
        for _, score, _, _, path, _, _ in block:
            tops.setdefault(path, []).append(score)
        for scores in tops.values():
            scores.sort(reverse=True)
        block = [
            (doc, score + weight * file_lift(tops[path], score, top), tier, cid, path, named, place)
            for doc, score, tier, cid, path, named, place in block
        ]
    block.sort(key=_by_rank)
    kept = []
    for entry in block:
        if entry[3] not in ids:
            ids.add(entry[3])
            kept.append(entry)
    if saturation < 1.0:
        per_file: dict[tuple[object, str], int] = {}
        saturated = []
        for doc, score, tier, cid, path, named, place in kept:
            count = per_file.get(path, 0)
            per_file[path] = count + 1
            spared = named * SPARE_NAMES
            saturated.append(
                (doc, (score - spared) * saturation**count + spared, tier, cid, path, named, place)
            )
        saturated.sort(key=_by_rank)
        kept = saturated
    return [(doc, score) for doc, score, *_ in kept]


def _bm25_of(
    source: PostingsSource, tokens: Sequence[str], weights: Sequence[float], docs: list[int]
) -> list[tuple[int, float]]:
    """Documents' BM25 scores for the query (term scores added in query order)."""
    terms = source.scorer.terms(source, tokens, weights)
    scored = []
    for doc in docs:
        total = 0.0
        for entry in terms:
            at = bisect.bisect_left(entry.docs, doc)
            if at < len(entry.docs) and entry.docs[at] == doc:
                total += float(entry.scores[at])
        scored.append((doc, total))
    return scored


class _Table:
    """The chunks defining a query's words (own name, a name inside, or a part of one)."""

    def __init__(
        self,
        source: PostingsSource,
        words: list[str],
        wholes: tuple[str, ...],
        names: tuple[str, ...],
    ) -> None:
        self.words = words
        self.wholes = wholes
        self.names = frozenset(names) | frozenset(wholes)
        named = list(dict.fromkeys(words + list(wholes) + list(names)))
        keys = (
            [OWN + word for word in named]
            + [INNER + word for word in named]
            + [PART + word for word in words]
        )
        # names the whole query begins (``BaseMod``: ``BaseModel``), as one types
        started = [
            term
            for whole in wholes
            if len(whole) >= MIN_INSIDE and PREFIX_NAME
            for term in source.terms_starting(OWN + whole, PREFIX_TERMS + 1)
            if term != OWN + whole
        ][:PREFIX_TERMS]
        keys += started
        found = dict(zip(keys, source.postings(keys), strict=True))
        self.own = _found(found, OWN, named)
        self.inner = _found(found, INNER, named)
        self.part = _found(found, PART, words)
        self.started = {term: postings for term in started if (postings := found[term])}
        self.live = source.live

    def candidates(self) -> list[int]:
        """Own names first, at most ``TABLE_CANDIDATES``, in corpus order within each."""
        picked: dict[int, None] = {}
        for postings in [*self.own.values(), *self.inner.values(), *self.started.values()]:
            if len(postings.docs) > TABLE_CANDIDATES:
                continue  # a name defined everywhere does not point anywhere
            picked.update(dict.fromkeys(int(doc) for doc in postings.docs))
            if len(picked) >= TABLE_CANDIDATES:
                break
        return list(picked)[:TABLE_CANDIDATES]

    def settle(self, docs: list[int], idfs: dict[str, float], own_name: float) -> None:
        """What the names each of these chunks defines add (``bonus``): ``OWN_NAME``,
        ``INNER_NAME`` and ``INNER_PART`` times the IDF of each query word matched
        so; and which are named by the whole query (``whole``)."""
        wanted = set(docs)
        bonus: dict[int, float] = {}
        for weight, postings_of, only_names in (
            (own_name, self.own, True),
            (INNER_NAME, self.inner, True),
            (INNER_PART, self.part, False),
        ):
            for word, postings in postings_of.items():
                if not weight or (only_names and NAMES_ONLY and word not in self.names):
                    continue
                add = weight * idfs.get(word, 0.0)
                for doc in _members(postings.docs, wanted):
                    bonus[doc] = bonus.get(doc, 0.0) + add
        for postings in self.started.values():
            add = PREFIX_NAME * idf(self.live, len(postings.docs))
            for doc in _members(postings.docs, wanted):
                bonus[doc] = bonus.get(doc, 0.0) + add
        self.bonus = bonus
        self.whole: set[int] = set()
        for word, postings in self.own.items():
            if word in self.wholes:
                self.whole |= _members(postings.docs, wanted)


def _found(found: dict[str, Postings | None], prefix: str, words: list[str]) -> dict[str, Postings]:
    """The postings of the words' table terms, by word (those the table has)."""
    return {word: postings for word in words if (postings := found[prefix + word]) is not None}


def _members(docs: Sequence[int], wanted: set[int]) -> set[int]:
    """Which of ``wanted`` a posting list (ascending) holds."""
    if len(docs) <= 4 * len(wanted) + 64:
        listed = docs.tolist() if hasattr(docs, "tolist") else docs
        return wanted.intersection(listed)
    found = set()
    for doc in wanted:
        at = bisect.bisect_left(docs, doc)
        if at < len(docs) and docs[at] == doc:
            found.add(doc)
    return found


def top_where(
    source: PostingsSource,
    tokens: Sequence[str],
    top_k: int,
    describe: Describe,
    where: Callable[[str], bool] | None,
    weights: Sequence[float] | None = None,
) -> list[tuple[int, float]]:
    """The scorer's ``top_k`` best among the chunks whose ``source_path`` ``where`` accepts."""
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


@functools.lru_cache(maxsize=NAMES_KEPT)
def _name_parts(symbol: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """A name's parts, their stems (tuples: a fifth of sets' memory), the name lowercase."""
    name = symbol.rsplit(".", 1)[-1]
    parts = tuple(dict.fromkeys(tokenize(name)))
    return parts, tuple(dict.fromkeys(map(stem, parts))), name.lower()
