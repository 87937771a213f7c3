"""The shape of the package: no import circle, packages in layers, features
apart, modules small, the top level a handful of modules, no two modules of one
name.

The import graph is read from the source with ``ast``: every ``import`` counts,
at module level or inside a function, except those under ``if TYPE_CHECKING:``
(they are for the type checker only and never run).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "chunkls"
DEVELOPMENT = PACKAGE.parents[1] / "docs" / "development.md"

FEATURES = {
    "chunkls.lsp.commands",
    "chunkls.lsp.completion",
    "chunkls.lsp.diagnostics",
    "chunkls.lsp.lenses",
    "chunkls.lsp.navigation",
    "chunkls.lsp.references",
    "chunkls.lsp.symbols",
    "chunkls.lsp.sync",
}
"""The LSP feature modules: each has ``register(server)``, wired by ``lsp.setup``."""

SERVER = "chunkls.lsp.server"

MAX_LINES = 400
"""Lines a module may have (split rather than grow past it)."""

LONG_MODULES: dict[str, int] = {
    "chunkls.chunking.corpus": 560,
    "chunkls.index.citations": 417,
    "chunkls.index.store": 592,
    "chunkls.search.hybrid": 434,
    "chunkls.search.inverted": 482,
    "chunkls.storage.cache": 458,
    "chunkls.storage.in_place": 436,
}
"""The modules over ``MAX_LINES`` when the gate came down to it (issue 46), each
with its length then as its own ceiling. The list only shrinks: a module may not
grow past its figure, and one back under ``MAX_LINES`` leaves the list."""

MAX_FUNCTION_LINES = 80
"""Lines a function (or method) may have, ``end_lineno - lineno + 1``."""

LONG_FUNCTIONS: dict[str, int] = {
    "chunkls.cli.check:check": 102,
    "chunkls.cli.ci_formats:sarif": 82,
}
"""The functions over ``MAX_FUNCTION_LINES`` (``module:qualified name``), each
with its own ceiling, shrink-only like ``LONG_MODULES``."""

PROTOCOL_FREE = (
    "chunkls.chunking",
    "chunkls.ids",
    "chunkls.index",
    "chunkls.runtime",
    "chunkls.search",
    "chunkls.storage",
)
"""The core: it (and all it imports) knows nothing of LSP."""

PROTOCOL_PACKAGES = {"pygls", "lsprotocol"}


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the package at ``root``."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements under ``node`` that run (not ``if TYPE_CHECKING:`` bodies)."""
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        for child in node.orelse:
            yield from _imports(child)
        return
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
        return
    for child in ast.iter_child_nodes(node):
        yield from _imports(child)


