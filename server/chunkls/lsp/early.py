"""Answers before the language server has loaded: ``initialize`` and the first
code lenses, while pygls and lsprotocol are still being imported.

A ``chunkls serve`` start spends about 0.7 s importing pygls, lsprotocol (1,000
attrs classes) and the features before it can read a message. An editor shows
nothing meanwhile. Here the process reads the ``initialize`` request first,
with nothing but the standard library loaded, and, when it has seen the same
request before, answers it at once with the answer the server gave then
(``KeptAnswers``). A thread (``EarlyReader``) then reads what follows while the
main thread imports the server: it answers ``textDocument/codeLens`` for a
document opened meanwhile, from its text, and keeps every other message, in
order, for the server. When the server is ready the thread stops
(``hand_over``); the server handles the kept messages (``Prelude``) as if they
had just arrived, the ``initialize`` request among them, whose answer is not
sent again (``AnswerFilter``), and reads stdin from there on.

Why the answers are the server's own:

- ``initialize``: the server's capabilities are a function of the client's
  capabilities, the initialization options (the key) and the server's code (the
  fingerprint: chunkls's version and the size and time of every module of
  ``chunkls.lsp``, of pygls and of lsprotocol). The first start with a given
  client, or after any change of the code, finds no answer: the server answers,
  and its answer is kept. Every later start compares the server's answer with
  the one sent early; a difference is logged and the new answer kept.
- code lenses: an open document's lenses are its chunks' IDs, from its text,
  its folder and the folder's corpus rules (``early_lenses``), the same
  functions the server's handler uses, before any index is loaded (so with no
  ``cited by`` lens: the server sends ``workspace/codeLens/refresh`` once it has
  loaded its index and scanned the citations, as it does on any start). Any
  document this does not cover (no workspace folder, a change after opening, a
  Python file the chunker gives up on) is left to the server.

Nothing here writes before the client asked: the early path answers two kinds of
request, and only when its answer is the server's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import select
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger("chunkls")

CONTENT_TYPE = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
"""The header pygls sends with every message (``chunkls.lsp.protocol``)."""
_CONTENT_LENGTH = re.compile(
    rb"^content-length:[ \t]*(\d+)[ \t]*\r?$", re.IGNORECASE | re.MULTILINE
)
HEADER_LIMIT = 4096
"""Longest header block read early (a longer one is left to the server)."""
READ_SIZE = 1 << 16
KEPT_ANSWERS = 8
"""Initialize answers kept (one per client capability set and options)."""
ANSWERS_VERSION = 1
COPY_CHUNK_ID = "chunkls.copyChunkId"
"""``chunkls.lsp.contract.COPY_CHUNK_ID`` (a test checks they agree)."""


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


# -- initialize: the server's answer, kept --------------------------------------


def code_fingerprint() -> str:
    """What the server's capabilities depend on besides the request: chunkls's
    version, the interpreter, and every module of ``chunkls.lsp``, pygls and
    lsprotocol (found without importing them); ``""`` if one is not found."""
    from importlib.util import find_spec

    from chunkls import __version__

    folders = [Path(__file__).parent]
    for name in ("pygls", "lsprotocol"):
        spec = find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            return ""
        folders.extend(Path(location) for location in spec.submodule_search_locations)
    return tree_digest(folders, f"{__version__}\0{sys.version}")


def tree_digest(folders: list[Path], salt: str = "") -> str:
    """A digest of the name, size and modification time of every ``.py`` file
    under ``folders`` (``__pycache__`` aside)."""
    digest = hashlib.sha256(salt.encode("utf-8", "surrogateescape"))
    for folder in folders:
        digest.update(os.fsencode(folder) + b"\0")
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    info = os.stat(path)
                    digest.update(
                        b"%s\0%d\0%d\0" % (os.fsencode(path), info.st_size, info.st_mtime_ns)
                    )
    return digest.hexdigest()


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
    text = json.dumps(wanted, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class KeptAnswers:
    """The server's initialize answers, in a JSON file of the cache directory."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        """The file (``lsp-initialize.json`` in the cache directory)."""
        self.fingerprint = fingerprint
        """The code the answers are valid for (``code_fingerprint``)."""

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        if (
            not isinstance(data, dict)
            or data.get("version") != ANSWERS_VERSION
            or data.get("fingerprint") != self.fingerprint
            or not isinstance(data.get("answers"), dict)
        ):
            return {}
        answers: dict[str, Any] = data["answers"]
        return answers

    def get(self, key: str) -> Any:
        """The answer kept for ``key``, or ``None``."""
        if not key or not self.fingerprint:
            return None
        answer = self._read().get(key)
        return answer if isinstance(answer, dict) else None

    def put(self, key: str, answer: Any) -> None:
        """Keep an answer (the least recent beyond ``KEPT_ANSWERS`` go); never raises."""
        if not key or not self.fingerprint or not isinstance(answer, dict):
            return
        answers = self._read()
        answers.pop(key, None)
        answers[key] = answer
        while len(answers) > KEPT_ANSWERS:
            answers.pop(next(iter(answers)))
        data = {"version": ANSWERS_VERSION, "fingerprint": self.fingerprint, "answers": answers}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".lsp-initialize-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(json.dumps(data).encode("ascii"))
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as error:
            logger.warning("could not keep the initialize answer in %s: %s", self.path, error)


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


