"""A module's top-level statements, and re-parsing only what an edit touched.

Chunking Python needs, of the whole AST, only where each top-level statement
begins and ends and which are functions and classes (``Outline``). A save or a
keystroke usually changes one function of a file whose previous text was
parsed moments ago; ``ast.parse`` of a 1,000-line file is ~10 ms, most of a
save's cost. ``reparse`` re-parses only the top-level statements that the
changed lines touch, and keeps the others, moved by the lines added or removed.

Why that equals a full parse: Python's grammar is context-free between
top-level statements. Each starts at column 0 with the tokenizer at rest (no
open bracket, string or backslash continuation; indentation stack ``[0]``),
and nothing before or after it changes how it parses, except

- a line continued by a backslash into the next line: refused when the line
  before the re-parsed region ends with one (a region whose own last line
  does fails to parse by itself);
- ``elif``/``else``/``except``/``finally`` at column 0, which continue the
  statement before: such a region does not parse by itself;
- ``from __future__ import barry_as_FLUFL``, which changes the tokens: refused.

Whenever the region does not parse by itself, or anything is unusual (a
statement that shares its line with the next, ``\\r`` in the text), the answer
is ``None`` and the caller parses the whole text, which also gives the exact
error to report. The equivalence is checked against full parses on thousands
of random edits in the unit tests.
"""

from __future__ import annotations

import ast
import warnings
from typing import NamedTuple


class Statement(NamedTuple):
    """What chunking needs of one top-level statement."""

    first: int
    """Its first line, decorators included (1-based, ``\\n``-counted)."""
    last: int
    """Its last line (``end_lineno``)."""
    kind: str | None
    """``"function"``, ``"class"`` or ``None`` (any other statement)."""
    name: str
    """The function's or class's name (empty for other statements)."""


Outline = tuple[Statement, ...]
"""A module's top-level statements in source order."""


def outline_of(tree: ast.Module, offset: int = 0) -> Outline:
    """The outline of a parsed module, its lines moved down by ``offset``."""
    statements = []
    for node in tree.body:
        last = (node.end_lineno or node.lineno) + offset
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) + offset
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            statements.append(Statement(first, last, kind, node.name))
        else:
            statements.append(Statement(node.lineno + offset, last, None, ""))
    return tuple(statements)


class Parsed(NamedTuple):
    """A text that parsed, and its outline."""

    text: str
    outline: Outline


def reparse(previous: Parsed, source: str) -> Parsed | None:
    """The outline of ``source`` from ``previous`` (an outline of an earlier text
    of the same file) by re-parsing only the statements the change touches;
    ``None`` when that cannot be relied on or the region does not parse (the
    caller then parses the whole text)."""
    if "\r" in source or "barry_as_FLUFL" in source:
        return None
    if source == previous.text:
        return Parsed(source, previous.outline)
    old, new = previous.text.split("\n"), source.split("\n")
    statements = previous.outline
    n_old, n_new = len(old), len(new)
    limit = min(n_old, n_new)
    same_head = 0
    while same_head < limit and old[same_head] == new[same_head]:
        same_head += 1
    same_tail = 0
    while (
        same_tail < limit - same_head and old[n_old - 1 - same_tail] == new[n_new - 1 - same_tail]
    ):
        same_tail += 1
    # statements kept before the change: they end within the unchanged head and
    # do not share their last line with the statement after them (that one's
    # start would be cut off; defensive: such a region hardly ever parses)
    head = 0
    while head < len(statements) and statements[head].last <= same_head:
        head += 1
    while 0 < head < len(statements) and statements[head].first <= statements[head - 1].last:
        head -= 1
    # statements kept after it: they start within the unchanged tail (old lines)
    tail_start = n_old - same_tail + 1
    tail = head
    while tail < len(statements) and statements[tail].first < tail_start:
        tail += 1
    while 0 < tail < len(statements) and statements[tail].first <= statements[tail - 1].last:
        tail += 1
    start = statements[head - 1].last + 1 if head else 1  # first line re-parsed
    shift = n_new - n_old
    stop = (statements[tail].first - 1 if tail < len(statements) else n_old) + shift
    if start > 1 and new[start - 2].endswith("\\"):
        return None  # the kept statement's last line runs on into the region
    if stop >= start and new[stop - 1].endswith("\\"):
        return None
    region = "\n".join(new[start - 1 : stop])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # as the full parse does
            tree = ast.parse(region)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    moved = tuple(
        Statement(s.first + shift, s.last + shift, s.kind, s.name) for s in statements[tail:]
    )
    return Parsed(source, (*statements[:head], *outline_of(tree, start - 1), *moved))
