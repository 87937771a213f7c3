"""The chunk store: every folder's chunks and postings, and the one implementation of
``Queries``. One path changes a file's chunks, ``set_file`` (``link`` under it), so maps,
postings and cache rows never disagree; only the session's write step calls it. A question
only reads: a file whose texts are nowhere answers none and joins ``texts_missing``."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from chunkls.chunking.corpus import ConfigProblem, CorpusRules, load_rules
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.index.folder import Folder, FolderInfo, IndexedChunk, held, innermost
from chunkls.index.unpacked import Unpacked
from chunkls.runtime.log import logger
from chunkls.search import DEFAULT_MODE
from chunkls.search.definitions import chunk_terms
from chunkls.search.scorer import Hit, Part, PostingsSource
from chunkls.storage.cache import FolderCache, Row, store_path
from chunkls.storage.packed import StoredFile, Stub, decode_stubs, pack, positions_of, unpack_stubs

if TYPE_CHECKING:
    from chunkls.chunking.ingest import FileChunks
    from chunkls.ids.grammar import ChunkRef
    from chunkls.index.browse import Page, Place
    from chunkls.index.citations import Citation, CitationIndex, Problem
    from chunkls.index.folder import FoundChunk, ListedChunk
    from chunkls.index.history import GitHistory
    from chunkls.index.replacement import ChunkHistory, Replacement, TextIndex
    from chunkls.index.suggest import PathGrams, Suggestions
    from chunkls.search.inverted import BM25Index, LearnedTerms
    from chunkls.search.tokens import FileTerms
    from chunkls.storage.in_place import InPlace

# numpy (the in-memory postings) and the ID grammar (citations) are imported on
# first use: a store that reads its folder in place for a search imports neither


DECODED_FILES = 1024
"""Files whose stubs stay decoded (a search ranks a hundred chunks by theirs)."""
Skip = tuple[bytes | None, int, int]


class ChunkStore:
    """The workspace folders' chunks: the implementation of ``Queries``."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.folders: list[Folder] = []
        self.cache_dir = cache_dir
        """Where folders keep their persistent index (``None``: no cache)."""
        self.folders_version = 0
        self.version = 0
        self.texts_missing: set[tuple[Folder, str]] = set()
        """(folder, rel_path) of files whose texts a read found nowhere (until linked again)."""
        self.source_watcher: PathGrams | None = None
        """Told when a source path gains its first file or loses its last one."""
        self._unpacked = Unpacked()
        self._decoded: dict[bytes, tuple[Stub, ...]] = {}
        """The stubs decoded last, by their blob (``_stubs``)."""
        self.git_histories: dict[Folder, GitHistory] = {}
        """Each folder's git history, opened by the write step once a question wanted it."""
        self.histories_wanted: set[Folder] = set()
        """Folders whose git history a question wanted before it was open (``incomplete``)."""
        self._text_index: tuple[int, TextIndex] | None = None

    @cached_property
    def history(self) -> ChunkHistory:
        """Texts of chunks that left the index (to suggest what a renamed one became)."""
        from chunkls.index.replacement import ChunkHistory

        return ChunkHistory()

    @cached_property
    def citations(self) -> CitationIndex:
        """The chunk IDs cited in the workspace's documents (those scanned)."""
        from chunkls.index.citations import CitationIndex

        return CitationIndex()

    @cached_property
    def suggestions(self) -> Suggestions:
        """The IDs closest to one that does not resolve."""
        from chunkls.index.suggest import Suggestions

        return Suggestions(self)

    @cached_property
    def search_index(self) -> BM25Index[int]:
        """The in-memory BM25 postings over every loaded chunk's ID and text."""
        from chunkls.search.inverted import BM25Index

        return BM25Index()

    @property
    def postings(self) -> PostingsSource:
        """The postings searches read: a folder's read in place, else the in-memory index."""
        for folder in self.folders:
            if (postings := folder.storage.postings) is not None:
                return postings
        return self.search_index

    # -- reading a folder in place (the session's write step sets and ends it) ------

    def read_in_place(self, folder: Folder, in_place: InPlace) -> None:
        """Answer the only folder, not loaded (``Session.try_in_place``), from its cache."""
        folder.in_place = folder.storage = in_place
        in_place.decode = self._stubs  # (decoded once: what a search checks, it reads)
        folder.skipped = dict(in_place.skipped)
        self.version += 1

    def stop_reading_in_place(self, folder: Folder) -> None:
        """Let go of a folder's cache read in place: its maps answer from now on."""
        if folder.in_place is not None:
            folder.in_place.close()
            folder.in_place, folder.storage = None, folder
            self.version += 1

    # -- folders ---------------------------------------------------------------

    def add_folder(
        self, root: Path, base_rules: CorpusRules | None = None, rules: CorpusRules | None = None
    ) -> Folder:
        """Register a folder (not indexed yet) with its configured rules, or ``rules``."""
        problems: list[ConfigProblem] = []
        if rules is None:
            rules, problems = load_rules(root, base_rules)
        position = max((folder.position for folder in self.folders), default=-1) + 1
        folder = Folder(root, rules, position, problems)
        if self.cache_dir is not None:
            path = store_path(folder.root_resolved, self.cache_dir)
            folder.cache = FolderCache(path, folder.root_resolved)
        self.folders.append(folder)
        self.folders_version += 1
        return folder

    def remove_folder(self, folder: Folder) -> None:
        """Drop a folder and all of its chunks (its cache stays for next time)."""
        self.save(folder)
        history = self.git_histories.pop(folder, None)
        if history is not None:
            history.close()
        self.histories_wanted.discard(folder)
        if folder.cache is not None:
            folder.cache.close()
            folder.cache = None
        self.folders.remove(folder)
        for rel_path in list(folder.files):
            self.set_file(folder, rel_path, None)
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
        """Replace one file's chunks (``None``: gone or skipped): the one write path. ``terms``:
        counted already; ``digest``: the content hash; ``cached`` false: not cached (a symlink)."""
        stored = chunks if chunks is None or isinstance(chunks, StoredFile) else pack(chunks)
        located = None if isinstance(chunks, StoredFile) else chunks
        old = folder.files.get(rel_path)
        if old is not None and old.chunk_count and folder in self.folders:  # (not removed)
            kept = {stub[0] for stub in self._stubs(stored.packed)} if stored else set()
            if not all(stub[0] in kept for stub in self._stubs(old.packed)):  # (a save keeps all)
                old_chunks = self._unpack(folder, old)  # their texts: what a stale ID became
                gone = {c.chunk_id: c.text for c in old_chunks if c.chunk_id not in kept}
                self.history.forget_ids(gone)
                if folder.cache is not None:
                    folder.cache.remember_gone(gone)
        self.link(folder, rel_path, stored, terms, chunks=located)
        if folder.cache is not None:
            folder.snapshot_stale = True
            folder.generations.pop(rel_path, None)
            if stored is None or not cached:
                folder.cache.delete(rel_path)
            else:
                folder.generations[rel_path] = folder.cache.put(rel_path, stored, digest)

    def skip_file(
        self, folder: Folder, rel_path: str, reason: str, row: Skip | None = None
    ) -> None:
        """Record that a file cannot be chunked; ``row`` (hash, mtime, size) cached with it."""
        self.set_file(folder, rel_path, None)
        folder.skipped[rel_path] = reason
        if row is not None and folder.cache is not None:
            folder.cache.put(rel_path, None, row[0], skipped=(reason, *row[1:]))

    def restamp(self, folder: Folder, rel_path: str, row: Row, mtime_ns: int) -> Row:
        """A file's cache row with its new mtime (its content hash the same)."""
        if folder.cache is not None:
            folder.cache.touch(rel_path, row, mtime_ns)
        return row._replace(mtime_ns=mtime_ns)

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
        row: Row | None = None,
    ) -> None:
        """Put a file's stored chunks in the maps (and postings, if ``searchable``); the cache
        is not written (``row``: the one they are from)."""
        if row is not None:
            folder.generations[rel_path] = row.generation
            if row.skipped is not None:
                folder.skipped[rel_path] = row.skipped
        old = folder.files.pop(rel_path, None)
        self._unpacked.pop((folder, rel_path))
        self.texts_missing.discard((folder, rel_path))
        self.version += 1
        by_id = folder.by_id
        if old is not None:
            if stored is None or stored.packed != old.packed:
                self._decoded.pop(old.packed, None)  # (no file holds those stubs now)
            by_id.remove(rel_path)
            source = old.stubs[0][1] if old.chunk_count else None
            if source is not None and rel_path in (sources := folder.by_source.get(source, [])):
                sources.remove(rel_path)
                if not sources:
                    del folder.by_source[source]
                    if self.source_watcher is not None:
                        self.source_watcher.discard(source, self.folders)
            self.search_index.remove_file((folder.position, rel_path))
        if stored is None:
            return
        folder.files[rel_path] = stored
        folder.skipped.pop(rel_path, None)
        stubs = stored.stubs if stubs is None else stubs
        by_id.add(rel_path, map(_chunk_id_of, stubs))
        if stubs:
            sources = folder.by_source.setdefault(stubs[0][1], [])
            if not sources and self.source_watcher is not None:
                self.source_watcher.add(stubs[0][1])
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
        """Add a linked file's chunks to the postings (deferred in bulk; none without texts)."""
        rel_path = stored.rel_path
        if terms is not None and folder.deferred is not None:
            folder.deferred[rel_path] = (stored, terms)
            return
        items = range(stored.chunk_count)  # a search finds a chunk by its order key
        if terms is not None:
            self.search_index.add_file_terms((folder.position, rel_path), items, terms, learned)
            return
        located = chunks.chunks if chunks is not None else self._unpack(folder, stored)
        if len(located) != stored.chunk_count:
            return  # its texts are missing: searchable once recovered
        self.search_index.add_file_terms((folder.position, rel_path), items, chunk_terms(located))

    def save(self, folder: Folder | None = None) -> None:
        """Write pending cache rows, and the search snapshot when it is stale."""
        for each in [folder] if folder is not None else list(self.folders):
            cache = each.cache
            if cache is None or cache.held or each.read_in_place:
                continue  # (held: another process is writing the folder's cache)
            self.flush(each)
            if each.snapshot_stale:
                keys = [(each.position, rel_path) for rel_path in sorted(each.files)]
                cache.save_snapshot(self.search_index.snapshot(keys), each.generations)
                each.snapshot_stale = False
                self.search_index.release_pages()  # a mapped snapshot's: all were read
            if each.listing is not None:
                cache.save_listing(each.listing)
                each.listing = None

    def close(self) -> None:
        """Save and close every folder's cache (and let go of those read in place)."""
        for history in self.git_histories.values():
            history.close()
        self.save()
        for folder in self.folders:
            self.stop_reading_in_place(folder)
            if folder.cache is not None:
                folder.cache.close()

    def flush(self, folder: Folder) -> None:
        """Write a folder's pending cache rows; let go of the texts they now hold."""
        for rel_path, generation in folder.cache.flush().items() if folder.cache else ():
            stored = folder.files.get(rel_path)
            if (
                stored
                and stored.texts is not None
                and folder.generations.get(rel_path) == generation
            ):
                folder.files[rel_path] = lighter = stored._replace(texts=None)
                self._unpacked.replace((folder, rel_path), stored, lighter)

    # -- texts: from memory or the cache, never from the file ----------------------

    def _unpack(self, folder: Folder, stored: StoredFile) -> tuple[LocatedChunk, ...]:
        """A stored file's chunks with their texts; none (and recorded) when not to be had."""
        if not stored.chunk_count:
            return ()
        key = (folder, stored.rel_path)
        known = self._unpacked.get(key, stored)
        if known is not None:
            return known
        blob = stored.texts
        if blob is None:
            blob = folder.storage.texts(stored.rel_path)
            if blob is None:  # the row is gone: only the file can tell them again
                self.texts_missing.add(key)
                return ()
        try:  # the stubs as kept (a search has just read its candidates')
            chunks = unpack_stubs(self._stubs(stored.packed), blob)
        except ValueError as error:  # a damaged blob
            if key not in self.texts_missing:
                logger().warning("%s: %s", folder.absolute(stored.rel_path), error)
            self.texts_missing.add(key)
            return ()
        self._unpacked.put(key, stored, chunks)
        return chunks

    def _stubs(self, packed: bytes) -> tuple[Stub, ...]:
        """A file's stubs (its ``packed`` blob), decoded (the last few are kept)."""
        stubs = self._decoded.get(packed)
        if stubs is None:
            stubs = decode_stubs(packed)
            if len(self._decoded) >= DECODED_FILES:
                del self._decoded[next(iter(self._decoded))]
            self._decoded[packed] = stubs
        return stubs

    # -- the query API: reading only ----------------------------------------------

    def __len__(self) -> int:
        return self.postings.live

    @property
    def incomplete(self) -> bool:
        return (
            bool(self.texts_missing)
            or bool(self.histories_wanted)
            or any(folder.storage.stale is not None for folder in self.folders)
        )

    def folder_of(self, path: str | Path) -> tuple[Folder, str] | None:
        return innermost(self.folders, path)

    def file_count(self) -> int:
        return sum(folder.storage.file_count() for folder in self.folders)

    def file_paths(self) -> Iterator[tuple[Folder, str]]:
        for folder in sorted(self.folders, key=lambda f: f.position):
            yield from ((folder, rel_path) for rel_path in folder.storage.paths())

    def sources(self, source_path: str) -> list[tuple[FolderInfo, str]]:
        return [(f, rel_path) for f in self.folders for rel_path in f.storage.sources(source_path)]

    def chunks(self) -> Iterator[IndexedChunk]:
        for folder, rel_path in self.file_paths():
            yield from (IndexedChunk(folder, c) for c in self.file_chunks(folder, rel_path))

    def chunk_ids(self) -> Iterator[str]:
        for folder in sorted(self.folders, key=lambda f: f.position):
            for _, packed in folder.storage.all_stubs():  # every file once: not kept
                yield from [stub[0] for stub in self._decoded.get(packed) or decode_stubs(packed)]

    def skipped(self) -> Iterator[tuple[Folder, str, str]]:
        for folder in self.folders:
            yield from ((folder, path, folder.skipped[path]) for path in sorted(folder.skipped))

    def skip_reason(self, rel_path: str, folder: FolderInfo | None = None) -> str | None:
        folders = self.folders if folder is None else [held(folder)]
        return next((f.skipped[rel_path] for f in folders if rel_path in f.skipped), None)

    def has_id(self, chunk_id: str) -> bool:
        if chunk_id.startswith("/"):
            return any(self._holding(f, rel_id) for f, rel_id in self._rooted(chunk_id))
        return any(folder.storage.holds(chunk_id) for folder in self.folders)

    def lookup(self, chunk_id: str, prefer: FolderInfo | None = None) -> list[IndexedChunk]:
        if chunk_id.startswith("/"):
            return [e for f, rel_id in self._rooted(chunk_id) for e in self._entries(f, rel_id)]
        if prefer is not None and (holding := self._holding(mine := held(prefer), chunk_id)):
            return self._entries(mine, chunk_id, holding)
        return [entry for folder in self.folders for entry in self._entries(folder, chunk_id)]

    def _holding(self, folder: Folder, chunk_id: str) -> list[tuple[StoredFile, list[int]]]:
        """The files of a folder with chunks of this ID, and where in each."""
        found = []
        for rel_path in folder.storage.holding(chunk_id):
            stored = self._stored(folder, rel_path)
            if stored is not None:
                positions = positions_of(self._stubs(stored.packed), chunk_id)  # not another ID's
                if positions:
                    found.append((stored, positions))
        return found

    def _rooted(self, chunk_id: str) -> list[tuple[Folder, str]]:
        """An absolute-path ID as the ID relative to each root that holds it (as given, or
        resolved), innermost first. Only the text is compared: nothing on disk is read."""
        path, hash_, identity = chunk_id.rpartition("#")
        path = posixpath.normpath(path) if hash_ else ""
        found: list[tuple[int, Folder, str]] = []
        for folder in self.folders:
            for root in dict.fromkeys((folder.root.as_posix(), folder.root_resolved.as_posix())):
                prefix = root.rstrip("/") + "/"
                if path.startswith(prefix) and len(path) > len(prefix):
                    found.append((-len(prefix), folder, f"{path[len(prefix) :]}#{identity}"))
                    break
        return [(folder, rel_id) for _, folder, rel_id in sorted(found, key=itemgetter(0))]

    def written_id(self, ref: ChunkRef) -> tuple[str, bool]:
        from chunkls.ids.grammar import RootedRef

        if not isinstance(ref, RootedRef):
            return ref.chunk_id, False
        inside = self._rooted(f"/{ref.chunk_id}")
        if inside:
            return inside[0][1], False
        path = ref.path
        known = self.skip_reason(path) is not None or bool(self.sources(path))
        return ref.chunk_id, not known

    def resolve_first(
        self, candidate_ids: Iterable[str], prefer: FolderInfo | None = None
    ) -> list[IndexedChunk]:
        return next((found for i in candidate_ids if (found := self.lookup(i, prefer))), [])

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

    def suggest(self, chunk_id: str, limit: int = 3) -> list[str]:
        return self.suggestions.suggest(chunk_id, limit)

    def file_chunks(self, folder: FolderInfo, rel_path: str) -> tuple[LocatedChunk, ...]:
        stored = self._stored(mine := held(folder), rel_path)
        return self._unpack(mine, stored) if stored is not None else ()

    def chunk_at(self, folder: FolderInfo, rel_path: str, line: int) -> LocatedChunk | None:
        chunks = self.file_chunks(folder, rel_path)
        return next((c for c in chunks if c.start_line <= line <= c.end_line), None)

    def _stored(self, folder: Folder, rel_path: str) -> StoredFile | None:
        """A file's chunks as kept (one the cache fails to give: recorded as missing)."""
        stored = folder.storage.stored(rel_path)
        if stored is None and folder.storage.has(rel_path):
            self.texts_missing.add((folder, rel_path))
        return stored

    def chunks_of_source(
        self, source_path: str, prefer: FolderInfo | None = None
    ) -> list[LocatedChunk]:
        seen: dict[str, LocatedChunk] = {}
        for folder in sorted(self.folders, key=lambda folder: folder is not prefer):
            for rel_path in folder.storage.sources(source_path):
                for chunk in self.file_chunks(folder, rel_path):
                    seen.setdefault(chunk.chunk_id, chunk)
        return list(seen.values())

    def search_mode(self, requested: str | None = None) -> str:
        configured = self.folders[0].rules.search_mode if self.folders else None
        return requested or configured or DEFAULT_MODE

    def search(
        self,
        query: str,
        top_k: int = 10,
        mode: str | None = None,
        where: Callable[[str], bool] | None = None,
    ) -> list[Hit[IndexedChunk]]:
        from chunkls.index.ranked import search  # (a question that is no search skips it)

        return search(self, query, top_k, self.search_mode(mode), where)

    def listing(
        self, query: str, top_k: int = 10, mode: str | None = None
    ) -> list[Hit[ListedChunk]]:
        from chunkls.index.ranked import listing

        return listing(self, query, top_k, self.search_mode(mode))

    def best_lines(self, entry: IndexedChunk, query: str, mode: str | None = None) -> Part:
        from chunkls.index.ranked import best_lines

        return best_lines(entry, query, self.search_mode(mode))

    def symbol_search(
        self, query: str, top_k: int = 10, mode: str | None = None, parts: bool = True
    ) -> tuple[list[Hit[FoundChunk]], int]:
        from chunkls.index.named import symbol_search

        return symbol_search(self, query, top_k, self.search_mode(mode), parts)

    def chunk_page(self, start: Place | None, limit: int, under: Sequence[Path] = ()) -> Page:
        from chunkls.index.browse import chunk_page

        return chunk_page(self, start, limit, under)

    def propose_ids(self, typed: str, limit: int) -> tuple[list[str], bool]:
        from chunkls.index.browse import propose_ids

        return propose_ids(self, typed, limit)

    def source_paths(self) -> set[str]:
        return {path for folder in self.folders for path in folder.storage.source_paths()}

    def source_paths_starting(self, prefix: str) -> list[str]:
        return sorted({path for path in self.source_paths() if path.startswith(prefix)})

    # -- citations ------------------------------------------------------------------

    def check(
        self,
        text: str,
        language: str,
        folder: FolderInfo | None,
        rel_path: str | None,
        refs: Sequence[ChunkRef] | None = None,
        suggested: dict[str, list[str]] | None = None,
        suggest_for: int | None = None,
    ) -> list[Problem]:
        from chunkls.index.citations import check_text

        return check_text(self, text, language, folder, rel_path, refs, suggested, suggest_for)

    def fix_candidates(
        self, chunk_id: str, limit: int = 3, replacement: Replacement | bool | None = True
    ) -> list[str]:
        from chunkls.index.citations import fix_candidates

        return fix_candidates(self, chunk_id, self.history, limit, replacement)

    def citing(self, chunk_id: str) -> list[Citation]:
        return self.citations.citing(chunk_id) if "citations" in self.__dict__ else []

    def cited_files(self) -> list[tuple[FolderInfo, str]]:
        if "citations" not in self.__dict__:
            return []
        return sorted(self.citations.files, key=lambda key: (key[0].position, key[1]))

    def replacement(self, chunk_id: str) -> Replacement | None:
        from chunkls.index.replacement import last_sighting

        if self.has_id(chunk_id):
            return None
        sighting = last_sighting(self, chunk_id)
        return self.text_index().match(sighting) if sighting is not None else None

    def text_index(self) -> TextIndex:
        """Today's chunk texts, indexed for ``replacement`` (kept until the store changes)."""
        from chunkls.index.replacement import TextIndex

        if self._text_index is None or self._text_index[0] != self.version:
            texts = ((entry.chunk.chunk_id, entry.chunk.text) for entry in self.chunks())
            self._text_index = (self.version, TextIndex(texts))
        return self._text_index[1]


_chunk_id_of = itemgetter(0)
