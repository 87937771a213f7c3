"""The corpus rules are part of what a "current" cache means: after
``[tool.chunkls]`` changes in ``pyproject.toml``, the next CLI run answers
under the new rules, whatever the timing (a rewrite in place that changes no
folder's times, one that keeps the file's size, or its mtime too) and whatever
a language server on the same folder wrote to the cache meanwhile."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chunkls.cli import main as cli
from tests.hardening.rpc import RawServer, file_uri

EXCLUDED = '[tool.chunkls]\nexclude-dirs = ["archive"]\n'
OTHER = '[tool.chunkls]\nexclude-dirs = ["archivX"]\n'  # (EXCLUDED's size: archive/ comes in)
NO_TABLE = '[project]\nname = "rules-freshness"\n'
assert len(OTHER) == len(EXCLUDED)

ALWAYS = {"a.py#function-f", "c.md#heading-t"}
ARCHIVED = {"archive/b.py#function-g"}

# (pyproject.toml's text, how it is written, seconds to wait before the CLI runs)
REWRITES: list[tuple[str, str, float]] = [
    (text, how, delay)
    for delay in (0.0, 0.02, 0.3)
    for how in ("in place", "same mtime", "replaced")
    for text in (OTHER, EXCLUDED, NO_TABLE, EXCLUDED)
]


def expected(text: str) -> set[str]:
    return ALWAYS if text == EXCLUDED else ALWAYS | ARCHIVED


def make_tree(root: Path) -> None:
    (root / "archive").mkdir(parents=True)
    (root / "a.py").write_text("def f():\n    return 1\n")
    (root / "archive" / "b.py").write_text("def g():\n    return 2\n")
    (root / "c.md").write_text("# T\n\ntext\n")
    (root / "pyproject.toml").write_text(EXCLUDED)
    # the folders' times older than a racy stamp (2 s): a recorded walk of them is
    # trusted from here on, as on any tree not just made
    time.sleep(2.2)


def rewrite(pyproject: Path, text: str, how: str) -> None:
    """Write ``pyproject.toml`` as an editor or a tool would."""
    if how == "replaced":  # a new file renamed over the old one (the folder changes)
        temporary = pyproject.with_name(".pyproject.toml.tmp")
        temporary.write_text(text)
        os.replace(temporary, pyproject)
        return
    before = pyproject.stat()
    pyproject.write_text(text)  # in place: no folder's times change
    if how == "same mtime":  # (a coarse clock: a rewrite within the same tick)
        os.utime(pyproject, ns=(before.st_atime_ns, before.st_mtime_ns))


def cli_ids(root: Path) -> set[str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli(["chunks", str(root), "--format", "ids"], out, err)
    assert code == 0, err.getvalue()
    return set(out.getvalue().split())


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    make_tree(root)
    return root


def test_the_cli_follows_every_rewrite_of_the_rules(root: Path) -> None:
    assert cli_ids(root) == expected(EXCLUDED)
    for step, (text, how, delay) in enumerate(REWRITES):
        rewrite(root / "pyproject.toml", text, how)
        time.sleep(delay)
        assert cli_ids(root) == expected(text), (step, text, how, delay)
        assert cli_ids(root) == expected(text), (step, "again, from the cache it left")


@pytest.fixture
def start_server(tmp_path: Path) -> Callable[[], RawServer]:
    started: list[RawServer] = []

    def start() -> RawServer:
        server = RawServer(tmp_path / f"server-{len(started)}.stderr")
        started.append(server)
        return server

    yield start  # type: ignore[misc]
    for server in started:
        server.close()


def test_the_cli_follows_the_rules_beside_a_running_server(
    root: Path, start_server: Callable[[], RawServer]
) -> None:
    server = start_server()  # (the same XDG_CACHE_HOME: the same cache file)
    server.initialize([root])
    server.wait_indexed()
    pyproject = root / "pyproject.toml"
    for step, (text, how, delay) in enumerate(REWRITES[::2]):
        rewrite(pyproject, text, how)
        time.sleep(delay)
        # before the editor's watcher told the server: its cache is of the old rules
        assert cli_ids(root) == expected(text), (step, text, how, delay)
        server.notify(
            "workspace/didChangeWatchedFiles",
            {"changes": [{"uri": file_uri(pyproject), "type": 2}]},
        )
        # while the server may be indexing again and writing the cache
        assert cli_ids(root) == expected(text), (step, "while the server re-indexes")
        server.wait_indexed()
        served = {chunk["chunkId"] for chunk in server.command("chunkls.chunks")}
        assert served == expected(text), (step, "the server")
        assert cli_ids(root) == expected(text), (step, "after the server's index")
    assert server.shutdown() == 0
