"""What a question asks for (``chunkls.search.questions``): the big definitions
that do the work, and exception classes only when it names errors; shown against
``bm25`` on small trees where only that differs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from chunkls.index.session import build_index
from chunkls.search import hybrid, questions

from .strategies import write_tree


def ranked(root: Path, query: str, mode: str) -> dict[str, float]:
    session = build_index([root])
    return {hit.item.chunk.chunk_id: hit.score for hit in session.queries.search(query, 10, mode)}


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("how are routes registered", True),
        ("How does the connector pool connections?", True),
        ("what runs after model_post_init", True),
        ("connection pooling and TCP connector", False),
        ("Return the header's value.", False),
        ("ClientSession", False),
        ("show how routes work", False),  # a question word not first
    ],
)
def test_which_queries_are_questions(query: str, question: bool) -> None:
    assert hybrid.hybrid_query(query).question is question


CALLS = ["route.register"] * 5 + ["rows.add"] * 25
"""Five of a long class's thirty methods say the question's words."""
LONG = "class Table:\n" + "".join(
    f"    def step{i}(self, row):\n        self.{call}(row[{i}])\n" for i, call in enumerate(CALLS)
)
SHORT = "def fetch():\n    return 'route register'\n"


def test_a_question_lifts_the_long_definitions_a_topic_does_not(tmp_path: Path) -> None:
    """The same words in a long class and a short function: BM25 (and a topic)
    puts the function first, a question the class (``QUESTION_LENGTH``)."""
    fillers = {f"f{n}.py": f"def f{n}():\n    return {n}\n" for n in range(30)}
    write_tree(tmp_path, {"table.py": LONG, "short.py": SHORT})
    write_tree(tmp_path, fillers)  # short chunks: the class is long against the average
    big, small = "table.py#class-Table", "short.py#function-fetch"
    for query in ("route register", "how does the route register"):
        bm25, scores = ranked(tmp_path, query, "bm25"), ranked(tmp_path, query, "hybrid")
        ratio = (scores[big] / bm25[big]) / (scores[small] / bm25[small])
        if query.startswith("how"):
            assert max(scores, key=scores.__getitem__) == big
            assert ratio > 1 + questions.QUESTION_LENGTH  # log1p of a long ratio
        else:
            assert max(scores, key=scores.__getitem__) == small
            assert ratio == pytest.approx(1.0)


def test_the_length_factor() -> None:
    asked = questions.Asked(question=True, sentence=False, words=["route"])
    assert asked.size(0.0) == 1.0
    assert asked.size(3.0) == pytest.approx(1 + questions.QUESTION_LENGTH * math.log(4.0))
    assert questions.Asked(question=False, sentence=False, words=[]).size(3.0) == 1.0


ERRORS = {
    "errors.py": "class RouteError(Exception):\n    'A route table entry could not be added.'\n",
    "handlers.py": "class RouteHandler(Base):\n    'A route table entry could not be added.'\n",
}


@pytest.mark.parametrize(
    ("query", "factor"),
    [
        ("route table entry", questions.ERROR_PRIOR),  # a topic
        ("how is a route table entry added", questions.ERROR_PRIOR),  # a question
        ("what raises on a route table entry", 1.0),  # it names errors
        ("A route table entry could not be added.", 1.0),  # a sentence describes one
    ],
)
def test_an_exception_class_counts_less_unless_the_query_names_errors(
    tmp_path: Path, query: str, factor: float
) -> None:
    write_tree(tmp_path, ERRORS)
    error, handler = "errors.py#class-RouteError", "handlers.py#class-RouteHandler"
    bm25, scores = ranked(tmp_path, query, "bm25"), ranked(tmp_path, query, "hybrid")
    assert bm25[error] == pytest.approx(bm25[handler])
    assert scores[error] / scores[handler] == pytest.approx(factor)
    assert questions.ERROR_PRIOR < 1
