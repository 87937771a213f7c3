"""Unknown chunk IDs: diagnostics (pushed or pulled) and their quick fixes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tests.e2e.conftest import TIMEOUT, open_document, start_session, uri
from tests.e2e.helpers import doc

TRANSCRIPT = """\
# Chat

good: app/greet.py#function-greet and `app/greet.py#class-Greeter`
stale: app/greet.py#module-3 renamed: app/greet.py#function-greeting
heading: README.md#heading-Usage traversal: ../../etc/passwd.py#module-1
only looks like one: https://example.com/app/greet.py#function-gone, app/greet.txt#function-x
"""


def pulls(client: LanguageClient) -> bool:
    """Whether the server serves this client pulled diagnostics (it must be able to
    ask for a refresh: Neovim 0.10+ pulls without, and is pushed to)."""
    capabilities = client.capabilities
    return (
        capabilities.text_document.diagnostic is not None  # type: ignore[union-attr]
        and capabilities.workspace.diagnostics is not None  # type: ignore[union-attr]
        and bool(capabilities.workspace.diagnostics.refresh_support)  # type: ignore[union-attr]
    )


async def diagnostics(client: LanguageClient, document_uri: str) -> list[types.Diagnostic]:
    """The document's diagnostics, pulled or as last pushed (waiting for a push)."""
    if pulls(client):
        report = await asyncio.wait_for(
            client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=doc(document_uri))
            ),
            TIMEOUT,
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        return list(report.items)

    async def pushed() -> list[types.Diagnostic]:
        while document_uri not in client.diagnostics:
            await asyncio.sleep(0.05)
        return list(client.diagnostics[document_uri])

    return await asyncio.wait_for(pushed(), TIMEOUT)


async def settled(client: LanguageClient, document_uri: str, count: int) -> list[types.Diagnostic]:
    """Wait until the document has ``count`` diagnostics."""

    async def poll() -> list[types.Diagnostic]:
        while True:
            found = await diagnostics(client, document_uri)
            if len(found) == count:
                return found
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), TIMEOUT)


async def quick_fixes(
    client: LanguageClient, document_uri: str, diagnostic: types.Diagnostic
) -> list[types.Command | types.CodeAction]:
    """The code actions offered for one diagnostic."""
    actions = await asyncio.wait_for(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=doc(document_uri),
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        ),
        TIMEOUT,
    )
    return actions or []


def open_transcript(client: LanguageClient, workspace: Path, text: str = TRANSCRIPT) -> str:
    path = workspace / "docs" / "chat.md"
    path.write_text(text, encoding="utf-8")
    return open_document(client, path)


async def test_exactly_the_unknown_ids(client: LanguageClient, workspace: Path) -> None:
    document_uri = open_transcript(client, workspace)
    found = await settled(client, document_uri, 4)
    lines = TRANSCRIPT.split("\n")
    written = [
        lines[d.range.start.line][d.range.start.character : d.range.end.character] for d in found
    ]
    assert written == [
        "app/greet.py#module-3",
        "app/greet.py#function-greeting",
        "README.md#heading-Usage",
        "../../etc/passwd.py#module-1",
    ]
    for diagnostic in found:
        assert diagnostic.code == "unknown-chunk"
        assert diagnostic.source == "chunkls"
        assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert found[0].message.startswith(
        "Unknown chunk ID app/greet.py#module-3 (did you mean app/greet.py#module-1, "
        "app/greet.py#module-43"
    )
    assert "did you mean app/greet.py#function-greet" in found[1].message
    assert "README.md#heading-usage" in found[2].message


async def test_quick_fix_yields_a_resolving_id(client: LanguageClient, workspace: Path) -> None:
    document_uri = open_transcript(client, workspace)
    found = await settled(client, document_uri, 4)
    fixed = TRANSCRIPT
    for diagnostic in found[:3]:
        actions = await quick_fixes(client, document_uri, diagnostic)
        assert actions
        best = actions[0]
        assert isinstance(best, types.CodeAction)
        assert best.kind == types.CodeActionKind.QuickFix
        assert best.title.startswith("Replace with `")
        assert len(actions) <= 3
        assert best.edit is not None and best.edit.changes is not None
        [edit] = best.edit.changes[document_uri]
        line = fixed.split("\n")[edit.range.start.line]
        new_line = (
            line[: edit.range.start.character] + edit.new_text + line[edit.range.end.character :]
        )
        fixed = fixed.replace(line, new_line)
    assert "app/greet.py#module-1 " in fixed
    assert "app/greet.py#function-greet\n" in fixed
    assert "README.md#heading-usage " in fixed
    version = 2
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=document_uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    remaining = await settled(client, document_uri, 1)
    assert "passwd" in remaining[0].message


