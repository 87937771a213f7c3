"""Serving over stdio with stdin read on the event loop (pygls's worker thread costs three
hops per message; a regular file or Windows still uses it). A line that only *ends* with
``Content-Length: N`` starts a message too: a body counted short loses one message, not all."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
import sys
import threading
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from chunkls.runtime.early_reader import EarlyReader, Prelude

logger = logging.getLogger("chunkls")

LINE_LIMIT = 1 << 20
"""Longest header line buffered (a longer one is garbage and is skipped)."""


_CONTENT_LENGTH = re.compile(rb"content-length:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)
"""A ``Content-Length`` header at the end of a line (searched in its last ``TAIL`` bytes)."""
_HEADER = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+:")
"""The start of any other header line (``Name:``)."""
TAIL = 64
"""Bytes at the end of a line where a ``Content-Length`` header is looked for."""


class Framing(asyncio.Protocol):
    """LSP framing over a pipe: each message handed on as soon as its last byte arrives."""

    def __init__(
        self, server: LanguageServer, stop: threading.Event, prelude: Prelude | None = None
    ) -> None:
        self.server = server
        self.prelude = prelude
        """Messages read before the server was ready, handled before anything else."""
        self.stop = stop
        self.whole = bool(getattr(server.protocol, "types_whole_messages", False))
        """The protocol types whole messages itself: bodies are parsed without a hook."""
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Resolved at end of input, on ``exit`` or when the client is gone."""
        self.transport: asyncio.BaseTransport | None = None
        self.buffer = bytearray()
        self.length = 0
        """The body length read from the current headers (0: none yet)."""
        self.in_body = False
        """Headers ended: waiting for ``length`` bytes of body."""
        self.skipping = False
        """Dropping the rest of an overlong header line."""
        self.skipped = 0
        """Bytes dropped since the last message (reported once back in step)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.replay()

    def replay(self) -> None:
        """Handle the prelude, before the pipe is read: the messages keep their order."""
        prelude, self.prelude = self.prelude, None
        if prelude is not None:
            for body in prelude.bodies:
                if self.done.done():
                    return
                self.handle(body)
            if prelude.rest:
                self.data_received(prelude.rest)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        at = 0
        try:
            while not self.done.done():
                if self.in_body:
                    end = at + self.length
                    if len(buffer) < end:
                        break
                    body = bytes(buffer[at:end])
                    at = end
                    self.in_body = False
                    self.length = 0
                    self.handle(body)
                    continue
                newline = buffer.find(b"\n", at)
                if newline < 0:
                    if len(buffer) - at > LINE_LIMIT:
                        self.skip_line()
                        at = len(buffer) - TAIL  # where a header may have begun
                    break
                start, at = at, newline + 1
                whole = not self.skipping and at - start <= LINE_LIMIT
                if not whole:  # the end of an overlong line: only its tail is read
                    self.skip_line()
                    self.skipping = False
                    start = max(start, at - TAIL)
                self.header(bytes(buffer[start:at]), whole)
        finally:
            del buffer[:at]

    def header(self, line: bytes, whole: bool = True) -> None:
        """Read one header line (``whole``: not the tail of an overlong line)."""
        tail = line[-TAIL:]
        match = _CONTENT_LENGTH.search(tail)
        if match:  # anything before it on the line is the rest of a bad message
            self.length = int(match.group(1))
            if whole:
                self.skipped += len(line) - len(tail) + match.start()
        elif self.length and not line.strip():
            self.in_body = True
            if self.skipped:
                self.report_skipped()
        elif whole and not _HEADER.match(line):  # not a header: garbage
            self.skipped += len(line)

    def skip_line(self) -> None:
        if not self.skipping:
            logger.warning("skipped a header line longer than %d bytes", LINE_LIMIT)
        self.skipping = True

    def report_skipped(self, more: int = 0) -> None:
        """Warn, once per incident, that input which was no message was dropped."""
        logger.warning(
            "skipped %d bytes of input that were not a message header"
            " (a message's Content-Length that did not count its bytes?)",
            self.skipped + more,
        )
        self.skipped = 0

    def handle(self, body: bytes) -> None:
        """Parse and handle one message body (as pygls's ``run_async`` does)."""
        protocol: Any = self.server.protocol
        try:
            if self.whole:
                message = json.loads(body)  # the shared decoder: no hook to call per object
            else:
                message = json.loads(body, object_hook=protocol.structure_message)
            protocol.handle_message(message)
        except BrokenPipeError:
            logger.error("the connection to the client is lost; stopping")
            self.finish()
            return
        except Exception as error:
            logger.exception("Unable to handle message")
            self.server.report_server_error(error, JsonRpcException)
        if self.stop.is_set():  # ``exit``
            self.finish()

    def eof_received(self) -> bool | None:
        if self.in_body and self.buffer:  # a body cut short, as pygls hands it on
            body, self.buffer = bytes(self.buffer), bytearray()
            self.in_body = False
            self.handle(body)
        elif self.skipped or self.buffer.strip():
            self.report_skipped(len(self.buffer))
        self.finish()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.finish()

    def finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)
        if self.transport is not None:
            self.transport.close()


def serve_stdio(server: LanguageServer, early: EarlyReader | None = None) -> None:
    """Serve until ``exit`` or end of input, first taking over what ``early`` read. ``exit``
    without ``shutdown`` ends with code 1 (``start_io`` swallows it; raised again here)."""
    code: int | str | None = None
    stop = threading.Event()
    writer: Any = StdoutWriter(sys.stdout.buffer)
    prelude = None
    if early is not None:
        from chunkls.lsp.early import early_summary, take_over

        prelude, writer = take_over(early, writer)
    server.protocol.set_writer(writer)
    if prelude is not None and prelude.answered:
        message = early_summary(prelude)
        logger.info(message)
        server.window_log_message(types.LogMessageParams(types.MessageType.Info, message))

    async def main() -> None:
        source = sys.stdin.buffer
        if sys.platform != "win32":
            loop = asyncio.get_running_loop()
            try:
                mode = os.fstat(source.fileno()).st_mode
                if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
                    # a regular file, or a device such as /dev/null: asyncio accepts a
                    # character device, then epoll refuses it later, in a callback,
                    # and the server would wait for input forever
                    raise ValueError("not a pipe or a socket")
                _, framing = await loop.connect_read_pipe(
                    lambda: Framing(server, stop, prelude), source
                )
            except (OSError, ValueError) as error:  # the above, a closed descriptor
                logger.info("reading stdin in a thread (%s)", error)
                if prelude is not None:  # early reading needs a pipe: not met here
                    Framing(server, stop, prelude).replay()
            else:
                await framing.done
                return
        reader = StdinAsyncReader(source, server.thread_pool)
        await run_async(
            stop_event=stop,
            reader=reader,
            protocol=server.protocol,
            logger=logger,
            error_handler=server.report_server_error,
        )

    try:
        asyncio.run(main())
    except BrokenPipeError:
        logger.error("the connection to the client is lost; stopping")
    except KeyboardInterrupt:
        pass
    except SystemExit as stop:  # ``exit``
        code = stop.code
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
    if code:
        raise SystemExit(code)