def imported_names(module: str, path: Path, is_package: bool) -> set[tuple[str, str]]:
    """What ``module`` imports: (``a``, ``a.b``) for ``from a import b`` (the
    second when ``b`` is a module, else the first), (``a.b``, ``a.b``) for
    ``import a.b``."""
    names: set[tuple[str, str]] = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update((alias.name, alias.name) for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            package = module.split(".")
            if not is_package:
                package.pop()
            package = package[: len(package) - (node.level - 1)]
            base = ".".join(package + ([base] if base else []))
        names.update((base, f"{base}.{alias.name}") for alias in node.names)
    return names


def import_graph(root: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module -> the package's modules it imports, module -> the outside
    top-level packages it imports)."""
    files = module_files(root)
    inside: dict[str, set[str]] = {}
    outside: dict[str, set[str]] = {}
    for module, path in files.items():
        names = imported_names(module, path, path.name == "__init__.py")
        inside[module] = set()
        outside[module] = set()
        for base, name in names:
            target = name if name in files else base
            if target in files:
                if target != module:
                    inside[module].add(target)
            elif target.split(".")[0] != root.name:
                outside[module].add(target.split(".")[0])
    return inside, outside


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (its modules, the first repeated at the end), or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found is not None:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found is not None:
                return found
    return None


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """``start`` and every module it imports, directly or not."""
    seen = {start}
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


GRAPH, OUTSIDE = import_graph(PACKAGE)


def test_the_package_has_no_import_circle() -> None:
    """No module imports itself through others."""
    assert find_cycle(GRAPH) is None, " -> ".join(find_cycle(GRAPH) or [])


def test_the_feature_list_is_every_module_with_register() -> None:
    """Every LSP module with ``register(server)`` is a feature (and is checked)."""
    registering = {
        module
        for module, path in module_files(PACKAGE).items()
        if module.startswith("chunkls.lsp.")
        and any(
            isinstance(node, ast.FunctionDef) and node.name == "register"
            for node in ast.parse(path.read_text(encoding="utf-8")).body
        )
    }
    assert registering == FEATURES


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_a_feature_imports_neither_the_server_nor_another_feature(feature: str) -> None:
    """What features share lives in modules of its own (documents, refs, ranges)."""
    wrong = GRAPH[feature] & (FEATURES | {SERVER})
    assert not wrong, f"{feature} imports {sorted(wrong)}"


def test_only_setup_wires_the_features() -> None:
    """The features are imported by the setup module only."""
    importers = {module for module, targets in GRAPH.items() if targets & FEATURES}
    assert importers == {"chunkls.lsp.setup"}


@pytest.mark.parametrize("core", PROTOCOL_FREE)
def test_the_core_knows_nothing_of_lsp(core: str) -> None:
    """The chunker, the index and search (and all they import) use neither
    pygls nor lsprotocol, nor any ``chunkls.lsp`` module."""
    for module in sorted(GRAPH):
        if module != core and not module.startswith(f"{core}."):
            continue
        for used in reachable(GRAPH, module):
            assert not used.startswith("chunkls.lsp"), f"{module} reaches {used}"
            assert not OUTSIDE[used] & PROTOCOL_PACKAGES, f"{module} reaches {used}: LSP"


FRONT_DOORS = ("chunkls.lsp", "chunkls.mcp")
"""The language server and the MCP server: each reaches the core, never the other."""
MCP_PACKAGES = {"mcp", "watchfiles"}


@pytest.mark.parametrize("door", FRONT_DOORS)
def test_a_front_door_does_not_reach_the_other(door: str) -> None:
    """No module of ``chunkls.mcp`` reaches ``chunkls.lsp``, and the reverse."""
    other = next(each for each in FRONT_DOORS if each != door)
    for module in sorted(GRAPH):
        if module == door or module.startswith(f"{door}."):
            for used in reachable(GRAPH, module):
                assert not used.startswith(other), f"{module} reaches {used}"


def test_only_the_mcp_front_door_uses_the_mcp_sdk() -> None:
    """The MCP SDK and the file watcher stay behind ``chunkls.mcp`` (and the CLI's
    lazy ``chunkls mcp`` runner), out of the core and the language server."""
    users = {module for module, outside in OUTSIDE.items() if outside & MCP_PACKAGES}
    assert users, "the check must see the MCP front door"
    assert all(module.startswith("chunkls.mcp") for module in users), users


LAYERS: dict[str, set[str]] = {
    "runtime": set(),
    "chunking": {"runtime", "search"},
    "ids": {"chunking"},
    "search": set(),
    "storage": {"chunking", "search"},
    "index": {"runtime", "chunking", "ids", "search", "storage"},
    "lsp": {"runtime", "chunking", "ids", "search", "storage", "index"},
    "mcp": {"runtime", "chunking", "ids", "search", "storage", "index"},
    "cli": {"runtime", "chunking", "ids", "search", "storage", "index", "lsp", "mcp"},
}
"""Each package and the packages it may import (besides itself and ``chunkls``'s
``__version__``): the process plumbing and search (on nothing) at the bottom,
then the chunker (which reads a search mode's name from ``[tool.chunkls]``); the
ID grammar (on the chunker's suffixes); the persistent
cache; the index and its query API; and the front doors on top (the CLI starts
the other two)."""

TOP_LEVEL_MODULES = 6
"""Modules directly in ``server/chunkls/`` at most (the rest live in packages)."""


def _package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layering_problems(graph: dict[str, set[str]], layers: dict[str, set[str]]) -> list[str]:
    """The imports that go against the layers (a package not listed may be
    imported by none, and imports nothing but itself)."""
    problems = []
    for module, targets in sorted(graph.items()):
        own = _package_of(module)
        if own in ("", "__main__"):
            continue
        for target in sorted(targets):
            used = _package_of(target)
            if used in (own, "") or used in layers.get(own, set()):
                continue
            problems.append(f"{module} imports {target}")
    return problems


def test_the_packages_are_layered() -> None:
    """A package imports only those below it (``LAYERS``)."""
    assert set(LAYERS) == {_package_of(m) for m in GRAPH if m.count(".") >= 1} - {"__main__"}
    assert layering_problems(GRAPH, LAYERS) == []


def test_the_layering_check_sees_an_import_upwards() -> None:
    graph = {"chunkls.search.x": {"chunkls.index.store"}, "chunkls.index.y": {"chunkls.search.x"}}
    assert layering_problems(graph, LAYERS) == ["chunkls.search.x imports chunkls.index.store"]


def test_the_top_level_is_a_handful_of_modules() -> None:
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_LEVEL_MODULES, top


def test_no_two_modules_share_a_name_but_the_front_doors_mirrors() -> None:
    """A name says one job: the front doors may mirror each other
    (``lsp/server.py`` and ``mcp/server.py``, ``cli/commands.py`` and
    ``lsp/commands.py``: each its own), nothing else repeats."""
    by_name: dict[str, list[str]] = {}
    for module, path in module_files(PACKAGE).items():
        name = path.parent.name if path.name == "__init__.py" else path.stem
        by_name.setdefault(name, []).append(module)
    repeated = {
        name: modules
        for name, modules in by_name.items()
        if len(modules) > 1
        and not all(m.startswith(("chunkls.cli.", "chunkls.lsp.", "chunkls.mcp.")) for m in modules)
    }
    assert repeated == {}


ENGINE = ("chunkls.index", "chunkls.search", "chunkls.storage")
"""The packages whose classes answer the questions (the store, the postings)."""


def _engine_classes(root: Path) -> set[str]:
    """The names of the classes the engine packages define."""
    return {
        node.name
        for module, path in module_files(root).items()
        if module.startswith(tuple(p.replace("chunkls", root.name, 1) for p in ENGINE))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    }


def _annotations(tree: ast.AST) -> Iterator[ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
            every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            yield from (a.annotation for a in every if a.annotation is not None)
            if node.returns is not None:
                yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def engine_unions(root: Path) -> list[str]:
    """Annotations that join two engine classes with ``|``: a question answered
    by either of two classes has one Protocol instead."""
    engine = _engine_classes(root)
    found = []
    for module, path in module_files(root).items():
        for annotation in _annotations(ast.parse(path.read_text(encoding="utf-8"))):
            for union in ast.walk(annotation):
                if len({_head(each) for each in _alternatives(union)} & engine) > 1:
                    found.append(f"{module}: {ast.unparse(union)}")
                    break
    return found


def _alternatives(node: ast.expr) -> list[ast.expr]:
    """The types a ``|`` union joins (none: ``node`` is no union)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)):
        return []
    return [each for side in (node.left, node.right) for each in (_alternatives(side) or [side])]


def _head(node: ast.expr) -> str | None:
    """The class a type names (``BM25Index`` of ``BM25Index[int]``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split("[", 1)[0].rsplit(".", 1)[-1]
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def test_no_annotation_is_a_union_of_engine_classes() -> None:
    """One query API, one postings Protocol: no ``A | B`` of the engine's classes."""
    assert engine_unions(PACKAGE) == []


def test_the_union_check_sees_one(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "index/__init__.py": "",
            "index/store.py": "class Store: ...\nclass Disk: ...\n",
            "cli.py": (
                "def f(x: dict[str, tuple[Store, Disk]] | None) -> Store | None: ...\n"
                "def g(y: 'int') -> store.Disk[int] | Store | None: ...\n"
            ),
        },
    )
    assert engine_unions(root) == ["pkg.cli: store.Disk[int] | Store | None"]


