"""The text the user types for lists, ranges, budgets and block ratios, read one way for
the command line and the dashboard: a bad value is one :class:`~fcps_core.errors.FCPSError`
naming the flag or control and giving an example."""

from __future__ import annotations

import math
from typing import Sequence

from ..errors import FCPSError


def parse_names(values: Sequence[str] | None) -> list[str] | None:
    """Names given as ``a b`` and as ``a,b`` (``--families a b`` and ``--families a,b``),
    in order, blanks dropped; None when nothing was given."""
    if values is None:
        return None
    out = []
    for v in values:
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


def parse_range(text: str | None, flag: str = "--label-range") -> tuple[float, float] | None:
    """``LO,HI`` of ``flag`` (named in the error: ``--label-range`` or ``--judge-range``);
    None when no text was given."""
    if text is None:
        return None
    try:
        lo, hi = (float(x) for x in text.split(","))
    except ValueError:
        raise FCPSError(f"{flag} {text!r} must be LO,HI: two numbers separated by a comma "
                        "(e.g. 1,5)") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise FCPSError(f"{flag} {text!r} must be two finite numbers LO,HI with LO < HI (e.g. 1,5)")
    return lo, hi


def screen_option(text: str | None, flag: str = "--screen-se") -> dict:
    """The selector's ``screen_se`` from ``flag``'s text: {} when not given (the default),
    None for ``off``, else a number >= 1."""
    if text is None:
        return {}
    if text.strip().lower() in ("off", "none"):
        return {"screen_se": None}
    try:
        z = float(text)
    except ValueError:
        z = math.nan
    if not (math.isfinite(z) and z >= 1):
        raise FCPSError(f"{flag} {text!r} must be a number >= 1 (the tie band is one SE; e.g. 2) or 'off'")
    return {"screen_se": z}


def parse_budgets(text: str, flag: str = "--budgets") -> list[int]:
    """``50,100,200``: positive whole numbers of calibration labels (n_M), sorted."""
    try:
        budgets = sorted(int(b) for b in text.split(",") if b.strip())
    except ValueError:
        raise FCPSError(f"{flag} {text!r} must be comma-separated whole numbers (e.g. 50,100,200)") from None
    if not budgets or budgets[0] < 1:
        raise FCPSError(f"{flag} {text!r} must be comma-separated positive whole numbers (e.g. 50,100,200)")
    return budgets


def parse_ratio(text: str, name: str = "--split") -> tuple:
    """A block ratio ``S:M:V`` or ``S:M:V:T`` (:func:`fcps_core.data.splits.parse_ratio`)."""
    from ..data.splits import parse_ratio as ratio
    return ratio(text, name=name)
