"""Start-up variants: single-file mode, initialization options, position
encodings, watcher registration, re-indexing on request, and odd file names."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from chunkls.index.session import build_index
from tests.e2e.conftest import SERVER, TIMEOUT, open_document, start_session, uri, wait_indexed
from tests.e2e.helpers import command, definition, doc, position_of


async def test_single_file_mode(bare_client: LanguageClient, workspace: Path) -> None:
    await bare_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("neovim"))
    )
    readme = workspace / "README.md"
    text = readme.read_text(encoding="utf-8") + "\nSee #heading-usage.\n"
    readme.write_text(text, encoding="utf-8")
    document_uri = open_document(bare_client, readme)
    lenses = await bare_client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=document_uri))
    )
    assert lenses
    assert lenses[0].command is not None
    assert lenses[0].command.title == "README.md#heading-preamble"
    found = await definition(bare_client, document_uri, position_of(text, "#heading-usage", 3))
    assert [(loc.uri, loc.range.start.line) for loc in found] == [(document_uri, 15)]
    stats = await command(bare_client, "chunkls.stats")
    assert stats["folders"] == []


async def test_initialization_options_and_root_uri(
    bare_client: LanguageClient, workspace: Path
) -> None:
    await bare_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("emacs"),
            root_uri=uri(workspace),
            initialization_options={"exclude": ["app/**"], "codeLens": {"enabled": True}},
        )
    )
    stats = await wait_indexed(bare_client)
    ids = [r["chunkId"] for r in await command(bare_client, "chunkls.search", {"query": "greet"})]
    assert ids
    assert not any(chunk_id.startswith("app/") for chunk_id in ids)
    assert stats["folders"] == [str(workspace)]


def test_nothing_comes_before_the_initialize_answer(workspace: Path) -> None:
    """Settings unlike the defaults in the initialization options send no
    ``chunkls/status`` (nor anything else) ahead of the answer (the VS Code
    e2e's preflight reads the first message)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": uri(workspace),
                "capabilities": {},
                "initializationOptions": {"navigation": {"languages": ["python"]}},
            },
        }
    ).encode()
    done = subprocess.run(
        SERVER.server_command,
        input=b"Content-Length: %d\r\n\r\n" % len(body) + body,
        capture_output=True,
        env=SERVER.server_env,
        timeout=TIMEOUT,
        check=False,
    )
    head, _, rest = done.stdout.partition(b"\r\n\r\n")
    length = int(head.split(b"\r\n")[0].split(b":")[1])
    first = json.loads(rest[:length])
    assert first.get("id") == 1 and "capabilities" in first["result"], first


@pytest.mark.parametrize("encoding", ["utf-8", "utf-32"])
async def test_negotiated_position_encoding(
    bare_client: LanguageClient, workspace: Path, encoding: str
) -> None:
    capabilities = client_capabilities("visual-studio-code")
    capabilities.general = types.GeneralClientCapabilities(position_encodings=[encoding])
    result = await bare_client.initialize_session(
        types.InitializeParams(capabilities=capabilities, root_uri=uri(workspace))
    )
    assert result.capabilities.position_encoding == encoding
    await wait_indexed(bare_client)
    emoji = workspace / "app" / "emoji.py"
    document_uri = open_document(bare_client, emoji)
    text = emoji.read_text(encoding="utf-8")
    offset = text.index("app/greet.py#class-Greeter") + 3
    line = text[:offset].count("\n")
    prefix = text[text.rfind("\n", 0, offset) + 1 : offset]
    column = len(prefix.encode("utf-8")) if encoding == "utf-8" else len(prefix)
    found = await definition(bare_client, document_uri, types.Position(line, column))
    assert [loc.range.start.line + 1 for loc in found] == [23]


