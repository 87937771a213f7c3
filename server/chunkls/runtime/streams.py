"""An output stream whose reader has gone (``chunkls chunks | head -1``, an MCP
client that closed its end)."""

from __future__ import annotations

import os

from chunkls.runtime.gc_budget import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any


def discard_output(stream: IO[Any]) -> None:
    """Point a stream whose reader has gone at /dev/null, so the interpreter's
    final flush of what is still buffered does not fail again, and nothing
    written later fails either (the recipe in Python's ``signal``
    documentation). A stream without a file descriptor is left alone."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
