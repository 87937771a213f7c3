"""``Framing`` back in step after a wrong ``Content-Length``: one bad message is
lost, not every one after it; the skipped bytes are reported once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chunkls.lsp.stdio import LINE_LIMIT
from tests.unit.test_stdio import _feed

SKIPPED = "bytes of input that were not a message header"
"""The warning for bytes dropped between messages."""


def _body(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode()


def _frame(message: dict[str, Any], header: bytes = b"Content-Length: %d\r\n") -> bytes:
    body = _body(message)
    return header % len(body) + b"\r\n" + body


def _miscounted(message: dict[str, Any], by: int = 0) -> bytes:
    """A frame whose Content-Length counts characters (not bytes), plus ``by``."""
    body = _body(message)
    return b"Content-Length: %d\r\n\r\n" % (len(body.decode()) + by) + body


OPEN: dict[str, Any] = {
    "jsonrpc": "2.0",
    "method": "textDocument/didOpen",
    "params": {"textDocument": {"uri": "file:///x.md", "text": "café " * 40 + "😀"}},
}
"""A notification whose text is not ASCII: 2 or 4 bytes a character here and there."""
AFTER: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": n, "method": "workspace/executeCommand"} for n in (1, 2, 3)
]


@pytest.mark.parametrize("size", [1, 5, 64, 1 << 20])
def test_a_short_counted_body_costs_only_itself(
    size: int, caplog: pytest.LogCaptureFixture
) -> None:
    data = _miscounted(OPEN) + b"".join(_frame(message) for message in AFTER)
    server, done = _feed(data, size)
    assert server.protocol.handled == AFTER
    assert done
    assert len(server.errors) == 1  # the truncated body: reported, nothing else lost
    assert caplog.text.count(SKIPPED) == 1


@pytest.mark.parametrize(
    "header",
    [
        b"content-length: %d\r\n",
        b"CONTENT-LENGTH:%d\r\n",
        b"Content-Length:  %d \r\n",
        b"Content-Length: %d\n",
    ],
)
def test_header_spellings_are_read(header: bytes, caplog: pytest.LogCaptureFixture) -> None:
    data = b"".join(_frame(message, header) for message in AFTER)
    server, done = _feed(data, 3)
    assert server.protocol.handled == AFTER
    assert done and not server.errors
    assert SKIPPED not in caplog.text


def test_garbage_before_a_header_on_its_line_is_skipped(caplog: pytest.LogCaptureFixture) -> None:
    data = (
        _frame(AFTER[0])
        + b'\r\nnot json at all\r\n{"half": '
        + _frame(AFTER[1])
        + b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        + _frame(AFTER[2])
    )
    server, _ = _feed(data, 7)
    assert server.protocol.handled == AFTER
    assert not server.errors
    assert caplog.text.count(SKIPPED) == 1
    assert "skipped 28 bytes" in caplog.text


def test_an_over_counted_body_swallows_the_next_message_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A body counted long takes the start of the next message; the one after
    that is read again."""
    data = _miscounted(AFTER[0], by=10) + _frame(AFTER[1]) + _frame(AFTER[2])
    server, done = _feed(data, 4)
    assert server.protocol.handled == AFTER[2:]
    assert done and len(server.errors) == 1
    assert caplog.text.count(SKIPPED) == 1


def test_an_over_counted_body_at_end_of_input_ends_the_session() -> None:
    """Its bytes are handed on at end of input (as pygls does): no waiting."""
    data = _frame(AFTER[0]) + _miscounted(AFTER[1], by=100)
    server, done = _feed(data, 16)
    assert server.protocol.handled == AFTER[:2]
    assert done and not server.errors
    server, done = _feed(data[:-1], 16)
    assert server.protocol.handled == AFTER[:1]
    assert done and len(server.errors) == 1


def test_garbage_at_end_of_input_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    server, done = _feed(_frame(AFTER[0]) + b"tail of something", 16)
    assert server.protocol.handled == AFTER[:1]
    assert done and not server.errors
    assert "skipped 17 bytes" in caplog.text


def test_a_header_at_the_end_of_an_overlong_line_is_read(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = b"X" * (LINE_LIMIT + 1000) + _frame(AFTER[0]) + _frame(AFTER[1])
    server, _ = _feed(data, 1 << 16)
    assert server.protocol.handled == AFTER[:2]
    assert caplog.text.count("skipped a header line longer than") == 1
    assert SKIPPED not in caplog.text  # reported once, as an overlong line


def test_well_framed_input_warns_of_nothing(caplog: pytest.LogCaptureFixture) -> None:
    data = b"".join(
        _frame(message, b"Content-Length: %d\r\nContent-Type: application/json\r\n")
        for message in [OPEN, *AFTER]
    )
    server, done = _feed(data, 1)
    assert server.protocol.handled == [OPEN, *AFTER]
    assert done and not server.errors
    assert not caplog.text
