"""Fuzzy names (``chunkls.search.fuzzy``) and the symbol search that puts them
first (``chunkls.index.named``): what a mistyped or abbreviated name proposes,
in which order, and the same answer read in place as loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

import chunkls.storage.cache
from chunkls.chunking.corpus import CorpusRules
from chunkls.index.queries import Queries
from chunkls.index.session import Session, build_index
from chunkls.search.fuzzy import applies, fuzzy_names, masks, score
from chunkls.storage.cache import cache_dir

from .strategies import write_tree

TREE = {
    "models/base.py": (
        "class BaseModel:\n    def model_validate(self):\n        return 1\n\n\n"
        "class BaseSettings(BaseModel):\n    pass\n\n\n"
        "def build_model():\n    return BaseModel()\n"
    ),
    "app/greet.py": (
        "def greet(name):\n    return name\n\n\n"
        "class Greeter:\n    def greet_politely(self):\n        return greet('x')\n\n\n"
        "class Registry:\n    def get_entry(self):\n        return None\n"
    ),
    "app/parse.py": "def parse_args(argv):\n    return argv\n\n\ndef bump_model():\n    return 2\n",
    "README.md": "# Models\n\nBaseModel is the base; Greeter greets.\n",
}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setattr(chunkls.storage.cache, "RACY_NS", 0)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write_tree(root, TREE)
    return root


@pytest.fixture
def index(tree: Path) -> Queries:
    return build_index([tree]).store  # (the store itself: a test reads its postings)


@pytest.mark.parametrize(
    ("typed", "first"),
    [
        # an in-order subsequence of a name (VS Code's fuzzy style)
        ("Greter", "app/greet.py#class-Greeter"),
        ("BsModel", "models/base.py#class-BaseModel"),
        ("bmodel", "models/base.py#function-build_model"),  # starts a part, fewer runs
        ("BaseSetings", "models/base.py#class-BaseSettings"),
        ("prsargs", "app/parse.py#function-parse_args"),
        # a name defined inside a chunk: that chunk
        ("mdlvalidate", "models/base.py#class-BaseModel"),
        ("getentry", "app/greet.py#class-Registry"),
        # one edit away: a letter replaced, added, or two swapped
        ("Graeter", "app/greet.py#class-Greeter"),
        ("Regsitry", "app/greet.py#class-Registry"),
        ("BaseMoodel", "models/base.py#class-BaseModel"),
        # a name the table has (exactly, as a part, as a beginning): the ranking alone
        ("Greeter", "app/greet.py#class-Greeter"),
        ("BaseMod", "models/base.py#class-BaseModel"),
    ],
)
def test_a_mistyped_name_proposes_the_chunks_defining_what_it_stands_for(
    index: Queries, typed: str, first: str
) -> None:
    values, _more = index.propose_ids(typed, 100)
    assert values[0] == first, values
    hits, _fuzzy = index.symbol_search(typed, 100, "hybrid")
    assert [hit.item.chunk.chunk_id for hit in hits][: len(values)] == values


@pytest.mark.parametrize(
    ("typed", "fuzzy"),
    [
        ("Greter", True),
        ("Greeter", False),  # exactly a name
        ("greet", False),  # a name, and the beginning of others
        ("politely", False),  # a part of a name inside a chunk
        ("Base", False),  # the beginning of a name
        ("ab", False),  # too short
        ("base model", False),  # not one name
        ("app/greet.py", False),
        ("1bad", False),
        ("", False),
    ],
)
def test_fuzzy_names_answer_only_what_no_name_is(index: Queries, typed: str, fuzzy: bool) -> None:
    source = index.postings  # type: ignore[attr-defined]
    assert applies(source, typed) is fuzzy
    assert bool(fuzzy_names(source, typed, 10)) is fuzzy


def test_the_fuzzy_order_is_a_part_start_then_runs_then_length(index: Queries) -> None:
    source = index.postings  # type: ignore[attr-defined]
    # all begin at a part; ``build_model`` and ``basemodel`` run twice (``b``,
    # ``model``), ``build_model``'s runs both start a part; ``bump_model`` runs
    # three times (its ``m`` is ``bump``'s)
    assert fuzzy_names(source, "bmodel", 10) == ["build_model", "basemodel", "bump_model"]
    assert score("bmodel", "build_model") < score("bmodel", "basemodel")
    assert score("grtr", "greeter") < score("grtr", "get_entry_registry")
    assert score("ab", "ab") < score("ab", "abc")


def test_a_workspace_symbol_of_a_name_inside_a_chunk_is_at_its_lines(index: Queries) -> None:
    hits, fuzzy = index.symbol_search("getentry", 10, "hybrid")
    assert fuzzy == 1
    assert hits[0].item.chunk.chunk_id == "app/greet.py#class-Registry"
    assert hits[0].part == "get_entry" and hits[0].lines == (11, 12)
    assert hits[0].score == 1.0


def test_nothing_fuzzy_answers_nothing(index: Queries) -> None:
    assert index.propose_ids("qqqqzzzz", 100) == ([], False)
    assert index.symbol_search("qqqqzzzz", 100, "hybrid") == ([], 0)


def test_read_in_place_the_fuzzy_answer_is_the_loaded_ones(tree: Path) -> None:
    loaded = build_index([tree], CorpusRules(), None, cache_dir())
    loaded.close()
    disk = Session(cache_dir(), read_in_place=True, base_rules=CorpusRules())
    assert disk.try_in_place(disk.add_root(tree))
    for typed in ("Greter", "BsModel", "bmodel", "mdlvalidate", "Regsitry", "Greeter", "zzzq"):
        assert disk.queries.propose_ids(typed, 100) == loaded.queries.propose_ids(typed, 100)
        ours, theirs = (
            [(h.score, h.item.chunk, h.lines, h.part) for h in queries.symbol_search(typed)[0]]
            for queries in (disk.queries, loaded.queries)
        )
        assert ours == theirs, typed
    assert disk.queries.folders[0].in_place is not None  # (still read in place)
    disk.close()


def _bits(data: set[int]) -> int:
    found = 0
    for byte in data:
        found |= 1 << (
            byte - 97
            if 97 <= byte <= 122
            else byte - 48 + 26
            if 48 <= byte <= 57
            else 36
            if byte == 95
            else 37 + byte % 27
        )
    return found


def test_the_masks_are_each_names_letters_repeats_and_part_starts() -> None:
    names = ["basemodel", "_build_model", "a", "__init__", "x1_y2", "étoile_été", "aab_ba"]
    letters, twice, starts = masks(names)
    for number, name in enumerate(names):
        data = name.encode("utf-8")
        assert int(letters[number]) == _bits(set(data)), name
        assert int(twice[number]) == _bits({byte for byte in data if data.count(byte) > 1}), name
        parts = {part.encode("utf-8")[0] for part in name.split("_") if part}
        assert int(starts[number]) == _bits(parts), name
    assert [len(mask) for mask in masks([])] == [0, 0, 0]
