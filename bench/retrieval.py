"""Code-search quality benchmark (CodeSearchNet style), offline, beside reference BM25s.

    uv run python bench/retrieval.py [--tree DIR | --stdlib-packages P ...] [--queries N]
        [--seed S] [--mode M ...] [--json PATH] [--misses N]

The corpus is a copy (in a temporary directory) of some of the installed Python
standard library's packages, or of any tree (``--tree``), with the docstring of
every top-level function and class removed. Each removed docstring's first
sentence, the definition's name taken out, is a query; the definition's chunk is
the one relevant answer. Every chunkls search mode and two reference libraries
(``bm25s``, ``rank_bm25``) answer the same queries over the same chunks; each is
measured in a fresh child process (index time and memory, query latency, ranks).
Prints a Markdown table and writes JSON (default ``bench/retrieval.json``).

Everything specific to chunkls's API (its modes, indexing, search, chunks and
tokenizer) is in one section, ``chunkls_*``: rewire those functions for a new API.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from stats import percentile

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))

Result = dict[str, Any]
Search = Callable[[str, int], list[str]]
"""A search: (query, top_k) -> ranked chunk IDs, best first."""

DEFAULT_PACKAGES = ["email", "json", "http", "asyncio"]
DEFAULT_PACKAGES += ["logging", "urllib", "concurrent", "importlib"]
TOP_K = 10
"""Results a user asks for (the timed calls, and the @10 metrics)."""
DEPTH = 100
"""Results asked for to find the target's rank (a rank beyond it is null)."""
MIN_WORDS = 3
"""A query with fewer words (after the name is taken out) is skipped."""
REFERENCES = ["bm25s", "rank_bm25"]
REFERENCE_LABELS = {
    "bm25s": "bm25s (own tokenizer, en stop words)",
    "rank_bm25": "rank_bm25 BM25Okapi (chunkls tokens)",
}


# -- chunkls: everything specific to chunkls's API is in this section -----------------


def chunkls_modes() -> list[str]:
    """Every search mode chunkls offers, the default first."""
    try:
        from chunkls.search.modes import MODES
    except ImportError:  # a tree before search modes: BM25 only
        return ["bm25"]
    return list(MODES)


def chunkls_load() -> Any:
    """chunkls's ``build_index`` (a child imports it before measuring)."""
    from chunkls.index.session import build_index

    return build_index


def chunkls_index(root: Path, mode: str) -> object:
    """Index a tree as the CLI does (no cache) for one search mode."""
    return chunkls_load()([root], cache_dir=None)


def chunkls_search(index: Any, query: str, top_k: int, mode: str) -> list[str]:
    """The chunk IDs a search in one mode returns, best first."""
    if chunkls_modes() == ["bm25"]:
        hits = index.queries.search(query, top_k)
    else:
        hits = index.queries.search(query, top_k, mode)
    return [hit.item.chunk.chunk_id for hit in hits]


def chunkls_chunks(index: Any) -> list[tuple[str, str]]:
    """Every chunk of an index as (chunk ID, text), in corpus order."""
    return [(entry.chunk.chunk_id, entry.chunk.text) for entry in index.queries.chunks()]


def chunkls_tokenize(text: str) -> list[str]:
    """chunkls's code-aware tokenizer."""
    try:
        from chunkls.search.tokens import tokenize
    except ImportError:  # the layout before the package was restructured
        from chunkls.tokens import tokenize  # type: ignore[no-redef]
    result: list[str] = tokenize(text)
    return result


# -- (end of the chunkls section) -------------------------------------------------------


# -- the corpus: a copy with the top-level docstrings removed -------------------------


@dataclass(frozen=True)
class Docstring:
    """A top-level definition's docstring, removed from the copy."""

    name: str
    kind: str
    """``function`` or ``class`` (as in chunk IDs)."""
    text: str
    """The docstring, cleaned (``inspect.cleandoc``)."""


@dataclass(frozen=True)
class Candidate:
    """A removed docstring and the chunk ID of its definition."""

    target: str
    name: str
    kind: str
    docstring: str


@dataclass(frozen=True)
class Pair:
    """A query and the one chunk that answers it."""

    query: str
    target: str
    kind: str


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _line_starts(source: str) -> list[int]:
    """The offset of each line's first character (lines as ``ast`` counts them)."""
    starts = [0]
    for match in _LINE.finditer(source):
        starts.append(match.end())
    return starts


