"""Start-up: ``import chunkls.cli`` (all that ``chunkls --help`` needs) imports
nothing beyond the command-line parser; each command imports what it uses, and
only ``chunkls serve`` the language-server stack (issue 21.2).

The modules are listed in a fresh interpreter, against an allow-list: what
argparse itself loads to parse, print help and report a usage error (measured
on the interpreter running the test, so another Python version's argparse is
allowed its own), plus the few modules named here. Any other module imported
eagerly fails the test: numpy, pygls, lsprotocol, cattrs, sqlite3, the MCP SDK
and whatever a new command brings.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import chunkls
from chunkls import cli

ALLOWED = frozenset(
    {
        "chunkls",
        "chunkls.cli",
        "chunkls.search",  # the names of the search modes (it imports nothing)
        "chunkls.runtime",  # the start-up budget (``gc_budget``)
        "chunkls.runtime.gc_budget",
        "gc",  # built in: the collector paused for a command
        "__future__",  # `from __future__ import annotations`
        "contextlib",  # the parser's output redirected to the given streams
    }
)
"""What ``chunkls.cli`` may import besides what ``argparse`` imports."""

SERVER_STACK = frozenset(
    {"pygls", "lsprotocol", "cattrs", "mcp", "pydantic", "anyio", "chunkls.lsp"}
)
"""Modules that only ``chunkls serve`` (and ``chunkls mcp``) may import."""


def _modules_after(code: str) -> set[str]:
    """The modules loaded in a fresh interpreter after running ``code``."""
    script = f"{code}\nimport sys\nsys.stdout.write('\\n'.join(sorted(sys.modules)))\n"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    return set(done.stdout.split())


ARGPARSE_AT_WORK = """
import argparse, contextlib, io
parser = argparse.ArgumentParser(prog="p")
parser.add_argument("--flag", type=int)
parser.add_subparsers().add_parser("sub")
for argv in (["--help"], ["sub", "--help"], ["--flag", "x"], ["nothing"]):
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit:
        pass
"""
"""A plain parser printing its help and its usage errors: the modules argparse
itself loads for that (``shutil`` for the terminal's width, ``gettext``...)."""


def _unexpected(code: str) -> set[str]:
    """The modules ``code`` loads beyond argparse's own and the allow-list."""
    allowed = _modules_after(ARGPARSE_AT_WORK) | ALLOWED
    return _modules_after(code) - allowed


def test_the_allow_list_check_sees_an_extra_import() -> None:
    """The check can fail: a module imported beside the CLI is reported."""
    assert _unexpected("import chunkls.cli, json") >= {"json", "json.decoder"}
    assert "numpy" in _unexpected("import chunkls.cli, numpy")


@pytest.mark.parametrize(
    "code",
    [
        "import chunkls.cli",
        "from chunkls.cli import main",  # the console script's entry point
        "import chunkls",
    ],
)
def test_importing_the_cli_loads_only_the_argument_parser(code: str) -> None:
    assert _unexpected(code) == set()


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["search", "--help"],
        ["chunks", "--help"],
        ["resolve", "--help"],
        ["check", "--help"],
        ["serve", "--help"],
        ["mcp", "--help"],
        ["no-such-command"],
    ],
)
def test_help_and_usage_errors_load_only_the_argument_parser(argv: list[str]) -> None:
    code = f"import io\nfrom chunkls.cli import main\nmain({argv!r}, io.StringIO(), io.StringIO())"
    assert _unexpected(code) == set()


