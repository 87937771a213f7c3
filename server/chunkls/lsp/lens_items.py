"""What a document's code lenses say, without lsprotocol's types (shared by ``lenses`` and
``early``): a chunk's ID at its first line, or why there is none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.chunking.suffixes import file_type_for
from chunkls.lsp.contract import COPY_CHUNK_ID


class Lens(NamedTuple):
    """One code lens: a 0-based line, a title, the command a click runs ("" for none)."""

    line: int
    title: str
    command: str
    chunk_id: str | None = None

    def json(self) -> dict[str, Any]:
        """The lens in LSP JSON (as the server's converter writes a ``CodeLens``)."""
        position = {"line": self.line, "character": 0}
        command: dict[str, Any] = {"title": self.title, "command": self.command}
        if self.chunk_id is not None:
            command["arguments"] = [self.chunk_id]
        return {"range": {"start": position, "end": dict(position)}, "command": command}


def chunk_lenses(
    rel_path: str, excluded: str | None, chunks: Sequence[LocatedChunk], error: str | None
) -> list[Lens]:
    """The lenses of a document at ``rel_path``: its chunks' IDs; "Not in the
    chunk corpus" when the corpus rules leave it out (``excluded``: why);
    "Not chunked" when its text does not chunk (``error``) and no earlier
    chunking is kept; none for a file that is neither Python nor Markdown."""
    if file_type_for(rel_path.rsplit("/", 1)[-1]) is None:
        return []
    if excluded is not None:
        return [Lens(0, f"Not in the chunk corpus: {excluded}", "")]
    lenses = [
        Lens(chunk.start_line - 1, chunk.chunk_id, COPY_CHUNK_ID, chunk.chunk_id)
        for chunk in chunks
    ]
    if error is not None and not lenses:
        lenses.append(Lens(0, f"Not chunked: {error}", ""))
    return lenses
