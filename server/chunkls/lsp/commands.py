"""Server commands (``workspace/executeCommand``), their IDs and arguments."""

from __future__ import annotations

from typing import Any

from chunkls.lsp import references
from chunkls.lsp.contract import (
    CHUNK_AT,
    CHUNKS,
    REINDEX,
    SEARCH,
    STATS,
    ChunkAtArgs,
    SearchArgs,
    configure_converter,
)
from chunkls.lsp.convert import chunk_range, chunk_uri
from chunkls.lsp.server import ChunkServer

MAX_TOP_K = 1000


def register(server: ChunkServer) -> None:
    """Register the commands, and how their arguments are read."""
    converter = server.protocol._converter
    configure_converter(converter)
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
                "range": ls.protocol._converter.unstructure(chunk_range(chunk, None, ls.encoding)),
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
