"""The language a document is treated as, from the client's ID and its suffix."""

from __future__ import annotations

import pytest

from chunkls.index.citations import language_of
from chunkls.lsp.languages import effective_language


@pytest.mark.parametrize(
    ("language_id", "path", "expected"),
    [
        # the client agrees with the suffix
        ("markdown", "/w/notes/a.md", "markdown"),
        ("python", "/w/app/greet.py", "python"),
        ("plaintext", "/w/notes/a.txt", "plaintext"),
        # generic or missing IDs: the suffix decides (Emacs text-mode sends "text")
        ("text", "/w/notes/a.txt", "plaintext"),
        ("text", "/w/notes/a.md", "markdown"),
        ("fundamental", "/w/notes/a.markdown", "markdown"),
        ("", "/w/app/greet.py", "python"),
        (None, "/w/notes/a.md", "markdown"),
        ("TEXT", "/w/app/greet.py", "python"),
        # IDs that contradict the suffix: eglot < 1.15 labels every buffer alike
        ("python", "/w/notes/a.md", "markdown"),
        ("python", "/w/notes/a.txt", "plaintext"),
        ("markdown", "/w/app/greet.py", "python"),
        ("markdown", "/w/notes/a.txt", "plaintext"),
        ("gfm", "/w/notes/a.md", "markdown"),
        ("python-ts", "/w/app/greet.py", "python"),
        # JSON transcripts: a session log is JSON Lines whatever the client says
        ("plaintext", "/w/logs/session.jsonl", "jsonl"),
        ("json", "/w/logs/session.ndjson", "jsonl"),
        ("jsonc", "/w/export.json", "json"),
        ("text", "/w/.vscode/settings.jsonc", "jsonc"),
        ("jsonl", "untitled:Untitled-3", "jsonl"),
        # suffixes are compared case-insensitively
        ("python", "/w/NOTES/README.MD", "markdown"),
        ("text", "C:\\w\\notes\\A.Markdown", "markdown"),
        # unknown suffixes and untitled buffers keep the client's ID
        ("restructuredtext", "/w/docs/index.rst", "restructuredtext"),
        ("markdown", "untitled:Untitled-1", "markdown"),
        ("python", "untitled:Untitled-2", "python"),
        ("quarto", "/w/notes/a.qmd", "quarto"),
        # ... unless it is generic or missing: then plain text
        ("text", "/w/notes/NOTES", "plaintext"),
        ("fundamental", "/w/notes/a.rst", "plaintext"),
        ("", "untitled:Untitled-3", "plaintext"),
        (None, "/w/notes/a.rst", "plaintext"),
        # URIs: the path's last segment, decoded, without query or fragment
        ("python", "file:///w/notes/a%20b.md", "markdown"),
        ("text", "file:///w/notes/a.md?x=1#frag", "markdown"),
        ("python", "vscode-notebook-cell:/w/nb.ipynb#cell1", "python"),
        ("text", "file:///w/notes/a.md.bak", "plaintext"),
        # a name that is only a suffix has none (PurePath's rule)
        ("python", "/w/.md", "python"),
        ("python", "/w/notes/a.", "python"),
    ],
)
def test_effective_language(language_id: str | None, path: str, expected: str) -> None:
    assert effective_language(language_id, path) == expected


@pytest.mark.parametrize("name", ["a.py", "a.md", "a.markdown", "a.txt", "A.PY", "b.rst", "c"])
@pytest.mark.parametrize("language_id", ["text", "plaintext", "fundamental", "", None])
def test_generic_ids_read_a_file_as_check_does(name: str, language_id: str | None) -> None:
    """A generic ID: a file is read as ``chunkls check`` reads it."""
    assert effective_language(language_id, f"/w/{name}") == language_of(name)


@pytest.mark.parametrize(
    "name",
    ["a.py", "a.md", "a.markdown", "a.txt", "A.PY", "a.json", "a.jsonc", "a.jsonl", "a.ndjson"],
)
@pytest.mark.parametrize("language_id", ["python", "markdown", "plaintext", "org"])
def test_known_suffixes_override_every_id(name: str, language_id: str) -> None:
    """A known suffix: whatever the client sends, as ``chunkls check`` reads it."""
    assert effective_language(language_id, f"/w/{name}") == language_of(name)
