"""Chunk-ID recognition: the fast matcher and Python scanner against the
implementation they replaced (kept below, verbatim, as the reference).

The reference found chunk IDs with the same two regular expressions but more
work per match, and found Python strings and comments with ``tokenize``; the
new code must give identical results on every input.
"""

from __future__ import annotations

import io
import random
import sys
import sysconfig
import tokenize
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunkls.chunk_ids import (
    _LOCAL_ID,
    _PATH_ID,
    _SCHEME_BEFORE,
    MAX_IDENTITY,
    MAX_PATH,
    ChunkRef,
    Form,
    find_chunk_refs,
    find_chunk_refs_in,
    python_literal_spans,
)
from chunkls.chunking.chunker import SUPPORTED_SUFFIXES, suffix_of

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


def reference_python_literal_spans(text: str) -> list[tuple[int, int]] | None:
    line_starts = [0]
    for line in io.StringIO(text):
        line_starts.append(line_starts[-1] + len(line))
    spans: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _LITERAL_TOKENS:
                (srow, scol), (erow, ecol) = token.start, token.end
                spans.append((line_starts[srow - 1] + scol, line_starts[erow - 1] + ecol))
    except (tokenize.TokenError, SyntaxError, IndexError):
        return None
    return spans


_LITERAL_TOKENS = {tokenize.STRING, tokenize.COMMENT}


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


# --- helpers -------------------------------------------------------------------

tokenize_is_the_reference = pytest.mark.skipif(
    sys.version_info[:2] != (3, 11),
    reason="the scanner reproduces Python 3.11's tokenize (3.12 tokenizes in C, differently)",
)


def _quote_start(text: str, start: int) -> int:
    if text[start] == "#":
        return start
    return min(i for i in (text.find("'", start), text.find('"', start)) if i >= 0)


def normalized(text: str) -> list[tuple[int, int]] | None:
    spans = reference_python_literal_spans(text)
    if spans is None:
        return None
    return [(_quote_start(text, start), end) for start, end in spans]


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
    assert find_chunk_refs(text) == reference_find_chunk_refs(text)
    assert find_chunk_refs_in(text, "markdown") == reference_find_chunk_refs_in(text, "markdown")


def test_refs_are_chunk_refs() -> None:
    refs = find_chunk_refs("see [x](app/a.py#function-f) and `b.md#heading-x` #class-C")
    assert [type(ref) for ref in refs] == [ChunkRef] * 3
    assert [(ref.form, ref.chunk_id) for ref in refs] == [
        ("link", "app/a.py#function-f"),
        ("backtick", "b.md#heading-x"),
        ("local", "#class-C"),
    ]


# --- python: the scanner -----------------------------------------------------

PY_TOKENS = [
    "x",
    "rb",
    "Rb",
    "f",
    "u",
    "ub",
    "1",
    "0x1f",
    " = ",
    ",",
    ".",
    ":",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "'''",
    '"""',
    "''",
    "\\",
    "\\'",
    '\\"',
    "\\\\",
    "#",
    "# c",
    "\n",
    "\r\n",
    "\r",
    "\\\n",
    "\\\r\n",
    " ",
    "    ",
    "\t",
    "\f",
    "\n    ",
    "\n  ",
    "\n\t",
    "\n\n",
    "a.py#function-f",
    "#heading-x",
    " # x.md#heading-y",
    "'b.py#class-C'",
    "é",
    "$",
]

py_texts = st.lists(st.sampled_from(PY_TOKENS) | st.text(max_size=2), max_size=40).map("".join)


def _holding(spans: list[tuple[int, int]], near: list[int]) -> list[tuple[int, int]]:
    return [(s, e) for s, e in spans if any(s <= offset < e for offset in near)]


def assert_scans_like_tokenize(text: str, near: list[int]) -> None:
    """All spans without ``near``; with it, exact spans, among them every one
    that holds an offset."""
    expected = normalized(text)
    assert python_literal_spans(text) == expected
    got = python_literal_spans(text, near)
    if expected is None:
        assert got is None
        return
    assert got is not None
    assert set(got) <= set(expected)
    assert _holding(got, near) == _holding(expected, near)


