"""The symbol table: the names each chunk defines, kept as extra terms of the
search postings, and the passages a chunk's lines split into.

A chunk defines its own symbol (``class-BaseModel`` defines ``BaseModel``) and
the names defined inside it: methods, nested classes and functions, and a
module chunk's top-level assignments (``Alias = Foo``). Each is a term of the
chunk's postings that no query token can be (tokens are ``\\w+`` words; these
start with a control character), so BM25 scores, lengths and document
frequencies stay the tutorial's; the table is stored, updated on save and read
in place with the postings. A definition's own lines are found again from the
chunk's text when a result shows them (``passages``).
"""

from __future__ import annotations

import functools
import itertools
import re
from array import array
from collections.abc import Iterable
from typing import NamedTuple, Protocol

from chunkls.search.tokens import FileTerms, count_elements, file_terms, tokenize

OWN = "\x01"
"""Prefix of a chunk's own name (lowercase): ``\\x01basemodel``."""
INNER = "\x02"
"""Prefix of a name defined inside a chunk (lowercase): ``\\x02model_validate``."""
PART = "\x03"
"""Prefix of a part of a name defined inside a chunk: ``\\x03validate``."""

_KEYWORDS = (
    (re.compile(r"def[ \t]+(\w+)"), "function"),
    (re.compile(r"class[ \t]+(\w+)"), "class"),
)
"""``def``/``class`` and the name defined."""
_DEF_HEAD = re.compile(r"[ \t]*(?:async[ \t]+)?")
"""What may come before ``def``/``class`` on a header's line."""
_ASSIGN = re.compile(r"\n([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")
"""A top-level assignment after a newline (a literal first, as ``_KEYWORDS``)."""
_IDENTIFIER = re.compile(r"\w+")
_CLOSING = ")]}"


class Definition(NamedTuple):
    """A name defined in a chunk's text, with its lines (0-based, inclusive,
    counted from the text's first line)."""

    name: str
    kind: str
    """``class``, ``function`` or ``variable``."""
    start: int
    end: int


@functools.lru_cache(maxsize=64)
def _closer(indent: int) -> re.Pattern[str]:
    """The start of a line that ends a block whose header is indented ``indent``:
    code (not blank, not a comment, not a closing bracket) indented no deeper."""
    return re.compile(r"\n[ \t]{0," + str(indent) + r"}(?=[^ \t\n#)\]}])")


def _last_code(lines: list[str], number: int) -> int:
    """The last code line (not blank, not a comment) at or before line ``number``."""
    while number > 0 and (not (code := lines[number].lstrip(" \t")) or code[0] == "#"):
        number -= 1
    return number


def definitions(text: str, chunk_kind: str) -> list[Definition]:
    """The names a Python chunk's text defines, in order, with their lines: every
    ``def`` and ``class`` (the chunk's own included), and a ``module`` chunk's
    top-level assignments (not ``__dunder__`` ones)."""
    return _placed(text, _named(text, chunk_kind))


def _placed(text: str, found: list[tuple[str, str, int, int]]) -> list[Definition]:
    """``definitions`` of the names ``_named`` found in ``text`` (in order): each
    with its lines, to the last code line before the next code line indented no
    deeper (a closing bracket of a header does not end it), found by the regular
    expression engine rather than line by line."""
    if not found:
        return []
    lines = text.split("\n")
    result = []
    number, at = 0, 0
    for name, kind, offset, indent in found:
        number += text.count("\n", at, offset)
        at = offset
        closing = _closer(indent).search(text, offset)
        if closing is None:
            end = _last_code(lines, len(lines) - 1)
        else:
            end = _last_code(lines, number + text.count("\n", offset, closing.start()))
        first = number
        while kind != "variable" and first > 0 and lines[first - 1].strip().startswith("@"):
            first -= 1  # its decorators are its lines
        result.append(Definition(name, kind, first, max(end, number)))
    return result


