"""Editor ranges: each chunk's first and last line, counted with the editor's
line breaks (``\\n``, ``\\r\\n``, ``\\r``), while IDs and text stay the tutorial's."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.chunking.ingest import scan_corpus
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.chunking.tutorial_chunk import Chunk
from tests.reference import tutorial_ingest as tutorial

from .strategies import markdown_source, python_source

EXOTIC = ["\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def editor_lines(raw: str) -> list[str]:
    """The lines an LSP client sees."""
    return re.split(r"\r\n|\r|\n", raw)


def located(tmp_path: Path, name: str, raw: str) -> list[LocatedChunk]:
    (tmp_path / name).write_bytes(raw.encode("utf-8"))
    scan = scan_corpus(tmp_path)
    assert scan.skipped == []
    return list(scan.chunks())


DEFINITION = re.compile(r"[ \t\f]*(?:@|def\b|async\b|class\b)")


def is_definition(chunk: LocatedChunk) -> bool:
    return chunk.identity.startswith(("function-", "class-"))


def assert_ranges_point_at_the_text(raw: str, chunks: list[LocatedChunk]) -> None:
    """A definition's range starts at its first decorator or its ``def``/``class``
    line (wherever splitlines() put its text); any other chunk's range is the
    editor lines its text is on."""
    lines = editor_lines(raw)
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        if is_definition(chunk):
            first = lines[chunk.start_line - 1]
            assert DEFINITION.match(first), (chunk, first)
            assert chunk.symbol is not None and chunk.symbol in "".join(
                lines[chunk.start_line - 1 : chunk.end_line]
            )
            assert lines[chunk.end_line - 1].strip(), chunk
            continue
        if not chunk.text:
            # the tutorial keeps a function or class chunk whose lines are all blank
            # (line numbers of the AST applied to splitlines() lines): one line
            assert chunk.start_line == chunk.end_line, chunk
            continue
        text_lines = chunk.text.splitlines()
        first, last = lines[chunk.start_line - 1], lines[chunk.end_line - 1]
        assert text_lines[0].strip() in first, chunk
        assert text_lines[-1].strip() in last, chunk
        assert first.strip() and last.strip()
        block = "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.text in "\n".join(block.splitlines()), chunk


def test_an_empty_function_chunk_points_at_one_line(tmp_path: Path) -> None:
    # AST lines 3-4 are splitlines() lines 3-4, both blank here (NEL and FF break
    # them): the text is empty, the range is still the definition's
    raw = "S = '\x85'\n\n\x0cdef f():\n    pass\n"
    chunks = located(tmp_path, "m.py", raw)
    assert [(c.identity, c.text, c.start_line, c.end_line) for c in chunks] == [
        ("module-1", "S = '\n'", 1, 1),
        ("function-f", "", 3, 4),
        ("module-5", "def f():\n    pass", 3, 4),
    ]
    assert [c.chunk_id for c in chunks] == [c.chunk_id for c in tutorial.ingest_path(tmp_path)]
    assert_ranges_point_at_the_text(raw, chunks)


def test_plain_python_ranges(tmp_path: Path) -> None:
    raw = "import os\n\n\n@dec\ndef f():\n    return 1\n\n\nclass C:\n    pass\n\nX = 1\n"
    chunks = located(tmp_path, "m.py", raw)
    assert [(c.identity, c.start_line, c.end_line) for c in chunks] == [
        ("module-1", 1, 1),
        ("function-f", 4, 6),
        ("class-C", 9, 10),
        ("module-11", 12, 12),  # its ID counts from the line after C; its text is on 12
    ]
    assert_ranges_point_at_the_text(raw, chunks)


def test_markdown_ranges_skip_leading_and_trailing_blank_lines(tmp_path: Path) -> None:
    raw = "\n\nIntro\n\n# One\nbody\n\n\n## Two\n\nmore\n   \n"
    chunks = located(tmp_path, "g.md", raw)
    assert [(c.identity, c.start_line, c.end_line) for c in chunks] == [
        ("heading-preamble", 3, 3),
        ("heading-one", 5, 6),
        ("heading-two", 9, 11),
    ]
    assert_ranges_point_at_the_text(raw, chunks)


def test_form_feed_between_two_functions(tmp_path: Path) -> None:
    raw = "def a():\n    return 1\n\f\ndef b():\n    return 2\n"
    chunks = located(tmp_path, "m.py", raw)
    # IDs and text are the tutorial's (its slices are shifted by the form feed) ...
    expected = tutorial.chunk_python(tmp_path / "m.py", tmp_path)
    assert [(c.chunk_id, c.text) for c in chunks] == [(c.chunk_id, c.text) for c in expected]
    # ... a definition's range is its own lines, a module chunk's is its text's
    assert [(c.identity, c.text, c.start_line, c.end_line) for c in chunks] == [
        ("function-a", "def a():\n    return 1", 1, 2),
        ("function-b", "def b():", 4, 5),
        ("module-6", "return 2", 5, 5),
    ]
    assert_ranges_point_at_the_text(raw, chunks)


def test_form_feed_at_the_start_of_a_line(tmp_path: Path) -> None:
    raw = "X = 1\n\fdef a():\n    pass\n\fdef b():\n    pass\n"
    chunks = located(tmp_path, "m.py", raw)
    # splitlines() breaks after each "\f": the tutorial's slices lag one line,
    # the definitions' ranges do not
    assert [(c.identity, c.text, c.start_line, c.end_line) for c in chunks] == [
        ("module-1", "X = 1", 1, 1),
        ("function-a", "def a():", 2, 3),
        ("function-b", "pass", 4, 5),
        ("module-6", "def b():\n    pass", 4, 5),
    ]
    assert_ranges_point_at_the_text(raw, chunks)


def test_crlf_ranges(tmp_path: Path) -> None:
    raw = "import os\r\n\r\ndef f():\r\n    return 1\r\n\r\nclass C:\r\n    pass\r\n"
    chunks = located(tmp_path, "m.py", raw)
    assert [(c.identity, c.text, c.start_line, c.end_line) for c in chunks] == [
        ("module-1", "import os", 1, 1),
        ("function-f", "def f():\n    return 1", 3, 4),
        ("class-C", "class C:\n    pass", 6, 7),
    ]
    assert_ranges_point_at_the_text(raw, chunks)


def test_cr_only_ranges(tmp_path: Path) -> None:
    raw = "pre\r\r# One\rbody\r\r## Two\rmore\r"
    chunks = located(tmp_path, "g.md", raw)
    assert [(c.identity, c.text, c.start_line, c.end_line) for c in chunks] == [
        ("heading-preamble", "pre", 1, 1),
        ("heading-one", "# One\nbody", 3, 4),
        ("heading-two", "## Two\nmore", 6, 7),
    ]
    assert_ranges_point_at_the_text(raw, chunks)


def test_mixed_line_ends(tmp_path: Path) -> None:
    raw = "A = 1\r\nB = 2\rdef f():\n    pass\r\nC = 3"
    chunks = located(tmp_path, "m.py", raw)
    assert [(c.identity, c.start_line, c.end_line) for c in chunks] == [
        ("module-1", 1, 2),
        ("function-f", 3, 4),
        ("module-5", 5, 5),
    ]
    assert_ranges_point_at_the_text(raw, chunks)


@pytest.mark.parametrize("sep", EXOTIC, ids=[f"U+{ord(c):04X}" for c in EXOTIC])
def test_exotic_separator_in_a_python_string(tmp_path: Path, sep: str) -> None:
    """Inside a string every separator is legal Python; splitlines() breaks there
    (shifting the tutorial's slices), the editor does not."""
    raw = f'X = "a{sep}b"\n\ndef f():\n    return "c{sep}d"\n\nclass C:\n    pass\n'
    chunks = located(tmp_path, "m.py", raw)
    expected = tutorial.chunk_python(tmp_path / "m.py", tmp_path)
    assert [(c.chunk_id, c.text) for c in chunks] == [(c.chunk_id, c.text) for c in expected]
    assert_ranges_point_at_the_text(raw, chunks)
    # every chunk lies within the file's 7 editor lines, in order
    assert all(c.end_line <= 7 for c in chunks)
    assert [c.start_line for c in chunks] == sorted(c.start_line for c in chunks)


@pytest.mark.parametrize("sep", EXOTIC, ids=[f"U+{ord(c):04X}" for c in EXOTIC])
def test_exotic_separator_in_markdown(tmp_path: Path, sep: str) -> None:
    """In Markdown, a heading after an exotic separator starts a section (the
    tutorial's splitlines()), and its range is the editor line it sits on."""
    raw = f"intro{sep}# Hidden\nbody\n\n# Next\r\ntext{sep}more\n"
    chunks = located(tmp_path, "g.md", raw)
    expected = tutorial.chunk_markdown(tmp_path / "g.md", tmp_path)
    assert [(c.chunk_id, c.text) for c in chunks] == [(c.chunk_id, c.text) for c in expected]
    assert [(c.identity, c.start_line, c.end_line) for c in chunks] == [
        ("heading-preamble", 1, 1),
        ("heading-hidden", 1, 2),
        ("heading-next", 4, 5),
    ]
    assert_ranges_point_at_the_text(raw, chunks)


def test_separator_at_the_end_of_a_line(tmp_path: Path) -> None:
    raw = "# A\u2028\nx\x85\r\n\f\n# B\n"
    chunks = located(tmp_path, "g.md", raw)
    assert [(c.identity, c.start_line, c.end_line) for c in chunks] == [
        ("heading-a", 1, 2),
        ("heading-b", 4, 4),
    ]
    assert_ranges_point_at_the_text(raw, chunks)


def test_constants_only_module_and_no_trailing_newline(tmp_path: Path) -> None:
    raw = "\n\n# c\nX = 1\n\n\nY = 2"
    [chunk] = located(tmp_path, "m.py", raw)
    assert (chunk.identity, chunk.start_line, chunk.end_line) == ("module-1", 3, 7)


def test_located_chunk_identity_and_to_chunk(tmp_path: Path) -> None:
    [chunk] = located(tmp_path, "m.py", "def f():\n    pass\n")
    assert chunk.identity == "function-f"
    assert chunk.to_chunk() == Chunk("m.py#function-f", "def f():\n    pass", "m.py", "code", "f")


@settings(max_examples=50, deadline=None)
@given(python_source(), markdown_source())
def test_generated_ranges_point_at_the_text(python: str, markdown: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "m.py").write_bytes(python.encode())
        (root / "m.md").write_bytes(markdown.encode())
        scan = scan_corpus(root)
        for file, raw in (("m.md", markdown), ("m.py", python)):
            chunks = [c for c in scan.chunks() if c.source_path == file]
            assert_ranges_point_at_the_text(raw, chunks)


_ALPHABET = "#ab \t\n\r`-" + "".join(EXOTIC)


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=80))
def test_arbitrary_markdown_text_ranges_and_tutorial_output(raw: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "g.md").write_bytes(raw.encode())
        chunks = list(scan_corpus(root).chunks())
        expected = tutorial.chunk_markdown(root / "g.md", root)
        assert [(c.chunk_id, c.text, c.symbol) for c in chunks] == [
            (c.chunk_id, c.text, c.symbol) for c in expected
        ]
        assert_ranges_point_at_the_text(raw, chunks)


@pytest.mark.parametrize("text", ["plain ascii\nlines\n", "non-ascii é\n", ""])
@pytest.mark.parametrize("char", [*EXOTIC, "\n", "\r", "\t", "\x1f", "\x1b", "\xa0"])
def test_non_editor_breaks_are_found_in_ascii_and_other_text(text: str, char: str) -> None:
    from chunkls.chunking.chunker import _has_non_editor_breaks

    source = text + char + "tail"
    expected = len(source.splitlines()) > len(re.split(r"\r\n|\r|\n", source))
    assert _has_non_editor_breaks(source) is expected
    assert _has_non_editor_breaks(text) is False
