"""Server commands (``workspace/executeCommand``), their IDs and arguments."""

from __future__ import annotations

from typing import Any

import attrs
from cattrs.gen import make_dict_structure_fn, override

from chunkls.lsp import references
from chunkls.lsp.convert import chunk_range, chunk_uri
from chunkls.lsp.server import ChunkServer

SEARCH = "chunkls.search"
REINDEX = "chunkls.reindex"
STATS = "chunkls.stats"
CHUNK_AT = "chunkls.chunkAt"
CHUNKS = "chunkls.chunks"

MAX_TOP_K = 1000


@attrs.define
class SearchArgs:
    """``chunkls.search``'s argument: ``{"query": str, "topK": int}``."""

    query: str
    top_k: int = 20


@attrs.define
class ChunkAtArgs:
    """``chunkls.chunkAt``'s argument: ``{"uri": str, "line": int}`` (0-based line)."""

    uri: str
    line: int


def register(server: ChunkServer) -> None:
    """Register the commands, and how their arguments are read."""
    converter = server.protocol.fm.converter
    converter.register_structure_hook(
        SearchArgs,
        make_dict_structure_fn(
            SearchArgs, converter, top_k=override(rename="topK"), _cattrs_forbid_extra_keys=False
        ),
    )
    server.command(SEARCH)(search)
    server.command(REINDEX)(reindex)
    server.command(STATS)(stats)
    server.command(CHUNK_AT)(chunk_at)
    server.command(CHUNKS)(chunks)


def search(ls: ChunkServer, args: SearchArgs) -> list[dict[str, Any]]:
    """chunkls.search: BM25-ranked chunks with URI, range and a one-line preview."""
    top_k = max(1, min(args.top_k, MAX_TOP_K))
    results = []
    for hit in ls.index.search(args.query, top_k):
        chunk = hit.item.chunk
        preview = chunk.first_line
        results.append(
            {
                "chunkId": chunk.chunk_id,
                "score": round(hit.score, 6),
                "uri": chunk_uri(hit.item),
                "range": ls.protocol.fm.converter.unstructure(
                    chunk_range(chunk, None, ls.encoding)
                ),
                "preview": preview[:200],
            }
        )
    return results


async def reindex(ls: ChunkServer) -> dict[str, int]:
    """chunkls.reindex: re-read every folder from disk, with progress."""
    for folder in ls.index.folders:
        folder.rules = ls.rules_for(folder.root)
    await ls.index_folders(list(ls.index.folders), "Re-indexing chunks")
    return {"chunks": len(ls.index), "files": ls.index.file_count()}


def stats(ls: ChunkServer) -> dict[str, Any]:
    """chunkls.stats: chunk and file counts, and the skipped files with reasons."""
    return {
        "chunks": len(ls.index),
        "files": ls.index.file_count(),
        "indexing": ls.indexing > 0,
        "folders": [str(folder.root) for folder in ls.index.folders],
        "skipped": [
            {"path": str(folder.root / rel_path), "reason": reason}
            for folder, rel_path, reason in ls.index.skipped()
        ],
    }


def chunk_at(ls: ChunkServer, args: ChunkAtArgs) -> dict[str, str] | None:
    """chunkls.chunkAt: the chunk of an open document at a line, for Copy Chunk ID."""
    chunk = references.chunk_at(ls, args.uri, args.line)
    return None if chunk is None else {"chunkId": chunk.chunk_id}


def chunks(ls: ChunkServer) -> list[dict[str, Any]]:
    """chunkls.chunks: every indexed chunk in corpus order, as ``chunkls chunks``
    lists them (without text), plus its folder."""
    return [
        {
            "folder": str(entry.folder.root),
            "chunkId": entry.chunk.chunk_id,
            "sourcePath": entry.chunk.source_path,
            "startLine": entry.chunk.start_line,
            "endLine": entry.chunk.end_line,
        }
        for entry in ls.index.chunks()
    ]
