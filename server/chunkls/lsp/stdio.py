"""Serving over stdio with stdin read on the event loop.

pygls reads stdin in a worker thread: every message costs three thread hops
(header, blank line, body) before it is handled, most of a hover's latency.
Here stdin is a pipe registered with the event loop, so a message is handled
in the same loop turn it arrives in. Where that is impossible (stdin is a
regular file, or Windows, whose event loop cannot watch a console or an
anonymous pipe), pygls's threaded reader is used as before.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import TYPE_CHECKING, BinaryIO

from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger("chunkls")

LINE_LIMIT = 1 << 20
"""Longest header line buffered (a longer one is garbage and is skipped)."""


class PipeReader:
    """The reader ``run_async`` expects, over an ``asyncio.StreamReader``."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        """One header line; a line past ``LINE_LIMIT`` comes back as an empty
        header (ignored), and end of input as ``b""``."""
        try:
            return await self.stream.readline()
        except ValueError:  # the limit was overrun: that much was dropped
            logger.warning("skipped a header line longer than %d bytes", LINE_LIMIT)
            return b"X-Skipped: \r\n"

    async def readexactly(self, n: int) -> bytes:
        """A body of ``n`` bytes (fewer at end of input, as a file read gives)."""
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError as error:
            return error.partial


async def _reader(stdin: BinaryIO, server: LanguageServer) -> PipeReader | StdinAsyncReader:
    if sys.platform != "win32":
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
            return PipeReader(stream)
        except (OSError, ValueError) as error:  # a regular file, a closed descriptor
            logger.info("reading stdin in a thread (%s)", error)
    return StdinAsyncReader(stdin, server.thread_pool)


def serve_stdio(
    server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    """Serve until ``exit`` or end of input (what ``LanguageServer.start_io`` does)."""
    stop = threading.Event()
    server._stop_event = stop  # so that ``server.shutdown()`` stops the loop
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

    async def main() -> None:
        reader = await _reader(stdin or sys.stdin.buffer, server)
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
