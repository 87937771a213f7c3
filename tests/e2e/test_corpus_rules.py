"""``[tool.chunkls]`` changed on disk (a save, a branch switch, another program)
is read again: the index then equals what the CLI makes of the same tree."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from chunkls.index.session import build_index
from tests.e2e.conftest import TIMEOUT, uri, wait_indexed
from tests.e2e.helpers import command


def watched(client: LanguageClient, path: Path, kind: types.FileChangeType) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri(path), type=kind)])
    )


async def listed(client: LanguageClient) -> list[tuple[str, int, int]]:
    await wait_indexed(client)
    chunks = await command(client, "chunkls.chunks")
    return [(c["chunkId"], c["startLine"], c["endLine"]) for c in chunks]


def fresh(workspace: Path) -> list[tuple[str, int, int]]:
    """What the CLI indexes on the same tree (no cache, the folders' own rules)."""
    index = build_index([workspace, workspace.parent / "second"])
    return [
        (e.chunk.chunk_id, e.chunk.start_line, e.chunk.end_line) for e in index.queries.chunks()
    ]


def source_paths(chunks: list[tuple[str, int, int]]) -> set[str]:
    return {chunk_id.partition("#")[0] for chunk_id, _, _ in chunks}


async def test_a_changed_created_or_deleted_table_is_read_again(
    client: LanguageClient, workspace: Path
) -> None:
    pyproject = workspace / "pyproject.toml"
    before = await listed(client)
    assert before == fresh(workspace)
    assert any(path.startswith("app/") for path in source_paths(before))

    pyproject.write_text('[tool.chunkls]\nexclude = ["generated/**", "app/**"]\n')
    watched(client, pyproject, types.FileChangeType.Changed)
    now = await listed(client)
    assert now == fresh(workspace)
    assert not any(path.startswith("app/") for path in source_paths(now))

    pyproject.unlink()  # no table: the tutorial's rules (generated/ comes in)
    watched(client, pyproject, types.FileChangeType.Deleted)
    now = await listed(client)
    assert now == fresh(workspace)
    assert any(path.startswith("generated/") for path in source_paths(now))

    pyproject.write_text('[tool.chunkls]\nexclude = ["generated/**"]\n')
    watched(client, pyproject, types.FileChangeType.Created)
    assert await listed(client) == fresh(workspace) == before


async def test_a_saved_table_is_read_again(client: LanguageClient, workspace: Path) -> None:
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text('[tool.chunkls]\nexclude = ["generated/**", "notes/**"]\n')
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri(pyproject)))
    )
    now = await listed(client)
    assert now == fresh(workspace)
    assert not any(path.startswith("notes/") for path in source_paths(now))


async def test_a_nested_projects_table_is_not_the_folders(
    client: LanguageClient, workspace: Path
) -> None:
    before = await listed(client)
    nested = workspace / "app" / "pyproject.toml"
    nested.write_text('[tool.chunkls]\nexclude = ["**"]\n')
    watched(client, nested, types.FileChangeType.Created)
    assert await listed(client) == before == fresh(workspace)


async def test_a_malformed_table_is_reported(client: LanguageClient, workspace: Path) -> None:
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text("[tool.chunkls]\nexclude = 3\n")
    watched(client, pyproject, types.FileChangeType.Changed)
    now = await listed(client)
    assert now == fresh(workspace)  # the bad key is ignored, as at start-up

    async def reported() -> str:
        while True:
            for message in client.log_messages:
                if "pyproject.toml" in message.message and "exclude" in message.message:
                    return message.message
            await asyncio.sleep(0.05)

    message = await asyncio.wait_for(reported(), TIMEOUT)
    assert "exclude" in message
    # still answering
    assert (await command(client, "chunkls.stats"))["chunks"] == len(now)
