"""``chunkls check --fix``: stale citations rewritten to their certain replacements, each
file atomically with every other byte, BOM, newline and mode kept; a file that changed
since it was read is left alone and named. ``--diff`` writes nothing."""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from typing import TYPE_CHECKING

from chunkls.ids.rewrite import Edit, apply, rewrite

if TYPE_CHECKING:
    from chunkls.cli.check import Document, Found
    from chunkls.cli.commands import Command


def fixable(item: Found) -> str | None:
    """The ID a stale citation is rewritten to: a certain replacement's, else none."""
    replacement = item.problem.replacement
    if replacement is None or not replacement.certain or replacement.chunk_id is None:
        return None
    return replacement.chunk_id


def fix(command: Command, found: list[Found], write: bool) -> set[int]:
    """Rewrite (or show) the certain replacements; the indexes of ``found`` rewritten."""
    by_document: dict[str, tuple[Document, list[tuple[int, Edit]]]] = {}
    for number, item in enumerate(found):
        new_id = fixable(item)
        if new_id is None:
            continue
        document = item.document
        old_id = item.problem.replacement.old_id or item.problem.chunk_id  # type: ignore[union-attr]
        edit = rewrite(document.text, item.problem.ref, old_id, new_id, document.language)
        by_document.setdefault(document.real, (document, []))[1].append((number, edit))
    fixed: set[int] = set()
    for document, edits in by_document.values():
        new_text = apply(document.text, [edit for _, edit in edits])
        if not write:
            command.out.writelines(
                difflib.unified_diff(
                    document.text.splitlines(keepends=True),
                    new_text.splitlines(keepends=True),
                    f"a/{document.shown}",
                    f"b/{document.shown}",
                )
            )
            fixed.update(number for number, _ in edits)
            continue
        problem = write_if_unchanged(document.real, document.text, new_text)
        if problem is not None:
            print(f"chunkls: left {document.shown} alone: {problem}", file=command.err)
            continue
        fixed.update(number for number, _ in edits)
    return fixed


class _Changed(Exception):
    """The file changed on disk between the check and the write."""


def write_if_unchanged(path: str, old_text: str, new_text: str) -> str | None:
    """Replace a file's text atomically when it still holds ``old_text``; why not, if not."""
    try:
        with open(path, "rb") as file:
            now = file.read()
        info = os.stat(path)
    except OSError as error:
        return f"cannot read it again: {error.strerror or error}"
    if now != old_text.encode("utf-8", "surrogatepass"):
        return "it changed on disk during the run"
    directory, name = os.path.split(path)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".chunkls", dir=directory)
    except OSError as error:
        return f"cannot write beside it: {error.strerror or error}"
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(new_text.encode("utf-8", "surrogatepass"))
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        with open(path, "rb") as file:  # the last look before the rename
            if file.read() != now:
                raise _Changed("it changed on disk during the run")
        os.replace(temporary, path)
    except (OSError, _Changed) as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return str(error) if isinstance(error, _Changed) else (error.strerror or str(error))
    return None
