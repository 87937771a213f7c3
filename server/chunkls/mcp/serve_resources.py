"""The resource requests on the SDK's low-level server, and ``list_changed`` to a client that
has listed them: only translation to and from the SDK's models (``resources`` answers)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

import anyio
import mcp.types as types
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from chunkls.mcp import resources
from chunkls.mcp.resources import ResourceProblem
from chunkls.mcp.specs import LOADING_NOTICE

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.server.session import ServerSession

    from chunkls.index.queries import Queries
    from chunkls.mcp.server import Loader

logger = logging.getLogger("chunkls")
T = TypeVar("T")

ROOTS_WAIT = 5.0
"""Seconds a client has to answer ``roots/list`` (then: corpus order)."""


def _problem(problem: ResourceProblem) -> McpError:
    return McpError(types.ErrorData(code=problem.code, message=problem.message, data=problem.data))


def root_paths(result: types.ListRootsResult) -> list[Path]:
    """The local folders among a client's roots (``file:`` URIs)."""
    paths = []
    for root in result.roots:
        parts = urlsplit(str(root.uri))
        if parts.scheme == "file":
            paths.append(Path(url2pathname(unquote(parts.path))))
    return paths


class Resources:
    """The resource handlers of one server, and the client told of list changes."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self.listener: ServerSession | None = None
        """The session of the client that listed the resources (told of changes)."""
        self.known: set[tuple[int, str]] | None = None
        """The files with chunks the listener last heard of."""
        self.roots: list[Path] | None = None
        """The client's roots (``None``: not asked yet)."""
        self._checking: asyncio.Task[None] | None = None
        self._again = False
        """Whether files changed again while they were being checked."""

    async def ask(self, question: Callable[[Queries], T]) -> tuple[T, bool]:
        """A question's answer, and whether it came while the index loads."""
        service = self.loader.service
        if not service.session.folders:
            raise _problem(ResourceProblem(types.INTERNAL_ERROR, service.no_folder()))
        try:
            return await self.loader.ask(question)
        except ResourceProblem as problem:
            raise _problem(problem) from None

    async def client_roots(self, session: ServerSession) -> list[Path]:
        """The client's roots, asked once if it has any (listing them first)."""
        if self.roots is None:
            self.roots = []
            if session.check_client_capability(
                types.ClientCapabilities(roots=types.RootsCapability())
            ):
                try:
                    with anyio.fail_after(ROOTS_WAIT):
                        self.roots = root_paths(await session.list_roots())
                except Exception as problem:  # no roots: corpus order
                    logger.info("chunkls mcp: the client's roots/list failed: %s", problem)
        return self.roots

    def files(self) -> set[tuple[int, str]]:
        """Every file with chunks: (folder position, root-relative path)."""
        files = self.loader.service.session.queries.file_paths()
        return {(folder.position, rel_path) for folder, rel_path in files}

    def changed(self) -> None:
        """Files changed on disk: tell the listener once the write step shows files came or went."""
        if self.listener is None or not self.loader.service.loaded:
            return
        if self._checking is not None:
            self._again = True  # checked once more when this check ends
            return
        self._checking = asyncio.get_running_loop().create_task(self._check(), name="listed")

    async def _check(self) -> None:
        try:
            self._again = True
            while self._again:
                self._again = False
                files = self.loader.service.session.ask(lambda _: self.files())
                if self.known is not None and files != self.known and self.listener is not None:
                    await self.listener.send_resource_list_changed()
                self.known = files
        except Exception:  # a notification lost, never the server
            logger.exception("chunkls mcp: notifications/resources/list_changed failed")
        finally:
            self._checking = None

    def register(self, server: Server[Any, Any]) -> None:
        """Handle the resource requests and completion on ``server``."""

        @server.list_resource_templates()  # type: ignore[untyped-decorator, no-untyped-call]
        async def list_resource_templates() -> list[types.ResourceTemplate]:
            return [types.ResourceTemplate.model_validate(resources.template())]

        @server.list_resources()  # type: ignore[untyped-decorator, no-untyped-call]
        async def list_resources(request: types.ListResourcesRequest) -> types.ListResourcesResult:
            session = server.request_context.session
            under = await self.client_roots(session)
            cursor = request.params.cursor if request.params is not None else None
            page, loading = await self.ask(lambda index: resources.list_page(index, cursor, under))
            if self.listener is None:
                self.listener = session
                self.known = self.files()
            if loading:
                page["_meta"] = {"notice": LOADING_NOTICE}
            return types.ListResourcesResult.model_validate(page)

        @server.read_resource()  # type: ignore[untyped-decorator, no-untyped-call]
        async def read_resource(uri: AnyUrl) -> Iterable[ReadResourceContents]:
            contents, loading = await self.ask(lambda index: resources.read(index, str(uri)))
            notice = {"notice": LOADING_NOTICE} if loading else {}
            return [
                ReadResourceContents(item["text"], item["mimeType"], {**item["_meta"], **notice})
                for item in contents
            ]

        async def roots_changed(_notification: types.RootsListChangedNotification) -> None:
            self.roots = None  # asked again at the next page

        server.notification_handlers[types.RootsListChangedNotification] = roots_changed

        @server.completion()  # type: ignore[untyped-decorator, no-untyped-call]
        async def completion(
            ref: types.PromptReference | types.ResourceTemplateReference,
            argument: types.CompletionArgument,
            _context: types.CompletionContext | None,
        ) -> types.Completion:
            if not isinstance(ref, types.ResourceTemplateReference):
                return types.Completion(values=[])
            done, _loading = await self.ask(
                lambda index: resources.complete(index, ref.uri, argument.name, argument.value)
            )
            return types.Completion.model_validate(done)
