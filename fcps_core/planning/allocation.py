"""Allocating a total label budget n_H = n_S + n_M + n_V between calibration and validation.

Model. Of the paper's decomposition (Eq. eq:finite-risk) a sweep measures two terms: the
calibration pressure Est(n_M), through a menu's fitted curve R(n_M) = a + b n_M^-c
(:mod:`.curves`, measured at the sweep's own n_V0), and -- through the menu size |C| --
the validation-selection term Sel(C, n_V), whose menu-dependent scale is
sqrt(log|C| / n_V) (Theorem thm:validation-selection, Eq. eq:validation-oracle;
:func:`fcps_core.measures.diagnostics.validation_scale`). The predicted risk of an allocation is

    R(n_M) + sigma_loss * ( sqrt(log|C| / n_V) - sqrt(log|C| / n_V0) ),

so an allocation with the sweep's own n_V is predicted by the fitted curve itself. The
theorem's constant is for losses in [0, 1]; sigma_loss, the standard deviation of one
validation row's loss, puts the scale in units of the risk: it is read from the sweep's
validation standard errors (val_se * sqrt(n_V0), source ``validation``) or, without them,
bounded by sqrt(r (1 - r)) -- the largest standard deviation of a [0, 1] loss with mean r
(source ``bound``). Path(Pi, n_S) is not modelled (a sweep holds n_S fixed), so n_S is held
at the given value and only the rest is split between M and V.

The fixed-n_H allocation check (:func:`fcps_core.paper.robustness_checks.fixed_budget_allocation`, Table
tab:fixed-budget-allocation) reallocates n_H by the ratios in :data:`RATIOS`; each ratio's
predicted risk is listed beside its measured test risk when the check's rows are given.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..measures.diagnostics import validation_scale
from .curves import LEVELS, MenuCurve

#: S:M:V ratios of the fixed-n_H check (the same as :data:`fcps_core.paper.robustness_checks.ALLOCATIONS`)
RATIOS = ("1:1:1", "1:2:1", "1:3:1", "1:1:2")


def ratio_split(n_total: int, ratio: str) -> tuple[int, int, int]:
    """(n_S, n_M, n_V) for an S:M:V ratio, rounded as the fixed-n_H check rounds."""
    parts = [float(x) for x in ratio.split(":")]
    n_S, _, n_V = (int(round(n_total * p / sum(parts))) for p in parts)
    return n_S, n_total - n_S - n_V, n_V


def loss_sd_bound(risk: float) -> float:
    """sqrt(r (1 - r)): the largest standard deviation of a loss in [0, 1] with mean r."""
    r = min(max(float(risk), 0.0), 1.0)
    return math.sqrt(r * (1.0 - r))


def selection_penalty(n_val, *, menu_size: int, loss_sd: float, n_val_ref: int) -> np.ndarray:
    """sigma_loss * (sqrt(log|C|/n_V) - sqrt(log|C|/n_V0)), elementwise in ``n_val``."""
    v = np.atleast_1d(np.asarray(n_val, dtype=float))
    scale = np.sqrt(math.log(max(int(menu_size), 1)) / v)          # validation_scale, vectorised
    return loss_sd * (scale - validation_scale(menu_size, n_val_ref))


def predicted_risk(curve: MenuCurve, n_cal, n_val, *, menu_size: int, loss_sd: float,
                   n_val_ref: int) -> np.ndarray:
    """The model's risk of allocations (n_M, n_V) (elementwise)."""
    n_cal = np.atleast_1d(np.asarray(n_cal, dtype=float))
    return curve.predict(n_cal) + selection_penalty(n_val, menu_size=menu_size, loss_sd=loss_sd,
                                                    n_val_ref=n_val_ref)


def allocate(curve: MenuCurve, *, n_total: int, n_select: int, n_val_ref: int, menu_size: int,
             loss_sd: float, ratios: Sequence[str] = RATIOS, measured: list[dict] | None = None,
             levels: Sequence[float] = LEVELS) -> dict:
    """The (n_S, n_M, n_V) minimising the predicted risk at total ``n_total`` with n_S held at
    ``n_select``, the sweep's own split, and every ratio of the fixed-n_H check (with the
    check's measured test risk when its rows ``measured`` are given)."""
    base = {"menu": curve.menu, "n_total": int(n_total), "menu_size": int(menu_size),
            "loss_sd": float(loss_sd), "n_V_sweep": int(n_val_ref)}
    rest = int(n_total) - int(n_select)
    if not curve.fitted:
        return {**base, "status": "unavailable", "message": "no fitted curve for this menu"}
    if rest < 2:
        return {**base, "status": "unavailable",
                "message": f"n_H = {n_total} leaves fewer than 2 labels beside n_S = {n_select}"}
    kw = {"menu_size": menu_size, "loss_sd": loss_sd, "n_val_ref": n_val_ref}
    n_val = np.arange(1, rest)
    risk = predicted_risk(curve, rest - n_val, n_val, **kw)
    i = int(np.argmin(risk))
    best_v = int(n_val[i])
    best_m = rest - best_v
    penalty = selection_penalty([best_v], **kw)[0]
    band = curve.band([best_m], levels)[:, 0] + penalty
    lo_b, hi_b = float(curve.budgets.min()), float(curve.budgets.max())
    best = {"n_S": int(n_select), "n_M": best_m, "n_V": best_v, "predicted_risk": float(risk[i]),
            "low": float(band[0]), "high": float(band[-1]),
            "extrapolated": not (lo_b <= best_m <= hi_b)}
    sweep_m = rest - int(n_val_ref)
    sweep_split = None if sweep_m < 1 else {
        "n_S": int(n_select), "n_M": sweep_m, "n_V": int(n_val_ref),
        "predicted_risk": float(predicted_risk(curve, [sweep_m], [n_val_ref], **kw)[0])}
    by_ratio = {r.get("ratio"): r for r in (measured or [])}
    rows = []
    for ratio in ratios:
        n_S, n_M, n_V = ratio_split(int(n_total), ratio)
        row = {"ratio": ratio, "n_S": n_S, "n_M": n_M, "n_V": n_V,
               "predicted_risk": float(predicted_risk(curve, [n_M], [n_V], **kw)[0])
               if n_M >= 1 and n_V >= 1 else None}
        if ratio in by_ratio:
            row["measured_test_mse"] = by_ratio[ratio].get("test_mse_mean")
            row["measured_test_mse_se"] = by_ratio[ratio].get("test_mse_se")
        rows.append(row)
    scored = [r for r in rows if r["predicted_risk"] is not None]
    out = {**base, "status": "ok", "best": best, "sweep_split": sweep_split, "ratios": rows,
           "predicted_best_ratio": min(scored, key=lambda r: r["predicted_risk"])["ratio"] if scored else None}
    have = [r for r in rows if r.get("measured_test_mse") is not None]
    if have:
        top = min(have, key=lambda r: r["measured_test_mse"])
        picked = next((r for r in have if r["ratio"] == out["predicted_best_ratio"]), None)
        out["measured_best_ratio"] = top["ratio"]
        out["agree"] = picked is not None and picked["ratio"] == top["ratio"]
        # how much worse (measured, test block) the model's ratio is than the measured best
        out["measured_regret"] = None if picked is None else picked["measured_test_mse"] - top["measured_test_mse"]
    return out


__all__ = ["RATIOS", "allocate", "loss_sd_bound", "predicted_risk", "ratio_split", "selection_penalty"]
