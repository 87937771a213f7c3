"""Stale chunk IDs followed through git over LSP (issue 45): hover says where the
chunk went (or shows a deleted one's last text, as history), go to definition
follows it, the quick fix offers the replacement first and preferred,
``source.fixAll.chunkls`` fixes a document and ``chunkls.fixCitations`` the
workspace through one edit; the first history lookup blocks no request."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT, make_workspace, open_document, uri
from tests.e2e.helpers import command, definition, doc, hover, position_of
from tests.e2e.test_diagnostics import settled
from tests.unit.test_history import GONE, HELPER, commit, git

MOVED = "app/helpers.py#function-normalise_header_name"
NEW = "app/headers.py#function-normalise_header_name"
DELETED = "app/helpers.py#function-launch_rockets"
NOTES = f"# Notes\n\nSee `{MOVED}` and {DELETED}.\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The fixture workspace as a git repository whose last commit moved one
    function to a module of its own and deleted another."""
    root = make_workspace(tmp_path)
    git(root, "init", "-q", "-b", "main")
    commit(root, {"app/helpers.py": HELPER + "\n\n" + GONE}, "one")
    commit(root, {"app/helpers.py": None, "app/headers.py": HELPER}, "two")
    (root / "docs" / "history.md").write_text(NOTES, encoding="utf-8")
    return root


async def until(make: Any, done: Any) -> Any:
    """Ask again until the answer is ``done`` (the history opens in the background)."""

    async def poll() -> Any:
        while True:
            answer = await make()
            if done(answer):
                return answer
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), TIMEOUT)


async def test_hover_and_definition_follow_a_moved_id(
    client: LanguageClient, workspace: Path
) -> None:
    document_uri = open_document(client, workspace / "docs" / "history.md")
    at = position_of(NOTES, MOVED)
    value = await until(
        lambda: hover(client, document_uri, at), lambda v: v is not None and "moved to" in v
    )
    assert f"`{MOVED}` moved to `{NEW}` (" in value
    assert f"**`{NEW}`**" in value  # the new chunk's preview
    [location] = await definition(client, document_uri, at)
    assert location.uri == uri(workspace / "app" / "headers.py")
    assert location.range.start.line == 0


async def test_hover_shows_a_deleted_chunks_last_text_as_history(
    client: LanguageClient, workspace: Path
) -> None:
    document_uri = open_document(client, workspace / "docs" / "history.md")
    at = position_of(NOTES, DELETED)
    value = await until(
        lambda: hover(client, document_uri, at), lambda v: v is not None and "deleted" in v
    )
    assert f"`{DELETED}` was deleted; last seen " in value
    assert "History" in value and "def launch_rockets(count):" in value
    assert await definition(client, document_uri, at) == []


async def test_quick_fix_and_fix_all(client: LanguageClient, workspace: Path) -> None:
    document_uri = open_document(client, workspace / "docs" / "history.md")
    found = await until(
        lambda: settled(client, document_uri, 2), lambda d: "moved to" in d[0].message
    )
    moved, deleted = found
    assert f"moved to {NEW} in " in moved.message and "deleted; last seen in" in deleted.message
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(document_uri),
            range=moved.range,
            context=types.CodeActionContext(diagnostics=[moved]),
        )
    )
    first = actions[0] if actions else None
    assert isinstance(first, types.CodeAction)
    assert first.title == f"Replace with `{NEW}`" and first.is_preferred
    fix_all = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(document_uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"]),
        )
    )
    assert fix_all is not None
    [action] = fix_all
    assert isinstance(action, types.CodeAction) and action.kind == "source.fixAll.chunkls"
    assert action.edit is not None and action.edit.changes is not None
    [edit] = action.edit.changes[document_uri]  # the deleted one is never rewritten
    assert edit.new_text == NEW and edit.range == moved.range


async def test_the_workspace_is_fixed_through_one_edit(
    client: LanguageClient, workspace: Path
) -> None:
    applied: list[types.WorkspaceEdit] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    # a hover wants the history first (it opens in the background)
    document_uri = open_document(client, workspace / "docs" / "history.md")
    await until(
        lambda: hover(client, document_uri, position_of(NOTES, MOVED)),
        lambda v: v is not None and "moved to" in v,
    )
    answer = await command(client, "chunkls.fixCitations")
    assert answer == {"files": 1, "fixed": 1, "applied": True}
    [edit] = applied
    assert edit.changes is not None
    assert [e.new_text for e in edit.changes[document_uri]] == [NEW]
