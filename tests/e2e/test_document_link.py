"""textDocument/documentLink: bare and backticked IDs become links."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT, open_document, uri
from tests.e2e.helpers import doc

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_links_for_resolving_bare_and_backticked_ids(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    transcript = shared_workspace / "docs" / "transcript.md"
    document_uri = open_document(shared_client, transcript)
    text = transcript.read_text(encoding="utf-8")
    links = await asyncio.wait_for(
        shared_client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=doc(document_uri))
        ),
        TIMEOUT,
    )
    assert links is not None
    lines = text.split("\n")
    linked = [
        lines[link.range.start.line][link.range.start.character : link.range.end.character]
        for link in links
    ]
    assert linked == [
        "app/greet.py#function-greet",
        "app/greet.py#class-Greeter",
        "/app/greet.py#function-greet",
        "./app/greet.py#function-trace",
        "app/greet.py#function-parse",
        "README.md#heading-setup-2",
        "lib/util.py#function-helper",
    ]  # not the Markdown link targets, not unknown or traversal IDs
    greet = uri(shared_workspace / "app" / "greet.py")
    assert links[0].target == f"{greet}#L17"
    helper = uri(shared_workspace.parent / "second" / "lib" / "util.py")
    assert links[-1].target == f"{helper}#L1"
