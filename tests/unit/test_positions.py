"""Offsets <-> LSP positions, in every encoding, against a plain reference."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkls.ids.positions import Encoding, TextLines, column_to_index, units

ENCODINGS: list[Encoding] = ["utf-16", "utf-8", "utf-32"]


def reference_position(text: str, offset: int, encoding: Encoding) -> tuple[int, int]:
    """(line, column) by counting the breaks before ``offset`` and the code
    units from its line's start (inside a ``\\r\\n``: on the line it ends)."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text) if m.end() <= offset]
    return len(starts) - 1, units(text[starts[-1] : offset], encoding)


TEXTS = [
    "",
    "plain ascii\nsecond line\n",
    "caf\u00e9 \u00e9t\u00e9\nna\u00efve",
    "emoji \U0001f600 then `a.py#b` and \U0001f680\n\U0001f600\U0001f600",
    "crlf\r\nlone cr\rlast",
    "mixed \u00e9\r\n\U0001f600\rx\n",
    "\u2028 is not a break \x0c nor is a form feed\n",
]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("text", TEXTS)
def test_every_offset_maps_as_the_reference_does(text: str, encoding: Encoding) -> None:
    lines = TextLines(text, encoding)
    for offset in range(len(text) + 1):
        assert lines.position(offset) == reference_position(text, offset, encoding), offset
    # out of range offsets are clamped
    assert lines.position(-5) == (0, 0)
    assert lines.position(len(text) + 5) == reference_position(text, len(text), encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
@given(st.text(alphabet=st.sampled_from("ab \u00e9\U0001f600\n\r`#"), max_size=60))
def test_positions_and_offsets_round_trip(encoding: Encoding, text: str) -> None:
    lines = TextLines(text, encoding)
    for offset in range(len(text) + 1):
        line, column = lines.position(offset)
        assert (line, column) == reference_position(text, offset, encoding)
        if not (offset and text[offset - 1] == "\r" and text[offset : offset + 1] == "\n"):
            assert lines.offset(line, column) == offset  # (inside \r\n: not a position)


def test_a_long_non_ascii_line_keeps_one_column_table_per_line() -> None:
    text = ("\u00e9 `a.py#b` " * 10_000) + "\nsecond \U0001f600 line\n" * 40
    lines = TextLines(text)
    for offset in range(0, 100_000, 7):
        assert lines.position(offset) == (0, offset)  # é is one UTF-16 unit
    assert lines.position(len(text) - 3)[0] == 79
    # tables only for the lines asked about, and never more than a few
    assert 0 < len(lines._columns) <= 16


def test_column_to_index_clamps_and_counts_units() -> None:
    line = "a\U0001f600b"
    assert [column_to_index(line, c) for c in range(-1, 6)] == [0, 0, 1, 2, 2, 3, 3]
    assert column_to_index(line, 3, "utf-32") == 3
    assert column_to_index("\u00e9x", 2, "utf-8") == 1
