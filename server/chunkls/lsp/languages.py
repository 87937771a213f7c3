"""Which language a document is in: for files chunkls knows, the suffix (editors label them
differently: eglot sends ``text``, Neovim its filetype); the client's ID for the rest."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from chunkls.chunking.suffixes import suffix_of
from chunkls.ids.json_strings import JSON_SUFFIXES

SUFFIX_LANGUAGES = {
    ".py": "python",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "plaintext",
    **JSON_SUFFIXES,
}
"""Suffix -> the language ID a file with it is in, whatever the client says."""

GENERIC_LANGUAGES = frozenset(
    {"", "text", "plaintext", "plain", "txt", "fundamental", "unknown", "none"}
)
"""Language IDs that say no more than "some text" (lowercased)."""

FALLBACK_LANGUAGE = "plaintext"
"""The language of a document that neither its suffix nor its client names."""

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def effective_language(language_id: str | None, path_or_uri: str) -> str:
    """The language ID a document is treated as: its suffix's (``SUFFIX_LANGUAGES``), else
    the client's ID, unless missing or generic (``GENERIC_LANGUAGES``): then plain text."""
    by_suffix = SUFFIX_LANGUAGES.get(suffix_of(_file_name(path_or_uri)))
    if by_suffix is not None:
        return by_suffix
    if language_id is None or language_id.strip().lower() in GENERIC_LANGUAGES:
        return FALLBACK_LANGUAGE
    return language_id


def _file_name(path_or_uri: str) -> str:
    """The last segment of a path or of a URI's path (a drive letter is no scheme)."""
    path = path_or_uri
    scheme, colon, _ = path_or_uri.partition(":")
    if colon and len(scheme) > 1 and _SCHEME.fullmatch(scheme):
        path = unquote(urlsplit(path_or_uri).path)
    return path.replace("\\", "/").rsplit("/", 1)[-1]
