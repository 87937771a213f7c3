"""Corpus configuration: the tutorial's defaults plus ``[tool.chunkls]``."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.chunking.corpus import (
    CONFIG_KEYS,
    DEFAULT_EXCLUDED_DIRECTORIES,
    DEFAULT_EXCLUDED_FILES,
    DEFAULT_MAX_FILE_SIZE,
    CorpusRules,
    compile_globs,
    load_rules,
    rules_from_mapping,
    walk_corpus,
)
from tests.reference import tutorial_ingest as tutorial

from .strategies import write_tree


def test_defaults_are_the_tutorials_rules() -> None:
    rules = CorpusRules()
    assert rules.exclude_dirs == frozenset(tutorial._EXCLUDED_DIRECTORIES)
    assert rules.exclude_files == frozenset(tutorial._EXCLUDED_FILES)
    assert rules.exclude_globs == ()
    assert rules.max_file_size == DEFAULT_MAX_FILE_SIZE == 10 * 1024 * 1024
    assert frozenset(tutorial._EXCLUDED_DIRECTORIES) == DEFAULT_EXCLUDED_DIRECTORIES
    assert frozenset(tutorial._EXCLUDED_FILES) == DEFAULT_EXCLUDED_FILES


def test_config_keys_are_documented() -> None:
    assert set(CONFIG_KEYS) == {
        "exclude-dirs",
        "exclude-files",
        "exclude",
        "max-file-size",
        "check-exclude",
        "search-mode",
    }


# -- rules_from_mapping: every key --------------------------------------------------


def test_every_key_is_applied_and_defaults_are_kept() -> None:
    rules, problems = rules_from_mapping(
        CorpusRules(),
        {
            "exclude-dirs": ["node_modules", "out"],
            "exclude-files": ["conftest.py"],
            "exclude": ["gen/**", "*.pb.py"],
            "max-file-size": 1000,
        },
        "pyproject.toml [tool.chunkls]",
    )
    assert problems == []
    assert rules.exclude_dirs == DEFAULT_EXCLUDED_DIRECTORIES | {"node_modules", "out"}
    assert rules.exclude_files == DEFAULT_EXCLUDED_FILES | {"conftest.py"}
    assert rules.exclude_globs == ("gen/**", "*.pb.py")
    assert rules.max_file_size == 1000


def test_empty_table_changes_nothing() -> None:
    rules, problems = rules_from_mapping(CorpusRules(), {}, "src")
    assert (rules, problems) == (CorpusRules(), [])


@pytest.mark.parametrize(
    ("settings_", "message"),
    [
        ({"exclude-dirs": "node_modules"}, "exclude-dirs must be a list of strings"),
        ({"exclude-dirs": ["ok", 1]}, "exclude-dirs must be a list of strings"),
        ({"exclude-files": {"a": 1}}, "exclude-files must be a list of strings"),
        ({"exclude": "*.py"}, "exclude must be a list of strings"),
        ({"exclude": [["nested"]]}, "exclude must be a list of strings"),
        ({"max-file-size": "10MB"}, "max-file-size must be a positive integer"),
        ({"max-file-size": 0}, "max-file-size must be a positive integer"),
        ({"max-file-size": -5}, "max-file-size must be a positive integer"),
        ({"max-file-size": 1.5}, "max-file-size must be a positive integer"),
        ({"max-file-size": True}, "max-file-size must be a positive integer"),
        ({"exclude_dirs": ["x"]}, "unknown key 'exclude_dirs' (known: exclude-dirs, "),
        ({"include": ["x"]}, "unknown key 'include'"),
    ],
)
def test_bad_values_are_reported_and_ignored(settings_: dict[str, object], message: str) -> None:
    rules, problems = rules_from_mapping(CorpusRules(), settings_, "where")
    assert rules == CorpusRules()
    assert len(problems) == 1
    assert problems[0].source == "where"
    assert problems[0].message.startswith(message)


def test_good_keys_apply_next_to_bad_ones() -> None:
    rules, problems = rules_from_mapping(
        CorpusRules(),
        {"exclude-dirs": ["gen"], "exclude": 3, "max-file-size": -1, "colour": "blue"},
        "where",
    )
    assert rules.exclude_dirs == DEFAULT_EXCLUDED_DIRECTORIES | {"gen"}
    assert rules.exclude_globs == ()
    assert rules.max_file_size == DEFAULT_MAX_FILE_SIZE
    assert [p.message.split(" ")[0] for p in problems] == ["exclude", "max-file-size", "unknown"]


def test_extended_rules_only_add() -> None:
    base = CorpusRules().extended(exclude_globs=["a/**"], max_file_size=5)
    rules = base.extended(["x"], ["y.py"], ["a/**", "b"])
    assert rules.exclude_dirs == DEFAULT_EXCLUDED_DIRECTORIES | {"x"}
    assert rules.exclude_files == DEFAULT_EXCLUDED_FILES | {"y.py"}
    assert rules.exclude_globs == ("a/**", "b")  # no duplicates, order kept
    assert rules.max_file_size == 5
    assert rules.fingerprint() != base.fingerprint() != CorpusRules().fingerprint()
    assert rules.fingerprint() == base.extended(["x"], ["y.py"], ["b"]).fingerprint()


# -- load_rules: pyproject.toml --------------------------------------------------------


def test_no_pyproject_gives_the_defaults(tmp_path: Path) -> None:
    assert load_rules(tmp_path) == (CorpusRules(), [])


def test_pyproject_without_the_table_gives_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ruff]\nx = 1\n')
    assert load_rules(tmp_path) == (CorpusRules(), [])


def test_pyproject_table_is_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.chunkls]\n"
        'exclude-dirs = ["node_modules"]\n'
        'exclude-files = ["setup.py"]\n'
        'exclude = ["vendor/**"]\n'
        "max-file-size = 2048\n"
    )
    rules, problems = load_rules(tmp_path)
    assert problems == []
    assert "node_modules" in rules.exclude_dirs
    assert "setup.py" in rules.exclude_files
    assert rules.exclude_globs == ("vendor/**",)
    assert rules.max_file_size == 2048


def test_pyproject_extends_a_base(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.chunkls]\nexclude = ["b"]\n')
    rules, _ = load_rules(tmp_path, CorpusRules().extended(exclude_globs=["a"]))
    assert rules.exclude_globs == ("a", "b")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[tool.chunkls\n", "cannot read it: "),
        (b"\xff\xfe[tool]\n", "cannot read it: "),
        (b"[tool]\nchunkls = 1\n", "[tool.chunkls] must be a table"),
        (b'[tool.chunkls]\nexclude = "x"\nwhat = 1\n', "exclude must be a list of strings"),
    ],
)
def test_broken_pyproject_is_reported_not_raised(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_bytes(content)
    rules, problems = load_rules(tmp_path)
    assert rules == CorpusRules()
    assert problems
    assert problems[0].message.startswith(message)
    assert str(tmp_path / "pyproject.toml") in problems[0].source


def test_pyproject_that_is_a_directory_is_reported(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").mkdir()
    rules, [problem] = load_rules(tmp_path)
    assert rules == CorpusRules()
    assert problem.message.startswith("cannot read it: ")


def test_unknown_keys_are_reported_with_the_table_as_source(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.chunkls]\nexclude-dir = ["x"]\n')
    rules, [problem] = load_rules(tmp_path)
    assert rules == CorpusRules()
    assert problem.source == f"{tmp_path / 'pyproject.toml'} [tool.chunkls]"
    assert "unknown key 'exclude-dir'" in problem.message


def test_only_the_roots_pyproject_counts(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {"sub/pyproject.toml": '[tool.chunkls]\nexclude-dirs = ["sub"]\n', "sub/a.py": "X = 1\n"},
    )
    rules, _ = load_rules(tmp_path)
    assert [f.rel_path for f in walk_corpus(tmp_path, rules).files] == ["sub/a.py"]


# -- globs --------------------------------------------------------------------------

GLOB_TABLE = [
    # pattern, path, excluded?
    ("*.pb.py", "x.pb.py", True),
    ("*.pb.py", "deep/er/x.pb.py", True),  # no "/": a name at any depth
    ("*.pb.py", "x.py", False),
    ("gen", "gen", True),
    ("gen", "a/gen", True),
    ("gen", "agen", False),
    ("gen", "gen.py", False),
    ("/top.py", "top.py", True),  # a leading "/" anchors at the root
    ("/top.py", "a/top.py", False),
    ("a/*.py", "a/x.py", True),  # a "/" anchors at the root
    ("a/*.py", "b/a/x.py", False),
    ("a/*.py", "a/b/x.py", False),  # "*" stays within a folder
    ("a/**", "a/b/c/x.py", True),  # "**" spans folders
    ("a/**", "a", False),
    ("a/**/x.py", "a/x.py", True),
    ("a/**/x.py", "a/b/c/x.py", True),
    ("a/**/x.py", "a/b/y.py", False),
    ("**/x.py", "x.py", True),
    ("**/x.py", "q/r/x.py", True),
    ("?.py", "a.py", True),
    ("?.py", "ab.py", False),
    ("?.py", "a/b.py", True),
    ("[ab].py", "a.py", True),
    ("[ab].py", "c.py", False),
    ("[!ab].py", "c.py", True),
    ("[!ab].py", "a.py", False),
    ("[abc", "[abc", True),  # an unclosed bracket is literal
    ("a.b", "axb", False),  # regex characters are literal
    ("x+y.py", "x+y.py", True),
    ("src/", "src", True),  # a trailing "/" is ignored
    ("src/", "a/src", True),
    ("Gen", "gen", False),  # case-sensitive
]


@pytest.mark.parametrize(("pattern", "path", "excluded"), GLOB_TABLE)
def test_glob_semantics(pattern: str, path: str, excluded: bool) -> None:
    assert CorpusRules(exclude_globs=(pattern,)).glob_excludes(path) is excluded


def test_empty_patterns_are_ignored() -> None:
    assert compile_globs(["", "/", "//"]) is None
    assert not CorpusRules(exclude_globs=("", "/")).glob_excludes("a.py")


def test_globs_exclude_folders_and_everything_below(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "keep.py": "X = 1\n",
            "vendor/lib.py": "X = 1\n",
            "a/vendor/lib.md": "# x\n",
            "gen/out/x.py": "X = 1\n",
            "src/gen/y.py": "X = 1\n",
            "src/x_pb2.py": "X = 1\n",
            "src/x.py": "X = 1\n",
        },
    )
    rules = CorpusRules().extended(exclude_globs=["vendor", "/gen", "*_pb2.py"])
    assert [f.rel_path for f in walk_corpus(tmp_path, rules).files] == [
        "keep.py",
        "src/gen/y.py",
        "src/x.py",
    ]
    assert rules.excluded_reason("vendor/lib.py") == "'vendor' matches an exclude pattern"
    assert rules.excluded_reason("src/x_pb2.py") == "'src/x_pb2.py' matches an exclude pattern"
    assert rules.folder_excluded("a/vendor/deeper")
    assert not rules.folder_excluded("src/gen")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("a.py", None),
        ("a/b/c.md", None),
        ("notes.txt", ".txt files are not chunked"),
        ("Makefile", "no suffix files are not chunked"),
        (".py", "no suffix files are not chunked"),
        ("x/test_verify_guides.py", "file name 'test_verify_guides.py' is excluded"),
        ("a/docs/b.md", "folder 'docs' is excluded"),
        ("node_modules/x/y.md", "folder 'node_modules' is excluded"),
        ("deep/x.gen.py", "'deep/x.gen.py' matches an exclude pattern"),
        ("skip.py", "file name 'skip.py' is excluded"),
    ],
)
def test_excluded_reason(path: str, reason: str | None) -> None:
    rules = CorpusRules().extended(["node_modules"], ["skip.py"], ["*.gen.py"])
    assert rules.excluded_reason(path) == reason


_SEGMENT = st.sampled_from(["a", "b", "docs", "gen", "x.py", "y.md", "n.txt", "v"])
_PATTERN = st.sampled_from(["gen", "/a", "a/**", "*.md", "**/v", "b/*.py", "?.py", "[ab]"])


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.lists(_SEGMENT, min_size=1, max_size=4), max_size=8),
    st.lists(_PATTERN, max_size=3),
    st.lists(st.sampled_from(["gen", "v", "a"]), max_size=2),
)
def test_walk_agrees_with_excluded_reason(
    paths: list[list[str]], patterns: list[str], dirs: list[str]
) -> None:
    """The walk (used for whole folders) and ``excluded_reason`` (used for one
    changed file) never disagree about a file."""
    rules = CorpusRules().extended(exclude_dirs=dirs, exclude_globs=patterns)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        files: set[str] = set()
        for parts in paths:
            rel = "/".join(parts)
            if any(rel.startswith(f + "/") or f.startswith(rel + "/") for f in files):
                continue  # a file cannot also be a folder
            if rel in files:
                continue
            files.add(rel)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("X = 1\n")
        walked = {f.rel_path for f in walk_corpus(root, rules).files}
        assert walked == {rel for rel in files if rules.excluded_reason(rel) is None}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["", "a", "b", "gen", "v", "x.py", "y.md", "z"]), max_size=5)
    ),
    st.lists(_PATTERN, max_size=3),
    st.lists(st.sampled_from(["gen", "v", "a", ""]), max_size=2),
    st.lists(st.sampled_from(["x.py", "y.md", "setup.py"]), max_size=2),
)
def test_in_corpus_is_excluded_reason_for_many_paths(
    paths: list[list[str]], patterns: list[str], dirs: list[str], names: list[str]
) -> None:
    """``in_corpus`` (the cache read in place: every row, folders judged once)
    says of each path what ``excluded_reason`` says, empty parts and a leading
    ``/`` included."""
    rules = CorpusRules().extended(exclude_dirs=dirs, exclude_globs=patterns, exclude_files=names)
    rel_paths = ["/".join(parts) for parts in paths]
    assert rules.in_corpus(rel_paths) == [rules.excluded_reason(rel) is None for rel in rel_paths]
