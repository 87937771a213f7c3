"""textDocument/completion of chunk IDs: identities after ``path#``, paths before."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import TIMEOUT, open_document
from tests.e2e.helpers import doc

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def complete(
    client: LanguageClient, workspace: Path, line: str, trigger: str | None = None
) -> types.CompletionList | None:
    path = workspace / "notes" / f"complete-{abs(hash(line))}.md"
    path.write_text(f"# Notes\n\n{line}", encoding="utf-8")
    document_uri = open_document(client, path)
    context = types.CompletionContext(
        trigger_kind=types.CompletionTriggerKind.TriggerCharacter
        if trigger
        else types.CompletionTriggerKind.Invoked,
        trigger_character=trigger,
    )
    result = await asyncio.wait_for(
        client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc(document_uri),
                position=types.Position(2, len(line)),
                context=context,
            )
        ),
        TIMEOUT,
    )
    assert result is None or isinstance(result, types.CompletionList)
    return result


async def test_identities_after_path_hash(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    result = await complete(shared_client, shared_workspace, "see app/greet.py#", "#")
    assert result is not None
    labels = [item.label for item in result.items]
    assert labels[:4] == ["module-1", "function-trace", "function-greet", "class-Greeter"]
    assert labels.count("function-parse") == 1
    greet = result.items[2]
    assert greet.detail == "@trace"
    assert greet.kind == types.CompletionItemKind.Function
    assert isinstance(greet.text_edit, types.TextEdit)
    assert greet.text_edit.new_text == "function-greet"
    assert greet.text_edit.range.start.character == len("see app/greet.py#")


async def test_identity_prefix_filters(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    result = await complete(shared_client, shared_workspace, "`./app/greet.py#cla")
    assert result is not None
    assert [item.label for item in result.items] == ["class-Greeter"]
    edit = result.items[0].text_edit
    assert isinstance(edit, types.TextEdit)
    assert edit.range.start.character == len("`./app/greet.py#")


async def test_paths_complete_to_corpus_files(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    result = await complete(shared_client, shared_workspace, "see app/", "/")
    assert result is not None
    assert [item.label for item in result.items] == [
        "app/crlf.py",
        "app/emoji.py",
        "app/formfeed.py",
        "app/greet.py",
    ]
    edit = result.items[3].text_edit
    assert isinstance(edit, types.TextEdit)
    assert edit.new_text == "app/greet.py#"
    assert edit.range.start.character == len("see ")


async def test_nothing_for_plain_words_or_unknown_files(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    assert await complete(shared_client, shared_workspace, "# Heading", "#") is None
    unknown = await complete(shared_client, shared_workspace, "nowhere/x.py#", "#")
    assert unknown is not None
    assert list(unknown.items) == []