async def test_rename_breaks_then_heals_a_citation(client: LanguageClient, workspace: Path) -> None:
    text = "see app/greet.py#function-fetch_greeting\n"
    document_uri = open_transcript(client, workspace, text)
    assert await settled(client, document_uri, 0) == []
    greet = workspace / "app" / "greet.py"
    source = greet.read_text(encoding="utf-8")
    greet.write_text(source.replace("def fetch_greeting(", "def get_greeting("), "utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(greet), type=types.FileChangeType.Changed)]
        )
    )
    [broken] = await settled(client, document_uri, 1)
    # the index saw the rename: the message says so (else it would suggest it)
    hint = broken.message.partition(" (")[2]
    assert hint.startswith(("did you mean ", "renamed to ")), broken.message
    assert "app/greet.py#function-get_greeting" in hint
    greet.write_text(source, "utf-8")
    greet_uri = open_document(client, greet)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc(greet_uri)))
    assert await settled(client, document_uri, 0) == []


async def test_severity_and_off_switch(client: LanguageClient, workspace: Path) -> None:
    document_uri = open_transcript(client, workspace)
    await settled(client, document_uri, 4)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"chunkls": {"diagnostics": {"severity": "error"}}}
        )
    )

    async def errors() -> None:  # settings changes re-publish (or refresh) diagnostics
        while True:
            found = await diagnostics(client, document_uri)
            if found and all(d.severity == types.DiagnosticSeverity.Error for d in found):
                return
            await asyncio.sleep(0.05)

    await asyncio.wait_for(errors(), TIMEOUT)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"chunkls": {"diagnostics": {"enabled": False}}}
        )
    )
    assert await settled(client, document_uri, 0) == []


async def test_pull_refresh_when_the_index_changes(
    bare_client: LanguageClient, workspace: Path
) -> None:
    client = bare_client
    capabilities = client_capabilities("visual-studio-code")
    capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities()  # type: ignore[union-attr]
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(  # type: ignore[union-attr]
        refresh_support=True
    )
    await start_session(client, capabilities, workspace)
    document_uri = open_transcript(client, workspace, "see app/late.py#function-late\n")
    assert len(await settled(client, document_uri, 1)) == 1
    assert client.diagnostics == {}  # nothing pushed to a client that pulls
    before = client.diagnostic_refresh_count
    late = workspace / "app" / "late.py"
    late.write_text("def late():\n    pass\n", "utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(late), type=types.FileChangeType.Created)]
        )
    )

    async def refreshed() -> None:
        while client.diagnostic_refresh_count == before:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(refreshed(), TIMEOUT)
    await settled(client, document_uri, 0)


async def test_quick_fix_writes_a_path_with_spaces_so_it_reads_back(
    client: LanguageClient, workspace: Path
) -> None:
    notes = workspace / "Meeting Notes" / "q3 plan.md"
    notes.parent.mkdir()
    notes.write_text("# Goals\n\nship it\n", encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(notes), type=types.FileChangeType.Created)]
        )
    )

    async def indexed() -> None:
        while not await asyncio.wait_for(
            client.workspace_symbol_async(types.WorkspaceSymbolParams(query="ship goals")),
            TIMEOUT,
        ):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(indexed(), TIMEOUT)
    text = "a link [goals](Meeting%20Notes/q3%20plans.md#heading-goals) here\n"
    document_uri = open_transcript(client, workspace, text)
    [diagnostic] = await settled(client, document_uri, 1)
    actions = await quick_fixes(client, document_uri, diagnostic)
    assert actions
    best = actions[0]
    assert isinstance(best, types.CodeAction)
    assert best.title == "Replace with `Meeting Notes/q3 plan.md#heading-goals`"
    assert best.edit is not None and best.edit.changes is not None
    [edit] = best.edit.changes[document_uri]
    assert edit.new_text == "Meeting%20Notes/q3%20plan.md#heading-goals"  # still a link target
    fixed = text[: edit.range.start.character] + edit.new_text + text[edit.range.end.character :]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=document_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    assert await settled(client, document_uri, 0) == []


async def test_a_client_that_pulls_without_refresh_is_pushed_to(
    bare_client: LanguageClient, workspace: Path
) -> None:
    """Neovim 0.10+ pulls only on open and change: pulled diagnostics would stay
    stale when the index moves, so it is pushed to, and its pulls get none."""
    client = bare_client
    capabilities = client_capabilities("neovim")
    assert capabilities.text_document.diagnostic is not None  # type: ignore[union-attr]
    assert capabilities.workspace.diagnostics is None  # type: ignore[union-attr]
    await start_session(client, capabilities, workspace)
    document_uri = open_transcript(client, workspace, "see app/late.py#function-late\n")
    assert not pulls(client)
    assert len(await settled(client, document_uri, 1)) == 1  # pushed
    report = await asyncio.wait_for(
        client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=doc(document_uri))
        ),
        TIMEOUT,
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert list(report.items) == []  # no second copy beside the pushed ones
    late = workspace / "app" / "late.py"
    late.write_text("def late():\n    pass\n", "utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(late), type=types.FileChangeType.Created)]
        )
    )
    await settled(client, document_uri, 0)  # the index moved: pushed again
