"""``chunkls.lsp.ranges``: ranges made from typed text, and overlap."""

from __future__ import annotations

import pytest
from lsprotocol import types

from chunkls.ids.positions import Encoding
from chunkls.lsp.ranges import overlaps, range_before, range_json


def _range(a: tuple[int, int], b: tuple[int, int]) -> types.Range:
    return types.Range(types.Position(*a), types.Position(*b))


@pytest.mark.parametrize(
    ("encoding", "start"),
    [("utf-16", 10 - 3), ("utf-8", 10 - 5), ("utf-32", 10 - 2)],
)
def test_range_before_counts_the_text_in_the_encoding(encoding: Encoding, start: int) -> None:
    """ "a😀" is 5 UTF-8 bytes, 3 UTF-16 code units, 2 code points."""
    assert range_before(types.Position(4, 10), "a😀", encoding) == _range((4, start), (4, 10))


def test_range_before_of_nothing_is_empty_at_the_end() -> None:
    assert range_before(types.Position(0, 3), "", "utf-16") == _range((0, 3), (0, 3))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (_range((0, 0), (0, 5)), _range((0, 5), (0, 9)), True),  # touching ends
        (_range((0, 0), (0, 5)), _range((0, 6), (0, 9)), False),
        (_range((1, 0), (3, 0)), _range((2, 4), (2, 4)), True),  # a point inside
        (_range((1, 0), (1, 9)), _range((0, 0), (0, 99)), False),  # another line
    ],
)
def test_overlaps(a: types.Range, b: types.Range, expected: bool) -> None:
    assert overlaps(a, b) is expected
    assert overlaps(b, a) is expected


@pytest.mark.parametrize(("start", "end"), [((0, 0), (0, 0)), ((3, 7), (9, 12)), ((5, 0), (5, 80))])
def test_a_range_as_json_is_what_the_protocol_converter_makes(
    start: tuple[int, int], end: tuple[int, int]
) -> None:
    from lsprotocol import converters

    found = types.Range(types.Position(*start), types.Position(*end))
    assert range_json(found) == converters.get_converter().unstructure(found)


def test_an_answer_as_wire_fields_is_what_the_configured_converter_makes() -> None:
    from lsprotocol import converters

    from chunkls.lsp.contract import SearchAnswer, configure_converter, wire_fields

    converter = converters.get_converter()
    configure_converter(converter)
    for answer in (
        SearchAnswer([{"chunkId": "a.py#class-A"}], "hybrid", None),
        SearchAnswer([], "bm25", "why"),
    ):
        assert wire_fields(answer) == converter.unstructure(answer)
