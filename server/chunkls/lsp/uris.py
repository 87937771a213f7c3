"""File paths to and from ``file:`` URIs, for every name a file system allows: bytes that
are not UTF-8 (pygls's conversions fail on them) percent-encoded one by one, as RFC 8089."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib import parse

from pygls.uris import from_fs_path, to_fs_path


def uri_of(path: str | os.PathLike[str]) -> str:
    """The ``file:`` URI of a path."""
    text = os.fspath(path)
    try:
        uri = from_fs_path(text)
    except UnicodeEncodeError:  # a name that is not UTF-8
        uri = None
    return uri or Path(text).as_uri()


def path_of(uri: str) -> str | None:
    """The file system path of a ``file:`` URI (``None`` for another scheme or
    a URI that is not a path, such as one holding ``%00``)."""
    if not uri.startswith("file:"):
        return None
    try:
        path = to_fs_path(uri)
    except Exception:  # whatever pygls raises on a malformed URI
        return None
    if path is not None and "\ufffd" in path and sys.platform != "win32":
        parts = parse.urlsplit(uri)
        if not parts.netloc:  # percent-escaped bytes that are not UTF-8: the same bytes
            path = parse.unquote(parts.path, errors="surrogateescape")
    if not path or "\0" in path:  # no path, or one no file system allows
        return None
    return path


def folder_uris(folders: Sequence[str] | None, root_uri: str | None) -> list[str]:
    """An ``initialize`` request's folder URIs, each once, else its root URI."""
    uris = list(dict.fromkeys(folders or ()))
    return uris or ([root_uri] if root_uri else [])
