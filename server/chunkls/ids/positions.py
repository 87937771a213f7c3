"""Offsets <-> LSP positions: lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only, and
columns count in the negotiated encoding's code units (UTF-16 by default)."""

from __future__ import annotations

import bisect
import re
from itertools import accumulate
from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]

_BREAK = re.compile(r"\r\n|\r|\n")


def units(text: str, encoding: Encoding = "utf-16") -> int:
    """The length of ``text`` in the encoding's code units."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-16":
        return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)
    return len(text.encode("utf-8", "surrogatepass"))


def column_to_index(line: str, column: int, encoding: Encoding = "utf-16") -> int:
    """The character index in ``line`` of a column in code units (clamped)."""
    if column <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return min(column, len(line))
    counted = 0
    for index, char in enumerate(line):
        if counted >= column:
            return index
        code = ord(char)
        if encoding == "utf-16":
            counted += 2 if code > 0xFFFF else 1
        else:
            counted += 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return len(line)


_COLUMN_TABLES = 16
"""Non-ASCII lines whose column tables ``TextLines`` keeps (most recent)."""


class TextLines:
    """A text's LSP lines (a non-ASCII line's column table kept: walked once, not per ID)."""

    __slots__ = ("_columns", "_counted", "_starts", "encoding", "text")

    def __init__(self, text: str, encoding: Encoding = "utf-16") -> None:
        self.text = text
        self.encoding: Encoding = encoding
        self._starts = [0] + [match.end() for match in _BREAK.finditer(text)]
        self._counted = encoding == "utf-32" or text.isascii()
        """Whether every column is a character count."""
        self._columns: dict[int, list[int] | None] = {}
        """Line -> code units before each of its characters (``None``: ASCII line)."""

    def __len__(self) -> int:
        return len(self._starts)

    def line(self, number: int) -> str:
        """Line ``number`` (0-based) without its line break; ``""`` past the end."""
        if number < 0 or number >= len(self._starts):
            return ""
        start = self._starts[number]
        end = self._starts[number + 1] if number + 1 < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def offset(self, line: int, column: int) -> int:
        """The character offset of an LSP position (clamped into the text)."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self.text)
        return self._starts[line] + column_to_index(self.line(line), column, self.encoding)

    def position(self, offset: int) -> tuple[int, int]:
        """The LSP (line, column) of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        start = self._starts[line]
        if self._counted:
            return line, offset - start
        if line in self._columns:
            columns = self._columns[line]
        else:
            end = self._starts[line + 1] if line + 1 < len(self._starts) else len(self.text)
            piece = self.text[start:end]
            columns = None
            if not piece.isascii():
                widths = (
                    (2 if char > "\uffff" else 1 for char in piece)
                    if self.encoding == "utf-16"
                    else (len(char.encode("utf-8", "surrogatepass")) for char in piece)
                )
                columns = [0, *accumulate(widths)]
            if len(self._columns) >= _COLUMN_TABLES:
                del self._columns[next(iter(self._columns))]
            self._columns[line] = columns
        return line, offset - start if columns is None else columns[offset - start]

    def line_end(self, line: int) -> int:
        """The column at the end of a line, in code units."""
        return units(self.line(line), self.encoding)
