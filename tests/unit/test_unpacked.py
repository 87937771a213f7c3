"""The files kept unpacked (``chunkls.index.unpacked.Unpacked``): least recently read
out first, within a file count and a text budget, never a stale entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunkls.chunking.corpus import CorpusRules
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.index import unpacked
from chunkls.index.folder import Folder
from chunkls.index.unpacked import Unpacked
from chunkls.storage.packed import StoredFile

FOLDER = Folder(Path("/tmp/unpacked"), CorpusRules())


def stored(name: str) -> StoredFile:
    return StoredFile(name, b"", 1, None, 0, 0)


def chunks(name: str, chars: int) -> tuple[LocatedChunk, ...]:
    return (LocatedChunk(f"{name}#module-1", "x" * chars, name, "python", None, 1, 1),)


def test_a_read_keeps_a_file_from_going_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unpacked, "UNPACKED_FILES", 2)
    kept = Unpacked()
    entries = {name: stored(name) for name in "abc"}
    kept.put((FOLDER, "a"), entries["a"], chunks("a", 1))
    kept.put((FOLDER, "b"), entries["b"], chunks("b", 1))
    assert kept.get((FOLDER, "a"), entries["a"]) is not None  # a read last now
    kept.put((FOLDER, "c"), entries["c"], chunks("c", 1))
    assert kept.get((FOLDER, "b"), entries["b"]) is None
    assert kept.get((FOLDER, "a"), entries["a"]) is not None
    assert len(kept) == 2 and kept.chars == 2


@pytest.mark.parametrize(
    ("sizes", "budget", "left"),
    [
        ((4, 4, 4), 8, "bc"),  # the oldest goes when the texts exceed the budget
        ((4, 4, 4), 12, "abc"),  # at the budget: all stay
        ((20,), 8, "a"),  # one file longer than the budget still stays
        ((4, 20), 8, "b"),  # ... and pushes out the rest
    ],
)
def test_the_texts_kept_stay_within_the_budget(
    monkeypatch: pytest.MonkeyPatch, sizes: tuple[int, ...], budget: int, left: str
) -> None:
    monkeypatch.setattr(unpacked, "UNPACKED_CHARS", budget)
    kept = Unpacked()
    names = "abcd"[: len(sizes)]
    entries = {name: stored(name) for name in names}
    for name, size in zip(names, sizes, strict=True):
        kept.put((FOLDER, name), entries[name], chunks(name, size))
    assert [n for n in names if kept.get((FOLDER, n), entries[n]) is not None] == list(left)
    assert kept.chars == sum(size for n, size in zip(names, sizes, strict=True) if n in left)


def test_another_stored_entry_is_a_miss_and_replace_and_pop_keep_the_count() -> None:
    kept = Unpacked()
    old, new, other = stored("a"), stored("a"), stored("a")
    kept.put((FOLDER, "a"), old, chunks("a", 5))
    assert kept.get((FOLDER, "a"), new) is None  # the file changed since
    kept.replace((FOLDER, "a"), other, new)  # not the entry kept: nothing happens
    assert kept.get((FOLDER, "a"), old) is not None
    kept.replace((FOLDER, "a"), old, new)  # the texts let go of: the same chunks
    assert kept.get((FOLDER, "a"), new) is not None and kept.chars == 5
    kept.put((FOLDER, "a"), new, chunks("a", 7))  # put again: counted once
    assert kept.chars == 7
    kept.pop((FOLDER, "a"))
    kept.pop((FOLDER, "a"))
    assert len(kept) == 0 and kept.chars == 0
