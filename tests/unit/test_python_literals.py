"""The Python string/comment scanner against ``tokenize``, the reference
(``tests/unit/tokenize_reference.py``): identical spans on every input, also
when only the spans near some offsets are asked for."""

from __future__ import annotations

import random
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunkls.ids.grammar import find_chunk_refs, find_chunk_refs_in
from chunkls.ids.python_literals import python_literal_spans
from tests.unit.test_chunk_ids import reference_find_all_refs_in
from tests.unit.tokenize_reference import normalized, tokenize_is_the_reference

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
    assert find_chunk_refs_in(text, "python") == reference_find_all_refs_in(text, "python")


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


def test_the_scanner_knows_no_chunk_ids() -> None:
    """The lexer stands alone: importing it loads neither the ID grammar nor the index."""
    code = (
        "import sys, chunkls.ids.python_literals;"
        "print(sorted(m for m in sys.modules if m.startswith('chunkls')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert loaded.strip() == "['chunkls', 'chunkls.ids', 'chunkls.ids.python_literals']"
