"""The JSON-RPC protocol, with an answer for every request.

pygls builds a message's typed form while the JSON is parsed (as the
``object_hook`` of ``json.loads``). Two things go wrong with that:

- when a request's parameters do not fit its type (a field missing or of the
  wrong type, ``params`` left out, a method name that is not a string), pygls
  logs the error and drops the request, so the client waits for an answer that
  never comes;
- any object *inside* the parameters that has a ``"jsonrpc"`` key is taken for
  a message of its own.

Here the hook leaves objects as they are, and the top-level message alone is
typed when it is handled. A request that cannot be read is answered at once:
``InvalidParams``, or ``InvalidRequest`` (with a null id when its id cannot be
read), as JSON-RPC asks. Unreadable notifications and responses are logged and
dropped (nobody waits for them). A batch (a JSON array) gets one
``InvalidRequest`` with a null id when it holds a request: LSP has no batches.

The session's states are kept as the LSP specification asks: before
``initialize``, requests are answered ``ServerNotInitialized`` and notifications
dropped; after ``shutdown``, requests are answered ``InvalidRequest`` and
notifications dropped; ``exit`` is handled at any time.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, NamedTuple

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.feature_manager import is_thread_function
from pygls.protocol import LanguageServerProtocol

logger = logging.getLogger("chunkls")

VERSION = "2.0"
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
HOVERS_KEPT = 256
"""Hovers whose JSON is kept (``navigation`` answers a reference's hover with the
same object while nothing it depends on changes)."""


class ChunkProtocol(LanguageServerProtocol):
    """``LanguageServerProtocol`` that types the top-level message only, answers
    requests it cannot read, and keeps no future longer than it is pending."""

    _sent = 0
    """Requests sent to the client (their ids)."""
    _initialize_seen = False
    """An ``initialize`` request was received (the session has begun)."""
    types_whole_messages = True
    """``structure_message`` leaves every object as it is (``stdio.Framing`` then
    parses a body without calling it for each object)."""
    _encoder: json.JSONEncoder | None = None
    """Encodes every message sent (typed objects through pygls's serializer)."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self._request_futures = _Futures()
        self._hovers: dict[int, tuple[types.Hover, bytes]] = {}
        """Hovers answered lately, by identity, with their JSON."""
        self._writes: set[asyncio.Future[Any]] = set()
        """Writes under way on an asynchronous transport (kept until done)."""
        self._plain: dict[Callable[..., Any], bool] = {}
        """Handler -> whether it is a plain function (answered in the same call)."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        return data  # typed in handle_message, once the whole message is read

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            if isinstance(message, list) and any(_is_request(item) for item in message):
                self._send_error(
                    None, INVALID_REQUEST, "Invalid Request: batches are not supported"
                )
                return
            logger.warning("ignoring a message that is not a JSON object: %.200r", message)
            return
        if message.get("jsonrpc") != VERSION:
            self._refuse(message, INVALID_REQUEST, "Invalid Request: not JSON-RPC 2.0")
            return
        if "method" in message:
            if not isinstance(message["method"], str):
                self._refuse(message, INVALID_REQUEST, "Invalid Request: method is not a string")
                return
            message_id = message.get("id")
            if isinstance(message_id, (bool, dict, list)):
                # an id that is neither a number nor a string: answered with a null id
                self._refuse(message, INVALID_REQUEST, "Invalid Request: bad id")
                return
        params = message.get("params")
        if (
            message.get("method") == types.WORKSPACE_EXECUTE_COMMAND
            and isinstance(params, dict)
            and params.get("arguments") is None
        ):
            # no arguments is none: a command that needs one is then refused with
            # InvalidParams by pygls, instead of failing inside with a TypeError
            params["arguments"] = []
        try:
            typed = _position_request(message) or super().structure_message(message)
        except JsonRpcException as error:
            method = message.get("method")
            if isinstance(method, str):
                text = f"Invalid params for {method}"
                code = INVALID_PARAMS
            else:
                text, code = "Invalid Request", INVALID_REQUEST
            cause = error.__cause__
            if cause is not None:
                text += f": {_summary(cause)}"
            self._refuse(message, code, text)
            return
        self._dispatch(message, typed)

    def _dispatch(self, raw: dict[str, Any], message: Any) -> None:
        """``JsonRPCProtocol.handle_message`` without its ``isinstance`` checks
        against runtime protocols (a third of a hover's time in the server): the
        raw message's keys say what it is."""
        if (self._shutdown or not self._initialize_seen) and not self._admit(raw):
            return
        context = contextvars.copy_context()
        if "method" in raw:
            if "id" in raw:
                context.run(self._handle_request, message.id, message.method, message.params)
            else:
                context.run(self._handle_notification, message.method, message.params)
        elif "error" in raw and raw["error"] is not None:
            context.run(self._handle_response, message.id, None, message.error)
        else:
            context.run(self._handle_response, message.id, getattr(message, "result", None))

    def _admit(self, raw: dict[str, Any]) -> bool:
        """Whether a message may be handled before ``initialize`` or after
        ``shutdown``; a request that may not is answered with an error."""
        method = raw.get("method")
        if method == types.EXIT:
            return True
        if self._shutdown:
            code, text = INVALID_REQUEST, "Invalid Request: the server is shut down"
        elif method == types.INITIALIZE and "id" in raw:
            self._initialize_seen = True
            return True
        else:
            code, text = SERVER_NOT_INITIALIZED, "Server not initialized: initialize first"
        if "id" in raw and "method" in raw:
            self._refuse(raw, code, text)
        else:
            logger.warning("%s: ignoring %s", text, method or "a response")
        return False

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """pygls's, but the result of a plain (not async, threaded or generator)
        handler is sent as soon as it returns, without the future and callbacks
        pygls goes through (a sixth of a hover's time in the server)."""
        features = self.fm.features
        handler = self.fm.builtin_features.get(method_name) or features.get(method_name)
        if handler is None or not self._is_plain(handler):
            super()._handle_request(msg_id, method_name, params)
            return
        self._ctx_msg_id.set(msg_id)
        try:
            result = handler(params)
        except Exception as error:  # answered as pygls answers it
            failed: Future[Any] = Future()
            failed.set_exception(error)
            self._send_handler_result(failed, msg_id=msg_id)
            return
        self._result_types.pop(msg_id, None)
        kept = self._hovers.get(id(result)) if type(result) is types.Hover else None
        if kept is not None and kept[0] is result:
            encoded = kept[1]  # the same hover again (``navigation`` makes each once)
        else:
            plain = _plain_result(result)
            if plain is _NOT_PLAIN:
                plain = self._converter.unstructure(result)
            encoded = self._encode(plain)
            if type(result) is types.Hover:
                if len(self._hovers) >= HOVERS_KEPT:
                    self._hovers.clear()
                self._hovers[id(result)] = (result, encoded)
        self._send_body(b'{"jsonrpc":"2.0","id":%b,"result":%b}' % (self._encode(msg_id), encoded))

    def _is_plain(self, handler: Callable[..., Any]) -> bool:
        plain = self._plain.get(handler)
        if plain is None:
            plain = self._plain[handler] = not (
                asyncio.iscoroutinefunction(handler)
                or bool(is_thread_function(handler))  # type: ignore[no-untyped-call]
                or inspect.isgeneratorfunction(handler)
            )
        return plain

    def _send_data(self, data: Any) -> None:
        """pygls's, with one JSON encoder for the session and the header and body
        encoded together (pygls builds an encoder per message: a sixth of a
        hover's time in the server)."""
        if not data:
            return
        try:
            body = self._encode(data)
        except Exception as error:
            logger.exception("Error sending data", exc_info=True)
            self._server._report_server_error(error, JsonRpcInternalError)
            return
        self._send_body(body)

    def _encode(self, value: Any) -> bytes:
        """JSON for a message or part of one, as UTF-8 (a lone surrogate, from a
        file name's undecodable byte, which UTF-8 cannot carry, is sent escaped)."""
        encoder = self._encoder
        if encoder is None:
            encoder = self._encoder = json.JSONEncoder(
                default=self._serialize_message, ensure_ascii=False
            )
        try:
            return encoder.encode(value).encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(value, default=self._serialize_message).encode("ascii")

    def _send_body(self, body: bytes) -> None:
        """Write one message's body, with its header (as pygls writes it)."""
        if self.writer is None:
            logger.error("Unable to send data, no available transport!")
            return
        try:
            if self._include_headers:
                message = b"Content-Length: %d\r\n%s\r\n%s" % (len(body), _CONTENT_TYPE, body)
            else:
                message = body
            written = self.writer.write(message)
            if inspect.isawaitable(written):  # an asynchronous transport (TCP)
                task = asyncio.ensure_future(written)
                self._writes.add(task)
                task.add_done_callback(self._written)
        except BrokenPipeError:
            logger.exception("Error sending data. BrokenPipeError", exc_info=True)
            raise
        except Exception as error:
            logger.exception("Error sending data", exc_info=True)
            self._server._report_server_error(error, JsonRpcInternalError)

    def _written(self, task: asyncio.Future[Any]) -> None:
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("Error sending data: %r", task.exception())

    # -- futures pygls would keep forever --------------------------------------------

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """pygls files a future under ``msg_id`` for every generator, async or
        threaded handler, including each notification (``didChange``, ``didSave``)
        and each step of its built-in handlers, and removes it only when a request
        is answered: a long session grows by one future per notification. Here
        every one is removed once it is done."""

        def done(future: Any) -> None:
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def send_request(
        self, method: str, params: Any | None = None, callback: Any = None, msg_id: Any = None
    ) -> Any:
        """pygls's, but a request that ends without an answer (cancelled, timed
        out) leaves no entry behind, and a late answer to it is dropped instead
        of being set on a cancelled future (which raised)."""
        if msg_id is None:
            self._sent += 1
            msg_id = f"chunkls-{self._sent}"
        future = super().send_request(method, params, callback, msg_id)

        def forget(finished: Any) -> None:
            if self._request_futures.get(msg_id) is finished:
                del self._request_futures[msg_id]
            self._result_types.pop(msg_id, None)

        future.add_done_callback(forget)
        return future

    def _refuse(self, message: dict[str, Any], code: int, text: str) -> None:
        """Answer a request that cannot be handled; log anything else."""
        if "id" not in message or "method" not in message:
            logger.warning("ignoring an unreadable message: %s: %.200r", text, message)
            return
        message_id = message["id"]
        if isinstance(message_id, bool) or not isinstance(message_id, (int, str)):
            message_id, code, text = None, INVALID_REQUEST, "Invalid Request: bad id"
        self._send_error(message_id, code, text)

    def _send_error(self, message_id: Any, code: int, text: str) -> None:
        """Send an error response (``message_id`` ``None``: to no request in particular)."""
        logger.warning("refusing request %r: %s", message_id, text)
        self._send_data(
            {"jsonrpc": VERSION, "id": message_id, "error": {"code": code, "message": text}}
        )


_POSITION_REQUESTS: dict[str, Any] = {
    types.TEXT_DOCUMENT_HOVER: types.HoverParams,
    types.TEXT_DOCUMENT_DEFINITION: types.DefinitionParams,
}
"""The requests an editor sends most (on every mouse rest), typed by hand."""


def _position_request(message: dict[str, Any]) -> Any:
    """A hover or definition request in its plain form (a document and a
    position, nothing else) typed directly: its id, method and parameters as
    cattrs would type them, but a fifth of a hover's time faster; ``None`` for
    anything else (cattrs types it, and reports what is wrong with it)."""
    method = message.get("method")
    if type(method) is not str:
        return None
    params_type = _POSITION_REQUESTS.get(method)
    if params_type is None or len(message) != 4:  # jsonrpc, id, method, params
        return None
    params = message.get("params")
    message_id: Any = message.get("id")
    if type(params) is not dict or len(params) != 2 or type(message_id) not in (int, str):
        return None
    document, position = params.get("textDocument"), params.get("position")
    if type(document) is not dict or type(position) is not dict:
        return None
    uri = document.get("uri")
    line, character = position.get("line"), position.get("character")
    if (
        len(document) != 1
        or len(position) != 2
        or type(uri) is not str
        or type(line) is not int
        or type(character) is not int
        or not 0 <= line <= _UINTEGER
        or not 0 <= character <= _UINTEGER
    ):
        return None
    return _Request(
        message_id,
        method,
        params_type(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        ),
    )


class _Request(NamedTuple):
    """What ``_dispatch`` reads of a typed request."""

    id: int | str
    method: str
    params: Any


_CONTENT_TYPE = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
"""The header pygls sends with every message."""

_NOT_PLAIN = object()


def _plain_result(result: Any) -> Any:
    """The JSON form of a hover's or a definition's answer, built directly (as
    the converter builds it: unset fields left out), or ``_NOT_PLAIN`` for
    anything else (the converter unstructures it)."""
    if result is None:
        return None
    kind = type(result)
    if kind is types.Hover:
        contents = result.contents
        if type(contents) is not types.MarkupContent:
            return _NOT_PLAIN
        plain: dict[str, Any] = {"contents": {"kind": contents.kind.value, "value": contents.value}}
        if result.range is not None:
            plain["range"] = _plain_range(result.range)
        return plain
    if kind is list and all(type(item) is types.Location for item in result):
        return [{"uri": item.uri, "range": _plain_range(item.range)} for item in result]
    return _NOT_PLAIN


def _plain_range(value: types.Range) -> dict[str, Any]:
    start, end = value.start, value.end
    return {
        "start": {"line": start.line, "character": start.character},
        "end": {"line": end.line, "character": end.character},
    }


_UINTEGER = 2**31 - 1
"""The largest LSP ``uinteger``."""


def _is_request(item: Any) -> bool:
    """Whether an element of a batch is a request (someone waits for an answer)."""
    return isinstance(item, dict) and "method" in item and "id" in item


class _Futures(dict[Any, Any]):
    """Pending futures by message id. Cancelling one (pygls's ``shutdown`` does
    it to every pending one while iterating) removes it at once: iterating
    goes over a copy."""

    def items(self) -> Any:
        return list(super().items())


def _summary(error: BaseException) -> str:
    """A one-line account of a typing error (cattrs groups its causes)."""
    parts = [str(error).splitlines()[0] if str(error) else type(error).__name__]
    for inner in list(getattr(error, "exceptions", ()))[:3]:
        parts.append(f"{type(inner).__name__}: {inner}")
    return "; ".join(parts)[:300]
