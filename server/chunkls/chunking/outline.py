"""A module's top-level statements, and re-parsing only what an edit touched.

``reparse`` equals a full parse: each top-level statement starts at column 0 with the
tokenizer at rest, and nothing outside it changes how it parses, but a backslash continuation
into the region and ``barry_as_FLUFL`` (both refused). Anything unusual: the caller parses all.
Every parse goes through ``parse_module``: nesting allowed does not depend on stack depth.
"""

from __future__ import annotations

import ast
import sys
import threading
import warnings
from typing import NamedTuple

REFERENCE_RECURSION_LIMIT = 1000
"""The interpreter's default recursion limit, under which the tutorial runs."""
REFERENCE_PARSE_DEPTH = 6
"""The recursion depth of the tutorial's ``ast.parse`` run as a script on CPython
3.11: ``<module>`` 2, ``ingest_path`` 3, ``chunk_file`` 4, ``chunk_python`` 5, it 6."""
MAX_NESTING = 3 * (REFERENCE_RECURSION_LIMIT - REFERENCE_PARSE_DEPTH)
"""How deep ``ast.parse``'s conversion may recurse there (3 levels per unused unit
of the limit): ``x = a`` and 2982 ``.b`` parse, 2983 are a ``RecursionError``."""

_DEPTH_RULED = sys.version_info[:2] == (3, 11)
"""Whether ``ast.parse``'s limit depends on the caller's depth (3.11; 3.12 and
later count C recursion, which ``sys.setrecursionlimit`` does not govern)."""
_AST_PARSE = ast.parse
_get_limit = sys.getrecursionlimit
_set_limit = sys.setrecursionlimit
_limit_lock = threading.RLock()
"""Held while the process-wide recursion limit is not its own (one parse at a
time: two would save and restore each other's limits)."""


def _caller_depth() -> int | None:
    """The caller's recursion depth as the interpreter counts it (``None``: unread),
    from the error CPython raises when refusing a limit of 1 (which changes nothing)."""
    try:
        _set_limit(1)
    except RecursionError as error:
        # "cannot set the recursion limit to 1 at the recursion depth N: the limit is too low"
        digits = str(error).rpartition(" depth ")[2].partition(":")[0]
        return int(digits) - 1 if digits.isdigit() else None
    return None  # unreachable: this frame's depth is at least 1


def parse_module(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)`` (warnings ignored) allowing ``MAX_NESTING``,
    as the tutorial's ``chunk_python`` does, whatever the caller's depth.

    On 3.11 the conversion fails deeper than ``3 * (limit - depth)``, so for the
    parse only (one at a time; other threads share the limit meanwhile) the limit
    is set to the caller's depth plus ``REFERENCE_RECURSION_LIMIT -
    REFERENCE_PARSE_DEPTH``. ``compile(*args)`` is never specialised, so it adds
    one level, as in ``ast.parse``. A replaced ``ast.parse`` (a test's spy) is called as is.
    """
    with _limit_lock:
        depth = _caller_depth() if _DEPTH_RULED and ast.parse is _AST_PARSE else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if depth is None:
                return ast.parse(source, filename=filename)
            # where the conversion starts: one level below this frame
            limit = depth + 1 + REFERENCE_RECURSION_LIMIT - REFERENCE_PARSE_DEPTH
            args: tuple[str, str, str, int, bool] = (
                source,
                filename,
                "exec",
                ast.PyCF_ONLY_AST,
                True,  # dont_inherit: ast.py has no futures
            )
            saved = _get_limit()
            try:
                if limit != saved:
                    _set_limit(limit)
                tree: ast.Module = compile(*args)
            finally:
                if limit != saved:
                    _set_limit(saved)
            return tree


class Statement(NamedTuple):
    """What chunking needs of one top-level statement."""

    first: int
    """Its first line, decorators included (1-based, ``\\n``-counted)."""
    last: int
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
    """The outline of ``source`` from an earlier text's; ``None``: parse it all."""
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
        tree = parse_module(region)  # at the full parse's depth, so as deep
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    moved = tuple(
        Statement(s.first + shift, s.last + shift, s.kind, s.name) for s in statements[tail:]
    )
    return Parsed(source, (*statements[:head], *outline_of(tree, start - 1), *moved))
