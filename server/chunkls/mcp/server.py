"""``chunkls mcp``: the tools over stdio with the MCP Python SDK; the index loads a step at a
time in the event loop (a call with nothing to answer from waits). Logs go to stderr."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import sys
from collections.abc import Callable, Mapping
from functools import partial
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

import anyio
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

from chunkls import __version__
from chunkls.mcp.freshness import Freshness
from chunkls.mcp.inflight import DrainingInput, InFlight, TrackingOutput
from chunkls.mcp.serve_resources import Resources
from chunkls.mcp.service import McpService
from chunkls.mcp.specs import INSTRUCTIONS, SPECS
from chunkls.mcp.tools import Answer, call_result, error, links_allowed
from chunkls.runtime.early_reader import EarlyReader
from chunkls.runtime.streams import discard_output

if TYPE_CHECKING:
    from chunkls.index.queries import Queries

logger = logging.getLogger("chunkls")
T = TypeVar("T")


class Loader:
    """The service's index, loaded a step at a time (create it in the event loop)."""

    def __init__(self, service: McpService) -> None:
        self.service = service
        service.session.read_in_place_if_current()  # answers until the index is loaded
        self.task = asyncio.get_running_loop().create_task(self._load(), name="load")

    async def _load(self) -> None:
        for _ in self.service.load():
            await asyncio.sleep(0)  # the calls that came meanwhile are answered

    async def answer(self, name: str, arguments: Mapping[str, Any] | None) -> Answer:
        """A call's answer: at once if possible, else once the index is loaded."""
        answer = self.service.answer(name, arguments)
        while answer is None:
            await asyncio.shield(self.task)
            answer = self.service.answer(name, arguments)
            if answer is None and self.task.done():
                return error("chunkls mcp: the index could not be loaded")
        return answer

    async def ask(self, question: Callable[[Queries], T]) -> tuple[T, bool]:
        """A question's answer (once loaded, if need be); whether it came from the cache."""
        loading = not self.service.loaded
        answer = self.service.ask(question)
        while answer is None:
            await asyncio.shield(self.task)
            loading = not self.service.loaded
            answer = self.service.ask(question)
            if answer is None and self.task.done():
                raise RuntimeError("chunkls mcp: the index could not be loaded")
        return answer, loading


def make_server(loader: Loader, resources: Resources | None = None) -> Server[Any, Any]:
    """The MCP server: its tool list, its one call handler, and the chunks as resources."""
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
            answer = await loader.answer(name, arguments)
        except Exception as problem:  # never die on one call: say what went wrong
            logger.exception("chunkls mcp: %s failed", name)
            answer = error(f"{name} failed inside chunkls: {problem}")
        asked = server.request_context.session.client_params
        links = links_allowed(asked.protocolVersion if asked is not None else None)
        return types.CallToolResult.model_validate(call_result(answer, links))

    (resources or Resources(loader)).register(server)
    return server


OPTIONS = NotificationOptions(resources_changed=True)
"""What the server notifies of: the resource list's changes."""


async def _serve(service: McpService, early: EarlyReader | None = None) -> None:
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
    freshness = Freshness(service.session)
    # watched before the load: nothing changed meanwhile is lost
    freshness.start([folder.root for folder in service.session.folders])
    loader = Loader(service)
    resources = Resources(loader)
    loop = asyncio.get_running_loop()
    freshness.on_change = partial(loop.call_soon_threadsafe, resources.changed)
    server = make_server(loader, resources)
    try:
        async with stdio_server(stdin, stdout) as (read_stream, write_stream):
            options = server.create_initialization_options(OPTIONS)
            await server.run(read_stream, write_stream, options)
    except* (anyio.ClosedResourceError, anyio.BrokenResourceError):
        # the client went away with a call in flight: its answer has nowhere to go
        logger.info("chunkls mcp: the client went away before an answer")
    finally:
        freshness.stop()
        if not loader.task.done():
            loader.task.cancel()
        service.close()


def run(service: McpService, early: EarlyReader | None = None) -> int:
    """Serve MCP over stdio until the client goes, taking over from ``early``; the exit code."""
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(_serve, service, early)
    return 0
