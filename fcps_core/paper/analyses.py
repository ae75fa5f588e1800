"""Paper analyses that need every candidate of every split (not only each menu's choice).

Input: a sweep's per-candidate long table (``SweepResult.candidate_frame()``, columns
:data:`fcps_core.paper.experiments.CANDIDATE_COLUMNS`; several panels may be stacked with a
``panel`` column) and, where a label needs the decisions, the sweep's per-split records.
Every function returns plain rows (dicts) and cites its paper label:

* :func:`marginal_deltas` / :func:`marginal_bins`  Figure fig:marginal: test-risk change
  from K to K+1 against the complexity increase Delta(H_K / n_M), binned median and
  10-90 % band.
* :func:`controlled_complexity`  Table tab:controlled-complexity: H_K / n_M and the unseen
  rate against test risk after demeaning within panel-budget-path groups, standardized
  one-variable regression slope with its OLS standard error.
* :func:`within_group_correlation`  Table tab:within-group-correlation.
* :func:`interaction_diagnostic`  Table tab:interaction-diagnostic: best all-K additive
  stacker, best all-K pairwise-feature stacker (each chosen on validation, scored on
  test), their gap, and the share of scalar choices using pairwise features.
* :func:`theory_proxy_winner`  Table tab:theory-proxy-winner: the split-level proxy score
  z(H_K/n_M) + z(unseen) + z(pairwise gain) predicting that the scalar menu's choice beats
  the table menu's on test risk: AUC (cluster bootstrap interval, within-cluster
  permutation p), hard-rule agreement over panel-budget cells with a one-sided binomial
  p, and the scalar-minus-table proxy gap. The hard rule is the paper's regime map
  (Figure fig:operational-regime-map; :func:`regime_rule_agreement`): a cell is predicted
  to favour the table only when its validation interaction gain is high and its table
  pressure low, and is scored against the menu with the lower mean test MSE in the cell
  (how the paper counts "scalar lower in 16 of 20 cells"). The earlier rule (mean pooled
  proxy z-score > 0 predicts scalar) is kept as a labelled extra row: it splits cells about
  in half by construction, whatever the winners.

The research test block enters only as the reported outcome (test risk), as in the paper's
diagnostics; no choice is made on it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

ADDITIVE_STACKERS = ("ridge_iso", "logistic")
PAIRWISE_STACKERS = ("ridge_pairwise_iso", "logistic_pairwise")


def _with_panel(df: pd.DataFrame) -> pd.DataFrame:
    return df if "panel" in df.columns else df.assign(panel="panel")


def _table_rows(df: pd.DataFrame, family: str) -> pd.DataFrame:
    df = _with_panel(df)
    out = df[(df["family"] == family) & np.isfinite(df["test_mse"].astype(float))
             & np.isfinite(df["H_K"].astype(float))].copy()
    out["H_per_n"] = out["H_K"].astype(float) / out["n_M"].astype(float)
    return out


# -- fig:marginal -------------------------------------------------------------------------------
def marginal_deltas(df: pd.DataFrame, family: str = "table") -> pd.DataFrame:
    """One row per (panel, split, budget, path, K -> K+1) of ``family``: ``d_complexity``
    = Delta(H_K / n_M), ``d_risk`` = Delta test risk (below zero: adding the judge helped)."""
    t = _table_rows(df, family).sort_values(["panel", "split", "n_M", "path", "K"])
    keys = ["panel", "split", "n_M", "path"]
    nxt = t.groupby(keys, sort=False)[["K", "H_per_n", "test_mse"]].shift(-1)
    ok = nxt["K"].notna() & (nxt["K"] == t["K"] + 1)
    return pd.DataFrame({"panel": t["panel"][ok], "split": t["split"][ok], "n_M": t["n_M"][ok],
                         "path": t["path"][ok], "K": t["K"][ok],
                         "d_complexity": (nxt["H_per_n"] - t["H_per_n"])[ok].astype(float),
                         "d_risk": (nxt["test_mse"] - t["test_mse"])[ok].astype(float)}).reset_index(drop=True)


def marginal_bins(deltas: pd.DataFrame, bins: int = 8) -> list[dict]:
    """Quantile bins of ``d_complexity`` with the median and 10-90 % band of ``d_risk``."""
    if deltas.empty:
        return []
    x, y = deltas["d_complexity"].to_numpy(float), deltas["d_risk"].to_numpy(float)
    edges = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)))
    out = []
    for i in range(len(edges) - 1):
        last = i == len(edges) - 2
        m = (x >= edges[i]) & ((x <= edges[i + 1]) if last else (x < edges[i + 1]))
        if not m.any():
            continue
        out.append({"bin_low": float(edges[i]), "bin_high": float(edges[i + 1]),
                    "d_complexity_median": float(np.median(x[m])), "d_risk_median": float(np.median(y[m])),
                    "d_risk_p10": float(np.quantile(y[m], 0.1)), "d_risk_p90": float(np.quantile(y[m], 0.9)),
                    "n": int(m.sum())})
    return out


# -- tab:controlled-complexity and tab:within-group-correlation ---------------------------------
def _demeaned(t: pd.DataFrame, col: str, groups: list[str]) -> np.ndarray:
    v = t[col].astype(float)
    return (v - v.groupby([t[g] for g in groups]).transform("mean")).to_numpy(float)


def standardized_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """OLS slope of z(y) on z(x) (both already centred) and its standard error."""
    n = len(x)
    sx, sy = x.std(ddof=1), y.std(ddof=1)
    if n < 3 or sx == 0 or sy == 0:
        return math.nan, math.nan
    zx, zy = x / sx, y / sy
    b = float(zx @ zy / (zx @ zx))
    resid = zy - b * zx
    se = float(math.sqrt((resid @ resid) / (n - 2) / (zx @ zx)))
    return b, se


def controlled_complexity(df: pd.DataFrame, family: str = "table",
                          groups: tuple[str, ...] = ("panel", "n_M", "path")) -> list[dict]:
    """Standardized one-variable regressions of test risk on H_K / n_M and on the unseen
    rate, predictor and outcome demeaned within ``groups`` (tab:controlled-complexity)."""
    t = _table_rows(df, family)
    t = t[np.isfinite(t["unseen_test"].astype(float))]
    g = list(groups)
    y = _demeaned(t, "test_mse", g)
    out = []
    for label, col in (("H_K/n_M -> test risk", "H_per_n"), ("unseen rate -> test risk", "unseen_test")):
        b, se = standardized_slope(_demeaned(t, col, g), y)
        out.append({"diagnostic": label, "estimate": b, "se": se, "units": int(len(t)),
                    "groups": int(t.groupby(g).ngroups) if len(t) else 0})
    return out


def within_group_correlation(df: pd.DataFrame, family: str = "table") -> list[dict]:
    """Per panel: the correlation of H_K / n_M with test risk inside each budget-path group
    (varying over splits and K), averaged, with the share of positive groups."""
    t = _table_rows(df, family)
    out = []
    for panel, rows in t.groupby("panel", sort=False):
        corrs = []
        for _, grp in rows.groupby(["n_M", "path"]):
            x, y = grp["H_per_n"].to_numpy(float), grp["test_mse"].to_numpy(float)
            if len(x) > 2 and x.std() > 0 and y.std() > 0:
                corrs.append(float(np.corrcoef(x, y)[0, 1]))
        out.append({"panel": panel, "groups": len(corrs),
                    "mean_within_group_corr": float(np.mean(corrs)) if corrs else math.nan,
                    "positive_fraction": float(np.mean([c > 0 for c in corrs])) if corrs else math.nan})
    return out


# -- tab:interaction-diagnostic -----------------------------------------------------------------
def split_pairwise_gain(df: pd.DataFrame) -> pd.DataFrame:
    """Per (panel, split, budget): validation risk of the best all-K pairwise-feature
    stacker minus that of the best all-K additive stacker (``pairwise_gain``: positive when
    the products do not pay), and the test risks of both validation choices."""
    d = _with_panel(df).reset_index(drop=True)
    keys = ["panel", "split", "n_M"]
    top = {}
    for kind, fams in (("additive", ADDITIVE_STACKERS), ("pairwise", PAIRWISE_STACKERS)):
        g = d[d["family"].isin(fams)]
        g = g[g["K"] == g.groupby(keys, sort=False)["K"].transform("max")]
        best = g.loc[g.assign(v=g["val_risk"].astype(float)).groupby(keys, sort=False)["v"].idxmin().to_numpy()]
        top[kind] = best[keys].assign(**{f"{kind}_val": best["val_risk"].astype(float).to_numpy(),
                                         f"{kind}_test": best["test_mse"].astype(float).to_numpy()})
    out = top["additive"].merge(top["pairwise"], on=keys, how="inner")
    out = out[["panel", "split", "n_M", "additive_val", "pairwise_val", "additive_test", "pairwise_test"]]
    return out.assign(pairwise_gain=out["pairwise_val"] - out["additive_val"]).reset_index(drop=True)


def interaction_diagnostic(df: pd.DataFrame, records: list[dict] | None = None) -> list[dict]:
    """Per panel at its largest budget: mean test risk of the validation-best all-K
    additive and pairwise stackers, their gap (pairwise minus additive), and the share of
    the scalar menu's choices that use pairwise features (from ``records``)."""
    gains = split_pairwise_gain(df)
    out = []
    for panel, g in gains.groupby("panel", sort=False):
        top = g[g["n_M"] == g["n_M"].max()]
        share = math.nan
        if records:
            recs = [r for r in records if r["n_M"] == int(top["n_M"].iloc[0])
                    and r.get("panel", panel) == panel and "scalar" in r["menus"]]
            if recs:
                share = float(np.mean([bool(r["menus"]["scalar"].get("pairwise")) for r in recs]))
        out.append({"panel": panel, "n_M": int(top["n_M"].iloc[0]), "splits": int(len(top)),
                    "additive_test_mse": float(top["additive_test"].mean()),
                    "pairwise_test_mse": float(top["pairwise_test"].mean()),
                    "pairwise_minus_additive": float((top["pairwise_test"] - top["additive_test"]).mean()),
                    "pairwise_share": share})
    return out


