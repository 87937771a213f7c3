"""The MCP server's one answering path, without the SDK (early reader or SDK). Until the
index is loaded, a single root's current cache read in place answers, with a ``notice``."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from chunkls.chunking.corpus import CorpusRules
from chunkls.index.session import INDEX_ELSEWHERE_FROM, NotLoaded, Session
from chunkls.mcp.specs import LOADING_NOTICE
from chunkls.mcp.tools import Answer, Tools, checked, error, root_problem

if TYPE_CHECKING:
    from chunkls.index.queries import Queries

logger = logging.getLogger("chunkls")
T = TypeVar("T")


class McpService:
    """The session of one MCP session and the answers to its tool calls."""

    def __init__(self, roots: Sequence[Path], exclude: Sequence[str], cache: bool) -> None:
        from chunkls.storage.cache import cache_dir

        self.problems = [problem for root in roots if (problem := root_problem(root))]
        good = [root for root in roots if root_problem(root) is None]
        self.roots = [Path(root) for root in roots]
        self.session = Session(
            cache_dir() if cache else None,
            elsewhere_from=INDEX_ELSEWHERE_FROM,
            long_lived=True,
            read_in_place=len(good) == 1,
            base_rules=CorpusRules().extended(exclude_globs=exclude),
        )
        for root in good:
            self.session.add_root(root)
        self.loaded = False
        """Whether every root is indexed (until then, answers may come in place)."""

    def report_problems(self) -> None:
        """Log to stderr; the bad roots and configuration problems once, before stdin."""
        logging.basicConfig(
            stream=sys.stderr, level=logging.WARNING, format="%(message)s", force=True
        )
        logger.setLevel(logging.INFO)
        for problem in self.problems:
            logger.error("chunkls mcp: %s", problem)
        for folder in self.session.folders:
            for config in folder.config_problems:
                logger.warning("chunkls mcp: %s: %s", config.source, config.message)

    def answer(self, name: str, arguments: Mapping[str, Any] | None) -> Answer | None:
        """A tool call's answer; ``None`` while there is nothing to answer from (``load``)."""
        session = self.session
        if not session.folders:
            return error(self.no_folder())
        answer = self.ask(lambda queries: Tools(queries).call(name, arguments))
        if answer is None:
            return None
        answer = checked(name, answer, session.queries, self.roots)
        return answer if self.loaded else loading(answer)

    def no_folder(self) -> str:
        """Why there is nothing to answer from (no good root)."""
        return "chunkls has no folder to serve: " + "; ".join(self.problems)

    def ask(self, question: Callable[[Queries], T]) -> T | None:
        """A question through ``Session.ask``; ``None`` while nothing answers (``load``)."""
        try:
            return self.session.ask(question, while_loading=not self.loaded)
        except NotLoaded:
            return None

    def load(self) -> Iterator[None]:
        """Index every root, a step at a time: the caller answers calls between."""
        session = self.session
        for folder in list(session.folders):
            last = time.perf_counter()
            for _ in session.iter_index_folder(folder):
                if time.perf_counter() - last >= 0.005:
                    yield
                    last = time.perf_counter()
        self.loaded = True
        # what a missed ID's suggestions need, imported now rather than in the first
        # call that asks for an ID not indexed yet (an agent polling for a new file)
        import chunkls.index.suggest  # noqa: F401

        queries = session.queries
        for _folder, rel_path, reason in queries.skipped():
            logger.info("chunkls mcp: skipped %s: %s", rel_path, reason)
        logger.info(
            "chunkls mcp: indexed %d chunks of %d files", len(queries), queries.file_count()
        )

    def close(self) -> None:
        """Save the index's cache (once loaded) and let go of it."""
        if self.loaded:
            self.session.close()
        else:
            for folder in self.session.store.folders:
                self.session.store.stop_reading_in_place(folder)


def loading(answer: Answer) -> Answer:
    """An answer given while the index loads: it says so."""
    structured = answer.structured
    if structured is not None:
        structured = {**structured, "notice": LOADING_NOTICE}
    return Answer(f"{answer.text}\n\n({LOADING_NOTICE})", structured, answer.is_error, answer.links)
