"""Calibration-growth sweeps (paper section "Experiments", Tables tab:regime-comparison,
tab:selected-k-instability, tab:k-family-ablation, tab:oracle-interaction-gap-full).

Protocol per split r (R grouped splits, default 30): groups are shuffled once; the first
groups fill S, V and T to their fixed sizes, and calibration blocks for every budget n_M
are nested prefixes of the remaining groups, so budgets differ only in M. For each
(split, budget) one full-menu selection is run; every menu's decision is the validation
argmin over that menu's own candidates (identical to running FCPS on the menu alone,
because path rules do not depend on the families). The research test block T is used only
to report risks after each decision.

Menus: ``table`` (joint table over the path rules), ``scalar`` (the six scalar and
reliability families), ``table_like`` (table + backoff + residual), ``full`` (all).
A menu is a tuple of families over every fitted path and prefix, or a :class:`Menu` that
also restricts paths and prefix sizes: :data:`PAPER_MENUS` are the paper's main
comparison menus (Table tab:candidate-menu-validation): the joint table over three path
rules x K = 1..7 (21 candidates) and six scalar families on the information-first path x
K = 1..7 (42), so |C| and the validation scales come out as printed.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..measures.diagnostics import argmin_with_ties, metric_suite
from ..errors import SplitError
from ..families import PAIRWISE_FEATURE, PAPER_SCALAR, REGISTRY
from ..data.panel import Panel
from ..planning.plan import sweep_plan
from ..selection import DEFAULT_PATHS, PAPER_PROTOCOL, Candidate, FCPSSelector
from ..data.splits import Blocks

@dataclass(frozen=True)
class Menu:
    """A named candidate menu: families, optionally restricted to some path rules and to
    prefixes K <= ``k_max`` (None: every fitted path / prefix)."""
    families: tuple[str, ...]
    paths: tuple[str, ...] | None = None
    k_max: int | None = None

    def admits(self, cand) -> bool:
        return (cand.family in self.families and (self.paths is None or cand.path_rule in self.paths)
                and (self.k_max is None or cand.K <= self.k_max))


def as_menu(spec) -> Menu:
    return spec if isinstance(spec, Menu) else Menu(tuple(spec))


MENUS = {
    "table": ("table",),
    "scalar": PAPER_SCALAR,
    "table_like": ("table", "backoff", "residual"),
}
MENUS["full"] = tuple(dict.fromkeys(MENUS["table_like"] + PAPER_SCALAR + ("ds_jury",)))
#: The paper's main-comparison menus (Table tab:candidate-menu-validation), also named
#: ``paper_table`` / ``paper_scalar`` for ``select --menu``.
PAPER_MENUS = {"table": Menu(("table",), paths=("info_first", "complexity_penalized", "random"), k_max=7),
               "scalar": Menu(PAPER_SCALAR, paths=("info_first",), k_max=7)}
NAMED_MENUS = {"paper_table": PAPER_MENUS["table"], "paper_scalar": PAPER_MENUS["scalar"]}
#: The menus of the paper's controlled calibration-growth tables (appendix "New
#: Calibration-Growth Dataset": "a joint-table family, an additive ridge family, and a
#: pairwise-ridge family"): the joint table against the validation choice over the two ridge
#: families, both over the three path rules and K <= 7 (``sweep --menus growth``).
GROWTH_MENUS = {"table": Menu(("table",), paths=("info_first", "complexity_penalized", "random"), k_max=7),
                "scalar": Menu(("ridge_iso", "ridge_pairwise_iso"),
                               paths=("info_first", "complexity_penalized", "random"), k_max=7)}
MENU_SETS = {"default": MENUS, "paper": PAPER_MENUS, "growth": GROWTH_MENUS}
Z95 = 1.959963984540054


def nested_blocks(panel: Panel, budgets: Sequence[int], *, n_select: int, n_val: int,
                  n_test: int, seed: int) -> list[Blocks]:
    """Blocks for every budget of one split: S, V, T fixed; M nested across budgets."""
    labelled = np.flatnonzero(panel.labelled)
    groups = panel.group_ids[labelled]
    uniq, inverse = np.unique(groups, return_inverse=True)
    members = [[] for _ in uniq]
    for row, g in zip(labelled, inverse):
        members[g].append(row)
    order = np.random.default_rng(seed).permutation(len(uniq))
    need = n_select + n_val + n_test + max(budgets)
    if need > len(labelled):
        raise SplitError(f"the sweep needs {need} labelled rows (S {n_select} + V {n_val} + "
                         f"T {n_test} + largest n_M {max(budgets)}) but the panel has "
                         f"{len(labelled)}; lower --budgets (largest {max(budgets)}) or "
                         "--n-select/--n-val/--n-test")
    fixed: dict[str, list[int]] = {"S": [], "V": [], "T": []}
    targets = [("S", n_select), ("V", n_val), ("T", n_test)]
    pool: list[int] = []
    t = 0
    for g in order:
        while t < len(targets) and len(fixed[targets[t][0]]) >= targets[t][1]:
            t += 1
        if t < len(targets):
            fixed[targets[t][0]].extend(members[g])
        else:
            pool.append(g)
    out = []
    for n_M in budgets:
        rows: list[int] = []
        for g in pool:
            if len(rows) >= n_M:
                break
            rows.extend(members[g])
        if len(rows) < n_M:
            raise SplitError(f"only {len(rows)} labelled rows are left for calibration; "
                             f"budget n_M={n_M} cannot be met")
        out.append(Blocks(S=np.array(sorted(fixed["S"]), dtype=np.int64),
                          M=np.array(sorted(rows), dtype=np.int64),
                          V=np.array(sorted(fixed["V"]), dtype=np.int64),
                          T=np.array(sorted(fixed["T"]), dtype=np.int64),
                          seed=seed, source="counts"))
    return out


def _argmin(cands: list[Candidate], attr: str = "val_risk") -> Candidate | None:
    return argmin_with_ties(cands, lambda c: getattr(c, attr),
                            lambda c: (c.K, REGISTRY[c.family].complexity_rank, c.index))


def split_record(result, budget: int, split: int, k_short: int = 3,
                 menus: dict[str, Sequence[str]] | None = None) -> dict:
    """What one (split, budget) selection contributes to the sweep tables."""
    cands = result.candidates
    menus = {name: as_menu(spec) for name, spec in (menus or MENUS).items()}
    rec: dict = {"split": split, "n_M": budget, "menus": {}}
    for menu, spec in menus.items():
        pool = [c for c in cands if spec.admits(c)]
        sel = _argmin(pool)
        if sel is None:
            continue
        d = sel.diagnostics
        oracle = min(pool, key=lambda c: c.test_mse)      # non-deployable: chosen on T
        by_nll = _argmin(pool, "val_nll")                 # the same menu selected by validation NLL
        # Post-selection audit on T only (paper Table tab:metric-robustness).
        metrics = metric_suite(result.panel.labels[result.blocks.T],
                               result.predict_rows(sel, result.blocks.T))
        rec.setdefault("selected_index", {})[menu] = sel.index
        rec["menus"][menu] = {
            "test_mse": sel.test_mse, "test_nll": sel.test_nll, "val_mse": sel.val_mse,
            # validation side for planning (fcps_core.planning): never fitted on test risks
            "val_risk": sel.val_risk, "val_se": sel.val_se,
            "menu_size": int(sum(c.grid_size for c in pool)),
            "K": sel.K, "family": sel.family, "path_rule": sel.path_rule,
            "unseen_test": d.unseen_test if d else None, "V_cell": d.V_cell if d else None,
            "V_proxy": d.V_proxy if d else None, "H_K": d.H_K if d else None,
            "pairwise": sel.family in PAIRWISE_FEATURE,
            "oracle_test_mse": oracle.test_mse,
            "nll_selected_test_mse": by_nll.test_mse, "nll_selected_test_nll": by_nll.test_nll,
            "metrics": metrics,
        }
    # K-versus-family ablation (Table tab:k-family-ablation): fixed largest prefix vs selected K.
    ablation = {}
    for menu in ("table", "scalar", "full"):
        if menu not in rec["menus"]:
            continue
        pool = [c for c in cands if menus[menu].admits(c)]
        # The largest prefix the menu offers (all judges, unless K limits cap the tables).
        top = max(c.K for c in pool)
        fixed = _argmin([c for c in pool if c.K == top])
        ablation[menu] = {"fixed_K": fixed.test_mse if fixed else None,
                          "selected_K": rec["menus"][menu]["test_mse"]}
    rec["ablation"] = ablation
    # Regret of the unrestricted table selector against a K <= 3 rule (Table tab:selected-k-instability).
    table_menu = menus.get("table", Menu(("table",)))
    short = _argmin([c for c in cands if c.family == "table" and table_menu.admits(c) and c.K <= k_short])
    if short is not None and "table" in rec["menus"]:
        rec["regret_vs_short"] = rec["menus"]["table"]["test_mse"] - short.test_mse
    return rec


#: The per-candidate sweep record (issue: reproduce the whole paper): one row per
#: (split, budget, candidate), columns below; ``selected_by`` names the menus whose
#: validation argmin the candidate was ("" if none, "table|full" if several).
CANDIDATE_COLUMNS = ("split", "n_M", "path", "K", "family", "val_risk", "val_mse", "test_mse", "H_K", "Q_K",
                     "S_K", "unseen_val", "unseen_test", "V_cell", "V_proxy", "selected_by")


def candidate_rows(result, budget: int, split: int, selected: dict[str, int]) -> dict[str, list]:
    """Every candidate's figures of one (split, budget) selection as columns
    (:data:`CANDIDATE_COLUMNS`); prefix diagnostics are shared by a prefix's families."""
    by_index: dict[int, list[str]] = {}
    for menu, idx in selected.items():
        by_index.setdefault(idx, []).append(menu)
    cols: dict[str, list] = {c: [] for c in CANDIDATE_COLUMNS}
    nan = math.nan
    for c in result.candidates:
        d = c.diagnostics
        for key, value in (("split", split), ("n_M", budget), ("path", c.path_rule), ("K", c.K),
                           ("family", c.family), ("val_risk", c.val_risk), ("val_mse", c.val_mse),
                           ("test_mse", nan if c.test_mse is None else c.test_mse),
                           ("H_K", d.H_K if d else nan), ("Q_K", d.Q_K if d else nan),
                           ("S_K", d.S_K if d else -1), ("unseen_val", d.unseen_val if d else nan),
                           ("unseen_test", nan if d is None or d.unseen_test is None else d.unseen_test),
                           ("V_cell", d.V_cell if d else nan), ("V_proxy", d.V_proxy if d else nan),
                           ("selected_by", "|".join(by_index.get(c.index, ())))):
            cols[key].append(value)
    return cols


