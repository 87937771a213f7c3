"""``chunkls eval``: how well each search mode, and another retriever's rankings, find a
gold set's relevant chunks or files. Every ranking is measured on the same queries (those
with relevant IDs left); a query whose file targets the index lacks scores 0, as semble's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from chunkls.cli.gold import Gold, indexed, place, read_gold, read_text, records
from chunkls.cli.usage import check_root
from chunkls.ids.grammar import id_written
from chunkls.search import MODES
from chunkls.search.metrics import Figures, Place, Span, Target, rank_figures, target_ranks
from chunkls.search.modes import query_problem

if TYPE_CHECKING:
    from chunkls.cli.commands import Command
    from chunkls.index.queries import Queries

DEPTH = 100
"""Results read per query: a relevant chunk further down is "not in the first 100"."""


class Unknown(NamedTuple):
    """A relevant ID that resolves to nothing."""

    line: int
    column: int
    chunk_id: str
    suggestions: list[str]


def read_lines(path: Path, name: str, fields: tuple[str, str]) -> tuple[list[Any], list[str]]:
    """The well-formed records of a JSON Lines file (or array), as (line, query, IDs, text),
    and what was wrong with the others (``fields``: the query's and the IDs' keys)."""
    good: list[Any] = []
    problems: list[str] = []
    query_key, ids_key = fields
    for number, record, line, wrong in records(read_text(path, name)):
        if wrong is not None:
            problems.append(f"{name}:{number}: {wrong}; left out")
            continue
        query = record.get(query_key) if isinstance(record, dict) else None
        ids = record.get(ids_key) if isinstance(record, dict) else None
        if not isinstance(query, str) or not query.strip():
            problems.append(f"{name}:{number}: no {query_key!r} string; left out")
        elif not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            problems.append(f"{name}:{number}: {ids_key!r} is not a list of chunk IDs; left out")
        else:
            good.append((number, query, tuple(map(_written, ids)), line))
    return good, problems


def _written(text: str) -> str:
    """An ID as the one normaliser reads it (a JSON-escaped or linked form too)."""
    ref = id_written(text)
    return ref.chunk_id if ref is not None else text.strip()


class Report(NamedTuple):
    """What a gold set measured."""

    queries: list[Gold]
    """The queries scored (their targets the index has)."""
    rankings: dict[str, list[list[Place]]]
    """Each ranking's chunks per scored query, best first."""
    unknown: list[Unknown]
    missing: list[tuple[Gold, Span]]
    """File targets no indexed chunk covers (not counted)."""
    left_out: list[str]


def measure(
    queries: Queries, gold: list[Gold], modes: list[str], run: dict[str, list[str]] | None
) -> Report:
    """The rankings of the gold queries (a question: it only reads)."""
    scored: list[Gold] = []
    unknown: list[Unknown] = []
    missing: list[tuple[Gold, Span]] = []
    left_out: list[str] = []
    for entry in gold:
        known = tuple(target for target in entry.relevant if indexed(queries, target))
        for target in entry.relevant:
            if target in known:
                continue
            if isinstance(target, Span):
                missing.append((entry, target))
                continue
            column = entry.text.find(json.dumps(target)[1:-1]) + 1 or 1
            suggestions = queries.fix_candidates(target)
            unknown.append(Unknown(entry.line, column, target, suggestions))
        problem = next(filter(None, (query_problem(entry.query, mode) for mode in MODES)), None)
        if problem is not None:
            left_out.append(f"{entry.line}: {problem}; left out")
        elif known or entry.by_file:  # (semble's benchmark scores a query it cannot match 0)
            scored.append(entry._replace(relevant=known))
    rankings = {
        mode: [[place(hit) for hit in queries.search(entry.query, DEPTH, mode)] for entry in scored]
        for mode in modes
    }
    if run is not None:
        rankings["run"] = [_places(queries, run.get(entry.query, [])) for entry in scored]
    return Report(scored, rankings, unknown, missing, left_out)


def _places(queries: Queries, ranked: list[str]) -> list[Place]:
    """Another retriever's ranked IDs, each where its chunk is (nowhere: unknown)."""
    found = []
    for chunk_id in ranked:
        chunks = queries.lookup(chunk_id)
        chunk = chunks[0].chunk if chunks else None
        where = (chunk.source_path, chunk.start_line, chunk.end_line) if chunk else ("", 0, 0)
        found.append(Place(chunk_id, *where))
    return found


