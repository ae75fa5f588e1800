"""Counts in words: "1 judge", "3 judges", "1,204 patterns", never "3 judge(s)". A leaf
module (no imports from the package), so every layer, readers and errors included, prints
counts the same way."""

from __future__ import annotations

import numbers


def noun_for(n, noun: str, plural: str | None = None) -> str:
    """``noun`` for a count of one, its plural (``plural`` or noun + "s") otherwise: the word
    of :func:`count_of` without the number ("judge column" / "judge columns" before a list
    of names)."""
    return noun if n == 1 else (plural or noun + "s")


def count_of(n, noun: str, plural: str | None = None) -> str:
    """"1 pattern", "1,204 patterns" (not "1,204 pattern(s)"): a count and its noun, singular
    or plural. Whole numbers (numpy's too, and floats such as 2.0) get thousands separators;
    other numbers print as ``:g``."""
    whole = isinstance(n, numbers.Integral) or (isinstance(n, numbers.Real) and float(n).is_integer())
    shown = f"{int(n):,}" if whole else f"{float(n):g}"
    return f"{shown} {noun_for(n, noun, plural)}"


def judges_count(n) -> str:
    """"1 judge", "3 judges": the one count of judges on the pages, figures, reports and
    the CLI."""
    return count_of(n, "judge")
