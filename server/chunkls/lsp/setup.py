"""Start-up: a server with every feature registered, served over stdio or TCP."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from chunkls.lsp import (
    commands,
    completion,
    diagnostics,
    lenses,
    navigation,
    references,
    symbols,
    sync,
)
from chunkls.lsp.logs import log_to
from chunkls.lsp.server import ChunkServer
from chunkls.lsp.stdio import serve_stdio

if TYPE_CHECKING:
    from chunkls.runtime.early_reader import EarlyReader

logger = logging.getLogger("chunkls")

FEATURES = (sync, lenses, navigation, symbols, commands, diagnostics, completion, references)
"""The feature modules, registered in this order (each has ``register(server)``)."""


def create_server() -> ChunkServer:
    """A server with every feature registered."""
    server = ChunkServer()
    for feature in FEATURES:
        feature.register(server)
    return server


def run(tcp: str | None = None, early: EarlyReader | None = None) -> int:
    """Serve LSP over stdio, or over TCP (``HOST:PORT``) for debugging.
    ``early``: what read stdin while the server was loading (``chunkls.lsp.early``)."""
    server = create_server()
    server.logs = log_to(server)
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            logger.error("--tcp expects HOST:PORT, got %r", tcp)
            return 2
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        serve_stdio(server, early=early)
    return 0
