"""The README's quick start stays true: its first command, run for real, prints
exactly the output the README shows."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest

from chunkls import cli

REPO = Path(__file__).resolve().parents[2]
_QUICK_START = re.compile(
    r"## Quick start\n.*?```sh\nuv run (chunkls search [^\n]+)\nuv run pytest\n```"
    r".*?<!-- quick-start output[^>]*-->\n```text\n(.*?)```",
    re.S,
)


def test_the_quick_start_output_is_a_real_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    found = _QUICK_START.search((REPO / "README.md").read_text(encoding="utf-8"))
    assert found is not None, "the README's quick start lost its command or its output block"
    command, shown = found.groups()
    argv = shlex.split(command)[1:]
    assert argv[0] == "search"
    monkeypatch.chdir(REPO)  # the command runs from a clone's root
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main([*argv, "--no-cache"], out, err) == 0, err.getvalue()
    assert out.getvalue() == shown, (
        "update the README's quick-start output to this real run:\n" + out.getvalue()
    )
