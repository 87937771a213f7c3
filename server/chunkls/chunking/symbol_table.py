"""Python files outlined with CPython's symbol table as the proof that they parse
(``symtable`` runs ``ast.parse``'s parser; beyond it, ``ast.parse`` fails only for nesting
the scan declines), the scan's answer checked against its scopes. Worker processes only."""

from __future__ import annotations

import re
import symtable
import warnings

from chunkls.chunking import scan
from chunkls.chunking.outline import Outline

ENABLED = scan.fast_outline()
"""Whether the symbol table may vouch for a text (``scan.fast_outline``)."""

_KEYWORD_LINE = re.compile(rb"(?:async|def|class)\b")
"""A line on which a top-level function or class has its keyword."""
_SCOPES = ("function", "class")


def outline(text: str, data: bytes, filename: str) -> Outline | None:
    """The functions and classes of ``data``, if its symbol table vouches that it parses and
    agrees with the scan; ``None``: parse it."""
    if not ENABLED:
        return None
    scanned = scan.statements(data)
    if scanned is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # as parse_module: no warning is an error
            table = symtable.symtable(text, filename, "exec")
    except Exception:  # SyntaxError, RecursionError, MemoryError...: ast.parse decides
        return None
    found, line_at = scanned
    scopes = {
        (child.get_name(), child.get_lineno())
        for child in table.get_children()
        if child.get_type() in _SCOPES
    }
    claimed = {(statement.name, line) for statement, line in found}
    if not claimed <= scopes:
        return None
    lines = len(line_at)
    for name, line in scopes:
        if (
            (name, line) not in claimed
            and name != "lambda"
            and 0 < line <= lines
            and _KEYWORD_LINE.match(data, line_at[line - 1])
        ):
            return None  # a top-level function or class the scan missed
    return tuple(statement for statement, _ in found)
