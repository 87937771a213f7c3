"""Recognising chunk IDs in text, and resolving them through the index.

This is the one place that knows how a chunk ID is written: bare
(``app/x.py#function-f (bm25 30.047)``), in backticks, as a Markdown link target
(``[x](app/x.py#function-f)``), with a leading ``/`` or ``./``, or as
``#identity`` alone for a chunk of the same file. Definition, hover, links,
diagnostics and ``chunkls check`` all use it.

Recognition is linear in the text: matches may only start where a path run
starts (a look-behind), so a megabyte of near-IDs costs one pass. Resolution is
a lookup in the index: nothing here opens a path taken from the text.
"""

from __future__ import annotations

import io
import posixpath
import re
import tokenize
from collections.abc import Iterator
from typing import Literal, NamedTuple

from chunkls.chunking.chunker import SUPPORTED_SUFFIXES, suffix_of
from chunkls.index import Folder, IndexedChunk, WorkspaceIndex

MAX_PATH = 1024
"""Longer paths are not taken for chunk IDs."""
MAX_IDENTITY = 512
"""Longer identities are not taken for chunk IDs."""

Form = Literal["bare", "backtick", "link", "local"]

_IDENTITY = r"(?P<identity>(?:module-\d+|function-\w+|class-\w+|heading-\w+(?:-\w+)*))(?!\w)"
"""The identity kinds the chunker makes; headings also in the case-variant
forms people write (so a quick fix can offer the real slug)."""
_PATH_ID = re.compile(r"(?<![\w.\-/~#])(?P<path>[\w.\-/]+)#" + _IDENTITY)
_LOCAL_ID = re.compile(
    r"(?<![\w.\-/~#\]])#(?P<identity>(?:module-\d+|function-\w+|class-\w+|heading-[a-z0-9]+(?:-[a-z0-9]+)*))(?![\w-])"
)
_SCHEME_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:/*\Z")


class ChunkRef(NamedTuple):
    """A chunk ID written in a text, at ``[start, end)`` (character offsets)."""

    start: int
    end: int
    path: str
    """The path as written, without a leading ``/`` or ``./``; ``""`` for ``#identity``."""
    identity: str
    form: Form

    @property
    def chunk_id(self) -> str:
        """The ID as a root-relative chunk ID (``#identity`` for a local one)."""
        return f"{self.path}#{self.identity}"


def find_chunk_refs(text: str) -> list[ChunkRef]:
    """Every chunk ID written in ``text``, in order."""
    refs: list[ChunkRef] = []
    for match in _PATH_ID.finditer(text):
        start, end = match.span()
        path = match["path"]
        identity = match["identity"]
        if len(path) > MAX_PATH or len(identity) > MAX_IDENTITY:
            continue
        if suffix_of(path.rsplit("/", 1)[-1]) not in SUPPORTED_SUFFIXES:
            continue
        if start and _SCHEME_BEFORE.search(text, max(0, start - 64), start):
            continue  # part of a URL with a scheme: https://..., file:///...
        written = path
        while written.startswith("./"):
            written = written[2:]
        written = written.lstrip("/")
        if not written:
            continue
        refs.append(ChunkRef(start, end, written, identity, _form(text, start, end)))
    for match in _LOCAL_ID.finditer(text):
        start, end = match.span()
        refs.append(ChunkRef(start, end, "", match["identity"], "local"))
    refs.sort()
    return refs


def python_literal_spans(text: str) -> list[tuple[int, int]] | None:
    """Offsets of the strings and comments of Python source, or ``None`` when it
    does not tokenize (then every reference counts)."""
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


def find_chunk_refs_in(text: str, language: str) -> list[ChunkRef]:
    """References in a document: anywhere in prose, in strings and comments of
    Python."""
    refs = find_chunk_refs(text)
    if language != "python" or not refs:
        return refs
    spans = python_literal_spans(text)
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


def _form(text: str, start: int, end: int) -> Form:
    before = text[max(0, start - 2) : start]
    after = text[end : end + 1]
    if before == "](" and after in (")", " ", '"'):
        return "link"
    if before.endswith("`") and after == "`":
        return "backtick"
    return "bare"


def ref_at(refs: list[ChunkRef], offset: int) -> ChunkRef | None:
    """The reference covering a character offset (its end included)."""
    for ref in refs:
        if ref.start <= offset <= ref.end:
            return ref
        if ref.start > offset:
            break
    return None


def candidate_ids(ref: ChunkRef, doc_rel_path: str | None) -> Iterator[str]:
    """The chunk IDs a reference may mean, best first.

    ``doc_rel_path`` is the citing document's path relative to its folder (for
    ``#identity`` and for Markdown link targets, which may be document-relative).
    """
    if ref.form == "local":
        if doc_rel_path is not None:
            yield f"{doc_rel_path}#{ref.identity}"
        return
    yield ref.chunk_id
    if ref.form == "link" and doc_rel_path is not None:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(doc_rel_path), ref.path))
        if joined != ref.path and not joined.startswith("../") and joined != "..":
            yield f"{joined}#{ref.identity}"


def resolve(
    index: WorkspaceIndex, ref: ChunkRef, folder: Folder | None, doc_rel_path: str | None
) -> list[IndexedChunk]:
    """The chunks a reference points at (empty when it resolves to nothing)."""
    for chunk_id in candidate_ids(ref, doc_rel_path):
        found = index.lookup(chunk_id, prefer=folder)
        if found:
            return found
    return []
