"""Chunking many files at once in worker processes.

``chunk_one`` is the whole per-file job (read, chunk, count terms, hash): the
serial path and the workers run exactly that function, so their results are
equal. ``chunk_many`` hands files to a pool, largest first and in batches, and
yields each file's result as soon as its batch is done (in no particular
order), so the caller can stream them into the index and report progress.
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
import threading
from collections.abc import Iterator, Sequence
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import NamedTuple

from chunkls.chunking import CorpusFile, CorpusRules, FileChunks, FileSkipped
from chunkls.chunking.ingest import read_and_chunk
from chunkls.search import FileTerms, file_terms

SERIAL_BELOW = 64
"""Fewer files than this are chunked in this process (workers cost a start-up)."""
WAIT = 0.004
"""Longest wait for a worker's batch before ``None`` is yielded (stay responsive)."""


class Chunked(NamedTuple):
    """One corpus file's result: its chunks and their term counts, or why not."""

    rel_path: str
    chunks: FileChunks | None
    terms: FileTerms | None
    skipped: str | None
    digest: bytes | None
    """A content hash of the bytes that were chunked (``None`` when skipped)."""
    stat: tuple[int, int] | None = None
    """A skipped file's (mtime_ns, size), when it could be read."""


def content_digest(data: bytes) -> bytes:
    """The content hash the cache compares files by."""
    return hashlib.blake2b(data, digest_size=16).digest()


def chunk_one(root_resolved: Path, file: CorpusFile, rules: CorpusRules) -> Chunked:
    """Read and chunk one corpus file, as ``chunk_corpus_file`` does, and count
    its terms for search."""
    try:
        entry, data = read_and_chunk(root_resolved, file, rules)
    except FileSkipped as error:
        try:
            info = os.stat(file.path)
        except OSError:
            return Chunked(file.rel_path, None, None, error.reason, None)
        return Chunked(
            file.rel_path, None, None, error.reason, None, (info.st_mtime_ns, info.st_size)
        )
    terms = file_terms(f"{chunk.chunk_id}\n{chunk.text}" for chunk in entry.chunks)
    return Chunked(file.rel_path, entry, terms, None, content_digest(data))


def default_workers() -> int:
    """Worker processes by default: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _context() -> BaseContext | None:
    methods = multiprocessing.get_all_start_methods()
    # fork is fastest, but forking a process that runs other threads (a language
    # server) can copy a lock held mid-operation; forkserver starts clean.
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        return multiprocessing.get_context("forkserver")
    if "spawn" in methods:
        return multiprocessing.get_context("spawn")
    return None


_job: tuple[Path, CorpusRules] | None = None


def _init_worker(root_resolved: Path, rules: CorpusRules) -> None:
    global _job
    _job = (root_resolved, rules)
    # Workers only allocate acyclic data (ASTs, strings, tuples): the cyclic
    # collector would spend most of the run walking it for nothing.
    gc.disable()
    gc.freeze()


def _run_batch(batch: list[CorpusFile]) -> list[Chunked]:
    assert _job is not None
    root_resolved, rules = _job
    return [chunk_one(root_resolved, file, rules) for file in batch]


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
    as it arrives, and ``None`` whenever it has waited ``WAIT`` seconds for one
    (so an event loop can run in between)."""
    workers = default_workers() if workers is None else max(1, workers)
    context = _context() if workers > 1 and len(files) >= SERIAL_BELOW else None
    if context is None:
        for file in files:
            yield chunk_one(root_resolved, file, rules)
        return
    batches = _batches(files, workers)
    with context.Pool(
        min(workers, len(batches)), initializer=_init_worker, initargs=(root_resolved, rules)
    ) as pool:
        results = pool.imap_unordered(_run_batch, batches)
        remaining = len(batches)
        while remaining:
            try:
                batch = results.next(timeout=WAIT)
            except multiprocessing.TimeoutError:
                yield None
                continue
            remaining -= 1
            yield from batch
