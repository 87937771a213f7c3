"""The persistent index: one SQLite file per workspace folder, a row per corpus file (its
chunks, the stat and hash they were read with, or why it was skipped), postings beside it.
Another version, tokenizer, schema or folder empties it; a corrupt or locked file is logged
once and rebuilt (or bypassed), never raised to the caller."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from chunkls.storage.packed import StoredFile, from_db, to_db

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable

    from chunkls.search.postings import Snapshot
    from chunkls.storage.listing import Listing


def _logger() -> logging.Logger:
    """The cache's logger (``logging`` is imported when there is something to say)."""
    import logging

    return logging.getLogger("chunkls.storage.cache")


SCHEMA = 10
"""Bump when the tables or blob layouts change."""
TOKENIZER = 2
"""Bump when ``search.tokenize`` changes what it returns."""
RACY_NS = 2_000_000_000
"""A file modified this close to when its row was written is confirmed by hash."""


def stat_holds(was: int, sized: int, checked: int, mtime_ns: int, size: int, ctime_ns: int) -> bool:
    """Whether a file's stat says it is as its row (both times ``RACY_NS`` before the check)."""
    return size == sized and mtime_ns == was and max(mtime_ns, ctime_ns) < checked - RACY_NS


def _version() -> str:
    """The package's version, looked up when a cache is opened (a test sets another)."""
    from chunkls import __version__

    return __version__


def cache_home() -> Path:
    """The user's cache directory (``XDG_CACHE_HOME`` when set, as on Linux)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"])
    return Path.home() / ".cache"


def cache_dir() -> Path:
    """Where chunkls keeps its per-folder indexes."""
    return cache_home() / "chunkls"


def store_path(root_resolved: Path, base: Path | None = None) -> Path:
    """The cache file of one workspace folder."""
    digest = hashlib.sha256(os.fsencode(root_resolved)).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in root_resolved.name)[:40]
    return (base or cache_dir()) / f"{name or 'root'}-{digest}" / "index.sqlite3"


class Row(NamedTuple):
    """One corpus file as the cache last saw it."""

    mtime_ns: int
    size: int
    digest: bytes | None
    skipped: str | None
    stubs: bytes | None
    """The chunks without their texts (those stay on disk until ``FolderCache.texts``)."""
    generation: int
    checked_ns: int


class Loaded(NamedTuple):
    """What a cache held for a folder."""

    rows: dict[str, Row]
    snapshot: Snapshot | None
    generations: dict[str, int]
    """Root-relative path -> the row generation the snapshot was taken from."""


_EMPTY = Loaded({}, None, {})

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    rel_path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    digest BLOB,
    skipped TEXT,
    generation INTEGER NOT NULL,
    checked_ns INTEGER NOT NULL,
    chunks INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS contents (
    rel_path TEXT PRIMARY KEY,
    stubs BLOB NOT NULL,
    texts BLOB
);
CREATE TABLE IF NOT EXISTS snapshot (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    mapped TEXT NOT NULL,
    files BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS gone (
    chunk_id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    seen INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS listing (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    walk BLOB NOT NULL
);
"""
"""``files`` holds only what a start-up compares with the disk (a scan of it
reads no chunk); ``contents`` a file's stubs and texts; ``gone`` the last text of
chunk IDs that left the folder (the newest ``GONE_ROWS``: what a stale ID became,
outside git)."""

GONE_ROWS = 10_000
"""Chunk IDs that left whose last text the cache keeps."""
GONE_CHARS = 4_000
"""Characters of each such text kept."""


_DROPPED = ("files", "contents", "snapshot", "term_buckets", "listing", "gone")
"""The tables an emptied cache starts afresh (including older schemas')."""


class _Put(NamedTuple):
    """A row to write."""

    files: tuple[str | bytes, int, int, bytes | None, str | bytes | None, int, int, int]
    contents: tuple[str | bytes, bytes, bytes | None] | None
    """Its columns of ``contents`` (``None``: a skipped file's row has none)."""
    generation: int