# -- tab:theory-proxy-winner --------------------------------------------------------------------
def proxy_units(df: pd.DataFrame, records: list[dict], panel: str | None = None) -> pd.DataFrame:
    """One unit per (panel, budget, split): whether the scalar menu's choice beat the table
    menu's on test risk, and the table choice's H_K / n_M and unseen rate with the split's
    pairwise gain. ``records`` may carry a ``panel`` key (stacked panels)."""
    gains = split_pairwise_gain(df).set_index(["panel", "split", "n_M"])
    rows = []
    for r in records:
        m = r["menus"]
        if "table" not in m or "scalar" not in m or m["table"].get("H_K") is None:
            continue
        p = r.get("panel", panel if panel is not None else "panel")
        key = (p, r["split"], r["n_M"])
        if key not in gains.index:
            continue
        rows.append({"panel": p, "n_M": r["n_M"], "split": r["split"],
                     "scalar_wins": float(m["scalar"]["test_mse"] < m["table"]["test_mse"]),
                     "H_per_n": m["table"]["H_K"] / r["n_M"], "unseen": m["table"]["unseen_test"],
                     "pairwise_gain": float(gains.loc[key, "pairwise_gain"]),
                     # the regime map's axes: validation gain of the table over scalar, table pressure
                     "val_gain": m["scalar"]["val_risk"] - m["table"]["val_risk"],
                     "pressure": m["table"]["H_K"] / r["n_M"] + m["table"]["unseen_test"],
                     "table_test": m["table"]["test_mse"], "scalar_test": m["scalar"]["test_mse"]})
    units = pd.DataFrame(rows)
    if units.empty:
        return units
    score = 0.0
    for col in ("H_per_n", "unseen", "pairwise_gain"):
        v = units[col].astype(float)
        sd = v.std(ddof=1)
        score = score + ((v - v.mean()) / sd if sd and np.isfinite(sd) else 0.0)
    units["proxy"] = score
    return units


