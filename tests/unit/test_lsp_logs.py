"""The language server's log (``chunkls.lsp.logs``): each record in one place,
at its level: the client's log while it listens, stderr otherwise."""

from __future__ import annotations

import io
import logging
import threading
from typing import Any

import pytest
from lsprotocol import types

from chunkls.lsp.logs import ClientLog


class FakeServer:
    """What the handler needs of a server: whether it has shut down, and a
    ``window/logMessage`` to send (which may fail)."""

    def __init__(self, fails: bool = False) -> None:
        self.shutting_down = False
        self.sent: list[types.LogMessageParams] = []
        self.fails = fails

    def window_log_message(self, params: types.LogMessageParams) -> None:
        if self.fails:
            logging.getLogger("chunkls").error("could not send")  # logged while sending
            raise BrokenPipeError
        self.sent.append(params)


def _handler(server: FakeServer) -> tuple[ClientLog, io.StringIO]:
    handler = ClientLog(server)  # type: ignore[arg-type]
    handler.setFormatter(logging.Formatter("%(message)s"))
    err = io.StringIO()
    handler.stderr.setStream(err)
    return handler, err


def _record(message: str, level: int = logging.INFO, name: str = "chunkls") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, None, None)


@pytest.mark.parametrize(
    ("level", "kind"),
    [
        (logging.ERROR, types.MessageType.Error),
        (logging.WARNING, types.MessageType.Warning),
        (logging.INFO, types.MessageType.Info),
        (logging.DEBUG, types.MessageType.Debug),
    ],
)
def test_a_listening_client_gets_each_record_once_at_its_level(level: int, kind: Any) -> None:
    server = FakeServer()
    handler, err = _handler(server)
    handler.listen()
    handler.handle(_record("Indexed 13 chunks", level))
    assert [(m.type, m.message) for m in server.sent] == [(kind, "Indexed 13 chunks")]
    assert err.getvalue() == ""  # not also on stderr


def test_before_the_client_listens_and_after_shutdown_records_go_to_stderr() -> None:
    server = FakeServer()
    handler, err = _handler(server)
    handler.handle(_record("answered initialize early", logging.INFO))
    handler.listen()
    server.shutting_down = True
    handler.handle(_record("could not save the index cache", logging.WARNING))
    assert server.sent == []
    assert err.getvalue().splitlines() == [
        "chunkls INFO: answered initialize early",
        "chunkls WARNING: could not save the index cache",
    ]


def test_another_threads_record_goes_to_stderr() -> None:
    server = FakeServer()
    handler, err = _handler(server)
    handler.listen()
    thread = threading.Thread(target=handler.handle, args=(_record("from a thread"),))
    thread.start()
    thread.join()
    assert server.sent == [] and "chunkls INFO: from a thread" in err.getvalue()


def test_routine_notes_of_the_protocol_are_debug_records() -> None:
    server = FakeServer()
    handler, _ = _handler(server)
    handler.listen()
    note = "Cancel notification for unknown message id '7'"
    handler.handle(_record(note, logging.WARNING, name="pygls.protocol"))
    assert [(m.type, m.message) for m in server.sent] == [(types.MessageType.Debug, note)]


def test_a_record_that_cannot_be_sent_goes_to_stderr_and_nothing_loops() -> None:
    server = FakeServer(fails=True)
    handler, err = _handler(server)
    logger = logging.getLogger("chunkls")
    logger.addHandler(handler)
    try:
        handler.listen()
        handler.handle(_record("Indexed 13 chunks"))
    finally:
        logger.removeHandler(handler)
    assert "chunkls INFO: Indexed 13 chunks" in err.getvalue()
    assert "chunkls ERROR: could not send" in err.getvalue()  # said while sending: stderr
