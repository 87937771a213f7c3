"""The workspace index: located chunks by folder, file and ID, plus BM25 search.

Every change goes through ``WorkspaceIndex.set_file`` (one file's chunks
replaced, or dropped), so the chunk maps and the search postings never
disagree. ``refresh`` re-reads files from disk and is what a save, a file
watcher event or a CLI run calls.
"""

from __future__ import annotations

import bisect
import contextlib
import difflib
import gc
import logging
import os
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from operator import itemgetter
from pathlib import Path, PurePosixPath
from typing import NamedTuple, overload

from chunkls.cache import FolderCache, Row, store_path
from chunkls.chunking import (
    ConfigProblem,
    CorpusRules,
    FileChunks,
    LocatedChunk,
    bulk_gc,
    load_rules,
    walk_corpus,
)
from chunkls.chunking.corpus import CorpusFile, FileSkipped, read_regular
from chunkls.memory import release_memory
from chunkls.parallel import (
    NICENESS,
    Chunked,
    chunk_many,
    chunk_one,
    content_digest,
    detach,
    process_context,
)
from chunkls.search import BM25Index, FileTerms, Hit, LearnedTerms, Snapshot, select_files
from chunkls.store import StoredFile, Stub, decode_stubs, pack, unpack

logger = logging.getLogger("chunkls")

UNPACKED_FILES = 64
"""Files whose chunks stay unpacked after a lookup (hovers come in runs)."""
REUSE_STEP = 500
"""Cached files linked between two yields of a warm start."""
SUGGEST_POOL = 40
"""Paths compared in full (difflib) when suggesting for an unknown path: those
sharing the most trigrams with it."""
SUGGEST_CHARS = 256
"""Characters of an unknown ID compared (a 100 kB "ID" is compared by its start)."""


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
    files: dict[str, StoredFile] = field(default_factory=dict)
    """Root-relative path -> that file's chunks, texts compressed (``chunkls.store``)."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Root-relative path -> why the file could not be chunked."""
    by_id: dict[str, str | tuple[str, ...]] = field(default_factory=dict)
    """Chunk ID -> the root-relative path of the file with chunks of that ID (or
    the paths, when several files have some). A file may have several (the
    tutorial's IDs of ``@overload`` stubs repeat): its stubs tell where."""
    by_source: dict[str, list[str]] = field(default_factory=dict)
    """Chunk ``source_path`` -> the root-relative paths of files carrying it."""
    cache: FolderCache | None = None
    """Its persistent index, when the workspace index keeps one."""
    generations: dict[str, int] = field(default_factory=dict)
    """Root-relative path -> generation of its cache row (see ``chunkls.cache``)."""
    snapshot_stale: bool = True
    """Whether the cache's search snapshot misses changes made since."""
    touched: set[str] | None = None
    """While the folder is being indexed: the paths ``refresh`` re-read meanwhile."""
    deferred: dict[str, tuple[StoredFile, FileTerms]] | None = None
    """While files are chunked in bulk: their search terms, indexed at the end."""

    def __post_init__(self) -> None:
        self.root_resolved = self.root.resolve()

    @property
    def name(self) -> str:
        """A short name for messages."""
        return self.root.name or str(self.root)

    def relative(self, path: str | Path) -> str | None:
        """The root-relative POSIX path of an absolute path inside this folder
        (``None`` also when a folder on its way is a symlink: the walk never
        follows one, so nothing under it is in the corpus, and it may lead out)."""
        candidate = Path(os.path.normpath(path))
        for base in (self.root, self.root_resolved):
            try:
                rel = candidate.relative_to(base)
            except ValueError:
                continue
            text = PurePosixPath(rel).as_posix()
            if text in ("", ".") or text.startswith("../"):
                return None
            parent = text.rpartition("/")[0]
            if parent:
                expected = os.path.join(self.root_resolved, *parent.split("/"))
                if os.path.normcase(os.path.realpath(expected)) != os.path.normcase(expected):
                    return None
            return text
        return None

    def absolute(self, rel_path: str) -> Path:
        """The path of a root-relative file."""
        return self.root / rel_path


class IndexedChunk(NamedTuple):
    """A chunk and the workspace folder it belongs to."""

    folder: Folder
    chunk: LocatedChunk

    @property
    def path(self) -> Path:
        """The file the chunk's text comes from (its ``source_path``)."""
        return self.folder.root / self.chunk.source_path


class ChunkAt(NamedTuple):
    """Where a chunk is in the index (what search postings point at)."""

    folder: Folder
    rel_path: str
    position: int


