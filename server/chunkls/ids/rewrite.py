"""A written chunk ID rewritten to another, in the form it was written: only the identity
when the path stays, else the whole ID, written to read back as the new one where it stands
(percent-encoded in a link target, escaped in JSON as the old one was)."""

from __future__ import annotations

from typing import NamedTuple

from chunkls.ids.grammar import ChunkRef, written_as
from chunkls.ids.json_strings import escape


class Edit(NamedTuple):
    """Replace ``text[start:end]`` with ``new_text``."""

    start: int
    end: int
    new_text: str


def rewrite(text: str, ref: ChunkRef, old_id: str, new_id: str, language: str) -> Edit:
    """The edit that makes ``ref`` name ``new_id``, keeping every character it need not."""
    from chunkls.ids.json_strings import JSON_LANGUAGES

    old_path, _, old_identity = old_id.partition("#")
    new_path, _, new_identity = new_id.partition("#")
    written = text[ref.start : ref.end]
    if old_path == new_path and written.endswith(old_identity):
        return Edit(ref.end - len(old_identity), ref.end, new_identity)
    if language in JSON_LANGUAGES:
        new_text = escape(new_id)
        if "\\/" in written:
            new_text = new_text.replace("/", "\\/")
        return Edit(ref.start, ref.end, new_text)
    if language == "python":
        return Edit(ref.start, ref.end, new_id)
    angle = ref.start > 0 and text[ref.start - 1] == "<"
    return Edit(ref.start, ref.end, written_as(new_id, ref.form, angle))


def apply(text: str, edits: list[Edit]) -> str:
    """``text`` with non-overlapping edits applied."""
    parts: list[str] = []
    at = 0
    for edit in sorted(edits):
        if edit.start < at:
            continue  # overlapping: the first one wins
        parts += [text[at : edit.start], edit.new_text]
        at = edit.end
    parts.append(text[at:])
    return "".join(parts)
