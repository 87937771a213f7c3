"""Two commits' benchmarks in one run: every figure of a base commit beside this tree's.

    uv run python bench/compare.py --base REV [--corpus DIR] [--rounds N] [--entry-points]
                                   [--json PATH]

A refactoring must leave the figures where they were. This checks out ``REV``
in a temporary worktree, then runs each side's own ``bench/run.py`` (each in its
own environment, made with ``uv sync --frozen``) in alternation, ``--rounds``
times (default 1), on the same corpus and machine. It prints every numeric
figure the two sides share, with the ratio new/base, and writes both sides'
results to JSON (default ``bench/compare.json``). A figure one side lacks is
listed once at the end, never compared. With ``--entry-points``, the same run
then times both trees' entry points as whole processes, interleaved
(``bench/entry_points.py --baseline``), and adds their rows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def figures(result: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every numeric leaf of a result, by its dotted path (booleans and counts
    of samples are not figures)."""
    if isinstance(result, dict):
        for key, value in result.items():
            yield from figures(value, f"{prefix}{key}.")
    elif isinstance(result, (int, float)) and not isinstance(result, bool):
        name = prefix[:-1]
        if not name.endswith(".n"):
            yield name, float(result)


def run_bench(tree: Path, corpus: str | None, out: Path) -> dict[str, Any]:
    """One run of ``tree``'s own benchmark, in ``tree``'s environment."""
    command = ["uv", "run", "--frozen", "--project", str(tree), "python"]
    command += [str(tree / "bench" / "run.py"), "--json", str(out)]
    if corpus:
        command += ["--corpus", corpus]
    print(f"$ {' '.join(command)}", file=sys.stderr)
    subprocess.run(command, cwd=tree, check=True, stdout=subprocess.DEVNULL)
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def run_entry_points(base_tree: Path, corpus: str | None, out: Path) -> dict[str, Any]:
    """This tree's ``bench/entry_points.py`` against ``base_tree``, runs interleaved."""
    command = ["uv", "run", "--frozen", "--project", str(REPO), "python"]
    command += [str(REPO / "bench" / "entry_points.py"), "--baseline", str(base_tree)]
    command += ["--json", str(out)]
    if corpus:
        command += ["--corpus", corpus]
    print(f"$ {' '.join(command)}", file=sys.stderr)
    subprocess.run(command, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def table(base: list[dict[str, Any]], new: list[dict[str, Any]], rev: str) -> str:
    """The shared figures side by side (medians over rounds), new/base ratio."""
    base_rows = _medians(base)
    new_rows = _medians(new)
    shared = [name for name in new_rows if name in base_rows]
    width = max((len(name) for name in shared), default=10)
    lines = [f"{'figure':<{width}}  {rev[:10]:>12}  {'HEAD':>12}  new/base"]
    for name in shared:
        old, now = base_rows[name], new_rows[name]
        ratio = f"{now / old:.2f}x" if old else "-"
        lines.append(f"{name:<{width}}  {old:>12.4g}  {now:>12.4g}  {ratio}")
    only = sorted(set(base_rows) ^ set(new_rows))
    if only:
        lines.append("")
        lines.append("in one side only: " + ", ".join(only))
    return "\n".join(lines)


def _medians(results: list[dict[str, Any]]) -> dict[str, float]:
    samples: dict[str, list[float]] = {}
    for result in results:
        for name, value in figures(result):
            samples.setdefault(name, []).append(value)
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--corpus", help="default: each side's default (the stdlib)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--entry-points", action="store_true", help="also time both trees' entry points"
    )
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "compare.json")
    args = parser.parse_args()
    rev = subprocess.run(
        ["git", "rev-parse", "--verify", f"{args.base}^{{commit}}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="chunkls-compare-"))
    tree = work / "base"
    try:
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(tree), rev], cwd=REPO, check=True
        )
        env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(tree / ".venv")}
        subprocess.run(["uv", "sync", "--frozen", "--quiet"], cwd=tree, check=True, env=env)
        base: list[dict[str, Any]] = []
        new: list[dict[str, Any]] = []
        for number in range(args.rounds):
            print(f"round {number + 1}/{args.rounds}: base {rev[:10]}", file=sys.stderr)
            base.append(run_bench(tree, args.corpus, work / f"base-{number}.json"))
            print(f"round {number + 1}/{args.rounds}: HEAD", file=sys.stderr)
            new.append(run_bench(REPO, args.corpus, work / f"new-{number}.json"))
        entry: dict[str, Any] = {}
        if args.entry_points:
            entry = run_entry_points(tree, args.corpus, work / "entry.json")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
        shutil.rmtree(work, ignore_errors=True)
    text = table(base, new, rev)
    print(text)
    if entry:
        sys.path.insert(0, str(REPO / "bench"))
        from entry_points import report

        print("\n| measurement | HEAD | base | ratio | target | met |")
        print("| --- | --- | --- | --- | --- | --- |")
        print("\n".join(report(entry)))
    saved: dict[str, Any] = {"base": rev, "rounds": {"base": base, "new": new}}
    if entry:
        saved["entry_points"] = entry
    args.json.write_text(json.dumps(saved, indent=2))
    print(f"\n(JSON: {args.json})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
