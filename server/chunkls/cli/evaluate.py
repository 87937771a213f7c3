"""``chunkls eval``: how well each search mode, and another retriever's rankings,
find a gold set's relevant chunks.

Malformed lines and unknown relevant IDs are reported and left out; a query
with no relevant ID left, or none to search for, is left out of every ranking's
figures, so each is measured on the same queries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from chunkls.cli.usage import UsageError, check_root
from chunkls.ids.grammar import id_written
from chunkls.search import MODES
from chunkls.search.metrics import Figures, figures, ranks
from chunkls.search.modes import query_problem

if TYPE_CHECKING:
    from chunkls.cli.commands import Command
    from chunkls.index.queries import Queries

DEPTH = 100
"""Results read per query: a relevant chunk further down is "not in the first 100"."""


class Gold(NamedTuple):
    """One line of the gold set."""

    line: int
    query: str
    relevant: tuple[str, ...]
    text: str
    """The line as written (where an unknown ID is reported)."""


class Unknown(NamedTuple):
    """A relevant ID that resolves to nothing."""

    line: int
    column: int
    chunk_id: str
    suggestions: list[str]


def read_lines(path: Path, name: str, fields: tuple[str, str]) -> tuple[list[Any], list[str]]:
    """The well-formed lines of a JSON Lines file, as (line, query, IDs, text),
    and what was wrong with the others (``fields``: the query's and the IDs' keys)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{name}: cannot read it ({error})") from None
    good: list[Any] = []
    problems: list[str] = []
    query_key, ids_key = fields
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(f"{name}:{number}: not JSON ({error.msg}); left out")
            continue
        query = record.get(query_key) if isinstance(record, dict) else None
        ids = record.get(ids_key) if isinstance(record, dict) else None
        if not isinstance(query, str) or not query.strip():
            problems.append(f"{name}:{number}: no {query_key!r} string; left out")
        elif not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            problems.append(f"{name}:{number}: {ids_key!r} is not a list of chunk IDs; left out")
        elif ids_key == "relevant" and not ids:
            problems.append(f"{name}:{number}: no relevant chunk ID; left out")
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
    """The queries scored (their relevant IDs that resolve)."""
    rankings: dict[str, list[list[str]]]
    """Each ranking's IDs per scored query, best first."""
    unknown: list[Unknown]
    left_out: list[str]


def measure(
    queries: Queries, gold: list[Gold], modes: list[str], run: dict[str, list[str]] | None
) -> Report:
    """The rankings of the gold queries (a question: it only reads)."""
    scored: list[Gold] = []
    unknown: list[Unknown] = []
    left_out: list[str] = []
    for entry in gold:
        known = tuple(chunk_id for chunk_id in entry.relevant if queries.has_id(chunk_id))
        for chunk_id in entry.relevant:
            if chunk_id not in known:
                column = entry.text.find(json.dumps(chunk_id)[1:-1]) + 1 or 1
                suggestions = queries.fix_candidates(chunk_id)
                unknown.append(Unknown(entry.line, column, chunk_id, suggestions))
        problem = next(filter(None, (query_problem(entry.query, mode) for mode in MODES)), None)
        if problem is not None:
            left_out.append(f"{entry.line}: {problem}; left out")
        elif known:
            scored.append(entry._replace(relevant=known))
    rankings = {
        mode: [
            [hit.item.chunk.chunk_id for hit in queries.search(entry.query, DEPTH, mode)]
            for entry in scored
        ]
        for mode in modes
    }
    if run is not None:
        rankings["run"] = [run.get(entry.query, []) for entry in scored]
    return Report(scored, rankings, unknown, left_out)


def evaluate(command: Command) -> int:
    """Run ``chunkls eval``: 0 when queries were scored, 1 when none could be."""
    args = command.args
    root = check_root(args.root)
    lines, problems = read_lines(Path(args.gold), args.gold, ("query", "relevant"))
    gold = [Gold(*line) for line in lines]
    run = None
    if args.run is not None:
        run_lines, run_problems = read_lines(Path(args.run), args.run, ("query", "ranked"))
        problems += run_problems
        run = {query: list(ranked) for _, query, ranked, _ in run_lines}
    session = command.session(root)
    modes = [args.mode] if args.mode else list(MODES)
    report = command.ask(session, lambda queries: measure(queries, gold, modes, run))
    problems += [f"{args.gold}:{said}" for said in report.left_out]
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
    relevant = [entry.relevant for entry in report.queries]
    results = {
        name: figures(list(zip(ranked, relevant, strict=True)), args.top_k)
        for name, ranked in report.rankings.items()
    }
    command.code = 0 if report.queries else 1  # (before the answer: a reader may go)
    (_write_json if args.json else _write_text)(command, report, results)
    return command.code


def _misses(
    report: Report, ranked: list[list[str]], k: int
) -> list[tuple[Gold, dict[str, int | None]]]:
    """The queries with no relevant chunk in the first ``k``, and their ranks."""
    found = [
        (entry, ranks(these, entry.relevant))
        for entry, these in zip(report.queries, ranked, strict=True)
    ]
    return [(entry, got) for entry, got in found if all((r or k + 1) > k for r in got.values())]


def _label(command: Command, name: str) -> str:
    return f"run {command.args.run}" if name == "run" else name


def _write_text(command: Command, report: Report, results: dict[str, Figures]) -> None:
    k = command.args.top_k
    out = command.out
    out.write(f"{len(report.queries)} queries scored, top {k}\n\n")
    out.write(f"| ranking | R@1 | R@{k} | MRR@{k} | nDCG@{k} |\n| --- | --- | --- | --- | --- |\n")
    for name, result in results.items():
        cells = " | ".join(f"{value:.3f}" for value in result[1:])
        out.write(f"| {_label(command, name)} | {cells} |\n")
    for name, ranked in report.rankings.items():
        missed = _misses(report, ranked, k)
        if not missed:
            continue
        out.write(f"\n{_label(command, name)} missed {len(missed)} of {len(report.queries)}:\n")
        absent = "not ranked" if name == "run" else f"not in the first {DEPTH}"
        for entry, got in missed:
            said = ", ".join(
                f"{chunk_id} rank {rank}" if rank else f"{chunk_id} {absent}"
                for chunk_id, rank in got.items()
            )
            out.write(f"  line {entry.line}: {entry.query!r}: {said}\n")


def _write_json(command: Command, report: Report, results: dict[str, Figures]) -> None:
    k = command.args.top_k
    rankings = {
        name: {
            "label": _label(command, name),
            **result._asdict(),
            "misses": [
                {"line": entry.line, "query": entry.query, "ranks": got}
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
    }
    json.dump(record, command.out, indent=2, ensure_ascii=False)
    command.out.write("\n")
