"""The ``chunkls`` command line: chunks, search, resolve and serve.

Exit codes: 0 success; 1 a result the caller asked about is missing (an unknown
ID, a search that matches no chunk, or skipped files with ``--strict``); 2 usage
errors (among them a search query with no searchable terms). Usage errors print
the subcommand's usage.
"""

from __future__ import annotations

# Only what parsing the command line needs is imported here: `chunkls --help`
# and every command start in a blink, and each command imports what it uses
# (tests/unit/test_startup.py holds this module to an allow-list).
import argparse
import os
import sys
import time
from contextlib import redirect_stderr, redirect_stdout, suppress
from functools import partial

TYPE_CHECKING = False
"""``typing.TYPE_CHECKING`` without importing ``typing`` (type checkers treat the
name the same way)."""

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path
    from typing import NoReturn, TextIO, TypeVar

    from chunkls.index import IndexedChunk, WorkspaceIndex
    from chunkls.index.ondisk import DiskIndex

    T = TypeVar("T")


class UsageError(Exception):
    """A bad command line: reported with exit code 2."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _check_root(text: str) -> Path:
    from pathlib import Path

    root = Path(text)
    if not root.exists():
        raise UsageError(f"root {text!r} does not exist")
    if not root.is_dir():
        raise UsageError(f"root {text!r} is not a directory")
    try:
        with os.scandir(root):
            pass
    except OSError as error:
        raise UsageError(f"root {text!r} is not readable: {error.strerror or error}") from None
    return root


class _Version(argparse.Action):
    """``--version``: the version is looked up (package metadata) only when asked."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from chunkls import __version__

        sys.stdout.write(f"chunkls {__version__}\n")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chunkls",
        description="Chunk a repository as the RAG tutorial does, search the chunks "
        "with BM25, resolve chunk IDs, or run the language server.",
    )
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="show program's version number and exit"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    corpus = argparse.ArgumentParser(add_help=False)
    corpus.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files or folders matching this root-relative glob (repeatable)",
    )
    corpus.add_argument(
        "--strict", action="store_true", help="exit 1 when any file had to be skipped"
    )
    corpus.add_argument(
        "--no-cache",
        action="store_true",
        help="index from scratch without reading or writing the cache "
        "(kept under $XDG_CACHE_HOME/chunkls)",
    )
    corpus.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        metavar="N",
        help="worker processes for indexing (default: one per CPU)",
    )

    search = commands.add_parser(
        "search", parents=[corpus], help="BM25 search over the chunks (the tutorial's demo)"
    )
    search.add_argument("query", help="free text or code words, e.g. 'chunk_id source_path'")
    search.add_argument("--root", default=".", help="corpus root (default: .)")
    search.add_argument(
        "--top-k", type=_positive_int, default=5, metavar="N", help="results (default 5)"
    )
    search.add_argument("--json", action="store_true", help="print JSON instead of text")
    search.set_defaults(usage=search.format_usage)

    chunks = commands.add_parser(
        "chunks", parents=[corpus], help="list every chunk in corpus order"
    )
    chunks.add_argument("root", nargs="?", default=None, help="corpus root (default: .)")
    chunks.add_argument(
        "--root",
        dest="root_option",
        metavar="ROOT",
        help="corpus root, as the other commands take it",
    )
    chunks.set_defaults(usage=chunks.format_usage)
    chunks.add_argument(
        "--format",
        choices=("jsonl", "ids"),
        default="jsonl",
        help="jsonl: one JSON object per chunk (default); ids: one chunk ID per line",
    )

    resolve = commands.add_parser(
        "resolve", parents=[corpus], help="show where a chunk ID points, and its text"
    )
    resolve.add_argument("chunk_id", metavar="CHUNK_ID", help="e.g. app/x.py#function-f")
    resolve.add_argument("--root", default=".", help="corpus root (default: .)")
    resolve.set_defaults(usage=resolve.format_usage)

    check = commands.add_parser(
        "check",
        parents=[corpus],
        help="report chunk IDs cited in Markdown and text files that do not resolve",
    )
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or folders to check (default: every Markdown and text file of the root)",
    )
    check.add_argument("--root", default=".", help="corpus root (default: .)")
    check.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (default) or json"
    )
    check.set_defaults(usage=check.format_usage)

    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="use stdio (the default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP, for debugging")

    mcp = commands.add_parser("mcp", help="run the MCP server for agents (stdio)")
    mcp.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="corpus root (repeatable; default: .)",
    )
    mcp.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="as for search")
    mcp.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    mcp.set_defaults(usage=mcp.format_usage)
    return parser


