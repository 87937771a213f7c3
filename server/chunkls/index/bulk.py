"""Bulk indexing: a whole folder chunked by worker processes (or, when large, in
a separate process that writes the cache), unchanged files reused from the cache.

A producer: what it chunks, skips or reuses goes into the store through its one
write path (``ChunkStore.set_file``, ``skip_file``, ``link``, ``forget_file``),
which alone writes cache rows, ``generations`` and ``skipped``.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Generator, Iterator
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from chunkls.chunking.corpus import CorpusFile, CorpusRules, walk_corpus
from chunkls.index.folder import Folder
from chunkls.index.refresh import apply, digest_of
from chunkls.index.store import ChunkStore
from chunkls.index.workers import chunk_many, detach, process_context
from chunkls.runtime.gc_budget import freeze_after_load, no_gc_pauses
from chunkls.runtime.memory import release_memory, tune_allocator
from chunkls.search.inverted import LearnedTerms
from chunkls.storage.cache import Loaded, Row
from chunkls.storage.listing import listing_of
from chunkls.storage.packed import StoredFile, decode_stubs

logger = logging.getLogger("chunkls")

REUSE_STEP = 500
"""Cached files linked between two yields of a warm start."""
FREEZE_FROM = 10_000
"""New terms from which a bulk pass folds them into the vocabulary's table."""
STREAM_BYTES = 8 << 20
"""Chunks waiting for the cache from which a short-lived bulk pass writes them
(and lets go of their texts)."""

Progress = Callable[[int, int], None]
"""Called with (files done, files in all) while a folder is indexed."""


