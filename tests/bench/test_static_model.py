"""The model lead's script on tiny data only (training never runs on real data in
tests): which packages may be read (licences, benchmark trees left out), the pairs
made from a synthetic tree, a few training steps, the model saved and loaded, and
the re-ranking's formula."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))  # it imports retrieval (and retrieval its stats)
_spec = importlib.util.spec_from_file_location(
    "bench_static_model", REPO / "bench" / "static_model.py"
)
assert _spec is not None and _spec.loader is not None
static_model = importlib.util.module_from_spec(_spec)
sys.modules["bench_static_model"] = static_model
_spec.loader.exec_module(static_model)


@pytest.mark.parametrize(
    ("licence", "expected"),
    [
        ("MIT", True),
        ("BSD-3-Clause AND 0BSD AND MIT AND Zlib AND CC0-1.0", True),
        ("Apache-2.0 OR BSD-3-Clause", True),
        ("(MIT OR GPL-3.0)", True),
        ("MIT AND GPL-3.0", False),
        ("MPL-2.0", False),
        ("Mozilla Public License 2.0 (MPL 2.0)", False),
        ("GPL-3.0-or-later", False),
        (None, False),
        ("", False),
    ],
)
def test_permissive_licences(licence: str | None, expected: bool) -> None:
    assert static_model.permissive(licence) is expected


def _dist(site: Path, name: str, licence: str, top: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.4\nName: {name}\nVersion: 1.0\nLicense-Expression: {licence}\n"
    )
    (info / "RECORD").write_text(f"{top}/__init__.py,,\n{info.name}/METADATA,,\n")
    (site / top).mkdir()
    (site / top / "__init__.py").write_text('"""A package."""\n')


def test_benchmark_trees_and_other_licences_are_left_out(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _dist(site, "kept", "MIT", "kept")
    _dist(site, "click", "BSD-3-Clause", "click")  # a held-out tree of the peer benchmark
    _dist(site, "pydantic", "MIT", "pydantic")  # a development tree
    _dist(site, "copyleft", "MPL-2.0", "copyleft")
    sources, rows = static_model.training_sources(site)
    names = {name for _, name in sources}
    assert "kept/kept" in names
    assert not {"click/click", "pydantic/pydantic", "copyleft/copyleft"} & names
    by_package = {row["package"]: row for row in rows}
    assert by_package["click"]["licence"].endswith("(a benchmark tree: left out)")
    assert by_package["copyleft"]["licence"].endswith("(not permissive: left out)")
    # bench/retrieval.py's standard-library sets are never read
    for package in static_model.RETRIEVAL_SETS["std"] + static_model.RETRIEVAL_SETS["std2"]:
        assert f"stdlib/{package}" not in names
        assert by_package[f"stdlib:{package}"]["used"] is False
    assert "stdlib/csv.py" in names or "stdlib/argparse.py" in names


TREE = {
    "shapes.py": '''"""Shapes."""


def circle_area(radius):
    """Compute the surface of a round disc from its radius."""
    return 3.14159 * radius * radius


class Rectangle:
    """A box with a width and a height for drawing."""

    def area(self):
        """Multiply the width by the height of the box."""
        return self.width * self.height
''',
    "words.py": '''"""Words."""


def shout(text):
    """Turn the text into capital letters loudly."""
    return text.upper()
''',
}


def test_pairs_from_a_tiny_tree_and_a_few_training_steps(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for name, text in TREE.items():
        (tree / name).write_text(text)
    pairs, per_source = static_model.collect_pairs([(tree, "pkg")], tmp_path / "corpus")
    by_target = {target: (query, code) for query, target, code in pairs}
    assert set(by_target) == {
        "pkg/shapes.py#function-circle_area",
        "pkg/shapes.py#class-Rectangle",
        "pkg/words.py#function-shout",
        "pkg/shapes.py#function-Rectangle.area",  # a method's own pair
    }
    query, code = by_target["pkg/shapes.py#function-circle_area"]
    assert query == "Compute the surface of a round disc from its radius."
    assert "3.14159" in code and "surface" not in code  # the docstring is cut
    query, code = by_target["pkg/shapes.py#function-Rectangle.area"]
    assert "Multiply" not in code and "self.width * self.height" in code
    assert per_source == {"pkg": 4}

    vectors, vocab, idf = static_model.train(pairs * 8, 8, 100, 2, 0, batch=4)
    assert vectors.shape == (len(vocab), 8) and len(idf) == len(vocab)
    assert static_model.save(tmp_path / "model", vectors, vocab, idf) > 0
    model = static_model.Model.load(tmp_path / "model")
    assert np.allclose(model.vectors, vectors, atol=np.abs(vectors).max() / 100)
    for text in ("radius of a disc", "zzz unknown words", ""):
        vector = model.query(text)
        assert vector.shape == (8,)
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5) or not text
    # a word outside the vocabulary: the same vector every time
    assert np.array_equal(model.query("qwertyuiop"), model.query("qwertyuiop"))


class _Chunk(NamedTuple):
    chunk_id: str
    text: str


class _Item(NamedTuple):
    chunk: _Chunk


class _Hit(NamedTuple):
    score: float
    item: _Item


class _FixedModel:
    """Cosines chosen by the test."""

    def __init__(self, cosines: dict[str, float]) -> None:
        self.cosines = cosines

    def query(self, text: str) -> Any:
        return np.array([1.0])

    def chunk(self, chunk_id: str, text: str) -> Any:
        return np.array([self.cosines[chunk_id]])


def test_rerank_weighs_the_scaled_score_against_the_cosine() -> None:
    hits = [_Hit(10.0, _Item(_Chunk("a", ""))), _Hit(5.0, _Item(_Chunk("b", "")))]
    model = _FixedModel({"a": 0.1, "b": 0.9})
    # 0.35 * 1 + 0.65 * 0.1 = 0.415 against 0.35 * 0.5 + 0.65 * 0.9 = 0.76
    [reranked, kept] = static_model.rerank(model, "q", hits, [0.65, 0.0])
    assert [h.item.chunk.chunk_id for h in reranked] == ["b", "a"]
    assert [h.item.chunk.chunk_id for h in kept] == ["a", "b"]
    assert static_model.rerank(model, "q", [], [0.65]) == [[]]
