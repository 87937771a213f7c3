"""The persistent index: warm starts equal cold ones, and a bad cache never hurts."""

from __future__ import annotations

import builtins
import contextlib
import logging
import marshal
import os
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

import chunkls.chunking.corpus
import chunkls.index.bulk
import chunkls.index.refresh
import chunkls.index.workers
import chunkls.storage.cache
from chunkls.chunking.corpus import CorpusRules
from chunkls.cli import main
from chunkls.index.session import Session, build_index
from chunkls.storage.cache import cache_dir, cache_home, store_path
from tests.unit.strategies import small_corpus

QUERIES = ["alpha return", "beta gamma", "notes section text", "helper value"]


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The root-relative paths that get chunked (read and parsed) again."""
    seen: list[str] = []
    real = chunkls.index.bulk.chunk_many

    def spy(root, files, rules, workers=None):  # type: ignore[no-untyped-def]
        seen.extend(file.rel_path for file in files)
        return real(root, files, rules, workers)

    monkeypatch.setattr(chunkls.index.bulk, "chunk_many", spy)
    yield seen


def _state(index: Session) -> tuple[object, ...]:
    chunks = [entry.chunk for entry in index.queries.chunks()]
    skipped = [entry[1:] for entry in index.queries.skipped()]
    hits = [[(h.score, h.item.chunk) for h in index.queries.search(q, 50)] for q in QUERIES]
    return chunks, skipped, hits, len(index.queries)


def _answered(index: Session) -> tuple[object, ...]:
    """``_state`` as a front door answers: when texts turn out missing (a cache
    given up on after the index was loaded from it), they are recovered and the
    index asked again (as the CLI and the language server do)."""
    state = _state(index)
    if index.store.texts_missing:
        index.catch_up()
        state = _state(index)
    return state


def _bump(path: Path, text: str | None = None) -> None:
    if text is not None:
        path.write_text(text)
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))


def test_warm_start_equals_cold_start(tree: Path, cache: Path, parsed: list[str]) -> None:
    cold = build_index([tree], cache_dir=cache, workers=1)
    assert len(parsed) == 25
    parsed.clear()
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert parsed == []
    uncached = build_index([tree], workers=1)
    assert _state(warm) == _state(cold) == _state(uncached)
    assert store_path(tree.resolve(), cache).is_file()


def test_changes_while_down_are_picked_up(tree: Path, cache: Path, parsed: list[str]) -> None:
    build_index([tree], cache_dir=cache, workers=1)
    _bump(tree / "pkg" / "m3.py", "def delta_three():\n    return 'delta'\n")
    (tree / "pkg" / "m4.py").unlink()
    (tree / "new.md").write_text("# New\n\nnew notes text\n")
    _bump(tree / "broken.py", "def fixed():\n    pass\n")
    parsed.clear()
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert sorted(parsed) == ["broken.py", "new.md", "pkg/m3.py"]
    assert _state(warm) == _state(build_index([tree], workers=1))
    assert warm.queries.lookup("pkg/m3.py#function-delta_three")
    assert not warm.queries.lookup("pkg/m4.py#function-alpha_4")
    # and the cache now holds the new state
    parsed.clear()
    again = build_index([tree], cache_dir=cache, workers=1)
    assert parsed == []
    assert _state(again) == _state(warm)


def test_same_content_new_mtime_is_confirmed_by_hash(
    tree: Path, cache: Path, parsed: list[str]
) -> None:
    build_index([tree], cache_dir=cache, workers=1)
    _bump(tree / "pkg" / "m1.py")  # touched, not changed
    parsed.clear()
    build_index([tree], cache_dir=cache, workers=1)
    assert parsed == []
    _bump(tree / "pkg" / "m1.py", (tree / "pkg" / "m1.py").read_text().replace("1", "7"))
    parsed.clear()
    build_index([tree], cache_dir=cache, workers=1)
    assert parsed == ["pkg/m1.py"]


def test_saves_update_only_their_rows(tree: Path, cache: Path, parsed: list[str]) -> None:
    index = Session(cache, workers=1)
    folder = index.add_root(tree)
    index.index_folder(folder)
    (tree / "pkg" / "m2.py").write_text("def saved_edit():\n    return 'helper value'\n")
    assert index.refresh(folder, ["pkg/m2.py"]) == ["pkg/m2.py"]
    index.close()
    parsed.clear()
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert parsed == []
    assert warm.queries.lookup("pkg/m2.py#function-saved_edit")
    assert _state(warm) == _state(build_index([tree], workers=1))


def test_a_snapshot_missing_some_saves_is_still_exact(tree: Path, cache: Path) -> None:
    index = Session(cache, workers=1)
    folder = index.add_root(tree)
    index.index_folder(folder)
    (tree / "pkg" / "m5.py").write_text("def helper_value():\n    return 'beta gamma'\n")
    index.refresh(folder, ["pkg/m5.py"])
    assert folder.cache is not None
    folder.cache.close()  # rows flushed by refresh; the snapshot is not re-saved
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert _state(warm) == _state(build_index([tree], workers=1))


@pytest.mark.parametrize("change", ["version", "settings", "tokenizer"])
def test_a_cache_from_another_version_is_not_used_and_other_settings_reuse_it(
    tree: Path, cache: Path, parsed: list[str], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    build_index([tree], cache_dir=cache, workers=1)
    parsed.clear()
    base = None
    if change == "version":
        monkeypatch.setattr(chunkls, "__version__", "999.0")
    elif change == "tokenizer":
        monkeypatch.setattr(chunkls.storage.cache, "TOKENIZER", 999)
    else:
        base = CorpusRules().extended(exclude_globs=["notes1.md"])
    warm = build_index([tree], base, cache_dir=cache, workers=1)
    # another version or tokenizer: every file chunked again; other corpus settings:
    # none (a file's chunks depend on its bytes and the chunker alone)
    assert len(parsed) == (0 if change == "settings" else 25)
    assert _state(warm) == _state(build_index([tree], base, workers=1))
    if change == "settings":  # and back: the file left out comes back from its row
        parsed.clear()
        back = build_index([tree], cache_dir=cache, workers=1)
        assert parsed == []
        assert _state(back) == _state(build_index([tree], workers=1))


def _corrupt(path: Path, how: str) -> None:
    if how == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif how == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif how == "rows":
        db = sqlite3.connect(path)
        db.execute("UPDATE contents SET stubs = x'00ff'")
        db.commit()
        db.close()
        for postings in path.parent.glob("postings-*.bin"):  # and the saved postings
            postings.write_bytes(postings.read_bytes()[:-7])
    elif how == "texts":  # found only when a text is needed: the file is read again
        db = sqlite3.connect(path)
        db.execute("UPDATE contents SET texts = x'789c00ff'")
        db.commit()
        db.close()


@pytest.mark.parametrize("how", ["garbage", "truncated", "rows", "texts"])
def test_a_corrupt_cache_is_rebuilt(
    tree: Path, cache: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    cold = _state(build_index([tree], cache_dir=cache, workers=1))  # before its cache breaks
    path = store_path(tree.resolve(), cache)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    _corrupt(path, how)
    with caplog.at_level(logging.WARNING, logger="chunkls.storage.cache"):
        rebuilt = build_index([tree], cache_dir=cache, workers=1)
    if how == "texts":  # found only when a text is needed: recovered from the files
        assert _state(rebuilt) != cold
        assert len(rebuilt.catch_up()) == 24
    assert _state(rebuilt) == cold
    if how not in ("rows", "texts"):
        assert len([r for r in caplog.records if "rebuilding" in r.getMessage()]) == 1
    again = build_index([tree], cache_dir=cache, workers=1)
    assert _state(again) == cold


def test_a_locked_cache_is_bypassed(tree: Path, cache: Path, parsed: list[str]) -> None:
    cold = _state(build_index([tree], cache_dir=cache, workers=1))  # before the lock
    path = store_path(tree.resolve(), cache)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        parsed.clear()
        index = build_index([tree], cache_dir=cache, workers=1)
        assert _answered(index) == cold
        folder = index.queries.folders[0]
        assert folder.cache is not None
        assert folder.cache.problem is not None
        assert "locked" in folder.cache.problem
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_unreadable_cache_directory_does_not_crash(tree: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    index = build_index([tree], cache_dir=blocker, workers=1)
    assert _state(index) == _state(build_index([tree], workers=1))


def test_cache_home_honours_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_home() == tmp_path / "xdg"
    assert cache_dir() == tmp_path / "xdg" / "chunkls"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert cache_home() != Path("relative/ignored")


def test_cli_uses_the_cache_outside_the_workspace(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parsed: list[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    before = sorted(p.relative_to(tree) for p in tree.rglob("*"))
    outputs = []
    for _ in range(2):
        import io

        out, err = io.StringIO(), io.StringIO()
        assert main(["chunks", str(tree), "--format", "ids"], out, err) == 0
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]
    assert len(parsed) == 25  # the second run parsed nothing
    assert (tmp_path / "xdg" / "chunkls").is_dir()
    assert sorted(p.relative_to(tree) for p in tree.rglob("*")) == before


def test_cli_no_cache(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    out, err = io.StringIO(), io.StringIO()
    assert main(["search", "alpha", "--root", str(tree), "--no-cache"], out, err) == 0
    assert "Indexed" in out.getvalue()
    assert not (tmp_path / "xdg").exists()
    assert "\r" not in err.getvalue()  # no progress bar when not a terminal


def test_two_folders_warm_equal_cold(tmp_path: Path, cache: Path, parsed: list[str]) -> None:
    first = small_corpus(tmp_path / "one")
    second = tmp_path / "two"
    second.mkdir()
    (second / "extra.py").write_text("def alpha_extra():\n    return 'beta gamma helper'\n")
    (second / "more.md").write_text("# Notes\n\nnotes section text alpha\n")
    cold = build_index([first, second], cache_dir=cache, workers=1)
    parsed.clear()
    warm = build_index([first, second], cache_dir=cache, workers=1)
    assert parsed == []
    uncached = build_index([first, second], workers=1)
    assert _state(warm) == _state(cold) == _state(uncached)
    # and after one file changes in the second folder, only it is parsed again
    _bump(second / "extra.py", "def alpha_changed():\n    return 'notes'\n")
    parsed.clear()
    again = build_index([first, second], cache_dir=cache, workers=1)
    assert parsed == ["extra.py"]
    assert _state(again) == _state(build_index([first, second], workers=1))


def test_a_cache_of_an_older_schema_is_replaced_quietly(
    tree: Path, cache: Path, parsed: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    path = store_path(tree.resolve(), cache)
    path.parent.mkdir(parents=True)
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema', '1');"
        "CREATE TABLE files (rel_path TEXT PRIMARY KEY, mtime_ns INTEGER, chunks BLOB);"
        "INSERT INTO files VALUES ('pkg/m0.py', 1, x'00');"
    )
    old.commit()
    old.close()
    with caplog.at_level(logging.INFO, logger="chunkls.storage.cache"):
        index = build_index([tree], cache_dir=cache, workers=1)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("other version or settings" in r.getMessage() for r in caplog.records)
    assert _state(index) == _state(build_index([tree], workers=1))
    parsed.clear()
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert parsed == []
    assert _state(warm) == _state(index)


def test_a_row_of_stubs_without_previews_is_read_again(
    tree: Path, cache: Path, parsed: list[str]
) -> None:
    """A stub keeps its chunk's first line and last line's end (what a listing shows
    without unpacking a text); a row of stubs without them (six fields, as before
    they were kept) is damaged: its file alone is read again, the rest reused."""
    cold = _state(build_index([tree], cache_dir=cache, workers=1))
    db = sqlite3.connect(store_path(tree.resolve(), cache))
    (blob,) = db.execute("SELECT stubs FROM contents WHERE rel_path = 'pkg/m0.py'").fetchone()
    stubs = marshal.loads(zlib.decompress(blob))
    assert {len(stub) for stub in stubs} == {8}
    older = zlib.compress(marshal.dumps(tuple(stub[:6] for stub in stubs), 2))
    db.execute("UPDATE contents SET stubs = ? WHERE rel_path = 'pkg/m0.py'", (older,))
    db.commit()
    db.close()
    parsed.clear()
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert parsed == ["pkg/m0.py"]
    assert _state(warm) == cold


def test_a_file_saved_during_a_warm_start_keeps_its_new_chunks(
    tree: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_index([tree], cache_dir=cache, workers=1)
    monkeypatch.setattr(chunkls.index.bulk, "REUSE_STEP", 3)
    index = Session(cache, workers=1)
    folder = index.add_root(tree)
    steps = index.iter_index_folder(folder)
    for _ in range(4):  # well into linking the cached files
        next(steps)
    saved, deleted = tree / "pkg" / "m11.py", tree / "notes11.md"
    saved.write_text("def saved_meanwhile():\n    return 1\n")
    deleted.unlink()
    index.refresh(folder, ["pkg/m11.py", "notes11.md"])
    for _ in steps:
        pass
    assert index.queries.lookup("pkg/m11.py#function-saved_meanwhile")
    assert not index.queries.lookup("pkg/m11.py#function-alpha_11")
    assert _state(index) == _state(build_index([tree], workers=1))
    index.close()
    again = build_index([tree], cache_dir=cache, workers=1)
    assert _state(again) == _state(build_index([tree], workers=1))


def _holding_texts(index: Session) -> list[str]:
    return [rel for f in index.queries.folders for rel, stored in f.files.items() if stored.texts]


def test_texts_once_cached_are_read_back_from_the_cache(tree: Path, cache: Path) -> None:
    index = Session(cache, workers=1)
    folder = index.add_root(tree)
    index.index_folder(folder)
    assert _holding_texts(index) == []  # written to the cache, so not held twice
    (tree / "pkg" / "m2.py").write_text("def saved_edit():\n    return 'helper value'\n")
    index.refresh(folder, ["pkg/m2.py"])
    assert _holding_texts(index) == []
    assert [c.text for c in index.queries.file_chunks(folder, "pkg/m2.py")] == [
        "def saved_edit():\n    return 'helper value'"
    ]
    uncached = build_index([tree], workers=1)
    assert len(_holding_texts(uncached)) == 24  # no cache: kept in memory (not broken.py)
    assert _state(index) == _state(uncached)
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert _holding_texts(warm) == []
    assert _state(warm) == _state(uncached)


def _lose_texts(tree: Path, cache: Path, how: str) -> None:
    """Another hand takes the chunk texts out of a folder's cache."""
    other = sqlite3.connect(store_path(tree.resolve(), cache))
    if how == "deleted":  # e.g. the user cleared the cache directory
        other.execute("DELETE FROM files")
    else:  # another chunkls process wrote newer rows
        other.execute("UPDATE files SET generation = generation + 1000000")
    other.commit()
    other.close()


