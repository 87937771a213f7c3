"""A folder chunked in a separate process (into its cache, then loaded from it)
ends exactly as one chunked here; a failed or abandoned process changes nothing."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

import chunkls.index.bulk as bulk_module
from chunkls.index.folder import Folder
from chunkls.index.session import Session, build_index

from .strategies import write_tree

TREE = {
    **{
        f"pkg/m{i}.py": (
            f"def alpha_{i}(x):\n    return 'beta gamma {i}'\n\n\nclass K{i}:\n    pass\n"
        )
        for i in range(30)
    },
    "README.md": "# Alpha\nbeta words\n\n## Gamma\ndelta here\n",
    "docs/notes.md": "# Notes\nsee `pkg/m3.py#function-alpha_3`\n",
    "bad.py": "def (:\n",
}
QUERIES = ["alpha", "beta gamma 7", "delta words", "K12", "notes"]


def same_as_fresh(index: Session, root: Path) -> None:
    fresh = build_index([root], workers=1)
    assert [e.chunk for e in index.queries.chunks()] == [e.chunk for e in fresh.queries.chunks()]
    assert dict(index.queries.folders[0].skipped) == dict(fresh.queries.folders[0].skipped)
    for query in QUERIES:
        got = [(h.score, h.item.chunk.chunk_id) for h in index.queries.search(query, 20)]
        assert got == [(h.score, h.item.chunk.chunk_id) for h in fresh.queries.search(query, 20)]
    assert len(index.queries) == len(fresh.queries)


def elsewhere(tmp_path: Path) -> tuple[Path, Session, Folder]:
    """The tree written, an index that chunks any folder elsewhere, its folder."""
    root = tmp_path / "ws"
    write_tree(root, TREE)
    index = Session(tmp_path / "cache", workers=1, elsewhere_from=1)
    return root, index, index.add_root(root)


def test_a_folder_indexed_elsewhere_equals_one_indexed_here(tmp_path: Path) -> None:
    root, index, folder = elsewhere(tmp_path)
    progress = list(index.iter_index_folder(folder))
    assert progress[-1][0] == progress[-1][1] >= len(TREE) - 1
    same_as_fresh(index, root)
    # everything came from the cache the other process wrote: nothing re-read
    assert not folder.snapshot_stale
    index.close()
    assert not multiprocessing.active_children()


def test_files_changed_while_the_other_process_runs_are_taken_as_they_are_now(
    tmp_path: Path,
) -> None:
    root, index, folder = elsewhere(tmp_path)
    for step, _ in enumerate(index.iter_index_folder(folder)):
        if step == 3:  # a save and a deletion while the other process chunks
            assert index.bulk.elsewhere
            (root / "pkg" / "m1.py").write_text("def renamed():\n    return 'omega'\n")
            os.utime(root / "pkg" / "m1.py", ns=(1, 1))
            (root / "pkg" / "m2.py").unlink()
            index.refresh(folder, ["pkg/m1.py", "pkg/m2.py"])
    same_as_fresh(index, root)
    assert index.queries.lookup("pkg/m1.py#function-renamed")
    index.close()
    # the rows written meanwhile waited and then won: a restart agrees
    again = Session(tmp_path / "cache", workers=1)
    again_folder = again.add_root(root)
    for _ in again.iter_index_folder(again_folder):
        pass
    same_as_fresh(again, root)
    again.close()


def _fail(*args: object) -> None:
    os._exit(3)


def test_a_failed_process_is_reported_and_the_folder_indexed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    if multiprocessing.get_start_method(allow_none=True) not in (None, "fork"):
        pytest.skip("the failing child is patched in: needs fork")
    monkeypatch.setattr(bulk_module, "_index_in_child", _fail)
    root, index, folder = elsewhere(tmp_path)
    for _ in index.iter_index_folder(folder):
        pass
    assert "the indexing process failed (exit code 3); indexing here" in caplog.text
    same_as_fresh(index, root)
    index.close()


def test_an_abandoned_pass_stops_the_other_process(tmp_path: Path) -> None:
    _, index, folder = elsewhere(tmp_path)
    steps = index.iter_index_folder(folder)
    for _ in range(3):
        next(steps)
    assert index.bulk.elsewhere  # running
    steps.close()  # the folder removed, the server exiting
    assert not index.bulk.elsewhere and not multiprocessing.active_children()
    assert not folder.cache.held  # type: ignore[union-attr]
    index.close()


def test_small_folders_and_folders_without_a_cache_are_indexed_here(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write_tree(root, TREE)
    for index in (
        Session(tmp_path / "cache", workers=1, elsewhere_from=len(TREE) + 1),
        Session(None, workers=1, elsewhere_from=1),
    ):
        folder = index.add_root(root)
        for _ in index.iter_index_folder(folder):
            assert not index.bulk.elsewhere
        same_as_fresh(index, root)
        index.close()


def test_a_second_pass_over_a_folder_being_indexed_elsewhere_chunks_here(
    tmp_path: Path,
) -> None:
    """("Re-index Workspace" while indexing runs): no second process on the same
    cache; the writes of the pass that chunks here wait for the other process."""
    root, index, folder = elsewhere(tmp_path)
    first = index.iter_index_folder(folder)
    for _ in range(3):
        next(first)
    assert len(index.bulk.elsewhere) == 1
    for _ in index.iter_index_folder(folder):
        assert len(index.bulk.elsewhere) <= 1  # never a second process
    for _ in first:
        pass
    assert not folder.cache.held  # type: ignore[union-attr]
    same_as_fresh(index, root)
    index.close()


def test_rows_found_bad_are_dropped_before_the_other_process_writes_them_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, index, folder = elsewhere(tmp_path)
    for _ in index.iter_index_folder(folder):
        pass
    index.close()
    assert folder.cache is not None
    db = sqlite3.connect(folder.cache.path)
    db.execute("UPDATE contents SET stubs = x'00ff'")  # every row's chunks unreadable
    db.commit()
    db.close()
    root, index, folder = elsewhere(tmp_path)
    for _ in index.iter_index_folder(folder):  # the other process chunks them all again
        pass
    same_as_fresh(index, root)
    index.close()
    # what it wrote stays: the next start reads nothing again
    chunked: list[str] = []
    real = bulk_module.chunk_many

    def spy(root, files, rules, workers=None):  # type: ignore[no-untyped-def]
        chunked.extend(file.rel_path for file in files)
        return real(root, files, rules, workers)

    monkeypatch.setattr(bulk_module, "chunk_many", spy)
    again = Session(tmp_path / "cache", workers=1)
    again_folder = again.add_root(root)
    for _ in again.iter_index_folder(again_folder):
        pass
    assert chunked == []
    same_as_fresh(again, root)
    again.close()
