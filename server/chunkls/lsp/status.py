"""The ``chunkls/status`` notification: what a status bar shows."""

from __future__ import annotations

from typing import Any

from chunkls.index import WorkspaceIndex

STATUS_NOTIFICATION = "chunkls/status"
"""Custom notification: ``{indexing, chunks, files, skipped}`` for status bars."""


def status_of(index: WorkspaceIndex, indexing: bool) -> dict[str, Any]:
    """The notification's parameters: chunk, file and skipped-file counts, and
    whether the workspace is being indexed."""
    return {
        "indexing": indexing,
        "chunks": len(index),
        "files": index.file_count(),
        "skipped": sum(1 for _ in index.skipped()),
    }
