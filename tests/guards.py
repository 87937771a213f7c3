"""Hooks that make a read that writes fail: while a question of the query API
(``chunkls.index.queries.Queries``, asked of its one implementation) runs,
any write to the cache and any opened file (a source file read) raises
``ReadWrote``.

``install()`` patches this process; ``python tests/guards.py ARGS`` runs
``chunkls ARGS`` guarded (a server started for a test), and prints how many
questions it answered, and any ``ReadWrote``, to stderr when it ends.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import functools
import io
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from chunkls.index.queries import Queries
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
OPENS: list[tuple[Any, str]] = [(builtins, "open"), (io, "open"), (os, "open")]
"""What opens a file (a source file read, a file written)."""


def _question(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def asking(*args: Any, **kwargs: Any) -> Any:
        _inside.depth = getattr(_inside, "depth", 0) + 1
        try:
            return method(*args, **kwargs)
        finally:
            _inside.depth -= 1
            if not _inside.depth:
                asked["questions"] += 1

    return asking


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
    for owner, name in [*WRITES, *OPENS]:
        label = f"{getattr(owner, '__name__', owner)}.{name}"
        patch(owner, name, _refused(label, getattr(owner, name)))


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
