"""The chunk store: every folder's chunks by file, by ID and by source path, the
search postings over them, and the read-only lookups every front door asks.

One path changes a file's chunks: ``set_file`` (with ``link`` under it, which
bulk indexing also uses for files it reuses from the cache), so the chunk
maps, the search postings and the cache rows never disagree.

A lookup only reads. A file's texts come from memory or from its row in the
folder's cache (``chunkls.storage.packed`` packs them); a file whose texts are in
neither (the cache cleared, or rewritten by another process) answers no
chunks, is recorded in ``texts_missing`` and ``on_texts_missing`` is told.
Reading such files again is an explicit step (``WorkspaceIndex.recover_texts``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Protocol

from chunkls.chunking import ConfigProblem, CorpusRules, FileChunks, LocatedChunk, load_rules
from chunkls.index.folder import ChunkAt, ChunkAts, Folder, IndexedChunk, innermost
from chunkls.search.bm25 import Hit
from chunkls.search.inverted import BM25Index, LearnedTerms
from chunkls.search.tokens import FileTerms
from chunkls.storage.cache import FolderCache, store_path
from chunkls.storage.packed import StoredFile, Stub, pack, unpack

logger = logging.getLogger("chunkls")

UNPACKED_FILES = 64
"""Files whose chunks stay unpacked after a lookup (hovers come in runs)."""


class SourceWatcher(Protocol):
    """Told when a source path gains its first file or loses its last one."""

    def source_added(self, path: str) -> None:
        """A source path appeared (in some folder)."""

    def source_dropped(self, path: str) -> None:
        """A source path left a folder."""


class ChunkStore:
    """The chunks of the workspace folders, by file, by ID and searchable."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.folders: list[Folder] = []
        """Workspace folders in order."""
        self.search_index: BM25Index[ChunkAt] = BM25Index()
        """BM25 postings over every chunk's ID and text."""
        self.cache_dir = cache_dir
        """Where folders keep their persistent index (``None``: no cache)."""
        self.folders_version = 0
        """Bumped whenever a folder is added or removed (memoised lookups check it)."""
        self.version = 0
        """Bumped whenever a file's chunks change."""
        self.texts_missing: set[tuple[Folder, str]] = set()
        """(folder, root-relative path) of the files whose chunk texts a read found
        neither in memory nor in the cache (until they are linked again)."""
        self.on_texts_missing: Callable[[Folder, str], None] | None = None
        """Called with (folder, root-relative path) when a file joins ``texts_missing``."""
        self.source_watcher: SourceWatcher | None = None
        """Told as source paths come and go (the ID suggestions' path index)."""
        self._unpacked: dict[tuple[Folder, str], tuple[StoredFile, tuple[LocatedChunk, ...]]] = {}
        """The files unpacked last (a few), with the stored entry they came from."""
        self._decoded: dict[bytes, tuple[Stub, ...]] = {}
        """The stubs decoded last (a few), by their blob (``_stubs``)."""
        self._texts_lost: set[Folder] = set()
        """Folders whose cache lost texts the index relied on (logged once each)."""

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
        self.link(folder, rel_path, stored, terms, chunks=located)
        if folder.cache is not None:
            folder.snapshot_stale = True
            folder.generations.pop(rel_path, None)
            if stored is None or not cached:
                folder.cache.delete(rel_path)
            else:
                folder.generations[rel_path] = folder.cache.put(rel_path, stored, digest)

    def skip_file(self, folder: Folder, rel_path: str, reason: str) -> None:
        """Record that a file cannot be chunked (its old chunks are dropped)."""
        self.set_file(folder, rel_path, None)
        folder.skipped[rel_path] = reason

    def forget_file(self, folder: Folder, rel_path: str) -> None:
        """A file left the corpus (deleted, excluded): drop chunks and skip notes."""
        self.set_file(folder, rel_path, None)
        folder.skipped.pop(rel_path, None)

    def link(
        self,
        folder: Folder,
        rel_path: str,
        stored: StoredFile | None,
        terms: FileTerms | None = None,
        searchable: bool = True,
        chunks: FileChunks | None = None,
        stubs: tuple[Stub, ...] | None = None,
    ) -> None:
        """Put a file's stored chunks in the maps (and the postings, if
        ``searchable``), replacing what it had; the cache is not written.
        ``stubs``: the stored file's, when the caller has them decoded."""
        old = folder.files.pop(rel_path, None)
        self._unpacked.pop((folder, rel_path), None)
        self.texts_missing.discard((folder, rel_path))
        self.version += 1
        by_id = folder.by_id
        if old is not None:
            by_id.remove(rel_path)
            source = old.stubs[0][1] if old.chunk_count else None
            sources = folder.by_source.get(source) if source is not None else None
            if source is not None and sources is not None and rel_path in sources:
                sources.remove(rel_path)
                if not sources:
                    del folder.by_source[source]
                    if self.source_watcher is not None:
                        self.source_watcher.source_dropped(source)
            self.search_index.remove_file((folder.position, rel_path))
        if stored is None:
            return
        folder.files[rel_path] = stored
        folder.skipped.pop(rel_path, None)
        if stubs is None:
            stubs = stored.stubs
        by_id.add(rel_path, map(_chunk_id_of, stubs))
        if stubs:
            sources = folder.by_source.setdefault(stubs[0][1], [])
            if not sources and self.source_watcher is not None:
                self.source_watcher.source_added(stubs[0][1])
            sources.append(rel_path)
        if searchable:
            self.make_searchable(folder, stored, terms, chunks)

    def make_searchable(
        self,
        folder: Folder,
        stored: StoredFile,
        terms: FileTerms | None = None,
        chunks: FileChunks | None = None,
        learned: LearnedTerms | None = None,
    ) -> None:
        """Add a linked file's chunks to the search postings (deferred while a
        bulk pass collects them; left out while its texts are missing)."""
        rel_path = stored.rel_path
        if terms is not None and folder.deferred is not None:
            folder.deferred[rel_path] = (stored, terms)
            return
        items = ChunkAts(folder, [(rel_path, stored.chunk_count)])
        if terms is not None:
            self.search_index.add_file_terms((folder.position, rel_path), items, terms, learned)
            return
        located = chunks.chunks if chunks is not None else self._unpack(folder, stored)
        if len(located) != stored.chunk_count:
            return  # its texts are missing: searchable once recovered
        self.search_index.add_file(
            (folder.position, rel_path),
            (
                (f"{chunk.chunk_id}\n{chunk.text}", item)
                for chunk, item in zip(located, items, strict=True)
            ),
        )

    def save(self, folder: Folder | None = None) -> None:
        """Write pending cache rows, and the search snapshot when it is stale."""
        for each in [folder] if folder is not None else list(self.folders):
            cache = each.cache
            if cache is None or cache.held:
                continue  # (held: another process is writing the folder's cache)
            self.let_go_of_texts(each, cache.flush())
            if each.snapshot_stale:
                keys = [(each.position, rel_path) for rel_path in sorted(each.files)]
                cache.save_snapshot(self.search_index.snapshot(keys), each.generations)
                each.snapshot_stale = False
                self.search_index.release_pages()  # a mapped snapshot's: all were read
            if each.listing is not None:
                cache.save_listing(each.listing)
                each.listing = None

    def close(self) -> None:
        """Save and close every folder's cache."""
        self.save()
        for folder in self.folders:
            if folder.cache is not None:
                folder.cache.close()

    def let_go_of_texts(self, folder: Folder, written: dict[str, int]) -> None:
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

    # -- texts: from memory or the cache, never from the file ----------------------

    def _unpack(self, folder: Folder, stored: StoredFile) -> tuple[LocatedChunk, ...]:
        """A stored file's chunks with their texts (the last few are kept); texts
        the index let go of are read back from the folder's cache. Empty when
        they are not to be had (the file is then recorded as missing them)."""
        if not stored.chunk_count:
            return ()
        key = (folder, stored.rel_path)
        known = self._unpacked.get(key)
        if known is not None and known[0] is stored:
            return known[1]
        blob = stored.texts
        if blob is None:
            blob = self._cached_texts(folder, stored.rel_path)
            if blob is None:
                # the row is gone (the cache deleted, rebuilt or rewritten by
                # another process): only the file can tell them again
                self._texts_missing(folder, stored.rel_path)
                return ()
        try:
            chunks = unpack(stored, blob)
        except ValueError as error:
            # a damaged blob (from a damaged cache): only the file can tell them again
            if key not in self.texts_missing:
                logger.warning("%s: %s", folder.absolute(stored.rel_path), error)
            self._texts_missing(folder, stored.rel_path)
            return ()
        if len(self._unpacked) >= UNPACKED_FILES:
            del self._unpacked[next(iter(self._unpacked))]
        self._unpacked[key] = (stored, chunks)
        return chunks

    def _stubs(self, stored: StoredFile) -> tuple[Stub, ...]:
        """A file's stubs, decoded (the last few are kept: the IDs a document
        cites are mostly in a few files)."""
        stubs = self._decoded.get(stored.packed)
        if stubs is None:
            stubs = stored.stubs
            if len(self._decoded) >= UNPACKED_FILES:
                del self._decoded[next(iter(self._decoded))]
            self._decoded[stored.packed] = stubs
        return stubs

    def _texts_missing(self, folder: Folder, rel_path: str) -> None:
        key = (folder, rel_path)
        if key in self.texts_missing:
            return
        self.texts_missing.add(key)
        if self.on_texts_missing is not None:
            self.on_texts_missing(folder, rel_path)

    def _cached_texts(self, folder: Folder, rel_path: str) -> bytes | None:
        generation = folder.generations.get(rel_path)
        if folder.cache is None or generation is None:
            return None
        blob = folder.cache.texts(rel_path, generation)
        if blob is None and folder not in self._texts_lost:
            self._texts_lost.add(folder)
            logger.info(
                "%s: chunk texts are no longer in the index cache (cleared, or rewritten by"
                " another chunkls); the files are to be read again (first: %s)",
                folder.root,
                rel_path,
            )
        return blob

    # -- the query API: reading only ----------------------------------------------

    def __len__(self) -> int:
        return len(self.search_index)

    def folder_of(self, path: str | Path) -> tuple[Folder, str] | None:
        """The innermost folder containing an absolute path, and the relative path."""
        return innermost(self.folders, path)

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
        """Whether any folder has a chunk with this ID (no chunk is read: the
        map's 96-bit keys tell, ``chunkls.index.id_map``)."""
        return any(folder.by_id.get(chunk_id) for folder in self.folders)

    def ids(self, folder: Folder) -> set[str]:
        """Every chunk ID of a folder."""
        return {stub[0] for stored in folder.files.values() for stub in stored.stubs}

    def lookup(self, chunk_id: str, prefer: Folder | None = None) -> list[IndexedChunk]:
        """Chunks with exactly this ID: in ``prefer`` if it has any, else in any folder."""
        holding = self._holding(prefer, chunk_id) if prefer is not None else None
        if prefer is not None and holding:
            return self._entries(prefer, chunk_id, holding)
        return [entry for folder in self.folders for entry in self._entries(folder, chunk_id)]

    def _holding(self, folder: Folder, chunk_id: str) -> list[tuple[StoredFile, list[int]]]:
        """The files of a folder with chunks of this ID, and where in each."""
        found = []
        for rel_path in folder.by_id.get(chunk_id):
            stored = folder.files.get(rel_path)
            if stored is not None:
                positions = positions_of(self._stubs(stored), chunk_id)  # not another ID's
                if positions:
                    found.append((stored, positions))
        return found

    def resolve_first(
        self, candidate_ids: Iterable[str], prefer: Folder | None = None
    ) -> list[IndexedChunk]:
        """The chunks of the first candidate ID that resolves (empty if none does)."""
        for chunk_id in candidate_ids:
            found = self.lookup(chunk_id, prefer)
            if found:
                return found
        return []

    def _entries(
        self,
        folder: Folder,
        chunk_id: str,
        holding: list[tuple[StoredFile, list[int]]] | None = None,
    ) -> list[IndexedChunk]:
        found = []
        for stored, positions in self._holding(folder, chunk_id) if holding is None else holding:
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

    def chunks_of_source(
        self, source_path: str, prefer: Folder | None = None
    ) -> list[LocatedChunk]:
        """The chunks whose ``source_path`` is this one, ``prefer``'s first, one per
        chunk ID, in file order."""
        seen: dict[str, LocatedChunk] = {}
        for folder in sorted(self.folders, key=lambda folder: folder is not prefer):
            for rel_path in folder.by_source.get(source_path, ()):
                for chunk in self.file_chunks(folder, rel_path):
                    seen.setdefault(chunk.chunk_id, chunk)
        return list(seen.values())

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

    def source_paths_starting(self, prefix: str) -> list[str]:
        """The distinct ``source_path``s that start with ``prefix``, sorted."""
        return sorted(
            {
                path
                for folder in self.folders
                for path in folder.by_source
                if path.startswith(prefix)
            }
        )


def positions_of(stubs: Sequence[Stub], chunk_id: str) -> list[int]:
    """Where a chunk ID sits among a file's stubs (a file can repeat an ID)."""
    ids = list(map(_chunk_id_of, stubs))  # scanned in C, not in a Python loop
    positions: list[int] = []
    at = -1
    for _ in range(ids.count(chunk_id)):
        at = ids.index(chunk_id, at + 1)
        positions.append(at)
    return positions


_chunk_id_of = itemgetter(0)
