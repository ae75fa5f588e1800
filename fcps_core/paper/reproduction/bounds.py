"""The paper's two finite-sample bounds computed next to the quantities they bound (issue 30
item 5): Theorem thm:validation-selection (finite validation selection) and Proposition
prop:table (joint-table estimation with unseen mass).

* :func:`validation_rows`: for every sweep and budget, the Theorem's slack
  2 sqrt(log(2|C|/delta) / (2 n_V)) against the realised selection gap
  R(f_chosen) - min_c R(f_c), both risks estimated on the research test block T (the
  minimum over candidates on T is biased low, so the realised gap is, if anything,
  overstated).
* :func:`table_bound_rows`: the Proposition's right-hand side
  2 sum_{z seen} p_z log(2 S_K/delta) / (2 N_z) + 2 sum_{z seen} p_z (alpha/(N_z+alpha))^2 + u_K
  against the exact excess risk sum_z p_z (g~(z) - g*(z))^2 of the smoothed table, on the
  controlled parity distribution where p_z and g* are known exactly (uniform independent
  verdicts; g*(z) = 1/2 + a s_1...s_6 for a prefix holding the six parity judges). The
  table is the Proposition's estimator, (N_z Ybar_z + alpha ybar_cal) / (N_z + alpha) on seen
  cells and ybar_cal on unseen ones, with the package's default alpha and global fallback.
Every draw is seeded.
"""

from __future__ import annotations

import math

import numpy as np

from ... import defaults as D
from .. import synthetic as syn

DELTA = 0.05


def theorem_slack(n_candidates: int, n_val: int, delta: float = DELTA) -> float:
    """2 sqrt(log(2|C|/delta) / (2 n_V)) (Theorem thm:validation-selection, Eq. eq:validation-oracle)."""
    return 2.0 * math.sqrt(math.log(2 * n_candidates / delta) / (2 * n_val))


def validation_rows(sweeps: dict, menus=("table", "scalar"), delta: float = DELTA) -> list[dict]:
    """One row per (sweep, menu, budget): |C|, n_V, the slack, the realised gap (mean and max
    over splits), the share of splits where the gap is within the slack, and slack / mean gap."""
    out = []
    for name, sweep in sweeps.items():
        n_val = int(sweep.settings["n_val"])
        for menu in menus:
            for b in sweep.budgets:
                recs = [r["menus"][menu] for r in sweep.records if r["n_M"] == b and menu in r["menus"]]
                if not recs:
                    continue
                size = int(recs[0]["menu_size"])
                bound = theorem_slack(size, n_val, delta)
                gaps = np.array([r["test_mse"] - r["oracle_test_mse"] for r in recs], float)
                mean = float(gaps.mean())
                out.append({"sweep": name, "menu": menu, "n_M": b, "C": size, "n_V": n_val, "bound": bound,
                            "gap_mean": mean, "gap_max": float(gaps.max()), "held": float(np.mean(gaps <= bound)),
                            "draws": len(gaps), "ratio": bound / mean if mean > 1e-9 else math.inf})
    return out


def table_excess(n_cal: int, K: int, rng: np.random.Generator, *, judges: int = 7,
                 amplitude: float | None = None, alpha: float = D.DEFAULT_ALPHA,
                 delta: float = DELTA) -> tuple[float, float]:
    """(bound, realised excess risk) of one calibration draw of the K-judge table on the
    parity regime (six-way parity of the first six judges, uniform independent verdicts)."""
    a = syn.DEFAULT_AMPLITUDES["parity"] if amplitude is None else amplitude
    x = rng.integers(0, 2, size=(n_cal, judges))
    p = syn.target_probability("parity", x.astype(float), amplitude=a)
    y = (rng.random(n_cal) < p).astype(float)
    cells = 1 << K
    z = (x[:, :K] * (1 << np.arange(K))).sum(axis=1)
    N = np.bincount(z, minlength=cells).astype(float)
    sums = np.bincount(z, weights=y, minlength=cells)
    ybar = y.mean()
    seen = N > 0
    g = np.where(seen, (sums + alpha * ybar) / np.maximum(N + alpha, 1e-12), ybar)
    # g*(z): the parity target averaged over the judges outside the prefix
    codes = (np.arange(cells)[:, None] >> np.arange(K)) & 1
    if K >= syn.DEFAULT_PARITY_ORDER:
        g_star = 0.5 + a * np.prod(2 * codes[:, :syn.DEFAULT_PARITY_ORDER] - 1, axis=1)
    else:
        g_star = np.full(cells, 0.5)      # parity of six judges averages out over any missing one
    p_z = np.full(cells, 1.0 / cells)
    realised = float((p_z * (np.clip(g, 0, 1) - g_star) ** 2).sum())
    S = int(seen.sum())
    bound = float(2 * (p_z[seen] * math.log(2 * S / delta) / (2 * N[seen])).sum()
                  + 2 * (p_z[seen] * (alpha / (N[seen] + alpha)) ** 2).sum() + p_z[~seen].sum())
    return bound, realised


