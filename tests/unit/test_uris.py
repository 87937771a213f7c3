"""File paths to URIs and back, for names that are not UTF-8 too."""

from __future__ import annotations

import os
import sys

import pytest
from pygls.uris import from_fs_path

from chunkls.lsp.uris import path_of, uri_of

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX names are bytes")


@posix_only
@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("/ws/app/x.py", "file:///ws/app/x.py"),
        ("/ws/with space/é.md", "file:///ws/with%20space/%C3%A9.md"),
        ("/ws/a#b%c?.py", "file:///ws/a%23b%25c%3F.py"),
        ("/ws/\ufffd.py", "file:///ws/%EF%BF%BD.py"),  # a real U+FFFD stays one
        (os.fsdecode(b"/ws/bad\xff.py"), "file:///ws/bad%FF.py"),
        (os.fsdecode(b"/ws/d\xe9/a.md"), "file:///ws/d%E9/a.md"),
    ],
)
def test_paths_and_uris_map_both_ways(path: str, uri: str) -> None:
    assert uri_of(path) == uri
    assert path_of(uri) == path


@posix_only
def test_utf8_names_get_pyglss_uris() -> None:
    path = "/ws/Ünïcode 日本/x y.py"
    assert uri_of(path) == from_fs_path(path)


@pytest.mark.parametrize(
    "uri",
    ["untitled:Untitled-1", "https://x/y.md", "vscode-notebook:/x", "file:///ws/a%00.md", "file:"],
)
def test_other_schemes_have_no_path(uri: str) -> None:
    assert path_of(uri) is None