def concat_candidate_rows(parts: list[dict[str, list]]) -> dict[str, np.ndarray]:
    """The long candidate table of a sweep as numpy columns (strings as object arrays)."""
    out = {}
    for col in CANDIDATE_COLUMNS:
        values = [v for p in parts for v in p[col]]
        out[col] = np.asarray(values, dtype=object if col in ("path", "family", "selected_by") else
                              (np.int64 if col in ("split", "n_M", "K", "S_K") else float))
    return out


def _mean_se(values: Sequence[float]) -> tuple[float, float]:
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if len(v) == 0:
        return math.nan, math.nan
    se = float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan
    return float(v.mean()), se


def summarise_budget(records: list[dict]) -> dict:
    """Per-budget summary over splits: the JSON ``cells`` entry of a sweep."""
    n_M = records[0]["n_M"]
    cell: dict = {"n_M": n_M, "splits": len(records), "menus": {}}
    names = list(dict.fromkeys(m for r in records for m in r["menus"]))
    for menu in names:
        rows = [r["menus"][menu] for r in records if menu in r["menus"]]
        if not rows:
            continue
        mean, se = _mean_se([x["test_mse"] for x in rows])
        o_mean, o_se = _mean_se([x["oracle_test_mse"] for x in rows])
        Ks = [x["K"] for x in rows]
        k_mode, k_count = Counter(Ks).most_common(1)[0]
        fams = Counter(x["family"] for x in rows)
        cell["menus"][menu] = {
            "test_mse_mean": mean, "test_mse_se": se,
            "oracle_test_mse_mean": o_mean, "oracle_test_mse_se": o_se,
            "K_mean": float(np.mean(Ks)), "K_sd": float(np.std(Ks, ddof=1)) if len(Ks) > 1 else 0.0,
            "K_mode": int(k_mode), "K_mode_share": k_count / len(Ks),
            "family_shares": {f: n / len(rows) for f, n in fams.most_common()},
            "unseen_mean": _mean_se([x["unseen_test"] for x in rows])[0],
            "V_cell_mean": _mean_se([x["V_cell"] for x in rows])[0],
            "V_proxy_mean": _mean_se([x["V_proxy"] for x in rows])[0],
            "pairwise_share": float(np.mean([x["pairwise"] for x in rows])),
            "test_nll_mean": _mean_se([x["test_nll"] for x in rows])[0],
            "nll_selected_test_mse_mean": _mean_se([x.get("nll_selected_test_mse") for x in rows])[0],
            "nll_selected_test_nll_mean": _mean_se([x.get("nll_selected_test_nll") for x in rows])[0],
            "metrics": {m: dict(zip(("mean", "se"), _mean_se([x["metrics"][m] for x in rows if "metrics" in x])))
                        for m in ("mse", "nll", "accuracy", "pearson", "spearman")},
        }
    # Paired table-minus-scalar difference over splits with a normal 95% interval.
    pairs = [(r["menus"]["table"]["test_mse"], r["menus"]["scalar"]["test_mse"])
             for r in records if "table" in r["menus"] and "scalar" in r["menus"]]
    if pairs:
        diff = np.array([a - b for a, b in pairs])
        m = float(diff.mean())
        se = float(diff.std(ddof=1) / math.sqrt(len(diff))) if len(diff) > 1 else math.nan
        cell.update({"delta": m, "delta_se": se, "ci_low": m - Z95 * se, "ci_high": m + Z95 * se})
    tm, sm = cell["menus"].get("table", {}), cell["menus"].get("scalar", {})
    cell.update({"table_test_mse": tm.get("test_mse_mean"), "scalar_test_mse": sm.get("test_mse_mean"),
                 "table_K_mean": tm.get("K_mean"), "unseen_mean": tm.get("unseen_mean"),
                 "V_cell_mean": tm.get("V_cell_mean"), "V_proxy_mean": tm.get("V_proxy_mean")})
    abl: dict = {}
    for menu in ("table", "scalar", "full"):
        vals = [r["ablation"][menu] for r in records if menu in r.get("ablation", {})]
        if vals:
            abl[menu] = {"fixed_K": _mean_se([v["fixed_K"] for v in vals])[0],
                         "selected_K": _mean_se([v["selected_K"] for v in vals])[0]}
    cell["ablation"] = abl
    regrets = [r["regret_vs_short"] for r in records if "regret_vs_short" in r]
    if regrets:
        cell["regret_vs_K_le_3"], cell["regret_vs_K_le_3_se"] = _mean_se(regrets)
    return cell


