"""The chunk-ID recogniser: fuzzed for soundness, and linear on adversarial text.

Timing assertions compare ratios measured in the same test (a text against a
smaller one of the same pattern, or a near-ID text against plain text of the
same size), never absolute wall-clock limits.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.ids.grammar import MAX_IDENTITY, MAX_PATH, find_chunk_refs, find_chunk_refs_in, ref_at
from tests.hardening.conftest import scaled
from tests.unit.test_chunk_ids import reference_find_chunk_refs_in, tokenize_is_the_reference

MB = 1 << 20

TOKENS = [
    "app/greet.py#function-greet",
    "a.py#b",
    "#heading-setup",
    "#module-1",
    "../x.md#heading-a",
    "/abs.py#class-C",
    "./dot.py#function-f",
    "~/home.py#module-1",
    "https://h/a.py#b",
    "file:///a.py#b",
    "[l](a.md#heading-x)",
    "`a.py#b`",
    "#",
    "-",
    "/",
    ".",
    "./",
    "..",
    ".py",
    ".md#",
    "\x00",
    "\n",
    "\r\n",
    " ",
    "`",
    "é",
    "😀",
    "_",
]

texts = st.lists(st.sampled_from(TOKENS) | st.text(max_size=4), max_size=60).map("".join)


@settings(max_examples=scaled(400, 5000), derandomize=True, deadline=None, database=None)
@given(text=texts)
def test_refs_are_sound(text: str) -> None:
    refs = find_chunk_refs(text)
    assert refs == sorted(refs)
    previous_end = -1
    for ref in refs:
        assert 0 <= ref.start < ref.end <= len(text)
        written = text[ref.start : ref.end]
        assert written.endswith(f"#{ref.identity}")
        assert len(ref.identity) <= MAX_IDENTITY and len(ref.path) <= MAX_PATH
        if ref.form == "local":
            assert ref.path == "" and written == f"#{ref.identity}"
        else:
            # the path as written, without a leading "/" or "./"
            assert ref.path and not ref.path.startswith("/") and "\x00" not in ref.path
            assert written[: -len(ref.identity) - 1].endswith(ref.path)
            assert ref.path.rsplit("/", 1)[-1].endswith((".py", ".md", ".markdown"))
        assert ref.start >= previous_end  # no overlaps
        previous_end = ref.end
        assert ref_at(refs, ref.start) is not None
    for language in ("python", "markdown"):
        assert set(find_chunk_refs_in(text, language)) <= set(refs)


def _best_of(
    function: Callable[[], object], runs: int = 3, clock: Callable[[], float] = time.perf_counter
) -> float:
    """The least time of a few runs, by ``clock`` (``time.process_time``: CPU
    time, less noisy than wall time on a shared machine)."""
    best = float("inf")
    for _ in range(runs):
        started = clock()
        function()
        best = min(best, clock() - started)
    return best


NEAR_IDS = {
    "path run, no #": "a/",
    "one long word": "a",
    "dots and slashes": "./",
    "dangling dash": "x.py#a-",
    "glued ids": "a.py#b",
    "hash run": "#",
    "word hash": "a#",
    "suffix hash": ".py#",
    "local near-id": "#heading-a-",
    "link near-id": "[x](a.py#b",
    "backtick near-id": "`a.py#b",
    "scheme before": "https://a/b.py#c ",
    "long path": "a" * 2000 + ".py#" + "b" * 600 + " ",
}


@pytest.mark.parametrize("name", list(NEAR_IDS))
def test_a_megabyte_line_of_near_ids_is_linear(name: str) -> None:
    """1 MB without a newline: time grows linearly with the size (a quarter of
    the text takes about a quarter of the time), and stays within a generous
    factor of plain text of the same size."""
    unit = NEAR_IDS[name]
    big = (unit * (MB // len(unit) + 1))[:MB]
    small = big[: MB // 4]
    plain = ("lorem ipsum dolor sit amet " * (MB // 27 + 1))[:MB]
    t_big = _best_of(lambda: find_chunk_refs(big))
    t_small = _best_of(lambda: find_chunk_refs(small))
    t_plain = _best_of(lambda: find_chunk_refs(plain))
    # quadratic would be 16x; linear is 4x (allow noise and cache effects)
    assert t_big <= 12 * t_small + 0.05, (t_big, t_small)
    # refs are Python objects, plain text has none: allow a wide margin
    assert t_big <= 200 * t_plain + 0.5, (t_big, t_plain)
    for language in ("python", "markdown"):
        t_in = _best_of(lambda lang=language: find_chunk_refs_in(big, lang), runs=1)  # type: ignore[misc]
        assert t_in <= 20 * t_big + 1.0, (language, t_in, t_big)


def test_hundred_kilobyte_ids_are_not_taken() -> None:
    path = "a/" * 50_000 + "x.py"
    identity = "function-" + "b" * 100_000
    text = f"see {path}#{identity} and {'c' * 100_000}.md#heading-x and `d.py#{'e' * 100_000}`"
    refs = find_chunk_refs(text)
    assert refs == []  # over MAX_PATH / MAX_IDENTITY: not chunk IDs
    ok = f"{'p' * (MAX_PATH - 3)}.py#function-{'i' * (MAX_IDENTITY - 9)}"
    assert [ref.chunk_id for ref in find_chunk_refs(f"x {ok} y")] == [ok]


# --- adversarial documents: linear growth ------------------------------------

MARKDOWN_SHAPES = {
    "function-kind run": ("", "a.py#function-", ""),
    "slashes": ("", "x/", ""),
    "word hashes": ("", "a#", ""),
    "path characters": ("", "a.b-c_d", ""),
    "dense IDs": ("", "a.py#function-f ", ""),
    "dense IDs, one a line": ("", "a.py#function-f\n", ""),
    "dense local IDs": ("", " #heading-a", ""),
    "dense links": ("", "[x](a.py#heading-b) ", ""),
    "dense backticks": ("", "`a.py#class-C` ", ""),
    "IDs after a colon": ("", "x:a.py#class-C ", ""),
    "IDs in URLs": ("", "http://x/a.py#function-f ", ""),
    "dot-slashes": ("", "./././a.py#class-C ", ""),
    "other suffixes": ("", "a.txt#function-f ", ""),
    "long module numbers": ("", "a.py#module-" + "1" * 40 + "x ", ""),
    "long headings": ("", "a.py#heading-" + "a-" * 40 + " ", ""),
}

ID_COMMENT = "\n# a.py#function-f\n"
PYTHON_SHAPES = {
    "one-line statements": ("", "x=1\n", ID_COMMENT),
    "a line of commas": ("", "a,", ID_COMMENT),
    "blank lines": ("", "\n", ID_COMMENT),
    "IDs in comments": ("", "# a.py#function-f\n", ""),
    "IDs in strings": ("", "'a.py#function-f'\n", ""),
    "IDs in calls": ("", "f('a.py#function-f')\n", ""),
    "IDs before comments": ("", "a.py#function-f\n", ""),
    "IDs in statements over lines": ("", "x = (1, # a.py#function-f\n 2)\n", ""),
    "IDs in deep brackets": ("", "((((((# a.py#function-f\n))))))\n", ""),
    "open brackets": ("", "(\n", ID_COMMENT),
    "deep brackets": ("", "((((((\n))))))\n", ID_COMMENT),
    "brackets below zero": (")", "(\n)\n", ID_COMMENT),
    "indentation zigzag": ("", "if x:\n y\n", ID_COMMENT),
    "indentation staircase": ("", "a\n b\n  c\n", ID_COMMENT),
    "tab zigzag": ("", "if x:\n\ty\n", ID_COMMENT),
    "backslash lines": ("", "x\\\n", "\n" + ID_COMMENT),
    "a string over backslash lines": ("x = '", "\\\n", "'" + ID_COMMENT),
    "a dropped string, then a triple quote": ('x = "\\\n\n"""', "\\\n", '"""' + ID_COMMENT),
    "unterminated quotes": ("", "'\\", ID_COMMENT),
    "one-line docstrings": ("", '"""a"""\n', ID_COMMENT),
    "empty strings": ("", "'',", ID_COMMENT),
}


def _document(shape: tuple[str, str, str], size: int) -> str:
    prefix, unit, suffix = shape
    return prefix + unit * ((size - len(prefix) - len(suffix)) // len(unit)) + suffix


def _assert_linear(text_at: Callable[[int], str], language: str) -> None:
    """A 4x larger document takes less than 12x the time (quadratic would be
    16x): the work grows linearly with the size."""
    small, big = text_at(MB // 4), text_at(MB)
    t_small = _best_of(lambda: find_chunk_refs_in(small, language), clock=time.process_time)
    t_big = _best_of(lambda: find_chunk_refs_in(big, language), clock=time.process_time)
    assert t_big < 12 * t_small, (t_big, t_small)


@pytest.mark.parametrize("name", list(MARKDOWN_SHAPES))
def test_near_id_documents_grow_linearly(name: str) -> None:
    _assert_linear(lambda size: _document(MARKDOWN_SHAPES[name], size), "markdown")


@pytest.mark.parametrize("name", list(PYTHON_SHAPES))
def test_python_documents_grow_linearly(name: str) -> None:
    """In Python, references count in strings and comments: the scan that
    finds those must be linear too (brackets, indentation, strings)."""
    _assert_linear(lambda size: _document(PYTHON_SHAPES[name], size), "python")


@tokenize_is_the_reference
@pytest.mark.parametrize(
    ("shapes", "name"),
    [("markdown", name) for name in MARKDOWN_SHAPES] + [("python", name) for name in PYTHON_SHAPES],
)
def test_adversarial_documents_are_recognised_as_before(shapes: str, name: str) -> None:
    """The same references as the implementation before the rewrite (the
    tokenize-based one, at 64 KB: it takes seconds a megabyte)."""
    shape = (MARKDOWN_SHAPES if shapes == "markdown" else PYTHON_SHAPES)[name]
    text = _document(shape, 64 * 1024)
    for language in ("markdown", "python"):
        assert find_chunk_refs_in(text, language) == reference_find_chunk_refs_in(text, language)
