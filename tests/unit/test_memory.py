"""Giving freed memory back to the system (glibc)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chunkls.runtime.memory import _libc, release_memory, tune_allocator

REPO = Path(__file__).resolve().parents[2]

CHILD = """
import numpy as np
from chunkls.runtime.memory import tune_allocator, release_memory

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024

tune_allocator()
arrays = [np.ones(16_000, dtype=np.int32) for _ in range(2_000)]  # 128 MB in 64 kB blocks
keep = arrays[::20]  # holes all over the heap
del arrays
before = rss()
release_memory()
print(before, rss())
"""


def run_child(source: str, *args: str) -> str:
    """What a fresh Python process running ``source`` (with ``args``) prints."""
    done = subprocess.run(
        [sys.executable, "-c", source, *args],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO / "server")},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


@pytest.mark.skipif(_libc() is None, reason="glibc only")
def test_freed_heap_memory_goes_back_to_the_system() -> None:
    before, after = map(int, run_child(CHILD).split())
    assert before - after > 60, (before, after)


REUSED = """
import resource, sys
import numpy as np
from chunkls.runtime.memory import keep_freed_memory, tune_allocator

tune_allocator()  # as a worker's parent has it
if sys.argv[1] == "keep":
    assert keep_freed_memory()

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

x = np.ones(8 << 20, dtype=np.int32)  # 32 MB: a large file's temporary
del x
before = faults()
for _ in range(10):  # the next files' temporaries
    x = np.ones(8 << 20, dtype=np.int32)
    del x
print(faults() - before)
"""


@pytest.mark.skipif(_libc() is None, reason="glibc only")
def test_a_worker_reuses_what_it_freed_instead_of_faulting_it_in_again() -> None:
    """Page faults of allocating and freeing a file-sized temporary ten times over:
    none once a worker keeps freed memory, thousands of pages when given back."""
    kept, given_back = int(run_child(REUSED, "keep")), int(run_child(REUSED, "give back"))
    assert kept < 50 and kept * 10 < given_back, (kept, given_back)


def test_the_calls_are_safe_anywhere() -> None:
    assert tune_allocator() is (_libc() is not None)
    assert isinstance(release_memory(), bool)
