"""What a change of corpus settings costs, against a cold index in the same run.

    uv run python bench/settings_change.py [--corpus DIR] [--exclude GLOB] [--rounds N]

A file's chunks do not depend on which other files are excluded, so the cache
keeps every file across settings. Each round, with an empty cache of its own, runs
``chunkls search`` as a user does (a whole process): cold, warm, with
``--exclude GLOB`` added (the settings changed), and plain again (changed back).
It prints each command's time and the changed runs against the cold one (goal:
under 0.5x), and writes JSON (default ``bench/settings_change.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STEPS = ("cold", "warm", "changed", "back")


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def one_round(corpus: Path, exclude: str) -> dict[str, float]:
    cache = tempfile.mkdtemp(prefix="chunkls-settings-")
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    base = [sys.executable, "-m", "chunkls", "search", "parse header", "--root", str(corpus), "-q"]
    try:
        return {
            "cold": timed(base, env),
            "warm": timed(base, env),
            "changed": timed([*base, "--exclude", exclude], env),
            "back": timed(base, env),
        }
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--exclude", default="test/**", help="the glob added (default test/**)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "settings_change.json")
    args = parser.parse_args()
    rounds = [one_round(args.corpus, args.exclude) for _ in range(args.rounds)]
    median = {step: statistics.median(r[step] for r in rounds) for step in STEPS}
    ratio = {step: median[step] / median["cold"] for step in ("changed", "back")}
    print(f"corpus {args.corpus}, --exclude {args.exclude!r}, {args.rounds} round(s), medians")
    print("| step | time | against cold | goal |\n| --- | --- | --- | --- |")
    print(f"| cold (empty cache) | {median['cold']:.2f} s | 1x | |")
    print(f"| warm | {median['warm']:.2f} s | {median['warm'] / median['cold']:.3f}x | |")
    labels = {"changed": f"--exclude {args.exclude}", "back": "the plain settings again"}
    for step, label in labels.items():
        met = "met" if ratio[step] < 0.5 else "NOT met"
        print(f"| {label} | {median[step]:.2f} s | {ratio[step]:.3f}x | < 0.5x: {met} |")
    record = {
        "corpus": str(args.corpus),
        "exclude": args.exclude,
        "rounds": rounds,
        "median_s": median,
        "against_cold": ratio,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    args.json.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 0 if all(value < 0.5 for value in ratio.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
