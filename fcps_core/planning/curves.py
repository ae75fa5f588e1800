"""Calibration-growth curves: fit each menu's risk over n_M, extrapolate it, find crossovers.

Model. In the paper's bookkeeping decomposition (Eq. eq:finite-risk) a menu's risk at
fixed n_S and n_V changes with the calibration size n_M only through the estimation term
Est, which the paper bounds by a power of n_M: M_K log M_K / n_M for a balanced joint
table (Eq. eq:balanced-table-rate) and sqrt(K / n_M) for a scalar stacker
(Eq. eq:parametric-bound). Each menu's curve is therefore fitted as

    R_menu(n_M) = a + b * n_M ** (-c),      a >= 0,  b >= 0,  0 < c <= 3,

where ``a`` is the risk the menu approaches with unlimited calibration labels and
b n_M^-c is its calibration pressure. The points fitted are the menu's mean validation
risk over splits at each budget -- the risk of that menu's validation-selected candidate on
V (or its cross-fitted risk), never the research test block's, which informs no plan.

Fit. Weighted nonlinear least squares (:func:`scipy.optimize.curve_fit`, bounds as above),
weights 1/SE^2 with SE the standard error over splits at each budget, floored at the median
SE over budgets: noisy budgets count less, but no budget counts more than a typical one (the
curve form is an approximation, and the most precise budget -- usually the largest -- must
not pin it and with it the extrapolation towards small budgets). The starting point comes from a
profile over c (for fixed c the model is linear in a and b, solved in closed form). Fewer
than :data:`MIN_BUDGETS` budgets: no fit, status ``too_few_budgets``.

Intervals. Splits are resampled with replacement (``n_boot`` seeded resamples; the same
resampled splits for every menu, so menus stay paired) and every menu is refitted -- the
same weighted least squares, solved for all resamples at once by profiling c on a coarse
and then a fine grid; bands are the 10th/50th/90th percentiles (:data:`LEVELS`) of the
refitted curves.

Crossover. n* is the smallest n_M in [n_lo, horizon] at which the challenger's fitted curve
(the table-like menu) falls below the incumbent's (the scalar menu); n_lo is the smallest
budget both were measured at and the horizon is ``horizon_factor`` (default 10) times the
largest budget. Status ``already_ahead`` when the challenger is below at n_lo,
``not_within_horizon`` when it never gets below before the horizon. The interval is the
same percentiles of n* over the bootstrap refits (a refit with no crossing counts as
beyond the horizon).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.optimize import OptimizeWarning, brentq, curve_fit

MIN_BUDGETS = 3
C_BOUNDS = (1e-3, 3.0)
LEVELS = (0.1, 0.5, 0.9)
HORIZON_FACTOR = 10
_C_GRID = np.geomspace(C_BOUNDS[0], C_BOUNDS[1], 72)
_GRID_POINTS = 512


def power_law(n, a: float, b: float, c: float):
    """a + b n^-c."""
    return a + b * np.power(np.asarray(n, dtype=float), -c)


def _solve_ab(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of c values: the weighted least-squares a, b >= 0 and the weighted SSE.

    X: (rows, G, k) design n^-c; y, w: (rows, 1, k) points and weights (w = 0 drops a point).
    For fixed c the model is linear in (a, b); the bounds are enforced by falling back to a
    flat curve (b = 0) or one through the origin (a = 0), whichever the sign calls for.
    """
    sw = np.maximum(w.sum(-1), 1e-300)
    mx, my = (w * X).sum(-1) / sw, (w * y).sum(-1) / sw
    dx = X - mx[..., None]
    sxx = (w * dx ** 2).sum(-1)
    b = np.where(sxx > 0, (w * dx * (y - my[..., None])).sum(-1) / np.where(sxx > 0, sxx, 1.0), 0.0)
    a = my - b * mx
    flat = b < 0
    b, a = np.where(flat, 0.0, b), np.where(flat, my, a)
    neg = a < 0
    through = (w * X * y).sum(-1) / np.maximum((w * X * X).sum(-1), 1e-300)
    b, a = np.where(neg, np.maximum(through, 0.0), b), np.where(neg, 0.0, a)
    a = np.maximum(a, 0.0)
    sse = (w * (y - a[..., None] - b[..., None] * X) ** 2).sum(-1)
    return a, b, sse


