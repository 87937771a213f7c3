"""A raw JSON-RPC client for the real server over stdio.

Unlike pytest-lsp's typed client it sends anything: malformed params, unknown
methods, bad ids, garbage bytes. A reader thread parses every frame the server
writes, checks it (Content-Length equal to the body's bytes, JSON, ``"jsonrpc":
"2.0"``), answers the server's own requests like an editor would, and files
responses by id so a test can check that every request got exactly one.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

MISSING: Any = object()
"""Leave ``params`` out of a message."""

STANDARD_CODES = {-32700, -32600, -32601, -32602, -32603, -32800, -32801, -32802, -32803}
"""JSON-RPC and LSP error codes a response may carry (besides -32099..-32000)."""

CAPABILITIES: dict[str, Any] = {
    "workspace": {
        "workspaceFolders": True,
        "configuration": True,
        "didChangeWatchedFiles": {"dynamicRegistration": True},
        "codeLens": {"refreshSupport": True},
        "symbol": {},
        "executeCommand": {},
    },
    "textDocument": {
        "synchronization": {"didSave": True},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "definition": {"linkSupport": False},
        "codeLens": {},
        "documentLink": {"tooltipSupport": True},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
    },
    "window": {"workDoneProgress": True},
    "general": {"positionEncodings": ["utf-16"]},
}
"""An editor's capabilities, like VS Code's in the parts the server looks at."""


class RpcError(Exception):
    """An error response."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


def is_proper_error(error: object) -> bool:
    """A JSON-RPC error object with an integer code in a defined range and a message."""
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return False
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        return False
    return code in STANDARD_CODES or -32099 <= code <= -32000


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


