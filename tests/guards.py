"""Hooks that make a read that writes fail: while a question of the query API
(``chunkls.index.queries.Queries``, asked of its one implementation) runs, or
a generator it returned is being read, any write to the cache, any opened,
removed or renamed file (a source file read), any SQLite connection that
may write, and any write step taken or scheduled (the session's, a task or
callback on the event loop) raises ``ReadWrote``.

``install()`` patches this process; ``python tests/guards.py ARGS`` runs
``chunkls ARGS`` guarded (a server started for a test), and prints how many
questions it answered, and any ``ReadWrote``, to stderr when it ends.
"""

from __future__ import annotations

import asyncio.base_events
import atexit
import builtins
import contextlib
import functools
import io
import os
import sqlite3
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from chunkls.index.queries import Queries
from chunkls.index.session import Session
from chunkls.index.store import ChunkStore
from chunkls.storage import cache, mapped

COUNTED = "guarded questions answered:"
"""How ``main`` reports its count on stderr."""
FAILED = "ReadWrote:"
"""How ``main`` reports a read that wrote on stderr."""


class ReadWrote(AssertionError):
    """A question of the query API wrote the cache or opened a file."""


_inside = threading.local()
asked = {"questions": 0, "refused": 0}
"""Questions answered under the guards, and writes or opens refused."""

QUESTIONS = sorted(
    name
    for name in {*vars(Queries), "__len__"}
    if callable(getattr(ChunkStore, name, None)) and (not name.startswith("_") or name == "__len__")
)
"""The query API's methods (each wrapped)."""

WRITES: list[tuple[Any, str]] = [
    (cache.FolderCache, name)
    for name in ("put", "delete", "touch", "flush", "save_snapshot", "save_listing", "_connect")
] + [(mapped.MappedWriter, "__init__")]
"""What writes the cache (``_connect`` may create or empty its tables)."""
SCHEDULES: list[tuple[Any, str]] = [
    (Session, name) for name in ("catch_up", "refresh", "index_folder", "open_histories")
] + [
    (asyncio.base_events.BaseEventLoop, name)
    for name in ("create_task", "call_soon", "call_later", "call_soon_threadsafe")
]
"""What takes the write step, or schedules work for later (a read must not)."""
OPENS: list[tuple[Any, str]] = [(builtins, "open"), (io, "open"), (os, "open")] + [
    (os, name) for name in ("remove", "unlink", "replace", "rename")
]
"""What opens a file (a source file read, a file written) or changes one."""


@contextlib.contextmanager
def _asking() -> Iterator[None]:
    """Inside a question (counted when the outermost one ends)."""
    _inside.depth = getattr(_inside, "depth", 0) + 1
    try:
        yield
    finally:
        _inside.depth -= 1
        if not _inside.depth:
            asked["questions"] += 1


def _read_lazily(answers: types.GeneratorType[Any, None, None]) -> Iterator[Any]:
    """A question's generator, each step of it inside the question."""
    while True:
        with _asking():
            try:
                answer = next(answers)
            except StopIteration:
                return
        yield answer


def _question(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def asking(*args: Any, **kwargs: Any) -> Any:
        with _asking():
            answer = method(*args, **kwargs)
        return _read_lazily(answer) if isinstance(answer, types.GeneratorType) else answer

    return asking


def _connect(original: Callable[..., Any]) -> Callable[..., Any]:
    """``sqlite3.connect``, refused inside a question unless read-only (``mode=ro``)."""

    @functools.wraps(original)
    def connecting(database: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(_inside, "depth", 0) and "mode=ro" not in str(database):
            asked["refused"] += 1
            raise ReadWrote("sqlite3.connect (not read-only) inside a question of the query API")
        return original(database, *args, **kwargs)

    return connecting


def _refused(what: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def refusing(*args: Any, **kwargs: Any) -> Any:
        if getattr(_inside, "depth", 0):
            asked["refused"] += 1
            raise ReadWrote(f"{what} inside a question of the query API")
        return original(*args, **kwargs)

    return refusing


def install(patch: Callable[[Any, str, Any], None] = setattr) -> None:
    """Wrap the questions and refuse writes and opens inside them (``patch``:
    ``monkeypatch.setattr`` in a test, to undo it afterwards)."""
    for name in QUESTIONS:
        patch(ChunkStore, name, _question(getattr(ChunkStore, name)))
    for owner, name in [*WRITES, *OPENS, *SCHEDULES]:
        label = f"{getattr(owner, '__name__', owner)}.{name}"
        patch(owner, name, _refused(label, getattr(owner, name)))
    patch(sqlite3, "connect", _connect(sqlite3.connect))


def main() -> None:
    """``chunkls`` with the guards installed; the count reported at exit."""
    install()

    def report() -> None:
        sys.stderr.write(f"\n{COUNTED} {asked['questions']}; refused: {asked['refused']}\n")
        sys.stderr.flush()

    atexit.register(report)
    from chunkls.cli import main as cli

    sys.argv[0] = "chunkls"
    code = cli()
    report()
    atexit.unregister(report)
    with contextlib.suppress(OSError, ValueError):  # (a server closes its stdout)
        sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
