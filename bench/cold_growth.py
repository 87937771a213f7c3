"""How much a cold index grew against a base commit, measured two ways in one run.

    uv run python bench/cold_growth.py --base REV [--base-tree DIR [--base-python PATH]]
                                       [--corpus DIR] [--rounds N] [--lockstep-rounds N]
                                       [--json PATH]

On this kind of VM one cold index of the stdlib takes 13 s in one minute and 18 s
in the next, so two trees timed one after the other differ by the machine's mood
as much as by their code. Two measurements here resist that:

- **whole runs, paired**: each tree's own ``bench/run.py --child index`` (a cold
  index in a fresh process, its worker processes included), alternated, the order
  swapped every round; each round's new/base ratio of seconds and of CPU (every
  process's user + system time), and the median of those ratios;
- **worker CPU in lock step**: the work a worker process does for each file
  (``_run_batch``, after the tree's own worker initializer), in one process per
  tree, the trees taking turns on the same ten files at a time (in random
  order), so that a slow minute slows both: each process's CPU time in all.

The base tree is a temporary worktree of ``REV`` synced with ``uv sync --frozen``
(or ``--base-tree``, a checkout of it with its ``.venv``, or ``--base-python``); this
tree runs in this interpreter. Prints a table and writes JSON (default: a
temporary file, named on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STEP = 10
"""Files each lock-step turn."""


def whole_run(tree: Path, python: Path, corpus: str) -> tuple[float, float]:
    """One cold index by ``tree``'s own benchmark child: (its seconds, the CPU
    seconds of its process tree)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [
            str(python),
            str(tree / "bench" / "run.py"),
            "--child",
            "index",
            "--corpus",
            corpus,
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    seconds = float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])
    return seconds, cpu


