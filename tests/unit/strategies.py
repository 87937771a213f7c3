"""Hypothesis strategies and tree helpers shared by the unit tests."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

Tree = dict[str, str | bytes]


def small_corpus(root: Path) -> Path:
    """Twelve modules, twelve notes and a file that does not parse, under ``root``
    (the persistent index's tests)."""
    (root / "pkg").mkdir(parents=True)
    for i in range(12):
        (root / "pkg" / f"m{i}.py").write_text(
            f'"""Module {i}."""\n\nALPHA = {i}\n\n\ndef alpha_{i}(x):\n    return x + {i}\n\n\n'
            f"class Beta{i}:\n    def gamma(self):\n        return 'helper value {i}'\n"
        )
        (root / f"notes{i}.md").write_text(f"# Notes {i}\n\nnotes text {i}\n\n## Section\n\nx\n")
    (root / "broken.py").write_text("def broken(:\n")
    return root


def write_tree(root: Path, tree: Tree) -> None:
    for rel, content in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode("utf-8")
        path.write_bytes(content)


_NAME = st.sampled_from(["f", "g", "main", "Greeter", "_private", "naïve", "x1"])
_BODY = st.sampled_from(
    ["    pass", "    return 1", '    """Doc."""', "    x = (\n        1\n    )"]
)
_DECORATOR = st.sampled_from(["@overload", "@dec", "@dec(\n    1)", "@a.b"])


@st.composite
def _python_fragment(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["def", "async", "class", "stmt", "comment", "string", "blank"]))
    name = draw(_NAME)
    if kind in ("def", "async", "class"):
        decorators = draw(st.lists(_DECORATOR, max_size=2))
        head = {"def": "def {}():", "async": "async def {}():", "class": "class {}:"}[kind]
        body = draw(st.lists(_BODY, min_size=1, max_size=2))
        if kind == "class" and draw(st.booleans()):
            body.append("    def method(self):\n        pass")
        return "\n".join([*decorators, head.format(name), *body])
    if kind == "stmt":
        return draw(st.sampled_from(["import os", "X = 1", "if X:\n    Y = 2", "print(1)"]))
    if kind == "comment":
        return draw(st.sampled_from(["# comment", "#!/usr/bin/env python", "# def fake():"]))
    if kind == "string":
        inner = draw(st.sampled_from(["\x85", "\u2028", "\u2029", "\x1c", "\f", "\v", "a"]))
        return f"S = '{inner}'"
    return draw(st.sampled_from(["", "   ", "\t"]))


_NEWLINE = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r", "\n\f", "\n\n", "\n  \n"])


@st.composite
def python_source(draw: st.DrawFn) -> str:
    fragments = draw(st.lists(_python_fragment(), max_size=6))
    out = ""
    for fragment in fragments:
        out += fragment + draw(_NEWLINE)
    if out and draw(st.booleans()):
        out = out.rstrip("\n")
    return out


_MD_LINE = st.sampled_from(
    [
        "# Setup",
        "## Setup",
        "# setup",
        "# Set-up!",
        "### Trailing ###",
        "#######",
        "####### seven",
        "#NoSpace",
        "# 日本語",
        "# ???",
        "#",
        "# ",
        "```",
        "```python",
        "# inside a fence?",
        "text",
        "more text  ",
        "",
        "   ",
        "\tindented",
        "a\fb",
        "x\x85y",
        "p\u2028q",
        "> # quoted",
    ]
)


@st.composite
def markdown_source(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_MD_LINE, max_size=12))
    ends = draw(
        st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines), max_size=len(lines))
    )
    return "".join(line + end for line, end in zip(lines, ends, strict=True))


_FILE_NAME = st.sampled_from(
    [
        "a.py",
        "b.md",
        "a-b/x.py",
        "a/x.py",
        "a_b/x.md",
        "A.PY",
        "c.markdown",
        "docs/d.md",
        "x/build/e.py",
        "test_verify_facts.py",
        "n.txt",
        "x/y/z.md",
        ".md",
    ]
)


@st.composite
def trees(draw: st.DrawFn) -> Tree:
    names = draw(st.lists(_FILE_NAME, max_size=6, unique=True))
    tree: Tree = {}
    for name in names:
        is_md = name.lower().endswith((".md", ".markdown"))
        tree[name] = draw(markdown_source() if is_md else python_source())
    return tree
