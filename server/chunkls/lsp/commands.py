"""Server commands (``workspace/executeCommand``), their IDs and arguments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from chunkls.chunking.located_chunk import PREVIEW
from chunkls.ids.grammar import find_chunk_refs, id_written
from chunkls.ids.positions import units
from chunkls.index.folder import FolderInfo, FoundChunk, IndexedChunk
from chunkls.lsp.contract import (
    CHUNK_AT,
    CHUNKS,
    FIX_CITATIONS,
    JUMP_TARGET,
    REINDEX,
    RESOLVE,
    SEARCH,
    STATS,
    ChunkAtArgs,
    JumpTargetArgs,
    ResolveArgs,
    SearchAnswer,
    SearchArgs,
    configure_converter,
    wire_fields,
)
from chunkls.lsp.documents import chunk_at_line, get_document, listed_chunk
from chunkls.lsp.ranges import chunk_range, chunk_uri, location, range_json, text_edit
from chunkls.lsp.uris import path_of, uri_of
from chunkls.lsp.written_ids import refs_of, resolve_written
from chunkls.search.modes import mode_problem, query_problem
from chunkls.search.scorer import Hit

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer
else:  # pygls reads a command handler's annotations at run time (to structure
    # its arguments): there ``ls`` is the language server pygls knows
    from pygls.lsp.server import LanguageServer as ChunkServer

MAX_TOP_K = 1000
MAX_RESOLVE_IDS = 100
"""``chunkIds`` answered per request (the rest get no answer)."""
MAX_RESOLVE_TEXT = 8_000
"""Characters of ``text`` read (a terminal line; the rest is not)."""
MAX_RESOLVE_SPANS = 20
"""IDs of one ``text`` answered (the first that resolve)."""


def register(server: ChunkServer) -> None:
    """Register the commands, and how their arguments are read."""
    converter = server.protocol.fm.converter
    configure_converter(converter)
    server.command(SEARCH)(search)
    server.command(REINDEX)(reindex)
    server.command(STATS)(stats)
    server.command(CHUNK_AT)(chunk_at)
    server.command(CHUNKS)(chunks)
    server.command(RESOLVE)(resolve)
    server.command(JUMP_TARGET)(jump_target)
    server.command(FIX_CITATIONS)(fix_citations)


def search(ls: ChunkServer, args: SearchArgs) -> list[dict[str, Any]] | dict[str, Any]:
    """chunkls.search: ranked chunks with URI, the range of their best part (``lines``;
    ``chunkRange``: the whole chunk's), a preview and the mode; with ``withReason``, a
    ``SearchAnswer`` that also says why a query was not searched."""
    if args.mode is not None and (problem := mode_problem(args.mode)) is not None:
        raise ValueError(problem)
    mode = ls.queries.search_mode(args.mode or ls.settings.search.requested)
    reason = query_problem(args.query, mode)
    results = [] if reason is not None else _ranked(ls, args, mode)
    if not args.with_reason:
        return results
    return wire_fields(SearchAnswer(results, mode, reason))  # (its results are JSON already)


def _ranked(ls: ChunkServer, args: SearchArgs, mode: str) -> list[dict[str, Any]]:
    top_k = max(1, min(args.top_k, MAX_TOP_K))
    hits: Sequence[Hit[FoundChunk]] = (
        ls.queries.search(args.query, top_k, mode)
        if args.parts
        else ls.queries.listing(args.query, top_k, mode)  # (no text unpacked)
    )
    return [
        {
            "chunkId": hit.item.chunk.chunk_id,
            "score": round(hit.score, 6),
            "mode": mode,
            "uri": chunk_uri(hit.item),
            # the jump target: the part that answers best (``lines``), in the chunk
            # (as JSON: the response's converter then walks plain values, twice as fast)
            "range": range_json(location(hit.item, ls.encoding, hit.lines).range),
            "chunkRange": range_json(chunk_range(hit.item.chunk, None, ls.encoding)),
            "lines": list(hit.lines) if hit.lines and args.parts else None,
            "preview": hit.item.chunk.first_line[:PREVIEW],
        }
        for hit in hits
    ]


def jump_target(ls: ChunkServer, args: JumpTargetArgs) -> dict[str, Any] | None:
    """chunkls.jumpTarget: the ``range`` and ``lines`` a ``parts: false`` search result
    opens at, as the search would have sent them; ``None`` when the chunk is gone."""
    if args.mode is not None and (problem := mode_problem(args.mode)) is not None:
        raise ValueError(problem)
    mode = ls.queries.search_mode(args.mode or ls.settings.search.requested)
    entry = listed_chunk(ls, args.chunk_id, args.uri, args.line)
    if entry is None:
        return None
    lines, part = ls.queries.best_lines(entry, args.query, mode)
    return {"range": location(entry, ls.encoding, lines).range, "lines": list(lines), "part": part}


async def reindex(ls: ChunkServer) -> dict[str, int]:
    """chunkls.reindex: re-read every folder from disk, with progress."""
    for folder in ls.queries.folders:
        ls.session.reload_rules(folder)
    await ls.index_folders(list(ls.queries.folders), "Re-indexing chunks")
    return {"chunks": len(ls.queries), "files": ls.queries.file_count()}


def stats(ls: ChunkServer) -> dict[str, Any]:
    """chunkls.stats: chunk and file counts, and the skipped files with reasons."""
    return {
        "chunks": len(ls.queries),
        "files": ls.queries.file_count(),
        "indexing": ls.indexing > 0,
        "folders": [str(folder.root) for folder in ls.queries.folders],
        "skipped": [
            {"path": str(folder.root / rel_path), "reason": reason}
            for folder, rel_path, reason in ls.queries.skipped()
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
        for entry in ls.queries.chunks()
    ]


def resolve(ls: ChunkServer, args: ResolveArgs) -> list[Any]:
    """chunkls.resolve: where chunk IDs are, by go to definition's lookup (``chunkIds``: a
    list, one per ID; ``text``: the IDs in it that resolve, with UTF-16 spans)."""
    path = path_of(args.folder) if args.folder else None
    found = ls.queries.folder_of(path) if path is not None else None
    prefer = found[0] if found is not None else None
    if args.text is not None:
        return _resolve_text(ls, args.text[:MAX_RESOLVE_TEXT], prefer)
    if args.chunk_ids is not None:
        return [_resolve_id(ls, chunk_id, prefer) for chunk_id in args.chunk_ids[:MAX_RESOLVE_IDS]]
    return _resolve_id(ls, args.chunk_id or "", prefer)


def _resolve_id(ls: ChunkServer, chunk_id: str, prefer: FolderInfo | None) -> list[dict[str, Any]]:
    """The chunks of an ID written alone (in any form ``id_written`` reads)."""
    ref = id_written(chunk_id)
    if ref is None:
        return []
    return [_target(ls, entry) for entry in resolve_written(ls, ref, None, prefer)]


def _resolve_text(ls: ChunkServer, text: str, prefer: FolderInfo | None) -> list[dict[str, Any]]:
    spans = []
    for ref in find_chunk_refs(text):
        if ref.form == "local":
            continue  # no document: no "same file"
        entries = resolve_written(ls, ref, None, prefer)
        if not entries:
            continue
        start = units(text[: ref.start])  # JavaScript strings count UTF-16 code units
        spans.append(
            {
                "start": start,
                "end": start + units(text[ref.start : ref.end]),
                "chunkId": entries[0].chunk.chunk_id,
                "targets": [_target(ls, entry) for entry in entries],
            }
        )
        if len(spans) == MAX_RESOLVE_SPANS:
            break
    return spans


def _target(ls: ChunkServer, entry: IndexedChunk) -> dict[str, Any]:
    chunk = entry.chunk
    return {
        "chunkId": chunk.chunk_id,
        "uri": chunk_uri(entry),
        "range": chunk_range(chunk, None, ls.encoding),
        "sourcePath": chunk.source_path,
        "startLine": chunk.start_line,
        "endLine": chunk.end_line,
        "symbol": chunk.symbol,
        "folder": str(entry.folder.root),
    }


async def fix_citations(ls: ChunkServer) -> dict[str, Any]:
    """chunkls.fixCitations: ``chunkls check --fix``'s rewrites, as one ``WorkspaceEdit``
    (open documents as they are in the editor)."""
    from lsprotocol import types

    from chunkls.ids.rewrite import rewrite

    changes: dict[str, list[types.TextEdit]] = {}
    for folder, rel_path in ls.queries.cited_files():
        uri = uri_of(folder.absolute(rel_path))
        context = get_document(ls, uri)
        if context is None:
            continue
        problems = ls.queries.check(
            context.text, context.language, context.folder, context.rel_path, refs_of(context)
        )
        for problem in problems:
            found = problem.replacement
            if found is None or not found.certain or found.chunk_id is None:
                continue
            edit = rewrite(
                context.text, problem.ref, found.old_id, found.chunk_id, context.language
            )
            changes.setdefault(uri, []).append(text_edit(context, edit))
    fixed = sum(map(len, changes.values()))
    applied = False
    if changes:
        answer = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(
                edit=types.WorkspaceEdit(changes=changes), label="Fix stale chunk IDs"
            )
        )
        applied = bool(answer.applied)
    return {"files": len(changes), "fixed": fixed if applied else 0, "applied": applied}
