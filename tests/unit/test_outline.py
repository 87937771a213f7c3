"""Re-parsing only what an edit touched gives exactly a full parse's outline."""

from __future__ import annotations

import ast
import random
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.chunking import chunker
from chunkls.chunking.outline import Outline, Parsed, Statement, outline_of, reparse

REPO = Path(__file__).resolve().parents[2]

TRICKY_LINES = [
    "",
    "# a comment",
    "    # an indented comment",
    "pass",
    "    pass",
    "        return 1",
    "else:",
    "elif x:",
    "except Exception:",
    "except* ValueError:",
    "finally:",
    "    x = 1",
    "x = 1; y = 2",
    "if x: pass",
    "if x:",
    "try:",
    "while True:",
    "def f():",
    "def g(): return 1",
    "async def h(): pass",
    "class C:",
    "class D: pass",
    "@decorator",
    "@decorator()",
    "    @decorator",
    "\\",
    "x = 1 \\",
    '"""',
    '    """docstring',
    "'''",
    "x = (",
    ")",
    "]",
    "x = [1,",
    "match x:",
    "    case 1: pass",
    "case = 1",
    "\tx = 1",
    "\x0cdef ff(): pass",
    "from __future__ import barry_as_FLUFL",
    "1 <> 2",
    "print 'py2'",
    "lambda: (yield)",
    "return",
    "await x",
    "def (:",
    "x = '\\d'",
    "f'{x'",
    "\u00e9t\u00e9 = 1",
]


def full(source: str) -> Outline | None:
    """The outline by a full parse, or ``None`` when the text does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return outline_of(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def edit(rng: random.Random, source: str) -> str:
    """One random line edit, biased to the places that matter (boundaries)."""
    lines = source.split("\n")
    at = rng.randrange(len(lines) + 1)
    operation = rng.randrange(9)
    if operation == 0:
        lines.insert(at, rng.choice(TRICKY_LINES))
    elif operation == 1 and lines:
        del lines[min(at, len(lines) - 1) : min(at, len(lines) - 1) + rng.randint(1, 3)]
    elif operation == 2 and lines:
        lines[min(at, len(lines) - 1)] = rng.choice(TRICKY_LINES)
    elif operation == 3 and lines:
        i = min(at, len(lines) - 1)
        lines[i] = lines[i].lstrip()  # dedent
    elif operation == 4 and lines:
        i = min(at, len(lines) - 1)
        lines[i] = "    " + lines[i]
    elif operation == 5 and lines:
        i = min(at, len(lines) - 1)
        lines[i] += rng.choice([" \\", "(", ")", ":", "  # c", "x", '"'])
    elif operation == 6 and len(lines) > 2:
        i = rng.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif operation == 7 and lines:
        i = min(at, len(lines) - 1)
        lines[i:i] = lines[i : i + rng.randint(1, 6)]  # duplicate a block
    else:  # rename on a def line, as typing does
        defs = [i for i, line in enumerate(lines) if line.startswith(("def ", "class "))]
        if defs:
            i = rng.choice(defs)
            lines[i] = lines[i].replace("(", "_x(", 1).replace(":", "_x:", 1)
    return "\n".join(lines)


def check(previous: Parsed, source: str) -> Parsed:
    """``reparse`` agrees with a full parse (or declines); the state after."""
    expected = full(source)
    got = reparse(previous, source)
    if got is not None:
        assert expected is not None, f"re-parse accepted a text that does not parse:\n{source}"
        assert got.outline == expected
        assert got.text == source
        return got
    return Parsed(source, expected) if expected is not None else previous


def sources() -> list[Path]:
    return sorted((REPO / "server" / "chunkls").rglob("*.py")) + sorted(
        (REPO / "tests" / "unit").glob("test_c*.py")
    )


@pytest.mark.parametrize("path", sources(), ids=lambda p: p.name)
def test_random_edits_of_real_files_agree_with_full_parses(path: Path) -> None:
    text = path.read_text()
    outline = full(text)
    assert outline is not None
    rng = random.Random(path.name)
    reused = 0
    for _ in range(30):  # each edit from the original text
        source = edit(rng, text)
        after = check(Parsed(text, outline), source)
        reused += after.text == source and reparse(Parsed(text, outline), source) is not None
    state = Parsed(text, outline)
    for _ in range(30):  # a session of edits, each on the last one
        state = check(state, edit(rng, state.text))
    if "barry_as_FLUFL" not in text:  # that name anywhere: always a full parse
        assert reused >= 3, "the re-parse should serve the edits that leave valid code"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(TRICKY_LINES), max_size=12),
    st.lists(st.sampled_from(TRICKY_LINES), max_size=12),
    st.lists(st.sampled_from(TRICKY_LINES), max_size=4),
    st.lists(st.sampled_from(TRICKY_LINES), max_size=4),
)
def test_any_edit_between_tricky_lines_agrees(
    head: list[str], tail: list[str], old_middle: list[str], new_middle: list[str]
) -> None:
    old = "\n".join([*head, *old_middle, *tail])
    outline = full(old)
    if outline is None:
        return
    check(Parsed(old, outline), "\n".join([*head, *new_middle, *tail]))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a backslash runs the kept statement into the edited line
        ("x = 1 \\\n\ny = 2\n", "x = 1 \\\nz = 3\ny = 2\n"),
        # else continues the statement before
        ("if x:\n    pass\ny = 2\n", "if x:\n    pass\nelse:\n    pass\n"),
        # an edited line indented into the function above
        ("def a():\n    x = 1\ny = 2\n", "def a():\n    x = 1\n    y = 2\n"),
        # statements sharing a line
        ("x = 1; y = 2\nz = 3\n", "x = 1; y = 2\nz = 4\n"),
        # barry_as_FLUFL changes the tokens of the whole file
        (
            "from __future__ import barry_as_FLUFL\nx = 1\n",
            "from __future__ import barry_as_FLUFL\nx = 1 <> 2\n",
        ),
        # an unterminated string in the edit
        (
            "def a():\n    pass\ndef b():\n    pass\n",
            'def a():\n    pass\n"""\ndef b():\n    pass\n',
        ),
    ],
)
def test_edits_that_depend_on_their_neighbours(old: str, new: str) -> None:
    outline = full(old)
    assert outline is not None
    check(Parsed(old, outline), new)


