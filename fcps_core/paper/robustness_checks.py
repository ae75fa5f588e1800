"""The paper's robustness checks, each one call (appendix "Extended Empirical Results").

Every check reuses :func:`fcps_core.paper.experiments.calibration_growth` (grouped splits, research
test block only for reporting) and returns plain dicts ready for JSON or markdown:

* :func:`fixed_budget_allocation`  fixed n_H = n_S + n_M + n_V reallocated 1:1:1, 1:2:1, 1:3:1,
  1:1:2 over a compact one-path menu (Table tab:fixed-budget-allocation).
* :func:`objective_comparison`     MSE- versus NLL-selected scalar selector (tab:nll-selection-ablation).
* :func:`tie_collapse_check`       joint table with tie and parse_error merged (tab:tie-parse-fairness).
* :func:`smoothing_sensitivity`    alpha in {0.1, 0.5, 1, 2} x global / lower-prefix fallback
  (tab:table-sensitivity).
* :func:`metric_robustness`        MSE, NLL, accuracy, Pearson, Spearman of the scalar selector
  (tab:metric-robustness).
* :func:`pool_perturbation`        drop one judge at a time (tab:pool-artifact-guardrail).
* :func:`cold_start`               n_h in {8, 16, 32, 64} labels, cross-validated selection with and
  without a one-SE guard toward a task-type prior (tab:cold-start-few-label).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

import numpy as np

from ..measures.diagnostics import losses
from ..data.encoding import encode_panel, prefix_patterns
from ..errors import SplitError
from .experiments import MENUS, calibration_growth, nested_blocks
from ..families import PAPER_SCALAR, REGISTRY, PrefixFeatures, get_family
from ..data.panel import Panel
from ..measures.judge_paths import info_first

ALLOCATIONS = ("1:1:1", "1:2:1", "1:3:1", "1:1:2")


def _sweep_kwargs(kw: dict) -> dict:
    return {k: v for k, v in kw.items() if v is not None}


def fixed_budget_allocation(panel: Panel, n_h: int, *, n_test: int, splits: int = 30, seed: int = 0,
                            ratios: Sequence[str] = ALLOCATIONS, workers: int = 1, **options) -> list[dict]:
    """Reallocate a fixed deployable budget n_H among S, M, V (T held out at ``n_test``).

    The menu is compact as in the paper: the information-first path with the six scalar
    families and the smoothed joint table. Reports the mean test MSE of the validation-
    selected candidate and the modal selected family type (S scalar, T table).
    """
    out = []
    for ratio in ratios:
        parts = [float(x) for x in ratio.split(":")]
        n_S, n_M, n_V = (int(round(n_h * p / sum(parts))) for p in parts)
        n_M = n_h - n_S - n_V
        res = calibration_growth(panel, [n_M], n_select=n_S, n_val=n_V, n_test=n_test, splits=splits,
                                 seed=seed, families=("table",) + PAPER_SCALAR, paths=("info_first",),
                                 workers=workers, **options)
        rows = [r["menus"]["full"] for r in res.records]
        kinds = Counter("T" if REGISTRY[x["family"]].table_like else "S" for x in rows)
        mean = float(np.mean([x["test_mse"] for x in rows]))
        se = float(np.std([x["test_mse"] for x in rows], ddof=1) / math.sqrt(len(rows))) if len(rows) > 1 else math.nan
        out.append({"ratio": ratio, "n_S": n_S, "n_M": n_M, "n_V": n_V, "n_T": n_test,
                    "test_mse_mean": mean, "test_mse_se": se, "modal_kind": kinds.most_common(1)[0][0],
                    "table_share": kinds.get("T", 0) / len(rows)})
    return out


def objective_comparison(sweep) -> list[dict]:
    """MSE- versus NLL-selected scalar selector per budget, from one sweep's records."""
    out = []
    for cell in sweep.cells:
        m = cell["menus"].get("scalar")
        if m:
            out.append({"n_M": cell["n_M"], "mse_selected_mse": m["test_mse_mean"],
                        "nll_selected_mse": m["nll_selected_test_mse_mean"],
                        "mse_selected_nll": m["test_nll_mean"],
                        "nll_selected_nll": m["nll_selected_test_nll_mean"]})
    return out


def metric_robustness(sweep, *, menu: str = "scalar") -> list[dict]:
    """MSE, NLL, accuracy, Pearson, Spearman (mean and SE over splits) of a menu's selection."""
    return [{"n_M": c["n_M"], **{k: v for k, v in c["menus"][menu]["metrics"].items()}}
            for c in sweep.cells if menu in c["menus"]]