class BulkIndexer:
    """Indexes whole folders of a store from disk (and its cache)."""

    def __init__(
        self,
        store: ChunkStore,
        workers: int | None = None,
        elsewhere_from: int | None = None,
        long_lived: bool = False,
    ) -> None:
        self.store = store
        self.workers = workers
        """Worker processes for indexing many files (``None``: one per CPU)."""
        self.elsewhere_from = elsewhere_from
        """Files to chunk from which a folder with a cache is chunked in a separate
        process, then loaded from the cache (``None``: always in this one)."""
        self.long_lived = long_lived
        """Whether the process keeps this index for long (a language server): files
        are then made searchable once all are chunked (``_search_deferred``); else
        each as it arrives, its chunks streamed to the cache."""
        self.elsewhere: dict[Folder, BaseProcess] = {}

    def iter_index_folder(self, folder: Folder) -> Iterator[tuple[int, int]]:
        """Index a whole folder step by step, yielding (files done, files in all).
        Files ``refresh`` re-reads meanwhile are not linked over by this pass."""
        store = self.store
        tune_allocator()  # large arrays from mmap: given back when the pass frees them
        folder.touched = set()
        try:
            with no_gc_pauses():
                taken_ns = time.time_ns()
                stamps: list[tuple[str, int, int]] = []
                walk = walk_corpus(folder.root, folder.rules, stamps=stamps)
                folder.listing = listing_of(walk, stamps, taken_ns, folder.rules.fingerprint())
                seen = {file.rel_path for file in walk.files}
                for rel_path in [p for p in (*folder.files, *folder.skipped) if p not in seen]:
                    store.forget_file(folder, rel_path)
                for skipped in walk.skipped:
                    store.skip_file(folder, skipped.rel_path, skipped.reason)
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
                stream = None if self.long_lived else folder.cache
                for result in chunk_many(folder.root_resolved, todo, folder.rules, self.workers):
                    if result is not None:
                        if result.rel_path not in folder.touched:
                            apply(store, folder, result)
                        done += 1
                        if stream is not None and stream.pending_bytes >= STREAM_BYTES:
                            store.flush(folder)
                    yield done, total
                if self.long_lived:
                    for _ in self._search_deferred(folder):
                        yield done, total
                elif folder.cache is not None and folder.cache.usable:
                    # one segment, one vocabulary table: the snapshot is saved without a copy
                    release_memory()  # what the chunks streamed to the cache held
                    store.search_index.freeze_vocabulary()  # its dict gone before
                    release_memory()  # what the dict's terms held
                    store.search_index.compact()
                    release_memory()  # what the postings waiting for the merge held
                # the index is long-lived and acyclic: keep the collector off it for good
                freeze_after_load(collect=False)
            store.save(folder)
            release_memory()  # what indexing and the snapshot freed
            store.search_index.release_pages()  # a mapped snapshot's, read to load it
        finally:
            folder.touched = None
            folder.deferred = None

    def _index_elsewhere(
        self, folder: Folder, done: int, total: int
    ) -> Generator[tuple[int, int], None, bool]:
        """Chunk a folder in a separate process that writes its cache, yielding its
        progress; returns whether it finished. Rows this process writes meanwhile
        wait until it is done, so that they win over the other's."""
        context = process_context()
        cache = folder.cache
        if context is None or cache is None or folder in self.elsewhere:
            return False  # (one already runs for a second pass over the folder: chunk here)
        # what the pass before queued (rows found bad, deleted) lands first: held
        # until the other process is done, it would delete the rows it wrote
        self.store.flush(folder)
        receiver, sender = context.Pipe(duplex=False)
        process: BaseProcess = context.Process(  # type: ignore[attr-defined]
            target=_index_in_child,
            args=(folder.root, folder.rules, self.store.cache_dir, self.workers, sender),
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
            self.elsewhere[folder] = process
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
            self.elsewhere.pop(folder, None)
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
        """Make the files chunked in bulk searchable, step by step: every new term
        into the vocabulary, then the postings, then the vocabulary frozen. A
        file changed meanwhile is skipped (it was indexed as it is now)."""
        store = self.store
        deferred, folder.deferred = folder.deferred or {}, None

        def current(stored: StoredFile) -> StoredFile | None:
            # the same chunks (the texts may have been let go of since)
            now = folder.files.get(stored.rel_path)
            return now if now is not None and now.packed is stored.packed else None

        files = [(stored, terms) for stored, terms in deferred.values() if current(stored)]
        deferred.clear()
        search = store.search_index
        learned: list[LearnedTerms] = []
        for _, terms in files:
            learned.append(search.learn_terms(terms))
            yield
        for (stored, terms), ids in zip(files, learned, strict=True):
            now = current(stored)
            if now is not None:
                store.make_searchable(folder, now, terms, learned=ids)
            yield
        search.freeze_vocabulary(least=FREEZE_FROM)

    def _reuse(
        self, folder: Folder, files: list[CorpusFile], seen: set[str], todo: list[CorpusFile]
    ) -> Iterator[int]:
        """Install the files unchanged since they were indexed (in memory or the
        cache), yielding how many are settled; the rest go to ``todo``."""
        store = self.store
        cache = folder.cache
        loaded = cache.load() if cache is not None else None
        rows = loaded.rows if loaded is not None else {}
        touched = folder.touched if folder.touched is not None else set()
        rules = folder.rules
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
            if row is None or cache is None or rules.size_decides(info.st_size, row.skipped):
                todo.append(file)  # (a row made under another size limit: read again)
                continue
            same = cache.unchanged(row, info.st_mtime_ns, info.st_size, info.st_ctime_ns)
            if same is None:
                same = digest_of(file.path, folder.rules.max_file_size) == row.digest
                if same:
                    row = store.restamp(folder, rel_path, row, info.st_mtime_ns)
            if same:
                reused.append((rel_path, row))
            else:
                todo.append(file)
                if current is None and row.skipped is None:
                    self._link_row(folder, rel_path, row)  # (set_file keeps the texts it loses)
        if cache is None or loaded is None:
            return
        stale = not reused or bool(todo) or loaded.snapshot is None
        for rel_path in rows.keys() - seen - touched:
            # a file left out by these corpus rules keeps its row for when it comes
            # back (another --exclude); a file gone from disk loses it
            if not os.path.lexists(folder.absolute(rel_path)):
                store.forget_file(folder, rel_path)
            stale = True
        searchable: list[str] = []
        settled = len(files) - len(todo) - len(reused)
        for number, (rel_path, row) in enumerate(reused):
            if number % REUSE_STEP == REUSE_STEP - 1:
                yield settled + number
            if rel_path in touched:
                continue  # re-read since: current already
            if row.skipped is not None:
                store.link(folder, rel_path, None, row=row)
            elif self._link_row(folder, rel_path, row):
                searchable.append(rel_path)
            else:
                todo.append(CorpusFile(rel_path, os.fspath(folder.absolute(rel_path)), False))
        searchable = [rel_path for rel_path in searchable if rel_path not in touched]
        stale |= self._search_reused(folder, searchable, loaded)
        folder.snapshot_stale = stale

    def _link_row(self, folder: Folder, rel_path: str, row: Row) -> bool:
        """Link a file's chunks as its cache row holds them (not searchable yet);
        false, and the row forgotten, when it is damaged."""
        packed = row.stubs or b""
        try:
            stubs = decode_stubs(packed)
        except ValueError:
            self.store.forget_file(folder, rel_path)
            return False
        stored = StoredFile(rel_path, packed, len(stubs), None, row.mtime_ns, row.size)
        self.store.link(folder, rel_path, stored, None, False, stubs=stubs, row=row)
        return True

    def _search_reused(self, folder: Folder, rel_paths: list[str], loaded: Loaded) -> bool:
        """Make reused files searchable, from the cache's snapshot where it is
        current; returns whether any had to be tokenized again."""
        store = self.store
        snapshot, generations, rows = loaded.snapshot, loaded.generations, loaded.rows
        via: set[str] = set()
        if snapshot is not None:
            counts = {key[1]: count for key, count in snapshot.files}
            indexed = set(store.search_index.file_keys())
            for rel_path in rel_paths:
                if (
                    generations.get(rel_path) == rows[rel_path].generation
                    and counts.get(rel_path) == folder.files[rel_path].chunk_count
                    and (folder.position, rel_path) not in indexed
                ):
                    via.add(rel_path)
            if via:  # the whole snapshot, the files not taken from it removed: no copy
                whole = snapshot._replace(
                    files=[((folder.position, key[1]), count) for key, count in snapshot.files]
                )
                gone = {key for key, _ in whole.files if key[1] not in via}
                items = range(sum(count for _, count in whole.files))  # (found by order key)
                try:
                    store.search_index.load_snapshot(whole, items, gone)
                except ValueError:
                    via = set()
        rest = [rel_path for rel_path in rel_paths if rel_path not in via]
        for rel_path in rest:
            stored = folder.files.get(rel_path)
            if stored is not None:
                store.make_searchable(folder, stored)
        return bool(rest)

    def stop(self) -> None:
        """Stop any separate indexing process."""
        for process in list(self.elsewhere.values()):
            process.terminate()
            process.join(5)


def _index_in_child(
    root: Path,
    rules: CorpusRules,
    cache_dir: Path | None,
    workers: int | None,
    progress: Connection,
) -> None:
    """A separate indexing process: chunk a folder into its cache, reporting
    (files done, files in all) now and then, ``None`` when done."""
    detach()  # it ends with the server, keeps off its stdout and gives way to it
    store = ChunkStore(cache_dir)
    folder = store.add_folder(root, rules=rules)
    last = 0.0
    for done, total in BulkIndexer(store, workers).iter_index_folder(folder):
        now = time.monotonic()
        if now - last >= 0.05:
            progress.send((done, total))
            last = now
    store.close()
    progress.send(None)
