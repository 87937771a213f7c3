"""Where a module's top-level ``def``/``class`` statements are, by a scan of its bytes that
models what Python 3.11's tokenizer sees at each line's start, for a text something else
vouches parses. Anything unusual: ``None`` (``ast.parse``); the caller checks the answer."""

from __future__ import annotations

import os
import re
import sys
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from chunkls.chunking.outline import Statement


def fast_outline(by_bytecode: bool = False) -> bool:
    """The one switch of the fast outline (this scan, vouched for by ``bytecode``
    or ``symbol_table``), in worker processes: Python 3.11 only, whose tokenizer
    the scan models (3.12 tokenizes f-strings anew, PEP 701; elsewhere every file
    is parsed with ``ast.parse``), and the bytecode's vouching only unless
    ``CHUNKLS_BYTECODE=off`` (the benchmark's parsed row).

    It earns its place on 3.11: the cold index of the stdlib takes 13.0 s with
    bytecode vouching and 20.9 s with the symbol table only (docs/performance.md);
    chunking the stdlib's 13,318 Python files in one process (``read_and_chunk``,
    median of 3, alternated): 28.3 s of CPU with the symbol table vouching, 33.6 s
    parsing every file; in another run, under heavier load, 16.8 s wall with
    bytecode vouching, 51.6 s with the symbol table, 55.4 s parsing."""
    if sys.version_info[:2] != (3, 11):
        return False
    return not by_bytecode or os.environ.get("CHUNKLS_BYTECODE", "on") != "off"


ENABLED = fast_outline()
"""Whether the scan runs at all (``fast_outline``)."""

DEEPEST = 700
"""Tokens along a path down a logical line's parse tree (``path_tokens``) from
which the text is left to ``ast.parse``, whose limit (``outline.MAX_NESTING``,
2,982) a compiler may have exceeded: under 700 tokens is under 3 * 700 + 400
levels in the line, plus 300 for the statements around it, so under 2,800."""

PATH_WORK = 20_000_000
"""Bracket levels times bytes of a logical line beyond which ``ast.parse`` decides."""

