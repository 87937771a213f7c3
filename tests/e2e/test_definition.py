"""textDocument/definition for chunk IDs in every written form."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import open_document, uri
from tests.e2e.helpers import definition, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

GREET = 17  # app/greet.py#function-greet starts at its decorator
TRANSCRIPT_FORMS = [
    # (needle in docs/transcript.md, occurrence, expected target path, start line)
    ("app/greet.py#function-greet (bm25", 0, "app/greet.py", GREET),
    ("`app/greet.py#class-Greeter`", 0, "app/greet.py", 23),
    ("../app/greet.py#function-greet)", 0, "app/greet.py", GREET),  # document-relative link
    ("app/greet.py#module-1)", 0, "app/greet.py", 1),  # root-relative link
    ("/app/greet.py#function-greet and", 0, "app/greet.py", GREET),
    ("./app/greet.py#function-trace", 0, "app/greet.py", 9),
    ("README.md#heading-setup-2", 0, "README.md", 12),
    ("lib/util.py#function-helper", 0, "lib/util.py", 1),
]


@pytest.mark.parametrize(("needle", "occurrence", "path", "line"), TRANSCRIPT_FORMS)
async def test_every_written_form_resolves(
    shared_client: LanguageClient,
    shared_workspace: Path,
    needle: str,
    occurrence: int,
    path: str,
    line: int,
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    inside = 4 if needle[0] in "`./" else 2
    locations = await definition(
        shared_client, document_uri, position_of(text, needle, inside, occurrence)
    )
    assert len(locations) == 1
    root = shared_workspace.parent / "second" if path.startswith("lib/") else shared_workspace
    assert locations[0].uri == uri(root / path)
    assert locations[0].range.start.line + 1 == line


async def test_duplicated_id_gives_every_location(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    locations = await definition(
        shared_client, document_uri, position_of(text, "app/greet.py#function-parse")
    )
    assert [loc.range.start.line + 1 for loc in locations] == [33, 35, 37]


@pytest.mark.parametrize(
    "needle",
    ["app/greet.py#function-gone", "../../etc/passwd.py#module-1", "/etc/passwd.py#module-1"],
)
async def test_unknown_and_traversal_ids_resolve_to_nothing(
    shared_client: LanguageClient, shared_workspace: Path, needle: str
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    assert await definition(shared_client, document_uri, position_of(text, needle, 5)) == []


async def test_plain_text(shared_client: LanguageClient, shared_workspace: Path) -> None:
    chat = shared_workspace / "notes" / "chat.txt"
    document_uri = open_document(shared_client, chat)
    text = chat.read_text(encoding="utf-8")
    locations = await definition(shared_client, document_uri, position_of(text, "README.md#"))
    assert [loc.range.start.line + 1 for loc in locations] == [16]


async def test_local_identity_means_this_document_as_typed(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    text = "# Intro\n\nSee #heading-usage and #heading-intro.\n\n## Usage\n\nText.\n"
    notes = shared_workspace / "notes" / "local.md"
    notes.write_text(text, encoding="utf-8")  # not indexed: only open
    document_uri = open_document(shared_client, notes)
    usage = await definition(shared_client, document_uri, position_of(text, "#heading-usage"))
    assert [(loc.uri, loc.range.start.line) for loc in usage] == [(document_uri, 4)]
    intro = await definition(shared_client, document_uri, position_of(text, "#heading-intro"))
    assert [loc.range.start.line for loc in intro] == [0]
    # a document outside the corpus does not get IDs no pipeline would produce
    transcript_text = "# Notes\n\nSee #heading-notes.\n"
    outside = shared_workspace / "docs" / "local.md"
    outside.write_text(transcript_text, encoding="utf-8")
    outside_uri = open_document(shared_client, outside)
    position = position_of(transcript_text, "#heading-notes")
    assert await definition(shared_client, outside_uri, position) == []


async def test_python_strings_and_comments_only(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    emoji = shared_workspace / "app" / "emoji.py"
    document_uri = open_document(shared_client, emoji)
    text = emoji.read_text(encoding="utf-8")
    # in a comment after an emoji: UTF-16 columns must be right
    comment = await definition(
        shared_client, document_uri, position_of(text, "app/greet.py#class-Greeter", 3)
    )
    assert [loc.range.start.line + 1 for loc in comment] == [23]
    # in a string after an emoji, on the same line as another emoji
    string = await definition(
        shared_client, document_uri, position_of(text, "app/greet.py#function-greet", 3, 1)
    )
    assert [loc.range.start.line + 1 for loc in string] == [GREET]


async def test_crlf_document_positions(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    notes = shared_workspace / "notes" / "crlf.md"
    document_uri = open_document(shared_client, notes)
    text = notes.read_bytes().decode("utf-8")
    locations = await definition(
        shared_client, document_uri, position_of(text, "app/crlf.py#function-two", 3)
    )
    assert len(locations) == 1
    assert locations[0].range.start.line == 4
    assert locations[0].range.end.line == 5
    assert locations[0].range.end.character == len("    return 2")


async def test_tabs_before_an_id(shared_client: LanguageClient, shared_workspace: Path) -> None:
    text = "\t\t- see\tapp/greet.py#class-Greeter\n"
    notes = shared_workspace / "notes" / "tabs.txt"
    notes.write_text(text, encoding="utf-8")
    document_uri = open_document(shared_client, notes)
    found = await definition(shared_client, document_uri, position_of(text, "#class-Greeter"))
    assert [loc.range.start.line + 1 for loc in found] == [23]
    before = await definition(shared_client, document_uri, position_of(text, "see", 1))
    assert before == []
