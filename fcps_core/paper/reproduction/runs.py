"""Everything the reproduction report computes, run once and shared by its sections.

Per shipped real panel (LLMBar, HANNA; fixed seven-judge pools):

* one main calibration-growth sweep over the paper's budgets with the paper menus
  (:data:`MAIN_MENUS`), keeping every candidate of every split (most labels come from it);
* at the largest budget only: a joint-table sweep with the calibration-frontier (CFPS) path
  added (tab:cfps-path), two scalar sweeps with labels moved between S and V
  (tab:backoff-split-sensitivity), and one pass over the same splits recording what the
  sweep records do not keep: the residual hybrid's selected base, the DS jury, and every
  single judge's table (tab:residual-shrinkage-hybrid, tab:jury-baseline,
  tab:baseline-envelope).

Splits are the sweep's own: split r uses seed ``SeedSequence(seed).generate_state(R)[r]``
for its blocks and selector, so every largest-budget extra pairs with the main sweep's
split r. The research test block T only reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from ...measures.diagnostics import argmin_with_ties
from ..experiments import PAPER_MENUS, Menu, calibration_growth, nested_blocks
from ...families import PAPER_SCALAR
from ...ingest import load_panel as read_panel
from ...selection import PAPER_PROTOCOL, FCPSSelector
from ..synthetic import make_regime, semi_real
from .common import DATA, P3, REAL_POOLS, Plan

#: the main sweep's menus: the paper's 21-candidate table and 42-candidate scalar menus, the
#: pooled menu (table and scalar families on the three paths, K <= 7), the table-like menu
#: (joint table, hierarchical backoff, residual hybrid on the three paths, K <= 7) and the
#: information-first backoff table
MAIN_MENUS = {"table": PAPER_MENUS["table"], "scalar": PAPER_MENUS["scalar"],
              "full": Menu(("table",) + PAPER_SCALAR, paths=P3, k_max=7),
              "table_like": Menu(("table", "backoff", "residual"), paths=P3, k_max=7),
              "backoff": Menu(("backoff",), paths=("info_first",), k_max=7)}
CFPS_MENUS = {"table": PAPER_MENUS["table"], "cfps": Menu(("table",), paths=("cfps",), k_max=7),
              "table_cfps": Menu(("table",), paths=P3 + ("cfps",), k_max=7)}


@dataclass
class RealRun:
    name: str
    panel: object
    spec: dict
    sweep: object                       # SweepResult of the main sweep
    cfps: object | None = None          # SweepResult at the largest budget, CFPS path added
    shifted: dict = field(default_factory=dict)     # "sel.-heavy"/"val.-heavy" -> SweepResult
    extras: list = field(default_factory=list)      # per split at the largest budget

    @property
    def frame(self) -> pd.DataFrame:
        return self.sweep.candidate_frame().assign(panel=self.name)

    @property
    def records(self) -> list[dict]:
        return [{**r, "panel": self.name} for r in self.sweep.records]

    @property
    def largest(self) -> int:
        return max(self.sweep.budgets)


def real_panel(name: str):
    return read_panel(str(DATA / f"{name}.csv")).subset_judges(REAL_POOLS[name]["judges"])


def split_seeds(seed: int, splits: int) -> list[int]:
    """The sweep's per-split seeds (as :func:`fcps_core.paper.experiments.calibration_growth`)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(splits)]


def _argmin(cands):
    return argmin_with_ties(cands, lambda c: c.val_risk, lambda c: (c.K, c.index))


