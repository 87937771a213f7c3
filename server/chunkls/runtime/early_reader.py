"""Answering a client's first requests while its server is still loading, with only the
standard library: each front door's ``EarlyProtocol`` says what; every other message goes
to the server as it came (``Prelude``), and anything unexpected turns early answers off."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import select
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

logger = logging.getLogger("chunkls")

READ_SIZE = 1 << 16
QUIET = 0.02
"""Seconds the reader waits for input before it counts as idle (``wait_idle``)."""
WAIT_LIMIT = 1.0
"""Longest ``wait_idle`` waits for a reader that keeps answering."""
KEPT_ANSWERS = 16
"""Answers kept per file (the least recently kept go first)."""
ANSWERS_VERSION = 1


def write_whole(path: Path, data: bytes, prefix: str) -> None:
    """Write a file whole or not at all: aside, then renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def request_key(kind: str, value: Any) -> str:
    """The key of an answer: the request's kind and a digest of what it depends on."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=True)
    return f"{kind}:{hashlib.sha256(text.encode('ascii')).hexdigest()}"


def initialize_key(params: Any, fields: Sequence[str]) -> str:
    """What an ``initialize`` answer is kept under: the request's ``fields`` (else ``""``)."""
    if not isinstance(params, dict):
        return ""
    return request_key("initialize", {name: params.get(name) for name in fields})


class KeptAnswers:
    """A server's earlier answers, in a JSON file of the cache directory."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        """The code the answers are valid for (``code_fingerprint``)."""
        self._answers: dict[str, Any] | None = None

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
        if self._answers is None:
            self._answers = self._read()
        answer = self._answers.get(key)
        return answer if isinstance(answer, dict) else None

    def put(self, key: str, answer: Any) -> None:
        """Keep an answer (beyond ``KEPT_ANSWERS``, the oldest go); never raises."""
        if not key or not self.fingerprint or not isinstance(answer, dict):
            return
        answers = self._read()  # afresh: another start may have kept answers since
        answers.pop(key, None)
        answers[key] = answer
        while len(answers) > KEPT_ANSWERS:
            answers.pop(next(iter(answers)))
        self._answers = answers
        data = {"version": ANSWERS_VERSION, "fingerprint": self.fingerprint, "answers": answers}
        try:
            write_whole(self.path, json.dumps(data).encode("ascii"), ".answers-")
        except OSError as error:
            logger.warning("could not keep a server answer in %s: %s", self.path, error)


def settle(answers: KeptAnswers, key: str, message: dict[str, Any], sent: Any = None) -> bool:
    """Keep the server's answer under ``key`` and compare it with the one ``sent``
    early (a difference is logged); whether one was sent (then it is not resent)."""
    result = message.get("result")
    if sent is not None and not isinstance(result, dict):
        logger.warning("the server refused a request answered early: %.500r", message)
    elif sent is not None and result != sent:
        logger.warning("the answer kept from an earlier start was stale")
    if isinstance(result, dict) and result != sent:
        answers.put(key, result)
    return sent is not None


def parse(body: bytes | str) -> dict[str, Any] | None:
    """A message body as a JSON object, or ``None``."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _plain_id(value: Any) -> bool:
    """Whether a message id is one a dict can hold (a string or a number)."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


class AnswerFilter:
    """The server's output while it handles the prelude: answers ``key_of`` keys are kept
    for the next start; the first one dropped if one was sent early."""

    def __init__(self, out: Any, prelude: Prelude, answers: KeptAnswers) -> None:
        self.out = out
        self.prelude = prelude
        self.answers = answers
        self.keys: dict[Any, str] = {}
        """Request id -> the key its answer is kept under."""
        self.first_id: Any = None
        for number, body in enumerate(prelude.bodies):
            message = parse(body)
            if message is None or not _plain_id(message.get("id")):
                continue
            key = self.key_of(message, number == 0)
            if key is not None:
                self.keys[message["id"]] = key
                if number == 0:
                    self.first_id = message["id"]

    @staticmethod
    def key_of(message: dict[str, Any], first: bool) -> str | None:
        """The key the answer to a prelude request is kept under (``None``: not kept)."""
        raise NotImplementedError

    @staticmethod
    def body(data: Any) -> bytes | str:
        """The body of a message the server writes."""
        return data  # type: ignore[no-any-return]

    def write(self, data: Any) -> Any:
        if self.keys and self._answered_early(self.body(data)):
            return len(data)
        return self.out.write(data)

    def _answered_early(self, body: bytes | str) -> bool:
        message = parse(body)
        if message is None or "method" in message or not _plain_id(message.get("id")):
            return False
        key = self.keys.pop(message["id"], None)
        if key is None:
            return False
        early = message["id"] == self.first_id
        return settle(self.answers, key, message, self.prelude.first_answer if early else None)


class EarlyProtocol(Protocol):
    """What a front door answers early, and how its messages are framed."""

    answers: KeptAnswers
    """The server's answers kept from earlier starts."""

    def cut(self, buffer: bytearray) -> bytes | None:
        """Take the first whole message's body off ``buffer`` (``None``: none yet)."""

    def frame(self, message: dict[str, Any]) -> bytes:
        """A message framed as the server frames it."""

    def first(self, message: dict[str, Any]) -> Any:
        """The result to answer the first message with (``None``: no early answers)."""

    def answer(self, message: dict[str, Any]) -> Any:
        """The result to answer a later message with (``None``: the server's)."""

    def finish(self) -> None:
        """The reader stops (called in its thread, which alone answered)."""


