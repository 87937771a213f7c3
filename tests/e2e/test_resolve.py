"""chunkls.resolve: where chunk IDs are, for a terminal line or an agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from chunkls.lsp.commands import MAX_RESOLVE_SPANS, MAX_RESOLVE_TEXT
from tests.e2e.conftest import uri
from tests.e2e.helpers import command

pytestmark = pytest.mark.asyncio(loop_scope="module")

RESOLVE = "chunkls.resolve"


async def test_one_id(shared_client: LanguageClient, shared_workspace: Path) -> None:
    [found] = await command(shared_client, RESOLVE, {"chunkId": "app/greet.py#function-greet"})
    assert found["chunkId"] == "app/greet.py#function-greet"
    assert found["uri"] == uri(shared_workspace / "app" / "greet.py")
    assert found["range"]["start"] == {"line": 16, "character": 0}
    assert (found["sourcePath"], found["startLine"], found["endLine"]) == (
        "app/greet.py",
        17,
        20,
    )
    assert found["symbol"] == "greet"
    assert found["folder"] == str(shared_workspace)
    # written forms the grammar takes: a leading ./ or /, spaces around
    for written in ("./app/greet.py#function-greet", " /app/greet.py#function-greet "):
        [again] = await command(shared_client, RESOLVE, {"chunkId": written})
        assert again == found
    for unknown in ("app/greet.py#function-nope", "not an id", "#function-greet", ""):
        assert await command(shared_client, RESOLVE, {"chunkId": unknown}) == []


async def test_a_list_of_ids(shared_client: LanguageClient) -> None:
    answers = await command(
        shared_client,
        RESOLVE,
        {
            "chunkIds": [
                "lib/util.py#function-helper",
                "app/x.py#function-f",
                "README.md#heading-usage",
            ]
        },
    )
    assert [[t["chunkId"] for t in answer] for answer in answers] == [
        ["lib/util.py#function-helper"],
        [],
        ["README.md#heading-usage"],
    ]


async def test_the_ids_of_a_line_with_utf16_spans(shared_client: LanguageClient) -> None:
    line = (
        "😀 1. app/greet.py#function-greet (bm25 3.1) app/x.py#function-f"
        " `lib/util.py#function-helper`"
    )
    spans = await command(shared_client, RESOLVE, {"text": line})
    units = line.encode("utf-16-le")
    assert [units[s["start"] * 2 : s["end"] * 2].decode("utf-16-le") for s in spans] == [
        "app/greet.py#function-greet",
        "lib/util.py#function-helper",
    ]
    assert spans[0]["start"] == 6  # the emoji is two UTF-16 code units
    assert spans[0]["chunkId"] == "app/greet.py#function-greet"
    assert spans[0]["targets"][0]["startLine"] == 17
    assert await command(shared_client, RESOLVE, {"text": "no ids here"}) == []


async def test_caps(shared_client: LanguageClient) -> None:
    line = " ".join(["app/greet.py#function-greet"] * (MAX_RESOLVE_SPANS + 5))
    assert len(await command(shared_client, RESOLVE, {"text": line})) == MAX_RESOLVE_SPANS
    late = " " * MAX_RESOLVE_TEXT + "app/greet.py#function-greet"
    assert await command(shared_client, RESOLVE, {"text": late}) == []


async def test_the_folder_of_the_cwd_comes_first(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    second = shared_workspace.parent / "second"
    (found,) = await command(
        shared_client,
        RESOLVE,
        {"chunkId": "lib/util.py#function-helper", "folder": uri(second / "lib")},
    )
    assert found["folder"] == str(second)
    # a folder outside the workspace: every folder is asked
    [found] = await command(
        shared_client,
        RESOLVE,
        {"chunkId": "app/greet.py#function-greet", "folder": "file:///nowhere"},
    )
    assert found["folder"] == str(shared_workspace)


@pytest.mark.parametrize(
    "arguments",
    [
        (),
        ({},),
        ({"chunkId": 5},),
        ({"chunkIds": "app/greet.py#function-greet"},),
        ({"chunkIds": ["app/greet.py#function-greet", 3]},),
        ({"text": ["a"]},),
        ({"chunkId": "a.py#module-1", "text": "a.py#module-1"},),
        ({"chunkId": "a.py#module-1", "folder": 1},),
        ("app/greet.py#function-greet",),
        ({"chunkId": "a"}, {"chunkId": "b"}),
    ],
)
async def test_bad_arguments_are_errors_not_crashes(
    shared_client: LanguageClient, arguments: tuple[object, ...]
) -> None:
    with pytest.raises(JsonRpcException):
        await command(shared_client, RESOLVE, *arguments)
    assert await command(shared_client, RESOLVE, {"chunkId": "app/greet.py#function-greet"})
