"""The language server's log, each record to one place: from ``initialize`` to ``shutdown``
the client alone (``window/logMessage``), else (and from other threads) stderr."""

from __future__ import annotations

import logging
import re
import sys
import threading
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from chunkls.lsp.server import ChunkServer

STDERR_FORMAT = "chunkls %(levelname)s: %(message)s"
"""How a record reads on stderr (a client that shows stderr parses the level)."""

MESSAGE_TYPES = {
    logging.CRITICAL: types.MessageType.Error,
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
    logging.DEBUG: types.MessageType.Debug,
}
"""A record's level -> the ``window/logMessage`` type it is sent as."""

ROUTINE = re.compile(
    r"Cancel notification for unknown message id"
    r"|Received response to unknown message id"
    r"|Ignoring notification for unknown method"
)
"""Notes of a race of the protocol, not a user's concern: logged as debug."""


class ClientLog(logging.Handler):
    """Sends each record to the client while it listens, else to stderr."""

    def __init__(self, server: ChunkServer) -> None:
        super().__init__()
        self.server = server
        self.stderr = logging.StreamHandler(sys.stderr)
        self.stderr.setFormatter(logging.Formatter(STDERR_FORMAT))
        self.loop_thread: int | None = None
        """The event loop's thread, once the client listens (only it may write)."""
        self._sending = threading.local()

    def listen(self) -> None:
        """The client listens from now on (its ``initialize`` request came)."""
        self.loop_thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno > logging.DEBUG and ROUTINE.match(record.getMessage()):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        if (
            self.loop_thread != threading.get_ident()
            or self.server.shutting_down
            or getattr(self._sending, "now", False)
        ):
            self.stderr.emit(record)
            return
        self._sending.now = True  # a failure to send, logged, goes to stderr
        try:
            level = MESSAGE_TYPES.get(record.levelno, types.MessageType.Log)
            message = self.format(record)
            self.server.window_log_message(types.LogMessageParams(type=level, message=message))
        except Exception:  # the pipe is gone: said where it can be
            self.stderr.emit(record)
        finally:
            self._sending.now = False


def log_to(server: ChunkServer) -> ClientLog:
    """Route log records through ``ClientLog`` (chunkls's from INFO, libraries' WARNING)."""
    handler = ClientLog(server)
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("chunkls").setLevel(logging.INFO)
    return handler