@contextlib.contextmanager
def _no_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within: reading a file, chunking or writing the cache raises."""

    def refuse(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("a lookup read a file, chunked or wrote the cache")

    with monkeypatch.context() as patch:
        for module in (chunkls.index.refresh, chunkls.index.workers):
            patch.setattr(module, "chunk_one", refuse)
        for module in (chunkls.index.bulk, chunkls.index.workers):
            patch.setattr(module, "chunk_many", refuse)
        for module in (chunkls.index.refresh, chunkls.chunking.corpus):
            patch.setattr(module, "read_regular", refuse)
        for method in ("put", "delete", "touch", "flush", "save_snapshot"):
            patch.setattr(chunkls.storage.cache.FolderCache, method, refuse)
        patch.setattr(builtins, "open", refuse)
        patch.setattr(os, "open", refuse)
        yield


@pytest.mark.parametrize("how", ["deleted", "rewritten"])
def test_texts_gone_from_the_cache_are_recovered_explicitly(
    tree: Path,
    cache: Path,
    how: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lookup of a file whose texts the cache lost answers nothing and records
    it (logged once); the session's write step reads exactly those files again."""
    index = build_index([tree], cache_dir=cache, workers=1)
    folder = index.queries.folders[0]
    fresh = _state(build_index([tree], workers=1))
    _lose_texts(tree, cache, how)
    told: list[str] = []  # (the session's freshness rule reads what the reads recorded)
    index.on_stale = lambda: told.extend(rel for _, rel in index.store.texts_missing)
    with caplog.at_level(logging.INFO, logger="chunkls"), _no_disk(monkeypatch):
        assert index.queries.lookup("pkg/m3.py#function-alpha_3") == []
        assert index.queries.has_id("pkg/m3.py#function-alpha_3")  # the ID is still known
        lost = _state(index)
    index.settle()
    assert lost[0] == [] and lost[2] == [[] for _ in QUERIES]
    assert len([r for r in caplog.records if "no longer in the index cache" in r.message]) == 1
    with_chunks = sorted(rel for rel, stored in folder.files.items() if stored.stubs)
    assert sorted(told) == with_chunks  # each told once
    assert sorted(rel for _, rel in index.store.texts_missing) == with_chunks
    recovered = index.catch_up()
    assert sorted(rel for _, rel in recovered) == with_chunks
    assert not index.store.texts_missing
    assert index.queries.lookup("pkg/m3.py#function-alpha_3")[0].chunk.text.startswith(
        "def alpha_3"
    )
    assert _state(index) == fresh
    assert _holding_texts(index) == []  # cached again (one commit for the batch)
    assert index.catch_up() == []  # nothing more to recover
    index.close()
    assert _state(build_index([tree], cache_dir=cache, workers=1)) == fresh


