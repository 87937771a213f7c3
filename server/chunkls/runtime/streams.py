"""An output stream whose reader has gone (``chunkls chunks | head -1``, an MCP
client that closed its end)."""

from __future__ import annotations

import os

from chunkls.runtime.gc_budget import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO, Any


def discard_output(stream: IO[Any]) -> None:
    """Point a stream whose reader has gone at /dev/null, so neither the final flush nor a
    later write fails again (the recipe in Python's ``signal`` documentation)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
