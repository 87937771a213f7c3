"""The start-up budget's process tricks, in one place (nothing else calls ``gc`` or
``os._exit``): when the cyclic collector runs, and how the CLI exits. Each was measured (2-core
VM, Python 3.11, on against off alternated in one run) and its figure is in its docstring.
Measured and dropped (issue 46): a pause while ``open_current`` reads the stdlib's cache
(2 ms against 6.5 ms, within the MCP start's spread)."""

from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager, suppress

TYPE_CHECKING = False
"""``typing.TYPE_CHECKING`` without importing ``typing``: ``chunkls.cli`` imports
this module, and ``typing`` after argparse costs 2.5 ms (``-X importtime``, best
of 5) of the CLI's 12.6 ms import (``tests/unit/test_startup.py`` keeps it out)."""

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import NoReturn


def pause_gc() -> bool:
    """Switch the cyclic collector off; returns whether it was on (for ``resume_gc``).

    A command's imports and an answer read in place from the cache (tens of
    thousands of rows, no cycle) make no garbage cycles: collections would only
    rescan them. ``chunkls search`` warm on the stdlib, in process, 5 runs each:
    2 ms of collections with the CLI's pause, 41 ms without."""
    was_on = gc.isenabled()
    gc.disable()
    return was_on


def resume_gc(was_on: bool = True) -> None:
    """Switch the cyclic collector back on if it was (``pause_gc``'s answer)."""
    if was_on:
        gc.enable()


@contextmanager
def no_gc_pauses() -> Iterator[None]:
    """The cyclic collector off while inside, as it was on leaving: bulk chunking
    (``ast.parse`` allocates millions of objects, each full collection would walk
    the corpus in memory, and nothing built there forms cycles: ASTs have no
    parent links). A cold index of the stdlib (``--no-cache``, 3 runs each):
    38.9 s of CPU with it, 41.1 s without."""
    was_on = pause_gc()
    try:
        yield
    finally:
        resume_gc(was_on)


def freeze_after_load(collect: bool = True) -> None:
    """Move what is alive now out of the collector's reach for good (``gc.freeze``),
    after a collection unless ``collect`` is false: a loaded index is long-lived
    and acyclic, and later collections would walk it again and again. A server
    with the stdlib loaded from its cache: a full collection takes 58 ms (a
    pause in every request then answering), 0 ms once frozen. The bulk indexer's
    freeze (``collect=False``), cold index of the stdlib, 3 runs each: 38.9 s of
    CPU with it, 41.2 s without."""
    if collect:
        gc.collect()
    gc.freeze()


def worker_without_gc() -> None:
    """An indexing worker process allocates only acyclic data: no collections.
    A cold index of the stdlib, 3 runs each: 38.9 s of CPU (workers included)
    with it, 44.0 s without."""
    gc.disable()
    gc.freeze()


def alone() -> bool:
    """Whether this process runs no other thread and has no child process left."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    processes = sys.modules.get("multiprocessing")
    return processes is None or not processes.active_children()


def exit_now(code: int) -> NoReturn:
    """Exit with ``code`` once the standard streams are flushed, skipping the
    interpreter's teardown (it only frees memory) when nothing else runs in the
    process (``alone``); else the usual exit, which waits for the rest.
    ``chunkls search`` warm on the stdlib, 15 runs each: 0.247 s of CPU, 0.259 s
    with the usual exit (and 0.254 against 0.268 s in a second run)."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a reader gone, or a stream closed
            stream.flush()
    if alone():
        os._exit(code)
    sys.exit(code)


def die_now(code: int) -> NoReturn:
    """End a helper process at once (its parent is gone: nothing of the parent's
    it inherited may run, neither ``atexit`` handlers nor buffered output)."""
    os._exit(code)
