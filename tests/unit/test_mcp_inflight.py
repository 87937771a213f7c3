"""The calls in flight when an MCP client closes stdin (``chunkls.mcp.inflight``)."""

from __future__ import annotations

import io
import json
import logging
import threading
from typing import Any

import pytest

from chunkls.mcp.inflight import DrainingInput, InFlight, TrackingOutput

WAIT = 30.0
"""Longest wait for a thread in these tests (they end long before)."""


def line(**message: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", **message}) + "\n"


@pytest.mark.parametrize(
    ("read", "in_flight"),
    [
        ([line(id=1, method="tools/call")], 1),
        ([line(id="a", method="ping"), line(id=2, method="tools/list")], 2),
        # notifications, answers to the server's own requests, odd ids: not requests
        ([line(method="notifications/initialized")], 0),
        ([line(id=7, result={})], 0),
        ([line(id=True, method="ping"), line(id=1.5, method="ping"), line(method="x", id=None)], 0),
        # not JSON-RPC 2.0 objects
        (["not json\n", "[1, 2]\n", json.dumps({"id": 1, "method": "ping"}) + "\n"], 0),
        # a cancellation ends its request (the SDK does not answer it)
        (
            [
                line(id=1, method="tools/call"),
                line(id=2, method="tools/call"),
                line(method="notifications/cancelled", params={"requestId": 1}),
                line(method="notifications/cancelled", params={"requestId": 9}),
                line(method="notifications/cancelled", params="bad"),
            ],
            1,
        ),
    ],
)
def test_what_counts_as_in_flight(read: list[str], in_flight: int) -> None:
    inflight = InFlight()
    for text in read:
        inflight.read(text)
    assert len(inflight) == in_flight


def test_an_answer_or_an_error_ends_its_request_only() -> None:
    inflight = InFlight()
    for request_id in (1, "two", 3):
        inflight.read(line(id=request_id, method="tools/call"))
    inflight.written(line(id=1, result={}))
    inflight.written(line(id="two", error={"code": -32602, "message": "bad"}))
    inflight.written(line(id=3, method="roots/list"))  # the server's own request
    inflight.written(line(method="notifications/message", params={}))
    assert len(inflight) == 1
    assert inflight.wait(0) is False


class Lines:
    """A stdin whose lines are handed over one by one, then its end."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def readline(self) -> str:
        return self.lines.pop(0) if self.lines else ""


def test_the_end_of_stdin_waits_for_the_answer_to_go_out() -> None:
    inflight = InFlight()
    stdin = DrainingInput(Lines([line(id=1, method="tools/call")]), inflight, limit=WAIT)
    out = io.StringIO()
    stdout = TrackingOutput(out, inflight, gone=lambda: None)
    events: list[str] = []
    assert stdin.readline() == line(id=1, method="tools/call")

    def the_end() -> None:
        events.append(f"end {stdin.readline()!r}")

    reader = threading.Thread(target=the_end)
    reader.start()
    stdout.write(line(id=1, result={}))
    reader.join(0.05)
    assert reader.is_alive()  # written, not yet flushed: still in flight
    events.append("flushed")
    stdout.flush()
    reader.join(WAIT)
    assert events == ["flushed", "end ''"]
    assert out.getvalue() == line(id=1, result={})


def test_with_nothing_in_flight_the_end_passes_at_once() -> None:
    inflight = InFlight()
    stdin = DrainingInput(Lines([line(method="notifications/initialized")]), inflight, limit=WAIT)
    assert stdin.readline()
    assert stdin.readline() == ""  # would block for WAIT seconds otherwise


def test_a_request_never_answered_holds_the_end_for_the_limit_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    inflight = InFlight()
    stdin = DrainingInput(Lines([line(id=4, method="tools/call")]), inflight, limit=0.01)
    with caplog.at_level(logging.INFO, logger="chunkls"):
        stdin.readline()
        assert stdin.readline() == ""
    assert "1 request(s) still unanswered 0.01 s after stdin closed" in caplog.text


class Broken:
    """A stdout whose reader has gone."""

    def __init__(self, fail_on: str) -> None:
        self.fail_on = fail_on

    def write(self, text: str) -> int:
        if self.fail_on == "write":
            raise BrokenPipeError(32, "Broken pipe")
        return len(text)

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("fail_on", ["write", "flush"])
def test_a_closed_stdout_drops_the_answers_and_ends_their_requests(fail_on: str) -> None:
    inflight = InFlight()
    gone: list[bool] = []
    for request_id in (1, 2):
        inflight.read(line(id=request_id, method="tools/call"))
    stdout = TrackingOutput(Broken(fail_on), inflight, gone=lambda: gone.append(True))
    for request_id in (1, 2):
        assert stdout.write(line(id=request_id, result={})) > 0
        stdout.flush()
    assert len(inflight) == 0
    assert gone == [True]  # once
    assert stdout.closed


def test_a_cancellation_is_noted_and_kept_from_the_sdk() -> None:
    """The SDK's handling of a cancellation races the call (a cancellation read
    before the call's handler started ended the session): it never sees one."""
    inflight = InFlight()
    call, cancel = (
        line(id=1, method="tools/call"),
        line(method="notifications/cancelled", params={"requestId": 1}),
    )
    stdin = DrainingInput(Lines([call, cancel, cancel, line(id=2, method="ping")]), inflight)
    assert stdin.readline() == call
    assert len(inflight) == 1
    assert stdin.readline() == line(id=2, method="ping")  # both cancellations noted, not passed
    assert len(inflight) == 1  # the ping; the client no longer waits for the call
    assert inflight.read(cancel) is True and inflight.read(call) is False
