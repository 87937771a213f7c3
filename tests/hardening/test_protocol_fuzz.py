"""Protocol fuzzing: generated requests and notifications over raw stdio.

Every request gets exactly one response: a result, or an error object with a
defined code. Requests whose parameters are well-formed (right types and
ranges, known method) get a result, never an error (except ``-32800`` when they
were cancelled). After every batch the server answers a normal request; at the
end it shuts down cleanly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.hardening.conftest import copy_fixtures, scaled
from tests.hardening.rpc import MISSING, RawServer, file_uri, is_proper_error

EXAMPLES = scaled(250, 2500)
"""Hypothesis batches (each up to ``BATCH`` messages)."""
BATCH = 30

COUNTS: dict[str, int] = {"requests": 0, "notifications": 0, "garbage": 0, "batches": 0}
"""What was sent, reported at the end of the module."""


class Fuzz:
    """The module's server and what was sent to it."""

    def __init__(self, server: RawServer, root: Path) -> None:
        self.server = server
        self.root = root
        self.sent: list[int | str] = []
        """Every request id sent, in order."""
        self.well_formed: set[str] = set()
        """Keys of requests whose parameters were well-formed."""
        self.cancelled: set[str] = set()


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    base = tmp_path_factory.mktemp("fuzz")
    root = copy_fixtures(base)
    (base / "cache").mkdir()
    server = RawServer(base / "server.stderr", env={"XDG_CACHE_HOME": str(base / "cache")})
    try:
        server.initialize([root, base / "second"])
        server.wait_indexed()
        yield Fuzz(server, root)
        # every request id was answered exactly once, and nothing broke the framing
        for id in server.responses:
            assert len(server.responses[id]) == 1, (id, server.responses[id])
        assert not server.problems, server.problems
        assert server.shutdown() == 0
        print(
            f"\nprotocol fuzz: {COUNTS['batches']} batches, {COUNTS['requests']} requests, "
            f"{COUNTS['notifications']} notifications, {COUNTS['garbage']} garbage frames"
        )
    finally:
        server.close()


# -- strategies ----------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)

ODD_URIS = [
    "untitled:Untitled-1",
    "https://example.com/app/greet.py",
    "file:///tmp/../../etc/passwd",
    "file:///nowhere/never-opened.md",
    "file://host/share/x.py",
    "file:///C:/Windows/x.py",
    "file:///%E2%82%AC%20odd.md",
    "file:///a%00b.py",
    "file:///..%2F..%2Fetc%2Fpasswd",
    "vscode-notebook-cell:/x.ipynb#W0sZmlsZQ%3D%3D",
    "not a uri at all",
    "",
    "file:" + "a" * 1000,
    # never opened: reading these would block on the server's own stdin, or
    # never end
    "file:///proc/self/fd/0",
    "file:///dev/stdin",
    "file:///dev/zero",
    "file:///dev/urandom",
]

ID_TOKENS = [
    "app/greet.py#function-greet",
    "`app/greet.py#class-Greeter`",
    "[x](../app/greet.py#function-greet)",
    "#heading-setup",
    "README.md#heading-setup-2",
    "../../etc/passwd.py#module-1",
    "/etc/passwd.py#module-1",
    "~/x.py#module-1",
    "file:///etc/passwd.py#module-1",
    "lib/util.py#function-helper",
    "def f():\n    return 'app/greet.py#function-greet'\n",
    "class C:\n    pass\n",
    "# Title\n",
    "## Setup\n",
    "```\n",
    "\n",
    "\r\n",
    "\r",
    " ",
    "\x00",
    "\x0c",
    "\u2028",
    "😀",
    "é",
    "-",
    "#",
    "/",
    ".py",
]

texts = st.lists(st.sampled_from(ID_TOKENS) | st.text(max_size=6), max_size=25).map("".join)