def _auc(y: np.ndarray, s: np.ndarray) -> float:
    """Area under the ROC curve of score ``s`` for the binary ``y`` (the Mann-Whitney
    rank form: equal to scikit-learn's ``roc_auc_score``, ties counted half, and fast
    enough for thousands of bootstrap and permutation draws)."""
    y = np.asarray(y, float)
    n1 = int((y == 1).sum())
    n0 = len(y) - n1
    if n1 == 0 or n0 == 0:
        return math.nan
    from scipy.stats import rankdata
    ranks = rankdata(np.asarray(s, float))
    return float((ranks[y == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def regime_rule_agreement(units: pd.DataFrame, *, gain_threshold: float | None = None,
                          pressure_threshold: float | None = None) -> dict:
    """The paper's hard rule over panel-budget cells: predict the table when the cell's mean
    validation gain (scalar minus table validation risk) exceeds ``gain_threshold`` and its
    mean table pressure (H_K/n_M + unseen rate) is at most ``pressure_threshold`` (the regime
    map's 'joint table' quadrant), else scalar; the observed winner is the menu with the lower
    mean test MSE in the cell. Agreement count with a one-sided binomial p against 1/2."""
    from scipy.stats import binomtest
    from ..measures.diagnostics import GAIN_THRESHOLD, PRESSURE_THRESHOLD
    g = GAIN_THRESHOLD if gain_threshold is None else gain_threshold
    t = PRESSURE_THRESHOLD if pressure_threshold is None else pressure_threshold
    cells = units.groupby(["panel", "n_M"]).agg(gain=("val_gain", "mean"), pressure=("pressure", "mean"),
                                                 table=("table_test", "mean"), scalar=("scalar_test", "mean"))
    predict_scalar = ~((cells["gain"] > g) & (cells["pressure"] <= t))
    scalar_won = cells["scalar"] < cells["table"]
    agree = int((predict_scalar == scalar_won).sum())
    n = len(cells)
    p = float(binomtest(agree, n, 0.5, alternative="greater").pvalue) if n else math.nan
    return {"agree": agree, "cells": n, "p_value": p, "predicted_scalar": int(predict_scalar.sum()),
            "scalar_won": int(scalar_won.sum()), "gain_threshold": g, "pressure_threshold": t}


def theory_proxy_winner(units: pd.DataFrame, *, n_boot: int = 2000, n_perm: int = 2000,
                        seed: int = 0) -> list[dict]:
    """The four rows of tab:theory-proxy-winner from :func:`proxy_units`. Clusters are
    panel-budget cells: the bootstrap resamples them, the permutation test shuffles winners
    within each. The hard rule is :func:`regime_rule_agreement` when ``units`` carry the
    regime-map columns (:func:`proxy_units`); the pooled z-score rule (a cell's mean proxy
    > 0 predicts scalar, scored against the cell's majority winner) follows as a labelled row."""
    if units.empty or units["scalar_wins"].nunique() < 2:
        return [{"diagnostic": "proxy AUC for scalar winner", "estimate": math.nan,
                 "uncertainty": "needs splits where each menu wins at least once"}]
    from scipy.stats import binomtest
    rng = np.random.default_rng(seed)
    y, s = units["scalar_wins"].to_numpy(float), units["proxy"].to_numpy(float)
    cluster = units.groupby(["panel", "n_M"]).ngroup().to_numpy()
    ids = np.unique(cluster)
    members = [np.flatnonzero(cluster == c) for c in ids]
    auc = _auc(y, s)
    gap = float(s[y == 1].mean() - s[y == 0].mean())
    boot_auc, boot_gap = [], []
    for _ in range(n_boot):
        rows = np.concatenate([members[i] for i in rng.integers(0, len(ids), len(ids))])
        yb, sb = y[rows], s[rows]
        if len(np.unique(yb)) == 2:
            boot_auc.append(_auc(yb, sb))
            boot_gap.append(float(sb[yb == 1].mean() - sb[yb == 0].mean()))
    perm_ge = 0
    for _ in range(n_perm):
        yp = y.copy()
        for m in members:
            yp[m] = y[rng.permutation(m)]
        perm_ge += _auc(yp, s) >= auc
    cells = units.groupby(["panel", "n_M"]).agg(proxy=("proxy", "mean"), scalar=("scalar_wins", "mean"))
    decided = cells[cells["scalar"] != 0.5]
    agree = int(((decided["proxy"] > 0) == (decided["scalar"] > 0.5)).sum())
    binom_p = float(binomtest(agree, len(decided), 0.5, alternative="greater").pvalue) if len(decided) else math.nan

    def ci(v):
        return [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] if v else [math.nan, math.nan]
    z_row = {"diagnostic": "pooled z-score rule (mean proxy > 0 predicts scalar; not the paper's)",
             "estimate": f"{agree}/{len(decided)}", "uncertainty": f"one-sided binomial p={binom_p:.3g}",
             "p_value": binom_p}
    head = [z_row]
    if {"val_gain", "pressure", "table_test", "scalar_test"} <= set(units.columns):
        rule = regime_rule_agreement(units)
        head = [{"diagnostic": "hard rule agreement over panel-budget cells",
                 "estimate": f"{rule['agree']}/{rule['cells']}",
                 "uncertainty": f"one-sided binomial p={rule['p_value']:.3g}", "p_value": rule["p_value"],
                 "rule": rule}, z_row]
    return head + [
        {"diagnostic": "split-level proxy AUC for scalar winner", "estimate": auc,
         "uncertainty": "cluster bootstrap 95% CI [{:.3f}, {:.3f}]".format(*ci(boot_auc)), "ci": ci(boot_auc)},
        {"diagnostic": "within-cluster permutation test for AUC", "estimate": None,
         "uncertainty": f"p={(perm_ge + 1) / (n_perm + 1):.3g}", "p_value": (perm_ge + 1) / (n_perm + 1)},
        {"diagnostic": "scalar-minus-table proxy-score gap", "estimate": gap,
         "uncertainty": "cluster bootstrap 95% CI [{:.3f}, {:.3f}]".format(*ci(boot_gap)), "ci": ci(boot_gap)},
    ]


# -- sub-menu choices, curves and shares from the candidate records -----------------------------
#: the grouping of one selection: a panel's split at one budget
SELECTION_KEYS = ["panel", "split", "n_M"]


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error over splits of the finite ``values`` (nan when there are none)."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if len(v) == 0:
        return math.nan, math.nan
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan)


def paired_difference(a, b, z: float = 1.959963984540054) -> dict:
    """Mean of the split-wise differences ``a - b`` with its SE and normal 95 % interval."""
    d = np.asarray(a, float) - np.asarray(b, float)
    d = d[np.isfinite(d)]
    m, se = mean_se(d)
    return {"delta": m, "se": se, "ci_low": m - z * se, "ci_high": m + z * se, "n": int(len(d))}


def menu_choices(df: pd.DataFrame, families, *, paths=None, k_max: int | None = None,
                 by=("panel", "split", "n_M")) -> pd.DataFrame:
    """The validation argmin of a sub-menu (``families`` on ``paths`` with K <= ``k_max``) in
    every group of ``by`` (default: each selection; add ``path`` for one choice per path
    rule). Ties within :func:`fcps_core.measures.diagnostics.risk_tolerance` go to the smaller K,
    the simpler family, then menu order, as the sweep's own choices do."""
    from ..measures.diagnostics import risk_tolerance
    from ..families import REGISTRY
    d = _with_panel(df)
    d = d.assign(_order=d.groupby(SELECTION_KEYS, sort=False).cumcount())
    keep = d["family"].isin(tuple(families)) & np.isfinite(d["val_risk"].astype(float))
    if paths is not None:
        keep &= d["path"].isin(tuple(paths))
    if k_max is not None:
        keep &= d["K"] <= k_max
    d = d[keep]
    if d.empty:
        return d.drop(columns="_order")
    by = list(by)
    best = d.groupby(by)["val_risk"].transform("min").astype(float)
    tied = d[d["val_risk"].astype(float) <= best + risk_tolerance(best)]
    tied = tied.assign(_rank=tied["family"].map(lambda f: REGISTRY[f].complexity_rank if f in REGISTRY else 99))
    return (tied.sort_values(by + ["K", "_rank", "_order"]).groupby(by, sort=False).head(1)
            .drop(columns=["_order", "_rank"]).reset_index(drop=True))


def family_at_full_pool(df: pd.DataFrame, n_M: int | None = None) -> list[dict]:
    """Table tab:aggregation-baselines: every family at the largest prefix (all judges, so
    no path choice: the information-first row is used), mean test risk and SE over splits
    at ``n_M`` (default: each panel's largest budget)."""
    d = _with_panel(df)
    out = []
    for panel, g in d.groupby("panel", sort=False):
        budget = int(n_M if n_M is not None else g["n_M"].max())
        g = g[(g["n_M"] == budget)]
        top = int(g["K"].max())
        g = g[g["K"] == top].assign(_first=lambda x: x["path"] != "info_first").sort_values("_first", kind="stable")
        for fam, rows in g.groupby("family", sort=False):
            per_split = rows.groupby("split")["test_mse"].first().astype(float)
            m, se = mean_se(per_split)
            out.append({"panel": panel, "n_M": budget, "family": fam, "K": top, "test_mse": m, "se": se,
                        "splits": int(len(per_split))})
    return out


def curves_over_k(df: pd.DataFrame, value: str = "test_mse", family: str = "table",
                  by=("panel", "n_M", "path", "K"), paths=None) -> pd.DataFrame:
    """Mean, median and 10-90 % split band of one candidate figure (``test_mse``,
    ``val_risk``, ``unseen_test``, ``H_K`` ...) over K (Figures fig:risk-k,
    fig:validation-risk, fig:uncertainty-diagnostics)."""
    t = _with_panel(df)
    t = t[(t["family"] == family) & np.isfinite(t[value].astype(float))]
    if paths is not None:
        t = t[t["path"].isin(tuple(paths))]
    g = t.groupby(list(by))[value]
    return g.agg(mean="mean", median="median", p10=lambda v: v.quantile(0.1), p90=lambda v: v.quantile(0.9),
                 n="size").reset_index()


def quantile_bins(x, y, bins: int = 8) -> list[dict]:
    """Quantile bins of ``x`` with the median of ``x`` and the median and 10-90 % band of
    ``y`` (Figures fig:complexity-risk, fig:unseen-risk, fig:complexity-risk-path)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    rows = marginal_bins(pd.DataFrame({"d_complexity": x[ok], "d_risk": y[ok]}), bins=bins)
    return [{"x_low": r["bin_low"], "x_high": r["bin_high"], "x_median": r["d_complexity_median"],
             "y_median": r["d_risk_median"], "y_p10": r["d_risk_p10"], "y_p90": r["d_risk_p90"], "n": r["n"]}
            for r in rows]


def selected_rows(df: pd.DataFrame, menu: str) -> pd.DataFrame:
    """The candidate rows a menu chose (``selected_by`` names it): one per selection."""
    d = _with_panel(df)
    return d[d["selected_by"].map(lambda s: menu in str(s).split("|"))]


def selection_share(df: pd.DataFrame, menu: str, *, path: str | None = None,
                    family: str | None = None) -> list[dict]:
    """Per (panel, budget): the share of splits whose ``menu`` choice has path rule ``path``
    (or family ``family``), read from the candidate records (Table tab:cfps-path: the CFPS
    selection share)."""
    sel = selected_rows(df, menu)
    out = []
    for (panel, n_M), g in sel.groupby(["panel", "n_M"], sort=False):
        hit = np.ones(len(g), bool)
        if path is not None:
            hit &= (g["path"] == path).to_numpy()
        if family is not None:
            hit &= (g["family"] == family).to_numpy()
        out.append({"panel": panel, "n_M": int(n_M), "share": float(hit.mean()), "splits": int(len(g))})
    return out


def oracle_reading(scalar_oracle: float, table_oracle: float, scalar_finite: float, table_finite: float,
                   tol: float = 1e-3) -> str:
    """The finite/oracle reading of Table tab:oracle-interaction-gap-full."""
    if table_oracle >= scalar_oracle - tol:
        return "no table oracle gain"
    return "finite estimation" if table_finite > scalar_finite else "table gain realized"


def nest_records(flat: list[dict]) -> list[dict]:
    """Stored sweep records (one row per split, budget and menu, as
    ``Store.run(id)["result"]["records"]``) in the nested shape of
    ``SweepResult.records`` that :func:`proxy_units` and :func:`interaction_diagnostic` read."""
    out: dict[tuple, dict] = {}
    for r in flat:
        key = (r.get("panel", "panel"), int(r["split"]), int(r["n_M"]))
        rec = out.setdefault(key, {"panel": key[0], "split": key[1], "n_M": key[2], "menus": {}})
        rec["menus"][r["menu"]] = {k: v for k, v in r.items() if k not in ("split", "n_M", "menu", "panel")}
    return list(out.values())
