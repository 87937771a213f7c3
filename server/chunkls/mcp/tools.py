"""The MCP tools' answers: structured content plus a text rendering whose ID lines are the
CLI's. Each argument is checked, with an error that says what was expected; a path or an ID
is only looked up in the index, never opened. No MCP SDK code is here."""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkls.chunking.corpus import compile_globs, glob_problem
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.ids.grammar import candidate_ids, find_chunk_refs_in, ids_written, path_written
from chunkls.ids.positions import TextLines
from chunkls.index.folder import IndexedChunk
from chunkls.mcp.resources import chunk_fields, chunk_link
from chunkls.mcp.specs import (
    MAX_ARGUMENT,
    MAX_IDS,
    MAX_QUERY,
    MAX_TEXT,
    MAX_TOP_K,
    SPEC_BY_NAME,
)
from chunkls.search.modes import mode_problem, query_problem

if TYPE_CHECKING:
    from chunkls.index.folder import FolderInfo
    from chunkls.index.queries import Queries

PREVIEW_LINES = 3
PREVIEW_CHARS = 240
SHOWN_CHARS = 40
"""How much of a wrong argument's value an error message shows."""


@dataclass(frozen=True)
class Answer:
    """A tool's result, and a ``resource_link`` per chunk it names, after its text."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False
    links: tuple[dict[str, Any], ...] = ()


class BadArguments(Exception):
    """Arguments a tool cannot take: answered as an error result with this message."""


def error(message: str) -> Answer:
    return Answer(message, None, True)


def root_problem(root: Path) -> str | None:
    """Why a root cannot be served (``None``: it can)."""
    if not root.exists():
        return f"root {os.fspath(root)!r} does not exist"
    if not root.is_dir():
        return f"root {os.fspath(root)!r} is not a folder"
    try:
        with os.scandir(root):
            pass
    except OSError as problem:
        return f"root {os.fspath(root)!r} is not readable: {problem.strerror or problem}"
    return None


def checked(name: str, answer: Answer, index: Queries, roots: Sequence[Path]) -> Answer:
    """A tool's answer, or the error that no file under the roots is chunkable."""
    if answer.is_error or name == "check_citations" or index.file_count():
        return answer
    shown = ", ".join(os.fspath(root) for root in roots)
    return error(
        f"no chunkable files under {shown}: chunkls indexes Python (.py) and "
        "Markdown (.md) files; check the root (chunkls mcp --root DIR) and "
        "[tool.chunkls] exclude"
    )


LINKLESS_PROTOCOLS = ("2024-11-05", "2025-03-26")
"""Protocol versions before ``resource_link`` content (2025-06-18): text alone."""


def links_allowed(protocol_version: object) -> bool:
    """Whether a client of this protocol version takes ``resource_link`` items."""
    return protocol_version not in LINKLESS_PROTOCOLS


def call_result(answer: Answer, links: bool = True) -> dict[str, Any]:
    """An answer as the JSON of an MCP ``CallToolResult``."""
    shown = answer.links if links else ()
    result: dict[str, Any] = {"content": [{"type": "text", "text": answer.text}, *shown]}
    if answer.structured is not None:
        result["structuredContent"] = answer.structured
    result["isError"] = answer.is_error
    return result


