"""Faults: a broken or locked cache, writes that fail, a worker killed mid-index,
files that vanish between listing and reading. The server (or the index) says
so once, recovers, and its index equals a fresh one."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chunkls.chunking.corpus import CorpusFile
from chunkls.index.session import Session, build_index
from tests.hardening.rpc import RawServer
from tests.hardening.test_load import _make_tree

FAULTS: dict[str, int] = {}


def _fresh(root: Path) -> list[tuple[str, int, int]]:
    return [
        (e.chunk.chunk_id, e.chunk.start_line, e.chunk.end_line)
        for e in build_index([root], workers=1).queries.chunks()
    ]


def _served(server: RawServer) -> list[tuple[str, int, int]]:
    return [(c["chunkId"], c["startLine"], c["endLine"]) for c in server.command("chunkls.chunks")]


def _session(start: Callable[..., RawServer], root: Path, **kwargs: object) -> RawServer:
    server = start(**kwargs)
    server.initialize([root])
    server.wait_indexed(timeout=120)
    return server


def _cache_file(cache: Path) -> Path:
    found = sorted(cache.glob("chunkls/*/index.sqlite3"))
    assert found, list(cache.rglob("*"))
    return found[0]


def _corrupt(path: Path, how: str) -> None:
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    if how == "deleted":
        path.unlink()
    elif how == "truncated":
        with open(path, "r+b") as handle:
            handle.truncate(os.path.getsize(path) // 3)
    elif how == "garbage":
        path.write_bytes(os.urandom(8192))
    elif how == "garbage-after-header":
        data = bytearray(path.read_bytes())
        data[100:] = os.urandom(len(data) - 100)
        path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["deleted", "truncated", "garbage", "garbage-after-header"])
def test_broken_cache_is_rebuilt(
    tmp_path: Path, isolated_cache: Path, start_server: Callable[..., RawServer], how: str
) -> None:
    root = tmp_path / "ws"
    _make_tree(root, 120)
    expected = _fresh(root)
    first = _session(start_server, root)
    assert _served(first) == expected
    assert first.shutdown() == 0
    _corrupt(_cache_file(isolated_cache), how)
    FAULTS[f"cache {how}"] = FAULTS.get(f"cache {how}", 0) + 1
    second = _session(start_server, root)
    assert _served(second) == expected
    (root / "pkg0" / "new.py").write_text("def new():\n    pass\n", "utf-8")
    second.notify(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": (root / "pkg0" / "new.py").as_uri(), "type": 1}]},
    )
    deadline = time.monotonic() + 10
    while _served(second) != _fresh(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _served(second) == _fresh(root)
    assert second.shutdown() == 0
    log = second.log_text()
    assert log.count("index cache") <= 1, log
    # and the next start is warm again, and still right
    third = _session(start_server, root)
    assert _served(third) == _fresh(root)
    assert third.shutdown() == 0


def test_locked_cache_is_bypassed(
    tmp_path: Path, isolated_cache: Path, start_server: Callable[..., RawServer]
) -> None:
    root = tmp_path / "ws"
    _make_tree(root, 120)
    expected = _fresh(root)
    first = _session(start_server, root)
    assert first.shutdown() == 0
    path = _cache_file(isolated_cache)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA locking_mode=EXCLUSIVE")
    other.execute("BEGIN EXCLUSIVE")  # another process holds it
    FAULTS["cache locked"] = 1
    try:
        second = _session(start_server, root)
        assert _served(second) == expected
        assert second.shutdown() == 0
        assert second.log_text().count("index cache") <= 1
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_cache_writes_that_fail(
    tmp_path: Path, isolated_cache: Path, start_server: Callable[..., RawServer]
) -> None:
    """The disk is full: every write to a file past a few kB fails (EFBIG)."""
    root = tmp_path / "ws"
    _make_tree(root, 300)
    expected = _fresh(root)
    import resource

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16_384, 16_384))

    FAULTS["disk full"] = 1
    server = _session(start_server, root, preexec=limit)
    assert _served(server) == expected
    (root / "pkg1" / "late.py").write_text("def late():\n    pass\n", "utf-8")
    server.notify(
        "textDocument/didSave", {"textDocument": {"uri": (root / "pkg1/late.py").as_uri()}}
    )
    server.notify(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": (root / "pkg1" / "late.py").as_uri(), "type": 1}]},
    )
    deadline = time.monotonic() + 10
    while _served(server) != _fresh(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _served(server) == _fresh(root)
    assert server.shutdown() == 0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_worker_killed_mid_index(
    tmp_path: Path, isolated_cache: Path, start_server: Callable[..., RawServer]
) -> None:
    root = tmp_path / "ws"
    _make_tree(root, 4_000)
    expected = _fresh(root)
    server = start_server()
    server.initialize([root])
    killed = 0
    seen: float | None = None
    deadline = time.monotonic() + 60
    while not killed and time.monotonic() < deadline:
        # the pool's workers: children of the forkserver (or of the server when
        # forked), never the resource tracker or the forkserver itself
        for pid in _children(server.proc.pid):
            command = _cmdline(pid)
            workers = _children(pid) if "forkserver" in command else [pid]
            if "resource_tracker" in command:
                continue
            if workers and seen is None:
                seen = time.monotonic()  # let them get to work first
            if seen is None or time.monotonic() - seen < 0.3:
                continue
            for worker in workers:
                try:
                    os.kill(worker, signal.SIGKILL)
                    killed += 1
                    break
                except ProcessLookupError:
                    continue
            if killed:
                break
        time.sleep(0.002)
    assert killed, "no worker process seen while indexing"
    FAULTS["indexing when killed"] = int(server.command("chunkls.stats")["indexing"])
    FAULTS["worker killed"] = killed
    stats = server.wait_indexed(timeout=120)
    assert not stats["indexing"]
    assert _served(server) == expected, server.stderr_tail()
    assert server.shutdown() == 0


def test_files_vanish_between_listing_and_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk lists files that are gone, or became folders, when read."""
    import chunkls.index.bulk as index_module

    root = tmp_path / "ws"
    _make_tree(root, 100)
    (root / "became_dir.py").mkdir()
    expected = _fresh(root)
    real_walk = index_module.walk_corpus

    def walk(*args: object, **kwargs: object) -> object:
        result = real_walk(*args, **kwargs)  # type: ignore[arg-type]
        extra = [
            CorpusFile("gone.py", os.fspath(root / "gone.py"), False),
            CorpusFile("became_dir.py", os.fspath(root / "became_dir.py"), False),
            CorpusFile("pkg0/gone.md", os.fspath(root / "pkg0" / "gone.md"), False),
        ]
        result.files.extend(extra)
        return result

    monkeypatch.setattr(index_module, "walk_corpus", walk)
    for workers in (1, 2):
        index = Session(workers=workers)
        index.index_folder(index.add_root(root))
        got = [
            (e.chunk.chunk_id, e.chunk.start_line, e.chunk.end_line) for e in index.queries.chunks()
        ]
        assert got == expected
        skipped = dict(((rel, reason) for _, rel, reason in index.queries.skipped()))
        assert set(skipped) >= {"gone.py", "became_dir.py", "pkg0/gone.md"}
        FAULTS["vanished files"] = FAULTS.get("vanished files", 0) + 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_reported_by_an_event_is_never_waited_on(
    tmp_path: Path, start_server: Callable[..., RawServer]
) -> None:
    """A FIFO with a corpus or citation suffix, created while the server runs and
    reported by the editor, is skipped (reported) without being opened for a read
    that would wait for a writer forever."""
    root = tmp_path / "ws"
    _make_tree(root, 3)
    server = _session(start_server, root)
    names = ["p.py", "p.md", "p.txt"]
    for name in names:
        os.mkfifo(root / name)
    changes = [{"uri": (root / name).as_uri(), "type": 1} for name in names]
    server.notify("workspace/didChangeWatchedFiles", {"changes": changes})
    server.notify("textDocument/didSave", {"textDocument": {"uri": (root / "p.py").as_uri()}})
    wanted = {os.fspath(root / "p.py"), os.fspath(root / "p.md")}
    deadline = time.monotonic() + 20
    while True:  # the server answers at once; the events' batch may come later
        skipped = dict(
            (entry["path"], entry["reason"])
            for entry in server.command("chunkls.stats", timeout=10)["skipped"]
        )
        if wanted <= set(skipped) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert all("not a regular file" in skipped.get(path, "") for path in wanted), skipped
    assert _served(server) == _fresh_without(root, names)
    assert server.shutdown() == 0
    FAULTS["FIFOs reported by events"] = len(names)


