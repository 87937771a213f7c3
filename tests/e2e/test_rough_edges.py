"""Rough edges found on real trees (Django, SQLAlchemy): each as a user meets
it, through the CLI's processes and the MCP SDK's client. Every test here is a
black box of the command line and the MCP protocol."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from chunkls.cli import main as cli

FIXTURES = Path(__file__).parent.parent / "fixtures"
TIMEOUT = 60


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "workspace"
    shutil.copytree(FIXTURES / "workspace", root)
    (root / "docs" / "transcript.md").unlink()  # (it cites stale IDs on purpose)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return root


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def shell(script: str, cwd: Path) -> str:
    """A bash script's stdout (``chunkls`` is this interpreter's)."""
    done = subprocess.run(
        [
            "bash",
            "-c",
            f"set -o pipefail\nchunkls() {{ '{sys.executable}' -m chunkls \"$@\"; }}\n{script}",
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=TIMEOUT,
    )
    return done.stdout


# -- 1. check on a tree with a text file that is not UTF-8 -------------------------


@pytest.mark.parametrize("suffix", [".txt", ".md", ".json"])
def test_check_skips_an_unreadable_text_file_and_checks_the_rest(
    workspace: Path, suffix: str
) -> None:
    (workspace / "tests").mkdir()
    (workspace / "tests" / f"file_png{suffix}").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe binary")
    (workspace / "notes" / "stale.md").write_text("See app/greet.py#function-gone.\n")
    code, out, err = run("check", "--root", str(workspace))
    assert code == 1, err  # the stale ID decides, not the unreadable file
    assert "app/greet.py#function-gone" in out
    assert err.count(f"file_png{suffix}") == 1 and "usage:" not in err
    (workspace / "notes" / "stale.md").unlink()
    assert run("check", "--root", str(workspace))[0] == 0
    assert run("check", "--root", str(workspace), "--strict")[0] == 1  # a skipped file fails


# -- 2. exit codes through a pipe ------------------------------------------------------


def test_a_closed_pipe_keeps_the_exit_code(workspace: Path) -> None:
    (workspace / "notes" / "stale.md").write_text(
        "".join(f"app/greet.py#function-gone{n}\n" for n in range(3000))
    )
    (workspace / "gold.jsonl").write_text(
        "".join(
            json.dumps({"query": f"greet {n}", "relevant": [f"app/greet.py#function-gone{n}"]})
            + "\n"
            for n in range(300)
        )
    )
    statuses = shell(
        'chunkls check | true; echo "check ${PIPESTATUS[0]}"\n'
        'chunkls check --format json | head -3 > /dev/null; echo "json ${PIPESTATUS[0]}"\n'
        'chunkls search zzz_no_match_qq | true; echo "search ${PIPESTATUS[0]}"\n'
        'chunkls chunks | head -1 > /dev/null; echo "chunks ${PIPESTATUS[0]}"\n'
        'chunkls eval -q gold.jsonl | true; echo "eval ${PIPESTATUS[0]}"\n'
        'chunkls eval -q gold.jsonl --json | true; echo "eval json ${PIPESTATUS[0]}"\n',
        workspace,
    )
    assert statuses.split("\n")[:6] == [
        "check 1",
        "json 1",
        "search 1",
        "chunks 0",
        "eval 1",  # no gold ID resolves: nothing is scored
        "eval json 1",
    ], statuses


# -- 3. a changed --exclude reuses the cache ---------------------------------------


def _generations(cache: Path) -> dict[str, int]:
    """Root-relative path -> its cache row's generation (a file chunked again gets a new one)."""
    [path] = cache.rglob("index.sqlite3")
    db = sqlite3.connect(path)
    try:
        return dict(db.execute("SELECT rel_path, generation FROM files").fetchall())
    finally:
        db.close()


