"""Real editors, headless, with the documented configuration (docs/editors/).

Each test copies the fixture workspace, gives the editor a temporary home,
puts this checkout's ``chunkls`` first on ``PATH``, runs a driver script that
prints its findings as JSON, and asserts on them. Without the editor the test
is skipped, except in CI (``CI`` set), where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent.parent
CONFIGS = ROOT / "docs" / "editors"
"""The configuration files the documentation tells users to load."""
DRIVERS = Path(__file__).parent
FIXTURE = ROOT / "tests" / "fixtures" / "workspace"
EDITOR_TIMEOUT = 180
"""Seconds an editor run may take at most (its driver bounds every wait)."""

NOTE = """# Editor note

The greeting: app/greet.py#function-greet.
Renamed: app/greet.py#function-salute.
"""
"""A Markdown note: one ID that resolves, one that resolves after the rename."""
SESSION = (
    '{"type": "user", "text": "Where is the greeting?"}\n'
    '{"type": "assistant", "text": "In app\\/greet.py#function-greet.\\nDone."}\n'
)
"""An agent's JSON Lines session log citing a chunk (``/`` escaped, as some
encoders write it)."""


def editor(binary: str, probe: list[str] | None = None) -> str:
    """The editor's path; skip without it, or when ``probe`` (arguments) fails
    with it (fail in CI)."""
    found = shutil.which(binary)
    if found is not None and probe is not None:
        done = subprocess.run(
            [found, *probe], capture_output=True, timeout=EDITOR_TIMEOUT, check=False
        )
        found = found if done.returncode == 0 else None
    if found is None:
        message = (
            f"{binary} {' '.join(probe or [])} is not available "
            "(apt-get install neovim emacs-nox elpa-eglot); CI installs it"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def make_workspace(base: Path) -> Path:
    """A copy of the fixture workspace with the editor note, as a git repository."""
    root = base / "workspace"
    shutil.copytree(FIXTURE, root)
    (root / "notes" / "editor.md").write_text(NOTE, encoding="utf-8")
    (root / "notes" / "editor.txt").write_text(NOTE.replace("# ", ""), encoding="utf-8")
    (root / "notes" / "session.jsonl").write_text(SESSION, encoding="utf-8")
    # a project root for editors that look for one (eglot: project.el's VC roots)
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
    return root


def editor_env(base: Path, workspace: Path, result: Path) -> dict[str, str]:
    """A temporary home and XDG folders, and this checkout's chunkls first on PATH."""
    home = base / "home"
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        CHUNKLS_WORKSPACE=str(workspace),
        CHUNKLS_RESULT=str(result),
    )
    for folder in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        Path(env[folder]).mkdir(parents=True, exist_ok=True)
    return env


def run_editor(
    command: list[str], base: Path, workspace: Path, extra_env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run an editor command; the JSON its driver wrote (with its exit code and time)."""
    result = base / "result.json"
    env = editor_env(base, workspace, result) | (extra_env or {})
    started = time.monotonic()
    done = subprocess.run(
        command,
        env=env,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=EDITOR_TIMEOUT,
        check=False,
    )
    output = (done.stdout + done.stderr).decode("utf-8", "replace")[-4000:]
    assert result.exists(), f"the driver wrote no result (exit {done.returncode}):\n{output}"
    found: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
    assert "error" not in found, f"{found['error']}\n{output}"
    assert done.returncode == 0, output
    found["seconds"] = time.monotonic() - started
    return found
