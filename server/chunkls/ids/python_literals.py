"""The strings and comments of Python source, found without ``tokenize``: the
STRING and COMMENT tokens Python 3.11's ``tokenize`` gives, in one linear pass
of regular expressions (``tokenize`` takes seconds for a megabyte)."""

from __future__ import annotations

import re
from collections.abc import Sequence


def python_literal_spans(
    text: str, near: Sequence[int] | None = None
) -> list[tuple[int, int]] | None:
    """Offsets of the strings (from the opening quote, without a prefix) and
    comments of Python source, in order; ``None`` where ``tokenize`` raises.

    With ``near`` (sorted offsets), spans are listed only on the lines near
    them; the other lines are skipped in bulk, keeping what decides the rest
    (brackets, indentation, strings over lines), so the spans listed are exact.
    """
    try:
        return _Reader(text, near).read()
    except _Untokenizable:
        return None


class _Untokenizable(Exception):
    """Where ``tokenize`` raises (an IndentationError, EOF in a string or a statement)."""


class _Reader:
    """One pass over a source: the tokenizer's state, and the spans found so far."""

    def __init__(self, text: str, near: Sequence[int] | None) -> None:
        self.text, self.n, self.near = text, len(text), near
        self.spans: list[tuple[int, int]] = []
        self.parenlev = 0  # as in tokenize: it may go negative (then no line starts a statement)
        self.continued = False  # the line ended in a backslash
        self.needcont = False  # tokenize's: set by a string continued, cleared when one ends
        self.indents = [0]
        self.dead: dict[str, int] = {}  # quote -> end of a line where it starts no string
        self.stops = _line_starts(text, near) if near is not None else []
        self.stop = self.last = 0  # the next offset at or after pos, and the last one near it
        self.pos = 0  # where the reading is

    def read(self) -> list[tuple[int, int]]:
        """Line by line to the end: statements whole where they can be, token by token otherwise."""
        while True:  # at the start of a line
            if self.parenlev == 0 and not self.continued:  # a new statement
                limit, end = self._window()
                if self._simple_lines(limit, end):
                    continue
                read = self._statement(limit)
                if read is None:
                    return self.spans
                if read:
                    continue
            elif self.pos >= self.n:  # a continued statement
                raise _Untokenizable  # EOF in multi-line statement
            else:
                self.continued = False
            if self._line_tokens():
                return self.spans

    def _window(self) -> tuple[int, int]:
        """(the next line near an offset, how far to read whole statements):
        up to that line (no spans), or over the lines near it (with spans)."""
        pos, n, stops = self.pos, self.n, self.stops
        if self.near is None:
            return pos, n
        while self.stop < len(stops) and stops[self.stop] < pos:
            self.stop += 1
        limit = stops[self.stop] if self.stop < len(stops) else n
        end = limit
        if limit == pos < n:
            last = max(self.last, self.stop)  # (each offset is looked at once)
            while last + 1 < len(stops) and stops[last + 1] - stops[last] < _NEAR:
                last += 1
            self.last = last
            end = min(stops[last] + _NEAR, n)
        return limit, end

    def _indent(self, column: int) -> None:
        """A statement at ``column``: an indent, or dedents onto an indentation."""
        indents = self.indents
        if column > indents[-1]:
            indents.append(column)
        elif column < indents[-1]:
            if column not in indents:
                raise _Untokenizable  # IndentationError: unindent does not match
            while column < indents[-1]:
                indents.pop()

    def _simple_lines(self, limit: int, end: int) -> bool:
        """Whole one-line statements in one match (spans at ``limit``): whether any."""
        text, pos = self.text, self.pos
        if (end := _end(_SIMPLE_LINES, text, pos, end)) <= pos:
            return False
        previous = None
        for indent in _STATEMENT_INDENTS(text, pos, end):
            if indent != previous:
                previous = indent
                self._indent(_column(indent))
        if limit == pos:
            literals = _LINE_LITERALS(text, pos, end)
            self.spans.extend(t.span(t.lastindex) for t in literals if t.lastindex is not None)
        self.pos = end
        return True

    def _statement(self, limit: int) -> bool | None:
        """The line's indentation, then a blank or comment line, or a whole
        statement in one match: whether it was read (``None``: the source ended)."""
        text, n, pos = self.text, self.n, self.pos
        match = _INDENT.match(text, pos)
        assert match is not None
        first = match.end()
        if first >= n:
            return None  # at EOF, or a last line of only whitespace: tokenize stops
        char = text[first]
        if char in "#\r\n":  # a comment line, a blank one, or one tokenize skips
            line_end = text.find("\n", first) + 1 or n
            if char == "#":
                self.spans.append((first, first + len(text[first:line_end].rstrip("\r\n"))))
            self.pos = line_end
            return True
        self._indent(first - pos if match.lastindex is None else _column(text[pos:first]))
        match = _STATEMENT[self.needcont].match(text, first)
        if match is not None:  # a whole statement, plain
            if match.end() <= limit:  # and more at this indentation
                self.pos = _end(_STATEMENTS[self.needcont], text, pos, limit)
            else:  # holding an offset: its strings and comments
                self.spans.extend(token.span() for token in _LITERAL(text, first, match.end()))
                self.pos = match.end()
            return True
        self.pos = first
        return False

    def _line_tokens(self) -> bool:
        """Token by token to the end of the line (inside brackets, of the line
        that closes them: the lines inside change nothing); whether the source ended."""
        text, n = self.text, self.n
        while True:
            skip = _SKIPS[(self.parenlev > 0) - (self.parenlev < 0)]
            pos = self.pos = _end(skip, text, self.pos)
            if pos >= n:
                if self.parenlev:
                    raise _Untokenizable  # EOF in multi-line statement
                return True
            char = text[pos]
            if char == "\n":
                self.pos = pos + 1
                return False
            if char in "([{" or char in ")]}":
                self._bracket_run(pos, char in "([{")
            elif char == "#":
                self._span(pos, _end(_COMMENT, text, pos))
            elif char == "\\":
                if self._backslash(pos):
                    return False
            elif text.startswith(char * 3, pos):
                if self._triple(char, pos):
                    return False
            elif self.dead.get(char, -1) > pos:
                self.pos = pos + 1  # no string starts here: an error token
            elif self._string(char, pos):
                return False

    def _bracket_run(self, pos: int, opening: bool) -> None:
        """Opening (closing) brackets at ``pos``; with more open (closed) already,
        code up to a bracket the other way too (only how many matters)."""
        text, sign = self.text, 1 if opening else -1
        if self.parenlev * sign > 0:
            end = _end(_OPENERS if opening else _CLOSERS, text, pos)
            count = sum(text.count(kind, pos, end) for kind in ("([{" if opening else ")]}"))
        else:
            end = _end(_OPENING if opening else _CLOSING, text, pos)
            count = end - pos
        self.parenlev += sign * count
        self.pos = end

    def _backslash(self, pos: int) -> bool:
        """A backslash at ``pos``; whether it ends the line (continuing the statement)."""
        text = self.text
        if text.startswith("\n", pos + 1) or text.startswith("\r\n", pos + 1):
            self.pos = text.index("\n", pos) + 1
        else:
            self.pos = pos + 1  # not before a newline: an error token
            return False
        if not self.parenlev:
            self.continued = True
            return True
        return False

    def _triple(self, char: str, pos: int) -> bool:
        """A triple-quoted string at ``pos``; whether the rest of its line was dropped."""
        text, n = self.text, self.n
        rest = _TRIPLE_REST[char]
        if not self.needcont:
            match = rest.match(text, pos + 3)
            if match is None:
                raise _Untokenizable  # EOF in multi-line string
            return self._span(pos, match.end())
        # tokenize's quirk: after a dropped continued string, only over lines ending in "\\"
        line_end = text.find("\n", pos) + 1 or n
        match = rest.match(text, pos + 3, line_end)
        if match is not None:
            return self._span(pos, match.end())
        after = _end(_TRIPLE_LINES[char], text, line_end)
        if after >= n:
            raise _Untokenizable  # EOF in multi-line string
        line_end = text.find("\n", after) + 1 or n
        closing = rest.match(text, after, line_end)
        if closing is None:  # dropped with the rest of the line
            self.pos = line_end
            return True
        self.needcont = False
        return self._span(pos, closing.end())

    def _string(self, char: str, pos: int) -> bool:
        """A one-quote string at ``pos``; whether the rest of its line was dropped."""
        text, n = self.text, self.n
        match = _STRING[char].match(text, pos)
        if match is None:
            # unterminated: an error token, as every later such quote on its line
            self.dead[char] = text.find("\n", pos) + 1 or n
            self.pos = pos + 1
            return False
        if match.end(1) - match.start(1) == 1:
            return self._span(pos, match.end())
        # continued on the next line by a backslash
        self.needcont = True
        self.pos = _end(_STRING_LINES[char], text, match.end())
        if self.pos >= n:
            raise _Untokenizable  # EOF in multi-line string
        line_end = text.find("\n", self.pos) + 1 or n
        match = _STRING_REST[char].match(text, self.pos, line_end)
        if match is not None:
            self.needcont = False
            return self._span(pos, match.end())
        # neither ended nor continued: tokenize drops it and the rest of the line
        self.pos = line_end
        return True

    def _span(self, start: int, end: int) -> bool:
        """A string from ``start`` to ``end``, read: the line goes on (``False``)."""
        self.spans.append((start, end))
        self.pos = end
        return False


