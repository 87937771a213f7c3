"""IDs written with an absolute filesystem path (``/home/me/repo/app/x.py#function-f``,
as agents print them in terminals and logs): inside a workspace root they resolve
as the root-relative ID, through every front door (``chunkls resolve``, MCP
``read_chunk``, hover, go to definition, ``chunkls.resolve`` for terminal links);
any other leading ``/`` keeps its meaning (the root); one outside every root
says so, and nothing outside the roots is read."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from pytest_lsp import LanguageClient

from chunkls.cli import main as cli
from tests.e2e.conftest import TIMEOUT, make_workspace, open_document, uri
from tests.e2e.helpers import command, definition, hover, position_of
from tests.e2e.test_diagnostics import diagnostics

GREET = 17  # app/greet.py#function-greet starts at its decorator


def absolute(root: Path, rel_id: str) -> str:
    return f"{root.as_posix()}/{rel_id}"


# -- the command line ------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = make_workspace(tmp_path / "trees")
    (root / "docs" / "transcript.md").unlink()  # (it cites stale IDs on purpose)
    # the same tree outside the root: an absolute path into it must never reach it
    outside = tmp_path / "elsewhere"
    (outside / "app").mkdir(parents=True)
    (outside / "app" / "greet.py").write_text("def greet():\n    return 'elsewhere'\n")
    return root


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "written",
    [
        "{root}/app/greet.py#function-greet",
        "`{root}/app/greet.py#function-greet`",
        "[greet]({root}/app/greet.py#function-greet)",
        "{root}/app/../app/greet.py#function-greet",
        "/app/greet.py#function-greet",  # today's meaning: the root
        "app/greet.py#function-greet",
    ],
)
@pytest.mark.parametrize("cache", ["cold", "warm"])
def test_resolve_reads_a_roots_absolute_path_as_root_relative(
    tree: Path, written: str, cache: str
) -> None:
    if cache == "warm":  # (answered from the cache read in place)
        assert run("chunks", str(tree), "--format", "ids")[0] == 0
    code, out, err = run("resolve", "--root", str(tree), written.format(root=tree.as_posix()))
    assert code == 0, err
    assert out.startswith(f"app/greet.py:{GREET}-"), out


def test_resolve_says_an_absolute_path_outside_every_root_is_outside(tree: Path) -> None:
    elsewhere = tree.parent.parent / "elsewhere"
    written = absolute(elsewhere, "app/greet.py#function-greet")
    code, out, err = run("resolve", "--root", str(tree), written)
    assert code == 1 and out == ""
    assert (
        f"/{elsewhere.as_posix().lstrip('/')}/app/greet.py is outside every workspace root" in err
    )
    assert "elsewhere'" not in err  # nothing of the file outside was read
    code, out, err = run("resolve", "--root", str(tree), "--json", written)
    assert code == 1 and '"chunks": []' in out


@pytest.mark.parametrize(
    ("written", "named"),
    [
        # inside the root: named root-relative, with suggestions as for any ID
        ("{root}/app/greet.py#function-greeet", "app/greet.py#function-greeet"),
        # a leading "/" that is the root's: not "outside"
        ("/app/greet.py#function-greeet", "app/greet.py#function-greeet"),
    ],
)
def test_an_unknown_id_inside_a_root_is_named_root_relative(
    tree: Path, written: str, named: str
) -> None:
    code, _, err = run("resolve", "--root", str(tree), written.format(root=tree.as_posix()))
    assert code == 1
    assert f"unknown chunk ID {named}\n" in err
    assert "app/greet.py#function-greet" in err  # the suggestion
    assert "outside every workspace root" not in err


@pytest.mark.parametrize("inside", [True, False])
def test_an_absolute_id_is_looked_up_without_reading_anything(
    tree: Path, inside: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lookup (guarded: no file opened, nothing written while it runs), cold
    and warm, answers as unguarded."""
    from tests import guards

    root = tree if inside else tree.parent.parent / "elsewhere"
    written = absolute(root, "app/greet.py#function-greet")
    expected = run("resolve", "--root", str(tree), written)
    assert expected[0] == (0 if inside else 1)
    shutil.rmtree(tree.parent.parent / "cache")
    guards.install(monkeypatch.setattr)
    before = dict(guards.asked)
    assert [run("resolve", "--root", str(tree), written) for _ in range(2)] == [expected] * 2
    assert guards.asked["questions"] > before["questions"]
    assert guards.asked["refused"] == before["refused"]


