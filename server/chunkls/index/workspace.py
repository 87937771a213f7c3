"""The workspace index: the chunk store with the jobs around it composed in.

``WorkspaceIndex`` is the store (its lookups are the query API), plus bulk
indexing (``chunkls.index.bulk``), files re-read from disk and the recovery of
lost chunk texts (``chunkls.index.refresh``), and ID suggestions
(``chunkls.index.suggest``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from chunkls.chunking import CorpusRules
from chunkls.chunking.corpus import CorpusFile
from chunkls.index.bulk import BulkIndexer, Progress
from chunkls.index.folder import Folder
from chunkls.index.refresh import index_one, recover_texts, refresh
from chunkls.index.store import ChunkStore
from chunkls.index.suggest import Suggestions


class WorkspaceIndex(ChunkStore):
    """All chunks of the workspace folders, searchable and resolvable by ID."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        workers: int | None = None,
        elsewhere_from: int | None = None,
        long_lived: bool = False,
        on_texts_missing: Callable[[Folder, str], None] | None = None,
    ) -> None:
        super().__init__(cache_dir)
        self.on_texts_missing = on_texts_missing
        self.bulk = BulkIndexer(self, workers, elsewhere_from, long_lived)
        """Indexes whole folders (workers, a separate process, the cache)."""
        self.suggestions = Suggestions(self)
        """The IDs closest to one that does not resolve."""

    def index_folder(self, folder: Folder, progress: Progress | None = None) -> float:
        """Chunk a whole folder from disk (replacing what it had); returns seconds."""
        return self.bulk.index_folder(folder, progress)

    def iter_index_folder(self, folder: Folder) -> Iterator[tuple[int, int]]:
        """Index a whole folder step by step, yielding (files done, files in all)."""
        return self.bulk.iter_index_folder(folder)

    def refresh(self, folder: Folder, rel_paths: Iterable[str]) -> list[str]:
        """Re-read paths from disk into the index; returns the root-relative paths
        of the files whose entry changed (see ``chunkls.index.refresh``)."""
        return refresh(self, folder, rel_paths)

    def index_one(self, folder: Folder, file: CorpusFile) -> None:
        """Chunk one corpus file from disk into the index, or record why not."""
        index_one(self, folder, file)

    def recover_texts(self) -> list[str]:
        """Read again the files whose chunk texts a lookup found gone from the
        cache (``texts_missing``); returns their paths."""
        return recover_texts(self)

    def suggest(self, chunk_id: str, limit: int = 3) -> list[str]:
        """The existing IDs closest to one that does not resolve, best first."""
        return self.suggestions.suggest(chunk_id, limit)

    def close(self) -> None:
        """Stop any separate indexing process; save and close every folder's cache."""
        self.bulk.stop()
        super().close()


def build_index(
    roots: Iterable[Path],
    base_rules: CorpusRules | None = None,
    progress: Progress | None = None,
    cache_dir: Path | None = None,
    workers: int | None = None,
) -> WorkspaceIndex:
    """Index folders (what the CLI does): from scratch, or only what changed since
    the cache in ``cache_dir`` was written."""
    index = WorkspaceIndex(cache_dir, workers)
    for root in roots:
        index.index_folder(index.add_folder(root, base_rules), progress)
    index.close()
    return index
