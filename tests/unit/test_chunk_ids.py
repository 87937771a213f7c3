"""Chunk-ID recognition: the fast matcher against the implementation it
replaced (kept below, verbatim, as the reference). The Python scanner's own
tests are in ``test_python_literals.py``.

The reference found chunk IDs with the same two regular expressions but more
work per match, and found Python strings and comments with ``tokenize``; the
new code must give identical results on every input.

IDs whose path holds a space, ``%``, ``+``, ... are read only delimited (a
whole backtick span, a whole Markdown link target): a plain, slow reading of
those forms (``reference_delimited``) joins the reference, which otherwise
stays as it was.
"""

from __future__ import annotations

import bisect
import itertools
import random
import re
import time
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunkls.chunking.suffixes import SUPPORTED_SUFFIXES, suffix_of
from chunkls.ids.grammar import (
    _LOCAL_ID,
    _PATH_ID,
    _SCHEME_BEFORE,
    MAX_IDENTITY,
    MAX_PATH,
    ChunkRef,
    Form,
    RootedRef,
    candidate_ids,
    find_chunk_refs,
    find_chunk_refs_in,
    id_written,
    ids_written,
    path_written,
    ref_at,
    typed_id_at,
    written_as,
)
from chunkls.index.citations import check_text
from chunkls.index.session import build_index
from tests.unit.strategies import write_tree
from tests.unit.tokenize_reference import reference_python_literal_spans, tokenize_is_the_reference

# --- the reference: chunk_ids.py before the rewrite (commit 6396fa9) ----------


def reference_find_chunk_refs(text: str) -> list[ChunkRef]:
    refs: list[ChunkRef] = []
    for match in _PATH_ID.finditer(text):
        start, end = match.span()
        path = match["path"]
        identity = match["identity"]
        if len(path) > MAX_PATH or len(identity) > MAX_IDENTITY:
            continue
        if suffix_of(path.rsplit("/", 1)[-1]) not in SUPPORTED_SUFFIXES:
            continue
        if start and _SCHEME_BEFORE.search(text, max(0, start - 64), start):
            continue  # part of a URL with a scheme: https://..., file:///...
        written = path
        while written.startswith("./"):
            written = written[2:]
        written = written.lstrip("/")
        if not written:
            continue
        refs.append(ChunkRef(start, end, written, identity, _reference_form(text, start, end)))
    for match in _LOCAL_ID.finditer(text):
        start, end = match.span()
        refs.append(ChunkRef(start, end, "", match["identity"], "local"))
    refs.sort()
    return refs


def reference_find_chunk_refs_in(text: str, language: str) -> list[ChunkRef]:
    refs = reference_find_chunk_refs(text)
    if language != "python" or not refs:
        return refs
    spans = reference_python_literal_spans(text)
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


def _reference_form(text: str, start: int, end: int) -> Form:
    before = text[max(0, start - 2) : start]
    after = text[end : end + 1]
    if before == "](" and after in (")", " ", '"'):
        return "link"
    if before.endswith("`") and after == "`":
        return "backtick"
    return "bare"


# --- the reference for delimited IDs: a plain reading, character by character --

_KINDS = re.compile(r"module-\d+|function-\w+|class-\w+|heading-\w+(?:-\w+)*")
_LINK_ENDS = (")", " ", '"')


def _code_span(text: str, i: int) -> tuple[int, int] | None:
    """The body of a span of single backticks on one line opening at ``i``."""
    if i and text[i - 1] == "`":
        return None
    j = i + 1
    while j < len(text) and text[j] not in "`\r\n":
        j += 1
    if j == i + 1 or j == len(text) or text[j] != "`" or text[j + 1 : j + 2] == "`":
        return None
    return i + 1, j


def _plain_unit(text: str, j: int, nested: bool) -> int | None:
    """The end of one unit of a plain link target at ``j``: a character, a
    backslash escape, or (not nested) parentheses holding such units."""
    if j >= len(text):
        return None
    char = text[j]
    if char == "\\":
        return j + 2 if "!" <= text[j + 1 : j + 2] <= "~" else None
    if char == "(" and not nested:
        k = j + 1
        while (after := _plain_unit(text, k, True)) is not None:
            k = after
        return k + 1 if text[k : k + 1] == ")" else None
    if char <= " " or char == "\x7f" or char in '()<>"':
        return None
    return j + 1


def _link_target(text: str, i: int) -> tuple[int, int, int] | None:
    """The target of a Markdown link whose ``](`` is at ``i``: where it is
    written, and where reading goes on after it."""
    k = i + 2
    if text[k : k + 1] == "<":
        j = k + 1
        while j < len(text) and text[j] not in "<>\r\n":
            if text[j] == "\\":
                if text[j + 1 : j + 2] in ("", "\r", "\n"):
                    return None  # a backslash escapes no line end
                j += 1
            j += 1
        if j < len(text) and text[j] == ">" and text[j + 1 : j + 2] in _LINK_ENDS:
            return k + 1, j, j + 1
        return None
    j = k
    while (after := _plain_unit(text, j, False)) is not None:
        j = after
    if j > k and text[j : j + 1] in _LINK_ENDS and text[j : j + 1]:
        return k, j, j
    return None


def _reference_delimited_ref(
    written: str, start: int, form: Form
) -> tuple[ChunkRef | None, tuple[int, int] | None]:
    """The ID a delimited text is, and the span the plain reading leaves alone."""
    if form == "backtick":
        if "#" not in written:
            return None, None
        stripped = written.lstrip(" ")
        start += len(written) - len(stripped)
        written = stripped.rstrip(" ")
    path, _, identity = written.partition("#")
    span = (start, start + len(written))
    if not path or len(identity) > MAX_IDENTITY or not _KINDS.fullmatch(identity):
        return None, None
    if re.fullmatch(r"[\w.\-/]*", path):
        return None, None  # the plain reading's
    claimed = span if form == "link" else None
    if form == "link":
        path = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", path)
        try:
            path = urllib.parse.unquote(path, errors="strict")
        except UnicodeDecodeError:
            return None, claimed
    if len(path) > MAX_PATH or any(c < " " or c in "\x7f#`" for c in path):
        return None, claimed
    if suffix_of(path.rsplit("/", 1)[-1]) not in SUPPORTED_SUFFIXES:
        return None, claimed
    while path.startswith("./"):
        path = path[2:]
    path = path.lstrip("/")
    if not path or path.startswith("~") or _url_like(path):
        return None, claimed
    return ChunkRef(*span, path, identity, form), span


