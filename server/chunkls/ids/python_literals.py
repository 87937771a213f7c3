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
    n = len(text)
    spans: list[tuple[int, int]] = []
    append = spans.append
    count = text.count
    startswith = text.startswith
    skip_line, skip_lines, skip_negative = _SKIP_LINE.match, _SKIP_LINES.match, _SKIP_NEGATIVE.match
    parenlev = 0  # as in tokenize: it may go negative (then no line starts a statement)
    continued = False  # the line ended in a backslash
    # tokenize's ``needcont``: set by a string continued by a backslash, cleared
    # only when a string over lines ends (not when one is dropped)
    needcont = False
    indents = [0]
    dead: dict[str, int] = {}  # quote -> end of a line where it starts no string
    stops = _line_starts(text, near) if near is not None else []
    stop = last = 0  # the next offset at or after pos, and the last one near it
    pos = 0
    while True:
        # at the start of a line
        if parenlev == 0 and not continued:  # a new statement
            # whole one-line statements in one match: up to the next line near
            # an offset (no spans), or over the lines near it (with spans)
            if near is None:
                limit = pos
                end = n
            else:
                while stop < len(stops) and stops[stop] < pos:
                    stop += 1
                limit = stops[stop] if stop < len(stops) else n
                end = limit
                if limit == pos < n:
                    last = max(last, stop)  # (kept between lines: each offset is looked at once)
                    while last + 1 < len(stops) and stops[last + 1] - stops[last] < _NEAR:
                        last += 1
                    end = min(stops[last] + _NEAR, n)
            match = _SIMPLE_LINES.match(text, pos, end)
            assert match is not None
            if match.end() > pos:
                # each dedent must land on an indentation it closes
                previous = None
                for indent in _STATEMENT_INDENTS(text, pos, match.end()):
                    if indent != previous:
                        previous = indent
                        column = _column(indent)
                        if column > indents[-1]:
                            indents.append(column)
                        elif column < indents[-1]:
                            if column not in indents:
                                return None  # IndentationError
                            while column < indents[-1]:
                                indents.pop()
                if limit == pos:
                    for token in _LINE_LITERALS(text, pos, match.end()):
                        if token.lastindex is not None:
                            append(token.span(token.lastindex))
                pos = match.end()
                continue
            match = _INDENT.match(text, pos)
            assert match is not None
            first = match.end()
            if first >= n:
                return spans  # at EOF, or a last line of only whitespace: tokenize stops
            char = text[first]
            if char in "#\r\n":  # a comment line, a blank one, or one tokenize skips
                line_end = text.find("\n", first) + 1 or n
                if char == "#":
                    append((first, first + len(text[first:line_end].rstrip("\r\n"))))
                pos = line_end
                continue
            column = first - pos if match.lastindex is None else _column(text[pos:first])
            if column != indents[-1]:
                if column > indents[-1]:
                    indents.append(column)
                elif column not in indents:
                    return None  # IndentationError: unindent does not match
                else:
                    while column < indents[-1]:
                        indents.pop()
            match = _STATEMENT[needcont].match(text, first)
            if match is not None:  # a whole statement, plain
                if match.end() <= limit:  # and more at this indentation
                    match = _STATEMENTS[needcont].match(text, pos, limit)
                    assert match is not None
                else:  # holding an offset: its strings and comments
                    for token in _LITERAL(text, first, match.end()):
                        append(token.span())
                pos = match.end()
                continue
            pos = first
        else:  # a continued statement
            if pos >= n:
                return None  # EOF in multi-line statement
            continued = False
        # token by token to the end of the line (inside brackets, of the line
        # that closes them: the lines inside change nothing)
        while True:
            if parenlev > 0:
                match = skip_lines(text, pos)
            else:
                match = (skip_line if parenlev == 0 else skip_negative)(text, pos)
            assert match is not None
            pos = match.end()
            if pos >= n:
                return None if parenlev else spans
            char = text[pos]
            if char == "\n":
                pos += 1
                break
            if char in "([{":
                if parenlev > 0:
                    # openers and code up to a closer, across lines (parenlev
                    # cannot come to 0 there): only how many matters
                    match = _OPENERS.match(text, pos)
                    assert match is not None
                    end = match.end()
                    parenlev += count("(", pos, end) + count("[", pos, end) + count("{", pos, end)
                else:
                    match = _OPENING.match(text, pos)
                    assert match is not None
                    end = match.end()
                    parenlev += end - pos
                pos = end
            elif char in ")]}":
                if parenlev < 0:
                    match = _CLOSERS.match(text, pos)
                    assert match is not None
                    end = match.end()
                    parenlev -= count(")", pos, end) + count("]", pos, end) + count("}", pos, end)
                else:
                    match = _CLOSING.match(text, pos)
                    assert match is not None
                    end = match.end()
                    parenlev -= end - pos
                pos = end
            elif char == "#":
                match = _COMMENT.match(text, pos)
                assert match is not None
                append(match.span())
                pos = match.end()
            elif char == "\\":
                if startswith("\n", pos + 1):
                    pos += 2
                elif startswith("\r\n", pos + 1):
                    pos += 3
                else:
                    pos += 1  # not before a newline: an error token
                    continue
                if not parenlev:
                    continued = True
                    break
            elif startswith(char * 3, pos):
                rest = _TRIPLE_REST[char]
                if not needcont:
                    match = rest.match(text, pos + 3)
                    if match is None:
                        return None  # EOF in multi-line string
                    append((pos, match.end()))
                    pos = match.end()
                    continue
                # tokenize's quirk: after a continued string was dropped, a
                # triple-quoted one goes on only over lines ending in a backslash
                line_end = text.find("\n", pos) + 1 or n
                match = rest.match(text, pos + 3, line_end)
                if match is not None:
                    append((pos, match.end()))
                    pos = match.end()
                    continue
                match = _TRIPLE_LINES[char].match(text, line_end)
                assert match is not None
                if match.end() >= n:
                    return None  # EOF in multi-line string
                line_end = text.find("\n", match.end()) + 1 or n
                closing = rest.match(text, match.end(), line_end)
                if closing is None:  # dropped with the rest of the line
                    pos = line_end
                    break
                append((pos, closing.end()))
                pos = closing.end()
                needcont = False
            elif dead.get(char, -1) > pos:
                pos += 1  # no string starts here: an error token
            else:
                match = _STRING[char].match(text, pos)
                if match is None:
                    # unterminated: the quote is an error token, and no later
                    # quote of its kind on this line starts a string either
                    dead[char] = text.find("\n", pos) + 1 or n
                    pos += 1
                elif match.end(1) - match.start(1) == 1:
                    append((pos, match.end()))
                    pos = match.end()
                else:  # continued on the next line by a backslash
                    needcont = True
                    start = pos
                    match = _STRING_LINES[char].match(text, match.end())
                    assert match is not None
                    pos = match.end()
                    if pos >= n:
                        return None  # EOF in multi-line string
                    line_end = text.find("\n", pos) + 1 or n
                    match = _STRING_REST[char].match(text, pos, line_end)
                    if match is not None:
                        append((start, match.end()))
                        pos = match.end()
                        needcont = False
                    else:
                        # neither ended nor continued: tokenize drops the string
                        # and the rest of this line as an error token
                        pos = line_end
                        break


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
    for char in indent:
        if char == " ":
            column += 1
        elif char == "\t":
            column = (column // 8 + 1) * 8
        else:  # form feed
            column = 0
    return column


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
_NEAR = 4096
"""Offsets this close are read together (the spans between them are listed)."""
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
