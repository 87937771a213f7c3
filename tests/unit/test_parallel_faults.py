"""Worker faults: a worker that dies or raises loses no file and hangs nothing.

Every test consumes ``chunk_many`` with a deadline checked at each heartbeat, so a
lost batch (the generator yielding ``None`` forever) fails the test instead of
hanging it. The faults are injected by monkeypatching this module's view of
``chunkls.index.workers`` under the fork start method: forked workers inherit the
patch, and each patched function checks the process id so that the consumer's
own in-process work is left alone.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from multiprocessing.context import BaseContext
from pathlib import Path

import pytest

from chunkls.chunking.corpus import CorpusFile, CorpusRules, walk_corpus
from chunkls.chunking.ingest import FileChunks
from chunkls.index import workers as parallel
from chunkls.index.workers import Chunked, chunk_many, chunk_one

DEADLINE = 120.0
"""Seconds a run may take before it counts as hung (normally well under 10)."""

fork_only = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)


def _tree(root: Path, files: int = 120) -> Path:
    for i in range(files):
        folder = root / f"pkg{i % 5}"
        folder.mkdir(exist_ok=True)
        body = "\n\n".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(i % 17 + 1))
        (folder / f"mod{i:03}.py").write_text(f'"""Module {i}."""\n\n{body}')
        (folder / f"notes{i:03}.md").write_text(f"# Notes {i}\n\ntext {i}\n\n## More\n\nmore\n")
    (root / "broken.py").write_text("def broken(:\n")
    return root


def _setup(tmp_path: Path) -> tuple[Path, list[CorpusFile], CorpusRules, dict[str, Chunked]]:
    root = _tree(tmp_path).resolve()
    rules = CorpusRules()
    files = walk_corpus(root, rules).files
    serial = {file.rel_path: chunk_one(root, file, rules) for file in files}
    return root, files, rules, serial


def _consume(results: Iterator[Chunked | None]) -> list[Chunked]:
    """Every result, failing the test when the run outlives ``DEADLINE``."""
    deadline = time.monotonic() + DEADLINE
    got: list[Chunked] = []
    try:
        for result in results:
            if result is not None:
                got.append(result)
            if time.monotonic() > deadline:
                pytest.fail(f"chunk_many hung: {len(got)} results after {DEADLINE} s")
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
    return got


def _assert_each_file_once(got: list[Chunked], serial: dict[str, Chunked]) -> None:
    counts = Counter(result.rel_path for result in got)
    assert [path for path, n in counts.items() if n != 1] == []
    assert {result.rel_path: result for result in got} == serial


def _fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use fork even if the test process runs threads (so workers see the patches)."""
    context: BaseContext = multiprocessing.get_context("fork")
    monkeypatch.setattr(parallel, "process_context", lambda: context)


def _in_worker(parent: int) -> bool:
    return os.getpid() != parent


