"""The workspace of a process: its roots, rules and index; the one path that writes.

Front doors ask ``queries``, which only read; everything that changes the index is a step
here, before a question, never inside one. ``ask`` is the one freshness rule.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from chunkls.chunking.corpus import RULES_FILE, CorpusRules, load_rules
from chunkls.index.folder import Folder, FolderInfo, held
from chunkls.index.queries import Queries, read_view
from chunkls.index.store import ChunkStore
from chunkls.runtime.log import logger

if TYPE_CHECKING:
    from chunkls.index.bulk import BulkIndexer, Progress
    from chunkls.index.history import GitHistory

# the indexing side (numpy, multiprocessing) is imported when something is indexed

T = TypeVar("T")

INDEX_ELSEWHERE_FROM = 2_000
"""Files to chunk from which a server indexes a folder in another process (into its cache,
then loaded from it): the server's heap stays that of a warm start."""

ASK_ROUNDS = 3
"""Most times ``ask`` takes the write step and asks (a damaged cache read in place:
loaded, then its damaged texts read from the files)."""


class NotLoaded(Exception):
    """``Session.ask`` while loading: nothing current to answer from yet."""


class Session:
    """A process's folders, their index and its freshness."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        workers: int | None = None,
        elsewhere_from: int | None = None,
        long_lived: bool = False,
        read_in_place: bool = False,
        citations: bool = False,
        base_rules: CorpusRules | None = None,
    ) -> None:
        self.store = ChunkStore(cache_dir)
        """The chunks; what ``queries`` reads."""
        self._indexing = (workers, elsewhere_from, long_lived)
        self.read_in_place = read_in_place and cache_dir is not None
        """Whether a folder not indexed yet is answered from its current cache read in place."""
        self.citations = citations
        """Whether the chunk IDs cited in the folders' documents are kept
        (``scan_citations``, re-read by ``refresh``)."""
        self.base_rules = base_rules or CorpusRules()
        """The rules before each folder's ``[tool.chunkls]`` (command line, settings)."""
        self.waiting: list[Folder] = []
        """Folders added and neither indexed nor read in place yet."""
        self._checked: set[Folder] = set()
        """Folders whose cache was checked for reading in place (once each)."""
        self.loading: set[Folder] = set()
        self.rewalk = False
        """Set when nothing reports changes any more: each ``catch_up`` then
        indexes every folder again (unchanged files reused)."""
        self._prepared: dict[Folder, GitHistory] = {}
        """Git histories ``prepare_histories`` opened, for ``open_histories`` to install."""
        self.histories_inline = True
        """Whether ``catch_up`` opens the git histories questions wanted (a server
        opens them in a thread instead: ``open_histories``, then ``catch_up``)."""
        self._changed: dict[Folder, set[str]] = {}
        self._lock = threading.Lock()
        """Held while changes are noted (a watcher's thread) or taken."""
        self.on_stale: Callable[[], None] | None = None
        """A server's: take the write step soon (an answer was incomplete: ``settle``)."""

    @cached_property
    def bulk(self) -> BulkIndexer:
        from chunkls.index.bulk import BulkIndexer

        return BulkIndexer(self.store, *self._indexing)

    @cached_property
    def queries(self) -> Queries:
        return read_view(self.store)

    @property
    def folders(self) -> Sequence[FolderInfo]:
        return self.store.folders

    # -- folders -------------------------------------------------------------------

    def add_root(self, root: Path, rules: CorpusRules | None = None) -> FolderInfo:
        """Add a folder (its configured rules, or ``rules``), indexed by the next ``catch_up``."""
        folder = self.store.add_folder(root, self.base_rules, rules)
        self.waiting.append(folder)
        return folder

    def remove_folder(self, folder: FolderInfo) -> None:
        """Drop a folder and its chunks and citations (its cache stays)."""
        folder = held(folder)
        self.store.stop_reading_in_place(folder)
        if self.citations:
            self.store.citations.remove_folder(folder)
        self.store.remove_folder(folder)
        if folder in self.waiting:
            self.waiting.remove(folder)
        with self._lock:
            self._changed.pop(folder, None)

    # -- the write path ----------------------------------------------------------------

    def note_changed(self, folder: FolderInfo, rel_paths: Iterable[str]) -> None:
        """Paths that changed on disk, re-read by the next ``catch_up`` (any thread)."""
        folder = held(folder)
        with self._lock:
            self._changed.setdefault(folder, set()).update(rel_paths)

    def pending(self) -> bool:
        """Whether changes wait for ``catch_up``."""
        with self._lock:
            return bool(self._changed)

    def catch_up(self, progress: Progress | None = None) -> list[tuple[FolderInfo, str]]:
        """Bring the index up to date with the disk (new folders read in place or
        indexed, changed paths and lost texts re-read, a stale cache read in place
        loaded); returns the (folder, path) whose chunks changed."""
        store = self.store
        self.read_in_place_if_current()
        for folder in list(self.waiting):
            self.index_folder(folder, progress)
        for folder in list(store.folders):
            stale = folder.storage.stale
            if folder.read_in_place and (stale is not None or store.texts_missing):
                logger().info(
                    "%s: the index cache read in place is stale (%s)",
                    folder.root,
                    stale or "texts missing",
                )
                store.texts_missing.clear()
                if folder in self.loading:  # the load under way answers from now on
                    store.stop_reading_in_place(folder)
                else:
                    self.index_folder(folder, progress)
        if self.rewalk:
            for folder in [f for f in store.folders if f not in self.loading]:
                self.index_folder(folder, progress)
        with self._lock:  # a folder read in place keeps its changes until it is loaded
            changed = {f: paths for f, paths in self._changed.items() if not f.read_in_place}
            for folder in changed:
                del self._changed[folder]
        touched: list[tuple[FolderInfo, str]] = []
        for folder, rel_paths in changed.items():
            if folder not in store.folders:
                continue
            if RULES_FILE in rel_paths and self.reload_rules(folder):
                logger().info("%s: corpus rules changed; re-indexing", folder.root)
                self.index_folder(folder, progress)
                continue
            touched += [(folder, path) for path in self.refresh(folder, sorted(rel_paths))]
        if self.histories_inline:
            self.open_histories()
        missing = sorted(store.texts_missing, key=lambda key: (key[0].position, key[1]))
        store.texts_missing.difference_update(missing)
        for folder in dict.fromkeys(folder for folder, _ in missing):
            if folder in store.folders:
                paths = [rel_path for each, rel_path in missing if each is folder]
                touched += [(folder, path) for path in self.refresh(folder, paths)]
        return touched

    def prepare_histories(self) -> None:
        """Read the git logs ``open_histories`` needs (any thread: a server runs
        this slow part off its loop; nothing a question reads changes)."""
        for folder in list(self.store.histories_wanted):
            self._prepared[folder] = self._history(folder)
            self._prepared[folder].open()

    def open_histories(self) -> bool:
        """Open the git history of the folders a question wanted it of (the log
        read, ``git cat-file`` started; again for one whose process ended): the
        store's answers change (its version moves). Whether any opened."""
        store = self.store
        opened = False
        for folder in list(store.histories_wanted):
            history = self._history(folder)
            self._prepared.pop(folder, None)
            history.open()
            if folder in store.folders:
                store.git_histories[folder] = history  # (once open: a question reads it)
                opened = True
            store.histories_wanted.discard(folder)
        if opened:
            store.version += 1  # (answers memoised by version were made without it)
        return opened

    def _history(self, folder: Folder) -> GitHistory:
        """A folder's git history: prepared, installed, or made now."""
        from chunkls.index.history import GitHistory

        found = self._prepared.get(folder) or self.store.git_histories.get(folder)
        return found or GitHistory(folder.root_resolved)

    def ask(
        self,
        question: Callable[[Queries], T],
        progress: Progress | None = None,
        *,
        while_loading: bool = False,
        catch_up: bool = True,
    ) -> T:
        """The one freshness rule: the write step, then the question; both again
        while the answer is incomplete (``ASK_ROUNDS`` at most). ``while_loading``
        (a server's background load): only a cache read in place, unchanged since,
        answers, else ``NotLoaded``. ``catch_up`` false (the LSP, which takes the
        write step on its events): the index as it is, then ``settle``."""
        answer: T
        for round_ in range(1, ASK_ROUNDS + 1):
            self._answerable(while_loading)
            if catch_up:
                self.catch_up(progress)
                self._answerable(while_loading)  # (the cache read in place found stale)
            try:
                answer = question(self.queries)
            except Exception:  # (an unknown resource): asked again if something was missing
                if not catch_up or round_ == ASK_ROUNDS or not self.queries.incomplete:
                    raise
                continue
            if not catch_up:
                self.settle()
                break
            if not self.queries.incomplete:
                break
        return answer

    def _answerable(self, while_loading: bool) -> None:
        if while_loading:
            self.read_in_place_if_current()  # (each folder is tried once)
            in_place = any(folder.read_in_place for folder in self.folders)
            if not in_place or self.pending():
                raise NotLoaded

    def settle(self) -> None:
        """After an answer from the index as it is: if incomplete, ``on_stale``."""
        if self.on_stale is not None and self.queries.incomplete:
            self.on_stale()

    def read_in_place_if_current(self) -> None:
        """Answer each folder not indexed yet from its current cache read in place."""
        if self.read_in_place:
            for folder in [f for f in self.waiting if f not in self._checked]:
                self._checked.add(folder)
                self.try_in_place(folder)

    def try_in_place(self, folder: Folder) -> bool:
        """Answer a folder (the workspace's only one) from its cache read in place,
        if the cache holds it as it is on disk; whether it does."""
        from chunkls.storage.in_place import open_current

        store = self.store
        if store.cache_dir is None or len(store.folders) != 1 or folder.files:
            return False
        found = open_current(folder.root, folder.root_resolved, folder.rules, store.cache_dir)
        if found is None:
            return False
        store.read_in_place(folder, found)
        if folder in self.waiting:
            self.waiting.remove(folder)
        return True

    def index_folder(self, folder: FolderInfo, progress: Progress | None = None) -> None:
        """Index a whole folder from disk (and its cache)."""
        for done, total in self.iter_index_folder(folder):
            if progress is not None:
                progress(done, total)

    def iter_index_folder(self, folder: FolderInfo) -> Iterator[tuple[int, int]]:
        """Index a whole folder step by step, yielding (files done, files in all).
        A folder read in place is answered from there until the last step."""
        folder = held(folder)
        if folder in self.waiting:
            self.waiting.remove(folder)
        self.loading.add(folder)
        try:
            yield from self.bulk.iter_index_folder(folder)
        finally:
            self.loading.discard(folder)
        if folder.read_in_place:
            self.store.stop_reading_in_place(folder)
            self.store.save(folder)  # (not while it was read in place)

    def refresh(self, folder: Folder, rel_paths: Iterable[str]) -> list[str]:
        """Re-read paths (files or folders) and their citations; the paths whose entry changed."""
        from chunkls.index.refresh import refresh

        rel_paths = list(rel_paths)
        changed = refresh(self.store, folder, rel_paths)
        if self.citations:
            self.store.citations.refresh(folder, rel_paths)
        return changed

    def scan_citations(self, folder: FolderInfo) -> Iterator[None]:
        """Scan a folder's documents for the chunk IDs they cite, yielding per file."""
        if self.citations:
            yield from self.store.citations.scan_folder(folder)

    def reload_rules(self, folder: FolderInfo, base_rules: CorpusRules | None = None) -> bool:
        """Read a folder's ``[tool.chunkls]`` again; whether its rules changed."""
        folder = held(folder)
        if base_rules is not None:
            self.base_rules = base_rules
        rules, problems = load_rules(folder.root, self.base_rules)
        folder.config_problems = problems
        changed = rules != folder.rules  # (its search mode alone changes no chunk)
        folder.rules = rules
        return changed

    def close(self) -> None:
        """Stop any separate indexing process; save and close every folder's cache."""
        if "bulk" in self.__dict__:
            self.bulk.stop()
        self.store.close()


def build_index(
    roots: Iterable[Path],
    base_rules: CorpusRules | None = None,
    progress: Progress | None = None,
    cache_dir: Path | None = None,
    workers: int | None = None,
) -> Session:
    """A session of folders indexed from scratch, or only what changed since the
    cache in ``cache_dir`` was written (tests and benchmarks)."""
    session = Session(cache_dir, workers=workers, base_rules=base_rules)
    for root in roots:
        session.index_folder(session.add_root(root), progress)
    session.close()
    return session
