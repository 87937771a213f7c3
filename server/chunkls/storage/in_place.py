"""A folder's cache read in place, when it holds the folder as it is on disk (``open_current``
checks): what the CLI, and the MCP server while it loads, answer from. Nothing here writes or
opens a corpus file; a row found missing or damaged sets ``stale`` for the write step."""

from __future__ import annotations

import bisect
import contextlib
import functools
import marshal
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from typing import Any

from chunkls.chunking.corpus import CorpusRules, walk_corpus
from chunkls.search.scorer import LIST_KERNEL, Kernel, Postings, Scorer, prefix_key, rank_among
from chunkls.storage import cache
from chunkls.storage.cache import FolderCache, store_path
from chunkls.storage.listing import Listing, Under, files_digest, rows_hold
from chunkls.storage.mapped import read_plain
from chunkls.storage.packed import StoredFile, Stub, decode_stubs, from_db, positions_of, to_db


class InPlace:
    """One folder's cache file, read in place inside one read transaction (its
    methods are ``chunkls.index.folder.Storage``'s)."""

    def __init__(
        self,
        db: sqlite3.Connection,
        files: list[tuple[str, int, int]],
        counts: dict[str, int],
        rows: dict[str, _FileRow],
        postings: dict[str, memoryview[int]],
        skipped: dict[str, str],
    ) -> None:
        self._db = db
        self.order = [rel_path for rel_path, _, _ in files]
        """The files in the saved postings' document order."""
        self.starts = [0, *accumulate(count for _, count, _ in files)]
        """Each file's first document, and the number of documents at the end."""
        self.counts = counts
        """Every file of the postings, and how many chunks it has (0: none)."""
        self.rows = rows
        """Root-relative path -> its row in ``files`` (``_FILES``'s columns)."""
        self.skipped = skipped
        self.stale: str | None = None
        """Why the cache turned out not to hold what it should, once it did."""
        self.rows_read: dict[str, int] = {"stubs": 0, "texts": 0, "postings": 0}
        """Rows read so far, by what they gave (what a question cost)."""
        self._stored: dict[str, StoredFile] = {}
        self.decode: Callable[[bytes], tuple[Stub, ...]] = decode_stubs
        """Stubs from their blob (the store's, which keeps what it decoded)."""
        self.postings = SavedPostings(self, postings)

    @functools.cached_property
    def named(self) -> list[str]:
        """The files with chunks, in path order (sorted when first asked)."""
        return sorted(rel_path for rel_path, count in self.counts.items() if count)

    def close(self) -> None:
        """End the read transaction and close the file."""
        with contextlib.suppress(sqlite3.Error):
            self._db.close()

    def has(self, rel_path: str) -> bool:
        return self.counts.get(rel_path, 0) > 0

    def holding(self, chunk_id: str) -> list[str]:
        """The prefixes before each ``#`` that have chunks (an ID starts with its path)."""
        found = []
        at = chunk_id.find("#")
        while at >= 0:
            if self.counts.get(chunk_id[:at], 0) > 0:
                found.append(chunk_id[:at])
            at = chunk_id.find("#", at + 1)
        return found

    def holds(self, chunk_id: str) -> bool:
        for rel_path in self.holding(chunk_id):
            stored = self.stored(rel_path)
            if stored is not None and positions_of(self.decode(stored.packed), chunk_id):
                return True
        return False

    def sources(self, source_path: str) -> Sequence[str]:
        """The files whose chunks have this source path (a cached file's is its path)."""
        return (source_path,) if self.has(source_path) else ()

    def source_paths(self) -> Iterable[str]:
        return self.named

    def paths(self) -> list[str]:
        return list(self.named)

    def file_count(self) -> int:
        return len(self.named)

    def fetch(self, sql: str, parameters: Iterable[object] = ()) -> list[Any]:
        """The rows of a query (none, and ``stale`` set, if the file cannot be read)."""
        try:
            return self._db.execute(sql, tuple(parameters)).fetchall()
        except (sqlite3.Error, OSError) as error:
            self.spoiled(f"cannot read the index cache ({error})")
            return []

    def spoiled(self, reason: str) -> None:
        """The cache does not hold what it should (the first reason is kept)."""
        if self.stale is None:
            self.stale = reason

    def stored(self, rel_path: str) -> StoredFile | None:
        """A file as the store keeps it, from its row (the last few are kept)."""
        known = self._stored.get(rel_path)
        if known is not None:
            return known
        count = self.counts.get(rel_path)
        if not count:
            return None
        rows = self.fetch("SELECT stubs FROM contents WHERE rel_path = ?", (to_db(rel_path),))
        self.rows_read["stubs"] += 1
        if not rows:
            self.spoiled(f"{rel_path}: no chunks in the cache")
            return None
        packed = rows[0][0]
        try:
            if len(self.decode(packed)) != count:
                raise ValueError("its chunks are not those of the search postings")
        except (ValueError, TypeError) as error:
            self.spoiled(f"{rel_path}: {error}")
            return None
        _, mtime_ns, size, _, _, _, _ = self.rows[rel_path]
        stored = StoredFile(rel_path, packed, count, None, mtime_ns, size)
        if len(self._stored) >= 64:
            del self._stored[next(iter(self._stored))]
        self._stored[rel_path] = stored
        return stored

    def texts(self, rel_path: str) -> bytes | None:
        rows = self.fetch("SELECT texts FROM contents WHERE rel_path = ?", (to_db(rel_path),))
        self.rows_read["texts"] += 1
        return rows[0][0] if rows and isinstance(rows[0][0], bytes) else None

    def all_stubs(self) -> Iterator[tuple[str, bytes]]:
        rows = self.fetch("SELECT rel_path, stubs FROM contents")
        self.rows_read["stubs"] += len(rows)
        found = {from_db(rel_path): blob for rel_path, blob in rows}
        if found.keys() != set(self.order):  # (a file without chunks has a row too)
            self.spoiled("the index cache changed while it was read")
            return
        for rel_path in self.named:
            yield rel_path, found[rel_path]