WRITERS = {"chunkls.index.store", "chunkls.index.bulk", "chunkls.index.refresh"}
"""Modules that change the index: a front door imports none (``Session`` owns them)."""
WRITER_NAMES = {"ChunkStore", "Folder", "FolderCache", "BulkIndexer", "InPlace"}
"""Mutable engine classes a front door never names (it has ``Queries``, ``FolderInfo``)."""
FOLDER_INSIDES = {
    *("in_place", "cache", "files", "generations", "by_id", "by_source", "storage"),
    *("deferred", "touched", "snapshot_stale", "store"),
}
"""A folder's (or the session's) insides a front door never reads (``self.x`` aside)."""
REACHING_AROUND = {"chunkls.cli.commands", "chunkls.lsp.server", "chunkls.mcp.service"}
"""Front doors that still reach ``session.store`` (issue 46 point 3 takes them
through ``Session``); shrink-only."""


def reaches_a_writer(module: str, source: str) -> list[str]:
    """What a front-door module imports or reads of the writer side: writer
    modules, mutable classes, a folder's insides; another module's private names
    (any module)."""
    door = module.split(".")[1:2] in (["cli"], ["lsp"], ["mcp"])
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chunkls"):
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [f"imports {n}" for n in names if re.search(r"\._(?!_)", n)]  # (not dunder)
            if door and node.module in WRITERS:
                found.append(f"imports {node.module}")
            elif door:
                found += [
                    f"imports {name}"
                    for name in names
                    if name in WRITERS or name.rpartition(".")[2] in WRITER_NAMES
                ]
        elif isinstance(node, ast.Import) and door:
            found += [f"imports {alias.name}" for alias in node.names if alias.name in WRITERS]
        elif (
            door
            and isinstance(node, ast.Attribute)
            and node.attr in FOLDER_INSIDES
            and not (isinstance(node.value, ast.Name) and node.value.id == "self")
            and not (node.attr == "store" and module in REACHING_AROUND)
        ):
            found.append(f"reads {ast.unparse(node)}")
    return sorted(found)


