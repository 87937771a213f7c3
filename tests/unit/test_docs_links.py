"""The README and docs/: every relative link and anchor points at something that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 250
"""The README stays a front page: what chunkls is, the two commands, a tour, links."""

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose(text: str) -> str:
    """The text outside fenced code blocks and HTML comments."""
    kept: list[str] = []
    fence = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence) and not stripped.strip("`~"):
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        kept.append(line)
    return _COMMENT.sub("", "\n".join(kept))


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings (``-1``, ``-2`` for repeats)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in prose(text).splitlines():
        match = _HEADING.match(line)
        if not match:
            continue
        title = _CODE_SPAN.sub(lambda m: m.group(2), match.group(1))
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def broken_links(page: Path, repo: Path) -> list[str]:
    """Each relative link of ``page`` whose file or heading does not exist."""
    text = page.read_text(encoding="utf-8")
    broken: list[str] = []
    for target in _LINK.findall(_CODE_SPAN.sub("", prose(text))):
        if _SCHEME.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not _resolves(dest, anchor, repo):
            broken.append(target)
    return broken


def _resolves(dest: Path, anchor: str, repo: Path) -> bool:
    """Whether ``dest`` is a file or folder of ``repo`` with the heading ``anchor``."""
    if not dest.is_relative_to(repo) or not dest.exists():
        return False
    if not anchor or dest.suffix != ".md":
        return True
    return anchor in anchors(dest.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page, REPO) == []


def test_the_checker_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## `chunkls check` in CI\n")
    page = tmp_path / "README.md"
    page.write_text(
        "# Title\n\n## Title\n\n"
        "[ok](docs/a.md) [ok](docs/a.md#chunkls-check-in-ci) [ok](#title-1) "
        "![ok](docs/a.md) [web](https://example.invalid/x.md#nowhere)\n"
        "[gone](docs/b.md) [no heading](docs/a.md#setup) [no heading](#title-2)\n"
        "[outside](../x.md) `[in code](docs/c.md)`\n"
        "<!-- [commented](docs/d.md) -->\n"
        "```md\n[in a fence](docs/e.md)\n```\n"
    )
    assert broken_links(page, tmp_path) == [
        "docs/b.md",
        "docs/a.md#setup",
        "#title-2",
        "../x.md",
    ]


def test_every_docs_page_is_linked_from_the_index() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for target in _LINK.findall(prose(index))}
    orphans = [p.name for p in DOCS.glob("*.md") if p.name != "index.md" and p.name not in linked]
    assert orphans == [], "add these pages to the table in docs/index.md"


def test_the_readme_is_a_front_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    assert "uv run pytest" in readme
    assert "![" in readme, "one screenshot"
