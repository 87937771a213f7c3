"""Chunks as MCP resources without the SDK's server (``chunkls.mcp.resources``
and the query API's ``chunk_page`` and ``propose_ids``): URIs that survive any
client, reading, paging, completion, and what never leads out of the roots."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from pydantic import AnyUrl

from chunkls.index.browse import Place
from chunkls.index.queries import Queries
from chunkls.index.session import build_index
from chunkls.mcp import resources
from chunkls.mcp.resources import (
    INVALID_PARAMS,
    PREFIX,
    RESOURCE_NOT_FOUND,
    ResourceProblem,
    chunk_id_of,
    chunk_uri,
)

from .strategies import write_tree

TREE = {
    "app/greet.py": "def greet(name):\n    return name\n\n\nclass Greeter:\n    pass\n",
    "app/parse.py": "def parse(text):\n    return text.split()\n",
    "dir with space/a b.py": "def f():\n    return 1\n",
    "pct/100%.md": "# 50% off\n\nCheap.\n",
    "ünï/cödé.py": "class Ü:\n    pass\n",
    "notes/c#.md": "# C# tips\n\nUse it.\n",
    "a/b/c/d/e.py": "x = 1\n",
    "q?.md": "# Why?\n\nBecause.\n",
    "README.md": "# Setup\n\nInstall it.\n\n## Usage\n\nRun it.\n",
}
ODD_IDS = [
    "app/greet.py#function-greet",
    "dir with space/a b.py#function-f",
    "pct/100%.md#heading-50-off",
    "ünï/cödé.py#class-Ü",
    "notes/c#.md#heading-c-tips",
    "a/b/c/d/e.py#module-1",
    "q?.md#heading-why",
]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("resources") / "repo"
    folder.mkdir()
    write_tree(folder, TREE)
    (folder.parent / "outside.py").write_text("def secret():\n    return 42\n")
    return folder


@pytest.fixture(scope="module")
def index(root: Path) -> Iterator[Queries]:
    session = build_index([root])
    yield session.queries


def test_the_odd_ids_are_indexed(index: Queries) -> None:
    assert set(ODD_IDS) <= set(index.chunk_ids())


@pytest.mark.parametrize("chunk_id", ODD_IDS)
def test_a_uri_survives_a_round_trip_through_any_client(index: Queries, chunk_id: str) -> None:
    """The listed URI, as a URL parser (pydantic's, the SDK's) rewrites it, the
    template expanded by RFC 6570 (``/`` encoded too) and a client that writes
    ``#`` bare all read back the same ID, and the chunk's text."""
    uri = chunk_uri(chunk_id)
    assert uri == PREFIX + quote(chunk_id, safe="/") and "#" not in uri and " " not in uri
    assert str(AnyUrl(uri)) == uri  # a URL parser changes nothing
    written = [
        uri,
        PREFIX + quote(chunk_id, safe=""),  # the template, expanded
        str(AnyUrl(PREFIX + quote(chunk_id.partition("#")[0]) + "#" + chunk_id.partition("#")[2])),
        "CHUNKLS:" + uri[len("chunkls:") :],  # (a scheme has no case)
        "chunkls:" + uri[len(PREFIX) :],  # no slashes
    ]
    for form in written:
        assert chunk_id_of(form, index) == chunk_id, form
    contents = resources.read(index, uri)
    (found,) = index.lookup(chunk_id)
    assert [item["text"] for item in contents] == [found.chunk.text]
    meta = contents[0]["_meta"]
    assert meta["chunk_id"] == chunk_id and meta["path"] == found.chunk.source_path
    assert (meta["start_line"], meta["end_line"]) == (found.chunk.start_line, found.chunk.end_line)


@pytest.mark.parametrize(
    ("chunk_id", "mime"),
    [
        ("app/greet.py#function-greet", "text/x-python"),
        ("README.md#heading-setup", "text/markdown"),
    ],
)
def test_a_chunk_has_its_languages_mime_type(index: Queries, chunk_id: str, mime: str) -> None:
    assert resources.read(index, chunk_uri(chunk_id))[0]["mimeType"] == mime


