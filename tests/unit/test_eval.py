"""``chunkls eval``: retrieval figures (``chunkls.search.metrics``) by hand, and
the command on the sample workspace: each mode, another retriever's run, JSON,
and every bad input named (a line that is not JSON, an unknown ID, a query with
nothing to search, an unknown mode, a gold set that cannot be read)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from chunkls.search import MODES
from chunkls.search.metrics import Figures, figures, ranks

from .test_cli import _private_cache, run  # noqa: F401 (the CLI in this process, its cache private)

WORKSPACE = Path(__file__).parents[1] / "fixtures" / "workspace"


# -- the figures ---------------------------------------------------------------


def test_ranks_are_one_based_first_occurrences() -> None:
    assert ranks(["a", "b", "a", "c"], {"a", "c", "z"}) == {"a": 1, "c": 4, "z": None}


@pytest.mark.parametrize(
    ("ranked", "relevant", "k", "expected"),
    [
        (["a", "b"], {"a"}, 10, (1.0, 1.0, 1.0, 1.0)),
        (["b", "a"], {"a"}, 10, (0.0, 1.0, 0.5, 1 / math.log2(3))),
        (["b", "c", "a"], {"a"}, 2, (0.0, 0.0, 0.0, 0.0)),  # past k: no credit
        ([], {"a"}, 10, (0.0, 0.0, 0.0, 0.0)),
        # two relevant: recall is the share found; nDCG over the best possible
        (["a", "x", "b"], {"a", "b"}, 10, (0.5, 1.0, 1.0, (1 + 0.5) / (1 + 1 / math.log2(3)))),
        (["x", "b"], {"a", "b"}, 10, (0.0, 0.5, 0.5, (1 / math.log2(3)) / (1 + 1 / math.log2(3)))),
    ],
)
def test_figures_of_one_query(
    ranked: list[str], relevant: set[str], k: int, expected: tuple[float, ...]
) -> None:
    got = figures([(ranked, relevant)], k)
    assert got.queries == 1
    assert got[1:] == pytest.approx(expected)


def test_figures_are_means_over_the_queries() -> None:
    got = figures([(["a"], {"a"}), (["x", "b"], {"b"})], 10)
    assert got == pytest.approx(Figures(2, 0.5, 1.0, 0.75, (1 + 1 / math.log2(3)) / 2))
    assert figures([], 10) == Figures(0, 0.0, 0.0, 0.0, 0.0)


# -- the command -----------------------------------------------------------------

GOLD = [
    {"query": "how do I greet someone politely", "relevant": ["app/greet.py#class-Greeter"]},
    {
        "query": "fetch a greeting from the server",
        "relevant": ["app/greet.py#function-fetch_greeting", "app/greet.py#function-greetx"],
    },
    {"query": "emoji face", "relevant": ["app\\/emoji.py#function-smile"]},
    {"query": "unrelated words zebra", "relevant": ["README.md#heading-usage"]},
]


def write_jsonl(path: Path, records: list[object], extra: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(record) for record in records] + list(extra)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "gold.jsonl", GOLD)


def table(out: str) -> dict[str, list[float]]:
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    return {
        cells[0]: [float(cell) for cell in cells[1:]]
        for cells in ([c.strip() for c in row.strip("|").split("|")] for row in rows[1:])
    }


def test_eval_prints_each_modes_figures_and_its_misses(gold: Path) -> None:
    code, out, err = run("eval", str(gold), "--root", str(WORKSPACE))
    assert code == 0
    assert out.startswith("4 queries scored, top 10\n")
    figures_by_mode = table(out)
    assert list(figures_by_mode) == list(MODES)
    for values in figures_by_mode.values():
        assert len(values) == 4 and all(0.0 <= value <= 1.0 for value in values)
    # the zebra query finds nothing: a miss in every mode, with what its chunk got
    for mode in MODES:
        assert f"{mode} missed" in out
    assert "line 4: 'unrelated words zebra': README.md#heading-usage not in the first 100" in out
    # an ID that resolves to nothing: reported as check does, and not a miss
    assert "app/greet.py#function-greetx" not in out
    assert err.count("unknown chunk ID app/greet.py#function-greetx") == 1
    assert "(did you mean app/greet.py#function-greet?)" in err
    assert f"{gold}:2:" in err


def test_the_hybrid_default_finds_what_bm25_ranks_lower(gold: Path) -> None:
    _, out, _ = run("eval", str(gold), "--root", str(WORKSPACE))
    by_mode = table(out)
    assert by_mode["hybrid"][2] > by_mode["bm25"][2]  # MRR@10


def test_one_mode_and_top_k(gold: Path) -> None:
    code, out, _ = run(
        "eval", str(gold), "--root", str(WORKSPACE), "--mode", "bm25", "--top-k", "1"
    )
    assert code == 0
    assert list(table(out)) == ["bm25"]
    assert "| ranking | R@1 | R@1 | MRR@1 | nDCG@1 |" in out


def test_a_run_is_scored_as_the_modes_are(gold: Path, tmp_path: Path) -> None:
    run_file = write_jsonl(
        tmp_path / "run.jsonl",
        [
            {
                "query": GOLD[0]["query"],
                "ranked": ["app/greet.py#function-greet", GOLD[0]["relevant"][0]],
            },
            {"query": "emoji face", "ranked": ["app/emoji.py#function-smile"]},
        ],
    )
    code, out, err = run("eval", str(gold), "--root", str(WORKSPACE), "--run", str(run_file))
    assert code == 0
    label = f"run {run_file}"
    # 4 queries: the Greeter at rank 2 (0.5), smile at 1, two not ranked
    assert table(out)[label] == pytest.approx([0.25, 0.5, 0.375, 0.408], abs=5e-4)
    assert "fetch_greeting not ranked" in out
    assert f"{run_file}: no ranking for 2 gold queries (scored empty)" in err


def test_json_figures(gold: Path) -> None:
    code, out, _ = run("eval", str(gold), "--root", str(WORKSPACE), "--json")
    assert code == 0
    record = json.loads(out)
    assert record["top_k"] == 10 and record["queries"] == 4
    assert list(record["rankings"]) == list(MODES)
    hybrid = record["rankings"]["hybrid"]
    assert set(hybrid) == {
        "label", "queries", "recall_at_1", "recall_at_k", "mrr_at_k", "ndcg_at_k", "categories",
        "misses",
    }  # fmt: skip
    assert hybrid["categories"] == {}  # (no query names one)
    assert hybrid["misses"] == [
        {"line": 4, "query": "unrelated words zebra", "ranks": {"README.md#heading-usage": None}}
    ]
    [unknown] = record["unknown"]
    assert unknown["chunk_id"] == "app/greet.py#function-greetx"
    assert unknown["line"] == 2 and unknown["suggestions"][0] == "app/greet.py#function-greet"


def test_malformed_lines_are_named_and_the_rest_scored(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "gold.jsonl",
        GOLD[:1],
        extra=(
            "not json",
            '["a list"]',
            '{"query": "smile", "relevant": []}',
            '{"query": "smile", "relevant": "app/emoji.py#function-smile"}',
            '{"relevant": ["app/emoji.py#function-smile"]}',
            "",
            '{"query": "how does it", "relevant": ["app/greet.py#class-Greeter"]}',
            '{"query": "emoji face", "relevant": ["app/emoji.py#function-smile"]}',
        ),
    )
    code, out, err = run("eval", str(path), "--root", str(WORKSPACE))
    assert code == 0
    assert out.startswith("2 queries scored")
    said = err.splitlines()
    assert f"chunkls: {path}:2: not JSON (Expecting value); left out" in said
    assert f"chunkls: {path}:3: no 'query' string; left out" in said
    assert f"chunkls: {path}:4: no relevant chunk ID or file; left out" in said
    assert (
        f"chunkls: {path}:5: 'relevant' is not a list of chunk IDs or file targets; left out"
        in said
    )
    assert f"chunkls: {path}:6: no 'query' string; left out" in said
    assert any(
        line.startswith(f"chunkls: {path}:8: the query has no searchable terms") for line in said
    )
    assert len(said) == 6


def test_quiet_keeps_stderr_empty(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "gold.jsonl", GOLD, extra=("not json",))
    code, _, err = run("eval", str(path), "--root", str(WORKSPACE), "-q")
    assert (code, err) == (0, "")


def test_nothing_to_score_exits_1(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "gold.jsonl", [{"query": "smile", "relevant": ["app/gone.py#function-x"]}]
    )
    code, out, err = run("eval", str(path), "--root", str(WORKSPACE))
    assert code == 1
    assert out.startswith("0 queries scored")
    assert "unknown chunk ID app/gone.py#function-x" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mode", "dense"], "invalid choice: 'dense' (choose from 'hybrid', 'bm25')"),
        (["--top-k", "0"], "--top-k"),
        (["--run", "{missing}"], "cannot read it"),
    ],
)
def test_usage_errors_exit_2(gold: Path, tmp_path: Path, argv: list[str], message: str) -> None:
    argv = [arg.replace("{missing}", str(tmp_path / "missing.jsonl")) for arg in argv]
    code, _, err = run("eval", str(gold), "--root", str(WORKSPACE), *argv)
    assert code == 2
    assert message in err


def test_a_gold_set_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    code, _, err = run("eval", str(missing), "--root", str(WORKSPACE))
    assert code == 2
    assert f"{missing}: cannot read it" in err
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"query": "caf\xe9", "relevant": ["a.py#module-1"]}\n')
    code, _, err = run("eval", str(latin), "--root", str(WORKSPACE))
    assert code == 2
    assert f"{latin}: cannot read it" in err


def test_the_worked_example_in_the_docs_is_what_eval_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/cli.md's example: its files written, its command run, its output."""
    docs = (Path(__file__).parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    section = docs[docs.index("## `chunkls eval`") :]
    block = section[section.index("```console\n") + 11 : section.index("\n```\n")]
    files: dict[str, list[str]] = {}
    command, printed, current = "", [], None
    for line in block.splitlines():
        if line.startswith("$ cat "):
            current = files.setdefault(line.removeprefix("$ cat "), [])
        elif line.startswith("$ chunkls "):
            command, current = line.removeprefix("$ chunkls "), printed
        elif current is not None:
            current.append(line)
    monkeypatch.chdir(tmp_path)
    for name, lines in files.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = command.replace("tests/fixtures/workspace", str(WORKSPACE)).split()
    code, out, err = run(*argv)
    assert code == 0
    assert err.splitlines() + out.splitlines() == printed


# -- semble-style gold: files and line spans, secondary targets, categories ----------

from chunkls.cli.gold import guess_category, read_gold, target  # noqa: E402
from chunkls.search.metrics import (  # noqa: E402
    Place,
    Span,
    covers,
    path_matches,
    rank_figures,
    target_ranks,
)

SMILE = Place("app/emoji.py#function-smile", "app/emoji.py", 4, 6)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("app/emoji.py#function-smile", "app/emoji.py#function-smile"),  # a chunk ID
        ("app/emoji.py", Span("app/emoji.py")),  # a file
        (" app/emoji.py ", Span("app/emoji.py")),
        ({"path": "app/emoji.py"}, Span("app/emoji.py")),
        ({"path": "app/emoji.py", "start_line": 4, "end_line": 9}, Span("app/emoji.py", 4, 9)),
        ({"path": "a.py", "start_line": "4", "end_line": "4"}, Span("a.py", 4, 4)),  # as semble
    ],
)
def test_targets_as_written(written: object, expected: object) -> None:
    assert target(written) == expected


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("", "an empty target"),
        (3, "3 is no chunk ID, path or {path, lines} object"),
        ({"start_line": 1, "end_line": 2}, "has no 'path' string"),
        ({"path": ""}, "has no 'path' string"),
        ({"path": "a.py", "start_line": 5}, "a.py: start_line and end_line go together"),
        ({"path": "a.py", "end_line": 5}, "a.py: start_line and end_line go together"),
        ({"path": "a.py", "start_line": 9, "end_line": 5}, "start_line 9 is after end_line 5"),
        ({"path": "a.py", "start_line": 0, "end_line": 5}, "start_line 0 is not a line number"),
        ({"path": "a.py", "start_line": 1.5, "end_line": 5}, "start_line 1.5 is not a line"),
        ({"path": "a.py", "start_line": True, "end_line": 5}, "start_line True is not a line"),
        ({"path": "a.py", "start_line": 1, "end_line": "x"}, "end_line 'x' is not a line"),
    ],
)
def test_bad_targets_say_what_is_wrong(written: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("{", r"\{")):
        target(written)


