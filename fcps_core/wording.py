"""Counts and changes as every layer writes them: "1 judge", "3 judges", "1,204 patterns"
(never "3 judge(s)"); a signed change at a number of decimals ("+0.0012"), with no sign
where it prints as 0 and, where it is not 0, the decimals that show its side of 0. A leaf
module (no imports from the package), so the readers, the selection, the reports and the
figures print them alike."""

from __future__ import annotations

import math
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


def side_digits(v: float | None) -> int:
    """Decimals that show at least two significant digits of a small number (3 to 6): the
    precision at which one that is not 0 keeps its side of 0."""
    if v is None or v == 0 or not math.isfinite(v):
        return 3
    return max(3, min(6, 1 - math.floor(math.log10(abs(v)))))


def fixed_text(v, digits: int = 3) -> str:
    """A number at ``digits`` decimals; "-" when missing or not a number (never "nan")."""
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"


def interval_end(v, digits: int = 4) -> str:
    """An interval's end at ``digits`` decimals; one that is not 0 but would print as 0
    ("-0.0000") at its own precision (:func:`side_digits`), so which side of 0 it lies on
    stays readable; "-" when missing or not a number."""
    if v is not None and math.isfinite(v) and v != 0 and round(v, digits) == 0:
        return fixed_text(v, max(digits, side_digits(v)))
    return fixed_text(v, digits)


def signed_change(v, digits: int = 4) -> str:
    """A change (a difference, an interval end of one) with its sign at ``digits`` decimals
    ("+0.0012", "-0.0003"); exactly 0, or a value whose every printed digit is 0, as "0.0000"
    with no sign (a sign rounding made up would give it a direction); one that is not 0 but
    would print as 0 keeps the decimals that show its side of 0 ("-0.000002", as
    :func:`interval_end`)."""
    if v is None or not math.isfinite(v):
        return "-"
    text = interval_end(v, digits)
    if v == 0 or not text.strip("-0."):
        return fixed_text(0.0, digits)
    return text if text.startswith("-") else "+" + text


def gain_text(v, digits: int = 4) -> str:
    """An interaction gain as every page shows it: signed, ``digits`` decimals ("+0.0100"; a
    run's risk decimals, more than 4 on a panel whose MSE is near 0.0002, where 4 printed
    every gain and interval "0.0000", walk 10); one that rounds to 0 as "0.0000", with no sign
    (a sign rounding left meaningless, "+0.0000" for -1.1e-07, would give it a direction it
    does not have)."""
    if v is None:
        return "-"
    r = round(v, digits)
    return f"{0:.{digits}f}" if r == 0 else f"{r:+.{digits}f}"
