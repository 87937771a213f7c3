"""Answers before the MCP SDK has loaded: ``initialize`` and ``tools/list`` kept from an
earlier start, ``ping`` and tool calls by ``McpService.answer``; then the SDK takes over."""

from __future__ import annotations

import io
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunkls.runtime import early_reader
from chunkls.runtime.early_reader import (
    EarlyReader,
    KeptAnswers,
    Prelude,
    request_key,
    start_reader,
)
from chunkls.runtime.fingerprint import code_fingerprint

if TYPE_CHECKING:
    from chunkls.mcp.service import McpService

logger = logging.getLogger("chunkls")

LINE_LIMIT = 1 << 26
"""Longest line read early (a longer one is left to the SDK)."""
ANSWERS_FILE = "mcp-answers.json"
"""The kept answers' file in the cache directory."""


def cut_line(buffer: bytearray) -> bytes | None:
    """Take the first line (a message, newline-delimited) off ``buffer``."""
    end = buffer.find(b"\n")
    if end < 0:
        if len(buffer) > LINE_LIMIT:
            raise ValueError("line too long")
        return None
    line = bytes(buffer[:end])
    del buffer[: end + 1]
    return line


def frame(message: dict[str, Any]) -> bytes:
    """A message as one line."""
    return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def mcp_fingerprint() -> str:
    """The MCP server's code (``chunkls.runtime.fingerprint.code_fingerprint``)."""
    return code_fingerprint(Path(__file__).parent, ("mcp",))


def initialize_key(params: Any) -> str:
    """What an initialize answer is kept under: the protocol version and capabilities."""
    return early_reader.initialize_key(params, ("protocolVersion", "capabilities"))


def list_key(params: Any) -> str:
    """What a ``tools/list`` answer is kept under: its parameters."""
    return request_key("tools/list", params if params is not None else {})


class McpEarly:
    """What the MCP server answers early (an ``EarlyProtocol``)."""

    def __init__(self, answers: KeptAnswers, service: McpService) -> None:
        self.answers = answers
        self.service = service
        """The service the server goes on answering with once the SDK has loaded."""
        self.protocol_version: object = None
        """The protocol version the client asked for at ``initialize``."""

    cut = staticmethod(cut_line)
    frame = staticmethod(frame)

    def first(self, message: dict[str, Any]) -> Any:
        """The kept answer to an ``initialize`` request."""
        if message.get("method") != "initialize":
            return None
        params = message.get("params")
        self.protocol_version = params.get("protocolVersion") if isinstance(params, dict) else None
        return self.answers.get(initialize_key(params))

    def answer(self, message: dict[str, Any]) -> Any:
        """``ping``, the kept ``tools/list``, and the tool calls the service can
        answer already (in the reader's thread, which alone uses it meanwhile)."""
        method = message.get("method")
        if "id" not in message:
            return None
        if method == "ping":
            return {}
        if method == "tools/list":
            return self.answers.get(list_key(message.get("params")))
        params = message.get("params")
        if method != "tools/call" or not isinstance(params, dict):
            return None
        name = params.get("name")
        if not isinstance(name, str):
            return None
        from chunkls.mcp.tools import call_result, links_allowed

        answer = self.service.answer(name, params.get("arguments"))
        links = links_allowed(self.protocol_version)
        return None if answer is None else call_result(answer, links)

    def finish(self) -> None:
        """The reader stops: nothing to let go of (the service goes on)."""


def start_early(service: McpService) -> EarlyReader | None:
    """Start reading stdin early, if it is a pipe this can wait on; ``None`` otherwise."""
    from chunkls.storage.cache import cache_dir

    def protocol() -> McpEarly:
        return McpEarly(KeptAnswers(cache_dir() / ANSWERS_FILE, mcp_fingerprint()), service)

    return start_reader(protocol)


# -- the SDK takes over -------------------------------------------------------------


class PreludeInput(io.RawIOBase):
    """stdin as the SDK reads it: the lines kept early, the bytes read after, the rest."""

    def __init__(self, prelude: Prelude, fd: int) -> None:
        super().__init__()
        self.pending = b"".join(body + b"\n" for body in prelude.bodies) + prelude.rest
        self.fd = fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self.pending:
            size = min(len(view), len(self.pending))
            view[:size] = self.pending[:size]
            self.pending = self.pending[size:]
            return size
        data = os.read(self.fd, len(view))
        view[: len(data)] = data
        return len(data)


class AnswerFilter(early_reader.AnswerFilter):
    """stdout as the SDK writes it (a line per message); ``early_reader.AnswerFilter``."""

    @staticmethod
    def key_of(message: dict[str, Any], first: bool) -> str | None:
        method = message.get("method")
        if first and method == "initialize":
            return initialize_key(message.get("params"))
        return list_key(message.get("params")) if method == "tools/list" else None

    def flush(self) -> None:
        self.out.flush()


def take_over(reader: EarlyReader) -> tuple[Any, Any]:
    """Stop the early reader; stdin and stdout (text: anyio wraps them) for the SDK."""
    import sys

    prelude = reader.hand_over()
    if prelude.answered:
        calls = prelude.answered.count("tools/call")
        logger.info(
            "chunkls mcp: answered %s while loading (%d tool call%s)",
            ", ".join(dict.fromkeys(prelude.answered)),
            calls,
            "" if calls == 1 else "s",
        )
    stdin = io.TextIOWrapper(
        io.BufferedReader(PreludeInput(prelude, reader.fd_in)), encoding="utf-8", errors="replace"
    )
    stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
    return stdin, AnswerFilter(stdout, prelude, reader.protocol.answers)
