"""The workspace index: located chunks by folder, file and ID, plus BM25 search.

One job per module:

- ``folder``: ``Folder`` (a corpus root, its rules and chunk maps),
  ``IndexedChunk``, and ``ChunkAt``/``ChunkAts`` (what search postings point at);
- ``store``: the chunk store: the one path that changes a file's chunks
  (``set_file``), the maps by ID and source path, the postings, and the
  read-only lookups;
- ``bulk``: whole folders indexed by workers, reused from the cache, or chunked
  in a separate process;
- ``disk``: files re-read from disk (``refresh``) and lost chunk texts
  recovered (``recover_texts``);
- ``suggest``: the IDs closest to one that does not resolve;
- ``workspace``: ``WorkspaceIndex``, the store with the others composed in,
  and ``build_index``;
- ``ondisk``: ``DiskIndex``, the same read-only questions answered from a
  folder's cache read in place, when it holds the folder as it is (for a
  short-lived process: the CLI, the MCP server while its index loads).

The query API every front door (LSP, CLI, MCP) uses; each only reads (it never
opens a file, chunks or writes the cache):

- ``lookup(chunk_id, prefer=None)``: the chunks with exactly this ID;
- ``resolve_first(candidate_ids, prefer=None)``: those of the first ID that resolves;
- ``has_id(chunk_id)``: whether any folder has it (no chunk is read);
- ``file_chunks(folder, rel_path)``: one file's chunks;
- ``chunks_of_source(source_path, prefer=None)``: the chunks of one source path;
- ``chunks()``, ``skipped()``: every chunk, every skipped file, in corpus order;
- ``search(query, top_k=10)``: BM25-ranked chunks;
- ``suggest(chunk_id, limit=3)``: the IDs closest to an unknown one;
- ``source_paths()``, ``source_paths_starting(prefix)``: the paths with chunks;
- ``file_count()``, ``folder_of(path)``.

A file whose texts the cache lost answers no chunks until ``recover_texts()``
reads it again (``texts_missing`` lists such files, ``on_texts_missing`` is told).

The names below are imported from their modules on first use (PEP 562): the CLI
answering from the cache in place (``ondisk``) does not load the in-memory
store, its numpy postings or the bulk indexer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunkls.runtime.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from chunkls.index.bulk import Progress
    from chunkls.index.folder import ChunkAt, ChunkAts, Folder, IndexedChunk
    from chunkls.index.workspace import WorkspaceIndex, build_index

_MODULE_OF = {
    "ChunkAt": "folder",
    "ChunkAts": "folder",
    "Folder": "folder",
    "IndexedChunk": "folder",
    "Progress": "bulk",
    "WorkspaceIndex": "workspace",
    "build_index": "workspace",
}

__all__ = [
    "ChunkAt",
    "ChunkAts",
    "Folder",
    "IndexedChunk",
    "Progress",
    "WorkspaceIndex",
    "build_index",
]


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, globals())
