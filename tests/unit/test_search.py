"""BM25 search: the code-aware tokenizer, scores, ranking, and one-file updates."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.index.session import build_index
from chunkls.search.inverted import BM25Index
from chunkls.search.scorer import K1, B
from chunkls.search.tokens import file_terms, tokenize

from .search_helpers import file_items, scores, search, term_counts
from .strategies import write_tree

# -- the tokenizer -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", []),
        ("hello", ["hello"]),
        ("Hello World", ["hello", "world"]),
        ("chunk_python", ["chunk_python", "chunk", "python"]),
        ("_make_chunk", ["make_chunk", "make", "chunk"]),
        ("__init__", ["init"]),
        ("UPPER_CASE", ["upper_case", "upper", "case"]),
        ("HybridRetriever", ["hybridretriever", "hybrid", "retriever"]),
        ("camelCase", ["camelcase", "camel", "case"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("getHTTPResponse2", ["gethttpresponse2", "get", "http", "response", "2"]),
        ("snake_camelCase", ["snake_camelcase", "snake", "camel", "case"]),
        ("utf8", ["utf8", "utf", "8"]),
        ("x1_y2", ["x1_y2", "x", "1", "y", "2"]),
        ("42", ["42"]),
        ("a-b c.d(e)", ["a", "b", "c", "d", "e"]),
        ("app/x.py#function-greet", ["app", "x", "py", "function", "greet"]),
        ("naïve café", ["naïve", "café"]),
        ("naïveValue", ["naïvevalue"]),  # non-ASCII words are kept whole
        ("Ärger_über", ["ärger_über", "ärger", "über"]),
        ("tab\tand\nnewline", ["tab", "and", "newline"]),
        ("___", []),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens
    assert term_counts(text) == Counter(tokens)


def test_tokenize_docstring_example() -> None:
    assert tokenize("chunk_python(HybridRetriever)") == [
        "chunk_python",
        "chunk",
        "python",
        "hybridretriever",
        "hybrid",
        "retriever",
    ]


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=40))
def test_tokens_are_lowercase_word_characters(text: str) -> None:
    for token in tokenize(text):
        assert token and token == token.lower()
        assert all(ch.isalnum() or ch == "_" for ch in token), token
        assert not token.startswith("_") and not token.endswith("_")


# -- scores -----------------------------------------------------------------------


def index_of(files: dict[str, list[str]]) -> BM25Index[str]:
    index: BM25Index[str] = BM25Index()
    for name, docs in files.items():
        index.add_file((0, name), [(text, f"{name}:{i}") for i, text in enumerate(docs)])
    return index


def test_constants_are_the_usual_ones() -> None:
    assert (K1, B) == (1.5, 0.75)


def test_a_hand_computed_score() -> None:
    index = index_of({"a": ["apple banana", "apple"], "b": ["cherry"]})
    # N = 3 documents of 2, 1 and 1 tokens: avgdl = 4/3
    n, avgdl = 3, 4 / 3
    idf_banana = math.log(1 + (n - 1 + 0.5) / (1 + 0.5))
    banana = idf_banana * (K1 + 1) * 1 / (1 + K1 * (1 - B + B * 2 / avgdl))
    [hit] = search(index, "banana")
    assert hit.item == "a:0"
    assert hit.score == pytest.approx(banana, rel=1e-12)
    assert hit.score == pytest.approx(0.8007, abs=1e-4)
    # a term in 2 of 3 documents; the shorter document wins
    idf_apple = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    short = idf_apple * (K1 + 1) / (1 + K1 * (1 - B + B * 1 / avgdl))
    long = idf_apple * (K1 + 1) / (1 + K1 * (1 - B + B * 2 / avgdl))
    hits = search(index, "apple")
    assert [h.item for h in hits] == ["a:1", "a:0"]
    assert [h.score for h in hits] == pytest.approx([short, long], rel=1e-12)
    # query terms add up; term frequency saturates
    both = search(index, "apple banana")[0]
    assert both.item == "a:0"
    assert both.score == pytest.approx(long + banana, rel=1e-12)
    assert scores(index, "apple banana") == pytest.approx({0: long + banana, 1: short})


def test_term_frequency_and_repeated_query_terms() -> None:
    index = index_of({"a": ["x x x y", "x y y y"], "b": ["z"]})
    n, avgdl = 3, 9 / 3
    idf = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))

    def part(tf: int, dl: int) -> float:
        return idf * (K1 + 1) * tf / (tf + K1 * (1 - B + B * dl / avgdl))

    assert [(h.item, h.score) for h in search(index, "x")] == [
        ("a:0", pytest.approx(part(3, 4))),
        ("a:1", pytest.approx(part(1, 4))),
    ]
    # each query token counts, as the tokenizer emits it
    assert search(index, "x x")[0].score == pytest.approx(2 * part(3, 4))


def test_no_match_empty_query_and_empty_index() -> None:
    index = index_of({"a": ["alpha"]})
    assert search(index, "beta") == []
    assert search(index, "") == []
    assert search(index, "!!! ...") == []
    assert search(BM25Index(), "alpha") == []
    assert scores(index, "beta") == {}
    assert len(index) == 1


def test_top_k_cuts_and_ties_keep_corpus_order() -> None:
    index: BM25Index[str] = BM25Index()
    # added out of order: results still follow (folder position, path, position)
    index.add_file((1, "a.py"), [("same words", "1:a.py:0")])
    index.add_file((0, "b.py"), [("same words", "0:b.py:0"), ("same words", "0:b.py:1")])
    index.add_file((0, "a.py"), [("same words", "0:a.py:0")])
    hits = search(index, "same", top_k=10)
    assert [h.item for h in hits] == ["0:a.py:0", "0:b.py:0", "0:b.py:1", "1:a.py:0"]
    assert len({h.score for h in hits}) == 1
    assert [h.item for h in search(index, "same", top_k=2)] == ["0:a.py:0", "0:b.py:0"]
    assert [h.item for h in search(index, "words same", top_k=1)] == ["0:a.py:0"]


def test_file_items_and_len() -> None:
    index = index_of({"a": ["x", "y"], "b": ["z"]})
    assert list(file_items(index, (0, "a"))) == ["a:0", "a:1"]
    assert list(file_items(index, (0, "missing"))) == []
    assert len(index) == 3
    index.remove_file((0, "a"))
    assert len(index) == 1
    assert list(file_items(index, (0, "a"))) == []
    index.remove_file((0, "a"))  # removing twice is harmless
    assert len(index) == 1


def test_adding_a_file_again_replaces_it() -> None:
    index = index_of({"a": ["old words"], "b": ["other"]})
    index.add_file((0, "a"), [("new words", "a:new")])
    assert search(index, "old") == []
    assert [h.item for h in search(index, "new")] == ["a:new"]
    assert len(index) == 2


# -- incremental updates equal a fresh build -----------------------------------------

WORDS = ["alpha", "beta", "gamma", "delta", "chunk_id", "HybridRetriever", "x", "y"]


def random_corpus(rng: random.Random, files: int) -> dict[str, list[str]]:
    return {
        f"f{i:04d}.py": [
            " ".join(rng.choices(WORDS, k=rng.randint(1, 8))) for _ in range(rng.randint(0, 4))
        ]
        for i in range(files)
    }


def results(index: BM25Index[str], queries: list[str]) -> list[list[tuple[float, str]]]:
    return [[(h.score, h.item) for h in search(index, q, top_k=10_000)] for q in queries]


QUERIES = ["alpha", "beta gamma", "chunk", "chunk_id x", "hybrid retriever", "y y delta", "zeta"]


def fresh(corpus: dict[str, list[str]]) -> BM25Index[str]:
    return index_of(dict(sorted(corpus.items())))


def test_removing_and_re_adding_a_file_gives_a_fresh_builds_scores() -> None:
    rng = random.Random(7)
    corpus = random_corpus(rng, 40)
    index = index_of(corpus)
    expected = results(index, QUERIES)
    for name in ["f0003.py", "f0017.py", "f0039.py"]:
        index.remove_file((0, name))
        without = {k: v for k, v in corpus.items() if k != name}
        assert results(index, QUERIES) == results(fresh(without), QUERIES)
        index.add_file((0, name), [(text, f"{name}:{i}") for i, text in enumerate(corpus[name])])
        assert results(index, QUERIES) == expected  # exactly equal floats, same order


def test_many_removals_compact_and_keep_fresh_scores() -> None:
    """Enough removals and re-additions to make the index drop dead postings."""
    rng = random.Random(11)
    corpus = random_corpus(rng, 3000)
    index = index_of(corpus)
    search(index, "alpha")
    names = sorted(corpus)
    removed = set(rng.sample(names, 2500))
    for name in sorted(removed):
        index.remove_file((0, name))
    # re-add a few (changed) and search between, as an editor session would
    for name in sorted(removed)[:50]:
        corpus[name] = [" ".join(rng.choices(WORDS, k=3))]
        index.add_file((0, name), [(corpus[name][0], f"{name}:0")])
        removed.discard(name)
    search(index, "beta")
    compact = getattr(index, "compact", None)
    if compact is not None:
        compact()
    live = {k: v for k, v in corpus.items() if k not in removed}
    assert len(index) == sum(len(v) for v in live.values())
    assert results(index, QUERIES) == results(fresh(live), QUERIES)


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "search", "compact"]),
        st.integers(0, 5),
        st.lists(st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join), max_size=3),
    ),
    max_size=25,
)


@settings(max_examples=50, deadline=None)
@given(_OPS)
def test_any_sequence_of_updates_equals_a_fresh_build(
    ops: list[tuple[str, int, list[str]]],
) -> None:
    index: BM25Index[str] = BM25Index()
    state: dict[str, list[str]] = {}
    for op, number, docs in ops:
        name = f"f{number}"
        if op == "add":
            index.add_file((0, name), [(text, f"{name}:{i}") for i, text in enumerate(docs)])
            state[name] = docs
        elif op == "remove":
            index.remove_file((0, name))
            state.pop(name, None)
        elif op == "compact" and hasattr(index, "compact"):
            index.compact()
        else:
            search(index, " ".join(docs) or "alpha")
    assert len(index) == sum(len(v) for v in state.values())
    assert results(index, QUERIES) == results(fresh(state), QUERIES)


# -- ranking on a small corpus, through the workspace index ------------------------------

CORPUS = {
    "app/ingest.py": (
        '"""Chunking."""\nimport ast\n\n\n'
        "def _make_chunk(source_path, text, file_type, identity, symbol=None):\n"
        '    return Chunk(chunk_id=f"{source_path}#{identity}", text=text.strip())\n\n\n'
        "def chunk_python(path, root=None):\n    tree = ast.parse(path.read_text())\n"
        "    return [_make_chunk(path, node.name, 'code', 'function', node.name)]\n\n\n"
        "def chunk_markdown(path, root=None):\n    lines = path.read_text().splitlines()\n"
        "    return [_make_chunk(path, line, 'prose', 'heading') for line in lines]\n"
    ),
    "app/retriever.py": (
        "class HybridRetriever:\n    def __init__(self, code_path, prose_path):\n        pass\n\n"
        "    @classmethod\n    def from_disk(cls, top_k_per_retriever):\n        pass\n\n"
        "    def search(self, query):\n        pass\n"
    ),
    "README.md": (
        "# Project\nA retrieval demo.\n\n## Setup\nRun uv sync.\n\n## Search\n"
        "Search the chunks with BM25.\n"
    ),
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "chunk_id source_path identity chunk_python chunk_markdown",
            [
                "app/ingest.py#function-_make_chunk",
                "app/ingest.py#function-chunk_python",
                "app/ingest.py#function-chunk_markdown",
            ],
        ),
        (
            "from_disk classmethod code_path prose_path top_k_per_retriever",
            ["app/retriever.py#class-HybridRetriever"],
        ),
        ("setup uv sync", ["README.md#heading-setup"]),
        ("bm25", ["README.md#heading-search"]),
        ("splitlines", ["app/ingest.py#function-chunk_markdown"]),
        ("heading", ["README.md#heading-project"]),  # IDs are indexed: the shortest wins
        ("module", ["app/ingest.py#module-1"]),  # IDs are indexed too
        ("retrieval", ["README.md#heading-project"]),
    ],
)
def test_ranking_on_a_small_corpus(tmp_path: Path, query: str, expected: list[str]) -> None:
    write_tree(tmp_path, CORPUS)
    index = build_index([tmp_path])
    hits = index.queries.search(query, top_k=len(expected), mode="bm25")
    assert [hit.item.chunk.chunk_id for hit in hits] == expected
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)


def test_full_ranking_is_pinned(tmp_path: Path) -> None:
    write_tree(tmp_path, CORPUS)
    index = build_index([tmp_path])
    hits = index.queries.search("chunk path", top_k=10, mode="bm25")
    assert [(h.item.chunk.chunk_id, round(h.score, 3)) for h in hits] == PINNED


PINNED = [
    ("app/ingest.py#function-chunk_python", 2.432),
    ("app/ingest.py#function-chunk_markdown", 2.432),  # a tie: corpus order
    ("app/ingest.py#function-_make_chunk", 2.369),
    ("app/retriever.py#class-HybridRetriever", 0.794),
]


@pytest.mark.parametrize(
    "texts", [[], [""], ["chunk_id HybridRetriever", "naïve café x_y"], ["a\nb", "b c", "c"]]
)
def test_file_terms_packed_in_one_blob_index_the_same(texts: list[str]) -> None:
    """Workers send a file's terms as one blob; indexed, it is the same file."""
    terms = file_terms(texts)
    packed = terms.packed()
    assert isinstance(packed.terms, bytes) and packed.packed() is packed
    assert tuple(packed.names()) == terms.terms
    items = [f"f:{i}" for i in range(len(texts))]
    plain: BM25Index[str] = BM25Index()
    plain.add_file_terms((0, "f"), items, terms)
    blob: BM25Index[str] = BM25Index()
    blob.add_file_terms((0, "f"), items, packed)
    for query in ["chunk", "café x", "b c", "retriever"]:
        assert search(blob, query) == search(plain, query)


