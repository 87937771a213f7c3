"""Answers before the language server has loaded: ``initialize`` and the first
code lenses, while pygls and lsprotocol are still being imported (the reader
and the kept answers: ``chunkls.runtime.early_reader``).

A ``chunkls serve`` start spends about 0.5 s importing pygls, lsprotocol (1,000
attrs classes) and the features before it can read a message, and an editor
shows nothing meanwhile. Here the ``initialize`` request is answered at once
when the server's answer to the same request was kept, and a thread reads on
while the main thread imports the server: it answers ``textDocument/codeLens``
for a document opened meanwhile, from its text, and keeps every other message,
in order, for the server. The server then handles the kept messages as if they
had just arrived, the ``initialize`` request among them, whose answer is not
sent again (``AnswerFilter``), and reads stdin from there on.

Why the answers are the server's own:

- ``initialize``: the server's capabilities are a function of the client's
  capabilities, the initialization options (the key) and the server's code (the
  fingerprint: chunkls's version and every module of ``chunkls.lsp``, pygls and
  lsprotocol). The first start with a given client, or after any change of the
  code, finds no answer: the server answers, and its answer is kept. Every later
  start compares the server's answer with the one sent early; a difference is
  logged and the new answer kept.
- code lenses: an open document's lenses are its chunks' IDs, from its text,
  its folder and the folder's corpus rules (``early_lenses``), the same
  functions the server's handler uses, before any index is loaded (so with no
  ``cited by`` lens: the server sends ``workspace/codeLens/refresh`` once it has
  loaded its index and scanned the citations, as it does on any start). Any
  document this does not cover (no workspace folder, a change after opening, a
  Python file the chunker gives up on) is left to the server.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunkls.runtime.early_reader import (
    EarlyReader,
    KeptAnswers,
    Prelude,
    code_fingerprint,
    parse,
    request_key,
    start_reader,
)

logger = logging.getLogger("chunkls")

CONTENT_TYPE = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
"""The header pygls sends with every message (``chunkls.lsp.protocol``)."""
_CONTENT_LENGTH = re.compile(
    rb"^content-length:[ \t]*(\d+)[ \t]*\r?$", re.IGNORECASE | re.MULTILINE
)
HEADER_LIMIT = 4096
"""Longest header block read early (a longer one is left to the server)."""
COPY_CHUNK_ID = "chunkls.copyChunkId"
"""``chunkls.lsp.contract.COPY_CHUNK_ID`` (a test checks they agree)."""
ANSWERS_FILE = "lsp-answers.json"
"""The kept initialize answers' file in the cache directory."""


def frame(message: dict[str, Any]) -> bytes:
    """A message framed as the server frames it."""
    body = json.dumps(message).encode("ascii")
    return b"Content-Length: %d\r\n%s\r\n%s" % (len(body), CONTENT_TYPE, body)


def cut_message(buffer: bytearray) -> bytes | None:
    """Take the first whole message's body off ``buffer``, or ``None`` if it
    holds none yet. Raises ``ValueError`` on headers this does not read (left
    to the server's framing, which reads every variant)."""
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
    """The language server's code (``chunkls.runtime.early_reader.code_fingerprint``)."""
    return code_fingerprint(Path(__file__).parent, ("pygls", "lsprotocol"))


def answer_key(params: Any) -> str:
    """What an initialize answer is kept under: the client's capabilities and
    the initialization options (the rest of the request, such as its folders,
    does not change the server's capabilities)."""
    if not isinstance(params, dict):
        return ""
    wanted = {
        "capabilities": params.get("capabilities"),
        "initializationOptions": params.get("initializationOptions"),
    }
    return request_key("initialize", wanted)


# -- code lenses from an open document's text -----------------------------------


@dataclass
class LensSource:
    """What the first code lenses are computed from: the settings and the
    workspace folders as the server will have them after ``initialized``."""

    enabled: bool
    """Whether code lenses are on (``chunkLs.codeLens.enabled``)."""
    folders: list[Any]
    """The workspace folders (``chunkls.index.folder.Folder``) with their rules."""


