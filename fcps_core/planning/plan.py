"""The plan for the next labels, from one calibration-growth sweep (``sweep --json``'s ``plan``).

From a sweep's per-split validation risks (:mod:`.curves`: a + b n_M^-c per menu, split
bootstrap bands) and its menu size (:mod:`.allocation`) the plan answers three questions:

* the expected risk of the scalar, table-like and full menus at n_M = largest budget + delta;
* the budget at which the table-like menu would overtake the scalar one, with an interval,
  or "not within N labels" (N = ``horizon_factor`` x the largest budget);
* how to split a total n_H over S/M/V for the full menu, beside the ratios of the fixed-n_H
  allocation check.

Only validation (or cross-fitted) risks enter; the research test block informs nothing here.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .allocation import allocate, loss_sd_bound
from .curves import HORIZON_FACTOR, LEVELS, MIN_BUDGETS, crossover, extrapolate, fit_curves

MODEL = ("risk(n_M) = a + b n_M^-c per menu, fitted by weighted least squares to the mean validation "
         "MSE over splits of each menu's validation-selected candidate (weights 1/SE^2); bands are "
         "percentiles of refits on split-bootstrap resamples; allocation adds "
         "sigma_loss * sqrt(log|C| / n_V) relative to the sweep's n_V")
NAMES = {"table_like": "table-like", "scalar": "scalar", "full": "full", "table": "table"}


def _menus_present(records: list[dict]) -> list[str]:
    seen: dict = {}
    for r in records:
        for m in (r.get("menus") or {}) if "menus" in r else [r.get("menu")]:
            if m is not None:
                seen[m] = None
    return list(seen)


def _menu_values(records: list[dict], menu: str, key: str, n_M: int | None = None) -> list[float]:
    out = []
    for r in records:
        if n_M is not None and int(r["n_M"]) != n_M:
            continue
        m = (r.get("menus") or {}).get(menu) if "menus" in r else (r if r.get("menu") == menu else None)
        if m is not None and m.get(key) is not None and math.isfinite(float(m[key])):
            out.append(float(m[key]))
    return out


def _grid(curve, n_hi: float, levels: Sequence[float]) -> dict:
    n = np.unique(np.round(np.geomspace(curve.budgets.min(), max(n_hi, curve.budgets.max()), 48), 3))
    q = curve.band(n, levels)
    return {"n_M": n.tolist(), "fit": curve.predict(n).tolist(), "low": q[0].tolist(),
            "median": q[len(levels) // 2].tolist(), "high": q[-1].tolist()}


def sweep_plan(sweep: dict, *, delta: int | None = None, n_total: int | None = None, n_boot: int = 200,
               seed: int | None = None, horizon_factor: float = HORIZON_FACTOR,
               challenger: str = "table_like", incumbent: str = "scalar", allocation_menu: str = "full",
               measured_allocation: list[dict] | None = None, menu_size: int | None = None,
               loss_sd: float | None = None, levels: Sequence[float] = LEVELS) -> dict:
    """The plan for a sweep (:meth:`SweepResult.to_dict` or a stored sweep's result).

    ``delta``: labels added to the largest budget (default: the largest budget, i.e. double it).
    ``n_total``: n_H to allocate (default n_S + largest n_M + n_V of the sweep).
    ``measured_allocation``: rows of :func:`fcps_core.paper.robustness_checks.fixed_budget_allocation` to compare.
    ``menu_size`` / ``loss_sd``: override what the records say (stored sweeps lack both).
    """
    if delta is not None and int(delta) < 0:
        raise ValueError(f"delta must be at least 0 (got {delta})")
    if n_total is not None and int(n_total) < 1:
        raise ValueError(f"n_total must be at least 1 (got {n_total})")
    records = sweep.get("records") or []
    settings = sweep.get("settings") or {}
    budgets = sorted({int(b) for b in (sweep.get("budgets") or [r["n_M"] for r in records])})
    n_max = budgets[-1] if budgets else 0
    delta = int(delta) if delta is not None else n_max
    seed = int(settings.get("seed", 0)) if seed is None else int(seed)
    present = _menus_present(records)
    if challenger not in present and "table" in present:
        challenger = "table"
    wanted = [m for m in (incumbent, challenger, allocation_menu) if m in present] or present
    plan = {"status": "ok", "model": MODEL, "risk": "val_mse", "levels": list(levels), "n_boot": n_boot,
            "seed": seed, "budgets": budgets, "delta": delta, "target_n_M": n_max + delta,
            "horizon": horizon_factor * n_max, "curves": {}, "crossover": None, "allocation": None}
    if len(budgets) < MIN_BUDGETS:
        plan.update(status="too_few_budgets",
                    message=f"planning fits a curve over at least {MIN_BUDGETS} budgets; this sweep has "
                            f"{len(budgets)}, so no curve was fitted (rerun the sweep with more budgets)")
        plan["answer"] = plan["message"][0].upper() + plan["message"][1:] + "."
        return plan
    curves = fit_curves(records, wanted, n_boot=n_boot, seed=seed)
    cross = crossover(curves[challenger], curves[incumbent], horizon_factor=horizon_factor, levels=levels) \
        if challenger in curves and incumbent in curves else None
    n_hi = float(plan["target_n_M"])
    if cross and cross.get("n_M"):
        n_hi = max(n_hi, min(1.25 * max(cross["n_M"], cross.get("high") or 0.0), plan["horizon"]))
    for menu, curve in curves.items():
        d = curve.to_dict(levels)
        if curve.fitted:
            d["at_target"] = extrapolate(curve, plan["target_n_M"], levels)
            d["grid"] = _grid(curve, n_hi, levels)
        plan["curves"][menu] = d
    plan["crossover"] = cross
    plan["allocation"] = _allocation(records, settings, curves, allocation_menu, n_max, n_total,
                                     measured_allocation, menu_size, loss_sd, levels)
    plan["answer"] = plan_answer(plan)
    return plan


def _allocation(records, settings, curves, menu, n_max, n_total, measured, menu_size, loss_sd, levels):
    curve = curves.get(menu)
    if curve is None or not curve.fitted:
        return {"status": "unavailable", "message": f"no fitted curve for the {menu!r} menu"}
    if settings.get("protocol", "split") != "split" or not settings.get("n_val"):
        return {"status": "unavailable", "message": "the sweep has no separate validation block"}
    n_S, n_V = int(settings.get("n_select") or 0), int(settings["n_val"])
    sizes = _menu_values(records, menu, "menu_size")
    size = menu_size if menu_size is not None else (int(np.median(sizes)) if sizes else None)
    if size is None:
        return {"status": "unavailable",
                "message": "the records carry no menu size |C| (a sweep stored before planning)"}
    source = "given"
    if loss_sd is None:
        ses = _menu_values(records, menu, "val_se", n_max)
        if ses and settings.get("objective", "mse") == "mse":
            loss_sd, source = float(np.median(ses)) * math.sqrt(n_V), "validation"
        else:
            loss_sd, source = loss_sd_bound(float(curve.predict(n_max))), "bound"
    total = int(n_total) if n_total is not None else n_S + n_max + n_V
    out = allocate(curve, n_total=total, n_select=n_S, n_val_ref=n_V, menu_size=size, loss_sd=loss_sd,
                   measured=measured, levels=levels)
    out["loss_sd_source"] = source
    return out


def _fmt_n(n: float) -> str:
    """A budget rounded to two significant figures, with thousands separators."""
    if n is None or not math.isfinite(n):
        return "?"
    digits = max(int(math.floor(math.log10(max(abs(n), 1)))) - 1, 0)
    return f"{round(n, -digits):,.0f}"


def crossover_text(cross: dict | None, subject: str | None = None) -> str:
    """The crossover in words; ``subject`` replaces "the <challenger> menu" (e.g. "it")."""
    if not cross or cross.get("status") == "unavailable":
        return "the sweep has no fitted table-like and scalar pair to compare"
    other = NAMES.get(cross["incumbent"], cross["incumbent"])
    who = subject or f"the {NAMES.get(cross['challenger'], cross['challenger'])} menu"
    high = f"beyond {_fmt_n(cross['horizon'])}" if cross["high_beyond_horizon"] else _fmt_n(cross["high"])
    low = _fmt_n(cross["low"]) if cross.get("low") is not None else f"beyond {_fmt_n(cross['horizon'])}"
    if cross["status"] == "already_ahead":
        return f"{who} is already ahead of the {other} menu at n_M = {_fmt_n(cross['n_lo'])}"
    if cross["status"] == "not_within_horizon":
        share = cross.get("share_within_horizon") or 0.0
        return (f"{who} would not overtake the {other} menu within {_fmt_n(cross['horizon'])} labels"
                + (f" (in {share:.0%} of resamples it would)" if share >= 0.005 else ""))
    return f"{who} would overtake the {other} menu at about n_M = {_fmt_n(cross['n_M'])} ({low}\u2013{high})"


def plan_answer(plan: dict) -> str:
    """The plan's one plain-language line."""
    if plan.get("status") != "ok":
        return plan.get("answer") or plan.get("message", "")
    cross = plan.get("crossover") or {}
    menu = cross.get("challenger") if cross.get("challenger") in plan["curves"] else next(iter(plan["curves"]))
    at = (plan["curves"][menu].get("at_target") or {})
    head = f"With {plan['delta']:,} more labels (n_M = {plan['target_n_M']:,})"
    if at.get("risk") is None:
        return f"{head} no {NAMES.get(menu, menu)} curve could be fitted; {crossover_text(cross)}."
    first = (f"{head} the {NAMES.get(menu, menu)} menu is expected to reach {at['risk']:.3f} "
             f"({at['low']:.3f}\u2013{at['high']:.3f})")
    same = cross.get("challenger") == menu
    return f"{first}; {crossover_text(cross, 'it' if same else None)}."


def allocation_text(alloc: dict | None) -> str:
    """One line on the allocation (empty when unavailable)."""
    if not alloc or alloc.get("status") != "ok":
        return (alloc or {}).get("message", "")
    b, s = alloc["best"], alloc.get("sweep_split")
    line = (f"For n_H = {alloc['n_total']:,} labels and |C| = {alloc['menu_size']:,} candidates, "
            f"S/M/V = {b['n_S']:,}/{b['n_M']:,}/{b['n_V']:,} minimises the predicted risk "
            f"({b['predicted_risk']:.3f}, {b['low']:.3f}\u2013{b['high']:.3f})")
    if s:
        line += f"; the sweep's split {s['n_S']:,}/{s['n_M']:,}/{s['n_V']:,} predicts {s['predicted_risk']:.3f}"
    if alloc.get("measured_best_ratio"):
        line += (f"; the fixed-n_H check measured {alloc['measured_best_ratio']} best, the model ranks "
                 f"{alloc['predicted_best_ratio']} first")
    return line + "."


__all__ = ["MODEL", "allocation_text", "crossover_text", "plan_answer", "sweep_plan"]