def test_no_lookup_reads_chunks_or_writes_when_texts_are_gone(
    tree: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every read of the query API stays a read when texts are missing: the
    cache file is untouched and nothing is chunked (see ``_no_disk``)."""
    index = build_index([tree], cache_dir=cache, workers=1)
    folder = index.queries.folders[0]
    _lose_texts(tree, cache, "rewritten")
    path = store_path(tree.resolve(), cache)
    before = path.read_bytes()
    with _no_disk(monkeypatch):
        assert index.queries.lookup("pkg/m3.py#function-alpha_3", prefer=folder) == []
        assert (
            index.queries.resolve_first(["pkg/nope.py#function-x", "pkg/m3.py#function-alpha_3"])
            == []
        )
        assert index.queries.file_chunks(folder, "pkg/m3.py") == ()
        assert index.queries.chunks_of_source("pkg/m3.py") == []
        assert list(index.queries.chunks()) == []
        assert index.queries.search("alpha", 10) == []
        assert index.queries.suggest("pkg/m3.py#function-alpha_33")
        assert index.queries.source_paths_starting("pkg/m1") == [
            "pkg/m1.py",
            "pkg/m10.py",
            "pkg/m11.py",
        ]
        assert index.queries.has_id("pkg/m3.py#function-alpha_3")
        assert index.queries.file_count() == 24
        assert [rel for _, rel, _ in index.queries.skipped()] == ["broken.py"]
    assert path.read_bytes() == before
    assert index.store.texts_missing  # recorded, for the front door to recover


@pytest.mark.parametrize("how", ["deleted", "rewritten"])
def test_the_cli_recovers_texts_the_cache_lost_before_it_answers(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Texts gone from the cache between indexing and answering: every command
    answers as if they had not gone (the CLI recovers them and asks again)."""
    import io

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tree / "cites.md").write_text("`pkg/m3.py#function-alpha_3`, `pkg/m3.py#function-alpah_3`\n")
    root = str(tree)
    commands = [
        ["search", "alpha helper value", "--root", root, "--top-k", "8"],
        ["chunks", root],
        ["resolve", "pkg/m3.py#function-alpha_3", "--root", root],
        ["check", "--root", root],
    ]

    def run(argv: list[str]) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        return main(argv, out, err), out.getvalue()

    expected = [run(argv) for argv in commands]
    assert "def alpha_3" in expected[2][1] and "function-alpah_3" in expected[3][1]
    real = Session.index_folder

    def losing(self: Session, *args: object, **kwargs: object) -> float:
        seconds = real(self, *args, **kwargs)  # type: ignore[arg-type]
        _lose_texts(tree, tmp_path / "xdg" / "chunkls", how)
        return seconds

    lost: list[int] = []
    monkeypatch.setattr(Session, "index_folder", losing)
    # each command indexes (not read in place), then finds the texts gone
    monkeypatch.setattr(Session, "read_in_place_if_current", lambda self: None)
    real_catch_up = Session.catch_up

    def counting(self: Session, *args: object, **kwargs: object) -> object:
        lost.append(len(self.store.texts_missing))
        return real_catch_up(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Session, "catch_up", counting)
    assert [run(argv) for argv in commands] == expected
    assert any(lost), lost  # the write step found texts missing, and read them again


