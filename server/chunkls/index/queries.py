"""The query API: every question a front door asks of the index, and nothing
that changes it.

``Queries`` has one implementation, ``chunkls.index.store.ChunkStore``, which
front doors see through ``read_view``: its questions and no write method. A
question only reads (no source file, no chunking, no cache write); the session's
write step (``Session.catch_up``) comes before it, and again when ``incomplete``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from chunkls.chunking.located_chunk import LocatedChunk
    from chunkls.ids.grammar import ChunkRef
    from chunkls.index.browse import Page, Place
    from chunkls.index.citations import Citation, Problem
    from chunkls.index.folder import FolderInfo, FoundChunk, IndexedChunk, ListedChunk
    from chunkls.index.replacement import Replacement
    from chunkls.search.scorer import Hit, Part


class Queries(Protocol):
    """What the index answers (reading only)."""

    @property
    def folders(self) -> Sequence[FolderInfo]:
        """The workspace folders, in order (their facts)."""

    @property
    def version(self) -> int:
        """Changes whenever a file's chunks change (memoised answers check it)."""

    @property
    def folders_version(self) -> int:
        """Changes whenever a folder is added or removed."""

    def __len__(self) -> int:
        """How many chunks are searchable."""

    @property
    def incomplete(self) -> bool:
        """Whether an answer since the last write step missed something it should have had."""

    # -- where things are ------------------------------------------------------------

    def folder_of(self, path: str | Path) -> tuple[FolderInfo, str] | None:
        """The innermost folder containing an absolute path, and the relative path."""

    def file_count(self) -> int:
        """How many files have chunks."""

    def file_paths(self) -> Iterator[tuple[FolderInfo, str]]:
        """Every file with chunks: (folder, root-relative path), in corpus order."""

    def sources(self, source_path: str) -> list[tuple[FolderInfo, str]]:
        """The files whose chunks have this ``source_path``: (folder, root-relative
        path), folders in order."""

    def skipped(self) -> Iterator[tuple[FolderInfo, str, str]]:
        """Every skipped file: (folder, root-relative path, reason), by path."""

    def skip_reason(self, rel_path: str, folder: FolderInfo | None = None) -> str | None:
        """Why a root-relative path of some folder (or of ``folder``) could not be
        chunked, if it was not."""

    # -- resolve and look up -----------------------------------------------------------

    def lookup(self, chunk_id: str, prefer: FolderInfo | None = None) -> list[IndexedChunk]:
        """Chunks with exactly this ID: in ``prefer`` if it has any, else in any folder.
        An ID whose path starts with ``/`` is an absolute path: the chunks of the
        root-relative ID in the folders whose root holds it (none outside them)."""

    def resolve_first(
        self, candidate_ids: Iterable[str], prefer: FolderInfo | None = None
    ) -> list[IndexedChunk]:
        """The chunks of the first candidate ID that resolves (empty if none does)."""

    def has_id(self, chunk_id: str) -> bool:
        """Whether any folder has a chunk with this ID (no chunk is read; an absolute
        path as ``lookup`` reads it)."""

    def written_id(self, ref: ChunkRef) -> tuple[str, bool]:
        """A written ID that resolves to nothing as messages name it (root-relative,
        when written with a workspace root's absolute path), and whether its path
        looks absolute and lies outside every root (written with a leading ``/``,
        under no root, and no file at its root-relative reading)."""

    def suggest(self, chunk_id: str, limit: int = 3) -> list[str]:
        """The existing IDs closest to one that does not resolve, best first."""

    # -- outline ---------------------------------------------------------------------

    def file_chunks(self, folder: FolderInfo, rel_path: str) -> tuple[LocatedChunk, ...]:
        """One file's chunks, in order (its outline; empty when it has none)."""

    def chunk_at(self, folder: FolderInfo, rel_path: str, line: int) -> LocatedChunk | None:
        """The indexed chunk of a file at a 1-based line."""

    def chunks_of_source(
        self, source_path: str, prefer: FolderInfo | None = None
    ) -> list[LocatedChunk]:
        """The chunks whose ``source_path`` is this one, ``prefer``'s first, one per
        chunk ID, in file order."""

    def chunks(self) -> Iterator[IndexedChunk]:
        """Every chunk in corpus order (folders in order, files by path)."""

    def chunk_ids(self) -> Iterator[str]:
        """Every chunk ID in corpus order (no text is read)."""

    def chunk_page(self, start: Place | None, limit: int, under: Sequence[Path] = ()) -> Page:
        """Up to ``limit`` chunks without their texts from ``start`` on (the
        first page: ``None``): the files under the absolute paths ``under`` first,
        then the rest, each in corpus order; with where the next page starts."""

    def propose_ids(self, typed: str, limit: int) -> tuple[list[str], bool]:
        """Chunk IDs for what was typed (a path prefix, part of a name, an ID's
        start, a mistyped name: ``symbol_search``'s order), best first, at most
        ``limit``; and whether there are more."""

    def source_paths(self) -> set[str]:
        """Every ``source_path`` that has chunks."""

    def source_paths_starting(self, prefix: str) -> list[str]:
        """The distinct ``source_path``s that start with ``prefix``, sorted."""

    # -- search ----------------------------------------------------------------------

    def search_mode(self, requested: str | None = None) -> str:
        """``requested``, else the first folder's configured search mode, else the default."""

    def search(
        self,
        query: str,
        top_k: int = 10,
        mode: str | None = None,
        where: Callable[[str], bool] | None = None,
    ) -> list[Hit[IndexedChunk]]:
        """The best chunks for a query, best first, ties in corpus order; ``where``
        filters by ``source_path``. Each hit's ``lines`` are its best part's."""

    def listing(
        self, query: str, top_k: int = 10, mode: str | None = None
    ) -> list[Hit[ListedChunk]]:
        """``search``'s hits without reading a text: each chunk as its stub (its
        first line and where it ends kept beside it), at its whole lines (what a
        palette lists as one types; ``best_lines`` for the one opened)."""

    def best_lines(self, entry: IndexedChunk, query: str, mode: str | None = None) -> Part:
        """The lines of a chunk that answer a query best, and the name of the
        definition they are (if one): the ``lines`` and ``part`` of its ``search`` hit."""

    def symbol_search(
        self, query: str, top_k: int = 10, mode: str | None = None, parts: bool = True
    ) -> tuple[list[Hit[FoundChunk]], int]:
        """``workspace/symbol``'s order: when ``query`` is one name the symbol
        table has in no way (exactly, as a part, as a beginning), the chunks
        defining the names it fuzzily stands for first, then ``search``'s; at
        most ``top_k``, and how many come first fuzzily. ``parts`` false: a hit's
        best part is found only when its chunk, among the first hits, defines a name
        with a word of the query (the rest are listed as in ``listing``: ``best_lines``,
        for the one chosen)."""

    # -- citations -------------------------------------------------------------------

    def check(
        self,
        text: str,
        language: str,
        folder: FolderInfo | None,
        rel_path: str | None,
        refs: Sequence[ChunkRef] | None = None,
        suggested: dict[str, list[str]] | None = None,
        suggest_for: int | None = None,
    ) -> list[Problem]:
        """The chunk IDs written in a text that resolve to no chunk, with replacements
        (``chunkls.index.citations.check_text``)."""

    def fix_candidates(
        self, chunk_id: str, limit: int = 3, replacement: Replacement | bool | None = True
    ) -> list[str]:
        """Replacement IDs for one that does not resolve, best first: what its
        history says it became first (``replacement``: that answer, when the
        caller has it; ``False``: none looked up)."""

    def citing(self, chunk_id: str) -> list[Citation]:
        """The citations of a chunk ID in the workspace's documents (those scanned)."""

    def cited_files(self) -> list[tuple[FolderInfo, str]]:
        """The workspace's documents that cite chunk IDs (those scanned), by folder and path."""

    def replacement(self, chunk_id: str) -> Replacement | None:
        """What a chunk ID that does not resolve became (moved, renamed, changed or
        deleted, with its evidence), from the text it last named in the folders' git
        history or the index's own history; ``None`` when neither has it or it resolves."""


QUESTIONS = tuple(n for n, v in vars(Queries).items() if callable(v) and not n.startswith("_"))
"""The query API's methods (its properties and ``len`` aside)."""


class _Reader:
    """The store's questions and nothing else: each of ``QUESTIONS`` is the
    store's own method, bound when the view is made (no call in between)."""

    __slots__ = ("_store", *QUESTIONS)

    def __init__(self, store: Queries) -> None:
        self._store = store
        for name in QUESTIONS:
            setattr(self, name, getattr(store, name))

    @property
    def folders(self) -> Sequence[FolderInfo]:
        return self._store.folders

    @property
    def version(self) -> int:
        return self._store.version

    @property
    def folders_version(self) -> int:
        return self._store.folders_version

    @property
    def incomplete(self) -> bool:
        return self._store.incomplete

    def __len__(self) -> int:
        return len(self._store)


def read_view(store: Queries) -> Queries:
    """A view of the store that can only ask (``Session.queries``: the session
    alone holds the store, which writes)."""
    return cast("Queries", _Reader(store))
