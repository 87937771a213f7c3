"""The index kept true between MCP calls, without re-walking the tree.

A file watcher (``watchfiles``: inotify, FSEvents or ReadDirectoryChangesW
under one API) runs in a thread and only collects the paths that changed. Each
tool call first applies them (``catch_up``) through the index's one change path
for disk changes (``WorkspaceIndex.refresh``): files written, created, renamed
or deleted, whole folders too. A change to a root's ``pyproject.toml`` reloads
its corpus rules (``[tool.chunkls]``) and, when they changed, re-indexes that
root (unchanged files are reused). The index is touched by the caller's thread
only.

Why a watcher and not a stat check per call: stat-ing every indexed file costs
about 6 µs a file on the development machine, 12 ms a call for a 2,000-file
tree (docs/mcp.md), over the 5 ms a call may take; draining the watcher's set
costs microseconds whatever the tree's size. A change reaches the set about
``STEP_MS`` after it is made, so a call that follows a write by less than that
may not see it yet (an agent's own write comes back to it through its client
first). When the watcher cannot run (no inotify watches left, say), each call
re-walks the roots instead, reusing every unchanged file (logged once).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from chunkls.chunking import CorpusRules, load_rules
from chunkls.index import Folder, WorkspaceIndex

logger = logging.getLogger("chunkls")

STEP_MS = 10
"""The watcher hands over what changed once nothing more changed for this long."""
DEBOUNCE_MS = 50
"""... or at the latest this long after the first change of a burst."""
RULES_FILE = "pyproject.toml"


class Freshness:
    """Changes on disk since the previous call, applied to an index before the next."""

    def __init__(self, index: WorkspaceIndex, base_rules: CorpusRules) -> None:
        self.index = index
        self.base_rules = base_rules
        """The rules before a folder's ``[tool.chunkls]`` (the command line's)."""
        self.failed: str | None = None
        """Why the watcher stopped, when it did (each call then re-walks)."""
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

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
                with self._lock:
                    self._pending.update(path for _change, path in changes)
        except Exception as problem:  # the watcher's own failure: fall back, keep serving
            self.failed = str(problem) or type(problem).__name__
            if not self._stop.is_set():
                logger.warning(
                    "chunkls mcp: the file watcher stopped (%s); each call re-walks the roots",
                    self.failed,
                )

    def wanted(self, _change: object, path: str) -> bool:
        """Whether a change can matter: not inside a folder the corpus rules leave
        out (``.git``, ``.venv``, ``build``, ``exclude-dirs``: a commit or an
        install there makes thousands of changes). Runs in the watcher's thread;
        reads only."""
        for folder in list(self.index.folders):
            for root in (os.fspath(folder.root), os.fspath(folder.root_resolved)):
                if path.startswith(root + os.sep):
                    parts = path[len(root) + 1 :].split(os.sep)
                    return folder.rules.exclude_dirs.isdisjoint(parts)
        return True

    def pending(self) -> bool:
        """Whether changes wait to be applied."""
        with self._lock:
            return bool(self._pending)

    def catch_up(self) -> list[str]:
        """Apply what changed on disk since the previous call; returns the
        root-relative paths whose chunks changed."""
        with self._lock:
            paths, self._pending = self._pending, set()
        if self.failed is not None and not self._stop.is_set():
            for folder in list(self.index.folders):
                self.index.index_folder(folder)
            return []
        by_folder: dict[Folder, list[str]] = {}
        for path in sorted(paths):
            inside = self.index.folder_of(path)
            if inside is not None:
                by_folder.setdefault(inside[0], []).append(inside[1])
        changed: list[str] = []
        for folder, rel_paths in by_folder.items():
            if RULES_FILE in rel_paths and self.reload_rules(folder):
                continue  # re-indexed whole
            changed += self.index.refresh(folder, rel_paths)
        return changed

    def reload_rules(self, folder: Folder) -> bool:
        """Read a folder's ``[tool.chunkls]`` again; re-index it when its rules
        changed (returns whether they did)."""
        rules, problems = load_rules(folder.root, self.base_rules)
        for problem in problems:
            logger.warning("chunkls mcp: %s: %s", problem.source, problem.message)
        if rules == folder.rules:
            return False
        logger.info("chunkls mcp: %s: corpus rules changed; re-indexing", folder.root)
        folder.rules = rules
        self.index.index_folder(folder)
        return True
