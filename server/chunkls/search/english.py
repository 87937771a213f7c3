"""What English carries that code does not: stop words, Sphinx markup, a word's forms. Small
and fixed on purpose: used on a query's words and a result's name, never the corpus."""

from __future__ import annotations

import functools
import re

STOP_WORDS = frozenset(
    """
    a an the and or but if of to in on at by for from with without into onto over
    under about as is are was were be been being am do does did doing done have has
    had having how what where which who whom whose why when there here this that these
    those it its me my we our you your he she they them their his her can could should
    would will shall may might must not no nor so than too very just also only then
    some any all each every such both either neither one ones given using use used via
    per i
    """.split()  # noqa: SIM905 (a list of words reads better as text)
)
"""Question and function words: scored like content words, they rank chunks by
how often they say "the". Words that name code (``return``, ``get``, ``list``,
``self``) are not among them."""

_ROLE = re.compile(r":(?:[A-Za-z]+:)*[A-Za-z]+:(?=`)")
"""A Sphinx role before its target (``:class:`` of ``:class:`Foo```, ``:py:meth:``)."""

_SUFFIXES = (
    "ations", "ation", "ings", "ing", "ers", "er", "ors", "or",
    "ies", "ied", "es", "ed", "s", "e", "y", "ly",
)  # fmt: skip
"""Endings taken off a word for its stem, longest first (one is taken)."""
_SUFFIXES_BY_LAST = {
    last: tuple(suffix for suffix in _SUFFIXES if suffix[-1] == last)
    for last in {suffix[-1] for suffix in _SUFFIXES}
}
"""The endings by their last letter, in ``_SUFFIXES``' order."""
_ENDINGS = ("", "e", "s", "es", "ed", "ing", "er", "ers", "or", "ion", "ions", "ation", "y", "ies")
"""Endings put on a stem for the other forms of a word."""
MIN_STEM = 3
"""Letters a stem keeps: shorter words are their own stem."""
STEMS_KEPT = 1024
"""Words whose stem is kept (query words and names' parts: new names come with
every save, so this is what bounds it)."""


def strip_roles(text: str) -> str:
    """The text without Sphinx roles' names (``:class:`Foo``` reads ``Foo``)."""
    return _ROLE.sub(" ", text)


@functools.lru_cache(maxsize=STEMS_KEPT)
def stem(word: str) -> str:
    """A lowercase word without its ending (``parsing``, ``parser``, ``parse``
    give ``pars``); crude but the same for every form it is asked of."""
    for suffix in _SUFFIXES_BY_LAST.get(word[-1:], ()):
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            return word[: -len(suffix)]
    return word


def other_forms(word: str) -> list[str]:
    """The other forms of a word (most are no words: they find nothing, count nothing)."""
    root = stem(word)
    return [form for ending in _ENDINGS if (form := root + ending) != word]