def _index(
    root: Path, args: argparse.Namespace, err: TextIO, report: bool = True
) -> WorkspaceIndex:
    from chunkls import index as workspace_index
    from chunkls.chunking import CorpusRules
    from chunkls.storage.cache import cache_dir

    if getattr(args, "collecting", False):  # (``main`` stops collections for an answer in place)
        import gc

        gc.enable()
    _tune_allocator()
    base = CorpusRules().extended(exclude_globs=args.exclude)
    bar = _ProgressBar(err)
    index = workspace_index.build_index(
        [root], base, bar.update, None if args.no_cache else cache_dir(), args.jobs
    )
    bar.close()
    if report:
        _report(index, args, err)
    return index


def _tune_allocator() -> None:
    """Before indexing or serving: large arrays from mmap (``chunkls.runtime.memory``).
    A question the cache answers in place allocates little and skips it."""
    from chunkls.runtime.memory import tune_allocator

    tune_allocator()


def _report(index: WorkspaceIndex | DiskIndex, args: argparse.Namespace, err: TextIO) -> None:
    """Configuration problems and skipped files, on stderr."""
    for folder in index.folders:
        for problem in folder.config_problems:
            print(f"chunkls: {problem.source}: {problem.message}", file=err)
    skipped = list(index.skipped())
    for _folder, rel_path, reason in skipped:
        print(f"chunkls: skipped {rel_path}: {reason}", file=err)
    if skipped:
        noun = "file" if len(skipped) == 1 else "files"
        print(f"chunkls: {len(skipped)} {noun} skipped (they could not be chunked)", file=err)
    args.skipped_count = len(skipped)


def _on_disk(root: Path, args: argparse.Namespace, err: TextIO) -> DiskIndex | None:
    """The folder's cache read in place, when it holds the folder as it is now
    (``chunkls.index.ondisk``): nothing is loaded but what the answer needs."""
    if args.no_cache:
        return None
    from chunkls.chunking import CorpusRules
    from chunkls.index.ondisk import open_current
    from chunkls.storage.cache import cache_dir

    disk = open_current(root, CorpusRules().extended(exclude_globs=args.exclude), cache_dir())
    if disk is not None:
        _report(disk, args, err)
    return disk


def _ask(
    root: Path,
    args: argparse.Namespace,
    err: TextIO,
    ask: Callable[[WorkspaceIndex | DiskIndex], T],
) -> tuple[WorkspaceIndex | DiskIndex, T]:
    """The answer of the cache read in place when it is current; else (or when
    it turns out not to hold what it should) of the folder indexed, which
    brings the cache up to date for the next run."""
    from chunkls.index.ondisk import Stale

    disk = _on_disk(root, args, err)
    if disk is not None:
        try:
            return disk, ask(disk)
        except Stale:
            disk.close()
    index = _index(root, args, err, report=disk is None)
    return index, _answer(index, partial(ask, index))


def _answer(index: WorkspaceIndex, ask: Callable[[], T]) -> T:
    """Ask the index; when chunk texts turned out gone from its cache (cleared or
    rewritten meanwhile), read those files again and ask once more."""
    answer = ask()
    if index.texts_missing and index.recover_texts():
        answer = ask()
    return answer


def _every_chunk(index: WorkspaceIndex) -> Iterator[IndexedChunk]:
    """``index.chunks()``, with the files whose texts turned out gone from the
    cache read again on the way (in their place: corpus order holds)."""
    from chunkls.index import IndexedChunk

    def recovered() -> Iterator[IndexedChunk]:
        missing = sorted(index.texts_missing, key=lambda key: (key[0].position, key[1]))
        if missing and index.recover_texts():
            for folder, rel_path in missing:
                for chunk in index.file_chunks(folder, rel_path):
                    yield IndexedChunk(folder, chunk)

    for entry in index.chunks():
        yield from recovered()  # a file that came before this one
        yield entry
    yield from recovered()


class _ProgressBar:
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