@pytest.mark.parametrize(
    ("source_path", "path", "expected"),
    [
        ("app/emoji.py", "app/emoji.py", True),
        ("emoji.py", "app/emoji.py", True),  # the index's root is below the checkout's
        ("pkg/app/emoji.py", "app/emoji.py", True),  # or above it
        ("app\\emoji.py", "app/emoji.py", True),
        ("app/myemoji.py", "emoji.py", False),  # a suffix, not at a "/"
        ("app/emoji.py", "app/emoji.pyi", False),
        ("other/emoji.py", "app/emoji.py", False),
    ],
)
def test_paths_match_as_semble_matches_them(source_path: str, path: str, expected: bool) -> None:
    assert path_matches(source_path, path) is expected


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        ((4, 6), True),
        ((1, 3), False),  # ends the line before
        ((1, 4), True),  # overlaps the first line only
        ((6, 9), True),  # the last line only
        ((7, 9), False),  # starts the line after
        ((5, 5), True),  # inside
        ((1, 99), True),  # around
        (None, True),  # no lines: the file
    ],
)
def test_a_chunk_covers_lines_it_overlaps(span: tuple[int, int] | None, expected: bool) -> None:
    assert covers(SMILE, Span("app/emoji.py", *(span or (None, None)))) is expected
    assert not covers(SMILE, Span("app/greet.py", *(span or (None, None))))
    assert covers(SMILE, SMILE.chunk_id) and not covers(SMILE, "app/emoji.py#module-1")


