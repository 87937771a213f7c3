"""Chunk IDs in JSON, JSONC and JSON Lines: decoded strings, raw offsets."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from chunkls.cli import main
from chunkls.ids.grammar import find_chunk_refs_between, find_chunk_refs_in, line_span
from chunkls.ids.json_strings import decode, escape, json_strings
from chunkls.index.citations import walk_citation_files
from tests.unit.strategies import write_tree


def written(text: str, language: str = "jsonl") -> list[tuple[str, str]]:
    """(raw text of each reference, its chunk ID)."""
    return [(text[r.start : r.end], r.chunk_id) for r in find_chunk_refs_in(text, language)]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # an ID followed by an escape ends before the backslash
        (
            r'{"a": "see app/x.py#function-f\nnext"}',
            [("app/x.py#function-f", "app/x.py#function-f")],
        ),
        (
            r'{"a": "\"app/x.py#function-f\" said"}',
            [("app/x.py#function-f", "app/x.py#function-f")],
        ),
        (r'{"a": "app/x.py#function-f\\"}', [("app/x.py#function-f", "app/x.py#function-f")]),
        # ... and one after an escape starts after it (not "napp/x.py")
        (r'{"a": "one\napp/x.py#class-C\tz"}', [("app/x.py#class-C", "app/x.py#class-C")]),
        # \/ in a path is /
        (
            r'{"a": "app\/rag\/x.py#module-1"}',
            [(r"app\/rag\/x.py#module-1", "app/rag/x.py#module-1")],
        ),
        # \u escapes, a surrogate pair before the ID
        (
            r'{"a": "\ud83d\ude00 app/x.py#function-f"}',
            [("app/x.py#function-f", "app/x.py#function-f")],
        ),
        (
            r'{"a": "app/x\u002epy#function-f"}',
            [(r"app/x\u002epy#function-f", "app/x.py#function-f")],
        ),
        # the # itself escaped (an encoder that escapes it), and the rest of the ID too
        (
            r'{"a": "see app/x.py\u0023function-f."}',
            [(r"app/x.py\u0023function-f", "app/x.py#function-f")],
        ),
        (
            r'{"a": "app\/x.py\u0023class-C, then x#y"}',
            [(r"app\/x.py\u0023class-C", "app/x.py#class-C")],
        ),
        (r'{"a": "\u0023function-f"}', []),
        # backticks and Markdown links inside a string (a chat message's Markdown)
        (
            r'{"a": "`app/x.py#function-f` and [x](docs/y.md#heading-setup)"}',
            [
                ("app/x.py#function-f", "app/x.py#function-f"),
                ("docs/y.md#heading-setup", "docs/y.md#heading-setup"),
            ],
        ),
        # keys are strings too; text outside strings is not read
        ('{"app/x.py#function-f": 1}', [("app/x.py#function-f", "app/x.py#function-f")]),
        ("[1, 2] // app/x.py#function-f", [("app/x.py#function-f", "app/x.py#function-f")]),
        ('{"a": 1 /* app/x.py#class-C */}', [("app/x.py#class-C", "app/x.py#class-C")]),
        # #identity alone is no ID in a JSON file (it has no chunks)
        ('{"a": "#function-f"}', []),
        # a bad escape is kept as written; an unterminated string runs to the line end
        (r'{"a": "\q app/x.py#function-f', [("app/x.py#function-f", "app/x.py#function-f")]),
        (
            '{"a": "no id"}\n{"b": "app/x.py#function-f"}',
            [("app/x.py#function-f", "app/x.py#function-f")],
        ),
    ],
)
def test_ids_in_json_strings(raw: str, expected: list[tuple[str, str]]) -> None:
    assert written(raw) == expected


def test_offsets_are_raw_and_utf16_ready() -> None:
    text = '{"a": "\\u00e9\\u00e9 \\"app/x.py#function-f\\""}\n{"b": "é app\\/x.py#class-C"}\n'
    refs = find_chunk_refs_in(text, "json")
    assert [text[r.start : r.end] for r in refs] == ["app/x.py#function-f", "app\\/x.py#class-C"]
    assert [r.path for r in refs] == ["app/x.py", "app/x.py"]


def test_decode_matches_json_loads() -> None:
    raw = r"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00e\ud800x"
    value, _ = decode(raw)
    assert value == json.loads(f'"{raw}"')


def test_raw_offsets_of_every_decoded_character() -> None:
    raw = r"x\n\u00e9\"y\\z"
    text = f'"{raw}#"'
    [string] = json_strings(text, 0, len(text), re.compile("#"))
    value = string.value
    assert value == 'x\né"y\\z#'
    offsets = [string.raw_offset(i) - string.start for i in range(len(value) + 1)]
    assert offsets == [0, 1, 3, 9, 11, 12, 14, 15, 16]


def test_only_lines_with_a_hash_are_read() -> None:
    text = '{"a": "x"}\n{"b": "y#"}\n{"c": "z"}\n'
    assert [s.value for s in json_strings(text, 0, len(text), re.compile("#"))] == ["y#"]


def test_a_line_alone_gives_what_the_whole_text_gives() -> None:
    text = '{"a": "app/x.py#function-f"}\n{"b": "\\napp/y.py#module-1"}\n'
    whole = find_chunk_refs_in(text, "jsonl")
    for ref in whole:
        start, end = line_span(text, ref.start)
        assert find_chunk_refs_between(text, start, end, "jsonl") == [ref]
    assert find_chunk_refs_between(text, 0, 10, "python") is None


@pytest.mark.parametrize("value", ['a"b', "a\\b", "line\nbreak", "é `x`", "\x01"])
def test_escape_writes_a_valid_json_string(value: str) -> None:
    assert json.loads(f'"{escape(value)}"') == value


def test_check_and_citations_read_json_files(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "app/x.py": "def f():\n    return 1\n",
            "logs/session.jsonl": (
                '{"role": "assistant", "text": "see app\\/x.py#function-f\\nok"}\n'
                '{"role": "assistant", "text": "\\"app/x.py#function-g\\""}\n'
            ),
            "export.json": '{"messages": ["app/x.py#function-f"]}\n',
        },
    )
    assert walk_citation_files(tmp_path) == ["export.json", "logs/session.jsonl"]
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", "--root", str(tmp_path), "--no-cache"], out, err)
    assert code == 1
    assert out.getvalue() == (
        "logs/session.jsonl:2:34: unknown chunk ID app/x.py#function-g "
        "(did you mean app/x.py#function-f?)\n"
    )
