"""A pytest-lsp client driving the real server on a copy of the fixture workspace.

Every e2e test runs once per real client capability set (VS Code, Neovim,
Emacs); LSP specification warnings are errors (see pyproject.toml).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLIENTS = ["visual-studio-code", "neovim", "emacs"]
TIMEOUT = 30


def make_workspace(base: Path) -> Path:
    """Copy both fixture folders under ``base``; return the main one.

    Files whose bytes git could normalise (CRLF, lone CR) are written here.
    """
    root = base / "workspace"
    shutil.copytree(FIXTURES / "workspace", root)
    shutil.copytree(FIXTURES / "second", base / "second")
    (root / "app" / "crlf.py").write_bytes(
        b"def one():\r\n    return 1\r\n\r\n\r\ndef two():\r\n    return 2\r\n"
    )
    (root / "notes" / "crlf.md").write_bytes(
        b"# Title\r\n\r\nSee app/crlf.py#function-two\r\nand app/greet.py#function-greet.\r\n"
    )
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the fixture workspace, for tests that change it."""
    return make_workspace(tmp_path)


@pytest.fixture(scope="module")
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the fixture workspace per test module, for read-only tests."""
    return make_workspace(tmp_path_factory.mktemp("shared"))


def uri(path: Path) -> str:
    """A file URI."""
    return path.resolve().as_uri()


async def wait_indexed(client: LanguageClient) -> dict[str, Any]:
    """Wait until the server has finished indexing; return its stats."""

    async def poll() -> dict[str, Any]:
        while True:
            stats = await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="chunkls.stats")
            )
            if not stats["indexing"] and stats["folders"]:
                return stats  # type: ignore[no-any-return]
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), TIMEOUT)


def open_document(client: LanguageClient, path: Path, language: str | None = None) -> str:
    """didOpen a file from disk; returns its URI."""
    language = language or {".py": "python", ".md": "markdown"}.get(path.suffix, "plaintext")
    document_uri = uri(path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=document_uri,
                language_id=language,
                version=1,
                text=path.read_bytes().decode("utf-8"),
            )
        )
    )
    return document_uri


def install_handlers(client: LanguageClient) -> None:
    """Client-side handlers a real editor has: lens refresh, registrations."""
    if hasattr(client, "lens_refreshes"):
        return
    client.lens_refreshes = 0  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None) -> None:
        client.lens_refreshes += 1  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature("chunkls/status")
    def status(params: Any) -> None:
        client.status = params  # type: ignore[attr-defined]


CACHE_HOME = tempfile.mkdtemp(prefix="chunkls-e2e-cache-")
"""The servers' cache directory (XDG_CACHE_HOME): never the user's."""
atexit.register(shutil.rmtree, CACHE_HOME, ignore_errors=True)
SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "chunkls", "serve", "--stdio"],
    server_env={**os.environ, "XDG_CACHE_HOME": CACHE_HOME},
)


async def start_session(
    client: LanguageClient, spec: str | types.ClientCapabilities, root: Path
) -> None:
    """Initialize a session on both fixture folders and wait for the index."""
    install_handlers(client)
    params = types.InitializeParams(
        capabilities=client_capabilities(spec) if isinstance(spec, str) else spec,
        root_uri=uri(root),
        workspace_folders=[
            types.WorkspaceFolder(uri=uri(root), name="workspace"),
            types.WorkspaceFolder(uri=uri(root.parent / "second"), name="second"),
        ],
    )
    await asyncio.wait_for(client.initialize_session(params), TIMEOUT)
    await wait_indexed(client)


@pytest_lsp.fixture(params=CLIENTS, config=SERVER)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path
) -> AsyncIterator[None]:
    """A client with ``request.param``'s capabilities on a fresh workspace."""
    await start_session(lsp_client, request.param, workspace)
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


@pytest_lsp.fixture(params=CLIENTS, config=SERVER, scope="module")
async def shared_client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, shared_workspace: Path
) -> AsyncIterator[None]:
    """One client per capability set and test module, for read-only tests."""
    await start_session(lsp_client, request.param, shared_workspace)
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


@pytest_asyncio.fixture
async def bare_client() -> AsyncIterator[LanguageClient]:
    """A started client that has not initialized yet (tests choose how)."""
    client = await SERVER.start()
    assert isinstance(client, LanguageClient)
    install_handlers(client)
    yield client
    try:
        if client.capabilities is not None:  # initialized
            await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    finally:
        await asyncio.wait_for(client.stop(), TIMEOUT)