def _offset(source: str, starts: list[int], lineno: int, col: int) -> int:
    """The character offset of an ``ast`` position (``col`` counts UTF-8 bytes)."""
    line = source[starts[lineno - 1] : starts[lineno] if lineno < len(starts) else None]
    return starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))


def _line_end(source: str, at: int) -> int:
    """The offset of the end of the line ``at`` is on, before its line break."""
    match = re.compile(r"\r\n|\r|\n").search(source, at)
    return match.start() if match else len(source)


def _edits(
    source: str, nodes: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef], clean: bool
) -> list[tuple[int, int, str]]:
    """(start, end, replacement) removing each node's docstring: ``clean`` takes the
    docstring's lines out where the body goes on, else it is replaced by ``pass``."""
    starts = _line_starts(source)
    edits = []
    for node in nodes:
        expr = node.body[0]
        assert expr.end_lineno is not None and expr.end_col_offset is not None
        start = _offset(source, starts, expr.lineno, expr.col_offset)
        end = _offset(source, starts, expr.end_lineno, expr.end_col_offset)
        line_start = starts[expr.lineno - 1]
        line_end = _line_end(source, end)
        prefix, suffix = source[line_start:start], source[end:line_end]
        if len(node.body) == 1 or not clean:
            edits.append((start, end, "pass"))
        elif suffix.lstrip(" \t").startswith(";"):  # `"doc"; x = 1`
            rest = len(suffix) - len(suffix.lstrip(" \t")) + 1
            rest += len(suffix[rest:]) - len(suffix[rest:].lstrip(" \t"))
            edits.append((start, end + rest, ""))
        elif not prefix.strip() and not suffix.strip():  # the docstring's own lines
            after = starts[expr.end_lineno] if expr.end_lineno < len(starts) else len(source)
            edits.append((line_start, after, ""))
        elif not prefix.strip() and suffix.strip().startswith("#"):  # a comment after it
            edits.append((start, line_end, suffix.strip()))
        else:
            edits.append((start, end, "pass"))
    return edits


