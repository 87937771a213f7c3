"""Each private pygls name ``chunkls.lsp.compat`` uses still means what it assumes.

These tests run against a stock pygls ``LanguageServer``: when a pygls release
renames ``_request_futures`` or stops filing notification futures there, they
fail here, by name, instead of somewhere deep in a session."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Future
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from chunkls.lsp import compat


class _Null:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def _stock() -> LanguageServer:
    server = LanguageServer("stock", "v1")
    server.protocol.set_writer(_Null())
    return server


def pending_futures(protocol: Any) -> dict[Any, Any]:
    """The futures of ``protocol``'s handlers still running, by message id."""
    pending: dict[Any, Any] = getattr(protocol, compat.PENDING_FUTURES)
    return pending


def _feed(server: LanguageServer, message: dict[str, Any]) -> None:
    protocol = server.protocol
    protocol.handle_message(
        json.loads(
            json.dumps({"jsonrpc": "2.0", **message}), object_hook=protocol.structure_message
        )
    )


def test_pygls_keeps_pending_futures_in_a_dict_by_that_name() -> None:
    protocol = _stock().protocol
    assert isinstance(protocol, LanguageServerProtocol)
    pending = getattr(protocol, compat.PENDING_FUTURES, None)
    assert type(pending) is dict, f"pygls no longer has a dict {compat.PENDING_FUTURES}"


async def test_pygls_still_files_and_keeps_notification_futures_there() -> None:
    """The leak ``compat`` works around: if this fails, pygls changed (maybe fixed
    it) and ``compat.free_finished_futures`` must be looked at again."""
    server = _stock()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: LanguageServer, params: Any) -> None:
        return None

    _feed(server, {"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    uri = "file:///x.md"
    for _ in range(3):
        _feed(server, {"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
    await asyncio.sleep(0.01)
    pending = pending_futures(server.protocol)
    assert len(pending) == 3 and all(future.done() for future in pending.values())


async def test_freed_futures_forget_finished_ones() -> None:
    server = _stock()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: LanguageServer, params: Any) -> None:
        return None

    compat.free_finished_futures(server.protocol)
    _feed(server, {"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    for _ in range(3):
        _feed(server, {"method": "textDocument/didSave", "params": {"textDocument": {"uri": "x"}}})
    await asyncio.sleep(0.01)
    assert pending_futures(server.protocol) == {}


def test_freed_futures_can_be_cancelled_while_iterated() -> None:
    """pygls's ``shutdown`` cancels each pending future while iterating over the
    dict; a cancelled future's callback removes it at once (pygls#606)."""
    pending = compat.FreedFutures()
    for key in range(3):
        pending[key] = Future()
    for _key, future in pending.items():
        future.cancel()
    assert pending == {}
    kept: Future[Any] = Future()
    pending["a"] = kept
    pending["a"] = Future()  # the same id again: the first one's end removes nothing
    kept.set_result(None)
    assert "a" in pending


# -- attrs: where it compiles generated methods ---------------------------------------


def test_attrs_still_compiles_generated_methods_where_compat_assumes() -> None:
    """If this fails, attrs renamed or changed ``_compile_and_eval``
    (python-attrs/attrs#575 may have been fixed): look at ``chunkls.lsp.kept_code``."""
    import attr._make
    import attrs

    function = getattr(attr._make, compat.ATTRS_COMPILE, None)
    assert callable(function), f"attrs has no {compat.ATTRS_COMPILE}"
    assert compat.swap_attrs_compile(None) is function, "its parameters changed"
    calls: list[str] = []

    def spy(script: str, globs: Any, locs: Any = None, filename: str = "") -> None:
        calls.append(filename)
        function(script, globs, locs, filename)

    assert compat.swap_attrs_compile(spy) is function
    try:

        @attrs.define
        class Probe:
            a: int = 1

    finally:
        assert compat.swap_attrs_compile(function) is spy
    assert any("Probe" in name for name in calls), calls  # its methods went through it
    assert Probe() == Probe(1) and repr(Probe(2)) == "Probe(a=2)"


def test_attrs_not_as_assumed_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import attr._make

    def other(script: str, globs: Any) -> None:
        raise AssertionError("not to be wrapped")

    monkeypatch.setattr(attr._make, compat.ATTRS_COMPILE, other)
    assert compat.swap_attrs_compile(None) is None
    assert compat.swap_attrs_compile(lambda *args: None) is None
    assert getattr(attr._make, compat.ATTRS_COMPILE) is other
    monkeypatch.delattr(attr._make, compat.ATTRS_COMPILE)
    assert compat.swap_attrs_compile(None) is None