@dataclass
class Prelude:
    """The messages read early that the server must handle, and the bytes after."""

    bodies: list[bytes] = field(default_factory=list)
    """Message bodies, in the order they came."""
    rest: bytes = b""
    """Bytes read after the last whole message (part of the next one)."""
    first_answer: Any = None
    """The result sent early to the first message (its body is ``bodies[0]``)."""
    answered: list[str] = field(default_factory=list)
    """The methods of the requests answered early, in order."""


class EarlyReader:
    """Reads stdin until the server is ready, answering what ``protocol`` can;
    ``hand_over`` stops it and returns the rest."""

    def __init__(self, fd_in: int, fd_out: int, protocol: EarlyProtocol) -> None:
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.protocol = protocol
        self.prelude = Prelude()
        self.buffer = bytearray()
        self.answering = False
        """Whether later requests may be answered (the first one was)."""
        self.framing_lost = False
        """Framing this does not read was met: the rest is only kept."""
        self.eof = False
        self.idle_since: float | None = None
        """When the reader began waiting for input with nothing left to handle."""
        self.thread: threading.Thread | None = None
        self.wake_read, self.wake_write = os.pipe()

    # -- the main thread ----------------------------------------------------------

    def start(self) -> None:
        """Read the first message (answer it if the protocol can), then read on in a thread."""
        self._read_first()
        self.thread = threading.Thread(target=self._run, name="chunkls-early", daemon=True)
        self.thread.start()

    def wait_idle(self, quiet: float = QUIET, limit: float = WAIT_LIMIT) -> None:
        """Let the reader answer what came right after the first message before the
        server import competes with it for the interpreter: return once it waited
        ``quiet`` seconds for input, after ``limit`` at most, at once if not answering."""
        deadline = time.monotonic() + limit
        while self.answering and not self.eof and time.monotonic() < deadline:
            since = self.idle_since
            if since is not None and time.monotonic() - since >= quiet:
                return
            time.sleep(quiet / 4)

    def hand_over(self) -> Prelude:
        """Stop reading; what the server must handle from here."""
        if self.thread is not None:
            os.write(self.wake_write, b"x")
            self.thread.join()
        os.close(self.wake_read)
        os.close(self.wake_write)
        self.prelude.rest = bytes(self.buffer)
        return self.prelude

    def _read_first(self) -> None:
        body = None
        while body is None and not self.eof and not self.framing_lost:
            if not self._read():
                return
            body = self._cut()
        if body is None:
            return
        self.prelude.bodies.append(body)
        message = parse(body)
        if message is None or "id" not in message or not isinstance(message.get("method"), str):
            return
        try:
            result = self.protocol.first(message)
        except Exception:  # the server answers
            logger.exception("could not answer %.100r early", message["method"])
            return
        if result is not None and self._send(message["id"], result):
            self.prelude.first_answer = result
            self.prelude.answered.append(message["method"])
            self.answering = True

    # -- the thread -----------------------------------------------------------------

    def _run(self) -> None:
        try:
            waiting = select.poll()  # (not select(): its descriptors end at 1,023)
            waiting.register(self.fd_in, select.POLLIN)
            waiting.register(self.wake_read, select.POLLIN)
            while True:
                while not self.framing_lost:  # what came with the first message, first
                    body = self._cut()
                    if body is None:
                        break
                    self._take(body)
                if self.eof:
                    return
                self.idle_since = time.monotonic()
                ready = {fd for fd, _ in waiting.poll()}
                self.idle_since = None
                if self.wake_read in ready:
                    return
                self._read()
        except Exception:  # never lose a message: what is read stays for the server
            logger.exception("early reader failed; the server reads on")
            self.framing_lost = True
        finally:
            try:
                self.protocol.finish()
            except Exception:
                logger.exception("early reader: could not finish")

    def _take(self, body: bytes) -> None:
        message = parse(body) if self.answering else None
        if message is not None:
            method = message.get("method")
            try:
                result = self.protocol.answer(message)
            except Exception:  # the server answers it
                logger.exception("could not answer %.100r early", method)
                result = None
            if result is not None and "id" in message and self._send(message["id"], result):
                self.prelude.answered.append(str(method))
                return
        self.prelude.bodies.append(body)

    # -- input and output -----------------------------------------------------------

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
            return self.protocol.cut(self.buffer)
        except ValueError:
            self.framing_lost = True
            return None

    def _send(self, message_id: Any, result: Any) -> bool:
        """Write a response; ``False`` (and no more early answers) if not written whole."""
        data = memoryview(
            self.protocol.frame({"jsonrpc": "2.0", "id": message_id, "result": result})
        )
        try:
            while data:
                data = data[os.write(self.fd_out, data) :]
        except OSError:
            logger.warning("could not answer early; the server answers")
            self.answering = False
            return False
        return True


def start_reader(protocol: Callable[[], EarlyProtocol]) -> EarlyReader | None:
    """An early reader on stdin, started, if stdin is a pipe or socket (not on Windows)."""
    if sys.platform == "win32":
        return None
    try:
        fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
        mode = os.fstat(fd_in).st_mode
    except (AttributeError, OSError, ValueError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    reader = EarlyReader(fd_in, fd_out, protocol())
    reader.start()
    return reader
