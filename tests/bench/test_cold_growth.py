"""``bench/cold_growth.py`` runs end to end on the small fixture corpus, this tree
standing in for the base: every row is printed and both measurements are taken.
Its figures are not checked (speed is measured by running it, never asserted)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_growth_of_a_cold_index_is_measured_both_ways(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(REPO / "tests" / "fixtures" / "workspace", corpus, symlinks=True)
    (corpus / "pyproject.toml").unlink()  # (the tutorial's rules, as bench/run.py's child has)
    out = tmp_path / "growth.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "cold_growth.py"),
            "--base-tree",
            str(REPO),
            "--base-python",
            sys.executable,
            "--corpus",
            str(corpus),
            "--rounds",
            "2",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for row in (
        "| cold index, seconds (medians; ratio: median of 2 paired rounds)",
        "| cold index, CPU of every process (same)",
        "| worker CPU for every file, in lock step",
    ):
        assert row in done.stdout, row
    saved = json.loads(out.read_text())
    assert [len(saved["runs"][side]) for side in ("base", "HEAD")] == [2, 2]
    assert all(seconds > 0 and cpu > 0 for side in saved["runs"].values() for seconds, cpu in side)
    assert saved["lockstep_cpu"]["base"] > 0 and saved["lockstep_cpu"]["HEAD"] > 0


def test_it_needs_a_base() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "cold_growth.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "--base or --base-tree is needed" in done.stderr
