"""The language server's early answers (``chunkls.lsp.early``): the framing it
reads, the key of an initialize answer, the lenses from an open document's
text, and the reader answering while the server loads and handing every other
message over."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from chunkls.chunking.chunker import chunk_source
from chunkls.lsp import contract
from chunkls.lsp.early import (
    AnswerFilter,
    LensSource,
    LspEarly,
    answer_key,
    cut_message,
    early_lenses,
    frame,
    lens_source,
    lsp_fingerprint,
)
from chunkls.runtime.early_reader import EarlyReader, KeptAnswers, Prelude

FIXTURES = Path(__file__).parent.parent / "fixtures"
CAPABILITIES = {"textDocument": {"codeLens": {}}, "window": {"workDoneProgress": True}}
ANSWER = {"capabilities": {"codeLensProvider": {}}, "serverInfo": {"name": "chunkls"}}


def _body(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def _plain(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


# -- framing --------------------------------------------------------------------

ONE = _body({"jsonrpc": "2.0", "method": "a"})
TWO = _body({"jsonrpc": "2.0", "id": 1, "method": "b", "params": {"t": "é\r\n\r\n"}})


@pytest.mark.parametrize(
    ("data", "bodies", "left"),
    [
        (_plain(ONE), [ONE], b""),
        (_plain(ONE) + _plain(TWO), [ONE, TWO], b""),
        (_plain(ONE)[:-1], [], _plain(ONE)[:-1]),
        (b"Content-Len", [], b"Content-Len"),
        (b"content-length:%d\r\n\r\n%s" % (len(ONE), ONE), [ONE], b""),
        (frame({"jsonrpc": "2.0", "method": "a"}), [ONE], b""),
        (b"Content-Type: x\r\nContent-Length: %d\r\n\r\n%s" % (len(ONE), ONE), [ONE], b""),
    ],
)
def test_cut_message_takes_whole_messages_off_the_buffer(
    data: bytes, bodies: list[bytes], left: bytes
) -> None:
    buffer = bytearray(data)
    cut = []
    while (body := cut_message(buffer)) is not None:
        cut.append(body)
    assert cut == bodies
    assert bytes(buffer) == left


@pytest.mark.parametrize(
    "data",
    [b"Content-Type: x\r\n\r\n{}", b"X" * 5000, b"Content-Length: x\r\n\r\n{}"],
)
def test_cut_message_refuses_headers_it_does_not_read(data: bytes) -> None:
    with pytest.raises(ValueError):
        cut_message(bytearray(data))


# -- the kept initialize answers ------------------------------------------------


def test_answer_key_is_the_capabilities_and_the_options() -> None:
    base = {"processId": 1, "rootUri": "file:///a", "capabilities": CAPABILITIES}
    key = answer_key(base)
    assert key == answer_key({**base, "processId": 2, "rootUri": "file:///b", "trace": "off"})
    assert key != answer_key({**base, "capabilities": {}})
    assert key != answer_key({**base, "initializationOptions": {"codeLens": {"enabled": False}}})
    assert answer_key(None) == answer_key([]) == ""


def test_the_fingerprint_is_the_language_servers_code() -> None:
    assert len(lsp_fingerprint()) == 64
    assert lsp_fingerprint() == lsp_fingerprint()


def test_the_lens_command_and_the_framing_are_the_contracts() -> None:
    from chunkls.lsp import early, protocol
    from chunkls.lsp.lens_items import chunk_lenses

    [chunk] = chunk_source("def f():\n    pass\n", "a.py", "a.py")
    [lens] = chunk_lenses("a.py", None, [chunk], None)
    assert lens.command == contract.COPY_CHUNK_ID
    assert early.frame({"a": 1}) == contract.framed(b'{"a": 1}')
    assert protocol.framed is early.framed is contract.framed


# -- lenses from the text -------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    shutil.copytree(FIXTURES / "workspace", root)
    (root / "app" / "broken.py").write_text("def broken(:\n    pass\n")
    return root


def _source(root: Path, **extra: Any) -> LensSource:
    source = lens_source({"rootUri": root.as_uri(), "capabilities": {}, **extra})
    assert source is not None
    return source


def test_lenses_are_the_chunks_of_the_open_text(workspace: Path) -> None:
    source = _source(workspace)
    text = "def one():\n    return 1\n\n\nclass Two:\n    pass\n"
    lenses = early_lenses(source, (workspace / "app" / "new.py").as_uri(), text)
    chunks = chunk_source(text, "app/new.py", "new.py")
    assert [lens["command"]["title"] for lens in lenses or []] == [c.chunk_id for c in chunks]
    assert lenses == [
        {
            "range": {
                "start": {"line": c.start_line - 1, "character": 0},
                "end": {"line": c.start_line - 1, "character": 0},
            },
            "command": {
                "title": c.chunk_id,
                "command": "chunkls.copyChunkId",
                "arguments": [c.chunk_id],
            },
        }
        for c in chunks
    ]


def _titles(source: LensSource, path: Path, text: str | None = None) -> list[str] | None:
    lenses = early_lenses(source, path.as_uri(), path.read_text() if text is None else text)
    return None if lenses is None else [lens["command"]["title"] for lens in lenses]


def test_lenses_say_why_a_file_has_none(workspace: Path) -> None:
    source = _source(workspace)
    generated = next((workspace / "generated").rglob("*.py"))
    (excluded,) = _titles(source, generated) or [""]
    assert excluded.startswith("Not in the chunk corpus: ")
    assert (_titles(source, workspace / "app" / "broken.py") or [""])[0].startswith("Not chunked: ")
    assert _titles(source, workspace / "pyproject.toml") == []


def test_lenses_follow_the_settings(workspace: Path) -> None:
    off = _source(workspace, initializationOptions={"codeLens": {"enabled": False}})
    assert _titles(off, workspace / "app" / "greet.py") == []
    excluding = _source(workspace, initializationOptions={"exclude": ["app/**"]})
    titles = _titles(excluding, workspace / "app" / "greet.py") or [""]
    assert titles[0].startswith("Not in the chunk corpus: ")


def test_lenses_outside_every_folder_are_left_to_the_server(
    workspace: Path, tmp_path: Path
) -> None:
    source = _source(workspace)
    outside = tmp_path / "outside.py"
    outside.write_text("def f():\n    pass\n")
    assert early_lenses(source, outside.as_uri(), outside.read_text()) is None
    assert early_lenses(source, "untitled:Untitled-1", "def f(): pass\n") is None


def test_the_innermost_workspace_folder_names_the_chunks(workspace: Path) -> None:
    inner = workspace / "app"
    source = lens_source(
        {
            "workspaceFolders": [
                {"uri": workspace.as_uri(), "name": "w"},
                {"uri": inner.as_uri(), "name": "app"},
                {"uri": inner.as_uri(), "name": "again"},
            ],
            "capabilities": {},
        }
    )
    assert source is not None and len(source.session.folders) == 2
    assert _titles(source, inner / "greet.py") == [
        c.chunk_id for c in chunk_source((inner / "greet.py").read_text(), "greet.py", "greet.py")
    ]


@pytest.mark.parametrize(
    "params",
    [
        {"capabilities": {}},
        {"rootUri": None, "capabilities": {}},
        {"workspaceFolders": [], "capabilities": {}},
        {"workspaceFolders": [{"name": "no uri"}], "capabilities": {}},
        {"workspaceFolders": [{"uri": "https://example.com/", "name": "web"}]},
    ],
)
def test_no_plain_workspace_folder_leaves_lenses_to_the_server(params: dict[str, Any]) -> None:
    assert lens_source(params) is None


# -- the reader -----------------------------------------------------------------


def _initialize(message_id: Any = 1, root: Path | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"processId": 7, "capabilities": CAPABILITIES}
    if root is not None:
        params["rootUri"] = root.as_uri()
    return {"jsonrpc": "2.0", "id": message_id, "method": "initialize", "params": params}


def _open(path: Path, text: str | None = None) -> dict[str, Any]:
    item = {
        "uri": path.as_uri(),
        "languageId": "python",
        "version": 1,
        "text": path.read_text() if text is None else text,
    }
    return {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}


def _lens_request(message_id: Any, path: Path) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": message_id,
        "method": "textDocument/codeLens",
        "params": {"textDocument": {"uri": path.as_uri()}},
    }


def _unread(fd: int) -> int:
    """Bytes waiting in a pipe."""
    import fcntl
    import termios

    pending = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, pending)
    return int.from_bytes(pending, "little")


class Pipes:
    """A reader between two pipes, as ``chunkls serve`` has them."""

    def __init__(self, kept: KeptAnswers, **options: Any) -> None:
        self.in_read, self.in_write = os.pipe()
        self.out_read, self.out_write = os.pipe()
        self.kept = kept
        self.reader = EarlyReader(self.in_read, self.out_write, LspEarly(kept, **options))
        self.started = threading.Thread(target=self.reader.start)
        self.unanswered = 0
        """Bytes written to the output and not read, when handed over."""

    def send(self, *messages: dict[str, Any], raw: bytes = b"") -> None:
        os.write(self.in_write, b"".join(frame(m) for m in messages) + raw)

    def answers(self, count: int) -> list[dict[str, Any]]:
        buffer = bytearray()
        found: list[dict[str, Any]] = []
        deadline = time.monotonic() + 30
        while len(found) < count:
            assert time.monotonic() < deadline, f"{len(found)} of {count} answers"
            buffer += os.read(self.out_read, 1 << 16)
            while (body := cut_message(buffer)) is not None:
                found.append(json.loads(body))
        return found

    def settle(self) -> None:
        """Wait until the reader has read every byte written so far (it handles
        what it read before it sees ``hand_over``'s wake-up)."""
        deadline = time.monotonic() + 30
        while _unread(self.in_read):
            assert time.monotonic() < deadline
            time.sleep(0.01)

    def hand_over(self) -> Prelude:
        self.started.join(30)
        self.settle()
        self.unanswered = _unread(self.out_read)
        prelude = self.reader.hand_over()
        for fd in (self.in_read, self.in_write, self.out_read, self.out_write):
            os.close(fd)
        return prelude


@pytest.fixture
def kept(tmp_path: Path) -> KeptAnswers:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    kept.put(answer_key(_initialize()["params"]), ANSWER)
    return kept


def _bodies(prelude: Prelude) -> list[Any]:
    return [json.loads(body).get("method", json.loads(body).get("id")) for body in prelude.bodies]


def test_the_reader_answers_initialize_and_lenses_and_keeps_the_rest(
    kept: KeptAnswers, workspace: Path
) -> None:
    greet = workspace / "app" / "greet.py"
    pipes = Pipes(kept)
    pipes.send(_initialize(root=workspace))
    pipes.started.start()
    assert pipes.answers(1) == [{"id": 1, "jsonrpc": "2.0", "result": ANSWER}]
    hover = {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {}}
    pipes.send(
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        _open(greet),
        hover,
        _lens_request(4, greet),
        raw=b"Content-Length: 99\r\n\r\n{",
    )
    (lenses,) = pipes.answers(1)
    assert lenses["id"] == 4
    assert [lens["command"]["title"] for lens in lenses["result"]] == [
        c.chunk_id for c in chunk_source(greet.read_text(), "app/greet.py", "greet.py")
    ]
    prelude = pipes.hand_over()
    assert _bodies(prelude) == [
        "initialize",
        "initialized",
        "textDocument/didOpen",
        "textDocument/hover",
    ]
    assert prelude.rest == b"Content-Length: 99\r\n\r\n{"
    assert prelude.answered == ["initialize", "textDocument/codeLens"]
    assert prelude.first_answer == ANSWER


def test_without_a_kept_answer_everything_is_the_servers(tmp_path: Path, workspace: Path) -> None:
    pipes = Pipes(KeptAnswers(tmp_path / "none.json", "code"))
    greet = workspace / "app" / "greet.py"
    pipes.send(_initialize(root=workspace), _open(greet), _lens_request(2, greet))
    pipes.started.start()
    prelude = pipes.hand_over()
    assert _bodies(prelude) == ["initialize", "textDocument/didOpen", "textDocument/codeLens"]
    assert prelude.answered == [] and prelude.first_answer is None
    assert pipes.unanswered == 0  # nothing was written


@pytest.mark.parametrize(
    ("first", "body"),
    [
        (b"garbage\r\n\r\n", None),  # not framed as this reads: all is kept as bytes
        (
            frame({"jsonrpc": "2.0", "method": "initialized"}),
            b'{"jsonrpc": "2.0", "method": "initialized"}',
        ),
        (  # no id
            frame({"jsonrpc": "2.0", "method": "initialize", "params": {}}),
            b'{"jsonrpc": "2.0", "method": "initialize", "params": {}}',
        ),
        (b"Content-Length: 5\r\n\r\n[1,2]", b"[1,2]"),
    ],
)
def test_anything_but_an_initialize_request_first_is_left_to_the_server(
    kept: KeptAnswers, first: bytes, body: bytes | None, workspace: Path
) -> None:
    pipes = Pipes(kept)
    greet = workspace / "app" / "greet.py"
    later = [_open(greet), _lens_request(2, greet)]
    os.write(pipes.in_write, first)
    pipes.send(*later)
    pipes.started.start()
    prelude = pipes.hand_over()
    assert prelude.answered == [] and pipes.unanswered == 0  # nothing written
    if body is None:
        assert prelude.bodies == []
        assert prelude.rest == first + b"".join(frame(message) for message in later)
    else:
        assert prelude.bodies == [body, *(_body(message) for message in later)]
        assert prelude.rest == b""


def test_a_changed_or_closed_document_is_left_to_the_server(
    kept: KeptAnswers, workspace: Path
) -> None:
    greet = workspace / "app" / "greet.py"
    change = {
        "jsonrpc": "2.0",
        "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": greet.as_uri(), "version": 2}, "contentChanges": []},
    }
    pipes = Pipes(kept)
    pipes.send(_initialize(root=workspace), _open(greet), change, _lens_request(2, greet))
    pipes.started.start()
    pipes.answers(1)  # initialize
    prelude = pipes.hand_over()
    assert _bodies(prelude)[-1] == "textDocument/codeLens"
    assert prelude.answered == ["initialize"]


