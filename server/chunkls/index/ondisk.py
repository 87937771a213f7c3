"""The persistent index read in place: what a short-lived process (the CLI, a
pre-commit hook, the MCP server while its index loads) asks of a folder whose
cache is current, without loading it.

``open_current`` checks that the cache holds the folder as it is on disk (the
corpus walked, or, while every folder's times are those the cache recorded at
its last whole walk, the folders stat'ed instead (``chunkls.storage.listing``); every
file's size and times compared with its row; the search postings saved after
the last row changed) and answers ``None`` otherwise: the
caller then indexes as usual, which brings the cache up to date (the change
path). A ``DiskIndex`` then reads only what each question needs, inside one
read transaction:

- a search, its terms' postings (``term_buckets``, a few rows), the
  documents' lengths, and the stubs and texts of the files of its results;
- a lookup, the stubs and texts of the one file an ID can be in (a cached
  file's chunk IDs all start with its root-relative path);
- a listing of IDs, the stubs (no texts, no postings).

Scores are those of ``BM25Index``, bit for bit: the same floating-point
operations in the same order, in plain Python (a query reads a few thousand
postings; numpy is not needed for that). A text the cache turns out not to
hold (cleared, damaged, rewritten meanwhile) raises ``Stale``: the caller
indexes as usual and asks again. Nothing here writes, chunks or opens a file
of the corpus (the walk only lists and stats them).
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import heapq
import marshal
import os
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from pathlib import Path

from chunkls.chunking.corpus import CorpusRules, load_rules, walk_corpus
from chunkls.chunking.models import LocatedChunk
from chunkls.index.folder import Folder, IndexedChunk
from chunkls.index.suggest import SUGGEST_CHARS, PathGrams, suggest_ids
from chunkls.search.bm25 import K1, B, Hit, term_weight
from chunkls.search.buckets import bucket_of
from chunkls.search.tokens import tokenize
from chunkls.storage import cache
from chunkls.storage.cache import FolderCache, _from_db, _to_db, store_path
from chunkls.storage.listing import Listing, files_digest
from chunkls.storage.packed import decode_stubs, unpack_stubs


class Stale(Exception):
    """The cache does not hold what it should (any more): index as usual."""


class DiskIndex:
    """One folder's index, answered from its cache file."""

    def __init__(
        self,
        folder: Folder,
        db: sqlite3.Connection,
        files: list[tuple[str, int, int]],
        buckets: int,
    ) -> None:
        self.folders = [folder]
        """The one workspace folder (as ``WorkspaceIndex.folders``)."""
        self._db = db
        self._files = [rel_path for rel_path, _, _ in files]
        """Files in document order (the snapshot's)."""
        self._starts = [0, *accumulate(count for _, count, _ in files)]
        """Each file's first document, and the number of documents at the end."""
        self._sorted: list[str] | None = None
        self._buckets = buckets
        self._lengths: array[int] | None = None
        self._chunks: dict[str, tuple[LocatedChunk, ...]] = {}
        self._paths: PathGrams | None = None
        self.rows_read: dict[str, int] = {"contents": 0, "term_buckets": 0}
        """Rows read so far, by table (what a question cost)."""

    texts_missing: frozenset[tuple[Folder, str]] = frozenset()
    """Never any: a text the cache turns out not to hold raises ``Stale`` instead
    (as ``WorkspaceIndex.texts_missing``, for callers of either)."""

    def __len__(self) -> int:
        return self._starts[-1]

    def file_count(self) -> int:
        """How many files have chunks (as ``WorkspaceIndex.file_count``)."""
        return len(self._files)

    def recover_texts(self) -> bool:
        """Nothing to recover (``texts_missing`` is empty)."""
        return False

    def folder_of(self, path: str | Path) -> tuple[Folder, str] | None:
        """The folder, if it contains this absolute path, and the relative path."""
        folder = self.folders[0]
        rel_path = folder.relative(path)
        return None if rel_path is None else (folder, rel_path)

    def close(self) -> None:
        """End the read transaction and close the file."""
        with contextlib.suppress(sqlite3.Error):
            self._db.close()

    # -- what the index holds ------------------------------------------------------

    def skipped(self) -> Iterator[tuple[Folder, str, str]]:
        """Every skipped file: (folder, root-relative path, reason), by path."""
        folder = self.folders[0]
        for rel_path in sorted(folder.skipped):
            yield folder, rel_path, folder.skipped[rel_path]

    def source_paths(self) -> set[str]:
        """Every ``source_path`` that has chunks."""
        return set(self._sources())

    def _read(self, rel_path: str) -> tuple[LocatedChunk, ...]:
        known = self._chunks.get(rel_path)
        if known is not None:
            return known
        found = self._fetch(
            "SELECT stubs, texts FROM contents WHERE rel_path = ?", (_to_db(rel_path),)
        ).fetchone()
        if found is None:
            raise Stale(f"{rel_path}: no chunks in the cache")
        self.rows_read["contents"] += 1
        stubs_blob, texts = found
        try:
            stubs = decode_stubs(stubs_blob)
            chunks = unpack_stubs(stubs, texts)
        except ValueError as error:
            raise Stale(f"{rel_path}: {error}") from None
        self._chunks[rel_path] = chunks
        return chunks

    def _fetch(self, sql: str, parameters: Iterable[object] = ()) -> sqlite3.Cursor:
        try:
            cursor = self._db.execute(sql, tuple(parameters))
        except (sqlite3.Error, OSError) as error:
            raise Stale(f"cannot read the index cache ({error})") from None
        return cursor

    # -- the query API (as ``ChunkStore``'s, for one folder) -------------------------

    def file_chunks(self, folder: Folder, rel_path: str) -> tuple[LocatedChunk, ...]:
        """The indexed chunks of one file (empty when it has none)."""
        if folder is not self.folders[0] or not self._has(rel_path):
            return ()
        return self._read(rel_path)

    def _has(self, rel_path: str) -> bool:
        sources = self._sources()
        at = bisect.bisect_left(sources, rel_path)
        return at < len(sources) and sources[at] == rel_path

    def _sources(self) -> list[str]:
        """Root-relative paths of the files with chunks, sorted (made on first
        use: a search does without them)."""
        if self._sorted is None:
            starts = self._starts
            self._sorted = sorted(
                rel_path
                for number, rel_path in enumerate(self._files)
                if starts[number + 1] > starts[number]
            )
        return self._sorted

    def lookup(self, chunk_id: str, prefer: Folder | None = None) -> list[IndexedChunk]:
        """Chunks with exactly this ID (a cached file's IDs start with its path)."""
        folder = self.folders[0]
        found = []
        at = chunk_id.find("#")
        while at >= 0:
            rel_path = chunk_id[:at]
            if self._has(rel_path):
                found += [
                    IndexedChunk(folder, chunk)
                    for chunk in self._read(rel_path)
                    if chunk.chunk_id == chunk_id
                ]
            at = chunk_id.find("#", at + 1)
        return found

    def has_id(self, chunk_id: str) -> bool:
        """Whether a chunk has this ID."""
        return bool(self.lookup(chunk_id))

    def resolve_first(
        self, candidate_ids: Iterable[str], prefer: Folder | None = None
    ) -> list[IndexedChunk]:
        """The chunks of the first candidate ID that resolves (empty if none does)."""
        for chunk_id in candidate_ids:
            found = self.lookup(chunk_id, prefer)
            if found:
                return found
        return []

    def chunks_of_source(
        self, source_path: str, prefer: Folder | None = None
    ) -> list[LocatedChunk]:
        """The chunks whose ``source_path`` is this one, one per chunk ID, in file order."""
        seen: dict[str, LocatedChunk] = {}
        for chunk in self.file_chunks(self.folders[0], source_path):
            seen.setdefault(chunk.chunk_id, chunk)
        return list(seen.values())

    def chunk_ids(self) -> list[str]:
        """Every chunk ID in corpus order (files by path): stubs only are read."""
        stubs: dict[str, list[str]] = {}
        for rel_path, blob in self._fetch("SELECT rel_path, stubs FROM contents"):
            self.rows_read["contents"] += 1
            try:
                stubs[_from_db(rel_path)] = [stub[0] for stub in decode_stubs(blob)]
            except ValueError as error:
                raise Stale(f"{_from_db(rel_path)}: {error}") from None
        if len(stubs) != len(self._files):
            raise Stale("the index cache changed while it was read")
        return [chunk_id for rel_path in sorted(stubs) for chunk_id in stubs[rel_path]]

    def suggest(self, chunk_id: str, limit: int = 3) -> list[str]:
        """The existing IDs closest to one that does not resolve, best first."""

        def ids_of(path: str) -> list[str] | None:
            if not self._has(path):
                return None
            return [chunk.chunk_id for chunk in self._read(path)]

        def near(path: str) -> list[str]:
            if self._paths is None:
                self._paths = PathGrams()
                self._paths.build(self._sources())
            return self._paths.near(path[:SUGGEST_CHARS])

        return suggest_ids(chunk_id, limit, ids_of, near)

    # -- search --------------------------------------------------------------------

    def search(self, query: str, top_k: int = 10) -> list[Hit[IndexedChunk]]:
        """BM25-ranked chunks for a query: ``BM25Index.search``'s results, read
        from the cache (ties in corpus order)."""
        n = len(self)
        if top_k <= 0 or not n:
            return []
        tokens = tokenize(query)
        postings = self._postings(set(tokens))
        lengths = self._document_lengths()
        avgdl = sum(lengths) / n or 1.0
        base = K1 * (1 - B)
        scale = K1 * B / avgdl
        scored: dict[str, list[float]] = {}
        scores: dict[int, float] = {}
        get = scores.get
        for token in tokens:
            found = postings.get(token)
            if found is None:
                continue
            docs, tfs = found
            term = scored.get(token)
            if term is None:
                weight = term_weight(n, len(docs))
                # as ``BM25Index._term``: ``weight * tf / (tf + base + scale * dl)``
                term = scored[token] = [
                    weight * tf / (tf + base + scale * lengths[doc])
                    for doc, tf in zip(docs, tfs, strict=True)
                ]
            for doc, score in zip(docs, term, strict=True):
                scores[doc] = get(doc, 0.0) + score
        starts, files = self._starts, self._files

        def order(doc: int) -> tuple[float, str, int]:
            number = bisect.bisect_right(starts, doc) - 1
            return -scores[doc], files[number], doc - starts[number]

        # as ``BM25Index.search``: what scores at least the k-th best, ties in corpus order
        kth = heapq.nlargest(top_k, scores.values())[-1] if scores else 0.0
        tied = [doc for doc, score in scores.items() if score >= kth]
        ranked = sorted(tied, key=order)[:top_k]
        folder = self.folders[0]
        hits = []
        for doc in ranked:
            _, rel_path, position = order(doc)
            chunks = self._read(rel_path)
            if position < len(chunks):
                hits.append(Hit(scores[doc], IndexedChunk(folder, chunks[position])))
        return hits

    def _document_lengths(self) -> array[int]:
        if self._lengths is None:
            found = self._fetch("SELECT lengths FROM snapshot WHERE id = 1").fetchone()
            lengths = array("i")
            if found is not None:
                lengths.frombytes(found[0])
            if sys.byteorder != "little":
                lengths.byteswap()
            if len(lengths) != len(self):
                raise Stale("the saved search postings do not fit the files")
            self._lengths = lengths
        return self._lengths

    def _postings(self, tokens: set[str]) -> dict[str, tuple[array[int], array[int]]]:
        """Each token's (documents, term frequencies), for those with postings."""
        wanted: dict[int, list[str]] = {}
        for token in tokens:
            wanted.setdefault(bucket_of(token.encode("utf-8"), self._buckets), []).append(token)
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = self._fetch(
            f"SELECT bucket, terms, counts, docs, tfs FROM term_buckets WHERE bucket IN ({marks})",
            wanted,
        ).fetchall()
        self.rows_read["term_buckets"] += len(rows)
        try:
            return self._decode(rows, wanted)
        except (ValueError, TypeError, AttributeError) as error:
            raise Stale(f"damaged search postings in the index cache ({error})") from None

    def _decode(
        self, rows: list[tuple[int, bytes, bytes, bytes, bytes]], wanted: dict[int, list[str]]
    ) -> dict[str, tuple[array[int], array[int]]]:
        found: dict[str, tuple[array[int], array[int]]] = {}
        for bucket, names_blob, counts_blob, docs_blob, tfs_blob in rows:
            names = names_blob.split(b"\0")
            counts, docs = array("i"), array("i")
            counts.frombytes(counts_blob)
            docs.frombytes(docs_blob)
            tfs = array("H" if 2 * len(tfs_blob) == len(docs_blob) else "i")
            tfs.frombytes(tfs_blob)
            if sys.byteorder != "little":
                for each in (counts, docs, tfs):
                    each.byteswap()
            if len(counts) != len(names) or len(tfs) != len(docs) or sum(counts) != len(docs):
                raise Stale("damaged search postings in the index cache")
            offsets = [0]
            for count in counts:
                offsets.append(offsets[-1] + count)
            for token in wanted.get(bucket, ()):
                encoded = token.encode("utf-8")
                if encoded in names:
                    at = names.index(encoded)
                    found[token] = (
                        docs[offsets[at] : offsets[at + 1]],
                        tfs[offsets[at] : offsets[at + 1]],
                    )
        if any(docs and (max(docs) >= len(self) or min(docs) < 0) for docs, _ in found.values()):
            raise Stale("damaged search postings in the index cache")
        return found