class Tools:
    """The tools over the query API (the caller takes the write step first)."""

    def __init__(self, queries: Queries) -> None:
        self.index = queries

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> Answer:
        """Answer one tool call (bad arguments get an error answer)."""
        spec = SPEC_BY_NAME.get(name)
        if spec is None:
            return error(f"unknown tool {name!r}; the tools are: {', '.join(SPEC_BY_NAME)}")
        arguments = arguments or {}
        if not isinstance(arguments, Mapping):
            return error(f"{name}: the arguments must be an object")
        allowed = spec.input_schema["properties"]
        unknown = [key for key in arguments if key not in allowed]
        try:
            if unknown:
                raise BadArguments(
                    f"unknown argument {unknown[0]!r}; {name} takes: {', '.join(allowed)}"
                )
            for required in spec.input_schema["required"]:
                if required not in arguments:
                    raise BadArguments(f"the argument {required!r} is required")
            handler: Callable[[Mapping[str, Any]], Answer] = getattr(self, name)
            return handler(arguments)
        except BadArguments as problem:
            return error(f"{name}: {problem}")

    def search_chunks(self, arguments: Mapping[str, Any]) -> Answer:
        """Ranked results with IDs, ranges, symbols and previews."""
        query = _string(arguments, "query", MAX_QUERY)
        top_k = _integer(arguments, "top_k", 10, 1, MAX_TOP_K)
        glob = _optional_string(arguments, "path_glob", MAX_QUERY)
        asked = _optional_string(arguments, "mode", MAX_QUERY)
        if asked is not None and (problem := mode_problem(asked)) is not None:
            raise BadArguments(f"'mode': {problem}")
        index = self.index
        mode = index.search_mode(asked)
        if (problem := query_problem(query, mode)) is not None:
            raise BadArguments(problem)
        if glob and (problem := glob_problem(glob)) is not None:
            raise BadArguments(f"'path_glob': {problem}")
        matcher = compile_globs([glob]) if glob else None
        where = (lambda path: matcher.match(path) is not None) if matcher is not None else None
        hits = index.search(query, top_k, mode, where)
        results = []
        links = []
        lines = [f"Indexed {len(index)} chunks"]
        for rank, hit in enumerate(hits, 1):
            chunk = hit.item.chunk
            best = hit.lines or (chunk.start_line, chunk.end_line)
            links.append(chunk_link(hit.item, best))  # (the file's best lines, in a long chunk)
            preview = _preview(chunk.text)
            results.append(
                {
                    **chunk_fields(chunk),
                    "lines": list(best),
                    "part": hit.part,
                    "score": round(hit.score, 6),
                    "preview": preview,
                }
            )
            symbol = f" {chunk.symbol}" if chunk.symbol else ""
            # the CLI's line: the tutorial's (bm25: exactly), then the best lines
            said = f"{rank}. {chunk.chunk_id} ({mode} {hit.score:.3f})"
            lines.append(said if mode == "bm25" else f"{said} lines {best[0]}-{best[1]}")
            lines.append(f"   {chunk.source_path}:{chunk.start_line}-{chunk.end_line}{symbol}")
            lines += [f"   | {line}" for line in preview.split("\n")]
        if not hits:
            where_said = f" in files matching {glob!r}" if glob else ""
            lines.append(f"No chunks match {query!r}{where_said}.")
        structured = {"indexed": len(index), "mode": mode, "results": results}
        return Answer("\n".join(lines), structured, links=tuple(links))

    def read_chunk(self, arguments: Mapping[str, Any]) -> Answer:
        """Chunks by ID (any written form), or the closest IDs to unknown ones."""
        written = _string(arguments, "chunk_id", MAX_ARGUMENT)
        refs = ids_written(written)
        if not refs:
            suggestions = self.index.suggest(written.strip().strip("`"))
            hint = f" Closest IDs: {', '.join(suggestions)}." if suggestions else ""
            return Answer(
                f"read_chunk: {written.strip()[:200]!r} is not a chunk ID: an ID is "
                "path#identity, e.g. app/x.py#function-f, app/x.py#class-Foo, "
                f"app/x.py#module-1, README.md#heading-setup.{hint}",
                {
                    "chunks": [],
                    "deleted": [],
                    "unknown": [{"chunk_id": written[:200], "suggestions": suggestions}],
                },
                True,
            )
        if len(refs) > MAX_IDS:
            raise BadArguments(f"{len(refs)} chunk IDs given; at most {MAX_IDS} per call")
        chunks: list[dict[str, Any]] = []
        unknown: list[dict[str, Any]] = []
        deleted: list[dict[str, Any]] = []
        parts: list[str] = []
        links: list[dict[str, Any]] = []
        for ref in refs:
            found = self.index.resolve_first(candidate_ids(ref, None))
            # a stale ID: where its history says the chunk went, or its last text
            replacement = self.index.replacement(ref.chunk_id) if not found else None
            if replacement is not None and replacement.chunk_id is not None:
                found = self.index.lookup(replacement.chunk_id)
                parts.append(f"{ref.chunk_id}: {replacement.said()}")
            elif replacement is not None:
                evidence = replacement.evidence()
                deleted.append(
                    {
                        "chunk_id": ref.chunk_id,
                        "deleted": True,
                        "commit": evidence["commit"],
                        "date": evidence["date"],
                        "text": replacement.old_text,
                    }
                )
                parts.append(
                    f"{ref.chunk_id}: {replacement.said()}; its last text (history: in no"
                    f" file today):\n{replacement.old_text}"
                )
                continue
            if not found:
                # (root-relative, when written with a workspace root's absolute path)
                chunk_id, outside = self.index.written_id(ref)
                path = chunk_id.partition("#")[0]
                suggestions = self.index.suggest(chunk_id)
                skipped = self.index.skip_reason(path)
                unknown.append(
                    {"chunk_id": chunk_id, "suggestions": suggestions, "skipped": skipped}
                )
                why = f": {path} was skipped: {skipped}" if skipped else ""
                if outside:
                    why = f": /{path} is outside every workspace root"
                hint = f"; did you mean: {', '.join(suggestions)}" if suggestions else ""
                parts.append(f"unknown chunk ID {chunk_id}{why}{hint}")
                continue
            for entry in found:
                chunk = entry.chunk
                links.append(chunk_link(entry))
                chunks.append(
                    {**chunk_fields(chunk), "file_type": chunk.file_type, "text": chunk.text}
                )
                if replacement is not None:
                    chunks[-1].update(moved_from=ref.chunk_id, replacement=replacement.evidence())
                # the CLI's `chunkls resolve` rendering, under the ID
                parts.append(
                    f"{chunk.chunk_id}\n{chunk.source_path}:{chunk.start_line}-{chunk.end_line}\n"
                    f"{chunk.text}"
                )
        structured = {"chunks": chunks, "deleted": deleted, "unknown": unknown}
        return Answer("\n\n".join(parts), structured, bool(unknown or deleted), tuple(links))

    def outline(self, arguments: Mapping[str, Any]) -> Answer:
        """One file's chunks: IDs, symbols and lines."""
        given = _string(arguments, "path", MAX_ARGUMENT)
        rel_path = self._source_path(given)
        folder, chunks = self._file_chunks(rel_path) if rel_path else (None, ())
        if folder is None or not chunks:
            return error(self._no_chunks(given, rel_path))
        lines = [f"{rel_path}: {len(chunks)} chunk{'' if len(chunks) == 1 else 's'}"]
        for chunk in chunks:
            symbol = f"  {chunk.symbol}" if chunk.symbol else ""
            lines.append(f"{chunk.chunk_id}  lines {chunk.start_line}-{chunk.end_line}{symbol}")
        links = tuple(chunk_link(IndexedChunk(folder, chunk)) for chunk in chunks)
        structured = {"path": rel_path, "chunks": list(map(chunk_fields, chunks))}
        return Answer("\n".join(lines), structured, links=links)

    def check_citations(self, arguments: Mapping[str, Any]) -> Answer:
        """The chunk IDs of a draft that resolve to nothing, with suggestions."""
        text = arguments.get("text")
        if not isinstance(text, str):
            raise BadArguments(f"'text' must be a string, got {_shown(text)}")
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_TEXT:
            raise BadArguments(f"'text' is {size:,} bytes; at most {MAX_TEXT:,} are checked")
        refs = find_chunk_refs_in(text, "markdown")
        found = self.index.check(text, "markdown", None, None, refs)
        positions = TextLines(text, "utf-32")
        problems = []
        lines = []
        linked: dict[str, dict[str, Any]] = {}  # the first suggestion of each problem
        for problem in found:
            for suggested in problem.suggestions[:1]:
                if suggested not in linked and (entries := self.index.lookup(suggested)):
                    linked[suggested] = chunk_link(entries[0])
            line, column = positions.position(problem.ref.start)
            replacement = problem.replacement
            problems.append(
                {
                    "line": line + 1,
                    "column": column + 1,
                    "chunk_id": problem.chunk_id,
                    "written": text[problem.ref.start : problem.ref.end],
                    "replacement": replacement.evidence() if replacement is not None else None,
                    "suggestions": problem.suggestions,
                }
            )
            # the CLI's `chunkls check` line, with "text" for the file's name
            lines.append(f"text:{line + 1}:{column + 1}: {problem.said()}")
        if problems:
            noun = "ID" if len(problems) == 1 else "IDs"
            lines.append(f"{len(problems)} unknown chunk {noun} of {len(refs)} cited")
        else:
            lines.append(f"Every cited chunk ID resolves ({len(refs)} checked).")
        structured = {"checked": len(refs), "problems": problems}
        return Answer("\n".join(lines), structured, links=tuple(linked.values()))

    def _source_path(self, given: str) -> str | None:
        """The root-relative path an agent meant (``None``: outside the roots). Never opened."""
        text = given.strip().strip("`").strip()
        if posixpath.isabs(text):
            inside = self.index.folder_of(text)
            if inside is not None:
                return inside[1]
            relative = path_written(text)  # "/app/x.py": from the root, if it has it
            if relative is None or not self.index.sources(relative):
                return None
            return relative
        return path_written(text)

    def _file_chunks(self, rel_path: str) -> tuple[FolderInfo | None, tuple[LocatedChunk, ...]]:
        """Every chunk of a file, repeated IDs too, and the first root that has it."""
        for folder in self.index.folders:
            chunks = self.index.file_chunks(folder, rel_path)
            if chunks:
                return folder, chunks
        return None, ()

    def _no_chunks(self, given: str, rel_path: str | None) -> str:
        shown = given.strip()[:200]
        if rel_path is None:
            return f"outline: {shown!r} is not a path inside the repository's roots"
        for _folder, skipped, reason in self.index.skipped():
            if skipped == rel_path:
                return f"outline: {rel_path} could not be chunked: {reason}"
        suggested = self.index.suggest(f"{rel_path}#module-1", limit=10)
        near = list(dict.fromkeys(suggestion.partition("#")[0] for suggestion in suggested))[:3]
        hint = f"; did you mean: {', '.join(near)}" if near else ""
        return (
            f"outline: no chunks for {rel_path} (only Python and Markdown files inside the "
            f"roots have chunks){hint}"
        )


