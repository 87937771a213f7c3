"""Who cites this chunk: textDocument/references and the "cited by N" lens."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT, open_document, uri
from tests.e2e.helpers import doc

pytestmark = pytest.mark.asyncio(loop_scope="module")

GREET_CITATIONS = [
    ("README.md", 17),  # the fixture README cites it in backticks
    ("docs/transcript.md", 2),  # bare, outside the corpus (docs/)
    ("docs/transcript.md", 4),  # document-relative Markdown link
    ("docs/transcript.md", 5),  # leading slash
    ("notes/chat.txt", 1),  # plain text
    ("notes/crlf.md", 3),  # CRLF
]


async def references(client: LanguageClient, document_uri: str, line: int) -> list[types.Location]:
    result = await asyncio.wait_for(
        client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(document_uri),
                position=types.Position(line, 0),
                context=types.ReferenceContext(include_declaration=False),
            )
        ),
        TIMEOUT,
    )
    return list(result or [])


async def test_references_list_every_citation(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    document_uri = open_document(shared_client, shared_workspace / "app" / "greet.py")
    found = await references(shared_client, document_uri, 18)  # inside function-greet
    got = [(loc.uri, loc.range.start.line) for loc in found]
    assert got == [(uri(shared_workspace / path), line) for path, line in GREET_CITATIONS]
    for location in found:
        text = Path(location.uri.removeprefix("file://")).read_bytes().decode("utf-8")
        line = text.splitlines()[location.range.start.line]
        written = line[location.range.start.character : location.range.end.character]
        assert written.endswith("app/greet.py#function-greet")
    assert await references(shared_client, document_uri, 40) == []  # fetch_greeting: none


async def test_cited_by_lens(shared_client: LanguageClient, shared_workspace: Path) -> None:
    document_uri = open_document(shared_client, shared_workspace / "app" / "greet.py")
    lenses = await asyncio.wait_for(
        shared_client.text_document_code_lens_async(
            types.CodeLensParams(text_document=doc(document_uri))
        ),
        TIMEOUT,
    )
    cited = [
        lens for lens in lenses or [] if lens.command and lens.command.title.startswith("cited")
    ]
    titles = {lens.range.start.line + 1: lens.command.title for lens in cited if lens.command}
    assert titles[17] == f"cited by {len(GREET_CITATIONS)}"
    assert titles[23] == "cited by 1"  # class-Greeter, backticked in the transcript
    greet = next(lens for lens in cited if lens.range.start.line == 16)
    assert greet.command is not None
    assert greet.command.command == "chunkls.showReferences"
    arguments = list(greet.command.arguments or [])
    assert arguments[0] == document_uri
    assert arguments[1] == {"line": 16, "character": 0}
    assert len(arguments[2]) == len(GREET_CITATIONS)


async def test_references_in_a_markdown_chunk(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    document_uri = open_document(shared_client, shared_workspace / "README.md")
    found = await references(shared_client, document_uri, 11)  # heading-setup-2
    assert [(loc.uri, loc.range.start.line) for loc in found] == [
        (uri(shared_workspace / "docs" / "transcript.md"), 8)
    ]
