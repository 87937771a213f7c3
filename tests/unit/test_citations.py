"""Citations: recognising, indexing, checking and ranking replacements."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from chunkls.chunking.corpus import CorpusRules
from chunkls.cli import main
from chunkls.ids.grammar import find_chunk_refs
from chunkls.index.citations import (
    CitationIndex,
    check_text,
    fix_candidates,
    real_relative,
    walk_citation_files,
)
from chunkls.index.folder import Folder
from chunkls.index.replacement import ChunkHistory
from chunkls.index.session import build_index
from tests.unit.strategies import write_tree

CODE = """\
'''Module docs.'''

import os

VALUE = 1


def compute_total(items):
    return sum(items)


class Report:
    def render(self):
        return "report"


AFTER = 2
"""
DOC = (
    "# Getting Started\n\nIntro.\n\n## Install_Guide\n\nSteps.\n\n# Setup\n\nA.\n\n# Setup\n\nB.\n"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            "app/calc.py": CODE,
            "app/other.py": "def compute_tax(x):\n    return x\n",
            "README.md": DOC,
            "docs/notes.md": (
                "See app/calc.py#function-compute_total and `app/calc.py#class-Report`.\n"
            ),
            "notes/chat.txt": "app/calc.py#function-compute_total\nREADME.md#heading-setup-2\n",
            "node_modules/pkg/README.md": "app/calc.py#function-compute_total\n",
            ".venv/README.md": "app/calc.py#function-compute_total\n",
            "env/pyvenv.cfg": "home = /usr\n",
            "env/notes.md": "app/calc.py#function-compute_total\n",
        },
    )
    return tmp_path


def test_module_ids_exist_where_the_test_expects(tree: Path) -> None:
    ids = [entry.chunk.chunk_id for entry in build_index([tree]).queries.chunks()]
    assert "app/calc.py#module-1" in ids
    assert "app/calc.py#module-15" in ids


@pytest.mark.parametrize(
    ("cited", "best"),
    [
        # stale module line: the nearest module chunk of the same file
        ("app/calc.py#module-3", "app/calc.py#module-1"),
        ("app/calc.py#module-20", "app/calc.py#module-15"),
        ("app/calc.py#module-13", "app/calc.py#module-15"),
        # renamed function, nothing known of its old text: by name, same kind first
        ("app/calc.py#function-compute_totals", "app/calc.py#function-compute_total"),
        ("app/calc.py#class-Reports", "app/calc.py#class-Report"),
        # headings: our slug of a case or GitHub-style variant
        ("README.md#heading-Getting-Started", "README.md#heading-getting-started"),
        ("README.md#heading-install_guide", "README.md#heading-install-guide"),
        ("README.md#heading-setup-3", "README.md#heading-setup"),
        # unknown file: the closest path's chunks
        ("app/calcs.py#function-compute_total", "app/calc.py#function-compute_total"),
    ],
)
def test_best_candidate(tree: Path, cited: str, best: str) -> None:
    index = build_index([tree])
    candidates = fix_candidates(index.queries, cited)
    assert candidates[0] == best
    assert len(candidates) <= 3
    assert cited not in candidates
    assert all(index.queries.lookup(candidate) for candidate in candidates)


def test_renamed_function_is_found_by_its_old_text(tree: Path) -> None:
    index = build_index([tree])
    folder = index.queries.folders[0]
    old = {c.chunk_id: c.text for c in index.queries.file_chunks(folder, "app/calc.py")}
    source = (tree / "app/calc.py").read_text(encoding="utf-8")
    renamed = source.replace("def compute_total(", "def zzz(")
    renamed += "\n\ndef compute_totals_v2():\n    return None\n"  # a closer name
    (tree / "app/calc.py").write_text(renamed, encoding="utf-8")
    index.refresh(folder, ["app/calc.py"])
    history = ChunkHistory()
    history.forget_ids({cid: text for cid, text in old.items() if not index.queries.lookup(cid)})
    cited = "app/calc.py#function-compute_total"
    # by name alone the closest is the look-alike; by its old text it is zzz
    by_name = fix_candidates(index.queries, cited, replacement=False)
    assert by_name[0] == "app/calc.py#function-compute_totals_v2"
    assert fix_candidates(index.queries, cited, history)[0] == "app/calc.py#function-zzz"
    # the session's own refresh kept the old text for the store's quick fixes
    assert index.store.history.text_of(cited) == old[cited]
    assert index.queries.fix_candidates(cited)[0] == "app/calc.py#function-zzz"


def test_a_refresh_that_loses_no_chunk_keeps_no_history(tree: Path) -> None:
    """Adding a file (or a save that keeps every ID) leaves the history unmade:
    it and the citations module come with the first chunk that leaves."""
    index = build_index([tree])
    folder = index.queries.folders[0]
    (tree / "app/added.py").write_text("def added():\n    return 1\n", encoding="utf-8")
    assert index.refresh(folder, ["app/added.py"]) == ["app/added.py"]
    assert index.queries.lookup("app/added.py#function-added")
    assert "history" not in vars(index.store)


def test_removing_a_folder_keeps_no_history(tree: Path) -> None:
    """The chunks of a folder that leaves the workspace are not chunks that left
    the index to suggest replacements for: their texts are not read."""
    index = build_index([tree])
    index.remove_folder(index.queries.folders[0])
    assert not index.queries.folders and "history" not in vars(index.store)


def test_history_is_bounded() -> None:
    history = ChunkHistory(limit=2)
    history.forget_ids({"a#function-x": "1", "a#function-y": "2", "a#function-z": "3"})
    assert history.text_of("a#function-x") is None
    assert history.text_of("a#function-z") == "3"
    long = ChunkHistory(chars=10)
    long.forget_ids({"a#function-x": "x" * 1_000_000})
    assert long.text_of("a#function-x") == "x" * 10


def test_check_text_reports_only_what_does_not_resolve(tree: Path) -> None:
    index = build_index([tree])
    text = (
        "good app/calc.py#function-compute_total, stale app/calc.py#module-3,\n"
        "traversal ../../etc/passwd.py#module-1, url https://x.org/app/calc.py#function-gone,\n"
        "not corpus app/calc.txt#function-x, anchor README.md#setup\n"
    )
    problems = check_text(index.queries, text, "markdown", index.queries.folders[0], "docs/n.md")
    assert [p.chunk_id for p in problems] == [
        "app/calc.py#module-3",
        "../../etc/passwd.py#module-1",
    ]
    assert problems[0].suggestions[0] == "app/calc.py#module-1"
    assert problems[1].suggestions == []


def test_citation_walk_skips_git_venvs_and_node_modules(tree: Path) -> None:
    assert walk_citation_files(tree) == ["README.md", "docs/notes.md", "notes/chat.txt"]


def test_citation_index_is_incremental(tree: Path) -> None:
    index = build_index([tree])
    folder = index.queries.folders[0]
    citations = CitationIndex()
    for _ in citations.scan_folder(folder):
        pass
    target = "app/calc.py#function-compute_total"
    assert [(c.rel_path, c.line) for c in citations.citing(target)] == [
        ("docs/notes.md", 0),
        ("notes/chat.txt", 0),
    ]
    assert len(citations.citing("README.md#heading-setup-2")) == 1
    (tree / "notes/chat.txt").write_text("nothing here\n", encoding="utf-8")
    (tree / "docs/more.md").write_text(f"x\n\n  {target}\n", encoding="utf-8")
    citations.refresh(folder, ["notes/chat.txt", "docs/more.md"])
    assert [(c.rel_path, c.line, c.column) for c in citations.citing(target)] == [
        ("docs/more.md", 2, 2),
        ("docs/notes.md", 0, 4),
    ]
    (tree / "docs/more.md").unlink()
    (tree / "docs/notes.md").unlink()
    (tree / "docs").rmdir()
    citations.refresh(folder, ["docs"])
    assert citations.citing(target) == []


def test_local_and_link_targets(tree: Path) -> None:
    text = "[a](../app/calc.py#class-Report) and #heading-setup\n"
    refs = find_chunk_refs(text)
    index = build_index([tree])
    problems = check_text(
        index.queries, text, "markdown", index.queries.folders[0], "docs/notes.md"
    )
    # the link resolves relative to docs/; #heading-setup means docs/notes.md's
    assert [p.chunk_id for p in problems] == ["docs/notes.md#heading-setup"]
    assert [r.form for r in refs] == ["link", "local"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", *argv, "--no-cache"], out, err)
    return code, out.getvalue(), err.getvalue()


def test_check_cli_exit_codes_and_output(tree: Path) -> None:
    code, out, _ = run("--root", str(tree))
    assert code == 0
    assert out == ""
    (tree / "notes/chat.txt").write_text(
        "ok app/calc.py#function-compute_total\n  then app/calc.py#function-compute_totals\n",
        encoding="utf-8",
    )
    code, out, err = run("--root", str(tree))
    assert code == 1
    assert out == (
        "notes/chat.txt:2:8: unknown chunk ID app/calc.py#function-compute_totals "
        "(did you mean app/calc.py#function-compute_total?)\n"
    )
    assert "1 unknown chunk ID" in err
    code, out, _ = run("--root", str(tree), "--format", "json", str(tree / "notes/chat.txt"))
    assert code == 1
    [item] = json.loads(out)
    assert item["line"] == 2
    assert item["column"] == 8
    assert item["chunk_id"] == "app/calc.py#function-compute_totals"
    assert item["suggestions"][0] == "app/calc.py#function-compute_total"


@pytest.mark.parametrize(
    "argv",
    [("--root", "/does/not/exist"), ("missing.md",), ("--format", "xml")],
)
def test_check_cli_usage_errors(tree: Path, argv: tuple[str, ...]) -> None:
    argv = tuple(arg if arg != "missing.md" else str(tree / "missing.md") for arg in argv)
    if "--root" not in argv:
        argv = ("--root", str(tree), *argv)
    code, _, err = run(*argv)
    assert code == 2
    assert "error" in err


def test_check_cli_binary_file_is_skipped_and_named(tree: Path) -> None:
    """Not a usage error (issue 32): named on stderr; ``--strict`` fails the run."""
    (tree / "bin.md").write_bytes(b"\xff\xfe\x00")
    code, _, err = run("--root", str(tree), str(tree / "bin.md"))
    assert code == 0
    assert err.count("skipped bin.md") == 1 and "usage:" not in err
    assert run("--root", str(tree), str(tree / "bin.md"), "--strict")[0] == 1


def test_check_text_suggests_for_the_first_unknown_ids_only(tree: Path) -> None:
    from chunkls.index.citations import SUGGEST_FOR

    index = build_index([tree])
    cited = [f"app/calc{i}.py#function-compute_total" for i in range(SUGGEST_FOR + 20)]
    text = "\n".join(f"- {chunk_id} and again {chunk_id}" for chunk_id in cited)
    folder = index.queries.folders[0]
    # asked as the front doors ask (a question that wanted the git history is asked again)
    problems = index.ask(lambda queries: check_text(queries, text, "markdown", folder, "docs/n.md"))
    assert [p.chunk_id for p in problems] == [c for c in cited for _ in (1, 2)]
    assert all(p.suggestions for p in problems[: 2 * SUGGEST_FOR])
    assert not any(p.suggestions for p in problems[2 * SUGGEST_FOR :])
    assert problems[0].suggestions[0] == "app/calc.py#function-compute_total"


@pytest.mark.parametrize(
    "under",
    ["docs/notes.md", "notes.md", "a/b/c.md", "", "docs", "../repo-other/x.md", "../x.md"],
)
def test_real_relative_says_what_folder_relative_says_of_a_real_path(
    tmp_path: Path, under: str
) -> None:
    """``chunkls check`` takes a file's root-relative path from its real path
    without resolving its folders again: the same answer as ``Folder.relative``."""
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (tmp_path / "repo-other").mkdir()
    folder = Folder(root, CorpusRules())
    real = os.path.normpath(os.path.join(root.resolve(), under))
    assert real_relative(real, folder.root_resolved) == folder.relative(real)
