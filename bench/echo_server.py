"""A stand-in language server for the benchmark: every request gets the same
hover-sized answer, with no work behind it.

It reads stdin with chunkls's own ``Framing`` (on an asyncio event loop, messages
cut from the bytes in the read callback), so that the time it takes over the same
pipes, with the same client, is the floor of what chunkls can answer in: the pipes,
the two processes' wake-ups, JSON and the event loop.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from typing import Any

from chunkls.lsp.stdio import Framing

_ANSWER = {"contents": {"kind": "markdown", "value": "x" * 600}, "range": None}


class _Echo:
    """What ``Framing`` needs of a server: a protocol that handles messages."""

    def __init__(self, stop: threading.Event) -> None:
        self.protocol = self
        self.stop = stop

    def structure_message(self, data: Any) -> Any:
        return data

    def handle_message(self, message: dict[str, Any]) -> None:
        if message.get("method") == "exit":
            self.stop.set()
        elif "id" in message and "method" in message:
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": _ANSWER})
            sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body.encode())
            sys.stdout.buffer.flush()

    def report_server_error(self, error: Exception, kind: Any) -> None:
        print(f"echo server: {error!r}", file=sys.stderr)


async def _main() -> None:
    stop = threading.Event()
    loop = asyncio.get_running_loop()
    _, framing = await loop.connect_read_pipe(
        lambda: Framing(_Echo(stop), stop),  # type: ignore[arg-type]
        sys.stdin.buffer,
    )
    await framing.done


if __name__ == "__main__":
    asyncio.run(_main())