def _profile_fits(n: np.ndarray, Y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted least squares of a + b n^-c for every row of Y at once, by profiling c: a
    coarse grid over (0, 3], then a fine grid between the best point's neighbours.

    Y, w: (rows, k); returns (rows, 3) of (a, b, c).
    """
    rows = Y.shape[0]
    y, ww = Y[:, None, :], w[:, None, :]
    X = np.power(n[None, None, :], -_C_GRID[None, :, None])
    a, b, sse = _solve_ab(X, y, ww)
    i = np.argmin(sse, axis=1)
    lo = _C_GRID[np.maximum(i - 1, 0)]
    hi = _C_GRID[np.minimum(i + 1, len(_C_GRID) - 1)]
    cf = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, 33)[None, :]
    cf = np.clip(cf, C_BOUNDS[0], C_BOUNDS[1])
    a, b, sse = _solve_ab(np.power(n[None, None, :], -cf[:, :, None]), y, ww)
    j = np.argmin(sse, axis=1)
    r = np.arange(rows)
    return np.stack([a[r, j], b[r, j], cf[r, j]], axis=1)


def fit_power_law(n: Sequence[float], y: Sequence[float],
                  sigma: Sequence[float] | None = None) -> tuple[float, float, float]:
    """Weighted least-squares fit of a + b n^-c (a >= 0, b >= 0, 0 < c <= 3); returns (a, b, c).

    ``sigma``: per-point standard errors (weights 1/sigma^2); None weighs points equally.
    Needs at least :data:`MIN_BUDGETS` distinct n.
    """
    n = np.asarray(n, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(np.unique(n)) < MIN_BUDGETS:
        raise ValueError(f"a curve needs at least {MIN_BUDGETS} distinct budgets, got {len(np.unique(n))}")
    s = np.ones_like(y) if sigma is None else np.asarray(sigma, dtype=float)
    w = 1.0 / s ** 2
    start = tuple(float(v) for v in _profile_fits(n, y[None, :], w[None, :])[0])
    lo, hi = [0.0, 0.0, C_BOUNDS[0]], [np.inf, np.inf, C_BOUNDS[1]]
    try:
        with warnings.catch_warnings():      # an exact fit (3 budgets) has no covariance: not needed
            warnings.simplefilter("ignore", OptimizeWarning)
            p, _ = curve_fit(power_law, n, y, p0=start, sigma=s, bounds=(lo, hi), max_nfev=600)
    except (RuntimeError, ValueError):
        return start
    sse = lambda q: float((w * (y - power_law(n, *q)) ** 2).sum())  # noqa: E731
    return tuple(float(v) for v in p) if sse(p) <= sse(start) else start


def _weights(se: np.ndarray) -> np.ndarray | None:
    """Standard errors used as sigma, floored at their median; None without SEs."""
    ok = np.isfinite(se) & (se > 0)
    if not ok.any():
        return None
    floor = float(np.median(se[ok]))
    return np.where(ok, np.maximum(se, floor), floor)


# -- per-split risks from a sweep's records ---------------------------------------------------
def risk_matrix(records: list[dict], menu: str, *, risk: str = "val_mse",
                splits: Sequence | None = None, budgets: Sequence[int] | None = None):
    """(splits, budgets, Y) with Y[i, j] the ``risk`` of ``menu``'s selected candidate on split
    i at budget j (NaN if missing). Accepts a sweep's nested records ({"split", "n_M",
    "menus": {menu: {...}}}) and a stored sweep's flat rows ({"split", "n_M", "menu", ...})."""
    rows = []
    for r in records:
        m = (r.get("menus") or {}).get(menu) if "menus" in r else (r if r.get("menu") == menu else None)
        if m is not None and m.get(risk) is not None and math.isfinite(float(m[risk])):
            rows.append((r["split"], int(r["n_M"]), float(m[risk])))
    splits = list(splits) if splits is not None else sorted({s for s, _, _ in rows})
    budgets = list(budgets) if budgets is not None else sorted({b for _, b, _ in rows})
    si, bi = {s: i for i, s in enumerate(splits)}, {b: j for j, b in enumerate(budgets)}
    Y = np.full((len(splits), len(budgets)), np.nan)
    for s, b, v in rows:
        if s in si and b in bi:
            Y[si[s], bi[b]] = v
    return splits, np.asarray(budgets, dtype=float), Y


