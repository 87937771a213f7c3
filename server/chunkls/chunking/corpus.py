"""Corpus composition: which files become chunks (the tutorial's rules, plus excludes from
``[tool.chunkls]`` and editor settings), and walking a tree for them: the one module."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from chunkls.chunking.suffixes import SUPPORTED_SUFFIXES, suffix_of
from chunkls.search import MODES

DEFAULT_EXCLUDED_DIRECTORIES = frozenset({
    ".claude", ".git", ".mypy_cache", ".pytest_cache", ".rag-index", ".ruff_cache",
    ".venv", "__pycache__", "build", "docs", "dist", "harness",
})  # fmt: skip
DEFAULT_EXCLUDED_FILES = frozenset({
    "test_generation_assets.py", "test_measure_facts.py", "test_prepare_generation.py",
    "test_validate_generation.py", "test_verify_facts.py", "test_verify_guides.py",
})  # fmt: skip
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024

CONFIG_KEYS = {
    "exclude-dirs": "directory names left out wherever they appear",
    "exclude-files": "file names left out wherever they appear",
    "exclude": "glob patterns (root-relative, ** for any depth) of files or folders to leave out",
    "max-file-size": "files larger than this many bytes are skipped and reported",
    "check-exclude": "glob patterns of files whose chunk IDs check and diagnostics leave out",
    "search-mode": "how searches rank when no mode is asked for: hybrid or bm25",
}


def compile_globs(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """One regex for root-relative glob patterns (``docs/configuration.md``), or ``None``."""
    parts = [_translate_glob(pattern) for pattern in patterns if pattern.strip("/")]
    if not parts:
        return None
    return re.compile("(?:" + "|".join(parts) + r")\Z")


def glob_problem(pattern: str) -> str | None:
    """What is wrong with a glob pattern: a ``[`` with no ``]`` after it, or an empty class."""
    at = pattern.find("[")
    while at >= 0:
        end = pattern.find("]", at + 2)
        if end < 0:
            return f"{pattern!r} has a '[' that is never closed (a character class needs a ']')"
        at = pattern.find("[", end + 1)
    return None


def _translate_glob(pattern: str) -> str:
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    pattern = pattern.strip("/")
    out = [] if anchored else ["(?:.*/)?"]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


_RULES = ("exclude_dirs", "exclude_files", "exclude_globs", "max_file_size", "check_exclude")
"""The fields of ``CorpusRules`` that its equality compares (not its search mode)."""


class CorpusRules:
    """The rules that decide which files of a tree become chunks (immutable;
    a plain class, not a dataclass: a search read in place imports no
    ``dataclasses``, which brings ``inspect`` and ``ast``)."""

    __slots__ = (
        "_check_glob",
        "_glob",
        "check_exclude",
        "exclude_dirs",
        "exclude_files",
        "exclude_globs",
        "max_file_size",
        "search_mode",
    )
    exclude_dirs: frozenset[str]
    """Directory names left out at any depth (the tutorial's, plus configured)."""
    exclude_files: frozenset[str]
    exclude_globs: tuple[str, ...]
    max_file_size: int
    check_exclude: tuple[str, ...]
    """Globs of files whose chunk IDs are not checked; they are still chunked."""
    search_mode: str | None
    """How searches rank when no mode is asked for (``None``: the default
    mode); not a rule of which files, so rules differing only in it are equal."""
    _glob: re.Pattern[str] | None
    _check_glob: re.Pattern[str] | None

    def __init__(
        self,
        exclude_dirs: frozenset[str] = DEFAULT_EXCLUDED_DIRECTORIES,
        exclude_files: frozenset[str] = DEFAULT_EXCLUDED_FILES,
        exclude_globs: tuple[str, ...] = (),
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        check_exclude: tuple[str, ...] = (),
        search_mode: str | None = None,
    ) -> None:
        values = (exclude_dirs, exclude_files, exclude_globs, max_file_size, check_exclude)
        for name, value in zip(_RULES, values, strict=True):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "search_mode", search_mode)
        object.__setattr__(self, "_glob", compile_globs(exclude_globs))
        object.__setattr__(self, "_check_glob", compile_globs(check_exclude))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"CorpusRules is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"CorpusRules is immutable: cannot delete {name!r}")

    def _rules(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _RULES)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, CorpusRules)
        return self._rules() == other._rules()

    def __hash__(self) -> int:
        return hash(self._rules())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in (*_RULES, "search_mode"))
        return f"CorpusRules({fields})"

    def __reduce__(self) -> tuple[type[CorpusRules], tuple[object, ...]]:
        """Pickled as its arguments (worker processes get the rules)."""
        return CorpusRules, (*self._rules(), self.search_mode)

    def extended(
        self,
        exclude_dirs: Iterable[str] = (),
        exclude_files: Iterable[str] = (),
        exclude_globs: Iterable[str] = (),
        max_file_size: int | None = None,
        check_exclude: Iterable[str] = (),
        search_mode: str | None = None,
    ) -> CorpusRules:
        """These rules with more excludes (never fewer), and another search mode if given."""
        return CorpusRules(
            self.exclude_dirs | frozenset(exclude_dirs),
            self.exclude_files | frozenset(exclude_files),
            tuple(dict.fromkeys((*self.exclude_globs, *exclude_globs))),
            self.max_file_size if max_file_size is None else max_file_size,
            tuple(dict.fromkeys((*self.check_exclude, *check_exclude))),
            search_mode or self.search_mode,
        )

    def fingerprint(self) -> str:
        """A short stable digest of what in these rules decides the chunks, for cache keys."""
        data = json.dumps(
            [
                sorted(self.exclude_dirs),
                sorted(self.exclude_files),
                list(self.exclude_globs),
                self.max_file_size,
            ]
        )
        return hashlib.sha256(data.encode()).hexdigest()[:16]

    @property
    def adds_excludes(self) -> bool:
        """Whether these rules leave out more files than the tutorial's (no rules
        leave out fewer: a cached file is in the tutorial's corpus)."""
        return bool(
            self.exclude_globs
            or self.exclude_dirs != DEFAULT_EXCLUDED_DIRECTORIES
            or self.exclude_files != DEFAULT_EXCLUDED_FILES
        )

    def size_decides(self, size: int, skipped: str | None) -> bool:
        """Whether a file of ``size`` bytes, chunked (``skipped`` ``None``) or
        skipped for ``skipped``, must be read again under these rules' size limit
        (a cached row made under another limit)."""
        over = size > self.max_file_size
        return over != (skipped is not None and SIZE_LIMIT_NOTE in skipped)

    def glob_excludes(self, rel_path: str) -> bool:
        """Whether a configured glob leaves out this root-relative path itself."""
        return self._glob is not None and self._glob.match(rel_path) is not None

    def check_excludes(self, rel_path: str) -> bool:
        """Whether ``check_exclude`` leaves out a file (it or a folder above it matches)."""
        if self._check_glob is None:
            return False
        parts = rel_path.strip("/").split("/")
        match = self._check_glob.match
        return any(match("/".join(parts[:end])) for end in range(1, len(parts) + 1))

    def folder_excluded(self, rel_dir: str) -> bool:
        """Whether a root-relative folder (or any folder above it) is left out."""
        parts = rel_dir.strip("/").split("/")
        if any(part in self.exclude_dirs for part in parts):
            return True
        return any(self.glob_excludes("/".join(parts[:end])) for end in range(1, len(parts) + 1))

    def in_corpus(self, rel_paths: Iterable[str]) -> list[bool]:
        """Whether each file is in the corpus, each folder above them judged once."""
        folders: dict[str, bool] = {}
        exclude_dirs, glob_excludes = self.exclude_dirs, self.glob_excludes

        def folder_out(rel_dir: str) -> bool:
            known = folders.get(rel_dir)
            if known is None:
                parent, above, part = rel_dir.rpartition("/")
                known = (
                    bool(above and folder_out(parent))
                    or part in exclude_dirs
                    or glob_excludes(rel_dir)
                )
                folders[rel_dir] = known
            return known

        found = []
        for rel_path in rel_paths:
            folder, above, name = rel_path.rpartition("/")
            found.append(
                not (
                    suffix_of(name) not in SUPPORTED_SUFFIXES
                    or name in self.exclude_files
                    or (above and folder_out(folder))
                    or glob_excludes(rel_path)
                )
            )
        return found

    def excluded_reason(self, rel_path: str) -> str | None:
        """Why a root-relative file path is not in the corpus, or ``None`` if it is."""
        parts = rel_path.split("/")
        name = parts[-1]
        if suffix_of(name) not in SUPPORTED_SUFFIXES:
            return f"{suffix_of(name) or 'no suffix'} files are not chunked"
        if name in self.exclude_files:
            return f"file name {name!r} is excluded"
        for part in parts[:-1]:
            if part in self.exclude_dirs:
                return f"folder {part!r} is excluded"
        for end in range(1, len(parts) + 1):
            if self.glob_excludes("/".join(parts[:end])):
                return f"{'/'.join(parts[:end])!r} matches an exclude pattern"
        return None


