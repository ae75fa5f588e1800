"""Controlled and semi-real regimes (paper appendix "New Calibration-Growth Dataset" and the
following tables): calibration-growth gaps, aggregator regimes and the interaction-strength
sweep, each printed beside the paper's values; the growth sweeps are also drawn on the
regime map and feed the bound sections (:mod:`.bounds`).

Menus follow the paper's text for these tables: the joint table over the three path rules
(K <= 7) against the additive ridge (``ridge_iso``) and pairwise-ridge
(``ridge_pairwise_iso``) families on the same paths, each prefix size chosen on
validation; the scalar side is the validation choice over both ridge families. Both menus
come from one sweep, so the gap is paired over the same splits (same S, M, V, T blocks).
The generator's parameters are :mod:`fcps_core.paper.synthetic`'s defaults (stated in the
sections)."""

from __future__ import annotations

from typing import Callable

from .. import synthetic as syn
from ..experiments import GROWTH_MENUS, calibration_growth
from ..synthetic import make_regime, semi_real
from . import paper_values as PV
from .common import P3, Plan, Section, fmt, md_table
from .runs import real_panel

RIDGE_FAMILIES = ("ridge_iso", "ridge_pairwise_iso")
GROWTH_BUDGETS = (16, 64, 256, 512, 1024, 2048)
FORMULAS = {
    "additive": "p = add(x) = sigmoid(sum_j 1.2/j s_j), s_j = +1 for A, -1 for B",
    "mixed": "p = add(x)/2 + (1/2 + a s_1 s_2 s_3)/2",
    "parity": "p = 1/2 + a s_1 s_2 s_3 s_4 s_5 s_6",
    "xor": "p = 1/2 + a s_1 s_2 + 0.1 (add(x) - 1/2)",
    "and": "p = 1/2 + a (2 x_1 x_2 - 1) + (a/2)(1 - x_1)(1 - x_2) + 0.1 (add(x) - 1/2)",
    "strength": "p = (1 - gamma) add(x) + gamma (1/2 + a s_1 s_2 s_3)",
}


def _amp(regime: str) -> str:
    return f"a = {syn.DEFAULT_AMPLITUDES[regime]:g}"


def growth_sweep(panel, budgets, sizes, plan):
    """The paired table-versus-ridge sweep of the controlled tables (:data:`GROWTH_MENUS`)."""
    n_S, n_V, n_T = sizes
    return calibration_growth(panel, budgets, n_select=n_S, n_val=n_V, n_test=n_T, splits=plan.splits,
                              seed=plan.seed, workers=plan.workers, menus=GROWTH_MENUS,
                              families=("table",) + RIDGE_FAMILIES, paths=P3)


def gap(cell) -> float | None:
    """Scalar minus table test MSE, paired over splits (positive favours the table)."""
    return -cell["delta"] if cell.get("delta") is not None else None


def _gap_text(v) -> str:
    return fmt(v, 3, True) if v is not None else "-"


def _growth_rows(res, paper: dict, regime: str) -> tuple[list, list]:
    ours = [gap(c) for c in res.cells]
    by_b = dict(zip(res.budgets, ours))
    pv = dict(zip(PV.GROWTH_BUDGETS, paper[regime]))
    row = [regime, "ours"] + [_gap_text(v) for v in ours]
    prow = [regime, "paper"] + [f"{pv[b]:+.3f}" if b in pv else "-" for b in res.budgets]
    pairs = [(by_b[b], pv[b]) for b in res.budgets if b in pv]
    return [row, prow], pairs