positions = st.fixed_dictionaries(
    {
        "line": st.integers(0, 40) | st.integers(0, 2**31 - 1),
        "character": st.integers(0, 120) | st.integers(0, 2**31 - 1),
    }
)


def ranges(position: st.SearchStrategy[Any] = positions) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"start": position, "end": position})


WORKSPACE_FILES = [
    "app/greet.py",
    "docs/transcript.md",
    "notes/chat.txt",
    "README.md",
    "app/emoji.py",
    "app/formfeed.py",
    "generated/out.py",
    "never/opened.md",
    "new.py",
]


def uris(root: Path) -> st.SearchStrategy[str]:
    return st.sampled_from([file_uri(root / rel) for rel in WORKSPACE_FILES]) | st.sampled_from(
        ODD_URIS
    )


def valid_requests(root: Path) -> st.SearchStrategy[tuple[str, Any]]:
    """(method, params) with well-formed params."""
    doc = st.fixed_dictionaries({"uri": uris(root)})
    at = st.fixed_dictionaries({"textDocument": doc, "position": positions})
    return st.one_of(
        st.tuples(st.just("textDocument/hover"), at),
        st.tuples(st.just("textDocument/definition"), at),
        st.tuples(st.just("textDocument/codeLens"), st.fixed_dictionaries({"textDocument": doc})),
        st.tuples(
            st.just("textDocument/documentLink"), st.fixed_dictionaries({"textDocument": doc})
        ),
        st.tuples(
            st.just("textDocument/documentSymbol"), st.fixed_dictionaries({"textDocument": doc})
        ),
        st.tuples(st.just("workspace/symbol"), st.fixed_dictionaries({"query": texts})),
        st.tuples(
            st.just("workspace/executeCommand"),
            st.one_of(
                st.fixed_dictionaries(
                    {
                        "command": st.just("chunkls.search"),
                        "arguments": st.tuples(
                            st.fixed_dictionaries(
                                {"query": texts}, optional={"topK": st.integers(-5, 2**31 - 1)}
                            )
                        ).map(list),
                    }
                ),
                st.fixed_dictionaries(
                    {"command": st.sampled_from(["chunkls.stats", "chunkls.chunks"])}
                ),
                st.fixed_dictionaries(
                    {
                        "command": st.just("chunkls.chunkAt"),
                        "arguments": st.tuples(
                            st.fixed_dictionaries(
                                {"uri": uris(root), "line": st.integers(0, 2**31 - 1)}
                            )
                        ).map(list),
                    }
                ),
            ),
        ),
    )


def _mutate(params: Any, data: st.DataObject) -> Any:
    """Break well-formed params: wrong types, missing fields, negative numbers."""
    how = data.draw(st.sampled_from(["replace", "drop", "retype", "negative", "missing"]))
    if how == "replace":
        return data.draw(json_values)
    if how == "missing":
        return MISSING
    params = json.loads(json.dumps(params))
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                paths.append((node, key))
                walk(value)
        elif isinstance(node, list):
            for position, value in enumerate(node):
                paths.append((node, position))
                walk(value)

    walk(params)
    if not paths:
        return data.draw(json_values)
    parent, key = data.draw(st.sampled_from(paths))
    if how == "drop" and isinstance(parent, dict):
        del parent[key]
    elif how == "negative":
        parent[key] = data.draw(st.integers(-(2**40), -1))
    else:
        parent[key] = data.draw(json_values)
    return params


UNKNOWN_METHODS = [
    "textDocument/unknown",
    "chunkls/nothing",
    "$/nothing",
    "workspace/executeCommand/x",
    "",
    "textDocument/completion",
    "textDocument/references",
    "initialize",
]
"""Methods the server does not have, or must refuse now (``initialize`` twice)."""


