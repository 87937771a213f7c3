"""Churn equals a fresh build: stateful property tests of the incremental search.

Files are added (or replaced), removed, compacted, snapshotted and loaded again,
and searched, in any order, with small merge thresholds so segments merge (and
the vocabulary is compacted) often. After every step the search results and
scores, bit for bit, are those of an index built afresh from the current files
in corpus order: once at the ``BM25Index`` level, once through the
``Session`` that drives it (files set and dropped, saved, re-indexed
from the cache).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from chunkls.index import bulk as workspace_index
from chunkls.index.session import Session, build_index
from chunkls.search import inverted as search
from chunkls.search import maxscore as ranking
from chunkls.search import scorer
from chunkls.search.inverted import BM25Index
from chunkls.search.postings import FileKey

from . import search_helpers
from .search_helpers import select_files

# -- the engine ------------------------------------------------------------------------

WORDS = ["alpha", "beta", "gamma", "chunk_id", "HybridRetriever", "x", "u1", "u2"]
QUERIES = ["alpha beta", "alpha", "gamma chunk", "u1 u2 u2", "hybrid retriever x", "zeta"]
KEYS = st.tuples(st.integers(0, 1), st.sampled_from(["a.py", "b.md", "c.py", "d/e.md", "f"]))
DOCS = st.lists(st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join), max_size=4)

Item = tuple[FileKey, int, int]
"""A document: its file, the file's version, its position in the file."""

TUNABLES = {
    (search, "_MERGE_AT"): st.sampled_from([1, 3, 10, 100_000]),
    (search, "_MERGE_BATCH"): st.sampled_from([1, 2, 7, 1 << 20]),
    (scorer, "CACHE_BUDGET"): st.sampled_from([0, 2_000_000]),
    (ranking, "_SCORE_ALL_BELOW"): st.sampled_from([0, 1_000]),
    (ranking, "_EXACT_UP_TO"): st.sampled_from([0, 2_000]),
    (ranking, "_SEEDS"): st.sampled_from([0, 1_000]),
}
"""The engine's thresholds, set per example (small ones: merges and cached terms
often, a merge's postings put in place a few at a time, every way of finding
candidates)."""


class Tuned(RuleBasedStateMachine):
    """Sets the engine's thresholds for one example, and puts them back after."""

    def __init__(self) -> None:
        super().__init__()
        self.saved = {(module, name): getattr(module, name) for module, name in TUNABLES}

    @initialize(data=st.data())
    def tune(self, data: st.DataObject) -> None:
        for (module, name), values in TUNABLES.items():
            setattr(module, name, data.draw(values, label=name))

    def teardown(self) -> None:
        for (module, name), value in self.saved.items():
            setattr(module, name, value)


def build(files: dict[FileKey, tuple[int, list[str]]]) -> BM25Index[Item]:
    """A fresh index of the files, added in corpus order."""
    index: BM25Index[Item] = BM25Index()
    for key, (version, docs) in sorted(files.items()):
        index.add_file(key, [(text, (key, version, i)) for i, text in enumerate(docs)])
    return index


def hits(index: BM25Index[Item], query: str, top_k: int) -> list[tuple[float, Item]]:
    return [(hit.score, hit.item) for hit in search_helpers.search(index, query, top_k)]


def scores(index: BM25Index[Item], query: str) -> dict[Item, float]:
    return {index.item(doc): score for doc, score in search_helpers.scores(index, query).items()}