def test_a_lens_source_that_fails_leaves_lenses_to_the_server(
    kept: KeptAnswers, workspace: Path
) -> None:
    def broken(params: dict[str, Any]) -> LensSource | None:
        raise RuntimeError("unexpected")

    greet = workspace / "app" / "greet.py"
    pipes = Pipes(kept, lens_source=broken)
    pipes.send(_initialize(root=workspace), _open(greet), _lens_request(2, greet))
    pipes.started.start()
    assert pipes.answers(1)[0]["result"] == ANSWER
    prelude = pipes.hand_over()
    assert _bodies(prelude)[-1] == "textDocument/codeLens" and prelude.answered == ["initialize"]


def test_a_lens_that_fails_is_left_to_the_server(
    kept: KeptAnswers, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def odd(params: dict[str, Any]) -> LensSource | None:
        return LensSource(True, object())  # no session: finding the folder fails

    greet = workspace / "app" / "greet.py"
    pipes = Pipes(kept, lens_source=odd)
    pipes.send(_initialize(root=workspace), _open(greet), _lens_request(2, greet))
    pipes.started.start()
    pipes.answers(1)
    prelude = pipes.hand_over()
    assert _bodies(prelude)[-1] == "textDocument/codeLens" and prelude.answered == ["initialize"]
    assert "could not answer 'textDocument/codeLens' early" in caplog.text


def test_end_of_input_hands_over_what_was_read(kept: KeptAnswers, workspace: Path) -> None:
    pipes = Pipes(kept)
    pipes.send(_initialize(root=workspace), raw=b"Content-Length: 10\r\n\r\n{}")
    os.close(pipes.in_write)
    pipes.in_write = os.open(os.devnull, os.O_WRONLY)  # closed again by hand_over
    pipes.started.start()
    assert pipes.answers(1)[0]["id"] == 1
    # the reader sees the end on the read after the last bytes: wait for it, or
    # hand_over's wake-up may stop it first (then the server reads the end itself)
    deadline = time.monotonic() + 30
    while not pipes.reader.eof:
        assert time.monotonic() < deadline, "the reader never saw the end of its input"
        time.sleep(0.01)
    prelude = pipes.hand_over()
    assert prelude.rest == b"Content-Length: 10\r\n\r\n{}"


def test_an_answer_that_cannot_be_written_is_left_to_the_server(
    kept: KeptAnswers, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pipes = Pipes(kept)
    os.close(pipes.out_read)  # the client is gone: writing fails
    pipes.out_read, unused = os.pipe()
    os.close(unused)
    pipes.send(_initialize(root=workspace))
    pipes.started.start()
    prelude = pipes.hand_over()
    assert prelude.answered == [] and prelude.first_answer is None
    assert _bodies(prelude) == ["initialize"]
    assert "could not answer early" in caplog.text


# -- the server's answer to initialize ------------------------------------------


class Written:
    def __init__(self) -> None:
        self.data: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.data.append(data)


KEY = answer_key(_initialize()["params"])


def _prelude(first_answer: Any = None) -> Prelude:
    initialize = _initialize(message_id="init")
    return Prelude(
        bodies=[_body(initialize)],
        first_answer=first_answer,
        answered=["initialize"] if first_answer is not None else [],
    )


def test_the_server_answer_is_kept_when_none_was_sent(tmp_path: Path) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    out = Written()
    writer = AnswerFilter(out, _prelude(), kept)
    log = frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}})
    answer = frame({"id": "init", "jsonrpc": "2.0", "result": ANSWER})
    writer.write(log)
    writer.write(answer)
    writer.write(answer)  # only the first answer to that id is the initialize answer
    assert out.data == [log, answer, answer]
    assert kept.get(KEY) == ANSWER


def test_the_server_answer_is_dropped_when_one_was_sent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    out = Written()
    writer = AnswerFilter(out, _prelude(ANSWER), kept)
    writer.write(frame({"id": "init", "jsonrpc": "2.0", "result": ANSWER}))
    assert out.data == [] and "stale" not in caplog.text
    assert kept.get(KEY) is None  # the same: nothing to write


def test_a_stale_answer_is_reported_and_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    out = Written()
    writer = AnswerFilter(out, _prelude({"capabilities": {}}), kept)
    with caplog.at_level(logging.WARNING):
        writer.write(frame({"id": "init", "jsonrpc": "2.0", "result": ANSWER}))
    assert out.data == []
    assert "stale" in caplog.text
    assert kept.get(KEY) == ANSWER


def test_a_refusal_after_an_early_answer_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept = KeptAnswers(tmp_path / "answers.json", "code")
    writer = AnswerFilter(Written(), _prelude(ANSWER), kept)
    refusal = {"id": "init", "jsonrpc": "2.0", "error": {"code": -32602, "message": "bad"}}
    writer.write(frame(refusal))
    assert "refused a request answered early" in caplog.text