class ChunkAts(Sequence[ChunkAt]):
    """The search items of consecutive files, made when asked for: the search
    index keeps this one object per file instead of one per chunk."""

    def __init__(self, folder: Folder, files: list[tuple[str, int]]) -> None:
        self.folder = folder
        self.paths = [rel_path for rel_path, _ in files]
        self.starts = [0]
        for _, count in files:
            self.starts.append(self.starts[-1] + count)

    def __len__(self) -> int:
        return self.starts[-1]

    @overload
    def __getitem__(self, index: int) -> ChunkAt: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ChunkAt]: ...

    def __getitem__(self, index: int | slice) -> ChunkAt | Sequence[ChunkAt]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        number = bisect.bisect_right(self.starts, index) - 1
        return ChunkAt(self.folder, self.paths[number], index - self.starts[number])


FREEZE_FROM = 10_000
"""New terms from which a bulk pass folds them into the vocabulary's table."""

Progress = Callable[[int, int], None]
"""Called with (files done, files in all) while a folder is indexed."""


class WorkspaceIndex:
    """All chunks of the workspace folders, searchable and resolvable by ID."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        workers: int | None = None,
        elsewhere_from: int | None = None,
        long_lived: bool = False,
    ) -> None:
        self.folders: list[Folder] = []
        """Workspace folders in order."""
        self.search_index: BM25Index[ChunkAt] = BM25Index()
        """BM25 postings over every chunk's ID and text."""
        self.cache_dir = cache_dir
        """Where folders keep their persistent index (``None``: no cache)."""
        self.workers = workers
        """Worker processes for indexing many files (``None``: one per CPU)."""
        self.elsewhere_from = elsewhere_from
        """Files to chunk from which a folder with a cache is chunked in a separate
        process, then loaded from the cache (``None``: always in this one)."""
        self.long_lived = long_lived
        """Whether the process keeps this index for long (a language server). A bulk
        pass then makes the files searchable once they are all chunked, so that the
        term strings it makes die together (``_search_deferred``). A short-lived
        process (the CLI, a separate indexing process) makes each file searchable
        as it arrives, while the workers chunk the next ones, and leaves the
        vocabulary unfolded (a process about to end has no use for the memory)."""
        self._elsewhere: dict[Folder, BaseProcess] = {}
        """The separate indexing processes running, by folder."""
        self.folders_version = 0
        """Bumped whenever a folder is added or removed (memoised lookups check it)."""
        self._unpacked: dict[tuple[Folder, str], tuple[StoredFile, tuple[LocatedChunk, ...]]] = {}
        """The files unpacked last (a few), with the stored entry they came from."""
        self._texts_lost: set[Folder] = set()
        """Folders whose cache lost texts the index relied on (logged once each)."""
        self.version = 0
        """Bumped whenever a file's chunks change."""
        self._suggested: tuple[int, dict[tuple[str, int], list[str]]] = (0, {})
        self._paths = _PathGrams()
        """Every source path by trigram, for ``suggest`` (kept up to date as files come
        and go, built on first use)."""

    # -- folders ---------------------------------------------------------------

    def add_folder(
        self, root: Path, base_rules: CorpusRules | None = None, rules: CorpusRules | None = None
    ) -> Folder:
        """Register a folder with its configured rules (not indexed yet), or with
        ``rules`` as they are."""
        problems: list[ConfigProblem] = []
        if rules is None:
            rules, problems = load_rules(root, base_rules)
        position = max((folder.position for folder in self.folders), default=-1) + 1
        folder = Folder(root, rules, position, problems)
        if self.cache_dir is not None:
            path = store_path(folder.root_resolved, self.cache_dir)
            folder.cache = FolderCache(path, folder.root_resolved, rules.fingerprint())
        self.folders.append(folder)
        self.folders_version += 1
        return folder

    def remove_folder(self, folder: Folder) -> None:
        """Drop a folder and all of its chunks (its cache stays for next time)."""
        self.save(folder)
        if folder.cache is not None:
            folder.cache.close()
            folder.cache = None
        for rel_path in list(folder.files):
            self.set_file(folder, rel_path, None)
        self.folders.remove(folder)
        self.folders_version += 1

    def folder_of(self, path: str | Path) -> tuple[Folder, str] | None:
        """The innermost folder containing an absolute path, and the relative path."""
        best: tuple[Folder, str] | None = None
        for folder in self.folders:
            rel = folder.relative(path)
            if rel is not None and (best is None or len(rel) < len(best[1])):
                best = (folder, rel)
        return best

    # -- changing the index: one path -------------------------------------------

    def set_file(
        self,
        folder: Folder,
        rel_path: str,
        chunks: FileChunks | StoredFile | None,
        terms: FileTerms | None = None,
        digest: bytes | None = None,
        cached: bool = True,
    ) -> None:
        """Replace one file's chunks (``None``: the file is gone or skipped),
        given as chunks or already packed (by a worker).

        ``terms`` are the chunks' search terms when already counted (by a worker),
        ``digest`` the content hash of what was read (for the cache); ``cached``
        false keeps them out of the cache (a symlink: its row, if any, goes)."""
        if isinstance(chunks, StoredFile):
            stored: StoredFile | None = chunks
            located = None
        else:
            stored = pack(chunks) if chunks is not None else None
            located = chunks
        self._link(folder, rel_path, stored, terms, chunks=located)
        if folder.cache is not None:
            folder.snapshot_stale = True
            folder.generations.pop(rel_path, None)
            if stored is None or not cached:
                folder.cache.delete(rel_path)
            else:
                folder.generations[rel_path] = folder.cache.put(rel_path, stored, digest)

    def _link(
        self,
        folder: Folder,
        rel_path: str,
        stored: StoredFile | None,
        terms: FileTerms | None = None,
        searchable: bool = True,
        chunks: FileChunks | None = None,
    ) -> None:
        old = folder.files.pop(rel_path, None)
        self._unpacked.pop((folder, rel_path), None)
        self.version += 1
        by_id = folder.by_id
        if old is not None:
            for chunk_id in old.chunk_ids():
                holders = by_id.get(chunk_id)
                if holders == rel_path:
                    del by_id[chunk_id]
                elif isinstance(holders, tuple) and rel_path in holders:
                    rest = tuple(holder for holder in holders if holder != rel_path)
                    by_id[chunk_id] = rest[0] if len(rest) == 1 else rest
            source = old.stubs[0][1] if old.stubs else None
            sources = folder.by_source.get(source) if source is not None else None
            if source is not None and sources is not None and rel_path in sources:
                sources.remove(rel_path)
                if not sources:
                    del folder.by_source[source]
                    self._paths.discard(source, self.folders)
            self.search_index.remove_file((folder.position, rel_path))
        if stored is None:
            return
        folder.files[rel_path] = stored
        folder.skipped.pop(rel_path, None)
        for stub in stored.stubs:
            holders = by_id.setdefault(stub[0], rel_path)
            if holders is not rel_path and holders != rel_path:
                if isinstance(holders, str):
                    by_id[stub[0]] = (holders, rel_path)
                elif rel_path not in holders:
                    by_id[stub[0]] = (*holders, rel_path)
        if stored.stubs:
            sources = folder.by_source.setdefault(stored.stubs[0][1], [])
            if not sources:
                self._paths.add(stored.stubs[0][1])
            sources.append(rel_path)
        if searchable:
            self._make_searchable(folder, stored, terms, chunks)

    def _make_searchable(
        self,
        folder: Folder,
        stored: StoredFile,
        terms: FileTerms | None = None,
        chunks: FileChunks | None = None,
        learned: LearnedTerms | None = None,
    ) -> None:
        rel_path = stored.rel_path
        if terms is not None and folder.deferred is not None:
            folder.deferred[rel_path] = (stored, terms)
            return
        items = ChunkAts(folder, [(rel_path, len(stored.stubs))])
        if terms is not None:
            self.search_index.add_file_terms((folder.position, rel_path), items, terms, learned)
            return
        located = chunks.chunks if chunks is not None else self._unpack(folder, stored)
        self.search_index.add_file(
            (folder.position, rel_path),
            (
                (f"{chunk.chunk_id}\n{chunk.text}", item)
                for chunk, item in zip(located, items, strict=True)
            ),
        )

    def _unpack(self, folder: Folder, stored: StoredFile) -> tuple[LocatedChunk, ...]:
        """A stored file's chunks with their texts (the last few are kept); texts
        the index let go of are read back from the folder's cache."""
        key = (folder, stored.rel_path)
        known = self._unpacked.get(key)
        if known is not None and known[0] is stored:
            return known[1]
        blob = stored.texts
        if blob is None:
            blob = self._cached_texts(folder, stored.rel_path)
            if blob is None:
                # the row is gone (the cache deleted, rebuilt or rewritten by
                # another process): the file itself is the truth
                return self._reread(folder, stored)
        try:
            chunks = unpack(stored, blob)
        except ValueError as error:
            # a damaged blob (from a damaged cache): read the file again
            logger.warning("%s: %s; re-reading the file", folder.absolute(stored.rel_path), error)
            return self._reread(folder, stored)
        if len(self._unpacked) >= UNPACKED_FILES:
            del self._unpacked[next(iter(self._unpacked))]
        self._unpacked[key] = (stored, chunks)
        return chunks

    def _reread(self, folder: Folder, stored: StoredFile) -> tuple[LocatedChunk, ...]:
        """The chunks of a file read again from disk (its texts are not to be had
        from memory or the cache)."""
        self._refresh_file(folder, stored.rel_path)
        fresh = folder.files.get(stored.rel_path)
        if fresh is None or fresh is stored or fresh.texts is None:
            return ()
        return self._unpack(folder, fresh)

    def _cached_texts(self, folder: Folder, rel_path: str) -> bytes | None:
        generation = folder.generations.get(rel_path)
        if folder.cache is None or generation is None:
            return None
        blob = folder.cache.texts(rel_path, generation)
        if blob is None and folder not in self._texts_lost:
            self._texts_lost.add(folder)
            logger.info(
                "%s: chunk texts are no longer in the index cache (cleared, or rewritten by"
                " another chunkls); re-reading files from disk as they are needed (first: %s)",
                folder.root,
                rel_path,
            )
        return blob

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
        rel_paths = list(dict.fromkeys(rel_paths))
        for rel_path in rel_paths:
            path = folder.absolute(rel_path)
            below = [p for p in (*folder.files, *folder.skipped) if p.startswith(rel_path + "/")]
            # os.path's tests answer False for any error (a name too long, say):
            # one bad path in a batch of disk changes must not stop the others
            if os.path.isdir(path) and not os.path.islink(path):
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
        if folder.touched is not None:  # an indexing pass is running: leave these be
            folder.touched.update(rel_paths, changed)
        if folder.cache is not None:
            self._let_go_of_texts(folder, folder.cache.flush())  # one commit for the batch
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
        self._apply(folder, chunk_one(folder.root_resolved, file, folder.rules))

    def _apply(self, folder: Folder, result: Chunked) -> None:
        if result.chunks is None:
            reason = result.skipped or "could not be chunked"
            self.skip_file(folder, result.rel_path, reason)
            if folder.cache is not None and result.stat is not None and not result.link:
                path = os.fspath(folder.absolute(result.rel_path))
                folder.cache.put(
                    result.rel_path,
                    None,
                    _digest_of(path, folder.rules.max_file_size),
                    skipped=(reason, *result.stat),
                )
        else:
            self.set_file(
                folder,
                result.rel_path,
                result.chunks,
                result.terms,
                result.digest,
                cached=not result.link,
            )

    def index_folder(self, folder: Folder, progress: Progress | None = None) -> float:
        """Chunk a whole folder from disk (replacing what it had); returns seconds."""
        started = time.perf_counter()
        for done, total in self.iter_index_folder(folder):
            if progress is not None:
                progress(done, total)
        return time.perf_counter() - started

    def iter_index_folder(self, folder: Folder) -> Iterator[tuple[int, int]]:
        """Index a whole folder step by step, yielding (files done, files in all)
        after each step, so a server can answer requests in between.

        Files that ``refresh`` re-reads meanwhile (a save, a disk change) are
        current already: what this pass read or cached for them earlier is not
        linked over them."""
        folder.touched = set()
        try:
            with bulk_gc():
                walk = walk_corpus(folder.root, folder.rules)
                seen = {file.rel_path for file in walk.files}
                for rel_path in [p for p in (*folder.files, *folder.skipped) if p not in seen]:
                    self.forget_file(folder, rel_path)
                for skipped in walk.skipped:
                    self.skip_file(folder, skipped.rel_path, skipped.reason)
                total = len(walk.files)
                todo: list[CorpusFile] = []
                for settled in self._reuse(folder, walk.files, seen, todo):
                    yield settled, total
                done = total - len(todo)
                yield done, total
                if (
                    self.elsewhere_from is not None
                    and len(todo) >= self.elsewhere_from
                    and folder.cache is not None
                    and folder.cache.usable
                ):
                    finished = yield from self._index_elsewhere(folder, done, total)
                    if finished:  # the cache has it all: load it as a restart would
                        todo = []
                        for settled in self._reuse(folder, walk.files, seen, todo):
                            yield settled, total
                        done = total - len(todo)
                        yield done, total
                folder.deferred = {} if self.long_lived else None
                for result in chunk_many(folder.root_resolved, todo, folder.rules, self.workers):
                    if result is not None:
                        if result.rel_path not in folder.touched:
                            self._apply(folder, result)
                        done += 1
                    yield done, total
                if self.long_lived:
                    for _ in self._search_deferred(folder):
                        yield done, total
                # the index is long-lived and acyclic: keep the collector off it for good
                gc.freeze()
            self.save(folder)
            release_memory()  # what indexing and the snapshot freed
        finally:
            folder.touched = None
            folder.deferred = None

    def _index_elsewhere(
        self, folder: Folder, done: int, total: int
    ) -> Generator[tuple[int, int], None, bool]:
        """Chunk a folder in a separate process that writes its cache, yielding its
        progress; returns whether it finished. The bulk's short-lived objects then
        never share this process's heap with the index it keeps: a server that
        indexed the stdlib cold held ~130 MB more than one restarted on its cache,
        in heap holes. Rows this process writes meanwhile (saves) wait until it
        is done, so that they win over the other's."""
        context = process_context()
        cache = folder.cache
        if context is None or cache is None:
            return False
        if folder in self._elsewhere:
            return False  # one already runs (a second pass over the folder): chunk here
        receiver, sender = context.Pipe(duplex=False)
        process: BaseProcess = context.Process(  # type: ignore[attr-defined]
            target=_index_in_child,
            args=(folder.root, folder.rules, self.cache_dir, self.workers, sender),
            name=f"chunkls-index-{folder.name}",
        )
        cache.held += 1
        try:
            try:
                process.start()
            except OSError as error:
                logger.warning("could not start an indexing process (%s); indexing here", error)
                return False
            finally:
                sender.close()
            self._elsewhere[folder] = process
            while True:
                if receiver.poll(0.002):  # a short wait: the caller may be an event loop
                    try:
                        message = receiver.recv()
                    except EOFError:
                        break
                    if message is None:
                        break
                    done = max(done, message[0])
                elif not process.is_alive():
                    break
                yield done, total
            process.join()
        finally:
            cache.held -= 1
            receiver.close()
            self._elsewhere.pop(folder, None)
            if process.is_alive():  # abandoned (the folder removed, the server exits)
                process.terminate()
                process.join(5)
        if process.exitcode != 0:
            logger.warning(
                "%s: the indexing process failed (exit code %s); indexing here",
                folder.root,
                process.exitcode,
            )
            return False
        return True

    def _search_deferred(self, folder: Folder) -> Iterator[None]:
        """Make the files chunked in bulk searchable, step by step: first every
        new term into the vocabulary, then the postings (with the term ids the
        first pass found), then the vocabulary is frozen into its compact table.
        The term strings, made together in the first pass, die together at the
        freeze; learned file by file among the long-lived chunk records, they
        left ~50 MB of heap holes behind after a cold index of the stdlib.
        (Frozen before the postings, every term would be looked up in the table:
        a third slower.)
        A file changed meanwhile is skipped (it was indexed as it is now)."""
        deferred, folder.deferred = folder.deferred or {}, None

        def current(stored: StoredFile) -> StoredFile | None:
            # the same chunks (the texts may have been let go of since)
            now = folder.files.get(stored.rel_path)
            return now if now is not None and now.stubs is stored.stubs else None

        files = [(stored, terms) for stored, terms in deferred.values() if current(stored)]
        deferred.clear()
        search = self.search_index
        learned: list[LearnedTerms] = []
        for _, terms in files:
            learned.append(search.learn_terms(terms))
            yield
        for (stored, terms), ids in zip(files, learned, strict=True):
            now = current(stored)
            if now is not None:
                self._make_searchable(folder, now, terms, learned=ids)
            yield
        search.freeze_vocabulary(least=FREEZE_FROM)

    def _reuse(
        self, folder: Folder, files: list[CorpusFile], seen: set[str], todo: list[CorpusFile]
    ) -> Iterator[int]:
        """Install the files that are unchanged since they were indexed (in memory
        or in the cache), in steps (yielding how many files are settled); adds
        the files that must be chunked to ``todo``."""
        cache = folder.cache
        loaded = cache.load() if cache is not None else None
        rows = loaded.rows if loaded is not None else {}
        touched = folder.touched if folder.touched is not None else set()
        reused: list[tuple[str, Row]] = []
        for number, file in enumerate(files):
            if number % REUSE_STEP == REUSE_STEP - 1:
                yield number - len(todo) - len(reused)
            rel_path = file.rel_path
            current = folder.files.get(rel_path)
            row = rows.get(rel_path)
            if file.is_symlink or (current is None and row is None):
                todo.append(file)
                continue
            try:
                info = os.stat(file.path)
            except OSError:
                todo.append(file)
                continue
            if current is not None and (current.mtime_ns, current.size) == (
                info.st_mtime_ns,
                info.st_size,
            ):
                continue
            if row is None or cache is None:
                todo.append(file)
                continue
            same = cache.unchanged(row, info.st_mtime_ns, info.st_size, info.st_ctime_ns)
            if same is None:
                same = _digest_of(file.path, folder.rules.max_file_size) == row.digest
                if same:
                    cache.touch(rel_path, row, info.st_mtime_ns)
                    row = row._replace(mtime_ns=info.st_mtime_ns)
            if same:
                reused.append((rel_path, row))
            else:
                todo.append(file)
        if cache is None or loaded is None:
            return
        stale = not reused or bool(todo) or loaded.snapshot is None
        for rel_path in rows.keys() - seen - touched:
            cache.delete(rel_path)
            stale = True
        searchable: list[str] = []
        settled = len(files) - len(todo) - len(reused)
        for number, (rel_path, row) in enumerate(reused):
            if number % REUSE_STEP == REUSE_STEP - 1:
                yield settled + number
            if rel_path in touched:
                continue  # re-read since: current already
            folder.generations[rel_path] = row.generation
            if row.skipped is not None:
                self._link(folder, rel_path, None)
                folder.skipped[rel_path] = row.skipped
                continue
            try:
                stubs = decode_stubs(row.stubs or b"")
            except ValueError:
                cache.delete(rel_path)
                todo.append(CorpusFile(rel_path, os.fspath(folder.absolute(rel_path)), False))
                continue
            stored = StoredFile(rel_path, stubs, None, row.mtime_ns, row.size)
            self._link(folder, rel_path, stored, None, False)
            searchable.append(rel_path)
        searchable = [rel_path for rel_path in searchable if rel_path not in touched]
        stale |= self._search_reused(folder, searchable, loaded.snapshot, loaded.generations, rows)
        folder.snapshot_stale = stale

    def _search_reused(
        self,
        folder: Folder,
        rel_paths: list[str],
        snapshot: Snapshot | None,
        generations: dict[str, int],
        rows: dict[str, Row],
    ) -> bool:
        """Make reused files searchable, from the snapshot where it is current;
        returns whether any had to be tokenized again."""
        via: set[str] = set()
        if snapshot is not None:
            counts = {key[1]: count for key, count in snapshot.files}
            indexed = set(self.search_index.file_keys())
            for rel_path in rel_paths:
                if (
                    generations.get(rel_path) == rows[rel_path].generation
                    and counts.get(rel_path) == len(folder.files[rel_path].stubs)
                    and (folder.position, rel_path) not in indexed
                ):
                    via.add(rel_path)
            if via:
                part = select_files(
                    snapshot, lambda key: (folder.position, key[1]) if key[1] in via else None
                )
                items = ChunkAts(
                    folder, [(key[1], len(folder.files[key[1]].stubs)) for key, _ in part.files]
                )
                try:
                    self.search_index.load_snapshot(part, items)
                except ValueError:
                    via = set()
        rest = [rel_path for rel_path in rel_paths if rel_path not in via]
        for rel_path in rest:
            stored = folder.files.get(rel_path)
            if stored is not None:
                self._make_searchable(folder, stored)
        return bool(rest)

    def save(self, folder: Folder | None = None) -> None:
        """Write pending cache rows, and the search snapshot when it is stale."""
        for each in [folder] if folder is not None else list(self.folders):
            cache = each.cache
            if cache is None or cache.held:
                continue  # (held: another process is writing the folder's cache)
            self._let_go_of_texts(each, cache.flush())
            if each.snapshot_stale:
                keys = [(each.position, rel_path) for rel_path in sorted(each.files)]
                cache.save_snapshot(self.search_index.snapshot(keys), each.generations)
                each.snapshot_stale = False

    def _let_go_of_texts(self, folder: Folder, written: dict[str, int]) -> None:
        """Drop the texts of files whose cache row now holds them."""
        files = folder.files
        for rel_path, generation in written.items():
            stored = files.get(rel_path)
            if (
                stored is not None
                and stored.texts is not None
                and folder.generations.get(rel_path) == generation
            ):
                files[rel_path] = lighter = stored._replace(texts=None)
                known = self._unpacked.get((folder, rel_path))
                if known is not None and known[0] is stored:
                    self._unpacked[(folder, rel_path)] = (lighter, known[1])

    def close(self) -> None:
        """Stop any separate indexing process; save and close every folder's cache."""
        for process in list(self._elsewhere.values()):
            process.terminate()
            process.join(5)
        self.save()
        for folder in self.folders:
            if folder.cache is not None:
                folder.cache.close()

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
                stored = folder.files.get(rel_path)
                if stored is not None:
                    for chunk in self._unpack(folder, stored):
                        yield IndexedChunk(folder, chunk)

    def skipped(self) -> Iterator[tuple[Folder, str, str]]:
        """Every skipped file: (folder, root-relative path, reason), by path."""
        for folder in self.folders:
            for rel_path in sorted(folder.skipped):
                yield folder, rel_path, folder.skipped[rel_path]

    def has_id(self, chunk_id: str) -> bool:
        """Whether any folder has a chunk with this ID (no chunk is read)."""
        return any(chunk_id in folder.by_id for folder in self.folders)

    def lookup(self, chunk_id: str, prefer: Folder | None = None) -> list[IndexedChunk]:
        """Chunks with exactly this ID: in ``prefer`` if it has any, else in any folder."""
        if prefer is not None and chunk_id in prefer.by_id:
            return self._entries(prefer, chunk_id)
        return [entry for folder in self.folders for entry in self._entries(folder, chunk_id)]

    def _entries(self, folder: Folder, chunk_id: str) -> list[IndexedChunk]:
        holders = folder.by_id.get(chunk_id)
        if holders is None:
            return []
        found = []
        for rel_path in (holders,) if isinstance(holders, str) else holders:
            stored = folder.files.get(rel_path)
            if stored is None:
                continue
            positions = _positions_of(stored.stubs, chunk_id)
            if positions:
                chunks = self._unpack(folder, stored)
                found += [
                    IndexedChunk(folder, chunks[n])
                    for n in positions
                    if n < len(chunks) and chunks[n].chunk_id == chunk_id  # not re-read since
                ]
        return found

    def file_chunks(self, folder: Folder, rel_path: str) -> tuple[LocatedChunk, ...]:
        """The indexed chunks of one file (empty when it has none)."""
        stored = folder.files.get(rel_path)
        return self._unpack(folder, stored) if stored is not None else ()

    def search(self, query: str, top_k: int = 10) -> list[Hit[IndexedChunk]]:
        """BM25-ranked chunks for a query."""
        hits = []
        for hit in self.search_index.search(query, top_k):
            at = hit.item
            chunks = self.file_chunks(at.folder, at.rel_path)
            if at.position < len(chunks):
                hits.append(Hit(hit.score, IndexedChunk(at.folder, chunks[at.position])))
        return hits

    def source_paths(self) -> set[str]:
        """Every ``source_path`` that has chunks."""
        return {path for folder in self.folders for path in folder.by_source}

    def suggest(self, chunk_id: str, limit: int = 3) -> list[str]:
        """The existing IDs closest to one that does not resolve, best first
        (remembered until the index changes: a document cites the same
        unknown ID many times)."""
        key = (chunk_id[: SUGGEST_CHARS * 2], limit)
        if self._suggested[0] != self.version:
            self._suggested = (self.version, {})
        known = self._suggested[1].get(key)
        if known is None:
            if len(self._suggested[1]) >= 1024:
                self._suggested[1].clear()
            known = self._suggested[1][key] = self._suggest(chunk_id, limit)
        return list(known)

    def _suggest(self, chunk_id: str, limit: int) -> list[str]:
        path, _, identity = chunk_id.partition("#")
        identity = identity[:SUGGEST_CHARS]
        ids_by_path: dict[str, set[str]] = {}
        for folder in self.folders:
            for rel_path in folder.by_source.get(path, ()):
                ids = ids_by_path.setdefault(path, set())
                ids.update(folder.files[rel_path].chunk_ids())
        if path in ids_by_path:
            candidates = sorted(ids_by_path[path])
            return _closest(identity, candidates, limit, key=lambda cid: cid.partition("#")[2])
        near_paths = difflib.get_close_matches(path, self._near_paths(path), n=3, cutoff=0.6)
        candidates = sorted(
            {
                chunk_id
                for folder in self.folders
                for near in near_paths
                for rel_path in folder.by_source.get(near, ())
                for chunk_id in folder.files[rel_path].chunk_ids()
            }
        )
        return _closest(f"{path}#{identity}"[:SUGGEST_CHARS], candidates, limit)

    def _near_paths(self, path: str) -> list[str]:
        """The source paths sharing the most trigrams with ``path`` (a few)."""
        if not self._paths.built:
            self._paths.build(self.source_paths())
        return self._paths.near(path[:SUGGEST_CHARS])

    # -- query API (temporary copy; h-index has the real one)

    def chunks_of_source(
        self, source_path: str, prefer: Folder | None = None
    ) -> list[LocatedChunk]:
        """The chunks whose ``source_path`` is this one: ``prefer``'s folder first,
        one per chunk ID, in file order."""
        seen: dict[str, LocatedChunk] = {}
        for folder in sorted(self.folders, key=lambda folder: folder is not prefer):
            for rel_path in folder.by_source.get(source_path, ()):
                for chunk in self.file_chunks(folder, rel_path):
                    seen.setdefault(chunk.chunk_id, chunk)
        return list(seen.values())

    def source_paths_starting(self, prefix: str) -> list[str]:
        """The distinct source paths that start with ``prefix``, sorted."""
        return sorted(
            {
                path
                for folder in self.folders
                for path in folder.by_source
                if path.startswith(prefix)
            }
        )


