"""The JSON-RPC protocol, with an answer for every request.

pygls types a message while parsing its JSON, so a request whose parameters do not fit is
dropped unanswered. Here only the top-level message is typed, and an unreadable request or
a batch is answered ``InvalidParams`` or ``InvalidRequest``. A request is handled through
``Session.ask``, a notification as an event (the write step, in order).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCRequestMessage

from chunkls.lsp import compat
from chunkls.lsp.contract import framed

logger = logging.getLogger("chunkls")

VERSION = "2.0"
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002


class ChunkProtocol(LanguageServerProtocol):
    """Types the top-level message only, answers requests it cannot read, keeps no future."""

    types_whole_messages = True
    """``structure_message`` leaves every object as it is (read by ``stdio.Framing``)."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        compat.free_finished_futures(self)
        self.language_server = server
        self.include_headers = True
        """Whether messages sent are framed with headers (as ``set_writer`` was told)."""
        self.pending: dict[Any, tuple[Future[Any], Any]] = {}
        """Requests sent to the client and not answered yet: id -> (future, response type)."""
        self.sent = 0
        """Requests sent to the client (their ids)."""
        self.initialize_seen = False
        self.shutdown_seen = False
        """After ``shutdown`` only ``exit`` is handled."""
        self.writes: set[asyncio.Future[Any]] = set()
        """Writes under way on an asynchronous transport (kept until done)."""

    def set_writer(self, writer: Any, include_headers: bool = True) -> None:
        super().set_writer(writer, include_headers)
        self.include_headers = include_headers

    def structure_message(self, data: dict[str, Any]) -> Any:
        return data  # typed in handle_message, once the whole message is read

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            if isinstance(message, list) and any(_is_request(item) for item in message):
                self.send_error(None, INVALID_REQUEST, "Invalid Request: batches are not supported")
                return
            logger.warning("ignoring a message that is not a JSON object: %.200r", message)
            return
        if message.get("jsonrpc") != VERSION:
            self.refuse(message, INVALID_REQUEST, "Invalid Request: not JSON-RPC 2.0")
            return
        method = message.get("method")
        if "method" in message:
            if not isinstance(method, str):
                self.refuse(message, INVALID_REQUEST, "Invalid Request: method is not a string")
                return
            if isinstance(message.get("id"), (bool, dict, list)):
                # an id that is neither a number nor a string: answered with a null id
                self.refuse(message, INVALID_REQUEST, "Invalid Request: bad id")
                return
        if (self.shutdown_seen or not self.initialize_seen) and not self.admit(message):
            return
        if "method" not in message:
            self.handle_response(message)
            return
        params = message.get("params")
        if (
            method == types.WORKSPACE_EXECUTE_COMMAND
            and isinstance(params, dict)
            and params.get("arguments") is None
        ):
            # no arguments is none: a command that needs one is then refused with
            # InvalidParams by pygls, instead of failing inside with a TypeError
            params["arguments"] = []
        try:
            typed = super().structure_message(message)
        except JsonRpcException as error:
            text = f"Invalid params for {method}"
            cause = error.__cause__
            if cause is not None:
                text += f": {_summary(cause)}"
            self.refuse(message, INVALID_PARAMS, text)
            return
        session = getattr(self.language_server, "session", None)
        if session is None or "id" not in message:  # a notification: an event
            super().handle_message(typed)
            if session is not None:  # (what its handler read may have been incomplete)
                session.settle()
        else:  # a request: answered from the index as it is (the write step is the events')
            session.ask(
                lambda _: LanguageServerProtocol.handle_message(self, typed), catch_up=False
            )
        if method == types.SHUTDOWN and "id" in message:
            self.shutdown_seen = True
            for future, _ in list(self.pending.values()):
                future.cancel()  # the client will not answer them now

    def admit(self, message: dict[str, Any]) -> bool:
        """Whether a message may be handled before ``initialize`` or after
        ``shutdown``; a request that may not is answered with an error."""
        method = message.get("method")
        if method == types.EXIT:
            return True
        if self.shutdown_seen:
            code, text = INVALID_REQUEST, "Invalid Request: the server is shut down"
        elif method == types.INITIALIZE and "id" in message:
            self.initialize_seen = True
            return True
        else:
            code, text = SERVER_NOT_INITIALIZED, "Server not initialized: initialize first"
        if "id" in message and "method" in message:
            self.refuse(message, code, text)
        else:
            logger.warning("%s: ignoring %s", text, method or "a response")
        return False

    # -- requests to the client ---------------------------------------------------------

    def send_request(
        self, method: str, params: Any | None = None, callback: Any = None, msg_id: Any = None
    ) -> Future[Any]:
        """Send a request to the client (unanswered: no entry left; late answers dropped)."""
        if msg_id is None:
            self.sent += 1
            msg_id = f"chunkls-{self.sent}"
        future: Future[Any] = Future()
        if callback is not None:
            future.add_done_callback(lambda done: _call_back(done, callback))
        self.pending[msg_id] = (future, self.get_result_type(method))

        def forget(done: Future[Any]) -> None:
            if self.pending.get(msg_id, (None,))[0] is done:
                del self.pending[msg_id]

        future.add_done_callback(forget)
        request_type = self.get_message_type(method) or JsonRPCRequestMessage
        self.send(request_type(id=msg_id, method=method, params=params, jsonrpc=VERSION))
        return future

    def handle_response(self, message: dict[str, Any]) -> None:
        """Settle the future of the request a client's response answers."""
        msg_id = message.get("id")
        entry = self.pending.pop(msg_id, None) if isinstance(msg_id, (int, str)) else None
        if entry is None:
            logger.warning('Received response to unknown message id "%s"', msg_id)
            return
        future, response_type = entry
        if future.done():
            return
        converter = self.fm.converter
        try:
            if message.get("error") is not None:
                error = converter.structure(message["error"], types.ResponseError)
                future.set_exception(JsonRpcException.from_error(error))
            elif response_type is None:
                future.set_result(message.get("result"))
            else:
                future.set_result(converter.structure(message, response_type).result)
        except Exception as error:  # an answer that does not fit its type
            logger.warning("unreadable response to %r: %s", msg_id, _summary(error))
            future.set_exception(JsonRpcInternalError(f"unreadable response: {error}"))

    # -- writing -----------------------------------------------------------------------

    def refuse(self, message: dict[str, Any], code: int, text: str) -> None:
        """Answer a request that cannot be handled; log anything else."""
        if "id" not in message or "method" not in message:
            logger.warning("ignoring an unreadable message: %s: %.200r", text, message)
            return
        message_id = message["id"]
        if isinstance(message_id, bool) or not isinstance(message_id, (int, str)):
            message_id, code, text = None, INVALID_REQUEST, "Invalid Request: bad id"
        self.send_error(message_id, code, text)

    def send_error(self, message_id: Any, code: int, text: str) -> None:
        """Send an error response (``message_id`` ``None``: to no request in particular)."""
        logger.warning("refusing request %r: %r", message_id, text)  # %r: no lone surrogate
        self.send(types.ResponseErrorMessage(id=message_id, error=types.ResponseError(code, text)))

    def send(self, message: Any) -> None:
        """Write one message (an lsprotocol object), framed as pygls frames it."""
        if self.writer is None:
            logger.error("Unable to send data, no available transport!")
            return
        try:
            plain = self.fm.converter.unstructure(message)
            if isinstance(message, types.ResponseErrorMessage):
                plain.setdefault("id", None)  # JSON-RPC: a null id, not none
            body = json.dumps(plain).encode("ascii")
            if self.include_headers:
                body = framed(body)
            written = self.writer.write(body)
            if inspect.isawaitable(written):  # an asynchronous transport (TCP)
                task = asyncio.ensure_future(written)
                self.writes.add(task)
                task.add_done_callback(self.writes.discard)
        except BrokenPipeError:
            logger.exception("Error sending data. BrokenPipeError", exc_info=True)
            raise
        except Exception as error:
            logger.exception("Error sending data", exc_info=True)
            self.language_server.report_server_error(error, JsonRpcInternalError)


def _call_back(done: Future[Any], callback: Any) -> None:
    """Hand a request's answer to its callback (not when it failed or was cancelled)."""
    if not done.cancelled() and done.exception() is None:
        callback(done.result())


def _is_request(item: Any) -> bool:
    """Whether an element of a batch is a request (someone waits for an answer)."""
    return isinstance(item, dict) and "method" in item and "id" in item


def _summary(error: BaseException) -> str:
    """A one-line account of a typing error (cattrs groups its causes)."""
    parts = [str(error).splitlines()[0] if str(error) else type(error).__name__]
    for inner in list(getattr(error, "exceptions", ()))[:3]:
        parts.append(f"{type(inner).__name__}: {inner}")
    return "; ".join(parts)[:300]