class ConfigProblem(NamedTuple):
    """Something wrong in a ``[tool.chunkls]`` table: reported, then ignored."""

    source: str
    message: str


def rules_from_mapping(
    base: CorpusRules, settings: Mapping[str, object], source: str
) -> tuple[CorpusRules, list[ConfigProblem]]:
    """Extend ``base`` with a ``[tool.chunkls]``-shaped mapping, collecting problems."""
    problems: list[ConfigProblem] = []
    lists: dict[str, list[str]] = {}
    for key in ("exclude-dirs", "exclude-files", "exclude", "check-exclude"):
        if key in settings:
            value = settings[key]
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                problems.append(ConfigProblem(source, f"{key} must be a list of strings"))
                continue
            if key in ("exclude", "check-exclude"):
                for problem in filter(None, map(glob_problem, value)):
                    problems.append(ConfigProblem(source, f"{key}: {problem}; left out"))
                value = [pattern for pattern in value if glob_problem(pattern) is None]
            lists[key] = value
    max_size = settings.get("max-file-size")
    if max_size is not None and (
        not isinstance(max_size, int) or isinstance(max_size, bool) or max_size <= 0
    ):
        problems.append(ConfigProblem(source, "max-file-size must be a positive integer"))
        max_size = None
    mode = settings.get("search-mode")
    if mode is not None and mode not in MODES:
        modes = ", ".join(MODES)
        problems.append(ConfigProblem(source, f"search-mode must be one of {modes}, not {mode!r}"))
        mode = None
    for key in settings:
        if key not in CONFIG_KEYS:
            problems.append(
                ConfigProblem(source, f"unknown key {key!r} (known: {', '.join(CONFIG_KEYS)})")
            )
    rules = base.extended(
        lists.get("exclude-dirs", ()),
        lists.get("exclude-files", ()),
        lists.get("exclude", ()),
        max_size if isinstance(max_size, int) else None,
        lists.get("check-exclude", ()),
        mode if isinstance(mode, str) else None,
    )
    return rules, problems