class SearchChurn(Tuned):
    """A ``BM25Index`` changed one file at a time against a fresh build."""

    def __init__(self) -> None:
        super().__init__()
        self.index: BM25Index[Item] = BM25Index()
        self.files: dict[FileKey, tuple[int, list[str]]] = {}
        self.version = 0

    @initialize(
        files=st.dictionaries(
            KEYS,
            st.lists(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join), max_size=6),
            max_size=6,
        )
    )
    def seed(self, files: dict[FileKey, list[str]]) -> None:
        """Files in the main segment: later additions stay in the small one a while."""
        for key, docs in files.items():
            self.add_file(key, docs)
        self.index.compact()

    @rule(key=KEYS, docs=DOCS)
    def add_file(self, key: FileKey, docs: list[str]) -> None:
        self.version += 1
        self.index.add_file(key, [(text, (key, self.version, i)) for i, text in enumerate(docs)])
        self.files[key] = (self.version, docs)

    @rule(key=KEYS)
    def remove_file(self, key: FileKey) -> None:
        self.index.remove_file(key)
        self.files.pop(key, None)

    @rule()
    def compact(self) -> None:
        self.index.compact()

    @rule(data=st.data())
    def snapshot_and_load(self, data: st.DataObject) -> None:
        """Save some files' postings and load them into a new index (as a warm
        start does), the other files tokenized again; maybe only some of them, through
        ``select_files`` or loaded whole with the others ``gone`` (as a server does)."""
        keys = sorted(self.files)
        part = data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([]))
        snapshot = self.index.snapshot(data.draw(st.permutations(part)))
        how = data.draw(st.sampled_from(["whole", "select", "gone"]), label="how")
        gone: set[FileKey] = set()
        if how != "whole":
            chosen = data.draw(
                st.lists(st.sampled_from(part), unique=True) if part else st.just([])
            )
            if how == "select":
                snapshot = select_files(snapshot, lambda key: key if key in chosen else None)
            else:
                gone = set(part) - set(chosen)
        loaded: BM25Index[Item] = BM25Index()
        first = data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([]))
        first = [key for key in first if key not in {key for key, _ in snapshot.files}]
        for key in first:  # some files indexed before the snapshot is loaded
            version, docs = self.files[key]
            loaded.add_file(key, [(text, (key, version, i)) for i, text in enumerate(docs)])
        items = [(key, self.files[key][0], i) for key, n in snapshot.files for i in range(n)]
        loaded.load_snapshot(snapshot, items, gone)
        done = set(first) | {key for key, _ in snapshot.files if key not in gone}
        for key in keys:
            if key not in done:
                version, docs = self.files[key]
                loaded.add_file(key, [(text, (key, version, i)) for i, text in enumerate(docs)])
        self.index = loaded

    @rule(query=st.lists(st.sampled_from([*WORDS, "zeta"]), max_size=4).map(" ".join))
    def search_for(self, query: str) -> None:
        fresh = build(self.files)
        for top_k in (1, 3, 100):
            assert hits(self.index, query, top_k) == hits(fresh, query, top_k), (query, top_k)

    @invariant()
    def equals_a_fresh_build(self) -> None:
        fresh = build(self.files)
        assert len(self.index) == len(fresh)
        assert sorted(self.index.file_keys()) == sorted(self.files)
        for query in QUERIES:
            for top_k in (2, 100):
                assert hits(self.index, query, top_k) == hits(fresh, query, top_k), (query, top_k)
            assert scores(self.index, query) == scores(fresh, query), query


SearchChurn.TestCase.settings = settings(max_examples=60, stateful_step_count=20, deadline=None)
TestSearchChurn = SearchChurn.TestCase


# -- the workspace index ----------------------------------------------------------------

NAMES = ["a.py", "b.py", "c.md", "pkg/c.md", "pkg/d.markdown", "notes/e.md", "docs/f.md"]
"""Files the workspace may have (``docs`` is excluded by the default rules)."""
TITLES = ["Setup", "setup", "Alpha Beta", "", "Gamma"]
TEXT_WORDS = ["alpha", "beta", "gamma", "delta", "chunk", "index"]
SEARCHES = ["alpha beta", "gamma chunk", "delta", "index alpha gamma", "setup", "heading"]


@st.composite
def source(draw: st.DrawFn, name: str) -> str:
    words = st.sampled_from(TEXT_WORDS)
    if name.endswith(".py"):
        parts = []
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["def", "class", "code"]))
            ident = f"{draw(words)}{draw(st.integers(0, 2))}"
            if kind == "def":
                parts.append(f"def {ident}():\n    return '{draw(words)}'\n")
            elif kind == "class":
                parts.append(f"class {ident.title()}:\n    x = '{draw(words)}'\n")
            else:
                parts.append(f"{ident} = '{draw(words)}'\n")
        return "\n".join(parts) if draw(st.integers(0, 9)) else "def (:\n"
    lines = [f"preamble {draw(words)}\n"] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(0, 3))):
        level = "#" * draw(st.integers(1, 2))
        lines.append(f"{level} {draw(st.sampled_from(TITLES))}\n\n{draw(words)} {draw(words)}\n")
    return "\n".join(lines)


