"""The strings of JSON, JSONC and JSON Lines text, decoded, offsets mapped back to the raw
text. A JSON string never spans lines, so only the lines a marker matches are read (a JSONC
block comment over lines is not followed)."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator

JSON_LANGUAGES = frozenset({"json", "jsonc", "jsonl"})
"""Language IDs whose chunk IDs are those written in JSON strings."""
JSON_SUFFIXES = {".json": "json", ".jsonc": "jsonc", ".jsonl": "jsonl", ".ndjson": "jsonl"}
"""File suffix -> the JSON language of a file with it."""

_TOKEN = re.compile(r'"((?:[^"\\\r\n]|\\.)*+)"?|//([^\r\n]*)|/\*(.*?)\*/')
"""A string (its content; unterminated: up to the line end), or a JSONC comment."""
_ESCAPE = re.compile(
    r"\\(?:u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|u([0-9a-f]{4})|([\"\\/bfnrt]))", re.I
)
"""An escape: a surrogate pair, another ``\\uXXXX``, or one of ``\\"\\\\/bfnrt``."""
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class JsonString:
    """A decoded JSON string (or comment) and where its characters are written."""

    __slots__ = ("_decoded", "_raw", "start", "value")

    def __init__(self, start: int, value: str, breaks: list[tuple[int, int]]) -> None:
        self.start = start
        """Raw offset of the content's first character (after the quote)."""
        self.value = value
        self._decoded = [decoded for decoded, _ in breaks]
        self._raw = [raw for _, raw in breaks]

    def raw_offset(self, index: int) -> int:
        """The raw text offset of a decoded offset (``len(value)``: the content's end)."""
        at = bisect.bisect_right(self._decoded, index) - 1
        if at < 0:
            return self.start + index
        return self.start + self._raw[at] + (index - self._decoded[at])


def decode(content: str) -> tuple[str, list[tuple[int, int]]]:
    """A JSON string's content decoded (a bad escape kept as written), and the
    (decoded, raw) offsets at the start and the end of each escape."""
    if "\\" not in content:
        return content, []
    parts: list[str] = []
    breaks: list[tuple[int, int]] = []
    decoded = raw = 0
    for match in _ESCAPE.finditer(content):
        start, end = match.span()
        parts.append(content[raw:start])
        decoded += start - raw
        high, low, unit, simple = match.groups()
        if simple is not None:
            char = _SIMPLE[simple]
        elif unit is not None:
            char = chr(int(unit, 16))
        else:
            char = chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
        breaks.append((decoded, start))
        parts.append(char)
        decoded += len(char)
        raw = end
        breaks.append((decoded, raw))
    parts.append(content[raw:])
    return "".join(parts), breaks


def json_strings(text: str, start: int, end: int, marker: re.Pattern[str]) -> Iterator[JsonString]:
    """The strings and comments on the lines of ``text[start:end]`` that ``marker`` matches."""
    find, rfind, search = text.find, text.rfind, marker.search
    found = search(text, start, end)
    while found is not None:
        at = found.start()
        line_start = rfind("\n", start, at) + 1 or start
        line_end = find("\n", at, end)
        if line_end < 0:
            line_end = end
        for match in _TOKEN.finditer(text, max(line_start, start), line_end):
            group = match.lastindex or 1
            if search(text, match.start(group), match.end(group)) is None:
                continue
            content = match[group]
            value, breaks = decode(content) if group == 1 else (content, [])
            yield JsonString(match.start(group), value, breaks)
        found = search(text, line_end, end)


def escape(value: str) -> str:
    """``value`` as the content of a JSON string (no quotes; non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)[1:-1]