def open_current(root: Path, base_rules: CorpusRules | None, cache_dir: Path) -> DiskIndex | None:
    """The folder's index read from its cache, if the cache holds the folder as
    it is on disk now; ``None`` otherwise (no cache, other settings, a file
    changed, added or removed since, a symlink in the corpus, the search
    postings older than a row, a locked or unreadable file)."""
    rules, problems = load_rules(root, base_rules)
    folder = Folder(root, rules, 0, problems)
    path = store_path(folder.root_resolved, cache_dir)
    if not path.is_file():
        return None
    meta = FolderCache(path, folder.root_resolved, rules.fingerprint()).meta
    try:
        db = sqlite3.connect(
            f"{path.as_uri()}?mode=rw", uri=True, timeout=0.5, isolation_level=None
        )
    except (sqlite3.Error, OSError):
        return None
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of rows and stats, no cycle: collections only rescan them
    try:
        index = _current(folder, db, meta)
    except (sqlite3.Error, OSError, ValueError, TypeError, EOFError):
        index = None
    finally:
        if collecting:
            gc.enable()
    if index is None:
        db.close()
    return index


_FILES = "SELECT rel_path, mtime_ns, size, checked_ns, skipped, chunks, generation FROM files"
"""The columns of ``files`` a current check compares (``_FileRow``'s order)."""