class SavedPostings:
    """The folder's saved postings, read in place: as Python ints (a CLI query imports no
    numpy), or numpy arrays over the same memory once the process has numpy (a server)."""

    def __init__(self, cache: InPlace, arrays: dict[str, memoryview[int]]) -> None:
        self._cache = cache
        self._arrays = arrays
        self._blob = arrays["blob"]
        self._starts = arrays["starts"]
        self._lengths = arrays["lengths"]
        self._docs = arrays["docs"].cast("B").cast("I")
        """Unsigned: a damaged negative document is out of range, as a large one is."""
        self._numpy: tuple[Any, Any, Any] | None = None
        self._total: int | None = None
        self.scorer = Scorer()

    @property
    def kernel(self) -> Kernel:
        """numpy's kernel when another part of the process imported it, else lists'."""
        return _imported_numpy_kernel() or LIST_KERNEL

    @property
    def version(self) -> int:
        """Changes with the kernel only (the scores kept are in its arrays)."""
        return 0 if self.kernel is LIST_KERNEL else 1

    @property
    def size(self) -> int:
        return self._cache.starts[-1]

    live = size  # (every one of the saved postings can be found)

    @property
    def total_length(self) -> int:
        if self._total is None:
            self._total = sum(self._lengths)
        return self._total

    def order_key(self, doc: int) -> tuple[tuple[int, str], int]:
        """A document's place in corpus order: (folder position, path), position."""
        starts = self._cache.starts
        number = bisect.bisect_right(starts, doc) - 1
        return (0, self._cache.order[number]), doc - starts[number]

    def length(self, doc: int) -> int:
        return self._lengths[doc]

    def _term(self, rank: int) -> bytes:
        return bytes(self._blob[self._starts[rank] : self._starts[rank + 1] - 1])

    def _rows(self, tokens: Sequence[str]) -> list[tuple[int, int] | None]:
        """Each token's slice of ``docs`` and ``tfs`` (``None``: not a term)."""
        arrays = self._arrays
        ids, offsets, prefixes = arrays["ids"], arrays["offsets"], arrays["prefixes"]
        rows: list[tuple[int, int] | None] = []
        for token in tokens:
            term = token.encode("utf-8")
            key = prefix_key(term)  # (``TermTable.ranks``, without numpy)
            low = bisect.bisect_left(prefixes, key)
            high = bisect.bisect_right(prefixes, key, low)
            rank = rank_among(term, low, high, self._term)
            if rank == high or self._term(rank) != term:
                rows.append(None)
            else:
                term_id = ids[rank]
                rows.append((offsets[term_id], offsets[term_id + 1]))
        self._cache.rows_read["postings"] += len(tokens)
        return rows

    def terms_starting(self, prefix: str, limit: int) -> list[str]:
        """The first ``limit`` terms that start with ``prefix``, sorted by UTF-8."""
        wanted = prefix.encode("utf-8")
        prefixes = self._arrays["prefixes"]
        rank = bisect.bisect_left(prefixes, prefix_key(wanted))
        found: list[str] = []
        while rank < len(prefixes) and len(found) < limit:
            term = self._term(rank)
            if term >= wanted and not term.startswith(wanted):
                break
            if term.startswith(wanted):
                found.append(term.decode("utf-8", "replace"))
            rank += 1
        return found

    def postings(self, tokens: Sequence[str]) -> list[Postings | None]:
        """Each token's documents, frequencies and lengths (``None``: none has it)."""
        rows = self._rows(tokens)
        if self.kernel is not LIST_KERNEL:
            return self._numpy_postings(rows)
        docs, tfs, lengths = self._docs, self._arrays["tfs"], self._lengths
        found: list[Postings | None] = []
        try:  # (a document out of range has no length)
            for row in rows:
                if row is None or row[0] == row[1]:
                    found.append(None)
                    continue
                these = docs[row[0] : row[1]]
                gathered = itemgetter(*these)(lengths) if len(these) > 1 else [lengths[these[0]]]
                found.append(Postings(these, tfs[row[0] : row[1]], gathered))
        except IndexError:
            return self._damaged(tokens)
        return found

    def _numpy_postings(self, rows: list[tuple[int, int] | None]) -> list[Postings | None]:
        if self._numpy is None:
            import numpy as np  # (imported already: ``kernel``)

            arrays = self._arrays
            self._numpy = (
                np.asarray(arrays["docs"]),
                np.asarray(arrays["tfs"]),
                np.asarray(self._lengths),
            )
        docs, tfs, lengths = self._numpy
        found: list[Postings | None] = []
        for row in rows:
            if row is None or row[0] == row[1]:
                found.append(None)
                continue
            these = docs[row[0] : row[1]]
            if these.min() < 0 or these.max() >= len(lengths):
                return self._damaged(rows)
            found.append(Postings(these, tfs[row[0] : row[1]], lengths[these]))
        return found

    def _damaged(self, tokens: Sequence[object]) -> list[Postings | None]:
        self._cache.spoiled("damaged search postings in the index cache")
        return [None] * len(tokens)


