"""Emacs (28 + eglot 1.9, or 29+) with docs/editors/chunkls-eglot.el: definition,
hover, search, a diagnostic, a rename saved into the index, and notes labelled
``text`` (text-mode) or ``python`` (eglot < 1.15 labels every buffer alike)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.editors.conftest import CONFIGS, DRIVERS, editor, make_workspace, run_editor

GREET = 17  # app/greet.py#function-greet starts at its decorator


def run_emacs(tmp_path: Path, scenario: str) -> tuple[Path, dict[str, Any]]:
    emacs = editor("emacs", ["--batch", "--eval", "(require 'eglot)"])
    workspace = make_workspace(tmp_path)
    found = run_editor(
        [
            emacs,
            "--batch",
            "-l",
            str(CONFIGS / "chunkls-eglot.el"),
            "-l",
            str(DRIVERS / "emacs_driver.el"),
        ],
        tmp_path,
        workspace,
        {"CHUNKLS_SCENARIO": scenario},
    )
    return workspace, found


def test_emacs_with_the_documented_configuration(tmp_path: Path) -> None:
    workspace, found = run_emacs(tmp_path, "text-first")
    greet = str(workspace / "app" / "greet.py")
    # a text-mode .txt note started the server: eglot labels it "text"
    assert found["txt_mode"] == "text-mode"
    if found["emacs"].startswith("28."):
        assert found["txt_language"] == "text"
    assert found["txt_definition"] == [{"path": greet, "line": GREET}]
    # the Markdown note (labelled "text" too, by eglot < 1.15)
    assert found["definition"] == [{"path": greet, "line": GREET}]
    assert "def greet(name: str = DEFAULT_NAME)" in found["hover"]
    # a JSON Lines session log (text-mode without a JSON mode) and its escaped ID
    assert found["jsonl_mode"] in ("text-mode", "json-mode", "js-json-mode")
    assert found["jsonl_definition"] == [{"path": greet, "line": GREET}]
    assert any("fetch_greeting" in summary for summary in found["symbols"])
    assert [d["line"] for d in found["diagnostics_before"]] == [4]
    assert "app/greet.py#function-salute" in found["diagnostics_before"][0]["message"]
    # greet() renamed to salute() and saved: the index follows
    assert found["definition_after_save"] == [{"path": greet, "line": GREET}]
    # the old ID follows its chunk: the index's history knows it was renamed
    assert found["old_definition_after_save"] == [{"path": greet, "line": GREET}]
    assert [d["line"] for d in found["diagnostics_after"]] == [3]


def test_emacs_markdown_note_after_a_python_file(tmp_path: Path) -> None:
    workspace, found = run_emacs(tmp_path, "python-first")
    assert found["py_mode"] == "python-mode"
    if found["emacs"].startswith("28."):  # Debian's eglot 1.9: the case this guards
        assert found["md_language"] == "python"
    assert found["definition"] == [{"path": str(workspace / "app" / "greet.py"), "line": GREET}]
