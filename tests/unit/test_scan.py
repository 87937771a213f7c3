"""The scan, checked against the compiled module, gives exactly what a full
parse gives, or declines."""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.chunking import bytecode, scan
from chunkls.chunking.outline import Outline

from .test_outline import REPO, TRICKY_LINES, edit, full

pytestmark = pytest.mark.skipif(not scan.ENABLED, reason="the scan models Python 3.11 only")

STRING_LINES = [
    '"""',
    "'''",
    'x = """',
    "def s(): return '''",
    "x = '#'  # '",
    "x = \"\\\"\" + '\\''",
    "x = r'\\'' + rb\"\\\\\"",
    "x = ''''''",
    'x = """a""""b"',
    "x = 'a\\",
    "b'",
    "x = f'{y!r:>{w}}' f\"{'#'}\"",
    "x = (  # (",
    "  1)",
    "x = [",
    "def inside_brackets(): pass",
    "]",
    "def after(): return (",
    "1,",
    ")",
    "class K(",
    "    object):",
    "    '''doc",
    "def in_a_docstring(): pass",
    "'''",
    "@decorate(",
    "    1)",
    "@ spaced",
    "@(paren)",
    "@\\",
    "async  def spaced(): pass",
    "class  C :",
    "def\tt(): pass",
    "define = 1",
    "class_ = 2",
    "if x: '''",
    "'''; y = 1",
    "x = 1 \\",
    "\\",
    "    \\",
    "def naïve(): pass",
]
"""Lines around strings, brackets and continuations, where a scan could go wrong."""

LINES = TRICKY_LINES + STRING_LINES


def defs(outline: Outline | None) -> Outline | None:
    """The functions and classes of an outline."""
    return None if outline is None else tuple(s for s in outline if s.kind is not None)


def scan_outline(source: str) -> Outline | None:
    """The outline as a worker gets it when the text's bytecode is cached: the
    scan checked against the compiled module (``None`` where no bytecode would
    exist, or the two disagree)."""
    data = source.encode("utf-8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = compile(data, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return bytecode.outline_by_code(data, code)


def agrees(source: str, outliner: Callable[[str], Outline | None] = scan_outline) -> bool:
    """The outline (by default: the scan checked against the compiled module)
    equals the full parse, or declines; whether it answered."""
    got = outliner(source)
    if got is not None:
        assert got == defs(full(source)), source
    return got is not None


@pytest.mark.parametrize(
    "source",
    [
        "",
        "\n\n",
        "x = 1",
        "def f(): pass",
        "def f():\n    pass\n\n\n# trailing\n",
        "def f():\n    x = 1\n# a comment at column 0 inside\n    y = 2\n",
        "def f():\n    return '''\ndef g(): pass\n'''\n",
        "def f():\n    return '''\n#'''\n",
        "def f():\n    return (\n1)\nx = 2\n",
        "def f():\n    s = 'a\\\nb'\n",
        "@a\n# c\n\n@b.c(\n  1)\nclass C(\n  B):\n    pass\n",
        "async def f():\n    await g()\nclass C: pass\n",
        "x = '''\ndef fake(): pass\n'''\ndef real(): pass\n",
        "x = 1  # def fake(): '''\ndef real(): pass\n",
        "x = 1 \\\n+ 2\ndef f(): pass\n",
        "if x:\n    def nested(): pass\nelse:\n    pass\ndef top(): pass\n",
        "x = f'{1}' f\"{'a'}\"; y = rb'\\'' Rb\"#\"\ndef f(): pass\n",
        "def f(a=lambda: [i for i in x]): pass\n",
        "class C: x = [i for i in range(3)]\n",
        "def f():\n    pass\n    \n\t\n",
    ],
)
def test_texts_that_the_scan_outlines(source: str) -> None:
    assert agrees(source)


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("\ufeffdef f(): pass\n", "a byte-order mark"),
        ("def f():\n    pass\n\x0cdef g(): pass\n", "a form feed"),
        ("def f(): pass\0\n", "a NUL byte"),
        ("def naïve(): pass\n", "a non-ASCII name"),
        ("@(\n  deco)\ndef f(): pass\n", "a decorator continued on the next line"),
        ("@\\\ndeco\ndef f(): pass\n", "a decorator continued by a backslash"),
        ("def \\\nf(): pass\n", "a name on the next line"),
        ("class C:\n    x = 1\n\\\n    y = 2\n", "a line of a lone backslash"),
        ("nonlocal x\n", "an error only the symbol table finds"),
        ("def f(:\n", "a syntax error"),
        ("x = " + "-" * 2_000 + "1\n", "a very deep expression"),
        ("x = f'{" + "1+" * 1_000 + "1}'\n", "a very deep f-string"),
    ],
)
def test_texts_left_to_the_parser(source: str, why: str) -> None:
    assert scan_outline(source) is None, why
    if why not in ("an error only the symbol table finds", "a syntax error"):
        assert scan.statements(source.encode("utf-8")) is None, why  # not only no bytecode


