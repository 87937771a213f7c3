"""The ``chunkls.search.mode`` setting: the palette's ranking (``workspace/symbol``)
and ``chunkls.search`` follow it, and an argument overrides it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT
from tests.e2e.helpers import command


async def test_the_search_mode_setting_chooses_the_ranking(
    client: LanguageClient, workspace: Path
) -> None:
    async def containers(query: str) -> list[str]:
        found = await asyncio.wait_for(
            client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)), TIMEOUT
        )
        return [symbol.container_name or "" for symbol in found or []]

    assert all(name.startswith("hybrid ") for name in await containers("greet"))
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"chunkls": {"search": {"mode": "bm25"}}})
    )

    async def in_bm25() -> None:
        while not (found := await containers("how does greet")) or not found[0].startswith("bm25 "):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(in_bm25(), TIMEOUT)
    # bm25 scores every word (hybrid finds nothing to search in these)
    assert await containers("how does the")
    found = await command(client, "chunkls.search", {"query": "greet"})
    assert found and {result["mode"] for result in found} == {"bm25"}
    asked = await command(client, "chunkls.search", {"query": "greet", "mode": "hybrid"})
    assert asked and {result["mode"] for result in asked} == {"hybrid"}