def _url_like(path: str) -> bool:
    """A scheme at the start or after white space (not followed by white
    space), or ``://`` anywhere."""
    if "://" in path:
        return True
    for p in range(len(path)):
        if p and not path[p - 1].isspace():
            continue
        scheme = re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", path[p:])
        if scheme and not path[p + scheme.end() : p + scheme.end() + 1].isspace():
            return True
    return False


def reference_delimited(text: str) -> tuple[list[ChunkRef], list[tuple[int, int]]]:
    """The delimited IDs, and the spans whose plain reading gives way."""
    refs: list[ChunkRef] = []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        found: tuple[ChunkRef | None, tuple[int, int] | None] | None = None
        if text[i] == "`" and (body := _code_span(text, i)) is not None:
            found = _reference_delimited_ref(text[body[0] : body[1]], body[0], "backtick")
            i = body[1] + 1
        elif text.startswith("](", i) and (target := _link_target(text, i)) is not None:
            found = _reference_delimited_ref(text[target[0] : target[1]], target[0], "link")
            i = target[2]
        else:
            i += 1
        if found is not None:
            ref, span = found
            if ref is not None:
                refs.append(ref)
            if span is not None:
                spans.append(span)
    return refs, spans


def reference_find_all_refs(text: str) -> list[ChunkRef]:
    """The reference, with the delimited IDs: the plain reading of any text
    inside one (its tail) gives way."""
    delimited, spans = reference_delimited(text)
    kept = [ref for ref in reference_find_chunk_refs(text) if not _inside(ref, spans)]
    return sorted(kept + delimited)


def _inside(ref: ChunkRef, spans: list[tuple[int, int]]) -> bool:
    """Whether a reference lies in one of some sorted, disjoint spans."""
    at = bisect.bisect_right(spans, ref.start, key=lambda span: span[0]) - 1
    return at >= 0 and spans[at][0] <= ref.start and ref.end <= spans[at][1]


def reference_find_all_refs_in(text: str, language: str) -> list[ChunkRef]:
    refs = reference_find_all_refs(text)
    if language != "python" or not refs:
        return refs
    spans = reference_python_literal_spans(text)
    if spans is None:
        return refs
    return [ref for ref in refs if _inside(ref, spans)]


# --- helpers -------------------------------------------------------------------


# --- markdown: the matcher ---------------------------------------------------

ID_TOKENS = [
    "app/greet.py#function-greet",
    "a.py#b",
    "a.py#function-",
    "a.py#module-12",
    "a.py#module-12x",
    "A.PY#class-C",
    "x.MarkDown#heading-a-b-",
    "#heading-setup",
    "#heading-Set-up",
    "#module-1",
    "#class-C",
    "../x.md#heading-a",
    "/abs.py#class-C",
    "./dot.py#function-f",
    "././/a.md#heading-x",
    "~/home.py#module-1",
    "https://h/a.py#function-f",
    "file:///a.py#class-b",
    "x:a.py#class-b",
    "1:a.py#class-b",
    "+a:a.py#class-b",
    "[l](a.md#heading-x)",
    "](a.md#heading-x",
    "`a.py#function-b`",
    ".py",
    ".md#function-f",
    "a/.py#function-f",
    "a..py#function-f",
    "a.py.#function-f",
    "a.txt#function-f",
    "#",
    "-",
    "/",
    ".",
    "./",
    "..",
    ":",
    "](",
    "(",
    "]",
    ")",
    '"',
    "`",
    "~",
    "\x00",
    "\n",
    "\r\n",
    " ",
    "é",
    "😀",
    "_",
    "٣",
    "K",  # Kelvin sign: lowercases to "k"
]

id_texts = st.lists(st.sampled_from(ID_TOKENS) | st.text(max_size=3), max_size=40).map("".join)


@settings(max_examples=1000, derandomize=True, deadline=None, database=None)
@given(text=id_texts)
@example("a.MARKDOWN#heading-x")
@example("x" * (MAX_PATH - 3) + ".py#function-" + "y" * (MAX_IDENTITY - 9))
@example("x" * (MAX_PATH - 2) + ".py#function-" + "y" * (MAX_IDENTITY - 8))
@example("ab:" + "c" * 70 + "://a.py#class-C")
@example("a" * 62 + ":a.py#class-C")
@example("a" * 64 + "1:a.py#class-C")
def test_the_matcher_equals_the_reference(text: str) -> None:
    assert find_chunk_refs(text) == reference_find_all_refs(text)
    assert find_chunk_refs_in(text, "markdown") == reference_find_all_refs_in(text, "markdown")


def test_refs_are_chunk_refs() -> None:
    refs = find_chunk_refs("see [x](app/a.py#function-f) and `b.md#heading-x` #class-C")
    assert [type(ref) for ref in refs] == [ChunkRef] * 3
    assert [(ref.form, ref.chunk_id) for ref in refs] == [
        ("link", "app/a.py#function-f"),
        ("backtick", "b.md#heading-x"),
        ("local", "#class-C"),
    ]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("x = 1  # see a.py#function-f\n", ["a.py#function-f"]),
        ("x = 'a.py#function-f'\n", ["a.py#function-f"]),
        ("a.py#function-f\n", []),
        ("x = (\na.py#function-f\n", ["a.py#function-f"]),  # no tokens: every ref counts
    ],
)
def test_python_documents_keep_references_in_strings_and_comments(
    text: str, kept: list[str]
) -> None:
    assert [ref.chunk_id for ref in find_chunk_refs_in(text, "python")] == kept


# --- delimited IDs: paths with spaces, %, +, ... ---------------------------------

CONTROL = "`ok dir/x y.md#heading-ok`"
"""A delimited ID after each negative (on its own line): it is still found."""
CONTROL_REF = ("ok dir/x y.md#heading-ok", "ok dir/x y.md", "heading-ok", "backtick")