def test_a_rows_texts_are_read_back_before_and_after_it_is_written(tmp_path: Path) -> None:
    """``texts`` answers from the row waiting to be written, then from the table
    (the texts are the last column: start-ups read every other one)."""
    from chunkls.chunking.ingest import FileChunks
    from chunkls.chunking.located_chunk import LocatedChunk
    from chunkls.storage.cache import FolderCache
    from chunkls.storage.packed import pack

    chunk = LocatedChunk("a.py#function-f", "def f():\n    pass", "a.py", "code", "f", 1, 2)
    stored = pack(FileChunks("a.py", (chunk,), 123, 17))
    assert stored.texts is not None
    cache = FolderCache(tmp_path / "c" / "index.sqlite3", tmp_path)
    generation = cache.put("a.py", stored, b"d" * 16)
    assert cache.texts("a.py", generation) == stored.texts  # pending
    assert cache.texts("a.py", generation + 1) is None
    assert cache.flush() == {"a.py": generation}
    assert cache.texts("a.py", generation) == stored.texts  # from the table
    assert cache.texts("a.py", generation + 1) is None
    row = cache.load().rows["a.py"]
    assert (row.mtime_ns, row.size, row.digest, row.generation) == (123, 17, b"d" * 16, generation)
    cache.close()


@pytest.mark.parametrize("repeats", [3, 70_000])
def test_term_frequencies_are_saved_narrow_when_they_fit(
    tree: Path, cache: Path, parsed: list[str], repeats: int
) -> None:
    """The snapshot keeps term frequencies in 16 bits unless one does not fit;
    either way a warm start searches exactly as a cold one."""
    (tree / "many.md").write_text("# Many\n\n" + "helper " * repeats + "\n")
    cold = build_index([tree], cache_dir=cache, workers=1)
    from chunkls.storage.mapped import Mapped

    db = sqlite3.connect(store_path(tree.resolve(), cache))
    (token,) = db.execute("SELECT mapped FROM snapshot").fetchone()
    db.close()
    arrays = Mapped(store_path(tree.resolve(), cache).parent, token).arrays
    assert arrays["tfs"].nbytes * (2 if repeats < 0x10000 else 1) == arrays["docs"].nbytes
    parsed.clear()
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert parsed == []
    assert _state(warm) == _state(cold) == _state(build_index([tree], workers=1))
    assert warm.queries.search("helper", 1, "bm25")[0].item.chunk.chunk_id == "many.md#heading-many"


