"""A folder's search snapshot in its cache: written, and read back.

The postings are saved twice: by term bucket in the database (``term_buckets``,
a query of the CLI reads a few rows, ``chunkls.index.ondisk``) and whole in a
file beside it that a load maps (``chunkls.storage.mapped``). A load maps that file
when the snapshot row names it and it checks out; otherwise it reads the
buckets into arrays, as before the file existed. Either way the arrays, and so
the scores, are the same.

``FolderCache`` calls these inside its error handling: they raise
``sqlite3.Error``, ``OSError`` or ``ValueError`` on a cache they cannot use.
"""

from __future__ import annotations

import logging
import marshal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chunkls.search.postings import BucketRow, Segment, Snapshot, bucket_rows
from chunkls.search.vocabulary import TermTable
from chunkls.storage.mapped import Mapped, MappedWriter, remove_others

_logger = logging.getLogger("chunkls.storage.cache")


def load(db: sqlite3.Connection, directory: Path) -> tuple[Snapshot | None, dict[str, int]]:
    """The snapshot saved in ``db`` (``None``: none), with the row generation
    of each of its files."""
    row = db.execute("SELECT files, lengths, mapped FROM snapshot WHERE id = 1").fetchone()
    if row is None:
        return None, {}
    files_blob, lengths_blob, token = row
    files = marshal.loads(files_blob)
    lengths = np.frombuffer(lengths_blob, dtype=np.int32)
    mapped = None
    if token is not None:
        try:
            mapped = Mapped(directory, token)
            terms, segment = _from_mapped(mapped)
            _check(terms, segment, files, lengths)
        except (OSError, ValueError) as error:
            _logger.info("postings file of %s not used (%s): reading the tables", directory, error)
            mapped = None
    if mapped is None:
        terms, segment = _from_tables(db)
        _check(terms, segment, files, lengths)
    else:
        mapped.release()  # the checks read every page
    snapshot = Snapshot(
        [((0, rel_path), count) for rel_path, count, _ in files], terms, segment, lengths, mapped
    )
    return snapshot, {rel_path: generation for rel_path, _, generation in files}


def _from_mapped(mapped: Mapped) -> tuple[TermTable, Segment]:
    arrays = mapped.arrays
    try:
        terms = TermTable.from_parts(
            mapped.blob, arrays["ids"], arrays["starts"], arrays["prefixes"]
        )
        offsets = arrays["offsets"]
        segment = Segment(offsets, arrays["docs"], arrays["tfs"])
    except KeyError as missing:
        raise ValueError(f"postings file without {missing}") from None
    starts = terms.starts
    if (
        (len(starts) > 1 and (int(starts[0]) != 0 or not bool(np.all(starts[1:] > starts[:-1]))))
        or (len(terms.blob) and terms.blob[-1:] != b"\0")
        or not bool(np.all(offsets[1:] >= offsets[:-1]))
    ):
        raise ValueError("inconsistent postings file")
    return terms, segment


def _from_tables(db: sqlite3.Connection) -> tuple[TermTable, Segment]:
    """The term table and the postings as the database's tables hold them."""
    terms_blob, term_ids, offsets_blob = db.execute(
        "SELECT terms, term_ids, offsets FROM snapshot WHERE id = 1"
    ).fetchone()
    terms = TermTable(terms_blob, np.frombuffer(term_ids, dtype=np.int32))
    offsets = np.frombuffer(offsets_blob, dtype=np.int64)
    if len(offsets) != len(terms) + 1 or (len(offsets) and offsets[0] != 0):
        raise ValueError("inconsistent snapshot")
    total = int(offsets[-1])
    # the buckets' postings copied in place one row at a time (never all the
    # rows at once, then joined: twice the memory, and holes left in the heap)
    docs = np.empty(total, dtype=np.int32)
    tfs: npt.NDArray[Any] | None = None
    per_term = np.empty(len(terms), dtype=np.int32)
    at = terms_at = 0
    for counts_blob, docs_blob, tfs_blob in db.execute(
        "SELECT counts, docs, tfs FROM term_buckets ORDER BY bucket"
    ):
        row_counts = np.frombuffer(counts_blob, dtype=np.int32)
        row_docs = np.frombuffer(docs_blob, dtype=np.int32)
        if tfs is None:
            # term frequencies were saved 16-bit when they fitted (half the bytes)
            narrow = 2 * len(tfs_blob) == len(docs_blob)
            tfs = np.empty(total, dtype=np.uint16 if narrow else np.int32)
        row_tfs = np.frombuffer(tfs_blob, dtype=tfs.dtype)
        if len(row_tfs) != len(row_docs) or at + len(row_docs) > total:
            raise ValueError("inconsistent snapshot")
        docs[at : at + len(row_docs)] = row_docs
        tfs[at : at + len(row_docs)] = row_tfs
        per_term[terms_at : terms_at + len(row_counts)] = row_counts
        at += len(row_docs)
        terms_at += len(row_counts)
    if tfs is None:
        tfs = np.empty(0, dtype=np.uint16)
    if at != total or terms_at != len(terms) or not np.array_equal(per_term, np.diff(offsets)):
        raise ValueError("inconsistent snapshot")
    return terms, Segment(offsets, docs, tfs)