def _shown(text: str) -> list[tuple[str, str, str, Form]]:
    return [(text[r.start : r.end], r.path, r.identity, r.form) for r in find_chunk_refs(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # in backticks: the whole span, whatever the path holds but ` # and line ends
        (
            "see `Meeting Notes/q3 plan.md#heading-goals` now",
            [
                (
                    "Meeting Notes/q3 plan.md#heading-goals",
                    "Meeting Notes/q3 plan.md",
                    "heading-goals",
                    "backtick",
                )
            ],
        ),
        (
            "`sub dir/a b.py#function-sp`",
            [("sub dir/a b.py#function-sp", "sub dir/a b.py", "function-sp", "backtick")],
        ),
        (
            "`100% done.md#heading-x`",
            [("100% done.md#heading-x", "100% done.md", "heading-x", "backtick")],
        ),
        (
            "`c++ notes.md#module-3`",
            [("c++ notes.md#module-3", "c++ notes.md", "module-3", "backtick")],
        ),
        ("`a+b.py#class-C`", [("a+b.py#class-C", "a+b.py", "class-C", "backtick")]),
        (
            "`me@host.md#heading-x`",
            [("me@host.md#heading-x", "me@host.md", "heading-x", "backtick")],
        ),
        ("`f(1).py#function-f`", [("f(1).py#function-f", "f(1).py", "function-f", "backtick")]),
        ("`a,b;c.md#heading-x`", [("a,b;c.md#heading-x", "a,b;c.md", "heading-x", "backtick")]),
        ("`it's.md#heading-x`", [("it's.md#heading-x", "it's.md", "heading-x", "backtick")]),
        ("`a&b=c!.md#heading-x`", [("a&b=c!.md#heading-x", "a&b=c!.md", "heading-x", "backtick")]),
        (
            "`[draft] x.md#heading-x`",
            [("[draft] x.md#heading-x", "[draft] x.md", "heading-x", "backtick")],
        ),
        (
            "`q3: plan.md#heading-x`",
            [("q3: plan.md#heading-x", "q3: plan.md", "heading-x", "backtick")],
        ),
        (
            "`Notizen/Überblick 2024.md#heading-ziele`",
            [
                (
                    "Notizen/Überblick 2024.md#heading-ziele",
                    "Notizen/Überblick 2024.md",
                    "heading-ziele",
                    "backtick",
                )
            ],
        ),
        (
            "`日本 語/メモ 1.md#heading-概要`",
            [("日本 語/メモ 1.md#heading-概要", "日本 語/メモ 1.md", "heading-概要", "backtick")],
        ),
        ("`😀 x.py#function-f`", [("😀 x.py#function-f", "😀 x.py", "function-f", "backtick")]),
        (
            "`a b/c d/e f.markdown#heading-a-b-c`",
            [
                (
                    "a b/c d/e f.markdown#heading-a-b-c",
                    "a b/c d/e f.markdown",
                    "heading-a-b-c",
                    "backtick",
                )
            ],
        ),
        ("`A B.PY#module-12`", [("A B.PY#module-12", "A B.PY", "module-12", "backtick")]),
        (
            "`a b.md#heading-Set-Up`",
            [("a b.md#heading-Set-Up", "a b.md", "heading-Set-Up", "backtick")],
        ),
        # the span covers "./" and "/" as the plain forms do; the path leaves them out
        (
            "`./my dir/x.py#function-f`",
            [("./my dir/x.py#function-f", "my dir/x.py", "function-f", "backtick")],
        ),
        (
            "`/my dir/x.py#function-f`",
            [("/my dir/x.py#function-f", "my dir/x.py", "function-f", "backtick")],
        ),
        (
            "`../my dir/x.py#function-f`",
            [("../my dir/x.py#function-f", "../my dir/x.py", "function-f", "backtick")],
        ),
        # spaces at either end of the span are left out (CommonMark strips one each side)
        ("` a b.md#heading-x `", [("a b.md#heading-x", "a b.md", "heading-x", "backtick")]),
        ("`  a b.md#heading-x`", [("a b.md#heading-x", "a b.md", "heading-x", "backtick")]),
        ("`a b.md#heading-x   `", [("a b.md#heading-x", "a b.md", "heading-x", "backtick")]),
        # Markdown link targets: in angle brackets, or plain (percent-encoded)
        (
            "[goals](<Meeting Notes/q3 plan.md#heading-goals>)",
            [
                (
                    "Meeting Notes/q3 plan.md#heading-goals",
                    "Meeting Notes/q3 plan.md",
                    "heading-goals",
                    "link",
                )
            ],
        ),
        (
            "[goals](Meeting%20Notes/q3%20plan.md#heading-goals)",
            [
                (
                    "Meeting%20Notes/q3%20plan.md#heading-goals",
                    "Meeting Notes/q3 plan.md",
                    "heading-goals",
                    "link",
                )
            ],
        ),
        ('[x](<a b.md#heading-x> "title")', [("a b.md#heading-x", "a b.md", "heading-x", "link")]),
        (
            '[x](a%20b.md#heading-x "title")',
            [("a%20b.md#heading-x", "a b.md", "heading-x", "link")],
        ),
        ("![img](<a b.md#heading-x>)", [("a b.md#heading-x", "a b.md", "heading-x", "link")]),
        ("[x](a+b.py#function-f)", [("a+b.py#function-f", "a+b.py", "function-f", "link")]),
        ("[x](me@x,y.md#heading-x)", [("me@x,y.md#heading-x", "me@x,y.md", "heading-x", "link")]),
        ("[x](f(1).md#heading-x)", [("f(1).md#heading-x", "f(1).md", "heading-x", "link")]),
        ("[x](f\\(1.md#heading-x)", [("f\\(1.md#heading-x", "f(1.md", "heading-x", "link")]),
        (
            "[x](\\{a\\}\\~.md#heading-x)",
            [("\\{a\\}\\~.md#heading-x", "{a}~.md", "heading-x", "link")],
        ),
        ("[x](a\\b.md#heading-x)", [("a\\b.md#heading-x", "a\\b.md", "heading-x", "link")]),
        (
            "[x](<a\\>b c.md#heading-x>)",
            [("a\\>b c.md#heading-x", "a>b c.md", "heading-x", "link")],
        ),
        ("[x](<a%20b c.md#class-C>)", [("a%20b c.md#class-C", "a b c.md", "class-C", "link")]),
        (
            "[x](caf%C3%A9%20bar.py#module-1)",
            [("caf%C3%A9%20bar.py#module-1", "café bar.py", "module-1", "link")],
        ),
        ("[x](<./a b.md#heading-x>)", [("./a b.md#heading-x", "a b.md", "heading-x", "link")]),
        # several on a line, with the plain forms around them
        (
            "`a b.py#function-f` and a.py#class-C and [l](<c d.md#heading-x>) #module-1",
            [
                ("a b.py#function-f", "a b.py", "function-f", "backtick"),
                ("a.py#class-C", "a.py", "class-C", "bare"),
                ("c d.md#heading-x", "c d.md", "heading-x", "link"),
                ("#module-1", "", "module-1", "local"),
            ],
        ),
    ],
)
def test_delimited_ids_with_any_path(text: str, expected: list[tuple[str, str, str, Form]]) -> None:
    assert _shown(text) == expected
    # one reference each: the tail of the path ("b.py#function-sp") is not another
    assert find_chunk_refs(text) == reference_find_all_refs(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # not an ID in backticks: found as before (a plain tail, or nothing)
        ("`a b.txt#heading-x`", []),  # no corpus suffix
        ("`a b.md.#heading-x`", []),
        ("`a b/.md#heading-x`", []),
        ("`a b.md#x`", []),  # no identity kind
        ("`a b.md#heading-`", []),
        ("`a b.md#Heading-x`", []),
        ("`a b.md#`", []),
        ("`a b.md#function-f g`", [("b.md#function-f", "b.md", "function-f", "bare")]),
        ("`a b\nc.md#heading-x`", [("c.md#heading-x", "c.md", "heading-x", "bare")]),  # two lines
        ("`a b\r\nc.md#heading-x`", [("c.md#heading-x", "c.md", "heading-x", "bare")]),
        ("`a b.md#heading-x\n`", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("`#heading-x`", [("#heading-x", "", "heading-x", "local")]),  # the local form
        ("` #heading-x `", [("#heading-x", "", "heading-x", "local")]),
        ("`a b/#heading-x`", []),  # no file name
        ("`./#heading-x`", []),  # an empty path
        ("` / #heading-x`", [("#heading-x", "", "heading-x", "local")]),
        ("`.md#heading-x`", []),
        ("``a b.md#heading-x``", [("b.md#heading-x", "b.md", "heading-x", "bare")]),  # double
        ("`a b.md#heading-x``", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("`a`b c.md#heading-x`", [("c.md#heading-x", "c.md", "heading-x", "bare")]),  # `a` pairs
        ("`a#b c.md#heading-x`", [("c.md#heading-x", "c.md", "heading-x", "bare")]),
        ("`https://h/a b.md#heading-x`", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("`see file:a b.md#heading-x`", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("`C:/a b.md#heading-x`", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("`x:a b.md#heading-x`", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("`~/my notes.md#heading-x`", [("notes.md#heading-x", "notes.md", "heading-x", "bare")]),
        ("`a\tb.md#heading-x`", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("`a\x00b.md#heading-x`", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        # not a link target (CommonMark's rules), so not one
        ("[x](a b.md#heading-x)", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("(<a b.md#heading-x>)", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("[x](<a b.md#heading-x>", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("[x](<a b.md#heading-x>x)", [("b.md#heading-x", "b.md", "heading-x", "bare")]),
        ("[x](<a\nb c.md#heading-x>)", [("c.md#heading-x", "c.md", "heading-x", "bare")]),
        ("`[x](<a b.md#heading-x>)`", [("b.md#heading-x", "b.md", "heading-x", "bare")]),  # code
        # a link target of that shape that is no ID: none of it is one
        ("[x](<a b.txt#heading-x>)", []),
        ("[x](https://h/a%20b.md#heading-x)", []),
        ("[x](<https://h/a b.md#heading-x>)", []),
        ("[x](mailto:a+b.md#heading-x)", []),
        ("[x](a%20b.md#heading%2Dx)", []),  # the identity is never decoded
        ("[x](<~/a b.md#heading-x>)", []),
        # plain links and angle brackets with a plain path: as before
        ("[x](a.md#heading-x)", [("a.md#heading-x", "a.md", "heading-x", "link")]),
        ("[x](<a.md#heading-x>)", [("a.md#heading-x", "a.md", "heading-x", "bare")]),
        ("`a.py#function-b`", [("a.py#function-b", "a.py", "function-b", "backtick")]),
        ("` a.py#function-b `", [("a.py#function-b", "a.py", "function-b", "bare")]),
    ],
)
def test_what_is_no_delimited_id(text: str, expected: list[tuple[str, str, str, Form]]) -> None:
    whole = f"{text}\n{CONTROL}\n"
    assert _shown(whole) == [*expected, CONTROL_REF]
    assert find_chunk_refs(whole) == reference_find_all_refs(whole)


@pytest.mark.parametrize(
    ("target", "path"),
    [
        ("a%20b.md", "a b.md"),
        ("a%2fb%20c.md", "a/b c.md"),
        ("caf%C3%A9.md", "café.md"),
        ("caf%c3%a9.md", "café.md"),
        ("%F0%9F%98%80.py", "😀.py"),
        ("100%25.md", "100%.md"),
        ("100%.md", "100%.md"),  # "%" before no two hex digits: itself
        ("a%2.md", "a%2.md"),
        ("a%zz.md", "a%zz.md"),
        ("a%2B%2b.md", "a++.md"),
        ("%2Ea%20b.md", ".a b.md"),
        ("a%2Emd", "a.md"),  # the suffix, decoded
        # ".." and leading "/" and "./" exactly as written without percent-encoding
        ("%2E%2E%2Fa%20b.md", "../a b.md"),
        ("..%2F..%2Fa%20b.md", "../../a b.md"),
        ("%2Fa%20b.md", "a b.md"),
        ("%2F%2Fa%20b.md", "a b.md"),
        ("%2E%2Fa%20b.md", "a b.md"),
        ("./%2E/a%20b.md", "a b.md"),
        ("a/..%2F..%2Fb%20c.md", "a/../../b c.md"),
        ("%5C..%5Ca%20b.md", "\\..\\a b.md"),
        # not UTF-8, or decoding to what no path holds: nothing
        ("a%FF.md", None),
        ("a%C3.md", None),  # cut short
        ("a%C3%28.md", None),
        ("%C0%AF..%C0%AFa.md", None),  # an overlong "/"
        ("%E0%80%AFa.md", None),
        ("%ED%A0%80a.md", None),  # a surrogate
        ("a%00b.md", None),
        ("a%0Ab.md", None),
        ("a%0D%0Ab.md", None),
        ("a%09b.md", None),
        ("a%7Fb.md", None),
        ("a%23b.md", None),  # "#"
        ("a%60b.md", None),  # "`"
        ("a%20b.md%20", None),  # no corpus suffix
        ("%2E%2F", None),
        ("%2E%2Fx", None),
        ("%7E/a%20b.md", None),  # "~/"
        ("https:%2F%2Fh/a%20b.md", None),
        ("https%3A//h/a.md", None),
    ],
)
def test_percent_decoding_of_link_targets(target: str, path: str | None) -> None:
    text = f"see [x]({target}#heading-x) and\n{CONTROL}\n"
    refs = find_chunk_refs(text)
    assert refs[-1] == ChunkRef(text.index("`") + 1, len(text) - 2, *CONTROL_REF[1:])
    if path is None:
        assert refs[:-1] == []  # neither the whole target nor its tail
    else:
        assert refs[:-1] == [ChunkRef(8, 8 + len(target) + 10, path, "heading-x", "link")]
    assert refs == reference_find_all_refs(text)


@pytest.mark.parametrize(
    ("text", "written_plainly", "candidates"),
    [
        # a link target: root-relative, then relative to docs/guide.md, with ".."
        # and a leading "/" taken as in the same target written without spaces
        ("[x](<a b.md#heading-x>)", "[x](ab.md#heading-x)", ["a b.md", "docs/a b.md"]),
        ("[x](../a%20b.md#heading-x)", "[x](../ab.md#heading-x)", ["../a b.md", "a b.md"]),
        ("[x](..%2Fa%20b.md#heading-x)", "[x](../ab.md#heading-x)", ["../a b.md", "a b.md"]),
        ("[x](<../a b.md#heading-x>)", "[x](../ab.md#heading-x)", ["../a b.md", "a b.md"]),
        ("[x](..%2F..%2Fa%20b.md#heading-x)", "[x](../../ab.md#heading-x)", ["../../a b.md"]),
        ("[x](<../../a b.md#heading-x>)", "[x](../../ab.md#heading-x)", ["../../a b.md"]),
        # (a leading "/" is first an absolute path: a workspace root's, if one holds it)
        (
            "[x](%2Fa%20b.md#heading-x)",
            "[x](/ab.md#heading-x)",
            ["/a b.md", "a b.md", "docs/a b.md"],
        ),
        ("[x](<./a b.md#heading-x>)", "[x](./ab.md#heading-x)", ["a b.md", "docs/a b.md"]),
        ("[x](%2E%2Fa%20b.md#heading-x)", "[x](./ab.md#heading-x)", ["a b.md", "docs/a b.md"]),
        (
            "[x](c/..%2F..%2Fa%20b.md#heading-x)",
            "[x](c/../../ab.md#heading-x)",
            ["c/../../a b.md", "a b.md"],
        ),
    ],
)
def test_link_targets_resolve_as_written_plainly(
    text: str, written_plainly: str, candidates: list[str]
) -> None:
    [ref] = find_chunk_refs(text)
    [plain] = find_chunk_refs(written_plainly)
    assert ref.form == plain.form == "link"
    expected = [f"{path}#heading-x" for path in candidates]
    assert list(candidate_ids(ref, "docs/guide.md")) == expected
    assert list(candidate_ids(plain, "docs/guide.md")) == [c.replace("a b", "ab") for c in expected]


@pytest.mark.parametrize(
    ("text", "candidates"),
    [
        # in backticks: root-relative; then the ID a plain reading finds at its end
        # (a command such as `chunkls show app/x.py#function-f` cites that one)
        ("`sub dir/a b.py#function-sp`", ["sub dir/a b.py#function-sp", "b.py#function-sp"]),
        (
            "`chunkls show app/x.py#function-f`",
            ["chunkls show app/x.py#function-f", "app/x.py#function-f"],
        ),
        ("`see ./app/x.py#function-f`", ["see ./app/x.py#function-f", "app/x.py#function-f"]),
        ("`a+b.py#function-f`", ["a+b.py#function-f", "b.py#function-f"]),
        ("`100% done.md#heading-x`", ["100% done.md#heading-x", "done.md#heading-x"]),
        ("`see ~/a.py#function-f`", ["see ~/a.py#function-f"]),
        ("`x (a).py#function-f`", ["x (a).py#function-f"]),
    ],
)
def test_candidates_of_ids_in_backticks(text: str, candidates: list[str]) -> None:
    [ref] = find_chunk_refs(text)
    assert ref.form == "backtick"
    assert list(candidate_ids(ref, "docs/guide.md")) == candidates


@pytest.mark.parametrize(
    ("text", "candidates"),
    [
        # a leading "/": first as an absolute path (a workspace root's, if one holds
        # it: ``Queries.lookup``), then from the root as ever
        (
            "/home/me/repo/app/x.py#function-f",
            ["/home/me/repo/app/x.py#function-f", "home/me/repo/app/x.py#function-f"],
        ),
        ("/app/x.py#function-f", ["/app/x.py#function-f", "app/x.py#function-f"]),
        (
            "`/srv/a b/x.py#function-f`",
            ["/srv/a b/x.py#function-f", "srv/a b/x.py#function-f", "b/x.py#function-f"],
        ),
        ("[x](/srv/x.py#heading-a)", ["/srv/x.py#heading-a", "srv/x.py#heading-a"]),
        ("[x](</srv/a%20b.md#heading-a>)", ["/srv/a b.md#heading-a", "srv/a b.md#heading-a"]),
        # no leading "/": root-relative only
        ("./app/x.py#function-f", ["app/x.py#function-f"]),
        ("home/me/app/x.py#function-f", ["home/me/app/x.py#function-f"]),
        ("`a b/x.py#function-f`", ["a b/x.py#function-f", "b/x.py#function-f"]),
    ],
)
def test_an_id_written_with_a_leading_slash_is_first_read_as_absolute(
    text: str, candidates: list[str]
) -> None:
    [ref] = ids_written(text)
    assert isinstance(ref, RootedRef) == text.lstrip("`[x](<").startswith("/")
    assert list(candidate_ids(ref, None)) == candidates
    # a RootedRef is equal to the ChunkRef of its fields (its path without the "/")
    assert ref == ChunkRef(*ref) and not ref.path.startswith("/")


def test_the_chunkers_ids_resolve_delimited(tmp_path: Path) -> None:
    """IDs the chunker makes for such paths, written delimited, resolve; a
    wrong one is reported at the range the editor highlights."""
    write_tree(
        tmp_path,
        {
            "Meeting Notes/q3 plan.md": "# Goals\n\nShip.\n",
            "sub dir/a b.py": "def sp():\n    return 1\n",
            "odd/c++ & co (v2), me@x.md": "# Intro\n\nHi.\n",
            "docs/guide.md": "",
        },
    )
    index = build_index([tmp_path])
    folder = index.queries.folders[0]
    ids = sorted(chunk_id for chunk_id in set(index.queries.chunk_ids()) if " " in chunk_id)
    assert ids == [
        "Meeting Notes/q3 plan.md#heading-goals",
        "odd/c++ & co (v2), me@x.md#heading-intro",
        "sub dir/a b.py#function-sp",
    ]
    quoted = [urllib.parse.quote(chunk_id, safe="/#") for chunk_id in ids]
    text = "\n".join(
        [f"`{chunk_id}`" for chunk_id in ids]
        + [f"[x](<../{chunk_id}>)" for chunk_id in ids]
        + [f"[x](../{chunk_id})" for chunk_id in quoted]
        + ["`sub dir/a b.py#function-gone` and [x](../sub%20dir/a%20b.py#class-Gone)"]
    )
    refs = find_chunk_refs_in(text, "markdown")
    assert [ref.chunk_id for ref in refs[:-2]] == ids + [f"../{i}" for i in ids] * 2
    problems = check_text(index.queries, text, "markdown", folder, "docs/guide.md")
    assert [(p.chunk_id, text[p.ref.start : p.ref.end]) for p in problems] == [
        ("sub dir/a b.py#function-gone", "sub dir/a b.py#function-gone"),
        ("../sub dir/a b.py#class-Gone", "../sub%20dir/a%20b.py#class-Gone"),
    ]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("x = 1  # see `a b.py#function-f`\n", ["a b.py#function-f"]),
        ("x = 1  # see [l](<a b.md#heading-x>)\n", ["a b.md#heading-x"]),
        ("x = '`a b.py#function-f`'\n", ["a b.py#function-f"]),
        ('x = "[l](a%20b.md#heading-x)"\n', ["a b.md#heading-x"]),
        ("y = [x](a%20b.md#heading-x)\n)\n", []),  # in code: a call, then a comment
        ("y = `a b.py#function-f`\n", []),  # in code ("#function-f`" is a comment)
        ("y = f(x)  # `a b.py#function-f\n`\n", ["b.py#function-f"]),  # no span: as before
    ],
)
def test_python_keeps_delimited_ids_in_strings_and_comments(text: str, kept: list[str]) -> None:
    text += "# and `ok dir/x y.py#class-Ok`\n"
    refs = find_chunk_refs_in(text, "python")
    assert [ref.chunk_id for ref in refs] == [*kept, "ok dir/x y.py#class-Ok"]
    assert refs == reference_find_all_refs_in(text, "python")


DELIMITED_TOKENS = [
    "`",
    "``",
    " ",
    "  ",
    "#",
    "](",
    "[x](",
    "<",
    ">",
    "(",
    ")",
    '"',
    "\\",
    "\\(",
    "\\>",
    "\\~",
    "\\é",
    "\x7f",
    "%",
    "%20",
    "%2F",
    "%2E",
    "%C3%A9",
    "%FF",
    "%00",
    "%23",
    "..",
    "./",
    "/",
    "~",
    "https:",
    "://",
    "x:",
    "\n",
    "\r\n",
    "\t",
    "\x00",
    "é",
    "+",
    "@",
    "a",
    "a b",
    ".md",
    ".py",
    ".txt",
    "#heading-x",
    "#heading-",
    "#class-C",
    "#module-1",
    "#function-f",
    "a b.md#heading-x",
    "a.py#function-f",
    "`a b.py#class-C`",
    "[l](<a b.md#heading-x>)",
    "[l](a%20b.md#heading-x)",
]

delimited_texts = st.lists(
    st.sampled_from(DELIMITED_TOKENS) | st.text(max_size=2), max_size=30
).map("".join)


@settings(max_examples=3000, derandomize=True, deadline=None, database=None)
@given(text=delimited_texts)
@example("`a b.md#heading-x` `c d.md#heading-y`")
@example("`a` `b c.md#heading-x` `")
@example("[x](<a\\\\> b.md#heading-x>)")
@example("[x](a(b)(c d.md#heading-x)")
@example("[x]((a b.md#heading-x)")
@example("[x](<a b.md#heading-x>)[y](c%20d.md#heading-x)")
@example("`" + "p" * (MAX_PATH - 4) + " .md#heading-" + "i" * (MAX_IDENTITY - 8) + "`")
@example("`" + "p" * (MAX_PATH - 3) + " .md#heading-" + "i" * (MAX_IDENTITY - 8) + "`")
@example("[x](" + "%20" * (MAX_PATH - 3) + ".md#heading-x)")
@example("[x](" + "%20" * (MAX_PATH - 2) + ".md#heading-x)")
def test_delimited_ids_equal_a_plain_reading(text: str) -> None:
    refs = find_chunk_refs(text)
    assert refs == reference_find_all_refs(text)
    assert find_chunk_refs_in(text, "markdown") == refs
    for previous, ref in itertools.pairwise(refs):
        assert previous.end <= ref.start  # no overlaps


@tokenize_is_the_reference
@settings(max_examples=500, derandomize=True, deadline=None, database=None)
@given(text=delimited_texts)
def test_delimited_ids_in_python_equal_a_plain_reading(text: str) -> None:
    assert find_chunk_refs_in(text, "python") == reference_find_all_refs_in(text, "python")


ADVERSARIAL_UNITS = {
    "backticks": "`",
    "backtick spaces": "` ",
    "backtick hashes": "`#",
    "backticks, hashes, spaces": "`` # ` `#",
    "an unclosed span": "`a b.md#heading-x",
    "near IDs in spans": "`a b.md#heading-` ",
    "IDs in spans": "`a b.md#heading-x` ",
    "IDs in links": "[x](<a b.md#heading-x>) [y](a%20b.md#heading-x) ",
    "open angle targets": "](<",
    "open targets": "](",
    "open parentheses": "](a(",
    "escaped parentheses": "](\\(\\(",
    "backslashes": "](<\\\\\\",
    "percent runs": "[x](a%C3%",
    "undecodable targets": "[x](a%FF.md#heading-x)",
}


@pytest.mark.parametrize("name", list(ADVERSARIAL_UNITS))
def test_a_long_adversarial_line_is_read_in_one_pass(name: str) -> None:
    """200 KB on one line, then an ID: the right references (against the plain
    reading, which is linear too). The pattern is linear by construction:
    every scan stops at the next backtick or line end, or at the next ``<``,
    ``>`` or parenthesis; the time is measured for the record only."""
    unit = ADVERSARIAL_UNITS[name]
    line = (unit * (200_000 // len(unit) + 1))[:200_000]
    text = f"{line}\n`last one.md#heading-x`"
    started = time.perf_counter()
    refs = find_chunk_refs(text)
    elapsed = time.perf_counter() - started
    print(f"{name}: {elapsed * 1000:.1f} ms, {len(refs)} refs")
    assert refs == reference_find_all_refs(text)
    assert refs[-1] == ChunkRef(
        len(line) + 2, len(text) - 1, "last one.md", "heading-x", "backtick"
    )


def test_a_long_adversarial_mixed_line() -> None:
    """Backticks, "#" and spaces at random, 200 KB: the same references as the
    plain reading, and every delimited ID planted in it."""
    rng = random.Random(5)
    parts = []
    planted = []
    size = 0
    while size < 200_000:
        if rng.random() < 0.01:
            chunk_id = f"dir {len(planted)}/a b.md#heading-x{len(planted)}"
            planted.append(chunk_id)
            part = f" `{chunk_id}` "
        else:
            part = "".join(rng.choice("`# ") for _ in range(rng.randrange(1, 20)))
        parts.append(part)
        size += len(part)
    text = "".join(parts)
    started = time.perf_counter()
    refs = find_chunk_refs(text)
    elapsed = time.perf_counter() - started
    print(f"mixed: {elapsed * 1000:.1f} ms, {len(refs)} refs")
    assert refs == reference_find_all_refs(text)
    found = {ref.chunk_id for ref in refs}
    # a planted span is found unless a stray backtick before it paired with its opening one
    assert len(found & set(planted)) > len(planted) // 2


@pytest.mark.parametrize(
    "chunk_id",
    [
        "app/x.py#function-f",
        "Meeting Notes/q3 plan.md#heading-goals",
        "odd/c++ & co (v2), me@x.md#heading-x",
        "ünï cødé/50% off.py#class-Deal",
    ],
)
@pytest.mark.parametrize(
    ("form", "angle", "template"),
    [
        ("bare", False, "see {} here"),
        ("local", False, "see {} here"),
        ("backtick", False, "see `{}` here"),
        ("link", False, "see [x]({}) here"),
        ("link", True, "see [x](<{}>) here"),
    ],
)
def test_an_id_written_for_a_form_reads_back_as_itself(
    chunk_id: str, form: Form, angle: bool, template: str
) -> None:
    # what a quick fix writes in place of a reference must be found as that ID
    text = template.format(written_as(chunk_id, form, angle))
    assert [ref.chunk_id for ref in find_chunk_refs(text)] == [chunk_id]


def _ref_at_linear(refs: list[ChunkRef], offset: int) -> ChunkRef | None:
    """The definition: the first reference that covers the offset."""
    return next((ref for ref in refs if ref.start <= offset <= ref.end), None)


def _refs(spans: list[tuple[int, int]]) -> list[ChunkRef]:
    return [ChunkRef(start, end, "a.py", f"function-f{start}", "bare") for start, end in spans]


@pytest.mark.parametrize(
    ("spans", "offset", "expected"),
    [
        ([], 0, None),
        ([(5, 10)], 4, None),
        ([(5, 10)], 5, 0),
        ([(5, 10)], 10, 0),  # the end is included
        ([(5, 10)], 11, None),
        ([(0, 3), (3, 6)], 3, 0),  # touching: the first
        ([(0, 3), (3, 6)], 4, 1),
        ([(0, 3), (5, 8), (9, 12)], 4, None),
        ([(0, 3), (5, 8), (9, 12)], 12, 2),
    ],
)
def test_ref_at(spans: list[tuple[int, int]], offset: int, expected: int | None) -> None:
    refs = _refs(spans)
    assert ref_at(refs, offset) == (None if expected is None else refs[expected])


@given(st.lists(st.integers(0, 4), max_size=40), st.lists(st.integers(1, 5), max_size=40))
def test_ref_at_equals_a_scan(gaps: list[int], lengths: list[int]) -> None:
    spans, at = [], 0
    for gap, length in zip(gaps, lengths, strict=False):
        at += gap
        spans.append((at, at + length))
        at += length
    refs = _refs(spans)
    for offset in range(at + 2):
        assert ref_at(refs, offset) == _ref_at_linear(refs, offset)


@pytest.mark.parametrize(
    ("line", "typed"),
    [
        ("see app/gr", ("app/gr", "app/gr", None)),
        ("see app/greet.py#", ("app/greet.py", "app/greet.py", "")),
        ("see app/greet.py#function-gr", ("app/greet.py", "app/greet.py", "function-gr")),
        ("see ./app/x.py#c", ("./app/x.py", "app/x.py", "c")),
        ("see /app/x.py#", ("/app/x.py", "app/x.py", "")),
        ("[x](docs/a.md#heading-", ("docs/a.md", "docs/a.md", "heading-")),
        ("see ", ("", "", None)),
        ("#function-f", ("", "", "function-f")),
        ("see ~/x.py#", None),  # a home directory: no chunk ID
        ("a#b.py#", None),
        ("see a.py#function-f g", ("g", "g", None)),  # past the ID: a new one
    ],
)
def test_typed_id_at(line: str, typed: tuple[str, str, str | None] | None) -> None:
    assert typed_id_at(line, len(line)) == typed
    assert typed_id_at(line + " and more", len(line)) == typed  # only what is before the cursor


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the tail of a longer token is no ID: "%20", a backslash, letters before it
        ("Meeting%20Notes/q3%20plan.md#heading-goals", []),
        ("see q3%20plan.md#heading-goals", []),
        ("100%a.py#function-f", []),
        ("C:\\notes\\a.py#function-f", []),
        ("dir\\a.py#function-f", []),
        ("\\a.py#function-f", []),
        ("~a.py#function-f", []),
        ("x#a.py#function-f", []),
        ("xa.py#function-f", [("xa.py#function-f", "xa.py", "function-f", "bare")]),  # whole
        ("é.py#function-f", [("é.py#function-f", "é.py", "function-f", "bare")]),
        # a token boundary before it: an ID
        ("see a.py#function-f", [("a.py#function-f", "a.py", "function-f", "bare")]),
        ("(a.py#function-f)", [("a.py#function-f", "a.py", "function-f", "bare")]),
        ("'a.py#function-f'", [("a.py#function-f", "a.py", "function-f", "bare")]),
        ('"a.py#function-f"', [("a.py#function-f", "a.py", "function-f", "bare")]),
        ("<a.py#function-f>", [("a.py#function-f", "a.py", "function-f", "bare")]),
        ("=a.py#function-f", [("a.py#function-f", "a.py", "function-f", "bare")]),
        ("\ta.py#function-f", [("a.py#function-f", "a.py", "function-f", "bare")]),
        (
            "a.py#function-f,b.py#class-C",
            [
                ("a.py#function-f", "a.py", "function-f", "bare"),
                ("b.py#class-C", "b.py", "class-C", "bare"),
            ],
        ),
        ("`a.py#function-f`", [("a.py#function-f", "a.py", "function-f", "backtick")]),
        # the whole token, delimited, is still read
        (
            "[g](Meeting%20Notes/q3%20plan.md#heading-goals)",
            [
                (
                    "Meeting%20Notes/q3%20plan.md#heading-goals",
                    "Meeting Notes/q3 plan.md",
                    "heading-goals",
                    "link",
                )
            ],
        ),
        ("[x](a\\b.md#heading-x)", [("a\\b.md#heading-x", "a\\b.md", "heading-x", "link")]),
    ],
)
def test_a_bare_id_starts_on_a_token_boundary(
    text: str, expected: list[tuple[str, str, str, Form]]
) -> None:
    assert _shown(text) == expected
    assert find_chunk_refs_in(text, "markdown") == find_chunk_refs(text)


@pytest.mark.parametrize(
    "line",
    ["see Meeting%20Notes/q3%20pl", "see q3%20plan.md#", "C:\\notes\\a.py#func", "x\\a"],
)
def test_no_id_is_typed_inside_a_longer_token(line: str) -> None:
    assert typed_id_at(line, len(line)) is None


def test_check_takes_no_tail_of_a_longer_token_for_an_id(tmp_path: Path) -> None:
    write_tree(tmp_path, {"plan.md": "# Goals\n\nShip.\n", "docs/guide.md": ""})
    index = build_index([tmp_path])
    folder = index.queries.folders[0]
    text = (
        "Meeting%20Notes/q3%20plan.md#heading-goals and C:\\x\\plan.md#heading-gone\n"
        "but plan.md#heading-gone is one\n"
    )
    problems = check_text(index.queries, text, "markdown", folder, "docs/guide.md")
    assert [(p.chunk_id, p.ref.start) for p in problems] == [
        ("plan.md#heading-gone", text.index("plan.md#heading-gone is"))
    ]


@pytest.mark.parametrize(
    ("written", "chunk_id", "path"),
    [
        ("app/x.py#function-f", "app/x.py#function-f", "app/x.py"),
        ("./app/x.py#function-f", "app/x.py#function-f", "app/x.py"),
        ("/app/x.py#class-C", "app/x.py#class-C", "app/x.py"),
        ("app\\/x.py#function-f", "app/x.py#function-f", "app/x.py"),
        ("app\\/x.py\\u0023module-1", "app/x.py#module-1", "app/x.py"),
        ("`app/x.py#function-f`", "app/x.py#function-f", "app/x.py"),
        ("[f](app/x.py#function-f)", "app/x.py#function-f", "app/x.py"),
        ("[f](<my app/x.py#function-f>)", "my app/x.py#function-f", "my app/x.py"),
        ('[f](app/x.py#function-f "title")', "app/x.py#function-f", "app/x.py"),
        ("<README.md#heading-setup>", "README.md#heading-setup", "README.md"),
        ("'app/x.py#function-f'", "app/x.py#function-f", "app/x.py"),
        # paths alone (outline): the same wrappers, no ID
        ("app/x.py", None, "app/x.py"),
        ("./app/x.py", None, "app/x.py"),
        ("`app/x.py`", None, "app/x.py"),
        ("[x](app/x.py)", None, "app/x.py"),
        ("[x](<my%20app/x.py>)", None, "my app/x.py"),
        ("<app/x.py>", None, "app/x.py"),
        ('"app\\/x.py"', None, "app/x.py"),
        # none: nothing, two IDs, out of the roots
        ("", None, None),
        ("app/x.py#function-f app/y.py#function-g", None, None),
        ("../x.py#function-f", "../x.py#function-f", None),
        ("../../etc/passwd", None, None),
    ],
)
def test_one_normaliser_reads_an_argument(
    written: str, chunk_id: str | None, path: str | None
) -> None:
    """``chunkls resolve``, ``chunkls.resolve`` and MCP ``read_chunk`` read an ID
    argument with ``id_written``; MCP ``outline`` reads a path with ``path_written``:
    the same written forms."""
    ref = id_written(written)
    assert (ref.chunk_id if ref is not None else None) == chunk_id
    assert path_written(written) == path
