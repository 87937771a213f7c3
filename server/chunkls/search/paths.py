"""What a chunk's file path says to ``hybrid``'s ranking: whether it is a test's, which
kinds of file it is (``path_kinds``), and the words of its name."""

from __future__ import annotations

import functools
import re

from chunkls.search.tokens import tokenize

_TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|testing)/|(?:^|/)(?:test_[^/]*|[^/]*_tests?\.py|conftest\.py)$"
)


@functools.lru_cache(maxsize=8192)
def in_tests(source_path: str) -> bool:
    """Whether a file is a test's (in a ``tests`` folder, or named as pytest's are)."""
    return _TEST_PATH.search(source_path) is not None


_EXAMPLES = frozenset(
    {"example", "examples", "demo", "demos", "sample", "samples", "doc", "docs", "docs_src"}
)
_VENDORED = frozenset({"vendor", "vendored", "_vendor", "third_party", "thirdparty", "extern"})
KIND_WORDS = {
    "examples": _EXAMPLES,
    "vendored": frozenset({"vendor", "vendored"}),
    "compat": frozenset({"compat", "compatibility"}),
    "init": frozenset({"init"}),
    "dot_markdown": frozenset(),
    "markdown": frozenset({"docs", "documentation", "readme", "guide", "tutorial"}),
}


@functools.lru_cache(maxsize=8192)
def path_kinds(source_path: str, file_type: str) -> tuple[str, ...]:
    """Which kinds of file a path is: ``examples`` (or docs), ``vendored``, ``compat``,
    ``init``, ``markdown`` and ``dot_markdown`` (Markdown under a dot-folder)."""
    folders = source_path.split("/")
    name = folders.pop()
    kinds = []
    if not _EXAMPLES.isdisjoint(folders):
        kinds.append("examples")
    if not _VENDORED.isdisjoint(folders):
        kinds.append("vendored")
    if "compat" in name.lower() or any("compat" in folder.lower() for folder in folders):
        kinds.append("compat")
    if name == "__init__.py":
        kinds.append("init")
    if file_type != "code":
        kinds.append("markdown")
        if any(folder.startswith(".") for folder in folders):
            kinds.append("dot_markdown")
    return tuple(kinds)


def path_prior(
    source_path: str, file_type: str, words: list[str], priors: dict[str, float]
) -> float:
    """The product of ``priors``' factors for the kinds a file is, but those the
    query's ``words`` name."""
    factor = 1.0
    for kind in path_kinds(source_path, file_type):
        if KIND_WORDS[kind].isdisjoint(words):
            factor *= priors.get(kind, 1.0)
    return factor


@functools.lru_cache(maxsize=8192)
def stem_words(source_path: str) -> frozenset[str]:
    """The words of a file's name without its extension (``__init__``: its folder's)."""
    folders = source_path.split("/")
    name = folders[-1].rsplit(".", 1)[0]
    if name == "__init__" and len(folders) > 1:
        name = folders[-2]
    return frozenset(tokenize(name))


def stem_match(source_path: str, idfs: dict[str, float]) -> float:
    """The summed IDF of the query words that name the file."""
    named = stem_words(source_path)
    return sum(weight for word, weight in idfs.items() if word in named)
