"""The peer benchmark runs end to end on a tiny synthetic tree and synthetic
annotations (semble's format; nothing fetched): semble's NDCG@10 per repository and
category, the benchmark root honoured, the ranking that ``chunkls search --top-k 10``
prints, the figure ``chunkls eval`` prints for the same file, and ``--set``."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import sys
from pathlib import Path

import pytest

from chunkls import cli

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_peer", REPO / "bench" / "peer_benchmark.py")
assert _spec is not None and _spec.loader is not None
peer = importlib.util.module_from_spec(_spec)
sys.modules["bench_peer"] = peer  # its dataclasses look their module up
_spec.loader.exec_module(peer)

GREET = '''"""Greetings."""


class Greeter:
    """Says hello to a visitor."""

    def wave(self):
        return "quokka wombat"


def fetch_greeting():
    """Fetch the zebra greeting from the server."""
    return "zebra"
'''
EMOJI = '''"""Emoji."""


def smile():
    """A face: the platypus grin."""
    return ":)"
'''
README = "# Alpha\n\nThe zebra quokka platypus readme, outside the benchmark root.\n"

ANNOTATIONS = [
    # one word, the class's own file: rank 1 (a symbol)
    {"query": "Greeter", "relevant": ["src/alpha/greet.py"], "secondary": [], "category": "symbol"},
    # its lines: the method's span inside the class's chunk overlaps
    {
        "query": "quokka wombat",
        "relevant": [{"path": "src/alpha/greet.py", "start_line": 8, "end_line": 8}],
        "category": "semantic",
    },
    # a secondary file no result covers: the ideal counts it (1 / (1 + 1/log2 3))
    {
        "query": "platypus grin",
        "relevant": ["src/alpha/emoji.py"],
        "secondary": ["src/alpha/greet.py"],
        "category": "semantic",
    },
    # a file that is not there: the ideal has nothing, the query scores 0
    {"query": "how does the zebra arrive", "relevant": ["src/alpha/gone.py"]},
]


@pytest.fixture
def bench(tmp_path: Path) -> tuple[Path, Path, Path]:
    checkouts, annotations = tmp_path / "checkouts", tmp_path / "annotations"
    package = checkouts / "alpha" / "src" / "alpha"
    package.mkdir(parents=True)
    (package / "greet.py").write_text(GREET)
    (package / "emoji.py").write_text(EMOJI)
    (checkouts / "alpha" / "README.md").write_text(README)
    annotations.mkdir()
    (annotations / "alpha.json").write_text(json.dumps(ANNOTATIONS, indent=2))
    (annotations / "held_out.json").write_text("[]")  # no checkout: not measured
    repos = tmp_path / "repos.json"
    spec = {"name": "alpha", "language": "python", "url": "", "revision": "0"}
    repos.write_text(json.dumps([{**spec, "benchmark_root": "src"}]))
    return checkouts, annotations, repos


def run_bench(
    bench: tuple[Path, Path, Path], tmp_path: Path, *extra: str
) -> tuple[dict[str, object], str]:
    checkouts, annotations, repos = bench
    out = tmp_path / "peer.json"
    argv = [str(checkouts), str(annotations), "--repos", str(repos), "--json", str(out)]
    buffer = io.StringIO()
    stdout, sys.stdout = sys.stdout, buffer
    try:
        assert peer.main([*argv, *extra]) == 0
    finally:
        sys.stdout = stdout
    return json.loads(out.read_text()), buffer.getvalue()


SECONDARY_MISSED = 1 / (1 + 1 / math.log2(3))


def test_semble_ndcg_per_repository_and_category(
    bench: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    report, printed = run_bench(bench, tmp_path)
    assert report["settings"]["repos"] == ["alpha"]  # type: ignore[index]
    for mode in ("hybrid", "bm25"):
        figures = report["modes"][mode]  # type: ignore[index]
        alpha = figures["repos"]["alpha"]
        assert alpha["queries"] == 4
        # the fourth query has no category: semble's guess ("how ...": architecture)
        assert alpha["category_queries"] == {"architecture": 1, "semantic": 2, "symbol": 1}
        assert alpha["categories"] == pytest.approx(
            {"architecture": 0.0, "semantic": (1 + SECONDARY_MISSED) / 2, "symbol": 1.0}
        )
        assert alpha["ndcg_at_10"] == pytest.approx((1 + 1 + SECONDARY_MISSED + 0) / 4)
        # one repository: its figures are the mean
        assert figures["ndcg_at_10"] == pytest.approx(alpha["ndcg_at_10"])
        assert figures["categories"] == pytest.approx(alpha["categories"])
        assert f"| **mean** | **{alpha['ndcg_at_10']:.3f}** |" in printed
    # numbers only: no query text nor path of the annotations is written
    written = json.dumps(report)
    assert "zebra" not in written and "greet.py" not in written


def test_the_benchmark_root_is_what_is_indexed(
    bench: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Without repos.json the whole checkout is indexed: the README (outside src/)
    then answers the zebra query too, and the chunk count grows."""
    rooted, _ = run_bench(bench, tmp_path)
    checkouts, annotations, _ = bench
    out = tmp_path / "whole.json"
    sys_out, sys.stdout = sys.stdout, io.StringIO()
    try:
        peer.main([str(checkouts), str(annotations), "--json", str(out), "--mode", "bm25"])
    finally:
        sys.stdout = sys_out
    whole = json.loads(out.read_text())
    chunks = rooted["modes"]["bm25"]["repos"]["alpha"]["chunks"]  # type: ignore[index]
    assert whole["modes"]["bm25"]["repos"]["alpha"]["chunks"] > chunks