def notifications(root: Path, data: st.DataObject) -> tuple[str, Any]:
    """(method, params) of a notification, well-formed or not."""
    doc_uri = data.draw(uris(root))
    kind = data.draw(
        st.sampled_from(
            [
                "open",
                "change",
                "change-full",
                "close",
                "save",
                "watched",
                "config",
                "folders",
                "trace",
                "unknown",
                "broken",
            ]
        )
    )
    language = data.draw(st.sampled_from(["python", "markdown", "plaintext", "rust", ""]))
    version = data.draw(st.integers(0, 2**31 - 1))
    if kind == "open":
        params: Any = {
            "textDocument": {
                "uri": doc_uri,
                "languageId": language,
                "version": version,
                "text": data.draw(texts),
            }
        }
        return "textDocument/didOpen", params
    if kind in ("change", "change-full"):
        change: dict[str, Any] = {"text": data.draw(texts)}
        if kind == "change":
            change["range"] = data.draw(ranges())
        params = {
            "textDocument": {"uri": doc_uri, "version": version},
            "contentChanges": [change],
        }
        return "textDocument/didChange", params
    if kind == "close":
        return "textDocument/didClose", {"textDocument": {"uri": doc_uri}}
    if kind == "save":
        return "textDocument/didSave", {"textDocument": {"uri": doc_uri}}
    if kind == "watched":
        changes = data.draw(
            st.lists(
                st.fixed_dictionaries({"uri": uris(root), "type": st.sampled_from([1, 2, 3])}),
                max_size=4,
            )
        )
        return "workspace/didChangeWatchedFiles", {"changes": changes}
    if kind == "config":
        settings_value = data.draw(
            json_values
            | st.fixed_dictionaries(
                {},
                optional={
                    "exclude": st.lists(st.sampled_from(["generated/**", "*.md", "[", "**"])),
                    "codeLens": st.fixed_dictionaries({"enabled": st.booleans() | json_values}),
                    "navigation": st.fixed_dictionaries(
                        {"languages": st.lists(st.sampled_from(["markdown", "plaintext"]))}
                    ),
                },
            )
        )
        return "workspace/didChangeConfiguration", {"settings": settings_value}
    if kind == "folders":
        missing = file_uri(root.parent / "missing-folder")
        folder = st.fixed_dictionaries(
            {"uri": st.sampled_from([missing, "untitled:x", ""]), "name": st.text(max_size=5)}
        )
        params = {
            "event": {
                "added": data.draw(st.lists(folder, max_size=2)),
                "removed": data.draw(st.lists(folder, max_size=2)),
            }
        }
        return "workspace/didChangeWorkspaceFolders", params
    if kind == "trace":
        return "$/setTrace", {"value": data.draw(st.sampled_from(["off", "messages", "bogus"]))}
    if kind == "unknown":
        return data.draw(st.sampled_from(["$/unknown", "chunkls/unknown", "x"])), data.draw(
            json_values
        )
    # a well-known notification with broken params
    method = data.draw(
        st.sampled_from(
            [
                "textDocument/didOpen",
                "textDocument/didChange",
                "textDocument/didClose",
                "textDocument/didSave",
                "workspace/didChangeWatchedFiles",
                "$/cancelRequest",
                "$/progress",
            ]
        )
    )
    return method, data.draw(json_values)


GARBAGE = [
    b"{",
    b"null",
    b"[]",
    b"42",
    b'"text"',
    b'{"jsonrpc": "2.0"}',
    b'{"jsonrpc": "2.0", "id": %(id)d}',
    b'{"jsonrpc": "2.0", "id": %(id)d, "result": null}',
    b'{"jsonrpc": "2.0", "method": 5}',
    b"\xff\xfe\x00",
    b'{"jsonrpc": "2.0", "method": "textDocument/hover", "params": NaN}',
]
"""Frames that are not requests (nothing to answer)."""