def _apply(source: str, edits: list[tuple[int, int, str]]) -> str:
    """The source with non-overlapping edits applied."""
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def _parse(source: str) -> ast.Module | None:
    """The module's AST, or None when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _top_level_names(module: ast.Module) -> list[str]:
    return [
        node.name
        for node in module.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]


def strip_docstrings(source: str) -> tuple[str, list[Docstring]] | None:
    """The source without the docstrings of its top-level functions and classes
    (a body left empty gets ``pass``), and those docstrings; None if it does not
    parse (or the edited text would not)."""
    module = _parse(source)
    if module is None:
        return None
    nodes = [
        node
        for node in module.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and ast.get_docstring(node, clean=False) is not None
    ]
    if not nodes:
        return source, []
    names = _top_level_names(module)
    for clean in (True, False):
        edited = _apply(source, _edits(source, nodes, clean))
        after = _parse(edited)
        if after is not None and _top_level_names(after) == names:
            removed = [
                Docstring(
                    node.name,
                    "class" if isinstance(node, ast.ClassDef) else "function",
                    ast.get_docstring(node, clean=True) or "",
                )
                for node in nodes
            ]
            return edited, removed
    return None


def copy_corpus(sources: list[tuple[Path, str]], dest: Path) -> list[Candidate]:
    """Copy each (directory, relative destination) under ``dest`` with the top-level
    docstrings removed from its Python files; the removed docstrings. A file that is
    not UTF-8 or does not parse is copied unchanged and gives none."""
    candidates: list[Candidate] = []

    def copy(src: str, dst: str) -> str:
        if not src.endswith(".py"):
            return str(shutil.copy2(src, dst))
        data = Path(src).read_bytes()
        try:
            stripped = strip_docstrings(data.decode("utf-8"))
        except UnicodeDecodeError:
            stripped = None
        if stripped is None:
            return str(shutil.copy2(src, dst))
        text, removed = stripped
        Path(dst).write_bytes(text.encode("utf-8"))
        shutil.copystat(src, dst)
        rel_path = Path(dst).relative_to(dest).as_posix()
        for doc in removed:
            target = f"{rel_path}#{doc.kind}-{doc.name}"
            candidates.append(Candidate(target, doc.name, doc.kind, doc.text))
        return dst

    for src, rel in sources:
        shutil.copytree(
            src,
            dest / rel,
            symlinks=True,
            ignore=shutil.ignore_patterns(".git", "__pycache__"),
            copy_function=copy,
            ignore_dangling_symlinks=True,
            dirs_exist_ok=True,
        )
    return candidates


# -- queries ---------------------------------------------------------------------------


def first_sentence(docstring: str) -> str:
    """A docstring's first sentence: up to the first ``. ``, ``.\\n`` or blank line,
    whitespace collapsed."""
    text = re.split(r"\n[ \t]*\n", docstring.strip(), maxsplit=1)[0]
    end = re.search(r"\.[ \n]", text)
    if end:
        text = text[: end.start() + 1]
    return " ".join(text.split())


def remove_name(text: str, name: str) -> str:
    """The text without the name as a whole word (any case), nor the name in
    backticks or a Sphinx role (``:func:`name```, ````name````); nothing else goes."""
    escaped = re.escape(name)
    marked = rf"(?::(?:[A-Za-z]+:){{1,2}})?(`{{1,2}})~?{escaped}\1"
    text = re.sub(marked, " ", text, flags=re.IGNORECASE)
    text = re.sub(rf"(?<!\w){escaped}(?!\w)", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def word_count(text: str) -> int:
    """Whitespace-separated words with a letter or digit in them."""
    return sum(1 for word in text.split() if re.search(r"\w", word))


def make_query(docstring: str, name: str) -> str | None:
    """The query for a docstring: its first sentence without the name; None if
    fewer than ``MIN_WORDS`` words are left."""
    query = remove_name(first_sentence(docstring), name)
    return query if word_count(query) >= MIN_WORDS else None


def eligible_pairs(
    candidates: Iterable[Candidate], id_counts: Counter[str]
) -> tuple[list[Pair], Counter[str]]:
    """The pairs whose query is long enough and whose target is one chunk of the
    corpus, sorted; and how many were skipped, by reason."""
    pairs: list[Pair] = []
    skipped: Counter[str] = Counter()
    for candidate in candidates:
        query = make_query(candidate.docstring, candidate.name)
        if query is None:
            skipped["query under 3 words"] += 1
        elif id_counts[candidate.target] == 0:
            skipped["target not a chunk"] += 1
        elif id_counts[candidate.target] > 1:
            skipped["target ID not unique"] += 1
        else:
            pairs.append(Pair(query, candidate.target, candidate.kind))
    return sorted(pairs, key=lambda p: (p.target, p.query)), skipped


def draw(pairs: list[Pair], count: int, seed: int) -> list[Pair]:
    """``count`` pairs drawn with a fixed seed."""
    return random.Random(seed).sample(pairs, min(count, len(pairs)))


# -- children: one engine each, in a fresh process -------------------------------------


def rss_mb() -> float:
    """This process's resident memory now, in MB."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return peak_rss_mb()


