"""Recognising chunk IDs in text, and resolving them through the index.

This is the one place that knows how a chunk ID is written: bare
(``app/x.py#function-f (bm25 30.047)``), in backticks, as a Markdown link target
(``[x](app/x.py#function-f)``), with a leading ``/`` or ``./``, or as
``#identity`` alone for a chunk of the same file. Definition, hover, links,
diagnostics and ``chunkls check`` all use it.

A path with characters other than word characters, ``.``, ``-`` and ``/`` (a
space, ``%``, ``+``, ``@``, ``(``, ...) is recognised only where it is
delimited: as a whole backtick span (``Meeting Notes/q3 plan.md#heading-goals``
in backticks) or as a whole Markdown link target, in angle brackets
(``[x](<Meeting Notes/q3 plan.md#heading-goals>)``) or percent-encoded
(``[x](Meeting%20Notes/q3%20plan.md#heading-goals)``). Bare in prose such a
path cannot be told from the words around it.

Recognition is linear in the text: matches may only start where a path run
starts (a look-behind), so a megabyte of near-IDs costs one pass, and each match
costs a few operations on short strings. The delimited forms take one more
pass, of backtick spans and link targets, where each scan stops at the next
backtick or line end, or ``<``, ``>`` or parenthesis (see ``_DELIMITED``). In
Python, where only the IDs in strings and comments count, those are found
without ``tokenize`` (see ``python_literal_spans``). Resolution is a lookup in
the index: nothing here opens a path taken from the text.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Literal, NamedTuple
from urllib.parse import quote

from chunkls.chunking.chunker import SUPPORTED_SUFFIXES, suffix_of

MAX_PATH = 1024
"""Longer paths are not taken for chunk IDs."""
MAX_IDENTITY = 512
"""Longer identities are not taken for chunk IDs."""

Form = Literal["bare", "backtick", "link", "local"]

_IDENTITY_KINDS = r"(?:module-\d+|function-\w+|class-\w+|heading-\w+(?:-\w+)*)"
_IDENTITY = rf"(?P<identity>{_IDENTITY_KINDS})(?!\w)"
"""The identity kinds the chunker makes; headings also in the case-variant
forms people write (so a quick fix can offer the real slug)."""
_PATH_ID = re.compile(r"(?<![\w.\-/~#])(?P<path>[\w.\-/]+)#" + _IDENTITY)
_LOCAL_ID = re.compile(
    r"(?<![\w.\-/~#\]])#(?P<identity>(?:module-\d+|function-\w+|class-\w+|heading-[a-z0-9]+(?:-[a-z0-9]+)*))(?![\w-])"
)
_SCHEME_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:/*\Z")


class ChunkRef(NamedTuple):
    """A chunk ID written in a text, at ``[start, end)`` (character offsets)."""

    start: int
    end: int
    path: str
    """The path as written (in a Markdown link target: with its backslash escapes
    and ``%XX`` decoded), without a leading ``/`` or ``./``; ``""`` for ``#identity``."""
    identity: str
    form: Form

    @property
    def chunk_id(self) -> str:
        """The ID as a root-relative chunk ID (``#identity`` for a local one)."""
        return f"{self.path}#{self.identity}"


def find_chunk_refs(text: str) -> list[ChunkRef]:
    """Every chunk ID written in ``text``, in order."""
    refs = _plain_refs(text)
    delimited, claimed = _delimited_refs(text)
    if claimed:
        # A delimited ID's path holds a character no plain path does, so the
        # plain pass found at most its tail ("b.py#function-f" of "a b.py#...",
        # ending where it ends): that reading gives way.
        refs = [ref for ref in refs if ref.end not in claimed]
        refs += delimited
        refs.sort()
    return refs


