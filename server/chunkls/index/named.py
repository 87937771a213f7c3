"""The query API's symbol search, the one order of ``workspace/symbol`` and of
completing a chunk ID: when what was typed is one name the symbol table has in
no way (exactly, as a part, as a beginning), the chunks defining the names it
fuzzily stands for (``chunkls.search.fuzzy``) come first, by the names' order,
each name's own definitions (a chunk named so) before inner ones, each in chunk
order; the mode's ranking follows. Reads only, as every question does.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from chunkls.index.folder import FoundChunk, IndexedChunk, ListedChunk
from chunkls.index.ranked import defining, listed, listing, placer, ranked, read
from chunkls.search.definitions import INNER, OWN, passages
from chunkls.search.fuzzy import fuzzy_names
from chunkls.search.modes import query_words
from chunkls.search.scorer import Hit

if TYPE_CHECKING:
    from chunkls.index.store import ChunkStore

FUZZY_NAMES = 20
"""Most names a mistyped one is read as."""
LISTED_PARTS = 32
"""The first hits among which ``parts`` false still reads the chunks defining a name
with a query word, to list that part by its name (VS Code shows about 20 rows; a
hit further down is a stub, its part found when it is chosen)."""


def fuzzy_docs(store: ChunkStore, query: str, top_k: int) -> list[tuple[int, str, bool, float]]:
    """The documents defining the names ``query`` fuzzily stands for, best first,
    at most ``top_k``: each with the name, whether it is defined inside the
    chunk (not its own), and a score (1 for the best name, 1/2 the next...)."""
    source = store.postings
    found: dict[int, tuple[int, str, bool, float]] = {}
    for rank, name in enumerate(fuzzy_names(source, query.strip(), FUZZY_NAMES)):
        own, inner = source.postings([OWN + name, INNER + name])
        for postings, is_inner in ((own, False), (inner, True)):
            if postings is None:
                continue
            wanted = top_k - len(found)
            docs = [int(doc) for doc in postings.docs if int(doc) not in found]
            for doc in heapq.nsmallest(wanted, docs, key=source.order_key):
                found[doc] = (doc, name, is_inner, 1.0 / (rank + 1))
            if len(found) >= top_k:
                return list(found.values())
    return list(found.values())


def symbol_search(
    store: ChunkStore, query: str, top_k: int, mode: str, parts: bool = True
) -> tuple[list[Hit[FoundChunk]], int]:
    """``fuzzy_docs``' chunks (a definition inside one: at its lines, by its
    name), then the mode's ranking, at most ``top_k`` (``parts`` false: the best
    parts of only the chunks defining a name with a word of the query among the
    first ``LISTED_PARTS``, the rest listed without their texts); and how many
    come first fuzzily."""
    stored_at = placer(store)
    hits: list[Hit[FoundChunk]] = []
    seen: set[str] = set()
    for doc, name, is_inner, score in fuzzy_docs(store, query, top_k):
        place = stored_at(doc)
        chunks = store._unpack(place[0], place[1]) if place else []
        if place is None or place[2] >= len(chunks):
            continue
        chunk = chunks[place[2]]
        lines, part = (chunk.start_line, chunk.end_line), None
        if is_inner:
            kind = chunk.identity.split("-", 1)[0]
            python = chunk.file_type == "code"
            for passage in passages(chunk.text, kind, chunk.start_line, python):
                if passage.name.lower() == name:
                    lines, part = (passage.start_line, passage.end_line), passage.name
                    break
        hits.append(Hit(score, IndexedChunk(place[0], chunk), lines, part))
        seen.add(chunk.chunk_id)
    fuzzy = len(hits)
    if fuzzy < top_k:
        words = query_words(query, mode)
        found = list(ranked(store, query, top_k, mode, None))
        first = [doc for _, doc, *_ in found[:LISTED_PARTS]]
        naming = None if parts else defining(store, words, first)
        for score, doc, folder, stored, number in found:
            hit: Hit[IndexedChunk] | Hit[ListedChunk] | None
            if naming is None or doc in naming:
                hit = read(store, score, folder, stored, number, words)
            else:
                hit = listed(store, score, folder, stored, number)
            if hit is not None and hit.item.chunk.chunk_id not in seen and len(hits) < top_k:
                hits.append(hit)
    return hits, fuzzy


def symbol_search_ids(store: ChunkStore, query: str, top_k: int, mode: str) -> list[str]:
    """The chunk IDs of ``symbol_search``'s hits, in its order, without reading
    any chunk's text."""
    stored_at = placer(store)
    ids: dict[str, None] = {}
    for doc, _name, _inner, _score in fuzzy_docs(store, query, top_k):
        place = stored_at(doc)
        stubs = store._stubs(place[1].packed) if place else ()
        if place is not None and place[2] < len(stubs):
            ids[stubs[place[2]][0]] = None
    if len(ids) < top_k:
        for hit in listing(store, query, top_k, mode):
            if len(ids) < top_k:
                ids[hit.item.chunk.chunk_id] = None
    return list(ids)