class RawServer:
    """``python -m chunkls serve --stdio`` with a raw JSON-RPC connection."""

    def __init__(
        self,
        stderr_path: Path,
        env: dict[str, str] | None = None,
        args: Iterable[str] = (),
        preexec: Callable[[], None] | None = None,
        command: Iterable[str] = ("-m", "chunkls"),
    ) -> None:
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, *command, "serve", "--stdio", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={**os.environ, **(env or {})},
            preexec_fn=preexec,
        )
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._next_id = 0
        self.responses: dict[Any, list[dict[str, Any]]] = {}
        """Request id -> every response the server sent for it."""
        self.order: list[Any] = []
        """Request ids in the order their responses arrived."""
        self.arrived: dict[Any, float] = {}
        """Request id -> ``time.monotonic()`` when its (first) response arrived."""
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.problems: list[str] = []
        """Frames that broke the protocol (bad header, length, JSON, version)."""
        self.closed = False
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._writer = threading.Thread(target=self._write, daemon=True, name="rpc-writer")
        self._writer.start()
        self._reader = threading.Thread(target=self._read, daemon=True, name="rpc-reader")
        self._reader.start()

    # -- the wire ---------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Queue raw bytes for the server's stdin (written in order by a writer
        thread, so neither the test nor the reader ever blocks on a full pipe)."""
        self._outbox.put(data)

    def _write(self) -> None:
        stream = self.proc.stdin
        assert stream is not None
        while True:
            data = self._outbox.get()
            if data is None:
                return
            try:
                stream.write(data)
                if self._outbox.empty():
                    stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                return

    def drain(self, timeout: float = 60) -> None:
        """Wait until everything queued was written."""
        deadline = time.monotonic() + timeout
        while not self._outbox.empty() and time.monotonic() < deadline:
            time.sleep(0.01)

    def send(self, message: Any) -> None:
        """Frame and send one JSON value."""
        body = json.dumps(message).encode("utf-8")
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if line == b"\r\n":
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    self.problems.append("frame without Content-Length")
                    continue
                body = stream.read(length)
                if len(body) != length:
                    return
                try:
                    message = json.loads(body)
                except ValueError as error:
                    self.problems.append(f"bad JSON body ({error}): {body[:200]!r}")
                    continue
                self._dispatch(message)
        finally:
            with self._cond:
                self.closed = True
                self._cond.notify_all()

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.problems.append(f"not a JSON-RPC 2.0 message: {str(message)[:200]}")
            return
        if "method" in message and "id" in message:
            self.server_requests.append(message)
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": _answer(message)})
            return
        if "method" in message:
            with self._cond:
                self.notifications.append(message)
                self._cond.notify_all()
            return
        if ("result" in message) == ("error" in message):
            self.problems.append(f"response with both or neither result/error: {message}")
        if "error" in message and not is_proper_error(message["error"]):
            self.problems.append(f"improper error object: {message}")
        key = _key(message.get("id"))
        with self._cond:
            self.responses.setdefault(key, []).append(message)
            self.arrived.setdefault(key, time.monotonic())
            self.order.append(key)
            self._cond.notify_all()

    # -- requests -----------------------------------------------------------------

    def new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def request(self, method: str, params: Any = MISSING, id: Any = None) -> Any:
        """Send a request; returns its id (without waiting)."""
        id = self.new_id() if id is None else id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not MISSING:
            message["params"] = params
        self.send(message)
        return id

    def notify(self, method: str, params: Any = MISSING) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not MISSING:
            message["params"] = params
        self.send(message)

    def wait(self, id: Any, timeout: float = 30) -> dict[str, Any]:
        """The (first) response to a request."""
        key = _key(id)
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.responses.get(key):
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise TimeoutError(f"no response to request {id!r}{self.stderr_tail()}")
                self._cond.wait(left)
            return self.responses[key][0]

    def wait_all(self, ids: Iterable[Any], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        for id in ids:
            self.wait(id, max(0.1, deadline - time.monotonic()))

    def call(self, method: str, params: Any = MISSING, timeout: float = 30) -> Any:
        """A request's result (raises ``RpcError`` on an error response)."""
        response = self.wait(self.request(method, params), timeout)
        if "error" in response:
            raise RpcError(response["error"])
        return response.get("result")

    def command(self, name: str, *arguments: Any, timeout: float = 30) -> Any:
        params: dict[str, Any] = {"command": name}
        if arguments:
            params["arguments"] = list(arguments)
        return self.call("workspace/executeCommand", params, timeout)

    # -- a session --------------------------------------------------------------

    def initialize(
        self,
        roots: list[Path],
        options: Any = None,
        capabilities: dict[str, Any] | None = None,
        timeout: float = 30,
    ) -> Any:
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "capabilities": CAPABILITIES if capabilities is None else capabilities,
            "rootUri": file_uri(roots[0]) if roots else None,
            "workspaceFolders": [{"uri": file_uri(r), "name": r.name} for r in roots] or None,
        }
        if options is not None:
            params["initializationOptions"] = options
        result = self.call("initialize", params, timeout)
        self.notify("initialized", {})
        return result

    def wait_indexed(self, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            stats = self.command("chunkls.stats")
            if not stats["indexing"]:
                return stats  # type: ignore[no-any-return]
            if time.monotonic() > deadline:
                raise TimeoutError("still indexing")
            time.sleep(0.02)

    def open(self, path: Path, text: str | None = None, language: str | None = None) -> str:
        uri = file_uri(path)
        language = language or {".py": "python", ".md": "markdown"}.get(path.suffix, "plaintext")
        if text is None:
            text = path.read_bytes().decode("utf-8")
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
        )
        return uri

    def rss_kb(self) -> int:
        """The server's resident memory (VmRSS) in kB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def shutdown(self, timeout: float = 30) -> int:
        """shutdown + exit; returns the exit code."""
        response = self.wait(self.request("shutdown"), timeout)
        assert "error" not in response, response
        self.notify("exit")
        self.drain(timeout)
        code = self.proc.wait(timeout)
        self.close()
        return code

    def close(self) -> None:
        self._outbox.put(None)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._reader.join(5)
        self._writer.join(5)
        self._stderr.close()

    def stderr_text(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_bytes().decode("utf-8", "replace")

    def log_text(self) -> str:
        """The server's log wherever it went: stderr, then ``window/logMessage``
        (each record is in one of them: ``chunkls.lsp.logs``)."""
        sent = [
            m["params"]["message"]
            for m in self.notifications
            if m.get("method") == "window/logMessage"
        ]
        return "\n".join([self.stderr_text(), *sent])

    def stderr_tail(self, lines: int = 30) -> str:
        return "\n--- server log (tail) ---\n" + "\n".join(self.log_text().splitlines()[-lines:])


def _key(id: Any) -> Any:
    """A hashable key for a request id as JSON returns it."""
    return json.dumps(id, sort_keys=True)


def _answer(message: dict[str, Any]) -> Any:
    """What an editor answers to the server's requests."""
    if message["method"] == "workspace/configuration":
        items = (message.get("params") or {}).get("items") or []
        return [None for _ in items]
    return None