def _fresh_without(root: Path, names: list[str]) -> list[tuple[str, int, int]]:
    for name in names:
        (root / name).unlink()
    return _fresh(root)


def test_one_bad_path_in_a_batch_of_disk_changes_spoils_nothing(
    tmp_path: Path, start_server: Callable[..., RawServer]
) -> None:
    """A name too long for the file system (ENAMETOOLONG) and a URI with a NUL in
    the same batch as a real change: the real change is applied (chunks and
    citations), the others are ignored."""
    root = tmp_path / "ws"
    _make_tree(root, 3)
    (root / "m.py").write_text("def aa():\n    pass\n")
    (root / "notes.md").write_text("cites nothing\n")
    server = _session(start_server, root)
    (root / "notes.md").write_text("cites m.py#function-aa\n")
    (root / "m.py").write_text("def aa():\n    pass\n\n\ndef bb():\n    pass\n")
    changes = [
        {"uri": (root / ("x" * 300 + ".md")).as_uri(), "type": 1},
        {"uri": root.as_uri() + "/a%00.md", "type": 1},
        {"uri": (root / ("y" * 300)).as_uri() + "/z.py", "type": 2},
        {"uri": (root / "notes.md").as_uri(), "type": 2},
        {"uri": (root / "m.py").as_uri(), "type": 2},
    ]
    server.notify("workspace/didChangeWatchedFiles", {"changes": changes})
    params = {
        "textDocument": {"uri": (root / "m.py").as_uri()},
        "position": {"line": 0, "character": 5},
        "context": {"includeDeclaration": False},
    }
    deadline = time.monotonic() + 20
    while True:  # the batch is applied after a short wait
        cited = server.call("textDocument/references", params)
        if cited or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert [(c["uri"], c["range"]["start"]["line"]) for c in cited] == [
        ((root / "notes.md").as_uri(), 0)
    ]
    assert "m.py#function-bb" in [c["chunkId"] for c in server.command("chunkls.chunks")]
    assert server.shutdown() == 0


def test_report_faults() -> None:
    print(f"\nfaults injected: {FAULTS}")