# -- the early reader -----------------------------------------------------------


@dataclass
class Prelude:
    """What the server takes over: the messages read early that it must handle,
    in order, and the bytes read after them."""

    bodies: list[bytes] = field(default_factory=list)
    """Message bodies, in the order they came."""
    rest: bytes = b""
    """Bytes read after the last whole message (part of the next one)."""
    initialize_id: Any = None
    """The ``initialize`` request's id, if it was answered early."""
    initialize_key: str = ""
    """Its ``answer_key`` (to keep the server's answer)."""
    answered_early: Any = None
    """The initialize answer sent early, if one was."""
    answered: int = 0
    """How many requests were answered early."""


class EarlyReader:
    """Reads stdin until the server is ready, answering what it can (see the
    module's docstring); ``hand_over`` stops it and returns the rest."""

    def __init__(
        self,
        fd_in: int,
        fd_out: int,
        answers: KeptAnswers,
        lens_source: Callable[[dict[str, Any]], LensSource | None] = lens_source,
    ) -> None:
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.answers = answers
        self.make_lens_source = lens_source
        self.prelude = Prelude()
        self.buffer = bytearray()
        self.source: LensSource | None = None
        """Settings and folders for lenses (``None``: lenses are the server's)."""
        self.documents: dict[str, str] = {}
        """URI -> the text it was opened with (dropped on a change or close)."""
        self.framing_lost = False
        """Headers this does not read were met: the rest is only kept."""
        self.eof = False
        self.thread: threading.Thread | None = None
        self.wake_read, self.wake_write = os.pipe()

    # -- main thread ------------------------------------------------------------

    def start(self) -> None:
        """Read the ``initialize`` request (answer it if its answer is kept),
        then read on in a thread."""
        self._read_initialize()
        self.thread = threading.Thread(target=self._run, name="chunkls-early", daemon=True)
        self.thread.start()

    def hand_over(self) -> Prelude:
        """Stop reading; what the server must handle from here."""
        if self.thread is not None:
            os.write(self.wake_write, b"x")
            self.thread.join()
        os.close(self.wake_read)
        os.close(self.wake_write)
        self.prelude.rest = bytes(self.buffer)
        return self.prelude

    def _read_initialize(self) -> None:
        body = None
        while body is None and not self.eof and not self.framing_lost:
            if not self._read():
                return
            body = self._cut()
        if body is None:
            return
        self.prelude.bodies.append(body)
        message = _json(body)
        if message is None or message.get("method") != "initialize" or "id" not in message:
            return
        params = message.get("params")
        key = answer_key(params)
        self.prelude.initialize_key = key
        answer = self.answers.get(key)
        if answer is None or not isinstance(params, dict):
            return
        try:
            self.source = self.make_lens_source(params)
        except Exception:  # anything unexpected: the server computes the lenses
            logger.debug("no early code lenses", exc_info=True)
            self.source = None
        if self._send({"id": message["id"], "jsonrpc": "2.0", "result": answer}):
            self.prelude.initialize_id = message["id"]
            self.prelude.answered_early = answer
            self.prelude.answered += 1
        else:
            self.source = None

    # -- the thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                while not self.framing_lost:  # what was read with the request, first
                    body = self._cut()
                    if body is None:
                        break
                    self._take(body)
                if self.eof:
                    return
                ready, _, _ = select.select([self.fd_in, self.wake_read], [], [])
                if self.wake_read in ready:
                    return
                self._read()
        except Exception:  # never lose a message: what is read stays for the server
            logger.exception("early reader failed; the server reads on")
            self.framing_lost = True

    def _take(self, body: bytes) -> None:
        message = _json(body)
        answered = False
        if message is not None and self.prelude.answered_early is not None:
            try:
                answered = self._answer(message)
            except Exception:  # the server answers it
                logger.exception("could not answer %.100r early", message.get("method"))
        if not answered:
            self.prelude.bodies.append(body)

    def _answer(self, message: dict[str, Any]) -> bool:
        """Answer or note a message; whether it is answered (else it is kept)."""
        method = message.get("method")
        params = message.get("params")
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if not isinstance(uri, str):
            return False
        if method == "textDocument/didOpen":
            text = document.get("text") if isinstance(document, dict) else None
            if isinstance(text, str):
                self.documents[uri] = text
            return False
        if method in ("textDocument/didChange", "textDocument/didClose"):
            self.documents.pop(uri, None)
            return False
        if method != "textDocument/codeLens" or "id" not in message:
            return False
        text = self.documents.get(uri)
        if text is None or self.source is None:
            return False
        lenses = early_lenses(self.source, uri, text)
        if lenses is None:
            return False
        if not self._send({"id": message["id"], "jsonrpc": "2.0", "result": lenses}):
            return False
        self.prelude.answered += 1
        return True

    # -- input and output ---------------------------------------------------------

    def _read(self) -> bool:
        """Read what stdin has; ``False`` at its end."""
        try:
            data = os.read(self.fd_in, READ_SIZE)
        except OSError:
            data = b""
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True

    def _cut(self) -> bytes | None:
        if self.framing_lost:
            return None
        try:
            return cut_message(self.buffer)
        except ValueError:
            self.framing_lost = True
            return None

    def _send(self, message: dict[str, Any]) -> bool:
        """Write a response; ``False`` if it could not be written whole."""
        data = memoryview(frame(message))
        try:
            while data:
                data = data[os.write(self.fd_out, data) :]
        except OSError:
            logger.warning("could not answer early; the server answers")
            return False
        return True