@dataclass
class SweepResult:
    panel: str
    budgets: list[int]
    settings: dict
    records: list[dict]
    cells: list[dict] = field(default_factory=list)
    plan: dict | None = None      # fcps_core.planning.sweep_plan: the next labels
    #: every candidate of every (split, budget): columns of :data:`CANDIDATE_COLUMNS`
    candidates: dict[str, np.ndarray] | None = None

    def candidate_frame(self):
        """The per-candidate records as a pandas DataFrame (one row per split, budget, candidate)."""
        import pandas as pd
        return pd.DataFrame(self.candidates if self.candidates is not None else
                            {c: [] for c in CANDIDATE_COLUMNS})

    def to_dict(self) -> dict:
        d = {"panel": self.panel, "budgets": self.budgets, "settings": self.settings,
             "cells": self.cells, "records": self.records}
        if self.plan is not None:
            d["plan"] = self.plan
        return d


def _run_split(panel: Panel, budgets: list[int], split: int, seed: int, sizes: dict,
               selector_options: dict, menus: dict | None = None,
               keep_candidates: bool = True) -> tuple[list[dict], list[dict]]:
    """(records, candidate-row parts) of one split over every budget."""
    blocks_per_budget = nested_blocks(panel, budgets, seed=seed, **sizes)
    out, parts = [], []
    for n_M, blocks in zip(budgets, blocks_per_budget):
        result = FCPSSelector(seed=seed, **{**PAPER_PROTOCOL, **selector_options}).fit(panel, blocks)
        rec = split_record(result, n_M, split, menus=menus)
        selected = rec.pop("selected_index", {})
        out.append(rec)
        if keep_candidates:
            parts.append(candidate_rows(result, n_M, split, selected))
    return out, parts


