"""Citations: chunk IDs written in the workspace's Markdown, text and JSON files; those
that do not resolve (``check_text``) and replacement IDs for one (``fix_candidates``)."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from chunkls.chunking.corpus import FileSkipped, read_regular
from chunkls.chunking.suffixes import suffix_of
from chunkls.ids.grammar import ChunkRef, candidate_ids, find_chunk_refs_in
from chunkls.ids.ignore_markers import unignored
from chunkls.ids.json_strings import JSON_SUFFIXES
from chunkls.index.folder import FolderInfo

if TYPE_CHECKING:
    from chunkls.index.queries import Queries
    from chunkls.index.replacement import ChunkHistory, Replacement


CITATION_SUFFIXES = frozenset({".md", ".markdown", ".txt", *JSON_SUFFIXES})
"""Files scanned for citations."""
SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
    }
)
"""Folders never scanned for citations (a folder holding ``pyvenv.cfg`` neither)."""
MAX_CITATION_FILE = 64 * 1024 * 1024
"""Larger files are not scanned (an agent's JSONL session log can be tens of MB)."""

_MODULE = re.compile(r"module-(\d+)")


def language_of(name: str) -> str:
    """The LSP language ID for a file name."""
    suffix = suffix_of(name)
    if suffix == ".py":
        return "python"
    if suffix in (".md", ".markdown"):
        return "markdown"
    return JSON_SUFFIXES.get(suffix, "plaintext")


class Citation(NamedTuple):
    """A chunk ID written in a file."""

    folder: FolderInfo
    rel_path: str
    ref: ChunkRef
    line: int
    """0-based; ``column`` and ``end_column`` are 0-based characters on it."""
    column: int
    end_column: int
    targets: tuple[str, ...]
    """The chunk IDs it may mean, best first."""
    prefix: str | None
    """The line up to the reference's end when it is not ASCII (for UTF-16 columns)."""


def scan_text(folder: FolderInfo, rel_path: str, text: str, language: str) -> list[Citation]:
    """The citations written in a text."""
    citations: list[Citation] = []
    line = line_start = cursor = 0
    for ref in find_chunk_refs_in(text, language):
        while (newline := _next_break(text, cursor, ref.start)) >= 0:
            line += 1
            cursor = line_start = newline
        prefix = text[line_start : ref.end]
        citations.append(
            Citation(
                folder,
                rel_path,
                ref,
                line,
                ref.start - line_start,
                ref.end - line_start,
                tuple(candidate_ids(ref, rel_path)),
                None if prefix.isascii() else prefix,
            )
        )
    return citations


def _next_break(text: str, start: int, stop: int) -> int:
    """The offset just after the first line break in ``text[start:stop]``, or -1."""
    for index in range(start, stop):
        char = text[index]
        if char == "\n":
            return index + 1
        if char == "\r":
            return index + 2 if text[index + 1 : index + 2] == "\n" else index + 1
    return -1


def walk_citation_files(
    root: Path, under: str = "", excluded: Callable[[str], bool] | None = None
) -> list[str]:
    """Root-relative paths of files that may cite chunks, less ``excluded`` ones (folder
    symlinks are not followed, file symlinks only to under the root)."""
    confine = root.resolve()
    found: list[str] = []
    start = os.path.join(root, under) if under else os.fspath(root)
    stack = [(start, under.strip("/") + "/" if under.strip("/") else "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as entries:
                listing = list(entries)
        except OSError:
            continue
        if any(entry.name == "pyvenv.cfg" for entry in listing):
            continue  # a virtual environment
        for entry in listing:
            rel_path = prefix + entry.name
            if excluded is not None and excluded(rel_path):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_DIRECTORIES:
                        stack.append((entry.path, rel_path + "/"))
                elif suffix_of(entry.name) in CITATION_SUFFIXES and entry.is_file():
                    if entry.is_symlink() and not inside(entry.path, confine):
                        continue  # its target is outside: never read
                    found.append(rel_path)
            except OSError:
                continue
    found.sort()
    return found


def citation_scope_excludes(rel_path: str, folder: FolderInfo) -> bool:
    """Whether a root-relative path of a folder is outside the citation scan."""
    parts = rel_path.split("/")
    return (
        suffix_of(parts[-1]) not in CITATION_SUFFIXES
        or any(part in SKIPPED_DIRECTORIES for part in parts[:-1])
        or any(
            folder.rules.glob_excludes("/".join(parts[:end])) for end in range(1, len(parts) + 1)
        )
    )


def inside(path: str | Path, root_resolved: Path) -> bool:
    """Whether a path, every symlink on the way resolved, is under a root."""
    return real_inside(os.path.realpath(path), root_resolved)


def real_inside(real: str, root_resolved: Path) -> bool:
    """Whether a path without symlinks (``os.path.realpath``'s) is under a root."""
    top = os.fspath(root_resolved)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def real_relative(real: str, root_resolved: Path) -> str | None:
    """The root-relative POSIX path of a path without symlinks strictly under a root."""
    top = os.fspath(root_resolved).rstrip(os.sep) + os.sep
    if not real.startswith(top) or len(real) == len(top):
        return None
    return real[len(top) :].replace(os.sep, "/")


def read_text_file(path: Path, root_resolved: Path | None = None) -> str | None:
    """A regular file's UTF-8 text, or ``None``; with ``root_resolved``, also
    ``None`` when a symlink on its way leaves the root."""
    if root_resolved is not None and not inside(path, root_resolved):
        return None
    try:
        data = read_regular(os.fspath(path), MAX_CITATION_FILE)[0]
        return None if b"\0" in data else data.decode("utf-8")
    except (FileSkipped, OSError, UnicodeDecodeError):
        return None


class CitationIndex:
    """Every citation in the workspace's Markdown and text files, by target ID."""

    def __init__(self) -> None:
        self.files: dict[tuple[FolderInfo, str], list[Citation]] = {}
        self.by_target: dict[str, list[Citation]] = {}

    def set_file(self, folder: FolderInfo, rel_path: str, citations: list[Citation] | None) -> None:
        """Replace one file's citations (``None``: the file is gone)."""
        old = self.files.pop((folder, rel_path), None)
        for citation in old or ():
            for target in citation.targets:
                entries = self.by_target.get(target)
                if entries is not None:
                    entries.remove(citation)
                    if not entries:
                        del self.by_target[target]
        if not citations:
            return
        self.files[(folder, rel_path)] = citations
        for citation in citations:
            for target in citation.targets:
                self.by_target.setdefault(target, []).append(citation)

    def scan_file(self, folder: FolderInfo, rel_path: str) -> None:
        """(Re-)read one file from disk."""
        text = read_text_file(folder.absolute(rel_path), folder.root_resolved)
        language = language_of(rel_path.rsplit("/", 1)[-1])
        found = None if text is None else scan_text(folder, rel_path, text, language)
        self.set_file(folder, rel_path, found)

    def scan_folder(self, folder: FolderInfo) -> Iterator[None]:
        """Scan a whole folder, a file at a time (yields so a server can answer)."""
        seen = set(walk_citation_files(folder.root, excluded=folder.rules.glob_excludes))
        self._forget(folder, keep=seen)
        for rel_path in sorted(seen):
            self.scan_file(folder, rel_path)
            yield

    def refresh(self, folder: FolderInfo, rel_paths: Iterable[str]) -> None:
        """Re-read changed paths (files or whole folders, created or deleted)."""
        for rel_path in rel_paths:
            path = folder.absolute(rel_path)
            self._forget(folder, rel_path + "/")
            if os.path.isdir(path) and not os.path.islink(path):  # False on any error
                if not citation_scope_excludes(rel_path + "/x.md", folder):
                    for found in walk_citation_files(
                        folder.root, rel_path, folder.rules.glob_excludes
                    ):
                        self.scan_file(folder, found)
            elif not citation_scope_excludes(rel_path, folder):
                self.scan_file(folder, rel_path)

    def remove_folder(self, folder: FolderInfo) -> None:

        self._forget(folder)

    def _forget(self, folder: FolderInfo, under: str = "", keep: Container[str] = ()) -> None:
        """Forget the citations of a folder's files under ``under``, but those in ``keep``."""
        for _, rel_path in [key for key in self.files if key[0] is folder]:
            if rel_path.startswith(under) and rel_path not in keep:
                self.set_file(folder, rel_path, None)

    def citing(self, chunk_id: str) -> list[Citation]:
        """Citations that may mean this chunk ID, in file order."""
        return sorted(
            self.by_target.get(chunk_id, ()),
            key=lambda c: (c.folder.position, c.rel_path, c.line, c.column),
        )


class Problem(NamedTuple):
    """A citation that does not resolve."""

    ref: ChunkRef
    chunk_id: str
    """The ID as it would be looked up (``#identity`` made absolute)."""
    suggestions: list[str]
    """Replacement IDs, best first (``replacement``'s first, when it has one)."""
    replacement: Replacement | None = None
    """What the ID became, with its evidence (``Queries.replacement``)."""

    def said(self) -> str:
        """``unknown chunk ID A (moved to B in 1a2b3c4, 2026-03-02)``, or with a hint."""
        text = f"unknown chunk ID {self.chunk_id}"
        if self.replacement is not None:
            return f"{text} ({self.replacement.said()})"
        return f"{text} (did you mean {self.suggestions[0]}?)" if self.suggestions else text


SUGGEST_FOR = 100
"""Distinct unknown IDs of one text that get replacement suggestions."""
REPLACE_FOR = 10_000
"""Distinct unknown IDs of one text whose history is looked up (``replacement``)."""


def check_text(
    index: Queries,
    text: str,
    language: str,
    folder: FolderInfo | None,
    rel_path: str | None,
    refs: Sequence[ChunkRef] | None = None,
    suggested: dict[str, list[str]] | None = None,
    suggest_for: int | None = None,
) -> list[Problem]:
    """The references in a text that resolve to no chunk, with replacements
    (none in ``check-exclude`` files or on ``chunkls: ignore`` lines).
    ``suggested`` is shared by the calls that check one text in parts; its first
    ``suggest_for`` distinct unknown IDs get suggestions."""
    if folder is not None and rel_path is not None and folder.rules.check_excludes(rel_path):
        return []
    problems: list[Problem] = []
    replaced: dict[str, Replacement | None] = {}
    suggested = {} if suggested is None else suggested
    suggest_for = SUGGEST_FOR if suggest_for is None else suggest_for
    if refs is None:
        refs = find_chunk_refs_in(text, language)
    for ref in unignored(text, language, refs):
        if any(map(index.has_id, candidate_ids(ref, rel_path))):
            continue  # (which chunk does not matter here: none is read)
        if ref.form == "local" and rel_path is None:
            continue
        chunk_id = ref.chunk_id if ref.form != "local" else f"{rel_path}#{ref.identity}"
        if chunk_id in replaced:
            replacement = replaced[chunk_id]
        else:
            replacement = None
            # the IDs it may mean, as written, then relative (while the answer is
            # incomplete it is asked again: no history is looked up now)
            if len(replaced) < REPLACE_FOR and not index.incomplete:
                for candidate in dict.fromkeys([chunk_id, *candidate_ids(ref, rel_path)]):
                    if (replacement := index.replacement(candidate)) is not None:
                        break
            replaced[chunk_id] = replacement
        suggestions = suggested.get(chunk_id)
        if suggestions is None:
            suggestions = (
                index.fix_candidates(chunk_id, replacement=replacement or False)
                if len(suggested) < suggest_for
                else first_of(replacement)
            )
            suggested[chunk_id] = suggestions
        problems.append(Problem(ref, chunk_id, suggestions, replacement))
    return problems


def first_of(replacement: Replacement | None) -> list[str]:
    """A replacement's new ID as a list of suggestions (none for a deleted chunk)."""
    return [replacement.chunk_id] if replacement is not None and replacement.chunk_id else []


def fix_candidates(
    index: Queries,
    chunk_id: str,
    history: ChunkHistory | None = None,
    limit: int = 3,
    replacement: Replacement | bool | None = True,
) -> list[str]:
    """``Queries.fix_candidates``. After what its history says, the same file: for
    ``module-N`` the module chunks nearest line N (and only those); for a function or class,
    the chunk whose old text is most alike, then similar names; for a heading, slug
    variants, then similar slugs. Other files after, by path similarity."""
    if replacement is True:
        replacement = index.replacement(chunk_id)
    found = replacement if not isinstance(replacement, bool) else None
    path, _, identity = chunk_id.partition("#")
    same_file = index.chunks_of_source(path)
    ranked: list[str] = first_of(found)
    if same_file:
        kind, _, name = identity.partition("-")
        ids = list(dict.fromkeys(chunk.chunk_id for chunk in same_file))
        identities = {cid: cid.partition("#")[2] for cid in ids}
        if (module := _MODULE.fullmatch(identity)) is not None:
            line = int(module.group(1))
            modules = [cid for cid in ids if _MODULE.fullmatch(identities[cid])]
            modules.sort(key=lambda cid: (abs(int(identities[cid][7:]) - line), cid))
            ranked += modules
        elif kind in ("function", "class"):
            old_text = found.old_text if found is not None else None
            if old_text is None and history is not None:
                old_text = history.text_of(chunk_id)
            code = [c for c in same_file if c.identity.split("-", 1)[0] in ("function", "class")]
            if old_text is not None:
                from chunkls.index.replacement import similarity

                scored = sorted((-similarity(old_text, c.text), c.chunk_id) for c in code)
                ranked += [cid for _, cid in scored]
            ranked += _by_name(name, [c.chunk_id for c in code if c.identity.startswith(kind)])
            ranked += _by_name(name, [c.chunk_id for c in code])
        elif kind == "heading" or not identity.startswith(("module-", "function-", "class-")):
            headings = [cid for cid in ids if identities[cid].startswith("heading-")]
            variants = _heading_variants(identity)
            ranked += [
                cid for variant in variants for cid in headings if identities[cid] == variant
            ]
            ranked += _by_name(identity.removeprefix("heading-"), headings)
        ranked += _by_name(identity, ids)
    stale_module = _MODULE.fullmatch(identity) is not None
    ranked += index.suggest(chunk_id, limit * 4 if stale_module else limit)
    if stale_module:
        # a stale module-N was module-level code: only module chunks can replace it
        ranked = first_of(found) + [
            cid for cid in ranked if _MODULE.fullmatch(cid.partition("#")[2])
        ]
    return list(dict.fromkeys(candidate for candidate in ranked if candidate != chunk_id))[:limit]


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _by_name(name: str, chunk_ids: list[str]) -> list[str]:
    scored = sorted(
        (-_similarity(name.lower(), cid.partition("#")[2].partition("-")[2].lower()), cid)
        for cid in chunk_ids
    )
    return [cid for score, cid in scored if -score >= 0.4]


def _heading_variants(identity: str) -> list[str]:
    """A heading citation's other readings: our slug of its text; without a repeat suffix."""
    bare = identity.removeprefix("heading-")
    slug = re.sub(r"[^a-z0-9]+", "-", bare.lower()).strip("-") or "section"
    variants = [f"heading-{slug}"]
    if (repeat := re.fullmatch(r"(.+)-(\d+)", slug)) is not None:
        variants.append(f"heading-{repeat.group(1)}")  # (shorter: never the slug itself)
    return variants
