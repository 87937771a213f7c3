"""Documents as features see them: text (open or from disk), folder, language, chunking."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote

from lsprotocol import types

from chunkls.chunking.chunker import ChunkingError, chunk_source, normalize_newlines
from chunkls.chunking.corpus import FileSkipped, read_corpus_file
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.chunking.suffixes import file_type_for
from chunkls.ids.grammar import ChunkRef
from chunkls.ids.positions import Encoding, TextLines
from chunkls.index.folder import FolderInfo, IndexedChunk, outside_folder
from chunkls.lsp.languages import effective_language
from chunkls.lsp.ranges import chunk_uri
from chunkls.lsp.uris import path_of

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer

LOCATED_KEPT = 10_000
"""URIs whose folder and path are remembered (all are forgotten beyond it)."""


class Buffer(NamedTuple):
    """An open document's chunking, computed from its text (not from disk)."""

    version: int | None
    """The document version it was computed from."""
    chunks: list[LocatedChunk]
    """The last good chunking (kept while a Python buffer does not parse)."""
    error: str | None
    """Why the current text does not chunk, if it does not."""


class DocumentContext:
    """What the features need to know about a document."""

    __slots__ = (
        "_answers",
        "folder",
        "language",
        "lines",
        "ranges",
        "refs",
        "rel_path",
        "text",
        "uri",
        "version",
    )

    def __init__(
        self,
        uri: str,
        text: str,
        language: str,
        folder: FolderInfo | None,
        rel_path: str | None,
        encoding: Encoding,
    ) -> None:
        self.uri = uri
        """The document's URI as the client wrote it."""
        self.text = text
        """Its text (the open buffer's, else the file's)."""
        self.language = language
        """Its language ID (the client's, else guessed from its name)."""
        self.folder = folder
        self.rel_path = rel_path
        """Its path relative to that folder (its file name in single-file mode)."""
        self.lines = TextLines(text, encoding)
        self.version: int | None = None
        """The open document's version this context was made from."""
        self.refs: list[ChunkRef] | None = None
        """The chunk IDs written in it, once recognised (see ``refs.refs_of``)."""
        self.ranges: dict[tuple[int, int], types.Range] = {}
        """Editor ranges of character spans asked for (see ``ranges.ref_range``)."""
        self._answers: tuple[object, dict[object, Any]] = ((), {})

    def answers(self, state: object) -> dict[object, Any]:
        """Answers computed for this text while the server's ``state`` is as given."""
        if self._answers[0] != state:
            self._answers = (state, {})
        return self._answers[1]


def is_open(ls: ChunkServer, uri: str) -> bool:
    """Whether the editor has the document open (pygls keys open documents
    by their unquoted URI: ``my%20notes.md`` is open as ``my notes.md``)."""
    return unquote(uri) in ls.workspace.text_documents


def locate(ls: ChunkServer, uri: str) -> tuple[str | None, FolderInfo | None, str | None]:
    """A URI's path, folder and folder-relative path (memoised until the folders change)."""
    version = ls.queries.folders_version
    known = ls.located.get(uri)
    if known is not None and known[0] == version:
        return known[1]
    path = path_of(uri)
    folder: FolderInfo | None = None
    rel_path: str | None = None
    if path is not None:
        found = ls.queries.folder_of(path)
        if found is not None:
            folder, rel_path = found
        elif not ls.queries.folders:
            rel_path = Path(path).name  # single-file mode
    if len(ls.located) > LOCATED_KEPT:
        ls.located.clear()
    ls.located[uri] = (version, (path, folder, rel_path))
    return path, folder, rel_path


