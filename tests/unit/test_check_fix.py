"""``chunkls check`` and ``chunkls resolve`` on stale IDs (issue 45): the
replacement first, with its evidence; ``--fix`` and ``--diff``; the GitHub and
SARIF formats (SARIF validated against its schema)."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from chunkls.cli import fix as fix_module
from chunkls.cli import main
from tests.unit.test_history import GONE, HELPER, PARSE, TOTAL, commit, git

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes")

OLD = {
    "renamed": "web/http.py#function-parse_etag",
    "moved": "web/helpers.py#function-normalise_header_name",
    "deleted": "web/helpers.py#function-launch_rockets",
}
NEW = {
    "renamed": "web/http.py#function-unquote_etag_header",
    "moved": "web/headers.py#function-normalise_header_name",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"web/http.py": PARSE, "web/helpers.py": HELPER + "\n\n" + GONE}, "one")
    commit(
        root,
        {
            "web/http.py": PARSE.replace("parse_etag", "unquote_etag_header"),
            "web/helpers.py": None,
            "web/headers.py": HELPER,
            "shop/cart.py": TOTAL,
        },
        "two",
    )
    return root


def run(root: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--root", str(root)], out, err)
    return code, out.getvalue(), err.getvalue()


def test_check_says_the_replacement_first(repo: Path) -> None:
    (repo / "notes.md").write_text(f"`{OLD['renamed']}` and {OLD['deleted']}\n")
    code, out, _ = run(repo, "check")
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()[:7]
    assert code == 1
    assert out.splitlines() == [
        f"notes.md:1:2: unknown chunk ID {OLD['renamed']} (renamed to {NEW['renamed']}"
        f" in {first}, 2026-03-02)",
        f"notes.md:1:39: unknown chunk ID {OLD['deleted']} (deleted; last seen in {first},"
        " 2026-03-02)",
    ]
    code, out, _ = run(repo, "check", "--format", "json")
    records = json.loads(out)
    assert records[0]["replacement"] == {
        "chunk_id": NEW["renamed"],
        "kind": "renamed",
        "commit": git(repo, "rev-list", "--max-parents=0", "HEAD").strip(),
        "date": "2026-03-02",
        "similarity": 1.0,
        "certain": True,
    }
    assert NEW["renamed"] not in records[0]["suggestions"]  # said once, first
    assert records[1]["replacement"]["kind"] == "deleted"
    assert records[1]["last_text"] == GONE.rstrip("\n")


@pytest.mark.parametrize("kind", ["renamed", "moved"])
def test_resolve_follows_a_moved_id(repo: Path, kind: str) -> None:
    code, out, err = run(repo, "resolve", OLD[kind])
    assert code == 0
    assert out.startswith(f"{NEW[kind].partition('#')[0]}:")
    assert f"{OLD[kind]}: {kind} to {NEW[kind]} in " in err
    code, out, _ = run(repo, "resolve", "--json", OLD[kind])
    record = json.loads(out)
    assert code == 0 and record["chunks"][0]["chunk_id"] == NEW[kind]
    assert record["moved_from"] == OLD[kind] and record["replacement"]["kind"] == kind


def test_resolve_shows_a_deleted_chunks_last_text(repo: Path) -> None:
    code, out, _ = run(repo, "resolve", OLD["deleted"])
    assert code == 1
    assert out.splitlines()[0].startswith(f"{OLD['deleted']} (deleted; last seen ")
    assert GONE.rstrip("\n") in out
    code, out, _ = run(repo, "resolve", "--json", OLD["deleted"])
    record = json.loads(out)
    assert code == 1 and record["chunks"] == []
    assert record["replacement"]["kind"] == "deleted" and record["last_text"] == GONE.rstrip("\n")


@pytest.mark.parametrize("stale", [*OLD.values(), "web/http.py#function-parse_etags"])
def test_check_and_resolve_offer_the_same_list(repo: Path, stale: str) -> None:
    (repo / "notes.md").write_text(f"`{stale}`\n")
    _, out, _ = run(repo, "check", "--format", "json")
    checked = json.loads(out)[0]
    _, out, _ = run(repo, "resolve", "--json", stale)
    resolved = json.loads(out)
    assert checked["replacement"] == resolved.get("replacement")
    assert checked["suggestions"] == resolved["suggestions"]


WRITTEN = [
    # (file, text written, the same after --fix)
    ("a.md", "`{renamed}`", "`{new_renamed}`"),
    ("a.md", "[x]({renamed}) [y](<{moved}>)", "[x]({new_renamed}) [y](<{new_moved}>)"),
    ("a.md", "bare {moved}.", "bare {new_moved}."),
    (
        "a.md",
        "[relative](../web/http.py#function-parse_etag)",
        "[relative](../web/http.py#function-unquote_etag_header)",
    ),
    ("log.jsonl", '{{"x": "{renamed_json}"}}', '{{"x": "{new_renamed_json}"}}'),
    ("log.jsonl", '{{"x": "{moved_json}"}}', '{{"x": "{new_moved_json}"}}'),
    ("cites.txt", "{renamed}\r\n{moved}\r\n", "{new_renamed}\r\n{new_moved}\r\n"),
    # percent-encoded: the path stays as written, the identity is replaced
    (
        "a.md",
        "[pct](../web/%68ttp.py#function-parse_etag)",
        "[pct](../web/%68ttp.py#function-unquote_etag_header)",
    ),
    ("bom.md", "\ufeff# T\n\n`{moved}` é\n", "\ufeff# T\n\n`{new_moved}` é\n"),
]


def _fill(text: str) -> str:
    return text.format(
        renamed=OLD["renamed"],
        moved=OLD["moved"],
        new_renamed=NEW["renamed"],
        new_moved=NEW["moved"],
        renamed_json=OLD["renamed"].replace("/", "\\/"),
        new_renamed_json=NEW["renamed"].replace("/", "\\/"),
        moved_json=OLD["moved"],
        new_moved_json=NEW["moved"],
    )


@pytest.mark.parametrize(("name", "before", "after"), WRITTEN)
def test_fix_keeps_the_written_form_and_every_other_byte(
    repo: Path, name: str, before: str, after: str
) -> None:
    path = repo / "docs" / name
    path.parent.mkdir()
    path.write_bytes(_fill(before).encode("utf-8"))
    path.chmod(0o640)
    code, out, err = run(repo, "check", "--fix", "--diff")
    assert code == 1 and out.startswith(f"--- a/docs/{name}")  # shown, not written
    assert path.read_bytes() == _fill(before).encode("utf-8")
    code, out, err = run(repo, "check", "--fix")
    assert code == 0, out + err
    assert path.read_bytes() == _fill(after).encode("utf-8")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in path.parent.iterdir()] == [name]  # no temporary left
    assert run(repo, "check")[0] == 0


def test_fix_never_rewrites_a_deleted_or_unclear_id(repo: Path) -> None:
    text = (
        f"`{OLD['deleted']}` and `web/http.py#function-nothing_like_it`,"
        " ../web/http.py#function-parse_etag (climbs out of the root: never looked up)\n"
    )
    (repo / "notes.md").write_text(text)
    code, out, _ = run(repo, "check", "--fix")
    assert code == 1
    assert (repo / "notes.md").read_text() == text
    assert "replaced" not in out


def test_a_file_changed_during_the_run_is_left_alone(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = repo / "notes.md"
    notes.write_text(f"`{OLD['moved']}`\n")
    real = fix_module.write_if_unchanged

    def racing(path: str, old_text: str, new_text: str) -> str | None:
        Path(path).write_text("someone else's edit\n")
        return real(path, old_text, new_text)

    monkeypatch.setattr(fix_module, "write_if_unchanged", racing)
    code, _, err = run(repo, "check", "--fix")
    assert code == 1
    assert notes.read_text() == "someone else's edit\n"
    assert "left notes.md alone: it changed on disk during the run" in err


def test_diff_needs_fix(repo: Path) -> None:
    code, _, err = run(repo, "check", "--diff")
    assert code == 2 and "--diff shows what --fix would write" in err


def test_github_format(repo: Path) -> None:
    (repo / "notes.md").write_text(f"x `{OLD['moved']}`\n`{OLD['deleted']}`\n")
    code, out, _ = run(repo, "check", "--format", "github")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("::error file=notes.md,line=1,col=4,title=chunkls::")
    assert f"moved to {NEW['moved']} in " in lines[0]
    assert lines[1].startswith("::error file=notes.md,line=2,col=2,")


def test_sarif_is_valid_and_has_fixes_where_certain(repo: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[1] / "schemas" / "sarif-2.1.0.json").read_text())
    (repo / "notes.md").write_text(f"x `{OLD['moved']}`\n`{OLD['deleted']}`\n")
    code, out, _ = run(repo, "check", "--format", "sarif")
    assert code == 1
    log = json.loads(out)
    jsonschema.validate(log, schema)
    moved, deleted = log["runs"][0]["results"]
    change = moved["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"] == "notes.md"
    replacement = change["replacements"][0]
    assert replacement["deletedRegion"]["startLine"] == 1
    assert replacement["insertedContent"]["text"] == NEW["moved"]
    assert "fixes" not in deleted
    broken = {**log, "version": "2.0.0"}  # the check can fail
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


@pytest.mark.parametrize("quote", ["'", '"', "'" * 3])
def test_fix_keeps_python_string_quotes(repo: Path, quote: str) -> None:
    """A Python file given by name is checked in its strings; the quotes stay."""
    script = repo / "tools" / "cite.py"
    script.parent.mkdir()
    text = f"# see {OLD['moved']}\nCITED = {quote}{OLD['renamed']}{quote}\n"
    script.write_text(text, encoding="utf-8")
    code, out, err = run(repo, "check", "--fix", str(script))
    assert code == 0, out + err
    assert script.read_text(encoding="utf-8") == (
        f"# see {NEW['moved']}\nCITED = {quote}{NEW['renamed']}{quote}\n"
    )
