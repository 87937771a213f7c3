"""NDCG@10 on a peer's benchmark: semble's (MinishLab/semble, ``benchmarks/``), with
its annotation files and its formula, chunkls answering as ``chunkls search --top-k 10``.

    uv run python bench/peer_benchmark.py CHECKOUTS ANNOTATIONS [--repos REPOS.json]
        [--repo NAME ...] [--mode M ...] [--set NAME=VALUE ...] [--json PATH] [--verbose]
        [--baseline PEER.json] [--lines chunk|part]

``CHECKOUTS`` holds one checkout per repository, named as its annotation file
(``ANNOTATIONS/<name>.json``: queries with ``relevant`` and ``secondary`` files or
line spans, and a ``category``); every repository with both is measured, or those
``--repo`` names. ``--repos`` is semble's ``repos.json``: each repository's
``benchmark_root`` (the folder semble indexes) is indexed instead of its whole
checkout. Nothing from the checkouts or annotations is kept in this repository.

Each repository is indexed in this process (no cache) and each query searched in
each mode through the query API, ``Queries.search(query, 10, mode)``: the ranking
``chunkls search --top-k 10`` prints. A result covers a target when its file matches
(either path a ``/``-suffix of the other) and its lines overlap the target's, if it
has lines; the figure is semble's NDCG@10 (``chunkls.search.metrics``: binary gains,
the ideal over the targets some indexed chunk covers, a query with none scored 0),
the same as ``chunkls eval`` prints for these files.

Prints NDCG@10 per repository and category and the mean over repositories (each
category: the mean of the repositories' means), and writes them as JSON (default
``bench/peer.json``; figures only, no query or path). ``--set NAME=VALUE`` sets a
constant of ``chunkls.search.hybrid`` for the run (``module.NAME=VALUE``: of
``chunkls.<module>``), as ``bench/retrieval.py``'s ``--set`` does: an ablation.
``--baseline`` names another run's JSON: each mode's differences from it are printed.
``--lines part`` matches a target's span with the lines of a result's best part (a
method, a window) rather than its whole chunk's.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))

TOP_K = 10
"""Results per query, as semble's benchmark asks (``_DIRECT_TOP_K``)."""
CATEGORIES = ("architecture", "semantic", "symbol")
"""The categories always reported (others found in the annotations are added)."""


# -- settings (ablations) --------------------------------------------------------------


def settings(assignments: list[str]) -> dict[str, Any]:
    """``--set`` as {``module.NAME``: value}: ``NAME`` alone is ``search.hybrid``'s."""
    found: dict[str, Any] = {}
    for assignment in assignments:
        target, equals, written = assignment.partition("=")
        module_name, _, name = target.rpartition(".")
        module_name = f"chunkls.{module_name or 'search.hybrid'}"
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            module = None
        if not equals or not name.isupper() or module is None or not hasattr(module, name):
            known = ""
            if module is not None:
                known = ", ".join(n for n in vars(module) if n.isupper() and not n.startswith("_"))
            raise SystemExit(f"--set {assignment}: not NAME=VALUE of {module_name} ({known})")
        try:
            found[f"{module_name}.{name}"] = ast.literal_eval(written)
        except (ValueError, SyntaxError) as error:
            raise SystemExit(f"--set {assignment}: {written!r} is no Python literal") from error
    return found


def apply(found: dict[str, Any]) -> None:
    """Set each constant (for this process: the run)."""
    for dotted, value in found.items():
        module_name, _, name = dotted.rpartition(".")
        setattr(importlib.import_module(module_name), name, value)


# -- the benchmark -----------------------------------------------------------------------


@dataclass
class RepoResult:
    """One repository's figures in one mode."""

    queries: int
    ndcg_at_10: float
    categories: dict[str, float]
    """Each category's mean NDCG@10 (its query count in ``counts``)."""
    counts: dict[str, int]
    index_s: float
    chunks: int
    per_query: list[dict[str, Any]] = field(default_factory=list, repr=False)
    """(``--verbose``: printed, never written.)"""


