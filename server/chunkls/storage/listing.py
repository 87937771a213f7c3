"""The folders of a whole walk, recorded beside the cache's rows: while none changed, a
reader knows the corpus holds the rows' files without listing a folder (a stat costs less)."""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from chunkls.storage.cache import stat_holds

if TYPE_CHECKING:
    from chunkls.chunking.corpus import Walk


class Listing(NamedTuple):
    """The folders of a whole walk of the corpus, as they were just before it
    listed them: while every folder's times are these, a walk finds the same files."""

    taken_ns: int
    """When the walk began: a folder changed ``cache.RACY_NS`` before is not trusted."""
    files: bytes
    """``files_digest`` of the walk's corpus files."""
    folders: tuple[tuple[str, int, int], ...]
    """(root-relative folder, mtime_ns, ctime_ns) of every folder listed ("" the root)."""
    skipped: tuple[tuple[str, str], ...]
    """The walk's entries that are not regular files: (root-relative path, reason)."""
    rules: str
    """The walk's ``CorpusRules.fingerprint``: under other rules it says nothing (a
    ``[tool.chunkls]`` rewritten in place changes no folder's times)."""

    def encode(self) -> bytes:
        """The listing as the cache keeps it."""
        return marshal.dumps(tuple(self))

    @classmethod
    def decode(cls, blob: bytes) -> Listing | None:
        """A listing ``encode`` made, or ``None`` for one that is damaged."""
        try:
            return cls(*marshal.loads(blob))
        except (ValueError, TypeError, EOFError):
            return None


def listing_of(
    walk: Walk, stamps: list[tuple[str, int, int]], taken_ns: int, rules: str
) -> Listing | None:
    """The listing of a whole walk (``walk_corpus``'s ``stamps``) under the rules of
    fingerprint ``rules``, or ``None`` when a folder could not be listed or a corpus
    file is a symlink (never cached)."""
    if not stamps or any(file.is_symlink for file in walk.files):
        return None
    return Listing(
        taken_ns,
        files_digest(file.rel_path for file in walk.files),
        tuple(stamps),
        tuple((skipped.rel_path, skipped.reason) for skipped in walk.skipped),
        rules,
    )


def files_digest(rel_paths: Iterable[str]) -> bytes:
    """A digest of root-relative paths (in the order given)."""
    digest = hashlib.blake2b(digest_size=16)
    paths = list(rel_paths)
    if paths:  # one update of them all: the bytes of an update per path, in a tenth of the time
        digest.update(("\0".join(paths) + "\0").encode("utf-8", "surrogateescape"))
    return digest.digest()


class Under:
    """Stats of root-relative paths, through a descriptor of the root where the platform
    takes one (the root's path is not looked up again for each), else joined paths."""

    def __init__(self, root: Path) -> None:
        self.top = os.fspath(root)
        self.prefix = self.top.rstrip(os.sep) + os.sep  # (a join costs as much as a stat)
        self.fd: int | None = None

    def __enter__(self) -> Under:
        if os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY"):
            with contextlib.suppress(OSError):
                self.fd = os.open(self.top, os.O_RDONLY | os.O_DIRECTORY)
        return self

    def __exit__(self, *_: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def stat(self, rel_dir: str) -> os.stat_result:
        """A folder's stat, symlinks followed (``""``: the root's)."""
        if not rel_dir:
            return os.stat(self.top)
        if self.fd is not None:
            return os.stat(rel_dir, dir_fd=self.fd)
        return os.stat(self.prefix + rel_dir)


def rows_hold(under: Under, names: list[str], rows: Sequence[Sequence[Any] | None]) -> bool:
    """Whether every file is as its row says by ``lstat`` (``stat_holds``)."""
    lstat, fd = os.lstat, under.fd
    paths = names if fd is not None else [under.prefix + name for name in names]
    for path, row in zip(paths, rows, strict=True):
        if row is None:
            return False
        _, mtime_ns, size, checked_ns, _, _, _ = row
        try:
            info = lstat(path, dir_fd=fd)
        except OSError:
            return False
        if not stat_holds(
            mtime_ns, size, checked_ns, info.st_mtime_ns, info.st_size, info.st_ctime_ns
        ):
            return False
    return True
