"""Python files that CPython has compiled already, outlined without ``ast.parse``: a
``__pycache__`` file whose header matches the source shows its parser accepted the text, and
``scan.statements``' answer is checked against the compiled module (else: parsed as usual).

Only worker processes use this: ``marshal`` is not made for untrusted data, and a batch whose
worker a crafted file brings down is chunked again, without bytecode, by the parent.
"""

from __future__ import annotations

import codecs
import importlib.util
import marshal
import re
from types import CodeType

from chunkls.chunking import scan
from chunkls.chunking.corpus import FileSkipped, read_regular
from chunkls.chunking.outline import Outline

ENABLED = scan.fast_outline(by_bytecode=True)
"""Whether bytecode may vouch for a text (``scan.fast_outline``)."""

HEADER = 16
"""Bytes of a bytecode file's header: magic, flags, the source's mtime and size, or hash."""

_MAGIC = importlib.util.MAGIC_NUMBER
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
"""A PEP 263 encoding declaration (looked for in the first two lines)."""
_DEFINES = re.compile(rb"(?:async\b|def\b|class\b|@)")
"""A line that starts a top-level function or class (or a decorator of one)."""


def outline(path: str, data: bytes, mtime_ns: int, size: int) -> Outline | None:
    """The functions and classes of a module, if its cached bytecode vouches that ``data``
    (read with ``mtime_ns`` and ``size``) parses; ``None``: parse it."""
    if not ENABLED or len(data) != size:  # read while it changed: not the stat'ed file
        return None
    try:
        cached = importlib.util.cache_from_source(path)
    except (NotImplementedError, ValueError):
        return None
    code = compiled(cached, data, mtime_ns, size)
    return None if code is None else outline_by_code(data, code)


def compiled(cached: str, data: bytes, mtime_ns: int, size: int) -> CodeType | None:
    """The module compiled in the bytecode file ``cached``, if it is this
    interpreter's and matches the source as the import system checks it."""
    try:
        blob, _ = read_regular(cached, HEADER + 8 * size + (1 << 16))
    except (FileSkipped, OSError):
        return None
    if len(blob) < HEADER or blob[:4] != _MAGIC:
        return None
    flags = int.from_bytes(blob[4:8], "little")
    if flags == 0:
        if (
            int.from_bytes(blob[8:12], "little") != (mtime_ns // 1_000_000_000) & 0xFFFFFFFF
            or int.from_bytes(blob[12:16], "little") != size & 0xFFFFFFFF
        ):
            return None
    elif flags in (1, 3):  # hash-based: unchecked (1) or checked (3)
        if blob[8:16] != importlib.util.source_hash(data):
            return None
    else:
        return None
    try:
        code = marshal.loads(memoryview(blob)[HEADER:])
    except (ValueError, EOFError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def outline_by_code(data: bytes, code: CodeType) -> Outline | None:
    """The scan's functions and classes of ``data``, checked against ``code`` compiled from
    it; ``None`` when they disagree or the scan declines."""
    if not data.isascii() and _declares_other_encoding(data):
        return None
    scanned = scan.statements(data)
    if scanned is None:
        return None
    found, line_at = scanned
    defined = {(c.co_name, c.co_firstlineno) for c in code.co_consts if isinstance(c, CodeType)}
    if not {(statement.name, statement.first) for statement, _ in found} <= defined:
        return None
    firsts = {statement.first for statement, _ in found}
    for name, line in defined:
        if (
            name[:1] != "<"
            and line not in firsts
            and 0 < line <= len(line_at)
            and _DEFINES.match(data, line_at[line - 1])
        ):
            return None  # a top-level function or class the scan missed
    return tuple(statement for statement, _ in found)


def _declares_other_encoding(data: bytes) -> bool:
    """Whether the first two lines declare an encoding other than UTF-8 (the
    compiler decodes by it; ``ast.parse`` gets the text decoded as UTF-8)."""
    head = b"\n".join(data.split(b"\n", 2)[:2])
    for match in _CODING.finditer(head):
        try:
            if codecs.lookup(match.group(1).decode("ascii")).name != "utf-8":
                return True
        except (LookupError, UnicodeDecodeError):
            return True
    return False