def test_a_one_function_edit_re_parses_that_function_only(monkeypatch: pytest.MonkeyPatch) -> None:
    functions = [f"def f_{i}(x):\n    return x * {i}\n" for i in range(50)]
    old = "\n".join(functions)
    new = old.replace("def f_7(", "def f_7_renamed(")
    parsed: list[str] = []
    real = ast.parse

    def counting(source: str, *args: object, **kwargs: object) -> ast.Module:
        parsed.append(source)
        return real(source, *args, **kwargs)  # type: ignore[arg-type]

    previous = Parsed(old, full(old) or ())
    monkeypatch.setattr(ast, "parse", counting)
    got = reparse(previous, new)
    assert got is not None
    assert parsed == ["\ndef f_7_renamed(x):\n    return x * 7\n"]  # with the gap before
    assert Statement(22, 23, "function", "f_7_renamed") in got.outline


def test_chunk_source_chunks_edited_texts_as_a_full_parse_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chunker, "_recent", {})
    monkeypatch.setattr(chunker, "_parsed", {})
    rng = random.Random(7)
    text = (REPO / "server" / "chunkls" / "search.py").read_text()  # a long module of ours
    for _ in range(40):
        text = edit(rng, text)
        try:
            expected = chunker.chunk_python_source(text, "m.py", "m.py")
        except chunker.ChunkingError as error:
            with pytest.raises(chunker.ChunkingError) as raised:
                chunker.chunk_source(text, "m.py", "m.py")
            assert raised.value.reason == error.reason
            continue
        assert chunker.chunk_source(text, "m.py", "m.py") == expected
