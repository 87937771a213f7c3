"""The index kept true between MCP calls: a watcher thread notes changed paths for each
call's write step (when it cannot run, each call re-walks the roots: ``Session.rewalk``)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from chunkls.index.session import Session

logger = logging.getLogger("chunkls")

STEP_MS = 10
"""The watcher hands over what changed once nothing more changed for this long."""
DEBOUNCE_MS = 50
"""... or at the latest this long after the first change of a burst."""


class Freshness:
    """A file watcher telling a session what changed on disk."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.on_change: Callable[[], object] | None = None
        """Called (in the watcher's thread) after changes inside a root were noted."""

    def start(self, roots: Sequence[Path]) -> None:
        """Watch the roots (before they are indexed: nothing changed meanwhile is lost)."""
        if not roots:
            return
        self._thread = threading.Thread(
            target=self._watch, args=(list(roots),), name="chunkls-watch", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (the thread ends within ``STEP_MS``)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)

    def _watch(self, roots: list[Path]) -> None:
        import watchfiles  # a native module: loaded in the thread, off the start-up path

        try:
            for changes in watchfiles.watch(
                *roots,
                watch_filter=self.wanted,
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                stop_event=self._stop,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                self.changed(path for _change, path in changes)
        except Exception as problem:  # the watcher's own failure: fall back, keep serving
            if not self._stop.is_set():
                self.session.rewalk = True
                logger.warning(
                    "chunkls mcp: the file watcher stopped (%s); each call re-walks the roots",
                    str(problem) or type(problem).__name__,
                )

    def changed(self, paths: Iterable[str]) -> None:
        """Tell the session about changed absolute paths (in the watcher's thread)."""
        noted = False
        for path in sorted(paths):
            inside = self.session.queries.folder_of(path)
            if inside is not None:
                self.session.note_changed(inside[0], [inside[1]])
                noted = True
        if noted and self.on_change is not None:
            self.on_change()

    def wanted(self, _change: object, path: str) -> bool:
        """Whether a change is outside folders the rules leave out (watcher thread; reads)."""
        for folder in list(self.session.folders):
            for root in (os.fspath(folder.root), os.fspath(folder.root_resolved)):
                if path.startswith(root + os.sep):
                    parts = path[len(root) + 1 :].split(os.sep)
                    return folder.rules.exclude_dirs.isdisjoint(parts)
        return True
