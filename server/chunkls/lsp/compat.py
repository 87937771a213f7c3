"""The one place where chunkls reaches into pygls's private state.

Everything else in ``chunkls`` uses pygls, lsprotocol and cattrs through their
public API only (``tests/unit/test_public_api.py`` fails otherwise). Each private
name used here has a test in ``tests/unit/test_compat.py`` that fails loudly when
the installed pygls changes it.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from pygls.protocol import JsonRPCProtocol

PENDING_FUTURES = "_request_futures"
"""``JsonRPCProtocol._request_futures``: the futures of handlers that are still
running, by message id (pygls 2.0-2.1).

pygls files a future there for every asynchronous, threaded or generator
handler, notifications and every step of its built-in handlers included, under a
fresh uuid, and removes it only when a *request* is answered or cancelled: a long
session grows by one future per ``didOpen``/``didChange``/``didSave``. No upstream
issue names this leak that we could find; the nearest are openlawlibrary/pygls#608
(``_result_types`` grows for unanswered requests) and openlawlibrary/pygls#606
(``lsp_shutdown`` iterates over ``_request_futures`` while it may change), both
open. pygls offers no public hook on a handler's future, hence this module."""


class FreedFutures(dict[Any, Any]):
    """Pending futures by message id that drop themselves once done.

    Iterating goes over a copy: pygls's ``shutdown`` cancels every pending
    future while iterating, and a cancelled thread future runs its callbacks
    (which remove it) at once (openlawlibrary/pygls#606)."""

    def __setitem__(self, key: Any, future: Any) -> None:
        super().__setitem__(key, future)
        if isinstance(future, Future) or hasattr(future, "add_done_callback"):
            future.add_done_callback(lambda done: self.forget(key, done))

    def forget(self, key: Any, future: Any) -> None:
        """Remove ``key`` if it still stands for ``future``."""
        if self.get(key) is future:
            del self[key]

    def items(self) -> Any:
        return list(super().items())

    def values(self) -> Any:
        return list(super().values())

    def keys(self) -> Any:
        return list(super().keys())


def free_finished_futures(protocol: JsonRPCProtocol) -> None:
    """Make ``protocol`` forget each handler's future as soon as it is done."""
    pending = getattr(protocol, PENDING_FUTURES)
    if not isinstance(pending, dict):
        raise TypeError(f"pygls changed {PENDING_FUTURES}: {type(pending).__name__}, not a dict")
    setattr(protocol, PENDING_FUTURES, FreedFutures(pending))


def pending_futures(protocol: JsonRPCProtocol) -> dict[Any, Any]:
    """The futures of ``protocol``'s handlers still running, by message id."""
    pending: dict[Any, Any] = getattr(protocol, PENDING_FUTURES)
    return pending
