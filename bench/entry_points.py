"""The entry points a user starts, each as a whole process on a warm cache.

    uv run python bench/entry_points.py [--corpus DIR] [--repeat N] [--baseline DIR]

Every row is measured the way a user meets it (a fresh ``python -m chunkls``
process, start to exit, or a language server from spawn to its first code
lens) and given as the median and p95 of ``--repeat`` runs, beside the same
measurement of a baseline tree (``--baseline``: another checkout with its own
virtual environment, e.g. main before the change) taken in the same run,
runs of the two interleaved so that this VM's noise weighs on both alike.
Each side has its own cache directory, filled (and let settle past the cache's
racy-file window) before the runs. The ``--mode bm25`` rows rank as a baseline
without search modes does (its only ranking), so the two sides do the same work.

``bench/run.py`` calls ``measure`` and adds these rows to its table.
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
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SETTLE_S = 2.5
"""After a cache is filled: files changed within 2 s of their row being written
are confirmed by hash (``chunkls.storage.cache.RACY_NS``), which a warm run would pay."""

Result = dict[str, Any]


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    at = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[at]


def _stats(samples: list[float]) -> Result:
    return {
        "median_s": statistics.median(samples),
        "p95_s": _percentile(samples, 95),
        "runs": samples,
    }


_TIMED = (
    "import sys, time\n"
    "from chunkls.cli import main\n"
    "started = time.perf_counter()\n"
    "code = main(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(repr(time.perf_counter() - started))\n"
    "raise SystemExit(code)\n"
)
"""``python -m chunkls`` that also writes the seconds after ``import chunkls.cli``."""


class Side:
    """One tree under test: its interpreter, and a cache directory of its own."""

    def __init__(self, name: str, tree: Path, cache: Path) -> None:
        self.name = name
        self.tree = tree
        python = tree / ".venv" / "bin" / "python"
        self.python = str(python if python.exists() else Path(sys.executable))
        self.times = cache.with_name(f"{cache.name}.times")
        self.env = {
            **os.environ,
            "XDG_CACHE_HOME": str(cache),
            # bytecode cached as an installed package has it, kept out of the trees
            "PYTHONPYCACHEPREFIX": str(cache.with_name(f"{cache.name}.pycache")),
        }
        for name in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE"):
            self.env.pop(name, None)
        self.answers: list[float] = []
        """Seconds of each ``cli`` run after ``import chunkls.cli`` (the answer)."""
        usage = subprocess.run(
            [self.python, "-m", "chunkls", "search", "--help"],
            cwd=tree,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        self.bm25 = ["--mode", "bm25"] if "--mode" in usage else []
        """The arguments that rank by ``bm25`` (none: a tree with no other ranking)."""

    def cli(self, *argv: str) -> float:
        """Seconds for one ``chunkls`` command, start to exit (the part after
        ``import chunkls.cli`` is added to ``answers``)."""
        started = time.perf_counter()
        done = subprocess.run(
            [self.python, "-c", _TIMED, str(self.times), *argv],
            cwd=self.tree,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        seconds = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise RuntimeError(f"{self.name}: chunkls {' '.join(argv)}: exit {done.returncode}")
        self.answers.append(float(self.times.read_text()))
        return seconds

    def first_lens(self, root: Path, document: Path) -> float:
        """Seconds from spawning ``chunkls serve`` to its first non-empty code lens
        response for ``document`` (the workspace folder ``root``)."""
        sys.path.insert(0, str(REPO / "bench"))
        from lsp_client import Client

        started = time.perf_counter()
        client = Client([self.python, "-m", "chunkls", "serve"], self.tree, env=self.env)
        try:
            uri = document.resolve().as_uri()
            client.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": root.resolve().as_uri(),
                    "workspaceFolders": [{"uri": root.resolve().as_uri(), "name": "root"}],
                    "capabilities": {
                        "window": {"workDoneProgress": True},
                        "workspace": {"workspaceFolders": True, "configuration": True},
                        "textDocument": {"codeLens": {}},
                    },
                },
            )
            client.notify("initialized", {})
            client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "python",
                        "version": 1,
                        "text": document.read_text(encoding="utf-8"),
                    }
                },
            )
            while True:
                lenses = client.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
                if lenses.message.get("result"):
                    return time.perf_counter() - started
                if time.perf_counter() - started > 60:
                    raise TimeoutError("no code lens within 60 s")
                time.sleep(0.002)
        finally:
            client.close()

    def server_rss(self, root: Path) -> float:
        """Resident MB of a server restarted on a warm cache of ``root``, indexed."""
        sys.path.insert(0, str(REPO / "bench"))
        from lsp_client import Client

        client = Client([self.python, "-m", "chunkls", "serve"], self.tree, env=self.env)
        try:
            client.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": root.resolve().as_uri(),
                    "workspaceFolders": [{"uri": root.resolve().as_uri(), "name": "root"}],
                    "capabilities": {"window": {"workDoneProgress": True}},
                },
            )
            client.notify("initialized", {})
            client.wait_indexed(300)
            time.sleep(1.0)  # the status goes out before the last step's clean-up
            for line in Path(f"/proc/{client.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
            raise RuntimeError("no VmRSS")
        finally:
            client.close()


def _interleaved(sides: list[Side], run: Any, repeat: int) -> dict[str, Result]:
    samples: dict[str, list[float]] = {side.name: [] for side in sides}
    for side in sides:
        side.answers = []
    for _ in range(repeat):
        for side in sides:
            samples[side.name].append(run(side))
    results = {}
    for side in sides:
        results[side.name] = _stats(samples[side.name])
        if side.answers:
            results[side.name]["after_import"] = _stats(side.answers)
    return results


def measure(corpus: Path, baseline: Path | None, repeat: int, rss: bool = True) -> Result:
    """Every entry-point row, for this tree and the baseline tree."""
    work = Path(tempfile.mkdtemp(prefix="chunkls-entry-"))
    try:
        sides = [Side("chunkls", REPO, work / "cache-new")]
        if baseline is not None:
            sides.append(Side("baseline", baseline, work / "cache-base"))
        repo = REPO
        document = REPO / "bench" / "run.py"  # a file whose place the layout does not move
        for side in sides:  # fill each side's cache (a cold index each)
            side.cli("search", "warm up", "--root", str(repo))
            side.cli("search", "warm up", "--root", str(corpus))
        time.sleep(SETTLE_S)
        for side in sides:  # settled: files confirmed by hash are recorded as such
            side.cli("search", "warm up", "--root", str(repo))
            side.cli("search", "warm up", "--root", str(corpus))
            side.first_lens(repo, document)  # and the server's own start-up cache
        rows: Result = {}
        query = "chunk id source path"
        rows["search_repo"] = _interleaved(
            sides, lambda side: side.cli("search", query, "--root", str(repo)), repeat
        )
        rows["search_stdlib"] = _interleaved(
            sides, lambda side: side.cli("search", "parse arguments", "--root", str(corpus)), repeat
        )
        rows["search_repo_bm25"] = _interleaved(
            sides, lambda side: side.cli("search", query, *side.bm25, "--root", str(repo)), repeat
        )
        rows["search_stdlib_bm25"] = _interleaved(
            sides,
            lambda side: side.cli("search", "parse arguments", *side.bm25, "--root", str(corpus)),
            repeat,
        )
        rows["check_repo"] = _interleaved(
            sides, lambda side: side.cli("check", "--root", str(repo)), repeat
        )
        rows["ids_stdlib"] = _interleaved(
            sides,
            lambda side: side.cli("chunks", "--format", "ids", "--root", str(corpus)),
            max(3, repeat // 2),
        )
        rows["serve_first_lens_repo"] = _interleaved(
            sides, lambda side: side.first_lens(repo, document), repeat
        )
        if rss:
            rows["server_rss_stdlib_mb"] = {side.name: side.server_rss(corpus) for side in sides}
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


GOALS = {
    "search_repo": ("`chunkls search` end to end, warm, this repository", 0.2),
    "search_stdlib": ("`chunkls search` end to end, warm, stdlib", 0.4),
    "search_repo_bm25": ("`chunkls search --mode bm25` end to end, warm, this repository", 0.2),
    "search_stdlib_bm25": ("`chunkls search --mode bm25` end to end, warm, stdlib", 0.4),
    "check_repo": ("`chunkls check` end to end, warm, this repository", 0.25),
    "ids_stdlib": ("`chunkls chunks --format ids` end to end, warm, stdlib", None),
    "serve_first_lens_repo": (
        "`chunkls serve`: spawn to first code lens, warm, this repository",
        0.3,
    ),
}


def _figure(result: Result) -> str:
    text = f"{result['median_s']:.3f} s (p95 {result['p95_s']:.3f})"
    after = result.get("after_import")
    if after:
        text += f"; after `import chunkls.cli` {after['median_s']:.3f} s"
    return text


def report(rows: Result) -> list[str]:
    """Table rows in ``bench/run.py``'s format (measurement, chunkls, baseline,
    ratio, target, met)."""
    lines = []
    for key, (name, goal) in GOALS.items():
        found = rows.get(key)
        if not found:
            continue
        ours, base = found["chunkls"], found.get("baseline")
        value, baseline = _figure(ours), _figure(base) if base else ""
        ratio = f"{ours['median_s'] / base['median_s']:.2f}x" if base else ""
        target = f"< {goal} s" if goal is not None else ""
        met = "" if goal is None else ("yes" if ours["median_s"] < goal else "NO")
        lines.append(f"| {name} | {value} | {baseline} | {ratio} | {target} | {met} |")
    rss = rows.get("server_rss_stdlib_mb")
    if rss:
        ours, base = rss["chunkls"], rss.get("baseline")
        lines.append(
            f"| server resident memory, stdlib indexed (restarted on its cache) | {ours:.0f} MB"
            f" | {f'{base:.0f} MB' if base else ''} | {f'{ours / base:.2f}x' if base else ''}"
            f" | < 100 MB | {'yes' if ours < 100 else 'NO'} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--no-rss", action="store_true", help="skip the server memory row")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = measure(args.corpus.resolve(), args.baseline, args.repeat, rss=not args.no_rss)
    print("| measurement | chunkls | baseline | ratio | target | met |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(report(rows)))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