def _named(text: str, chunk_kind: str) -> list[tuple[str, str, int, int]]:
    """The names a chunk's text defines (``definitions``'s), each with the offset
    of its line's match and its indent, in order."""
    found: list[tuple[str, str, int, int]] = []
    # each keyword found by the regular expression engine's search for a literal (a
    # pattern tried at every line took 1.8x as long), then whether it starts its line
    for pattern, kind in _KEYWORDS:
        for named in pattern.finditer(text):
            at = named.start()
            line = text.rfind("\n", 0, at) + 1
            head = text[line:at]
            if not head.strip(" \t"):  # at its line's start
                found.append((named[1], kind, line, len(head)))
            elif _DEF_HEAD.fullmatch(head):  # after "async"
                found.append((named[1], kind, line, len(head) - len(head.lstrip(" \t"))))
    found.sort(key=lambda entry: entry[2])
    if chunk_kind == "module":
        found += [
            (match[1], "variable", match.start(), 0)  # (its line's start in text)
            for match in _ASSIGN.finditer("\n" + text)
            if not (match[1].startswith("__") and match[1].endswith("__"))
        ]
        found.sort(key=lambda entry: entry[2])
    return found


def own_name(symbol: str | None) -> str | None:
    """A chunk's own name as the table keeps it (lowercase; ``None``: a heading's
    text or ``<module>`` is no name)."""
    if not symbol:
        return None
    name = symbol.rsplit(".", 1)[-1]
    if (name.isascii() and name.isidentifier()) or _IDENTIFIER.fullmatch(name):  # (no regex)
        return name.lower()
    return None


def table_terms(chunk_id: str, text: str, source_path: str, symbol: str | None) -> list[str]:
    """The symbol table's terms of one chunk (repeats count again): its own
    name, then each name defined inside it, then the parts of those names."""
    own = own_name(symbol)
    terms = [] if own is None else [OWN + own]
    if not source_path.endswith(".py") and not source_path.endswith(".pyi"):
        return terms
    names = [entry[0] for entry in _named(text, chunk_id[len(source_path) + 1 :].split("-", 1)[0])]
    if names and names[0].lower() == own:
        del names[0]  # (its own definition is the whole)
    if not names:
        return terms
    terms += [INNER + name for name in map(str.lower, names)]
    # one tokenize of them all: names are words, so a space splits them as they are split apart
    terms += [PART + part for part in dict.fromkeys(tokenize(" ".join(names)))]
    return terms


class ChunkText(Protocol):
    """What the table reads of a chunk."""

    @property
    def chunk_id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def source_path(self) -> str: ...

    @property
    def symbol(self) -> str | None: ...


def chunk_terms(chunks: Iterable[ChunkText]) -> FileTerms:
    """A file's search terms: ``file_terms`` of each chunk's ID and text (the
    tutorial's BM25 documents), plus each chunk's symbol-table terms, which add
    postings but no length: numbered after the documents' terms in order of first
    appearance, their rows after theirs (by chunk, then first appearance in it)."""
    listed = list(chunks)
    terms = file_terms(f"{chunk.chunk_id}\n{chunk.text}" for chunk in listed)
    counts: list[dict[str, int]] = [{} for _ in listed]
    for chunk, counted in zip(listed, counts, strict=True):
        count_elements(
            counted, table_terms(chunk.chunk_id, chunk.text, chunk.source_path, chunk.symbol)
        )
    extra = dict.fromkeys(itertools.chain.from_iterable(counts))  # (each chunk's, in order)
    if not extra:
        return terms
    names = terms.names()
    local = dict(zip(extra, itertools.count(len(names)), strict=False))
    # the table's rows, counted at C speed: term index, chunk position, frequency
    sizes = list(map(len, counts))
    table = array("i", map(local.__getitem__, itertools.chain.from_iterable(counts)))
    table.extend(itertools.chain.from_iterable(map(itertools.repeat, range(len(sizes)), sizes)))
    table.extend(itertools.chain.from_iterable(map(dict.values, counts)))
    rows, added = memoryview(terms.rows), memoryview(table.tobytes())
    third, width = len(rows) // 3, len(added) // 3  # (in bytes)
    cuts = [(rows[k * third :][:third], added[k * width :][:width]) for k in range(3)]
    rows_bytes = b"".join(itertools.chain.from_iterable(cuts))
    return FileTerms((*names, *extra), rows_bytes, terms.lengths)


class Passage(NamedTuple):
    """A part of a chunk a result can point at: lines (1-based, inclusive, in
    the file) and the words of its name."""

    start_line: int
    end_line: int
    name: str


WINDOW = 30
"""Lines of a window of a long chunk without definitions inside."""


