"""The search postings saved in their own file, mapped: the same answers as a
cold index, the same arrays read without numpy (a question answered in place),
and a file that is missing, damaged or unwritable never hurts."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import chunkls.storage.saved_postings
from chunkls.index.session import Session, build_index
from chunkls.storage.cache import store_path
from chunkls.storage.mapped import HEADER, Mapped, file_path, read_plain, remove_others
from tests.unit.test_cache import _state


def _files(tree: Path, cache: Path) -> list[Path]:
    return sorted(store_path(tree.resolve(), cache).parent.glob("*postings-*"))


def _token(tree: Path, cache: Path) -> str | None:
    db = sqlite3.connect(store_path(tree.resolve(), cache))
    try:
        row = db.execute("SELECT mapped FROM snapshot").fetchone()
        return None if row is None else str(row[0])
    finally:
        db.close()


def _server_index(tree: Path, cache: Path) -> Session:
    """An index loaded from the cache as the language server loads it."""
    index = Session(cache, workers=1, long_lived=True)
    index.index_folder(index.add_root(tree))
    return index


def test_a_warm_index_searches_the_mapped_file_as_a_cold_one(tree: Path, cache: Path) -> None:
    cold = build_index([tree], cache_dir=cache, workers=1)
    files = _files(tree, cache)
    assert [f.name for f in files] == [file_path(files[0].parent, _token(tree, cache) or "").name]
    assert files[0].stat().st_mode & 0o111 == 0  # a data file, as ``open`` makes one
    warm = _server_index(tree, cache)
    assert warm.store.search_index._mapped is not None
    assert _state(warm) == _state(cold) == _state(build_index([tree], workers=1))


def test_the_file_read_without_numpy_has_the_mapped_arrays(tree: Path, cache: Path) -> None:
    """What a question answered in place reads (``read_plain``) is, item for
    item, what a server maps (``Mapped``)."""
    build_index([tree], cache_dir=cache, workers=1)
    db = sqlite3.connect(store_path(tree.resolve(), cache))
    directory = store_path(tree.resolve(), cache).parent
    mapped, _ = chunkls.storage.saved_postings.load(db, directory)
    db.close()
    token = _token(tree, cache)
    assert mapped is not None and mapped.mapped is not None and token is not None
    plain = read_plain(directory, token)
    for name, array in mapped.mapped.arrays.items():
        assert list(plain[name]) == array.tolist(), name
    assert bytes(plain["blob"]) == bytes(mapped.terms.blob)
    assert len(plain["lengths"]) == len(mapped.lengths)
    mapped.mapped.release()  # pages given back are read again when needed
    assert np.array_equal(mapped.segment.docs, np.array(plain["docs"], dtype=np.int32))


def _damage(path: Path, how: str) -> None:
    if how == "missing":
        path.unlink()
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "short":
        path.write_bytes(path.read_bytes()[: HEADER // 2])
    elif how == "other":  # another snapshot's file under this name
        data = bytearray(path.read_bytes())
        data[16:32] = b"0" * 16
        path.write_bytes(bytes(data))
    elif how == "zeros":  # the size is right, the contents lost
        path.write_bytes(path.read_bytes()[:HEADER] + bytes(path.stat().st_size - HEADER))


@pytest.mark.parametrize("how", ["missing", "truncated", "short", "other", "zeros"])
def test_a_bad_postings_file_is_not_used(
    tree: Path, cache: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    cold = _state(build_index([tree], cache_dir=cache, workers=1))
    (path,) = _files(tree, cache)
    _damage(path, how)
    with caplog.at_level(logging.INFO, logger="chunkls.storage.cache"):
        warm = _server_index(tree, cache)
    assert warm.store.search_index._mapped is None
    assert _state(warm) == cold
    said = [r.getMessage() for r in caplog.records if "postings file" in r.getMessage()]
    assert len(said) == 1 and "not used" in said[0]


def test_a_save_replaces_the_file_and_the_old_mapping_still_reads(tree: Path, cache: Path) -> None:
    build_index([tree], cache_dir=cache, workers=1)
    first = _token(tree, cache)
    index = _server_index(tree, cache)
    assert index.store.search_index._mapped is not None
    before = _state(index)
    (tree / "pkg" / "m2.py").write_text("def saved_edit():\n    return 'helper value'\n")
    folder = index.queries.folders[0]
    index.refresh(folder, ["pkg/m2.py"])
    index.store.save()
    second = _token(tree, cache)
    assert second is not None and second != first
    assert [f.name for f in _files(tree, cache)] == [f"postings-{second}.bin"]
    # the first file is gone from the directory, but this process still reads it
    assert _state(index) != before
    assert _state(index) == _state(build_index([tree], workers=1))
    assert _state(_server_index(tree, cache)) == _state(index)


def test_a_file_changed_since_the_snapshot_keeps_the_mapping(tree: Path, cache: Path) -> None:
    build_index([tree], cache_dir=cache, workers=1)
    (tree / "pkg" / "m3.py").write_text("def delta_three():\n    return 'beta gamma'\n")
    os.utime(tree / "pkg" / "m3.py", ns=(0, 5_000_000_000))
    (tree / "pkg" / "m4.py").unlink()
    index = Session(cache, workers=1, long_lived=True)
    folder = index.add_root(tree)
    for _ in index.iter_index_folder(folder):
        pass
    # the two files' documents are left out, not copied
    assert index.store.search_index._mapped is not None
    assert _state(index) == _state(build_index([tree], workers=1))


def test_an_unwritable_postings_file_leaves_no_snapshot(
    tree: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(chunkls.storage.saved_postings.MappedWriter, "put", refuse)
    with caplog.at_level(logging.INFO, logger="chunkls.storage.cache"):
        cold = _state(build_index([tree], cache_dir=cache, workers=1))
    assert _token(tree, cache) is None and _files(tree, cache) == []
    assert any("not written" in r.getMessage() for r in caplog.records)
    monkeypatch.undo()
    warm = _server_index(tree, cache)
    assert warm.store.search_index._mapped is None
    assert _state(warm) == cold


def test_a_failed_stream_gives_the_file_up_and_keeps_the_rows(
    tree: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = chunkls.storage.saved_postings.MappedWriter.put

    def put(self: chunkls.storage.saved_postings.MappedWriter, name: str, data: object) -> None:
        if name == "docs":
            raise OSError(28, "No space left on device")
        real(self, name, data)

    monkeypatch.setattr(chunkls.storage.saved_postings.MappedWriter, "put", put)
    cold = _state(build_index([tree], cache_dir=cache, workers=1))
    assert _token(tree, cache) is None and _files(tree, cache) == []
    monkeypatch.undo()
    assert _state(_server_index(tree, cache)) == cold


def test_remove_others_keeps_the_named_file_and_young_temporaries(tmp_path: Path) -> None:
    for name in ("postings-a.bin", "postings-b.bin", ".postings-c.bin.tmp", "index.sqlite3"):
        (tmp_path / name).write_bytes(b"x")
    old = tmp_path / ".postings-d.bin.tmp"
    old.write_bytes(b"x")
    os.utime(old, (0, 0))
    remove_others(tmp_path, "a")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".postings-c.bin.tmp",
        "index.sqlite3",
        "postings-a.bin",
    ]


def test_a_mapping_refuses_another_token(tree: Path, cache: Path) -> None:
    build_index([tree], cache_dir=cache, workers=1)
    token = _token(tree, cache)
    assert token is not None
    directory = store_path(tree.resolve(), cache).parent
    assert Mapped(directory, token).arrays["docs"].dtype == np.int32
    os.replace(file_path(directory, token), file_path(directory, "f" * 16))
    with pytest.raises(ValueError, match="not this snapshot's"):
        Mapped(directory, "f" * 16)


def test_the_pages_a_load_or_a_save_read_are_given_back(
    tree: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_index([tree], cache_dir=cache, workers=1)
    released: list[Mapped] = []
    real = Mapped.release

    def counting(self: Mapped) -> None:
        released.append(self)
        real(self)

    monkeypatch.setattr(Mapped, "release", counting)
    index = _server_index(tree, cache)
    assert index.store.search_index._mapped is not None
    assert released  # after the load's checks and the index's own pass
    released.clear()
    (tree / "pkg" / "m2.py").write_text("def saved_edit():\n    return 'helper value'\n")
    index.refresh(index.queries.folders[0], ["pkg/m2.py"])
    index.store.save()  # the new snapshot is made from the mapped postings: all read
    assert released


def test_a_mapped_index_saved_as_it_is_saves_the_same_postings(tree: Path, cache: Path) -> None:
    """Nothing changed, the snapshot saved again: made from the mapped arrays and
    the mapped term table as they are (no renumbering), then read back the same."""
    build_index([tree], cache_dir=cache, workers=1)
    index = _server_index(tree, cache)
    assert index.store.search_index._mapped is not None
    before = _state(index)
    first = _token(tree, cache)
    index.queries.folders[0].snapshot_stale = True
    index.store.save()
    assert _token(tree, cache) not in (None, first)
    again = _server_index(tree, cache)
    assert again.store.search_index._mapped is not None
    assert _state(again) == before == _state(build_index([tree], workers=1))
