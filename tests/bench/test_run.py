"""The benchmark runs end to end (on the small fixture corpus, so in seconds):
every measurement is taken and reported. Its figures are not checked here:
speed is measured by running it, never asserted by a test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROWS = [
    "cold index (chunks + search)",
    "warm restart, unchanged tree",
    "search p50 / p95",
    "one-file search update",
    "save to fresh lenses",
    "hover over stdio, index loaded",
    "any while a cold index runs",
    "server resident memory, stdlib indexed (after its cold index)",
    "server resident memory, stdlib indexed (restarted on its cache)",
    "server peak resident memory",
]


def test_the_benchmark_measures_everything(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "run.py"),
            "--corpus",
            str(REPO / "tests" / "fixtures" / "workspace"),
            "--json",
            str(out),
            "--queries",
            "8",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ROWS:
        assert f"| {name}" in done.stdout, name
    results = json.loads(out.read_text())
    assert results["table"] in done.stdout
    assert results["warm"]["parsed"] == 0 < results["cold"]["parsed"]
    assert results["cold"]["chunks"] == results["warm"]["chunks"] > 0
    assert results["search"]["queries"] == 8
    server = results["server"]
    assert "error" not in server, server
    assert server["hover_resolves"] is True
    assert server["save_to_lenses"]["n"] == 50
    assert server["warm_server"]["chunks"] == server["chunks"]
    assert server["transport_floor"]["hover"]["n"] == server["loaded"]["hover"]["n"]
    assert "a stand-in server doing no work" in results["table"]