def calibration_growth(panel: Panel, budgets: Sequence[int], *, n_select: int, n_val: int,
                       n_test: int, splits: int = 30, seed: int = 0,
                       families: Sequence[str] | None = None,
                       paths: Sequence[str] = DEFAULT_PATHS, workers: int = 1,
                       backend: str = "loky",
                       progress: Callable[[float, str], None] | None = None,
                       menus: dict[str, Sequence[str]] | None = None,
                       plan_options: dict | None = None, keep_candidates: bool = True,
                       **selector_options) -> SweepResult:
    """Sweep n_M over ``budgets`` with fixed n_S, n_V, n_T over ``splits`` grouped splits.

    ``panel`` is a :class:`Panel`, a pandas DataFrame or a panel file's path
    (:func:`fcps_core.read_panel`).

    ``workers`` > 1 runs splits in parallel with joblib (``backend`` is any joblib backend:
    ``loky`` locally, or ``dask``/``ray`` when their joblib integration is registered).
    ``menus`` maps a menu name to its families or a :class:`Menu` (default :data:`MENUS`;
    :data:`PAPER_MENUS` for the paper's 21/42-candidate menus); each menu's decision
    is its own validation argmin. ``families`` (default: the union of the menus) is what gets
    fitted. ``keep_candidates`` keeps every candidate's figures per split and budget
    (``SweepResult.candidates``, :data:`CANDIDATE_COLUMNS`). ``plan_options`` are passed to :func:`fcps_core.planning.sweep_plan` (the result's
    ``plan``: each menu's validation-risk curve, the crossover budget, the S/M/V allocation).
    """
    from ..ingest import as_panel
    panel = as_panel(panel)                 # a Panel, a pandas DataFrame or a panel file's path
    budgets = sorted(int(b) for b in budgets)
    if not budgets or budgets[0] < 1:
        raise SplitError(f"budgets (--budgets) must be positive integers (got {budgets})")
    for name, value in (("n_select", n_select), ("n_val", n_val), ("n_test", n_test)):
        if value is None or value < 1:
            why = "a sweep reports test risk: " if name == "n_test" else ""
            raise SplitError(f"{why}{name} (--{name.replace('_', '-')}) must be at least 1 (got {value})")
    if splits < 1 or workers < 1:
        raise SplitError(f"splits and workers (--splits, --workers) must be at least 1 (got {splits} and {workers})")
    families = tuple(families or dict.fromkeys(f for spec in (menus or MENUS).values()
                                               for f in as_menu(spec).families))
    sizes = {"n_select": n_select, "n_val": n_val, "n_test": n_test}
    options = {"families": families, "paths": tuple(paths), **selector_options}
    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(splits)]
    report = progress or (lambda f, m: None)
    # Fail fast on impossible sizes before any worker starts.
    nested_blocks(panel, budgets, seed=seeds[0], **sizes)
    records: list[dict] = []
    parts: list[dict] = []
    if workers == 1:
        for r, s in enumerate(seeds):
            recs, cand = _run_split(panel, budgets, r, s, sizes, options, menus, keep_candidates)
            records += recs
            parts += cand
            report((r + 1) / splits, f"split {r + 1}/{splits}")
    else:
        from joblib import Parallel, delayed, parallel_config
        with parallel_config(backend=backend, n_jobs=workers):
            done = 0
            for recs, cand in Parallel(return_as="generator")(
                    delayed(_run_split)(panel, budgets, r, s, sizes, options, menus, keep_candidates)
                    for r, s in enumerate(seeds)):
                records += recs
                parts += cand
                done += 1
                report(done / splits, f"split {done}/{splits}")
    records.sort(key=lambda r: (r["n_M"], r["split"]))
    cells = [summarise_budget([r for r in records if r["n_M"] == b]) for b in budgets]
    menu_sizes = {}
    for rec in records[:1]:
        menu_sizes = {m: v["menu_size"] for m, v in rec["menus"].items()}
    settings = {**sizes, "splits": splits, "seed": seed, "families": list(families), "menu_sizes": menu_sizes,
                "paths": list(paths), **{k: v for k, v in selector_options.items() if k != "progress"}}
    result = SweepResult(panel=panel.name, budgets=budgets, settings=settings, records=records,
                         cells=cells, candidates=concat_candidate_rows(parts) if keep_candidates else None)
    result.plan = sweep_plan(result.to_dict(), **(plan_options or {}))
    return result
