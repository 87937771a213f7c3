"""A stand-in language server for the benchmark: every request gets the same
hover-sized answer, with no work behind it.

It reads stdin on an asyncio event loop and cuts messages from the bytes in the
read callback, as chunkls does, so that the time it takes over the same pipes,
with the same client, is the floor of what any such server can answer in: the
pipes, the two processes' wake-ups, JSON and the event loop.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys

_LENGTH = re.compile(rb"Content-Length: (\d+)")
_ANSWER = {"contents": {"kind": "markdown", "value": "x" * 600}, "range": None}


class _Echo(asyncio.Protocol):
    def __init__(self, done: asyncio.Future[None]) -> None:
        self.buffer = bytearray()
        self.done = done

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            match = _LENGTH.search(self.buffer[:end])
            length = int(match.group(1)) if match else 0
            if len(self.buffer) < end + 4 + length:
                return
            message = json.loads(bytes(self.buffer[end + 4 : end + 4 + length]))
            del self.buffer[: end + 4 + length]
            if message.get("method") == "exit":
                self.connection_lost(None)
                return
            if "id" in message and "method" in message:
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": _ANSWER})
                sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body.encode())
                sys.stdout.buffer.flush()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def _main() -> None:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    await loop.connect_read_pipe(lambda: _Echo(done), sys.stdin.buffer)
    await done


if __name__ == "__main__":
    asyncio.run(_main())
