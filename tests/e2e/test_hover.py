"""textDocument/hover: preview of the chunk, or the closest IDs for an unknown one."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import open_document
from tests.e2e.helpers import hover, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        (
            "app/greet.py#function-greet (bm25",
            [
                "**`app/greet.py#function-greet`**",
                "`app/greet.py` lines 17-20 · symbol `greet`",
                "```python\n@trace\ndef greet(",
            ],
        ),
        ("`app/greet.py#class-Greeter`", ["lines 23-30", "class Greeter:"]),
        ("[greet](../app/greet.py#function-greet)", ["**`app/greet.py#function-greet`**"]),
        ("README.md#heading-setup-2", ["```markdown\n# Setup\n\nSecond setup section.\n```"]),
    ],
)
async def test_hover_previews_the_chunk(
    shared_client: LanguageClient, shared_workspace: Path, needle: str, expected: list[str]
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    inside = len(needle) // 2
    value = await hover(shared_client, document_uri, position_of(text, needle, inside))
    assert value is not None
    for fragment in expected:
        assert fragment in value


async def test_hover_on_duplicated_id_shows_each(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    value = await hover(shared_client, document_uri, position_of(text, "#function-parse"))
    assert value is not None
    assert value.count("**`app/greet.py#function-parse`**") == 3


async def test_unknown_id_offers_closest(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    value = await hover(shared_client, document_uri, position_of(text, "function-gone"))
    assert value is not None
    assert value.startswith("Unknown chunk ID `app/greet.py#function-gone`")
    assert "Closest existing IDs" in value
    assert "`app/greet.py#" in value


async def test_traversal_id_previews_nothing_outside(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    value = await hover(shared_client, document_uri, position_of(text, "passwd.py#module-1"))
    assert value is not None
    assert value.startswith("Unknown chunk ID")
    assert "root:" not in value


async def test_no_hover_away_from_ids(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    assert await hover(shared_client, document_uri, position_of(text, "assistant:")) is None
