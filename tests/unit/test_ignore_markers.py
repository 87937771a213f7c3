"""Marking example IDs: inline ``chunkls: ignore`` markers and the
``check-exclude`` globs of ``[tool.chunkls]``, in ``check_text`` (diagnostics)
and ``chunkls check``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls import cli
from chunkls.chunking.corpus import CONFIG_KEYS, CorpusRules, load_rules, rules_from_mapping
from chunkls.ids.grammar import find_chunk_refs_in
from chunkls.ids.ignore_markers import ignored_spans, unignored
from chunkls.index.citations import check_text
from chunkls.index.session import build_index
from tests.unit.strategies import write_tree


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep any cache the CLI writes out of the user's home."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


def _kept(text: str, language: str) -> list[str]:
    return [ref.chunk_id for ref in unignored(text, language, find_chunk_refs_in(text, language))]


# -- inline markers ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("a.md#heading-x\nb.md#heading-y\n", ["a.md#heading-x", "b.md#heading-y"]),
        # on its own line
        ("a.md#heading-x <!-- chunkls: ignore -->\nb.md#heading-y\n", ["b.md#heading-y"]),
        ("<!-- chunkls: ignore --> a.md#heading-x and c.md#heading-z\n", []),
        ("a.md#heading-x <!--chunkls:ignore-->\n", []),
        ("a.md#heading-x <!--\tchunkls:  ignore   -->\n", []),
        # for the next line
        (
            "<!-- chunkls: ignore-next-line -->\na.md#heading-x\nb.md#heading-y\n",
            ["b.md#heading-y"],
        ),
        ("a.md#heading-x <!-- chunkls: ignore-next-line -->\nb.md#heading-y\n", ["a.md#heading-x"]),
        ("<!-- chunkls: ignore-next-line -->\n\na.md#heading-x\n", ["a.md#heading-x"]),
        (
            "<!-- chunkls: ignore-next-line -->\r\na.md#heading-x\r\nb.md#heading-y",
            ["b.md#heading-y"],
        ),
        ("<!-- chunkls: ignore-next-line -->\ra.md#heading-x\rb.md#heading-y", ["b.md#heading-y"]),
        ("a.md#heading-x\n<!-- chunkls: ignore-next-line -->", ["a.md#heading-x"]),
        ("x <!-- chunkls: ignore -->\r\na.md#heading-x", ["a.md#heading-x"]),
        # not a marker: another word, another form, no comment
        ("a.md#heading-x <!-- chunkls: ignored -->\n", ["a.md#heading-x"]),
        ("a.md#heading-x <!-- chunkls: ignore-line -->\n", ["a.md#heading-x"]),
        ("a.md#heading-x <!-- Chunkls: Ignore -->\n", ["a.md#heading-x"]),
        ("a.md#heading-x chunkls: ignore\n", ["a.md#heading-x"]),
        ("a.md#heading-x # chunkls: ignore\n", ["a.md#heading-x"]),
    ],
)
def test_markers_in_markdown(text: str, kept: list[str]) -> None:
    assert _kept(text, "markdown") == kept
    assert _kept(text, "plaintext") == kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("x = 1  # see a.py#function-f\n", ["a.py#function-f"]),
        ("x = 1  # see a.py#function-f  # chunkls: ignore\n", []),
        ("x = 'a.py#function-f'  # chunkls:ignore\n", []),
        (
            "# chunkls: ignore-next-line\nx = 'a.py#function-f'\ny = 'b.py#class-C'\n",
            ["b.py#class-C"],
        ),
        ('"""\nsee a.py#function-f  # chunkls: ignore\n"""\n', []),  # a line of a string
        ("x = 1  # see a.py#function-f  <!-- chunkls: ignore -->\n", ["a.py#function-f"]),
        ("x = 1  # see a.py#function-f  # chunkls: ignore-me\n", ["a.py#function-f"]),
    ],
)
def test_markers_in_python(text: str, kept: list[str]) -> None:
    assert _kept(text, "python") == kept


def test_ignored_spans_are_whole_lines() -> None:
    text = "a\n<!-- chunkls: ignore-next-line -->\nbb\ncc <!-- chunkls: ignore -->\n"
    second = text.index("bb")
    third = text.index("cc")
    assert ignored_spans(text, "markdown") == [(second, second + 2), (third, len(text) - 1)]
    assert ignored_spans("no markers", "markdown") == []


# -- check-exclude -------------------------------------------------------------------


def test_check_exclude_is_a_config_key() -> None:
    assert "check-exclude" in CONFIG_KEYS
    rules, problems = rules_from_mapping(
        CorpusRules(), {"check-exclude": ["README.md", "examples/**"]}, "src"
    )
    assert problems == []
    assert rules.check_exclude == ("README.md", "examples/**")
    assert rules.exclude_globs == ()  # still chunked
    assert rules.fingerprint() == CorpusRules().fingerprint()  # the chunks do not change
    assert rules.check_excludes("README.md")
    assert rules.check_excludes("sub/README.md")  # a name without "/": at any depth
    assert rules.check_excludes("examples/a/b.md")
    assert not rules.check_excludes("docs/guide.md")
    assert not CorpusRules().check_excludes("README.md")


