"""The search postings in a file of their own (``postings-<token>.bin``, named by the snapshot
row), mapped (``Mapped``) or read without numpy (``read_plain``). A missing, damaged or other
file is not used; a save writes a new file (never over one in use), then removes the others."""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

# numpy is imported by the writer and ``Mapped`` only (``read_plain`` does without)

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
"""Where a byte section may start: it is mapped on its own."""
PREFIX = "postings-"
ABANDONED_S = 3600
SUFFIX = ".bin"


def file_path(directory: Path, token: str) -> Path:
    """The postings file of a token."""
    return directory / f"{PREFIX}{token}{SUFFIX}"


def _item_size(dtype: str) -> int:
    """Bytes of an item of a numpy dtype string (``<i4``: 4)."""
    return _ITEM_SIZES[dtype[1:]]


def _layout(sections: Sequence[tuple[str, str, int]]) -> list[tuple[str, str, int, int]]:
    """(name, dtype, offset, count) of each section, aligned."""
    placed = []
    at = HEADER
    for name, dtype, count in sections:
        align = BLOB_ALIGN if dtype == "|u1" else _ALIGN
        at = -(-at // align) * align
        placed.append((name, dtype, at, count))
        at += count * _item_size(dtype)
    return placed


class MappedWriter:
    """Writes a postings file: sections sized first, then streamed in order."""

    def __init__(self, directory: Path, sections: Sequence[tuple[str, str, int]]) -> None:
        """Start the file (``OSError`` if it cannot be)."""
        self.directory = directory
        self.token = os.urandom(8).hex()
        self.temporary = directory / f".{PREFIX}{self.token}{SUFFIX}.tmp"
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
                os.lseek(self._fd, at, os.SEEK_SET)
                written = os.write(self._fd, view)
            view, at = view[written:], at + written

    def put(self, name: str, data: Any) -> None:
        """Append to a section (``data``: an array or bytes of its dtype)."""
        import numpy as np

        dtype, at, count = self.layout[name]
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data, dtype=np.dtype(dtype))
        size = memoryview(data).nbytes
        cursor = self._cursor[name]
        if cursor + size > at + count * _item_size(dtype):
            raise ValueError(f"section {name} overflows")
        self._write(data, cursor)
        self._cursor[name] = cursor + size

    def finish(self) -> str:
        """Close the file under its final name; its token (``ValueError``: a section not full)."""
        for name, (dtype, at, count) in self.layout.items():
            if self._cursor[name] != at + count * _item_size(dtype):
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
        for path in (self.temporary, file_path(self.directory, self.token)):
            with contextlib.suppress(OSError):
                os.remove(path)


def remove_others(directory: Path, token: str | None) -> None:
    """Remove the postings files but ``token``'s, and temporaries older than
    ``ABANDONED_S`` (another process may be writing a younger one)."""
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


def read_sections(view: Any, token: str, size: int, name: str) -> dict[str, tuple[str, int, int]]:
    """The sections of a postings file's header: name -> (dtype, offset, count);
    ``ValueError`` if the file is short, damaged or another snapshot's."""
    if size < HEADER:
        raise ValueError(f"{name}: short")
    magic, version, count, stored = _HEAD.unpack_from(view, 0)
    if magic != MAGIC or version != VERSION or stored != token.encode("ascii"):
        raise ValueError(f"{name}: not this snapshot's")
    found = {}
    for n in range(count):
        raw_name, raw_dtype, at, length = _SECTION.unpack_from(view, _HEAD.size + n * _SECTION.size)
        dtype = raw_dtype.rstrip(b"\0").decode("ascii")
        if dtype[1:] not in _ITEM_SIZES or at + length * _item_size(dtype) > size:
            raise ValueError(f"{name}: short")
        if dtype == "|u1" and at % mmap.ALLOCATIONGRANULARITY:
            raise ValueError(f"{name}: misaligned")
        found[raw_name.rstrip(b"\0").decode("ascii")] = (dtype, at, length)
    return found


_ITEM_SIZES = {"i8": 8, "u8": 8, "i4": 4, "u2": 2, "u1": 1}
"""Bytes of an item of each kind of section (numpy's dtype strings, byte order aside)."""
_CODES = {"i8": "q", "u8": "Q", "i4": "i", "u2": "H", "u1": "B"}
"""The ``memoryview`` format of each kind of section."""


class Mapped:
    """An open postings file: its sections as read-only numpy arrays over the mapping."""

    def __init__(self, directory: Path, token: str) -> None:
        """Map the file of ``token`` (``OSError``/``ValueError`` if not usable)."""
        import numpy as np

        path = file_path(directory, token)
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            self.arrays: dict[str, npt.NDArray[Any]] = {}
            """Each array section, by name (read-only views of the mapping)."""
            self.blob: mmap.mmap | bytes = b""
            """The byte section, mapped on its own (slices of it are ``bytes``)."""
            self._blob_map: mmap.mmap | None = None
            for name, (dtype, at, length) in read_sections(
                self._map, token, size, path.name
            ).items():
                if dtype == "|u1":
                    if length:
                        self._blob_map = mmap.mmap(
                            file.fileno(), length, access=mmap.ACCESS_READ, offset=at
                        )
                        self.blob = self._blob_map
                else:
                    self.arrays[name] = np.frombuffer(self._map, np.dtype(dtype), length, at)

    def release(self) -> None:
        """Let the kernel take back the pages read so far."""
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if advice is None:
            return
        for each in (self._map, self._blob_map):
            if each is not None:
                with contextlib.suppress(OSError, ValueError):
                    each.madvise(advice)


def read_plain(directory: Path, token: str) -> dict[str, memoryview[int]]:
    """A postings file's sections as ``memoryview`` s, without numpy (errors as ``Mapped``)."""
    path = file_path(directory, token)
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    found = read_sections(mapping, token, size, path.name)
    native = "<" if sys.byteorder == "little" else ">"
    view = memoryview(mapping)
    plain: dict[str, memoryview[int]] = {}
    for name, (dtype, at, length) in found.items():
        if dtype[0] not in (native, "|"):
            raise ValueError(f"{path.name}: another byte order")
        plain[name] = view[at : at + length * _item_size(dtype)].cast(_CODES[dtype[1:]])  # type: ignore[call-overload]
    return plain