SIZE_LIMIT_NOTE = "(max-file-size)"
"""What the reason of a file skipped for its size says (the limit may change)."""
RULES_FILE = "pyproject.toml"
"""A root's file of corpus rules (its ``[tool.chunkls]`` table)."""


def load_rules(
    root: Path, base: CorpusRules | None = None
) -> tuple[CorpusRules, list[ConfigProblem]]:
    """``base`` (default: the tutorial's) plus ``root``'s ``[tool.chunkls]``; problems too."""
    base = base or CorpusRules()
    pyproject = root / RULES_FILE
    try:
        text = pyproject.read_text(encoding="utf-8")
    except FileNotFoundError:
        return base, []
    except (OSError, UnicodeDecodeError) as error:
        return base, [ConfigProblem(str(pyproject), f"cannot read it: {error}")]
    import tomllib  # only for a root that has the file (a standard library has none)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return base, [ConfigProblem(str(pyproject), f"cannot read it: {error}")]
    tool = data.get("tool", {})
    table = tool.get("chunkls") if isinstance(tool, dict) else None
    if table is None:
        return base, []
    if not isinstance(table, dict):
        return base, [ConfigProblem(str(pyproject), "[tool.chunkls] must be a table")]
    return rules_from_mapping(base, table, f"{pyproject} [tool.chunkls]")


class CorpusFile(NamedTuple):
    """A file the walk found that the corpus rules admit."""

    rel_path: str
    """Root-relative POSIX path of the directory entry (the corpus sort key)."""
    path: str
    """Absolute path of the entry."""
    is_symlink: bool


class SkippedFile(NamedTuple):
    """A corpus file that could not be chunked, with a one-line reason."""

    rel_path: str
    reason: str


class Walk(NamedTuple):
    """The result of walking a tree: corpus files in corpus order, plus problems."""

    files: list[CorpusFile]
    skipped: list[SkippedFile]