def lockstep(trees: dict[str, tuple[Path, Path]], corpus: str, rounds: int) -> dict[str, float]:
    """Each tree's worker CPU for every file of ``corpus``, ``rounds`` times, in lock step."""
    children = {
        name: subprocess.Popen(
            [str(python), __file__, "--lockstep-child", "--corpus", corpus],
            cwd=tree,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        for name, (tree, python) in trees.items()
    }
    counts = {name: int(_ask(child, "count")) for name, child in children.items()}
    if len(set(counts.values())) != 1:
        raise SystemExit(f"the trees see different corpora: {counts}")
    files = next(iter(counts.values()))
    rng = random.Random(6)
    names = list(children)
    for _ in range(rounds):
        for start in range(0, files, STEP):
            rng.shuffle(names)
            for name in names:
                _ask(children[name], f"{start} {min(start + STEP, files)}")
    return {name: float(_ask(child, "cpu")) for name, child in children.items()}


def _ask(child: subprocess.Popen[str], line: str) -> str:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(line + "\n")
    answer = child.stdout.readline()
    if not answer:
        raise SystemExit(f"a lock-step child died (exit {child.wait()})")
    return answer.strip()


def lockstep_child(corpus: str) -> int:
    """A worker process's work, batch by batch as told on stdin (this tree's code)."""
    import ctypes

    from chunkls.chunking.corpus import CorpusRules, walk_corpus
    from chunkls.index import workers
    from chunkls.runtime.memory import tune_allocator
    from chunkls.search import tokens

    out = os.fdopen(os.dup(1), "w", buffering=1)  # (the initializer sends stdout away)
    root = Path(corpus).resolve()
    rules = CorpusRules()
    files = walk_corpus(root, rules).files
    tune_allocator()  # as the indexing process has it when it starts its workers
    workers._init_worker(root, rules, (ctypes.c_int64 * 2)())
    # a worker's word cache is its bulk size (it knows itself by its multiprocessing parent)
    tokens._CACHED_WORDS = tokens._CACHED_WORDS_BULK
    cpu = 0.0
    for line in sys.stdin:
        command = line.split()
        if command == ["count"]:
            out.write(f"{len(files)}\n")
        elif command == ["cpu"]:
            out.write(f"{cpu}\n")
        else:
            start, stop = map(int, command)
            began = time.process_time()
            workers._run_batch(0, files[start:stop])
            cpu += time.process_time() - began
            out.write("ok\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the commit to compare against")
    parser.add_argument("--base-tree", type=Path, help="a checkout of it, with its .venv")
    parser.add_argument("--base-python", type=Path, help="its interpreter (default: its .venv's)")
    parser.add_argument("--corpus", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--rounds", type=int, default=6, help="whole runs of each tree")
    parser.add_argument("--lockstep-rounds", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--lockstep-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.lockstep_child:
        return lockstep_child(args.corpus)
    if not args.base and not args.base_tree:
        parser.error("--base or --base-tree is needed")
    work = Path(tempfile.mkdtemp(prefix="chunkls-growth-"))
    tree = args.base_tree
    try:
        if tree is None:
            tree = work / "base"
            subprocess.run(
                ["git", "worktree", "add", "--detach", "--quiet", str(tree), args.base],
                cwd=REPO,
                check=True,
            )
            env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(tree / ".venv")}
            subprocess.run(["uv", "sync", "--frozen", "--quiet"], cwd=tree, check=True, env=env)
        python = args.base_python or tree / ".venv" / "bin" / "python"
        trees = {"base": (tree.resolve(), python), "HEAD": (REPO, Path(sys.executable))}
        runs: dict[str, list[tuple[float, float]]] = {"base": [], "HEAD": []}
        for number in range(args.rounds):
            order = ["base", "HEAD"] if number % 2 == 0 else ["HEAD", "base"]
            for name in order:
                runs[name].append(whole_run(*trees[name], args.corpus))
            base_s, head_s = runs["base"][-1][0], runs["HEAD"][-1][0]
            print(
                f"round {number + 1}/{args.rounds}: base {base_s:.2f} s, HEAD {head_s:.2f} s",
                file=sys.stderr,
            )
        print("worker CPU in lock step ...", file=sys.stderr)
        cpu = lockstep(trees, args.corpus, args.lockstep_rounds)
    finally:
        if args.base_tree is None and tree is not None:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False
            )
        shutil.rmtree(work, ignore_errors=True)
    seconds = [h[0] / b[0] for b, h in zip(runs["base"], runs["HEAD"], strict=True)]
    cpus = [h[1] / b[1] for b, h in zip(runs["base"], runs["HEAD"], strict=True)]
    print(report(runs, seconds, cpus, cpu))
    saved = {"base": args.base or str(args.base_tree), "runs": runs, "lockstep_cpu": cpu}
    path = args.json or Path(tempfile.mkstemp(prefix="cold-growth-", suffix=".json")[1])
    path.write_text(json.dumps(saved, indent=2))
    print(f"(JSON: {path})", file=sys.stderr)
    return 0


def report(
    runs: dict[str, list[tuple[float, float]]],
    seconds: list[float],
    cpus: list[float],
    cpu: dict[str, float],
) -> str:
    def median(name: str, field: int) -> float:
        return statistics.median(run[field] for run in runs[name])

    def spread(ratios: list[float]) -> str:
        return f"{statistics.median(ratios):.3f}x ({min(ratios):.3f}-{max(ratios):.3f})"

    return "\n".join(
        [
            "| measurement | base | HEAD | HEAD/base |",
            "| --- | --- | --- | --- |",
            f"| cold index, seconds (medians; ratio: median of {len(seconds)} paired rounds)"
            f" | {median('base', 0):.2f} s | {median('HEAD', 0):.2f} s | {spread(seconds)} |",
            f"| cold index, CPU of every process (same) | {median('base', 1):.2f} s"
            f" | {median('HEAD', 1):.2f} s | {spread(cpus)} |",
            f"| worker CPU for every file, in lock step | {cpu['base']:.2f} s"
            f" | {cpu['HEAD']:.2f} s | {cpu['HEAD'] / cpu['base']:.3f}x |",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
