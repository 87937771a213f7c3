"""Calls in flight when the client closes stdin still get their answers: the SDK would cancel
them, so the end is held back (``DRAIN_LIMIT`` at most). A cancellation is not passed on (it
races the call and can end the session: modelcontextprotocol/python-sdk#2416, #2610)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, TextIO

from chunkls.runtime.early_reader import parse

logger = logging.getLogger("chunkls")

DRAIN_LIMIT = 60.0
"""Seconds the end of stdin waits at most for the calls in flight."""


def _request_id(value: Any) -> bool:
    """Whether ``value`` is an id the SDK answers under (a string or an integer)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


class InFlight:
    """The ids of the requests read and not yet answered (thread-safe)."""

    def __init__(self) -> None:
        self._ids: set[str | int] = set()
        self._changed = threading.Condition()

    def __len__(self) -> int:
        with self._changed:
            return len(self._ids)

    def read(self, line: str) -> bool:
        """Note a message the client sent; whether it is a cancellation."""
        message = parse(line)
        if message is None or message.get("jsonrpc") != "2.0":
            return False
        method = message.get("method")
        if not isinstance(method, str):
            return False  # an answer to the server's own request
        if "id" in message:
            if _request_id(message["id"]):
                with self._changed:
                    self._ids.add(message["id"])
        elif method == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and _request_id(params.get("requestId")):
                self._done(params["requestId"])
            return True
        return False

    def written(self, line: str) -> None:
        """Note a message the server sent: an answer ends its request."""
        message = parse(line)
        if message is not None and "method" not in message and _request_id(message.get("id")):
            self._done(message["id"])

    def _done(self, request_id: str | int) -> None:
        with self._changed:
            self._ids.discard(request_id)
            self._changed.notify_all()

    def wait(self, limit: float) -> bool:
        """Wait until nothing is in flight, ``limit`` seconds at most; whether so."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._ids, limit)


class DrainingInput:
    """stdin as the SDK reads it, its end held back while requests are in flight."""

    def __init__(self, lines: TextIO, inflight: InFlight, limit: float = DRAIN_LIMIT) -> None:
        self.lines = lines
        self.inflight = inflight
        self.limit = limit

    def readline(self) -> str:
        line = self.lines.readline()
        # noted before the SDK has it: its answer comes after
        while line and self.inflight.read(line):
            logger.info("chunkls mcp: a call was cancelled: it is answered all the same")
            line = self.lines.readline()
        if line:
            return line
        if len(self.inflight):
            logger.info("chunkls mcp: stdin closed: answering the calls in flight first")
            if not self.inflight.wait(self.limit):
                logger.warning(
                    "chunkls mcp: %d request(s) still unanswered %g s after stdin closed",
                    len(self.inflight),
                    self.limit,
                )
        return line


class TrackingOutput:
    """stdout as the SDK writes it: an answer counts as sent once flushed (once the client
    has closed its end: dropped, and ``gone`` called once)."""

    def __init__(self, out: TextIO, inflight: InFlight, gone: Callable[[], None]) -> None:
        self.out = out
        self.inflight = inflight
        self.gone = gone
        self.closed = False
        self._unflushed: list[str] = []

    def write(self, text: str) -> int:
        self._unflushed.append(text)
        self._unless_gone(self.out.write, text)
        return len(text)

    def flush(self) -> None:
        self._unless_gone(self.out.flush)
        lines, self._unflushed = self._unflushed, []
        for line in lines:
            self.inflight.written(line)

    def _unless_gone(self, action: Callable[..., object], *args: str) -> None:
        """Write or flush, unless the client has gone; an ``OSError`` says it just went."""
        if self.closed:
            return
        try:
            action(*args)
        except OSError:
            self.closed = True
            logger.info("chunkls mcp: the client closed stdout: answers have nowhere to go")
            self.gone()