def test_front_doors_reach_no_writer() -> None:
    """A front door asks through ``Queries`` and gets ``FolderInfo``: it imports
    no writer nor ``Folder`` and reads no folder's insides; no module imports
    another's private names."""
    found = {
        module: problems
        for module, path in module_files(PACKAGE).items()
        if (problems := reaches_a_writer(module, path.read_text(encoding="utf-8")))
    }
    assert found == {}


FOLDER = "from chunkls.index.folder import "


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("chunkls.lsp.a", f"{FOLDER}FolderInfo\nq.folders", []),
        ("chunkls.lsp.a", f"{FOLDER}Folder", ["imports chunkls.index.folder.Folder"]),
        ("chunkls.mcp.a", "from chunkls.index.store import X", ["imports chunkls.index.store"]),
        ("chunkls.mcp.a", "from chunkls.index import store", ["imports chunkls.index.store"]),
        ("chunkls.cli.a", "import chunkls.index.bulk", ["imports chunkls.index.bulk"]),
        ("chunkls.cli.a", "f.in_place is None or g.files", ["reads f.in_place", "reads g.files"]),
        ("chunkls.mcp.a", "session.store.set_file()", ["reads session.store"]),
        ("chunkls.mcp.a", "self.files()\nq.folder.cache", ["reads q.folder.cache"]),
        ("chunkls.index.a", "f.in_place\nfrom chunkls.index.store import ChunkStore", []),
        (
            "chunkls.index.a",
            "from chunkls.storage.cache import _to",
            ["imports chunkls.storage.cache._to"],
        ),
    ],
)
def test_the_writer_check_sees_a_front_door_reach_it(
    module: str, source: str, expected: list[str]
) -> None:
    assert reaches_a_writer(module, source) == expected


def over_the_limit(lengths: dict[str, int], limit: int, allowed: dict[str, int]) -> list[str]:
    """What breaks a shrink-only size gate: a length over ``limit`` not allowed,
    or past its own ceiling; an allowed one gone (or back under ``limit``) still listed."""
    problems = [
        f"{name}: {lines} lines (at most {allowed.get(name, limit)})"
        for name, lines in sorted(lengths.items())
        if lines > max(limit, allowed.get(name, limit))
    ]
    problems += [
        f"{name}: listed, but {lengths.get(name, 'gone')}: drop it from the list"
        for name in sorted(allowed)
        if lengths.get(name, 0) <= limit
    ]
    return problems