def test_the_ranking_is_chunkls_search_top_10(
    bench: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkouts = bench[0]
    run_bench(bench, tmp_path, "--verbose")
    said = capsys.readouterr().err
    root = checkouts / "alpha" / "src"
    for query in [entry["query"] for entry in ANNOTATIONS]:
        for mode in ("hybrid", "bm25"):
            out = io.StringIO()
            argv = ["search", query, "--root", str(root), "--top-k", "10", "--json", "--mode", mode]
            assert cli.main([*argv, "--no-cache"], out, io.StringIO()) == 0
            ids = [hit["chunk_id"] for hit in json.loads(out.getvalue())["results"]]
            lines = said.splitlines()
            at = next(
                i
                for i, text in enumerate(lines)
                if text.startswith(f"  alpha {mode} ") and text.endswith(f"q={query!r}")
            )
            top = next(text for text in lines[at:] if text.strip().startswith("top: "))
            assert top.strip() == f"top: {ids[:5]!r}"


def test_chunkls_eval_prints_the_same_figure(
    bench: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    report, _ = run_bench(bench, tmp_path)
    checkouts, annotations, _ = bench
    out = io.StringIO()
    argv = ["eval", str(annotations / "alpha.json"), "--root", str(checkouts / "alpha" / "src")]
    assert cli.main([*argv, "--json", "--no-cache"], out, io.StringIO()) == 0
    record = json.loads(out.getvalue())
    for mode in ("hybrid", "bm25"):
        bench_figures = report["modes"][mode]["repos"]["alpha"]  # type: ignore[index]
        eval_figures = record["rankings"][mode]
        assert eval_figures["ndcg_at_k"] == pytest.approx(bench_figures["ndcg_at_10"])
        assert {c: f["ndcg_at_k"] for c, f in eval_figures["categories"].items()} == (
            pytest.approx(bench_figures["categories"])
        )


def test_set_changes_a_constant_for_the_run(bench: tuple[Path, Path, Path], tmp_path: Path) -> None:
    from chunkls.search import hybrid

    before = hybrid.CANDIDATES
    try:
        report, _ = run_bench(bench, tmp_path, "--set", "CANDIDATES=8", "--mode", "hybrid")
        assert hybrid.CANDIDATES == 8
    finally:
        hybrid.CANDIDATES = before
    assert report["settings"]["set"] == {"chunkls.search.hybrid.CANDIDATES": 8}  # type: ignore[index]
    assert list(report["modes"]) == ["hybrid"]  # type: ignore[call-overload]


def test_best_part_lines_can_match_the_spans(
    bench: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """The span of ``wave`` (line 8): the class's chunk (lines 4-8) covers it, and
    so does its best part for the query (the method, lines 7-8); a span of the
    class's docstring (line 5) only the whole chunk covers, when the method answers."""
    annotations = bench[1]
    spans = [
        {"query": "quokka wombat", "relevant": [{"path": p, "start_line": a, "end_line": b}]}
        for p, a, b in (("src/alpha/greet.py", 8, 8), ("src/alpha/greet.py", 5, 5))
    ]
    (annotations / "alpha.json").write_text(json.dumps(spans))
    chunk, _ = run_bench(bench, tmp_path, "--mode", "hybrid")
    part, _ = run_bench(bench, tmp_path, "--mode", "hybrid", "--lines", "part")
    assert chunk["settings"]["lines"] == "chunk" and part["settings"]["lines"] == "part"  # type: ignore[index]
    by_chunk = chunk["modes"]["hybrid"]["repos"]["alpha"]["ndcg_at_10"]  # type: ignore[index]
    by_part = part["modes"]["hybrid"]["repos"]["alpha"]["ndcg_at_10"]  # type: ignore[index]
    assert (by_chunk, by_part) == (1.0, 0.5)


def test_a_baseline_run_gives_the_differences(
    bench: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    run_bench(bench, tmp_path)
    baseline = tmp_path / "baseline.json"
    (tmp_path / "peer.json").rename(baseline)
    _, printed = run_bench(bench, tmp_path, "--baseline", str(baseline))
    assert "hybrid against the baseline: NDCG@10 +0.000, architecture +0.000" in printed
    assert "bm25 against the baseline: NDCG@10 +0.000" in printed
    assert ", alpha +0.000" in printed
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit, match=r"not a peer_benchmark\.py JSON"):
        run_bench(bench, tmp_path, "--baseline", str(bad))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "NOPE=1"], "--set NOPE=1: not NAME=VALUE of chunkls.search.hybrid"),
        (["--set", "CANDIDATES=eight"], "'eight' is no Python literal"),
        (["--set", "nowhere.X=1"], "not NAME=VALUE of chunkls.nowhere"),
        (["--repo", "held_out"], "no checkout and annotation file for: held_out"),
    ],
)
def test_bad_arguments_say_what_is_wrong(
    bench: tuple[Path, Path, Path], tmp_path: Path, argv: list[str], message: str
) -> None:
    checkouts, annotations, _ = bench
    with pytest.raises(SystemExit, match=message.replace("(", r"\(")):
        peer.main([str(checkouts), str(annotations), "--json", str(tmp_path / "x.json"), *argv])


def test_missing_folders_are_named(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="not a directory of checkouts"):
        peer.main([str(tmp_path / "none"), str(tmp_path)])
    with pytest.raises(SystemExit, match="not a directory of annotation files"):
        peer.main([str(tmp_path), str(tmp_path / "none")])
