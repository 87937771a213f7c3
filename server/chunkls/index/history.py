"""The text a chunk ID last named, read from the folder's git history: one ``git log --raw``
and one long-lived ``git cat-file --batch`` (not a ``git show`` per blob: ``bench/history.py``).

It never writes, and reads only git objects of files under the folder (no path that climbs
out, no old symlink); no git, no repository or a damaged ``.git``: it answers nothing.
``open`` is the session's write step; ``sighting``, a question's part, only talks to git.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path
from typing import NamedTuple

from chunkls.chunking.suffixes import file_type_for
from chunkls.runtime.log import logger

WALK_COMMITS = 5_000
"""Newest commits read (``git log -n``); a sighting that reached the bound says so (``bounded``)."""
PATH_VERSIONS = 200
"""Versions of one path chunked at most while looking for an ID."""
MAX_BLOB = 4 * 1024 * 1024
"""Larger old blobs are not read."""
GIT_TIMEOUT = 30.0
"""Seconds a ``git log`` may take before the history is given up (answers nothing)."""

_GIT = ("git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-C")
"""git, with nothing of the repository's configuration that would start another
program (``log --raw`` and ``cat-file`` run no diff driver, textconv or hook)."""
_SYMLINK = "120000"
_GITLINK = "160000"


class Sighting(NamedTuple):
    """Where and what a chunk ID last was."""

    chunk_id: str
    text: str
    commit: str | None
    """The newest commit whose version of the path had the chunk (``None``: the cache's)."""
    date: str | None
    """That commit's date, ``YYYY-MM-DD`` (UTC)."""
    bounded: bool = False
    """Whether the walk reached ``WALK_COMMITS``/``PATH_VERSIONS`` (older history unread)."""


class Version(NamedTuple):
    commit: str
    timestamp: int
    blob: str
    """The blob's object name; empty when the commit deleted the path."""
    mode: str


def safe_path(path: str) -> bool:
    """Whether an ID's path stays under its root (relative, no ``..``, no NUL)."""
    if not path or "\0" in path or "\\" in path or path.startswith("/") or ":" in path[:2]:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


class GitHistory:
    """One folder's git history (opened on first use; ``usable`` false without one)."""

    def __init__(self, root_resolved: Path) -> None:
        self.root = root_resolved
        self._lock = threading.RLock()
        self._opened = False
        self.usable = False
        self.note: str | None = None
        """Why the history is not used, or what limited it (logged once)."""
        self._versions: dict[str, list[Version]] = {}
        self.bounded = False
        """Whether the log was cut at ``WALK_COMMITS``."""
        self._batch: subprocess.Popen[bytes] | None = None
        self._chunked: dict[tuple[str, str], dict[str, str] | None] = {}
        """(blob, path) -> identity -> text (``None``: the blob does not chunk)."""

    # -- opening -------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether ``sighting`` can answer (``open`` was taken, and its process runs)."""
        return self._opened and (not self.usable or self._batch is not None)

    def open(self) -> bool:
        """Read the repository's log once and start ``cat-file`` (again, if it
        ended); whether there is a history to read. The session's write step."""
        with self._lock:
            if not self._opened:
                try:
                    self._read_log()
                    self.usable = True
                except (OSError, subprocess.SubprocessError, ValueError) as error:
                    self.note = f"no git history ({error})"  # (not a repository: nothing to say)
                else:
                    if self.bounded:
                        self.note = f"only the newest {WALK_COMMITS} commits are read"
                        logger().info("%s: git history: %s", self.root, self.note)
            if self.usable and self._batch is None:
                try:
                    self._batch = subprocess.Popen(
                        [*_GIT, os.fspath(self.root), "cat-file", "--batch"],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        env=_git_env(),
                    )
                except (OSError, subprocess.SubprocessError) as error:
                    self.usable = False
                    self.note = f"no git history ({error})"
            self._opened = True  # (last: another thread's question waits for ``ready``)
            return self.usable

    def _git(self, *args: str) -> bytes:
        done = subprocess.run(
            [*_GIT, os.fspath(self.root), *args],
            stdin=subprocess.PIPE,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=_git_env(),
            check=False,
        )
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ValueError(message[0] if message else f"git {args[0]} failed")
        return done.stdout

    def _read_log(self) -> None:
        lines = self._git("rev-parse", "--show-prefix")
        prefix = lines.decode("utf-8", "surrogateescape").strip("\n")
        log = self._git(
            "log",
            "-z",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            "--no-color",
            "--first-parent",
            f"-n{WALK_COMMITS}",
            "--format=%x01%H %ct",
            "--",
            ".",
        )
        commits = 0
        versions = self._versions
        for record in log.split(b"\x01")[1:]:
            commits += 1
            fields = record.split(b"\0")
            commit, _, stamp = fields[0].strip().decode("ascii").partition(" ")
            index = 1
            while index + 1 < len(fields):
                raw = fields[index].strip()
                if not raw.startswith(b":"):
                    index += 1
                    continue
                parts = raw[1:].decode("ascii").split()
                path = fields[index + 1].decode("utf-8", "surrogateescape")
                index += 2
                if len(parts) < 5 or not path.startswith(prefix):
                    continue
                mode, blob, status = parts[1], parts[3], parts[4]
                blob = "" if status.startswith("D") else blob
                versions.setdefault(path[len(prefix) :], []).append(
                    Version(commit, int(stamp or 0), blob, mode)
                )
        self.bounded = commits >= WALK_COMMITS

    # -- reading blobs -----------------------------------------------------------------

    def _blob(self, name: str) -> bytes | None:
        """An object's bytes through ``git cat-file --batch`` (restarted by the next ``open``)."""
        batch = self._batch
        if batch is None or batch.stdin is None or batch.stdout is None:
            return None
        try:
            batch.stdin.write(name.encode("ascii") + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                if not header:  # it ended
                    raise OSError("git cat-file ended")
                return None
            size = int(header[2])
            data = batch.stdout.read(size + 1)[:size]
        except (OSError, ValueError):
            self.close()
            return None
        return data if len(data) == size else None

    def close(self) -> None:
        """End the ``cat-file`` process (a new one starts on the next read)."""
        batch, self._batch = self._batch, None
        if batch is not None:
            for stream in (batch.stdin, batch.stdout, batch.stderr):
                if stream is not None:
                    stream.close()
            batch.kill()
            batch.wait()

    def _chunks(self, version: Version, path: str) -> dict[str, str] | None:
        key = (version.blob, path)
        if key in self._chunked:
            return self._chunked[key]
        found: dict[str, str] | None = None
        data = self._blob(version.blob)
        if data is not None and len(data) <= MAX_BLOB and b"\0" not in data:
            from chunkls.chunking.chunker import (
                ChunkingError,
                chunk_markdown_source,
                chunk_python_source,
                decode_source,
            )

            name = path.rsplit("/", 1)[-1]
            try:  # (not chunk_source: its memo of recent files is the editor's)
                text = decode_source(data)
                if file_type_for(name) == "code":
                    chunks = chunk_python_source(text, path, name)
                else:
                    chunks = chunk_markdown_source(text, path)
            except (ChunkingError, RecursionError, MemoryError):
                chunks = None  # not UTF-8, or did not parse then: older versions may
            if chunks is not None:
                found = {}
                for chunk in chunks:
                    found.setdefault(chunk.identity, chunk.text)
        if len(self._chunked) >= 4096:
            self._chunked.clear()
        self._chunked[key] = found
        return found

    # -- the question ------------------------------------------------------------------

    def sighting(self, chunk_id: str) -> Sighting | None:
        """The text an ID's chunk had in the newest commit whose version of its
        path had it (``None``: never seen, or no history)."""
        path, _, identity = chunk_id.partition("#")
        if not identity or not safe_path(path) or not _chunked_kind(path):
            return None
        with self._lock:
            if not self.usable:
                return None
            versions = self._versions.get(path, ())
            for number, version in enumerate(versions):
                if number >= PATH_VERSIONS:
                    return None
                if not version.blob or version.mode in (_SYMLINK, _GITLINK):
                    continue  # deleted then, or a link: never followed
                chunks = self._chunks(version, path)
                if chunks is not None and identity in chunks:
                    bounded = self.bounded or len(versions) > PATH_VERSIONS
                    return Sighting(
                        chunk_id,
                        chunks[identity],
                        version.commit,
                        time.strftime("%Y-%m-%d", time.gmtime(version.timestamp)),
                        bounded,
                    )
            return None


def _chunked_kind(path: str) -> bool:
    try:
        return file_type_for(path.rsplit("/", 1)[-1]) in ("code", "prose")
    except ValueError:
        return False


def _git_env() -> dict[str, str]:
    """The environment for git: no prompt, no pager, no repository from outside."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") or key in ("GIT_EXEC_PATH",)
    }
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    return env