def tie_collapse_check(panel: Panel, budgets: Sequence[int], *, n_select: int, n_val: int, n_test: int,
                       splits: int = 30, seed: int = 0, workers: int = 1, **options) -> list[dict]:
    """Scalar selector vs joint table vs tie/error-collapsed joint table, same splits."""
    base = calibration_growth(panel, budgets, n_select=n_select, n_val=n_val, n_test=n_test,
                              splits=splits, seed=seed, families=("table",) + PAPER_SCALAR,
                              workers=workers, **options)
    collapsed = calibration_growth(panel.collapse_neutral(), budgets, n_select=n_select, n_val=n_val,
                                   n_test=n_test, splits=splits, seed=seed, families=("table",),
                                   workers=workers, **options)
    out = []
    for a, b in zip(base.cells, collapsed.cells):
        sc, tb = a["menus"]["scalar"], a["menus"]["table"]
        cl = b["menus"]["table"]
        out.append({"n_M": a["n_M"], "scalar": sc["test_mse_mean"], "scalar_se": sc["test_mse_se"],
                    "table": tb["test_mse_mean"], "table_se": tb["test_mse_se"],
                    "collapsed_table": cl["test_mse_mean"], "collapsed_table_se": cl["test_mse_se"],
                    "collapsed_minus_scalar": cl["test_mse_mean"] - sc["test_mse_mean"]})
    return out


def smoothing_sensitivity(panel: Panel, n_M: int, *, n_select: int, n_val: int, n_test: int,
                          splits: int = 30, seed: int = 0, alphas: Sequence[float] = (0.1, 0.5, 1.0, 2.0),
                          workers: int = 1, **options) -> list[dict]:
    """Joint table on the information-first path with validation-selected K, for every
    (alpha, fallback) setting at one budget."""
    out = []
    for fallback in ("global", "lower_prefix"):
        for alpha in alphas:
            res = calibration_growth(panel, [n_M], n_select=n_select, n_val=n_val, n_test=n_test,
                                     splits=splits, seed=seed, families=("table",), paths=("info_first",),
                                     workers=workers, alpha=alpha, fallback=fallback, **options)
            m = res.cells[0]["menus"]["table"]
            out.append({"alpha": alpha, "fallback": fallback, "test_mse_mean": m["test_mse_mean"],
                        "test_mse_se": m["test_mse_se"], "K_mean": m["K_mean"]})
    return out


def pool_perturbation(panel: Panel, n_M: int, *, n_select: int, n_val: int, n_test: int,
                      splits: int = 30, seed: int = 0, drop: Sequence[str] | None = None,
                      workers: int = 1, **options) -> list[dict]:
    """Drop one judge at a time (default: each judge) and rerun the information-first table
    and scalar selectors at one budget; the first row is the full pool."""
    pools = [("(full pool)", panel.judge_names)]
    for j in (drop if drop is not None else panel.judge_names):
        pools.append((j, [x for x in panel.judge_names if x != j]))
    out = []
    for dropped, judges in pools:
        res = calibration_growth(panel.subset_judges(judges), [n_M], n_select=n_select, n_val=n_val,
                                 n_test=n_test, splits=splits, seed=seed, paths=("info_first",),
                                 families=("table",) + PAPER_SCALAR, workers=workers, **options)
        c = res.cells[0]
        out.append({"dropped": dropped, "m": len(judges), "table_K_mean": c["table_K_mean"],
                    "table_test_mse": c["table_test_mse"], "scalar_test_mse": c["scalar_test_mse"],
                    "delta": c.get("delta")})
    return out


# -- cold start -------------------------------------------------------------------------------
def task_prior(panel: Panel) -> str:
    """The paper's task-type prior: one-coin reliability for pairwise/binary tasks, ridge otherwise."""
    return "one_coin_iso" if {j.schema for j in panel.judges} <= {"pairwise", "binary"} else "ridge_iso"


