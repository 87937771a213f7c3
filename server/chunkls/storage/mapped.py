"""The search postings in a file of their own, mapped into memory and read in place.

A server that loaded the stdlib's postings from the cache's SQLite file held
them on its heap: 42 MB of documents and term frequencies and 20 MB of term
table, resident whether a query read them or not. ``FolderCache.save_snapshot``
also writes them to a file beside the database (``postings-<token>.bin``), each
array laid out as numpy reads it; a load maps that file read-only and the
index searches the very same arrays (so the very same scores). Only the pages a
query reads become resident, and those are the page cache's: shared with any
other process reading the file, clean, and taken back by the kernel under
memory pressure. After a pass that reads every page (the load's checks, a
snapshot's save), ``Mapped.release`` tells the kernel this process no longer
needs them (``MADV_DONTNEED``, where the platform has it).

Only an index's first snapshot is read in place (the first workspace folder's:
``BM25Index.load_snapshot``). Postings added later (another folder's, a file's
edits) wait in a small segment; once it holds 100,000 postings they are merged
with the main one, on the heap (``BM25Index._merge``): a second large folder,
or a long session of edits, ends the mapping until the next load.

The database's snapshot row names the token of its file. A file that is
missing, short, damaged or another snapshot's is not used: the postings are
then read from the database as before. A save writes a new file under a new
name (never over one in use: a process that mapped the old one keeps reading
it) and, once the database names it, removes the others.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MAGIC = b"chunklsP"
VERSION = 1
HEADER = 4096
"""Bytes of the header (magic, version, token, the sections' table)."""
_HEAD = struct.Struct("<8sII16s")
"""magic, version, how many sections, token."""
_SECTION = struct.Struct("<8s4sQQ")
"""name, numpy dtype string, offset, count."""
_ALIGN = 64
BLOB_ALIGN = max(mmap.ALLOCATIONGRANULARITY, 4096)
"""Where a byte section may start: it is mapped on its own (an mmap's offset
is a multiple of the allocation granularity)."""
PREFIX = "postings-"
ABANDONED_S = 3600
SUFFIX = ".bin"


def file_path(directory: Path, token: str) -> Path:
    """The postings file of a token."""
    return directory / f"{PREFIX}{token}{SUFFIX}"


def _layout(sections: Sequence[tuple[str, str, int]]) -> list[tuple[str, str, int, int]]:
    """(name, dtype, offset, count) of each section: arrays 64-byte aligned, a
    byte section (dtype ``|u1``) on a ``BLOB_ALIGN`` boundary."""
    placed = []
    at = HEADER
    for name, dtype, count in sections:
        align = BLOB_ALIGN if dtype == "|u1" else _ALIGN
        at = -(-at // align) * align
        placed.append((name, dtype, at, count))
        at += count * np.dtype(dtype).itemsize
    return placed


class MappedWriter:
    """Writes a postings file: its sections' sizes are known first, their
    contents are put in order, a piece at a time (a save streams them)."""

    def __init__(self, directory: Path, sections: Sequence[tuple[str, str, int]]) -> None:
        """Start the file (``OSError`` if it cannot be)."""
        self.directory = directory
        self.token = os.urandom(8).hex()
        """Names the file, and is written in it (the database records it)."""
        self.temporary = directory / f".{PREFIX}{self.token}{SUFFIX}.tmp"
        self.healthy = True
        """False once a write failed (the caller then gives the file up)."""
        self.layout = {name: (dtype, at, count) for name, dtype, at, count in _layout(sections)}
        self._cursor = {name: at for name, (_, at, _) in self.layout.items()}
        self._fd: int | None = os.open(
            self.temporary,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0),
            0o666,  # as ``open`` makes a file (then the umask)
        )
        head = _HEAD.pack(MAGIC, VERSION, len(sections), self.token.encode("ascii"))
        table = b"".join(
            _SECTION.pack(name.encode("ascii"), dtype.encode("ascii"), at, count)
            for name, (dtype, at, count) in self.layout.items()
        )
        try:
            if len(head) + len(table) > HEADER:
                raise ValueError("too many sections")
            self._write(head + table, 0)
        except BaseException:
            self.abandon()
            raise

    def _write(self, data: Any, at: int) -> None:
        assert self._fd is not None
        view = memoryview(data).cast("B")
        while view:
            if hasattr(os, "pwrite"):
                written = os.pwrite(self._fd, view, at)
            else:  # Windows
                written = self._seek(view, at)
            view, at = view[written:], at + written

    def _seek(self, view: memoryview, at: int) -> int:
        assert self._fd is not None
        os.lseek(self._fd, at, os.SEEK_SET)
        return os.write(self._fd, view)

    def put(self, name: str, data: Any) -> None:
        """Append to a section (``data``: an array or bytes of its dtype)."""
        dtype, at, count = self.layout[name]
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data, dtype=np.dtype(dtype))
        size = memoryview(data).nbytes
        cursor = self._cursor[name]
        if cursor + size > at + count * np.dtype(dtype).itemsize:
            raise ValueError(f"section {name} overflows")
        self._write(data, cursor)
        self._cursor[name] = cursor + size

    def finish(self) -> str:
        """Close the file under its final name; returns its token (``ValueError``
        if a section is not full)."""
        for name, (dtype, at, count) in self.layout.items():
            if self._cursor[name] != at + count * np.dtype(dtype).itemsize:
                raise ValueError(f"section {name} incomplete")
        self._close()
        os.replace(self.temporary, file_path(self.directory, self.token))
        return self.token

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def abandon(self) -> None:
        """Drop the file (a save that failed)."""
        self._close()
        with contextlib.suppress(OSError):
            os.remove(self.temporary)
        with contextlib.suppress(OSError):
            os.remove(file_path(self.directory, self.token))


