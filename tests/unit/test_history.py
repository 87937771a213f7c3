"""History-aware resolution (issue 45): a stale chunk ID's last text, from git or
the cache, matched against today's chunks (moved, renamed, changed, deleted);
every bad input answered cleanly."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from chunkls.cli import main as cli
from chunkls.index import history as git_history
from chunkls.index.citations import check_text
from chunkls.index.history import GitHistory, safe_path
from chunkls.index.replacement import Replacement, TextIndex
from chunkls.index.session import Session
from tests import guards

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_AUTHOR_DATE": "2026-03-02T10:00:00Z",
    "GIT_COMMITTER_DATE": "2026-03-02T10:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
}

PARSE = '''def parse_etag(value):
    """Split an entity tag into its weakness flag and its opaque quoted part."""
    weak = value.startswith("W/")
    return weak, value.removeprefix("W/").strip('"')
'''
HELPER = '''def normalise_header_name(name):
    """Header names compare without case; keep one spelling for the tables."""
    return "-".join(part.capitalize() for part in name.split("-"))
'''
TOTAL = '''def basket_total(items, discount=0.0):
    """Sum the prices of the items in the basket, less a discount rate."""
    subtotal = sum(item.price * item.quantity for item in items)
    shipping = 0 if subtotal > 50 else 4.95
    return round(subtotal * (1 - discount) + shipping, 2)
'''
GONE = '''def launch_rockets(count):
    """Fire every rocket on the pad, one after another, and count them."""
    fired = [pad.fire() for pad in range(count)]
    return len(fired)
'''
ROUTING = '''class Router:
    """Dispatch a request path to the handler registered for its longest prefix."""

    def __init__(self):
        self.routes = {}

    def add(self, prefix, handler):
        self.routes[prefix] = handler
'''


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def commit(root: Path, files: dict[str, str | None], message: str) -> str:
    for rel_path, text in files.items():
        path = root / rel_path
        if text is None:
            git(root, "rm", "-rq", rel_path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose second commit moves, renames, edits and deletes."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(
        root,
        {
            "web/http.py": PARSE + "\n\n" + HELPER,
            "shop/cart.py": TOTAL.replace("basket_total", "cart_total") + "\n\n" + GONE,
            "web/routing.py": ROUTING,
            "README.md": "# Project\n\nA demo.\n",
        },
        "one",
    )
    commit(
        root,
        {
            # renamed in place, the body kept
            "web/http.py": PARSE.replace("parse_etag", "unquote_etag_header") + "\n",
            # moved to a module of its own, unchanged
            "web/headers.py": HELPER,
            # renamed and edited (the shipping rule changed)
            "shop/cart.py": TOTAL.replace("4.95", "5.95"),
            # a module moved into a package (git sees a rename)
            "web/routing.py": None,
            "web/routing/__init__.py": ROUTING,
        },
        "two",
    )
    return root


def session_of(root: Path, cache: Path | None = None) -> Session:
    session = Session(cache)
    session.add_root(root)
    session.catch_up()
    return session


def replacement(session: Session, chunk_id: str) -> Replacement | None:
    """A question as every front door asks it: the write step, the question, and
    again while the answer was incomplete (the history opened in between)."""
    return session.ask(lambda queries: queries.replacement(chunk_id))


EXPECTED = [
    ("web/http.py#function-parse_etag", "renamed", "web/http.py#function-unquote_etag_header"),
    (
        "web/http.py#function-normalise_header_name",
        "moved",
        "web/headers.py#function-normalise_header_name",
    ),
    ("shop/cart.py#function-cart_total", "changed", "shop/cart.py#function-basket_total"),
    ("web/routing.py#class-Router", "moved", "web/routing/__init__.py#class-Router"),
    ("shop/cart.py#function-launch_rockets", "deleted", None),
]


@pytest.mark.parametrize(("old", "kind", "new"), EXPECTED, ids=[row[0] for row in EXPECTED])
def test_a_stale_id_is_followed_through_git(
    repo: Path, old: str, kind: str, new: str | None
) -> None:
    session = session_of(repo)
    found = replacement(session, old)
    assert found is not None
    assert (found.kind, found.chunk_id) == (kind, new)
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert found.commit == first  # the newest commit that had it
    assert found.date == "2026-03-02"
    assert found.certain == (kind != "deleted")
    if kind in ("moved", "renamed"):
        assert found.similarity == 1.0
    elif kind == "changed":
        assert 0.8 <= found.similarity < 1.0
    # the replacement comes first in every list of suggestions
    if new is not None:
        assert session.ask(lambda queries: queries.fix_candidates(old))[0] == new
    session.close()


def test_an_id_that_resolves_has_no_replacement(repo: Path) -> None:
    session = session_of(repo)
    assert replacement(session, "web/headers.py#function-normalise_header_name") is None
    assert replacement(session, "web/http.py#function-never_was") is None
    session.close()


def test_the_matching_thresholds() -> None:
    """Moved needs the same text; a near tie is offered first only with a lead,
    and certain only above FIX_SIMILARITY with FIX_LEAD."""
    from chunkls.index.history import Sighting

    body = "    total = 0\n    for item in basket:\n        total += item.price\n    return total\n"
    index = TextIndex(
        [
            ("a.py#function-one", f"def one(basket):\n{body}"),
            ("b.py#function-two", f"def two(basket):\n{body}"),
        ]
    )
    sighting = Sighting("c.py#function-one", f"def one(basket):\n{body}", "c0ffee", "2026-01-01")
    found = index.match(sighting)
    assert (found.kind, found.chunk_id, found.certain) == ("moved", "a.py#function-one", True)
    # the same text twice under other names: renamed, but ambiguous, so not certain
    sighting = Sighting("c.py#function-three", f"def three(basket):\n{body}", "c0ffee", None)
    found = index.match(sighting)
    assert found.kind == "renamed" and not found.certain
    # nothing alike: deleted
    sighting = Sighting("c.py#function-z", "def z():\n    launch()\n", "c0ffee", None)
    assert index.match(sighting).kind == "deleted"


def test_the_cache_keeps_the_history_outside_git(tmp_path: Path) -> None:
    """No repository: the text of a renamed function survives a restart in the cache."""
    root = tmp_path / "plain"
    root.mkdir()
    (root / "calc.py").write_text(TOTAL, encoding="utf-8")
    cache = tmp_path / "cache"
    session_of(root, cache).close()
    (root / "calc.py").write_text(TOTAL.replace("basket_total", "order_total"), "utf-8")
    session_of(root, cache).close()  # the bulk pass sees the change
    session = session_of(root, cache)  # a restart
    found = replacement(session, "calc.py#function-basket_total")
    assert found is not None
    assert (found.kind, found.chunk_id, found.commit) == (
        "renamed",
        "calc.py#function-order_total",
        None,
    )
    session.close()


def breaks_git(how: str) -> Callable[[Path, pytest.MonkeyPatch], None]:
    def broken(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        if how == "no git on PATH":
            monkeypatch.setenv("PATH", str(root / "nowhere"))
        elif how == "corrupt .git":
            (root / ".git" / "HEAD").write_text("garbage\n")
            shutil.rmtree(root / ".git" / "objects")
            (root / ".git" / "objects").write_text("not a folder")
        elif how == "not a repository":
            shutil.rmtree(root / ".git")

    return broken


@pytest.mark.parametrize("how", ["no git on PATH", "corrupt .git", "not a repository"])
def test_without_a_usable_git_the_answer_falls_back(
    repo: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    breaks_git(how)(repo, monkeypatch)
    session = session_of(repo)
    assert replacement(session, "web/http.py#function-parse_etag") is None
    history = session.store.git_histories[session.folders[0]]
    assert not history.usable and history.note  # said why, and nothing raised
    # and the process goes on answering
    assert session.queries.lookup("web/headers.py#function-normalise_header_name")
    assert session.ask(lambda queries: queries.fix_candidates("web/http.py#function-parse_etag"))
    session.close()


def test_a_shallow_clone_answers_from_what_it_has(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    session = session_of(clone)
    # only the newest commit is there: the old IDs were never seen, no error
    assert replacement(session, "web/http.py#function-parse_etag") is None
    assert session.queries.lookup("web/http.py#function-unquote_etag_header")
    session.close()


def test_worktrees_and_submodules_read_their_own_history(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "worktree"
    git(repo, "worktree", "add", "-q", str(worktree))
    session = session_of(worktree)
    found = replacement(session, "web/http.py#function-parse_etag")
    assert found is not None and found.kind == "renamed"
    session.close()
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    commit(outer, {"top.md": "# Top\n"}, "outer")
    git(outer, "submodule", "add", "-q", f"file://{repo}", "vendored")
    git(outer, "commit", "-qm", "with a submodule")
    session = session_of(outer / "vendored")
    found = replacement(session, "web/http.py#function-parse_etag")
    assert found is not None and found.chunk_id == "web/http.py#function-unquote_etag_header"
    session.close()


def test_a_folder_below_the_repository_top_reads_its_own_paths(repo: Path) -> None:
    session = session_of(repo / "web")
    found = replacement(session, "http.py#function-parse_etag")
    assert found is not None and found.chunk_id == "http.py#function-unquote_etag_header"
    # a path of the repository outside the folder is never read
    assert replacement(session, "../shop/cart.py#function-cart_total") is None
    session.close()


@pytest.mark.parametrize(
    "path",
    ["../x.py", "a/../../x.py", "/etc/x.py", "a//b.py", "./a.py", "a\\b.py", "C:/x.py", ""],
)
def test_a_path_that_climbs_out_is_never_looked_up(path: str) -> None:
    assert not safe_path(path)
    assert GitHistory(Path("/nonexistent")).sighting(f"{path}#function-f") is None


def test_old_blobs_that_do_not_chunk_and_old_links_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"a.py": PARSE, "once_a_dir.py/inner.py": HELPER}, "good")
    (root / "a.py").write_bytes(b"def broken(:\n    \xff\xfe\n")
    git(root, "rm", "-rq", "once_a_dir.py")
    os.symlink("/etc/hostname", root / "link.py")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "bad blob, a symlink out of the root")
    (root / "a.py").write_text("def other():\n    return 1\n", encoding="utf-8")
    (root / "link.py").unlink()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "now")
    session = session_of(root)
    found = replacement(session, "a.py#function-parse_etag")
    assert found is not None and found.kind == "deleted"  # read past the blob that did not parse
    assert found.old_text == PARSE.rstrip("\n")
    # the symlink's target is never read; a path that was a directory has no chunk
    assert replacement(session, "link.py#module-1") is None
    assert replacement(session, "once_a_dir.py#function-normalise_header_name") is None
    session.close()


def test_the_walk_is_bounded(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_history, "WALK_COMMITS", 1)
    session = session_of(repo)
    # only the newest commit is read: the older ID is not found, and that is said
    assert replacement(session, "web/http.py#function-parse_etag") is None
    history = session.store.git_histories[session.folders[0]]
    assert history.bounded and history.note is not None and "newest 1" in history.note
    session.close()


def test_ten_thousand_distinct_stale_ids_in_one_log(repo: Path) -> None:
    session = session_of(repo)
    ids = [f"web/http.py#function-gone_{n}" for n in range(10_000)]
    text = '{"x": "web/http.py#function-parse_etag"}\n' + "\n".join(
        f'{{"cited": "{cid}"}}' for cid in ids
    )
    problems = session.ask(
        lambda queries: check_text(queries, text, "jsonl", session.folders[0], "log.jsonl")
    )
    assert len(problems) == 10_001  # every one reported, none lost
    assert problems[0].replacement is not None
    assert problems[0].replacement.chunk_id == "web/http.py#function-unquote_etag_header"
    assert all(problem.replacement is None for problem in problems[1:])
    assert session.queries.lookup("web/http.py#function-unquote_etag_header")  # still answering
    session.close()


def test_the_history_lookup_reads_and_never_writes(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    (repo / "notes.md").write_text("`web/http.py#function-parse_etag`\n", encoding="utf-8")
    argv = ["check", "--format", "json", "--root", str(repo)]
    cli(argv, io.StringIO(), io.StringIO())  # the first run indexes (the write step)
    guards.install(monkeypatch.setattr)
    before = dict(guards.asked)
    out = io.StringIO()
    assert cli(argv, out, io.StringIO()) == 1
    assert "unquote_etag_header" in out.getvalue()
    resolve = ["resolve", "web/http.py#function-parse_etag", "--root", str(repo)]
    out = io.StringIO()
    assert cli(resolve, out, io.StringIO()) == 0  # followed to where it went
    assert out.getvalue().startswith("web/http.py:1-")
    assert guards.asked["refused"] == before["refused"]
    assert guards.asked["questions"] > before["questions"]


@pytest.mark.parametrize(
    ("kind", "new", "commit", "said"),
    [
        (
            "moved",
            "b.py#function-f",
            "1a2b3c4d5e",
            "moved to b.py#function-f in 1a2b3c4, 2026-03-02",
        ),
        ("renamed", "a.py#function-g", None, "renamed to a.py#function-g, as the index saw it"),
        (
            "changed",
            "b.py#function-g",
            "1a2b3c4d5e",
            "changed to b.py#function-g, 91% alike, in 1a2b3c4, 2026-03-02",
        ),
        ("deleted", None, "1a2b3c4d5e", "deleted; last seen in 1a2b3c4, 2026-03-02"),
        ("deleted", None, None, "deleted; last seen by the index"),
    ],
)
def test_the_evidence_in_words(kind: str, new: str | None, commit: str | None, said: str) -> None:
    date = "2026-03-02" if commit else None
    found = Replacement(new, kind, commit, date, 0.9123, False, "def f(): ...")
    assert found.said() == said
    assert found.evidence()["similarity"] == 0.912
