"""A pytest-lsp client driving the real server on a copy of the fixture workspace.

Every e2e test runs once per real client capability set (VS Code, Neovim,
Emacs); LSP specification warnings are errors (see pyproject.toml).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLIENTS = ["visual-studio-code", "neovim", "emacs"]
TIMEOUT = 30


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the fixture workspace (main folder)."""
    root = tmp_path / "workspace"
    shutil.copytree(FIXTURES / "workspace", root)
    shutil.copytree(FIXTURES / "second", tmp_path / "second")
    return root


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


@pytest_lsp.fixture(
    params=CLIENTS,
    config=ClientServerConfig(server_command=[sys.executable, "-m", "chunkls", "serve", "--stdio"]),
)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path
) -> AsyncIterator[None]:
    """A client with ``request.param``'s capabilities, on both fixture folders."""
    install_handlers(lsp_client)
    params = types.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=uri(workspace),
        workspace_folders=[
            types.WorkspaceFolder(uri=uri(workspace), name="workspace"),
            types.WorkspaceFolder(uri=uri(workspace.parent / "second"), name="second"),
        ],
    )
    await asyncio.wait_for(lsp_client.initialize_session(params), TIMEOUT)
    await wait_indexed(lsp_client)
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)