def _imported_numpy_kernel() -> Kernel | None:
    """The numpy kernel, if its module has been imported whole (never imported here)."""
    module = sys.modules.get("chunkls.search.maxscore")
    kernel: Kernel | None = getattr(module, "NUMPY_KERNEL", None)
    return kernel


def open_current(
    root: Path, root_resolved: Path, rules: CorpusRules, cache_dir: Path
) -> InPlace | None:
    """The cache read in place, if it holds the folder as on disk (postings newer than rows)."""
    path = store_path(root_resolved, cache_dir)
    if not path.is_file():
        return None
    meta = FolderCache(path, root_resolved).meta
    try:
        # (a server may answer from it in another thread, never two at once)
        db = sqlite3.connect(
            f"{path.as_uri()}?mode=rw",
            uri=True,
            timeout=0.5,
            isolation_level=None,
            check_same_thread=False,
        )
    except (sqlite3.Error, OSError):
        return None
    try:
        found = _current(root, rules, db, meta, path)
    except (sqlite3.Error, OSError, ValueError, TypeError, EOFError):
        found = None
    if found is None:
        db.close()
    return found


_FILES = "SELECT rel_path, mtime_ns, size, checked_ns, skipped, chunks, generation FROM files"
"""The columns of ``files`` a current check compares (``_FileRow``'s order)."""

_FileRow = tuple[str | bytes, int, int, int, str | bytes | None, int, int]
"""A row of ``_FILES`` as SQLite gives it (no ``cache.Row``: there are tens of thousands)."""