def repos_to_measure(
    checkouts: Path, annotations: Path, repos_json: Path | None, only: list[str]
) -> dict[str, tuple[Path, Path]]:
    """Each repository: (the folder to index, its annotation file)."""
    if not checkouts.is_dir():
        raise SystemExit(f"{checkouts}: not a directory of checkouts")
    if not annotations.is_dir():
        raise SystemExit(f"{annotations}: not a directory of annotation files")
    roots: dict[str, str | None] = {}
    if repos_json is not None:
        try:
            specs = json.loads(repos_json.read_text(encoding="utf-8"))
            roots = {spec["name"]: spec.get("benchmark_root") for spec in specs}
        except (OSError, ValueError, TypeError, KeyError) as error:
            raise SystemExit(f"{repos_json}: not semble's repos.json ({error})") from None
    found: dict[str, tuple[Path, Path]] = {}
    for annotation in sorted(annotations.glob("*.json")):
        name = annotation.stem
        checkout = checkouts / name
        if (only and name not in only) or not checkout.is_dir():
            continue
        folder = checkout / (roots.get(name) or ".")
        if not folder.is_dir():
            raise SystemExit(f"{name}: its benchmark root {folder} is not a directory")
        found[name] = (folder.resolve(), annotation)
    missing = sorted(set(only) - set(found))
    if missing:
        raise SystemExit(f"no checkout and annotation file for: {', '.join(missing)}")
    if not found:
        raise SystemExit(f"no repository has both a checkout in {checkouts} and annotations")
    return found


def measure_repo(
    folder: Path, annotation: Path, modes: list[str], part: bool = False
) -> dict[str, RepoResult]:
    """One repository indexed once, its queries searched in each mode."""
    from chunkls.cli.gold import indexed, place, read_gold
    from chunkls.index.session import build_index
    from chunkls.search.metrics import rank_figures, target_ranks

    gold, problems = read_gold(annotation, str(annotation))
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    started = time.perf_counter()
    session = build_index([folder], cache_dir=None)
    index_s = time.perf_counter() - started
    queries = session.queries
    matchable = [tuple(t for t in entry.relevant if indexed(queries, t)) for entry in gold]
    results: dict[str, RepoResult] = {}
    for mode in modes:
        scores: list[float] = []
        by_category: dict[str, list[float]] = {}
        per_query: list[dict[str, Any]] = []
        for entry, targets in zip(gold, matchable, strict=True):
            hits = queries.search(entry.query, TOP_K, mode)
            ranked = [place(hit, part) for hit in hits]
            ranks = target_ranks(ranked, targets)
            score = rank_figures([list(ranks.values())], TOP_K).ndcg_at_k
            scores.append(score)
            by_category.setdefault(entry.category or "none", []).append(score)
            per_query.append(
                {
                    "category": entry.category,
                    "ndcg": score,
                    "query": entry.query,
                    "ranks": {str(t): r for t, r in ranks.items()},
                    "not_indexed": [str(t) for t in entry.relevant if t not in targets],
                    "top": [p.chunk_id for p in ranked[:5]],
                }
            )
        results[mode] = RepoResult(
            queries=len(gold),
            ndcg_at_10=statistics.fmean(scores) if scores else 0.0,
            categories={c: statistics.fmean(s) for c, s in sorted(by_category.items())},
            counts={c: len(s) for c, s in sorted(by_category.items())},
            index_s=index_s,
            chunks=len(queries),
            per_query=per_query,
        )
    return results


def summary(by_repo: dict[str, RepoResult]) -> dict[str, Any]:
    """The mean over repositories, overall and per category."""
    categories = sorted({c for r in by_repo.values() for c in r.categories} | set(CATEGORIES))
    return {
        "ndcg_at_10": statistics.fmean(r.ndcg_at_10 for r in by_repo.values()),
        "categories": {
            c: statistics.fmean(r.categories[c] for r in by_repo.values() if c in r.categories)
            for c in categories
            if any(c in r.categories for r in by_repo.values())
        },
    }


def table(mode: str, by_repo: dict[str, RepoResult]) -> str:
    """One mode's Markdown table: a row per repository, then the mean."""
    mean = summary(by_repo)
    categories = list(mean["categories"])
    head = f"| {mode} | NDCG@10 | " + " | ".join(categories) + " | chunks | index s |"
    lines = [head, "| --- " * (len(categories) + 4) + "|"]
    for name, result in by_repo.items():
        cells = " | ".join(
            f"{result.categories[c]:.3f}" if c in result.categories else "-" for c in categories
        )
        lines.append(
            f"| {name} | {result.ndcg_at_10:.3f} | {cells} | {result.chunks} "
            f"| {result.index_s:.1f} |"
        )
    cells = " | ".join(f"{mean['categories'][c]:.3f}" for c in categories)
    lines.append(f"| **mean** | **{mean['ndcg_at_10']:.3f}** | {cells} | | |")
    return "\n".join(lines)


