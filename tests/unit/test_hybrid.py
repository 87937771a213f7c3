"""The hybrid ranking: what it reads of a question (``chunkls.search.english``),
and each thing it weighs (``chunkls.search.hybrid``), shown against ``bm25`` on
small trees where only that thing differs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkls.index.session import build_index
from chunkls.search import DEFAULT_MODE, MODES, english, hybrid, paths, questions
from chunkls.search.english import STOP_WORDS, other_forms, stem, strip_roles
from chunkls.search.files import file_lift
from chunkls.search.modes import mode_problem, query_problem

from .strategies import write_tree


def test_the_modes_and_the_default() -> None:
    assert MODES == ("hybrid", "bm25")
    assert DEFAULT_MODE == "hybrid"
    assert mode_problem("bm25") is None
    assert mode_problem("dense") == "unknown search mode 'dense' (modes: hybrid, bm25)"


@pytest.mark.parametrize("word", ["how", "does", "the", "a", "what", "which", "to", "is"])
def test_question_and_function_words_are_stop_words(word: str) -> None:
    assert word in STOP_WORDS


@pytest.mark.parametrize("word", ["return", "get", "list", "self", "set", "open", "test"])
def test_words_that_name_code_are_not_stop_words(word: str) -> None:
    assert word not in STOP_WORDS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Return a :class:`Message`", "Return a  `Message`"),
        ("see :py:meth:`parse`", "see  `parse`"),
        ("a:b:c", "a:b:c"),  # not a role: no target after it
        ("plain words", "plain words"),
    ],
)
def test_strip_roles(text: str, expected: str) -> None:
    assert strip_roles(text) == expected


@pytest.mark.parametrize(
    ("words", "root"),
    [
        (["parse", "parser", "parsing", "parses", "parsed"], "pars"),
        (["compile", "compiled", "compiles"], "compil"),
        (["run"], "run"),  # too short to lose an ending
        (["sql"], "sql"),
    ],
)
def test_every_form_of_a_word_has_one_stem(words: list[str], root: str) -> None:
    assert {stem(word) for word in words} == {root}


@given(st.text(alphabet="abcdeginorstyl", max_size=12))
def test_the_stem_is_the_first_ending_of_the_list_taken_off(word: str) -> None:
    # the endings looked up by last letter: the same stem as trying each in order
    expected = word
    for suffix in english._SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= english.MIN_STEM:
            expected = word[: -len(suffix)]
            break
    assert stem(word) == expected


def test_other_forms_come_from_the_stem_and_leave_out_the_word() -> None:
    forms = other_forms("parsing")
    assert "parsing" not in forms
    assert {"parse", "parser", "parses", "parsed"} <= set(forms)


def test_a_question_keeps_its_content_words_in_order() -> None:
    query = hybrid.hybrid_query("how does a queryset filter get compiled to SQL")
    assert query.terms == ("queryset", "filter", "get", "compiled", "sql")
    assert "compile" in query.forms and "filters" in query.forms
    assert not set(query.forms) & set(query.terms)
    assert len(set(query.forms)) == len(query.forms)


@pytest.mark.parametrize(
    ("query", "hybrid_problem"),
    [
        ("how does a", True),
        ("What is the", True),
        ("how does a greeting", False),
        ("get", False),
    ],
)
def test_a_stop_word_only_query_has_no_hybrid_terms(query: str, hybrid_problem: bool) -> None:
    said = query_problem(query, "hybrid")
    assert (said is not None) == hybrid_problem
    if said is not None:
        assert "only question and stop words" in said and repr(query) in said
    assert query_problem(query, "bm25") is None  # the tutorial's BM25 scores every token


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", ["", "   ", "?!", "--"])
def test_a_query_without_letters_or_digits_has_no_terms_in_any_mode(query: str, mode: str) -> None:
    assert "no letters or digits" in (query_problem(query, mode) or "")


def ranked(root: Path, query: str, mode: str, top_k: int = 10) -> list[tuple[str, float]]:
    session = build_index([root])
    hits = session.queries.search(query, top_k=top_k, mode=mode)
    return [(hit.item.chunk.chunk_id, hit.score) for hit in hits]


def ids(root: Path, query: str, mode: str, top_k: int = 10) -> list[str]:
    return [chunk_id for chunk_id, _ in ranked(root, query, mode, top_k)]


def test_stop_words_do_not_rank(tmp_path: Path) -> None:
    """BM25 scores ``how``/``does``/``the`` like any word; hybrid leaves them out."""
    write_tree(
        tmp_path,
        {
            "talk.md": "# Talk\nhow does the thing do the work how does the day the end\n",
            "app.py": "def greeting(name):\n    return 'hello ' + name\n",
        },
    )
    query = "how does the greeting"
    assert ids(tmp_path, query, "bm25")[0] == "talk.md#heading-talk"
    assert ids(tmp_path, query, "hybrid") == ["app.py#function-greeting"]


def test_a_definition_named_for_the_question_beats_one_that_mentions_it(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "mail.py": (
                "def parse_header(line):\n    key, value = line.split(':')\n    return key\n\n\n"
                "def read_message(stream):\n"
                "    # parse each header: a header parsed, a header kept, parse the header\n"
                "    header = parse(stream)\n    headers = [header, header, parse(header)]\n"
                "    return headers\n"
            ),
        },
    )
    query = "parse a header"
    assert ids(tmp_path, query, "bm25")[0] == "mail.py#function-read_message"
    assert ids(tmp_path, query, "hybrid")[0] == "mail.py#function-parse_header"


@pytest.mark.parametrize(
    ("symbol", "query", "matches"),
    [
        ("parse_header", "header", True),  # a part
        ("HeaderParser", "parsing", True),  # another form of a part
        ("urlretrieve", "retrieve", True),  # inside, a stem of 4 letters or more
        ("setup", "set", False),  # inside, but too short
        ("Message.as_string", "message", False),  # the class is not the name
        ("Message.as_string", "string", True),
    ],
)
def test_name_match(symbol: str, query: str, matches: bool) -> None:
    idf = {query: 2.0}
    assert hybrid.name_match(symbol, idf, {query: stem(query)}) == (2.0 if matches else 0.0)


SAME = "def fold(items):\n    return sum(items)\n"


def test_module_code_ranks_below_the_same_words_in_a_definition(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "total = sum(items) + fold\n", "b.py": SAME})
    bm25 = dict(ranked(tmp_path, "sum items", "bm25"))
    found = ranked(tmp_path, "sum items", "hybrid")
    assert found[0][0] == "b.py#function-fold"
    scores = dict(found)
    module = "a.py#module-1"
    assert scores[module] / bm25[module] < scores["b.py#function-fold"] / bm25["b.py#function-fold"]


@pytest.mark.parametrize(
    ("path", "in_tests"),
    [
        ("tests/test_fold.py", True),
        ("pkg/tests/helpers.py", True),
        ("test/x.py", True),
        ("lib/test_fold.py", True),
        ("lib/fold_test.py", True),
        ("conftest.py", True),
        ("lib/fold.py", False),
        ("lib/testing_tools.py", False),
        ("contest/fold.py", False),
    ],
)
def test_which_files_are_tests(path: str, in_tests: bool) -> None:
    assert paths.in_tests(path) is in_tests


def test_a_test_file_ranks_below_the_code_unless_the_query_is_about_tests(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, {"lib/fold.py": SAME, "tests/fold.py": SAME})
    code, test = "lib/fold.py#function-fold", "tests/fold.py#function-fold"

    def against_bm25(query: str) -> float:
        """The test file's hybrid/BM25 ratio over the code's (the same lengths)."""
        bm25, scores = (
            dict(ranked(tmp_path, query, "bm25")),
            dict(ranked(tmp_path, query, "hybrid")),
        )
        return (scores[test] / bm25[test]) / (scores[code] / bm25[code])

    assert ids(tmp_path, "sum items", "hybrid") == [code, test]
    assert against_bm25("sum items") == pytest.approx(hybrid.TEST_PRIOR)
    assert hybrid.TEST_PRIOR < 1
    assert against_bm25("tests sum items") == pytest.approx(1.0)


def test_a_long_chunk_loses_against_its_bm25_score_for_a_sentence_only(tmp_path: Path) -> None:
    """A sentence describes one definition: a long chunk loses (``SENTENCE_LENGTH``).
    A topic or a question asks for files, whose answers are long: no length prior
    (``LENGTH = 0``)."""
    long_body = "".join(f"    step{i} = items[{i}]\n" for i in range(60))
    write_tree(
        tmp_path,
        {
            "short.py": "def first(items):\n    return items[0]\n",
            "long.py": f"def whole(items):\n{long_body}    return items\n",
        },
    )
    for query in ("Take the items.", "items"):
        bm25 = dict(ranked(tmp_path, query, "bm25"))
        hybrid_scores = dict(ranked(tmp_path, query, "hybrid"))
        ratio = {chunk_id: hybrid_scores[chunk_id] / bm25[chunk_id] for chunk_id in bm25}
        long, short = ratio["long.py#function-whole"], ratio["short.py#function-first"]
        if query == "items":
            assert long == pytest.approx(short) == pytest.approx(1.0)
        else:
            assert long < short < 1


def test_bm25_mode_is_the_plain_tutorial_ranking(tmp_path: Path) -> None:
    """Stop words count in ``bm25`` and no prior applies: a module chunk and a
    test file keep their BM25 scores."""
    write_tree(tmp_path, {"a.py": "total = sum(items)\n", "tests/test_b.py": SAME})
    found = ranked(tmp_path, "the sum of items", "bm25")
    assert [chunk_id for chunk_id, _ in found] == ["a.py#module-1", "tests/test_b.py#function-fold"]


def test_a_filter_keeps_the_order_of_the_whole_ranking(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "lib/a.py": SAME,
            "lib/b.py": "def fold_items(items):\n    return items\n",
            "docs/fold.md": "# Fold\nfold the items\n",
        },
    )
    session = build_index([tmp_path])
    whole = [h.item.chunk.chunk_id for h in session.queries.search("fold items", 10, "hybrid")]
    kept = session.queries.search("fold items", 10, "hybrid", where=lambda p: p.startswith("lib/"))
    assert [h.item.chunk.chunk_id for h in kept] == [c for c in whole if c.startswith("lib/")]
    assert len(kept) == 2


def test_ties_keep_corpus_order(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"m{i}.py": SAME for i in range(5)})
    found = ranked(tmp_path, "fold", "hybrid")
    assert [chunk_id for chunk_id, _ in found] == [f"m{i}.py#function-fold" for i in range(5)]
    assert len({score for _, score in found}) == 1


@pytest.mark.parametrize("mode", MODES)
def test_top_k_cuts_the_ranking(tmp_path: Path, mode: str) -> None:
    write_tree(tmp_path, {f"m{i}.py": f"def fold{i}(items):\n    return items\n" for i in range(8)})
    assert len(ranked(tmp_path, "items", mode, top_k=3)) == 3
    assert ranked(tmp_path, "items", mode, top_k=0) == []
    assert ranked(tmp_path, "nothing_like_it", mode) == []


def test_the_first_results_do_not_depend_on_how_many_are_asked_for(tmp_path: Path) -> None:
    """The palette asks 50, ``workspace/symbol`` 100, MCP 10, the CLI 5: each
    shows the first results of one ranking. Here the definition named for the
    question is a long one, far down BM25's order, beyond the first block of
    candidates: the symbol table brings it into the first block, where its name
    puts it first."""
    decoys = "".join(f"def decoy{i}():\n    return 'fold items {i}'\n\n" for i in range(100))
    filler = "".join(f"def other{i}():\n    return 'nothing {i}'\n\n" for i in range(400))
    long_body = "\n".join(f"    step{i} = compute(step{i - 1})" for i in range(1, 300))
    write_tree(
        tmp_path,
        {
            "decoys.py": decoys,
            "filler.py": filler,
            "z.py": f"def fold_items(values):\n    step0 = values\n{long_body}\n",
        },
    )
    session = build_index([tmp_path])

    def order(top_k: int) -> list[str]:
        hits = session.queries.search("fold items", top_k, "hybrid")
        return [hit.item.chunk.chunk_id for hit in hits]

    whole = order(200)
    assert whole.index("z.py#function-fold_items") == 0
    for top_k in (1, 5, 10, 50, hybrid.CANDIDATES, hybrid.CANDIDATES + 1, 100):
        assert order(top_k) == whole[:top_k]


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        ("Return the header's value.", True),
        ("Return the header value", True),
        ("A converting dictionary wrapper", True),
        ("parse the header value.", True),
        ("how are routes registered", False),
        ("How are routes registered?", False),
        ("connection pooling and TCP connector", False),
        ("WebSocket client implementation", False),
        ("JSON schema generation", False),
        ("ClientSession", False),
        ("Return value", False),
    ],
)
def test_which_queries_are_sentences(query: str, sentence: bool) -> None:
    assert hybrid.hybrid_query(query).sentence is sentence


def test_a_topic_spreads_over_files_and_a_sentence_keeps_its_definitions(
    tmp_path: Path,
) -> None:
    """A topic asks for files: a file's second chunk counts ``SATURATION`` times
    less, so another file that answers comes before it. A sentence describes one
    definition, often the sibling of a better one: its file's chunks keep their
    scores (``SENTENCE_SATURATION``)."""
    write_tree(
        tmp_path,
        {
            "headers.py": (
                "def first():\n    return 'parse header value parse header value'\n\n"
                "def second():\n    return 'parse header value parse header'\n"
            ),
            "other.py": "def third():\n    return 'parse header value and more words here'\n",
        },
    )
    topic = ids(tmp_path, "parse header value", "hybrid")
    sentence = ids(tmp_path, "Parse the header value.", "hybrid")
    assert topic[0] == sentence[0] == "headers.py#function-first"
    assert topic[1] == "other.py#function-third"
    assert sentence[1] == "headers.py#function-second"


@pytest.mark.parametrize(
    ("scores", "score", "top", "lift"),
    [
        ([3.0, 2.0, 1.0, 0.5], 3.0, 3, 3.5),  # the best: the next three
        ([3.0, 2.0, 1.0, 0.5], 1.0, 3, 5.5),  # another: the best three but itself
        ([3.0, 2.0, 1.0, 0.5], 0.5, 1, 3.0),  # top 1: the best other only
        ([3.0, 2.0, 1.0, 0.5], 3.0, 1, 2.0),
        ([2.0, 2.0], 2.0, 3, 2.0),  # a tie: the other one counts
        ([2.0], 2.0, 3, 0.0),  # alone in its file
    ],
)
def test_file_lift(scores: list[float], score: float, top: int, lift: float) -> None:
    assert file_lift(scores, score, top) == lift


def test_a_question_lifts_the_file_with_several_answering_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question asks for the file whose chunks answer it together: the summed
    scores of a file's best ``FILE_TOP`` other candidates lift each of its chunks,
    so four chunks that say "route register" beat one shorter chunk that says it
    alone, which the best other chunk only (``FILE_TOP = 1``, as before) does not
    (lengths aside: ``QUESTION_LENGTH`` off)."""
    monkeypatch.setattr(questions, "QUESTION_LENGTH", 0.0)
    words = ["alpha", "beta", "gamma", "delta"]
    write_tree(
        tmp_path,
        {
            "one.py": "def alone():\n    return 'route register'\n",
            "many.py": "".join(
                f"def r{n}():\n    return 'route register {w}'\n\n" for n, w in enumerate(words)
            ),
        },
    )
    assert ids(tmp_path, "how are routes registered", "hybrid")[0] == "many.py#function-r0"
    monkeypatch.setattr(hybrid, "FILE_TOP", 1)
    monkeypatch.setattr(hybrid, "FILE_LIFT", 0.2)
    assert ids(tmp_path, "how are routes registered", "hybrid")[0] == "one.py#function-alone"
