"""Session folders and where their chunks are: the data the index is made of.

A ``Folder`` is one corpus root with its rules and its chunk maps (paths are
root-relative POSIX paths), loaded or read in place from its cache
(``in_place``): the store reads either through the same accessors.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from chunkls.chunking.corpus import ConfigProblem, CorpusRules
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.index.id_map import IdMap

if TYPE_CHECKING:
    from chunkls.search.tokens import FileTerms
    from chunkls.storage.cache import FolderCache
    from chunkls.storage.in_place import InPlace
    from chunkls.storage.listing import Listing
    from chunkls.storage.packed import StoredFile


class Folder:
    """One workspace folder (corpus root) and its chunks (equal to itself only)."""

    def __init__(
        self,
        root: Path,
        rules: CorpusRules,
        position: int = 0,
        config_problems: list[ConfigProblem] | None = None,
    ) -> None:
        self.root = root
        """The folder as the user gave it; chunk IDs are relative to it."""
        self.root_resolved = root.resolve()
        self.rules = rules
        """Corpus rules: the tutorial's plus ``[tool.chunkls]`` plus editor settings."""
        self.position = position
        """Its place among the workspace folders (first in corpus order is 0)."""
        self.config_problems: list[ConfigProblem] = config_problems or []
        self.files: dict[str, StoredFile] = {}
        self.skipped: dict[str, str] = {}
        """Root-relative path -> why the file could not be chunked."""
        self.by_id = IdMap()
        """Chunk ID -> the files that may have chunks of it (a lookup checks their stubs)."""
        self.by_source: dict[str, list[str]] = {}
        self.cache: FolderCache | None = None
        self.generations: dict[str, int] = {}
        """Root-relative path -> generation of its cache row."""
        self.snapshot_stale = True
        """Whether the cache's search snapshot misses changes made since."""
        self.touched: set[str] | None = None
        """While the folder is being indexed: the paths ``refresh`` re-read meanwhile."""
        self.deferred: dict[str, tuple[StoredFile, FileTerms]] | None = None
        """While files are chunked in bulk: their search terms, indexed at the end."""
        self.listing: Listing | None = None
        """The folders of its last whole walk, until its cache records them."""
        self.in_place: InPlace | None = None
        """Its cache read in place, while it is answered from there (not loaded)."""

    def __repr__(self) -> str:
        return f"Folder({self.root!r}, position={self.position})"

    @property
    def name(self) -> str:
        """A short name for messages."""
        return self.root.name or str(self.root)

    def relative(self, path: str | Path) -> str | None:
        """The root-relative POSIX path of an absolute path inside this folder
        (``None`` also when a folder on its way is a symlink: never in the corpus)."""
        candidate = Path(os.path.normpath(path))
        for base in (self.root, self.root_resolved):
            try:
                rel = candidate.relative_to(base)
            except ValueError:
                continue
            text = PurePosixPath(rel).as_posix()
            if text in ("", ".") or text.startswith("../"):
                return None
            if parent := text.rpartition("/")[0]:
                expected = os.path.join(self.root_resolved, *parent.split("/"))
                if os.path.normcase(os.path.realpath(expected)) != os.path.normcase(expected):
                    return None
            return text
        return None

    def absolute(self, rel_path: str) -> Path:
        """The path of a root-relative file."""
        return self.root / rel_path

    # -- its chunks, loaded or read in place (reading only) ---------------------------

    def stored(self, rel_path: str) -> StoredFile | None:
        """A file's chunks as kept (``None``: it has none)."""
        if self.in_place is not None:
            return self.in_place.stored(rel_path)
        return self.files.get(rel_path)

    def holding(self, chunk_id: str) -> list[str]:
        """The files that may have chunks of this ID (their stubs tell)."""
        if self.in_place is not None:
            return self.in_place.holding(chunk_id)
        return self.by_id.get(chunk_id)

    def sources(self, source_path: str) -> Sequence[str]:
        """The files whose chunks have this source path."""
        if self.in_place is not None:  # (a cached file's source path is its path)
            return (source_path,) if self.in_place.has(source_path) else ()
        return self.by_source.get(source_path, ())

    def source_paths(self) -> Iterable[str]:
        """Every source path with chunks."""
        return self.in_place.named if self.in_place is not None else self.by_source

    def paths(self) -> list[str]:
        """The files with chunks, sorted."""
        return list(self.in_place.named) if self.in_place is not None else sorted(self.files)

    def file_count(self) -> int:
        """How many files have chunks."""
        return len(self.in_place.named) if self.in_place is not None else len(self.files)


def innermost(folders: Iterable[Folder], path: str | Path) -> tuple[Folder, str] | None:
    """The innermost of ``folders`` containing an absolute path, and the relative path."""
    best: tuple[Folder, str] | None = None
    for folder in folders:
        rel = folder.relative(path)
        if rel is not None and (best is None or len(rel) < len(best[1])):
            best = (folder, rel)
    return best


class IndexedChunk(NamedTuple):
    """A chunk and the workspace folder it belongs to."""

    folder: Folder
    chunk: LocatedChunk

    @property
    def path(self) -> Path:
        """The file the chunk's text comes from (its ``source_path``)."""
        return self.folder.root / self.chunk.source_path