def _column_stats(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over splits (rows) per budget (column), ignoring NaN."""
    ok = np.isfinite(Y)
    counts = ok.sum(0)
    total = np.where(ok, Y, 0.0).sum(0)
    mean = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
    sq = np.where(ok, (Y - mean) ** 2, 0.0).sum(0)
    sd = np.where(counts > 1, np.sqrt(sq / np.maximum(counts - 1, 1)), np.nan)
    return mean, sd / np.sqrt(np.maximum(counts, 1))


@dataclass
class MenuCurve:
    """One menu's fitted risk curve with its bootstrap refits."""

    menu: str
    budgets: np.ndarray          # budgets with at least one measured split
    mean: np.ndarray             # mean validation risk over splits per budget
    se: np.ndarray               # its standard error over splits
    params: tuple[float, float, float] | None
    boot: np.ndarray | None      # (n_boot, 3) refitted (a, b, c); NaN rows could not be refitted
    status: str                  # "fit" or "too_few_budgets"

    @property
    def fitted(self) -> bool:
        return self.params is not None

    def predict(self, n) -> np.ndarray:
        return power_law(n, *self.params)

    def draws(self, n, *, keep_unfitted: bool = False) -> np.ndarray:
        """Bootstrap curves at ``n``: (refits, len(n)); resamples that could not be refitted are
        dropped, or kept as NaN rows with ``keep_unfitted`` (rows then align across menus)."""
        b = self.boot if keep_unfitted else self.boot[np.isfinite(self.boot).all(1)]
        n = np.atleast_1d(np.asarray(n, dtype=float))
        return b[:, :1] + b[:, 1:2] * np.power(n[None, :], -b[:, 2:3])

    def band(self, n, levels: Sequence[float] = LEVELS) -> np.ndarray:
        """Percentiles of the bootstrap curves at ``n``: (len(levels), len(n))."""
        return np.quantile(self.draws(n), list(levels), axis=0)

    def to_dict(self, levels: Sequence[float] = LEVELS) -> dict:
        d = {"status": self.status, "budgets": self.budgets.astype(int).tolist(),
             "mean": self.mean.tolist(), "se": self.se.tolist(), "a": None, "b": None, "c": None}
        if self.fitted:
            d.update(zip("abc", self.params))
            q = np.quantile(self.boot[np.isfinite(self.boot).all(1)], [levels[0], levels[-1]], axis=0)
            d.update({f"{k}_interval": [float(q[0, i]), float(q[1, i])] for i, k in enumerate("abc")})
        return d


def fit_curves(records: list[dict], menus: Sequence[str] | None = None, *, risk: str = "val_mse",
               n_boot: int = 200, seed: int = 0) -> dict[str, MenuCurve]:
    """Fit :func:`power_law` to every menu's validation risk over budgets, with split-bootstrap
    refits that share one set of resampled splits across menus (paired)."""
    if menus is None:
        menus = list(dict.fromkeys(m for r in records for m in (r.get("menus") or {r.get("menu"): 0})
                                   if m is not None))
    splits = sorted({r["split"] for r in records})
    budgets = sorted({int(r["n_M"]) for r in records})
    idx = np.random.default_rng(seed).integers(0, max(len(splits), 1), size=(n_boot, len(splits)))
    out = {}
    for menu in menus:
        _, n, Y = risk_matrix(records, menu, risk=risk, splits=splits, budgets=budgets)
        keep = np.isfinite(Y).any(0)
        n, Y = n[keep], Y[:, keep]
        mean, se = _column_stats(Y)
        if len(n) < MIN_BUDGETS:
            out[menu] = MenuCurve(menu, n, mean, se, None, None, "too_few_budgets")
            continue
        sigma = _weights(se)
        params = fit_power_law(n, mean, sigma)
        out[menu] = MenuCurve(menu, n, mean, se, params, _with_point(_bootstrap(n, Y, idx, sigma), params), "fit")
    return out


def _bootstrap(n: np.ndarray, Y: np.ndarray, idx: np.ndarray, sigma: np.ndarray | None) -> np.ndarray:
    """Refits on resampled splits (rows of ``idx``), all at once by :func:`_profile_fits` with
    the full data's weights; resamples with fewer than MIN_BUDGETS measured budgets are NaN."""
    ok = np.isfinite(Y)
    R = ok[idx]                                                   # (n_boot, splits, budgets)
    counts = R.sum(1)
    means = np.where(R, Y[idx], 0.0).sum(1) / np.maximum(counts, 1)
    base = np.ones(len(n)) if sigma is None else 1.0 / sigma ** 2
    w = np.where(counts > 0, base[None, :], 0.0)
    boot = _profile_fits(n, means, w)
    boot[(counts > 0).sum(1) < MIN_BUDGETS] = np.nan
    return boot


def _with_point(boot: np.ndarray, params: tuple) -> np.ndarray:
    """Bootstrap refits, or the point fit alone when no resample could be refitted."""
    return boot if np.isfinite(boot).all(1).any() else np.asarray([params], dtype=float)


# -- extrapolation and crossover -------------------------------------------------------------
def extrapolate(curve: MenuCurve, n_target: float, levels: Sequence[float] = LEVELS) -> dict:
    """Expected risk at ``n_target`` (the fitted curve) with the bootstrap percentiles."""
    if not curve.fitted:
        return {"n_M": n_target, "risk": None, "low": None, "median": None, "high": None}
    q = curve.band([n_target], levels)[:, 0]
    return {"n_M": n_target, "risk": float(curve.predict(n_target)), "low": float(q[0]),
            "median": float(np.quantile(curve.draws([n_target])[:, 0], 0.5)), "high": float(q[-1])}


def _first_below(diff: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per row of ``diff`` (challenger minus incumbent on ``grid``): the first n where it is
    negative, interpolated in log n; grid[0] if negative at once; inf if never."""
    neg = diff < 0
    has = neg.any(1)
    j = np.argmax(neg, axis=1)
    out = np.full(diff.shape[0], np.inf)
    at_start = has & (j == 0)
    out[at_start] = grid[0]
    mid = has & (j > 0)
    r, jj = np.flatnonzero(mid), j[mid]
    d0, d1 = diff[r, jj - 1], diff[r, jj]
    t = np.clip(d0 / np.where(d0 - d1 > 0, d0 - d1, 1.0), 0.0, 1.0)
    out[mid] = np.exp(np.log(grid[jj - 1]) + t * (np.log(grid[jj]) - np.log(grid[jj - 1])))
    return out


def crossover(challenger: MenuCurve, incumbent: MenuCurve, *, horizon: float | None = None,
              horizon_factor: float = HORIZON_FACTOR, levels: Sequence[float] = LEVELS) -> dict:
    """Where ``challenger``'s curve first falls below ``incumbent``'s (see the module notes)."""
    base = {"challenger": challenger.menu, "incumbent": incumbent.menu, "n_M": None, "low": None,
            "high": None, "high_beyond_horizon": False, "share_within_horizon": None}
    if not (challenger.fitted and incumbent.fitted):
        return {**base, "status": "unavailable", "horizon": None}
    n_lo = float(max(challenger.budgets.min(), incumbent.budgets.min()))
    n_max = float(max(challenger.budgets.max(), incumbent.budgets.max()))
    horizon = float(horizon if horizon is not None else horizon_factor * n_max)
    grid = np.geomspace(n_lo, max(horizon, n_lo * 1.0001), _GRID_POINTS)
    diff = lambda n: float(challenger.predict(n) - incumbent.predict(n))  # noqa: E731
    point = _first_below((challenger.predict(grid) - incumbent.predict(grid))[None, :], grid)[0]
    if math.isfinite(point) and point > n_lo:        # polish the grid's interpolation
        j = int(np.searchsorted(grid, point))
        lo_n, hi_n = grid[max(j - 1, 0)], grid[min(j, len(grid) - 1)]
        if diff(lo_n) >= 0 > diff(hi_n):
            point = brentq(diff, lo_n, hi_n)
    status = "already_ahead" if point <= n_lo else "crossover" if math.isfinite(point) else "not_within_horizon"
    paired = challenger.draws(grid, keep_unfitted=True) - incumbent.draws(grid, keep_unfitted=True)
    boot = _first_below(paired[np.isfinite(paired).all(1)], grid)
    # no crossing = beyond the horizon: a finite stand-in keeps the percentiles defined
    q = np.quantile(np.minimum(boot, 2 * horizon), [levels[0], levels[-1]]) if len(boot) else [math.inf] * 2
    q = [v if v <= horizon else math.inf for v in q]
    return {**base, "status": status, "horizon": horizon, "n_lo": n_lo,
            "n_M": float(point) if math.isfinite(point) else None,
            "low": float(q[0]) if math.isfinite(q[0]) else None,
            "high": float(q[1]) if math.isfinite(q[1]) else None,
            "high_beyond_horizon": not math.isfinite(q[1]),
            "share_within_horizon": float(np.isfinite(boot).mean()) if len(boot) else None}


__all__ = ["C_BOUNDS", "HORIZON_FACTOR", "LEVELS", "MIN_BUDGETS", "MenuCurve", "crossover", "extrapolate",
           "fit_curves", "fit_power_law", "power_law", "risk_matrix"]
