"""IDs that point outside the workspace never produce a location or a preview there.

A secret file lies next to the workspace root, in a fake home directory and
behind symlinks inside the root; documents cite it every way a path can be
written (``..``, absolute, ``file://``, ``~``, NUL bytes, percent-encoding,
symlinks, Markdown links). Every location, link target, search result and
hover preview the server gives stays under the root, and the secret's text never
appears in an answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tests.hardening.rpc import RawServer, file_uri

SECRET = "TOPSECRET_MARKER"


def _inside(uri: str, root: Path) -> bool:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return False
    path = Path(unquote(parsed.path)).resolve()
    return path.is_relative_to(root.resolve())


def _layout(base: Path) -> tuple[Path, Path, str]:
    """A root, a fake home, and text citing the secret every way."""
    root = base / "ws"
    (root / "notes").mkdir(parents=True)
    (root / "app").mkdir()
    (root / "app" / "ok.py").write_text("def ok():\n    return 1\n", "utf-8")
    outside = base / "outside"
    outside.mkdir()
    secret_source = f"def secret():\n    return '{SECRET}'\n\n\n# {SECRET}\n"
    (outside / "secret.py").write_text(secret_source, "utf-8")
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", "utf-8")
    home = base / "home"
    home.mkdir()
    (home / "secret.py").write_text(secret_source, "utf-8")
    # symlinks inside the root that lead out of it
    (root / "link.py").symlink_to(outside / "secret.py")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    (root / "notes" / "up.md").symlink_to("../../outside/secret.md")
    absolute = (outside / "secret.py").resolve()
    cites = [
        "../outside/secret.py#function-secret",
        "../../outside/secret.py#function-secret",
        "ws/../outside/secret.py#function-secret",
        "app/../../outside/secret.py#function-secret",
        f"{absolute}#function-secret",
        f"{absolute.as_uri()}#function-secret",
        f"file://{absolute}#function-secret",
        "~/secret.py#function-secret",
        "~/../outside/secret.py#function-secret",
        "secret\x00.py#function-secret",
        "link.py\x00#function-secret",
        "../outside/secret.py\x00#function-secret",
        "..%2Foutside%2Fsecret.py#function-secret",
        "link.py#function-secret",
        "link.py#module-5",
        "linkdir/secret.py#function-secret",
        "linkdir/secret.md#heading-secret",
        "notes/up.md#heading-secret",
        "outside/secret.py#function-secret",
        "secret.py#function-secret",
        "[a](../outside/secret.py#function-secret)",
        "[b](../../outside/secret.py#function-secret)",
        "[c](/../outside/secret.py#function-secret)",
        "[d](../linkdir/secret.py#function-secret)",
        "`../outside/secret.py#function-secret`",
        "app/ok.py#function-ok",
    ]
    text = "# Citations\n\n" + "\n".join(f"- {cite} ." for cite in cites) + "\n"
    return root, home, text


def _positions(text: str) -> list[dict[str, int]]:
    """Positions across every line that cites something."""
    positions = []
    for number, line in enumerate(text.split("\n")):
        if "#" in line:
            columns = {3, 6, len(line) // 2, len(line) - 4, len(line) - 2}
            positions += [{"line": number, "character": c} for c in sorted(columns)]
    return positions


def _check_answers(server: RawServer, root: Path, uri: str, text: str) -> int:
    """Ask everything about every cite; returns how many locations were given."""
    given = 0
    for position in _positions(text):
        params = {"textDocument": {"uri": uri}, "position": position}
        locations = server.call("textDocument/definition", params) or []
        for location in locations:
            assert _inside(location["uri"], root), (position, location)
            given += 1
        hover = server.call("textDocument/hover", params)
        if hover is not None:
            assert SECRET not in str(hover), (position, hover)
    for link in server.call("textDocument/documentLink", {"textDocument": {"uri": uri}}):
        assert _inside(link["target"].split("#")[0], root), link
    return given


def _check_index(server: RawServer, root: Path) -> None:
    for query in ("secret", SECRET, "function-secret outside"):
        for symbol in server.call("workspace/symbol", {"query": query}):
            assert _inside(symbol["location"]["uri"], root), symbol
        for hit in server.command("chunkls.search", {"query": query, "topK": 50}):
            assert _inside(hit["uri"], root), hit
            assert SECRET not in hit["preview"]
    for chunk in server.command("chunkls.chunks"):
        assert (root / chunk["sourcePath"]).resolve().is_relative_to(root.resolve()), chunk


@pytest.mark.parametrize("language", ["markdown", "plaintext"])
def test_ids_pointing_outside_the_root_never_resolve_there(
    tmp_path: Path, start_server: Callable[..., RawServer], language: str
) -> None:
    root, home, text = _layout(tmp_path)
    server = start_server(env={"HOME": str(home)})
    server.initialize([root])
    server.wait_indexed()
    _check_index(server, root)
    given = 0
    for doc in (root / "notes" / "cites.md", root / "cites.txt"):
        doc.write_text(text, "utf-8")
        uri = server.open(doc, text, language)
        given += _check_answers(server, root, uri, text)
    # a document outside the root (opened in the editor) resolves through the
    # index only: still nothing outside
    outside_doc = tmp_path / "outside" / "cites.md"
    uri = server.open(outside_doc, text, language)
    given += _check_answers(server, root, uri, text)
    assert given > 0  # the one real citation (app/ok.py#function-ok) did resolve
    # the citing documents' own chunks, and the index, after they are saved
    server.notify(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": file_uri(root / "notes" / "cites.md"), "type": 1}]},
    )
    _check_index(server, root)
    assert server.shutdown() == 0


def test_single_file_mode_resolves_nothing_outside(
    tmp_path: Path, start_server: Callable[..., RawServer]
) -> None:
    root, home, text = _layout(tmp_path)
    server = start_server(env={"HOME": str(home)})
    server.initialize([])
    server.wait_indexed()
    uri = server.open(root / "notes" / "cites.md", text, "markdown")
    # no workspace folder: no root at all, so nothing but the document itself
    for position in _positions(text):
        params = {"textDocument": {"uri": uri}, "position": position}
        for location in server.call("textDocument/definition", params) or []:
            assert location["uri"] == uri, location
        hover = server.call("textDocument/hover", params)
        assert hover is None or SECRET not in str(hover)
    assert server.shutdown() == 0


def test_cli_resolve_never_reads_outside(tmp_path: Path) -> None:
    root, home, _ = _layout(tmp_path)
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for cite in (
        "../outside/secret.py#function-secret",
        f"{(tmp_path / 'outside' / 'secret.py').resolve()}#function-secret",
        "~/secret.py#function-secret",
        "link.py#function-secret",
        "linkdir/secret.py#function-secret",
    ):
        run = subprocess.run(
            [sys.executable, "-m", "chunkls", "resolve", cite, "--root", str(root)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert run.returncode == 1, (cite, run.stdout, run.stderr)
        assert SECRET not in run.stdout + run.stderr


@pytest.mark.parametrize(
    "uri",
    ["file:///proc/self/fd/0", "file:///dev/stdin", "file:///dev/zero", "file:///etc/hostname"],
)
def test_documents_never_opened_are_not_read_outside_the_roots(
    tmp_path: Path, start_server: Callable[..., RawServer], uri: str
) -> None:
    """A request on a never-opened file outside the roots answers at once, without
    reading it (reading /dev/stdin blocked the server on its own input stream)."""
    root, _, _ = _layout(tmp_path)
    server = start_server()
    server.initialize([root])
    server.wait_indexed()
    doc = {"textDocument": {"uri": uri}}
    at = {**doc, "position": {"line": 0, "character": 0}}
    assert server.call("textDocument/hover", at, timeout=10) is None
    assert server.call("textDocument/definition", at, timeout=10) is None
    assert server.call("textDocument/documentSymbol", doc, timeout=10) == []
    assert server.call("textDocument/codeLens", doc, timeout=10) == []
    assert server.call("textDocument/documentLink", doc, timeout=10) == []
    assert server.command("chunkls.stats")["folders"]
    assert server.shutdown() == 0


def test_nothing_is_read_through_a_folder_symlink_that_leaves_the_root(
    tmp_path: Path, start_server: Callable[..., RawServer]
) -> None:
    """``linkdir`` is a symlink inside the root to a folder outside it: requests on
    files under it, saves of them and disk events for them read nothing there."""
    root, home, _ = _layout(tmp_path.resolve())
    server = start_server(env={"HOME": str(home)})
    server.initialize([root])
    server.wait_indexed()
    for name in ("secret.py", "secret.md"):
        uri = (root / "linkdir" / name).as_uri()  # the path through the link, as an editor has it
        doc = {"textDocument": {"uri": uri}}
        assert server.call("textDocument/codeLens", doc) == []
        assert server.call("textDocument/documentSymbol", doc) == []
        server.notify("textDocument/didSave", doc)
        server.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": 2}]})
    server.notify(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": (root / "linkdir").as_uri(), "type": 1}]},
    )
    text = "# Notes\n\nlinkdir/secret.py#function-secret and linkdir/secret.md#heading-secret\n"
    uri = server.open(root / "notes" / "n.md", text, "markdown")
    for character in (3, 40):
        at = {"textDocument": {"uri": uri}, "position": {"line": 2, "character": character}}
        hover = server.call("textDocument/hover", at)
        assert hover is not None  # "unknown chunk ID", not the secret
        assert SECRET not in str(hover)
        assert not server.call("textDocument/definition", at)
    _check_index(server, root)
    assert server.shutdown() == 0


def test_citations_are_never_read_through_symlinks_that_leave_the_root(
    tmp_path: Path, start_server: Callable[..., RawServer]
) -> None:
    root, home, _ = _layout(tmp_path.resolve())
    outside = tmp_path.resolve() / "outside"
    (outside / "cites.txt").write_text(
        "cites app/ok.py#function-ok and app/ok.py#function-gone\n", "utf-8"
    )
    (root / "cites-link.txt").symlink_to(outside / "cites.txt")
    server = start_server(env={"HOME": str(home)})
    server.initialize([root])
    server.wait_indexed()
    ok = file_uri(root / "app" / "ok.py")
    params = {
        "textDocument": {"uri": ok},
        "position": {"line": 0, "character": 5},
        "context": {"includeDeclaration": False},
    }
    assert not server.call("textDocument/references", params)
    for uri in ((root / "cites-link.txt").as_uri(), (root / "linkdir" / "cites.txt").as_uri()):
        server.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": 1}]})
    assert not server.call("textDocument/references", params)
    assert server.shutdown() == 0
    # the CLI's check walks the same way: the outside file's unknown ID is not read
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-m", "chunkls", "check", "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert "function-gone" not in run.stdout + run.stderr, run.stdout
    assert "cites-link.txt" not in run.stdout, run.stdout