def lens_source(params: dict[str, Any]) -> LensSource | None:
    """The settings and folders an ``initialize`` request gives the server
    (``sync.initialized``), or ``None`` where that is not plain."""
    from chunkls.chunking import CorpusRules
    from chunkls.chunking.corpus import load_rules
    from chunkls.index.folder import Folder
    from chunkls.lsp.settings import parse_settings
    from chunkls.lsp.uris import path_of

    settings = parse_settings(params.get("initializationOptions"), [])
    folders_given = params.get("workspaceFolders")
    if isinstance(folders_given, list) and folders_given:
        uris = [item.get("uri") if isinstance(item, dict) else None for item in folders_given]
    elif folders_given is None and isinstance(params.get("rootUri"), str):
        uris = [params["rootUri"]]
    else:
        return None
    folders: list[Folder] = []
    for uri in dict.fromkeys(uris):  # pygls keys the folders by URI
        if not isinstance(uri, str):
            return None
        path = path_of(uri)
        if path is None:
            continue
        root = Path(path)
        if any(folder.root == root for folder in folders):
            continue
        rules, _ = load_rules(root, CorpusRules().extended(exclude_globs=settings.exclude))
        folders.append(Folder(root, rules, len(folders)))
    if not folders:
        return None
    return LensSource(settings.code_lens.enabled, folders)


def early_lenses(source: LensSource, uri: str, text: str) -> list[dict[str, Any]] | None:
    """The code lenses the server answers for an open document before its index
    is loaded (``lenses.text_document_code_lens``), as JSON; ``None``: leave it to
    the server."""
    from chunkls.chunking import chunk_source, normalize_newlines
    from chunkls.chunking.chunker import ChunkingError
    from chunkls.chunking.suffixes import file_type_for
    from chunkls.index.folder import innermost
    from chunkls.lsp.uris import path_of

    if not source.enabled:
        return []
    path = path_of(uri)
    found = innermost(source.folders, path) if path is not None else None
    if found is None:
        return None
    folder, rel_path = found
    name = rel_path.rsplit("/", 1)[-1]
    if file_type_for(name) is None:
        return []
    reason = folder.rules.excluded_reason(rel_path)
    if reason is not None:
        return [_lens(0, f"Not in the chunk corpus: {reason}", "")]
    try:
        chunks = chunk_source(normalize_newlines(text), rel_path, name)
    except ChunkingError as error:
        return [_lens(0, f"Not chunked: {error.reason}", "")]
    except (RecursionError, MemoryError):
        return None
    return [
        _lens(chunk.start_line - 1, chunk.chunk_id, COPY_CHUNK_ID, [chunk.chunk_id])
        for chunk in chunks
    ]


def _lens(
    line: int, title: str, command: str, arguments: list[Any] | None = None
) -> dict[str, Any]:
    position = {"line": line, "character": 0}
    lens: dict[str, Any] = {"title": title, "command": command}
    if arguments is not None:
        lens["arguments"] = arguments
    return {"range": {"start": position, "end": dict(position)}, "command": lens}


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


class AnswerFilter:
    """The server's writer while it handles the prelude: its answer to the
    ``initialize`` request is kept for the next start, and dropped if one was
    sent early (a different one is logged)."""

    def __init__(self, writer: Any, prelude: Prelude, answers: KeptAnswers) -> None:
        self.writer = writer
        self.prelude = prelude
        self.answers = answers
        request = parse(prelude.bodies[0]) if prelude.bodies else None
        self.waiting = request is not None and request.get("method") == "initialize"
        self.request = request or {}

    def write(self, data: bytes) -> Any:
        if self.waiting:
            message = parse(data[data.find(b"\r\n\r\n") + 4 :])
            if (
                message is not None
                and "method" not in message
                and "id" in message
                and message.get("id") == self.request.get("id")
            ):
                self.waiting = False
                return self._initialize_answered(message, data)
        return self.writer.write(data)

    def _initialize_answered(self, message: dict[str, Any], data: bytes) -> Any:
        answer = message.get("result")
        sent = self.prelude.first_answer
        if sent is not None and not isinstance(answer, dict):
            logger.warning("the server refused an initialize request answered early: %.500s", data)
        if isinstance(answer, dict) and answer != sent:
            if sent is not None:
                logger.warning("the initialize answer kept from an earlier start was stale")
            self.answers.put(answer_key(self.request.get("params")), answer)
        if sent is not None:
            return None  # answered already
        return self.writer.write(data)

    def close(self) -> None:
        close = getattr(self.writer, "close", None)
        if close is not None:
            close()


def start_early(cache: Path) -> EarlyReader | None:
    """Start reading stdin early, if it is a pipe this can wait on; ``None`` otherwise."""
    return start_reader(lambda: LspEarly(KeptAnswers(cache / ANSWERS_FILE, lsp_fingerprint())))


def take_over(reader: EarlyReader, writer: Any) -> tuple[Prelude, AnswerFilter]:
    """Stop the early reader: what the server must handle, and ``writer`` wrapped
    to keep (or drop) the server's answer to ``initialize``."""
    prelude = reader.hand_over()
    return prelude, AnswerFilter(writer, prelude, reader.protocol.answers)