def _fit_predict(panel: Panel, judges: tuple[int, ...], family: str, fit_rows: np.ndarray,
                 eval_rows: np.ndarray, alpha: float, unlabelled: np.ndarray) -> np.ndarray:
    """Encode on ``fit_rows``, fit ``family`` on the prefix ``judges`` and predict ``eval_rows``."""
    sub = panel.subset_judges([panel.judge_names[j] for j in judges])
    enc = encode_panel(sub, fit_rows)
    feats = PrefixFeatures(patterns=prefix_patterns(enc.codes, enc.alphabet_sizes), scores=enc.scores)
    cls = get_family(family)
    model = cls(alpha=alpha) if family == "table" else cls()
    model.fit(feats.take(fit_rows), panel.labels[fit_rows],
              feats.take(unlabelled) if cls.uses_unlabelled else None)
    return model.predict(feats.take(eval_rows))


def cold_start(panel: Panel, n_h_values: Sequence[int] = (8, 16, 32, 64), *, n_test: int,
               splits: int = 12, folds: int = 4, seed: int = 0,
               families: Sequence[str] = ("table",) + PAPER_SCALAR, k_max: int | None = None,
               prior_family: str | None = None, alpha: float = 0.5) -> list[dict]:
    """Few-label deployment: only n_h grouped labels for selection and calibration.

    Per split, the n_h rows build one information-first path and every (K, family) candidate
    gets a ``folds``-fold cross-validated risk (grouped folds). Unguarded FCPS deploys the CV
    argmin; guarded FCPS deploys it only when its upper one-SE CV risk is below the prior's
    lower one-SE CV risk, else the prior (the task-type family on all judges). The deployed
    candidate is refit on all n_h rows and scored on the held-out grouped test block.
    """
    prior = prior_family or task_prior(panel)
    m = len(panel.judges)
    k_top = min(k_max or m, m)
    out = []
    for n_h in n_h_values:
        rows = {"prior": [], "unguarded": [], "guarded": []}
        adapted = 0
        guarded_families = Counter()
        for r, s in enumerate(np.random.SeedSequence([seed, n_h]).generate_state(splits)):
            blocks = nested_blocks(panel, [n_h], n_select=0, n_val=0, n_test=n_test, seed=int(s))[0]
            train, test = blocks.M, blocks.T
            y = panel.labels
            unlabelled = np.setdiff1d(np.flatnonzero(~panel.labelled), test)
            if len(np.unique(panel.group_ids[train])) < folds:
                raise SplitError(f"n_h={n_h} labelled rows hold fewer than {folds} groups for cross-validation")
            enc = encode_panel(panel, train)
            path = tuple(info_first(enc.codes[train], y[train]))
            groups = np.unique(panel.group_ids[train])
            fold_of_group = {g: i % folds for i, g in
                             enumerate(np.random.default_rng(int(s)).permutation(groups))}
            fold = np.array([fold_of_group[g] for g in panel.group_ids[train]])
            cands = [(path[:K], f) for K in range(1, k_top + 1) for f in families
                     if not (REGISTRY[f].table_like and K > 8)]
            prior_cand = (path, prior)
            if prior_cand not in cands:
                cands.append(prior_cand)
            cv: dict = {}
            for cand in cands:
                oof = np.empty(len(train))
                for f in range(folds):
                    fit, ev = train[fold != f], train[fold == f]
                    oof[fold == f] = _fit_predict(panel, cand[0], cand[1], fit, ev, alpha, unlabelled)
                loss = losses("mse", y[train], oof)
                cv[cand] = (float(loss.mean()), float(loss.std(ddof=1) / math.sqrt(len(loss))))
            best = min(cands, key=lambda c: (cv[c][0], len(c[0]), REGISTRY[c[1]].complexity_rank))
            adapt = cv[best][0] + cv[best][1] < cv[prior_cand][0] - cv[prior_cand][1]
            guarded = best if adapt else prior_cand
            adapted += bool(adapt) and best != prior_cand
            guarded_families[guarded[1]] += 1
            for name, cand in (("prior", prior_cand), ("unguarded", best), ("guarded", guarded)):
                pred = _fit_predict(panel, cand[0], cand[1], train, test, alpha, unlabelled)
                rows[name].append(float(np.mean(losses("mse", y[test], pred))))
        out.append({"n_h": n_h, "prior_family": prior,
                    **{f"{k}_test_mse": float(np.mean(v)) for k, v in rows.items()},
                    "delta_guarded": float(np.mean(rows["guarded"]) - np.mean(rows["prior"])),
                    "adaptation_rate": adapted / splits,
                    "guarded_family": guarded_families.most_common(1)[0][0]})
    return out


__all__ = ["fixed_budget_allocation", "objective_comparison", "metric_robustness", "tie_collapse_check",
           "smoothing_sensitivity", "pool_perturbation", "cold_start", "task_prior", "MENUS"]