def test_commands_other_than_serve_never_load_the_server_stack(tmp_path: Path) -> None:
    """A CLI command indexes and answers without pygls, lsprotocol, cattrs or MCP."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text("def alpha():\n    return 1\n")
    (root / "notes.md").write_text("# Notes\n\nsee `m.py#function-alpha`\n")
    cache = tmp_path / "xdg"
    for argv in (
        ["search", "alpha", "--root", str(root)],
        ["chunks", str(root)],
        ["resolve", "m.py#function-alpha", "--root", str(root)],
        ["check", "--root", str(root)],
    ):
        code = (
            "import io, os\n"
            f"os.environ['XDG_CACHE_HOME'] = {str(cache)!r}\n"
            "from chunkls.cli import main\n"
            "out = io.StringIO()\n"
            f"assert main({argv!r}, out, io.StringIO()) == 0, out.getvalue()"
        )
        loaded = _modules_after(code)
        assert "chunkls.index" in loaded  # it did index
        heavy = {m for m in loaded if m.split(".")[0] in SERVER_STACK or m in SERVER_STACK}
        heavy |= {m for m in loaded if m.startswith("chunkls.lsp")}
        assert heavy == set(), argv


def test_version_is_the_package_metadatas() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["--version"], out, err) == 0
    assert out.getvalue() == f"chunkls {version('chunkls')}\n"
    assert chunkls.__version__ == version("chunkls")


def test_the_package_has_no_other_lazy_attribute() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = chunkls.no_such_name  # type: ignore[attr-defined]


def test_help_lists_the_commands() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["--help"], out, err) == 0
    for command in ("search", "chunks", "resolve", "check", "serve", "--version"):
        assert command in out.getvalue()


IN_MEMORY_INDEX = frozenset(
    {
        "numpy",
        "chunkls.index.bulk",
        "chunkls.index.refresh",
        "chunkls.index.workers",
        "chunkls.search.inverted",
        "chunkls.search.postings",
    }
)
"""What a question the cache answers in place never needs: numpy, the in-memory
postings, the bulk indexer and its workers."""


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["search", "alpha"], 0),
        (["resolve", "m.py#function-alpha"], 0),
        (["check"], 1),  # notes.md cites an unknown ID too
        (["chunks", "--format", "ids"], 0),
    ],
)
def test_a_warm_cache_answers_without_numpy_or_the_in_memory_index(
    tmp_path: Path, argv: list[str], code: int
) -> None:
    """Issue 21.1/21.2: on a current cache, the CLI reads it in place; nothing of
    the indexing side (numpy, the store, the bulk indexer) is imported."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text("def alpha():\n    return 1\n")
    (root / "notes.md").write_text("# Notes\n\n`m.py#function-alpha`, `m.py#function-beta`\n")
    cache = tmp_path / "xdg"

    def query(cold: bool) -> set[str]:
        script = (
            "import io, os\n"
            f"os.environ['XDG_CACHE_HOME'] = {str(cache)!r}\n"
            "import chunkls.storage.cache\n"
            "chunkls.storage.cache.RACY_NS = 0  # the files were written a moment ago\n"
            "from chunkls.cli import main\n"
            "out = io.StringIO()\n"
            f"assert main({[*argv, '--root', str(root)]!r}, out, io.StringIO()) == {code}\n"
            "assert out.getvalue().strip(), 'no answer'\n"
        )
        return _modules_after(script)

    assert "chunkls.index.bulk" in query(cold=True)  # the first run indexes
    loaded = query(cold=False)
    assert "chunkls.storage.in_place" in loaded
    assert loaded & IN_MEMORY_INDEX == set()
    assert "logging" not in loaded  # imported when there is something to log
    # nor dataclasses (with inspect, ast and dis: a search's own cost, twice over)
    assert loaded & {"dataclasses", "inspect", "ast"} == set()


@pytest.mark.parametrize("pyproject", [False, True])
def test_the_toml_parser_loads_only_for_a_root_with_a_pyproject(
    tmp_path: Path, pyproject: bool
) -> None:
    """A root without ``pyproject.toml`` (the standard library) has no settings
    to parse: ``tomllib`` is not imported for it."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text("def alpha():\n    return 1\n")
    if pyproject:
        (root / "pyproject.toml").write_text('[tool.chunkls]\nexclude = ["gone/**"]\n')
    script = (
        "import io, os\n"
        f"os.environ['XDG_CACHE_HOME'] = {str(tmp_path / 'xdg')!r}\n"
        "from chunkls.cli import main\n"
        f"argv = ['search', 'alpha', '--root', {str(root)!r}]\n"
        "assert main(argv, io.StringIO(), io.StringIO()) == 0\n"
    )
    assert ("tomllib" in _modules_after(script)) == pyproject