BAD_REQUESTS = [
    b'{"jsonrpc": "1.0", "id": %(id)d, "method": "textDocument/hover", "params": {}}',
    b'{"id": %(id)d, "method": "textDocument/hover"}',
    b'{"jsonrpc": "2.0", "id": %(id)d, "method": 5}',
    b'{"jsonrpc": "2.0", "id": %(id)d, "method": ["x"], "params": null}',
    b'{"jsonrpc": "2.0", "id": %(id)d, "method": "y", '
    b'"params": {"jsonrpc": "2.0", "id": %(id)d, "method": "x"}}',
    b'{"jsonrpc": "2.0", "id": %(id)d, "method": "textDocument/hover", '
    b'"params": {"jsonrpc": "2.0", "id": 1, "result": null}}',
]
"""Requests that cannot be read: each is answered with an error."""


def _send_frame(server: RawServer, body: bytes) -> None:
    header = b"Content-Length: %d\r\n" % len(body)
    if len(body) % 2:
        header += b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    server.write(header + b"\r\n" + body)


# -- the test ------------------------------------------------------------------------


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
    phases=[Phase.explicit, Phase.generate],
)
@given(data=st.data())
def test_fuzzed_batches_are_all_answered(fuzz: Fuzz, data: st.DataObject) -> None:
    server = fuzz.server
    size = data.draw(st.integers(1, BATCH), label="batch size")
    ids: list[tuple[int | str, bool]] = []
    for _ in range(size):
        kind = data.draw(
            st.sampled_from(
                ["valid"] * 5
                + ["malformed"] * 3
                + ["unknown", "notify", "notify", "notify"]
                + ["cancel", "garbage", "bad-request", "odd-id"]
            )
        )
        if kind == "valid" or kind == "malformed" or kind == "odd-id":
            method, params = data.draw(valid_requests(fuzz.root))
            well_formed = kind != "malformed"
            if kind == "malformed":
                params = _mutate(params, data)
            id: int | str = server.new_id()
            if kind == "odd-id":
                id = data.draw(
                    st.sampled_from([f"s-{id}", f"{id}", f"é-{id}"]) | st.just(2**53 + id)
                )
            server.request(method, params, id=id)
            ids.append((id, well_formed))
            COUNTS["requests"] += 1
        elif kind == "unknown":
            id = server.request(data.draw(st.sampled_from(UNKNOWN_METHODS)), data.draw(json_values))
            ids.append((id, False))
            COUNTS["requests"] += 1
        elif kind == "notify":
            method, params = notifications(fuzz.root, data)
            server.notify(method, params)
            COUNTS["notifications"] += 1
        elif kind == "cancel":
            # a slow request and its cancellation right behind it, or a stale id
            if data.draw(st.booleans()):
                id = server.request("workspace/symbol", {"query": "greet chunk python"})
                ids.append((id, True))
                fuzz.cancelled.add(json.dumps(id))
                COUNTS["requests"] += 1
            else:
                id = data.draw(st.sampled_from([*fuzz.sent[-5:], 10**9, "gone"]))
            server.notify("$/cancelRequest", {"id": id})
            COUNTS["notifications"] += 1
        elif kind == "bad-request":
            id = server.new_id()
            _send_frame(server, data.draw(st.sampled_from(BAD_REQUESTS)) % {b"id": id})
            ids.append((id, False))
            COUNTS["requests"] += 1
        else:
            _send_frame(server, data.draw(st.sampled_from(GARBAGE)) % {b"id": server.new_id()})
            COUNTS["garbage"] += 1
    # the server answers a normal request after the batch
    assert server.command("chunkls.stats")["folders"], server.stderr_tail()
    server.wait_all([id for id, _ in ids], timeout=10)
    for id, well_formed in ids:
        fuzz.sent.append(id)
        response = server.responses[json.dumps(id, sort_keys=True)][0]
        if "error" in response:
            assert is_proper_error(response["error"]), response
            if well_formed:
                assert response["error"]["code"] == -32800 and json.dumps(id) in fuzz.cancelled, (
                    f"well-formed request got an error: {response}{server.stderr_tail()}"
                )
    COUNTS["batches"] += 1


