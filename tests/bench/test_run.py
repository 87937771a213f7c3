"""The benchmark runs end to end (on the small fixture corpus, so in seconds):
every measurement is taken and reported. Its figures are not checked here:
speed is measured by running it, never asserted by a test."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))  # run.py imports its lsp_client
_spec = importlib.util.spec_from_file_location("bench_run", REPO / "bench" / "run.py")
assert _spec is not None and _spec.loader is not None
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)
ROWS = [
    "cold index (chunks + search)",
    "cold index, every Python file parsed (CHUNKLS_BYTECODE=off)",
    "chunks identical to the tutorial's",
    "floor: read + ast.parse of every Python file",
    "warm restart, unchanged tree",
    "search p50 / p95",
    "one-file search update",
    "save to fresh lenses",
    "hover over stdio, index loaded",
    "any while a cold index runs",
    "server resident memory, stdlib indexed (after its cold index)",
    "server resident memory, stdlib indexed (restarted on its cache)",
    "server peak resident memory",
    "1 MB JSONL log: open to diagnostics",
    "1 MB JSONL log: hover while diagnostics are computed",
    "1 MB JSONL log: hover p50 / p95",
    "cold index, every Python file parsed, against the parse floor",
    "indexing process peak (a cold index with a cache)",
    "import of chunkls.cli, its own time (-X importtime)",
    "python -c 'import chunkls.cli', whole process",
    "chunkls --help (python -m chunkls), whole process",
]


def test_the_benchmark_measures_everything(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    # the fixture workspace under the tutorial's rules (its pyproject.toml sets others)
    corpus = tmp_path / "corpus"
    shutil.copytree(REPO / "tests" / "fixtures" / "workspace", corpus, symlinks=True)
    (corpus / "pyproject.toml").unlink()
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "run.py"),
            "--corpus",
            str(corpus),
            "--json",
            str(out),
            "--queries",
            "8",
            "--jsonl-mb",
            "1",
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
    assert sorted(results["warm_runs"])[1] == results["warm"]["seconds"]
    assert sorted(results["cold_runs"])[1] == results["cold"]["seconds"]
    assert "(median of 3: " in done.stdout
    assert results["cold"]["chunks"] == results["warm"]["chunks"] > 0
    assert results["own_rules"] is False
    assert results["parse_floor"]["files"] == len(list(corpus.rglob("*.py")))
    assert results["baseline"]["digest"] == results["cold"]["digest"] == results["warm"]["digest"]
    assert results["cold_parsed"]["digest"] == results["cold"]["digest"]
    assert "| same SHA-256 | identical | yes |" in done.stdout
    # a corpus with rules of its own is not held to the tutorial's chunks
    results["own_rules"] = True
    results["cold"]["digest"] = "other"
    assert "| different (the corpus sets its own [tool.chunkls] rules) | identical |  |" in (
        run.report(results)
    )
    assert results["search"]["queries"] == 8
    assert "error" not in results["jsonl"], results["jsonl"]
    assert results["jsonl"]["diagnostics"] > 0
    startup = results["startup"]["HEAD"]
    for kind in ("interpreter", "import_process", "help_process", "import_self"):
        assert startup[kind]["runs"] == 20
        assert 0 < startup[kind]["median_s"] <= startup[kind]["p95_s"]
    assert startup["import_self"]["median_s"] < startup["import_process"]["median_s"]
    server = results["server"]
    assert "error" not in server, server
    assert server["hover_resolves"] is True
    assert server["save_to_lenses"]["n"] == 50
    assert server["warm_server"]["chunks"] == server["chunks"]
    assert server["transport_floor"]["hover"]["n"] == server["loaded"]["hover"]["n"]
    assert "a stand-in server doing no work" in results["table"]
    # hovers of IDs hovered once: as many as the corpus has beyond the first ones
    assert ("IDs once (nothing kept for it)" in results["table"]) == (
        server["hover_first"]["n"] > 0
    )
