"""Churn equals a fresh index: a stateful property test against the real server.

Random sequences of disk changes (files created, modified with valid and
invalid Python and Markdown with repeated headings, deleted, renamed, moved;
folders deleted or renamed; a branch switch's batch), editor buffers edited
without saving, saves, and server restarts. The test plays the editor's file
watcher (see ``watch.py``). After every step the server's index (every chunk ID
with its range, ``chunkls.chunks``), its skipped files and its search results
equal those of a fresh ``build_index`` of the tree.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from chunkls.index.session import build_index
from tests.hardening.conftest import scaled
from tests.hardening.rpc import RawServer, file_uri
from tests.hardening.watch import CHANGED, CREATED, DELETED, Change, send_changes

DIRS = ["", "pkg", "pkg/sub", "notes", "docs", "build", "other/deep"]
"""Folders files go in (``docs`` and ``build`` are excluded by the tutorial)."""
NAMES = ["a.py", "b.py", "c.md", "d.markdown", "e.md", "f.py", "g.txt"]
WORDS = ["alpha", "beta", "gamma", "delta", "chunk", "index"]
QUERIES = ["alpha beta", "gamma chunk", "delta", "index alpha gamma", "setup"]

STATS: dict[str, int] = {"steps": 0, "checks": 0, "restarts": 0, "examples": 0}

words = st.sampled_from(WORDS)


@st.composite
def python_source(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["def", "class", "code", "decorated", "blank"]))
        name = draw(words) + str(draw(st.integers(0, 2)))
        if kind == "def":
            parts.append(f"def {name}():\n    return '{draw(words)}'\n")
        elif kind == "class":
            parts.append(f"class {name.title()}:\n    x = 1\n\n    def m(self):\n        pass\n")
        elif kind == "decorated":
            parts.append(f"@staticmethod\ndef {name}(a, b):\n    return a\n")
        elif kind == "code":
            parts.append(f"{name} = '{draw(words)}'\n")
        else:
            parts.append("\n\n")
    text = "\n".join(parts)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


@st.composite
def markdown_source(draw: st.DrawFn) -> str:
    lines = []
    if draw(st.booleans()):
        lines.append(f"preamble {draw(words)}\n")
    for _ in range(draw(st.integers(0, 4))):
        level = "#" * draw(st.integers(1, 3))
        # few titles, so headings repeat (heading-x, heading-x-2, ...)
        title = draw(st.sampled_from(["Setup", "setup", "Alpha Beta", "", "!!", "Gamma"]))
        lines.append(f"{level} {title}\n\n{draw(words)} text {draw(words)}\n")
    return "\n".join(lines)


invalid_python = st.sampled_from(
    ["def (:\n", "class\n", "x = (\n", "\ufeffx = 1\n", "a\x00b = 1\n"]
)


def source_for(name: str) -> st.SearchStrategy[str]:
    if name.endswith(".py"):
        return st.one_of(python_source(), python_source(), invalid_python)
    return markdown_source()


class Churn(RuleBasedStateMachine):
    """A workspace on disk, a server on it, and an editor's buffers."""

    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="chunkls-churn-"))
        self.root = self.base / "ws"
        self.root.mkdir()
        self.cache = self.base / "cache"
        self.cache.mkdir()
        self.starts = 0
        self.steps_since_start = 0
        self.server: RawServer | None = None
        self.open: dict[str, str] = {}
        """Open buffers: root-relative path -> current (unsaved) text."""
        self.versions: dict[str, int] = {}
        STATS["examples"] += 1

    # -- helpers -------------------------------------------------------------------

    def start(self) -> None:
        self.starts += 1
        self.server = RawServer(
            self.base / f"server-{self.starts}.stderr", env={"XDG_CACHE_HOME": str(self.cache)}
        )
        self.server.initialize([self.root])
        self.server.wait_indexed()
        self.open.clear()
        self.steps_since_start = 0

    def files(self) -> list[str]:
        found = []
        for dirpath, _, filenames in os.walk(self.root):
            for name in filenames:
                rel = os.path.relpath(os.path.join(dirpath, name), self.root)
                found.append(Path(rel).as_posix())
        return sorted(found)

    def folders(self) -> list[str]:
        found = []
        for dirpath, dirnames, _ in os.walk(self.root):
            for name in dirnames:
                found.append(
                    Path(os.path.relpath(os.path.join(dirpath, name), self.root)).as_posix()
                )
        return sorted(found)

    def write(self, rel_path: str, text: str) -> list[Change]:
        """Write a file; the changes a watcher sees (new folders included)."""
        path = self.root / rel_path
        changes = []
        missing = []
        parent = path.parent
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        for folder in reversed(missing):
            folder.mkdir()
            changes.append(Change(folder.relative_to(self.root).as_posix(), CREATED))
        existed = path.exists()
        path.write_bytes(text.encode("utf-8"))
        changes.append(Change(rel_path, CHANGED if existed else CREATED))
        return changes

    def send(self, changes: list[Change]) -> None:
        assert self.server is not None
        send_changes(self.server, self.root, changes)
        STATS["steps"] += 1

    # -- rules ---------------------------------------------------------------------

    @initialize()
    def begin(self) -> None:
        self.write("pkg/a.py", "def alpha():\n    return 1\n")
        self.write("c.md", "# Setup\n\nalpha\n\n# Setup\n\nbeta\n")
        self.start()

    @rule(data=st.data())
    def create_or_modify(self, data: st.DataObject) -> None:
        rel = data.draw(st.sampled_from(DIRS)) + "/" + data.draw(st.sampled_from(NAMES))
        rel = rel.lstrip("/")
        if (self.root / rel).is_dir():
            return
        self.send(self.write(rel, data.draw(source_for(rel))))

    @precondition(lambda self: bool(self.files()))
    @rule(data=st.data())
    def modify_existing(self, data: st.DataObject) -> None:
        rel = data.draw(st.sampled_from(self.files()))
        self.send(self.write(rel, data.draw(source_for(rel))))

    @precondition(lambda self: bool(self.files()))
    @rule(data=st.data())
    def delete_file(self, data: st.DataObject) -> None:
        rel = data.draw(st.sampled_from(self.files()))
        (self.root / rel).unlink()
        self.send([Change(rel, DELETED)])

    @precondition(lambda self: bool(self.files()))
    @rule(data=st.data())
    def rename_or_move_file(self, data: st.DataObject) -> None:
        rel = data.draw(st.sampled_from(self.files()))
        folder = data.draw(st.sampled_from(DIRS))
        new = f"{folder}/{data.draw(st.sampled_from(NAMES))}".lstrip("/")
        if new == rel or (self.root / new).exists():
            return
        changes = []
        target = self.root / new
        if not target.parent.exists():
            target.parent.mkdir(parents=True)
            changes.append(Change(folder, CREATED))
        os.rename(self.root / rel, target)
        self.send([Change(rel, DELETED), *changes, Change(new, CREATED)])

    @precondition(lambda self: bool(self.folders()))
    @rule(data=st.data())
    def delete_folder(self, data: st.DataObject) -> None:
        rel = data.draw(st.sampled_from(self.folders()))
        shutil.rmtree(self.root / rel)
        self.send([Change(rel, DELETED)])  # one event for the folder, as editors send

    @precondition(lambda self: bool(self.folders()))
    @rule(data=st.data())
    def rename_folder(self, data: st.DataObject) -> None:
        rel = data.draw(st.sampled_from(self.folders()))
        new = data.draw(st.sampled_from(["moved", "pkg/moved", "docs/moved", "renamed.py"]))
        target = self.root / new
        if target.exists() or new.startswith(rel + "/") or not target.parent.exists():
            return
        os.rename(self.root / rel, target)
        self.send([Change(rel, DELETED), Change(new, CREATED)])

    @rule(data=st.data())
    def branch_switch(self, data: st.DataObject) -> None:
        """Many changes at once, reported in one batch."""
        changes: list[Change] = []
        for _ in range(data.draw(st.integers(2, 8))):
            files = self.files()
            if files and data.draw(st.booleans()):
                rel = data.draw(st.sampled_from(files))
                if data.draw(st.booleans()):
                    (self.root / rel).unlink()
                    changes.append(Change(rel, DELETED))
                else:
                    changes += self.write(rel, data.draw(source_for(rel)))
            else:
                rel = f"{data.draw(st.sampled_from(DIRS))}/{data.draw(st.sampled_from(NAMES))}"
                rel = rel.lstrip("/")
                if not (self.root / rel).is_dir():
                    changes += self.write(rel, data.draw(source_for(rel)))
        self.send(changes)

    @precondition(lambda self: bool(self.files()))
    @rule(data=st.data())
    def edit_buffer_without_saving(self, data: st.DataObject) -> None:
        assert self.server is not None
        rel = data.draw(st.sampled_from(self.files()))
        text = data.draw(source_for(rel))
        uri = file_uri(self.root / rel)
        version = self.versions.get(rel, 0) + 1
        self.versions[rel] = version
        if rel not in self.open:
            self.server.open(self.root / rel, (self.root / rel).read_bytes().decode("utf-8"))
        self.server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )
        self.open[rel] = text
        # the buffer's own view follows the text; the index stays the disk's
        self.server.call("textDocument/codeLens", {"textDocument": {"uri": uri}})
        STATS["steps"] += 1

    @precondition(lambda self: bool(self.open))
    @rule(data=st.data())
    def save_or_close_buffer(self, data: st.DataObject) -> None:
        assert self.server is not None
        rel = data.draw(st.sampled_from(sorted(self.open)))
        uri = file_uri(self.root / rel)
        if data.draw(st.booleans()) and (self.root / rel).parent.is_dir():
            changes = self.write(rel, self.open[rel])
            self.server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            send_changes(self.server, self.root, changes)
        if data.draw(st.booleans()):
            self.server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            del self.open[rel]
        STATS["steps"] += 1

    @precondition(lambda self: self.steps_since_start >= 6)
    @rule()
    def restart(self) -> None:
        assert self.server is not None
        assert self.server.shutdown() == 0
        STATS["restarts"] += 1
        self.start()

    # -- the invariant -------------------------------------------------------------

    @invariant()
    def index_equals_a_fresh_one(self) -> None:
        if self.server is None:
            return
        fresh = build_index([self.root], workers=1)
        expected = [
            (
                entry.chunk.chunk_id,
                entry.chunk.source_path,
                entry.chunk.start_line,
                entry.chunk.end_line,
            )
            for entry in fresh.queries.chunks()
        ]
        expected_skipped = sorted(str(self.root / rel) for _, rel, _ in fresh.queries.skipped())
        expected_search = {
            query: [
                (hit.item.chunk.chunk_id, round(hit.score, 6))
                for hit in fresh.queries.search(query, 20)
            ]
            for query in QUERIES
        }
        # the server re-reads watched changes in batches (50 ms later): wait for them.
        # The search results are waited for too: a change of text alone leaves the
        # chunk IDs and ranges as they were, and the status says nothing is pending
        deadline = time.monotonic() + 5
        while True:
            got = [
                (c["chunkId"], c["sourcePath"], c["startLine"], c["endLine"])
                for c in self.server.command("chunkls.chunks")
            ]
            stats = self.server.command("chunkls.stats")
            skipped = sorted(item["path"] for item in stats["skipped"])
            search = {
                query: [
                    (r["chunkId"], r["score"])
                    for r in self.server.command("chunkls.search", {"query": query, "topK": 20})
                ]
                for query in QUERIES
            }
            if (
                got == expected
                and skipped == expected_skipped
                and search == expected_search
                and not stats["indexing"]
            ):
                break
            if time.monotonic() > deadline:
                assert got == expected, self.server.stderr_tail()
                assert skipped == expected_skipped
                for query, hits in expected_search.items():
                    assert search[query] == hits, query
                assert not stats["indexing"]
            time.sleep(0.03)
        STATS["checks"] += 1
        self.steps_since_start += 1

    def teardown(self) -> None:
        try:
            if self.server is not None:
                problems = self.server.problems
                code = self.server.shutdown()
                assert not problems, problems
                assert code == 0
        finally:
            if self.server is not None:
                self.server.close()
            shutil.rmtree(self.base, ignore_errors=True)


Churn.TestCase.settings = settings(
    max_examples=scaled(8, 80),
    stateful_step_count=scaled(12, 40),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestChurn = Churn.TestCase


def test_report_counts() -> None:
    """Runs after the machine (same module): print what it did."""
    print(f"\nchurn: {STATS}")
