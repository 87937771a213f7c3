"""Session folders (a corpus root, its rules, its chunk maps by root-relative POSIX path)
and ``Storage``, the one interface the store reads them through, loaded or in place."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from chunkls.chunking.corpus import ConfigProblem, CorpusRules
from chunkls.chunking.located_chunk import ChunkHead, ChunkStub, LocatedChunk
from chunkls.index.id_map import IdMap
from chunkls.runtime.log import logger

if TYPE_CHECKING:
    from chunkls.search.scorer import PostingsSource
    from chunkls.search.tokens import FileTerms
    from chunkls.storage.cache import FolderCache
    from chunkls.storage.in_place import InPlace
    from chunkls.storage.listing import Listing
    from chunkls.storage.packed import StoredFile


class FolderInfo(Protocol):
    """A workspace folder's facts, read-only: what front doors are given
    (``Queries.folders``, ``IndexedChunk.folder``), never its chunk maps."""

    @property
    def root(self) -> Path:
        """The folder as the user gave it; chunk IDs are relative to it."""

    @property
    def root_resolved(self) -> Path: ...

    @property
    def rules(self) -> CorpusRules:
        """Corpus rules: the tutorial's plus ``[tool.chunkls]`` plus editor settings."""

    @property
    def position(self) -> int:
        """Its place among the workspace folders (first in corpus order is 0)."""

    @property
    def config_problems(self) -> Sequence[ConfigProblem]: ...

    @property
    def name(self) -> str: ...

    @property
    def read_in_place(self) -> bool:
        """Whether it is answered from its cache read in place (not loaded yet)."""

    def relative(self, path: str | Path) -> str | None:
        """The root-relative POSIX path of an absolute path inside this folder
        (``None`` also when a folder on its way is a symlink: never in the corpus)."""

    def absolute(self, rel_path: str) -> Path: ...


class Folder:
    """One workspace folder (corpus root), its facts (``FolderInfo``) and its
    chunks (equal to itself only): the session's and the store's, never a front door's."""

    def __init__(
        self,
        root: Path,
        rules: CorpusRules,
        position: int = 0,
        config_problems: list[ConfigProblem] | None = None,
    ) -> None:
        self.root = root
        self.root_resolved = root.resolve()
        self.rules = rules
        self.position = position
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
        self.storage: Storage = self
        """``in_place``, else its own maps (``ChunkStore.read_in_place`` chooses)."""

    def __repr__(self) -> str:
        return f"Folder({self.root!r}, position={self.position})"

    @property
    def name(self) -> str:
        return self.root.name or str(self.root)

    @property
    def read_in_place(self) -> bool:
        return self.in_place is not None

    def relative(self, path: str | Path) -> str | None:
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
        return self.root / rel_path

    # -- its chunks as loaded: the ``Storage`` read while not ``in_place`` ----------

    postings: PostingsSource | None = None
    stale: str | None = None
    texts_lost = False
    """Whether the cache was found without texts the index relied on (logged once)."""

    def stored(self, rel_path: str) -> StoredFile | None:
        return self.files.get(rel_path)

    def has(self, rel_path: str) -> bool:
        return rel_path in self.files

    def holding(self, chunk_id: str) -> list[str]:
        return self.by_id.get(chunk_id)

    def holds(self, chunk_id: str) -> bool:
        return bool(self.by_id.get(chunk_id))

    def sources(self, source_path: str) -> Sequence[str]:
        return self.by_source.get(source_path, ())

    def source_paths(self) -> Iterable[str]:
        return self.by_source

    def paths(self) -> list[str]:
        return sorted(self.files)

    def file_count(self) -> int:
        return len(self.files)

    def all_stubs(self) -> Iterator[tuple[str, bytes]]:
        files = self.files
        return ((rel_path, files[rel_path].packed) for rel_path in sorted(files))

    def texts(self, rel_path: str) -> bytes | None:
        generation = self.generations.get(rel_path)
        if self.cache is None or generation is None:
            return None
        blob = self.cache.texts(rel_path, generation)
        if blob is None and not self.texts_lost:
            self.texts_lost = True
            logger().info(
                "%s: chunk texts are no longer in the index cache (cleared, or rewritten by"
                " another chunkls); the files are to be read again (first: %s)",
                self.root,
                rel_path,
            )
        return blob


class Storage(Protocol):
    """A folder's chunks as the store reads them: loaded (``Folder``'s maps) or
    read in place from its cache (``chunkls.storage.in_place.InPlace``)."""

    @property
    def postings(self) -> PostingsSource | None:
        """Its own search postings (``None``: the store's in-memory index has them)."""

    @property
    def stale(self) -> str | None:
        """Why what it holds turned out not to be the folder's (``None``: it is)."""

    def stored(self, rel_path: str) -> StoredFile | None:
        """A file's chunks as kept (``None``: it has none, or they cannot be read)."""

    def has(self, rel_path: str) -> bool:
        """Whether a file has chunks."""

    def holding(self, chunk_id: str) -> list[str]:
        """The files that may have chunks of this ID (their stubs tell)."""

    def holds(self, chunk_id: str) -> bool:
        """Whether some file has a chunk of this ID (no text is read)."""

    def sources(self, source_path: str) -> Sequence[str]:
        """The files whose chunks have this source path."""

    def source_paths(self) -> Iterable[str]:
        """Every source path with chunks."""

    def paths(self) -> list[str]:
        """The files with chunks, sorted."""

    def file_count(self) -> int:
        """How many files have chunks."""

    def all_stubs(self) -> Iterator[tuple[str, bytes]]:
        """Every file's (path, stubs blob), by path: no texts are read."""

    def texts(self, rel_path: str) -> bytes | None:
        """A file's texts blob from the cache (``None``: not there)."""


def held(folder: FolderInfo) -> Folder:
    """The folder behind facts the store handed out (each is a ``Folder``)."""
    return cast(Folder, folder)


def outside_folder(root: Path) -> FolderInfo:
    """A folder not in the index (single-file mode: a document's directory)."""
    return Folder(root, CorpusRules())


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

    folder: FolderInfo
    chunk: LocatedChunk

    @property
    def path(self) -> Path:
        """The file the chunk's text comes from (its ``source_path``)."""
        return self.folder.root / self.chunk.source_path


class FoundChunk(Protocol):
    """A chunk a question found and its folder: with its text (``IndexedChunk``) or
    without (``ListedChunk``)."""

    @property
    def folder(self) -> FolderInfo: ...

    @property
    def chunk(self) -> ChunkHead: ...


class ListedChunk(NamedTuple):
    """A chunk without its text (a listing's: ``Queries.listing``) and its folder."""

    folder: FolderInfo
    chunk: ChunkStub