def _snapshot_arrays(index: BM25Index[str]) -> tuple[object, ...]:
    snapshot = index.snapshot(sorted(index.file_keys()))
    segment = snapshot.segment
    return (
        # files without documents sit where they were added: compared as a set
        [(key, count) for key, count in snapshot.files if count],
        sorted(snapshot.files),
        snapshot.terms.names(),
        segment.offsets.tolist(),
        segment.docs.tolist(),
        segment.tfs.tolist(),
        segment.tfs.dtype,
        snapshot.lengths.tolist(),
    )


@pytest.mark.parametrize("batch", [1, 3, 64, 1 << 20])
def test_a_merge_a_few_postings_at_a_time_equals_one_at_once(
    batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merge (compaction) places its postings a batch at a time (``_MERGE_BATCH``),
    dropping removed files' documents and unused terms: the same segment, the
    same snapshot and the same scores as an index built afresh."""
    import chunkls.search.inverted

    rng = random.Random(5)
    corpus = random_corpus(rng, 60)
    removed = set(rng.sample(sorted(corpus), 20))
    monkeypatch.setattr(chunkls.search.inverted, "_MERGE_BATCH", batch)
    index = index_of(corpus)
    for name in sorted(removed):
        index.remove_file((0, name))
    index.add_file((0, "zz_new.py"), [("alpha unique_term_here", "zz_new.py:0")])
    live = {k: v for k, v in corpus.items() if k not in removed}
    live["zz_new.py"] = ["alpha unique_term_here"]
    index.compact()
    monkeypatch.setattr(chunkls.search.inverted, "_MERGE_BATCH", 1 << 20)
    reference = fresh(live)
    reference.compact()
    queries = [*QUERIES, "unique term here"]
    assert results(index, queries) == results(reference, queries)
    assert _snapshot_arrays(index) == _snapshot_arrays(reference)


def test_a_snapshot_of_a_compacted_index_is_its_segment_as_it_is() -> None:
    """After a compaction the snapshot of every file is the main segment itself
    (no copy of the postings), equal to the one cut from an index holding a
    removed file's documents besides."""
    rng = random.Random(9)
    corpus = random_corpus(rng, 40)
    compacted = index_of(corpus)
    compacted.compact()
    snapshot = compacted.snapshot(sorted(compacted.file_keys()))
    assert snapshot.segment is compacted._main
    cut = index_of({**corpus, "zz_gone.py": ["alpha beta gone_term"]})
    search(cut, "alpha")  # merged, with the extra file
    cut.remove_file((0, "zz_gone.py"))  # a dead document: the general path
    assert _snapshot_arrays(cut) == _snapshot_arrays(compacted)
