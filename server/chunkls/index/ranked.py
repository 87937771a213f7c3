"""The query API's search: a mode's ranking (``chunkls.search.modes.rank``) over
the store's postings, each ranked document found in its folder's file, and the
part of each result that answers best. Reads only, as every question does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from chunkls.chunking.located_chunk import ChunkStub
from chunkls.index.folder import Folder, IndexedChunk, ListedChunk
from chunkls.search.definitions import PART, best_part
from chunkls.search.modes import query_words, rank
from chunkls.search.scorer import Hit, Part

if TYPE_CHECKING:
    from chunkls.index.store import ChunkStore
    from chunkls.storage.packed import StoredFile, Stub


def search(
    store: ChunkStore,
    query: str,
    top_k: int,
    mode: str,
    where: Callable[[str], bool] | None,
) -> list[Hit[IndexedChunk]]:
    """The best chunks for a query in a mode, each with its best part's lines."""
    words = query_words(query, mode)
    hits = []
    for score, _doc, folder, stored, number in ranked(store, query, top_k, mode, where):
        if (hit := read(store, score, folder, stored, number, words)) is not None:
            hits.append(hit)
    return hits


def read(
    store: ChunkStore,
    score: float,
    folder: Folder,
    stored: StoredFile,
    number: int,
    words: Sequence[str],
) -> Hit[IndexedChunk] | None:
    """A ranked chunk as a hit with its text, at its best part for ``words``
    (``None``: its text is not to be had)."""
    chunks = store._unpack(folder, stored)
    if number >= len(chunks):
        return None
    entry = IndexedChunk(folder, chunks[number])
    return Hit(score, entry, *part_lines(entry, words))


def listing(store: ChunkStore, query: str, top_k: int, mode: str) -> list[Hit[ListedChunk]]:
    """``Queries.listing``: ``search``'s hits without their texts, each chunk as its
    stub, at its whole lines."""
    hits = []
    for score, _doc, folder, stored, number in ranked(store, query, top_k, mode, None):
        if (hit := listed(store, score, folder, stored, number)) is not None:
            hits.append(hit)
    return hits


def listed(
    store: ChunkStore, score: float, folder: Folder, stored: StoredFile, number: int
) -> Hit[ListedChunk] | None:
    """A ranked chunk as a listing's hit, from its stub (``None``: gone)."""
    stubs = store._stubs(stored.packed)
    if number >= len(stubs):
        return None
    chunk = ChunkStub(*stubs[number])
    return Hit(score, ListedChunk(folder, chunk), (chunk.start_line, chunk.end_line))


def defining(store: ChunkStore, words: Sequence[str], docs: list[int]) -> set[int]:
    """The documents among ``docs`` defining inside them a name that has one of
    ``words`` as a part (the symbol table's ``PART`` terms: what a part's name
    must have for ``best_part`` to count it)."""
    import numpy as np  # (a server's: a CLI's warm search imports no numpy)

    wanted = np.asarray(docs, dtype=np.int64)
    found: set[int] = set()
    for postings in store.postings.postings([PART + word for word in words]) if docs else ():
        if postings is not None and len(postings.docs):  # (ascending: each doc looked up)
            held = np.asarray(postings.docs)
            at = np.minimum(np.searchsorted(held, wanted), len(held) - 1)
            found.update(wanted[held[at] == wanted].tolist())
    return found


def best_lines(entry: IndexedChunk, query: str, mode: str) -> Part:
    """``Queries.best_lines``: the part of a chunk ``search`` finds for a query."""
    return part_lines(entry, query_words(query, mode))


def part_lines(entry: IndexedChunk, words: Sequence[str]) -> Part:
    """The lines of a chunk that answer a query's words best, and the name of the
    definition they are (``chunkls.search.definitions.best_part``)."""
    chunk = entry.chunk
    if not words:
        return (chunk.start_line, chunk.end_line), None
    start, end, part = best_part(
        chunk.symbol,
        chunk.text,
        chunk.identity.split("-", 1)[0],
        chunk.start_line,
        chunk.end_line,
        chunk.file_type == "code",
        words,
    )
    return (start, end), part


def ranked(
    store: ChunkStore, query: str, top_k: int, mode: str, where: Callable[[str], bool] | None
) -> Iterator[tuple[float, int, Folder, StoredFile, int]]:
    """``search``'s ranking: each hit's score, document, folder, file and place in it."""
    source = store.postings
    stored_at = placer(store)

    def describe(doc: int) -> Stub | None:  # ranking reads no text
        found = stored_at(doc)
        stubs = store._stubs(found[1].packed) if found else ()
        return stubs[found[2]] if found and found[2] < len(stubs) else None

    for doc, score in rank(source, query, top_k, mode, describe, where):
        if found := stored_at(doc):
            yield (score, doc, *found)


def placer(store: ChunkStore) -> Callable[[int], tuple[Folder, StoredFile, int] | None]:
    """Where a document of the store's postings is: its folder, file and place in it."""
    source = store.postings
    by_position = {folder.position: folder for folder in store.folders}

    def stored_at(doc: int) -> tuple[Folder, StoredFile, int] | None:
        (position, rel_path), number = source.order_key(doc)
        folder = by_position.get(position)
        stored = store._stored(folder, rel_path) if folder is not None else None
        return (folder, stored, number) if folder is not None and stored else None

    return stored_at
