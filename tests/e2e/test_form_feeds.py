"""A definition's editor range is its own lines, even where the tutorial's
``splitlines()`` slices shift its text (form feeds, ``\\v``, U+2028, ...).

``app/formfeed.py`` has a form feed on a line of its own: ``splitlines()`` breaks
there twice, so the tutorial's text of ``#function-third`` is only its ``def``
line (taken from one line too early) while ``def third():`` is on editor lines
8-9. The lens, go to definition, document symbols and search all land there.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT, open_document, uri
from tests.e2e.helpers import definition, doc, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

THIRD = "app/formfeed.py#function-third"
DEF_LINES = (7, 8)  # 0-based: "def third():" and "    return 3"


def lines_of(range_: types.Range) -> tuple[int, int]:
    return range_.start.line, range_.end.line


async def test_definition_lands_on_the_def(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    note = shared_workspace / "form-feed-note.txt"
    note.write_text(f"See {THIRD} for the third one.\n")
    note_uri = open_document(shared_client, note)
    [location] = await definition(shared_client, note_uri, position_of(note.read_text(), THIRD))
    assert location.uri == uri(shared_workspace / "app" / "formfeed.py")
    assert lines_of(location.range) == DEF_LINES


async def test_lens_and_document_symbol_sit_on_the_def(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    document_uri = open_document(shared_client, shared_workspace / "app" / "formfeed.py")
    lenses = await asyncio.wait_for(
        shared_client.text_document_code_lens_async(
            types.CodeLensParams(text_document=doc(document_uri))
        ),
        TIMEOUT,
    )
    [lens] = [lens for lens in lenses if lens.command and lens.command.title == THIRD]
    assert lens.range.start.line == DEF_LINES[0]
    symbols = await asyncio.wait_for(
        shared_client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(document_uri))
        ),
        TIMEOUT,
    )
    assert symbols is not None
    [symbol] = [s for s in symbols if isinstance(s, types.DocumentSymbol) and "third" in s.name]
    assert lines_of(symbol.range) == DEF_LINES


async def test_search_result_points_at_the_def(shared_client: LanguageClient) -> None:
    symbols = await asyncio.wait_for(
        shared_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="third")),
        TIMEOUT,
    )
    assert symbols
    [found] = [s for s in symbols if s.name == THIRD]
    assert isinstance(found.location, types.Location)
    assert lines_of(found.location.range) == DEF_LINES
