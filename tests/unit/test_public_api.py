"""chunkls uses pygls, lsprotocol and cattrs through their public API only.

A private name (a leading underscore, not a dunder) of theirs may appear in
``server/chunkls/lsp/compat.py`` alone, where each one has its own test
(``test_compat.py``)."""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path

import pytest

PACKAGES = ("pygls", "lsprotocol", "cattrs")
ROOT = Path(__file__).resolve().parents[2] / "server" / "chunkls"
EXEMPT = ROOT / "lsp" / "compat.py"
REFLECTION = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name: str) -> bool:
    if name == "_":  # the throwaway variable
        return False
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined(tree: ast.AST) -> set[str]:
    """Names a module defines: functions, classes, variables, attributes it assigns,
    parameters."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Name):
                        names.add(part.id)
                    elif isinstance(part, ast.Attribute):
                        names.add(part.attr)
    return names


def _sources(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


@cache
def upstream_private_names() -> frozenset[str]:
    """Every private name the installed pygls, lsprotocol and cattrs define."""
    names: set[str] = set()
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.origin is not None, package
        for path in _sources(Path(spec.origin).parent):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names |= {name for name in _defined(tree) if _private(name)}
    return frozenset(names)


def violations(source: str, own: set[str], where: str = "<source>") -> list[str]:
    """Uses of a private upstream name in ``source`` (``own``: names chunkls defines)."""
    upstream = upstream_private_names() - own
    found = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ClassDef):
            found += [  # overriding a private method is using it
                f"{where}:{item.lineno}: def {item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                and item.name in upstream_private_names()
            ]
        elif isinstance(node, ast.ImportFrom) and node.module:
            top = node.module.split(".")[0]
            if top in PACKAGES:
                if any(_private(part) for part in node.module.split(".")):
                    found.append(f"{line}: from {node.module} import ...")
                found += [
                    f"{line}: from {node.module} import {alias.name}"
                    for alias in node.names
                    if _private(alias.name)
                ]
        elif isinstance(node, ast.Import):
            found += [
                f"{line}: import {alias.name}"
                for alias in node.names
                if alias.name.split(".")[0] in PACKAGES
                and any(_private(part) for part in alias.name.split("."))
            ]
        elif isinstance(node, ast.Attribute) and node.attr in upstream:
            found.append(f"{line}: .{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in REFLECTION
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in upstream
        ):
            found.append(f"{line}: {node.func.id}(..., {node.args[1].value!r})")
    return found


def _chunkls_defined() -> set[str]:
    names: set[str] = set()
    for path in _sources(ROOT):
        if path != EXEMPT:
            names |= _defined(ast.parse(path.read_text(encoding="utf-8")))
    return names


def test_upstream_private_names_are_collected() -> None:
    """The scan knows pygls's private names (or it would pass for nothing)."""
    names = upstream_private_names()
    assert {"_converter", "_send_data", "_request_futures", "_report_server_error"} <= names
    assert "__init__" not in names and "converter" not in names


@pytest.mark.parametrize(
    "source",
    [
        "protocol._converter.unstructure(x)",
        "server._stop_event = stop",
        "ls.protocol._send_data({})",
        "getattr(protocol, '_request_futures')",
        "from pygls.protocol.json_rpc import _private_thing",
        "from cattrs._compat import is_generic",
        "import pygls.lsp._base_server",
        "class P(LanguageServerProtocol):\n    def _handle_request(self, *a): pass",
    ],
)
def test_private_uses_are_found(source: str) -> None:
    assert violations(source, set())


@pytest.mark.parametrize(
    "source",
    [
        "protocol.fm.converter.unstructure(x)",
        "self._answers = {}",  # chunkls's own, not upstream's
        "from pygls.protocol import LanguageServerProtocol",
        "make_dict_structure_fn(T, c, _cattrs_forbid_extra_keys=False)",  # cattrs's public API
        "x.__class__",
    ],
)
def test_public_uses_pass(source: str) -> None:
    assert not violations(source, set())


def test_a_name_chunkls_defines_itself_is_its_own() -> None:
    assert not violations("self._trimmed += 1", {"_trimmed"})


def test_chunkls_uses_no_private_upstream_name() -> None:
    own = _chunkls_defined()
    found = []
    for path in _sources(ROOT):
        if path != EXEMPT:
            where = str(path.relative_to(ROOT.parent))
            found += violations(path.read_text(encoding="utf-8"), own, where)
    assert not found, "private pygls/lsprotocol/cattrs names outside compat.py:\n" + "\n".join(
        found
    )


def test_the_compatibility_module_stays_small() -> None:
    assert len(EXEMPT.read_text(encoding="utf-8").splitlines()) <= 100
