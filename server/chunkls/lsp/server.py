"""The language server: its state and the one path that changes it. Every index change goes
through ``catch_up`` or ``index_folders`` (then the client is told), on the client's events,
in order; features read ``queries`` only, through ``Session.ask``."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from chunkls import __version__
from chunkls.chunking.corpus import CorpusRules
from chunkls.ids.positions import Encoding
from chunkls.index.folder import FolderInfo
from chunkls.index.queries import Queries
from chunkls.index.session import INDEX_ELSEWHERE_FROM, Session
from chunkls.lsp.contract import STATUS_NOTIFICATION, Status
from chunkls.lsp.documents import Buffer, DocumentContext
from chunkls.lsp.logs import ClientLog
from chunkls.lsp.protocol import ChunkProtocol
from chunkls.lsp.settings import Settings, parse_settings
from chunkls.lsp.uris import path_of
from chunkls.runtime.gc_budget import freeze_after_load
from chunkls.runtime.memory import release_memory
from chunkls.storage.cache import cache_dir

logger = logging.getLogger("chunkls")

_YIELD_EVERY = 0.005
"""Seconds of indexing work between two pauses for the event loop."""
TRIM_EVERY = 0.2
"""Least seconds between two returns of free heap memory after index changes."""
_PAUSE = 0.0005
"""How long each pause lets requests run (several loop turns: read, handle, write)."""


class ChunkServer(LanguageServer):
    """chunkls's language server."""

    def __init__(self) -> None:
        super().__init__(
            "chunkls",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=ChunkProtocol,
        )
        self.session = Session(
            cache_dir(), elsewhere_from=INDEX_ELSEWHERE_FROM, long_lived=True, citations=True
        )
        """The workspace folders, their index and the one path that changes it."""
        # handlers answer from the index as it is; an incomplete answer (texts gone
        # from the cache, a stale ID's git history wanted) has the write step soon
        self.session.on_stale = self.write_step_soon
        self.session.histories_inline = False  # (git's log is read off the loop)
        self._history: asyncio.Task[Any] | None = None
        self.on_index_changed: list[Callable[[], None]] = []
        """Callbacks run after the index changed (diagnostics register one)."""
        self.on_document_changed: list[Callable[[str, bool], None]] = []
        """Callbacks run with (uri, typing) after a document opened or changed."""
        self.on_document_closed: list[Callable[[str], None]] = []
        """Callbacks run with the URI after a document closed."""
        self.settings = Settings()
        """Editor settings, merged into each folder's corpus rules."""
        self.buffers: dict[str, Buffer] = {}
        """Open document URI -> its latest chunking."""
        self.contexts: dict[str, DocumentContext] = {}
        """Open document URI -> its context at its latest version (lines, IDs written)."""
        self.tasks: set[asyncio.Task[Any]] = set()
        """Background tasks still running (kept so they are not collected)."""
        self.indexing = 0
        self.reported: set[tuple[str, str]] = set()
        """(path, reason) pairs already reported, so each is said once."""
        self.shutting_down = False
        """Set by ``shutdown``: nothing more is sent to the client after it."""
        self.logs: ClientLog | None = None
        self.located: dict[str, tuple[int, tuple[str | None, FolderInfo | None, str | None]]] = {}
        """URI -> (folders version, ``documents.locate``'s answer)."""
        self._trimmed = 0.0
        self._lens_refresh: asyncio.Task[Any] | None = None
        self._lens_refresh_again = False
        """Whether the index changed again while that request was under way."""
        self._encoding: Encoding | None = None
        self._flush: asyncio.Task[Any] | None = None
        """The task that takes the write step soon, if one is waiting."""

    @property
    def queries(self) -> Queries:
        """What the features ask (reading only)."""
        return self.session.queries

    # -- helpers -----------------------------------------------------------------

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log server errors; tell the user only while the connection is usable
        (after ``exit`` the output is closed, and telling would fail again)."""
        if self.shutting_down or isinstance(error, (BrokenPipeError, ValueError, OSError)):
            logger.error("%s: %r", getattr(source, "__name__", source), error)
            return
        super().report_server_error(error, source)

    def spawn(self, coroutine: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run a background task, tracked, with its exception logged."""
        task = asyncio.get_running_loop().create_task(coroutine, name=name)
        self.tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self.tasks.discard(finished)
            self.session.settle()  # (what it read may have been incomplete)
            if not finished.cancelled() and finished.exception() is not None:
                error = finished.exception()
                logger.error("%s failed: %r", name, error, exc_info=error)

        task.add_done_callback(done)
        return task

    @property
    def encoding(self) -> Encoding:
        """The negotiated position encoding (fixed once ``initialize`` is done)."""
        if self._encoding is None:
            try:
                kind = self.workspace.position_encoding
            except Exception:  # no workspace before ``initialize``
                return "utf-16"
            # ``PositionEncodingKind`` is a ``str`` enum: equal to its value
            self._encoding = (
                "utf-8" if kind == "utf-8" else "utf-32" if kind == "utf-32" else "utf-16"
            )
        return self._encoding

    def capability(self, *path: str) -> Any:
        """A client capability by attribute path, or ``None``."""
        value: Any = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
            if value is None:
                return None
        return value

    def report_once(self, path: str, reason: str) -> None:
        """Tell the user about a problem once per (path, reason)."""
        if (path, reason) in self.reported:
            return
        self.reported.add((path, reason))
        logger.warning("%s: %s", path, reason)

    # -- the index: the one path that changes it --------------------------------

    def index_folders(
        self, folders: Iterable[FolderInfo], title: str = "Indexing chunks"
    ) -> asyncio.Task[None]:
        """Index folders from disk in the background, with progress and status; the
        server counts as indexing from this call on, not from when the task runs."""
        self.indexing += 1
        self.send_status()
        return self.spawn(self._index_folders(list(folders), title), "index")

    async def _index_folders(self, folders: list[FolderInfo], title: str) -> None:
        token: str | None = None
        started = time.perf_counter()
        try:
            if self.capability("window", "work_done_progress"):
                token = await self._progress_token(title)
            for folder in folders:
                last_yield = time.perf_counter()
                last_percent = -1
                for done, total in self.session.iter_index_folder(folder):
                    if time.perf_counter() - last_yield >= _YIELD_EVERY:
                        percent = done * 100 // total if total else 100
                        if token is not None and percent != last_percent:
                            last_percent = percent
                            self.work_done_progress.report(
                                token,
                                types.WorkDoneProgressReport(
                                    message=f"{folder.name}: {done}/{total} files",
                                    percentage=percent,
                                ),
                            )
                        await asyncio.sleep(_PAUSE)
                        last_yield = time.perf_counter()
                        if folder not in self.queries.folders:
                            break  # removed while indexing
                last_yield = time.perf_counter()
                for _ in self.session.scan_citations(folder):
                    if time.perf_counter() - last_yield >= _YIELD_EVERY:
                        await asyncio.sleep(_PAUSE)
                        last_yield = time.perf_counter()
                for skipped_in, rel_path, reason in self.queries.skipped():
                    if skipped_in is folder:
                        self.report_once(str(folder.root / rel_path), f"skipped: {reason}")
        finally:
            self.indexing -= 1
            elapsed = time.perf_counter() - started
            message = f"Indexed {len(self.queries)} chunks in {elapsed:.1f} s"
            if token is not None and not self.shutting_down:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            if token is not None:
                self.work_done_progress.tokens.pop(token, None)  # pygls keeps it otherwise
            logger.info("%s", message)
            freeze_after_load()
            release_memory()
            self.index_changed()

    async def _progress_token(self, title: str) -> str | None:
        """A begun ``$/progress`` token, or ``None`` if the client refuses one."""
        token = f"chunkls-index-{uuid.uuid4().hex[:8]}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), 10)
            self.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title=title, percentage=0, cancellable=False)
            )
        except Exception:
            logger.info("client refused a progress token", exc_info=True)
            return None
        return token

    def write_step_soon(self) -> None:
        """An answer was incomplete (``Session.settle``): the write step soon."""
        store = self.session.store
        if store.texts_missing:
            self.queue_catch_up()
        if store.histories_wanted:
            self.queue_history()

    def queue_catch_up(self) -> None:
        """Take the write step shortly (a burst of changes at once)."""
        if self._flush is None or self._flush.done():
            self._flush = self.spawn(self._catch_up_soon(), "refresh")

    def queue_history(self) -> None:
        """A question wanted a folder's git history: read it in a thread (other
        requests are answered meanwhile), then install it; the client is told."""
        if self._history is None or self._history.done():
            try:
                self._history = self.spawn(self._open_histories(), "git history")
            except RuntimeError:  # no loop running: the next write step opens it
                self.session.histories_inline = True

    async def _open_histories(self) -> None:
        while self.session.store.histories_wanted and not self.shutting_down:
            await asyncio.to_thread(self.session.prepare_histories)
            if self.session.open_histories():
                self.index_changed()

    async def _catch_up_soon(self) -> None:
        await asyncio.sleep(0.05)  # let a burst (a branch switch) arrive
        self.catch_up()

    def catch_up(self) -> None:
        """The write step: what changed on disk, and texts found missing, read
        again; the files that could not be chunked reported; the client told."""
        for folder, rel_path in self.session.catch_up():
            reason = self.queries.skip_reason(rel_path, folder)
            if reason is not None:
                self.report_once(str(folder.root / rel_path), f"skipped: {reason}")
        self.index_changed()

    def index_changed(self) -> None:
        """Tell the client the index moved: lenses and status."""
        if self.shutting_down:
            return
        self.send_status()
        now = time.monotonic()
        if now - self._trimmed >= TRIM_EVERY:  # saves churn the heap: give back what is free
            self._trimmed = now
            release_memory()
        if self.capability("workspace", "code_lens", "refresh_support"):
            if self._lens_refresh is None or self._lens_refresh.done():
                self._lens_refresh = self.spawn(self._refresh_lenses(), "codeLens refresh")
            else:
                self._lens_refresh_again = True  # one more when the client has answered
        for callback in self.on_index_changed:
            callback()

    async def _refresh_lenses(self) -> None:
        """Ask the client to refresh lenses, one request at a time (a burst asks once more)."""
        while True:
            self._lens_refresh_again = False
            await asyncio.wait_for(self.workspace_code_lens_refresh_async(None), 10)
            if not self._lens_refresh_again or self.shutting_down:
                return

    def send_status(self) -> None:
        """Send ``chunkls/status`` (chunk, file and skipped-file counts, whether indexing)."""
        queries = self.queries
        try:
            status = Status(
                indexing=self.indexing > 0,
                chunks=len(queries),
                files=queries.file_count(),
                skipped=sum(1 for _ in queries.skipped()),
            )
            self.protocol.notify(STATUS_NOTIFICATION, status)
        except Exception:
            logger.debug("could not send status", exc_info=True)

    def apply_settings(self, raw: object, initial: bool = False) -> None:
        """Take new settings; re-index the folders whose corpus rules changed.
        ``initial``: the initialization options (nothing is indexed or shown
        yet, and nothing may be sent before the ``initialize`` answer)."""
        problems: list[str] = []
        settings = parse_settings(raw, problems)
        for problem in problems:
            self.report_once("settings", problem)
        old, self.settings = self.settings, settings
        if initial:
            return
        if old.exclude == settings.exclude:
            if old != settings:  # lenses, diagnostics: what clients show changed
                self.index_changed()
            return
        self.reload_rules(self.queries.folders)

    def reload_rules(self, folders: Iterable[FolderInfo]) -> list[FolderInfo]:
        """Read folders' corpus rules again; re-index (and return) those that changed."""
        base = CorpusRules().extended(exclude_globs=self.settings.exclude)
        affected = []
        for folder in folders:
            if self.session.reload_rules(folder, base):
                affected.append(folder)
            for problem in folder.config_problems:
                self.report_once(problem.source, problem.message)
        if affected:
            self.buffers.clear()
            self.index_folders(affected, "Re-indexing chunks")
        else:
            self.index_changed()
        return affected

    def add_folder(self, uri: str) -> FolderInfo | None:
        """Add a workspace folder to the index (not yet indexed)."""
        path = path_of(uri)
        if path is None:
            logger.warning("ignoring workspace folder %s: not a file: URI", uri)
            return None
        root = Path(path)
        if any(folder.root == root for folder in self.queries.folders):
            return None
        self.session.base_rules = CorpusRules().extended(exclude_globs=self.settings.exclude)
        folder = self.session.add_root(root)
        for problem in folder.config_problems:
            self.report_once(problem.source, problem.message)
        return folder
