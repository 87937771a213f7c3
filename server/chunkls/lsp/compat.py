"""The one place where chunkls reaches into a dependency's private state (each name has a
test in ``tests/unit/test_compat.py``); it imports neither pygls nor lsprotocol."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pygls.protocol import JsonRPCProtocol

PENDING_FUTURES = "_request_futures"
"""``JsonRPCProtocol._request_futures`` (pygls 2.0-2.1): running handlers' futures
by message id, removed only when a *request* ends, so a long session grows by one
per notification, with no public hook. Upstream: no issue names this leak; the
nearest are openlawlibrary/pygls#608 (``_result_types`` grows for unanswered
requests) and #606 (``lsp_shutdown`` iterates over ``_request_futures`` while it
may change)."""


class FreedFutures(dict[Any, Any]):
    """Pending futures by message id that drop themselves once done. Iterating goes over a
    copy: pygls's ``shutdown`` cancels them while iterating (openlawlibrary/pygls#606)."""

    def __setitem__(self, key: Any, future: Any) -> None:
        super().__setitem__(key, future)
        if hasattr(future, "add_done_callback"):  # a concurrent or an asyncio future
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


ATTRS_COMPILE = "_compile_and_eval"
"""``attr._make._compile_and_eval(script, globs, locs=None, filename="")`` (attrs
24.3-26.1) compiles generated methods at every start, uncached (upstream:
python-attrs/attrs#575, microsoft/lsprotocol#441); ``kept_code`` runs kept code."""

CompileAndEval = Callable[[str, Any, Any, str], None]


def swap_attrs_compile(function: CompileAndEval | None) -> CompileAndEval | None:
    """Put ``function`` in attrs's place; the one there (``None``: attrs not as assumed)."""
    try:
        import attr._make as made
    except ImportError:
        return None
    current: CompileAndEval | None = getattr(made, ATTRS_COMPILE, None)
    if not callable(current):
        return None
    try:
        if list(inspect.signature(current).parameters) != ["script", "globs", "locs", "filename"]:
            return None
    except (TypeError, ValueError):
        return None
    if function is not None:
        setattr(made, ATTRS_COMPILE, function)
    return current
