"""``chunkls check``: the chunk IDs cited in documents that do not resolve, each
with what its history says it became; ``--fix`` rewrites the clear ones in
place, ``--diff`` shows those rewrites; text, JSON, GitHub workflow commands or
SARIF out."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from chunkls.cli.usage import UsageError, check_root

if TYPE_CHECKING:
    from chunkls.cli.commands import Command
    from chunkls.ids.grammar import ChunkRef
    from chunkls.index.citations import Problem
    from chunkls.index.queries import Queries


class Document(NamedTuple):
    shown: str
    """The path as printed."""
    real: str
    """Where it is read and written (symlinks resolved)."""
    language: str
    text: str
    rel_path: str | None


class Found(NamedTuple):
    """One stale citation of a document."""

    document: Document
    problem: Problem
    line: int
    """1-based, and the 1-based character column below."""
    column: int
    end_column: int
    end_line: int


def check(command: Command) -> int:
    """Run ``chunkls check``."""
    from chunkls.index.citations import language_of, read_text_file, real_inside, real_relative

    args = command.args
    if args.diff and not args.fix:
        raise UsageError("--diff shows what --fix would write: give both")
    root = check_root(args.root)
    session = command.session(root)
    folder = session.folders[0]
    documents: list[Document] = []
    unreadable: list[tuple[str, str | None]] = []
    for shown, path, confine in check_targets(root, args.paths, folder.rules.glob_excludes):
        real = os.path.realpath(path)  # once: the confinement and the relative path
        inside = confine is None or real_inside(real, confine)
        text = read_text_file(Path(real)) if inside else None
        rel_path = real_relative(real, folder.root_resolved) or folder.relative(path)
        if text is None:  # skipped, named once (below); the rest is checked
            unreadable.append((shown, rel_path))
            continue
        documents.append(Document(shown, real, language_of(path.name), text, rel_path))

    written: dict[int, list[ChunkRef]] = {}
    """Each document's references (read once: a question may be asked twice)."""

    def question(queries: Queries) -> list[Found]:
        from chunkls.ids.grammar import find_chunk_refs_in
        from chunkls.ids.positions import TextLines
        from chunkls.index.citations import SUGGEST_FOR

        found: list[Found] = []
        for number, document in enumerate(documents):
            refs = written.get(number)
            if refs is None:
                refs = written[number] = find_chunk_refs_in(document.text, document.language)
            # the suggestions after the history is known (an incomplete answer is asked again)
            problems = queries.check(
                document.text, document.language, folder, document.rel_path, refs, {}, 0
            )
            if not problems or queries.incomplete:
                continue
            suggested: dict[str, list[str]] = {}
            for index, problem in enumerate(problems):
                suggestions = suggested.get(problem.chunk_id)
                if suggestions is None:
                    suggestions = suggested[problem.chunk_id] = (
                        queries.fix_candidates(problem.chunk_id, 3, problem.replacement or False)
                        if len(suggested) < SUGGEST_FOR
                        else problem.suggestions
                    )
                problems[index] = problem._replace(suggestions=suggestions)
            lines = TextLines(document.text, "utf-32")
            for problem in problems:
                line, column = lines.position(problem.ref.start)
                end_line, end_column = lines.position(problem.ref.end)
                found.append(
                    Found(document, problem, line + 1, column + 1, end_column + 1, end_line + 1)
                )
        return found

    found = command.ask(session, question)
    for shown, rel_path in unreadable:  # (a corpus file the index skipped is named already)
        if rel_path is None or session.queries.skip_reason(rel_path) is None:
            command.skipped += 1
            if not args.quiet or args.strict:
                print(f"chunkls: skipped {shown}: not a readable UTF-8 text file", file=command.err)
    fixed: set[int] = set()
    if args.fix:
        from chunkls.cli.fix import fix

        fixed = fix(command, found, write=not args.diff)
    # (--diff writes nothing: every stale ID remains)
    left = [item for number, item in enumerate(found) if args.diff or number not in fixed]
    command.code = 1 if left else 0
    if args.format == "json":
        records = [record(item, number in fixed) for number, item in enumerate(found)]
        json.dump(records, command.out, indent=2, ensure_ascii=False)
        command.out.write("\n")
    elif args.format == "github":
        from chunkls.cli.ci_formats import github

        for item in left:
            shown, line, column = item.document.shown, item.line, item.column
            command.out.write(github(shown, line, column, item.problem.said()))
    elif args.format == "sarif":
        from chunkls.cli.ci_formats import sarif

        json.dump(sarif(found, fixed), command.out, indent=2, ensure_ascii=False)
        command.out.write("\n")
    elif not args.diff:
        for number, item in enumerate(found):
            problem = item.problem
            said = problem.said()
            if number in fixed:
                said = f"replaced {problem.chunk_id} with {problem.suggestions[0]}"
            print(f"{item.document.shown}:{item.line}:{item.column}: {said}", file=command.out)
    if found and args.format == "text":
        noun = "ID" if len(found) == 1 else "IDs"
        rest = f", {len(fixed)} fixed" if fixed and not args.diff else ""
        rest = f", {len(fixed)} fixable" if fixed and args.diff else rest
        print(f"chunkls: {len(found)} unknown chunk {noun}{rest}", file=command.err)
    return command.code


def record(item: Found, fixed: bool) -> dict[str, object]:
    """One stale citation as JSON: its place, the replacement, the other suggestions."""
    problem = item.problem
    replacement = problem.replacement
    suggestions = problem.suggestions
    if (
        replacement is not None
        and replacement.chunk_id
        and suggestions[:1] == [replacement.chunk_id]
    ):
        suggestions = suggestions[1:]
    found: dict[str, object] = {
        "path": item.document.shown,
        "line": item.line,
        "column": item.column,
        "chunk_id": problem.chunk_id,
        "written": item.document.text[problem.ref.start : problem.ref.end],
        "replacement": replacement.evidence() if replacement is not None else None,
        "suggestions": suggestions,
    }
    if replacement is not None and replacement.chunk_id is None:
        found["last_text"] = replacement.old_text
    if fixed:
        found["fixed"] = True
    return found


def check_targets(
    root: Path, paths: list[str], excluded: Callable[[str], bool]
) -> list[tuple[str, Path, Path | None]]:
    """The files to check, each with its name to print and the folder it must not leave
    (``None`` for a file given by name)."""
    from chunkls.index.citations import walk_citation_files

    within = root.resolve()
    if not paths:
        return [(rel, root / rel, within) for rel in walk_citation_files(root, excluded=excluded)]
    targets: list[tuple[str, Path, Path | None]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            top = path.resolve()
            targets += [
                (os.path.join(given, rel), path / rel, top) for rel in walk_citation_files(path)
            ]
        elif path.is_file():
            targets.append((given, path, None))
        else:
            raise UsageError(f"{given!r} does not exist")
    return targets
