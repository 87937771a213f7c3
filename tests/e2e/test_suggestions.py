"""An unknown ID's suggestions agree: the diagnostic's message, its quick fixes
and the hover's "closest IDs" give the same candidates in the same order, and a
stale ``module-N`` is offered module chunks only."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.helpers import hover
from tests.e2e.test_diagnostics import TRANSCRIPT, open_transcript, quick_fixes, settled


def from_message(diagnostic: types.Diagnostic) -> list[str]:
    found = re.search(r"\(did you mean (.*)\?\)$", diagnostic.message)
    return found.group(1).split(", ") if found else []


def from_hover(value: str) -> list[str]:
    _, _, closest = value.partition("Closest existing IDs:\n")
    return re.findall(r"^- `([^`]+)`$", closest, re.MULTILINE)


async def test_message_quick_fixes_and_hover_agree(client: LanguageClient, workspace: Path) -> None:
    document_uri = open_transcript(client, workspace)
    found = await settled(client, document_uri, 4)
    checked = 0
    for diagnostic in found:
        offered = from_message(diagnostic)
        if not offered:
            continue  # the traversal ID: nothing near it
        checked += 1
        titles = [
            action.title
            for action in await quick_fixes(client, document_uri, diagnostic)
            if isinstance(action, types.CodeAction)
        ]
        assert titles == [f"Replace with `{candidate}`" for candidate in offered]
        value = await hover(client, document_uri, diagnostic.range.start)
        assert value is not None
        assert from_hover(value) == offered, value
    assert checked == 3


async def test_a_stale_module_id_is_offered_module_chunks_only(
    client: LanguageClient, workspace: Path
) -> None:
    document_uri = open_transcript(client, workspace)
    [stale] = [
        d for d in await settled(client, document_uri, 4) if "module-3" in d.message.split()[3]
    ]
    offered = from_message(stale)
    assert offered
    assert all(re.fullmatch(r"app/greet\.py#module-\d+", candidate) for candidate in offered)
    assert "app/greet.py#module-3" in TRANSCRIPT