def _plain_refs(text: str) -> list[ChunkRef]:
    """The IDs whose path is a run of ``[\\w.\\-/]``, and ``#identity`` ones."""
    refs: list[ChunkRef] = []
    append = refs.append
    make = tuple.__new__
    # One regex pass per form; per match only constant work on short strings
    # (a megabyte of IDs is ~100k matches: keep this loop lean).
    for match in _PATH_ID.finditer(text):
        path, identity = match.groups()
        if len(path) > MAX_PATH or len(identity) > MAX_IDENTITY:
            continue
        # the last path segment's suffix, by ``suffix_of``'s rule
        dot = path.rfind(".")
        if dot <= path.rfind("/") + 1 or dot == len(path) - 1:
            continue
        if path[dot:].lower() not in SUPPORTED_SUFFIXES:
            continue
        start, end = match.span()
        before = text[start - 1] if start else ""
        # part of a URL with a scheme (https://..., file:///...): the look-behind
        # keeps "/" out of ``before``, so a scheme ends right there in ":"
        if before == ":" and _SCHEME_BEFORE.search(text, max(0, start - 64), start):
            continue
        written = path
        if written[0] in "./":
            while written.startswith("./"):
                written = written[2:]
            written = written.lstrip("/")
            if not written:
                continue
        after = text[end : end + 1]
        if before == "(" and start >= 2 and text[start - 2] == "]" and after in _LINK_AFTER:
            form: Form = "link"
        elif before == "`" and after == "`":
            form = "backtick"
        else:
            form = "bare"
        append(make(ChunkRef, (start, end, written, identity, form)))
    for match in _LOCAL_ID.finditer(text):
        start, end = match.span()
        append(make(ChunkRef, (start, end, "", match[1], "local")))
    refs.sort()  # two sorted runs, disjoint: one merge
    return refs


_LINK_AFTER = frozenset((")", " ", '"'))

_DELIMITED = re.compile(
    # a backtick span of single backticks on one line, no backtick inside
    r"`(?<!``)(?P<code>[^`\r\n]++)`(?!`)"
    # a Markdown link target: in angle brackets (with backslash escapes), or
    # plain (no spaces; parentheses balanced one deep, or escaped)
    r"|\]\((?:<(?P<angle>(?:[^<>\r\n\\]|\\[^\r\n])*+)>"
    r'|(?P<plain>(?:[^\x00-\x20\x7f()<>"\\]|\\[!-~]'
    r'|\((?:[^\x00-\x20\x7f()<>"\\]|\\[!-~])*+\))++))'
    r'(?=[) "])'
)
"""Where a delimited ID may be written. Every scan stops at the next backtick
or line end (a span), or at the next ``<``/``>`` or parenthesis (a link
target), so no text is read by more than two attempts."""
_IDENTITY_WHOLE = re.compile(_IDENTITY_KINDS)
_PLAIN_PATH = re.compile(r"[\w.\-/]*")
"""A path the plain pass reads whole."""
_BAD_IN_PATH = re.compile(r"[\x00-\x1f\x7f#`]")
"""Never in a delimited path: control characters (a line break), ``#``, a backtick."""
_URL_LIKE = re.compile(r"(?:\A|(?<=\s))[A-Za-z][A-Za-z0-9+.\-]*+:(?!\s)|://")
"""A scheme at the start or after a space (``https://``, ``file:x``, ``C:/``)."""
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
"""A backslash escape of Markdown (ASCII punctuation)."""
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _delimited_refs(text: str) -> tuple[list[ChunkRef], set[int]]:
    """IDs whose path holds characters beyond ``[\\w.\\-/]``: a whole backtick
    span, or a whole Markdown link target (the ID's range: inside the backticks,
    spaces at either end left out; inside ``<...>``; the target as written).

    Also the ends of such spans that the plain reading must leave alone: those
    IDs', and those of link targets of that shape that are not IDs (a URL,
    ``%XX`` that is not UTF-8): a link target is one URL, its tail is no ID.
    """
    refs: list[ChunkRef] = []
    claimed: set[int] = set()
    for match in _DELIMITED.finditer(text):
        written = match["code"]
        if written is not None:
            if "#" not in written:
                continue  # most spans: code, not IDs
            form: Form = "backtick"
            start = match.start("code")
            if written[0] == " " or written[-1] == " ":
                # CommonMark strips one space each side; no path starts, and no
                # identity ends, with one: all are left out
                stripped = written.lstrip(" ")
                start += len(written) - len(stripped)
                written = stripped.rstrip(" ")
        else:
            form = "link"
            group = "angle" if match["angle"] is not None else "plain"
            written = match[group]
            start = match.start(group)
        hash_at = written.find("#")
        if hash_at <= 0:
            continue  # no path (``#identity`` alone is the local form)
        identity = written[hash_at + 1 :]
        if len(identity) > MAX_IDENTITY or not _IDENTITY_WHOLE.fullmatch(identity):
            continue
        path = written[:hash_at]
        if _PLAIN_PATH.fullmatch(path):
            continue  # the plain pass reads it, as ever
        end = start + len(written)
        path = _delimited_path(path if form == "backtick" else _link_path(path))
        if path is not None:
            refs.append(ChunkRef(start, end, path, identity, form))
            claimed.add(end)
        elif form == "link":
            claimed.add(end)
    return refs, claimed


