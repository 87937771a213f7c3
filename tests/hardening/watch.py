"""Playing the editor's file watcher: the events it sends for disk changes.

A test changes files, then reports the changes as an editor would: filtered by
the watchers the server registered (glob and kinds), with a single event for a
deleted or renamed folder (its files are not reported one by one).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from tests.hardening.rpc import RawServer, file_uri

CREATED, CHANGED, DELETED = 1, 2, 3
_KIND_BIT = {CREATED: 1, CHANGED: 2, DELETED: 4}


class Change(NamedTuple):
    """A change on disk, root-relative."""

    rel_path: str
    type: int


@lru_cache(maxsize=64)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob (``**``, ``*``, ``?``, ``{a,b}``) as a regex on POSIX paths."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "{":
            end = pattern.index("}", i)
            out.append(
                "(?:" + "|".join(re.escape(p) for p in pattern[i + 1 : end].split(",")) + ")"
            )
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def registered_watchers(server: RawServer) -> list[tuple[str, int]] | None:
    """(glob, kind bits) of the server's file watcher registration, if any."""
    for request in server.server_requests:
        if request["method"] != "client/registerCapability":
            continue
        for registration in request["params"]["registrations"]:
            if registration["method"] == "workspace/didChangeWatchedFiles":
                watchers = registration["registerOptions"]["watchers"]
                return [(w["globPattern"], w.get("kind", 7)) for w in watchers]
    return None


def send_changes(server: RawServer, root: Path, changes: list[Change]) -> int:
    """Send the events the registered watchers let through; returns how many."""
    watchers = registered_watchers(server)
    events: list[dict[str, Any]] = []
    for change in changes:
        if watchers is not None and not any(
            isinstance(glob, str)
            and glob_regex(glob).match(change.rel_path)
            and kinds & _KIND_BIT[change.type]
            for glob, kinds in watchers
        ):
            continue
        events.append({"uri": file_uri(root / change.rel_path), "type": change.type})
    if events:
        server.notify("workspace/didChangeWatchedFiles", {"changes": events})
    return len(events)
