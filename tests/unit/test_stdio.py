"""The stdio transport: stdin read on the event loop, or in a thread where it
cannot be (a regular file); oversized header lines are skipped, not fatal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _session(*prefix: bytes) -> bytes:
    return b"".join(
        [
            *prefix,
            _frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"processId": None, "rootUri": None, "capabilities": {}},
                }
            ),
            _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            _frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
            _frame({"jsonrpc": "2.0", "method": "exit"}),
        ]
    )


def _responses(stdout: bytes) -> dict[Any, dict[str, Any]]:
    found = {}
    rest = stdout
    while rest:
        head, _, rest = rest.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        message = json.loads(rest[:length])
        rest = rest[length:]
        if "id" in message and "method" not in message:
            found[message["id"]] = message
    return found


def _serve(
    tmp_path: Path, data: bytes | None = None, stdin: Any = None
) -> subprocess.CompletedProcess[bytes]:
    """Run the server on ``data`` through a pipe, or on ``stdin`` as given."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "chunkls", "serve"],
        cwd=REPO,
        env=env,
        input=data,
        stdin=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_a_pipe_is_served_and_exits_cleanly(tmp_path: Path) -> None:
    done = _serve(tmp_path, _session())
    assert done.returncode == 0, done.stderr.decode()
    responses = _responses(done.stdout)
    assert responses[1]["result"]["serverInfo"]["name"] == "chunkls"
    assert responses[2]["result"] is None
    assert b"reading stdin in a thread" not in done.stderr


def test_a_regular_file_as_stdin_is_read_in_a_thread(tmp_path: Path) -> None:
    script = tmp_path / "session.bin"
    script.write_bytes(_session())
    with script.open("rb") as stdin:
        done = _serve(tmp_path, stdin=stdin)
    assert done.returncode == 0, done.stderr.decode()
    assert b"reading stdin in a thread" in done.stderr
    responses = _responses(done.stdout)
    assert responses[1]["result"]["serverInfo"]["name"] == "chunkls"
    assert responses[2]["result"] is None


@pytest.mark.parametrize("size", [3 << 20])
def test_an_oversized_header_line_is_skipped(tmp_path: Path, size: int) -> None:
    done = _serve(tmp_path, _session(b"X" * size + b"\r\n"))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert b"skipped a header line longer than" in done.stderr
    responses = _responses(done.stdout)
    assert responses[1]["result"]["serverInfo"]["name"] == "chunkls"
    assert responses[2]["result"] is None


# -- Framing, in process: the bytes of a session cut anywhere ---------------------


class _Protocol:
    def __init__(self) -> None:
        self.handled: list[Any] = []

    def structure_message(self, data: Any) -> Any:
        return data

    def handle_message(self, message: Any) -> None:
        self.handled.append(message)


class _Server:
    def __init__(self) -> None:
        self.protocol = _Protocol()
        self.errors: list[BaseException] = []

    def report_server_error(self, error: BaseException, kind: Any) -> None:
        self.errors.append(error)


def _feed(data: bytes, size: int, eof: bool = True) -> tuple[_Server, bool]:
    import asyncio
    import threading

    from chunkls.lsp.stdio import Framing

    async def run() -> tuple[_Server, bool]:
        server = _Server()
        framing = Framing(server, threading.Event())  # type: ignore[arg-type]
        for at in range(0, len(data), size):
            framing.data_received(data[at : at + size])
        if eof:
            framing.eof_received()
        return server, framing.done.done()

    return asyncio.run(run())


MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "method": "a", "params": {"text": "x\r\n\r\ny"}},
    {"jsonrpc": "2.0", "method": "b", "params": {"text": "é" * 300}},
    {"jsonrpc": "2.0", "id": "c", "result": None},
]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 1 << 20])
def test_framing_delivers_messages_however_the_bytes_are_cut(size: int) -> None:
    data = b"".join(_frame(message) for message in MESSAGES)
    data = data.replace(
        b"Content-Length: %d\r\n" % len(json.dumps(MESSAGES[1]).encode()),
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        + b"Content-Length: %d\r\n" % len(json.dumps(MESSAGES[1]).encode()),
    )
    server, done = _feed(data, size)
    assert server.protocol.handled == MESSAGES
    assert done and not server.errors


