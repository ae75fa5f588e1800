"""The calibration-growth sweep workflow (``python -m fcps_core sweep``, the Regime map and
Synthetic lab pages): sweep n_M over budgets on grouped splits
(:func:`fcps_core.paper.experiments.calibration_growth`), fit the labelling plan over it
(:func:`fcps_core.planning.sweep_plan`) and, on request, measure the plan's allocation at a
fixed number of labels (:func:`fcps_core.paper.robustness_checks.fixed_budget_allocation`)."""

from __future__ import annotations

from typing import Callable

from ..defaults import DEFAULT_PATHS
from ..errors import FCPSError

#: the menus of a sweep, by ``--menus`` name (fcps_core.paper.experiments.MENU_SETS)
MENU_SET_NAMES = ("default", "paper", "growth")


def menu_set(name: str) -> dict:
    """The menus (name -> families) a sweep compares, by name (``default``, ``paper``, ``growth``)."""
    from ..paper.experiments import MENU_SETS
    return MENU_SETS[name]


def menu_families(name: str = "full") -> tuple:
    """The families of one named menu of the default set (``full``, ``table_like``...)."""
    from ..paper.experiments import MENUS
    return MENUS[name]


def check_plan_options(delta: float | None, n_h: int | None) -> dict:
    """``--plan-delta`` (at least 0) and ``--plan-n-h`` (at least 1) as the plan's options."""
    for flag, value, least in (("--plan-delta", delta, 0), ("--plan-n-h", n_h, 1)):
        if value is not None and value < least:
            raise FCPSError(f"{flag} must be at least {least} (got {value})")
    return {k: v for k, v in (("delta", delta), ("n_total", n_h)) if v is not None}


def sweep_paths(paths, menus_name: str) -> tuple:
    """The path rules of a sweep: ``paths`` as given, else the default ones; the paper's menu
    sets need every default path (refused otherwise, naming the flag)."""
    if menus_name in ("paper", "growth") and paths and not set(DEFAULT_PATHS) <= set(paths):
        raise FCPSError(f"--menus {menus_name} needs the paths {' '.join(DEFAULT_PATHS)}; drop --paths")
    return tuple(paths) if paths else DEFAULT_PATHS


def run_sweep(panel, budgets, *, progress: Callable[[float, str], None] | None = None, **options):
    """The sweep of ``panel`` over ``budgets`` (:func:`fcps_core.paper.experiments.calibration_growth`
    with ``options``: block sizes, splits, seed, families or menus, paths, workers...)."""
    from ..paper.experiments import calibration_growth
    return calibration_growth(panel, budgets, progress=progress, **options)


def store_sweep(store, result, *, panel_name: str, panel_version: str | None = None, params: dict | None = None,
                **when) -> int:
    """Store a finished sweep as a run on the stored panel ``panel_name`` (``params``: its
    settings; ``when``: started_at, seconds). Refused (a StoreError) when the panel changed
    from ``panel_version`` since it was read."""
    return store.save_sweep(result, panel=panel_name, params=params, panel_version=panel_version, **when)


def check_allocation(panel, result, *, n_h: int, n_test: int, plan_options: dict, options: dict) -> None:
    """The fixed-n_H allocation check at ``n_h`` labels, its rows put into ``result.plan``."""
    from ..paper.robustness_checks import fixed_budget_allocation
    from ..planning import sweep_plan
    measured = fixed_budget_allocation(panel, n_h, n_test=n_test, **{k: v for k, v in options.items()
                                                                      if k != "paths"})
    result.plan = sweep_plan(result.to_dict(), **plan_options, measured_allocation=measured)


def allocation_text(allocation) -> str | None:
    """The plan's S/M/V allocation in one sentence (:func:`fcps_core.planning.allocation_text`)."""
    from ..planning import allocation_text as text
    return text(allocation)
