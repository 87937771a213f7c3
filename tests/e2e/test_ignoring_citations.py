"""Diagnostics leave out what is marked as an example: lines with an inline
``chunkls: ignore`` marker, files matching ``check-exclude``, and tails of
longer tokens (no IDs at all)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.e2e.conftest import open_document, start_session
from tests.e2e.test_diagnostics import settled

TEXT = """\
# Examples

real: app/greet.py#function-greeting
marked: app/x.py#function-f <!-- chunkls: ignore -->
<!-- chunkls: ignore-next-line -->
| `app/x.py#class-Foo` | a class |
a tail: Meeting%20Notes/q3%20plan.md#heading-goals and C:\\notes\\a.py#function-f
last: app/y.py#module-1
"""


@pytest.mark.parametrize("spec", ["visual-studio-code", "neovim"])  # pulled, pushed
async def test_diagnostics_leave_out_marked_lines_and_excluded_files(
    bare_client: LanguageClient, workspace: Path, spec: str
) -> None:
    client = bare_client
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8") + 'check-exclude = ["docs/examples/**"]\n',
        encoding="utf-8",
    )
    (workspace / "docs" / "examples").mkdir(parents=True)
    checked = workspace / "docs" / "chat.md"
    excluded = workspace / "docs" / "examples" / "chat.md"
    checked.write_text(TEXT, encoding="utf-8")
    excluded.write_text(TEXT, encoding="utf-8")
    await start_session(client, client_capabilities(spec), workspace)

    checked_uri = open_document(client, checked)
    found = await settled(client, checked_uri, 2)
    lines = TEXT.split("\n")
    assert [
        lines[d.range.start.line][d.range.start.character : d.range.end.character] for d in found
    ] == ["app/greet.py#function-greeting", "app/y.py#module-1"]

    excluded_uri = open_document(client, excluded)
    assert await settled(client, excluded_uri, 0) == []
    # the marked IDs are still IDs: an edit that drops the marker reports them
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=checked_uri, version=2),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(
                    text=TEXT.replace("<!-- chunkls: ignore -->", "")
                )
            ],
        )
    )
    assert len(await settled(client, checked_uri, 3)) == 3
