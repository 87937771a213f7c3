"""The code attrs generates for lsprotocol's classes is kept between starts: the
same classes from kept code, a damaged file not used, attrs put back as it was."""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chunkls.lsp import compat, kept_code


def _classes(count: int) -> list[type]:
    """Fresh attrs classes with defaults, validators, ordering, some frozen."""
    import attrs

    made: list[type] = []
    for i in range(count):
        namespace = {
            "a": attrs.field(default=i, validator=attrs.validators.instance_of(int)),
            "b": attrs.field(factory=list),
            "__qualname__": f"Generated{i}",
        }
        define = attrs.define(order=True, frozen=i % 2 == 0)
        made.append(define(type(f"Generated{i}", (), namespace)))
    return made


def _attrs_compile() -> Any:
    import attr._make

    return getattr(attr._make, compat.ATTRS_COMPILE)


def test_kept_code_builds_the_same_classes(tmp_path: Path) -> None:
    original = _attrs_compile()
    path = tmp_path / "attrs.bin"
    with kept_code.attrs_code_cached(path) as first:
        assert _attrs_compile() is not original
        built = _classes(12)
    assert first.installed and first.misses >= 12 and first.hits == 0
    assert path.exists()
    assert _attrs_compile() is original  # put back
    with kept_code.attrs_code_cached(path) as second:
        rebuilt = _classes(12)
    assert second.hits >= 12 and second.misses == 0
    for old, new in zip(built, rebuilt, strict=True):
        assert repr(old(a=3)) == repr(new(a=3))
        assert new(a=3) == new(a=3) and new(a=3) != new(a=4) and new(a=3) < new(a=4)
        assert new().b == [] and new().b is not new().b
        with pytest.raises(TypeError):
            new(a="not an int")
    assert _attrs_compile() is original


def test_a_run_that_compiles_little_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "attrs.bin"
    monkeypatch.setattr(kept_code, "SAVE_AFTER_MISSES", 10_000)
    with kept_code.attrs_code_cached(path) as use:
        _classes(3)  # one compile a class (attrs 26), or one a method (attrs 24)
    assert 3 <= use.misses < 100 and not path.exists()
    monkeypatch.setattr(kept_code, "SAVE_AFTER_MISSES", use.misses + 1)
    with kept_code.attrs_code_cached(path) as again:
        _classes(3)
    assert again.misses == use.misses and not path.exists()  # one short of writing
    monkeypatch.setattr(kept_code, "SAVE_AFTER_MISSES", use.misses)
    with kept_code.attrs_code_cached(path):
        _classes(3)
    assert path.exists()


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # torn
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # a flipped bit
        lambda data: b"\0\0\0\0" + data[4:],  # another Python's magic number
        lambda data: b"",
        lambda data: data + b"x" * kept_code.MAX_BYTES,  # too large
    ],
)
def test_a_damaged_file_is_not_used(tmp_path: Path, damage: Any) -> None:
    path = tmp_path / "attrs.bin"
    with kept_code.attrs_code_cached(path):
        _classes(kept_code.SAVE_AFTER_MISSES)
    assert kept_code.read(path)
    path.write_bytes(damage(path.read_bytes()))
    assert kept_code.read(path) == {}
    with kept_code.attrs_code_cached(path) as use:
        (made, *_) = _classes(kept_code.SAVE_AFTER_MISSES)
    assert use.hits == 0 and made(a=2).a == 2
    assert kept_code.read(path)  # written again


def test_a_file_of_other_objects_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "attrs.bin"
    kept_code.write(path, {})
    assert kept_code.read(path) == {}
    payload = marshal.dumps([1, 2])
    digest = hashlib.blake2b(payload, digest_size=16).digest()
    path.write_bytes(importlib.util.MAGIC_NUMBER + kept_code.VERSION + digest + payload)
    assert kept_code.read(path) == {}


def test_an_unwritable_cache_costs_only_the_compiling(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with kept_code.attrs_code_cached(blocker / "attrs.bin") as use:  # its folder is a file
        (made, *_) = _classes(kept_code.SAVE_AFTER_MISSES)
    assert use.misses and made(a=1).a == 1


def test_attrs_not_as_assumed_compiles_as_always(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compat, "swap_attrs_compile", lambda function: None)
    with kept_code.attrs_code_cached(tmp_path / "attrs.bin") as use:
        (made, *_) = _classes(kept_code.SAVE_AFTER_MISSES)
    assert not use.installed and use.hits == use.misses == 0
    assert made(a=5).a == 5 and not (tmp_path / "attrs.bin").exists()


def test_lsprotocol_loads_from_kept_code(tmp_path: Path) -> None:
    """What the server's start gains: a second process compiles (almost) nothing."""
    script = (
        "import sys; from pathlib import Path; from chunkls.lsp import kept_code\n"
        "with kept_code.attrs_code_cached(Path(sys.argv[1])) as use:\n"
        "    import lsprotocol.types\n"
        "print(use.hits, use.misses)\n"
    )
    path = tmp_path / "attrs.bin"
    runs = [
        subprocess.run(
            [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    (hits, misses), (hits2, misses2) = ([int(n) for n in run] for run in runs)
    assert hits == 0 and misses > 400
    assert hits2 >= misses - kept_code.SAVE_AFTER_MISSES
    assert misses2 < kept_code.SAVE_AFTER_MISSES