def function_lengths(module: str, path: Path) -> dict[str, int]:
    """``module:qualified name`` -> lines, for every function and method in ``path``."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    assert child.end_lineno is not None
                    lengths[f"{module}:{name}"] = child.end_lineno - child.lineno + 1
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def test_modules_are_small() -> None:
    """No module over 400 lines (``MAX_LINES``) but those listed in ``LONG_MODULES``,
    none past its own ceiling."""
    lengths = {
        module: len(path.read_text(encoding="utf-8").splitlines())
        for module, path in module_files(PACKAGE).items()
    }
    assert over_the_limit(lengths, MAX_LINES, LONG_MODULES) == []


def test_functions_are_small() -> None:
    """No function over 80 lines (``MAX_FUNCTION_LINES``) but those listed in
    ``LONG_FUNCTIONS``, none past its own ceiling."""
    lengths: dict[str, int] = {}
    for module, path in module_files(PACKAGE).items():
        lengths.update(function_lengths(module, path))
    assert over_the_limit(lengths, MAX_FUNCTION_LINES, LONG_FUNCTIONS) == []


@pytest.mark.parametrize(
    ("lengths", "expected"),
    [
        ({"a": 400, "b": 450}, []),
        ({"a": 401, "b": 450}, ["a: 401 lines (at most 400)"]),
        ({"b": 451}, ["b: 451 lines (at most 450)"]),
        ({"b": 400}, ["b: listed, but 400: drop it from the list"]),
        ({}, ["b: listed, but gone: drop it from the list"]),
    ],
)
def test_the_size_gate_only_shrinks(lengths: dict[str, int], expected: list[str]) -> None:
    assert over_the_limit(lengths, 400, {"b": 450}) == expected


def test_function_lengths_name_methods_and_nested_functions(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "def f():\n    def g():\n        pass\n    return g\n\n"
        "class C:\n    async def h(self):\n        pass\n",
        encoding="utf-8",
    )
    assert function_lengths("m", path) == {"m:f": 4, "m:f.g": 2, "m:C.h": 2}


# -- the checks themselves ---------------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_circle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "a.py": "from pkg import b\n",
            "b.py": "def f():\n    from pkg.c import x\n",
            "c.py": "import pkg.a\nx = 1\n",
        },
    )
    graph, _ = import_graph(root)
    assert graph["pkg.a"] == {"pkg.b"}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]


def test_type_checking_imports_are_no_edges(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "a.py": "from pkg.b import y\n",
            "b.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg.a import x\n"
                "else:\n    import lsprotocol\n"
                "y = 1\n"
            ),
        },
    )
    graph, outside = import_graph(root)
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": set()}
    assert find_cycle(graph) is None
    assert outside["pkg.b"] == {"typing", "lsprotocol"}


def test_relative_imports_are_resolved(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "sub/__init__.py": "from . import one\n",
            "sub/one.py": "from ..two import z\nfrom .three import w\n",
            "sub/three.py": "w = 1\n",
            "two.py": "z = 1\n",
        },
    )
    graph, _ = import_graph(root)
    assert graph["pkg.sub"] == {"pkg.sub.one"}
    assert graph["pkg.sub.one"] == {"pkg.two", "pkg.sub.three"}


def test_the_layout_table_gives_every_module_its_job() -> None:
    """``docs/development.md`` has a row for each module (a package's ``__init__.py``
    only when it holds more than its docstring), and none for a module gone."""
    listed = set(re.findall(r"^\| `([\w/]+\.py)` \|", DEVELOPMENT.read_text("utf-8"), re.M))
    modules = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" or path.parent == PACKAGE or path.parent.name == "cli"
    }
    assert listed == modules


def test_front_doors_are_handed_a_view_that_cannot_write() -> None:
    """``Session.queries`` has exactly the questions of ``Queries``: no write method."""
    from chunkls.index.queries import QUESTIONS
    from chunkls.index.session import Session

    queries = Session().queries
    writes = ("set_file", "link", "make_searchable", "save", "add_folder", "read_in_place")
    assert not [name for name in writes if hasattr(queries, name)]
    assert {name for name in dir(queries) if not name.startswith("_")} == {
        *QUESTIONS,
        *("folders", "version", "folders_version", "incomplete"),
    }
    assert len(queries) == 0 and queries.folders == []
