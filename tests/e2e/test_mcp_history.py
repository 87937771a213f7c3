"""The MCP tools on stale IDs (issue 45): read_chunk of a moved ID answers the
chunk it became with ``moved_from`` and the evidence, of a deleted one its last
text marked ``deleted`` with the commit; check_citations gives replacements;
the server writes no file."""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.test_mcp import call, mcp_session, text_of
from tests.unit.test_history import GONE, HELPER, commit, git

MOVED = "app/helpers.py#function-normalise_header_name"
NEW = "app/headers.py#function-normalise_header_name"
DELETED = "app/helpers.py#function-launch_rockets"


def make_repo(base: Path) -> Path:
    root = base / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"app/helpers.py": HELPER + "\n\n" + GONE}, "one")
    commit(root, {"app/helpers.py": None, "app/headers.py": HELPER}, "two")
    return root


def tree(root: Path) -> dict[str, float]:
    return {
        os.path.join(folder, name): os.stat(os.path.join(folder, name)).st_mtime
        for folder, _, names in os.walk(root)
        for name in names
    }


async def test_read_chunk_and_check_citations_follow_history(tmp_path: Path) -> None:
    root = make_repo(tmp_path)
    before = tree(root)
    async with mcp_session(root) as session:
        result = await call(session, "read_chunk", {"chunk_id": MOVED})
        assert not result.isError, text_of(result)  # it moved: the chunk it became
        result = await call(session, "read_chunk", {"chunk_id": f"{MOVED} {DELETED}"})
        assert result.isError  # a deleted ID resolves to nothing: its history is the answer
        structured = result.structuredContent
        assert structured is not None
        [chunk] = structured["chunks"]
        assert chunk["chunk_id"] == NEW and chunk["moved_from"] == MOVED
        first = git(root, "rev-list", "--max-parents=0", "HEAD").strip()
        assert chunk["replacement"]["kind"] == "moved"
        assert chunk["replacement"]["commit"] == first
        [deleted] = structured["deleted"]
        assert deleted["chunk_id"] == DELETED and deleted["deleted"] is True
        assert deleted["commit"] == first and deleted["text"] == GONE.rstrip("\n")
        assert f"{MOVED}: moved to {NEW} in {first[:7]}" in text_of(result)
        result = await call(session, "check_citations", {"text": f"see `{MOVED}`"})
        [problem] = result.structuredContent["problems"]  # type: ignore[index]
        assert problem["replacement"]["chunk_id"] == NEW
        assert f"(moved to {NEW} in {first[:7]}" in text_of(result)
    assert tree(root) == before  # no file written under the root (git's too)