def test_names_that_are_not_utf8_are_cached(tmp_path: Path, cache: Path, parsed: list[str]) -> None:
    # os.fsdecode keeps such bytes as lone surrogates, which SQLite text cannot hold
    root = tmp_path / "ws"
    root.mkdir()
    (root / os.fsdecode(b"bad\xff.py")).write_text("def f():\n    pass\n")
    (root / os.fsdecode(b"d\xe9")).mkdir()
    (root / os.fsdecode(b"d\xe9") / "a.md").write_text("# T\n\nhi\n")
    (root / os.fsdecode(b"gone\xfe.py")).write_text("raise\n")
    (root / os.fsdecode(b"\xfabroken.py")).write_text("def broken(:\n")  # a skip row
    cold = build_index([root], cache_dir=cache, workers=1)
    assert cold.queries.lookup(os.fsdecode(b"bad\xff.py") + "#function-f")
    (root / os.fsdecode(b"gone\xfe.py")).unlink()
    _bump(root / os.fsdecode(b"bad\xff.py"))  # touched: its row is confirmed by hash
    parsed.clear()
    warm = build_index([root], cache_dir=cache, workers=1)
    assert parsed == []
    assert _state(warm) == _state(build_index([root], workers=1))
    assert [entry[1:] for entry in warm.queries.skipped()] == [
        (os.fsdecode(b"\xfabroken.py"), "SyntaxError line 1: invalid syntax")
    ]
    # texts read back from the cache's row
    assert [
        entry.chunk.text for entry in warm.queries.lookup(os.fsdecode(b"d\xe9") + "/a.md#heading-t")
    ] == ["# T\n\nhi"]