def _end(pattern: re.Pattern[str], text: str, pos: int, endpos: int | None = None) -> int:
    """Where ``pattern``, one that always matches, ends when matched at ``pos``."""
    match = pattern.match(text, pos, len(text) if endpos is None else endpos)
    assert match is not None
    return match.end()


def _line_starts(text: str, offsets: Sequence[int]) -> list[int]:
    """The start of the line of each of the (sorted) offsets."""
    starts: list[int] = []
    line_start = previous = 0
    for offset in offsets:
        line_start = text.rfind("\n", previous, offset) + 1 or line_start
        starts.append(line_start)
        previous = offset
    return starts


def _column(indent: str) -> int:
    """The column an indentation ends at, as tokenize counts it."""
    if "\t" not in indent and "\f" not in indent:
        return len(indent)
    column = 0
    for char in indent:  # a form feed sets it back to 0
        column = column + 1 if char == " " else (column // 8 + 1) * 8 if char == "\t" else 0
    return column


_NEAR = 4096
"""Offsets this close are read together (the spans between them are listed)."""


# What decides the tokens of Python source: quotes, "#", backslashes, brackets,
# and newlines outside brackets. Quantifiers are possessive (each parse here is
# unique), so a failed attempt costs its length once.
_CODE = r"[^'\"#\\()\[\]{}\n]"
_CODE_LINES = r"[^'\"#\\()\[\]{}]"
_JOIN = r"\\\r?\n"
"""A backslash that joins two lines."""
_COMMENT_TEXT = r"#[^\r\n]*+"
_ONE_LINE_STRINGS = (
    r"(?!''')'[^\n'\\]*+(?:\\.[^\n'\\]*+)*+'"
    r'|(?!""")"[^\n"\\]*+(?:\\.[^\n"\\]*+)*+"'
)
_STRINGS = (
    r"'''(?:[^'\\]|(?s:\\.)|'(?!''))*+'''"
    r'|"""(?:[^"\\]|(?s:\\.)|"(?!""))*+"""'
    rf"|{_ONE_LINE_STRINGS}"
)
"""A whole string: triple-quoted, or on one line."""
_ONE_LINE_TRIPLES = r"'''(?:[^'\\\n]|\\.|'(?!''))*+'''" r'|"""(?:[^"\\\n]|\\.|"(?!""))*+"""'


def _brackets(inside: str, depth: int = 5) -> str:
    """Balanced brackets up to ``depth`` deep, with ``inside`` them."""
    group = rf"[(\[{{](?:{inside})*+[)\]}}]"
    for _depth in range(depth - 1):
        group = rf"[(\[{{](?:{inside}|{group})*+[)\]}}]"
    return group


def _statements(strings: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Whole statements at one indentation with blank lines, and one whole
    statement after its indentation (over lines inside brackets or after a
    backslash; never over a string continued by a backslash)."""
    inside = rf"{_CODE_LINES}++|{_JOIN}|{strings}|{_COMMENT_TEXT}"
    group = _brackets(inside)
    one_line = _brackets(rf"{_CODE}++|{_JOIN}|{strings}|{_COMMENT_TEXT}")
    inverted = rf"[)\]}}](?:{inside}|{one_line})*+[(\[{{]"
    inverted = rf"[)\]}}](?:{inside}|{one_line}|{inverted})*+[(\[{{]"
    line = (
        rf"(?=[^ \t\f#\r\n])"
        rf"(?:{_CODE}++|{_JOIN}|{group}|{inverted}|{strings}|{_COMMENT_TEXT})*+\n"
    )
    statements = rf"(?P<indent>[ \t\f]*+){line}(?:(?P=indent){line}|{_BLANK})*+"
    return re.compile(statements), re.compile(line)


_PLAIN_GROUP = _brackets(rf"{_CODE_LINES}++|{_JOIN}", 3)
"""Brackets with only code in them: skipped even token by token."""
_SKIP_LINE = re.compile(rf"(?:{_CODE}++|{_PLAIN_GROUP})*+")
_SKIP_LINES = re.compile(rf"(?:{_CODE_LINES}++|{_JOIN}|{_PLAIN_GROUP})*+")
"""With parenlev above 0: no newline inside brackets can start a statement."""
_SKIP_NEGATIVE = re.compile(rf"(?:{_CODE_LINES}++|{_JOIN}|{_brackets(rf'{_CODE}++|{_JOIN}', 3)})*+")
"""With parenlev below 0, brackets may bring it to 0 at a newline: only brackets
closed on their line are skipped whole."""
_SKIPS = (_SKIP_LINE, _SKIP_LINES, _SKIP_NEGATIVE)
"""By the sign of parenlev: what is skipped when reading token by token."""
_OPENERS = re.compile(r"[^'\"#\\)\]}]*+")
_CLOSERS = re.compile(r"[^'\"#\\(\[{]*+")
_OPENING = re.compile(r"[(\[{]++")
_CLOSING = re.compile(r"[)\]}]++")
_BLANK = r"[ \t\f]*+(?:[#\r][^\n]*+)?\n"
"""A line that starts no statement: blank, a comment, or (tokenize's quirk) one
whose first character after the indentation is a carriage return."""
_STATEMENTS, _STATEMENT = zip(
    _statements(_STRINGS),
    _statements(f"{_ONE_LINE_TRIPLES}|{_ONE_LINE_STRINGS}"),
    strict=True,
)
"""By ``needcont``: with it, triple-quoted strings over lines are read token by
token (and so are, always, strings continued by a backslash)."""
_LITERAL = re.compile(rf"{_STRINGS}|{_COMMENT_TEXT}").finditer
"""The strings and comments of a whole statement."""
_INDENT = re.compile(r" *+(?:([\t\f])[ \t\f]*+)?")
_ONE_LINE = rf"{_ONE_LINE_TRIPLES}|{_ONE_LINE_STRINGS}|{_COMMENT_TEXT}"
_ONE_LINE_GROUP = _brackets(rf"{_CODE}++|{_ONE_LINE}")
_SIMPLE_LINES = re.compile(
    rf"(?:\n++|[ \t\f]*+(?:[#\r][^\n]*+|(?:{_CODE}++|{_ONE_LINE_GROUP}|{_ONE_LINE})*+)\n)*+"
)
"""Lines that each are a whole statement (or blank, or a comment)."""
_STATEMENT_INDENTS = re.compile(r"^([ \t\f]*+)[^ \t\f#\r\n]", re.MULTILINE).findall
"""The indentation of each statement among such lines."""
_LINE_LITERALS = re.compile(
    rf"^[ \t\f]*+\r[^\n]*+|^[ \t\f]*+(#[^\n]*?)\r*(?=\n)|({_STRINGS})|({_COMMENT_TEXT})",
    re.MULTILINE,
).finditer
"""The strings and comments among such lines (a comment line ends before its
last carriage returns, a line that starts with one has none)."""
_COMMENT = re.compile(_COMMENT_TEXT)
_TRIPLE_REST = {
    "'": re.compile(r"(?:[^'\\]|\\.|'(?!''))*+'''", re.DOTALL),
    '"': re.compile(r'(?:[^"\\]|\\.|"(?!""))*+"""', re.DOTALL),
}
"""The rest of a triple-quoted string (tokenize's ``Single3``/``Double3`` over
lines joined: a backslash that ends a line escapes its newline)."""
_STRING = {
    "'": re.compile(r"'[^\n'\\]*(?:\\.[^\n'\\]*)*('|\\\r?\n)"),
    '"': re.compile(r'"[^\n"\\]*(?:\\.[^\n"\\]*)*("|\\\r?\n)'),
}
"""A string on one line, or the first line of one a backslash continues
(tokenize's ``ContStr``, from the quote)."""
_STRING_REST = {
    "'": re.compile(r"[^'\\]*(?:\\.[^'\\]*)*'"),
    '"': re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"'),
}
"""The end of a continued string, on one line (tokenize's ``Single``/``Double``)."""
_STRING_LINES = {
    quote: re.compile(rf"(?:(?:[^{quote}\\\n]|\\[^\n])*+(?:\\\n|(?<=\\)\n|(?<=\\\r)\n))*+")
    for quote in "'\""
}
"""Lines that do not end a continued string and end in a backslash, so continue it."""
_TRIPLE_LINES = {
    quote: re.compile(
        rf"(?:(?:[^{quote}\\\n]|\\[^\n]|{quote}(?!{quote}{quote}))*+(?:\\\n|(?<=\\)\n|(?<=\\\r)\n))*+"
    )
    for quote in "'\""
}
"""Lines that do not end a triple-quoted string and end in a backslash."""