def _json(body: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def early_summary(answered: int) -> str:
    """What the server logs when it takes over from the early reader."""
    lenses = answered - 1
    plural = "" if lenses == 1 else "s"
    return f"answered initialize and {lenses} code lens request{plural} while loading"


class AnswerFilter:
    """The server's writer while it handles the prelude: the answer to the
    ``initialize`` request, if one was sent early, is compared and dropped, and
    the server's answer is kept for the next start."""

    def __init__(self, writer: Any, prelude: Prelude, answers: KeptAnswers) -> None:
        self.writer = writer
        self.prelude = prelude
        self.answers = answers
        self.waiting = bool(prelude.initialize_key)

    def write(self, data: bytes) -> Any:
        if self.waiting:
            message = _json(data[data.find(b"\r\n\r\n") + 4 :])
            if message is not None and "method" not in message and "id" in message:
                first = self.prelude.bodies[0] if self.prelude.bodies else b""
                request = _json(first) or {}
                if message.get("id") == request.get("id"):
                    self.waiting = False
                    return self._initialize_answered(message, data)
        return self.writer.write(data)

    def _initialize_answered(self, message: dict[str, Any], data: bytes) -> Any:
        answer = message.get("result")
        sent = self.prelude.answered_early
        if sent is not None and not isinstance(answer, dict):
            logger.warning("the server refused an initialize request answered early: %.500s", data)
        if isinstance(answer, dict) and answer != sent:
            if sent is not None:
                logger.warning("the initialize answer kept from an earlier start was stale")
            self.answers.put(self.prelude.initialize_key, answer)
        if sent is not None:
            return None  # answered already
        return self.writer.write(data)

    def close(self) -> None:
        close = getattr(self.writer, "close", None)
        if close is not None:
            close()


ANSWERS_FILE = "lsp-initialize.json"
"""The kept initialize answers' file in the cache directory."""


def start_early(cache: Path) -> EarlyReader | None:
    """Start reading stdin early, if it is a pipe this can wait on (not on
    Windows, whose pipes ``select`` cannot watch); ``None`` otherwise."""
    if sys.platform == "win32":
        return None
    try:
        fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
        mode = os.fstat(fd_in).st_mode
    except (AttributeError, OSError, ValueError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    reader = EarlyReader(fd_in, fd_out, KeptAnswers(cache / ANSWERS_FILE, code_fingerprint()))
    reader.start()
    return reader
