"""The workspace index: corpus order, lookups, suggestions, and refreshes that
leave it exactly as a fresh build would."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from chunkls.chunking.ingest import scan_corpus
from chunkls.index.folder import Folder
from chunkls.index.session import Session, build_index

from .strategies import write_tree

TREE = {
    "README.md": "# Project\nIntro.\n\n## Setup\nRun it.\n\n## Setup\nAgain.\n",
    "app/__init__.py": "",
    "app/greet.py": (
        "import os\n\n\ndef greet(name):\n    return name\n\n\n"
        "class Greeter:\n    def hello(self):\n        return greet('x')\n"
    ),
    "app/typed.py": (
        "from typing import overload\n\n\n@overload\ndef f(x: int) -> int: ...\n"
        "@overload\ndef f(x: str) -> str: ...\ndef f(x):\n    return x\n"
    ),
    "docs/skip.md": "# Not indexed\n",
    "bad.py": "def broken(:\n",
}


def state(index: Session) -> tuple[object, ...]:
    """Everything observable about an index, for comparing with a fresh build."""
    queries = ["greet", "setup project", "overload f x", "hello name", "again", "new"]
    return (
        [(entry.folder.position, entry.chunk) for entry in index.queries.chunks()],
        [(folder.position, rel, why) for folder, rel, why in index.queries.skipped()],
        len(index.queries),
        index.queries.file_count(),
        sorted(index.queries.source_paths()),
        [
            [(hit.score, hit.item.chunk.chunk_id, hit.item.chunk.start_line) for hit in hit_list]
            for hit_list in (index.queries.search(query, top_k=50) for query in queries)
        ],
        [
            sorted(
                (cid, len(index.queries.lookup(cid, folder)))
                for cid in {
                    chunk.chunk_id
                    for rel_path in folder.paths()
                    for chunk in index.queries.file_chunks(folder, rel_path)
                }
            )
            for folder in index.queries.folders
        ],
        [
            sorted((src, sorted(rels)) for src, rels in folder.by_source.items())
            for folder in index.queries.folders
        ],
    )


def test_build_matches_scan_corpus(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    index = build_index([tmp_path])
    scan = scan_corpus(tmp_path)
    assert [entry.chunk for entry in index.queries.chunks()] == list(scan.chunks())
    assert [(rel, why) for _, rel, why in index.queries.skipped()] == [
        (s.rel_path, s.reason) for s in scan.skipped
    ]
    assert len(index.queries) == len(list(scan.chunks())) == 10
    assert index.queries.file_count() == 4  # app/__init__.py is in the corpus with no chunks
    assert [rel for _, rel, _ in index.queries.skipped()] == ["bad.py"]


def test_lookup(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    index = build_index([tmp_path])
    [entry] = index.queries.lookup("app/greet.py#function-greet")
    assert (entry.chunk.start_line, entry.chunk.end_line) == (4, 5)
    assert entry.path == tmp_path / "app" / "greet.py"
    assert len(index.queries.lookup("app/typed.py#function-f")) == 3  # @overload stubs
    assert [e.chunk.symbol for e in index.queries.lookup("README.md#heading-setup-2")] == ["Setup"]
    assert index.queries.lookup("app/greet.py#function-nope") == []
    assert index.queries.lookup("docs/skip.md#heading-not-indexed") == []
    assert index.queries.lookup("bad.py#module-1") == []


def test_suggest(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    index = build_index([tmp_path])
    assert index.queries.suggest("app/greet.py#function-greeet")[0] == "app/greet.py#function-greet"
    assert index.queries.suggest("app/greet.py#class-greeter")[0] == "app/greet.py#class-Greeter"
    assert index.queries.suggest("app/greet.py#x", limit=1) != []
    assert index.queries.suggest("app/gret.py#function-greet")[0] == "app/greet.py#function-greet"
    assert index.queries.suggest("README.md#heading-setup-3")[:2] == [
        "README.md#heading-setup-2",
        "README.md#heading-setup",
    ]
    assert index.queries.suggest("zzzz/nothing/like/it.rs#x") == []


def test_folders_order_lookup_preference_and_folder_of(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    write_tree(one, {"a.py": "def f():\n    pass\n", "inner/b.md": "# B\n"})
    write_tree(two, {"a.py": "def f():\n    pass\n"})
    index = build_index([two, one])
    assert [(e.folder.root, e.chunk.chunk_id) for e in index.queries.chunks()] == [
        (two, "a.py#function-f"),
        (one, "a.py#function-f"),
        (one, "inner/b.md#heading-b"),
    ]
    first, second = index.queries.folders
    assert len(index.queries.lookup("a.py#function-f")) == 2
    assert [e.folder for e in index.queries.lookup("a.py#function-f", prefer=second)] == [second]
    assert [e.folder for e in index.queries.lookup("inner/b.md#heading-b", prefer=first)] == [
        second
    ]
    # equal scores: the first workspace folder first
    assert [h.item.folder for h in index.queries.search("f", top_k=5)] == [first, second]
    assert index.queries.folder_of(one / "inner" / "b.md") == (second, "inner/b.md")
    assert index.queries.folder_of(tmp_path / "elsewhere.py") is None
    assert index.queries.folder_of(one) is None
    # a folder nested in another: the innermost wins
    nested = index.add_root(one / "inner")
    assert index.queries.folder_of(one / "inner" / "b.md") == (nested, "b.md")
    index.remove_folder(second)
    assert [e.chunk.source_path for e in index.queries.chunks()] == ["a.py"]
    assert index.queries.search("b") == []


def _two_folders(tmp_path: Path) -> tuple[Session, Folder, Folder]:
    """Two folders with a source path in common (``app/x.py``), differently."""
    one, two = tmp_path / "one", tmp_path / "two"
    write_tree(one, {"app/x.py": "def f():\n    pass\n\n\ndef g():\n    pass\n", **TREE})
    write_tree(two, {"app/x.py": "def g():\n    return 2\n\n\ndef k():\n    pass\n"})
    index = Session(workers=1)
    first, second = index.add_root(one), index.add_root(two)
    for folder in (first, second):
        index.index_folder(folder)
    return index, first, second


def test_chunks_of_source(tmp_path: Path) -> None:
    """A source path's chunks: the preferred folder's first, one per ID, in file order."""
    index, first, second = _two_folders(tmp_path)
    ids = ["app/x.py#function-f", "app/x.py#function-g", "app/x.py#function-k"]
    chunks = index.queries.chunks_of_source("app/x.py")
    assert [chunk.chunk_id for chunk in chunks] == ids
    assert chunks[1].text == "def g():\n    pass"  # the first folder's
    assert index.queries.chunks_of_source("app/x.py", prefer=first) == chunks
    preferred = index.queries.chunks_of_source("app/x.py", prefer=second)
    assert [chunk.chunk_id for chunk in preferred] == [ids[1], ids[2], ids[0]]
    assert preferred[0].text == "def g():\n    return 2"
    # @overload stubs repeat an ID: the first of them
    typed = index.queries.chunks_of_source("app/typed.py")
    assert [chunk.chunk_id for chunk in typed] == [
        "app/typed.py#module-1",
        "app/typed.py#function-f",
    ]
    assert typed[1] == index.queries.lookup("app/typed.py#function-f")[0].chunk
    assert [c.chunk_id for c in index.queries.chunks_of_source("README.md")] == [
        "README.md#heading-project",
        "README.md#heading-setup",
        "README.md#heading-setup-2",
    ]
    assert index.queries.chunks_of_source("app/nope.py") == []
    assert index.queries.chunks_of_source("bad.py") == []  # skipped


@pytest.mark.parametrize(
    ("rel_path", "line", "chunk_id"),
    [
        ("app/greet.py", 1, "app/greet.py#module-1"),
        ("app/greet.py", 4, "app/greet.py#function-greet"),
        ("app/greet.py", 5, "app/greet.py#function-greet"),
        ("app/greet.py", 9, "app/greet.py#class-Greeter"),
        ("app/greet.py", 99, None),
        ("README.md", 5, "README.md#heading-setup"),
        ("README.md", 7, "README.md#heading-setup-2"),
        ("bad.py", 1, None),  # skipped: no chunks
        ("app/nope.py", 1, None),
    ],
)
def test_chunk_at(tmp_path: Path, rel_path: str, line: int, chunk_id: str | None) -> None:
    """The indexed chunk of a file at a 1-based line, if any."""
    write_tree(tmp_path, TREE)
    index = build_index([tmp_path])
    [folder] = index.queries.folders
    chunk = index.queries.chunk_at(folder, rel_path, line)
    assert (chunk.chunk_id if chunk is not None else None) == chunk_id


def test_source_paths_starting(tmp_path: Path) -> None:
    index, _, second = _two_folders(tmp_path)
    assert index.queries.source_paths_starting("app/") == [
        "app/greet.py",
        "app/typed.py",
        "app/x.py",
    ]
    assert index.queries.source_paths_starting("app/t") == ["app/typed.py"]
    assert index.queries.source_paths_starting("") == sorted(index.queries.source_paths())
    assert index.queries.source_paths_starting("docs/") == []  # excluded by the corpus rules
    assert index.queries.source_paths_starting("zz") == []
    index.remove_folder(index.queries.folders[0])
    assert index.queries.source_paths_starting("") == ["app/x.py"]
    index.remove_folder(second)
    assert index.queries.source_paths_starting("") == []


def test_resolve_first(tmp_path: Path) -> None:
    """The chunks of the first candidate that resolves; later ones are not asked."""
    index, first, second = _two_folders(tmp_path)

    def candidates(*ids: str) -> Iterator[str]:
        yield from ids
        raise AssertionError("asked past the first ID that resolves")

    found = index.queries.resolve_first(candidates("app/nope.py#function-g", "app/x.py#function-g"))
    assert [entry.folder for entry in found] == [first, second]
    assert found == index.queries.lookup("app/x.py#function-g")
    preferred = index.queries.resolve_first(
        candidates("x.py#function-g", "app/x.py#function-g"), second
    )
    assert [(e.folder, e.chunk.text) for e in preferred] == [(second, "def g():\n    return 2")]
    only_first = index.queries.resolve_first(["app/x.py#function-f"], prefer=second)
    assert [entry.folder for entry in only_first] == [first]  # not in the preferred one
    assert index.queries.resolve_first(["app/nope.py#function-g", "bad.py#module-1"]) == []
    assert index.queries.resolve_first([]) == []


def test_relative_paths(tmp_path: Path) -> None:
    write_tree(tmp_path, {"real/a.py": "X = 1\n"})
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    index = Session()
    folder = index.add_root(tmp_path / "alias")
    assert folder.relative(tmp_path / "alias" / "a.py") == "a.py"
    assert folder.relative(tmp_path / "real" / "a.py") == "a.py"  # via the resolved root
    assert folder.relative(tmp_path / "alias" / ".." / "x.py") is None
    assert folder.relative(tmp_path / "alias") is None


def test_refresh_edits_deletes_creates_and_breaks(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    index = build_index([tmp_path])
    [folder] = index.queries.folders
    # an edit
    (tmp_path / "app" / "greet.py").write_text("def greet(name):\n    return 'new ' + name\n")
    # a file that breaks, and one that heals
    (tmp_path / "app" / "typed.py").write_text("def f(:\n")
    (tmp_path / "bad.py").write_text("def fixed():\n    pass\n")
    # new files, a deleted file, an excluded file, a folder of new files
    (tmp_path / "new.md").write_text("# New\nnew text\n")
    (tmp_path / "README.md").unlink()
    write_tree(tmp_path, {"pkg/x.py": "def new():\n    pass\n", "pkg/y/z.md": "# New Z\n"})
    (tmp_path / "docs" / "other.md").write_text("# Excluded\n")
    changed = index.refresh(
        folder,
        ["app/greet.py", "app/typed.py", "bad.py", "new.md", "README.md", "pkg", "docs/other.md"],
    )
    assert sorted(changed) == sorted(
        ["app/greet.py", "app/typed.py", "bad.py", "new.md", "README.md", "pkg/x.py", "pkg/y/z.md"]
    )
    assert folder.skipped == {"app/typed.py": "SyntaxError line 1: invalid syntax"}
    assert state(index) == state(build_index([tmp_path]))
    # a folder deleted
    shutil.rmtree(tmp_path / "pkg")
    assert sorted(index.refresh(folder, ["pkg"])) == ["pkg/x.py", "pkg/y/z.md"]
    assert state(index) == state(build_index([tmp_path]))
    # refreshing what did not change changes nothing observable
    before = state(index)
    index.refresh(folder, ["app/greet.py", "nothing/here.py", "app"])
    assert state(index) == before


def test_refresh_a_folder_replaced_by_a_file_and_back(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "X = 1\n", "m.py/inner.py": "Y = 2\n"})
    index = build_index([tmp_path])
    [folder] = index.queries.folders
    assert folder.skipped == {"m.py": "not a regular file (a directory)"}
    shutil.rmtree(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("def m():\n    pass\n")
    index.refresh(folder, ["m.py"])
    assert state(index) == state(build_index([tmp_path]))
    (tmp_path / "m.py").unlink()
    write_tree(tmp_path, {"m.py/inner.py": "Z = 3\n"})
    index.refresh(folder, ["m.py"])
    assert state(index) == state(build_index([tmp_path]))


def test_refresh_symlinks(tmp_path: Path) -> None:
    write_tree(tmp_path, {"real.py": "def r():\n    pass\n"})
    index = build_index([tmp_path])
    [folder] = index.queries.folders
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    (tmp_path / "broken.py").symlink_to(tmp_path / "missing.py")
    index.refresh(folder, ["alias.py", "broken.py"])
    assert state(index) == state(build_index([tmp_path]))
    assert folder.by_source == {"real.py": ["real.py", "alias.py"]}
    assert len(index.queries.lookup("real.py#function-r")) == 2
    (tmp_path / "alias.py").unlink()
    os.replace(tmp_path / "real.py", tmp_path / "moved.py")
    index.refresh(folder, ["alias.py", "real.py", "moved.py"])
    assert state(index) == state(build_index([tmp_path]))
    assert folder.by_source == {"moved.py": ["moved.py"]}


def test_index_folder_again_after_changes_equals_a_fresh_build(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    index = build_index([tmp_path])
    [folder] = index.queries.folders
    (tmp_path / "README.md").write_text("# Changed\n")
    (tmp_path / "bad.py").unlink()
    write_tree(tmp_path, {"more/new.py": "def new():\n    pass\n"})
    index.index_folder(folder)
    assert state(index) == state(build_index([tmp_path]))


def test_set_file_none_forgets_everything_of_a_file(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    index = build_index([tmp_path])
    [folder] = index.queries.folders
    index.store.forget_file(folder, "app/greet.py")
    index.store.forget_file(folder, "bad.py")
    assert index.queries.lookup("app/greet.py#function-greet") == []
    assert "app/greet.py" not in folder.by_source
    assert index.queries.file_chunks(folder, "app/greet.py") == ()
    assert index.queries.search("greeter hello") == []
    assert list(index.queries.skipped()) == []


def test_many_files_take_the_same_path_as_few(tmp_path: Path) -> None:
    """Enough files that indexing may use worker processes: same result."""
    tree = {f"pkg{i % 7}/m{i:03d}.py": f"def f{i}():\n    return {i}\n" for i in range(150)}
    tree.update({f"doc/{i:03d}.md": f"# Title {i}\nbody {i}\n" for i in range(50)})
    tree["pkg0/broken.py"] = "def (:\n"
    write_tree(tmp_path, tree)
    index = build_index([tmp_path])
    scan = scan_corpus(tmp_path)
    assert [entry.chunk for entry in index.queries.chunks()] == list(scan.chunks())
    assert [(rel, why) for _, rel, why in index.queries.skipped()] == [
        (s.rel_path, s.reason) for s in scan.skipped
    ]


def test_suggest_at_scale_finds_the_near_path_and_follows_changes(tmp_path: Path) -> None:
    tree = {f"pkg{i // 50}/module_{i}.py": f"def f{i}():\n    pass\n" for i in range(600)}
    tree["services/payments/gateway.py"] = "def charge():\n    pass\n"
    write_tree(tmp_path, tree)
    index = build_index([tmp_path])
    assert index.queries.suggest("services/payment/gateway.py#function-charge")[0] == (
        "services/payments/gateway.py#function-charge"
    )
    assert (
        index.queries.suggest("pkg3/modul_151.py#function-f151")[0]
        == "pkg3/module_151.py#function-f151"
    )
    # a 100 kB "ID" is compared by its start, and answers
    assert isinstance(
        index.queries.suggest("services/" + "x" * 100_000 + ".py#function-charge"), list
    )
    # remembered, but not past a change: a new file is suggested at once
    assert index.queries.suggest("services/refunds/gateway.py#function-refund")[0] != (
        "services/refunds/gateway.py#function-refund"
    )
    folder = index.queries.folders[0]
    write_tree(tmp_path, {"services/refunds/gateway.py": "def refund():\n    pass\n"})
    index.refresh(folder, ["services/refunds/gateway.py"])
    assert index.queries.suggest("services/refund/gateway.py#function-refund")[0] == (
        "services/refunds/gateway.py#function-refund"
    )
    assert index.queries.suggest("services/refunds/gateway.py#function-refnd")[0] == (
        "services/refunds/gateway.py#function-refund"
    )


def test_suggestions_follow_files_that_come_and_go(tmp_path: Path) -> None:
    tree = {f"pkg{i // 50}/module_{i}.py": f"def f{i}():\n    pass\n" for i in range(300)}
    write_tree(tmp_path, tree)
    index = build_index([tmp_path])
    folder = index.queries.folders[0]
    assert (
        index.queries.suggest("pkg1/modul_77.py#function-f77")[0]
        == "pkg1/module_77.py#function-f77"
    )
    for round_ in range(3):  # removed paths are never suggested, re-added ones are
        (tmp_path / "pkg1" / "module_77.py").unlink()
        index.refresh(folder, ["pkg1/module_77.py"])
        assert not any(
            "module_77.py" in s for s in index.queries.suggest("pkg1/modul_77.py#function-f77")
        )
        write_tree(tmp_path, {"pkg1/module_77.py": f"def f77():\n    return {round_}\n"})
        index.refresh(folder, ["pkg1/module_77.py"])
        assert index.queries.suggest("pkg1/modul_77.py#function-f77")[0] == (
            "pkg1/module_77.py#function-f77"
        )


@pytest.mark.parametrize(
    ("ids", "wanted", "positions"),
    [
        ([], "a", []),
        (["a", "b", "c"], "b", [1]),
        (["a", "b", "a", "a"], "a", [0, 2, 3]),
        (["a", "b"], "z", []),
    ],
)
def test_positions_of_an_id_among_stubs(ids: list[str], wanted: str, positions: list[int]) -> None:
    from chunkls.index.store import positions_of

    stubs = [(chunk_id, "p", "code", None, 1, 1) for chunk_id in ids]
    assert positions_of(stubs, wanted) == positions


def test_bulk_search_pass_survives_searches_and_deletions_mid_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files chunked in bulk become searchable at the end of the pass; searches
    meanwhile merge segments and drop the terms learned for files not added yet
    (renumbering the others), a file goes: the result is a fresh build's."""
    import chunkls.search.inverted as search_module

    monkeypatch.setattr(search_module, "_MERGE_AT", 1)
    tree = {
        f"pkg/m{i}.py": f"def alpha_{i}():\n    return 'beta gamma {i} delta{i % 3}'\n"
        for i in range(12)
    }
    tree["README.md"] = "# Alpha\nbeta words\n\n## Gamma\ndelta here\n"
    write_tree(tmp_path, tree)
    index = Session(None, workers=1)
    folder = index.add_root(tmp_path)
    for steps, _ in enumerate(index.iter_index_folder(folder), 1):
        index.queries.search("alpha beta delta1", 5)  # merges whatever was added so far
        if steps == 20:  # during the search pass: a file goes, its terms with it
            (tmp_path / "pkg" / "m3.py").unlink()
            index.refresh(folder, ["pkg/m3.py"])
    fresh = build_index([tmp_path], workers=1)
    for query in ["alpha", "beta gamma", "delta0 delta2", "alpha_7", "here words"]:
        got = [(h.score, h.item.chunk.chunk_id) for h in index.queries.search(query, 20)]
        assert got == [(h.score, h.item.chunk.chunk_id) for h in fresh.queries.search(query, 20)]
    assert len(index.queries) == len(fresh.queries)
