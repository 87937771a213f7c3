"""``chunkls mcp``: the tools over stdio, with the official MCP Python SDK.

The server answers ``initialize`` at once and indexes its roots in a thread
meanwhile (the persistent cache makes a warm start quick); a tool call waits
for that, applies what changed on disk since the previous call
(``chunkls.mcp.freshness``), then answers (``chunkls.mcp.tools``). Until the
index is loaded, a call on a single root whose cache is current (and where
nothing changed since it was checked) is answered from the cache read in
place, as the CLI answers (``chunkls.index.ondisk``): an agent's first call
does not wait for the load. A bad root is reported in every answer rather
than ending the process: the agent sees why. A call still in flight when the
client closes stdin is answered before the server exits
(``chunkls.mcp.inflight``). stdout is the protocol: logs go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any, cast

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from chunkls import __version__
from chunkls.chunking import CorpusRules
from chunkls.index import WorkspaceIndex
from chunkls.index.ondisk import DiskIndex, Stale, open_current
from chunkls.mcp.freshness import Freshness
from chunkls.mcp.inflight import DrainingInput, InFlight, TrackingOutput
from chunkls.mcp.tools import (
    INSTRUCTIONS,
    SPECS,
    Answer,
    Tools,
    checked,
    error,
    root_problem,
)
from chunkls.runtime.early_reader import EarlyReader
from chunkls.runtime.streams import discard_output
from chunkls.storage.cache import cache_dir

logger = logging.getLogger("chunkls")

INDEX_ELSEWHERE_FROM = 2_000
"""Files to chunk from which a root is indexed in a separate process (as the
language server does): the server's heap stays that of a warm start."""


class ChunkService:
    """The index, its freshness and the tools, for one MCP session."""

    def __init__(self, roots: Sequence[Path], exclude: Sequence[str], cache: bool) -> None:
        self.problems = [problem for root in roots if (problem := root_problem(root))]
        for problem in self.problems:
            logger.error("chunkls mcp: %s", problem)
        good = [root for root in roots if root_problem(root) is None]
        self.index = WorkspaceIndex(
            cache_dir() if cache else None, elsewhere_from=INDEX_ELSEWHERE_FROM, long_lived=True
        )
        base = CorpusRules().extended(exclude_globs=exclude)
        self.folders = [self.index.add_folder(root, base) for root in good]
        for folder in self.folders:
            for config in folder.config_problems:
                logger.warning("chunkls mcp: %s: %s", config.source, config.message)
        self.freshness = Freshness(self.index, base)
        self.tools = Tools(self.index)
        self._built: asyncio.Task[None] | None = None
        self._base = base
        self._cache = cache
        self.in_place: DiskIndex | None = None
        """A single root's cache read in place, while the index loads (then closed)."""

    def start(self) -> None:
        """Start watching, read a current cache in place, then index in a thread
        (call in the event loop)."""
        self.freshness.start([folder.root for folder in self.folders])
        if self._cache and len(self.folders) == 1:
            # checked after the watcher started: a change from now on is pending
            self.in_place = open_current(self.folders[0].root, self._base, cache_dir())
        self._built = asyncio.create_task(asyncio.to_thread(self.index_roots))

    def index_roots(self) -> None:
        """Index every root (in a thread, from ``start``)."""
        for folder in self.folders:
            self.index.index_folder(folder)
        skipped = list(self.index.skipped())
        for _folder, rel_path, reason in skipped:
            logger.info("chunkls mcp: skipped %s: %s", rel_path, reason)
        logger.info(
            "chunkls mcp: indexed %d chunks of %d files", len(self.index), self.index.file_count()
        )

    async def answer(self, name: str, arguments: dict[str, Any] | None) -> Answer:
        """One tool call's answer, on a current index."""
        early = self._answer_in_place(name, arguments)
        if early is not None:
            return early
        if self._built is not None:
            await asyncio.shield(self._built)
        self._loaded()
        if not self.folders:
            return error("chunkls has no folder to serve: " + "; ".join(self.problems))
        self.freshness.catch_up()
        return self._checked(name, self.tools.call(name, arguments))

    def _answer_in_place(self, name: str, arguments: dict[str, Any] | None) -> Answer | None:
        """The answer from the cache read in place, while the index loads and
        nothing changed on disk since the cache was checked; ``None`` otherwise."""
        disk = self.in_place
        if disk is None or (self._built is not None and self._built.done()):
            return None
        if self.freshness.pending() or self.freshness.failed is not None:
            return None  # the cache no longer holds the roots as they are
        self.tools.index = disk
        try:
            return self._checked(name, self.tools.call(name, arguments))
        except Stale as stale:  # not what the cache should hold: wait for the index
            logger.info("chunkls mcp: the cache read in place is stale (%s)", stale)
            self._loaded()
            return None
        finally:
            self.tools.index = self.index

    def _loaded(self) -> None:
        """The index is loaded (or the cache read in place is stale): let go of it."""
        if self.in_place is not None:
            self.in_place.close()
            self.in_place = None

    def _checked(self, name: str, answer: Answer) -> Answer:
        """The answer, or why there is nothing to answer from."""
        return checked(name, answer, self.tools.index, [folder.root for folder in self.folders])

    def close(self) -> None:
        """Stop watching; save the index's cache."""
        self.freshness.stop()
        self._loaded()
        if self._built is not None and self._built.done() and not self._built.cancelled():
            self.index.close()