def walk_corpus(
    root: Path,
    rules: CorpusRules,
    under: str = "",
    stamps: list[tuple[str, int, int]] | None = None,
) -> Walk:
    """Every corpus file under ``root`` sorted by relative path, pruning excluded
    folders and not following directory symlinks (as ``Path.rglob("*")``);
    entries that are not regular files are reported. ``under``: one root-relative
    folder only. ``stamps`` receives (folder, mtime_ns, ctime_ns) of every folder,
    taken just before it is listed ("" the root; ``chunkls.storage.listing``), and
    is left empty when a folder could not be listed."""
    files: list[CorpusFile] = []
    skipped: list[SkippedFile] = []
    exclude_dirs = rules.exclude_dirs
    exclude_files = rules.exclude_files
    has_globs = bool(rules.exclude_globs)
    under = under.strip("/")
    if under and rules.folder_excluded(under):
        return Walk(files, skipped)
    start = os.path.join(os.fspath(root), under) if under else os.fspath(root)
    stack: list[tuple[str, str]] = [(start, under + "/" if under else "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            if stamps is not None:
                info = os.stat(directory)
                stamps.append((prefix[:-1], info.st_mtime_ns, info.st_ctime_ns))
            with os.scandir(directory) as entries:
                listing = list(entries)
        except OSError as error:
            if stamps is not None:
                stamps.clear()  # a folder that could not be listed: no listing to trust
                stamps = None
            if directory == start and isinstance(error, FileNotFoundError):
                reason = "the folder does not exist"  # not one that vanished mid-walk
            else:
                reason = _os_reason(error, "folder")
            skipped.append(SkippedFile(prefix.rstrip("/") or ".", reason))
            continue
        for entry in listing:
            name = entry.name
            rel = prefix + name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if name in exclude_dirs or (has_globs and rules.glob_excludes(rel)):
                    continue
                stack.append((entry.path, rel + "/"))
            if suffix_of(name) not in SUPPORTED_SUFFIXES or name in exclude_files:
                continue
            if has_globs and rules.glob_excludes(rel):
                continue
            if is_dir:
                skipped.append(SkippedFile(rel, "not a regular file (a directory)"))
                continue
            try:
                is_symlink = entry.is_symlink()
                if not is_symlink and not entry.is_file(follow_symlinks=False):
                    mode = entry.stat(follow_symlinks=False).st_mode
                    skipped.append(SkippedFile(rel, f"not a regular file ({_kind(mode)})"))
                    continue
            except OSError as error:
                skipped.append(SkippedFile(rel, _os_reason(error)))
                continue
            files.append(CorpusFile(rel, entry.path, is_symlink))
    files.sort()
    skipped.sort()
    return Walk(files, skipped)


def _os_reason(error: OSError, what: str = "file") -> str:
    if isinstance(error, PermissionError):
        return f"permission denied: the {what} is not readable"
    if isinstance(error, FileNotFoundError):
        return f"the {what} disappeared while indexing"
    return f"cannot read the {what}: {error.strerror or error}"


class FileSkipped(Exception):
    """Raised by ``read_corpus_file`` with a one-line reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SourceFile(NamedTuple):
    """The bytes of a corpus file and where its chunks say they come from."""

    source_path: str
    data: bytes
    mtime_ns: int
    size: int


def read_regular(path: str, max_file_size: int) -> tuple[bytes, os.stat_result]:
    """The bytes and status of a regular file, opened without blocking (a FIFO,
    socket, device or symlink loop is ``FileSkipped``, never waited on or read);
    ``FileNotFoundError`` when it is gone, any other failure ``FileSkipped``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise FileSkipped("symlink loop") from None
        raise FileSkipped(_os_reason(error)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileSkipped(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > max_file_size:
            raise FileSkipped(
                f"{info.st_size:,} bytes, over the {max_file_size:,}-byte limit {SIZE_LIMIT_NOTE}"
            )
        size = max(info.st_size + 1, 65536)
        data = b"".join(iter(lambda: os.read(fd, size), b""))
    except OSError as error:
        raise FileSkipped(_os_reason(error)) from None
    finally:
        os.close(fd)
    if len(data) > max_file_size:
        raise FileSkipped(f"grew over the {max_file_size:,}-byte limit while being read")
    return data, info


def read_corpus_file(
    root_resolved: Path, rel_path: str, path: str, is_symlink: bool, max_file_size: int
) -> SourceFile:
    """Read a corpus file, checking all that would make the tutorial crash, drop or escape."""
    source_path = rel_path
    if is_symlink:
        try:
            target = Path(path).resolve(strict=True)
        except FileNotFoundError:
            raise FileSkipped("broken symlink: its target does not exist") from None
        except RuntimeError:
            raise FileSkipped("symlink loop") from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise FileSkipped("symlink loop") from None
            raise FileSkipped(_os_reason(error)) from None
        try:
            source_path = target.relative_to(root_resolved).as_posix()
        except ValueError:
            raise FileSkipped(
                f"symlink to {target}, outside the workspace root: not indexed"
            ) from None
        try:
            mode = os.stat(target).st_mode
        except OSError as error:
            raise FileSkipped(_os_reason(error)) from None
        if not stat.S_ISREG(mode):
            raise FileSkipped(f"symlink to {_kind(mode)}, not a regular file")
    try:
        data, info = read_regular(path, max_file_size)
    except FileNotFoundError as error:
        if is_symlink:
            raise FileSkipped("broken symlink: its target does not exist") from None
        raise FileSkipped(_os_reason(error)) from None
    return SourceFile(source_path, data, info.st_mtime_ns, info.st_size)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