def remove_others(directory: Path, token: str | None) -> None:
    """Remove the postings files but ``token``'s, and the temporaries of saves
    that never finished (older than ``ABANDONED_S``: another process may be
    writing a younger one)."""
    keep = None if token is None else file_path(directory, token).name
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(PREFIX) and entry.name != keep:
                with contextlib.suppress(OSError):  # mapped elsewhere, on Windows
                    os.remove(entry.path)
            elif entry.name.startswith("." + PREFIX):
                with contextlib.suppress(OSError):
                    if now - entry.stat().st_mtime > ABANDONED_S:
                        os.remove(entry.path)


class Mapped:
    """An open postings file: its sections as read-only arrays over the mapping."""

    def __init__(self, directory: Path, token: str) -> None:
        """Map the file of ``token`` (``OSError``/``ValueError`` if it is missing,
        short, damaged or another's)."""
        path = file_path(directory, token)
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < HEADER:
                raise ValueError(f"{path.name}: short")
            self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            magic, version, count, stored = _HEAD.unpack_from(self._map, 0)
            if magic != MAGIC or version != VERSION or stored != token.encode("ascii"):
                raise ValueError(f"{path.name}: not this snapshot's")
            self.arrays: dict[str, npt.NDArray[Any]] = {}
            """Each array section, by name (read-only views of the mapping)."""
            self.blob: mmap.mmap | bytes = b""
            """The byte section, mapped on its own (slices of it are ``bytes``)."""
            self._blob_map: mmap.mmap | None = None
            for n in range(count):
                raw_name, raw_dtype, at, length = _SECTION.unpack_from(
                    self._map, _HEAD.size + n * _SECTION.size
                )
                name = raw_name.rstrip(b"\0").decode("ascii")
                dtype = np.dtype(raw_dtype.rstrip(b"\0").decode("ascii"))
                if at + length * dtype.itemsize > size:
                    raise ValueError(f"{path.name}: short")
                if dtype == np.dtype("|u1"):
                    if at % mmap.ALLOCATIONGRANULARITY:
                        raise ValueError(f"{path.name}: misaligned")
                    if length:
                        self._blob_map = mmap.mmap(
                            file.fileno(), length, access=mmap.ACCESS_READ, offset=at
                        )
                        self.blob = self._blob_map
                else:
                    self.arrays[name] = np.frombuffer(self._map, dtype, length, at)

    def release(self) -> None:
        """Let the kernel take back the pages read so far (they are read again
        from the file, or the page cache, when next needed)."""
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if advice is None:
            return
        for each in (self._map, self._blob_map):
            if each is not None:
                with contextlib.suppress(OSError, ValueError):
                    each.madvise(advice)
