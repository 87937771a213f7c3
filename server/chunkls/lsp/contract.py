"""The server's side of its contract with clients: command IDs, their arguments, and the
``chunkls/status`` notification (``tests/unit/test_contract.py`` checks the client agrees)."""

from __future__ import annotations

import re
from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

SEARCH = "chunkls.search"
"""Ranked chunks for a query (``SearchArgs``)."""
REINDEX = "chunkls.reindex"
"""Re-read every workspace folder from disk (no argument)."""
STATS = "chunkls.stats"
"""Chunk and file counts and the skipped files (no argument)."""
CHUNK_AT = "chunkls.chunkAt"
"""The chunk of an open document at a line (``ChunkAtArgs``)."""
CHUNKS = "chunkls.chunks"
"""Every indexed chunk, in corpus order (no argument)."""
RESOLVE = "chunkls.resolve"
"""Where chunk IDs are: an ID, a list of IDs, or the IDs written in a text (``ResolveArgs``)."""
JUMP_TARGET = "chunkls.jumpTarget"
"""Where a search result listed without its best part opens (``JumpTargetArgs``)."""

FIX_CITATIONS = "chunkls.fixCitations"
"""Rewrite every certain replacement in the workspace, through one ``workspace/applyEdit``."""

SERVER_COMMANDS = (SEARCH, REINDEX, STATS, CHUNK_AT, CHUNKS, RESOLVE, JUMP_TARGET, FIX_CITATIONS)
"""Commands the server executes (``workspace/executeCommand``)."""

COPY_CHUNK_ID = "chunkls.copyChunkId"
"""Client command a chunk ID lens runs, with the chunk ID as its argument."""
SHOW_REFERENCES = "chunkls.showReferences"
"""Client command of the "cited by N" lens: (uri, position, locations) in LSP JSON."""

CLIENT_COMMANDS = (COPY_CHUNK_ID, SHOW_REFERENCES)
"""Commands the server's lenses ask the client to run (the client implements them)."""

CONTENT_TYPE = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
"""The header the server sends with every message, after its length."""


def framed(body: bytes) -> bytes:
    """A message body with the headers the server frames it with."""
    return b"Content-Length: %d\r\n%s\r\n%s" % (len(body), CONTENT_TYPE, body)


STATUS_NOTIFICATION = "chunkls/status"
"""Notification the server sends when the index changes (``Status``)."""


@attrs.frozen
class Status:
    """``chunkls/status``'s payload: the index's state, for status bars."""

    indexing: bool
    """Whether an indexing job is running."""
    chunks: int
    """Chunks in the index."""
    files: int
    """Files those chunks come from."""
    skipped: int
    """Files of the corpus that could not be chunked."""


@attrs.frozen
class SearchArgs:
    """``chunkls.search``'s argument."""

    query: str
    """The question or words to rank chunks by."""
    top_k: int = 20
    """How many chunks to answer at most (clamped by the server)."""
    mode: str | None = None
    """``None``: the ``search.mode`` setting's, else the workspace's."""
    with_reason: bool = False
    """Answer a ``SearchAnswer`` (the results and why there are none)."""
    parts: bool = True
    """Find each result's best part; ``False``: whole chunks, and the one opened asks
    ``chunkls.jumpTarget`` (as you type, only one result is opened)."""


@attrs.frozen
class SearchAnswer:
    """``chunkls.search``'s answer when asked ``withReason``."""

    results: list[dict[str, Any]]
    """The ranked chunks, best first (``[{chunkId, score, mode, uri, range, preview}]``)."""
    mode: str
    """The search mode that ranked them (or would have)."""
    reason: str | None
    """Why the query was not searched, as the CLI and MCP say it; ``None`` when it was."""


@attrs.frozen
class ChunkAtArgs:
    """``chunkls.chunkAt``'s argument: ``{"uri": str, "line": int}`` (0-based line)."""

    uri: str
    """An open document's URI."""
    line: int
    """A 0-based line in it."""


@attrs.frozen
class JumpTargetArgs:
    """``chunkls.jumpTarget``'s argument: a ``parts: false`` search result and its query."""

    query: str
    """The query the result was listed for."""
    chunk_id: str
    """The result's chunk ID."""
    uri: str
    """The result's ``uri``."""
    line: int
    """The result's 0-based first line, which tells chunks of one ID apart (overloads)."""
    mode: str | None = None
    """The search mode it was listed in (``None``: as ``chunkls.search``'s)."""


@attrs.frozen
class ResolveArgs:
    """``chunkls.resolve``'s argument: exactly one of ``chunkId``, ``chunkIds``, ``text``;
    ``folder``: a URI under the folder to look in first (a terminal's working directory)."""

    chunk_id: str | None = None
    """One chunk ID, as written (a leading ``./`` or ``/`` is allowed)."""
    chunk_ids: list[str] | None = None
    """Several chunk IDs: one answer per ID, in order."""
    text: str | None = None
    """A line of text (a terminal line): the IDs written in it that resolve."""
    folder: str | None = None
    """A file URI; its workspace folder's chunks come first."""


WIRE_CLASSES: tuple[type, ...] = (
    Status,
    SearchArgs,
    SearchAnswer,
    ChunkAtArgs,
    JumpTargetArgs,
    ResolveArgs,
)
"""The classes above, whose fields travel under their camelCase names."""


def wire_name(name: str) -> str:
    """An attribute's name on the wire: ``top_k`` -> ``topK``."""
    return re.sub(r"_([a-z])", lambda match: match.group(1).upper(), name)


def wire_fields(value: Any) -> dict[str, Any]:
    """One of the classes above as the object sent, its fields by their wire
    names (their values as they are: already JSON)."""
    return {
        wire_name(field.name): getattr(value, field.name) for field in attrs.fields(type(value))
    }


def configure_converter(converter: cattrs.Converter) -> None:
    """Teach a converter (the protocol's) the wire names of the classes above."""
    for cls in WIRE_CLASSES:
        renames: dict[str, Any] = {
            field.name: override(rename=wire_name(field.name)) for field in attrs.fields(cls)
        }
        structure: Any = make_dict_structure_fn(cls, converter, **renames)
        if cls is ResolveArgs:
            structure = _strict_resolve_args(structure)
        converter.register_structure_hook(cls, structure)
        converter.register_unstructure_hook(
            cls, make_dict_unstructure_fn(cls, converter, **renames)
        )


def _strict_resolve_args(structure: Any) -> Any:
    """``ResolveArgs`` read without coercion (a number is no chunk ID, a string no list)."""

    def strict(value: Any, cls: type) -> Any:
        if not isinstance(value, dict):
            raise TypeError(f"{RESOLVE} takes an object, got {type(value).__name__}")
        for key in ("chunkId", "text", "folder"):
            if value.get(key) is not None and not isinstance(value[key], str):
                raise TypeError(f"{RESOLVE}: {key} must be a string")
        ids = value.get("chunkIds")
        if ids is not None and not (
            isinstance(ids, list) and all(isinstance(item, str) for item in ids)
        ):
            raise TypeError(f"{RESOLVE}: chunkIds must be a list of strings")
        given = [key for key in ("chunkId", "chunkIds", "text") if value.get(key) is not None]
        if len(given) != 1:
            raise ValueError(f"{RESOLVE} takes exactly one of chunkId, chunkIds, text")
        return structure(value, cls)

    return strict
