"""A folder's search snapshot: the postings file (``mapped``) and the ``snapshot`` row that
names it, with each covered file's row generation. These raise to ``FolderCache``."""

from __future__ import annotations

import logging
import marshal
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chunkls.search.postings import Segment, Snapshot, docs_ascending
from chunkls.search.vocabulary import TermTable
from chunkls.storage.mapped import Mapped, MappedWriter, remove_others

_logger = logging.getLogger("chunkls.storage.cache")


def load(db: sqlite3.Connection, directory: Path) -> tuple[Snapshot | None, dict[str, int]]:
    """The snapshot saved in ``db`` (``None``: none, or not usable), its files' generations."""
    row = db.execute("SELECT files, mapped FROM snapshot WHERE id = 1").fetchone()
    if row is None:
        return None, {}
    files_blob, token = row
    files = marshal.loads(files_blob)
    try:
        mapped = Mapped(directory, token)
        terms, segment, lengths = _from_mapped(mapped, files)
    except (OSError, ValueError) as error:
        _logger.info(
            "postings file of %s not used (%s): the files are read again", directory, error
        )
        return None, {}
    mapped.release()  # the checks read every page
    snapshot = Snapshot(
        [((0, rel_path), count) for rel_path, count, _ in files], terms, segment, lengths, mapped
    )
    return snapshot, {rel_path: generation for rel_path, _, generation in files}


def _from_mapped(
    mapped: Mapped, files: list[Any]
) -> tuple[TermTable, Segment, npt.NDArray[np.int32]]:
    """The postings of a mapped file (``ValueError`` unless they and the files fit)."""
    arrays = mapped.arrays
    try:
        terms = TermTable.from_parts(
            mapped.blob, arrays["ids"], arrays["starts"], arrays["prefixes"]
        )
        offsets = arrays["offsets"]
        segment = Segment(offsets, arrays["docs"], arrays["tfs"])
        lengths = arrays["lengths"]
    except KeyError as missing:
        raise ValueError(f"postings file without {missing}") from None
    starts = terms.starts
    if (
        (len(starts) > 1 and (int(starts[0]) != 0 or not bool(np.all(starts[1:] > starts[:-1]))))
        or (len(terms.blob) and terms.blob[-1:] != b"\0")
        or not bool(np.all(offsets[1:] >= offsets[:-1]))
    ):
        raise ValueError("inconsistent postings file")
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
    return terms, segment, lengths


def save(
    db: sqlite3.Connection, directory: Path, snapshot: Snapshot, generations: dict[str, int]
) -> None:
    """Replace the saved search postings: the file first, then (in one
    transaction) the row that names it; on failure no file is left behind."""
    files = marshal.dumps(
        [(key[1], count, generations.get(key[1], -1)) for key, count in snapshot.files]
    )
    terms = snapshot.terms
    segment = docs_ascending(snapshot.segment)  # (as reading them needs them)
    arrays: dict[str, npt.NDArray[Any]] = {
        "offsets": segment.offsets,
        "ids": terms.ids,
        "starts": terms.starts,
        "prefixes": terms.prefixes,
        "docs": segment.docs,
        "tfs": segment.tfs,  # 16-bit when they fit
        "lengths": snapshot.lengths.astype(np.int32, copy=False),
    }
    writer = None
    token = None
    try:
        writer = MappedWriter(
            directory,
            # each array as it is in memory, in this machine's byte order
            [(name, each.dtype.newbyteorder("=").str, len(each)) for name, each in arrays.items()]
            + [("blob", "|u1", len(terms.blob))],
        )
        for name, array in arrays.items():
            writer.put(name, array)
        writer.put("blob", terms.blob)
        token = writer.finish()
    except (OSError, ValueError) as error:
        _logger.info("postings file of %s not written (%s)", directory, error)
        if writer is not None:
            writer.abandon()
    try:
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM snapshot")
            if token is not None:
                db.execute(
                    "INSERT INTO snapshot (id, mapped, files) VALUES (1, ?, ?)", (token, files)
                )
    except BaseException:
        if writer is not None:
            writer.abandon()
        raise
    remove_others(directory, token)
