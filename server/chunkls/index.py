"""The workspace index: located chunks by folder, file and ID, plus BM25 search.

Every change goes through ``WorkspaceIndex.set_file`` (one file's chunks
replaced, or dropped), so the chunk maps and the search postings never
disagree. ``refresh`` re-reads files from disk and is what a save, a file
watcher event or a CLI run calls.
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from chunkls.chunking import (
    ConfigProblem,
    CorpusRules,
    FileChunks,
    FileSkipped,
    LocatedChunk,
    bulk_gc,
    chunk_corpus_file,
    load_rules,
    walk_corpus,
)
from chunkls.chunking.corpus import CorpusFile
from chunkls.search import BM25Index, Hit


@dataclass(eq=False)
class Folder:
    """One workspace folder (corpus root) and its chunks."""

    root: Path
    """The folder as the user gave it; chunk IDs are relative to it."""
    rules: CorpusRules
    """Corpus rules: the tutorial's plus ``[tool.chunkls]`` plus editor settings."""
    position: int = 0
    """Its place among the workspace folders (first in corpus order is 0)."""
    config_problems: list[ConfigProblem] = field(default_factory=list)
    """What was wrong in its configuration (reported, then ignored)."""
    files: dict[str, FileChunks] = field(default_factory=dict)
    """Root-relative path -> that file's chunks."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Root-relative path -> why the file could not be chunked."""
    by_id: dict[str, list[LocatedChunk]] = field(default_factory=dict)
    """Chunk ID -> chunks with that ID (several for ``@overload`` stubs)."""
    by_source: dict[str, list[str]] = field(default_factory=dict)
    """Chunk ``source_path`` -> the root-relative paths of files carrying it."""

    def __post_init__(self) -> None:
        self.root_resolved = self.root.resolve()

    @property
    def name(self) -> str:
        """A short name for messages."""
        return self.root.name or str(self.root)

    def relative(self, path: str | Path) -> str | None:
        """The root-relative POSIX path of an absolute path inside this folder."""
        candidate = Path(os.path.normpath(path))
        for base in (self.root, self.root_resolved):
            try:
                rel = candidate.relative_to(base)
            except ValueError:
                continue
            text = PurePosixPath(rel).as_posix()
            return None if text in ("", ".") or text.startswith("../") else text
        return None

    def absolute(self, rel_path: str) -> Path:
        """The path of a root-relative file."""
        return self.root / rel_path

    def chunk_count(self) -> int:
        """How many chunks this folder has."""
        return sum(len(file.chunks) for file in self.files.values())


class IndexedChunk(NamedTuple):
    """A chunk and the workspace folder it belongs to."""

    folder: Folder
    chunk: LocatedChunk

    @property
    def path(self) -> Path:
        """The file the chunk's text comes from (its ``source_path``)."""
        return self.folder.root / self.chunk.source_path


Progress = Callable[[int, int], None]
"""Called with (files done, files in all) while a folder is indexed."""


