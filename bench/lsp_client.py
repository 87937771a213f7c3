"""A minimal LSP client over stdio for timing the real server.

One thread: a request is written, then the server's output is read until its
response comes, answering the server's own requests and keeping its
notifications on the way (an editor's client is an event loop, not a thread
waiting on another). Latency is taken from just before a request is written
to just after its response is parsed.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any, BinaryIO


class Response:
    def __init__(self) -> None:
        self.sent = 0.0
        self.received = 0.0
        self.message: dict[str, Any] = {}

    @property
    def ms(self) -> float:
        return (self.received - self.sent) * 1000


class Client:
    """Starts ``command`` and speaks JSON-RPC to it; answers server requests."""

    def __init__(
        self,
        command: list[str],
        cwd: Path,
        stderr: BinaryIO | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        self._fd = self.process.stdout.fileno()
        self._buffer = bytearray()
        self.next_id = 0
        self.notifications: list[tuple[float, dict[str, Any]]] = []

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _next_message(self, deadline: float) -> dict[str, Any] | None:
        """The next message from the server, or ``None`` at the deadline."""
        buffer = self._buffer
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end >= 0:
                length = 0
                for line in bytes(buffer[:end]).split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if len(buffer) >= end + 4 + length:
                    body = bytes(buffer[end + 4 : end + 4 + length])
                    del buffer[: end + 4 + length]
                    message: dict[str, Any] = json.loads(body)
                    return message
            left = max(0.0, deadline - time.monotonic())  # 0: what has come already
            if not select.select([self._fd], [], [], left)[0]:
                return None
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                raise EOFError("the server closed its output")
            buffer += chunk

    def _take(self, message: dict[str, Any], now: float) -> None:
        """A message that is not the awaited response."""
        if "id" in message and "method" in message:
            result: Any = None
            if message["method"] == "workspace/configuration":
                result = [None for _ in message.get("params", {}).get("items", [])]
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif "method" in message:
            self.notifications.append((now, message))

    def request(self, method: str, params: Any, timeout: float = 120) -> Response:
        self.next_id += 1
        number = self.next_id
        response = Response()
        deadline = time.monotonic() + timeout
        response.sent = time.perf_counter()
        self._write({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        while True:
            message = self._next_message(deadline)
            now = time.perf_counter()
            if message is None:
                raise TimeoutError(f"{method}: no answer in {timeout} s")
            if message.get("id") == number and "method" not in message:
                response.received = now
                response.message = message
                return response
            self._take(message, now)

    def send(self, method: str, params: Any) -> int:
        """Write a request without waiting for its response (``collect`` takes it)."""
        self.next_id += 1
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def collect(self, numbers: set[int], timeout: float = 120) -> dict[int, Response]:
        """The responses to requests written with ``send``, as they come (each
        stamped with when it was read)."""
        found: dict[int, Response] = {}
        deadline = time.monotonic() + timeout
        while set(found) != numbers:
            message = self._next_message(deadline)
            now = time.perf_counter()
            if message is None:
                raise TimeoutError(f"no answer to {sorted(numbers - set(found))} in {timeout} s")
            if message.get("id") in numbers and "method" not in message:
                response = Response()
                response.received = now
                response.message = message
                found[message["id"]] = response
            else:
                self._take(message, now)
        return found

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, predicate: Any, timeout: float) -> dict[str, Any]:
        """The first notification (new or past) that ``predicate`` accepts."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for _, message in self.notifications[seen:]:
                if predicate(message):
                    return message
            seen = len(self.notifications)
            came = self._next_message(deadline)
            if came is None:
                raise TimeoutError("notification did not come")
            self._take(came, time.perf_counter())

    def wait_indexed(self, timeout: float) -> dict[str, Any]:
        """The first ``chunkls/status`` saying the index is built and has chunks."""
        return self.wait_for(
            lambda m: (
                m.get("method") == "chunkls/status"
                and not m["params"].get("indexing")
                and m["params"].get("chunks", 0) > 0
            ),
            timeout,
        )

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            self.process.wait(timeout=30)
        except Exception:
            self.process.kill()