def evaluate(command: Command) -> int:
    """Run ``chunkls eval``: 0 when queries were scored, 1 when none could be."""
    args = command.args
    root = check_root(args.root)
    gold, problems = read_gold(Path(args.gold), args.gold)
    run = None
    if args.run is not None:
        run_lines, run_problems = read_lines(Path(args.run), args.run, ("query", "ranked"))
        problems += run_problems
        run = {query: list(ranked) for _, query, ranked, _ in run_lines}
    session = command.session(root)
    modes = [args.mode] if args.mode else list(MODES)
    report = command.ask(session, lambda queries: measure(queries, gold, modes, run))
    problems += [f"{args.gold}:{said}" for said in report.left_out]
    problems += [
        f"{args.gold}:{entry.line}: no indexed chunk covers {target}; not counted"
        for entry, target in report.missing
    ]
    if run is not None:
        missing = sum(entry.query not in run for entry in report.queries)
        if missing:
            problems.append(f"{args.run}: no ranking for {missing} gold queries (scored empty)")
    for problem in [] if args.quiet else problems:
        print(f"chunkls: {problem}", file=command.err)
    for item in [] if args.quiet else report.unknown:
        hint = f" (did you mean {item.suggestions[0]}?)" if item.suggestions else ""
        where = f"{args.gold}:{item.line}:{item.column}"
        print(f"{where}: unknown chunk ID {item.chunk_id}{hint}", file=command.err)
    results = {
        name: _figures(report.queries, ranked, args.top_k)
        for name, ranked in report.rankings.items()
    }
    command.code = 0 if report.queries else 1  # (before the answer: a reader may go)
    (_write_json if args.json else _write_text)(command, report, results)
    return command.code


def _found(
    gold: list[Gold], ranked: list[list[Place]]
) -> list[tuple[Gold, dict[Target, int | None]]]:
    """Each scored query's targets' ranks in one ranking."""
    return [
        (entry, target_ranks(places, entry.relevant))
        for entry, places in zip(gold, ranked, strict=True)
    ]


class Measured(NamedTuple):
    """One ranking's figures: over every scored query, and per category."""

    overall: Figures
    categories: dict[str, Figures]


def _figures(gold: list[Gold], ranked: list[list[Place]], k: int) -> Measured:
    found = _found(gold, ranked)
    by_category: dict[str, list[list[int | None]]] = {}
    for entry, got in found:
        if entry.category is not None:
            by_category.setdefault(entry.category, []).append(list(got.values()))
    return Measured(
        rank_figures([list(got.values()) for _, got in found], k),
        {name: rank_figures(got, k) for name, got in sorted(by_category.items())},
    )


def _misses(
    report: Report, ranked: list[list[Place]], k: int
) -> list[tuple[Gold, dict[Target, int | None]]]:
    """The queries with no relevant chunk in the first ``k``, and their ranks."""
    return [
        (entry, got)
        for entry, got in _found(report.queries, ranked)
        if all((r or k + 1) > k for r in got.values())
    ]


def _label(command: Command, name: str) -> str:
    return f"run {command.args.run}" if name == "run" else name


def _write_text(command: Command, report: Report, results: dict[str, Measured]) -> None:
    k = command.args.top_k
    out = command.out
    out.write(f"{len(report.queries)} queries scored, top {k}\n\n")
    out.write(f"| ranking | R@1 | R@{k} | MRR@{k} | nDCG@{k} |\n| --- | --- | --- | --- | --- |\n")
    for name, result in results.items():
        cells = " | ".join(f"{value:.3f}" for value in result.overall[1:])
        out.write(f"| {_label(command, name)} | {cells} |\n")
    categories = sorted({name for result in results.values() for name in result.categories})
    if categories:
        counts = Counter(entry.category for entry in report.queries if entry.category)
        heads = " | ".join(f"{name} ({counts[name]})" for name in categories)
        out.write(f"\nnDCG@{k} by category (queries)\n\n")
        out.write(f"| ranking | all ({len(report.queries)}) | {heads} |\n")
        out.write("| --- " * (len(categories) + 2) + "|\n")
        for name, result in results.items():
            cells = " | ".join(
                f"{result.categories[c].ndcg_at_k:.3f}" if c in result.categories else "-"
                for c in categories
            )
            out.write(f"| {_label(command, name)} | {result.overall.ndcg_at_k:.3f} | {cells} |\n")
    for name, ranked in report.rankings.items():
        missed = _misses(report, ranked, k)
        if not missed:
            continue
        out.write(f"\n{_label(command, name)} missed {len(missed)} of {len(report.queries)}:\n")
        absent = "not ranked" if name == "run" else f"not in the first {DEPTH}"
        for entry, got in missed:
            said = (
                ", ".join(
                    f"{target} rank {rank}" if rank else f"{target} {absent}"
                    for target, rank in got.items()
                )
                or "nothing in the index to find"
            )
            out.write(f"  line {entry.line}: {entry.query!r}: {said}\n")


def _write_json(command: Command, report: Report, results: dict[str, Measured]) -> None:
    k = command.args.top_k
    rankings = {
        name: {
            "label": _label(command, name),
            **result.overall._asdict(),
            "categories": {c: figures._asdict() for c, figures in result.categories.items()},
            "misses": [
                {
                    "line": entry.line,
                    "query": entry.query,
                    "ranks": {str(t): r for t, r in got.items()},
                }
                for entry, got in _misses(report, report.rankings[name], k)
            ],
        }
        for name, result in results.items()
    }
    record = {
        "top_k": k,
        "queries": len(report.queries),
        "rankings": rankings,
        "unknown": [item._asdict() for item in report.unknown],
        "not_indexed": [{"line": entry.line, "target": str(t)} for entry, t in report.missing],
    }
    json.dump(record, command.out, indent=2, ensure_ascii=False)
    command.out.write("\n")
