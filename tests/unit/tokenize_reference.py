"""The reference for Python's strings and comments: ``tokenize`` itself.

``chunkls.ids.python_literals`` must give the spans of the STRING and COMMENT
tokens of Python 3.11's ``tokenize`` on every input; the ID tests use it too.
"""

from __future__ import annotations

import io
import sys
import tokenize

import pytest


def reference_python_literal_spans(text: str) -> list[tuple[int, int]] | None:
    line_starts = [0]
    for line in io.StringIO(text):
        line_starts.append(line_starts[-1] + len(line))
    spans: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _LITERAL_TOKENS:
                (srow, scol), (erow, ecol) = token.start, token.end
                spans.append((line_starts[srow - 1] + scol, line_starts[erow - 1] + ecol))
    except (tokenize.TokenError, SyntaxError, IndexError):
        return None
    return spans


_LITERAL_TOKENS = {tokenize.STRING, tokenize.COMMENT}


tokenize_is_the_reference = pytest.mark.skipif(
    sys.version_info[:2] != (3, 11),
    reason="the scanner reproduces Python 3.11's tokenize (3.12 tokenizes in C, differently)",
)


def _quote_start(text: str, start: int) -> int:
    if text[start] == "#":
        return start
    return min(i for i in (text.find("'", start), text.find('"', start)) if i >= 0)


def normalized(text: str) -> list[tuple[int, int]] | None:
    spans = reference_python_literal_spans(text)
    if spans is None:
        return None
    return [(_quote_start(text, start), end) for start, end in spans]
