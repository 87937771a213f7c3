"""The chunk-ID grammar: how a chunk ID is written (``docs/lsp.md``), and where one is in a
text. Recognition is linear in the text; nothing here opens a path taken from the text."""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterator
from operator import attrgetter
from typing import Literal, NamedTuple
from urllib.parse import quote

from chunkls.chunking.suffixes import SUPPORTED_SUFFIXES, suffix_of
from chunkls.ids import json_strings

MAX_PATH = 1024
"""Longer paths are not taken for chunk IDs."""
MAX_IDENTITY = 512
"""Longer identities are not taken for chunk IDs."""

Form = Literal["bare", "backtick", "link", "local"]

# The grammar's pieces; every pattern below is built from them.
_PATH_CHAR = r"[\w.\-/]"
"""A character of a path written bare (others need a delimited form)."""
_PATH_START = r"(?<![\w.\-/~#%\\])"
"""A bare path starts on a token boundary (``q3%20plan.md#...`` has no ID ``20plan.md#...``)."""
_CODE_KINDS = r"module-\d+|function-\w+|class-\w+"
_IDENTITY_KINDS = rf"(?:{_CODE_KINDS}|heading-\w+(?:-\w+)*)"
"""The identity kinds the chunker makes; headings also in the case-variant
forms people write (so a quick fix can offer the real slug)."""
_IDENTITY = rf"(?P<identity>{_IDENTITY_KINDS})(?!\w)"
_PATH_ID = re.compile(rf"{_PATH_START}(?P<path>{_PATH_CHAR}+)#{_IDENTITY}")
_LOCAL_ID = re.compile(
    r"(?<![\w.\-/~#\]])"
    rf"#(?P<identity>(?:{_CODE_KINDS}|heading-[a-z0-9]+(?:-[a-z0-9]+)*))(?![\w-])"
)
"""``#identity`` alone: headings only as lower-case slugs (``#heading-Setup`` is none)."""
_SCHEME_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:/*\Z")


class ChunkRef(NamedTuple):
    """A chunk ID written in a text, at ``[start, end)`` (character offsets)."""

    start: int
    end: int
    path: str
    """The path as written (in a Markdown link target: with its backslash escapes
    and ``%XX`` decoded), without a leading ``/`` or ``./``; ``""`` for ``#identity``."""
    identity: str
    form: Form

    @property
    def chunk_id(self) -> str:
        """The ID as a root-relative chunk ID (``#identity`` for a local one)."""
        return f"{self.path}#{self.identity}"


class RootedRef(ChunkRef):
    """A ``ChunkRef`` written with a leading ``/``: maybe a root's absolute path, which
    ``candidate_ids`` offers first; equal to the ``ChunkRef`` of its fields."""

    __slots__ = ()


_KIND_AFTER_HASH = re.compile(r"#(?:module|function|class|heading)-")
"""What every written ID holds: a text without it has none (one quick scan)."""
_JSON_KIND_AFTER_HASH = re.compile(r"(?:#|\\u0023)(?:module|function|class|heading)-")
"""The same in raw JSON text, where ``#`` may be written ``\\u0023``."""


def find_chunk_refs(text: str) -> list[ChunkRef]:
    """Every chunk ID written in ``text``, in order."""
    if _KIND_AFTER_HASH.search(text) is None:
        return []
    refs = _plain_refs(text)
    delimited, claimed = _delimited_refs(text)
    if claimed:
        # the plain pass found at most such an ID's tail ("b.py#f.." of
        # "a b.py#f.."), ending where it ends: that reading gives way
        refs = [ref for ref in refs if ref.end not in claimed]
        refs += delimited
        refs.sort()
    return refs


def _plain_refs(text: str) -> list[ChunkRef]:
    """The IDs whose path is a run of ``[\\w.\\-/]``, and ``#identity`` ones."""
    refs: list[ChunkRef] = []
    append = refs.append
    make = tuple.__new__  # a hot loop: no NamedTuple.__new__ call per match
    for match in _PATH_ID.finditer(text):
        path, identity = match.groups()
        if len(path) > MAX_PATH or len(identity) > MAX_IDENTITY:
            continue
        # the last path segment's suffix, by ``suffix_of``'s rule
        dot = path.rfind(".")
        if dot <= path.rfind("/") + 1 or dot == len(path) - 1:
            continue
        if path[dot:].lower() not in SUPPORTED_SUFFIXES:
            continue
        start, end = match.span()
        before = text[start - 1] if start else ""
        # part of a URL with a scheme (https://..., file:///...): the look-behind
        # keeps "/" out of ``before``, so a scheme ends right there in ":"
        if before == ":" and _SCHEME_BEFORE.search(text, max(0, start - 64), start):
            continue
        written = path
        if written[0] in "./":
            written = _root_relative(written)
            if not written:
                continue
        after = text[end : end + 1]
        if before == "(" and start >= 2 and text[start - 2] == "]" and after in _LINK_AFTER:
            form: Form = "link"
        elif before == "`" and after == "`":
            form = "backtick"
        else:
            form = "bare"
        kind = RootedRef if path[0] == "/" else ChunkRef
        append(make(kind, (start, end, written, identity, form)))
    for match in _LOCAL_ID.finditer(text):
        start, end = match.span()
        append(make(ChunkRef, (start, end, "", match[1], "local")))
    refs.sort()  # two sorted runs, disjoint: one merge
    return refs


_LINK_AFTER = frozenset((")", " ", '"'))


def _root_relative(path: str) -> str:
    """A written path without its leading ``./`` and ``/``."""
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


_DELIMITED = re.compile(
    # a backtick span of single backticks on one line, no backtick inside
    r"`(?<!``)(?P<code>[^`\r\n]++)`(?!`)"
    # a Markdown link target: in angle brackets (with backslash escapes), or
    # plain (no spaces; parentheses balanced one deep, or escaped)
    r"|\]\((?:<(?P<angle>(?:[^<>\r\n\\]|\\[^\r\n])*+)>"
    r'|(?P<plain>(?:[^\x00-\x20\x7f()<>"\\]|\\[!-~]'
    r'|\((?:[^\x00-\x20\x7f()<>"\\]|\\[!-~])*+\))++))'
    r'(?=[) "])'
)
"""Where a delimited ID may be written; each scan stops at the next backtick,
line end, ``<``, ``>`` or parenthesis, so no text is read more than twice."""
_IDENTITY_WHOLE = re.compile(_IDENTITY_KINDS)
_PLAIN_PATH = re.compile(rf"{_PATH_CHAR}*")
_BAD_IN_PATH = re.compile(r"[\x00-\x1f\x7f#`]")
"""Never in a delimited path: control characters (a line break), ``#``, a backtick."""
_URL_LIKE = re.compile(r"(?:\A|(?<=\s))[A-Za-z][A-Za-z0-9+.\-]*+:(?!\s)|://")
"""A scheme at the start or after a space (``https://``, ``file:x``, ``C:/``)."""
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
"""A backslash escape of Markdown (ASCII punctuation)."""
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _delimited_refs(text: str) -> tuple[list[ChunkRef], set[int]]:
    """IDs whose path holds characters beyond ``[\\w.\\-/]`` (a whole backtick span or link
    target), and the span ends the plain reading must leave alone (a link target's tail)."""
    refs: list[ChunkRef] = []
    claimed: set[int] = set()
    for match in _DELIMITED.finditer(text):
        written = match["code"]
        if written is not None:
            if "#" not in written:
                continue  # most spans: code, not IDs
            form: Form = "backtick"
            start = match.start("code")
            if written[0] == " " or written[-1] == " ":
                # CommonMark strips one space each side; no path starts, and no
                # identity ends, with one: all are left out
                stripped = written.lstrip(" ")
                start += len(written) - len(stripped)
                written = stripped.rstrip(" ")
        else:
            form = "link"
            group = "angle" if match["angle"] is not None else "plain"
            written = match[group]
            start = match.start(group)
        hash_at = written.find("#")
        if hash_at <= 0:
            continue  # no path (``#identity`` alone is the local form)
        identity = written[hash_at + 1 :]
        if len(identity) > MAX_IDENTITY or not _IDENTITY_WHOLE.fullmatch(identity):
            continue
        path = written[:hash_at]
        if _PLAIN_PATH.fullmatch(path):
            continue  # the plain pass reads it, as ever
        end = start + len(written)
        raw = path if form == "backtick" else _link_path(path)
        path = _delimited_path(raw)
        if path is not None:
            kind = RootedRef if raw is not None and raw.startswith("/") else ChunkRef
            refs.append(kind(start, end, path, identity, form))
            claimed.add(end)
        elif form == "link":
            claimed.add(end)
    return refs, claimed


def _delimited_path(path: str | None) -> str | None:
    """A delimited ID's path as a ``ChunkRef`` holds it (``None``: a URL, no suffix, ...)."""
    if path is None or len(path) > MAX_PATH or _BAD_IN_PATH.search(path):
        return None
    if suffix_of(path.rpartition("/")[2]) not in SUPPORTED_SUFFIXES:
        return None
    # a leading "./" or "/" as the plain forms take it ("../" is kept, as there:
    # such a path resolves only document-relative, as a link target)
    path = _root_relative(path)
    if not path or path[0] == "~" or _URL_LIKE.search(path):
        return None
    return path


def _link_path(written: str) -> str | None:
    """A Markdown link target's path, escapes and UTF-8 ``%XX`` decoded (``None``: not UTF-8);
    a ``%`` before anything but two hex digits is itself, as browsers take it."""
    if "\\" in written:
        written = _ESCAPED.sub(r"\1", written)
    if "%" not in written:
        return written
    try:
        return _PERCENT_RUN.sub(
            lambda run: bytes.fromhex(run[0].replace("%", "")).decode("utf-8"), written
        )
    except UnicodeDecodeError:
        return None  # overlong forms (%C0%AF for "/") and surrogates included


def written_as(chunk_id: str, form: Form, angle: bool = False) -> str:
    """``chunk_id`` written so that a reference of ``form`` reads back as that ID."""
    path, _, identity = chunk_id.partition("#")
    if _PLAIN_PATH.fullmatch(path):
        return chunk_id
    if form == "link" and not angle:
        return f"{quote(path, safe='/')}#{identity}"
    if form in ("bare", "local"):
        return f"`{chunk_id}`"
    return chunk_id


class TypedId(NamedTuple):
    """A chunk ID being typed, up to the cursor."""

    written: str
    """Its path as written so far (maybe empty), with any leading ``/`` or ``./``."""
    path: str
    """That path without a leading ``/`` or ``./``, as a ``ChunkRef`` holds it."""
    identity: str | None
    """Its identity so far after ``#`` (maybe empty), or ``None`` before a ``#``."""


_TYPED_ID = re.compile(rf"{_PATH_START}(?P<path>{_PATH_CHAR}*)(?:#(?P<identity>[\w\-]*))?\Z")
"""A bare ID cut short at the end: a path run, perhaps a ``#`` and identity text."""


def typed_id_at(line: str, cursor: int) -> TypedId | None:
    """The chunk ID being typed in ``line`` just before ``cursor`` (``None``: none can be)."""
    typed = _TYPED_ID.search(line, 0, cursor)
    if typed is None:
        return None
    written = typed["path"]
    return TypedId(written, _root_relative(written), typed["identity"])


def find_chunk_refs_in(text: str, language: str) -> list[ChunkRef]:
    """References in a document: anywhere in prose, in Python's strings and
    comments (everywhere if it does not tokenize), in JSON's decoded strings."""
    if language in json_strings.JSON_LANGUAGES:
        return _json_refs(text, 0, len(text))
    refs = find_chunk_refs(text)
    if language != "python" or not refs:
        return refs
    from chunkls.ids import python_literals

    spans = python_literals.python_literal_spans(text, [ref.start for ref in refs])
    if spans is None:
        return refs
    kept: list[ChunkRef] = []
    position = 0
    for ref in refs:
        while position < len(spans) and spans[position][1] < ref.end:
            position += 1
        if position < len(spans) and spans[position][0] <= ref.start:
            kept.append(ref)
    return kept


def find_chunk_refs_between(
    text: str, start: int, end: int, language: str
) -> list[ChunkRef] | None:
    """References on the whole lines of ``text[start:end]``; ``None`` for Python, where a
    line alone does not tell strings and comments apart."""
    if language in json_strings.JSON_LANGUAGES:
        return _json_refs(text, start, end)
    if language == "python":
        return None
    return [
        ref._replace(start=ref.start + start, end=ref.end + start)
        for ref in find_chunk_refs(text[start:end])
    ]


def line_span(text: str, offset: int) -> tuple[int, int]:
    """The start and end offsets of the line holding ``offset``."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, len(text) if end < 0 else end


def _json_refs(text: str, start: int, end: int) -> list[ChunkRef]:
    """The IDs (not ``#identity``) in the JSON strings of ``text[start:end]``, raw offsets."""
    return [
        ref._replace(start=string.raw_offset(ref.start), end=string.raw_offset(ref.end))
        for string in json_strings.json_strings(text, start, end, _JSON_KIND_AFTER_HASH)
        for ref in find_chunk_refs(string.value)
        if ref.form != "local"
    ]


def ids_written(text: str) -> list[ChunkRef]:
    """The chunk IDs given as an argument: the one normaliser of written forms
    for every front door (JSON escapes too; ``#identity`` alone is none)."""
    decoded = json_strings.decode(text)[0] if "\\" in text else text
    return [ref for ref in find_chunk_refs(decoded) if ref.form != "local"]


def id_written(text: str) -> ChunkRef | None:
    """The one chunk ID an argument holds (``ids_written``); ``None`` for none or several."""
    refs = ids_written(text)
    return refs[0] if len(refs) == 1 else None


_LINK_TARGET = re.compile(r"\[[^\]\r\n]*\]\(\s*<?(?P<target>[^<>()\s]*)>?(?:\s+\"[^\"]*\")?\s*\)")
"""A whole Markdown link (``[text](target)``, ``(<target>)``, ``(target "title")``)."""


def path_written(text: str) -> str | None:
    """A root-relative path given as an argument, in ``ids_written``'s forms, with
    or without an ``#identity``; ``None`` if empty, leading out or several IDs."""
    refs = ids_written(text)
    if len(refs) > 1:
        return None
    if refs:
        written = refs[0].path
    else:
        written = text.strip()
        if "\\" in written:
            written = json_strings.decode(written)[0]
        if (link := _LINK_TARGET.fullmatch(written)) is not None:
            written = _link_path(link["target"]) or ""
        written = written.strip("`'\"<> ").partition("#")[0].replace("\\", "/").lstrip("/")
        while written.startswith("./"):
            written = written[2:]
    normal = posixpath.normpath(written) if written else ""
    if normal in ("", ".") or normal == ".." or normal.startswith("../"):
        return None
    return normal


def ref_at(refs: list[ChunkRef], offset: int) -> ChunkRef | None:
    """The reference covering an offset (its end too; the first where two touch)."""
    at = bisect.bisect_right(refs, offset, key=_start_of)  # the refs starting after
    for ref in refs[max(at - 2, 0) : at]:
        if ref.end >= offset:
            return ref
    return None


_start_of = attrgetter("start")


def candidate_ids(ref: ChunkRef, doc_rel_path: str | None) -> Iterator[str]:
    """The chunk IDs a reference may mean, best first (``doc_rel_path``: the citing
    document's). A leading ``/`` is first read as an absolute path (``Queries.lookup``),
    then from the root."""
    if ref.form == "local":
        if doc_rel_path is not None:
            yield f"{doc_rel_path}#{ref.identity}"
        return
    if isinstance(ref, RootedRef):
        yield f"/{ref.chunk_id}"
    yield ref.chunk_id
    if ref.form == "link" and doc_rel_path is not None:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(doc_rel_path), ref.path))
        if joined != ref.path and not joined.startswith("../") and joined != "..":
            yield f"{joined}#{ref.identity}"
    elif ref.form == "backtick" and not _PLAIN_PATH.fullmatch(ref.path):
        # `chunkls show app/x.py#function-f`: the plain ID at its end is next best
        chunk_id = ref.chunk_id
        for inner in _plain_refs(chunk_id):
            if inner.end == len(chunk_id) and inner.form != "local":
                yield inner.chunk_id