def _delimited_path(path: str | None) -> str | None:
    """A delimited ID's path as a ``ChunkRef`` holds it, or ``None`` when it is
    not one (no corpus suffix, a line break, a URL, a home directory)."""
    if path is None or len(path) > MAX_PATH or _BAD_IN_PATH.search(path):
        return None
    if suffix_of(path.rpartition("/")[2]) not in SUPPORTED_SUFFIXES:
        return None
    # a leading "./" or "/" as the plain forms take it ("../" is kept, as there:
    # such a path resolves only document-relative, as a link target)
    while path.startswith("./"):
        path = path[2:]
    path = path.lstrip("/")
    if not path or path[0] == "~" or _URL_LIKE.search(path):
        return None
    return path


def _link_path(written: str) -> str | None:
    """The path of a Markdown link target: backslash escapes and ``%XX`` (as
    UTF-8) decoded, or ``None`` when its ``%XX`` are not UTF-8. A ``%`` before
    anything but two hex digits is itself, as browsers take it."""
    if "\\" in written:
        written = _ESCAPED.sub(r"\1", written)
    if "%" not in written:
        return written
    try:
        return _PERCENT_RUN.sub(
            lambda run: bytes.fromhex(run[0].replace("%", "")).decode("utf-8"), written
        )
    except UnicodeDecodeError:
        return None  # overlong forms (%C0%AF for "/") and surrogates included


def written_as(chunk_id: str, form: Form, angle: bool = False) -> str:
    """``chunk_id`` as text to put where a reference of ``form`` is written (``angle``:
    a link target in ``<...>``), so that it reads back as that ID: a path with
    characters beyond ``[\\w.\\-/]`` is percent-encoded in a plain link target and
    put in backticks in prose (where a space would end it)."""
    path, _, identity = chunk_id.partition("#")
    if _PLAIN_PATH.fullmatch(path):
        return chunk_id
    if form == "link" and not angle:
        return f"{quote(path, safe='/')}#{identity}"
    if form in ("bare", "local"):
        return f"`{chunk_id}`"
    return chunk_id


