"""The MCP tools as ``tools/list`` shows them: names, descriptions, input and
output schemas, the limits the arguments are checked against, and the server's
instructions. ``chunkls.mcp.tools`` answers them. No MCP SDK code is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chunkls.index.replacement import EVIDENCE_SCHEMA
from chunkls.search import MODES

MAX_TOP_K = 100
"""The most results one search returns."""
MAX_TEXT = 1_000_000
"""The longest draft ``check_citations`` takes, in UTF-8 bytes (1 MB)."""
MAX_QUERY = 10_000
"""The longest search query or ``path_glob``, in characters."""
MAX_IDS = 50
"""The most chunk IDs one ``read_chunk`` call reads."""
MAX_ARGUMENT = 10_000
"""The longest ``chunk_id`` or ``path`` argument, in characters."""

CITE = (
    "Cite what you use by its chunk ID (`path#identity`, e.g. `app/x.py#function-f`): "
    "chunk IDs survive edits, and people open, hover and check them in their editor."
)

INSTRUCTIONS = (
    "chunkls indexes this repository as retrieval chunks: each Python function, class "
    "and module block and each Markdown section has a chunk ID, `path#identity` "
    "(`app/rag/ingest.py#function-_make_chunk`, `app/x.py#class-Foo`, `app/x.py#module-1`, "
    "`README.md#heading-setup`). Find chunks with search_chunks, read them with read_chunk, "
    "list a file's chunks with outline, and run check_citations on a draft answer before "
    "you send it. " + CITE + " The answers are current: files changed on disk since the "
    "previous call are re-read first. In the first moments after the server starts, while "
    "its index loads, an answer may come from the index as it was last saved: it then says "
    "so (its `notice`), and files changed since may be missing from it; ask again shortly."
)
LOADING_NOTICE = (
    "chunkls is still loading its index: this answer comes from the index as it was last "
    "saved, and files changed since the server started may be missing from it; ask again "
    "shortly for a current answer."
)
"""What an answer given while the index loads says (text and structured ``notice``)."""
_NOTICE = {
    "type": "string",
    "description": "Set while the index is still loading: the answer may miss recent changes.",
}
_CHUNK_FIELDS: dict[str, Any] = {
    "chunk_id": {"type": "string", "description": "The ID to cite: path#identity."},
    "path": {"type": "string", "description": "The file, relative to its root."},
    "start_line": {"type": "integer", "description": "First line (1-based)."},
    "end_line": {"type": "integer", "description": "Last line (inclusive)."},
    "symbol": {
        "type": ["string", "null"],
        "description": "Function, class or heading name (null for module chunks).",
    },
}


_REPLACEMENT = EVIDENCE_SCHEMA


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _array(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "array", "items": _object(properties, required)}


def _chunks(**extra: Any) -> dict[str, Any]:
    """An array of chunks: their range fields, then ``extra``."""
    return _array({**_CHUNK_FIELDS, **extra}, [*_CHUNK_FIELDS, *extra])


def _text(max_length: int, description: str, min_length: int | None = 1) -> dict[str, Any]:
    limits = {} if min_length is None else {"minLength": min_length}
    return {"type": "string", **limits, "maxLength": max_length, "description": description}


def _output(properties: dict[str, Any]) -> dict[str, Any]:
    """An answer's schema: every property required, then the optional ``notice``."""
    return _object({**properties, "notice": _NOTICE}, list(properties))