def _check(
    terms: TermTable, segment: Segment, files: list[Any], lengths: npt.NDArray[np.int32]
) -> None:
    """``ValueError`` unless the postings, the terms and the files fit together."""
    counts = sum(count for _, count, _ in files)
    if (
        len(segment.offsets) != len(terms) + 1
        or int(segment.offsets[0]) != 0
        or len(segment.docs) != len(segment.tfs)
        or int(segment.offsets[-1]) != len(segment.docs)
        or counts != len(lengths)
        or (len(segment.docs) and int(segment.docs.max()) >= counts)
        or (len(segment.docs) and int(segment.docs.min()) < 0)
        or (len(terms) and np.bincount(terms.ids, minlength=len(terms)).max() != 1)
        or (len(terms) and (int(terms.ids.min()) < 0 or int(terms.ids.max()) >= len(terms)))
        or not bool(np.all(terms.prefixes[1:] >= terms.prefixes[:-1]))
    ):
        raise ValueError("inconsistent snapshot")


def save(
    db: sqlite3.Connection, directory: Path, snapshot: Snapshot, generations: dict[str, int]
) -> None:
    """Replace the saved search postings, in one transaction (the caller handles
    ``sqlite3.Error``/``OSError``: the transaction is then rolled back and no
    postings file is left behind)."""
    files = marshal.dumps(
        [(key[1], count, generations.get(key[1], -1)) for key, count in snapshot.files]
    )
    saved = bucket_rows(snapshot)
    terms = snapshot.terms
    writer = None
    try:
        writer = MappedWriter(
            directory,
            [
                ("offsets", _native(np.int64), len(saved.offsets)),
                ("ids", _native(np.int32), len(saved.term_ids)),
                ("starts", _native(np.int64), len(terms.starts)),
                ("prefixes", _native(np.uint64), len(terms.prefixes)),
                ("docs", _native(np.int32), len(snapshot.segment.docs)),
                # as ``bucket_rows`` gives them: 16-bit when they fit
                ("tfs", _native(snapshot.segment.tfs.dtype), len(snapshot.segment.tfs)),
                ("blob", "|u1", len(terms.blob)),
            ],
        )
        writer.put("offsets", saved.offsets)
        writer.put("ids", saved.term_ids)
        writer.put("starts", terms.starts)
        writer.put("prefixes", terms.prefixes)
        writer.put("blob", terms.blob)
    except (OSError, ValueError) as error:
        _logger.info("postings file of %s not written (%s)", directory, error)
        if writer is not None:
            writer.abandon()
        writer = None
    token = None
    try:
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM term_buckets")
            db.executemany(
                "INSERT INTO term_buckets VALUES (?, ?, ?, ?, ?)",
                saved.rows if writer is None else _written(saved.rows, writer),
            )
            if writer is not None and writer.healthy:
                try:
                    token = writer.finish()
                except (OSError, ValueError) as error:
                    _logger.info("postings file of %s not written (%s)", directory, error)
            db.execute(
                "INSERT OR REPLACE INTO snapshot (id, buckets, mapped, files, lengths, terms,"
                " term_ids, offsets) VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
                (
                    saved.buckets,
                    token,
                    files,
                    snapshot.lengths.astype(np.int32).tobytes(),
                    terms.blob,
                    saved.term_ids.tobytes(),
                    saved.offsets.tobytes(),
                ),
            )
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    if writer is not None and token is None:
        writer.abandon()
    remove_others(directory, token)


def _native(dtype: Any) -> str:
    """A dtype's string in this machine's byte order (the file's arrays are
    written as they are in memory)."""
    return str(np.dtype(dtype).newbyteorder("=").str)


def _written(rows: Iterator[BucketRow], writer: MappedWriter) -> Iterator[BucketRow]:
    """The rows, their postings also put in the file as they pass (a file that
    cannot be written is given up; the rows go on)."""
    for row in rows:
        if writer.healthy:
            try:
                writer.put("docs", row[3])
                writer.put("tfs", row[4])
            except (OSError, ValueError) as error:
                _logger.info("postings file not written (%s)", error)
                writer.healthy = False
        yield row
