"""bench/compare.py: the figures two runs share, side by side (no run here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_compare", REPO / "bench" / "compare.py")
assert _spec is not None and _spec.loader is not None
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)


def test_figures_are_the_numeric_leaves_without_sample_counts() -> None:
    result = {
        "cold": {"seconds": 2.0, "files": 3},
        "own_rules": False,
        "corpus": "/x",
        "server": {"loaded": {"hover": {"n": 200, "p50_ms": 0.2}}},
    }
    assert dict(compare.figures(result)) == {
        "cold.seconds": 2.0,
        "cold.files": 3.0,
        "server.loaded.hover.p50_ms": 0.2,
    }


def test_the_table_compares_shared_figures_by_median_and_lists_the_rest() -> None:
    base = [{"cold": {"seconds": 2.0}, "gone": 1}, {"cold": {"seconds": 4.0}, "gone": 1}]
    new = [{"cold": {"seconds": 1.0}, "added": 5}, {"cold": {"seconds": 2.0}, "added": 5}]
    text = compare.table(base, new, "abcdef0123456789")
    rows = text.splitlines()
    assert rows[0].split()[:3] == ["figure", "abcdef0123", "HEAD"]
    assert rows[1].split() == ["cold.seconds", "3", "1.5", "0.50x"]
    assert rows[-1] == "in one side only: added, gone"
