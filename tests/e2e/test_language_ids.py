"""Navigation in documents whatever language ID the editor labels them with."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import open_document, uri
from tests.e2e.helpers import definition, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

GREET = 17  # app/greet.py#function-greet starts at its decorator


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("chat.txt", "text"),  # Emacs text-mode (eglot)
        ("chat-fundamental.txt", "fundamental"),
        ("after-python.md", "python"),  # eglot < 1.15: the first buffer's ID for all
        ("nvim-text.md", "text"),
        ("empty-id.md", ""),
    ],
)
async def test_notes_navigate_whatever_their_label(
    shared_client: LanguageClient, shared_workspace: Path, name: str, language: str
) -> None:
    note = shared_workspace / "notes" / name
    text = "Prose: see app/greet.py#function-greet for the greeting.\n"
    note.write_text(text, encoding="utf-8")
    document_uri = open_document(shared_client, note, language)
    locations = await definition(
        shared_client, document_uri, position_of(text, "app/greet.py#function-greet")
    )
    assert [(loc.uri, loc.range.start.line + 1) for loc in locations] == [
        (uri(shared_workspace / "app" / "greet.py"), GREET)
    ]


async def test_python_sent_as_markdown_is_python(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    """The suffix wins: an ID in code (not a string or comment) is no reference."""
    source = shared_workspace / "app" / "labelled.py"
    text = "x = 1  # app/greet.py#function-greet\ny = app/greet.py#function-greet\n"
    source.write_text(text, encoding="utf-8")
    document_uri = open_document(shared_client, source, "markdown")
    in_comment = await definition(
        shared_client, document_uri, position_of(text, "app/greet.py#function-greet")
    )
    assert [loc.range.start.line + 1 for loc in in_comment] == [GREET]
    in_code = await definition(
        shared_client, document_uri, position_of(text, "app/greet.py#function-greet", 2, 1)
    )
    assert in_code == []
