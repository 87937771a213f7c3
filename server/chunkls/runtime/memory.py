"""Giving memory back after bulk work (glibc only): glibc raises its mmap threshold after a
large free, so a server would sit on indexing's hundreds of MB; a fixed threshold and
``malloc_trim`` give them back."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
from functools import cache

logger = logging.getLogger("chunkls")

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
"""``mallopt`` parameter numbers (glibc's malloc.h)."""
MMAP_THRESHOLD = 4 << 20
"""Blocks this large and larger are mmapped (and unmapped when freed)."""


@cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not hasattr(libc, "malloc_trim") or not hasattr(libc, "mallopt"):
        return None  # not glibc (musl has neither)
    return libc


def tune_allocator() -> bool:
    """Fix the mmap threshold (no dynamic growth); returns whether it could."""
    libc = _libc()
    return libc is not None and bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


WORKER_THRESHOLD = 256 << 20
"""A bulk worker's mmap and trim thresholds: what it frees it keeps for the next file."""


def keep_freed_memory() -> bool:
    """In a short-lived worker process: keep freed memory for reuse rather than
    give it back and fault it in again for the next file (numpy's temporaries of
    a file's size, each of its files); returns whether it could."""
    libc = _libc()
    return (
        libc is not None
        and bool(libc.mallopt(M_MMAP_THRESHOLD, WORKER_THRESHOLD))
        and bool(libc.mallopt(M_TRIM_THRESHOLD, WORKER_THRESHOLD))
    )


def release_memory() -> bool:
    """Return free heap pages to the system; returns whether any were."""
    libc = _libc()
    return libc is not None and bool(libc.malloc_trim(0))