def read_baseline(path: Path | None) -> dict[str, Any] | None:
    """Another run's JSON (``--baseline``), or None."""
    if path is None:
        return None
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        record["modes"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"--baseline {path}: not a peer_benchmark.py JSON ({error})") from None
    return record


def deltas(mode: str, by_repo: dict[str, RepoResult], baseline: dict[str, Any]) -> str:
    """One line: this run's mean and categories less the baseline's, in one mode."""
    before = baseline["modes"].get(mode)
    if before is None:
        return f"(the baseline has no {mode})"
    now = summary(by_repo)
    cells = [f"NDCG@10 {now['ndcg_at_10'] - before['ndcg_at_10']:+.3f}"]
    cells += [
        f"{c} {value - before['categories'][c]:+.3f}"
        for c, value in now["categories"].items()
        if c in before.get("categories", {})
    ]
    cells += [
        f"{name} {r.ndcg_at_10 - before['repos'][name]['ndcg_at_10']:+.3f}"
        for name, r in by_repo.items()
        if name in before.get("repos", {})
    ]
    return f"{mode} against the baseline: " + ", ".join(cells)


def print_queries(name: str, mode: str, result: RepoResult) -> None:
    """Each query's NDCG@10, target ranks and top five (stderr)."""
    for query in result.per_query:
        print(
            f"  {name} {mode} [{query['category']}] ndcg={query['ndcg']:.3f} "
            f"ranks={query['ranks']} q={query['query']!r}",
            file=sys.stderr,
        )
        if query["not_indexed"]:
            print(f"      not indexed: {query['not_indexed']}", file=sys.stderr)
        print(f"      top: {query['top']}", file=sys.stderr)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from chunkls.search.modes import MODES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", type=Path, help="a folder of checkouts, one per repository")
    parser.add_argument("annotations", type=Path, help="a folder of semble's <name>.json files")
    parser.add_argument("--repos", type=Path, help="semble's repos.json (benchmark roots)")
    parser.add_argument("--repo", action="append", default=[], help="only this one (repeatable)")
    parser.add_argument(
        "--mode", action="append", choices=MODES, help="a search mode (default: each)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a constant of chunkls.search.hybrid for this run (module.NAME=VALUE: of "
        "chunkls.module; repeatable): an ablation",
    )
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "peer.json")
    parser.add_argument("--verbose", action="store_true", help="each query's ranks (stderr)")
    parser.add_argument(
        "--lines",
        choices=("chunk", "part"),
        default="chunk",
        help="a result's lines for a target's span: its chunk's (default, as semble "
        "matches its chunks) or its best part's",
    )
    parser.add_argument(
        "--baseline", type=Path, help="another run's JSON: print this run's differences from it"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from chunkls.search.modes import MODES

    modes = list(dict.fromkeys(args.mode or MODES))
    found = settings(args.set)
    apply(found)
    repos = repos_to_measure(args.checkouts, args.annotations, args.repos, args.repo)
    started = time.perf_counter()
    by_mode: dict[str, dict[str, RepoResult]] = {mode: {} for mode in modes}
    for name, (folder, annotation) in repos.items():
        for mode, result in measure_repo(folder, annotation, modes, args.lines == "part").items():
            by_mode[mode][name] = result
            if args.verbose:
                print_queries(name, mode, result)
    baseline = read_baseline(args.baseline)
    for mode in modes:
        print(table(mode, by_mode[mode]) + "\n")
        if baseline is not None:
            print(deltas(mode, by_mode[mode], baseline) + "\n")
    seconds = time.perf_counter() - started
    print(f"(the benchmark took {seconds:.1f} s)")
    report = {
        "settings": {
            "top_k": TOP_K,
            "modes": modes,
            "set": found,
            "benchmark_roots": args.repos is not None,
            "lines": args.lines,
            "repos": list(repos),
        },
        "modes": {
            mode: {
                **summary(by_repo),
                "repos": {
                    name: {
                        "ndcg_at_10": r.ndcg_at_10,
                        "queries": r.queries,
                        "categories": r.categories,
                        "category_queries": r.counts,
                        "chunks": r.chunks,
                        "index_s": r.index_s,
                    }
                    for name, r in by_repo.items()
                },
            }
            for mode, by_repo in by_mode.items()
        },
        "seconds": seconds,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