def peak_rss_mb() -> float:
    """This process's peak resident memory, in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def run_queries(search: Search, pairs: list[Pair]) -> Result:
    """Each query timed (top ``TOP_K``, after one warm-up call), then the target's
    rank among the first ``DEPTH`` results and the top 3 IDs."""
    samples: list[float] = []
    ranks: list[int | None] = []
    top3: list[list[str]] = []
    for pair in pairs:
        search(pair.query, TOP_K)
        started = time.perf_counter()
        search(pair.query, TOP_K)
        samples.append((time.perf_counter() - started) * 1000)
        ranked = search(pair.query, DEPTH)
        ranks.append(ranked.index(pair.target) + 1 if pair.target in ranked else None)
        top3.append(ranked[:3])
    return {
        "p50_ms": percentile(samples, 50) if samples else None,
        "p95_ms": percentile(samples, 95) if samples else None,
        "ranks": ranks,
        "top3": top3,
    }


def _measured(build: Callable[[], Search], pairs: list[Pair]) -> Result:
    """Build an engine (timed; peak memory over the memory before), then query it."""
    before = rss_mb()
    started = time.perf_counter()
    search = build()
    seconds = time.perf_counter() - started
    megabytes = peak_rss_mb() - before
    # worker processes the build started and waited for (not in index_mb)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    workers_mb = workers / 2**20 if sys.platform == "darwin" else workers / 1024
    return {
        "index_s": seconds,
        "index_mb": megabytes,
        "index_workers_peak_mb": workers_mb or None,
        **run_queries(search, pairs),
    }


def hybrid_settings(assignments: list[str]) -> dict[str, Any]:
    """``--set NAME=VALUE`` as constants of ``chunkls.search.hybrid`` (``module.NAME``:
    of ``chunkls.<module>``; a Python literal each): what an ablation or a tuning run
    changes."""
    settings: dict[str, Any] = {}
    for assignment in assignments:
        name, equals, written = assignment.partition("=")
        module = _settings_module(name)
        constant = name.rpartition(".")[2]
        if not equals or not constant.isupper() or not hasattr(module, constant):
            known = ", ".join(n for n in vars(module) if n.isupper() and not n.startswith("_"))
            raise SystemExit(f"--set {assignment}: not NAME=VALUE of {module.__name__} ({known})")
        try:
            settings[name] = ast.literal_eval(written)
        except (ValueError, SyntaxError) as error:
            raise SystemExit(f"--set {assignment}: {written!r} is no Python literal") from error
    return settings


def _settings_module(name: str) -> Any:
    """The module a ``--set`` name's constant is in (``chunkls.search.hybrid``'s if
    the name has no module)."""
    module = name.rpartition(".")[0] or "search.hybrid"
    try:
        return importlib.import_module(f"chunkls.{module}")
    except ImportError:
        raise SystemExit(f"--set {name}: no module chunkls.{module}") from None


def child_mode(work: Path, mode: str, pairs: list[Pair]) -> Result:
    """A chunkls mode: the tree indexed, then searched (with ``--set``'s constants)."""
    chunkls_load()
    for name, value in json.loads((work / "settings.json").read_text()).items():
        setattr(_settings_module(name), name.rpartition(".")[2], value)

    def build() -> Search:
        index = chunkls_index(work / "corpus", mode)
        return lambda query, top_k: chunkls_search(index, query, top_k, mode)

    return _measured(build, pairs)


def child_bm25s(chunks: list[tuple[str, str]], pairs: list[Pair]) -> Result:
    """bm25s with its own tokenizer (English stop words), k1=1.5, b=0.75."""
    import bm25s

    ids = [chunk_id for chunk_id, _ in chunks]
    docs = [f"{chunk_id}\n{text}" for chunk_id, text in chunks]

    def build() -> Search:
        tokens = bm25s.tokenize(docs, stopwords="en", show_progress=False)
        retriever = bm25s.BM25(k1=1.5, b=0.75)
        retriever.index(tokens, show_progress=False)
        vocab = retriever.vocab_dict

        def search(query: str, top_k: int) -> list[str]:
            words = bm25s.tokenize(query, stopwords="en", return_ids=False, show_progress=False)
            known = [word for word in words[0] if word in vocab] if words else []
            if not known:
                return []
            found, scores = retriever.retrieve(
                [known], k=min(top_k, len(ids)), show_progress=False, n_threads=0
            )
            return [ids[i] for i, s in zip(found[0], scores[0], strict=True) if s > 0]

        return search

    return _measured(build, pairs)


def child_rank_bm25(chunks: list[tuple[str, str]], pairs: list[Pair]) -> Result:
    """rank_bm25's ``BM25Okapi`` on chunkls's tokens, k1=1.5, b=0.75."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    chunkls_tokenize("")
    ids = [chunk_id for chunk_id, _ in chunks]
    docs = [f"{chunk_id}\n{text}" for chunk_id, text in chunks]

    def build() -> Search:
        okapi = BM25Okapi([chunkls_tokenize(doc) for doc in docs], k1=1.5, b=0.75)

        def search(query: str, top_k: int) -> list[str]:
            scores = okapi.get_scores(chunkls_tokenize(query))
            order = np.argsort(-scores, kind="stable")[:top_k]
            return [ids[i] for i in order.tolist() if scores[i] > 0]

        return search

    return _measured(build, pairs)


def child_main(kind: str, work: Path) -> Result:
    """One child's measurement (``mode:NAME`` or a reference's name)."""
    pairs = [Pair(**pair) for pair in json.loads((work / "pairs.json").read_text())]
    if kind.startswith("mode:"):
        return child_mode(work, kind.removeprefix("mode:"), pairs)
    chunks = [(c, t) for c, t in json.loads((work / "chunks.json").read_text())]
    if kind == "bm25s":
        return child_bm25s(chunks, pairs)
    if kind == "rank_bm25":
        return child_rank_bm25(chunks, pairs)
    raise ValueError(f"unknown child {kind!r}")


def run_child(kind: str, work: Path) -> Result:
    """Run one measurement in a fresh process; its JSON result."""
    command = [sys.executable, __file__, "--child", kind, "--work", str(work)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} child failed:\n{done.stderr[-3000:]}")
    result: Result = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- figures ---------------------------------------------------------------------------


def metrics(ranks: list[int | None]) -> Result:
    """R@1, R@10, MRR@10 and nDCG@10 (one relevant chunk per query)."""
    n = len(ranks) or 1
    found = [rank for rank in ranks if rank is not None and rank <= TOP_K]
    return {
        "r_at_1": sum(1 for rank in found if rank == 1) / n,
        "r_at_10": len(found) / n,
        "mrr_at_10": sum(1 / rank for rank in found) / n,
        "ndcg_at_10": sum(1 / math.log2(rank + 1) for rank in found) / n,
    }


def miss_breakdown(pairs: list[Pair], result: Result, lengths: dict[str, int]) -> Result:
    """Of the queries whose target is not first: the wrong top hit's length against
    the target's, the share of wrong top hits that are module chunks, and R@1 by
    the target's kind."""
    wrong, targets = [], []
    for pair, rank, top in zip(pairs, result["ranks"], result["top3"], strict=True):
        if rank != 1 and top:
            wrong.append(top[0])
            targets.append(pair.target)
    by_kind: Result = {}
    for kind in ("function", "class"):
        kind_ranks = [r for p, r in zip(pairs, result["ranks"], strict=True) if p.kind == kind]
        by_kind[kind] = {
            "queries": len(kind_ranks),
            "r_at_1": metrics(kind_ranks)["r_at_1"] if kind_ranks else None,
        }
    return {
        "misses": sum(1 for rank in result["ranks"] if rank != 1),
        "misses_with_no_hit": sum(1 for top in result["top3"] if not top),
        "median_chars_wrong_top_hit": statistics.median(lengths[i] for i in wrong)
        if wrong
        else None,
        "median_chars_target": statistics.median(lengths[i] for i in targets) if targets else None,
        "wrong_top_hits_module_share": sum("#module-" in i for i in wrong) / len(wrong)
        if wrong
        else None,
        "r_at_1_by_kind": by_kind,
    }


