"""The persistent index read in place (``chunkls.storage.in_place``): the CLI's
answers on a current cache are those of the loaded index, read without
building it (the same store, the same scorer); anything not current is indexed
(and cached) first."""

from __future__ import annotations

import io
import os
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import chunkls.search.postings
import chunkls.storage.cache
import chunkls.storage.in_place
import chunkls.storage.listing
from chunkls import cli
from chunkls.chunking.corpus import CorpusRules
from chunkls.index.bulk import BulkIndexer
from chunkls.index.session import Session, build_index
from chunkls.search import MODES
from chunkls.search.hybrid import CANDIDATES, hybrid_query
from chunkls.search.maxscore import NUMPY_KERNEL
from chunkls.search.scorer import LIST_KERNEL
from chunkls.storage.cache import cache_dir, store_path
from chunkls.storage.listing import Listing
from chunkls.storage.mapped import file_path, read_sections

from .strategies import write_tree

TREE = {
    "README.md": (
        "# Project\nA retrieval demo: see app/greet.py#function-greet.\n\n"
        "## Setup\nRun uv sync. Not app/greet.py#function-gret, nor app/gone.py#module-1.\n"
    ),
    "app/greet.py": (
        "import os\n\n\ndef greet(name):\n    return name\n\n\n"
        "class Greeter:\n    def hello(self):\n        return greet('x')\n"
    ),
    "app/typed.py": (
        "@overload\ndef f(x: int) -> int: ...\n@overload\ndef f(x: str) -> str: ...\n"
    ),
    "app/a#b.py": "def hashed():\n    return 'a file name with a hash'\n",
    "docs/notes.md": "# Notes\nCites app/typed.py#function-f and app/typed.py#function-g.\n",
    "bad.py": "X = 1\n\ndef f(:\n",
    "empty.py": "",
}
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "parse",
    "args",
    "chunk",
    "index",
    "token",
    "score",
    "file",
    "path",
    "name",
]


def open_current(root: Path, base_rules: CorpusRules, cache: Path) -> Session | None:
    """A session of the root read in place from its cache, if the cache is current."""
    session = Session(cache, read_in_place=True, base_rules=base_rules)
    return session if session.try_in_place(session.add_root(root)) else None


def rows_read(session: Session) -> dict[str, int]:
    """What the questions read of the cache read in place, by table."""
    in_place = session.queries.folders[0].in_place
    assert in_place is not None
    return in_place.rows_read


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    # files written by the test a moment ago would be confirmed by hash (the
    # "racy" rule); the tests write and index them in the same second
    monkeypatch.setattr(chunkls.storage.cache, "RACY_NS", 0)


KERNELS = ["lists", "numpy"]
"""The arrays a cache read in place scores in: Python ints (a CLI query), or numpy
over the same memory (a server that has imported it)."""


@pytest.fixture
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Reading in place with the kernel of the test's ``kernel`` parameter."""
    name: str = request.param
    found = None if name == "lists" else NUMPY_KERNEL
    monkeypatch.setattr(chunkls.storage.in_place, "_imported_numpy_kernel", lambda: found)
    return name