def test_semble_ndcg_binary_gains_and_ideal_over_what_the_index_has() -> None:
    greet = Place("app/greet.py#function-greet", "app/greet.py", 17, 20)
    ranked = [greet, SMILE]
    both = (Span("app/greet.py"), Span("app/greet.py", 18, 19))  # one chunk covers both
    got = target_ranks(ranked, (*both, Span("app/emoji.py"), Span("app/gone.py")))
    assert list(got.values()) == [1, 1, 2, None]
    # rank 1 gains once though it covers two targets; the ideal counts four
    ideal = sum(1 / math.log2(i + 2) for i in range(4))
    assert rank_figures([list(got.values())], 10).ndcg_at_k == pytest.approx(
        (1 + 1 / math.log2(3)) / ideal
    )
    assert rank_figures([[]], 10).ndcg_at_k == 0.0  # nothing to find: 0, as semble scores it
    assert rank_figures([[None]], 10) == Figures(1, 0.0, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("BaseModel", "symbol"),
        (" APIRouter ", "symbol"),
        ("how are routes registered", "architecture"),
        ("How does it work", "architecture"),
        ("however long", "semantic"),
        ("middleware stack and CORS", "semantic"),
    ],
)
def test_a_missing_category_is_guessed_as_semble_guesses(query: str, category: str) -> None:
    assert guess_category(query) == category