@tokenize_is_the_reference
@settings(max_examples=2000, derandomize=True, deadline=None, database=None)
@given(text=py_texts, data=st.data())
@example("if x:\n    y = 1\n  z = 2\n", None)
@example("if x:\n    y = 1\n\tz = 2 # a.py#function-f\n", None)
@example("x = (\n1,\n# a.py#function-f\n)\n", None)
@example("x = 'a\\\n a.py#function-f\\\nb'\n", None)
@example("x = 'a\\\n a.py#function-f\nb'\n", None)
@example("x = 'a\\\n", None)
@example("x = '''a\\\n''' # a.py#function-f", None)
@example("  \r# a.py#function-f\n", None)
@example("# a\ra.py#function-f\n", None)
@example("x # a\ra.py#function-f\n", None)
@example("x = ((((((1\n))))))\n# a.py#function-f\n", None)
@example(")\n(\n# a.py#function-f\n", None)
@example("x = '\\'\\'\\' # a.py#function-f\n", None)
@example("   ", None)
@example("x\n   ", None)
def test_the_scanner_equals_tokenize(text: str, data: st.DataObject | None) -> None:
    if data is None:
        near = [ref.start for ref in find_chunk_refs(text)]
    else:
        offsets = st.integers(0, max(len(text) - 1, 0))
        near = sorted(data.draw(st.sets(offsets, max_size=4), label="near"))
    assert_scans_like_tokenize(text, near)
    assert find_chunk_refs_in(text, "python") == reference_find_chunk_refs_in(text, "python")


@tokenize_is_the_reference
@pytest.mark.parametrize(
    "text",
    [
        "x = '''a'\ny = 1\n",  # an unterminated triple quote is no empty string
        'x = ("""a"\ny = 1)\n',
        "x = (\\\n1)\n\\\n",  # EOF after a backslash
        "if x:\n  y = 1\n \tz = (1,\n2)\n",
        "x = '''\n''' + (\n# c\n)\n  y\n",
        "x = 1 \\\n  + 2\ny\n",
        ")]((\n\r}]",  # parenlev back to 0 at a newline: the next line is skipped
        '[}[)"\\\n\n"""\n1',  # a dropped continued string makes the next one drop
        '"\\\nx\n"""\\\n"""',
    ],
)
def test_skipping_in_bulk_keeps_what_decides_the_rest(text: str) -> None:
    assert_scans_like_tokenize(text, [])


def _stdlib_sample(count: int) -> list[Path]:
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))
    return random.Random(7).sample(files, min(count, len(files)))


@tokenize_is_the_reference
def test_the_scanner_equals_tokenize_on_the_stdlib() -> None:
    """Real files, whole and cut at random places (unterminated strings and
    brackets, dedents to nowhere), with offsets at random places."""
    rng = random.Random(11)
    checked = 0
    for path in _stdlib_sample(60):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for cut in [len(text)] + [rng.randrange(len(text) + 1) for _ in range(3)]:
            piece = text[:cut]
            near = sorted(rng.randrange(len(piece) + 1) for _ in range(rng.randrange(12)))
            assert_scans_like_tokenize(piece, near)
            checked += 1
    assert checked > 100


def test_spans_are_listed_near_the_offsets() -> None:
    text = "# a\nx = 1\n# b\ny = 'c'\n"
    assert python_literal_spans(text) == [(0, 3), (10, 13), (18, 21)]
    assert python_literal_spans(text, []) == []
    assert python_literal_spans(text, [11]) == [(10, 13), (18, 21)]  # from its line on
    far = "x = 1\n" * 2000  # 12,000 characters: more than _NEAR
    text = f"# a\n{far}# b\n{far}y = 'c'\n"
    b = text.index("# b")
    assert python_literal_spans(text, [b + 1]) == [(b, b + 3)]
    assert python_literal_spans("x = (\n", []) is None


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
