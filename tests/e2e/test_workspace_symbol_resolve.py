"""workspaceSymbol/resolve: a client that resolves a symbol's range (LSP 3.17,
VS Code) gets workspace/symbol's results without the parts it did not ask for,
and the range of the one it chooses, as the eager listing has it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities

from tests.e2e.conftest import TIMEOUT, start_session


def resolving(spec: str) -> types.ClientCapabilities:
    """A client's capabilities, with the range resolved when a symbol is chosen."""
    capabilities = client_capabilities(spec)
    assert capabilities.workspace is not None
    symbol = capabilities.workspace.symbol or types.WorkspaceSymbolClientCapabilities()
    symbol.resolve_support = types.ClientSymbolResolveOptions(properties=["location.range"])
    capabilities.workspace.symbol = symbol
    return capabilities


Symbol = types.WorkspaceSymbol | types.SymbolInformation
"""(A symbol with a range reads as either.)"""


async def symbols(client: LanguageClient, query: str) -> list[Symbol]:
    found = await asyncio.wait_for(
        client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)), TIMEOUT
    )
    assert isinstance(found, list)
    return list(found)


def where(symbol: Symbol) -> tuple[str, int, int, int, int] | None:
    place = symbol.location
    if not isinstance(place, types.Location):
        return None
    r = place.range
    return (place.uri, r.start.line, r.start.character, r.end.line, r.end.character)


@pytest.mark.parametrize("query", ["greeting polite", "Greeter greet", "Greter", "parse value"])
async def test_a_resolved_symbol_is_where_the_eager_listing_puts_it(
    bare_client: LanguageClient, workspace: Path, query: str
) -> None:
    await start_session(bare_client, resolving("visual-studio-code"), workspace)
    lazy = await symbols(bare_client, query)
    assert lazy
    # the eager listing, as a client that cannot resolve gets it (same server, same index)
    eager = {s.name: s for s in await eager_symbols(workspace, query)}
    chunks = [s for s in lazy if "#" in s.name]
    assert [s.name for s in chunks] == [s.name for s in eager.values() if "#" in s.name]
    unresolved = [s for s in chunks if isinstance(s.location, types.LocationUriOnly)]
    for symbol in chunks:
        if isinstance(symbol.location, types.LocationUriOnly):
            assert isinstance(symbol, types.WorkspaceSymbol) and symbol.data is not None
            symbol = await asyncio.wait_for(
                bare_client.workspace_symbol_resolve_async(symbol), TIMEOUT
            )
        assert where(symbol) == where(eager[symbol.name]), symbol.name
    # a part listed lazily is one the query names, at the eager listing's place
    for symbol in lazy:
        if "#" not in symbol.name:
            assert symbol.name.lower() in query.lower() or any(
                word in symbol.name.lower() for word in query.lower().split()
            )
    if query == "greeting polite":  # a part found by its words, not its name: when chosen
        assert any(s.name.endswith("#class-Greeter") for s in unresolved)
        assert "__init__" not in [s.name for s in lazy]
    if query == "Greeter greet":  # a method the query names is listed, with its range
        assert "greet" in [s.name for s in lazy if "#" not in s.name]


async def eager_symbols(workspace: Path, query: str) -> list[Symbol]:
    from tests.e2e.conftest import SERVER

    client = await SERVER.start()
    assert isinstance(client, LanguageClient)
    try:
        await start_session(client, client_capabilities("visual-studio-code"), workspace)
        found = await symbols(client, query)
        assert all(isinstance(s.location, types.Location) for s in found)
        return found
    finally:
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
        await client.stop()


@pytest.mark.parametrize(
    "data",
    [None, {}, {"query": "greet"}, {"query": 1, "chunkId": "a#b", "line": 0}, "text"],
)
async def test_resolving_a_symbol_it_did_not_list_is_an_error(
    bare_client: LanguageClient, workspace: Path, data: object
) -> None:
    await start_session(bare_client, resolving("neovim"), workspace)
    symbol = types.WorkspaceSymbol(
        name="app/greet.py#class-Greeter",
        kind=types.SymbolKind.Class,
        location=types.LocationUriOnly((workspace / "app" / "greet.py").resolve().as_uri()),
        data=data,
    )
    with pytest.raises(JsonRpcException, match="no symbol workspace/symbol listed"):
        await asyncio.wait_for(bare_client.workspace_symbol_resolve_async(symbol), TIMEOUT)
    assert await symbols(bare_client, "greet")  # still answering


async def test_a_symbol_whose_chunk_is_gone_resolves_to_its_first_line(
    bare_client: LanguageClient, workspace: Path
) -> None:
    await start_session(bare_client, resolving("visual-studio-code"), workspace)
    uri = (workspace / "app" / "greet.py").resolve().as_uri()
    symbol = types.WorkspaceSymbol(
        name="app/greet.py#function-gone",
        kind=types.SymbolKind.Function,
        location=types.LocationUriOnly(uri),
        data={"query": "gone", "chunkId": "app/greet.py#function-gone", "line": 40},
    )
    resolved = await asyncio.wait_for(bare_client.workspace_symbol_resolve_async(symbol), TIMEOUT)
    assert where(resolved) == (uri, 40, 0, 40, 0)


async def test_a_symbol_listed_with_its_range_resolves_to_itself(
    bare_client: LanguageClient, workspace: Path
) -> None:
    """(VS Code resolves whichever symbol is chosen.)"""
    await start_session(bare_client, resolving("visual-studio-code"), workspace)
    located = [
        s
        for s in await symbols(bare_client, "Greter")  # fuzzy: listed with their ranges
        if isinstance(s, types.WorkspaceSymbol) and isinstance(s.location, types.Location)
    ]
    assert located
    for symbol in located:
        resolved = await asyncio.wait_for(
            bare_client.workspace_symbol_resolve_async(symbol), TIMEOUT
        )
        assert (resolved.name, where(resolved)) == (symbol.name, where(symbol))