SEMBLE_GOLD = """[
  {
    "query": "turn a face into an emoji",
    "relevant": ["app/emoji.py"],
    "secondary": [{"path": "app/greet.py", "start_line": 41, "end_line": 42}],
    "category": "semantic"
  },
  {"query": "Greeter", "relevant": [{"path": "app/greet.py", "start_line": 25, "end_line": 26}],
   "secondary": [], "category": "symbol"},
  {"query": "how is a greeting fetched", "relevant": ["app/gone.py"]},
  {"query": "Greeter", "relevant": [{"path": "app/greet.py", "start_line": 9}]},
  {"query": "smile", "relevant": ["app/emoji.py"], "secondary": "app/greet.py"},
  {"query": "smile", "relevant": ["app/emoji.py"], "category": 3},
  {"query": "smile", "relevant": [], "secondary": ["app/emoji.py"]}
]
"""


@pytest.fixture
def semble_gold(tmp_path: Path) -> Path:
    path = tmp_path / "workspace.json"
    path.write_text(SEMBLE_GOLD, encoding="utf-8")
    return path


def test_a_semble_annotation_file_is_read_with_its_lines(semble_gold: Path) -> None:
    gold, problems = read_gold(semble_gold, "g.json")
    assert [(g.line, g.category) for g in gold] == [
        (2, "semantic"), (8, "symbol"), (10, "architecture")  # (guessed)
    ]  # fmt: skip
    assert gold[0].relevant == (Span("app/emoji.py"), Span("app/greet.py", 41, 42))
    assert problems == [
        "g.json:11: 'relevant': app/greet.py: start_line and end_line go together; left out",
        "g.json:12: 'secondary' is not a list of chunk IDs or file targets; left out",
        "g.json:13: 'category' is not a string; left out",
        "g.json:14: no relevant chunk ID or file; left out",
    ]


