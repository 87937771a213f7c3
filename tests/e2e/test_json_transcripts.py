"""Chunk IDs in JSON and JSON Lines transcripts (an agent's session log, a chat
export): definition, hover, links, diagnostics, quick fixes, completion, "cited
by N", through JSON escapes; and a large log."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from chunkls.lsp.diagnostics import LARGE_DOCUMENT, MAX_DIAGNOSTICS
from tests.e2e.conftest import CLIENTS, SERVER, TIMEOUT, make_workspace, start_session, uri
from tests.e2e.helpers import definition, doc, hover, position_of, target
from tests.e2e.test_diagnostics import diagnostics, quick_fixes, settled
from tests.e2e.test_references import references

pytestmark = pytest.mark.asyncio(loop_scope="module")

GREET_LINE = 17  # app/greet.py#function-greet starts here (1-based)

SESSION = (
    "\n".join(
        json.dumps(record, ensure_ascii=False).replace("/", "\\/")
        if escaped
        else json.dumps(record)
        for record, escaped in [
            ({"type": "user", "message": {"content": "Where is the greeting made?"}}, False),
            (
                {
                    "type": "assistant",
                    "message": {"content": "See app/greet.py#function-greet\nok"},
                },
                True,  # written app\/greet.py, followed by \n
            ),
            ({"type": "assistant", "text": '"app/greet.py#class-Greeter" greets.'}, False),
            ({"type": "assistant", "text": "😀 stale: `app/greet.py#function-greeting`"}, False),
            ({"type": "tool", "text": "#function-greet alone is no ID here"}, False),
        ]
    )
    + "\n"
)
"""A session log: one JSON object per line, IDs inside strings, escaped."""
EXPORT = json.dumps(
    {"messages": [{"role": "assistant", "content": "lib/util.py#function-helper\n"}]}, indent=2
)
"""A chat export (pretty-printed JSON)."""


@pytest.fixture(scope="module")
def json_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_workspace(tmp_path_factory.mktemp("json"))
    (root / "logs").mkdir()
    (root / "logs" / "session.jsonl").write_text(SESSION, encoding="utf-8")
    (root / "export.json").write_text(EXPORT, encoding="utf-8")
    return root


@pytest_lsp.fixture(params=CLIENTS, config=SERVER, scope="module")
async def json_client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, json_workspace: Path
) -> AsyncIterator[None]:
    await start_session(lsp_client, request.param, json_workspace)
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


def open_json(client: LanguageClient, path: Path, text: str, language: str = "jsonl") -> str:
    """didOpen a JSON document (``text`` need not be on disk)."""
    document_uri = uri(path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=document_uri, language_id=language, version=1, text=text)
        )
    )
    return document_uri


def range_text(text: str, at: types.Range) -> str:
    line = text.split("\n")[at.start.line]
    assert at.start.line == at.end.line
    # columns are UTF-16 code units
    units = line.encode("utf-16-le")
    return units[at.start.character * 2 : at.end.character * 2].decode("utf-16-le")


@pytest.mark.parametrize("language", ["jsonl", "json", "plaintext"])
async def test_definition_through_escapes(
    json_client: LanguageClient, json_workspace: Path, language: str
) -> None:
    # by suffix, a .jsonl file is JSON Lines whatever the client calls it
    document_uri = open_json(json_client, json_workspace / "logs" / f"d-{language}.jsonl", SESSION)
    escaped = position_of(SESSION, "app\\/greet.py#function-greet", inside=5)
    [location] = await definition(json_client, document_uri, escaped)
    assert target(location, json_workspace, "app/greet.py") == ("app/greet.py", GREET_LINE)
    quoted = position_of(SESSION, "app/greet.py#class-Greeter", inside=3)
    [location] = await definition(json_client, document_uri, quoted)
    assert location.range.start.line + 1 == 23
    assert (
        await definition(json_client, document_uri, position_of(SESSION, "#function-greet a")) == []
    )
    # not in a string: nothing
    assert await definition(json_client, document_uri, position_of(SESSION, '"type"', 0)) == []


async def test_hover_through_escapes(json_client: LanguageClient, json_workspace: Path) -> None:
    document_uri = open_json(json_client, json_workspace / "logs" / "hover.jsonl", SESSION)
    # the ID's last character, just before "\n"
    at = position_of(SESSION, "function-greet\\nok", inside=len("function-greet") - 1)
    value = await hover(json_client, document_uri, at)
    assert value is not None
    assert "**`app/greet.py#function-greet`**" in value
    assert "Say hello." in value
    # on the backslash of "\n": no ID
    after = position_of(SESSION, "\\nok", inside=1)
    assert await hover(json_client, document_uri, after) is None


async def test_links_cover_the_raw_text(json_client: LanguageClient, json_workspace: Path) -> None:
    document_uri = open_json(json_client, json_workspace / "logs" / "links.jsonl", SESSION)
    links = await asyncio.wait_for(
        json_client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=doc(document_uri))
        ),
        TIMEOUT,
    )
    assert [range_text(SESSION, link.range) for link in links or []] == [
        "app\\/greet.py#function-greet",
        "app/greet.py#class-Greeter",
    ]
    assert (links or [])[0].target == f"{uri(json_workspace / 'app' / 'greet.py')}#L{GREET_LINE}"


async def test_diagnostics_and_a_quick_fix_that_writes_json(
    json_client: LanguageClient, json_workspace: Path
) -> None:
    text = (
        SESSION + '{"text": "app/greet.py#function-gree\\u0074ing and app/gret.py#class-Greeter"}\n'
    )
    document_uri = open_json(json_client, json_workspace / "logs" / "fix.jsonl", text)
    found = await settled(json_client, document_uri, 3)
    assert [range_text(text, d.range) for d in found] == [
        "app/greet.py#function-greeting",  # after an emoji: UTF-16 columns
        "app/greet.py#function-gree\\u0074ing",
        "app/gret.py#class-Greeter",
    ]
    assert "did you mean app/greet.py#function-greet" in found[0].message
    lines = text.split("\n")
    for diagnostic in reversed(found):  # the last first: columns before it stay
        [best, *_] = await quick_fixes(json_client, document_uri, diagnostic)
        assert isinstance(best, types.CodeAction)
        assert best.edit is not None and best.edit.changes is not None
        [edit] = best.edit.changes[document_uri]
        number = edit.range.start.line
        line = lines[number].encode("utf-16-le")
        lines[number] = (
            line[: edit.range.start.character * 2].decode("utf-16-le")
            + edit.new_text
            + line[edit.range.end.character * 2 :].decode("utf-16-le")
        )
        json.loads(lines[number])  # still JSON
    fixed = "\n".join(lines)
    assert "`app/greet.py#function-greet`" in fixed
    assert '"text": "app/greet.py#function-greet and app/greet.py#class-Greeter"' in fixed
    json_client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=document_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    assert await settled(json_client, document_uri, 0) == []


async def test_completion_inside_a_json_string(
    json_client: LanguageClient, json_workspace: Path
) -> None:
    line = '{"text": "see app/greet.py#'
    document_uri = open_json(json_client, json_workspace / "logs" / "complete.jsonl", line)
    result = await asyncio.wait_for(
        json_client.text_document_completion_async(
            types.CompletionParams(
                text_document=doc(document_uri),
                position=types.Position(0, len(line)),
                context=types.CompletionContext(
                    trigger_kind=types.CompletionTriggerKind.TriggerCharacter,
                    trigger_character="#",
                ),
            )
        ),
        TIMEOUT,
    )
    assert isinstance(result, types.CompletionList)
    assert "function-greet" in [item.label for item in result.items]


async def test_json_files_count_as_citations(
    json_client: LanguageClient, json_workspace: Path
) -> None:
    greet_uri = open_json(
        json_client,
        json_workspace / "app" / "greet.py",
        (json_workspace / "app" / "greet.py").read_text(encoding="utf-8"),
        "python",
    )
    found = await references(json_client, greet_uri, GREET_LINE)
    in_log = [loc for loc in found if loc.uri == uri(json_workspace / "logs" / "session.jsonl")]
    assert [range_text(SESSION, loc.range) for loc in in_log] == ["app\\/greet.py#function-greet"]
    util_uri = open_json(
        json_client,
        json_workspace.parent / "second" / "lib" / "util.py",
        "def helper() -> int:\n    return 7\n",
        "python",
    )
    found = await references(json_client, util_uri, 0)
    assert uri(json_workspace / "export.json") in [loc.uri for loc in found]


async def test_a_large_log(json_client: LanguageClient, json_workspace: Path) -> None:
    """A 2 MB log (diagnostics in slices): hovers answer, at most 1000
    diagnostics, the same as a small document's."""

    def record(n: int) -> dict[str, str]:
        text = f"app/greet.py#function-greet \\ `app/greet.py#function-gone_{n}`"
        return {"type": "assistant", "text": text}

    filler = {"type": "tool", "text": "x" * 300}
    lines = [json.dumps(filler if n % 3 else record(n)) for n in range(9000)]
    text = "\n".join(lines) + "\n"
    assert len(text) > 2 * LARGE_DOCUMENT
    document_uri = open_json(json_client, json_workspace / "logs" / "large.jsonl", text)
    last = position_of(text, "function-greet", occurrence=2999)
    [location] = await definition(json_client, document_uri, last)
    assert location.range.start.line + 1 == GREET_LINE
    found = await settled(json_client, document_uri, MAX_DIAGNOSTICS)
    assert [range_text(text, d.range) for d in found] == [
        f"app/greet.py#function-gone_{n}" for n in range(0, 3000, 3)
    ]
    assert [d.range.start.line for d in found] == list(range(0, 3000, 3))
    # the first unknown IDs' suggestions are in the message; later ones' are
    # made when a quick fix is asked for
    assert "did you mean" in found[0].message
    assert "did you mean" not in found[-1].message
    [*fixes] = await quick_fixes(json_client, document_uri, found[-1])
    assert fixes
    value = await hover(json_client, document_uri, last)
    assert value is not None and "Say hello." in value
    pushed = await diagnostics(json_client, document_uri)
    assert len(pushed) == MAX_DIAGNOSTICS == 1000
