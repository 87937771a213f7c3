"""``chunkls eval``'s gold set (format: ``docs/cli.md``): JSON Lines or a JSON array, as
semble's annotation files (MinishLab/semble ``benchmarks/annotations/``); a malformed query
is named with its line and left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from chunkls.cli.usage import UsageError
from chunkls.ids.grammar import id_written
from chunkls.search.metrics import Place, Span, Target, covers, path_matches

if TYPE_CHECKING:
    from chunkls.index.folder import IndexedChunk
    from chunkls.index.queries import Queries
    from chunkls.search.scorer import Hit


class Gold(NamedTuple):
    """One query of the gold set."""

    line: int
    query: str
    relevant: tuple[Target, ...]
    """Its targets: ``relevant`` then ``secondary``, as written."""
    text: str
    """The line as written (where an unknown ID is reported)."""
    category: str | None = None

    @property
    def by_file(self) -> bool:
        """Whether any target is a file (scored 0 when none is in the index, as semble)."""
        return any(isinstance(target, Span) for target in self.relevant)


def guess_category(query: str) -> str:
    """semble's guess of a query's category when its annotation names none."""
    words = query.strip()
    if " " not in words:
        return "symbol"
    return "architecture" if words.lower().startswith("how ") else "semantic"


def read_text(path: Path, name: str) -> str:
    """A gold or run file's text (a usage error when it cannot be read)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{name}: cannot read it ({error})") from None


def records(text: str) -> list[tuple[int, Any, str, str | None]]:
    """Each record of JSON Lines or a JSON array as (line, value, text, what is wrong)."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            values = json.loads(text)
        except json.JSONDecodeError as error:
            first = stripped.splitlines()[0]
            try:
                json.loads(first)  # JSON Lines whose first line is a list: each line its own
            except json.JSONDecodeError:
                return [(error.lineno, None, "", f"not a JSON array ({error.msg}): every query")]
        else:
            return _elements(text, values)
    found: list[tuple[int, Any, str, str | None]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            found.append((number, json.loads(line), line, None))
        except json.JSONDecodeError as error:
            found.append((number, None, line, f"not JSON ({error.msg})"))
    return found


def _elements(text: str, values: list[Any]) -> list[tuple[int, Any, str, str | None]]:
    """A JSON array's elements, each with the line it starts on and its text."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, Any, str, str | None]] = []
    at = text.index("[") + 1
    for value in values:
        while text[at] in " \t\r\n,":
            at += 1
        _, end = decoder.raw_decode(text, at)
        found.append((text.count("\n", 0, at) + 1, value, text[at:end], None))
        at = end
    return found


def _line_number(value: object, key: str) -> int | None:
    """A target's line: an int, or a string of digits (as semble reads it)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{key} {value!r} is not a line number (1 or more)")
    return value


def target(raw: object) -> Target:
    """A written target (a ``ValueError`` says what is wrong with it)."""
    if isinstance(raw, str):
        if not raw.strip():
            raise ValueError("an empty target")
        ref = id_written(raw)
        return ref.chunk_id if ref is not None else Span(raw.strip())
    if not isinstance(raw, dict):
        raise ValueError(f"{json.dumps(raw)} is no chunk ID, path or {{path, lines}} object")
    path = raw.get("path")
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"{json.dumps(raw)} has no 'path' string")
    try:
        start = _line_number(raw.get("start_line"), "start_line")
        end = _line_number(raw.get("end_line"), "end_line")
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if start is None or end is None:
        if start is not None or end is not None:
            raise ValueError(f"{path}: start_line and end_line go together")
        return Span(path.strip())
    if start > end:
        raise ValueError(f"{path}: start_line {start} is after end_line {end}")
    return Span(path.strip(), start, end)


def gold_query(number: int, record: object, line: str) -> Gold | str:
    """One record as a ``Gold``, or what is wrong with it."""
    query = record.get("query") if isinstance(record, dict) else None
    if not isinstance(record, dict) or not isinstance(query, str) or not query.strip():
        return "no 'query' string"
    targets: list[Target] = []
    for key in ("relevant", "secondary"):
        written = record.get(key, [])
        if not isinstance(written, list):
            return f"{key!r} is not a list of chunk IDs or file targets"
        for raw in written:
            try:
                targets.append(target(raw))
            except ValueError as error:
                return f"{key!r}: {error}"
    if not record.get("relevant"):
        return "no relevant chunk ID or file"
    category = record.get("category")
    if category is not None and (not isinstance(category, str) or not category.strip()):
        return "'category' is not a string"
    gold = Gold(number, query, tuple(targets), line, category)
    if category is None and gold.by_file:
        gold = gold._replace(category=guess_category(query))
    return gold


def read_gold(path: Path, name: str) -> tuple[list[Gold], list[str]]:
    """The well-formed queries of a gold file, and what was wrong with the others."""
    good: list[Gold] = []
    problems: list[str] = []
    for number, record, line, wrong in records(read_text(path, name)):
        parsed = gold_query(number, record, line) if wrong is None else wrong
        if isinstance(parsed, Gold):
            good.append(parsed)
        else:
            problems.append(f"{name}:{number}: {parsed}; left out")
    return good, problems


def place(hit: Hit[IndexedChunk], part: bool = False) -> Place:
    """Where a search result is: its chunk's lines, or (``part``) its best part's."""
    chunk = hit.item.chunk
    start, end = hit.lines if part and hit.lines is not None else (chunk.start_line, chunk.end_line)
    return Place(chunk.chunk_id, chunk.source_path, start, end)


def indexed(queries: Queries, target: Target) -> bool:
    """Whether some chunk of the index answers a target (a question: it only reads)."""
    if isinstance(target, str):
        return queries.has_id(target)
    paths = [p for p in queries.source_paths() if path_matches(p, target.path)]
    return any(
        covers(Place(chunk.chunk_id, chunk.source_path, chunk.start_line, chunk.end_line), target)
        for source_path in paths
        for folder, rel_path in queries.sources(source_path)
        for chunk in queries.file_chunks(folder, rel_path)
    )