class _PathGrams:
    """Source paths indexed by trigram. Paths are added and dropped one by one
    (a cold index adds thousands while hovers ask for suggestions); a dropped
    path leaves a hole, and the whole is rebuilt when holes are most of it."""

    def __init__(self) -> None:
        self.built = False
        self.paths: list[str | None] = []
        self.numbers: dict[str, int] = {}
        self.grams: dict[str, list[int]] = {}
        self.holes = 0

    def build(self, paths: Iterable[str]) -> None:
        """Index these paths, from scratch."""
        self.paths, self.numbers, self.grams, self.holes = [], {}, {}, 0
        self.built = True
        for path in sorted(paths):
            self.add(path)

    def add(self, path: str) -> None:
        """A source path appeared (in some folder)."""
        if not self.built or path in self.numbers:
            return
        number = len(self.paths)
        self.paths.append(path)
        self.numbers[path] = number
        for gram in _trigrams(path):
            self.grams.setdefault(gram, []).append(number)

    def discard(self, path: str, folders: Iterable[Folder]) -> None:
        """A source path left a folder: dropped unless another folder has it."""
        if not self.built or any(path in folder.by_source for folder in folders):
            return
        number = self.numbers.pop(path, None)
        if number is None:
            return
        self.paths[number] = None
        self.holes += 1
        if self.holes > max(1000, len(self.numbers)):
            self.build(self.numbers)

    def near(self, path: str) -> list[str]:
        """The paths sharing the most trigrams with ``path``, in index order."""
        live = len(self.numbers)
        if live <= SUGGEST_POOL:
            return sorted(self.numbers)
        shared: dict[int, int] = {}
        common = max(SUGGEST_POOL, live // 8)
        for gram in _trigrams(path):
            numbers = self.grams.get(gram, ())
            if len(numbers) > common:
                continue  # ".py", "/__": says nothing
            for number in numbers:
                shared[number] = shared.get(number, 0) + 1
        ranked = sorted(shared, key=lambda number: (-shared[number], number))
        best = [number for number in ranked if self.paths[number] is not None][:SUGGEST_POOL]
        return [self.paths[number] for number in sorted(best)]  # type: ignore[misc]


def _trigrams(text: str) -> set[str]:
    padded = f"  {text.lower()} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def _digest_of(path: str, max_file_size: int) -> bytes | None:
    """The content hash of a regular file (``None``: not one, gone, over the
    size limit or unreadable; a FIFO is never waited on)."""
    try:
        return content_digest(read_regular(path, max_file_size)[0])
    except (FileSkipped, OSError):
        return None


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
    cache_dir: Path | None = None,
    workers: int | None = None,
) -> WorkspaceIndex:
    """Index folders (what the CLI does): from scratch, or only what changed since
    the cache in ``cache_dir`` was written."""
    index = WorkspaceIndex(cache_dir, workers)
    for root in roots:
        index.index_folder(index.add_folder(root, base_rules), progress)
    index.close()
    return index