class WorkspaceIndex:
    """All chunks of the workspace folders, searchable and resolvable by ID."""

    def __init__(self) -> None:
        self.folders: list[Folder] = []
        """Workspace folders in order."""
        self.search_index: BM25Index[IndexedChunk] = BM25Index()
        """BM25 postings over every chunk's ID and text."""

    # -- folders ---------------------------------------------------------------

    def add_folder(self, root: Path, base_rules: CorpusRules | None = None) -> Folder:
        """Register a folder with its configured rules (not indexed yet)."""
        rules, problems = load_rules(root, base_rules)
        position = max((folder.position for folder in self.folders), default=-1) + 1
        folder = Folder(root, rules, position, problems)
        self.folders.append(folder)
        return folder

    def remove_folder(self, folder: Folder) -> None:
        """Drop a folder and all of its chunks."""
        for rel_path in list(folder.files):
            self.set_file(folder, rel_path, None)
        self.folders.remove(folder)

    def folder_of(self, path: str | Path) -> tuple[Folder, str] | None:
        """The innermost folder containing an absolute path, and the relative path."""
        best: tuple[Folder, str] | None = None
        for folder in self.folders:
            rel = folder.relative(path)
            if rel is not None and (best is None or len(rel) < len(best[1])):
                best = (folder, rel)
        return best

    # -- changing the index: one path -------------------------------------------

    def set_file(self, folder: Folder, rel_path: str, chunks: FileChunks | None) -> None:
        """Replace one file's chunks (``None``: the file is gone or skipped)."""
        old = folder.files.pop(rel_path, None)
        if old is not None:
            for chunk in old.chunks:
                entries = folder.by_id.get(chunk.chunk_id)
                if entries is not None:
                    entries.remove(chunk)
                    if not entries:
                        del folder.by_id[chunk.chunk_id]
            sources = folder.by_source.get(old.chunks[0].source_path) if old.chunks else None
            if sources is not None and rel_path in sources:
                sources.remove(rel_path)
                if not sources:
                    del folder.by_source[old.chunks[0].source_path]
            self.search_index.remove_file((folder.position, rel_path))
        if chunks is None:
            return
        folder.files[rel_path] = chunks
        folder.skipped.pop(rel_path, None)
        for chunk in chunks.chunks:
            folder.by_id.setdefault(chunk.chunk_id, []).append(chunk)
        if chunks.chunks:
            folder.by_source.setdefault(chunks.chunks[0].source_path, []).append(rel_path)
        self.search_index.add_file(
            (folder.position, rel_path),
            ((f"{chunk.chunk_id}\n{chunk.text}", IndexedChunk(folder, chunk)) for chunk in chunks.chunks),
        )

    def skip_file(self, folder: Folder, rel_path: str, reason: str) -> None:
        """Record that a file cannot be chunked (its old chunks are dropped)."""
        self.set_file(folder, rel_path, None)
        folder.skipped[rel_path] = reason

    def forget_file(self, folder: Folder, rel_path: str) -> None:
        """A file left the corpus (deleted, excluded): drop chunks and skip notes."""
        self.set_file(folder, rel_path, None)
        folder.skipped.pop(rel_path, None)

    def refresh(self, folder: Folder, rel_paths: Iterable[str]) -> list[str]:
        """Re-read paths from disk into the index: files created, changed or
        deleted, and whole folders created or deleted. Returns the root-relative
        paths of the files whose entry changed."""
        changed: list[str] = []
        for rel_path in dict.fromkeys(rel_paths):
            path = folder.absolute(rel_path)
            below = [p for p in (*folder.files, *folder.skipped) if p.startswith(rel_path + "/")]
            if path.is_dir() and not path.is_symlink():
                walk = walk_corpus(folder.root, folder.rules, under=rel_path)
                found = {file.rel_path for file in walk.files}
                for file in walk.files:
                    self.index_one(folder, file)
                for skipped in walk.skipped:
                    self.skip_file(folder, skipped.rel_path, skipped.reason)
                for gone in below:
                    if gone not in found and gone not in folder.skipped:
                        self.forget_file(folder, gone)
                changed += sorted(found | set(below) | {s.rel_path for s in walk.skipped})
                # the folder itself, when it replaced a corpus file of its name ("m.py/")
                changed += self._refresh_file(folder, rel_path)
            elif below:  # a folder that was deleted or replaced by a file
                for gone in below:
                    self.forget_file(folder, gone)
                changed += below
                changed += self._refresh_file(folder, rel_path)
            else:
                changed += self._refresh_file(folder, rel_path)
        return changed

    def _refresh_file(self, folder: Folder, rel_path: str) -> list[str]:
        known = rel_path in folder.files or rel_path in folder.skipped
        path = folder.absolute(rel_path)
        if folder.rules.excluded_reason(rel_path) is not None or not os.path.lexists(path):
            if known:
                self.forget_file(folder, rel_path)
                return [rel_path]
            return []
        try:
            is_symlink = path.is_symlink()
        except OSError:
            is_symlink = False
        self.index_one(folder, CorpusFile(rel_path, os.fspath(path), is_symlink))
        return [rel_path]

    def index_one(self, folder: Folder, file: CorpusFile) -> None:
        """Chunk one corpus file from disk into the index, or record why not."""
        try:
            chunks = chunk_corpus_file(folder.root_resolved, file, folder.rules)
        except FileSkipped as error:
            self.skip_file(folder, file.rel_path, error.reason)
        else:
            self.set_file(folder, file.rel_path, chunks)

    def index_folder(self, folder: Folder, progress: Progress | None = None) -> float:
        """Chunk a whole folder from disk (replacing what it had); returns seconds."""
        started = time.perf_counter()
        for done, total in self.iter_index_folder(folder):
            if progress is not None:
                progress(done, total)
        return time.perf_counter() - started

    def iter_index_folder(self, folder: Folder) -> Iterator[tuple[int, int]]:
        """Index a whole folder step by step, yielding (files done, files in all)
        after each file, so a server can answer requests in between."""
        with bulk_gc():
            walk = walk_corpus(folder.root, folder.rules)
            seen = {file.rel_path for file in walk.files}
            for rel_path in [p for p in (*folder.files, *folder.skipped) if p not in seen]:
                self.forget_file(folder, rel_path)
            for skipped in walk.skipped:
                self.skip_file(folder, skipped.rel_path, skipped.reason)
            total = len(walk.files)
            if not total:
                yield 0, 0
            for done, file in enumerate(walk.files, 1):
                self.index_one(folder, file)
                yield done, total

    # -- reading ----------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.search_index)

    def file_count(self) -> int:
        """How many files have chunks."""
        return sum(len(folder.files) for folder in self.folders)

    def chunks(self) -> Iterator[IndexedChunk]:
        """Every chunk in corpus order (folders in order, files by path)."""
        for folder in sorted(self.folders, key=lambda f: f.position):
            for rel_path in sorted(folder.files):
                for chunk in folder.files[rel_path].chunks:
                    yield IndexedChunk(folder, chunk)

    def skipped(self) -> Iterator[tuple[Folder, str, str]]:
        """Every skipped file: (folder, root-relative path, reason), by path."""
        for folder in self.folders:
            for rel_path in sorted(folder.skipped):
                yield folder, rel_path, folder.skipped[rel_path]

    def lookup(self, chunk_id: str, prefer: Folder | None = None) -> list[IndexedChunk]:
        """Chunks with exactly this ID: in ``prefer`` if it has any, else in any folder."""
        if prefer is not None and chunk_id in prefer.by_id:
            return [IndexedChunk(prefer, chunk) for chunk in prefer.by_id[chunk_id]]
        return [
            IndexedChunk(folder, chunk)
            for folder in self.folders
            for chunk in folder.by_id.get(chunk_id, ())
        ]

    def file_chunks(self, folder: Folder, rel_path: str) -> tuple[LocatedChunk, ...]:
        """The indexed chunks of one file (empty when it has none)."""
        entry = folder.files.get(rel_path)
        return entry.chunks if entry is not None else ()

    def search(self, query: str, top_k: int = 10) -> list[Hit[IndexedChunk]]:
        """BM25-ranked chunks for a query."""
        return self.search_index.search(query, top_k)

    def source_paths(self) -> set[str]:
        """Every ``source_path`` that has chunks."""
        return {path for folder in self.folders for path in folder.by_source}

    def suggest(self, chunk_id: str, limit: int = 3) -> list[str]:
        """The existing IDs closest to one that does not resolve, best first."""
        path, _, identity = chunk_id.partition("#")
        ids_by_path: dict[str, set[str]] = {}
        for folder in self.folders:
            for rel_path in folder.by_source.get(path, ()):
                ids = ids_by_path.setdefault(path, set())
                ids.update(chunk.chunk_id for chunk in folder.files[rel_path].chunks)
        if path in ids_by_path:
            candidates = sorted(ids_by_path[path])
            return _closest(identity, candidates, limit, key=lambda cid: cid.partition("#")[2])
        paths = sorted(self.source_paths())
        near_paths = difflib.get_close_matches(path, paths, n=3, cutoff=0.6)
        candidates = sorted(
            {
                chunk.chunk_id
                for folder in self.folders
                for near in near_paths
                for rel_path in folder.by_source.get(near, ())
                for chunk in folder.files[rel_path].chunks
            }
        )
        return _closest(chunk_id, candidates, limit)


def _closest(
    target: str, candidates: list[str], limit: int, key: Callable[[str], str] = str
) -> list[str]:
    scored = []
    for candidate in candidates:
        matcher = difflib.SequenceMatcher(None, target, key(candidate), autojunk=False)
        scored.append((-matcher.ratio(), candidate))
    scored.sort()
    return [candidate for _, candidate in scored[:limit]]


def build_index(
    roots: Iterable[Path],
    base_rules: CorpusRules | None = None,
    progress: Progress | None = None,
) -> WorkspaceIndex:
    """Index folders from scratch (what the CLI does)."""
    index = WorkspaceIndex()
    for root in roots:
        index.index_folder(index.add_folder(root, base_rules), progress)
    return index
