"""Answers before the language server has loaded: ``initialize`` gets the answer kept from
an earlier start (the loaded server's is kept, not resent: ``AnswerFilter``), and
``textDocument/codeLens`` is answered from the text (``early_lenses``); the rest waits.

Why (issue 46): ``chunkls serve`` spawn to first code lens, warm, 9 alternated runs (2-core
VM, load 6-10): 0.187 s median (p95 0.353) with these answers, 0.785 s (p95 1.632) without,
against a goal of 0.3 s.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunkls.lsp.contract import framed
from chunkls.runtime import early_reader
from chunkls.runtime.early_reader import (
    EarlyReader,
    KeptAnswers,
    Prelude,
    initialize_key,
    start_reader,
)
from chunkls.runtime.fingerprint import code_fingerprint

logger = logging.getLogger("chunkls")

_CONTENT_LENGTH = re.compile(
    rb"^content-length:[ \t]*(\d+)[ \t]*\r?$", re.IGNORECASE | re.MULTILINE
)
HEADER_LIMIT = 4096
"""Longest header block read early (a longer one is left to the server)."""
ANSWERS_FILE = "lsp-answers.json"
"""The kept initialize answers' file in the cache directory."""


def frame(message: dict[str, Any]) -> bytes:
    """A message framed as the server frames it."""
    return framed(json.dumps(message).encode("ascii"))


def cut_message(buffer: bytearray) -> bytes | None:
    """Take the first whole message's body off ``buffer`` (``None``: none yet);
    ``ValueError`` on headers left to the server's framing."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        if len(buffer) > HEADER_LIMIT:
            raise ValueError("no header block")
        return None
    headers = bytes(buffer[:end])
    match = _CONTENT_LENGTH.search(headers)
    if match is None or end > HEADER_LIMIT:
        raise ValueError("no Content-Length header")
    start = end + 4
    stop = start + int(match.group(1))
    if len(buffer) < stop:
        return None
    body = bytes(buffer[start:stop])
    del buffer[:stop]
    return body


def lsp_fingerprint() -> str:
    """The language server's code (``chunkls.runtime.fingerprint.code_fingerprint``)."""
    return code_fingerprint(Path(__file__).parent, ("pygls", "lsprotocol"))


def answer_key(params: Any) -> str:
    """An initialize answer's key: only capabilities and options change it."""
    return initialize_key(params, ("capabilities", "initializationOptions"))


# -- code lenses from an open document's text -----------------------------------


@dataclass
class LensSource:
    """The settings and folders as the server will have them after ``initialized``."""

    enabled: bool
    session: Any
    """A ``Session`` of the workspace folders with their rules, nothing indexed."""


def lens_source(params: dict[str, Any]) -> LensSource | None:
    """The settings and folders an ``initialize`` request gives (``None``: not plain)."""
    from chunkls.chunking.corpus import CorpusRules
    from chunkls.index.session import Session
    from chunkls.lsp.settings import parse_settings
    from chunkls.lsp.uris import folder_uris, path_of

    settings = parse_settings(params.get("initializationOptions"), [])
    given = params.get("workspaceFolders")
    if not isinstance(given, (list, type(None))):
        return None
    uris: list[Any] = [item.get("uri") if isinstance(item, dict) else None for item in given or ()]
    root_uri = params.get("rootUri")
    if not all(isinstance(uri, str) for uri in uris) or not isinstance(root_uri, (str, type(None))):
        return None
    session = Session(base_rules=CorpusRules().extended(exclude_globs=settings.exclude))
    for uri in folder_uris(uris, root_uri):  # as ``ChunkServer.add_folder`` takes them
        path = path_of(uri)
        if path is not None and not any(f.root == Path(path) for f in session.folders):
            session.add_root(Path(path))
    if not session.folders:
        return None
    return LensSource(settings.code_lens.enabled, session)