def get_document(ls: ChunkServer, uri: str) -> DocumentContext | None:
    """The context of an open document, or of a file on disk under a workspace folder."""
    path, folder, rel_path = locate(ls, uri)
    cached = ls.contexts.get(uri)
    if cached is not None:
        doc = ls.workspace.text_documents.get(unquote(uri))
        if (
            doc is not None
            and doc.version is not None
            and cached.version == doc.version
            and cached.folder is folder
            and cached.rel_path == rel_path
            and cached.lines.encoding == ls.encoding
        ):
            return cached
    if uri.startswith("file:") and path is None:
        return None  # a file: URI that is not a path
    try:
        doc = ls.workspace.get_text_document(uri)
    except Exception:  # a bad or foreign URI
        return None
    text: str | None
    if is_open(ls, uri):
        text = doc.source
    elif folder is not None and path is not None and rel_path is not None:
        # not open: read it as a corpus file is read (a regular file under
        # the folder, within the size limit), never /dev/stdin or /dev/zero
        text = read_closed(folder, rel_path, path)
        if text is None:
            return None
    else:
        return None  # not open and outside every workspace folder: not read
    language = effective_language(doc.language_id, path or uri)
    context = DocumentContext(uri, text, language, folder, rel_path, ls.encoding)
    if is_open(ls, uri):
        context.version = doc.version
        ls.contexts[uri] = context
    return context


def get_buffer(ls: ChunkServer, context: DocumentContext) -> Buffer | None:
    """The chunking of a Python or Markdown document's current text."""
    name = context.rel_path.rsplit("/", 1)[-1] if context.rel_path else ""
    if context.rel_path is None or file_type_for(name) is None:
        return None
    doc = ls.workspace.get_text_document(context.uri)
    cached = ls.buffers.get(context.uri)
    if cached is not None and cached.version == doc.version and doc.version is not None:
        return cached
    try:
        chunks = chunk_source(normalize_newlines(context.text), context.rel_path, name)
        buffer = Buffer(doc.version, chunks, None)
    except (ChunkingError, RecursionError, MemoryError) as error:
        reason = error.reason if isinstance(error, ChunkingError) else repr(error)
        buffer = Buffer(doc.version, cached.chunks if cached else [], reason)
    if is_open(ls, context.uri):
        ls.buffers[context.uri] = buffer
    return buffer


def forget(ls: ChunkServer, uri: str) -> None:
    """Drop what was computed from a document's text (it opened anew or closed)."""
    ls.buffers.pop(uri, None)
    ls.contexts.pop(uri, None)


def chunk_at_line(ls: ChunkServer, uri: str, line: int) -> LocatedChunk | None:
    """The chunk of a Python or Markdown document at a 0-based line."""
    context = get_document(ls, uri)
    buffer = get_buffer(ls, context) if context is not None else None
    if buffer is None:
        return None
    return next((c for c in buffer.chunks if c.start_line <= line + 1 <= c.end_line), None)


def loose_folder(context: DocumentContext) -> FolderInfo | None:
    """In single-file mode, a folder (not indexed) for a document's directory."""
    path = path_of(context.uri)
    if path is None or context.folder is not None:
        return None
    return outside_folder(Path(path).parent)


def read_closed(folder: FolderInfo, rel_path: str, path: str) -> str | None:
    """A closed document's text, if a readable UTF-8 file under the folder (symlinks too)."""
    try:
        is_symlink = Path(path).is_symlink()
        source = read_corpus_file(
            folder.root_resolved, rel_path, path, is_symlink, folder.rules.max_file_size
        )
        return source.data.decode("utf-8")
    except (FileSkipped, OSError, UnicodeDecodeError):
        return None


def listed_chunk(ls: ChunkServer, chunk_id: str, uri: str, line: int) -> IndexedChunk | None:
    """The chunk a result listed with this ID, URI and first line (0-based) is,
    by the index's lookup (the line tells chunks of one ID apart)."""
    path = path_of(uri)
    found = ls.queries.folder_of(path) if path is not None else None
    for entry in ls.queries.lookup(chunk_id, found[0] if found else None):
        if chunk_uri(entry) == uri and entry.chunk.start_line == line + 1:
            return entry
    return None
