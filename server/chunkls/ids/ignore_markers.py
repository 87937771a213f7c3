"""Inline markers that leave chunk IDs out of ``chunkls check`` and diagnostics.

``<!-- chunkls: ignore -->`` (Markdown, text) or ``# chunkls: ignore`` (Python)
leaves out the IDs of its line; ``ignore-next-line`` those of the next line. The
IDs stay IDs for definition, hover and references.
"""

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


def ignored_spans(text: str, language: str) -> list[tuple[int, int]]:
    """The lines (``[start, end]`` offsets, in order) whose IDs a marker leaves out."""
    if "chunkls:" not in text:
        return []
    spans: list[tuple[int, int]] = []
    pattern = _PYTHON_MARKER if language == "python" else _MARKUP_MARKER
    for marker in pattern.finditer(text):
        start = max(text.rfind("\n", 0, marker.start()), text.rfind("\r", 0, marker.start())) + 1
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
    """The references (in order) that no marker of ``text`` leaves out."""
    spans = ignored_spans(text, language) if refs else []
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


def _line_end(text: str, offset: int) -> int:
    """The offset of the line break ending the line at ``offset`` (or the text's end)."""
    ends = [at for at in (text.find("\n", offset), text.find("\r", offset)) if at >= 0]
    return min(ends, default=len(text))
