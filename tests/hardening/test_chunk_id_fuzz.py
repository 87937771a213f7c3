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

from chunkls.chunk_ids import MAX_IDENTITY, MAX_PATH, find_chunk_refs, find_chunk_refs_in, ref_at
from tests.hardening.conftest import scaled

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


def _best_of(function: Callable[[], object], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
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
