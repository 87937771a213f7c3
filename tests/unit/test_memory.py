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


@pytest.mark.skipif(_libc() is None, reason="glibc only")
def test_freed_heap_memory_goes_back_to_the_system() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO / "server")},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    before, after = map(int, done.stdout.split())
    assert before - after > 60, (before, after)


def test_the_calls_are_safe_anywhere() -> None:
    assert tune_allocator() is (_libc() is not None)
    assert isinstance(release_memory(), bool)