_FileRow = tuple[str | bytes, int, int, int, str | bytes | None, int, int]
"""A row of ``_FILES`` as SQLite gives it (no ``cache.Row`` is made: 13,336 of
them cost the stdlib's check 40 ms)."""


def _current(folder: Folder, db: sqlite3.Connection, meta: dict[str, str]) -> DiskIndex | None:
    db.execute("BEGIN")  # one read transaction: the rows and the postings agree
    if dict(db.execute("SELECT key, value FROM meta").fetchall()) != meta:
        return None
    rows: list[_FileRow] = db.execute(_FILES).fetchall()
    names = [row[0] if type(row[0]) is str else _from_db(row[0]) for row in rows]
    skipped_entries = _listed(folder.root, names, rows, _listing(db))
    if skipped_entries is None:
        skipped_entries = _walked(folder, names, rows)
    if skipped_entries is None:
        return None
    found = db.execute("SELECT files, buckets FROM snapshot WHERE id = 1").fetchone()
    if found is None:
        return None
    files: list[tuple[str, int, int]] = marshal.loads(found[0])
    # each file of the postings takes its row out: a file named twice, a row
    # skipped, or another generation or count, and the postings are not the rows'
    unclaimed = dict(zip(names, rows, strict=True))
    claim = unclaimed.pop
    for rel_path, count, generation in files:
        row = claim(rel_path, None)
        if row is None or row[4] is not None or row[5] != count or row[6] != generation:
            return None  # the postings are older than some row
    if any(row[4] is None for row in unclaimed.values()):
        return None  # a file with chunks the postings do not have
    for rel_path, reason in skipped_entries:
        folder.skipped[rel_path] = reason
    for name, row in unclaimed.items():  # the rows of skipped files, in order
        folder.skipped[name] = _from_db(row[4])  # type: ignore[arg-type]
    return DiskIndex(folder, db, files, found[1])