def test_a_file_rewritten_with_its_old_mtime_put_back_is_read_again(
    tree: Path, cache: Path, parsed: list[str]
) -> None:
    # cp -p, tar x, rsync -t and touch -d all restore an mtime; none can restore
    # the inode's change time
    old = 1_577_836_800_000_000_000  # 2020-01-01
    for path in tree.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(old, old))
    build_index([tree], cache_dir=cache, workers=1)
    target = tree / "pkg" / "m2.py"
    text = target.read_text()
    target.write_text(text.replace("alpha_2", "omega_2"))  # the same size
    os.utime(target, ns=(old, old))
    parsed.clear()
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert parsed == ["pkg/m2.py"]
    assert warm.queries.lookup("pkg/m2.py#function-omega_2")
    assert _state(warm) == _state(build_index([tree], workers=1))


def test_a_symlink_replaced_by_a_copy_of_its_target_gets_its_own_chunks(
    tree: Path, cache: Path
) -> None:
    # a symlink's chunks carry its target's source_path: its result is not cached,
    # so a regular file of the same content in its place is never taken for it
    (tree / "link.py").symlink_to("pkg/m1.py")
    linked = build_index([tree], cache_dir=cache, workers=1)
    assert linked.queries.lookup("pkg/m1.py#function-alpha_1")
    assert not linked.queries.lookup("link.py#function-alpha_1")
    (tree / "link.py").unlink()
    (tree / "link.py").write_bytes((tree / "pkg" / "m1.py").read_bytes())
    warm = build_index([tree], cache_dir=cache, workers=1)
    assert warm.queries.lookup("link.py#function-alpha_1")
    assert _state(warm) == _state(build_index([tree], workers=1))