def _positions_of(stubs: Sequence[Stub], chunk_id: str) -> list[int]:
    """Where a chunk ID sits among a file's stubs (a file can repeat an ID)."""
    ids = list(map(_chunk_id_of, stubs))  # scanned in C, not in a Python loop
    positions: list[int] = []
    at = -1
    for _ in range(ids.count(chunk_id)):
        at = ids.index(chunk_id, at + 1)
        positions.append(at)
    return positions


_chunk_id_of = itemgetter(0)


def _index_in_child(
    root: Path,
    rules: CorpusRules,
    cache_dir: Path | None,
    workers: int | None,
    progress: Connection,
) -> None:
    """A separate indexing process: chunk a folder into its cache, reporting
    (files done, files in all) now and then, ``None`` when done."""
    detach()  # it ends with the server, and keeps off its stdout
    with contextlib.suppress(AttributeError, OSError):  # no nice() on Windows
        os.nice(NICENESS)  # the editor's server comes first
    index = WorkspaceIndex(cache_dir, workers)
    folder = index.add_folder(root, rules=rules)
    last = 0.0
    for done, total in index.iter_index_folder(folder):
        now = time.monotonic()
        if now - last >= 0.05:
            progress.send((done, total))
            last = now
    index.close()
    progress.send(None)