def test_framing_skips_an_overlong_header_line_cut_in_pieces(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from chunkls.lsp.stdio import LINE_LIMIT

    data = b"X" * (LINE_LIMIT * 2 + 5) + b"\r\n" + _frame(MESSAGES[0])
    server, _ = _feed(data, 1 << 16)
    assert server.protocol.handled == [MESSAGES[0]]
    assert caplog.text.count("skipped a header line longer than") == 1


def test_framing_hands_on_a_body_cut_short_by_end_of_input() -> None:
    frame = _frame(MESSAGES[0])
    server, done = _feed(frame[:-5], 4)
    assert done and server.protocol.handled == []
    assert len(server.errors) == 1  # the partial JSON: reported, nothing else lost


def test_framing_waits_for_the_rest_of_a_message() -> None:
    frame = _frame(MESSAGES[0])
    server, done = _feed(frame[:-1], 1 << 20, eof=False)
    assert not done and server.protocol.handled == []


def test_dev_null_as_stdin_ends_the_server(tmp_path: Path) -> None:
    """A character device the event loop cannot wait on (``/dev/null``: epoll
    refuses it) is read in a thread: end of input, the server exits."""
    done = _serve(tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr.decode()
    assert b"reading stdin in a thread" in done.stderr
    assert b"Traceback" not in done.stderr


def test_framing_handles_a_prelude_before_what_the_pipe_brings() -> None:
    """What the early reader read (``chunkls.lsp.early``) comes first, its
    trailing bytes joined with the pipe's next ones."""
    import asyncio
    import threading

    from chunkls.lsp.early import Prelude
    from chunkls.lsp.stdio import Framing

    third = _frame(MESSAGES[2])
    prelude = Prelude(
        bodies=[json.dumps(MESSAGES[0]).encode(), json.dumps(MESSAGES[1]).encode()],
        rest=third[:10],
    )

    async def run() -> _Server:
        server = _Server()
        framing = Framing(server, threading.Event(), prelude)  # type: ignore[arg-type]
        framing.replay()
        assert server.protocol.handled == MESSAGES[:2]
        framing.data_received(third[10:])
        return server

    server = asyncio.run(run())
    assert server.protocol.handled == MESSAGES
    assert not server.errors


def test_a_prelude_replayed_without_a_pipe_can_end_the_session() -> None:
    """Where the pipe cannot be watched after all, the prelude is still handled,
    and an ``exit`` in it ends the session as it would from the pipe."""
    import asyncio
    import threading

    from chunkls.lsp.stdio import Framing
    from chunkls.runtime.early_reader import Prelude

    stop = threading.Event()
    stop.set()  # the first message handled is an ``exit``
    prelude = Prelude(bodies=[json.dumps(MESSAGES[1]).encode(), json.dumps(MESSAGES[0]).encode()])

    async def run() -> tuple[_Server, bool]:
        server = _Server()
        framing = Framing(server, stop, prelude)  # type: ignore[arg-type]
        framing.replay()
        return server, framing.done.done()

    server, done = asyncio.run(run())
    assert done and server.protocol.handled == [MESSAGES[1]]
    assert not server.errors


def test_an_exit_while_indexing_sends_nothing_to_the_closed_output(tmp_path: Path) -> None:
    """``shutdown`` and ``exit`` while the index waits for the client's answer to
    its progress token: the indexing task, cancelled as the server stops, logs
    to stderr only (it used to write to the closed stdout, and log tracebacks)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "m.py").write_text("def f():\n    return 1\n")
    capabilities = {"window": {"workDoneProgress": True}}
    start = _frame(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities},
        }
    ) + _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    server = subprocess.Popen(
        [sys.executable, "-m", "chunkls", "serve"],
        cwd=REPO,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(start)
        server.stdin.flush()
        seen = b""
        while b"window/workDoneProgress/create" not in seen:  # the index waits for it
            chunk = os.read(server.stdout.fileno(), 1 << 16)
            assert chunk, "the server ended early"
            seen += chunk
        end = _frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        server.stdin.write(end + _frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.close()
        stderr = server.stderr.read() if server.stderr else b""
        assert server.wait(120) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert b"Traceback" not in stderr, stderr.decode()[-3000:]
    assert b"Error sending data" not in stderr
