"""A deeply nested module parses in chunkls exactly as deep as in the tutorial.

On CPython 3.11 ``ast.parse`` converts its tree to Python objects under a limit
of ``3 * (sys.getrecursionlimit() - depth)`` levels, ``depth`` being how deep the
Python stack is at the call. The tutorial's ``ingest_path``, run as a script,
parses ``x = a`` followed by 2982 ``.b`` (and not one more); chunkls must agree
wherever it parses: called directly, from deep in the stack, from a thread, in
worker processes, re-parsing an edited region, under any recursion limit.
The reference's limit is measured by running it as a script in a subprocess
(pytest's own stack is far deeper than a script's).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from chunkls.chunking import chunker
from chunkls.chunking.chunker import ChunkingError, chunk_source, parse_python
from chunkls.chunking.corpus import CorpusRules, walk_corpus
from chunkls.chunking.outline import MAX_NESTING, Parsed, outline_of, reparse
from chunkls.index.workers import SERIAL_BELOW, chunk_many

pytestmark = pytest.mark.skipif(
    sys.version_info[:2] != (3, 11),
    reason="the depth-dependent limit of ast.parse is CPython 3.11's",
)

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
REFERENCE_MAX = 2982
"""The longest ``.b`` chain the tutorial parses as a script: 3 * (1000 - 6)."""

T = TypeVar("T")

# Run as a script: its top-level code calls ingest_path, as the tutorial's
# caller would (<module> -> ingest_path -> chunk_file -> chunk_python -> ast.parse).
# "warm": the deep file comes after 8 others, as in any real corpus (ast.parse's
# first seven calls in a process allow 3 levels fewer, see below); prints the
# longest chain that parses. "cold": the deep file alone, in a fresh process.
_REFERENCE_SCRIPT = """\
import shutil
import sys
from pathlib import Path

sys.path.insert(0, sys.argv[1])
from tutorial_ingest import ingest_path

root = Path(sys.argv[2])
mode = sys.argv[3]
shutil.rmtree(root, ignore_errors=True)
root.mkdir()
deep = root / "zz_deep.py"
if mode == "cold":
    n = int(sys.argv[4])
    deep.write_text("x = a" + ".b" * n + "\\n")
    try:
        ingest_path(root)
        print("ok")
    except RecursionError:
        print("RecursionError")
else:
    for i in range(8):
        (root / f"a{i}.py").write_text("x = 1\\n")
    lo, hi = 2000, 4000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        deep.write_text("x = a" + ".b" * mid + "\\n")
        try:
            ingest_path(root)
            lo = mid
        except RecursionError:
            hi = mid - 1
    print(lo)
"""


def _run_reference(tmp: Path, *args: str) -> str:
    script = tmp / "reference_script.py"
    script.write_text(_REFERENCE_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), str(REFERENCE), str(tmp / "tree"), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def reference_max(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The longest chain the tutorial's ingest_path parses, run as a script."""
    return int(_run_reference(tmp_path_factory.mktemp("reference"), "warm"))


def chain(n: int) -> str:
    return "x = a" + ".b" * n + "\n"


def parses(n: int) -> bool:
    try:
        parse_python(chain(n), "deep.py")
    except ChunkingError as error:
        assert error.reason == "RecursionError: nesting too deep for ast.parse"
        return False
    return True


def longest_chain() -> int:
    """The longest chain ``parse_python`` parses here (~15 parses of ~4 ms)."""
    low, high = 0, 2 * REFERENCE_MAX
    while low < high:
        middle = (low + high + 1) // 2
        if parses(middle):
            low = middle
        else:
            high = middle - 1
    return low


def in_frames(extra: int, call: Callable[[], T]) -> T:
    """``call()`` from ``extra`` more Python frames down the stack."""
    return in_frames(extra - 1, call) if extra else call()


def test_the_reference_limit(tmp_path: Path, reference_max: int) -> None:
    assert reference_max == REFERENCE_MAX
    # the tutorial's first parses in a process allow 3 levels less (the call of
    # compile in ast.parse is not yet specialised and counts one more level):
    # a start-up quirk of the interpreter, which chunkls does not reproduce
    cold = [
        _run_reference(tmp_path, "cold", str(n)) for n in (REFERENCE_MAX - 3, REFERENCE_MAX - 2)
    ]
    assert cold == ["ok", "RecursionError"]
    assert MAX_NESTING == REFERENCE_MAX


