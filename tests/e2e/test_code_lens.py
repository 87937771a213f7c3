"""textDocument/codeLens: one lens per chunk, titled with the CLI's chunk IDs."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from chunkls.cli import main
from tests.e2e.conftest import TIMEOUT, open_document


def cli_ids(root: Path, rel_path: str) -> list[tuple[str, int]]:
    out = io.StringIO()
    assert main(["chunks", str(root)], out, io.StringIO()) == 0
    import json

    records = [json.loads(line) for line in out.getvalue().splitlines()]
    return [(r["chunk_id"], r["start_line"]) for r in records if r["source_path"] == rel_path]


async def lenses(client: LanguageClient, document_uri: str) -> list[types.CodeLens]:
    return await asyncio.wait_for(
        client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=document_uri))
        ),
        TIMEOUT,
    )


async def test_lenses_equal_the_cli(client: LanguageClient, workspace: Path) -> None:
    for rel_path in ("app/greet.py", "app/formfeed.py", "README.md"):
        document_uri = open_document(client, workspace / rel_path)
        result = [
            lens
            for lens in await lenses(client, document_uri)
            if lens.command and lens.command.command == "chunkls.copyChunkId"
        ]
        got = [(lens.command.title, lens.range.start.line + 1) for lens in result if lens.command]
        assert got == cli_ids(workspace, rel_path)
        for lens in result:
            assert lens.command is not None
            assert lens.command.command == "chunkls.copyChunkId"
            assert list(lens.command.arguments or []) == [lens.command.title]


async def test_file_outside_corpus_gets_one_explaining_lens(
    client: LanguageClient, workspace: Path
) -> None:
    for rel_path, why in (("docs/transcript.md", "docs"), ("generated/out.py", "exclude")):
        result = await lenses(client, open_document(client, workspace / rel_path))
        assert len(result) == 1
        assert result[0].command is not None
        assert "not in the chunk corpus" in result[0].command.title.lower()
        assert why in result[0].command.title