def test_eval_scores_semble_gold_per_category(semble_gold: Path) -> None:
    code, out, err = run("eval", str(semble_gold), "--root", str(WORKSPACE), "--json")
    assert code == 0
    record = json.loads(out)
    assert record["queries"] == 3  # the one with nothing indexed is scored 0
    assert record["not_indexed"] == [{"line": 10, "target": "app/gone.py"}]
    assert f"{semble_gold}:10: no indexed chunk covers app/gone.py; not counted" in err
    for mode in MODES:
        figures_ = record["rankings"][mode]
        assert set(figures_["categories"]) == {"architecture", "semantic", "symbol"}
        assert figures_["categories"]["architecture"]["ndcg_at_k"] == 0.0
        # the Greeter's class chunk (lines 23-30) covers lines 25-26: found first
        assert figures_["categories"]["symbol"]["ndcg_at_k"] == 1.0
        categories = figures_["categories"].values()
        assert figures_["ndcg_at_k"] == pytest.approx(sum(c["ndcg_at_k"] for c in categories) / 3)


def test_eval_prints_a_table_by_category(semble_gold: Path) -> None:
    code, out, _ = run("eval", str(semble_gold), "--root", str(WORKSPACE), "--mode", "bm25")
    assert code == 0
    assert "nDCG@10 by category (queries)" in out
    assert "| ranking | all (3) | architecture (1) | semantic (1) | symbol (1) |" in out
    bm25_rows = [line for line in out.splitlines() if line.startswith("| bm25 | ")]
    assert len(bm25_rows) == 2  # the figures, then nDCG@10 overall and by category
    cells = bm25_rows[1].strip("|").split("|")
    assert len(cells) == 5 and cells[2].strip() == "0.000" and cells[4].strip() == "1.000"
    assert cells[1].strip() == bm25_rows[0].strip("|").split("|")[4].strip()
    assert "'how is a greeting fetched': nothing in the index to find" in out


def test_chunk_ids_and_files_mix_in_jsonl(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "gold.jsonl",
        [
            {"query": "emoji face", "relevant": ["app/emoji.py#function-smile", "README.md"]},
            {"query": "emoji face", "relevant": ["app/emoji.py"], "category": "semantic"},
        ],
    )
    code, out, _ = run("eval", str(path), "--root", str(WORKSPACE), "--json", "--mode", "bm25")
    assert code == 0
    record = json.loads(out)["rankings"]["bm25"]
    assert record["queries"] == 2
    # only the second query names a category
    assert list(record["categories"]) == ["semantic"]


def test_a_broken_json_array_is_named_once(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(SEMBLE_GOLD.replace('"category": "symbol"},', '"category": "symbol"}'))
    gold, problems = read_gold(path, "b.json")
    assert gold == []
    said = "10: not a JSON array (Expecting ',' delimiter): every query; left out"
    assert problems == [f"b.json:{said}"]
    code, out, err = run("eval", str(path), "--root", str(WORKSPACE))
    assert code == 1 and out.startswith("0 queries scored")
    assert f"chunkls: {path}:{said}" in err