@dataclass(frozen=True)
class ToolSpec:
    """A tool as ``tools/list`` shows it."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]


SPECS = (
    ToolSpec(
        "search_chunks",
        "Search chunks",
        "Search this repository's code and docs, cut into chunks (Python functions, "
        "classes and module blocks; Markdown sections). The default ranking (hybrid) "
        "reads a question in plain English as well as code words and names; mode 'bm25' "
        "is plain BM25. Each result has its chunk ID, score, file, lines, symbol, the "
        "lines of its part that answers best and a short preview; read_chunk gives the "
        "full text. " + CITE,
        _object(
            {
                "query": _text(
                    MAX_QUERY,
                    "A question or words and identifiers to look for, e.g. "
                    "'where are chunk IDs built' or 'chunk_id source_path'.",
                ),
                "mode": {
                    "type": "string",
                    "enum": list(MODES),
                    "description": "How to rank: 'hybrid' (a question's words, BM25, then "
                    "what each chunk is) or 'bm25' (the tutorial's scores). Default: the "
                    "repository's [tool.chunkls] search-mode, else hybrid.",
                },
                "top_k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TOP_K,
                    "default": 10,
                    "description": f"How many results (1 to {MAX_TOP_K}, default 10).",
                },
                "path_glob": _text(
                    MAX_QUERY,
                    "Only chunks of files matching this root-relative glob: "
                    "'*.md', 'app/**', 'server/**/*.py' (a pattern without '/' matches a "
                    "file name at any depth).",
                    None,
                ),
            },
            ["query"],
        ),
        _output(
            {
                "indexed": {"type": "integer", "description": "Chunks in the index."},
                "mode": {"type": "string", "enum": list(MODES), "description": "The ranking."},
                "results": _chunks(
                    lines={
                        "type": "array",
                        "items": {"type": "integer"},
                        "minItems": 2,
                        "maxItems": 2,
                        "description": "The first and last line (1-based) of the part of "
                        "the chunk that answers best: a definition inside it, a window of "
                        "a long one, or the whole chunk.",
                    },
                    part={
                        "type": ["string", "null"],
                        "description": "The name of the definition inside the chunk that "
                        "'lines' are, if they are one.",
                    },
                    score={"type": "number", "description": "The mode's score."},
                    preview={"type": "string", "description": "The first lines."},
                ),
            }
        ),
    ),
    ToolSpec(
        "read_chunk",
        "Read chunks",
        "Read chunks by ID: their full text, file, line range and symbol. Pass one chunk "
        "ID or several, separated by spaces, commas or new lines (at most "
        f"{MAX_IDS}); an ID may be written bare (app/x.py#function-f), in backticks, as a "
        "Markdown link target ([f](app/x.py#function-f)) or with a leading '/'. A stale ID "
        "whose chunk moved or was renamed (the repository's history says where) answers the "
        "chunk it became, with moved_from; a deleted one answers its last text, under "
        "'deleted'. An ID that resolves to nothing makes the result an error that names the "
        "closest existing IDs. " + CITE,
        _object(
            {
                "chunk_id": _text(
                    MAX_ARGUMENT,
                    "One chunk ID or several, e.g. 'app/x.py#function-f README.md#heading-setup'.",
                )
            },
            ["chunk_id"],
        ),
        _output(
            {
                "chunks": _array(
                    {
                        **_CHUNK_FIELDS,
                        "file_type": {"type": "string", "description": "py or md."},
                        "text": {"type": "string", "description": "The chunk's text."},
                        "moved_from": {
                            "type": "string",
                            "description": "The stale ID asked for, when this is where its"
                            " chunk went (its history says so: see replacement).",
                        },
                        "replacement": _REPLACEMENT,
                    },
                    [*_CHUNK_FIELDS, "file_type", "text"],
                ),
                "deleted": _array(
                    {
                        "chunk_id": {"type": "string", "description": "As looked up."},
                        "deleted": {"type": "boolean"},
                        "commit": {"type": ["string", "null"]},
                        "date": {"type": ["string", "null"]},
                        "text": {
                            "type": "string",
                            "description": "Its last text (history: in no file today).",
                        },
                    },
                    ["chunk_id", "deleted", "commit", "date", "text"],
                ),
                "unknown": _array(
                    {
                        "chunk_id": {"type": "string", "description": "As looked up."},
                        "suggestions": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "The closest existing IDs, best first.",
                        },
                        "skipped": {
                            "type": ["string", "null"],
                            "description": "Why the ID's file could not be chunked, if "
                            "it was skipped (not UTF-8, a syntax error).",
                        },
                    },
                    ["chunk_id", "suggestions"],
                ),
            }
        ),
    ),
    ToolSpec(
        "outline",
        "Outline a file",
        "List one file's chunks in order (chunk ID, symbol, lines) without their text, to "
        "find the ID to cite for part of a file without reading all of it. " + CITE,
        _object(
            {
                "path": _text(
                    MAX_ARGUMENT,
                    "The file, relative to the repository root: 'app/x.py', 'docs/guide.md'.",
                )
            },
            ["path"],
        ),
        _output(
            {
                "path": {"type": "string", "description": "The file, relative to its root."},
                "chunks": _chunks(),
            }
        ),
    ),
    ToolSpec(
        "check_citations",
        "Check citations",
        "Check the chunk IDs cited in a draft answer before you send it: returns every ID "
        "in the text that resolves to no chunk, with its line, column (1-based) and the "
        "closest existing IDs to use instead (the check `chunkls check` runs in CI). An "
        "empty list means every cited ID exists. " + CITE,
        _object(
            {"text": _text(MAX_TEXT, "The draft (Markdown or plain text), at most 1 MB.", None)},
            ["text"],
        ),
        _output(
            {
                "checked": {"type": "integer", "description": "Chunk IDs found in the text."},
                "problems": _array(
                    {
                        "line": {"type": "integer"},
                        "column": {"type": "integer"},
                        "chunk_id": {"type": "string", "description": "As looked up."},
                        "written": {"type": "string", "description": "As in the text."},
                        "replacement": _REPLACEMENT,
                        "suggestions": {"type": "array", "items": {"type": "string"}},
                    },
                    ["line", "column", "chunk_id", "written", "replacement", "suggestions"],
                ),
            }
        ),
    ),
)
SPEC_BY_NAME = {spec.name: spec for spec in SPECS}
