"""The ``chunkls`` command line: chunks, search, resolve and serve.

Exit codes: 0 success; 1 a result the caller asked about is missing (an unknown
ID, a search that matches no chunk, or skipped files with ``--strict``); 2 usage
errors (among them a search query with no searchable terms). Usage errors print
the subcommand's usage. A reader that goes away (``chunkls check | head``) leaves
the exit code the work determined.
"""

from __future__ import annotations

# Only what parsing the command line needs is imported here; each command
# imports what it uses (tests/unit/test_startup.py holds this to an allow-list).
import argparse
import sys
from contextlib import redirect_stderr, redirect_stdout

from chunkls import __version__
from chunkls.runtime.gc_budget import TYPE_CHECKING, exit_now, pause_gc, resume_gc
from chunkls.search import MODES

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn, TextIO


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _corpus_options() -> argparse.ArgumentParser:
    """The options of every command that indexes a corpus."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files or folders matching this root-relative glob (repeatable)",
    )
    options.add_argument(
        "--strict", action="store_true", help="exit 1 when any file had to be skipped"
    )
    options.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="say only errors on stderr (not the files skipped, nor configuration notes)",
    )
    options.add_argument(
        "--no-cache",
        action="store_true",
        help="index from scratch without reading or writing the cache "
        "(kept under $XDG_CACHE_HOME/chunkls)",
    )
    options.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        metavar="N",
        help="worker processes for indexing (default: one per CPU)",
    )
    return options


def _rooted_options() -> argparse.ArgumentParser:
    """The corpus options and ``--root``."""
    options = argparse.ArgumentParser(add_help=False, parents=[_corpus_options()])
    options.add_argument("--root", default=".", help="corpus root (default: .)")
    return options


def _search(search: argparse.ArgumentParser) -> None:
    search.add_argument("query", help="free text or code words, e.g. 'chunk_id source_path'")
    search.add_argument(
        "--top-k", type=_positive_int, default=5, metavar="N", help="results (default 5)"
    )
    search.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="ranking: hybrid (a question's words, BM25, then what each chunk is) or "
        "bm25 (the tutorial's scores); default: [tool.chunkls] search-mode, else hybrid",
    )
    search.add_argument("--json", action="store_true", help="print JSON instead of text")


def _chunks(chunks: argparse.ArgumentParser) -> None:
    chunks.add_argument("root", nargs="?", default=None, help="corpus root (default: .)")
    chunks.add_argument(
        "--root",
        dest="root_option",
        metavar="ROOT",
        help="corpus root, as the other commands take it",
    )
    chunks.add_argument(
        "--format",
        choices=("jsonl", "ids"),
        default="jsonl",
        help="jsonl: one JSON object per chunk (default); ids: one chunk ID per line",
    )


def _resolve(resolve: argparse.ArgumentParser) -> None:
    resolve.add_argument("chunk_id", metavar="CHUNK_ID", help="e.g. app/x.py#function-f")
    resolve.add_argument(
        "--json",
        action="store_true",
        help="print JSON (ID, path, lines, symbol, text; for a stale ID its replacement)",
    )


def _check(check: argparse.ArgumentParser) -> None:
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or folders to check (default: every Markdown, text, JSON and JSON Lines "
        "file of the root; a file that is not UTF-8 text is skipped and named)",
    )
    check.add_argument(
        "--format",
        choices=("text", "json", "github", "sarif"),
        default="text",
        help="text (default), json, github (workflow commands) or sarif (SARIF 2.1.0)",
    )
    check.add_argument(
        "--fix",
        action="store_true",
        help="rewrite each stale ID whose replacement is certain (moved, renamed, or changed "
        "and clearly alike), in place, atomically",
    )
    check.add_argument(
        "--diff",
        action="store_true",
        help="with --fix: print the rewrites as a unified diff, write nothing",
    )


def _eval(evaluate: argparse.ArgumentParser) -> None:
    evaluate.add_argument(
        "gold",
        metavar="GOLD.jsonl",
        help='one {"query": ..., "relevant": [chunk IDs or files]} per line, or a JSON '
        "array of them (semble's annotations: files or line spans, secondary, category)",
    )
    evaluate.add_argument("--mode", choices=MODES, default=None, help="one mode (default: each)")
    evaluate.add_argument(
        "--top-k", type=_positive_int, default=10, metavar="K", help="the cut-off (default 10)"
    )
    evaluate.add_argument(
        "--run",
        metavar="RUN.jsonl",
        help='another retriever\'s rankings, one {"query": ..., "ranked": [chunk IDs]} per line',
    )
    evaluate.add_argument("--json", action="store_true", help="print the figures as JSON")


def _serve_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--stdio", action="store_true", help="use stdio (the default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP, for debugging")


def _mcp_options(mcp: argparse.ArgumentParser) -> None:
    mcp.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="corpus root (repeatable; default: .)",
    )
    mcp.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="as for search")
    mcp.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")


COMMANDS = {
    "search": (
        "search the chunks (hybrid ranking; --mode bm25 is the tutorial's demo)",
        _rooted_options,
        _search,
    ),
    "chunks": ("list every chunk in corpus order", _corpus_options, _chunks),
    "resolve": ("show where a chunk ID points, and its text", _rooted_options, _resolve),
    "check": (
        "report chunk IDs cited in Markdown, text, JSON and JSONL files that do not resolve",
        _rooted_options,
        _check,
    ),
    "eval": (
        "measure each search mode (and another retriever's rankings) on a gold set",
        _rooted_options,
        _eval,
    ),
    "serve": ("run the language server (stdio by default)", None, _serve_options),
    "mcp": ("run the MCP server for agents (stdio)", None, _mcp_options),
}
"""Each subcommand, in ``--help`` order: its summary, the options it shares with
others, and what adds its own arguments."""


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given ``only``, a subcommand, the others are
    listed with their summaries but get no arguments: building them all costs
    more than a search read in place."""
    parser = argparse.ArgumentParser(
        prog="chunkls",
        description="Chunk a repository as the RAG tutorial does, search the chunks "
        "(hybrid or BM25), resolve chunk IDs, or run the language server.",
    )
    parser.add_argument("--version", action="version", version=f"chunkls {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (summary, shared, arguments) in COMMANDS.items():
        if only is not None and name != only:
            commands.add_parser(name, help=summary)
            continue
        parents = [shared()] if shared is not None else []
        subcommand = commands.add_parser(name, parents=parents, help=summary)
        if name != "serve":  # (its usage errors print the whole usage)
            subcommand.set_defaults(usage=subcommand.format_usage)
        arguments(subcommand)
    return parser


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
    from pathlib import Path

    from chunkls.mcp.early import start_early
    from chunkls.mcp.service import McpService

    service = McpService(
        [Path(root) for root in args.root or ["."]], args.exclude, not args.no_cache
    )
    service.report_problems()
    # answers initialize, the tool list and tool calls while the SDK loads
    early = start_early(service)
    if early is not None:
        early.wait_idle()
    from chunkls.mcp.server import run  # the MCP SDK loads only for this command

    return run(service, early=early)


def run() -> NoReturn:
    """The ``chunkls`` command: ``main``, then ``exit_now``."""
    exit_now(main())


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the CLI; returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser(argv[0] if argv and argv[0] in COMMANDS else None)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            args, unknown = parser.parse_known_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error argparse printed
        return stop.code if isinstance(stop.code, int) else 0
    if unknown:  # as argparse says it, but with the subcommand's usage
        problem = f"unrecognized arguments: {' '.join(unknown)}"
    elif args.command in ("serve", "mcp"):
        from chunkls.runtime.memory import tune_allocator

        tune_allocator()  # large arrays from mmap, given back when freed
        return _serve(args) if args.command == "serve" else _mcp(args)
    else:
        for stream in (out, err):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors="backslashreplace")
        # Indexing collects as usual (``Command.ask``); the caller's setting is
        # back on return.
        collecting = pause_gc()
        try:
            from chunkls.cli.commands import run_command
            from chunkls.cli.usage import UsageError

            return run_command(args, out, err, collecting=collecting)
        except UsageError as error:
            problem = str(error)
        finally:
            resume_gc(collecting)
    err.write(args.usage() if hasattr(args, "usage") else parser.format_usage())
    print(f"chunkls: error: {problem}", file=err)
    return 2
