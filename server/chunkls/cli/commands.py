"""The CLI's commands: each opens its root's session, asks through ``Command.ask`` (the write
step first: the cache is current for the next run), and prints the answer."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from chunkls.cli.usage import UsageError, check_root
from chunkls.index.session import Session
from chunkls.runtime.gc_budget import resume_gc

if TYPE_CHECKING:
    import argparse

    from chunkls.chunking.located_chunk import LocatedChunk
    from chunkls.index.folder import IndexedChunk
    from chunkls.index.queries import Queries
    from chunkls.index.replacement import Replacement

T = TypeVar("T")
Resolved = tuple["list[IndexedChunk]", "Replacement | None", list[str], "str | None"]


class ProgressBar:
    """Indexing progress on stderr, only when it is a terminal."""

    def __init__(self, err: TextIO) -> None:
        isatty = getattr(err, "isatty", None)
        self.err = err
        self.enabled = bool(isatty and isatty())
        self.shown = False
        self.last = 0.0

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.1 and done < total) or not total:
            return
        self.last = now
        width = 30
        filled = width * done // total
        bar = "#" * filled + "-" * (width - filled)
        self.err.write(f"\rchunkls: indexing [{bar}] {done}/{total} files")
        self.err.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.err.write("\r\x1b[K")
            self.err.flush()


class Command:
    """One command's run: its arguments, output streams and session."""

    def __init__(
        self, args: argparse.Namespace, out: TextIO, err: TextIO, collecting: bool = True
    ) -> None:
        self.args = args
        self.collecting = collecting
        """Whether the garbage collector runs while indexing (``main`` pauses it elsewhere)."""
        self.out = out
        self.err = err
        self.skipped = 0
        """Files skipped, by the index or by the check (``--strict`` fails the run on any)."""
        self.code = 0
        """The exit code the work determined, set before the answer is written."""

    def session(self, root: Path) -> Session:
        """The root's session, read in place from its cache unless ``--no-cache``."""
        from chunkls.chunking.corpus import CorpusRules, glob_problem
        from chunkls.storage.cache import cache_dir

        for pattern in self.args.exclude:
            if (problem := glob_problem(pattern)) is not None:
                raise UsageError(f"--exclude: {problem}")

        session = Session(
            None if self.args.no_cache else cache_dir(),
            workers=self.args.jobs,
            read_in_place=True,
            base_rules=CorpusRules().extended(exclude_globs=self.args.exclude),
        )
        session.add_root(root)
        return session

    def ask(self, session: Session, question: Callable[[Queries], T]) -> T:
        """The session's answer (``Session.ask``, with a progress bar), then what
        could not be indexed, reported. When a folder is left to index after its
        cache was tried in place, the cyclic garbage collector runs again."""
        bar = ProgressBar(self.err)
        try:
            session.read_in_place_if_current()
            if session.waiting and self.collecting:
                resume_gc()
            answer = session.ask(question, bar.update)
        finally:
            bar.close()
        self.report(session.queries)
        return answer

    def report(self, queries: Queries) -> None:
        """Configuration problems and skipped files, on stderr (``--quiet``: ``--strict``'s)."""
        skipped = list(queries.skipped())
        self.skipped += len(skipped)
        if self.args.quiet and not (skipped and self.args.strict):
            return
        for folder in [] if self.args.quiet else queries.folders:
            for problem in folder.config_problems:
                print(f"chunkls: {problem.source}: {problem.message}", file=self.err)
        for _folder, rel_path, reason in skipped:
            print(f"chunkls: skipped {rel_path}: {reason}", file=self.err)
        if skipped:
            noun = "file" if len(skipped) == 1 else "files"
            said = f"{len(skipped)} {noun} skipped (they could not be chunked)"
            print(f"chunkls: {said}", file=self.err)

    def search(self) -> int:
        from chunkls.search.modes import query_problem

        args = self.args
        root = check_root(args.root)
        if (problem := query_problem(args.query, "bm25")) is not None:  # nothing to search
            raise UsageError(problem)
        session = self.session(root)
        mode = session.queries.search_mode(args.mode)  # (the root's rules are read)
        if (problem := query_problem(args.query, mode)) is not None:
            raise UsageError(problem)
        indexed, hits = self.ask(
            session,
            lambda queries: (len(queries), queries.search(args.query, args.top_k, mode)),
        )
        self.code = 0 if hits else 1
        if args.json:
            results = [
                {
                    "chunk_id": hit.item.chunk.chunk_id,
                    "score": round(hit.score, 6),
                    "source_path": hit.item.chunk.source_path,
                    "start_line": hit.item.chunk.start_line,
                    "end_line": hit.item.chunk.end_line,
                    "lines": list(
                        hit.lines or (hit.item.chunk.start_line, hit.item.chunk.end_line)
                    ),
                    "part": hit.part,
                }
                for hit in hits
            ]
            json.dump({"indexed": indexed, "mode": mode, "results": results}, self.out, indent=2)
            self.out.write("\n")
        else:
            print(f"Indexed {indexed} chunks", file=self.out)
            for rank, hit in enumerate(hits, 1):
                chunk = hit.item.chunk
                # the tutorial's line (``bm25``: its demo's output, exactly), then the best lines
                said = f"{rank}. {chunk.chunk_id} ({mode} {hit.score:.3f})"
                if mode != "bm25" and hit.lines is not None:
                    said += f" lines {hit.lines[0]}-{hit.lines[1]}"
                print(said, file=self.out)
        if not hits and not args.quiet:  # (the exit code says it)
            print(f"chunkls: no chunks match {args.query!r}", file=self.err)
        return self.code

    def chunks(self) -> int:
        args = self.args
        if args.root is not None and args.root_option is not None and args.root != args.root_option:
            raise UsageError(f"two roots given: {args.root!r} and --root {args.root_option!r}")
        session = self.session(check_root(args.root_option or args.root or "."))
        if args.format == "ids":  # the IDs only: no text is read
            ids = self.ask(session, lambda queries: list(queries.chunk_ids()))
            self.out.writelines(f"{chunk_id}\n" for chunk_id in ids)
            return 0
        written = 0  # streamed; past a file whose texts were missing, the rest once recovered

        def stream(queries: Queries) -> None:
            nonlocal written
            source, complete = None, True
            for number, entry in enumerate(queries.chunks()):
                if entry.chunk.source_path != source:  # (checked once a file)
                    source, complete = entry.chunk.source_path, not queries.incomplete
                if complete and number >= written:
                    self.out.write(json.dumps(chunk_record(entry.chunk), ensure_ascii=False) + "\n")
                    written = number + 1

        self.ask(session, stream)
        return 0

    def resolve(self) -> int:
        from chunkls.ids.grammar import candidate_ids, id_written

        args = self.args
        session = self.session(check_root(args.root))
        ref = id_written(args.chunk_id)
        shown = ref.chunk_id if ref is not None else args.chunk_id.strip()
        outside = False

        def question(queries: Queries) -> Resolved:
            nonlocal shown, outside
            found = queries.resolve_first(candidate_ids(ref, None)) if ref is not None else []
            if found:
                return found, None, [], None
            if ref is not None:  # (root-relative, when written with a root's absolute path)
                shown, outside = queries.written_id(ref)
            replacement = queries.replacement(shown) if ref is not None else None
            moved = replacement.chunk_id if replacement is not None else None
            followed = queries.lookup(moved) if moved is not None else []
            suggestions = queries.fix_candidates(shown) if ref is not None else []
            if suggestions[:1] == [moved]:
                suggestions = suggestions[1:]  # (the replacement is said first)
            return followed, replacement, suggestions, queries.skip_reason(shown.partition("#")[0])

        matches, replacement, suggestions, skipped = self.ask(session, question)
        self.code = 0 if matches else 1
        if replacement is not None:
            print(f"chunkls: {shown}: {replacement.said()}", file=self.err)
        elif not matches:
            said_skipped = ref is not None and skipped is not None
            why = f": {shown.partition('#')[0]} was skipped: {skipped}" if said_skipped else ""
            if outside:
                why = f": /{shown.partition('#')[0]} is outside every workspace root"
            print(f"chunkls: unknown chunk ID {shown}{why}", file=self.err)
        if suggestions and not matches:
            print("did you mean:", file=self.err)
            for suggestion in suggestions:
                print(f"  {suggestion}", file=self.err)
        deleted = replacement is not None and not matches
        if args.json:
            record: dict[str, object] = {"chunks": [chunk_record(e.chunk) for e in matches]}
            if replacement is not None:
                record.update(
                    moved_from=shown, replacement=replacement.evidence(), suggestions=suggestions
                )
                if deleted:
                    record.update(unknown=shown, last_text=replacement.old_text)
            elif not matches:
                record.update(unknown=shown, suggestions=suggestions, skipped=skipped)
            json.dump(record, self.out, indent=2, ensure_ascii=False)
            self.out.write("\n")
            return self.code
        if deleted and replacement is not None:  # its last text, marked as history
            where = f"{replacement.commit[:7]}, {replacement.date}" if replacement.commit else ""
            self.out.write(f"{shown} (deleted; last seen {where or 'in the index'})\n")
            self.out.write(f"{replacement.old_text}\n")
        for number, entry in enumerate(matches):
            chunk = entry.chunk
            if number:
                self.out.write("\n")
            self.out.write(
                f"{chunk.source_path}:{chunk.start_line}-{chunk.end_line}\n{chunk.text}\n"
            )
        return self.code

    def check(self) -> int:
        from chunkls.cli.check import check

        return check(self)

    def eval(self) -> int:
        from chunkls.cli.evaluate import evaluate

        return evaluate(self)


def chunk_record(chunk: LocatedChunk) -> dict[str, object]:
    """A chunk as JSON: the tutorial's ``Chunk`` fields, then its lines."""
    return {
        "chunk_id": chunk.chunk_id,
        "text": chunk.text,
        "source_path": chunk.source_path,
        "file_type": chunk.file_type,
        "symbol": chunk.symbol,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
    }


def run_command(args: argparse.Namespace, out: TextIO, err: TextIO, collecting: bool = True) -> int:
    """Run one of the commands; its exit code (``--strict``: 1 when a file was skipped)."""
    command = Command(args, out, err, collecting)
    try:
        code: int = getattr(command, args.command)()
        out.flush()  # a closed pipe shows up here, not in the interpreter's exit
    except BrokenPipeError:
        from chunkls.runtime.streams import discard_output

        discard_output(out)
        code = command.code
    return 1 if code == 0 and args.strict and command.skipped else code
