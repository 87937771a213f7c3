"""``chunkls check``'s CI formats: GitHub Actions workflow commands and SARIF 2.1.0."""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import TYPE_CHECKING

from chunkls import __version__

if TYPE_CHECKING:
    from chunkls.cli.check import Found

RULE = "unknown-chunk-id"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: str) -> str:
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def github(path: str, line: int, column: int, message: str) -> str:
    """A workflow command: ``::error file=…,line=…,col=…::message``."""
    return (
        f"::error file={_property(path)},line={line},col={column},"
        f"title={_property('chunkls')}::{_data(message)}\n"
    )


def sarif(found: list[Found], fixed: Collection[int]) -> dict[str, object]:
    """A SARIF 2.1.0 log of the stale citations (``fixed`` ones: ``informational``)."""
    from chunkls.cli.fix import fixable
    from chunkls.ids.rewrite import rewrite

    results: list[dict[str, object]] = []
    for number, item in enumerate(found):
        document, problem = item.document, item.problem
        location = {
            "physicalLocation": {
                "artifactLocation": {"uri": document.shown.replace(os.sep, "/")},
                "region": {
                    "startLine": item.line,
                    "startColumn": item.column,
                    "endLine": item.end_line,
                    "endColumn": item.end_column,
                },
            }
        }
        result: dict[str, object] = {
            "ruleId": RULE,
            "level": "note" if number in fixed else "error",
            "message": {"text": problem.said()},
            "locations": [location],
        }
        if problem.replacement is not None:
            result["properties"] = {"replacement": problem.replacement.evidence()}
        new_id = fixable(item)
        if new_id is not None and number not in fixed:
            old_id = problem.replacement.old_id if problem.replacement else problem.chunk_id
            edit = rewrite(document.text, problem.ref, old_id, new_id, document.language)
            start_line, start_column = _position(document.text, edit.start)
            end_line, end_column = _position(document.text, edit.end)
            result["fixes"] = [
                {
                    "description": {"text": f"Replace with {new_id}"},
                    "artifactChanges": [
                        {
                            "artifactLocation": location["physicalLocation"]["artifactLocation"],
                            "replacements": [
                                {
                                    "deletedRegion": {
                                        "startLine": start_line,
                                        "startColumn": start_column,
                                        "endLine": end_line,
                                        "endColumn": end_column,
                                    },
                                    "insertedContent": {"text": edit.new_text},
                                }
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "chunkls",
                        "version": __version__,
                        "rules": [
                            {
                                "id": RULE,
                                "shortDescription": {"text": "A chunk ID that does not resolve"},
                                "fullDescription": {
                                    "text": "A chunk ID cited in a document names no chunk of"
                                    " the index; its replacement, when its history has one,"
                                    " is in the message and the fix."
                                },
                            }
                        ],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and character column of an offset."""
    from chunkls.ids.positions import TextLines

    line, column = TextLines(text, "utf-32").position(offset)
    return line + 1, column + 1
