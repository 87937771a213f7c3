"""The command line: output formats, skipped files, exit codes, usage errors."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import io
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from chunkls import cli
from chunkls.chunking.ingest import scan_corpus
from chunkls.runtime import gc_budget
from tests.reference import tutorial_ingest as tutorial

from .strategies import write_tree
from .test_ingest import TREE_TRICKY

TREE = {
    "README.md": "# Project\nA retrieval demo.\n\n## Setup\nRun uv sync.\n",
    "app/greet.py": (
        "import os\n\n\ndef greet(name):\n    return name\n\n\n"
        "class Greeter:\n    def hello(self):\n        return greet('x')\n"
    ),
    "app/typed.py": (
        "@overload\ndef f(x: int) -> int: ...\n@overload\ndef f(x: str) -> str: ...\n"
    ),
    "notes.txt": "not chunked\n",
}


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep any cache the CLI writes out of the user's home."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    write_tree(root, TREE)
    return root


# -- search ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_search_prints_the_tutorials_demo_format(tree: Path, mode: str) -> None:
    """``--mode bm25`` is the tutorial's demo; the default (hybrid) prints the
    same lines, naming its mode where the demo says ``bm25``, and the lines of
    the part that answers best after them."""
    argv = ["search", "greet name hello", "--root", str(tree), "--top-k", "2"]
    code, out, err = run(*argv, *(["--mode", mode] if mode == "bm25" else []))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Indexed 7 chunks"
    assert len(lines) == 3
    for rank, line in enumerate(lines[1:], 1):
        best = "" if mode == "bm25" else r" lines \d+-\d+"
        assert re.fullmatch(rf"{rank}\. \S+#\S+ \({mode} \d+\.\d{{3}}\){best}", line), line
    assert lines[1].startswith("1. app/greet.py#")


def test_an_unknown_mode_is_a_usage_error_naming_the_modes(tree: Path) -> None:
    code, out, err = run("search", "greet", "--root", str(tree), "--mode", "dense")
    assert (code, out) == (2, "")
    assert "invalid choice: 'dense' (choose from 'hybrid', 'bm25')" in err


def test_tool_chunkls_search_mode_is_the_default_and_mode_overrides_it(tree: Path) -> None:
    (tree / "pyproject.toml").write_text('[tool.chunkls]\nsearch-mode = "bm25"\n')
    for argv, mode in [((), "bm25"), (("--mode", "hybrid"), "hybrid")]:
        code, out, _ = run("search", "greet", "--root", str(tree), "--json", *argv)
        assert code == 0 and json.loads(out)["mode"] == mode
    (tree / "pyproject.toml").write_text('[tool.chunkls]\nsearch-mode = "dense"\n')
    code, out, err = run("search", "greet", "--root", str(tree), "--json")
    assert code == 0 and json.loads(out)["mode"] == "hybrid"
    assert "search-mode must be one of hybrid, bm25, not 'dense'" in err


def test_search_top_k_default_and_no_hits(tree: Path) -> None:
    code, out, err = run("search", "the", "--root", str(tree), "--mode", "bm25")
    assert code == 1  # no chunk matches: said on stderr (see test_search_says_why_it_is_empty)
    assert out.splitlines() == ["Indexed 7 chunks"]
    assert err == "chunkls: no chunks match 'the'\n"
    code, out, _ = run("search", "f x greet setup project import", "--root", str(tree))
    assert len(out.splitlines()) == 1 + 5  # default --top-k 5


def test_search_json(tree: Path) -> None:
    code, out, _ = run("search", "setup", "--root", str(tree), "--json", "--top-k", "1")
    assert code == 0
    data = json.loads(out)
    assert data["indexed"] == 7
    [result] = data["results"]
    assert result["chunk_id"] == "README.md#heading-setup"
    assert (result["source_path"], result["start_line"], result["end_line"]) == ("README.md", 4, 5)
    assert isinstance(result["score"], float) and result["score"] > 0


def test_search_from_the_current_directory(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    code, out, _ = run("search", "greeter")
    assert code == 0
    assert out.splitlines()[1].startswith("1. app/greet.py#class-Greeter (hybrid ")


@pytest.mark.parametrize("query", ["", "   ", "...!?", "#-/", "how does the", "What is it?"])
def test_search_without_searchable_terms_is_a_usage_error(tree: Path, query: str) -> None:
    code, out, err = run("search", query, "--root", str(tree))
    assert (code, out) == (2, "")
    assert err.startswith("usage: chunkls search")
    assert "chunkls: error: the query has no searchable terms" in err


@pytest.mark.parametrize("as_json", [False, True])
def test_search_says_when_no_chunk_matches(tree: Path, as_json: bool) -> None:
    argv = ["search", "zzzqqq xyzzy", "--root", str(tree), *(["--json"] if as_json else [])]
    code, out, err = run(*argv)
    assert code == 1
    assert err == "chunkls: no chunks match 'zzzqqq xyzzy'\n"
    if as_json:
        assert json.loads(out) == {"indexed": 7, "mode": "hybrid", "results": []}
    else:
        assert out == "Indexed 7 chunks\n"


# -- chunks ----------------------------------------------------------------------


def test_chunks_takes_root_as_an_option_or_an_argument(tree: Path, tmp_path: Path) -> None:
    code, positional, _ = run("chunks", str(tree), "--format", "ids")
    assert code == 0 and "app/greet.py#function-greet" in positional
    assert run("chunks", "--root", str(tree), "--format", "ids")[:2] == (0, positional)
    assert run("chunks", str(tree), "--root", str(tree), "--format", "ids")[:2] == (0, positional)
    code, out, err = run("chunks", str(tree), "--root", str(tmp_path))
    assert (code, out) == (2, "")
    assert err.startswith("usage: chunkls chunks")
    assert "two roots given" in err


def test_chunks_jsonl_fields_and_order(tree: Path) -> None:
    code, out, err = run("chunks", str(tree))
    assert (code, err) == (0, "")
    records = [json.loads(line) for line in out.splitlines()]
    assert [list(r) for r in records] == [
        ["chunk_id", "text", "source_path", "file_type", "symbol", "start_line", "end_line"]
    ] * len(records)
    expected = [chunk._asdict() for chunk in scan_corpus(tree).chunks()]
    assert records == expected
    assert [r["chunk_id"] for r in records] == [
        "README.md#heading-project",
        "README.md#heading-setup",
        "app/greet.py#module-1",
        "app/greet.py#function-greet",
        "app/greet.py#class-Greeter",
        "app/typed.py#function-f",
        "app/typed.py#function-f",
    ]
    assert [(r["start_line"], r["end_line"]) for r in records[2:5]] == [(1, 1), (4, 5), (8, 10)]


def test_chunks_ids_format(tree: Path) -> None:
    code, out, _ = run("chunks", str(tree), "--format", "ids")
    assert code == 0
    assert out.splitlines() == [c.chunk_id for c in scan_corpus(tree).chunks()]


def test_chunks_keeps_unicode_readable(tmp_path: Path) -> None:
    write_tree(tmp_path, {"g.md": "# Ünïcode 日本\ntext\u2028more\n"})
    _, out, _ = run("chunks", str(tmp_path))
    assert "Ünïcode 日本" in out
    assert json.loads(out)["text"] == "# Ünïcode 日本\ntext\nmore"


def five_fields(jsonl: str) -> list[tuple[object, ...]]:
    fields = ["chunk_id", "text", "source_path", "file_type", "symbol"]
    return [tuple(json.loads(line)[f] for f in fields) for line in jsonl.splitlines()]


def test_done_when_chunks_jsonl_equals_the_tutorials_ingest_path(tmp_path: Path) -> None:
    """On any tree, ``chunkls chunks ROOT --format jsonl`` gives exactly the five
    fields the tutorial's ``ingest_path`` gives, in the same order, minus the
    files it would crash on (which are reported)."""
    write_tree(tmp_path, TREE_TRICKY)
    # enough files that indexing may run in worker processes
    write_tree(tmp_path, {f"many/m{i:03d}.py": f"def f{i}():\n    pass\n" for i in range(100)})
    expected, crashed = tutorial.ingest_path_tolerant(tmp_path)
    code, out, err = run("chunks", str(tmp_path), "--format", "jsonl")
    assert code == 0
    assert five_fields(out) == [dataclasses.astuple(chunk) for chunk in expected]
    reported = re.findall(r"^chunkls: skipped (\S+): ", err, flags=re.M)
    assert sorted(reported) == sorted(crashed)
    # a second run (which may use a cache) gives the same output
    assert run("chunks", str(tmp_path), "--format", "jsonl")[1:] == (out, err)


# -- resolve ---------------------------------------------------------------------


def test_resolve_prints_range_and_text(tree: Path) -> None:
    code, out, err = run("resolve", "app/greet.py#function-greet", "--root", str(tree))
    assert (code, err) == (0, "")
    assert out == "app/greet.py:4-5\ndef greet(name):\n    return name\n"


def test_resolve_a_duplicated_id_prints_every_chunk(tree: Path) -> None:
    code, out, _ = run("resolve", "app/typed.py#function-f", "--root", str(tree))
    assert code == 0
    assert out == (
        "app/typed.py:1-2\n@overload\ndef f(x: int) -> int: ...\n\n"
        "app/typed.py:3-4\n@overload\ndef f(x: str) -> str: ...\n"
    )


def test_resolve_an_unknown_id_suggests_the_closest(tree: Path) -> None:
    code, out, err = run("resolve", "app/greet.py#function-gret", "--root", str(tree))
    assert (code, out) == (1, "")
    lines = err.splitlines()
    assert lines[0] == "chunkls: unknown chunk ID app/greet.py#function-gret"
    assert lines[1] == "did you mean:"
    assert lines[2] == "  app/greet.py#function-greet"
    code, _, err = run("resolve", "nothing/like/it.rs#x", "--root", str(tree))
    assert code == 1
    assert err == "chunkls: unknown chunk ID nothing/like/it.rs#x\n"


# -- skipped files, config, --strict, --exclude ---------------------------------------


@pytest.fixture
def broken(tree: Path) -> Path:
    write_tree(tree, {"bad.py": "X = 1\n\ndef f(:\n", "latin.md": b"caf\xe9\n"})
    return tree


@pytest.mark.parametrize(
    "argv",
    [
        ["chunks", "{root}"],
        ["search", "greet", "--root", "{root}"],
        ["resolve", "x", "--root", "{root}"],
    ],
)
def test_skipped_files_are_reported_once_on_stderr(broken: Path, argv: list[str]) -> None:
    code, out, err = run(*[a.format(root=broken) for a in argv])
    assert code == (1 if argv[0] == "resolve" else 0)
    assert err.count("bad.py") == 1
    assert err.count("latin.md") == 1
    lines = err.splitlines()
    assert lines[:3] == [
        "chunkls: skipped bad.py: SyntaxError line 3: invalid syntax",
        "chunkls: skipped latin.md: not valid UTF-8 (byte 0xe9 at offset 3);"
        " the corpus is UTF-8 only",
        "chunkls: 2 files skipped (they could not be chunked)",
    ]
    assert "bad.py" not in out


def test_strict_exits_1_only_when_files_were_skipped(broken: Path, tree: Path) -> None:
    assert run("chunks", str(broken), "--strict")[0] == 1
    assert run("search", "greet", "--root", str(broken), "--strict")[0] == 1
    (broken / "bad.py").unlink()
    code, _, err = run("chunks", str(broken), "--strict")
    assert code == 1
    assert err.splitlines()[-1] == "chunkls: 1 file skipped (they could not be chunked)"
    (broken / "latin.md").unlink()
    assert run("chunks", str(tree), "--strict") == run("chunks", str(tree))


def test_the_cli_reads_tool_chunkls(tree: Path) -> None:
    (tree / "pyproject.toml").write_text(
        '[tool.chunkls]\nexclude-dirs = ["app"]\nexclude = "not-a-list"\ncolour = 1\n'
    )
    code, out, err = run("chunks", str(tree), "--format", "ids")
    assert code == 0
    assert out.splitlines() == ["README.md#heading-project", "README.md#heading-setup"]
    source = f"{tree / 'pyproject.toml'} [tool.chunkls]"
    assert err.splitlines() == [
        f"chunkls: {source}: exclude must be a list of strings",
        f"chunkls: {source}: unknown key 'colour' (known: exclude-dirs, exclude-files, exclude,"
        " max-file-size, check-exclude, search-mode)",
    ]


def test_max_file_size_from_pyproject(tree: Path) -> None:
    (tree / "pyproject.toml").write_text("[tool.chunkls]\nmax-file-size = 60\n")
    code, out, err = run("chunks", str(tree), "--format", "ids")
    assert code == 0
    assert "app/greet.py" not in out
    assert "chunkls: skipped app/greet.py: 109 bytes, over the 60-byte limit" in err


def test_exclude_option_adds_globs(tree: Path) -> None:
    code, out, _ = run(
        "chunks", str(tree), "--format", "ids", "--exclude", "*.md", "--exclude", "app/typed.py"
    )
    assert code == 0
    assert out.splitlines() == [
        "app/greet.py#module-1",
        "app/greet.py#function-greet",
        "app/greet.py#class-Greeter",
    ]


# -- usage errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["chunks", "{missing}"], "chunkls: error: root '{missing}' does not exist"),
        (["search", "x", "--root", "{missing}"], "chunkls: error: root '{missing}' does not exist"),
        (["resolve", "x", "--root", "{file}"], "chunkls: error: root '{file}' is not a directory"),
        (["search", "x", "--top-k", "0"], "argument --top-k: must be at least 1, got 0"),
        (["search", "x", "--top-k", "-3"], "argument --top-k: must be at least 1, got -3"),
        (
            ["search", "x", "--top-k", "many"],
            "argument --top-k: expected a whole number, got 'many'",
        ),
        (["chunks", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["chunks", "--bogus"], "unrecognized arguments: --bogus"),
        (["search"], "the following arguments are required: query"),
        ([], "the following arguments are required: COMMAND"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_exit_2_with_a_message(tmp_path: Path, argv: list[str], message: str) -> None:
    (tmp_path / "file.py").write_text("X = 1\n")
    names = {"missing": str(tmp_path / "missing"), "file": str(tmp_path / "file.py")}
    code, out, err = run(*[a.format(**names) for a in argv])
    assert code == 2
    assert out == ""
    assert message.format(**names) in err
    assert err.startswith("usage: chunkls")
    if argv and argv[0] in ("chunks", "search", "resolve", "check"):
        assert err.startswith(f"usage: chunkls {argv[0]}")  # the subcommand's usage


def _parsed(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[object, str]:
    """What a parser makes of a command line: its namespace (or exit code), and
    what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        try:
            args, unknown = parser.parse_known_args(argv)
        except SystemExit as stop:
            return ("exit", stop.code), printed.getvalue()
    fields = {name: value for name, value in vars(args).items() if name != "usage"}
    usage = args.usage() if hasattr(args, "usage") else None
    return (fields, unknown, usage), printed.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--root", "r", "--mode", "bm25", "--json", "--top-k", "3", "-q"],
        ["search", "--help"],
        ["search", "q", "--top-k", "0"],
        ["search", "q", "--bogus"],
        ["chunks", "r", "--format", "ids", "--exclude", "a/**", "--no-cache"],
        ["chunks", "--help"],
        ["resolve", "a.py#function-f", "--json", "--strict", "--jobs", "2"],
        ["resolve", "--help"],
        ["check", "a.md", "b", "--format", "json"],
        ["check", "--help"],
        ["eval", "gold.jsonl", "--run", "run.jsonl", "--mode", "hybrid"],
        ["eval", "--help"],
        ["serve", "--tcp", "127.0.0.1:9"],
        ["serve", "--help"],
        ["serve", "--bogus"],
        ["mcp", "--root", "a", "--root", "b", "--exclude", "x"],
        ["mcp", "--help"],
    ],
)
def test_a_commands_parser_parses_as_the_whole_one(argv: list[str]) -> None:
    # the parser built for one subcommand leaves the others' arguments out
    assert set(cli.COMMANDS) >= {argv[0]}
    assert _parsed(cli._parser(argv[0]), argv) == _parsed(cli._parser(), argv)
    other = next(name for name in cli.COMMANDS if name != argv[0])
    assert cli._parser(other).format_help() == cli._parser().format_help()


