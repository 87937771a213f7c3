"""The ``chunkls`` logger, with ``logging`` imported on first use: a warm CLI
question that has nothing to log does without it (about 8 ms of its start)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging


def logger() -> logging.Logger:
    """The logger every module of the core writes to."""
    import logging

    return logging.getLogger("chunkls")
