"""Serving over stdio with stdin read on the event loop.

pygls reads stdin in a worker thread: every message costs three thread hops
(header, blank line, body) before it is handled, most of a hover's latency.
Here stdin is a pipe registered with the event loop and ``Framing`` cuts
messages out of the bytes as they arrive, handling each in the same callback
(no stream reader, no task to wake: 0.03-0.04 ms of a hover's round trip here).
Header lines are read as pygls reads them (``Content-Length: N`` then a blank
line; other lines are ignored). Where a pipe cannot be watched (stdin is a regular
file, or Windows, whose event loop cannot watch a console or an anonymous
pipe), pygls's threaded reader is used.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger("chunkls")

LINE_LIMIT = 1 << 20
"""Longest header line buffered (a longer one is garbage and is skipped)."""


_CONTENT_LENGTH = re.compile(rb"Content-Length: (\d+)\r\n")


class Framing(asyncio.Protocol):
    """LSP base-protocol framing over a pipe: each complete message is parsed
    and handed to the server's protocol as soon as its last byte arrives."""

    def __init__(self, server: LanguageServer, stop: threading.Event) -> None:
        self.server = server
        self.stop = stop
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

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

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
                        at = len(buffer)
                    break
                start, at = at, newline + 1
                if self.skipping:
                    self.skipping = False  # the end of an overlong line
                    continue
                if at - start > LINE_LIMIT:
                    self.skip_line()
                    self.skipping = False
                    continue
                line = bytes(buffer[start:at])
                if not self.length:
                    match = _CONTENT_LENGTH.fullmatch(line)
                    if match:
                        self.length = int(match.group(1))
                if self.length and not line.strip():
                    self.in_body = True
        finally:
            del buffer[:at]

    def skip_line(self) -> None:
        if not self.skipping:
            logger.warning("skipped a header line longer than %d bytes", LINE_LIMIT)
        self.skipping = True

    def handle(self, body: bytes) -> None:
        """Parse and handle one message body (as pygls's ``run_async`` does)."""
        protocol: Any = self.server.protocol
        try:
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
        self.finish()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.finish()

    def finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)
        if self.transport is not None:
            self.transport.close()


def serve_stdio(
    server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    """Serve until ``exit`` or end of input (what ``LanguageServer.start_io`` does)."""
    stop = threading.Event()
    server._stop_event = stop  # so that ``server.shutdown()`` stops the loop
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

    async def main() -> None:
        source = stdin or sys.stdin.buffer
        if sys.platform != "win32":
            loop = asyncio.get_running_loop()
            try:
                _, framing = await loop.connect_read_pipe(lambda: Framing(server, stop), source)
            except (OSError, ValueError) as error:  # a regular file, a closed descriptor
                logger.info("reading stdin in a thread (%s)", error)
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
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