@pytest.fixture(params=["descriptor", "paths"])
def stats(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Files and folders stat'ed through a descriptor of the root, or (as where
    the platform takes none) through joined paths."""
    if request.param == "paths":
        monkeypatch.setattr(os, "supports_dir_fd", set())
    elif os.stat not in os.supports_dir_fd:
        pytest.skip("no stat through a folder's descriptor here")
    return str(request.param)


def test_stats_under_the_root_are_those_of_its_paths(tree: Path, stats: str) -> None:
    with chunkls.storage.listing.Under(tree) as under:
        assert (under.fd is not None) == (stats == "descriptor")
        for rel_dir in ("", "app"):
            assert under.stat(rel_dir) == os.stat(tree / rel_dir)
        names = ["app/greet.py", "README.md"]
        rows = [(name, *_row_of(tree / name)) for name in names]
        assert chunkls.storage.listing.rows_hold(under, names, rows)
        assert not chunkls.storage.listing.rows_hold(under, ["app/gone.py"], rows[:1])
    assert under.fd is None  # closed


def _row_of(path: Path) -> tuple[int, int, int, None, int, int]:
    """A ``files`` row that holds a file as it is (checked well after its times)."""
    info = path.lstat()
    return info.st_mtime_ns, info.st_size, info.st_mtime_ns + 10**12, None, 1, 1


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    write_tree(root, TREE)
    rng = random.Random(7)
    for n in range(60):  # repeated words: ties that corpus order breaks
        body = "\n".join(
            f"def f{k}_{rng.choice(WORDS)}():\n    return '{' '.join(rng.choices(WORDS, k=5))}'\n"
            for k in range(rng.randint(0, 4))
        )
        (root / "many").mkdir(exist_ok=True)
        (root / "many" / f"m{n:02d}.py").write_text(body)
        (root / "many" / f"same{n:02d}.md").write_text("# Same\nalpha beta\n")
    return root


@pytest.fixture
def no_building(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail if anything indexes a folder (loads the store)."""

    def refuse(self: BulkIndexer, folder: object) -> Iterator[tuple[int, int]]:
        raise AssertionError("the index was built")

    with monkeypatch.context() as patch:
        patch.setattr(BulkIndexer, "iter_index_folder", refuse)
        yield