def make_server(service: ChunkService) -> Server[Any, Any]:
    """The MCP server: its tool list and its one call handler."""
    server: Server[Any, Any] = Server("chunkls", version=__version__, instructions=INSTRUCTIONS)
    tools = [
        types.Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            inputSchema=spec.input_schema,
            outputSchema=spec.output_schema,
            annotations=types.ToolAnnotations(
                title=spec.title, readOnlyHint=True, idempotentHint=True, openWorldHint=False
            ),
        )
        for spec in SPECS
    ]

    @server.list_tools()  # type: ignore[untyped-decorator, no-untyped-call]
    async def list_tools() -> list[types.Tool]:
        return tools

    # arguments are checked by chunkls.mcp.tools, with messages written for a model
    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        try:
            answer = await service.answer(name, arguments)
        except Exception as problem:  # never die on one call: say what went wrong
            logger.exception("chunkls mcp: %s failed", name)
            answer = error(f"{name} failed inside chunkls: {problem}")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)],
            structuredContent=answer.structured,
            isError=answer.is_error,
        )

    return server


async def _serve(service: ChunkService, early: EarlyReader | None = None) -> None:
    server = make_server(service)
    text_in: Any
    text_out: Any
    if early is not None:  # what was read while the SDK loaded comes first
        from chunkls.mcp.early import take_over

        text_in, text_out = take_over(early)
    else:  # what the SDK's stdio_server reads and writes by default
        text_in = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        text_out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
    # the calls in flight when stdin ends are answered before the SDK sees its end
    inflight = InFlight()
    stdin = anyio.wrap_file(cast("IO[str]", DrainingInput(text_in, inflight)))
    # once the client has closed stdout, what is left to write goes to /dev/null
    gone = partial(discard_output, sys.stdout)
    stdout = anyio.wrap_file(cast("IO[str]", TrackingOutput(text_out, inflight, gone)))
    service.start()
    try:
        async with stdio_server(stdin, stdout) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    except* (anyio.ClosedResourceError, anyio.BrokenResourceError):
        # the client went away with a call in flight: its answer has nowhere to go
        # (older SDK versions raise this out of ``run``; newer ones drop it)
        logger.info("chunkls mcp: the client went away before an answer")
    finally:
        service.close()


def run(
    roots: Sequence[str],
    exclude: Sequence[str] = (),
    cache: bool = True,
    early: EarlyReader | None = None,
) -> int:
    """Serve MCP over stdio until the client goes; returns the exit code.
    ``early``: what read stdin while the SDK loaded (``chunkls.mcp.early``)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s", force=True)
    logger.setLevel(logging.INFO)
    service = ChunkService([Path(root) for root in roots or ["."]], exclude, cache)
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(_serve, service, early)
    return 0
