"""Offsets, editor lines and LSP positions, with the editor's line breaks only.

LSP lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (not at the form feeds and other
separators ``str.splitlines()`` knows), and characters count in the negotiated
encoding: UTF-16 code units by default, or UTF-8 / UTF-32.
"""

from __future__ import annotations

import bisect
import re
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


class TextLines:
    """A text's LSP lines: offsets <-> (line, column) in code units."""

    __slots__ = ("_starts", "encoding", "text")

    def __init__(self, text: str, encoding: Encoding = "utf-16") -> None:
        self.text = text
        self.encoding: Encoding = encoding
        self._starts = [0] + [match.end() for match in _BREAK.finditer(text)]

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
        return line, units(self.text[start:offset], self.encoding)

    def line_end(self, line: int) -> int:
        """The column at the end of a line, in code units."""
        return units(self.line(line), self.encoding)