def test_direct_calls_parse_as_deep_as_the_reference(reference_max: int) -> None:
    assert longest_chain() == reference_max
    # the chain parsed is the module ast.parse gives: one Attribute per ".b"
    tree = parse_python(chain(reference_max))
    [statement] = tree.body
    assert isinstance(statement, ast.Assign)
    node, attributes = statement.value, 0
    while isinstance(node, ast.Attribute):
        node, attributes = node.value, attributes + 1
    assert attributes == reference_max
    assert isinstance(node, ast.Name)


@pytest.mark.parametrize("extra", [100, 600])
def test_deep_in_the_stack_parses_as_deep_as_the_reference(reference_max: int, extra: int) -> None:
    assert in_frames(extra, longest_chain) == reference_max


@pytest.mark.parametrize("limit", [300, 5000])
def test_the_process_recursion_limit_does_not_matter(reference_max: int, limit: int) -> None:
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        assert longest_chain() == reference_max
        assert sys.getrecursionlimit() == limit  # restored after each parse
    finally:
        sys.setrecursionlimit(saved)


def test_threads_parse_as_deep_as_the_reference(reference_max: int) -> None:
    """A fresh thread's stack is shallower than the script's; several threads at
    different depths parse at once (the limit is one for the process)."""
    saved = sys.getrecursionlimit()
    results: dict[int, list[int]] = {}

    def work(extra: int) -> None:
        results[extra] = [in_frames(extra, longest_chain) for _ in range(3)]

    threads = [threading.Thread(target=work, args=(extra,)) for extra in (0, 1, 50, 300)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {extra: [reference_max] * 3 for extra in (0, 1, 50, 300)}
    assert sys.getrecursionlimit() == saved


def test_worker_processes_parse_as_deep_as_the_reference(
    tmp_path: Path, reference_max: int
) -> None:
    for i in range(SERIAL_BELOW + 6):
        (tmp_path / f"f{i}.py").write_text(f"x = {i}\n")
    (tmp_path / "deep_ok.py").write_text(chain(reference_max))
    (tmp_path / "deep_over.py").write_text(chain(reference_max + 1))
    rules = CorpusRules()
    files = walk_corpus(tmp_path, rules).files
    assert len(files) >= SERIAL_BELOW  # the worker path
    results = {
        result.rel_path: result
        for result in chunk_many(tmp_path.resolve(), files, rules, workers=2)
        if result is not None
    }
    assert results["deep_ok.py"].skipped is None
    assert results["deep_ok.py"].chunks is not None
    assert results["deep_over.py"].skipped == "RecursionError: nesting too deep for ast.parse"


def test_reparse_parses_a_region_as_deep_as_the_reference(reference_max: int) -> None:
    old = "import os\n\n\ndef f():\n    return 1\n"
    previous = Parsed(old, outline_of(ast.parse(old)))
    got = reparse(previous, old + chain(reference_max))
    assert got is not None  # the region (the new line) parsed by itself
    assert got.outline[-1].first == got.outline[-1].last == 6
    assert reparse(previous, old + chain(reference_max + 1)) is None
    assert in_frames(300, lambda: reparse(previous, old + chain(reference_max))) == got


def test_an_editor_buffer_parses_as_deep_as_the_reference(
    monkeypatch: pytest.MonkeyPatch, reference_max: int
) -> None:
    """``chunk_source`` (a buffer's lenses): a full parse, then a re-parse of an edit."""
    monkeypatch.setattr(chunker, "_recent", {})
    monkeypatch.setattr(chunker, "_parsed", {})
    old = "def f():\n    return 1\n"
    for n in (reference_max, reference_max + 1):
        for text in (chain(n), old, old + chain(n)):  # full parse, then reparse
            if n > reference_max and text != old:
                with pytest.raises(ChunkingError, match="RecursionError"):
                    chunk_source(text, "m.py", "m.py")
            else:
                assert chunk_source(text, "m.py", "m.py")