def _preview(text: str) -> str:
    """A chunk's first non-blank lines, cut short (a long chunk is not split whole)."""
    head = text[: PREVIEW_CHARS * 4].split("\n")
    lines = [line.rstrip() for line in head if line.strip()][:PREVIEW_LINES]
    preview = "\n".join(lines)
    return preview if len(preview) <= PREVIEW_CHARS else preview[: PREVIEW_CHARS - 1] + "…"


_KINDS = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
_KINDS.update({list: "an array", dict: "an object"})


def _shown(value: object) -> str:
    """A wrong value as a message names it: ``a string, "3"``; ``null``."""
    if value is None:
        return "null"
    written = json.dumps(value, ensure_ascii=False)
    if len(written) > SHOWN_CHARS:
        written = written[: SHOWN_CHARS - 1] + "…"
    return f"{_KINDS.get(type(value), type(value).__name__)}, {written}"


def _string(arguments: Mapping[str, Any], name: str, limit: int) -> str:
    value = arguments.get(name)
    if not isinstance(value, str):
        raise BadArguments(f"{name!r} must be a string, got {_shown(value)}")
    if not value.strip():
        raise BadArguments(f"{name!r} is empty")
    if len(value) > limit:
        raise BadArguments(f"{name!r} is {len(value):,} characters long; at most {limit:,}")
    return value


def _optional_string(arguments: Mapping[str, Any], name: str, limit: int) -> str | None:
    return None if arguments.get(name) is None else _string(arguments, name, limit)


def _integer(arguments: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = arguments.get(name, default)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)  # (2.0 is 2; 1e100 stays as written)
    if isinstance(value, bool) or not isinstance(value, int):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        shown = json.dumps(value) if number else _shown(value)  # (3.5: as written)
        raise BadArguments(f"{name!r} must be a whole number, got {shown}")
    if not low <= value <= high:
        raise BadArguments(f"{name!r} must be from {low} to {high}, got {value}")
    return value