def test_unreadable_root_is_a_usage_error(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_scandir = os.scandir

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if Path(path) == tree:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = run("chunks", str(tree))
    assert (code, out) == (2, "")
    assert f"chunkls: error: root '{tree}' is not readable: Permission denied" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads folders whatever their mode")
def test_unreadable_root_by_mode(tree: Path) -> None:
    tree.chmod(0)
    try:
        code, _, err = run("chunks", str(tree))
    finally:
        tree.chmod(0o755)
    assert code == 2
    assert "is not readable" in err


def test_help_and_version_go_to_out_and_exit_0() -> None:
    code, out, err = run("--help")
    assert (code, err) == (0, "")
    assert "search" in out and "chunks" in out and "resolve" in out
    code, out, _ = run("--version")
    assert code == 0
    assert re.fullmatch(r"chunkls \d+\.\d+\.\d+\S*\n", out)


# -- as a program -----------------------------------------------------------------------


def program_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    return env


def run_program(
    command: list[str], tmp_path: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The command run to its end as a user runs it, its output captured."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=program_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_python_dash_m_chunkls(tree: Path, tmp_path: Path) -> None:
    done = run_program(
        [sys.executable, "-m", "chunkls", "search", "greeter hello", "--top-k", "1"],
        tmp_path,
        cwd=tree,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[0] == "Indexed 7 chunks"
    assert done.stdout.splitlines()[1].startswith("1. app/greet.py#class-Greeter (hybrid ")


def test_the_console_script(tree: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "chunkls"
    if not script.exists():
        pytest.skip(f"no console script next to {sys.executable}")
    done = run_program(
        [str(script), "resolve", "README.md#heading-setpu", "--root", str(tree)], tmp_path
    )
    assert done.returncode == 1
    assert "  README.md#heading-setup\n" in done.stderr
    done = run_program([str(script), "chunks", "--root-typo"], tmp_path)
    assert done.returncode == 2
    assert "unrecognized arguments: --root-typo" in done.stderr


@pytest.mark.parametrize("size", ["small", "large"])
def test_a_closed_pipe_is_not_an_error(tmp_path: Path, size: str) -> None:
    """`chunkls chunks | head -1`: no BrokenPipeError traceback, exit 0."""
    root = tmp_path / "repo"
    count = 3 if size == "small" else 1500
    write_tree(root, {f"m{i:04d}.py": f"def f{i}():\n    return {i}\n" for i in range(count)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "chunkls", "chunks", str(root)],
        env=program_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    if size == "large":
        assert proc.stdout.readline().startswith(b'{"chunk_id": "m0000.py#function-f0"')
    proc.stdout.close()  # the reader goes away (before any output, when small)
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in stderr
    assert "BrokenPipe" not in stderr
    assert "Exception ignored" not in stderr


def test_the_quick_exit_flushes_every_line(tmp_path: Path) -> None:
    """``run`` skips the interpreter's teardown: the output is all there first,
    through a pipe (block-buffered) as much as to a terminal."""
    root = tmp_path / "repo"
    write_tree(root, {f"m{i:04d}.py": f"def f{i}():\n    return {i}\n" for i in range(1500)})
    done = run_program(
        [sys.executable, "-m", "chunkls", "chunks", "--format", "ids", str(root)], tmp_path
    )
    assert done.returncode == 0
    assert done.stdout.splitlines() == [f"m{i:04d}.py#function-f{i}" for i in range(1500)]


@pytest.mark.parametrize("code", [0, 1, 2])
def test_run_exits_with_mains_code_quickly_only_when_alone(
    code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    exits: list[int] = []

    def quick(status: int) -> None:
        exits.append(status)
        raise SystemExit(status)

    monkeypatch.setattr(cli, "main", lambda: code)
    monkeypatch.setattr(gc_budget.os, "_exit", quick)
    for alone in (True, False):
        exits.clear()
        monkeypatch.setattr(gc_budget, "alone", lambda alone=alone: alone)
        with pytest.raises(SystemExit) as stop:
            cli.run()
        assert stop.value.code == code
        assert exits == ([code] if alone else [])  # else the usual exit, which waits


def test_another_thread_or_a_child_process_is_not_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not gc_budget.alone()
    finally:
        release.set()
        other.join()
    import multiprocessing

    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(multiprocessing, "active_children", lambda: [object()])
    assert not gc_budget.alone()
    monkeypatch.setattr(multiprocessing, "active_children", lambda: [])
    assert gc_budget.alone()
