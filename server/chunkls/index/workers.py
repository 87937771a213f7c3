"""Chunking many files at once in worker processes.

``chunk_one`` is the whole per-file job: the serial path and the workers run
exactly it, so their results are equal. ``chunk_many`` hands files to a pool in
batches, largest first; a batch a worker fails or dies on is chunked in this
process, so every file gets exactly one result.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import multiprocessing
import os
import queue
import signal
import sys
import threading
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from chunkls.chunking.corpus import CorpusFile, CorpusRules, FileSkipped
from chunkls.chunking.ingest import read_and_chunk
from chunkls.runtime.gc_budget import die_now, worker_without_gc
from chunkls.runtime.memory import keep_freed_memory
from chunkls.search.definitions import chunk_terms
from chunkls.search.tokens import FileTerms
from chunkls.storage.packed import StoredFile, pack

if TYPE_CHECKING:
    _Marks = ctypes.Array[ctypes.c_int64]

logger = logging.getLogger("chunkls")

SERIAL_BELOW = 64
"""Fewer files than this are chunked in this process (workers cost a start-up)."""
NICENESS = 10
"""How much lower workers run than their parent (an editor's requests come first)."""
WAIT = 0.004
"""Longest wait for a worker's batch before ``None`` is yielded (stay responsive)."""


class Chunked(NamedTuple):
    """One corpus file's result: its chunks (packed as the index keeps them) and
    their term counts, or why not."""

    rel_path: str
    chunks: StoredFile | None
    terms: FileTerms | None
    skipped: str | None
    digest: bytes | None
    """A content hash of the bytes that were chunked (``None`` when skipped)."""
    stat: tuple[int, int] | None = None
    """A skipped file's (mtime_ns, size) (``None``: not to be cached)."""
    link: bool = False
    """The entry is a symlink: its result is not cached."""


def content_digest(data: bytes) -> bytes:
    """The content hash the cache compares files by."""
    return hashlib.blake2b(data, digest_size=16).digest()


def chunk_one(
    root_resolved: Path, file: CorpusFile, rules: CorpusRules, skip_ast: bool = False
) -> Chunked:
    """Read and chunk one corpus file (``read_and_chunk``) and count its terms.
    Never raises for a file: an unexpected error skips it with the error as reason."""
    try:
        entry, data = read_and_chunk(root_resolved, file, rules, skip_ast)
        terms = chunk_terms(entry.chunks).packed()
        stored = pack(entry)
    except FileSkipped as error:
        try:
            info = os.stat(file.path)
            stat: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except OSError:
            stat = None
        return Chunked(file.rel_path, None, None, error.reason, None, stat, file.is_symlink)
    except Exception as error:
        logger.warning("chunking %s failed unexpectedly", file.rel_path, exc_info=True)
        lines = str(error).splitlines()
        reason = f"{type(error).__name__}: {lines[0][:200]}" if lines else type(error).__name__
        reason = f"unexpected error while chunking: {reason}"
        return Chunked(file.rel_path, None, None, reason, None, None, file.is_symlink)
    return Chunked(file.rel_path, stored, terms, None, content_digest(data), None, file.is_symlink)


def default_workers() -> int:
    """Worker processes by default: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def process_context() -> BaseContext | None:
    """How to start worker processes here (``None``: they cannot be)."""
    methods = multiprocessing.get_all_start_methods()
    # fork is fastest, but forking a process that runs other threads (a language
    # server) can copy a lock held mid-operation; forkserver starts clean.
    single = threading.active_count() == 1
    for method in ("fork", "forkserver", "spawn"):
        if method in methods and (method != "fork" or single):
            return multiprocessing.get_context(method)
    return None


_job: tuple[Path, CorpusRules, _Marks] | None = None


def detach() -> None:
    """In a helper process: die with the parent (Linux), never write to the
    inherited stdout (a server's protocol channel), and run ``NICENESS`` lower."""
    parent = os.getppid()
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it died before that took effect
            die_now(1)
    with contextlib.suppress(AttributeError, OSError):  # no nice() on Windows
        os.nice(NICENESS)


PR_SET_PDEATHSIG = 1
"""``prctl`` option (linux/prctl.h): a signal for when the parent dies."""


def _init_worker(root_resolved: Path, rules: CorpusRules, marks: _Marks) -> None:
    global _job
    _job = (root_resolved, rules, marks)
    detach()
    worker_without_gc()
    keep_freed_memory()


def _run_batch(index: int, batch: list[CorpusFile]) -> list[Chunked]:
    assert _job is not None
    root_resolved, rules, marks = _job
    # Where this worker is, in memory the consumer reads if the worker dies.
    marks[2 * index] = os.getpid()
    results: list[Chunked] = []
    for position, file in enumerate(batch):
        marks[2 * index + 1] = position
        results.append(chunk_one(root_resolved, file, rules, skip_ast=True))
    return results


def _batches(files: Sequence[CorpusFile], workers: int) -> list[list[CorpusFile]]:
    """Largest files first (a long parse never starts last), in batches of about
    equal bytes, small enough to balance the workers and stream progress."""
    sized: list[tuple[int, CorpusFile]] = []
    for file in files:
        try:
            size = os.stat(file.path).st_size
        except OSError:
            size = 0
        sized.append((size, file))
    sized.sort(key=lambda pair: -pair[0])
    total = sum(size for size, _ in sized)
    target = max(total // (workers * 32), 1)
    batches: list[list[CorpusFile]] = []
    batch: list[CorpusFile] = []
    held = 0
    for size, file in sized:
        batch.append(file)
        held += size + 2048  # a file's fixed cost, in bytes
        if held >= target or len(batch) >= 64:
            batches.append(batch)
            batch, held = [], 0
    if batch:
        batches.append(batch)
    return batches


def chunk_many(
    root_resolved: Path,
    files: Sequence[CorpusFile],
    rules: CorpusRules,
    workers: int | None = None,
) -> Iterator[Chunked | None]:
    """Chunk files, in worker processes when there are many; yields each result
    as it arrives, and ``None`` after each ``WAIT`` without one. Every file gets
    exactly one result."""
    workers = default_workers() if workers is None else max(1, workers)
    context = process_context() if workers > 1 and len(files) >= SERIAL_BELOW else None
    if context is None:
        for file in files:
            yield chunk_one(root_resolved, file, rules)
        return
    batches = _batches(files, workers)
    unfinished = yield from _in_workers(context, root_resolved, rules, batches, workers)
    for index in unfinished:
        for file in batches[index]:
            yield chunk_one(root_resolved, file, rules)


def _in_workers(
    context: BaseContext,
    root_resolved: Path,
    rules: CorpusRules,
    batches: list[list[CorpusFile]],
    workers: int,
) -> Generator[Chunked | None, None, list[int]]:
    """Yield the batches' results from a pool; return the indexes of the batches
    it could not chunk because the pool broke (a worker died)."""
    unfinished = set(range(len(batches)))
    try:
        # per batch: the pid of the worker that took it, and its position in it
        marks = context.RawArray(ctypes.c_int64, 2 * len(batches))
        executor = ProcessPoolExecutor(
            min(workers, len(batches)),
            mp_context=context,
            initializer=_init_worker,
            initargs=(root_resolved, rules, marks),
        )
    except OSError as error:
        logger.warning("cannot start worker processes (%s): chunking in this process", error)
        return sorted(unfinished)
    done: queue.SimpleQueue[Future[list[Chunked]]] = queue.SimpleQueue()
    waiting: dict[Future[list[Chunked]], int] = {}
    broken: BaseException | None = None
    failed = 0
    completed = False
    try:
        try:
            for index, batch in enumerate(batches):
                future = executor.submit(_run_batch, index, batch)
                waiting[future] = index
                future.add_done_callback(done.put)
        except (BrokenProcessPool, OSError) as error:  # the rest were never submitted
            broken = error
        while waiting:
            try:
                future = done.get(timeout=WAIT)
            except queue.Empty:
                yield None
                continue
            index = waiting.pop(future)
            failure = future.exception()
            if failure is None:
                unfinished.discard(index)
                yield from future.result()
            elif isinstance(failure, BrokenProcessPool):
                broken = failure
                break
            else:
                # not a file's fault (chunk_one catches those): the worker's
                failed += 1
                if failed == 1:
                    logger.warning(
                        "a batch of %d files (%s, ...) failed in a worker process (%s: %s):"
                        " chunking it in this process",
                        len(batches[index]),
                        batches[index][0].rel_path,
                        type(failure).__name__,
                        failure,
                    )
                unfinished.discard(index)
                for file in batches[index]:
                    yield chunk_one(root_resolved, file, rules)
        completed = True
    finally:
        # an abandoned run does not wait for its workers
        executor.shutdown(wait=completed, cancel_futures=True)
    if failed > 1:
        logger.warning("%d batches failed in worker processes", failed)
    if broken is not None and unfinished:
        _log_lost(batches, sorted(unfinished), marks, broken)
    return sorted(unfinished)


def _log_lost(
    batches: list[list[CorpusFile]], unfinished: list[int], marks: _Marks, error: BaseException
) -> None:
    """One warning for a broken pool: the batches in progress and the files left."""
    lost: list[str] = []
    for index in unfinished:
        pid = marks[2 * index]
        if pid:
            batch = batches[index]
            position = marks[2 * index + 1]
            lost.append(
                f"batch {index + 1} of {len(batches)} (pid {pid}, at {batch[position].rel_path},"
                f" file {position + 1} of {len(batch)})"
            )
    files = sum(len(batches[index]) for index in unfinished)
    logger.warning(
        "the worker pool broke: a worker process died (killed? out of memory?) or could"
        " not start (%s: %s); lost with it: %s; chunking the %d files without a result"
        " in this process",
        type(error).__name__,
        error,
        "; ".join(lost) or "no batch in progress",
        files,
    )