def test_an_absolute_path_inside_a_root_names_its_chunk(index: Queries, root: Path) -> None:
    absolute = root / "app" / "greet.py"
    uri = PREFIX + quote(str(absolute)) + "%23function-greet"  # chunkls:////tmp/...
    assert chunk_id_of(uri, index) == "app/greet.py#function-greet"


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("chunkls:///..%2Foutside.py%23function-secret", "climbs out of the roots"),
        ("chunkls:///%2e%2e%2Foutside.py%23function-secret", "climbs out of the roots"),
        ("chunkls:///%2E%2E/outside.py%23function-secret", None),  # (a URL parser's ..)
        ("chunkls:///app%2F..%2F..%2Foutside.py%23function-secret", "climbs out of the roots"),
        ("chunkls:///app/..%5C..%5Coutside.py%23function-secret", "climbs out of the roots"),
        ("chunkls:////etc/passwd%23module-1", "is outside every root"),
        ("chunkls:///%2Fetc%2Fpasswd%23module-1", "is outside every root"),
        ("chunkls:///C:%5CWindows%5Cx.py%23module-1", "is outside every root"),
        ("chunkls:///.%2Fapp/greet.py%23function-greet", "is not a root-relative path"),
        ("chunkls://host/app/greet.py%23function-greet", "names a host"),
        ("file:///etc/passwd", "is not a chunk's URI"),
        ("chunkls:///app/greet.py", "names no chunk ID"),
        ("chunkls:///%23function-greet", "names no chunk ID"),
    ],
)
def test_nothing_outside_the_roots_is_named(
    index: Queries, root: Path, uri: str, message: str | None
) -> None:
    if message is None:  # what the SDK's URL parser makes of it first: inside the root
        uri = str(AnyUrl(uri))
        assert uri == "chunkls:///outside.py%23function-secret"
        with pytest.raises(ResourceProblem) as unknown:
            resources.read(index, uri)
        assert unknown.value.code == RESOURCE_NOT_FOUND
        return
    with pytest.raises(ResourceProblem) as problem:
        resources.read(index, uri)
    assert problem.value.code == INVALID_PARAMS
    assert message in problem.value.message


@pytest.mark.parametrize(
    "chunk_id", ["app/greet.py#function-gret", "app/gret.py#function-greet", "nope.md#heading-x"]
)
def test_an_unknown_id_is_named_with_resolves_suggestions(index: Queries, chunk_id: str) -> None:
    with pytest.raises(ResourceProblem) as problem:
        resources.read(index, chunk_uri(chunk_id))
    assert problem.value.code == RESOURCE_NOT_FOUND
    suggestions = index.suggest(chunk_id)  # what `chunkls resolve` prints
    assert problem.value.data is not None and problem.value.data["suggestions"] == suggestions
    assert f"unknown chunk ID {chunk_id}" in problem.value.message
    assert all(suggestion in problem.value.message for suggestion in suggestions)


