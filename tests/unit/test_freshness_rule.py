"""One freshness rule and one write path (issue 46, point 3).

Every front door gets its answers through ``Session.ask``: the CLI with the
write step first, MCP also while its index loads (answered from the cache read
in place, or told to wait), the LSP from the index as it is (the write step is
taken on the client's events, and soon after an incomplete answer, never from
inside a read). Bulk indexing and refresh produce; the store alone writes cache
rows, generations and skip reasons."""

from __future__ import annotations

import ast
import asyncio
import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chunkls.cli import main as cli
from chunkls.index.session import NotLoaded, Session, build_index
from chunkls.mcp.service import McpService
from chunkls.storage.cache import store_path

from .strategies import write_tree
from .test_protocol import _feed, _started

SERVER = Path(__file__).resolve().parents[2] / "server" / "chunkls"
TREE = {
    "app/greet.py": "def greet(name):\n    return name\n\n\nclass Greeter:\n    pass\n",
    "app/other.py": "def other():\n    return 2\n",
    "docs/notes.md": "# Notes\nSee app/greet.py#function-greet.\n\n## More\ntext\n",
    "data/bad.json": "{not json",  # (chunked as text)
    "broken.py": "def broken(:\n",
}


@pytest.fixture
def tree(tmp_path: Path, cache_home: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    write_tree(root, TREE)
    (root / "binary.py").write_bytes(b"\x00\xff" * 20)
    return root


class Spy:
    """Counts ``Session.ask`` and records whether each ``catch_up`` ran inside one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.asks: list[dict[str, Any]] = []
        self.catch_ups: list[bool] = []
        self.depth = 0
        ask, catch_up = Session.ask, Session.catch_up

        def asking(session: Session, *args: Any, **kwargs: Any) -> Any:
            self.asks.append(kwargs)
            self.depth += 1
            try:
                return ask(session, *args, **kwargs)
            finally:
                self.depth -= 1

        def catching_up(session: Session, *args: Any, **kwargs: Any) -> Any:
            self.catch_ups.append(self.depth > 0)
            return catch_up(session, *args, **kwargs)

        monkeypatch.setattr(Session, "ask", asking)
        monkeypatch.setattr(Session, "catch_up", catching_up)


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "greet name"],
        ["resolve", "app/greet.py#function-greet"],
        ["resolve", "app/greet.py#function-gret"],
        ["chunks"],
        ["chunks", "--format", "ids"],
        ["check"],
    ],
    ids=" ".join,
)
@pytest.mark.parametrize("cache", ["cold", "warm", "--no-cache"])
def test_every_cli_command_asks_through_the_session(
    tree: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], cache: str
) -> None:
    if cache == "warm":
        assert cli(["chunks", "--format", "ids", str(tree)], io.StringIO(), io.StringIO()) == 0
    extra = ["--no-cache"] if cache == "--no-cache" else []
    spy = Spy(monkeypatch)
    cli([*argv, *extra, "--root", str(tree)], io.StringIO(), io.StringIO())
    assert len(spy.asks) == 1
    assert spy.catch_ups and all(spy.catch_ups)  # the write step only inside the ask


async def test_mcp_calls_ask_through_the_session_while_loading_and_after(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli(["chunks", "--format", "ids", str(tree)], io.StringIO(), io.StringIO()) == 0
    service = McpService([tree], [], cache=True)
    spy = Spy(monkeypatch)
    loading = service.answer("search_chunks", {"query": "greet"})  # the cache read in place
    assert loading is not None and "loading" in loading.text
    assert spy.asks == [{"while_loading": True}]
    for _ in service.load():
        pass
    loaded = service.answer("read_chunk", {"chunk_id": "app/greet.py#function-greet"})
    assert loaded is not None and "def greet" in loaded.text and "loading" not in loaded.text
    assert spy.asks[1:] == [{"while_loading": False}]
    assert all(spy.catch_ups)
    service.close()


def test_while_loading_nothing_current_in_place_means_not_loaded(tree: Path) -> None:
    """No cache to read in place (or a change since): the session does not index
    the folder in the question's stead, it says ``NotLoaded``."""
    session = Session(None, read_in_place=True)
    session.add_root(tree)
    asked: list[int] = []
    with pytest.raises(NotLoaded):
        session.ask(lambda queries: asked.append(len(queries)), while_loading=True)
    assert asked == [] and session.waiting  # nothing indexed, nothing asked
    assert session.ask(len) > 0  # (and without the parameter: indexed, then asked)


def test_an_answer_from_the_index_as_it_is_schedules_the_write_step(
    tree: Path, tmp_path: Path
) -> None:
    """``catch_up=False`` (the LSP): the question is asked once, never after a
    write step; an incomplete answer calls ``on_stale`` once, a complete one not."""
    cache = tmp_path / "cache"
    session = build_index([tree], cache_dir=cache, workers=1)
    told: list[int] = []
    session.on_stale = lambda: told.append(len(session.store.texts_missing))
    caught: list[object] = []
    original = session.catch_up
    session.catch_up = lambda *a: caught.append(a) or original(*a)  # type: ignore[method-assign]
    found = session.ask(lambda q: q.lookup("app/greet.py#function-greet"), catch_up=False)
    assert found and told == [] and caught == []
    db = sqlite3.connect(store_path(tree.resolve(), cache))
    db.execute("DELETE FROM files")  # the texts gone from the cache
    db.commit()
    db.close()
    gone = session.ask(lambda q: q.lookup("app/other.py#function-other"), catch_up=False)
    assert gone == [] and told == [1] and caught == []
    assert session.catch_up() and not session.store.texts_missing  # the write step, apart
    assert session.ask(lambda q: q.lookup("app/other.py#function-other"), catch_up=False)
    assert told == [1]
    session.close()


async def test_lsp_questions_go_through_ask_and_events_take_the_write_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _writer = await _started(tmp_path, monkeypatch)
    spy = Spy(monkeypatch)
    path = tmp_path / "ws" / "a.py"
    uri = path.as_uri()
    params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 5}}
    _feed(server, {"id": 7, "method": "textDocument/hover", "params": params})
    assert spy.asks == [{"catch_up": False}] and spy.catch_ups == []
    path.write_text("def f():\n    pass\n\n\ndef g():\n    pass\n")
    _feed(server, {"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
    assert spy.asks == [{"catch_up": False}] and spy.catch_ups == [False]  # before any question
    assert server.queries.lookup("a.py#function-g")
    _feed(server, {"id": 8, "method": "workspace/symbol", "params": {"query": "g"}})
    assert len(spy.asks) == 2
    await asyncio.sleep(0)


# -- the source: who may take the write step, who may write ---------------------------


def _calls(path: Path) -> Iterator[tuple[str, ast.AST]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield node.func.attr, node.func.value


def test_front_doors_take_no_write_step_of_their_own() -> None:
    """The CLI and MCP only ask; the LSP's write step is its server's, taken on the
    client's events (``sync``: saves, watched files)."""
    found = [
        f"{path.relative_to(SERVER)}: {name}"
        for door in ("cli", "mcp", "lsp")
        for path in sorted((SERVER / door).rglob("*.py"))
        for name, owner in _calls(path)
        if name in {"catch_up", "refresh", "index_folder"}
        and not (path.name in {"server.py", "sync.py"} and door == "lsp" and name == "catch_up")
    ]
    assert found == []


def _writes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Attribute)
                and target.value.attr in {"generations", "skipped", "files"}
            ):
                found.append(f"{path.name}:{node.lineno}: {target.value.attr}[...] =")
    for name, owner in _calls(path):
        cache = isinstance(owner, ast.Name) and owner.id in {"cache", "stream"}
        cache |= isinstance(owner, ast.Attribute) and owner.attr == "cache"
        if cache and name in {"put", "delete", "touch", "flush", "remember_gone"}:
            found.append(f"{path.name}: cache.{name}")
    return found


@pytest.mark.parametrize("module", ["bulk.py", "refresh.py"])
def test_bulk_and_refresh_write_through_the_store(module: str) -> None:
    assert _writes(SERVER / "index" / module) == []


def test_the_source_rule_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("folder.generations[p] = 1\nfolder.cache.put(p, None)\ncache.touch(p)\n")
    assert len(_writes(bad)) == 3


# -- one write path: bulk and refresh give the same cache ---------------------------


def _cache_rows(root: Path, cache: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(store_path(root.resolve(), cache))
    try:
        files = db.execute(
            "SELECT rel_path, size, digest, skipped, chunks FROM files ORDER BY rel_path"
        ).fetchall()
        contents = db.execute("SELECT rel_path, stubs, texts FROM contents ORDER BY rel_path")
        return [*files, *contents.fetchall()]
    finally:
        db.close()


def _chunked_by(how: str, root: Path, cache: Path) -> tuple[object, ...]:
    if how == "bulk":
        session = build_index([root], cache_dir=cache, workers=1)
    else:  # every file on its own, as saves re-read them
        session = Session(cache, workers=1)
        folder = session.add_root(root)
        session.waiting.clear()  # (not indexed in bulk)
        paths = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        session.note_changed(folder, paths)
        session.catch_up()
        session.close()
    answered = build_index([root], cache_dir=cache, workers=1)  # warm: from the rows
    return (
        [entry.chunk for entry in answered.queries.chunks()],
        [entry[1:] for entry in answered.queries.skipped()],
        _cache_rows(root, cache),
    )


def test_bulk_and_refresh_write_the_same_rows(tree: Path, tmp_path: Path) -> None:
    """Chunks, skip reasons and cache rows (content hashes, stubs, texts) are the
    same whether a tree is indexed in bulk or file by file."""
    bulk = _chunked_by("bulk", tree, tmp_path / "bulk")
    one_by_one = _chunked_by("refresh", tree, tmp_path / "refresh")
    assert bulk == one_by_one
    chunks, skipped, rows = bulk
    assert {reason[0] for reason in skipped} == {"binary.py", "broken.py"}
    assert next(row[:2] for row in rows if row[0] == "binary.py") == ("binary.py", 40)
    assert chunks and rows