async def test_watchers_registered_when_supported(client: LanguageClient) -> None:
    registrations = client.registrations  # type: ignore[attr-defined]
    workspace_caps = client.capabilities.workspace  # type: ignore[union-attr]
    dynamic = bool(
        workspace_caps
        and workspace_caps.did_change_watched_files
        and workspace_caps.did_change_watched_files.dynamic_registration
    )

    async def registered() -> None:
        while dynamic and not registrations:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(registered(), TIMEOUT)
    methods = [r.method for r in registrations]
    assert methods == (["workspace/didChangeWatchedFiles"] if dynamic else [])
    if dynamic:
        patterns = [w["globPattern"] for w in registrations[0].register_options["watchers"]]
        assert "**/*.{py,md,markdown,txt,json,jsonc,jsonl,ndjson}" in patterns


async def test_reindex_command(client: LanguageClient, workspace: Path) -> None:
    (workspace / "app" / "late.py").write_text("def late_arrival():\n    pass\n", "utf-8")
    result = await command(client, "chunkls.reindex")
    ids = [r["chunkId"] for r in await command(client, "chunkls.search", {"query": "late"})]
    assert "app/late.py#function-late_arrival" in ids
    assert result["chunks"] == (await command(client, "chunkls.stats"))["chunks"]


async def test_restart_with_the_cache_equals_a_fresh_index(workspace: Path) -> None:
    """A warm start reuses the cache, yet picks up a file changed while it was down."""

    async def session() -> list[tuple[str, int, int]]:
        client = await SERVER.start()
        assert isinstance(client, LanguageClient)
        try:
            await start_session(client, "neovim", workspace)
            listed = await command(client, "chunkls.chunks")
            await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
        finally:
            await asyncio.wait_for(client.stop(), TIMEOUT)
        return [(c["chunkId"], c["startLine"], c["endLine"]) for c in listed]

    def fresh() -> list[tuple[str, int, int]]:
        index = build_index([workspace, workspace.parent / "second"])
        return [
            (e.chunk.chunk_id, e.chunk.start_line, e.chunk.end_line) for e in index.queries.chunks()
        ]

    assert await session() == fresh()
    greet = workspace / "app" / "greet.py"
    greet.write_text(greet.read_text("utf-8").replace("def greet(", "def hello("), "utf-8")
    (workspace / "app" / "formfeed.py").unlink()
    warm = await session()
    assert "app/greet.py#function-hello" in [chunk_id for chunk_id, _, _ in warm]
    assert warm == fresh()


def test_serve_help_lists_transports() -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "chunkls", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "--stdio" in done.stdout
    assert "--tcp" in done.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX names are bytes")
@pytest.mark.parametrize("spec", ["visual-studio-code", "neovim"])
async def test_a_file_name_that_is_not_utf8(
    bare_client: LanguageClient, workspace: Path, spec: str
) -> None:
    # Linux names are bytes: Python keeps those that are not UTF-8 as lone
    # surrogates; URIs carry them percent-encoded byte for byte (as Neovim does)
    name = os.fsdecode(b"odd\xff.py")
    (workspace / "app" / name).write_text("def odd_named_function():\n    return 1\n")
    await start_session(bare_client, spec, workspace)
    symbols = await asyncio.wait_for(
        bare_client.workspace_symbol_async(types.WorkspaceSymbolParams(query="odd_named_function")),
        TIMEOUT,
    )
    assert symbols
    location = symbols[0].location
    assert isinstance(location, types.Location)
    odd_uri = (workspace / "app").resolve().as_uri() + "/odd%FF.py"
    assert location.uri == odd_uri
    assert symbols[0].name == f"app/{name}#function-odd_named_function"
    bare_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(odd_uri, "python", 1, (workspace / "app" / name).read_text())
        )
    )
    lenses = await asyncio.wait_for(
        bare_client.text_document_code_lens_async(types.CodeLensParams(doc(odd_uri))), TIMEOUT
    )
    assert lenses
    assert lenses[0].command is not None
    assert lenses[0].command.title.startswith(f"app/{name}#function-odd_named_function")
    results = await command(bare_client, "chunkls.search", {"query": "greet", "topK": 50})
    assert "app/greet.py#function-greet" in [result["chunkId"] for result in results]
