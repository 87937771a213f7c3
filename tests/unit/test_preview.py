"""Hover previews: the first lines of a chunk, and how many more there are."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.chunking.corpus import CorpusRules
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.index.folder import Folder, IndexedChunk
from chunkls.lsp.navigation import PREVIEW_LINES, preview


@pytest.mark.parametrize("lines", [1, PREVIEW_LINES, PREVIEW_LINES + 1, PREVIEW_LINES + 40])
def test_preview_shows_the_first_lines_and_counts_the_rest(lines: int) -> None:
    text = "\n".join(f"line {i}" for i in range(1, lines + 1))
    chunk = LocatedChunk("a.py#function-f", text, "a.py", "code", "f", 1, lines)
    shown = preview(IndexedChunk(Folder(Path("/tmp"), CorpusRules()), chunk))
    body = shown.split("```python\n", 1)[1].rsplit("\n```", 1)[0]
    expected = "\n".join(f"line {i}" for i in range(1, min(lines, PREVIEW_LINES) + 1))
    if lines > PREVIEW_LINES:
        expected += f"\n… ({lines - PREVIEW_LINES} more lines)"
    assert body == expected
    assert f"lines 1-{lines}" in shown


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(["a", "é", " ", "\t", "\n", "\r", "\x0c", "\x85", "\u2028", "#"])
    )
)
def test_a_chunks_first_line_is_its_first_non_blank_line_stripped(text: str) -> None:
    chunk = LocatedChunk("a.py#module-1", text, "a.py", "code", None, 1, 1)
    lines = text.split("\n")
    assert chunk.first_line == next((line.strip() for line in lines if line.strip()), "")