def _current(
    root: Path, rules: CorpusRules, db: sqlite3.Connection, meta: dict[str, str], cache_path: Path
) -> InPlace | None:
    db.execute("BEGIN")  # one read transaction: the rows and the postings agree
    if dict(db.execute("SELECT key, value FROM meta").fetchall()) != meta:
        return None
    rows: list[_FileRow] = db.execute(_FILES).fetchall()
    names = [row[0] if type(row[0]) is str else from_db(row[0]) for row in rows]
    # the rows of these corpus rules' files (those of files they leave out are kept
    # for other settings: not the corpus now, so neither stat'ed nor answered from)
    inside = rules.in_corpus(names) if rules.adds_excludes else []
    if not all(inside):
        names = [name for name, kept in zip(names, inside, strict=True) if kept]
        rows = [row for row, kept in zip(rows, inside, strict=True) if kept]
    limit = rules.max_file_size  # (a chunked row within the limit never decides)
    unusual = [row for row in rows if row[4] is not None or row[2] > limit]
    if any(
        rules.size_decides(row[2], None if row[4] is None else from_db(row[4])) for row in unusual
    ):
        return None  # a row made under another size limit
    skipped_entries = _listed(root, rules, names, rows, db)
    if skipped_entries is None:
        skipped_entries = _walked(root, rules, names, rows)
    if skipped_entries is None:
        return None
    found = db.execute("SELECT files, mapped FROM snapshot WHERE id = 1").fetchone()
    if found is None:
        return None
    files: list[tuple[str, int, int]] = marshal.loads(found[0])
    try:
        postings = read_plain(cache_path.parent, found[1])
    except (OSError, ValueError):
        return None
    if (
        len(postings.get("lengths", ())) != sum(count for _, count, _ in files)
        or not {"ids", "offsets", "docs", "tfs", "starts", "blob"} <= postings.keys()
    ):
        return None
    # each file of the postings has its own row, not skipped, of its generation and
    # count, and every row not skipped is one of theirs: else the postings are not
    # the rows' (a file named twice leaves a row of one unnamed)
    by_name = dict(zip(names, rows, strict=True))
    counts: dict[str, int] = {}
    for rel_path, count, generation in files:
        row = by_name.get(rel_path)
        if row is None or row[4] is not None or row[5] != count or row[6] != generation:
            return None  # the postings are older than some row
        counts[rel_path] = count
    skipped = dict(skipped_entries)
    skipped_rows = 0
    for name, row in zip(names, rows, strict=True):
        if row[4] is not None:  # the rows of skipped files, in order
            skipped[name] = from_db(row[4])
            skipped_rows += 1
    if len(counts) != len(files) or len(rows) - skipped_rows != len(files):
        return None  # a file named twice, or one with chunks the postings do not have
    return InPlace(db, files, counts, by_name, postings, dict(sorted(skipped.items())))


def _listed(
    root: Path, rules: CorpusRules, names: list[str], rows: list[_FileRow], db: sqlite3.Connection
) -> list[tuple[str, str]] | None:
    """The walk's skipped entries, when the recorded listing still holds (a walk
    under these rules, every folder's times as recorded, and trusted) and every
    file is as its row says."""
    found = db.execute("SELECT walk FROM listing WHERE id = 1").fetchone()
    listing = None if found is None else Listing.decode(found[0])
    if (
        listing is None
        or listing.rules != rules.fingerprint()  # (rules changed: no folder time says so)
        or files_digest(sorted(names)) != listing.files
    ):
        return None
    trusted_before = listing.taken_ns - cache.RACY_NS
    with Under(root) as under:
        for rel_dir, mtime_ns, ctime_ns in listing.folders:
            try:
                info = under.stat(rel_dir)
            except OSError:
                return None
            if (
                info.st_mtime_ns != mtime_ns
                or info.st_ctime_ns != ctime_ns
                or max(mtime_ns, ctime_ns) >= trusted_before
            ):
                return None
        if not rows_hold(under, names, rows):
            return None
    return [(rel_path, reason) for rel_path, reason in listing.skipped]


def _walked(
    root: Path, rules: CorpusRules, names: list[str], rows: list[_FileRow]
) -> list[tuple[str, str]] | None:
    """The walk's skipped entries, when a walk finds the rows' files as they say."""
    walk = walk_corpus(root, rules)
    if len(walk.files) != len(rows):
        return None
    by_name = dict(zip(names, rows, strict=True))
    found = [by_name.get(file.rel_path) for file in walk.files]
    if any(row is None for row in found) or any(file.is_symlink for file in walk.files):
        return None  # new, or a symlink (never cached: chunked on every run)
    with Under(root) as under:
        if not rows_hold(under, [file.rel_path for file in walk.files], found):
            return None
    return [(skipped.rel_path, skipped.reason) for skipped in walk.skipped]
