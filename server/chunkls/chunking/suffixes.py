"""Which files the chunker reads, by suffix, and as what (no parsing here: the
corpus walk and the ID scanners need this much without the chunker itself)."""

from __future__ import annotations

PYTHON_SUFFIXES = frozenset({".py"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
SUPPORTED_SUFFIXES = PYTHON_SUFFIXES | MARKDOWN_SUFFIXES


def suffix_of(name: str) -> str:
    """The lowercased suffix of a file name, by ``PurePath.suffix``'s rule."""
    i = name.rfind(".")
    if 0 < i < len(name) - 1:
        return name[i:].lower()
    return ""


def file_type_for(name: str) -> str | None:
    """``"code"``, ``"prose"`` or ``None`` for a file name, by suffix."""
    suffix = suffix_of(name)
    if suffix in PYTHON_SUFFIXES:
        return "code"
    if suffix in MARKDOWN_SUFFIXES:
        return "prose"
    return None