def largest_budget_extras(panel, n_M: int, sizes: dict, split: int, seed: int) -> dict:
    """What one split contributes beyond the sweep records, at one budget: the residual
    hybrid (information-first path, K <= 7; base, shrinkage, K by validation), the DS jury
    (K by validation) and each single judge's joint table (the best one by validation)."""
    blocks = nested_blocks(panel, [n_M], seed=seed, **sizes)[0]
    res = FCPSSelector(seed=seed, **{**PAPER_PROTOCOL, "families": ("residual", "ds_jury"),
                                     "paths": ("info_first",)}).fit(panel, blocks)
    out: dict = {"split": split, "n_M": n_M}
    for fam in ("residual", "ds_jury"):
        sel = _argmin([c for c in res.candidates if c.family == fam and c.K <= 7])
        out[fam] = {"test_mse": sel.test_mse, "K": sel.K, "params": dict(sel.params)}
    singles = {}
    for judge in panel.judge_names:
        one = FCPSSelector(seed=seed, **{**PAPER_PROTOCOL, "families": ("table",), "paths": ("info_first",)}
                           ).fit(panel.subset_judges([judge]), blocks)
        c = one.candidates[0]
        singles[judge] = (c.val_risk, c.test_mse)
    best = min(singles, key=lambda j: (singles[j][0], panel.judge_names.index(j)))
    out["single"] = {"judge": best, "test_mse": singles[best][1],
                     "per_judge": {j: v[1] for j, v in singles.items()}}
    return out


def run_extras(panel, n_M: int, sizes: dict, plan: Plan) -> list[dict]:
    seeds = split_seeds(plan.seed, plan.splits)
    if plan.workers == 1:
        return [largest_budget_extras(panel, n_M, sizes, r, s) for r, s in enumerate(seeds)]
    from joblib import Parallel, delayed
    return list(Parallel(n_jobs=plan.workers)(delayed(largest_budget_extras)(panel, n_M, sizes, r, s)
                                              for r, s in enumerate(seeds)))


def run_real(name: str, plan: Plan, say: Callable[[str], None]) -> RealRun:
    spec = plan.real[name]
    panel = real_panel(name)
    n_S, n_V, n_T = spec["sizes"]
    sizes = {"n_select": n_S, "n_val": n_V, "n_test": n_T}
    common = {"splits": plan.splits, "seed": plan.seed, "workers": plan.workers}
    say(f"real panel {name}: main sweep ({len(spec['budgets'])} budgets x {plan.splits} splits)")
    sweep = calibration_growth(panel, spec["budgets"], menus=MAIN_MENUS, **sizes, **common)
    run = RealRun(name, panel, spec, sweep)
    top = run.largest
    say(f"real panel {name}: CFPS path, S/V shifts and single judges at n_M={top}")
    run.cfps = calibration_growth(panel, [top], families=("table",), paths=P3 + ("cfps",), menus=CFPS_MENUS,
                                  **sizes, **common)
    for label, (s, v) in (("sel.-heavy", (n_S + n_S // 2, n_V - n_V // 2)),
                          ("val.-heavy", (n_S - n_S // 2, n_V + n_V // 2))):
        run.shifted[label] = calibration_growth(panel, [top], n_select=s, n_val=v, n_test=n_T,
                                                families=PAPER_SCALAR, paths=("info_first",),
                                                menus={"scalar": PAPER_MENUS["scalar"]}, **common)
    run.extras = run_extras(panel, top, sizes, plan)
    return run


# -- external binary stand-ins --------------------------------------------------------------------
def external_panels(plan: Plan) -> dict:
    """Offline binary stand-ins for the paper's external tasks (safety, math, code): each
    has ``rows`` labelled items, seven judges and a binary label."""
    rows = plan.external["rows"]
    return {
        "semi-real LLMBar (additive target)": semi_real(real_panel("llmbar"), "additive", rows=rows,
                                                         seed=plan.seed),
        "synthetic additive, 5% uncertain outputs": make_regime("additive", rows=rows, judges=7, seed=plan.seed,
                                                                tie_rate=0.05),
        "synthetic AND interaction, 5% uncertain outputs": make_regime("and", rows=rows, judges=7,
                                                                       seed=plan.seed, tie_rate=0.05),
    }


def run_external(plan: Plan, say: Callable[[str], None]) -> dict:
    ext = plan.external
    n_S, n_V, n_T = ext["sizes"]
    out = {}
    for name, panel in external_panels(plan).items():
        say(f"external binary stand-in: {name}")
        out[name] = (panel, calibration_growth(panel, ext["budgets"], n_select=n_S, n_val=n_V, n_test=n_T,
                                               splits=plan.splits, seed=plan.seed, workers=plan.workers,
                                               families=("table",), menus={"table": PAPER_MENUS["table"]}))
    return out