def run_controlled(plan: Plan, say: Callable[[str], None]) -> tuple[list[Section], dict]:
    """The four controlled-regime sections and the growth sweeps (name -> SweepResult)."""
    q = plan.quick
    budgets = [16, 64, 256] if q else list(GROWTH_BUDGETS)
    rows_n = 1600 if q else 4000
    sizes = (200, 200, 300) if q else (300, 300, 600)
    llmbar = real_panel("llmbar")
    gap_rows, semi_rows, detail, sweeps = [], [], [], {}
    gap_pairs, semi_pairs, headline = [], [], {}
    for regime in ("additive", "mixed", "parity"):
        for kind, panel in (("synthetic", make_regime(regime, rows=rows_n, judges=7, seed=plan.seed)),
                            ("semi-real", semi_real(llmbar, regime, rows=rows_n, seed=plan.seed))):
            say(f"calibration growth: {kind} {regime}")
            res = growth_sweep(panel, budgets, sizes, plan)
            sweeps[f"{kind} {regime}"] = res
            rows, pairs = _growth_rows(res, PV.GROWTH if kind == "synthetic" else PV.SEMIREAL, regime)
            (gap_rows if kind == "synthetic" else semi_rows).extend(rows)
            (gap_pairs if kind == "synthetic" else semi_pairs).extend(pairs)
            if kind == "synthetic" and regime == "parity":
                for c in res.cells:
                    p = PV.PARITY_HEADLINE.get(c["n_M"])
                    headline[c["n_M"]] = c
                    detail.append([c["n_M"], fmt(c["table_K_mean"], 2), p[0] if p else "-",
                                   fmt(c["unseen_mean"], 3), fmt(p[1], 3) if p else "-",
                                   fmt(c["table_test_mse"], 3), fmt(p[2], 3) if p else "-",
                                   fmt(c["scalar_test_mse"], 3)])
    header = ["Regime", "source"] + [str(b) for b in budgets]
    sizes_text = "/".join(map(str, sizes))
    verdict, why = PV.signed_verdict(gap_pairs, abs_tol=0.01)
    head_pairs = [(headline[b]["table_test_mse"], PV.PARITY_HEADLINE[b][2]) for b in (16, 512) if b in headline]
    if head_pairs:
        hv, hwhy = PV.signed_verdict(head_pairs, abs_tol=0.015, rel_tol=0.0)
        why += (f" Parity headline (table test MSE at n_M = 16 and 512 against 0.224 and 0.061, within 0.015): "
                f"{hv}.")
        if verdict == "reproduced" and hv != "reproduced":
            verdict = "same direction, different size"
    out = [Section("tab:calibration-growth-new-dataset", "Calibration-growth gaps, synthetic regimes",
                   f"Seven binary judges, {rows_n} rows; S/V/T = {sizes_text}; columns are n_M. Entries: the "
                   "validation-selected scalar menu (additive ridge + isotonic and pairwise ridge + isotonic, three "
                   "paths, K <= 7) minus the validation-selected joint table (three paths, K <= 7), paired over "
                   "splits (mean test MSE), as the paper's text describes. **Positive favours the table.** Targets "
                   f"(`synth --regime ...` defaults): additive {FORMULAS['additive']}; mixed {FORMULAS['mixed']} "
                   f"({_amp('mixed')}); parity {FORMULAS['parity']} ({_amp('parity')}, Bayes risk 1/4 - a^2 = "
                   f"{0.25 - syn.DEFAULT_AMPLITUDES['parity'] ** 2:.4f}); no judge noise. The paper pins the parity "
                   "headline (K = 6, unseen 0.768 -> 0 by n_M = 512, table MSE 0.224 -> 0.061) but not its "
                   "amplitude, noise or weights: the amplitude is our choice to meet that headline. The paper has no "
                   "512 column ('-').",
                   md_table(header, gap_rows) + "\nParity regime detail (selected joint table; paper values from the "
                   "appendix text of the New Calibration-Growth Dataset):\n\n"
                   + md_table(["n_M", "selected K", "paper K", "unseen (T)", "paper unseen", "table MSE",
                               "paper table MSE", "scalar MSE"], detail)
                   + "\nOur selected K averages above 6 because the path rules cannot tell the six parity judges "
                   "from the seventh, noise judge (no single judge carries signal), so K = 7 is often chosen; "
                   "its 128 cells raise the unseen rate at n_M = 16 above the paper's 0.768. The parity gap's shape "
                   "differs from the paper's: with independent uniform verdicts no additive or pairwise feature is "
                   "correlated with a six-way parity, so the ridge families stay near risk 1/4 at every budget and "
                   "the gap grows to a plateau near a^2; the paper's gap falls back to +0.010 by n_M = 2048 although "
                   "its table is at 0.061 from 512 on, which needs a scalar risk near 0.07 on a six-way parity, and "
                   "the paper does not describe a generator that allows it.",
                   verdict=verdict, why=why),
           Section("tab:semireal-calibration-growth", "Calibration-growth gaps, semi-real regimes",
                   "Joint output patterns resampled from the shipped LLMBar seven-judge pool (the paper resamples "
                   "RewardBench, LLMBar and Arena100K patterns), controlled target from the judges' scalar scores "
                   "with the formulas and amplitudes of tab:calibration-growth-new-dataset; same menus, layout and "
                   "sign.", md_table(header, semi_rows),
                   verdict=PV.signed_verdict(semi_pairs, abs_tol=0.01)[0],
                   why=PV.signed_verdict(semi_pairs, abs_tol=0.01)[1] + " Our patterns come from one panel, the "
                   "paper's from three.")]

    agg_budgets = [50, 400] if q else [50, 3000]
    per_family = {"table": ("table",), "ridge_iso": ("ridge_iso",), "logistic": ("logistic",)}
    agg_rows, agg_pairs, winners = [], [], [0, 0]
    for regime, label in (("additive", "Additive"), ("xor", "XOR interaction"), ("and", "AND interaction")):
        say(f"aggregator regimes: {regime}")
        panel = make_regime(regime, rows=1600 if q else 5000, judges=7, seed=plan.seed)
        n_S, n_V, n_T = sizes
        res = calibration_growth(panel, agg_budgets, n_select=n_S, n_val=n_V, n_test=n_T, splits=plan.splits,
                                 seed=plan.seed, workers=plan.workers, menus=per_family, paths=P3)
        for c in res.cells:
            vals = {f: c["menus"][f]["test_mse_mean"] for f in per_family}
            best = min(vals, key=vals.get)
            paper = PV.AGGREGATOR.get((regime, c["n_M"]))
            cells = [f"**{fmt(vals[f], 3)}**" if f == best else fmt(vals[f], 3) for f in per_family]
            if paper:
                p_best = min(range(3), key=lambda i: paper[i])
                fams = list(per_family)
                winners[0] += 1
                # the same winner, or a near tie (0.003) on either side between the two winners
                winners[1] += (fams[p_best] == best or vals[fams[p_best]] - vals[best] <= 0.003
                               or paper[fams.index(best)] - paper[p_best] <= 0.003)
                agg_pairs += [(vals[f], paper[i]) for i, f in enumerate(per_family)]
                pcells = [f"**{v:.3f}**" if i == p_best else f"{v:.3f}" for i, v in enumerate(paper)]
            else:
                pcells = ["-"] * 3
            agg_rows.append([label, c["n_M"]] + [f"{o} / {p}" for o, p in zip(cells, pcells)])
    close = sum(abs(o - p) <= 0.02 for o, p in agg_pairs)
    if not winners[0]:
        agg_verdict = "not applicable offline"
    elif winners[1] == winners[0] and close == len(agg_pairs):
        agg_verdict = "reproduced"
    elif winners[1] >= 0.75 * winners[0]:
        agg_verdict = "same direction, different size"
    else:
        agg_verdict = "differs"
    out.append(Section("tab:controlled-aggregator-regimes", "Controlled aggregator regimes",
                       "Test MSE after selecting K by validation within each family (three paths); each cell is "
                       "**ours / paper** (paper: Table tab:controlled-aggregator-regimes, same row), bold the best "
                       f"family. Targets: additive {FORMULAS['additive']}; XOR {FORMULAS['xor']} ({_amp('xor')}); "
                       f"AND {FORMULAS['and']} ({_amp('and')}): one A lowers p and two raise it, so no monotone map "
                       "of a weighted sum of the two judges represents it (a genuine interaction). The paper's table "
                       "compares these three families only: a stacker with pairwise product features (x_1 x_2 is one "
                       "of them) can represent a two-judge AND exactly, so against the scalar menu that includes "
                       "them (`sweep` default) the AND regime is a near tie rather than table-favoured.",
                       md_table(["Regime", "Budget", "Joint table", "Ridge + isotonic", "Logistic"], agg_rows),
                       verdict=agg_verdict,
                       why=f"the best family matches the paper's (or ties it within 0.003) in {winners[1]} of "
                           f"{winners[0]} rows; "
                           f"{close} of {len(agg_pairs)} values are within 0.02 of the paper's."))

    gammas = [0.0, 0.5, 1.0] if q else [0.0, 0.3, 0.5, 0.7, 1.0]
    s_budgets = [50, 400] if q else list(PV.STRENGTH_BUDGETS)
    s_rows, s_pairs = [], []
    for g in gammas:
        say(f"interaction strength gamma={g}")
        panel = make_regime("strength", rows=1600 if q else 5000, judges=7, seed=plan.seed, gamma=g)
        res = growth_sweep(panel, s_budgets, sizes, plan)
        ours = [gap(c) for c in res.cells]
        paper = dict(zip(PV.STRENGTH_BUDGETS, PV.STRENGTH.get(g, ())))
        s_rows.append([fmt(g, 1), "ours"] + [_gap_text(v) for v in ours])
        s_rows.append([fmt(g, 1), "paper"] + [f"{paper[b]:+.3f}" if b in paper else "-" for b in res.budgets])
        s_pairs += [(o, paper[b]) for o, b in zip(ours, res.budgets) if b in paper]
    sv, swhy = PV.signed_verdict(s_pairs, abs_tol=0.01)
    out.append(Section("tab:interaction-strength-sweep", "Interaction-strength sweep",
                       f"Target {FORMULAS['strength']} ({_amp('strength')}), at the paper's strengths gamma = 0, "
                       "0.3, 0.5, 0.7, 1. Entries: scalar menu minus joint table test MSE (the menus of "
                       "tab:calibration-growth-new-dataset, paired over splits); **positive favours the table**; "
                       "paper rows typed in from Table tab:interaction-strength-sweep.",
                       md_table(["gamma", "source"] + [f"n_M={b}" for b in s_budgets], s_rows),
                       verdict=sv, why=swhy))
    return out, sweeps
