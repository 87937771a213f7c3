"""Chunks as MCP resources (``docs/mcp.md``): URIs, reading, listing, completing, and the links
tool results carry. A URI (``chunkls:///`` and the ID percent-encoded, ``/`` kept or not)
names a chunk ID and nothing else: looked up in the index, never opened. No SDK code here."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from chunkls.index.browse import Place

if TYPE_CHECKING:
    from chunkls.chunking.located_chunk import LocatedChunk
    from chunkls.index.folder import IndexedChunk
    from chunkls.index.queries import Queries
    from chunkls.storage.packed import Stub

SCHEME = "chunkls"
PREFIX = "chunkls:///"
VARIABLE = "chunk_id"
TEMPLATE = PREFIX + "{" + VARIABLE + "}"
"""The resource template: one variable, the chunk ID (RFC 6570 simple expansion)."""
PAGE_SIZE = 500
"""Resources per ``resources/list`` page."""
MAX_VALUES = 100
"""Completion values per answer (the protocol's limit)."""
MIME_TYPES = {"code": "text/x-python", "prose": "text/markdown"}
"""A chunk's MIME type by its file type (Python is ``code``, Markdown ``prose``)."""
RESOURCE_NOT_FOUND = -32002
"""The JSON-RPC error code the MCP specification gives an unknown resource."""
INVALID_PARAMS = -32602
_DRIVE = re.compile(r"[A-Za-z]:[\\/]")
_PLAIN = re.compile(r"[A-Za-z0-9_.~/#-]*")
"""An ID whose only character to encode is ``#`` (most: encoded at once)."""


class ResourceProblem(Exception):
    """A resource request answered with a JSON-RPC error: code, message, data."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def chunk_uri(chunk_id: str) -> str:
    """A chunk's resource URI (``chunkls:///app/x.py%23function-f``)."""
    if _PLAIN.fullmatch(chunk_id):
        return PREFIX + chunk_id.replace("#", "%23")
    return PREFIX + quote(chunk_id, safe="/")


def mime_type(file_type: str) -> str:
    """A chunk's MIME type, by its file type."""
    return MIME_TYPES.get(file_type, "text/plain")


def _describe(path: str, start: int, end: int, symbol: str | None) -> str:
    return f"{path}:{start}-{end}" + (f" {symbol}" if symbol else "")


def chunk_link(found: IndexedChunk, lines: tuple[int, int] | None = None) -> dict[str, Any]:
    """A ``resource_link`` to a chunk; with other ``lines``, to those (``file://...#L12-L20``)."""
    chunk = found.chunk
    start, end = lines if lines is not None else (chunk.start_line, chunk.end_line)
    if (start, end) == (chunk.start_line, chunk.end_line):
        uri = chunk_uri(chunk.chunk_id)
    else:
        path = found.folder.root_resolved / chunk.source_path
        uri = f"{path.as_uri()}#L{start}-L{end}"
    return {
        "type": "resource_link",
        "uri": uri,
        "name": chunk.chunk_id,
        "description": _describe(chunk.source_path, start, end, chunk.symbol),
        "mimeType": mime_type(chunk.file_type),
    }


def chunk_fields(chunk: LocatedChunk) -> dict[str, Any]:
    """A chunk's ID, path, lines and symbol (``_meta``, and every tool's chunk fields)."""
    return {
        "chunk_id": chunk.chunk_id,
        "path": chunk.source_path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "symbol": chunk.symbol,
    }


def template() -> dict[str, Any]:
    """The one resource template, as ``resources/templates/list`` gives it."""
    return {
        "uriTemplate": TEMPLATE,
        "name": "chunk",
        "title": "Chunk by ID",
        "description": "A chunk of this repository by its chunk ID (path#identity, e.g. "
        "app/x.py#function-f): its text, with its ID, path and lines in _meta.",
    }


# -- a URI read back ------------------------------------------------------------------


def chunk_id_of(uri: str, index: Queries) -> str:
    """The root-relative chunk ID a URI names (``ResourceProblem``: not ours, or outside)."""
    scheme, colon, rest = uri.partition(":")
    if not colon or scheme.lower() != SCHEME:
        raise ResourceProblem(
            INVALID_PARAMS, f"{uri[:200]!r} is not a chunk's URI: they are {PREFIX}path%23identity"
        )
    if rest.startswith("///"):
        body = rest[3:]
    elif rest.startswith("//"):
        raise ResourceProblem(
            INVALID_PARAMS, f"{uri[:200]!r} names a host: a chunk's URI is {PREFIX}path%23identity"
        )
    else:
        body = rest[1:] if rest.startswith("/") else rest  # chunkls:/x, chunkls:x
    text = unquote(body, errors="replace")
    path, hash_sign, identity = text.partition("#")
    if not hash_sign or not path or not identity:
        raise ResourceProblem(
            INVALID_PARAMS,
            f"{uri[:200]!r} names no chunk ID: an ID is path#identity, written "
            f"{PREFIX}path%23identity (app/x.py#function-f is {chunk_uri('app/x.py#function-f')})",
        )
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        inside = index.folder_of(path)
        if inside is None:
            raise ResourceProblem(
                INVALID_PARAMS, f"{uri[:200]!r}: {path[:200]!r} is outside every root"
            )
        path = inside[1]
    segments = path.replace("\\", "/").split("/")
    if ".." in segments:
        raise ResourceProblem(INVALID_PARAMS, f"{uri[:200]!r} climbs out of the roots ('..')")
    if any(segment in ("", ".") for segment in segments):
        raise ResourceProblem(
            INVALID_PARAMS, f"{uri[:200]!r}: {path[:200]!r} is not a root-relative path"
        )
    return f"{path}#{identity}"


def read(index: Queries, uri: str) -> list[dict[str, Any]]:
    """``resources/read``: each chunk of that ID, its text, MIME type and ``_meta``."""
    chunk_id = chunk_id_of(uri, index)
    found = index.lookup(chunk_id)
    if not found:
        suggestions = index.suggest(chunk_id)
        skipped = index.skip_reason(chunk_id.partition("#")[0])
        why = f": {chunk_id.partition('#')[0]} was skipped: {skipped}" if skipped else ""
        hint = f"; did you mean: {', '.join(suggestions)}" if suggestions else ""
        raise ResourceProblem(
            RESOURCE_NOT_FOUND,
            f"unknown chunk ID {chunk_id}{why}{hint}",
            {"uri": uri, "chunk_id": chunk_id, "suggestions": suggestions, "skipped": skipped},
        )
    return [
        {"text": entry.chunk.text, "mimeType": mime_type(entry.chunk.file_type)}
        | {"_meta": chunk_fields(entry.chunk)}
        for entry in found
    ]


# -- listing ---------------------------------------------------------------------------


def encode_cursor(place: Place) -> str:
    """A page's start as an opaque cursor."""
    return base64.urlsafe_b64encode(json.dumps(list(place)).encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> Place:
    """The page start a cursor says; ``ResourceProblem`` for one chunkls never gave."""
    try:
        part, position, rel_path, number = json.loads(base64.urlsafe_b64decode(cursor))
        place = Place(part, position, rel_path, number)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        place = None
    types_ok = place is not None and [type(item) for item in place] == [int, int, str, int]
    if place is None or not types_ok:
        raise ResourceProblem(INVALID_PARAMS, f"invalid cursor {cursor[:100]!r}")
    return place


def _listed(stub: Stub) -> dict[str, Any]:
    chunk_id, source_path, file_type, symbol, start, end, *_ = stub
    return {
        "uri": chunk_uri(chunk_id),
        "name": chunk_id,
        "description": _describe(source_path, start, end, symbol),
        "mimeType": mime_type(file_type),
    }


def list_page(
    index: Queries, cursor: str | None, under: Sequence[Path] = (), size: int = PAGE_SIZE
) -> dict[str, Any]:
    """``resources/list``: a page of chunks (under the client's roots first), and a cursor."""
    start = decode_cursor(cursor) if cursor is not None else None
    page = index.chunk_page(start, size, under)
    result: dict[str, Any] = {"resources": [_listed(stub) for _folder, stub in page.stubs]}
    if page.next is not None:
        result["nextCursor"] = encode_cursor(page.next)
    return result


# -- completion ------------------------------------------------------------------------


def complete(index: Queries, ref_uri: str, argument: str, value: str) -> dict[str, Any]:
    """``completion/complete`` for the template's variable: chunk IDs for what was typed."""
    if ref_uri != TEMPLATE or argument != VARIABLE:
        return {"values": []}
    typed = value[len(PREFIX) :] if value.startswith(PREFIX) else value
    values, more = index.propose_ids(unquote(typed, errors="replace"), MAX_VALUES)
    return {"values": values, "hasMore": more}
