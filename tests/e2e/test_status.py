"""The ``chunkls/status`` notification: its method and payload as the contract defines them."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
from pytest_lsp import LanguageClient

from chunkls.lsp.contract import Status
from tests.e2e.conftest import TIMEOUT, wait_indexed

pytestmark = pytest.mark.asyncio(loop_scope="module")


def as_dict(params: Any) -> dict[str, Any]:
    """The notification's params as a dict (pygls's client gives a named tuple)."""
    return params if isinstance(params, dict) else dict(params._asdict())


async def test_status_after_indexing(shared_client: LanguageClient) -> None:
    stats = await wait_indexed(shared_client)

    async def settled() -> dict[str, Any]:
        while True:
            status = getattr(shared_client, "status", None)
            if status is not None and not as_dict(status)["indexing"]:
                return as_dict(status)
            await asyncio.sleep(0.05)

    status = await asyncio.wait_for(settled(), TIMEOUT)
    assert set(status) == {field.name for field in attrs.fields(Status)}
    assert status == {
        "indexing": False,
        "chunks": stats["chunks"],
        "files": stats["files"],
        "skipped": len(stats["skipped"]),
    }
