"""Answering before the server has loaded (``chunkls.runtime.early_reader``): the answers
kept between starts and the digest of the code they belong to."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chunkls.runtime.early_reader import (
    KEPT_ANSWERS,
    EarlyReader,
    KeptAnswers,
    request_key,
)
from chunkls.runtime.fingerprint import code_fingerprint, tree_digest

ANSWER = {"capabilities": {"codeLensProvider": {}}, "serverInfo": {"name": "chunkls"}}


def test_request_key_is_the_kind_and_the_value() -> None:
    assert request_key("a", {"x": 1, "y": 2}) == request_key("a", {"y": 2, "x": 1})
    assert request_key("a", {"x": 1}) != request_key("b", {"x": 1})
    assert request_key("a", {"x": 1}) != request_key("a", {"x": 2})
    assert request_key("a", {"x": "é"}).startswith("a:")


def test_kept_answers_round_trip_and_belong_to_one_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "answers.json"
    kept = KeptAnswers(path, "code-1")
    assert kept.get("k") is None
    kept.put("k", ANSWER)
    assert kept.get("k") == ANSWER
    assert KeptAnswers(path, "code-2").get("k") is None  # the code changed
    assert KeptAnswers(path, "").get("k") is None  # the code is not known
    KeptAnswers(path, "").put("k", ANSWER)  # nor kept for it
    assert kept.get("k") == ANSWER


def test_kept_answers_keep_the_latest_few(tmp_path: Path) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    for n in range(KEPT_ANSWERS + 3):
        kept.put(f"k{n}", {"n": n})
    assert kept.get("k0") is None and kept.get("k2") is None
    assert kept.get("k3") == {"n": 3}
    kept.put("k3", {"n": 33})  # used again: the most recent
    kept.put("new", {"n": 99})
    assert kept.get("k3") == {"n": 33} and kept.get("k4") is None


@pytest.mark.parametrize(
    "content",
    [b"", b"{", b"[]", b'{"version": 1}', b'{"version": 1, "fingerprint": "code", "answers": 3}'],
)
def test_a_damaged_answers_file_is_ignored_then_replaced(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "answers.json"
    path.write_bytes(content)
    kept = KeptAnswers(path, "code")
    assert kept.get("k") is None
    kept.put("k", ANSWER)
    assert kept.get("k") == ANSWER


def test_an_answers_file_that_cannot_be_written_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    KeptAnswers(blocker / "answers.json", "code").put("k", ANSWER)
    assert "could not keep a server answer" in caplog.text
    assert not list(tmp_path.glob(".answers-*"))


def test_tree_digest_follows_every_module(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    module = tmp_path / "pkg" / "a.py"
    module.write_text("x = 1\n")
    first = tree_digest([tmp_path / "pkg"])
    (tmp_path / "pkg" / "__pycache__" / "a.py").write_text("")
    (tmp_path / "pkg" / "notes.txt").write_text("")
    assert tree_digest([tmp_path / "pkg"]) == first
    module.write_text("x = 22\n")
    assert tree_digest([tmp_path / "pkg"]) != first
    second = tree_digest([tmp_path / "pkg"])
    os.utime(module, ns=(1, 1))
    assert tree_digest([tmp_path / "pkg"]) != second
    assert tree_digest([tmp_path / "pkg"], "salt") != tree_digest([tmp_path / "pkg"])


def test_the_code_fingerprint_follows_the_packages(tmp_path: Path) -> None:
    (tmp_path / "own.py").write_text("")
    first = code_fingerprint(tmp_path, ("json",))
    assert len(first) == 64 and first == code_fingerprint(tmp_path, ("json",))
    assert code_fingerprint(tmp_path, ("json", "email")) != first
    assert code_fingerprint(tmp_path, ("no_such_package_here",)) == ""
    (tmp_path / "own.py").write_text("changed = True\n")
    assert code_fingerprint(tmp_path, ("json",)) != first


# -- the reader: waiting for it before the server is imported ------------------------


class LineProtocol:
    """A newline-delimited protocol that answers ``slow`` once ``release`` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def cut(self, buffer: bytearray) -> bytes | None:
        end = buffer.find(b"\n")
        if end < 0:
            return None
        line = bytes(buffer[:end])
        del buffer[: end + 1]
        return line

    def frame(self, message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    def first(self, message: dict[str, Any]) -> Any:
        return {"hello": True} if message.get("method") == "hello" else None

    def answer(self, message: dict[str, Any]) -> Any:
        if message.get("method") != "slow":
            return None
        self.started.set()
        assert self.release.wait(30)
        return {"slow": True}

    def finish(self) -> None:
        pass


def _line(method: str, message_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": message_id, "method": method}).encode() + b"\n"


@pytest.fixture
def pipes() -> Iterator[tuple[int, int, int, int]]:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    yield in_read, in_write, out_read, out_write
    for fd in (in_read, in_write, out_read, out_write):
        with contextlib.suppress(OSError):
            os.close(fd)


def _answering_slowly(pipes: tuple[int, int, int, int]) -> tuple[EarlyReader, LineProtocol]:
    """A reader that answered ``hello`` and is (or will be) answering ``slow``."""
    in_read, in_write, _, out_write = pipes
    protocol = LineProtocol()
    reader = EarlyReader(in_read, out_write, protocol)
    os.write(in_write, _line("hello", 1) + _line("slow", 2))
    reader.start()
    return reader, protocol


def test_wait_idle_waits_for_the_answers_under_way(pipes: tuple[int, int, int, int]) -> None:
    reader, protocol = _answering_slowly(pipes)
    out_read = pipes[2]
    waited = threading.Thread(target=reader.wait_idle, kwargs={"limit": 60})
    waited.start()
    assert protocol.started.wait(30)
    assert waited.is_alive()  # the reader is answering: not idle
    protocol.release.set()
    waited.join(30)
    assert not waited.is_alive()
    answers = os.read(out_read, 1 << 16).splitlines()
    assert [json.loads(line)["id"] for line in answers] == [1, 2]  # both sent before
    prelude = reader.hand_over()
    assert prelude.answered == ["hello", "slow"]


def test_wait_idle_gives_up_at_its_limit(pipes: tuple[int, int, int, int]) -> None:
    reader, protocol = _answering_slowly(pipes)
    out_read = pipes[2]
    assert protocol.started.wait(30)
    reader.wait_idle(limit=0.05)  # returns while the answer is still under way
    assert [json.loads(line)["id"] for line in os.read(out_read, 1 << 16).splitlines()] == [1]
    protocol.release.set()
    prelude = reader.hand_over()
    assert prelude.answered == ["hello", "slow"]


def test_wait_idle_returns_at_once_when_nothing_is_answered(
    pipes: tuple[int, int, int, int],
) -> None:
    in_read, in_write, _, out_write = pipes
    reader = EarlyReader(in_read, out_write, LineProtocol())
    os.write(in_write, _line("other", 1))  # not answered: nothing else will be
    reader.start()
    assert not reader.answering
    reader.wait_idle(limit=60)  # would hang for a minute if it waited
    assert [json.loads(body)["method"] for body in reader.hand_over().bodies] == ["other"]