_STRINGS_AND_COMMENTS = re.compile(
    rb"(#[^\n]*"
    rb"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    rb'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    rb"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
    rb'|"[^"\\\n]*(?:\\.[^"\\\n]*)*")',
    re.DOTALL,
)
"""Splits a text into code and, between, each comment or whole string literal
(a string's prefix letters are code before it)."""
_KEYWORD = re.compile(rb"(?:async|def|class)\b")
_DEF = re.compile(rb"(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_CLASS = re.compile(rb"class[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*[(:]")
_DECORATOR = re.compile(rb"@[ \t]*[A-Za-z_]")
_UNUSUAL = (b"\f", b"\v", b"\r", b"\0")
"""Bytes the scan does not model (a form feed resets the tokenizer's column)."""

_BRACKET = np.zeros(256, dtype=np.int32)
_BRACKET[list(b"([{")] = 1
_BRACKET[list(b")]}")] = -1
_IS_BRACKET = _BRACKET != 0
_STARTS_CODE = np.ones(256, dtype=bool)
_STARTS_CODE[list(b" \t\n#")] = False
_WORD = np.zeros(256, dtype=bool)
_WORD[list(b"0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")] = True
_WORD[128:] = True  # UTF-8 bytes of a non-ASCII identifier
_NESTS = np.zeros(256, dtype=np.int32)
_NESTS[33:127] = 1
_NESTS[list(b"#,0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")] = 0
_F = np.zeros(256, dtype=bool)
_F[list(b"fF")] = True
_R = np.zeros(256, dtype=bool)
_R[list(b"rR")] = True
_HASH = ord("#")
_COMMA = ord(",")
_LAMBDA = re.compile(rb"(?<![0-9A-Za-z_\x80-\xff])lambda(?![0-9A-Za-z_\x80-\xff])")
_BACKSLASH = ord("\\")
_AT = ord("@")


def strings_and_comments(
    data: bytes,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Where each string literal and comment is (rows of start and end), and
    whether each byte is inside one (its first byte is not: a line may start there)."""
    pieces = _STRINGS_AND_COMMENTS.split(data)  # code, string or comment, code, ...
    lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    spans = np.stack((offsets[1:-1:2], offsets[2::2]), axis=1)
    # runs of bytes outside (a code piece and the next one's first byte) and inside
    lengths[:-1:2] += 1
    lengths[1::2] -= 1
    return spans, np.repeat(np.arange(len(pieces)) % 2 == 1, lengths)


def statements(data: bytes) -> tuple[list[tuple[Statement, int]], list[int]] | None:
    """Each top-level ``def``/``class`` with its keyword's line, and where lines start."""
    if not ENABLED or data.startswith(b"\xef\xbb\xbf") or any(b in data for b in _UNUSUAL):
        return None
    size = len(data)
    if not size:
        return [], []
    text = np.frombuffer(data, dtype=np.uint8)
    spans, masked = strings_and_comments(data)
    brackets = Brackets.of(text, masked)
    newlines = np.flatnonzero(text == 10)
    starts = np.concatenate(([0], newlines + 1))
    starts = starts[starts < size]
    open_before = np.zeros(len(starts), dtype=bool)
    open_before[1:] = brackets.depth_at(starts[1:] - 1) != 0
    continued = np.zeros(len(starts), dtype=bool)
    if len(starts) > 1:
        ends = starts[1:] - 2  # the last byte of the line before (-1: it was empty)
        ends_ok = ends >= 0
        last = np.where(ends_ok, ends, 0)
        continued[1:] = ends_ok & (text[last] == _BACKSLASH) & ~masked[last]
    at_rest = ~open_before & ~continued
    for line in np.flatnonzero(continued).tolist():
        # a line of blanks and a backslash: how the tokenizer indents what it
        # continues is not modelled here
        if not data[int(starts[line - 1]) : int(starts[line]) - 2].strip(b" \t"):
            return None
    if not _logical_lines_shallow(starts[at_rest & ~masked[starts]], spans, masked, text, brackets):
        return None
    begins = at_rest & _STARTS_CODE[text[starts]] & ~masked[starts]
    statement_lines = (np.flatnonzero(begins) + 1).tolist()
    statement_at = starts[begins].tolist()
    line_at = starts.tolist()
    lines = len(line_at)
    result: list[tuple[Statement, int]] = []
    count = len(statement_lines)
    i = 0
    while i < count:
        first = statement_lines[i]
        if data[statement_at[i]] == _AT:
            while i < count and data[statement_at[i]] == _AT:
                if not _DECORATOR.match(data, statement_at[i]):
                    return None  # its expression may start on a later line
                i += 1
            if i == count:
                return None
        at = statement_at[i]
        if not _KEYWORD.match(data, at):
            if first != statement_lines[i]:
                return None  # decorators before something else
            i += 1
            continue
        match = _DEF.match(data, at)
        kind = "function"
        if match is None:
            match = _CLASS.match(data, at)
            kind = "class"
            if match is None:
                return None  # a name the scan does not read (non-ASCII, continued)
        keyword_line = statement_lines[i]
        following = statement_lines[i + 1] if i + 1 < count else lines + 1
        end_line = following - 1
        while end_line > keyword_line:  # back over blank and comment lines
            begin = line_at[end_line - 1]
            end = line_at[end_line] if end_line < lines else size
            text_line = data[begin:end]
            code = text_line.lstrip(b" \t")
            if code.strip(b"\n") and not (
                code[:1] == b"#" and not masked[begin + len(text_line) - len(code)]
            ):
                break
            end_line -= 1
        name = match.group(1).decode("ascii")
        result.append((Statement(first, end_line, kind, name), keyword_line))
        i += 1
    return result, line_at


class Brackets(NamedTuple):
    """A text's brackets outside strings and comments: where each is, and the
    bracket depth after it (after none: 0)."""

    at: npt.NDArray[np.int64]
    after: npt.NDArray[np.int64]
    """``after[k]``: the depth after the first ``k`` brackets."""
    steps: npt.NDArray[np.int32]
    """Each bracket's step (+1 opening, -1 closing)."""

    @classmethod
    def of(cls, text: npt.NDArray[np.uint8], masked: npt.NDArray[np.bool_]) -> Brackets:
        found = _IS_BRACKET[text]
        np.greater(found, masked, out=found)  # a bracket, not inside a string or comment
        at = np.flatnonzero(found)
        steps = _BRACKET[text[at]]
        after = np.zeros(len(at) + 1, dtype=np.int64)
        np.cumsum(steps, out=after[1:])
        return cls(at, after, steps)

    def depth_at(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The depth after each byte of ``positions`` (its own bracket counted)."""
        return self.after[np.searchsorted(self.at, positions, side="right")]

    def depths(self, start: int, end: int) -> npt.NDArray[np.int64]:
        """The depth after each byte of ``start:end``."""
        first, last = np.searchsorted(self.at, (start, end)).tolist()
        step = np.zeros(end - start, dtype=np.int64)
        step[self.at[first:last] - start] = self.steps[first:last]
        step[0] += self.after[first]
        return np.cumsum(step, out=step)


def _logical_lines_shallow(
    bounds: npt.NDArray[np.int64],
    spans: npt.NDArray[np.int64],
    masked: npt.NDArray[np.bool_],
    text: npt.NDArray[np.uint8],
    brackets: Brackets,
) -> bool:
    """Whether every logical line (``bounds``: where each begins) is well short of
    the nesting ``ast.parse`` gives up at (``path_tokens`` under ``DEEPEST``)."""
    ends = np.append(bounds[1:], len(text))
    long = np.flatnonzero(ends - bounds >= DEEPEST)  # a token takes a byte at least
    if not len(long):
        return True
    begins = spans[:, 0]
    before = text[np.maximum(begins - 1, 0)]
    earlier = text[np.maximum(begins - 2, 0)]
    f_string = (text[begins] != _HASH) & (
        (_F[before] & (begins >= 1)) | (_R[before] & _F[earlier] & (begins >= 2))
    )
    f_spans = spans[f_string]
    # a line's tokens that may nest weigh a byte each, outside strings and comments
    # or in an f-string: lines with fewer such bytes than DEEPEST need no closer look
    starts, stops = bounds[long], ends[long]
    inside = inside_before(spans, stops) - inside_before(spans, starts)
    f_bytes = np.zeros(len(f_spans) + 1, dtype=np.int64)
    np.cumsum(f_spans[:, 1] - f_spans[:, 0], out=f_bytes[1:])
    f_first, f_last = np.searchsorted(f_spans[:, 0], starts), np.searchsorted(f_spans[:, 0], stops)
    heavy = stops - starts - inside + f_bytes[f_last] - f_bytes[f_first] >= DEEPEST
    if not heavy.any():
        return True
    opening = np.zeros(len(text), dtype=bool)
    opening[begins] = True  # a string's or comment's first byte
    for line in long[heavy].tolist():
        start, end = int(bounds[line]), int(ends[line])
        piece = text[start:end]
        word = _WORD[piece]
        weight = _NESTS[piece]
        weight[1:] |= word[1:] & ~word[:-1]  # where a word begins
        weight[0] |= word[0]
        quiet = masked[start:end] | opening[start:end]
        weight[quiet] = 0
        lo, hi = np.searchsorted(f_spans[:, 0], (start, end))
        for span_start, span_end in f_spans[lo:hi].tolist():
            weight[span_start - start : span_end - start] = 1
        if int(weight.sum()) < DEEPEST:
            continue
        # an opening bracket belongs to the level outside it
        level = brackets.depths(start, end) - ((_BRACKET[piece] > 0) & ~quiet)
        commas = (piece == _COMMA) & ~quiet
        lambdas = np.zeros(end - start, dtype=bool)
        for match in _LAMBDA.finditer(text.data, start, end):
            if not masked[match.start()]:
                lambdas[match.start() - start] = True
        if int(level.max()) * (end - start) > PATH_WORK:
            return False  # bracket levels times bytes: the bound would take too long
        if path_tokens(weight, level, commas, lambdas) >= DEEPEST:
            return False
    return True


def inside_before(
    spans: npt.NDArray[np.int64], positions: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """How many bytes before each of ``positions`` are inside a string or comment
    (of ``spans``, each but its first byte)."""
    inside = np.zeros(len(spans) + 1, dtype=np.int64)
    np.cumsum(spans[:, 1] - spans[:, 0] - 1, out=inside[1:])
    done = np.searchsorted(spans[:, 1], positions, side="right")  # spans ended by then
    partly = np.zeros(len(positions), dtype=np.int64)
    open_ = done < len(spans)
    partly[open_] = np.maximum(positions[open_] - spans[done[open_], 0] - 1, 0)
    return inside[done] + partly


def path_tokens(
    weight: npt.NDArray[np.int32],
    level: npt.NDArray[np.int64],
    commas: npt.NDArray[np.bool_],
    lambdas: npt.NDArray[np.bool_],
) -> int:
    """A bound on the tokens along any path down a logical line's parse tree.

    ``weight`` marks each token that may nest (1 at its first byte, every byte
    of an f-string), ``level`` is each byte's bracket depth. Commas at a level
    separate sibling elements, so a path goes down one element only: the bound
    is the largest sum, over a byte, of the tokens of its element at each level
    around it (a group with a lambda directly in it is one element: its body
    follows its comma-separated parameters on the same level).

    Nodes without a token of their own (never more than two in a row) and levels
    a comma split leaves out (at most two per bracket level) make a path of ``T``
    tokens at most ``3 T + 2 * 200`` levels deep (200 bracket levels at most).
    """
    totals = np.zeros(len(weight), dtype=np.int64)
    for k in range(int(level.max()) + 1):
        outside = level < k
        group = np.cumsum(outside)
        split = commas & (level == k)
        if lambdas.any():
            with_lambda = np.unique(group[lambdas & (level == k)])
            if len(with_lambda):
                split &= ~np.isin(group, with_lambda)
        element = np.cumsum(outside | split)
        direct = np.bincount(element, weights=np.where(level == k, weight, 0))
        totals += np.where(outside, 0, direct[element].astype(np.int64))
    return int(totals.max())
