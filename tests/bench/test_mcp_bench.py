"""bench/mcp_bench.py's freshness measurement on a tree smaller than the default
(fewer folders than the writes it makes): every write is found, its lag measured,
never asserted."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import mcp_bench  # noqa: E402


def test_freshness_runs_on_a_tree_of_fewer_folders_than_writes(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = mcp_bench.measure_freshness(60, env)  # two folders, twenty writes
    assert result["files"] == 60 + mcp_bench.LAG_WRITES
    assert len(result["lag"]) == 2 and result["lag"]["p95_ms"] >= result["lag"]["p50_ms"] > 0


def test_the_resources_figures_go_through_every_page(tmp_path: Path) -> None:
    """``--resources-only`` on a small tree: every chunk listed once over the
    pages, completions timed, three rows (figures measured, never asserted)."""
    root = tmp_path / "tree"
    mcp_bench.make_tree(root, 600)  # (three chunks a Python file: over 500, two pages)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = mcp_bench.measure_resources_only(root, env)
    from chunkls.index.session import build_index

    chunks = len(list(build_index([root]).queries.chunk_ids()))
    resources = result["resources"]
    assert resources["listed"] == chunks and resources["pages"] == -(-chunks // 500) >= 2
    names = [row[0] for row in mcp_bench.rows(result)]
    assert len(names) == 3 and all(name.startswith("MCP ") for name in names)
