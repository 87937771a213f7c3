"""Neovim (0.7+) with docs/editors/chunkls.lua: definition, hover, search, a
diagnostic, and a rename saved into the index."""

from __future__ import annotations

from pathlib import Path

from tests.editors.conftest import CONFIGS, DRIVERS, editor, make_workspace, run_editor

GREET = 17  # app/greet.py#function-greet starts at its decorator


def test_neovim_with_the_documented_configuration(tmp_path: Path) -> None:
    nvim = editor("nvim")
    workspace = make_workspace(tmp_path)
    found = run_editor(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "--cmd",
            "filetype on",  # what a user's Neovim does without -u NONE
            "-c",
            f"luafile {CONFIGS / 'chunkls.lua'}",
            "-c",
            f"luafile {DRIVERS / 'nvim_driver.lua'}",
        ],
        tmp_path,
        workspace,
    )
    greet = str(workspace / "app" / "greet.py")
    assert found["filetype"] == "markdown"
    assert found["attached"] is True
    # go to definition: the request and what `gd` does (jump)
    assert found["definition"] == [{"path": greet, "line": GREET}]
    assert found["jump"] == {"path": greet, "line": GREET}
    # a JSON Lines session log gets a filetype, the server, and its escaped ID resolves
    assert found["jsonl_filetype"] == "jsonl"
    assert found["jsonl_definition"] == [{"path": greet, "line": GREET}]
    # hover previews the chunk
    assert "def greet(name: str = DEFAULT_NAME)" in found["hover"]
    # workspace symbols search the chunks
    assert "app/greet.py#function-fetch_greeting" in found["symbols"]
    # the unknown ID (line 4) has a diagnostic, the known one (line 3) none
    assert [d["line"] for d in found["diagnostics_before"]] == [4]
    assert "app/greet.py#function-salute" in found["diagnostics_before"][0]["message"]
    # greet() renamed to salute() and saved: the index follows
    assert found["definition_after_save"] == [{"path": greet, "line": GREET}]
    # the old ID follows its chunk: the index's history knows it was renamed
    assert found["old_definition_after_save"] == [{"path": greet, "line": GREET}]
    assert [d["line"] for d in found["diagnostics_after"]] == [3]
