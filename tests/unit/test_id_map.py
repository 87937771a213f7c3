"""Which files have chunks of an ID: the compact map, and lookups that check the stubs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import chunkls.index.id_map
from chunkls.index.id_map import IdMap
from chunkls.index.session import build_index


@pytest.mark.parametrize("tail", [1, 3, 1 << 14])
def test_the_map_answers_as_a_dict_would_through_adds_removes_and_sorts(
    tail: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunkls.index.id_map, "TAIL", tail)
    ids = IdMap()
    reference: dict[str, list[str]] = {}  # path -> its IDs
    rng = random.Random(7)
    names = [f"f{n}.py#function-g{m}" for n in range(8) for m in range(3)]
    for step in range(300):
        path = f"f{rng.randrange(12)}.py"
        if rng.random() < 0.3:
            ids.remove(path)
            reference.pop(path, None)
        else:
            chosen = rng.sample(names, rng.randrange(0, 5))
            ids.add(path, chosen)
            reference.pop(path, None)
            reference[path] = chosen
        if step % 50 == 49:
            ids.sort()
        for name in names:
            expected = [p for p, held in reference.items() if name in held]
            assert sorted(ids.get(name)) == sorted(expected)
    assert len(ids) == len(reference)


def test_a_file_readded_comes_after_the_others() -> None:
    ids = IdMap()
    ids.add("a.py", ["x"])
    ids.add("b.py", ["x"])
    ids.sort()
    ids.add("a.py", ["x", "x"])  # a repeated ID: listed once
    assert ids.get("x") == ["b.py", "a.py"]
    ids.sort()
    assert ids.get("x") == ["b.py", "a.py"]
    ids.remove("b.py")
    ids.sort()
    assert ids.get("x") == ["a.py"]
    assert ids.get("y") == []


def test_a_lookup_reads_the_stubs_of_the_files_the_map_lists(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    pass\n")
    (tmp_path / "b.py").write_text("def g():\n    pass\n")
    index = build_index([tmp_path], workers=1)
    folder = index.queries.folders[0]
    # as if b.py's entries matched a.py's ID: b.py is listed, its stubs say no
    folder.by_id.add("b.py", ["a.py#function-f", "b.py#function-g"])
    found = index.queries.lookup("a.py#function-f")
    assert [entry.chunk.source_path for entry in found] == ["a.py"]
    folder.by_id.remove("a.py")
    assert index.queries.lookup("a.py#function-f") == []
    assert index.queries.has_id("b.py#function-g")


def test_ids_that_are_not_utf8_and_near_misses() -> None:
    ids = IdMap()
    odd = "caf\udce9.py#function-f"  # a file name that is not UTF-8, kept as a surrogate
    ids.add("caf\udce9.py", [odd])
    assert ids.get(odd) == ["caf\udce9.py"]
    assert ids.get("caf\u00e9.py#function-f") == []
    assert ids.get(odd + " ") == []
    ids.sort()
    assert ids.get(odd) == ["caf\udce9.py"]


def test_lookups_while_another_thread_adds() -> None:
    """A server adds a saved file's IDs while a request looks IDs up: no error,
    and each ID is found once its file was added."""
    import threading

    ids = IdMap()
    added = threading.Event()
    errors: list[BaseException] = []

    def adder() -> None:
        try:
            for n in range(3_000):
                ids.add(f"f{n}.py", [f"f{n}.py#function-g{m}" for m in range(5)])
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            added.set()

    thread = threading.Thread(target=adder)
    thread.start()
    seen = 0
    while not added.is_set():
        found = ids.get(f"f{seen}.py#function-g0")
        if found:
            assert found == [f"f{seen}.py"]
            seen += 1
    thread.join()
    assert not errors
    assert all(ids.get(f"f{n}.py#function-g4") == [f"f{n}.py"] for n in range(3_000))