def _listing(db: sqlite3.Connection) -> Listing | None:
    """The folders of the last whole walk, as the cache recorded them."""
    found = db.execute("SELECT walk FROM listing WHERE id = 1").fetchone()
    return None if found is None else Listing.decode(found[0])


def _listed(
    root: Path, names: list[str], rows: list[_FileRow], listing: Listing | None
) -> list[tuple[str, str]] | None:
    """The walk's skipped entries, when the recorded listing still holds (every
    folder's times as recorded, and long enough before the walk to be trusted)
    and every file is as its row says; ``None`` when that cannot be told so."""
    if listing is None or files_digest(sorted(names)) != listing.files:
        return None
    top = os.fspath(root)
    prefix = top.rstrip(os.sep) + os.sep  # (a join per path costs as much as its stat)
    trusted_before = listing.taken_ns - cache.RACY_NS
    for rel_dir, mtime_ns, ctime_ns in listing.folders:
        try:
            info = os.stat(prefix + rel_dir if rel_dir else top)
        except OSError:
            return None
        if (
            info.st_mtime_ns != mtime_ns
            or info.st_ctime_ns != ctime_ns
            or max(mtime_ns, ctime_ns) >= trusted_before
        ):
            return None
    if not _rows_hold([prefix + name for name in names], rows):
        return None
    return [(rel_path, reason) for rel_path, reason in listing.skipped]