class FolderCache:
    """The cache file of one workspace folder."""

    def __init__(self, path: Path, root_resolved: Path) -> None:
        self.path = path
        self.meta = {
            "schema": str(SCHEMA),
            "version": _version(),
            "tokenizer": str(TOKENIZER),
            "root": os.fsdecode(root_resolved),
        }
        """What the rows are only valid for (not the corpus settings: a file's
        chunks depend on its bytes and the chunker alone)."""
        self._db: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._disabled = False
        self.held = 0
        """While other processes write this folder's cache (how many): writes wait."""
        self._puts: dict[str, _Put | None] = {}
        self.pending_bytes = 0
        """About how many bytes of chunks the rows waiting for ``flush`` hold."""
        self._touches: dict[str, tuple[int, int, str, int]] = {}
        """Rows whose file has a new mtime but the same content."""
        self._gone: dict[str, str] = {}
        """Texts of chunk IDs that left, written by the next ``flush``."""
        self._generation = time.time_ns()
        self.problem: str | None = None
        """What went wrong with the cache file, if anything (logged once)."""

    # -- opening ------------------------------------------------------------------

    def _fail(self, what: str, error: BaseException, rebuild: bool) -> None:
        """A failed open, read or write: a lock held by another process is waited
        out (the cache bypassed), anything else rebuilds it when ``rebuild``."""
        if _locked(error):
            what, rebuild = "locked by another process", False
        message = f"index cache {self.path}: {what} ({error}); " + (
            "rebuilding it" if rebuild else "indexing without it"
        )
        if self.problem is None:
            _logger().warning("%s", message)
        self.problem = message
        self.close()
        if rebuild:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    os.remove(f"{self.path}{suffix}")
            from chunkls.storage.mapped import remove_others

            remove_others(self.path.parent, None)
        else:
            self._disabled = True

    def _connect(self) -> sqlite3.Connection | None:
        for attempt in (1, 2):
            if self._disabled or self._db is not None:
                return self._db  # (``None`` once disabled: ``_fail`` closed it)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # one user at a time, but maybe not always the thread that opened it
                db = sqlite3.connect(
                    self.path, timeout=0.5, isolation_level=None, check_same_thread=False
                )
                self._db = db
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_TABLES)
                stored = dict(db.execute("SELECT key, value FROM meta").fetchall())
                if stored != self.meta:
                    if stored:
                        _logger().info(
                            "index cache %s: other version or settings; emptied", self.path
                        )
                    with db:
                        db.execute("BEGIN IMMEDIATE")
                        # another schema may have other columns: start afresh
                        for table in _DROPPED:
                            db.execute(f"DROP TABLE IF EXISTS {table}")
                        db.execute("DELETE FROM meta")
                        db.executemany("INSERT INTO meta VALUES (?, ?)", self.meta.items())
                    db.executescript(_TABLES)
                return db
            except (sqlite3.Error, OSError) as error:
                self._fail("unreadable", error, rebuild=attempt == 1)
        return None  # (disabled: the second failure did not rebuild)

    def close(self) -> None:
        """Close the file (pending writes are dropped: ``flush`` first)."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    # -- reading --------------------------------------------------------------------

    def load(self) -> Loaded:
        """Everything the cache holds for the folder (empty if it holds nothing usable)."""
        for attempt in (1, 2):
            db = self._connect()
            if db is None:
                return _EMPTY
            try:
                found = db.execute(
                    "SELECT rel_path, mtime_ns, size, digest, skipped, stubs,"
                    " generation, checked_ns FROM files LEFT JOIN contents USING (rel_path)"
                )
                rows = {
                    from_db(row[0]): Row._make(
                        (*row[1:4], None if row[4] is None else from_db(row[4]), *row[5:])
                    )
                    for row in found
                }
                from chunkls.storage import saved_postings

                return Loaded(rows, *saved_postings.load(db, self.path.parent))
            except (sqlite3.Error, ValueError, TypeError, EOFError, OSError) as error:
                self._fail("corrupt", error, rebuild=attempt == 1)  # (locked: bypassed)
        return _EMPTY

    @staticmethod
    def unchanged(row: Row, mtime_ns: int, size: int, ctime_ns: int) -> bool | None:
        """Whether a file still matches its row by stat (``None``: only its hash can tell). The
        change time (no tool sets it back) catches an mtime put back (``cp -p``, ``tar x``)."""
        if stat_holds(row.mtime_ns, row.size, row.checked_ns, mtime_ns, size, ctime_ns):
            return True
        return None if row.digest is not None and size == row.size else False

    # -- writing --------------------------------------------------------------------

    def put(
        self,
        rel_path: str,
        stored: StoredFile | None,
        digest: bytes | None = None,
        skipped: tuple[str, int, int] | None = None,
    ) -> int:
        """Record a file's chunks (or ``skipped``) for the next ``flush``; the row's generation."""
        self._generation += 1
        generation, path, now = self._generation, to_db(rel_path), time.time_ns()
        if stored is not None:
            self.pending_bytes += len(stored.texts or b"") + 64 * stored.chunk_count
            columns = (path, stored.mtime_ns, stored.size, digest, None, generation, now)
            contents = (path, stored.packed, stored.texts)
            self._puts[rel_path] = _Put((*columns, stored.chunk_count), contents, generation)
        elif skipped is not None:
            reason, mtime_ns, size = skipped
            files = (path, mtime_ns, size, digest, to_db(reason), generation, now, 0)
            self._puts[rel_path] = _Put(files, None, generation)
        else:
            self._puts[rel_path] = None
        return generation

    def touch(self, rel_path: str, row: Row, mtime_ns: int) -> None:
        """A file's mtime changed but its content hash did not."""
        self._touches[rel_path] = (mtime_ns, time.time_ns(), rel_path, row.generation)

    def delete(self, rel_path: str) -> None:
        """Forget a file (written by the next ``flush``)."""
        self._puts[rel_path] = None

    @property
    def usable(self) -> bool:
        """Whether the cache is in use (not given up on for this session)."""
        return not self._disabled

    def flush(self) -> dict[str, int]:
        """Write the recorded changes in one transaction; the rows written with chunks (path ->
        generation), none if it failed or while ``held`` (a later flush writes them)."""
        if self.held or (not self._puts and not self._touches and not self._gone):
            return {}
        gone_texts, self._gone = self._gone, {}
        puts, self._puts = self._puts, {}
        self.pending_bytes = 0
        touches, self._touches = self._touches, {}
        db = self._connect()
        if db is None:
            return {}
        rows = [row for row in puts.values() if row is not None]
        contents = [row.contents for row in rows if row.contents is not None]
        gone = [(to_db(rel_path),) for rel_path, row in puts.items() if row is None]
        try:
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("DELETE FROM files WHERE rel_path = ?", gone)
                db.executemany(
                    "DELETE FROM contents WHERE rel_path = ?",
                    gone + [row.files[:1] for row in rows if row.contents is None],
                )
                db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [row.files for row in rows],
                )
                db.executemany("INSERT OR REPLACE INTO contents VALUES (?, ?, ?)", contents)
                db.executemany(
                    "UPDATE files SET mtime_ns = ?, checked_ns = ?"
                    " WHERE rel_path = ? AND generation = ?",
                    [
                        (mtime_ns, checked_ns, to_db(rel_path), generation)
                        for rel_path, (mtime_ns, checked_ns, _, generation) in touches.items()
                        if rel_path not in puts
                    ],
                )
                if gone_texts:
                    seen = time.time_ns()
                    db.executemany(
                        "INSERT OR REPLACE INTO gone VALUES (?, ?, ?)",
                        [(to_db(cid), to_db(text), seen) for cid, text in gone_texts.items()],
                    )
                    db.execute(
                        "DELETE FROM gone WHERE chunk_id IN (SELECT chunk_id FROM gone"
                        " ORDER BY seen DESC LIMIT -1 OFFSET ?)",
                        (GONE_ROWS,),
                    )
        except (sqlite3.Error, OSError) as error:
            self._fail("cannot be written", error, rebuild=True)
            return {}
        return {
            rel_path: row.generation
            for rel_path, row in puts.items()
            if row is not None and row.contents is not None and row.contents[2] is not None
        }

    def texts(self, rel_path: str, generation: int) -> bytes | None:
        """The texts blob of a file's row of this generation (``None``: not to be had)."""
        pending = self._puts.get(rel_path)
        if pending is not None and pending.generation == generation:
            return pending.contents[2] if pending.contents is not None else None
        db = self._db or self._read_only()  # (opening it to write may write)
        if db is None:
            return None
        try:
            found = db.execute(
                "SELECT texts FROM files JOIN contents USING (rel_path)"
                " WHERE rel_path = ? AND generation = ?",
                (to_db(rel_path), generation),
            ).fetchone()
        except (sqlite3.Error, OSError) as error:
            if self.problem is None:
                _logger().warning("index cache %s: cannot read texts (%s)", self.path, error)
                self.problem = str(error)
            return None
        return found[0] if found is not None and isinstance(found[0], bytes) else None

    def remember_gone(self, texts: dict[str, str]) -> None:
        """Keep the last text of chunk IDs that just left the folder (next ``flush``)."""
        for chunk_id, text in texts.items():
            self._gone[chunk_id] = text[:GONE_CHARS]

    def gone_text(self, chunk_id: str) -> str | None:
        """The last text of a chunk ID that left the folder, if the cache kept it."""
        pending = self._gone.get(chunk_id)
        if pending is not None:
            return pending
        db = self._db or self._read_only()  # (opening it to write may write)
        if db is None:
            return None
        try:
            found = db.execute(
                "SELECT text FROM gone WHERE chunk_id = ?", (to_db(chunk_id),)
            ).fetchone()
        except (sqlite3.Error, OSError):
            return None  # (an older cache file without the table, a damaged one)
        return from_db(found[0]) if found is not None else None

    def _read_only(self) -> sqlite3.Connection | None:
        """A connection that only reads the file (made once, after ``close``)."""
        if self._reader is None and not self._disabled:
            try:
                self._reader = sqlite3.connect(
                    f"{self.path.as_uri()}?mode=ro", uri=True, timeout=0.5, check_same_thread=False
                )
            except (sqlite3.Error, OSError):
                return None
        return self._reader

    def _write(self, write: Callable[[sqlite3.Connection], object]) -> None:
        """Run ``write`` on the file, if it is in use (a failure is ``_fail``'s)."""
        db = self._connect()
        if db is None:
            return
        try:
            write(db)
        except (sqlite3.Error, OSError) as error:
            self._fail("cannot be written", error, rebuild=True)

    def save_listing(self, listing: Listing) -> None:
        """Record the folders of the last whole walk (after ``flush``)."""
        sql = "INSERT OR REPLACE INTO listing (id, walk) VALUES (1, ?)"
        self._write(lambda db: db.execute(sql, (listing.encode(),)))  # (autocommitted)

    def save_snapshot(self, snapshot: Snapshot, generations: dict[str, int]) -> None:
        """Replace the saved search postings (after ``flush``)."""
        from chunkls.storage import saved_postings

        self._write(lambda db: saved_postings.save(db, self.path.parent, snapshot, generations))


def _locked(error: BaseException) -> bool:
    text = str(error).lower()
    return isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text)