def _timed(server: RawServer, method: str, params: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = server.call(method, params, timeout=120)
    return time.perf_counter() - started, result


def _line_requests(server: RawServer, uri: str, text: str) -> float:
    """Seconds the position and document requests take on a one-line ``text``."""
    middle = {"line": 0, "character": len(text) // 2}
    end = {"line": 0, "character": len(text)}
    total = 0.0
    for method, params in [
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": middle}),
        ("textDocument/definition", {"textDocument": {"uri": uri}, "position": end}),
        ("textDocument/documentLink", {"textDocument": {"uri": uri}}),
        ("textDocument/codeLens", {"textDocument": {"uri": uri}}),
        ("textDocument/documentSymbol", {"textDocument": {"uri": uri}}),
    ]:
        elapsed, _ = _timed(server, method, params)
        total += elapsed
    return total


def test_megabyte_lines_and_huge_ids(fuzz: Fuzz) -> None:
    """1 MB lines without a newline and 100 KB IDs are answered, in a time that
    grows with the line's length, not with its square: the same requests on a
    line four times as long take well under sixteen times as long (timed in the
    same run, so a slow machine slows both)."""
    server, root = fuzz.server, fuzz.root
    size = 1 << 20
    near_unit = "app/greet.py#function-greet a.py#b x.md#heading-a- #heading-x `c.py#d` "

    def documents(size: int) -> dict[str, str]:
        return {
            "plain.md": ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size],
            "near.md": (near_unit * (size // len(near_unit) + 1))[:size],
            "near.txt": ("a/" * size)[:size],
            "near.py": "x = '" + ("a.py#b-" * size)[: size - 10] + "'",
        }

    timings: dict[str, tuple[float, float]] = {}
    quarter = documents(size // 4)
    for name, text in documents(size).items():
        short_uri = server.open(root / "short" / name, quarter[name])
        short = _line_requests(server, short_uri, quarter[name])
        server.notify("textDocument/didClose", {"textDocument": {"uri": short_uri}})
        uri = server.open(root / "big" / name, text)
        timings[name] = (_line_requests(server, uri, text), short)
        # an edit at the end of the megabyte line, then a hover there
        end = {"line": 0, "character": len(text)}
        server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [
                    {"range": {"start": end, "end": end}, "text": " app/greet.py#function-greet"}
                ],
            },
        )
        far = {"line": 0, "character": len(text) + 10}
        _timed(server, "textDocument/hover", {"textDocument": {"uri": uri}, "position": far})
        server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    for long, short in timings.values():
        assert long <= 8 * short + 1, timings
    # 100 KB chunk IDs, queries and request ids
    huge_id = "x/" * 50_000 + "y.py#function-" + "b" * 100_000
    uri = server.open(root / "big" / "huge.md", f"see {huge_id} and `{huge_id}`\n")
    for character in (0, 4, 60_000, 200_000, 10**9):
        position = {"line": 0, "character": character}
        doc = {"textDocument": {"uri": uri}, "position": position}
        assert server.call("textDocument/definition", doc) is None
        hover = server.call("textDocument/hover", doc)
        assert hover is None or len(hover["contents"]["value"]) < 10_000
    assert server.call("textDocument/documentLink", {"textDocument": {"uri": uri}}) == []
    assert isinstance(server.call("workspace/symbol", {"query": huge_id}), list)
    assert isinstance(server.command("chunkls.search", {"query": huge_id, "topK": 5}), list)
    long_id = "r" * 100_000
    response = server.wait(server.request("chunkls/unknown", {}, id=long_id))
    assert response["id"] == long_id and response["error"]["code"] == -32601
    fuzz.sent.append(long_id)
    assert server.command("chunkls.stats")["folders"]
    print(f"\nmegabyte lines, seconds for 5 requests: {timings}")
