"""A minimal LSP client over stdio for timing the real server.

Latency is taken from just before a request is written to when its response
has been read by the reader thread, so the client's own thread scheduling
does not inflate it.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO


class Response:
    def __init__(self) -> None:
        self.event = threading.Event()
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
        self.lock = threading.Lock()
        self.next_id = 0
        self.waiting: dict[int, Response] = {}
        self.notifications: list[tuple[float, dict[str, Any]]] = []
        self.notified = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        with self.lock:
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(stream.read(length))
            now = time.perf_counter()
            if "id" in message and "method" in message:
                self._answer(message)
            elif "id" in message:
                response = self.waiting.pop(message["id"], None)
                if response is not None:
                    response.received = now
                    response.message = message
                    response.event.set()
            else:
                with self.notified:
                    self.notifications.append((now, message))
                    self.notified.notify_all()

    def _answer(self, message: dict[str, Any]) -> None:
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message.get("params", {}).get("items", [])]
        self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def send(self, method: str, params: Any) -> Response:
        with self.lock:
            self.next_id += 1
            number = self.next_id
        response = Response()
        self.waiting[number] = response
        response.sent = time.perf_counter()
        self._write({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        return response

    def request(self, method: str, params: Any, timeout: float = 120) -> Response:
        response = self.send(method, params)
        if not response.event.wait(timeout):
            raise TimeoutError(f"{method}: no answer in {timeout} s")
        return response

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, predicate: Any, timeout: float) -> dict[str, Any]:
        """The first notification (new or past) that ``predicate`` accepts."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self.notified:
            while True:
                for _, message in self.notifications[seen:]:
                    if predicate(message):
                        return message
                seen = len(self.notifications)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("notification did not come")
                self.notified.wait(left)

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            self.process.wait(timeout=30)
        except Exception:
            self.process.kill()