COMMANDS = [
    ["search", "greet name hello"],
    ["search", "alpha beta alpha"],
    ["search", "alpha", "--top-k", "40", "--json"],
    ["search", "zzz_not_there"],
    ["resolve", "app/greet.py#function-greet"],
    ["resolve", "app/typed.py#function-f"],
    ["resolve", "app/a#b.py#function-hashed"],
    ["resolve", "app/greet.py#function-gret"],
    ["resolve", "app/gret.py#function-greet"],
    ["check"],
    ["check", "--format", "json"],
    ["chunks", "--format", "ids"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_warm_cli_answers_from_the_cache_as_the_index_would(
    tree: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.chdir(tree)
    expected = run(*argv, "--no-cache")  # indexed from scratch, no cache at all
    assert run(*argv) == expected  # fills the cache
    request.getfixturevalue("no_building")
    assert run(*argv) == expected  # read in place: nothing is indexed


def test_the_fast_path_is_taken_only_on_a_current_cache(tree: Path) -> None:
    root = str(tree)
    assert open_current(tree, CorpusRules(), cache_dir()) is None  # no cache yet
    run("search", "greet", "--root", root)
    assert open_current(tree, CorpusRules(), cache_dir()) is not None
    # other settings: another cache
    other = CorpusRules().extended(exclude_globs=["many/**"])
    assert open_current(tree, other, cache_dir()) is None


@pytest.mark.parametrize("change", ["edit", "add", "delete", "skip"])
def test_a_change_since_the_cache_is_indexed_before_answering(
    tree: Path, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = str(tree)
    run("search", "greet", "--root", root)
    if change == "edit":
        (tree / "app/greet.py").write_text("def welcome(name):\n    return name\n")
    elif change == "add":
        (tree / "app/new.py").write_text("def welcome(name):\n    return name\n")
    elif change == "delete":
        (tree / "app/greet.py").unlink()
    else:
        (tree / "app/greet.py").write_text("def welcome(:\n")
    assert open_current(tree, CorpusRules(), cache_dir()) is None
    expected = run("search", "welcome greet", "--root", root, "--no-cache")
    assert run("search", "welcome greet", "--root", root) == expected
    # the cache is current again: the next run reads it in place, same answer
    with monkeypatch.context() as patch:
        patch.setattr(BulkIndexer, "iter_index_folder", None)
        assert run("search", "welcome greet", "--root", root) == expected
    assert ("welcome" in expected[1]) == (change in ("edit", "add"))


def test_a_search_reads_only_its_terms_and_its_results(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("search", "greet", "--root", str(tree))
    disk = open_current(tree, CorpusRules(), cache_dir())
    assert disk is not None
    hits = disk.queries.search("greet name greet", 2, "bm25")
    assert next(hit.item.chunk.chunk_id for hit in hits) == "app/greet.py#function-greet"
    assert rows_read(disk)["postings"] <= 2  # each distinct term's postings, once
    assert rows_read(disk)["stubs"] <= 2  # the files of the results, nothing else
    assert rows_read(disk)["texts"] <= 2
    db = sqlite3.connect(store_path(tree.resolve(), cache_dir()))
    (files,) = db.execute("SELECT count(*) FROM contents").fetchone()
    assert files > 100
    assert disk.queries.lookup("app/typed.py#function-f")
    assert rows_read(disk)["stubs"] <= 3
    assert rows_read(disk)["texts"] <= 3
    disk.close()


def test_a_hybrid_search_reads_its_terms_and_forms_and_its_candidates_files(tree: Path) -> None:
    run("search", "greet", "--root", str(tree))
    disk = open_current(tree, CorpusRules(), cache_dir())
    assert disk is not None
    query = hybrid_query("how does it greet a name?")
    assert query.terms == ("greet", "name")
    hits = disk.queries.search("how does it greet a name?", 2, "hybrid")
    assert next(hit.item.chunk.chunk_id for hit in hits) == "app/greet.py#function-greet"
    # its terms and forms, and the symbol table's three terms for each word
    table = 3 * len(set(query.terms))
    assert rows_read(disk)["postings"] <= len(query.terms) + len(query.forms) + table
    assert 1 <= rows_read(disk)["stubs"] <= CANDIDATES  # the candidates' files only
    assert 1 <= rows_read(disk)["texts"] <= 2  # and the texts of the results' only
    disk.close()


def test_scores_kept_in_lists_are_not_used_once_numpy_scores(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("search", "greet", "--root", str(tree))
    disk = open_current(tree, CorpusRules(), cache_dir())
    assert disk is not None
    source = disk.queries.folders[0].in_place.postings  # type: ignore[union-attr]
    monkeypatch.setattr(chunkls.storage.in_place, "_imported_numpy_kernel", lambda: None)
    before = [(h.score, h.item.chunk) for h in disk.queries.search("greet name alpha", 10)]
    assert source.kernel is LIST_KERNEL
    monkeypatch.setattr(chunkls.storage.in_place, "_imported_numpy_kernel", lambda: NUMPY_KERNEL)
    # the kernel changed: a kept term's scores (in lists) are scored again (in numpy)
    after = [(h.score, h.item.chunk) for h in disk.queries.search("greet name alpha", 10)]
    assert source.kernel is NUMPY_KERNEL
    assert after == before and before
    kept = source.scorer.terms(source, ["greet"])
    assert type(kept[0].scores).__module__ == "numpy"
    disk.close()


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("mode", MODES)
def test_scores_and_order_are_the_loaded_indexs_bit_for_bit(
    tree: Path, mode: str, kernel: str
) -> None:
    index = build_index([tree], CorpusRules(), None, cache_dir())
    index.close()
    disk = open_current(tree, CorpusRules(), cache_dir())
    assert disk is not None
    assert len(disk.queries) == len(index.queries)
    rng = random.Random(3)
    queries = ["alpha", "alpha alpha beta", "greet", "f0 def return", "zzz", "Same", "hashed"]
    queries += ["Greeter", "Gree", "Greet", "hello", "Greeter hello"]  # the symbol table
    queries += [" ".join(rng.choices(WORDS, k=rng.randint(1, 4))) for _ in range(30)]
    for query in queries:
        for top_k in (1, 3, 10, 200):
            ours = [
                (h.score, h.item.chunk, h.lines, h.part)
                for h in disk.queries.search(query, top_k, mode)
            ]
            theirs = [
                (h.score, h.item.chunk, h.lines, h.part)
                for h in index.queries.search(query, top_k, mode)
            ]
            assert ours == theirs, (query, top_k)
    assert list(disk.queries.chunk_ids()) == [
        entry.chunk.chunk_id for entry in index.queries.chunks()
    ]
    for entry in list(index.queries.chunks())[::7]:
        chunk_id = entry.chunk.chunk_id
        assert [found.chunk for found in disk.queries.lookup(chunk_id)] == [
            found.chunk for found in index.queries.lookup(chunk_id)
        ]
        assert disk.queries.suggest(chunk_id[:-2]) == index.queries.suggest(chunk_id[:-2])
    assert disk.queries.suggest("elsewhere/greet.py#function-greet") == index.queries.suggest(
        "elsewhere/greet.py#function-greet"
    )
    disk.close()


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize(
    "damage", ["texts", "stubs", "postings", "some postings", "snapshot rows", "garbage"]
)
def test_a_damaged_cache_is_indexed_again_not_trusted(
    tree: Path, damage: str, monkeypatch: pytest.MonkeyPatch, kernel: str
) -> None:
    root = str(tree)
    monkeypatch.chdir(tree)
    expected = {
        tuple(argv): run(*argv, "--no-cache")
        for argv in (
            ["resolve", "app/greet.py#function-greet"],
            ["search", "greet hello"],
            ["chunks", "--format", "ids"],
        )
    }
    run("search", "greet", "--root", root)
    path = store_path(tree.resolve(), cache_dir())
    if damage == "garbage":
        path.write_bytes(b"not a database" * 100)
        for suffix in ("-wal", "-shm"):
            with_suffix = Path(f"{path}{suffix}")
            if with_suffix.exists():
                os.remove(with_suffix)
    else:
        db = sqlite3.connect(path)
        if damage == "texts":
            db.execute("UPDATE contents SET texts = x'789c00ff'")
        elif damage == "stubs":
            db.execute("UPDATE contents SET stubs = x'789c00ff'")
        elif damage == "postings":
            (token,) = db.execute("SELECT mapped FROM snapshot").fetchone()
            postings = file_path(path.parent, token)
            data = bytearray(postings.read_bytes())
            _, at, count = read_sections(data, token, len(data), postings.name)["docs"]
            data[at : at + 4 * count] = b"\xff" * (4 * count)  # documents out of range
            postings.write_bytes(bytes(data))
        elif damage == "some postings":  # documents out of range among those in range
            (token,) = db.execute("SELECT mapped FROM snapshot").fetchone()
            postings = file_path(path.parent, token)
            data = bytearray(postings.read_bytes())
            _, at, count = read_sections(data, token, len(data), postings.name)["docs"]
            _, _, documents = read_sections(data, token, len(data), postings.name)["lengths"]
            docs = memoryview(data)[at : at + 4 * count].cast("i")
            for n in range(1, count, 3):
                docs[n] = documents + n
            postings.write_bytes(bytes(data))
        else:
            db.execute("UPDATE snapshot SET files = x'00'")
        db.commit()
        db.close()
    for argv, answer in expected.items():
        assert run(*argv) == answer


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The roots ``open_current`` walks (it walks only when the recorded listing
    of the folders cannot be trusted)."""
    import chunkls.storage.in_place as ondisk

    seen: list[Path] = []
    real_walk = ondisk.walk_corpus

    def walk(root: Path, rules: CorpusRules, *rest: object) -> object:
        seen.append(root)
        return real_walk(root, rules)

    monkeypatch.setattr(ondisk, "walk_corpus", walk)
    return seen


def test_a_current_listing_stands_in_for_the_walk(tree: Path, walks: list[Path]) -> None:
    (tree / "odd.py").mkdir()  # a folder with a corpus suffix: reported, as a walk does
    run("search", "greet", "--root", str(tree))
    index = open_current(tree, CorpusRules(), cache_dir())
    assert index is not None
    assert walks == []  # the folders were stat'ed, not listed
    assert index.queries.folders[0].skipped["odd.py"] == "not a regular file (a directory)"
    assert index.queries.folders[0].skipped["bad.py"].startswith("SyntaxError")
    # what a walk finds, word for word
    db = sqlite3.connect(store_path(tree.resolve(), cache_dir()))
    with db:
        db.execute("DELETE FROM listing")
    db.close()
    walked = open_current(tree, CorpusRules(), cache_dir())
    assert walked is not None and walks == [tree]
    assert walked.queries.folders[0].skipped == index.queries.folders[0].skipped


@pytest.mark.parametrize(
    "change",
    ["add nested", "delete nested", "rename", "new folder", "file to folder", "symlink"],
)
def test_a_changed_folder_is_seen_without_a_walk_and_then_walked(
    tree: Path, walks: list[Path], change: str, stats: str
) -> None:
    """Any entry added, removed or replaced changes its folder's times: the
    listing is not trusted, the walk finds the change, the folder is indexed."""
    root = str(tree)
    (tree / "app/deep/er").mkdir(parents=True)
    (tree / "app/deep/er/x.py").write_text("def x():\n    return 1\n")
    run("search", "greet", "--root", root)
    assert open_current(tree, CorpusRules(), cache_dir()) is not None
    assert walks == []
    target = tree / "app/deep/er/x.py"
    if change == "add nested":
        (tree / "app/deep/er/y.py").write_text("def y():\n    return 1\n")
    elif change == "delete nested":
        target.unlink()
    elif change == "rename":
        target.rename(tree / "app/deep/er/z.py")
    elif change == "new folder":
        (tree / "app/deep/er/sub").mkdir()
        (tree / "app/deep/er/sub/w.py").write_text("def w():\n    return 1\n")
    elif change == "file to folder":
        target.unlink()
        target.mkdir()
    else:
        target.unlink()
        target.symlink_to(tree / "app/greet.py")
    assert open_current(tree, CorpusRules(), cache_dir()) is None
    assert walks == [tree]  # the listing was not trusted: the walk found the change
    expected = run("chunks", "--format", "ids", "--root", root, "--no-cache")
    assert run("chunks", "--format", "ids", "--root", root) == expected


def test_a_folder_touched_but_unchanged_is_walked_and_still_current(
    tree: Path, walks: list[Path]
) -> None:
    run("search", "greet", "--root", str(tree))
    os.utime(tree / "many")  # its times change, its entries do not
    assert open_current(tree, CorpusRules(), cache_dir()) is not None
    assert walks == [tree]


def test_a_folder_changed_just_before_the_walk_is_not_trusted(
    tree: Path, walks: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder whose times are within ``RACY_NS`` of the walk may change again
    without its times moving (coarse clocks): the walk is done again."""
    run("search", "greet", "--root", str(tree))
    assert open_current(tree, CorpusRules(), cache_dir()) is not None
    assert walks == []
    db = sqlite3.connect(store_path(tree.resolve(), cache_dir()))
    (walk,) = db.execute("SELECT walk FROM listing").fetchone()
    db.close()
    listing = Listing.decode(walk)
    assert listing is not None
    newest = max(max(mtime, ctime) for _, mtime, ctime in listing.folders)
    # the same folders, taken as if the walk began a moment after the newest change
    monkeypatch.setattr(chunkls.storage.cache, "RACY_NS", listing.taken_ns - newest)
    monkeypatch.setattr(chunkls.storage.in_place, "rows_hold", lambda *a: True)
    assert open_current(tree, CorpusRules(), cache_dir()) is not None
    assert walks == [tree]


def test_a_corpus_with_a_symlinked_file_records_no_listing(tree: Path) -> None:
    (tree / "link.py").symlink_to(tree / "app/greet.py")
    run("search", "greet", "--root", str(tree))
    db = sqlite3.connect(store_path(tree.resolve(), cache_dir()))
    assert db.execute("SELECT count(*) FROM listing").fetchone() == (0,)
    db.close()
    assert open_current(tree, CorpusRules(), cache_dir()) is None  # chunked every run


@pytest.mark.parametrize(
    "change", ["none", "same size, mtime put back", "same size, new mtime", "size only", "racy"]
)
def test_every_file_is_held_to_its_row_by_stat(
    tree: Path, change: str, monkeypatch: pytest.MonkeyPatch, stats: str
) -> None:
    """A file rewritten in place is seen by its size, its mtime or its change
    time (``FolderCache.unchanged``'s rule, compared in line for every file),
    on the listing's path and the walk's alike; so is a row too recent to trust."""
    root = str(tree)
    run("search", "greet", "--root", root)
    target = tree / "app/greet.py"
    before = target.stat()
    text = target.read_text()
    if change == "same size, mtime put back":
        target.write_text(text.replace("greet", "grEET"))
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif change == "same size, new mtime":
        target.write_text(text.replace("greet", "grEET"))
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    elif change == "size only":
        os.truncate(target, before.st_size - 1)
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif change == "racy":  # written within RACY_NS of its row: only a hash could tell
        monkeypatch.setattr(chunkls.storage.cache, "RACY_NS", 10**15)
    assert target.stat().st_size == before.st_size or change == "size only"
    for listing in (True, False):
        if not listing:  # the walk's path: the listing is not trusted
            db = sqlite3.connect(store_path(tree.resolve(), cache_dir()))
            with db:
                db.execute("DELETE FROM listing")
            db.close()
        current = open_current(tree, CorpusRules(), cache_dir())
        assert (current is not None) == (change == "none"), listing
        if current is not None:
            current.close()


def test_the_files_digest_is_one_of_each_path_in_turn() -> None:
    """``files_digest`` hashes the paths at once: the digest of each path and a
    NUL in turn (what the cache records and a reader compares)."""
    import hashlib

    from chunkls.storage.listing import files_digest

    cases = [[], [""], ["", ""], ["a.py"], ["a.py", "b/c.md"], ["caf\udce9.py", "\u00e9t\u00e9.md"]]
    for paths in cases:
        expected = hashlib.blake2b(digest_size=16)
        for path in paths:
            expected.update(path.encode("utf-8", "surrogateescape") + b"\0")
        assert files_digest(paths) == files_digest(iter(paths)) == expected.digest(), paths
    assert files_digest(["a", "b"]) != files_digest(["b", "a"]) != files_digest(["ab"])


@pytest.mark.parametrize(
    "damage",
    [
        "none",
        "a file twice",
        "a file twice, in another's place of the same count",
        "a file missing",
        "a generation",
        "a count",
        "a skip",
    ],
)
def test_postings_of_other_rows_are_not_trusted(tree: Path, damage: str) -> None:
    """The saved postings must cover exactly the rows with chunks, each at its
    row's generation and chunk count; anything else is indexed again."""
    import marshal

    run("search", "greet", "--root", str(tree))
    db = sqlite3.connect(store_path(tree.resolve(), cache_dir()))
    (blob,) = db.execute("SELECT files FROM snapshot").fetchone()
    files = marshal.loads(blob)
    at = next(n for n, (rel_path, _, _) in enumerate(files) if rel_path == "app/greet.py")
    rel_path, count, generation = files[at]
    if damage == "a file twice":
        files[at] = files[at - 1]
    elif damage.startswith("a file twice, "):  # as many chunks as before: only the names tell
        same = [n for n, (rel_path, _, _) in enumerate(files) if rel_path.startswith("many/same")]
        files[same[1]] = files[same[0]]
    elif damage == "a file missing":
        del files[at]
    elif damage == "a generation":
        files[at] = (rel_path, count, generation + 1)
    elif damage == "a count":
        files[at] = (rel_path, count + 1, generation)
    elif damage == "a skip":
        files.append(("bad.py", 0, files[at][2]))
    with db:
        db.execute("UPDATE snapshot SET files = ?", (marshal.dumps(files),))
    db.close()
    current = open_current(tree, CorpusRules(), cache_dir())
    assert (current is not None) == (damage == "none")
    if current is not None:
        assert current.queries.source_paths() >= {"app/greet.py", "app/typed.py"}
        assert "bad.py" in current.queries.folders[0].skipped
        current.close()


def test_collections_pause_only_while_the_cache_answers_in_place(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``chunkls`` stops the garbage collector for a command (its imports and a
    question answered in place make no cycles) and starts it again to index,
    and when it returns."""
    import gc

    from chunkls.index.session import Session

    seen: dict[str, bool] = {}
    real_open = chunkls.storage.in_place.open_current
    real_build = Session.index_folder
    real_add = Session.add_root

    def add_spy(*args: object, **kwargs: object) -> object:
        seen["rules"] = gc.isenabled()
        return real_add(*args, **kwargs)  # type: ignore[arg-type]

    def open_spy(*args: object) -> object:
        seen["in place"] = gc.isenabled()
        return real_open(*args)  # type: ignore[arg-type]

    def build_spy(*args: object, **kwargs: object) -> object:
        seen["indexing"] = gc.isenabled()
        return real_build(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(chunkls.storage.in_place, "open_current", open_spy)
    monkeypatch.setattr(Session, "index_folder", build_spy)
    monkeypatch.setattr(Session, "add_root", add_spy)
    assert gc.isenabled()
    assert run("search", "greet", "--root", str(tree))[0] == 0  # a cold cache: indexed
    assert seen == {"rules": False, "in place": False, "indexing": True} and gc.isenabled()
    seen.clear()
    assert run("search", "greet", "--root", str(tree))[0] == 0  # answered in place
    assert seen == {"rules": False, "in place": False} and gc.isenabled()
    assert run("search", "!!!", "--root", str(tree))[0] == 2  # a usage error
    assert gc.isenabled()
    gc.disable()  # a caller's choice is kept
    try:
        assert run("search", "greet", "--root", str(tree), "--no-cache")[0] == 0
        assert seen["indexing"] is False and not gc.isenabled()
    finally:
        gc.enable()


def test_names_that_are_not_utf8_are_answered_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row whose path SQLite keeps as bytes (not UTF-8) is read back as the
    walk names it, on the listing's path and the walk's alike."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / os.fsdecode(b"bad\xff.py")).write_text("def f():\n    return 'alpha'\n")
    (root / os.fsdecode(b"d\xe9")).mkdir()
    (root / os.fsdecode(b"d\xe9") / "a.md").write_text("# T\n\nalpha\n")
    (root / os.fsdecode(b"\xfabroken.py")).write_text("def broken(:\n")  # a skip row
    monkeypatch.chdir(root)
    argv = ["search", "alpha", "--root", str(root)]
    expected = run(*argv, "--no-cache")
    assert run(*argv) == expected  # fills the cache
    for listing in (True, False):
        if not listing:
            db = sqlite3.connect(store_path(root.resolve(), cache_dir()))
            with db:
                db.execute("DELETE FROM listing")
            db.close()
        disk = open_current(root, CorpusRules(), cache_dir())
        assert disk is not None, listing
        assert disk.queries.lookup(os.fsdecode(b"bad\xff.py") + "#function-f")
        assert list(disk.queries.folders[0].skipped) == [os.fsdecode(b"\xfabroken.py")]
        disk.close()
        assert run(*argv) == expected