def _search(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import json

    from chunkls.search.tokens import tokenize

    root = _check_root(args.root)
    if not tokenize(args.query):
        raise UsageError(
            f"the query has no searchable terms (no letters or digits): {args.query!r}"
        )
    index, hits = _ask(root, args, err, lambda index: index.search(args.query, args.top_k))
    if args.json:
        results = [
            {
                "chunk_id": hit.item.chunk.chunk_id,
                "score": round(hit.score, 6),
                "source_path": hit.item.chunk.source_path,
                "start_line": hit.item.chunk.start_line,
                "end_line": hit.item.chunk.end_line,
            }
            for hit in hits
        ]
        json.dump({"indexed": len(index), "results": results}, out, indent=2)
        out.write("\n")
    else:
        print(f"Indexed {len(index)} chunks", file=out)
        for rank, hit in enumerate(hits, 1):
            print(f"{rank}. {hit.item.chunk.chunk_id} (bm25 {hit.score:.3f})", file=out)
    if not hits:
        print(f"chunkls: no chunks match {args.query!r}", file=err)
        return 1
    return 0


def _chunks(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import json

    if args.root is not None and args.root_option is not None and args.root != args.root_option:
        raise UsageError(f"two roots given: {args.root!r} and --root {args.root_option!r}")
    root = _check_root(args.root_option or args.root or ".")
    if args.format == "ids":  # the IDs only: the cache read in place has them
        from chunkls.index.ondisk import Stale

        disk = _on_disk(root, args, err)
        if disk is not None:
            try:
                ids = disk.chunk_ids()
            except Stale:
                disk.close()
            else:
                out.writelines(f"{chunk_id}\n" for chunk_id in ids)
                return 0
        index = _index(root, args, err, report=disk is None)
    else:
        index = _index(root, args, err)
    for entry in _every_chunk(index):
        chunk = entry.chunk
        if args.format == "ids":
            out.write(chunk.chunk_id + "\n")
            continue
        record = {
            "chunk_id": chunk.chunk_id,
            "text": chunk.text,
            "source_path": chunk.source_path,
            "file_type": chunk.file_type,
            "symbol": chunk.symbol,
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
        }
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0


def _resolve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    def ask(index: WorkspaceIndex | DiskIndex) -> tuple[list[IndexedChunk], list[str]]:
        found = index.lookup(args.chunk_id)
        return found, [] if found else index.suggest(args.chunk_id)

    _, (matches, suggestions) = _ask(_check_root(args.root), args, err, ask)
    if not matches:
        print(f"chunkls: unknown chunk ID {args.chunk_id}", file=err)
        if suggestions:
            print("did you mean:", file=err)
            for suggestion in suggestions:
                print(f"  {suggestion}", file=err)
        return 1
    for number, entry in enumerate(matches):
        chunk = entry.chunk
        if number:
            out.write("\n")
        out.write(f"{chunk.source_path}:{chunk.start_line}-{chunk.end_line}\n{chunk.text}\n")
    return 0


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import json
    from pathlib import Path

    from chunkls.citations import (
        ChunkHistory,
        check_text,
        language_of,
        read_text_file,
        real_inside,
        real_relative,
    )
    from chunkls.ids.positions import TextLines

    root = _check_root(args.root)

    def ask(index: WorkspaceIndex | DiskIndex) -> list[dict[str, object]]:
        folder = index.folders[0]
        targets = _check_targets(root, args.paths, folder.rules.glob_excludes)
        history = ChunkHistory()
        problems: list[dict[str, object]] = []
        for shown, path, confine in targets:
            real = os.path.realpath(path)  # once: the confinement and the relative path
            text = None
            if confine is None or real_inside(real, confine):
                text = read_text_file(Path(real))
            if text is None:
                raise UsageError(f"{shown}: not a readable UTF-8 text file")
            rel_path = real_relative(real, folder.root_resolved) or folder.relative(path)
            found = check_text(index, text, language_of(path.name), folder, rel_path, history)
            if not found:
                continue
            lines = TextLines(text, "utf-32")
            for problem in found:
                line, column = lines.position(problem.ref.start)
                problems.append(
                    {
                        "path": shown,
                        "line": line + 1,
                        "column": column + 1,
                        "chunkId": problem.chunk_id,
                        "written": text[problem.ref.start : problem.ref.end],
                        "suggestions": problem.suggestions,
                    }
                )
        return problems

    _, problems = _ask(root, args, err, ask)
    if args.format == "json":
        json.dump(problems, out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        for item in problems:
            hint = f" (did you mean {item['suggestions'][0]}?)" if item["suggestions"] else ""  # type: ignore[index]
            out.write(
                f"{item['path']}:{item['line']}:{item['column']}: "
                f"unknown chunk ID {item['chunkId']}{hint}\n"
            )
        if problems:
            noun = "ID" if len(problems) == 1 else "IDs"
            print(f"chunkls: {len(problems)} unknown chunk {noun}", file=err)
    return 1 if problems else 0


def _check_targets(
    root: Path, paths: list[str], excluded: Callable[[str], bool]
) -> list[tuple[str, Path, Path | None]]:
    """The files to check, each with the name to print for it and the folder it
    must not leave: the given files (read wherever they are: asked for by name),
    every Markdown and text file of the given folders, or of the root (configured
    excludes apply); symlinks that leave the folder walked are not followed."""
    from pathlib import Path

    from chunkls.citations import walk_citation_files

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


def _serve(args: argparse.Namespace) -> int:
    from chunkls.storage.cache import cache_dir

    early = None
    if not args.tcp:
        from chunkls.lsp.early import start_early

        # answers initialize and the first code lenses while the rest loads
        early = start_early(cache_dir())
        if early is not None:
            early.wait_idle()
    from chunkls.lsp.kept_code import attrs_code_cached

    # lsprotocol's ~1,000 attrs classes: their methods' code kept between starts
    with attrs_code_cached(cache_dir() / f"attrs-code-{sys.implementation.cache_tag}.bin"):
        from chunkls.lsp.setup import run

    return run(tcp=args.tcp, early=early)


def _mcp(args: argparse.Namespace) -> int:
    from chunkls.mcp.early import start_early

    # answers initialize, the tool list and tool calls while the SDK loads
    early = start_early(args.root, args.exclude, cache=not args.no_cache)
    if early is not None:
        early.wait_idle()
    from chunkls.mcp.server import run  # the MCP SDK loads only for this command

    return run(args.root, args.exclude, cache=not args.no_cache, early=early)


def run() -> NoReturn:
    """The ``chunkls`` command (and ``python -m chunkls``): ``main``, then exit.

    When nothing else runs in the process (no other thread, no child process
    left), the exit skips the interpreter's teardown, which only frees what the
    answer read (about 25 ms of a warm stdlib search, as mypy's ``hard_exit``
    does for its own): the output is flushed first, and nothing chunkls runs at
    exit. Otherwise (a server's threads, say) it exits as usual."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a reader gone, or a stream closed
            stream.flush()
    if _alone():
        os._exit(code)
    sys.exit(code)


def _alone() -> bool:
    """Whether this process runs no other thread and has no child process left."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    processes = sys.modules.get("multiprocessing")
    return processes is None or not processes.active_children()


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the CLI; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = _parser()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            args, unknown = parser.parse_known_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error argparse printed
        return stop.code if isinstance(stop.code, int) else 0
    if unknown:  # as argparse says it, but with the subcommand's usage
        err.write(args.usage() if hasattr(args, "usage") else parser.format_usage())
        print(f"chunkls: error: unrecognized arguments: {' '.join(unknown)}", file=err)
        return 2
    if args.command in ("serve", "mcp"):
        _tune_allocator()
        return _serve(args) if args.command == "serve" else _mcp(args)
    for stream in (out, err):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    handlers = {"search": _search, "chunks": _chunks, "resolve": _resolve, "check": _check}
    import gc

    # A question the cache answers in place makes no garbage cycles: collections
    # would only rescan the imports and the rows read (5% of a warm search).
    # Indexing collects as usual (``_index``).
    args.collecting = gc.isenabled()
    gc.disable()
    try:
        code = handlers[args.command](args, out, err)
        out.flush()  # a closed pipe shows up here, not in the interpreter's exit
    except UsageError as error:
        err.write(args.usage() if hasattr(args, "usage") else parser.format_usage())
        print(f"chunkls: error: {error}", file=err)
        return 2
    except BrokenPipeError:  # e.g. `chunkls chunks | head -1`: the reader is gone
        from chunkls.runtime.streams import discard_output

        discard_output(out)
        return 0
    finally:
        if args.collecting:
            gc.enable()
    if code == 0 and args.strict and args.skipped_count:
        return 1
    return code