def python_literal_spans(
    text: str, near: Sequence[int] | None = None
) -> list[tuple[int, int]] | None:
    """Offsets of the strings and comments of Python source, in order, or
    ``None`` when it does not tokenize (then every reference counts).

    These are the STRING and COMMENT tokens of Python 3.11's
    ``tokenize.generate_tokens``, and ``None`` where it raises, without its
    per-token cost (seconds for a megabyte of short tokens). A string's span
    starts at its opening quote (a prefix such as ``rb`` is left out).

    With ``near`` (sorted offsets, such as where references start), spans are
    listed only on the lines that hold one of them and the lines near those:
    the others are skipped in bulk, keeping what decides the rest (brackets,
    indentation, strings over lines), so the spans listed are exact.

    The work is linear in the text: Python steps in only at what regular
    expressions do not skip (quotes, ``#``, backslashes, brackets and
    indentation they cannot follow), and every failed attempt at a skip costs
    at most what is then read step by step.
    """
    n = len(text)
    spans: list[tuple[int, int]] = []
    append = spans.append
    count = text.count
    startswith = text.startswith
    skip_line, skip_lines, skip_negative = _SKIP_LINE.match, _SKIP_LINES.match, _SKIP_NEGATIVE.match
    parenlev = 0  # as in tokenize: it may go negative (then no line starts a statement)
    continued = False  # the line ended in a backslash
    # tokenize's ``needcont``: set by a string continued by a backslash, cleared
    # only when a string over lines ends (not when one is dropped)
    needcont = False
    indents = [0]
    dead: dict[str, int] = {}  # quote -> end of a line where it starts no string
    stops = _line_starts(text, near) if near is not None else []
    stop = last = 0  # the next offset at or after pos, and the last one near it
    pos = 0
    while True:
        # at the start of a line
        if parenlev == 0 and not continued:  # a new statement
            # Lines that are each a whole statement (or blank, or a comment), at
            # any indentation, in one match: up to the next line that holds an
            # offset (no spans needed), or from such a line on over the lines
            # near it (then with their spans).
            if near is None:
                limit = pos
                end = n
            else:
                while stop < len(stops) and stops[stop] < pos:
                    stop += 1
                limit = stops[stop] if stop < len(stops) else n
                end = limit
                if limit == pos < n:
                    last = max(last, stop)  # (kept between lines: each offset is looked at once)
                    while last + 1 < len(stops) and stops[last + 1] - stops[last] < _NEAR:
                        last += 1
                    end = min(stops[last] + _NEAR, n)
            match = _SIMPLE_LINES.match(text, pos, end)
            assert match is not None
            if match.end() > pos:
                # each dedent must land on an indentation it closes
                previous = None
                for indent in _STATEMENT_INDENTS(text, pos, match.end()):
                    if indent != previous:
                        previous = indent
                        column = _column(indent)
                        if column > indents[-1]:
                            indents.append(column)
                        elif column < indents[-1]:
                            if column not in indents:
                                return None  # IndentationError
                            while column < indents[-1]:
                                indents.pop()
                if limit == pos:
                    for token in _LINE_LITERALS(text, pos, match.end()):
                        if token.lastindex is not None:
                            append(token.span(token.lastindex))
                pos = match.end()
                continue
            match = _INDENT.match(text, pos)
            assert match is not None
            first = match.end()
            if first >= n:
                return spans  # at EOF, or a last line of only whitespace: tokenize stops
            char = text[first]
            if char in "#\r\n":  # a comment line, a blank one, or one tokenize skips
                line_end = text.find("\n", first) + 1 or n
                if char == "#":
                    append((first, first + len(text[first:line_end].rstrip("\r\n"))))
                pos = line_end
                continue
            column = first - pos if match.lastindex is None else _column(text[pos:first])
            if column != indents[-1]:
                if column > indents[-1]:
                    indents.append(column)
                elif column not in indents:
                    return None  # IndentationError: unindent does not match
                else:
                    while column < indents[-1]:
                        indents.pop()
            match = _STATEMENT[needcont].match(text, first)
            if match is not None:  # a whole statement, plain
                if match.end() <= limit:  # and more at this indentation
                    match = _STATEMENTS[needcont].match(text, pos, limit)
                    assert match is not None
                else:  # holding an offset: its strings and comments
                    for token in _LITERAL(text, first, match.end()):
                        append(token.span())
                pos = match.end()
                continue
            pos = first
        else:  # a continued statement
            if pos >= n:
                return None  # EOF in multi-line statement
            continued = False
        # token by token to the end of the line (inside brackets, of the line
        # that closes them: the lines inside change nothing)
        while True:
            if parenlev > 0:
                match = skip_lines(text, pos)
            else:
                match = (skip_line if parenlev == 0 else skip_negative)(text, pos)
            assert match is not None
            pos = match.end()
            if pos >= n:
                return None if parenlev else spans
            char = text[pos]
            if char == "\n":
                pos += 1
                break
            if char in "([{":
                if parenlev > 0:
                    # openers and code up to a closer, across lines (parenlev
                    # cannot come to 0 there): only how many matters
                    match = _OPENERS.match(text, pos)
                    assert match is not None
                    end = match.end()
                    parenlev += count("(", pos, end) + count("[", pos, end) + count("{", pos, end)
                else:
                    match = _OPENING.match(text, pos)
                    assert match is not None
                    end = match.end()
                    parenlev += end - pos
                pos = end
            elif char in ")]}":
                if parenlev < 0:
                    match = _CLOSERS.match(text, pos)
                    assert match is not None
                    end = match.end()
                    parenlev -= count(")", pos, end) + count("]", pos, end) + count("}", pos, end)
                else:
                    match = _CLOSING.match(text, pos)
                    assert match is not None
                    end = match.end()
                    parenlev -= end - pos
                pos = end
            elif char == "#":
                match = _COMMENT.match(text, pos)
                assert match is not None
                append(match.span())
                pos = match.end()
            elif char == "\\":
                if startswith("\n", pos + 1):
                    pos += 2
                elif startswith("\r\n", pos + 1):
                    pos += 3
                else:
                    pos += 1  # not before a newline: an error token
                    continue
                if not parenlev:
                    continued = True
                    break
            elif startswith(char * 3, pos):
                rest = _TRIPLE_REST[char]
                if not needcont:
                    match = rest.match(text, pos + 3)
                    if match is None:
                        return None  # EOF in multi-line string
                    append((pos, match.end()))
                    pos = match.end()
                    continue
                # tokenize's quirk: after a continued string was dropped, a
                # triple-quoted one goes on only over lines ending in a backslash
                line_end = text.find("\n", pos) + 1 or n
                match = rest.match(text, pos + 3, line_end)
                if match is not None:
                    append((pos, match.end()))
                    pos = match.end()
                    continue
                match = _TRIPLE_LINES[char].match(text, line_end)
                assert match is not None
                if match.end() >= n:
                    return None  # EOF in multi-line string
                line_end = text.find("\n", match.end()) + 1 or n
                closing = rest.match(text, match.end(), line_end)
                if closing is None:  # dropped with the rest of the line
                    pos = line_end
                    break
                append((pos, closing.end()))
                pos = closing.end()
                needcont = False
            elif dead.get(char, -1) > pos:
                pos += 1  # no string starts here: an error token
            else:
                match = _STRING[char].match(text, pos)
                if match is None:
                    # unterminated: the quote is an error token, and no later
                    # quote of its kind on this line starts a string either
                    dead[char] = text.find("\n", pos) + 1 or n
                    pos += 1
                elif match.end(1) - match.start(1) == 1:
                    append((pos, match.end()))
                    pos = match.end()
                else:  # continued on the next line by a backslash
                    needcont = True
                    start = pos
                    match = _STRING_LINES[char].match(text, match.end())
                    assert match is not None
                    pos = match.end()
                    if pos >= n:
                        return None  # EOF in multi-line string
                    line_end = text.find("\n", pos) + 1 or n
                    match = _STRING_REST[char].match(text, pos, line_end)
                    if match is not None:
                        append((start, match.end()))
                        pos = match.end()
                        needcont = False
                    else:
                        # neither ended nor continued: tokenize drops the string
                        # and the rest of this line as an error token
                        pos = line_end
                        break


