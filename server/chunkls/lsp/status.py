"""The ``chunkls/status`` notification's payload, made from the index."""

from __future__ import annotations

from chunkls.index.queries import Queries
from chunkls.lsp.contract import Status


def status_of(index: Queries, indexing: bool) -> Status:
    """Chunk, file and skipped-file counts, and whether the workspace is being
    indexed (the notification and its name are defined in ``lsp.contract``)."""
    return Status(
        indexing=indexing,
        chunks=len(index),
        files=index.file_count(),
        skipped=sum(1 for _ in index.skipped()),
    )