def _all_pages(index: Queries, size: int, under: list[Path]) -> tuple[list[str], int]:
    ids: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = resources.list_page(index, cursor, under, size)
        pages += 1
        assert len(page["resources"]) <= size
        ids += [item["name"] for item in page["resources"]]
        assert all(item["uri"] == chunk_uri(item["name"]) for item in page["resources"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return ids, pages


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_pages_go_through_every_chunk_in_corpus_order(index: Queries, size: int) -> None:
    ids, pages = _all_pages(index, size, [])
    everything = list(index.chunk_ids())
    assert ids == everything
    assert pages == max(1, -(-len(everything) // size))


@pytest.mark.parametrize("size", [1, 4, 100])
def test_the_files_under_the_clients_roots_come_first(
    index: Queries, root: Path, size: int
) -> None:
    ids, _ = _all_pages(index, size, [root / "app", root / "pct"])
    everything = list(index.chunk_ids())
    first = [i for i in everything if i.startswith(("app/", "pct/"))]
    assert ids == first + [i for i in everything if i not in first]
    whole, _ = _all_pages(index, size, [root.parent])  # a root holding the folder: all of it
    assert whole == everything


@pytest.mark.parametrize(
    "cursor",
    ["nonsense", "", resources.encode_cursor(Place(0, 0, "x", 0))[:-3], "W1swXV0="],
)
def test_a_cursor_chunkls_never_gave_is_an_error(index: Queries, cursor: str) -> None:
    with pytest.raises(ResourceProblem) as problem:
        resources.list_page(index, cursor)
    assert problem.value.code == INVALID_PARAMS and "cursor" in problem.value.message


def test_a_cursor_goes_on_after_the_files_changed(index: Queries) -> None:
    """A cursor is a place in the order, not a count: it stays meaningful."""
    place = Place(1, 0, "app/greet.py", 1)
    page = index.chunk_page(place, 2)
    assert [stub[0] for _f, stub in page.stubs] == [
        "app/greet.py#class-Greeter",
        "app/parse.py#function-parse",
    ]
    gone = index.chunk_page(Place(1, 0, "app/hello.py", 5), 1)  # a file since removed
    assert [stub[0] for _f, stub in gone.stubs] == ["app/parse.py#function-parse"]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        (
            "app/",
            [
                "app/greet.py#function-greet",
                "app/greet.py#class-Greeter",
                "app/parse.py#function-parse",
            ],
        ),
        ("app/greet.py#c", ["app/greet.py#class-Greeter"]),
        ("ünï/", ["ünï/cödé.py#class-Ü"]),
        ("dir with", ["dir with space/a b.py#function-f"]),
        ("app%2Fparse", ["app/parse.py#function-parse"]),  # as a client may send it
        (chunk_uri("notes/c#.md#heading"), ["notes/c#.md#heading-c-tips"]),
    ],
)
def test_completion_proposes_the_ids_of_a_path(
    index: Queries, typed: str, expected: list[str]
) -> None:
    done = resources.complete(index, resources.TEMPLATE, resources.VARIABLE, typed)
    assert done == {"values": expected, "hasMore": False}


@pytest.mark.parametrize("typed", ["greet", "Greeter", "parse text", "setup"])
def test_completion_ranks_a_name_as_workspace_symbol_does(index: Queries, typed: str) -> None:
    done = resources.complete(index, resources.TEMPLATE, resources.VARIABLE, typed)
    ranked = [hit.item.chunk.chunk_id for hit in index.search(typed, 100, index.search_mode())]
    assert done["values"] == list(dict.fromkeys(ranked)) and ranked


def test_completion_falls_back_to_the_suggestions(index: Queries) -> None:
    done = resources.complete(index, resources.TEMPLATE, resources.VARIABLE, "app/greet.pyy#fnc")
    assert done["values"] == index.suggest("app/greet.pyy#fnc", 100) and done["values"]


def test_completion_says_when_there_is_more(index: Queries) -> None:
    values, more = index.propose_ids("", 3)
    assert values == list(index.chunk_ids())[:3] and more
    values, more = index.propose_ids("app/", 2)
    assert len(values) == 2 and more
    values, more = index.propose_ids("app/", 3)
    assert len(values) == 3 and not more


@pytest.mark.parametrize(
    ("ref", "argument"), [("chunkls:///{other}", "chunk_id"), (resources.TEMPLATE, "path")]
)
def test_completion_of_another_template_or_argument_is_empty(
    index: Queries, ref: str, argument: str
) -> None:
    assert resources.complete(index, ref, argument, "app/") == {"values": []}


def test_a_link_goes_to_the_chunk_or_to_lines_of_its_file(index: Queries, root: Path) -> None:
    """The link builder: the chunk's URI for its own range (the default), the
    file's lines for another (a search's best lines inside a long chunk)."""
    (found,) = index.lookup("app/greet.py#class-Greeter")
    chunk = found.chunk
    link = resources.chunk_link(found)
    assert link == resources.chunk_link(found, (chunk.start_line, chunk.end_line))
    assert link == {
        "type": "resource_link",
        "uri": chunk_uri(chunk.chunk_id),
        "name": chunk.chunk_id,
        "description": f"app/greet.py:{chunk.start_line}-{chunk.end_line} Greeter",
        "mimeType": "text/x-python",
    }
    lines = resources.chunk_link(found, (chunk.start_line + 1, chunk.end_line))
    file_uri = (root.resolve() / "app" / "greet.py").as_uri()
    assert lines["uri"] == f"{file_uri}#L{chunk.start_line + 1}-L{chunk.end_line}"
    assert lines["name"] == chunk.chunk_id
    assert lines["description"].startswith(f"app/greet.py:{chunk.start_line + 1}-")
