"""Inline markers that leave chunk IDs out of ``chunkls check`` and diagnostics (the IDs
stay IDs for definition, hover and references): ``docs/ignoring-citations.md``."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

_MARKUP_MARKER = re.compile(r"<!--[ \t]*chunkls:[ \t]*ignore(-next-line)?[ \t]*-->")
_PYTHON_MARKER = re.compile(r"#[ \t]*chunkls:[ \t]*ignore(-next-line)?(?![\w-])")


class _Located(Protocol):
    @property
    def start(self) -> int: ...


Ref = TypeVar("Ref", bound=_Located)


def ignored_spans(
    text: str, language: str, lo: int = 0, hi: int | None = None
) -> list[tuple[int, int]]:
    """The lines (``[start, end]`` offsets, in order) whose IDs a marker leaves out,
    of the markers in ``text[lo:hi]`` (default: all of it)."""
    hi = len(text) if hi is None else hi
    if text.find("chunkls:", lo, hi) < 0:
        return []
    spans: list[tuple[int, int]] = []
    pattern = _PYTHON_MARKER if language == "python" else _MARKUP_MARKER
    for marker in pattern.finditer(text, lo, hi):
        start = _line_start(text, marker.start())
        end = _line_end(text, marker.end())
        if marker[1]:  # ignore-next-line
            if end == len(text):
                continue  # no next line
            start = end + 2 if text.startswith("\r\n", end) else end + 1
            end = _line_end(text, start)
        spans.append((start, end))
    spans.sort()
    return spans


def unignored(text: str, language: str, refs: Sequence[Ref]) -> list[Ref]:
    """The references (in order) that no marker of ``text`` leaves out; only the markers
    that can reach them are read (a large document is checked a slice at a time)."""
    if not refs:
        return []
    first = min(ref.start for ref in refs)
    last = max(ref.start for ref in refs)
    # (two characters back: inside the line before, whether it ends "\n" or "\r\n")
    lo = _line_start(text, max(0, _line_start(text, first) - 2))
    spans = ignored_spans(text, language, lo, _line_end(text, last))
    if not spans:
        return list(refs)
    starts = [start for start, _ in spans]
    kept: list[Ref] = []
    for ref in refs:
        at = bisect.bisect_right(starts, ref.start) - 1
        # spans are whole lines: they nest or are disjoint, so the one starting
        # last at or before the reference is the one that may hold it
        if at < 0 or spans[at][1] < ref.start:
            kept.append(ref)
    return kept


def _line_start(text: str, offset: int) -> int:
    """The offset of the start of the line holding ``offset`` (each search stops at
    the nearest break: a long text without ``\r`` is not read back to its start)."""
    newline = text.rfind("\n", 0, offset)
    return max(newline, text.rfind("\r", newline + 1, offset)) + 1


def _line_end(text: str, offset: int) -> int:
    """The offset of the line break ending the line at ``offset`` (or the text's end)."""
    newline = text.find("\n", offset)
    stop = len(text) if newline < 0 else newline
    carriage = text.find("\r", offset, stop)
    return stop if carriage < 0 else carriage