def _walked(folder: Folder, names: list[str], rows: list[_FileRow]) -> list[tuple[str, str]] | None:
    """The walk's skipped entries, when a walk finds the files of the rows, each
    as its row says; ``None`` otherwise."""
    walk = walk_corpus(folder.root, folder.rules)
    if len(walk.files) != len(rows):
        return None
    by_name = dict(zip(names, rows, strict=True))
    found = [by_name.get(file.rel_path) for file in walk.files]
    if any(row is None for row in found) or any(file.is_symlink for file in walk.files):
        return None  # new, or a symlink (never cached: chunked on every run)
    if not _rows_hold([file.path for file in walk.files], found):
        return None
    return [(skipped.rel_path, skipped.reason) for skipped in walk.skipped]


def _rows_hold(paths: list[str], rows: Sequence[_FileRow | None]) -> bool:
    """Whether every file (its path, its row) is as its row says by ``lstat``: what
    ``FolderCache.unchanged`` says True of, compared in line (a symlink put in a
    file's place has its own times, and its folder's change)."""
    racy = cache.RACY_NS
    lstat = os.lstat
    for path, row in zip(paths, rows, strict=True):
        if row is None:
            return False
        _, mtime_ns, size, checked_ns, _, _, _ = row
        try:
            info = lstat(path)
        except OSError:
            return False
        # ``unchanged``: same size and mtime, and neither the mtime nor the
        # change time within ``RACY_NS`` of when the row was written or confirmed
        if (
            info.st_size != size
            or info.st_mtime_ns != mtime_ns
            or max(mtime_ns, info.st_ctime_ns) >= checked_ns - racy
        ):
            return False
    return True