def _cell(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(rows: list[tuple[str, Result]]) -> str:
    """The Markdown table: one row per mode and reference."""
    header = "| engine | R@1 | R@10 | MRR@10 | nDCG@10 | p50 ms | p95 ms | index s | index MB |"
    lines = [header, "|" + "---|" * 9]
    for name, r in rows:
        cells = [
            name,
            _cell(r["r_at_1"], 3),
            _cell(r["r_at_10"], 3),
            _cell(r["mrr_at_10"], 3),
            _cell(r["ndcg_at_10"], 3),
            _cell(r["p50_ms"], 3),
            _cell(r["p95_ms"], 3),
            _cell(r["index_s"], 3),
            _cell(r["index_mb"], 1),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def print_misses(pairs: list[Pair], result: Result, count: int) -> None:
    """The first ``count`` queries whose target is not first."""
    shown = 0
    for pair, rank, top in zip(pairs, result["ranks"], result["top3"], strict=True):
        if shown >= count:
            break
        if rank == 1:
            continue
        shown += 1
        print(f"- {pair.query!r}\n  target {pair.target} at rank {rank}; top 3: {top}")


def print_breakdown(name: str, breakdown: Result) -> None:
    """The miss diagnostics of one mode."""
    by_kind = breakdown["r_at_1_by_kind"]
    share = breakdown["wrong_top_hits_module_share"]
    print(f"\nmisses of {name} (target not first): {breakdown['misses']}")
    print(
        f"  median chars: wrong top hit {breakdown['median_chars_wrong_top_hit']},"
        f" target {breakdown['median_chars_target']};"
        f" wrong top hits that are module- chunks: {_cell(share and share * 100, 1)}%;"
        f" no hit at all: {breakdown['misses_with_no_hit']}"
    )
    print(
        "  R@1 by target kind: "
        + ", ".join(
            f"{kind} {_cell(v['r_at_1'], 3)} ({v['queries']} queries)"
            for kind, v in by_kind.items()
        )
    )


# -- the run ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="a tree to use instead of the stdlib packages")
    parser.add_argument(
        "--stdlib-packages",
        nargs="+",
        default=DEFAULT_PACKAGES,
        metavar="PACKAGE",
        help=f"standard library packages to copy (default: {' '.join(DEFAULT_PACKAGES)})",
    )
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--mode",
        action="append",
        choices=chunkls_modes(),
        help="a chunkls search mode (repeatable; default: every mode)",
    )
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "retrieval.json")
    parser.add_argument("--misses", type=int, default=0, help="print N missed queries")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a constant of chunkls.search.hybrid for this run (module.NAME=VALUE: of "
        "chunkls.<module>; repeatable; e.g. SYMBOL=0, KIND_PRIOR={}, "
        "search.questions.ERROR_PRIOR=1.0: the ablations of docs/search.md)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def corpus_sources(args: argparse.Namespace) -> list[tuple[Path, str]]:
    """The directories to copy and where each goes in the corpus."""
    if args.tree is not None:
        if not args.tree.is_dir():
            raise SystemExit(f"--tree {args.tree}: not a directory")
        return [(args.tree, ".")]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    missing = [p for p in args.stdlib_packages if not (stdlib / p).is_dir()]
    if missing:
        raise SystemExit(f"not standard library packages in {stdlib}: {', '.join(missing)}")
    return [(stdlib / package, package) for package in args.stdlib_packages]


def run(args: argparse.Namespace) -> Result:
    """Build the corpus and the pairs, measure every engine, report."""
    modes = list(dict.fromkeys(args.mode or chunkls_modes()))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chunkls-retrieval-") as tmp:
        work = Path(tmp)
        candidates = copy_corpus(corpus_sources(args), work / "corpus")
        chunks = chunkls_chunks(chunkls_index(work / "corpus", modes[0]))
        id_counts = Counter(chunk_id for chunk_id, _ in chunks)
        pairs, skipped = eligible_pairs(candidates, id_counts)
        drawn = draw(pairs, args.queries, args.seed)
        print(f"corpus: {len(chunks)} chunks; docstrings removed: {len(candidates)}")
        print(f"eligible pairs: {len(pairs)} (skipped: {dict(sorted(skipped.items()))})")
        print(f"queries drawn: {len(drawn)} (seed {args.seed})\n")
        (work / "chunks.json").write_text(json.dumps(chunks))
        (work / "settings.json").write_text(json.dumps(hybrid_settings(args.set)))
        (work / "pairs.json").write_text(json.dumps([asdict(pair) for pair in drawn]))
        results: dict[str, Result] = {}
        for kind in [f"mode:{mode}" for mode in modes] + REFERENCES:
            raw = run_child(kind, work)
            results[kind] = {**metrics(raw["ranks"]), **raw}
    lengths = {chunk_id: len(text) for chunk_id, text in chunks}
    rows = [(f"chunkls {mode}", results[f"mode:{mode}"]) for mode in modes]
    rows += [(REFERENCE_LABELS[ref], results[ref]) for ref in REFERENCES]
    print(table(rows))
    first = results[f"mode:{modes[0]}"]
    breakdown = miss_breakdown(drawn, first, lengths)
    print_breakdown(f"chunkls {modes[0]}", breakdown)
    if args.misses:
        print(f"\nmissed queries of chunkls {modes[0]} (first {args.misses}):")
        print_misses(drawn, first, args.misses)
    seconds = time.perf_counter() - started
    print(f"\n(the benchmark took {seconds:.1f} s)")
    return {
        "settings": {
            "seed": args.seed,
            "queries_requested": args.queries,
            "tree": str(args.tree) if args.tree else None,
            "stdlib_packages": None if args.tree else args.stdlib_packages,
            "stdlib": None if args.tree else sysconfig.get_paths()["stdlib"],
            "modes": modes,
            "hybrid_settings": hybrid_settings(args.set),
            "top_k": TOP_K,
            "rank_depth": DEPTH,
            "min_words": MIN_WORDS,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "counts": {
            "chunks": len(chunks),
            "docstrings_removed": len(candidates),
            "eligible_pairs": len(pairs),
            "skipped": dict(sorted(skipped.items())),
            "queries": len(drawn),
        },
        "queries": [asdict(pair) for pair in drawn],
        "modes": {mode: results[f"mode:{mode}"] for mode in modes},
        "references": {ref: results[ref] for ref in REFERENCES},
        "miss_breakdown": {"mode": modes[0], **breakdown},
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        print(json.dumps(child_main(args.child, args.work)))
        return 0
    report = run(args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