def test_another_exclude_reuses_every_cached_file(workspace: Path, tmp_path: Path) -> None:
    assert run("search", "greet", "--root", str(workspace))[0] == 0
    before = _generations(tmp_path / "cache")
    code, _, err = run("search", "greet", "--root", str(workspace), "--exclude", "docs/**")
    assert code == 0, err
    assert run("search", "greet", "--root", str(workspace))[0] == 0  # and back
    after = _generations(tmp_path / "cache")
    assert before and {path: after.get(path) for path in before} == before


# -- 5, 9, 10, 11: resolve, JSON names, skipped files, quiet ---------------------------


WRITTEN_FORMS = [
    "app/greet.py#function-greet",
    "./app/greet.py#function-greet",
    "/app/greet.py#function-greet",
    "app\\/greet.py#function-greet",
    "app\\/greet.py\\u0023function-greet",
    "`app/greet.py#function-greet`",
    "[greet](app/greet.py#function-greet)",
    "[greet](<app/greet.py#function-greet>)",
    '[greet](app/greet.py#function-greet "the greeting")',
    "<app/greet.py#function-greet>",
    '"app/greet.py#function-greet"',
    " app/greet.py#function-greet\n",
]
"""Every written form of one ID, as each front door must read it (one normaliser)."""


@pytest.mark.parametrize("written", WRITTEN_FORMS)
def test_resolve_reads_every_written_form(workspace: Path, written: str) -> None:
    code, out, err = run("resolve", written, "--root", str(workspace))
    assert code == 0, err
    assert "def greet(" in out


def test_check_writes_snake_case_json(workspace: Path) -> None:
    (workspace / "notes" / "stale.md").write_text("See app/greet.py#function-gone.\n")
    code, out, _ = run("check", "--root", str(workspace), "--format", "json")
    assert code == 1
    [problem] = json.loads(out)
    assert problem["chunk_id"] == "app/greet.py#function-gone" and "chunkId" not in problem


def test_resolve_says_why_a_skipped_files_id_is_missing(workspace: Path) -> None:
    (workspace / "app" / "latin1.py").write_bytes(b"def latin():\n    return '\xe9'\n")
    code, _, err = run("resolve", "app/latin1.py#function-latin", "--root", str(workspace))
    assert code == 1
    assert "app/latin1.py was skipped" in err and "UTF-8" in err


def test_resolve_json(workspace: Path) -> None:
    code, out, err = run(
        "resolve", "app/greet.py#function-greet", "--json", "--root", str(workspace)
    )
    assert code == 0, err
    [chunk] = json.loads(out)["chunks"]
    assert chunk["chunk_id"] == "app/greet.py#function-greet"
    assert chunk["source_path"] == "app/greet.py" and chunk["symbol"] == "greet"
    assert chunk["start_line"] < chunk["end_line"] and "def greet(" in chunk["text"]


def test_quiet_says_only_errors(workspace: Path) -> None:
    (workspace / "app" / "broken.py").write_text("def broken(:\n")
    for _ in range(2):  # cold, then warm
        code, _, err = run("search", "greet", "--root", str(workspace))
        assert code == 0 and "skipped app/broken.py" in err
        code, _, err = run("search", "greet", "--root", str(workspace), "-q")
        assert code == 0 and err == ""
    assert run("search", "zzz_no_match_qq", "--root", str(workspace), "--quiet")[2] == ""
    # --strict makes a skipped file an error: --quiet keeps errors
    code, _, err = run("search", "greet", "--root", str(workspace), "-q", "--strict")
    assert code == 1 and "skipped app/broken.py" in err
    (workspace / "notes" / "latin1.txt").write_bytes(b"caf\xe9\n")
    code, _, err = run("check", "--root", str(workspace), "-q", "--strict")
    assert code == 1 and "latin1.txt" in err and "skipped app/broken.py" in err


# -- 8. the help -----------------------------------------------------------------------


def test_the_help_says_check_reads_json_too() -> None:
    for argv in (["--help"], ["check", "--help"]):
        code, out, _ = run(*argv)
        assert code == 0
        assert "JSON" in out, out


