"""The workspace index: located chunks by folder, file and ID, searchable, and
the one path that changes them.

One job per module:

- ``folder``: ``Folder`` (a corpus root, its rules and chunk maps, loaded or read
  in place from its cache), ``IndexedChunk``, and ``ChunkAt``/``ChunkAts`` (what
  search postings point at);
- ``queries``: ``Queries``, the query API every front door asks (a Protocol);
- ``store``: ``ChunkStore``, its one implementation: the chunk maps, the search
  postings, the one path that changes a file's chunks (``set_file``);
- ``session``: ``Session``, a process's roots, rules, index and freshness,
  and the one write step (``catch_up``) taken before a question is answered;
- ``bulk``: whole folders indexed by workers, reused from the cache, or chunked
  in a separate process;
- ``refresh``: files re-read from disk into the store;
- ``citations``: who cites what, unknown IDs and their replacements;
- ``suggest``: the IDs closest to one that does not resolve;
- ``id_map``: which files hold an ID, by 96-bit keys.

The names below are imported from their modules on first use (PEP 562): the CLI
answering from the cache read in place does not load the in-memory postings,
numpy or the bulk indexer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunkls.runtime.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from chunkls.index.bulk import Progress
    from chunkls.index.folder import ChunkAt, ChunkAts, Folder, IndexedChunk
    from chunkls.index.queries import Queries
    from chunkls.index.session import Session, build_index
    from chunkls.index.store import ChunkStore

_MODULE_OF = {
    "ChunkAt": "folder",
    "ChunkAts": "folder",
    "ChunkStore": "store",
    "Folder": "folder",
    "IndexedChunk": "folder",
    "Progress": "bulk",
    "Queries": "queries",
    "Session": "session",
    "build_index": "session",
}

__all__ = [
    "ChunkAt",
    "ChunkAts",
    "ChunkStore",
    "Folder",
    "IndexedChunk",
    "Progress",
    "Queries",
    "Session",
    "build_index",
]


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, globals())