@fork_only
@pytest.mark.parametrize("victim", ["largest", "middle", "smallest"])
def test_a_worker_killed_mid_batch_loses_no_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    victim: str,
) -> None:
    root, files, rules, serial = _setup(tmp_path)
    by_size = sorted(files, key=lambda f: (os.stat(f.path).st_size, f.rel_path))
    marker = {"largest": by_size[-1], "middle": by_size[len(by_size) // 2], "smallest": by_size[0]}
    doomed = marker[victim].rel_path
    parent = os.getpid()
    real = parallel.read_and_chunk

    def read_and_chunk(
        root_resolved: Path, file: CorpusFile, rules: CorpusRules, skip_ast: bool = False
    ) -> tuple[FileChunks, bytes]:
        if file.rel_path == doomed and _in_worker(parent):
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
        return real(root_resolved, file, rules, skip_ast)

    monkeypatch.setattr(parallel, "read_and_chunk", read_and_chunk)
    _fork(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="chunkls"):
        got = _consume(chunk_many(root, files, rules, 2))
    _assert_each_file_once(got, serial)
    lost = [r for r in caplog.records if "worker process died" in r.getMessage()]
    assert len(lost) == 1, [r.getMessage() for r in caplog.records]
    assert doomed in lost[0].getMessage()  # names the file the worker was on


@fork_only
def test_every_worker_dying_at_start_falls_back_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root, files, rules, serial = _setup(tmp_path)

    def init_worker(*args: object) -> None:
        os._exit(3)

    monkeypatch.setattr(parallel, "_init_worker", init_worker)
    _fork(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="chunkls"):
        got = _consume(chunk_many(root, files, rules, 2))
    _assert_each_file_once(got, serial)
    assert len([r for r in caplog.records if "worker process died" in r.getMessage()]) == 1


def test_a_worker_killed_from_outside_loses_no_file(tmp_path: Path) -> None:
    """With the start method the server would use: kill a worker once results
    flow, from the consumer's loop."""
    root, files, rules, serial = _setup(tmp_path)
    killed: list[int] = []
    got: list[Chunked] = []
    deadline = time.monotonic() + DEADLINE
    results = chunk_many(root, files, rules, 2)
    for result in results:
        if result is not None:
            got.append(result)
            if not killed:
                children = multiprocessing.active_children()
                if children:
                    assert children[0].pid is not None
                    os.kill(children[0].pid, signal.SIGKILL)
                    killed.append(children[0].pid)
        if time.monotonic() > deadline:
            results.close()
            pytest.fail(f"chunk_many hung after a worker was killed: {len(got)} results")
    assert killed
    _assert_each_file_once(got, serial)


@fork_only
def test_an_unexpected_error_in_a_worker_skips_only_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, files, rules, _ = _setup(tmp_path)
    doomed = files[len(files) // 3].rel_path
    real = parallel.read_and_chunk

    def read_and_chunk(
        root_resolved: Path, file: CorpusFile, rules: CorpusRules, skip_ast: bool = False
    ) -> tuple[FileChunks, bytes]:
        if file.rel_path == doomed:
            raise RuntimeError("a bug in the chunker")
        return real(root_resolved, file, rules, skip_ast)

    monkeypatch.setattr(parallel, "read_and_chunk", read_and_chunk)
    serial = {file.rel_path: chunk_one(root, file, rules) for file in files}
    _fork(monkeypatch)
    got = _consume(chunk_many(root, files, rules, 2))
    _assert_each_file_once(got, serial)
    failed = serial[doomed]
    assert failed.chunks is None and failed.skipped is not None
    assert "RuntimeError: a bug in the chunker" in failed.skipped
    assert failed.stat is None  # not cached as skipped: tried again next time
    assert sum(1 for r in got if r.skipped is not None) == 2  # it and broken.py


@fork_only
def test_a_batch_that_fails_in_a_worker_is_chunked_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker-side failure outside ``chunk_one``'s reach (say, a result that
    cannot be sent back) costs that batch a second run, not its files."""
    root, files, rules, serial = _setup(tmp_path)
    doomed = files[len(files) // 2].rel_path
    parent = os.getpid()
    real = parallel.chunk_one

    def chunk_one_(
        root_resolved: Path, file: CorpusFile, rules: CorpusRules, skip_ast: bool = False
    ) -> Chunked:
        if file.rel_path == doomed and _in_worker(parent):
            raise MemoryError("worker only")
        return real(root_resolved, file, rules, skip_ast)

    monkeypatch.setattr(parallel, "chunk_one", chunk_one_)
    _fork(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="chunkls"):
        got = _consume(chunk_many(root, files, rules, 2))
    _assert_each_file_once(got, serial)
    assert any(doomed in r.getMessage() for r in caplog.records)


def test_chunk_one_turns_an_unexpected_error_into_a_skipped_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, files, rules, _ = _setup(tmp_path)

    def read_and_chunk(*args: object) -> tuple[FileChunks, bytes]:
        raise RecursionError("maximum recursion depth exceeded\nsecond line")

    monkeypatch.setattr(parallel, "read_and_chunk", read_and_chunk)
    result = chunk_one(root, files[0], rules)
    assert result == Chunked(
        files[0].rel_path,
        None,
        None,
        "unexpected error while chunking: RecursionError: maximum recursion depth exceeded",
        None,
    )


@fork_only
def test_workers_that_cannot_start_fall_back_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root, files, rules, serial = _setup(tmp_path)

    def fork() -> int:
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    _fork(monkeypatch)
    monkeypatch.setattr(os, "fork", fork)
    with caplog.at_level(logging.WARNING, logger="chunkls"):
        got = _consume(chunk_many(root, files, rules, 2))
    _assert_each_file_once(got, serial)
    assert len([r for r in caplog.records if "worker process died" in r.getMessage()]) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl: Linux only")
def test_a_detached_helper_dies_with_its_parent_and_keeps_off_its_stdout() -> None:
    """A helper process (a worker, the separate indexing process) ends when the
    process that started it is killed, and does not hold its stdout open."""
    script = (
        "import os, sys, time\n"
        "from chunkls.index.workers import detach\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    detach()\n"
        "    print('from the helper')\n"  # goes to /dev/null, not the pipe
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "print(pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=Path(__file__).parents[2]
    )
    assert parent.stdout is not None
    helper = int(parent.stdout.readline())
    time.sleep(0.3)  # the helper has detached
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(helper, 0)
        except ProcessLookupError:
            break
        with contextlib.suppress(ChildProcessError):
            os.waitpid(helper, os.WNOHANG)
        time.sleep(0.02)
    else:
        os.kill(helper, signal.SIGKILL)
        pytest.fail("the helper outlived its parent")
    assert parent.stdout.read() == b""  # EOF: nobody else held the pipe