@pytest.mark.parametrize("value", ['"README.md"', '["ok", 1]', "1", '[["README.md"]]', "{ a = 1 }"])
def test_a_malformed_check_exclude_is_reported(tmp_path: Path, value: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.chunkls]\ncheck-exclude = {value}\n")
    rules, [problem] = load_rules(tmp_path)
    assert rules == CorpusRules()
    assert problem.message == "check-exclude must be a list of strings"
    assert problem.source == f"{tmp_path / 'pyproject.toml'} [tool.chunkls]"


# -- check_text (diagnostics) and chunkls check ---------------------------------------


TREE = {
    "app/x.py": "def f():\n    return 1\n",
    "pyproject.toml": '[tool.chunkls]\ncheck-exclude = ["examples/**", "NOTES.md"]\n',
    "README.md": (
        "app/x.py#function-f is real.\n"
        "app/x.py#function-gone <!-- chunkls: ignore -->\n"
        "<!-- chunkls: ignore-next-line -->\n"
        "| `app/y.py#class-Foo` | an example |\n"
        "app/x.py#function-typo is a mistake.\n"
    ),
    "examples/demo.md": "app/x.py#function-nowhere\n",
    "NOTES.md": "app/x.py#function-nowhere\n",
    "docs/NOTES.md": "app/x.py#function-nowhere\n",
}


def test_check_text_leaves_out_marked_lines_and_excluded_files(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    index = build_index([tmp_path])
    folder = index.queries.folders[0]
    assert folder.rules.check_exclude == ("examples/**", "NOTES.md")

    def unknown(rel_path: str) -> list[str]:
        text = (tmp_path / rel_path).read_text()
        return [p.chunk_id for p in check_text(index.queries, text, "markdown", folder, rel_path)]

    assert unknown("README.md") == ["app/x.py#function-typo"]
    assert unknown("examples/demo.md") == []
    assert unknown("NOTES.md") == []
    assert unknown("docs/NOTES.md") == []  # "NOTES.md" matches at any depth


def test_chunkls_check_honours_markers_and_check_exclude(tmp_path: Path) -> None:
    write_tree(tmp_path, {**TREE, "docs/guide.md": "see app/x.py#function-missing\n"})
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["check", "--root", str(tmp_path)], out, err)
    assert code == 1
    assert [line.split(" (did you mean")[0] for line in out.getvalue().splitlines()] == [
        "README.md:5:1: unknown chunk ID app/x.py#function-typo",
        "docs/guide.md:1:5: unknown chunk ID app/x.py#function-missing",
    ]
    # files given by name (as a pre-commit hook gives them) are left out too
    out = io.StringIO()
    code = cli.main(["check", "--root", str(tmp_path), str(tmp_path / "NOTES.md")], out, err)
    assert (code, out.getvalue()) == (0, "")


def test_chunkls_check_reports_a_malformed_check_exclude(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"a.md": "fine\n", "pyproject.toml": '[tool.chunkls]\ncheck-exclude = "a.md"\n'},
    )
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["check", "--root", str(tmp_path)], out, err) == 0
    assert "check-exclude must be a list of strings" in err.getvalue()


_LINE_PARTS = st.lists(
    st.sampled_from(
        [
            "see a.md#heading-x",
            "b.md#heading-y",
            "app/x.py#function-f",
            "<!-- chunkls: ignore -->",
            "<!-- chunkls: ignore-next-line -->",
            "# chunkls: ignore",
            "# chunkls: ignore-next-line",
            "text",
            "",
        ]
    ),
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(_LINE_PARTS.map(" ".join), max_size=12),
    breaks=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=12, max_size=12),
    language=st.sampled_from(["markdown", "python"]),
)
def test_a_batch_of_references_is_filtered_as_the_whole_text_would_be(
    lines: list[str], breaks: list[str], language: str
) -> None:
    """``unignored`` reads only the markers near a batch of references (a large
    document is checked a slice at a time): any contiguous batch keeps exactly
    the references the whole text's markers keep."""
    text = "".join(line + end for line, end in zip(lines, breaks, strict=False))
    refs = find_chunk_refs_in(text, language)
    spans = ignored_spans(text, language)  # every marker of the text
    kept = [r for r in refs if not any(start <= r.start <= end for start, end in spans)]
    for first in range(len(refs)):
        for last in range(first + 1, len(refs) + 1):
            batch = refs[first:last]
            assert unignored(text, language, batch) == [r for r in kept if r in batch]