def table_bound_rows(budgets, Ks=(6, 7), draws: int = 200, seed: int = 0) -> list[dict]:
    """Mean bound, mean realised excess risk, their ratio and the share of draws where the
    bound held, per (K, n_M); ``draws`` seeded calibration samples each."""
    out = []
    for K in Ks:
        for b in budgets:
            rng = np.random.default_rng([seed, K, b])
            pairs = np.array([table_excess(b, K, rng) for _ in range(draws)])
            bound, real = pairs[:, 0], pairs[:, 1]
            out.append({"K": K, "n_M": b, "bound": float(bound.mean()), "realised": float(real.mean()),
                        "ratio": float(bound.mean() / real.mean()) if real.mean() > 0 else math.inf,
                        "held": float(np.mean(real <= bound)), "draws": draws})
    return out


def bound_sections(runs, sweeps: dict, plan) -> list:
    """The sections thm:validation-selection and prop:table (:mod:`.common` THEORY_LABELS)."""
    from .common import Section, fmt, md_table
    sources = {r.name: r.sweep for r in runs}
    if "synthetic parity" in sweeps:
        sources["synthetic parity"] = sweeps["synthetic parity"]
    v = validation_rows(sources)
    rows = [[x["sweep"], x["menu"], x["n_M"], x["C"], x["n_V"], fmt(x["bound"], 3), fmt(x["gap_mean"], 4),
             fmt(x["gap_max"], 4), f"{x['held']:.2f}", fmt(x["ratio"], 0)] for x in v]
    held = sum(round(x["held"] * x["draws"]) for x in v)
    draws = sum(x["draws"] for x in v)
    ratios = [x["ratio"] for x in v if math.isfinite(x["ratio"])]
    thm = Section("thm:validation-selection", "Theorem 1 (finite validation selection): bound against realised gap",
                  f"For each sweep, menu and budget: the Theorem's slack 2 sqrt(log(2|C|/delta) / (2 n_V)) with "
                  f"delta = {DELTA}, |C| the menu's validated candidates and n_V the validation block, next to the "
                  "realised selection gap R(chosen) - min_c R(c), both risks on the research test block T (mean and "
                  "max over splits), the share of splits whose gap is within the slack, and the ratio slack / mean "
                  "gap. Real panels: the report's main sweeps (paper menus); synthetic parity: the sweep of "
                  "tab:calibration-growth-new-dataset (table against ridge families). The test-block minimum is "
                  "biased low, so the realised gap is if anything overstated.",
                  md_table(["Sweep", "menu", "n_M", "|C|", "n_V", "bound", "realised gap (mean)", "realised gap (max)",
                            "share held", "bound / mean gap"], rows),
                  verdict="reproduced" if held == draws else "differs",
                  why=(f"the bound held in {held} of {draws} (sweep, menu, budget, split) draws; it is loose by a "
                       f"factor {min(ratios):.0f} to {max(ratios):.0f} over the mean realised gap ('-': the "
                       "validation choice was the test-best candidate in every split). The paper states the bound and "
                       "prints no realised values, so only 'holds' is compared." if ratios else
                       f"the bound held in {held} of {draws} draws."))
    budgets = [16, 64, 256] if plan.quick else [16, 64, 256, 512, 1024, 2048]
    draws_n = 40 if plan.quick else 200
    t = table_bound_rows(budgets, draws=draws_n, seed=plan.seed)
    trows = [[x["K"], x["n_M"], fmt(x["bound"], 4), fmt(x["realised"], 5), fmt(x["ratio"], 0), f"{x['held']:.2f}"]
             for x in t]
    t6 = [x for x in t if x["K"] == 6]
    t_held = sum(round(x["held"] * x["draws"]) for x in t)
    t_draws = sum(x["draws"] for x in t)
    prop = Section("prop:table", "Proposition (joint-table estimation with unseen mass): bound against realised "
                   "excess risk",
                   "On the controlled parity distribution (seven uniform independent binary judges, six-way parity "
                   f"of the first six, a = {syn.DEFAULT_AMPLITUDES['parity']:g}), where p_z and g*(z) = E[Y | Z_K = z] "
                   "are exact: the Proposition's right-hand side 2 sum_seen p_z log(2 S_K/delta)/(2 N_z) + "
                   f"2 sum_seen p_z (alpha/(N_z + alpha))^2 + u_K (delta = {DELTA}, alpha = {D.DEFAULT_ALPHA:g}) and "
                   "the exact excess risk sum_z p_z (g~(z) - g*(z))^2 of the smoothed table (global-mean fallback), "
                   f"means over {draws_n} seeded calibration draws per row, their ratio and the share of draws where "
                   "the bound held. K = 6 is the paper's selected parity table; K = 7 adds the noise judge. A bound "
                   "above 1 is vacuous (the squared excess risk is at most 1).",
                   md_table(["K", "n_M", "bound (mean)", "realised excess risk (mean)", "bound / realised",
                             "share held"], trows),
                   verdict="reproduced" if t_held == t_draws else "differs",
                   why=f"the bound held in {t_held} of {t_draws} draws and exceeds the mean realised excess risk by "
                       f"a factor {min(x['ratio'] for x in t):.0f} to {max(x['ratio'] for x in t):.0f}; from one "
                       "budget to the next the realised excess risk of K = 6 changes by a factor "
                       + ", ".join(f"{b['realised'] / a['realised']:.2f}" for a, b in zip(t6, t6[1:]))
                       + " (n_M ratios " + ", ".join(f"{b['n_M'] / a['n_M']:g}" for a, b in zip(t6, t6[1:]))
                       + "). The paper states the bound and prints no realised values.")
    return [thm, prop]