def test_check_takes_a_roots_absolute_path_and_reports_one_outside(tree: Path) -> None:
    elsewhere = tree.parent.parent / "elsewhere"
    note = tree / "notes" / "log.md"
    note.write_text(f"Done in {absolute(tree, 'app/greet.py#function-greet')}.\n")
    code, out, err = run("check", "--root", str(tree))
    assert code == 0, out + err
    note.write_text(f"Done in {absolute(elsewhere, 'app/greet.py#function-greet')}.\n")
    code, out, _ = run("check", "--root", str(tree))
    assert code == 1 and "app/greet.py#function-greet" in out


# -- MCP -----------------------------------------------------------------------------


@asynccontextmanager
async def mcp(root: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "chunkls", "mcp", "--root", str(root)], env=os.environ
    )
    with open(os.devnull, "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), TIMEOUT)
            yield session


async def _call(session: ClientSession, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await asyncio.wait_for(session.call_tool(name, arguments), TIMEOUT)
    return bool(result.isError), result.content[0].text  # type: ignore[union-attr]


async def test_read_chunk_reads_a_roots_absolute_path_and_says_when_outside(tree: Path) -> None:
    elsewhere = tree.parent.parent / "elsewhere"
    async with mcp(tree) as session:
        failed, text = await _call(
            session, "read_chunk", {"chunk_id": absolute(tree, "app/greet.py#function-greet")}
        )
        assert not failed, text
        assert text.startswith(f"app/greet.py#function-greet\napp/greet.py:{GREET}-")
        failed, text = await _call(
            session, "read_chunk", {"chunk_id": absolute(elsewhere, "app/greet.py#function-greet")}
        )
        assert failed
        assert "is outside every workspace root" in text and "elsewhere'" not in text
        failed, text = await _call(
            session, "read_chunk", {"chunk_id": absolute(tree, "app/greet.py#function-greeet")}
        )
        assert failed
        assert "unknown chunk ID app/greet.py#function-greeet" in text
        assert "outside" not in text


# -- the language server ------------------------------------------------------------------


pytestmark_lsp = pytest.mark.asyncio(loop_scope="module")


@pytestmark_lsp
async def test_chunkls_resolve_reads_absolute_paths_in_ids_and_lines(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    second = shared_workspace.parent / "second"
    found = await command(
        shared_client,
        "chunkls.resolve",
        {"chunkId": absolute(shared_workspace, "app/greet.py#function-greet")},
    )
    assert [(t["chunkId"], t["startLine"]) for t in found] == [
        ("app/greet.py#function-greet", GREET)
    ]
    assert found[0]["uri"] == uri(shared_workspace / "app" / "greet.py")
    # another root's absolute path: that root's chunk (not the first folder's)
    found = await command(
        shared_client,
        "chunkls.resolve",
        {"chunkId": absolute(second, "lib/util.py#function-helper")},
    )
    assert [t["uri"] for t in found] == [uri(second / "lib" / "util.py")]
    # outside every root: nothing
    outside = absolute(shared_workspace.parent.parent, "app/greet.py#function-greet")
    assert await command(shared_client, "chunkls.resolve", {"chunkId": outside}) == []
    # a terminal line (the client's terminal link provider sends it)
    written = absolute(shared_workspace, "app/greet.py#function-greet")
    line = f"see {written}: done"
    spans = await command(shared_client, "chunkls.resolve", {"text": line})
    assert [(s["start"], s["end"], s["chunkId"]) for s in spans] == [
        (4, 4 + len(written), "app/greet.py#function-greet")
    ]
    assert await command(shared_client, "chunkls.resolve", {"text": f"see {outside}"}) == []


@pytestmark_lsp
async def test_hover_and_definition_read_absolute_paths(
    shared_client: LanguageClient, shared_workspace: Path
) -> None:
    written = absolute(shared_workspace, "app/greet.py#function-greet")
    outside = absolute(shared_workspace.parent.parent, "app/greet.py#function-greet")
    note = shared_workspace / "notes" / "absolute.md"
    note.write_text(f"# Log\n\nSee {written} here.\n\nAnd {outside} there.\n")
    document_uri = open_document(shared_client, note)
    text = note.read_text()
    at = position_of(text, written, 5)
    locations = await definition(shared_client, document_uri, at)
    assert [(loc.uri, loc.range.start.line + 1) for loc in locations] == [
        (uri(shared_workspace / "app" / "greet.py"), GREET)
    ]
    shown = await hover(shared_client, document_uri, at)
    assert shown is not None and "app/greet.py#function-greet" in shown
    assert await definition(shared_client, document_uri, position_of(text, outside, 5)) == []
    # the unknown one is a diagnostic that says where it points
    found = await diagnostics(shared_client, document_uri)
    assert [d.message for d in found] == [
        f"Unknown chunk ID {outside.lstrip('/')}: {outside.partition('#')[0]}"
        " is outside every workspace root"
    ]