# -- 5, 6, 7, 12: the MCP server ---------------------------------------------------------


@asynccontextmanager
async def mcp(root: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "chunkls", "mcp", "--root", str(root)], env=os.environ
    )
    with open(os.devnull, "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), TIMEOUT)
            yield session


async def _call(session: ClientSession, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await asyncio.wait_for(session.call_tool(name, arguments), TIMEOUT)
    return bool(result.isError), result.content[0].text  # type: ignore[union-attr]


async def test_the_mcp_tools_read_every_written_form_and_say_what_is_wrong(
    workspace: Path,
) -> None:
    async with mcp(workspace) as session:
        error, text = await _call(
            session, "read_chunk", {"chunk_id": "app\\/greet.py#function-greet"}
        )
        assert not error and "def greet(" in text, text
        error, text = await _call(
            session, "read_chunk", {"chunk_id": "./app/greet.py#function-greet"}
        )
        assert not error, text
        error, text = await _call(session, "outline", {"path": "/app/greet.py"})
        assert not error, text
        error, text = await _call(session, "outline", {"path": "app\\/greet.py"})
        assert not error, text
        error, text = await _call(session, "outline", {"path": "/etc/passwd"})
        assert error and "not a path inside the repository's roots" in text, text
        error, text = await _call(session, "search_chunks", {"query": "greet", "path_glob": "["})
        assert error and "'['" in text, text
        error, text = await _call(session, "search_chunks", {"query": "greet", "top_k": 3.5})
        assert error and "got 3.5" in text, text
        for arguments, said in [
            ({"query": "greet", "top_k": "3"}, 'got a string, "3"'),
            ({"query": "greet", "top_k": 1e100}, "got 1e+100"),
            ({"query": "greet", "top_k": [3]}, "got an array, [3]"),
            ({"query": 5}, "got a number, 5"),
            ({"query": "greet", "mode": True}, "got a boolean, true"),
        ]:
            error, text = await _call(session, "search_chunks", arguments)
            assert error and said in text, (arguments, text)


async def test_the_mcp_tools_read_the_forms_the_cli_reads(workspace: Path) -> None:
    """One normaliser: ``read_chunk`` and ``outline`` take every written form
    ``chunkls resolve`` takes (``test_resolve_reads_every_written_form``)."""
    async with mcp(workspace) as session:
        for written in WRITTEN_FORMS:
            error, text = await _call(session, "read_chunk", {"chunk_id": written})
            assert not error and "def greet(" in text, (written, text)
            error, text = await _call(session, "outline", {"path": written})
            assert not error and "app/greet.py#function-greet" in text, (written, text)


async def test_read_chunk_says_why_a_skipped_files_id_is_missing(workspace: Path) -> None:
    (workspace / "app" / "latin1.py").write_bytes(b"def latin():\n    return '\xe9'\n")
    async with mcp(workspace) as session:
        result = await asyncio.wait_for(
            session.call_tool("read_chunk", {"chunk_id": "app/latin1.py#function-latin"}),
            TIMEOUT,
        )
    assert result.isError
    text = result.content[0].text  # type: ignore[union-attr]
    assert "app/latin1.py was skipped" in text and "UTF-8" in text, text
    [unknown] = result.structuredContent["unknown"]  # type: ignore[index]
    assert "UTF-8" in unknown["skipped"]


async def test_the_instructions_say_when_answers_may_miss_changes(workspace: Path) -> None:
    """Point 4: "the answers are current" holds once loaded; while the index loads,
    an answer says so in a ``notice``, and the instructions tell the agent."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chunkls", "mcp", "--root", str(workspace)],
        env=os.environ,
    )
    with open(os.devnull, "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            started = await asyncio.wait_for(session.initialize(), TIMEOUT)
    instructions = started.instructions or ""
    assert "while its index loads" in instructions and "`notice`" in instructions, instructions
    assert "may be missing" in instructions