def _line_starts(text: str, offsets: Sequence[int]) -> list[int]:
    """The start of the line of each of the (sorted) offsets."""
    starts: list[int] = []
    line_start = previous = 0
    for offset in offsets:
        line_start = text.rfind("\n", previous, offset) + 1 or line_start
        starts.append(line_start)
        previous = offset
    return starts


def _column(indent: str) -> int:
    """The column an indentation ends at, as tokenize counts it."""
    if "\t" not in indent and "\f" not in indent:
        return len(indent)
    column = 0
    for char in indent:
        if char == " ":
            column += 1
        elif char == "\t":
            column = (column // 8 + 1) * 8
        else:  # form feed
            column = 0
    return column


# What decides the tokens of Python source: quotes, "#", backslashes, brackets,
# and newlines outside brackets. Quantifiers are possessive (each parse here is
# unique), so a failed attempt costs its length once.
_CODE = r"[^'\"#\\()\[\]{}\n]"
_CODE_LINES = r"[^'\"#\\()\[\]{}]"
_JOIN = r"\\\r?\n"
"""A backslash that joins two lines."""
_COMMENT_TEXT = r"#[^\r\n]*+"
_ONE_LINE_STRINGS = (
    r"(?!''')'[^\n'\\]*+(?:\\.[^\n'\\]*+)*+'"
    r'|(?!""")"[^\n"\\]*+(?:\\.[^\n"\\]*+)*+"'
)
_STRINGS = (
    r"'''(?:[^'\\]|(?s:\\.)|'(?!''))*+'''"
    r'|"""(?:[^"\\]|(?s:\\.)|"(?!""))*+"""'
    rf"|{_ONE_LINE_STRINGS}"
)
"""A whole string: triple-quoted, or on one line."""
_ONE_LINE_TRIPLES = r"'''(?:[^'\\\n]|\\.|'(?!''))*+'''" r'|"""(?:[^"\\\n]|\\.|"(?!""))*+"""'


def _brackets(inside: str, depth: int = 5) -> str:
    """Balanced brackets up to ``depth`` deep, with ``inside`` them."""
    group = rf"[(\[{{](?:{inside})*+[)\]}}]"
    for _depth in range(depth - 1):
        group = rf"[(\[{{](?:{inside}|{group})*+[)\]}}]"
    return group


def _statements(strings: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Whole statements at one indentation (the first one's) with blank lines,
    and one whole statement after its indentation.

    A statement may go on over lines inside brackets (balanced ones; or ones
    that take parenlev below 0 and back, with none open over lines inside), and
    after a backslash; never over a string continued by a backslash.
    """
    inside = rf"{_CODE_LINES}++|{_JOIN}|{strings}|{_COMMENT_TEXT}"
    group = _brackets(inside)
    one_line = _brackets(rf"{_CODE}++|{_JOIN}|{strings}|{_COMMENT_TEXT}")
    inverted = rf"[)\]}}](?:{inside}|{one_line})*+[(\[{{]"
    inverted = rf"[)\]}}](?:{inside}|{one_line}|{inverted})*+[(\[{{]"
    line = (
        rf"(?=[^ \t\f#\r\n])"
        rf"(?:{_CODE}++|{_JOIN}|{group}|{inverted}|{strings}|{_COMMENT_TEXT})*+\n"
    )
    statements = rf"(?P<indent>[ \t\f]*+){line}(?:(?P=indent){line}|{_BLANK})*+"
    return re.compile(statements), re.compile(line)


_PLAIN_GROUP = _brackets(rf"{_CODE_LINES}++|{_JOIN}", 3)
"""Brackets with only code in them: skipped even token by token."""
_SKIP_LINE = re.compile(rf"(?:{_CODE}++|{_PLAIN_GROUP})*+")
_SKIP_LINES = re.compile(rf"(?:{_CODE_LINES}++|{_JOIN}|{_PLAIN_GROUP})*+")
"""With parenlev above 0: no newline inside brackets can start a statement."""
_SKIP_NEGATIVE = re.compile(rf"(?:{_CODE_LINES}++|{_JOIN}|{_brackets(rf'{_CODE}++|{_JOIN}', 3)})*+")
"""With parenlev below 0, brackets may bring it to 0 at a newline: only brackets
closed on their line are skipped whole."""
_OPENERS = re.compile(r"[^'\"#\\)\]}]*+")
_CLOSERS = re.compile(r"[^'\"#\\(\[{]*+")
_OPENING = re.compile(r"[(\[{]++")
_CLOSING = re.compile(r"[)\]}]++")
_BLANK = r"[ \t\f]*+(?:[#\r][^\n]*+)?\n"
"""A line that starts no statement: blank, a comment, or (tokenize's quirk) one
whose first character after the indentation is a carriage return."""
_STATEMENTS, _STATEMENT = zip(
    _statements(_STRINGS),
    _statements(f"{_ONE_LINE_TRIPLES}|{_ONE_LINE_STRINGS}"),
    strict=True,
)
"""By ``needcont``: with it, triple-quoted strings over lines are read token by
token (and so are, always, strings continued by a backslash)."""
_LITERAL = re.compile(rf"{_STRINGS}|{_COMMENT_TEXT}").finditer
"""The strings and comments of a whole statement."""
_INDENT = re.compile(r" *+(?:([\t\f])[ \t\f]*+)?")
_ONE_LINE = rf"{_ONE_LINE_TRIPLES}|{_ONE_LINE_STRINGS}|{_COMMENT_TEXT}"
_ONE_LINE_GROUP = _brackets(rf"{_CODE}++|{_ONE_LINE}")
_SIMPLE_LINES = re.compile(
    rf"(?:\n++|[ \t\f]*+(?:[#\r][^\n]*+|(?:{_CODE}++|{_ONE_LINE_GROUP}|{_ONE_LINE})*+)\n)*+"
)
"""Lines that each are a whole statement (or blank, or a comment)."""
_STATEMENT_INDENTS = re.compile(r"^([ \t\f]*+)[^ \t\f#\r\n]", re.MULTILINE).findall
"""The indentation of each statement among such lines."""
_LINE_LITERALS = re.compile(
    rf"^[ \t\f]*+\r[^\n]*+|^[ \t\f]*+(#[^\n]*?)\r*(?=\n)|({_STRINGS})|({_COMMENT_TEXT})",
    re.MULTILINE,
).finditer
"""The strings and comments among such lines (a comment line ends before its
last carriage returns, a line that starts with one has none)."""
_NEAR = 4096
"""Offsets this close are read together (the spans between them are listed)."""
_COMMENT = re.compile(_COMMENT_TEXT)
_TRIPLE_REST = {
    "'": re.compile(r"(?:[^'\\]|\\.|'(?!''))*+'''", re.DOTALL),
    '"': re.compile(r'(?:[^"\\]|\\.|"(?!""))*+"""', re.DOTALL),
}
"""The rest of a triple-quoted string (tokenize's ``Single3``/``Double3`` over
lines joined: a backslash that ends a line escapes its newline)."""
_STRING = {
    "'": re.compile(r"'[^\n'\\]*(?:\\.[^\n'\\]*)*('|\\\r?\n)"),
    '"': re.compile(r'"[^\n"\\]*(?:\\.[^\n"\\]*)*("|\\\r?\n)'),
}
"""A string on one line, or the first line of one a backslash continues
(tokenize's ``ContStr``, from the quote)."""
_STRING_REST = {
    "'": re.compile(r"[^'\\]*(?:\\.[^'\\]*)*'"),
    '"': re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"'),
}
"""The end of a continued string, on one line (tokenize's ``Single``/``Double``)."""
_STRING_LINES = {
    quote: re.compile(rf"(?:(?:[^{quote}\\\n]|\\[^\n])*+(?:\\\n|(?<=\\)\n|(?<=\\\r)\n))*+")
    for quote in "'\""
}
"""Lines that do not end a continued string and end in a backslash, so continue it."""
_TRIPLE_LINES = {
    quote: re.compile(
        rf"(?:(?:[^{quote}\\\n]|\\[^\n]|{quote}(?!{quote}{quote}))*+(?:\\\n|(?<=\\)\n|(?<=\\\r)\n))*+"
    )
    for quote in "'\""
}
"""Lines that do not end a triple-quoted string and end in a backslash."""


def find_chunk_refs_in(text: str, language: str) -> list[ChunkRef]:
    """References in a document: anywhere in prose, in strings and comments of
    Python."""
    refs = find_chunk_refs(text)
    if language != "python" or not refs:
        return refs
    spans = python_literal_spans(text, [ref.start for ref in refs])
    if spans is None:
        return refs
    kept: list[ChunkRef] = []
    position = 0
    for ref in refs:
        while position < len(spans) and spans[position][1] < ref.end:
            position += 1
        if position < len(spans) and spans[position][0] <= ref.start:
            kept.append(ref)
    return kept


def ref_at(refs: list[ChunkRef], offset: int) -> ChunkRef | None:
    """The reference covering a character offset (its end included; the first
    one where two touch). ``refs`` are in order and do not overlap."""
    at = bisect.bisect_right(refs, offset, key=_start_of)  # the refs starting after
    for ref in refs[max(at - 2, 0) : at]:
        if ref.end >= offset:
            return ref
    return None


_start_of = attrgetter("start")


def candidate_ids(ref: ChunkRef, doc_rel_path: str | None) -> Iterator[str]:
    """The chunk IDs a reference may mean, best first.

    ``doc_rel_path`` is the citing document's path relative to its folder (for
    ``#identity`` and for Markdown link targets, which may be document-relative).
    """
    if ref.form == "local":
        if doc_rel_path is not None:
            yield f"{doc_rel_path}#{ref.identity}"
        return
    yield ref.chunk_id
    if ref.form == "link" and doc_rel_path is not None:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(doc_rel_path), ref.path))
        if joined != ref.path and not joined.startswith("../") and joined != "..":
            yield f"{joined}#{ref.identity}"
    elif ref.form == "backtick" and not _PLAIN_PATH.fullmatch(ref.path):
        # A span such as `chunkls show app/x.py#function-f` reads as one ID with
        # a space in its path; the ID at its end, which a plain reading finds
        # (and did before such paths were read), is the next best.
        chunk_id = ref.chunk_id
        for inner in _plain_refs(chunk_id):
            if inner.end == len(chunk_id) and inner.form != "local":
                yield inner.chunk_id