NOW = 100 * 10**9
ROW = chunkls.storage.cache.Row(
    mtime_ns=NOW - 50 * 10**9,
    size=10,
    digest=b"d",
    skipped=None,
    stubs=b"",
    generation=1,
    checked_ns=NOW,
)


@pytest.mark.parametrize(
    ("row", "mtime_ns", "size", "ctime_ns", "expected"),
    [
        (ROW, ROW.mtime_ns, 10, ROW.mtime_ns, True),  # untouched since
        (ROW, ROW.mtime_ns, 11, ROW.mtime_ns, False),  # another size
        (ROW, ROW.mtime_ns + 1, 10, ROW.mtime_ns + 1, None),  # another mtime: hash
        (ROW, ROW.mtime_ns, 10, NOW + 1, None),  # changed since, mtime put back: hash
        (ROW, ROW.mtime_ns, 10, NOW - 10**9, None),  # changed just before the row: hash
        (ROW._replace(mtime_ns=NOW - 10**9), NOW - 10**9, 10, NOW - 10**9, None),  # racy
        (ROW._replace(digest=None), ROW.mtime_ns, 10, NOW + 1, False),  # no hash: re-read
        (ROW._replace(digest=None), ROW.mtime_ns, 10, ROW.mtime_ns, True),
    ],
)
def test_which_rows_stat_can_settle(
    row: chunkls.storage.cache.Row, mtime_ns: int, size: int, ctime_ns: int, expected: bool | None
) -> None:
    assert chunkls.storage.cache.FolderCache.unchanged(row, mtime_ns, size, ctime_ns) is expected