@pytest.mark.parametrize("depth", [*range(2_900, 3_020, 7), 2_986])
def test_the_parsers_disagree_about_deep_texts_but_the_scan_declines_them(depth: int) -> None:
    """Near 3,000 levels ``ast.parse`` and the compiler give up at different depths
    (each as deep as its caller's stack allows): the scan declines long before."""
    for source in (
        "x = " + "-" * depth + "1\n",
        "x = a" + ".b" * depth + "\n",
        "f = " + "lambda a=" * (depth // 2) + "1" + ": 1" * (depth // 2) + "\n",
        "f = " + "lambda a, b: " * (depth // 2) + "1\n",  # commas do not split a lambda
        "f = (" + "lambda a, *, b=1: " * (depth // 3) + "1)\n",
        "x = f" + "()" * depth + "\n",
        "x = a" + "[0]" * depth + "\n",
        "x = [" + "1 + " * depth + "1, 2]\n",
        "x = g(1, " + "not " * depth + "y)\n",
        "x = 'a' " + "+ 'a' " * depth + "\n",
        "x = {'k': " + "-" * depth + "1}\n",
    ):
        assert scan.statements(source.encode("utf-8")) is None, source[:40]


@pytest.mark.parametrize(
    "source",
    [
        "TOPICS = {'a': 'x'\n" + "      'more text'\n" * 5_000 + "}\n",  # one long string
        "DATA = (\n" + "".join(f"    ({i:#x}, 'V'),\n" for i in range(3_000)) + ")\n",
        "CALL = f(\n" + "".join(f"    a{i}=[{i}, {i} + 1],\n" for i in range(2_000)) + ")\n",
        "D = {\n" + "".join(f"    'k{i}': (lambda x: x + {i}),\n" for i in range(300)) + "}\n",
    ],
    ids=["implicit-concatenation", "table-of-tuples", "keyword-arguments", "bracketed-lambdas"],
)
def test_long_flat_logical_lines_are_scanned(source: str) -> None:
    """Long logical lines whose elements are shallow are not mistaken for deep
    ones: a comma separates siblings, and a string is a leaf."""
    source += "\ndef after(): pass\n"
    assert scan.statements(source.encode("utf-8")) is not None
    assert agrees(source)


def test_a_table_of_many_short_entries_is_scanned() -> None:
    table = "TABLE = {\n" + "".join(f"    0x{i:04x}: 0x{i:04x},  # {i}\n" for i in range(256))
    assert agrees(table + "}\n\ndef f(): pass\n")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=16))
def test_any_text_of_tricky_lines_agrees(lines: list[str]) -> None:
    agrees("\n".join(lines))


def sources() -> list[Path]:
    return sorted((REPO / "server" / "chunkls").rglob("*.py")) + sorted(
        (REPO / "tests").rglob("test_*.py")
    )


@pytest.mark.parametrize("path", sources(), ids=lambda p: p.name)
def test_real_files_and_random_edits_of_them_agree(path: Path) -> None:
    text = path.read_text()
    assert agrees(text), "a file of this repository should be scanned"
    rng = random.Random(path.name)
    answered = sum(agrees(edit(rng, text)) for _ in range(20))  # each from the file
    assert answered, "some edits leave valid code"
    for _ in range(20):  # a session of edits, each on the last one
        text = edit(rng, text)
        agrees(text)


def test_tricky_lines_are_often_scanned() -> None:
    rng = random.Random(11)
    answered = sum(agrees("\n".join(rng.choices(LINES, k=8))) for _ in range(2_000))
    parsed = sum(full("\n".join(rng.choices(LINES, k=8))) is not None for _ in range(2_000))
    assert answered > parsed // 4  # the differential tests above test the scan itself


Found = list[tuple[scan.Statement, int]]
WRONG_SCANS: dict[str, Callable[[Found], Found]] = {
    "missing_one": lambda found: found[1:],
    "misnamed": lambda found: [(s._replace(name=s.name + "_"), line) for s, line in found],
    "first_moved": lambda found: [(s._replace(first=s.first + 1), line) for s, line in found],
    "keyword_moved": lambda found: [(s, line + 1) for s, line in found],
}
"""Ways a scan could go wrong: each turns the functions and classes it found into others."""


def scan_gone_wrong(monkeypatch: pytest.MonkeyPatch, wrong: str) -> None:
    """Make ``scan.statements`` answer as ``WRONG_SCANS[wrong]`` has it."""
    real = scan.statements

    def statements(data: bytes) -> object:
        found = real(data)
        assert found is not None
        return WRONG_SCANS[wrong](found[0]), found[1]

    monkeypatch.setattr(scan, "statements", statements)


@pytest.mark.parametrize("wrong", ["missing_one", "misnamed", "first_moved"])
def test_the_compiled_module_catches_a_scan_gone_wrong(
    wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = "def f(): pass\nclass C: pass\nx = [i for i in y]\n"
    assert scan_outline(source) is not None
    scan_gone_wrong(monkeypatch, wrong)
    assert scan_outline(source) is None


def test_a_long_line_of_many_bracket_levels_is_left_to_the_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bound takes a pass per bracket level: past ``PATH_WORK`` the scan
    declines instead of spending that time."""
    source = "x = [" + "(" * 40 + "1" + ")" * 40 + ", 2" * 1_000 + "]\n\ndef f(): pass\n"
    assert scan.statements(source.encode("utf-8")) is not None
    monkeypatch.setattr(scan, "PATH_WORK", 1_000)
    assert scan.statements(source.encode("utf-8")) is None


def _ast_depth(node: object) -> int:
    """How deep a parse tree is, as ``ast.parse``'s conversion counts it."""
    import ast

    deepest, stack = 0, [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in ast.iter_child_nodes(current):  # type: ignore[arg-type]
            stack.append((child, depth + 1))
    return deepest


_LEAVES = st.sampled_from(["x", "1", "'s'", "f'{y}'", "a.b", "()", "[]", "None"])
_LINKS = st.sampled_from(
    [
        "-({})",
        "not ({})",
        "({}) + 1",
        "({}).attr",
        "({})[0]",
        "f({})",
        "f(a, k={})",
        "lambda a, b: {}",  # a lambda's commas: not siblings
        "lambda a, b=1, *c: {}",
        "({}) if c else d",
        "[{} for a, b in c]",
        "{{k: {} for k, v in c}}",
        "({}, 2)",
        "[1, {}]",
        "{{1: {}}}",
        "a[1:{}]",
    ]
)
"""Constructs that take any expression inside and make one: chained, always Python."""


@st.composite
def _expressions(draw: st.DrawFn) -> str:
    """A chain of constructs, each inside the next: deep with few tokens, with
    and without brackets and commas around its levels."""
    expression = draw(_LEAVES)
    for link in draw(st.lists(_LINKS, max_size=60)):
        expression = link.format(expression)
    return expression


_EXPRESSIONS = _expressions()


def _bound(source: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """The scan's nesting bound for a text: one less than the smallest ``DEEPEST``
    it accepts the text under (it accepts exactly when the bound is below)."""
    data = source.encode("utf-8")
    low, high = 1, 4 * len(data) + 2  # a bound never exceeds the bytes
    while low < high:
        middle = (low + high) // 2
        monkeypatch.setattr(scan, "DEEPEST", middle)
        if scan.statements(data) is not None:
            high = middle
        else:
            low = middle + 1
    return low - 1


@settings(max_examples=300, deadline=None)
@given(_EXPRESSIONS)
def test_the_nesting_bound_bounds_the_nesting(expression: str) -> None:
    """``ast.parse``'s depth is at most 3 levels per token the bound counts, plus 2
    per bracket level and the statement's own few, as ``DEEPEST``'s argument says."""
    import ast
    import sys

    source = f"def f():\n    x = {expression}\n"
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return  # not Python (a starred expression where none may be)
    finally:
        sys.setrecursionlimit(saved)
    level = brackets = 0
    for char in expression:  # the leaves' strings hold no brackets
        level += (char in "([{") - (char in ")]}")
        brackets = max(brackets, level)
    with pytest.MonkeyPatch.context() as monkeypatch:
        bound = _bound(source, monkeypatch)
    real = _ast_depth(tree)
    assert real <= 3 * bound + 2 * brackets + 10, (bound, expression)  # the argument
    assert real <= 3 * bound + 10, (bound, expression)  # and as it turns out


def _dense(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Whether each byte is inside a string or comment, and the bracket depth after
    it, counted byte by byte (the definitions the scan's sparse forms must match)."""
    pieces = scan._STRINGS_AND_COMMENTS.split(data)
    masked, depth, level = [], [], 0
    for number, piece in enumerate(pieces):
        for at, byte in enumerate(piece):
            inside = number % 2 == 1 and at > 0
            masked.append(inside)
            if not inside and number % 2 == 0:
                level += {ord("("): 1, ord("["): 1, ord("{"): 1}.get(byte, 0)
                level -= {ord(")"): 1, ord("]"): 1, ord("}"): 1}.get(byte, 0)
            depth.append(level)
    return np.array(masked, dtype=bool), np.array(depth, dtype=np.int64)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=16), st.randoms())
def test_strings_brackets_and_masked_counts_match_a_byte_by_byte_count(
    lines: list[str], rng: random.Random
) -> None:
    data = "\n".join(lines).encode("utf-8")
    if not data:
        return
    masked, depth = _dense(data)
    spans, found = scan.strings_and_comments(data)
    assert found.tolist() == masked.tolist()
    brackets = scan.Brackets.of(np.frombuffer(data, dtype=np.uint8), found)
    everywhere = np.arange(len(data), dtype=np.int64)
    assert brackets.depth_at(everywhere).tolist() == depth.tolist()
    start = rng.randrange(len(data))
    end = rng.randrange(start, len(data)) + 1
    assert brackets.depths(start, end).tolist() == depth[start:end].tolist()
    positions = np.arange(len(data) + 1, dtype=np.int64)
    before = np.concatenate(([0], np.cumsum(masked)))
    assert scan.inside_before(spans, positions).tolist() == before.tolist()


@pytest.mark.parametrize(
    "source",
    [
        "x = " + " + ".join(f"f'{{a}}{i}'" for i in range(200)) + "\n",  # f-strings weigh
        "x = " + "-" * 800 + "1\n",  # operators: a token a byte
        "x = '''" + "(" * 900 + "'''\n",  # inside a string: no weight
        '"""' + "doc " * 300 + '"""\n',
    ],
    ids=["f-strings", "operators", "string", "docstring"],
)
def test_the_cheap_bound_of_long_lines_never_skips_a_line_the_exact_weight_keeps(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Long lines below the bound need no closer look: the exact bound alone
    (every long line weighed) gives the same answer at every ``DEEPEST``."""
    data = (source + "\ndef f(): pass\n").encode("utf-8")
    for deepest in (50, 200, 600, 700, 900, 1_200):
        monkeypatch.setattr(scan, "DEEPEST", deepest)
        fast = scan.statements(data)
        monkeypatch.setattr(scan, "inside_before", lambda spans, positions: 0 * positions)
        slow = scan.statements(data)  # nothing counted as inside: every long line weighed
        monkeypatch.undo()
        assert fast == slow, deepest
