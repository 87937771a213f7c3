"""A start that answers before the server has loaded (``chunkls.lsp.early``):
the second start of a client answers ``initialize`` and the first code lenses
early, with exactly what the server answered the first time."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from chunkls.lsp.contract import SHOW_REFERENCES
from tests.e2e.conftest import CLIENTS, SERVER, TIMEOUT, install_handlers, open_document, uri

EARLY = "answered initialize and"


async def _start(
    cache: Path, spec: str, workspace: Path, files: list[Path], options: Any = None
) -> tuple[Any, list[Any], list[str]]:
    """One session: initialize, open ``files``, ask each for lenses at once,
    then shut down; the initialize answer, the lenses and the log."""
    config = ClientServerConfig(
        server_command=SERVER.server_command,
        server_env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    install_handlers(client)
    try:
        params = types.InitializeParams(
            capabilities=client_capabilities(spec),
            root_uri=uri(workspace),
            workspace_folders=[types.WorkspaceFolder(uri=uri(workspace), name="workspace")],
            initialization_options=options,
        )
        result = await asyncio.wait_for(client.initialize_session(params), TIMEOUT)
        uris = [open_document(client, path) for path in files]
        lenses = [
            await asyncio.wait_for(
                client.text_document_code_lens_async(
                    types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=u))
                ),
                TIMEOUT,
            )
            for u in uris
        ]
        # the server is loaded once it answers a request the early reader leaves to it
        await asyncio.wait_for(
            client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="chunkls.stats")
            ),
            TIMEOUT,
        )
        log = [message.message for message in client.log_messages]
        await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    finally:
        await asyncio.wait_for(client.stop(), TIMEOUT)
    plain = get_converter().unstructure
    return plain(result), [plain(found) for found in lenses], log


def _without_citations(lenses: list[Any]) -> list[Any]:
    """Lenses but ``cited by``: those come once the server has scanned the
    citations, which a first start may have done before it answers."""
    return [
        [lens for lens in found if lens["command"]["command"] != SHOW_REFERENCES]
        for found in lenses
    ]


@pytest.mark.parametrize("spec", CLIENTS)
async def test_a_second_start_answers_early_what_the_server_answered(
    spec: str, workspace: Path, tmp_path: Path
) -> None:
    files = [
        workspace / "app" / "greet.py",
        workspace / "app" / "emoji.py",
        workspace / "README.md",
        next((workspace / "generated").rglob("*.py")),  # excluded by [tool.chunkls]
        workspace / "pyproject.toml",  # not a chunked type
    ]
    (workspace / "app" / "broken.py").write_text("def broken(:\n    pass\n", "utf-8")
    files.append(workspace / "app" / "broken.py")
    cache = tmp_path / "cache"
    first = await _start(cache, spec, workspace, files)
    assert not any(EARLY in line for line in first[2])
    kept = json.loads((cache / "chunkls" / "lsp-answers.json").read_text("utf-8"))
    assert list(kept["answers"].values()) == [first[0]]
    second = await _start(cache, spec, workspace, files)
    assert f"{EARLY} {len(files)} code lens requests while loading" in second[2]
    assert second[0] == first[0]
    assert second[1] == _without_citations(first[1])
    titles = [[lens["command"]["title"] for lens in found] for found in second[1]]
    assert titles[0] and all(title.startswith("app/greet.py#") for title in titles[0])
    assert titles[3][0].startswith("Not in the chunk corpus: ")
    assert titles[4] == []
    assert titles[5][0].startswith("Not chunked: ")


async def test_other_options_are_answered_by_the_server(workspace: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    greet = workspace / "app" / "greet.py"
    await _start(cache, "neovim", workspace, [greet])
    off = {"codeLens": {"enabled": False}}
    first = await _start(cache, "neovim", workspace, [greet], options=off)
    assert not any(EARLY in line for line in first[2])  # another key
    assert first[1] == [[]]
    second = await _start(cache, "neovim", workspace, [greet], options=off)
    assert f"{EARLY} 1 code lens request while loading" in second[2]
    assert second[:2] == first[:2]
