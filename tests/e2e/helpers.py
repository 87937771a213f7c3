"""Small helpers shared by the e2e tests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT, uri


def position_of(text: str, needle: str, inside: int = 2, occurrence: int = 0) -> types.Position:
    """The UTF-16 position ``inside`` characters into the n-th ``needle``."""
    offset = -1
    for _ in range(occurrence + 1):
        offset = text.index(needle, offset + 1)
    offset += inside
    before = text[:offset].replace("\r\n", "\n").replace("\r", "\n")
    line = before.count("\n")
    column_text = before[before.rfind("\n") + 1 :]
    return types.Position(line, len(column_text.encode("utf-16-le")) // 2)


def doc(document_uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=document_uri)


async def definition(
    client: LanguageClient, document_uri: str, position: types.Position
) -> list[types.Location]:
    result = await asyncio.wait_for(
        client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(document_uri), position=position)
        ),
        TIMEOUT,
    )
    if result is None:
        return []
    assert isinstance(result, list)
    return [loc for loc in result if isinstance(loc, types.Location)]


async def hover(client: LanguageClient, document_uri: str, position: types.Position) -> str | None:
    result = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(text_document=doc(document_uri), position=position)
        ),
        TIMEOUT,
    )
    if result is None:
        return None
    assert isinstance(result.contents, types.MarkupContent)
    return result.contents.value


async def command(client: LanguageClient, name: str, *arguments: Any) -> Any:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments) or None)
        ),
        TIMEOUT,
    )


def target(location: types.Location, root: Path, rel_path: str) -> tuple[str, int]:
    """Check a location's file and return (relative path, 1-based start line)."""
    assert location.uri == uri(root / rel_path)
    return rel_path, location.range.start.line + 1
