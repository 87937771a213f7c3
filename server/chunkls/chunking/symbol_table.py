"""Python files outlined with CPython's symbol table as the proof that they parse.

A fresh clone has no bytecode for ``bytecode.py`` to lean on, so a cold index
parses every Python file. ``ast.parse`` runs CPython's parser and then converts
its tree to Python objects, which are freed again at once: about a third of its
time. ``symtable.symtable`` runs the same parser on the same text (a ``str``,
whose coding declaration both ignore, with the same default flags: no inherited
futures, this Python's grammar) and then builds only the symbol table, in C:
0.71x of ``ast.parse``'s time on the standard library. With the scan
(``scan.statements``, about 0.2x) that finds where the functions and classes
are, a Python file is outlined for about 0.9x of a parse, with the same chunks.

When the symbol table is built, ``ast.parse`` would have parsed the text too:
the parser accepted it, and what ``ast.parse`` does beyond the parser fails only
for a text nested deeper than ``outline.MAX_NESTING``, which the scan declines
(``scan.DEEPEST``), or out of memory. The other way round, the symbol table
refuses some texts that ``ast.parse`` accepts (``nonlocal`` at module level, a
name used before its ``global`` declaration, nesting deeper than the compiler's
own limit): those are parsed as usual, as is any text the scan
declines. The scan's answer is checked against the table as ``bytecode.py``
checks it against a compiled module: each function and class it finds must be a
top-level function or class scope of that name on that line (the table records
the ``def``/``class`` line, not the first decorator's), and each such scope
whose line starts with ``def``, ``async`` or ``class`` must be one it found
(a lambda in a default value or a decorator has a scope too: ``lambda`` is no
name a ``def`` can have, so those are left out; comprehensions there make the
file parsed as usual). Unlike a compiled module, the table does not check where
a decorated definition starts (its first decorator's line): that is the scan's
alone, which ``tests/unit/test_scan.py`` and ``test_symbols.py`` hold equal to
``ast.parse``'s on this repository's files and on random edits of tricky lines
(and which equalled it on every file of the standard library, 2026-12-02).

Workers use this, as they use bytecode (``parallel``); the editor's own
chunking keeps ``ast.parse`` and its re-parse of the changed statements only
(``outline.reparse``).
"""

from __future__ import annotations

import re
import symtable
import warnings

from chunkls.chunking import scan
from chunkls.chunking.outline import Outline, Statement

ENABLED = scan.ENABLED
"""The scan models Python 3.11's tokenizer; elsewhere every file is parsed."""

_KEYWORD_LINE = re.compile(rb"(?:async|def|class)\b")
"""A line on which a top-level function or class has its keyword."""
_SCOPES = ("function", "class")


def outline(text: str, data: bytes, filename: str) -> Outline | None:
    """The functions and classes of the module whose UTF-8 bytes are ``data``
    (decoded: ``text``), if its symbol table vouches that it parses and agrees
    with the scan; ``None``: parse it."""
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
    return outline_by_table(data, table, found, line_at)


def outline_by_table(
    data: bytes,
    table: symtable.SymbolTable,
    found: list[tuple[Statement, int]],
    line_at: list[int],
) -> Outline | None:
    """The scan's ``found`` functions and classes (each with its keyword's line)
    if the module's symbol ``table`` agrees with them; ``None`` if not."""
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