@functools.lru_cache(maxsize=1024)
def passages(text: str, chunk_kind: str, start_line: int, python: bool) -> list[Passage]:
    """A chunk's parts: its inner definitions (Python), else windows of
    ``WINDOW`` lines overlapping by half; none for a chunk shorter than a window."""
    lines = text.count("\n") + 1
    found: list[Passage] = []
    if python:
        named = _named(text, chunk_kind)
        own_only = len(named) == 1 and "\n" not in text[: named[0][2]]
        if chunk_kind in {"class", "function"} and own_only:
            named = []  # only its own definition, the whole: no line of it need be placed
        inner = _placed(text, named)
        if chunk_kind in {"class", "function"} and inner and inner[0].start == 0:
            inner = inner[1:]  # (the chunk's own definition is the whole)
        found = [
            Passage(start_line + d.start, start_line + d.end, d.name)
            for d in inner
            if d.end - d.start + 1 < lines
        ]
    if found or lines <= WINDOW:
        return found
    step = WINDOW // 2
    return [
        Passage(start_line + first, start_line + min(first + WINDOW, lines) - 1, "")
        for first in range(0, max(lines - step, 1), step)
    ]


def best_part(
    symbol: str | None,
    text: str,
    chunk_kind: str,
    start_line: int,
    end_line: int,
    python: bool,
    words: Iterable[str],
) -> tuple[int, int, str | None]:
    """The lines of a chunk a query is best answered by, and the name of the
    definition they are (``None``: a window, or the whole chunk): its passage
    (``passages``) with the most query words in its name (three each) and text
    (one each, up to three times) beating the chunk's head (its lines before
    the first part), else the whole chunk's lines (also when its own name has
    query words and the passage's name none other)."""
    parts = passages(text, chunk_kind, start_line, python)
    wanted = [word for word in dict.fromkeys(words) if word]
    if not parts or not wanted:
        return start_line, end_line, None
    own = own_name(symbol)
    own_words = set(_name_words(symbol.rsplit(".", 1)[-1])) if symbol and own else set()
    own_hits = sum(word in own_words for word in wanted)
    lowered = text.lower()
    changed = lowered if len(lowered) != len(text) else None
    head, spans = _spans(text, chunk_kind, start_line, python, changed)

    present = [word for word in wanted if word in lowered]  # (the others count none anywhere)

    def count(span: tuple[int, int]) -> int:  # the words in a span of the (lowered) text
        return sum([min(lowered.count(word, *span), 3) for word in present])

    best: tuple[int, int, str | None] = (start_line, end_line, None)
    # the chunk's head (its signature and docstring, before the first part) is the whole
    best_score = float(count(head))
    asked = [word for word in wanted if word not in own_words]
    # a word of an ASCII name is in it lowercase, underscores aside: most names need no words
    squashed = [word.replace("_", "") for word in asked]
    for part, span in zip(parts, spans, strict=True):
        name = part.name
        if not name or (name.isascii() and not _inside(squashed, name)):
            hits = 0
        else:
            named = _name_words(name)
            hits = sum(word in named for word in asked)
        if own_hits and not hits:
            continue  # the chunk's own name says as much
        score = 3.0 * hits + count(span)
        if score > best_score:
            best, best_score = (part.start_line, part.end_line, part.name or None), score
    return best


def _inside(squashed: list[str], name: str) -> bool:
    """Whether any of ``squashed`` is in ``name``, lowercase and without underscores."""
    plain = name.lower().replace("_", "")
    return any(word in plain for word in squashed)


@functools.lru_cache(maxsize=1024)
def _spans(
    text: str, chunk_kind: str, start_line: int, python: bool, lowered: str | None
) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """Where a chunk's head and each of its ``passages`` are in its lowered text
    (``lowered``, given when lowering changed the text's length: ``İ``): the
    offsets of their first line's start and last line's end, so their words are
    counted in place (``str.count`` with bounds), not in copies of their lines."""
    measured = text if lowered is None else lowered
    ends = list(itertools.accumulate(map(len, measured.split("\n")), lambda at, n: at + n + 1))

    def span(first: int, final: int) -> tuple[int, int]:  # lines first..final, 0-based
        begin = 0 if first == 0 else ends[first - 1] + 1 if first < len(ends) else len(measured)
        return begin, ends[min(final, len(ends) - 1)]

    parts = passages(text, chunk_kind, start_line, python)
    head = span(0, max(parts[0].start_line - start_line, 1) - 1) if parts else (0, 0)
    return head, [span(p.start_line - start_line, p.end_line - start_line) for p in parts]


@functools.lru_cache(maxsize=4096)
def _name_words(name: str) -> frozenset[str]:
    """The words of a definition's name, as queries are tokenized."""
    return frozenset(tokenize(name))
