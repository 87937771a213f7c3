"""workspace/executeCommand: chunkls.search, chunkls.stats, chunkls.chunkAt, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from chunkls.index.session import build_index
from tests.e2e.conftest import open_document, uri
from tests.e2e.helpers import command

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_search_matches_the_core_ranking(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    results = await command(shared_client, "chunkls.search", {"query": "greet name", "topK": 3})
    expected = build_index([shared_workspace, shared_workspace.parent / "second"]).queries.search(
        "greet name", 3
    )
    assert [r["chunkId"] for r in results] == [h.item.chunk.chunk_id for h in expected]
    assert [r["score"] for r in results] == [round(h.score, 6) for h in expected]
    first = results[0]
    assert first["uri"] == uri(shared_workspace / "app" / "greet.py")
    assert set(first["range"]) == {"start", "end"}
    assert first["preview"] and "\n" not in first["preview"]


@pytest.mark.parametrize("mode", [None, "hybrid", "bm25"])
async def test_search_ranks_in_the_mode_asked_and_says_which(
    shared_client: LanguageClient, shared_workspace: Path, mode: str | None
) -> None:
    query = "how do I greet someone politely"
    asked = {"query": query, "topK": 5, **({"mode": mode} if mode else {})}
    results = await command(shared_client, "chunkls.search", asked)
    roots = [shared_workspace, shared_workspace.parent / "second"]
    expected = build_index(roots).queries.search(query, 5, mode or "hybrid")
    assert expected
    assert [(r["chunkId"], r["score"], r["mode"]) for r in results] == [
        (h.item.chunk.chunk_id, round(h.score, 6), mode or "hybrid") for h in expected
    ]


async def test_an_unknown_mode_is_an_error_naming_the_modes(shared_client: LanguageClient) -> None:
    with pytest.raises(
        JsonRpcException, match=r"unknown search mode 'dense' \(modes: hybrid, bm25\)"
    ):
        await command(shared_client, "chunkls.search", {"query": "greet", "mode": "dense"})
    assert await command(shared_client, "chunkls.search", {"query": "greet", "topK": 1})


@pytest.mark.parametrize("query", ["how does the", "?!", "   "])
async def test_a_query_with_nothing_to_search_finds_nothing(
    shared_client: LanguageClient, query: str
) -> None:
    assert await command(shared_client, "chunkls.search", {"query": query}) == []


@pytest.mark.parametrize(
    ("query", "mode", "reason"),
    [
        ("how does a", None, "only question and stop words"),
        ("how does the", "hybrid", "only question and stop words"),
        ("?!", None, "no letters or digits"),
        ("?!", "bm25", "no letters or digits"),
    ],
)
async def test_a_query_with_nothing_to_search_says_why_when_asked(
    shared_client: LanguageClient, query: str, mode: str | None, reason: str
) -> None:
    from chunkls.search.modes import query_problem

    asked = {"query": query, "withReason": True, **({"mode": mode} if mode else {})}
    answer = await command(shared_client, "chunkls.search", asked)
    assert answer == {
        "results": [],
        "mode": mode or "hybrid",
        "reason": query_problem(query, mode or "hybrid"),  # the CLI's and MCP's words
    }
    assert reason in answer["reason"] and repr(query) in answer["reason"]


async def test_a_searched_query_has_no_reason(shared_client: LanguageClient) -> None:
    plain = await command(shared_client, "chunkls.search", {"query": "greet", "topK": 2})
    answer = await command(
        shared_client, "chunkls.search", {"query": "greet", "topK": 2, "withReason": True}
    )
    assert answer == {"results": plain, "mode": "hybrid", "reason": None}
    assert plain and set(plain[0]["range"]) == {"start", "end"}
    nothing = {"query": "zzzqqq", "withReason": True}
    assert await command(shared_client, "chunkls.search", nothing) == {
        "results": [],
        "mode": "hybrid",
        "reason": None,  # searched: it matches no chunk
    }


async def test_search_defaults_and_limits(shared_client: LanguageClient) -> None:
    results = await command(shared_client, "chunkls.search", {"query": "greet"})
    assert 0 < len(results) <= 20
    assert await command(shared_client, "chunkls.search", {"query": "zzzqqq"}) == []


@pytest.mark.parametrize(
    "arguments",
    [
        (),
        ({"topK": 3},),
        ({"query": "x", "topK": "many"},),
        ("greet",),
        ({"query": "x"}, {"query": "y"}),
    ],
)
async def test_bad_arguments_are_errors_not_crashes(
    shared_client: LanguageClient, arguments: tuple[object, ...]
) -> None:
    with pytest.raises(JsonRpcException):
        await command(shared_client, "chunkls.search", *arguments)
    assert await command(shared_client, "chunkls.search", {"query": "greet", "topK": 1})


async def test_unknown_command_is_an_error(shared_client: LanguageClient) -> None:
    with pytest.raises(JsonRpcException):
        await command(shared_client, "chunkls.nope")


async def test_stats(shared_client: LanguageClient, shared_workspace: Path) -> None:
    stats = await command(shared_client, "chunkls.stats")
    core = build_index([shared_workspace, shared_workspace.parent / "second"])
    assert stats["chunks"] == len(core.queries)
    assert stats["files"] == core.queries.file_count()
    assert stats["skipped"] == []
    assert stats["indexing"] is False


async def test_chunk_at(shared_client: LanguageClient, shared_workspace: Path) -> None:
    document_uri = open_document(shared_client, shared_workspace / "app" / "greet.py")
    assert await command(shared_client, "chunkls.chunkAt", {"uri": document_uri, "line": 25}) == {
        "chunkId": "app/greet.py#class-Greeter"
    }
    assert (
        await command(shared_client, "chunkls.chunkAt", {"uri": document_uri, "line": 14}) is None
    )
    assert await command(shared_client, "chunkls.chunkAt", {"uri": "untitled:x", "line": 0}) is None


async def test_chunks_equal_the_cli(shared_client: LanguageClient, shared_workspace: Path) -> None:
    listed = await command(shared_client, "chunkls.chunks")
    core = build_index([shared_workspace, shared_workspace.parent / "second"])
    assert [(c["chunkId"], c["startLine"], c["endLine"]) for c in listed] == [
        (e.chunk.chunk_id, e.chunk.start_line, e.chunk.end_line) for e in core.queries.chunks()
    ]


@pytest.mark.parametrize("mode", [None, "bm25"])
@pytest.mark.parametrize("query", ["Greeter init greeting", "greet name", "parse value"])
async def test_results_listed_without_parts_open_where_search_would(
    shared_client: LanguageClient, query: str, mode: str | None
) -> None:
    """``parts: false`` lists the whole chunks; ``chunkls.jumpTarget`` then gives
    each the range and lines ``chunkls.search`` sends with its parts."""
    asked = {"query": query, "topK": 10, **({"mode": mode} if mode else {})}
    full = await command(shared_client, "chunkls.search", asked)
    lazy = await command(shared_client, "chunkls.search", {**asked, "parts": False})
    assert [r["chunkId"] for r in lazy] == [r["chunkId"] for r in full]
    assert all(r["range"] == r["chunkRange"] and r["lines"] is None for r in lazy)
    targets = []
    for result in lazy:
        target = await command(
            shared_client,
            "chunkls.jumpTarget",
            {
                "query": query,
                "chunkId": result["chunkId"],
                "uri": result["uri"],
                "line": result["range"]["start"]["line"],
                **({"mode": mode} if mode else {}),
            },
        )
        targets.append((target["range"], target["lines"]))
    assert targets == [(r["range"], r["lines"]) for r in full]
    if query.startswith("Greeter"):  # a method answers: not the whole class
        greeter = next(r for r in full if r["chunkId"].endswith("#class-Greeter"))
        assert greeter["range"] != greeter["chunkRange"]


async def test_a_jump_target_for_a_chunk_not_indexed_is_null(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    where = {"uri": uri(shared_workspace / "app" / "greet.py"), "line": 0}
    for chunk_id in ("app/greet.py#function-gone", "app/greet.py#class-Greeter"):
        # an ID the index lacks, or a line its chunk does not start on
        asked = {"query": "greet", "chunkId": chunk_id, **where}
        assert await command(shared_client, "chunkls.jumpTarget", asked) is None
    elsewhere = {"query": "greet", "chunkId": "app/greet.py#function-greet", "line": 17}
    assert (
        await command(shared_client, "chunkls.jumpTarget", {**elsewhere, "uri": "untitled:1"})
        is None
    )


@pytest.mark.parametrize(
    "argument",
    [
        {"chunkId": "app/greet.py#function-greet", "uri": "file:///x", "line": 0},
        {"query": "greet", "uri": "file:///x", "line": 0},
        {"query": "greet", "chunkId": "app/greet.py#function-greet", "uri": "file:///x"},
        {"query": "greet", "chunkId": "a#b", "uri": "file:///x", "line": 0, "mode": "dense"},
    ],
)
async def test_bad_jump_target_arguments_are_errors(
    shared_client: LanguageClient, argument: dict[str, object]
) -> None:
    with pytest.raises(JsonRpcException):
        await command(shared_client, "chunkls.jumpTarget", argument)
    assert await command(shared_client, "chunkls.search", {"query": "greet", "topK": 1})