class WorkspaceChurn(Tuned):
    """A folder on disk and a ``WorkspaceIndex`` kept up to date by ``refresh``
    (one file, or a batch as a branch switch brings), saved to its cache,
    re-indexed and started again from the cache, against a fresh build."""

    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="chunkls-search-churn-"))
        self.root = self.base / "ws"
        self.root.mkdir()
        self.cache = self.base / "cache"
        self.mtime = 1_600_000_000 * 10**9
        self.reuse_step = workspace_index.REUSE_STEP
        workspace_index.REUSE_STEP = 1  # a warm start yields after every file: refresh between
        self.start()

    def start(self, data: st.DataObject | None = None) -> None:
        """A new index of the folder (from its cache), maybe with files changed
        and refreshed while it is indexed."""
        self.index = Session(self.cache, workers=1)
        self.folder = self.index.add_root(self.root)
        self.index_folder(data)

    def index_folder(self, data: st.DataObject | None) -> None:
        for _ in self.index.iter_index_folder(self.folder):
            if data is not None and data.draw(st.booleans(), label="refresh meanwhile"):
                self.index.refresh(self.folder, [self.change(data)])

    def write(self, name: str, text: str) -> None:
        path = self.root / name
        if any(parent.is_file() for parent in path.parents):
            return  # a file took a folder's name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.mtime += 10**9  # a new mtime on every write, whatever the clock's granularity
        os.utime(path, ns=(self.mtime, self.mtime))

    def change(self, data: st.DataObject) -> str:
        name = data.draw(st.sampled_from(NAMES))
        if (self.root / name).exists() and data.draw(st.integers(0, 3)) == 0:
            (self.root / name).unlink()
        else:
            self.write(name, data.draw(source(name)))
        return name

    @rule(data=st.data())
    def change_one(self, data: st.DataObject) -> None:
        self.index.refresh(self.folder, [self.change(data)])

    @rule(data=st.data())
    def branch_switch(self, data: st.DataObject) -> None:
        names = [self.change(data) for _ in range(data.draw(st.integers(2, 6)))]
        self.index.refresh(self.folder, names)

    @rule(data=st.data())
    def move(self, data: st.DataObject) -> None:
        """A file or a folder renamed (or deleted), one event each for the old and
        the new path, as a watcher reports them."""
        here = sorted(path.relative_to(self.root).as_posix() for path in self.root.rglob("*"))
        if not here:
            return
        old = data.draw(st.sampled_from(here))
        new = data.draw(st.sampled_from(["moved", "pkg/moved", "notes/x.md", "pkg", "z.py"]))
        target = self.root / new
        if data.draw(st.integers(0, 3)) == 0:
            if (self.root / old).is_dir():
                shutil.rmtree(self.root / old)
            else:
                (self.root / old).unlink()
            self.index.refresh(self.folder, [old])
        elif not target.exists() and target.parent.is_dir() and not new.startswith(old + "/"):
            os.rename(self.root / old, target)
            self.index.refresh(self.folder, [old, new])

    @rule()
    def save(self) -> None:
        self.index.store.save()

    @rule(data=st.data())
    def reindex(self, data: st.DataObject) -> None:
        """Index the folder again (as a re-index command does)."""
        self.index_folder(data)

    @rule(data=st.data())
    def restart(self, data: st.DataObject) -> None:
        self.index.close()
        self.start(data)

    @rule(data=st.data())
    def crash(self, data: st.DataObject) -> None:
        """The process ends without saving: the cache's rows are newer than its snapshot."""
        for folder in self.index.queries.folders:
            if folder.cache is not None:
                folder.cache.close()
        self.start(data)

    @invariant()
    def equals_a_fresh_build(self) -> None:
        fresh = build_index([self.root], workers=1)
        assert [entry.chunk for entry in self.index.queries.chunks()] == [
            entry.chunk for entry in fresh.queries.chunks()
        ]
        assert len(self.index.queries) == len(fresh.queries)
        for query in SEARCHES:
            got = [(h.score, h.item.chunk.chunk_id) for h in self.index.queries.search(query, 20)]
            expected = [(h.score, h.item.chunk.chunk_id) for h in fresh.queries.search(query, 20)]
            assert got == expected, query

    def teardown(self) -> None:
        try:
            self.index.close()
            shutil.rmtree(self.base, ignore_errors=True)
        finally:
            workspace_index.REUSE_STEP = self.reuse_step
            super().teardown()


WorkspaceChurn.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestWorkspaceChurn = WorkspaceChurn.TestCase
