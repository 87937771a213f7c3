"""The index stays true: saves, disk changes, folders and settings."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from chunkls.index.session import build_index
from tests.e2e.conftest import TIMEOUT, open_document, uri, wait_indexed
from tests.e2e.helpers import command, definition, doc, hover, position_of


async def lens_titles(client: LanguageClient, document_uri: str) -> list[str]:
    result = await asyncio.wait_for(
        client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(document_uri))),
        TIMEOUT,
    )
    return [lens.command.title for lens in result or [] if lens.command]


def change(client: LanguageClient, document_uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=document_uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def until(predicate: Any, what: str) -> None:
    async def poll() -> None:
        while not await predicate():
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(poll(), TIMEOUT)
    except TimeoutError:
        pytest.fail(f"timed out waiting for {what}")


async def ids_of(client: LanguageClient, query: str) -> list[str]:
    results = await command(client, "chunkls.search", {"query": query, "topK": 50})
    return [r["chunkId"] for r in results]


def watched(client: LanguageClient, *changes: tuple[Path, types.FileChangeType]) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(path), type=kind) for path, kind in changes]
        )
    )


async def test_save_after_rename_updates_lenses_search_and_definitions(
    client: LanguageClient, workspace: Path
) -> None:
    greet = workspace / "app" / "greet.py"
    document_uri = open_document(client, greet)
    assert "app/greet.py#function-greet" in await lens_titles(client, document_uri)

    text = greet.read_text(encoding="utf-8").replace("def greet(name", "def salute(name")
    change(client, document_uri, 2, text)
    titles = await lens_titles(client, document_uri)  # lenses follow the buffer at once
    assert "app/greet.py#function-salute" in titles
    assert "app/greet.py#function-greet" not in titles

    refreshes = client.lens_refreshes  # type: ignore[attr-defined]
    greet.write_text(text, encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc(document_uri)))

    async def saved() -> bool:
        return "app/greet.py#function-salute" in await ids_of(client, "salute")

    await until(saved, "the save to reach search")
    assert "app/greet.py#function-greet" not in await ids_of(client, "greet")
    transcript = workspace / "docs" / "transcript.md"
    transcript_text = (
        transcript.read_text(encoding="utf-8") + "\nNow app/greet.py#function-salute.\n"
    )
    transcript.write_text(transcript_text, encoding="utf-8")
    transcript_uri = open_document(client, transcript)
    found = await definition(
        client, transcript_uri, position_of(transcript_text, "#function-salute")
    )
    assert [loc.range.start.line + 1 for loc in found] == [17]
    # the old ID follows its chunk: the index's history knows it was renamed
    renamed = await definition(
        client, transcript_uri, position_of(transcript_text, "#function-greet")
    )
    assert [loc.range.start.line + 1 for loc in renamed] == [17]
    workspace_caps = client.capabilities.workspace  # type: ignore[union-attr]
    if workspace_caps and workspace_caps.code_lens and workspace_caps.code_lens.refresh_support:

        async def refreshed() -> bool:
            return client.lens_refreshes > refreshes  # type: ignore[attr-defined,no-any-return]

        await until(refreshed, "a codeLens refresh")
    else:  # never a request the client did not say it supports
        assert client.lens_refreshes == 0  # type: ignore[attr-defined]


async def test_broken_python_buffer_keeps_last_good_lenses(
    client: LanguageClient, workspace: Path
) -> None:
    document_uri = open_document(client, workspace / "app" / "greet.py")
    before = await lens_titles(client, document_uri)
    change(client, document_uri, 2, "def broken(:\n    pass\n")
    assert await lens_titles(client, document_uri) == before


async def test_files_created_changed_and_deleted_on_disk(
    client: LanguageClient, workspace: Path
) -> None:
    new = workspace / "app" / "fresh.py"
    new.write_text("def fresh_function():\n    return 'fresh'\n", encoding="utf-8")
    watched(client, (new, types.FileChangeType.Created))

    async def created() -> bool:
        return "app/fresh.py#function-fresh_function" in await ids_of(client, "fresh_function")

    await until(created, "a created file to be indexed")
    new.unlink()
    watched(client, (new, types.FileChangeType.Deleted))

    async def deleted() -> bool:
        return "app/fresh.py#function-fresh_function" not in await ids_of(client, "fresh_function")

    await until(deleted, "a deleted file to leave the index")


async def test_a_hover_follows_the_index_while_its_document_stays_the_same(
    client: LanguageClient, workspace: Path
) -> None:
    """Hovers are made once per document version and index state: an index
    change (here, on disk) shows in the next hover on the same unchanged text."""
    notes = workspace / "docs" / "cited.md"
    text = "# Cited\n\nSee app/later.py#function-later_function here.\n"
    notes.write_text(text, encoding="utf-8")
    notes_uri = open_document(client, notes)
    at = position_of(text, "#function-later")
    assert "Unknown chunk ID" in (await hover(client, notes_uri, at) or "")
    assert "Unknown chunk ID" in (await hover(client, notes_uri, at) or "")  # made once
    later = workspace / "app" / "later.py"
    later.write_text("def later_function():\n    return 'later'\n", encoding="utf-8")
    watched(client, (later, types.FileChangeType.Created))

    async def previewed() -> bool:
        return "def later_function():" in (await hover(client, notes_uri, at) or "")

    await until(previewed, "the hover to show the new chunk")
    later.unlink()
    watched(client, (later, types.FileChangeType.Deleted))

    async def unknown() -> bool:  # no preview of a chunk; its last text, as history
        said = await hover(client, notes_uri, at) or ""
        return "was deleted" in said and "Unknown chunk ID" not in said

    await until(unknown, "the hover to forget the deleted chunk")


async def test_folder_deleted_and_branch_switch_batch(
    client: LanguageClient, workspace: Path
) -> None:
    before = (await command(client, "chunkls.stats"))["chunks"]
    branch = workspace / "feature"
    events = []
    for number in range(300):
        path = branch / f"pkg{number % 10}" / f"mod{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def feature_{number}():\n    return {number}\n", encoding="utf-8")
        events.append((path, types.FileChangeType.Created))
    watched(client, *events)

    async def all_in() -> bool:
        return (await command(client, "chunkls.stats"))["chunks"] == before + 300

    await until(all_in, "300 created files")
    shutil.rmtree(branch)
    watched(client, (branch, types.FileChangeType.Deleted))

    async def all_out() -> bool:
        return (await command(client, "chunkls.stats"))["chunks"] == before

    await until(all_out, "a deleted folder to leave the index")


async def test_unchunkable_file_is_reported_once(client: LanguageClient, workspace: Path) -> None:
    bad = workspace / "app" / "bad.py"
    bad.write_text("def broken(:\n", encoding="utf-8")
    for _ in range(3):
        watched(client, (bad, types.FileChangeType.Changed))
        await asyncio.sleep(0.1)

    async def skipped() -> bool:
        stats = await command(client, "chunkls.stats")
        return any(s["path"].endswith("app/bad.py") for s in stats["skipped"])

    await until(skipped, "the bad file to be skipped")
    reports = [m.message for m in client.log_messages if "app/bad.py" in m.message]
    assert len(reports) == 1
    assert "SyntaxError line 1" in reports[0]
    assert await ids_of(client, "greet")  # everything else still answers


async def test_workspace_folders_added_and_removed(client: LanguageClient, workspace: Path) -> None:
    second = workspace.parent / "second"
    folder = types.WorkspaceFolder(uri=uri(second), name="second")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[], removed=[folder])
        )
    )

    async def removed() -> bool:
        return "lib/util.py#function-helper" not in await ids_of(client, "helper")

    await until(removed, "a removed folder to leave the index")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
        )
    )

    async def added() -> bool:
        return "lib/util.py#function-helper" in await ids_of(client, "helper")

    await until(added, "an added folder to be indexed")


async def test_configuration_change_reindexes(client: LanguageClient, workspace: Path) -> None:
    document_uri = open_document(client, workspace / "app" / "formfeed.py")
    assert (await lens_titles(client, document_uri))[0] == "app/formfeed.py#function-first"
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"chunkls": {"exclude": ["app/formfeed.py"], "codeLens": {"enabled": True}}}
        )
    )

    async def excluded() -> bool:
        return "app/formfeed.py#function-first" not in await ids_of(client, "first")

    await until(excluded, "the exclude to re-index")
    await wait_indexed(client)
    titles = await lens_titles(client, document_uri)
    assert len(titles) == 1
    assert "not in the chunk corpus" in titles[0].lower()
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"chunkls": {"codeLens": {"enabled": False}}})
    )

    async def lenses_off() -> bool:
        return await lens_titles(client, document_uri) == []

    await until(lenses_off, "lenses to be switched off")
    await wait_indexed(client)  # the exclude is gone: the file is indexed again
    assert "app/formfeed.py#function-first" in await ids_of(client, "first")


async def test_progress_reports_the_index(client: LanguageClient, workspace: Path) -> None:
    if not client.capabilities.window or not client.capabilities.window.work_done_progress:  # type: ignore[union-attr]
        pytest.skip("this client does not support work-done progress")
    reports = [r for values in client.progress_reports.values() for r in values]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message is not None
    expected = len(build_index([workspace, workspace.parent / "second"]).queries)
    assert reports[-1].message.startswith(f"Indexed {expected} chunks in ")
