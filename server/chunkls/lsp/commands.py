"""Server commands (``workspace/executeCommand``), their IDs and arguments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from chunkls.lsp.documents import chunk_at_line
from chunkls.lsp.ranges import chunk_range, chunk_uri

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer
else:  # pygls reads a command handler's annotations at run time (to structure
    # its arguments): there ``ls`` is the language server pygls knows
    from pygls.lsp.server import LanguageServer as ChunkServer

MAX_TOP_K = 1000


def register(server: ChunkServer) -> None:
    """Register the commands, and how their arguments are read."""
    converter = server.protocol.fm.converter
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
                "range": chunk_range(chunk, None, ls.encoding),
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
    chunk = chunk_at_line(ls, args.uri, args.line)
    return None if chunk is None else {"chunkId": chunk.chunk_id}


def chunks(ls: ChunkServer) -> list[dict[str, Any]]:
    """chunkls.chunks: every indexed chunk in corpus order (as the CLI lists), with its folder."""
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
