"""The retrieval benchmark runs end to end on a tiny tree (every figure of every
mode and reference reported, ranks and metrics well formed), and its corpus and
queries are built as specified. Timings are measured, never asserted."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))  # retrieval.py imports its stats
_spec = importlib.util.spec_from_file_location("bench_retrieval", REPO / "bench" / "retrieval.py")
assert _spec is not None and _spec.loader is not None
retrieval = importlib.util.module_from_spec(_spec)
sys.modules["bench_retrieval"] = retrieval  # its dataclasses look their module up
_spec.loader.exec_module(retrieval)

FIGURES = ["r_at_1", "r_at_10", "mrr_at_10", "ndcg_at_10", "p50_ms", "p95_ms"]
FIGURES += ["index_s", "index_mb"]
METRICS = ["r_at_1", "r_at_10", "mrr_at_10", "ndcg_at_10"]

TEXTS = '''"""Text helpers."""


def slugify_title(title):
    """Turn a page title into a lowercase hyphenated url fragment.

    More detail that is not part of the query.
    """
    return "-".join(title.lower().split())


def count_vowels(word):
    """Count how many vowels appear in the given word."""
    return sum(letter in "aeiou" for letter in word)


class Paragraph:
    """A block of prose split into sentences for wrapping."""

    def __init__(self, text):
        """Keep the raw text."""
        self.text = text

    def sentences(self):
        return self.text.split(". ")
'''

NUMBERS = '''"""Number helpers."""

import math


def mean_of(values):
    """Compute the arithmetic average of a list of floats."""
    return sum(values) / len(values)


def is_prime(n):
    """Decide whether an integer greater than one has no divisors but itself."""
    return n > 1 and all(n % k for k in range(2, math.isqrt(n) + 1))


async def fetch_rates(client):
    """Download the current currency exchange rates from the remote service."""
    return await client.get("/rates")


class Matrix:
    """A dense two dimensional grid of numbers with row operations."""

    rows = ()
'''

FILES = '''"""File helpers."""


def read_lines(path):
    """Read a text file and return its lines without trailing newlines."""
    with open(path) as file:
        return file.read().splitlines()


def write_atomically(path, data):
    """Write bytes to a temporary file then rename it over the destination."""
    raise NotImplementedError


class LockFile:
    """An exclusive advisory lock held on a file while the block runs."""


def short(x):
    """Too short."""
'''


def make_tree(root: Path) -> Path:
    """A tiny package: ten documented top-level definitions in three files."""
    package = root / "tree" / "pkg"
    package.mkdir(parents=True)
    (package / "texts.py").write_text(TEXTS)
    (package / "numbers.py").write_text(NUMBERS)
    (package / "files.py").write_text(FILES)
    (package / "broken.py").write_text('def oops(:\n    """Never parsed."""\n')
    (root / "tree" / "README.md").write_text("# Tiny tree\n\nHelpers for the benchmark test.\n")
    return root / "tree"


def test_the_benchmark_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "retrieval.json"
    tree = make_tree(tmp_path)
    command = [sys.executable, str(REPO / "bench" / "retrieval.py"), "--tree", str(tree)]
    command += ["--queries", "5", "--json", str(out), "--misses", "3", "--set", "LENGTH=0.2"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| engine |" in done.stdout
    report = json.loads(out.read_text())

    assert report["counts"]["queries"] == 5
    assert report["counts"]["eligible_pairs"] >= 5
    assert report["settings"]["seed"] == 0
    assert report["settings"]["modes"] == retrieval.chunkls_modes()
    assert report["settings"]["hybrid_settings"] == {"LENGTH": 0.2}
    assert len(report["queries"]) == 5
    engines = {**report["modes"], **report["references"]}
    assert set(report["modes"]) == set(retrieval.chunkls_modes())
    assert set(report["references"]) == {"bm25s", "rank_bm25"}
    for name, result in engines.items():
        for figure in FIGURES:
            assert isinstance(result[figure], (int, float)), (name, figure)
        for metric in METRICS:
            assert 0 <= result[metric] <= 1, (name, metric)
        assert len(result["ranks"]) == 5
        for rank in result["ranks"]:
            assert rank is None or (isinstance(rank, int) and rank >= 1), (name, rank)
        assert len(result["top3"]) == 5
    # the copy is unchanged where the source is: no query comes from the broken file
    assert all("broken.py" not in pair["target"] for pair in report["queries"])
    assert report["miss_breakdown"]["mode"] == retrieval.chunkls_modes()[0]


def test_the_benchmark_is_deterministic_given_the_seed(tmp_path: Path) -> None:
    candidates = retrieval.copy_corpus([(make_tree(tmp_path), ".")], tmp_path / "copy")
    ids = Counter(candidate.target for candidate in candidates)
    pairs, _ = retrieval.eligible_pairs(reversed(candidates), ids)
    again, _ = retrieval.eligible_pairs(candidates, ids)
    assert pairs == again
    assert retrieval.draw(pairs, 4, 7) == retrieval.draw(again, 4, 7)


def test_a_body_of_only_a_docstring_becomes_pass() -> None:
    source = 'def f(x):\n    """Only a docstring."""\n\n\nasync def g():\n    "One."\n'
    stripped = retrieval.strip_docstrings(source)
    assert stripped is not None
    text, removed = stripped
    assert text == "def f(x):\n    pass\n\n\nasync def g():\n    pass\n"
    ast.parse(text)
    assert [(d.name, d.kind, d.text) for d in removed] == [
        ("f", "function", "Only a docstring."),
        ("g", "function", "One."),
    ]


def test_a_class_docstring_goes_and_method_docstrings_stay() -> None:
    source = (
        '"""The module docstring stays."""\n\n\n'
        "class Box:\n"
        '    """A box.\n\n    With details.\n    """\n\n'
        "    def open(self):\n"
        '        """A method docstring stays."""\n'
        "        return 1  # a comment stays\n"
    )
    stripped = retrieval.strip_docstrings(source)
    assert stripped is not None
    text, removed = stripped
    module = ast.parse(text)
    assert ast.get_docstring(module) == "The module docstring stays."
    box = module.body[1]
    assert isinstance(box, ast.ClassDef)
    assert ast.get_docstring(box) is None
    method = box.body[0]
    assert isinstance(method, ast.FunctionDef)
    assert ast.get_docstring(method) == "A method docstring stays."
    assert "# a comment stays" in text
    assert [(d.name, d.kind, d.text) for d in removed] == [
        ("Box", "class", "A box.\n\nWith details.")
    ]


def test_docstrings_on_the_definition_line_and_other_layouts_still_parse() -> None:
    cases = {
        'def f(): "Doc."\n': "def f(): pass\n",
        'def f(): "Doc."; return 1\n': "def f(): return 1\n",
        'def f():\r\n    """Doc.\r\n    More."""\r\n    return 1\r\n': (
            "def f():\r\n    return 1\r\n"
        ),
        'def f():\n    "Doc."  # note\n    return 1\n': "def f():\n    # note\n    return 1\n",
        'def f():\n    "a" \\\n    "b"\n    return 1\n': "def f():\n    return 1\n",
        'def é(): "ünï"; return "é"\n': 'def é(): return "é"\n',
    }
    for source, expected in cases.items():
        stripped = retrieval.strip_docstrings(source)
        assert stripped is not None, source
        assert stripped[0] == expected
        ast.parse(stripped[0])


def test_what_is_not_top_level_or_does_not_parse_is_left_alone() -> None:
    nested = 'if True:\n    def f():\n        """Nested in an if."""\n'
    assert retrieval.strip_docstrings(nested) == (nested, [])
    assert retrieval.strip_docstrings('def f(:\n    """Broken."""\n') is None


def test_the_query_is_the_first_sentence_without_the_name() -> None:
    doc = "Parse the address list of a header field. Returns pairs.\nMore."
    assert retrieval.make_query(doc, "getaddresses") == "Parse the address list of a header field."
    assert retrieval.first_sentence("Split a line\ninto words\n\nMore text.") == (
        "Split a line into words"
    )
    assert retrieval.first_sentence("Read it.\nThen more.") == "Read it."
    # the name goes, in any case, bare or marked up; other Sphinx markup stays
    doc = "Return the ``parseaddr`` result, as :func:`parseaddr` and ParseAddr do,"
    doc += " see :class:`Message`."
    assert retrieval.make_query(doc, "parseaddr") == (
        "Return the result, as and do, see :class:`Message`."
    )
    # only whole words: a longer identifier keeps the name inside it
    assert retrieval.make_query("Wrap foo_bar and xfoo around foo.", "foo") == (
        "Wrap foo_bar and xfoo around ."
    )
    # under three words left: skipped
    assert retrieval.make_query("Frob the Frob thing.", "frob") is None
    assert retrieval.make_query("Get the foo.", "get") is None
    assert retrieval.make_query("", "f") is None


def test_pairs_skip_short_queries_and_ambiguous_or_missing_targets() -> None:
    candidate = retrieval.Candidate
    candidates = [
        candidate("a.py#function-f", "f", "function", "Load the settings from disk."),
        candidate("a.py#function-short", "short", "function", "Too short."),
        candidate("b.py#function-g", "g", "function", "Save the settings to disk."),
        candidate("c.py#class-Gone", "Gone", "class", "Not indexed at all here."),
    ]
    ids = Counter({"a.py#function-f": 1, "a.py#function-short": 1, "b.py#function-g": 2})
    pairs, skipped = retrieval.eligible_pairs(candidates, ids)
    assert pairs == [retrieval.Pair("Load the settings from disk.", "a.py#function-f", "function")]
    assert skipped == Counter(
        {"query under 3 words": 1, "target ID not unique": 1, "target not a chunk": 1}
    )


def test_metrics() -> None:
    figures = retrieval.metrics([1, 2, None, 11])
    assert figures["r_at_1"] == 0.25
    assert figures["r_at_10"] == 0.5
    assert figures["mrr_at_10"] == (1 + 1 / 2) / 4
    assert abs(figures["ndcg_at_10"] - (1 + 1 / 1.584962500721156) / 4) < 1e-12


def test_set_takes_hybrid_constants_as_literals() -> None:
    assert retrieval.hybrid_settings(["SYMBOL=0", "KIND_PRIOR={'module': 1.0}"]) == {
        "SYMBOL": 0,
        "KIND_PRIOR": {"module": 1.0},
    }
    assert retrieval.hybrid_settings(["search.questions.ERROR_PRIOR=1.0"]) == {
        "search.questions.ERROR_PRIOR": 1.0
    }
    wrongs = ["SYMBOL", "symbol=1", "NOT_A_CONSTANT=1", "SYMBOL=one", "search.nowhere.X=1"]
    for wrong in [*wrongs, "search.questions.SYMBOL=1"]:
        with pytest.raises(SystemExit, match="--set"):
            retrieval.hybrid_settings([wrong])
