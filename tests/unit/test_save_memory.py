"""A long-lived server's memory over saves that bring new names (as real editing
does): what its memo tables keep stays bounded by what the index holds, or by a
small fixed size, however many names came and went. The hardening suite's
``test_memory_stays_flat_over_save_cycles`` measures the resident memory over
10,000 such saves (``CHUNKLS_HARDENING=long``); these check each table."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from chunkls.index.id_map import IdMap
from chunkls.index.session import Session
from chunkls.search import english, hybrid

SAVES = 400


def saved(cycle: int) -> str:
    """A file as the hardening test saves it: functions with new names each time."""
    return "\n\n".join(f"def f{cycle}_{i}():\n    return {i}" for i in range(1 + cycle % 25)) + "\n"


def test_decoded_stubs_are_kept_only_for_files_the_index_holds(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    for number in range(5):
        (root / "pkg" / f"m{number}.py").write_text(f"def g{number}():\n    return {number}\n")
    target = root / "pkg" / "saved.py"
    target.write_text(saved(0))
    session = Session(tmp_path / "cache", long_lived=True, citations=True)
    folder = session.add_root(root)
    session.index_folder(folder)
    store = session.store
    for cycle in range(1, SAVES + 1):
        target.write_text(saved(cycle))
        session.note_changed(folder, ["pkg/saved.py"])
        session.catch_up()
        if cycle % 50 == 0:
            [hit] = store.search(f"f{cycle}_0", 1)
            assert hit.item.chunk.chunk_id == f"pkg/saved.py#function-f{cycle}_0"
    # a save's old stubs are dropped with its old entry (they were kept, keyed by
    # a blob no file has any more, until 1,024 newer ones pushed them out)
    held = {stored.packed for stored in folder.files.values()}
    assert set(store._decoded) <= held, (len(store._decoded), len(held))
    session.close()


def _retained(work: object, where: tuple[str, ...] = ()) -> int:
    """Bytes allocated by ``work()`` that are still held after it (and a
    collection); with ``where``, only those allocated in these modules' files."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        work()  # type: ignore[operator]
        gc.collect()
        if not where:
            return tracemalloc.get_traced_memory()[0] - before
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, f"*{name}") for name in where]
        )
        return sum(stat.size for stat in snapshot.statistics("filename"))
    finally:
        tracemalloc.stop()


def test_the_name_and_stem_memos_stay_small_however_many_names_come() -> None:
    """A search scores its candidates' names (``hybrid.name_match``): a week of
    new names must not fill memos of thousands of names each."""
    hybrid._name_parts.cache_clear()
    english.stem.cache_clear()
    idfs = {"parse": 1.0, "config": 2.0}
    stems = {word: english.stem(word) for word in idfs}

    def many_new_names() -> None:
        for number in range(20_000):
            hybrid.name_match(f"Parser{number}.load_config_{number}_value", idfs, stems)

    memos = ("search/hybrid.py", "search/english.py")
    retained = _retained(many_new_names, memos)
    assert retained < 1_000_000, retained  # (8,192 names and stems kept 4.5 MB)
    assert hybrid._name_parts.cache_info().currsize <= 1024
    assert english.stem.cache_info().currsize <= 1024


def test_the_id_maps_tail_index_costs_little_per_id() -> None:
    """The IDs added since the last sort are indexed for lookups in a dict: most
    hashes are there once (an int, not a list of one)."""
    ids = IdMap()
    count = 8_000

    def add_and_look_up() -> None:
        for number in range(count):
            ids.add(f"f{number}.py", [f"f{number}.py#function-g{number}"])
        assert ids.get("f7.py#function-g7") == ["f7.py"]

    retained = _retained(add_and_look_up)
    per_id = retained / count
    # (the paths, their numbers and the arrays are most of it; a list per ID
    # added about 64 bytes more)
    assert per_id < 260, per_id
