"""Files read from disk into the store one at a time (a save, a watcher event, lost texts):
a producer for the store's one write path (``ChunkStore.set_file`` and its kin)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from chunkls.chunking.corpus import CorpusFile, FileSkipped, read_regular, walk_corpus
from chunkls.index.folder import Folder
from chunkls.index.store import ChunkStore
from chunkls.index.workers import Chunked, chunk_one, content_digest


def refresh(store: ChunkStore, folder: Folder, rel_paths: Iterable[str]) -> list[str]:
    """``Session.refresh``, without the citations."""
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
                apply(store, folder, chunk_one(folder.root_resolved, file, folder.rules))
            for skipped in walk.skipped:
                store.skip_file(folder, skipped.rel_path, skipped.reason)
            for gone in below:
                if gone not in found and gone not in folder.skipped:
                    store.forget_file(folder, gone)
            changed += sorted(found | set(below) | {s.rel_path for s in walk.skipped})
        elif below:  # a folder that was deleted or replaced by a file
            for gone in below:
                store.forget_file(folder, gone)
            changed += below
        # the path itself (also a folder's, when it replaced a corpus file: "m.py/")
        changed += _refresh_file(store, folder, rel_path)
    if folder.touched is not None:  # an indexing pass is running: leave these be
        folder.touched.update(rel_paths, changed)
    store.flush(folder)  # one commit for the batch
    return changed


def _refresh_file(store: ChunkStore, folder: Folder, rel_path: str) -> list[str]:
    known = rel_path in folder.files or rel_path in folder.skipped
    path = folder.absolute(rel_path)
    if folder.rules.excluded_reason(rel_path) is not None or not os.path.lexists(path):
        if known:
            store.forget_file(folder, rel_path)
            return [rel_path]
        return []
    file = CorpusFile(rel_path, os.fspath(path), os.path.islink(path))  # (False on any error)
    apply(store, folder, chunk_one(folder.root_resolved, file, folder.rules))
    return [rel_path]


def apply(store: ChunkStore, folder: Folder, result: Chunked) -> None:
    """Put what chunking one file gave into the store (its chunks, or why not)."""
    if result.chunks is None:
        reason = result.skipped or "could not be chunked"
        row = None
        if folder.cache is not None and result.stat is not None and not result.link:
            path = os.fspath(folder.absolute(result.rel_path))
            row = (digest_of(path, folder.rules.max_file_size), *result.stat)
        store.skip_file(folder, result.rel_path, reason, row)
    else:
        store.set_file(
            folder,
            result.rel_path,
            result.chunks,
            result.terms,
            result.digest,
            cached=not result.link,
        )


def digest_of(path: str, max_file_size: int) -> bytes | None:
    """The content hash of a regular file (``None``: not one, too large or unreadable)."""
    try:
        return content_digest(read_regular(path, max_file_size)[0])
    except (FileSkipped, OSError):
        return None