def early_lenses(source: LensSource, uri: str, text: str) -> list[dict[str, Any]] | None:
    """The document's lenses as JSON before the index is loaded (``None``: the server's)."""
    from chunkls.chunking.chunker import ChunkingError, chunk_source, normalize_newlines
    from chunkls.chunking.suffixes import file_type_for
    from chunkls.lsp.lens_items import chunk_lenses
    from chunkls.lsp.uris import path_of

    if not source.enabled:
        return []
    path = path_of(uri)
    found = source.session.queries.folder_of(path) if path is not None else None
    if found is None:
        return None
    folder, rel_path = found
    excluded = folder.rules.excluded_reason(rel_path)
    name = rel_path.rsplit("/", 1)[-1]
    chunks: list[Any] = []
    error = None
    if excluded is None and file_type_for(name) is not None:
        try:
            chunks = chunk_source(normalize_newlines(text), rel_path, name)
        except ChunkingError as problem:
            error = problem.reason
        except (RecursionError, MemoryError):
            return None
    return [lens.json() for lens in chunk_lenses(rel_path, excluded, chunks, error)]


class LspEarly:
    """What the language server answers early (an ``EarlyProtocol``)."""

    def __init__(
        self,
        answers: KeptAnswers,
        lens_source: Callable[[dict[str, Any]], LensSource | None] = lens_source,
    ) -> None:
        self.answers = answers
        self.make_lens_source = lens_source
        self.source: LensSource | None = None
        """Settings and folders for lenses (``None``: lenses are the server's)."""
        self.documents: dict[str, str] = {}
        """URI -> the text it was opened with (dropped on a change or close)."""

    cut = staticmethod(cut_message)
    frame = staticmethod(frame)

    def first(self, message: dict[str, Any]) -> Any:
        """The kept answer to an ``initialize`` request."""
        params = message.get("params")
        if message.get("method") != "initialize" or not isinstance(params, dict):
            return None
        answer = self.answers.get(answer_key(params))
        if answer is None:
            return None
        try:
            self.source = self.make_lens_source(params)
        except Exception:  # anything unexpected: the server computes the lenses
            logger.debug("no early code lenses", exc_info=True)
            self.source = None
        return answer

    def answer(self, message: dict[str, Any]) -> Any:
        """Code lenses of a document opened since; notes opens, changes, closes."""
        method = message.get("method")
        params = message.get("params")
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if not isinstance(uri, str) or not isinstance(document, dict):
            return None
        if method == "textDocument/didOpen":
            text = document.get("text")
            if isinstance(text, str):
                self.documents[uri] = text
            return None
        if method in ("textDocument/didChange", "textDocument/didClose"):
            self.documents.pop(uri, None)
            return None
        if method != "textDocument/codeLens" or "id" not in message:
            return None
        text = self.documents.get(uri)
        if text is None or self.source is None:
            return None
        return early_lenses(self.source, uri, text)

    def finish(self) -> None:
        """Nothing to let go of."""


def early_summary(prelude: Prelude) -> str:
    """What the server logs when it takes over from the early reader."""
    lenses = prelude.answered.count("textDocument/codeLens")
    plural = "" if lenses == 1 else "s"
    return f"answered initialize and {lenses} code lens request{plural} while loading"


class AnswerFilter(early_reader.AnswerFilter):
    """Keeps the server's ``initialize`` answer, dropped if one was sent early."""

    @staticmethod
    def key_of(message: dict[str, Any], first: bool) -> str | None:
        if first and message.get("method") == "initialize":
            return answer_key(message.get("params"))
        return None

    @staticmethod
    def body(data: bytes) -> bytes:
        return data[data.find(b"\r\n\r\n") + 4 :]

    def close(self) -> None:
        close = getattr(self.out, "close", None)
        if close is not None:
            close()


def start_early(cache: Path) -> EarlyReader | None:
    """Start reading stdin early, if it is a pipe this can wait on; ``None`` otherwise."""
    return start_reader(lambda: LspEarly(KeptAnswers(cache / ANSWERS_FILE, lsp_fingerprint())))


def take_over(reader: EarlyReader, writer: Any) -> tuple[Prelude, AnswerFilter]:
    """Stop the early reader: the prelude, and ``writer`` wrapped in an ``AnswerFilter``."""
    prelude = reader.hand_over()
    return prelude, AnswerFilter(writer, prelude, reader.protocol.answers)
